"""The relay over loopback TCP: a match played through it, what it saw, refusals, a dead relay."""

from __future__ import annotations

import io
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net import handshake as hs
from dernier_p2p.net import relay
from dernier_p2p.net.agent import bot_agent
from dernier_p2p.net.host import Host, HostConfig
from dernier_p2p.net.invite import Invite, Route, fingerprint
from dernier_p2p.net.peer import Peer, PeerConfig
from dernier_p2p.net.reach import UNREACHABLE, WRONG_HOST, Dialer, new_host_dialer
from dernier_p2p.net.relay import (
    NO_TABLE,
    TOKEN_TAKEN,
    Relay,
    RelayLost,
    host_through_relay,
    join_through_relay,
    keep_registered,
    new_token,
    read_record,
    seat_token,
    serve_relay,
)
from dernier_p2p.net.timers import Timers
from dernier_p2p.protocol.envelope import verify_envelope
from dernier_p2p.protocol.ready import check_ready_frame
from dernier_p2p.wire.canonical import decode
from dernier_p2p.wire.hashing import digest

from .helpers import (
    FAST,
    GAME,
    KEYS,
    ONE_HAND,
    same_result,
    seed,
    transcripts,
    verify,
    wait_for,
)

LOOP = "127.0.0.1"


async def _free_port() -> int:
    listeners = await trio.open_tcp_listeners(0, host=LOOP)
    port = listeners[0].socket.getsockname()[1]
    await listeners[0].aclose()
    return port


def _two_seat_host() -> Host:
    """Seat 0's host of a two-seat, one-hand table that plays no seat of its own."""
    config = HostConfig(players=2, options=ONE_HAND, timers=FAST, game=GAME, seed=seed(0),
                        linger_s=0.1)
    return Host(KEYS[0], config, None)


