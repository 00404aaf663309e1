"""Seat links (PROTOCOL.md 4.6) over loopback TCP: a probe gets the seat's signed ``present``
with its unsequenced envelopes, a ``vote`` frame reaches the seat, and a link or a ``present``
that is not the seat's is refused."""

from __future__ import annotations

import os
from functools import partial
from typing import Any

import pytest
import trio

from dernier_p2p.net import firewall, links
from dernier_p2p.net import handshake as hs
from dernier_p2p.net.framing import FramedStream, PeerClosed, open_framed, serve_framed
from dernier_p2p.protocol.local import LocalTable
from dernier_p2p.protocol.votes import vote_frame
from dernier_p2p.wire.identity import IdentityKey


def table() -> LocalTable:
    """Three seats at record 0 (nothing delivered: a link needs no more)."""
    return LocalTable("dernier", [bytes([60 + k]) * 32 for k in range(3)])


async def serving(
    nursery: trio.Nursery, t: LocalTable, seat: int, pending: list[dict[str, Any]],
    votes: list[tuple[int, dict[str, Any]]],
) -> links.LinkServer:
    """Seat ``seat`` answers links on a loopback port, which the table then lists for it."""
    server = links.LinkServer(t.identities[seat], t.sessions[seat], lambda: pending,
                              lambda s, frame: votes.append((s, frame)))

    async def handle(stream: FramedStream) -> None:
        await server.handle(stream)

    listeners = await nursery.start(
        partial(serve_framed, handle, 0, max_frame=hs.MAX_FRAME, host="127.0.0.1"))
    list_at(t, seat, listeners[0].socket.getsockname()[1])
    return server


def list_at(t: LocalTable, seat: int, port: int) -> None:
    """Every session's table lists ``seat`` at ``port`` on loopback (as a hello would)."""
    for s in t.sessions:
        s.table_body["players"][seat]["listen"] = ["127.0.0.1", port]


async def test_a_probe_shows_the_seats_unsequenced_envelope_and_a_vote_frame_arrives() -> None:
    t = table()
    held = next(e for e in t.queue if e["seat"] == 1)  # its accept, never sequenced
    votes: list[tuple[int, dict[str, Any]]] = []
    async with trio.open_nursery() as nursery:
        await serving(nursery, t, 1, [held], votes)
        present = await links.probe(t.identities[2], t.sessions[2], 1)
        assert present is not None
        assert present.have == t.sessions[1].count - 1 and present.pending == [held]
        assert links.unsequenced(t.sessions[2], 1, present) == held  # evidence of censorship
        frame = vote_frame("depose", 0, t.sessions[2].vote("depose", 0))
        assert await links.send_vote(t.identities[2], t.sessions[2], 1, frame)
        with trio.fail_after(5):
            while not votes:
                await trio.sleep(0.01)
        assert votes == [(2, frame)]
        nursery.cancel_scope.cancel()


async def test_no_address_or_no_answer_is_no_present() -> None:
    t = table()
    assert await links.probe(t.identities[2], t.sessions[2], 1) is None  # no listen address
    listener = trio.socket.socket()
    await listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # accepts, never answers
    list_at(t, 1, listener.getsockname()[1])
    with trio.fail_after(5):
        assert await links.probe(t.identities[2], t.sessions[2], 1, timeout_s=0.3) is None
    listener.close()


async def test_a_link_not_signed_by_the_seat_is_refused() -> None:
    t = table()
    async with trio.open_nursery() as nursery:
        await serving(nursery, t, 1, [], [])
        port = t.sessions[0].table_body["players"][1]["listen"][1]
        stream = await open_framed("127.0.0.1", port, hs.MAX_FRAME)
        nonce, _ = hs.check_challenge(await hs.receive_message(stream))
        stranger = IdentityKey.generate(os.urandom(32))
        await hs.send_message(stream, links.link_message(stranger, t.game, 2, nonce))
        with pytest.raises(hs.RemoteError) as info:
            await hs.receive_message(stream)
        assert info.value.code == hs.BAD_SIGNATURE
        await stream.aclose()
        nursery.cancel_scope.cancel()


def test_a_present_is_checked_against_the_seats_key_and_the_nonce() -> None:
    t = table()
    server = links.LinkServer(t.identities[1], t.sessions[1], lambda: [])
    nonce = os.urandom(hs.NONCE_SIZE)
    msg = server.present(nonce)
    assert links.check_present(msg, nonce, t.sessions[2], 1).have == t.sessions[1].count - 1
    with pytest.raises(hs.NetError) as info:
        links.check_present(msg, nonce, t.sessions[2], 0)  # not seat 0's signature
    assert info.value.code == hs.BAD_SIGNATURE
    with pytest.raises(hs.NetError) as info:
        links.check_present(msg, os.urandom(hs.NONCE_SIZE), t.sessions[2], 1)
    assert info.value.code == hs.MALFORMED
    with pytest.raises(hs.NetError):
        links.check_present({**msg, "pending": [{}] * (links.MAX_PENDING + 1)}, nonce,
                            t.sessions[2], 1)


