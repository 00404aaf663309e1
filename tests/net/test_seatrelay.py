"""Seat relays (PROTOCOL.md 4.7 step 7) over loopback: a seat's relay serves its own table's
seat tokens only, within the table's budgets, behind the seat's challenge; which seats of a
table are seat relays."""

from __future__ import annotations

import os
from functools import partial
from types import SimpleNamespace
from typing import Any

import pytest
import trio

from dernier_p2p.net import handshake as hs
from dernier_p2p.net import relay
from dernier_p2p.net.framing import FramedStream, FrameError, open_framed, serve_framed
from dernier_p2p.net.relay import (
    RelayLost,
    host_through_relay,
    join_through_relay,
    past_challenge,
    seat_relay,
)
from dernier_p2p.net.seatrelay import is_reachable, seat_relays
from dernier_p2p.wire.canonical import encode

from .helpers import KEYS

LOOP = "127.0.0.1"
OURS, THEIRS = b"s" * 8, b"x" * 8


def _challenge() -> dict[str, Any]:
    return hs.challenge_message(os.urandom(hs.NONCE_SIZE), {"name": "link"})


async def _seat(nursery: trio.Nursery, served: relay.Relay) -> tuple[str, int]:
    """A listener that sends a challenge first, as a seat's does, and hands a relay opening
    answering it to ``served`` (what a seat's listener does with one)."""

    async def handle(stream: FramedStream) -> None:
        await hs.send_message(stream, _challenge())
        msg = await hs.receive_message(stream)
        await served.serve_opened(stream, msg, LOOP)

    listeners = await nursery.start(partial(serve_framed, handle, 0, host=LOOP,
                                              max_frame=hs.MAX_FRAME))
    return LOOP, listeners[0].socket.getsockname()[1]


async def test_a_seat_relay_serves_its_own_tables_tokens_only() -> None:
    served, key = seat_relay(lambda: {OURS}), KEYS[0].public_bytes()

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            address = await _seat(nursery, served)
            with pytest.raises(RelayLost, match="NO_TABLE"):  # not a seat of this table
                await host_through_relay(address, THEIRS, host, seat=True)
            await nursery.start(partial_host(address, OURS, host))
            with pytest.raises(RelayLost, match="TOKEN_TAKEN"):  # one registration a token
                await host_through_relay(address, OURS, host, seat=True)
            with pytest.raises(hs.RemoteError) as err:
                await join_through_relay(address, THEIRS, seat=True)
            assert err.value.code == "NO_TABLE"
            stream = await join_through_relay(address, OURS, seat=True)
            _, table = hs.check_challenge(await hs.receive_message(stream))
            assert table["key"] == key  # the standing-by seat's, end to end
            assert served.stats.pairs == 1
            nursery.cancel_scope.cancel()


async def host(stream: FramedStream) -> None:
    """The standing-by seat behind the relay, answering as a host: its challenge, then quiet."""
    await hs.send_message(stream, hs.challenge_message(os.urandom(hs.NONCE_SIZE),
                                                       {"key": KEYS[0].public_bytes()}))
    await trio.sleep_forever()