async def _relayed_match(tmp: Path, players: int, relay: Relay, punch: bool = False,
                         ) -> tuple[Host, dict[int, Any]]:
    """A table whose peers all join through ``relay`` (the host listens, but no peer dials it);
    with ``punch``, they ask to punch (4.7 step 5) and must get a direct connection."""
    results: dict[int, Any] = {}
    config = HostConfig(players=players, options=ONE_HAND, timers=FAST, game=GAME, seed=seed(0),
                        transcript=tmp / "t0.bin", linger_s=0.5)
    host = Host(KEYS[0], config, bot_agent(HeuristicBot(0)))
    token = new_token()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(serve_relay, relay, 0, LOOP)
            relay_port = listeners[0].socket.getsockname()[1]

            async def run_host(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
                results[0] = await host.run(task_status=task_status)
                nursery.cancel_scope.cancel()  # ends the relay and the registration

            await nursery.start(run_host)
            await nursery.start(host_through_relay, (LOOP, relay_port), token, host.handle)
            dead = await _free_port()  # the first route answers nothing: the dialer moves on
            invite = Invite(fingerprint(KEYS[0].public_bytes()),
                            (Route("direct", LOOP, dead), Route("relay", LOOP, relay_port, token)))

            async def run_peer(seat: int) -> None:
                dialer = Dialer(invite, per_route_s=5, punch=punch)
                peer = Peer(KEYS[seat], ("", 0), bot_agent(HeuristicBot(seat)),
                            PeerConfig(name=f"p{seat}", seed=seed(seat),
                                       transcript=tmp / f"t{seat}.bin", linger_s=0.5,
                                       dial=dialer, check_host=dialer.check_host))
                results[seat] = await peer.run()
                assert dialer.used is not None
                assert dialer.used.kind == ("punched" if punch else "relay")

            for seat in range(1, players):
                nursery.start_soon(run_peer, seat)
                with trio.fail_after(10):
                    while len(host.players) <= seat:
                        await trio.sleep(0.005)
    return host, results


async def test_a_match_played_through_the_relay_verifies_and_the_relay_saw_only_signed_frames(
    tmp_path: Path,
) -> None:
    record = io.BytesIO()
    relay = Relay(record)
    host, results = await _relayed_match(tmp_path, 3, relay)
    texts = transcripts(tmp_path, range(3))
    assert texts[0] == texts[1] == texts[2]
    verdict = verify(texts[0])
    assert all(same_result(results[s], verdict) for s in range(3))
    assert relay.stats.pairs == 2 and relay.stats.tables == 1
    # Everything the relay forwarded: the handshake, signed envelopes, signed records.
    entries = read_record(record.getvalue())
    assert relay.stats.frames == len(entries) > 0
    kinds: dict[str, int] = {}
    records = {rec["i"]: rec for rec in texts[0]}
    keys = [p["key"] for p in texts[0][0]["env"]["body"]["players"]]
    for _call, way, frame in entries:
        msg = decode(frame)
        kinds[msg["k"]] = kinds.get(msg["k"], 0) + 1
        if msg["k"] == "rec":
            assert way == 1 and msg["rec"] == records[msg["rec"]["i"]]  # a signed record
        elif msg["k"] == "env":  # signed by its seat (a refused one is not in the transcript)
            assert way == 0
            verify_envelope(msg["env"], keys[msg["env"]["seat"]], None)
        elif msg["k"] == "ready":  # a seat passed on a window: signed by it (PROTOCOL.md 18.1)
            assert check_ready_frame(msg, keys, texts[0][0]["env"]["game"])[1] in records
        elif msg["k"] == "done":  # the end of the match, with nothing in it
            assert way == 0 and msg == {"k": "done", "last": len(texts[0]) - 1}
        else:
            assert msg["k"] in {"challenge", "hello", "welcome"}
    assert kinds["rec"] == 2 * len(texts[0]) and kinds["hello"] == 2 and kinds["done"] == 2


async def test_joiners_that_ask_to_punch_play_over_direct_connections_the_relay_only_met(
    tmp_path: Path,
) -> None:
    record = io.BytesIO()
    relay = Relay(record)
    host, results = await _relayed_match(tmp_path, 3, relay, punch=True)
    texts = transcripts(tmp_path, range(3))
    assert texts[0] == texts[1] == texts[2]
    verdict = verify(texts[0])
    assert all(same_result(results[s], verdict) for s in range(3))
    assert relay.stats.pairs == 2  # the rendezvous: each pair made, then left for the punch
    # Past the rendezvous the relay forwarded at most each host's challenge: no hello, no
    # record, no envelope went through it.
    kinds = [decode(frame)["k"] for _call, _way, frame in read_record(record.getvalue())]
    assert set(kinds) <= {"challenge"} and len(kinds) <= 2, kinds


async def test_a_joiner_refuses_a_host_whose_key_is_not_the_codes(tmp_path: Path) -> None:
    host = _two_seat_host()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            await nursery.start(host.run)
            invite = Invite(fingerprint(KEYS[5].public_bytes()),
                            (Route("direct", LOOP, host.port),))
            dialer = Dialer(invite)
            peer = Peer(KEYS[1], ("", 0), None, PeerConfig(name="p1", dial=dialer,
                                                            check_host=dialer.check_host))
            with pytest.raises(hs.NetError) as err:
                await peer.run()
            assert err.value.code == WRONG_HOST
            assert "not the one in the invite code" in err.value.detail
            assert 1 not in host.players  # refused before the hello: no seat was taken
            nursery.cancel_scope.cancel()


def test_a_seat_seeking_a_new_host_says_so_when_it_finds_another_key() -> None:
    dialer = new_host_dialer((LOOP, 47630), None, GAME, KEYS[2].public_bytes())
    with pytest.raises(hs.NetError) as err:
        dialer.check_host(KEYS[3].public_bytes())
    assert err.value.code == WRONG_HOST
    assert "is not the table's new host" in err.value.detail
    assert "invite code" not in err.value.detail and "fresh code" not in err.value.detail
    dialer.check_host(KEYS[2].public_bytes())  # the new host's own key passes


async def test_a_dead_relay_or_unreachable_routes_fail_fast_with_every_reason() -> None:
    dead = await _free_port()
    invite = Invite(fingerprint(KEYS[0].public_bytes()),
                    (Route("direct", LOOP, dead), Route("relay", LOOP, dead, b"t" * 8)))
    with trio.fail_after(10):
        with pytest.raises(hs.NetError) as err:
            await Dialer(invite, per_route_s=2)()
    assert err.value.code == UNREACHABLE
    assert "direct 127.0.0.1" in err.value.detail and "relay 127.0.0.1" in err.value.detail
    with trio.fail_after(10):
        with pytest.raises(RelayLost, match="unreachable"):
            await host_through_relay((LOOP, dead), b"t" * 8, _never)


async def _never(stream: Any) -> None:
    raise AssertionError("no connection expected")


async def test_the_relay_refuses_unknown_tables_taken_tokens_and_junk() -> None:
    relay = Relay()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            port = (await nursery.start(serve_relay, relay, 0, LOOP))[0].socket.getsockname()[1]
            with pytest.raises(hs.RemoteError) as err:
                await join_through_relay((LOOP, port), b"n" * 8)
            assert err.value.code == NO_TABLE
            await nursery.start(host_through_relay, (LOOP, port), b"k" * 8, _never)
            with pytest.raises(RelayLost, match=TOKEN_TAKEN):
                await host_through_relay((LOOP, port), b"k" * 8, _never)
            for junk in [{"k": "hello"}, {"k": "relay-join", "version": 1, "token": b"k" * 8},
                         {"k": "relay-join", "version": hs.VERSION, "token": b"short"}]:
                stream = await _raw(port, junk)
                with pytest.raises(hs.RemoteError):
                    await hs.receive_message(stream)
                await stream.aclose()
            nursery.cancel_scope.cancel()
    assert relay.stats.pairs == 0


async def _raw(port: int, msg: dict[str, Any]) -> Any:
    from dernier_p2p.net.framing import open_framed
    from dernier_p2p.wire.canonical import encode

    stream = await open_framed(LOOP, port, hs.MAX_FRAME)
    await stream.send(encode(msg))
    return stream


async def test_the_host_hears_when_its_relay_goes_away() -> None:
    relay = Relay()
    with trio.fail_after(20):
        async with trio.open_nursery() as outer:
            scope = trio.CancelScope()

            async def run_relay(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
                with scope:
                    await serve_relay(relay, 0, LOOP, task_status=task_status)

            port = (await outer.start(run_relay))[0].socket.getsockname()[1]
            lost: list[RelayLost] = []

            async def register(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
                try:
                    await host_through_relay((LOOP, port), b"g" * 8, _never,
                                             task_status=task_status)
                except RelayLost as exc:
                    lost.append(exc)

            await outer.start(register)
            scope.cancel()  # the relay stops: its connections close
    assert len(lost) == 1 and "went away" in str(lost[0])



async def test_a_relay_without_the_table_sends_the_joiner_on_to_the_next_route() -> None:
    relay = Relay()
    host = _two_seat_host()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            port = (await nursery.start(serve_relay, relay, 0, LOOP))[0].socket.getsockname()[1]
            await nursery.start(host.run)
            invite = Invite(fingerprint(KEYS[0].public_bytes()),
                            (Route("relay", LOOP, port, b"gone" * 2),
                             Route("direct", LOOP, host.port)))
            dialer = Dialer(invite)
            stream = await dialer()
            assert dialer.used == invite.routes[1]
            nonce, table = hs.check_challenge(await hs.receive_message(stream))
            assert table["key"] == KEYS[0].public_bytes()
            await stream.aclose()
            nursery.cancel_scope.cancel()


async def test_a_relay_that_restarts_mid_match_gets_the_table_back_and_the_peers_resume(
    tmp_path: Path,
) -> None:
    timers = Timers(turn_ms=5_000, declare_ms=30, grace_ms=8_000)
    config = HostConfig(players=3, options=ONE_HAND, timers=timers, game=GAME, seed=seed(0),
                        transcript=tmp_path / "t0.bin", linger_s=0.5)
    host = Host(KEYS[0], config, bot_agent(HeuristicBot(0)))
    token, results, peers, events = new_token(), {}, {}, []
    relay_port = await _free_port()
    with trio.fail_after(90):
        async with trio.open_nursery() as nursery:
            relay_scope = trio.CancelScope()

            async def run_relay(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
                with relay_scope:
                    await serve_relay(Relay(), relay_port, LOOP, task_status=task_status)

            await nursery.start(run_relay)

            async def run_host(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
                results[0] = await host.run(task_status=task_status)
                nursery.cancel_scope.cancel()

            await nursery.start(run_host)
            assert await nursery.start(partial(
                keep_registered, (LOOP, relay_port), token, host.handle, retry_s=0.2,
                notify=lambda kind, text: events.append(kind)))
            invite = Invite(fingerprint(KEYS[0].public_bytes()),
                            (Route("relay", LOOP, relay_port, token),))

            async def run_peer(seat: int) -> None:
                dialer = Dialer(invite, punch=False)  # the match goes through the relay
                peers[seat] = Peer(KEYS[seat], ("", 0), bot_agent(HeuristicBot(seat)),
                                   PeerConfig(name=f"p{seat}", seed=seed(seat),
                                              transcript=tmp_path / f"t{seat}.bin",
                                              linger_s=0.5, dial=dialer,
                                              check_host=dialer.check_host))
                results[seat] = await peers[seat].run()

            for seat in (1, 2):
                nursery.start_soon(run_peer, seat)
                with trio.fail_after(10):
                    while len(host.players) <= seat:
                        await trio.sleep(0.005)
            with trio.fail_after(30):
                while len(host.records) < 40:
                    await trio.sleep(0.005)
            relay_scope.cancel()  # the relay dies: every relayed connection with it
            await trio.sleep(0.3)
            relay_scope = trio.CancelScope()
            await nursery.start(run_relay)  # it comes back on the same port
    texts = transcripts(tmp_path, range(3))
    assert texts[0] == texts[1] == texts[2]
    verdict = verify(texts[0])
    assert all(same_result(results[s], verdict) for s in range(3))
    assert all(peers[s].resumes >= 1 for s in (1, 2))
    assert events[:3] == ["ready", "lost", "ready"]


async def test_a_punched_table_plays_on_when_its_relay_dies(tmp_path: Path) -> None:
    # The relay carried only the rendezvous (4.7 step 5): once the peers are on their punched
    # connections, its loss costs the match nothing (no resume is needed).
    config = HostConfig(players=3, options=ONE_HAND, timers=FAST, game=GAME, seed=seed(0),
                        transcript=tmp_path / "t0.bin", linger_s=0.5)
    host = Host(KEYS[0], config, bot_agent(HeuristicBot(0)))
    token, results, peers, dialers = new_token(), {}, {}, {}
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            relay_scope = trio.CancelScope()

            async def run_relay(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
                with relay_scope:
                    await serve_relay(Relay(), 0, LOOP, task_status=task_status)

            relay_port = (await nursery.start(run_relay))[0].socket.getsockname()[1]

            async def run_host(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
                results[0] = await host.run(task_status=task_status)
                nursery.cancel_scope.cancel()

            await nursery.start(run_host)
            assert await nursery.start(partial(keep_registered, (LOOP, relay_port), token,
                                               host.handle, retry_s=0.2))
            invite = Invite(fingerprint(KEYS[0].public_bytes()),
                            (Route("relay", LOOP, relay_port, token),))

            async def run_peer(seat: int) -> None:
                dialers[seat] = Dialer(invite)
                peers[seat] = Peer(KEYS[seat], ("", 0), bot_agent(HeuristicBot(seat)),
                                   PeerConfig(name=f"p{seat}", seed=seed(seat),
                                              transcript=tmp_path / f"t{seat}.bin",
                                              linger_s=0.5, dial=dialers[seat],
                                              check_host=dialers[seat].check_host))
                results[seat] = await peers[seat].run()

            for seat in (1, 2):
                nursery.start_soon(run_peer, seat)
                with trio.fail_after(10):
                    while len(host.players) <= seat:
                        await trio.sleep(0.005)
            relay_scope.cancel()  # the relay dies for good, before the first record
    texts = transcripts(tmp_path, range(3))
    assert texts[0] == texts[1] == texts[2]
    verdict = verify(texts[0])
    assert all(same_result(results[s], verdict) for s in range(3))
    assert all(dialers[s].used.kind == "punched" for s in (1, 2))
    assert all(peers[s].resumes == 0 for s in (1, 2))


async def test_a_punched_seat_whose_connection_drops_resumes_by_punching_again(
    tmp_path: Path,
) -> None:
    timers = Timers(turn_ms=5_000, declare_ms=30, grace_ms=8_000)
    config = HostConfig(players=2, options=ONE_HAND, timers=timers, game=GAME, seed=seed(0),
                        transcript=tmp_path / "t0.bin", linger_s=0.5)
    host = Host(KEYS[0], config, bot_agent(HeuristicBot(0)))
    token, results = new_token(), {}
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            relay = Relay()
            listeners = await nursery.start(serve_relay, relay, 0, LOOP)
            relay_port = listeners[0].socket.getsockname()[1]

            async def run_host(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
                results[0] = await host.run(task_status=task_status)
                nursery.cancel_scope.cancel()

            await nursery.start(run_host)
            assert await nursery.start(partial(keep_registered, (LOOP, relay_port), token,
                                               host.handle, retry_s=0.2))
            dialer = Dialer(Invite(fingerprint(KEYS[0].public_bytes()),
                                   (Route("relay", LOOP, relay_port, token),)))
            peer = Peer(KEYS[1], ("", 0), bot_agent(HeuristicBot(1)),
                        PeerConfig(name="p1", seed=seed(1), transcript=tmp_path / "t1.bin",
                                   linger_s=0.5, dial=dialer, check_host=dialer.check_host))

            async def run_peer() -> None:
                results[1] = await peer.run()

            nursery.start_soon(run_peer)
            with trio.fail_after(30):
                while len(host.records) < 20:
                    await trio.sleep(0.005)
            assert dialer.used is not None and dialer.used.kind == "punched"
            first = dialer.used
            host.driver.seat_conns[1].kill()  # the punched connection drops mid-match
            with trio.fail_after(20):
                while peer.resumes < 1:
                    await trio.sleep(0.005)
    texts = transcripts(tmp_path, range(2))
    assert texts[0] == texts[1]
    assert all(same_result(results[s], verify(texts[0])) for s in range(2))
    assert dialer.used.kind == "punched" and dialer.used != first  # punched anew
    assert relay.stats.pairs == 2  # the join's rendezvous and the resume's


async def test_a_route_that_swallows_packets_costs_the_stagger_not_the_route_timeout() -> None:
    import socket
    import time

    # A listener whose accept queue is full: the kernel drops further SYNs, so a connection to
    # it hangs like one to a private address seen from the Internet.
    full = socket.socket()
    full.bind((LOOP, 0))
    full.listen(0)
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        try:
            filler.connect(full.getsockname())
        except BlockingIOError:
            pass
        fillers.append(filler)
    await trio.sleep(0.2)
    host = _two_seat_host()
    try:
        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                await nursery.start(host.run)
                invite = Invite(fingerprint(KEYS[0].public_bytes()),
                                (Route("direct", LOOP, full.getsockname()[1]),
                                 Route("mapped", LOOP, host.port)))
                dialer = Dialer(invite, per_route_s=8, stagger_s=0.3)
                started = time.monotonic()
                stream = await dialer()
                assert dialer.used == invite.routes[1]
                assert time.monotonic() - started < 6  # in turn, the first route alone takes 8
                await stream.aclose()
                nursery.cancel_scope.cancel()
    finally:
        for sock in (full, *fillers):
            sock.close()


async def test_a_new_host_is_reached_at_the_relay_by_its_seat_token_and_only_its_key_passes(
) -> None:
    # PROTOCOL.md 4.7 step 4 without a match: the dialer a seat builds for a new host (its
    # address, which answers nothing here, then the relay under the seat token) and the key
    # check of the resume: someone else under that token is refused; the seat itself is not.
    key = KEYS[1].public_bytes()
    token = seat_token(GAME, key)
    assert token == digest("dernier-p2p/relay-seat", [GAME, key])[:8]
    assert token not in (seat_token(GAME, KEYS[2].public_bytes()), seat_token(b"H" * 16, key))
    config = HostConfig(players=3, options=ONE_HAND, timers=FAST, game=GAME, seed=seed(0))
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            relay = Relay()
            listeners = await nursery.start(serve_relay, relay, 0, LOOP)
            relay_at = (LOOP, listeners[0].socket.getsockname()[1])
            dialer = new_host_dialer((LOOP, await _free_port()), relay_at, GAME, key)
            for holder, expected in ((KEYS[5], WRONG_HOST), (KEYS[1], hs.UNKNOWN_KEY)):
                host = Host(holder, config, None)
                async with trio.open_nursery() as inner:
                    await inner.start(host.run)
                    await inner.start(host_through_relay, relay_at, token, host.handle)
                    stream = await dialer()
                    # the real seat is punched to (4.7 step 5); the other's punched challenge
                    # is refused, and the relayed one then is
                    assert dialer.used is not None and dialer.used.kind == (
                        "relay" if expected == WRONG_HOST else "punched")
                    with pytest.raises((hs.NetError, hs.RemoteError)) as err:
                        await hs.rejoin(stream, KEYS[2], -1, dialer.check_host)
                    # WRONG_HOST: refused by the seat; UNKNOWN_KEY: the real seat 1, which
                    # hosts no match for seat 2's key, answered the resume
                    assert err.value.code == expected, err.value
                    await stream.aclose()
                    inner.cancel_scope.cancel()
                while token in relay.tables:  # the registration is gone with its host
                    await trio.sleep(0.01)
            nursery.cancel_scope.cancel()


async def test_a_joiner_knowing_the_token_cannot_answer_another_joiners_call() -> None:
    """Call ids are random: someone holding the table's token who saw its own call id cannot
    answer the next joiner's call in the host's place (NO_TABLE), while the host's own answer
    pairs that joiner."""
    relay = Relay()
    token = new_token()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            port = (await nursery.start(serve_relay, relay, 0, LOOP))[0].socket.getsockname()[1]
            control = await _raw(port, {"k": "relay-host", "version": hs.VERSION, "token": token})
            assert (await hs.receive_message(control))["k"] == "relay-ready"

            async def joiner(got: list[Any]) -> None:
                got.append(await join_through_relay((LOOP, port), token))

            calls = []
            for _ in range(2):
                nursery.start_soon(joiner, [])
                while True:
                    msg = await hs.receive_message(control)
                    if msg["k"] == "relay-call":
                        calls.append(msg["id"])
                        break
            # the first joiner (the thief) knows its own id and guesses the next one
            for guess in {calls[0] + 1, calls[0] - 1, calls[0] + 2} - {0}:
                thief = await _raw(port, {"k": "relay-answer", "version": hs.VERSION,
                                          "token": token, "id": guess})
                with pytest.raises(hs.RemoteError) as err:
                    await hs.receive_message(thief)
                assert err.value.code == NO_TABLE
                await thief.aclose()
            assert calls[1] not in {calls[0] + 1, calls[0] + 2}
            answer = await _raw(port, {"k": "relay-answer", "version": hs.VERSION,
                                       "token": token, "id": calls[1]})
            await wait_for(lambda: relay.stats.pairs == 1)
            await answer.aclose()
            nursery.cancel_scope.cancel()


async def test_a_host_that_never_reads_its_calls_does_not_hold_joiners_past_the_call_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A registration whose host never reads: once the relay's calls fill its socket buffers,
    the next call cannot be sent. The joiner is refused within CALL_S anyway, the relay ends that
    registration (a cut frame left it unusable) and holds none of its joiners."""
    import socket

    from dernier_p2p.net import relay as relay_module
    from dernier_p2p.net.framing import FramedStream
    from dernier_p2p.wire.canonical import encode

    # (short, but not so short that a loaded machine's scheduling alone outlasts a call's
    # send: at 0.2 s the first round's sends were cut under load, ending the registration
    # before the buffers filled)
    monkeypatch.setattr(relay_module, "CALL_S", 1.0)
    relay = Relay()
    token = new_token()
    refused: list[float] = []
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = (await nursery.start(serve_relay, relay, 0, LOOP))[0].socket.getsockname()[1]
            sock = trio.socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)  # the kernel's minimum
            await sock.connect((LOOP, port))
            control = FramedStream(trio.SocketStream(sock), hs.MAX_FRAME)
            await control.send(encode({"k": "relay-host", "version": hs.VERSION, "token": token}))
            assert (await hs.receive_message(control))["k"] == "relay-ready"
            await wait_for(lambda: token in relay.tables)
            relay.tables[token].control.stream.socket.setsockopt(  # type: ignore[attr-defined]
                socket.SOL_SOCKET, socket.SO_SNDBUF, 1)
            # from here the host never reads its registration again

            async def joiner() -> None:
                while token in relay.tables:
                    began = trio.current_time()
                    with pytest.raises(hs.RemoteError) as err:
                        await join_through_relay((LOOP, port), token)
                    assert err.value.code == NO_TABLE
                    refused.append(trio.current_time() - began)

            async with trio.open_nursery() as joiners:
                for _ in range(relay_module.MAX_WAITING):
                    joiners.start_soon(joiner)
            assert token not in relay.tables  # the registration that does not read is gone
            await control.aclose()
            nursery.cancel_scope.cancel()
    assert len(refused) > relay_module.MAX_WAITING
    assert max(refused) < 1.0 + 5  # CALL_S and slack for a busy machine; never held for good


def test_a_relay_call_id_is_a_positive_integer() -> None:
    assert relay.call_id({"k": "relay-call", "id": 1}) == 1
    assert relay.call_id({"k": "relay-call", "id": 2**62}) == 2**62
    for bad in ({"k": "relay-call", "id": 0}, {"k": "relay-call", "id": -5},
                {"k": "relay-call", "id": True}, {"k": "relay-call", "id": "7"},
                {"k": "relay-call", "id": 2**62 + 1},
                {"k": "relay-call"}, {"k": "relay-call", "id": 7, "x": 0},
                {"k": "ping", "id": 7}):
        assert relay.call_id(bad) is None


def test_a_relay_opening_of_another_version_is_refused_naming_both_versions() -> None:
    """Relay openings are live frames: version 5 alone (PROTOCOL.md 20); a version-4 peer at a
    version-5 relay is told both versions."""
    token = b"k" * relay.TOKEN_SIZE
    assert relay.check_open({"k": "relay-join", "version": 5, "token": token}) == (
        "relay-join", token)
    for version in (1, 2, 3, 4, 6):
        for kind in ("relay-host", "relay-join", "relay-answer"):
            with pytest.raises(hs.NetError) as err:
                relay.check_open({"k": kind, "version": version, "token": token, "id": 7})
            assert err.value.code == hs.VERSION_MISMATCH
            assert f"this {kind} speaks protocol version {version}; this relay speaks 5" in \
                err.value.detail