@pytest.mark.parametrize("lent", [-1, "have+1", True, 1.0, b"\x01"])
def test_a_presents_lent_is_nil_or_an_index_up_to_its_have(lent: Any) -> None:
    t = table()
    have = t.sessions[1].count - 1
    value = have + 1 if lent == "have+1" else lent
    server = links.LinkServer(t.identities[1], t.sessions[1], lambda: [])
    nonce = os.urandom(hs.NONCE_SIZE)
    with pytest.raises(hs.NetError) as info:  # (checked before its signature)
        links.check_present({**server.present(nonce), "lent": value}, nonce, t.sessions[2], 1)
    assert info.value.code == hs.MALFORMED
    for ok in (None, 0, have):
        server = links.LinkServer(t.identities[1], t.sessions[1], lambda: [],
                                  lent=lambda ok=ok: ok)
        assert links.check_present(server.present(nonce), nonce, t.sessions[2], 1).lent == ok


def test_a_presents_proof_is_a_record_or_nil() -> None:
    t = table()
    server = links.LinkServer(t.identities[1], t.sessions[1], lambda: [],
                              proof=lambda: {"i": 1})
    nonce = os.urandom(hs.NONCE_SIZE)
    with pytest.raises(hs.NetError) as info:
        links.check_present(server.present(nonce), nonce, t.sessions[2], 1)
    assert info.value.code == hs.MALFORMED
    rec = t.records[0]
    server = links.LinkServer(t.identities[1], t.sessions[1], lambda: [], proof=lambda: rec)
    assert links.check_present(server.present(nonce), nonce, t.sessions[2], 1).proof == rec


async def _linked(t: LocalTable, seat: int, port: int) -> FramedStream:
    """A link of ``seat`` to the seat listening at ``port``, its ``link`` sent."""
    return await links.open_link(("127.0.0.1", port), t.identities[seat], t.sessions[seat])


async def _probed(t: LocalTable, stream: FramedStream) -> int:
    """Seat 2 probes seat 1 over ``stream``: the ``have`` of seat 1's checked answer."""
    nonce = os.urandom(hs.NONCE_SIZE)
    await hs.send_message(stream, {"k": "probe", "nonce": nonce})
    return links.check_present(await hs.receive_message(stream), nonce, t.sessions[2], 1).have


async def _closed(stream: FramedStream) -> bool:
    """Whether the other side closes ``stream`` (within a generous time)."""
    with trio.move_on_after(10):
        try:
            while True:
                await stream.receive()
        except (PeerClosed, trio.BrokenResourceError):
            return True
    return False


async def test_links_are_bounded_and_a_fault_on_one_ends_that_link_only() -> None:
    """serve_links: a handler fault (a vote taker that raises) ends only its own link; an
    outsider's connections that never link are capped per address (the oldest closed), and a
    seat's link past LINKS_PER_SEAT closes its oldest; probes are answered throughout."""
    t = table()
    votes: list[Any] = []

    def take(seat: int, frame: dict[str, Any]) -> None:
        votes.append(frame)
        raise RuntimeError("a fault reached by a link's bytes")

    server = links.LinkServer(t.identities[1], t.sessions[1], lambda: [], take)
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    port = listener.socket.getsockname()[1]
    list_at(t, 1, port)
    faults = firewall.Faults.count
    async with trio.open_nursery() as nursery:
        await nursery.start(links.serve_links, [listener], server)
        with trio.fail_after(30):
            frame = vote_frame("depose", 0, t.sessions[2].vote("depose", 0))
            assert await links.send_vote(t.identities[2], t.sessions[2], 1, frame)
            while not votes:
                await trio.sleep(0.01)
            assert firewall.Faults.count == faults + 1  # reported, that link ended
            assert await links.probe(t.identities[2], t.sessions[2], 1) is not None

            idle = []
            for _ in range(links.LINK_LIMITS.per_address + 1):
                stream = await open_framed("127.0.0.1", port, hs.MAX_FRAME)
                hs.check_challenge(await hs.receive_message(stream))
                idle.append(stream)
            assert await _closed(idle[0])  # the oldest gave way
            assert server.admission.pending == links.LINK_LIMITS.per_address
            for stream in idle:
                await stream.aclose()

            held = [await _linked(t, 2, port) for _ in range(links.LINKS_PER_SEAT)]
            for stream in held:  # a link that answers a probe is served, so counted
                assert await _probed(t, stream) == t.sessions[1].count - 1
            last = await _linked(t, 2, port)
            assert await _closed(held[0])  # the seat's oldest link gave way
            assert await _probed(t, last) == t.sessions[1].count - 1
            for stream in [*held, last]:
                await stream.aclose()
        nursery.cancel_scope.cancel()
    listener.socket.close()