def partial_host(address: tuple[str, int], token: bytes, handler: Any) -> Any:
    async def run(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        await host_through_relay(address, token, handler, seat=True, task_status=task_status)
    return run


async def test_a_seat_relay_carries_a_joiner_until_its_pair_closes() -> None:
    # A seat relay's seat, its own match over, forwards on until it carries nobody (4.7 step
    # 7): the count covers the joiner from its join to the end of its pair.
    served = seat_relay(lambda: {OURS})

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            address = await _seat(nursery, served)
            await served.carried()  # nobody carried: at once
            await nursery.start(partial_host(address, OURS, host))
            stream = await join_through_relay(address, OURS, seat=True)
            assert (await hs.receive_message(stream))["k"] == "challenge"  # forwarded
            assert served.carrying == 1
            with trio.move_on_after(0.3) as waited:
                await served.carried()
            assert waited.cancelled_caught  # the pair still forwards
            await stream.aclose()  # the joiner leaves: the pair closes
            await served.carried()
            assert served.carrying == 0
            nursery.cancel_scope.cancel()


async def test_a_seat_relay_holds_four_waiting_joiners_an_address_the_oldest_gives_way(
) -> None:
    served = seat_relay(lambda: {OURS})
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            address = await _seat(nursery, served)
            control = await open_framed(*address, hs.MAX_FRAME)  # registered, never answers
            await past_challenge(control)
            await control.send(encode({"k": "relay-host", "version": hs.VERSION,
                                       "token": OURS}))
            assert (await hs.receive_message(control))["k"] == "relay-ready"
            joiners = []
            for _ in range(5):
                stream = await open_framed(*address, hs.MAX_FRAME)
                await past_challenge(stream)
                await stream.send(encode({"k": "relay-join", "version": hs.VERSION,
                                          "token": OURS}))
                joiners.append(stream)
                while (await hs.receive_message(control))["k"] != "relay-call":
                    pass  # its call reached the host: it waits
            with pytest.raises(hs.RemoteError) as err:  # the fifth evicted the first
                await hs.receive_message(joiners[0])
            assert err.value.code == relay.RELAY_BUSY
            assert served.joining.limits.per_address == 4
            assert served.pairs.limits.max_pending == 16
            nursery.cancel_scope.cancel()


async def test_a_seat_relay_client_reads_a_challenge_first_and_nothing_else() -> None:
    async def other(stream: FramedStream) -> None:
        await hs.send_message(stream, {"k": "relay-ready"})
        await trio.sleep_forever()

    async def huge(stream: FramedStream) -> None:
        await stream.send(b"\x80" * (hs.MAX_OPENING + 1))
        await trio.sleep_forever()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            for handler, error in ((other, hs.NetError), (huge, FrameError)):
                listeners = await nursery.start(partial(serve_framed, handler, 0, host=LOOP,
                                                          max_frame=hs.MAX_FRAME))
                stream = await open_framed(LOOP, listeners[0].socket.getsockname()[1],
                                           hs.MAX_FRAME)
                with pytest.raises(error):
                    await past_challenge(stream)
            nursery.cancel_scope.cancel()


def _session(*listens: list[Any] | None) -> Any:
    return SimpleNamespace(n=len(listens), table_body={"players": [
        {"listen": listen} for listen in listens]})


def test_the_seat_relays_are_the_other_seats_at_global_addresses_in_seat_order() -> None:
    assert is_reachable(("11.22.33.5", 47630)) and is_reachable(("2a11:2233::5", 1))
    for private in (("192.168.1.2", 47630), ("100.64.0.2", 1), (LOOP, 1), ("fe80::1", 1),
                    ("203.0.113.7", 1), None):
        assert not is_reachable(private)
    session = _session(["192.168.1.2", 47630], ["11.22.33.5", 47630], None,
                       ["2a11:2233::5", 47630], ["11.22.33.6", 1], ["11.22.33.7", 1],
                       ["11.22.33.8", 1], ["11.22.33.9", 1])
    assert seat_relays(session, 0) == [("11.22.33.5", 47630), ("2a11:2233::5", 47630),
                                       ("11.22.33.6", 1), ("11.22.33.7", 1)]  # the first 4
    assert seat_relays(session, 1, target=3) == [("11.22.33.6", 1), ("11.22.33.7", 1),
                                                 ("11.22.33.8", 1), ("11.22.33.9", 1)]


async def test_a_new_host_standing_by_at_a_seat_relay_is_reached_through_it() -> None:
    """The new host's own address answers nothing; the dialer then tries the seat relay under
    the new host's seat token (its challenge first) and reaches the host standing by there."""
    from dernier_p2p.net.reach import new_host_dialer
    from dernier_p2p.net.relay import seat_token

    game, key = b"g" * 16, KEYS[1].public_bytes()
    served = seat_relay(lambda: {seat_token(game, key)})

    async def new_host(stream: FramedStream) -> None:
        await hs.send_message(stream, hs.challenge_message(os.urandom(hs.NONCE_SIZE),
                                                           {"key": key}))
        await trio.sleep_forever()

    closed = trio.socket.socket()  # a port nobody listens on: the new host's listen address
    await closed.bind((LOOP, 0))
    nowhere = (LOOP, closed.getsockname()[1])
    closed.close()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            address = await _seat(nursery, served)
            await nursery.start(partial_host(address, seat_token(game, key), new_host))
            dialer = new_host_dialer(nowhere, None, game, key, [address])
            assert [r.kind for r in dialer.routes] == ["direct", "seat"]
            stream = await dialer()
            assert dialer.used is not None and dialer.used.kind in ("seat", "punched")
            _, table = hs.check_challenge(await hs.receive_message(stream))
            assert table["key"] == key
            assert served.stats.pairs == 1  # the meeting went through the seat relay
            nursery.cancel_scope.cancel()


def test_a_seat_stands_by_at_a_seat_relay_it_uses_and_never_at_itself() -> None:
    from dernier_p2p.net.seatrelay import stands_by_at

    # seat 0 private, 1 global, 2 none, 3 global, 4 private
    session = _session(["192.168.1.2", 47630], ["11.22.33.5", 47630], None,
                       ["11.22.33.6", 47630], ["10.0.0.4", 1])
    assert stands_by_at(session, 1, 0) and stands_by_at(session, 3, 0)
    assert stands_by_at(session, 1, 2) and stands_by_at(session, 1, 4)  # (no listen: too)
    assert not stands_by_at(session, 1, 3)  # a reachable seat stands by nowhere
    assert not stands_by_at(session, 0, 4)  # a private address is no seat relay
    assert not stands_by_at(session, 1, 1)
    # beyond the first 4 seat relays (in seat order, not itself), a seat does not stand by
    many = _session(["192.168.1.2", 1], *[[f"11.22.33.{k}", 1] for k in range(1, 7)])
    assert [r for r in range(1, 7) if stands_by_at(many, r, 0)] == [1, 2, 3, 4]


async def test_a_seat_reaches_its_own_listener_locally() -> None:
    from dernier_p2p.net.seatrelay import local_address

    assert local_address(None) is None and local_address([]) is None
    listeners = await trio.open_tcp_listeners(0, host="0.0.0.0")
    local = await trio.open_tcp_listeners(0, host=LOOP)
    try:
        port = listeners[0].socket.getsockname()[1]
        assert local_address(listeners) == (LOOP, port)  # every interface: the loopback one
        assert local_address(local) == (LOOP, local[0].socket.getsockname()[1])
    finally:
        for listener in (*listeners, *local):
            await listener.aclose()


def _closed_port() -> tuple[str, int]:
    import socket

    with socket.socket() as closed:  # a port nobody listens on
        closed.bind((LOOP, 0))
        return LOOP, closed.getsockname()[1]


async def test_a_seat_relay_reaches_a_new_host_standing_by_at_itself_unpunched() -> None:
    """The dialling seat is itself the seat relay the new host stands by at: after every
    other route it tries its own relay at its listener's local address, without asking to
    punch, and its relay pairs it with the new host's registration."""
    from dernier_p2p.net.reach import new_host_dialer
    from dernier_p2p.net.relay import seat_token

    game, key = b"g" * 16, KEYS[1].public_bytes()
    token = seat_token(game, key)
    served = seat_relay(lambda: {token})
    joins: list[dict[str, Any]] = []
    serve = served.serve_opened

    async def spied(stream: FramedStream, msg: dict[str, Any], source: str) -> None:
        joins.append(msg)
        await serve(stream, msg, source)

    served.serve_opened = spied  # type: ignore[method-assign]

    async def new_host(stream: FramedStream) -> None:
        await hs.send_message(stream, hs.challenge_message(os.urandom(hs.NONCE_SIZE),
                                                           {"key": key}))
        await trio.sleep_forever()

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            own = await _seat(nursery, served)  # this seat's own listener, its seat relay
            await nursery.start(partial_host(own, token, new_host))
            dialer = new_host_dialer(_closed_port(), None, game, key, [], own)
            assert [r.kind for r in dialer.routes] == ["direct", "seat"]
            stream = await dialer()
            assert dialer.used is not None and dialer.used.kind == "seat"  # not "punched"
            assert dialer.used in dialer.unpunched
            _, table = hs.check_challenge(await hs.receive_message(stream))
            assert table["key"] == key
            assert served.stats.pairs == 1
            join = [m for m in joins if m.get("k") == "relay-join"]
            assert len(join) == 1 and "punch" not in join[0], join  # no punch asked
            nursery.cancel_scope.cancel()


async def test_a_link_to_a_seat_standing_by_at_the_linking_seat_goes_through_its_relay(
) -> None:
    """links.open_link: the target's ``listen`` address answers nothing and no other seat
    relays; the linking seat, a seat relay (its ``listen`` global) where the target stands
    by, links through its own relay at its local address, and signs ``link`` there."""
    from dernier_p2p.net.links import open_link
    from dernier_p2p.net.relay import seat_token

    game = b"g" * 16
    keys = [KEYS[0].public_bytes(), KEYS[1].public_bytes()]
    token = seat_token(game, keys[1])
    target = _closed_port()
    session = SimpleNamespace(
        n=2, game=game, seat=0, keys=keys,
        table_body={"players": [{"listen": ["11.22.33.5", 47630]},  # this seat: global
                                {"listen": list(target)}]})  # the target: loopback, no answer
    served = seat_relay(lambda: {token})
    linked: list[dict[str, Any]] = []

    async def standing_by(stream: FramedStream) -> None:  # seat 1 answers the link
        await hs.send_message(stream, hs.challenge_message(os.urandom(hs.NONCE_SIZE),
                                                           {"name": "link", "key": keys[1]}))
        linked.append(await hs.receive_message(stream))
        await trio.sleep_forever()

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            own = await _seat(nursery, served)
            await nursery.start(partial_host(own, token, standing_by))
            with pytest.raises(OSError):  # without its own relay: no route but the address
                await open_link(target, KEYS[0], session, None, 1)
            stream = await open_link(target, KEYS[0], session, None, 1, own)
            while not linked:
                await trio.sleep(0.01)
            assert linked[0]["k"] == "link" and linked[0]["seat"] == 0
            assert served.stats.pairs == 1
            await stream.aclose()
            nursery.cancel_scope.cancel()


async def test_a_host_announces_its_mappings_address_until_record_0_is_made() -> None:
    """Host.announce (a mapping's outside address, no --advertise): record 0's ``listen`` for
    the host is that address, so it is a seat relay like a mapped joining seat."""
    from dernier_p2p.net.host import Host, HostConfig

    host = Host(KEYS[0], HostConfig(players=2, bind=LOOP), None)
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(host.run)
            assert host.hosting.players[0].listen == (LOOP, host.port)  # what it listens at
            assert host.announce(("11.22.33.10", 47630))
            own = host.hosting.players[0]
            assert own.listen == ("11.22.33.10", 47630) and own.key == KEYS[0].public_bytes()
            assert is_reachable(own.listen)
            host.full.set()  # record 0 is made from here on: nothing changes it
            assert not host.announce(("11.22.33.11", 1))
            assert host.hosting.players[0].listen == ("11.22.33.10", 47630)
            nursery.cancel_scope.cancel()