async def test_a_seats_probes_are_answered_at_most_once_a_second_over_all_its_links() -> None:
    """Seat 2 floods seat 1 with probes on two links: every probe is answered with a valid
    ``present``, but one per PRESENT_EVERY_S, so the third answer comes no sooner than two
    intervals after the first probe was sent; seat 0's probe meanwhile is answered at once."""
    t = table()
    async with trio.open_nursery() as nursery:
        await serving(nursery, t, 1, [], [])
        address = links.address_of(t.sessions[2], 1)
        assert address is not None
        first = await links.open_link(address, t.identities[2], t.sessions[2])
        second = await links.open_link(address, t.identities[2], t.sessions[2])
        asked = [(first, os.urandom(32)), (first, os.urandom(32)), (second, os.urandom(32))]
        answers: list[float] = []

        async def read_answers() -> None:
            for stream, nonce in asked:
                msg = await hs.receive_message(stream)
                links.check_present(msg, nonce, t.sessions[2], 1)
                answers.append(trio.current_time() - start)

        with trio.fail_after(10):
            start = trio.current_time()
            for stream, nonce in asked:
                await hs.send_message(stream, {"k": "probe", "nonce": nonce})
            async with trio.open_nursery() as reading:
                reading.start_soon(read_answers)
                assert await links.probe(t.identities[0], t.sessions[0], 1) is not None
                other = trio.current_time() - start
            assert answers[-1] >= 2 * links.PRESENT_EVERY_S
            assert other < answers[-1]  # another seat's probe does not queue behind seat 2's
        for stream in (first, second):
            await stream.aclose()
        nursery.cancel_scope.cancel()


def test_a_probe_is_a_nonce_of_32_bytes_and_nothing_else() -> None:
    """Another kind is UNEXPECTED; a probe of other fields MALFORMED (PROTOCOL.md 4.1)."""
    nonce = b"n" * hs.NONCE_SIZE
    assert links.check_probe({"k": "probe", "nonce": nonce}) == nonce
    for bad in ({"k": "probe", "nonce": nonce[:-1]}, {"k": "probe", "nonce": nonce + b"n"},
                {"k": "probe", "nonce": "n" * 32}, {"k": "probe"},
                {"k": "probe", "nonce": nonce, "x": 1}):
        with pytest.raises(hs.NetError) as err:
            links.check_probe(bad)
        assert err.value.code == hs.MALFORMED
    with pytest.raises(hs.NetError) as err:
        links.check_probe({"k": "present", "nonce": nonce})
    assert err.value.code == hs.UNEXPECTED


def test_a_link_of_another_version_is_refused_naming_both_versions() -> None:
    """A link is a live frame: version 5 alone (PROTOCOL.md 20), versions 2 to 4 included."""
    t = table()
    nonce = os.urandom(hs.NONCE_SIZE)
    good = links.link_message(t.identities[2], t.game, 2, nonce)
    assert good["version"] == 5 and links.check_link(good, nonce, t.sessions[1]) == 2
    for version in (1, 2, 3, 4, 6, None):
        with pytest.raises(hs.NetError) as err:
            links.check_link({**good, "version": version}, nonce, t.sessions[1])
        assert err.value.code == hs.VERSION_MISMATCH
        assert f"protocol version {version}; this client speaks 5" in err.value.detail


async def test_a_seat_standing_by_at_a_seat_relay_is_linked_to_through_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No outside relay (4.7 step 7): seat 1's listen address answers nothing; it stands by at
    # seat 0's seat relay under its seat token, and seat 2's vote reaches it over a link there.
    from dernier_p2p.net import relay, seatrelay

    t = table()
    game, key = t.game, t.sessions[2].keys[1]
    served = relay.seat_relay(lambda: {relay.seat_token(game, key)})
    votes: list[tuple[int, dict[str, Any]]] = []
    server = links.LinkServer(t.identities[1], t.sessions[1], lambda: [],
                              lambda s, frame: votes.append((s, frame)))

    async def seat_0(stream: FramedStream) -> None:  # its listener: a relay opening served
        await hs.send_message(stream, hs.challenge_message(os.urandom(hs.NONCE_SIZE),
                                                           {"name": "link"}))
        await served.serve_opened(stream, await hs.receive_message(stream), "127.0.0.1")

    closed = trio.socket.socket()  # seat 1's listen address: nobody listens there
    await closed.bind(("127.0.0.1", 0))
    list_at(t, 1, closed.getsockname()[1])
    closed.close()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(
                partial(serve_framed, seat_0, 0, max_frame=hs.MAX_FRAME, host="127.0.0.1"))
            at = ("127.0.0.1", listeners[0].socket.getsockname()[1])
            list_at(t, 0, at[1])
            monkeypatch.setattr(seatrelay, "is_reachable", lambda a: a == at)  # "global"
            await nursery.start(partial(relay.host_through_relay, at,
                                        relay.seat_token(game, key), server.handle, seat=True))
            frame = vote_frame("depose", 0, t.sessions[2].vote("depose", 0))
            assert await links.send_vote(t.identities[2], t.sessions[2], 1, frame)
            while not votes:
                await trio.sleep(0.01)
            assert votes == [(2, frame)]
            assert served.stats.pairs >= 1  # met at the seat relay
            nursery.cancel_scope.cancel()
