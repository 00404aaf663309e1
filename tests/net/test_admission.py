"""Admission control: caps on pending connections evict the oldest, never the newcomer."""

from __future__ import annotations

import resource

import pytest
import trio

from dernier_p2p.net.admission import Admission, Limits, raise_nofile_limit


async def test_per_address_cap_evicts_the_oldest_of_that_address() -> None:
    gate = Admission(Limits(max_pending=10, per_address=2, handshake_s=5))
    a1, a2, b1 = gate.enter("a"), gate.enter("a"), gate.enter("b")
    a3 = gate.enter("a")
    assert a1.evicted and a1.scope.cancel_called
    assert not (a2.evicted or a3.evicted or b1.evicted)
    assert gate.pending == 3 and gate.evictions == 1


async def test_total_cap_evicts_from_the_busiest_address() -> None:
    gate = Admission(Limits(max_pending=4, per_address=4, handshake_s=5))
    b = gate.enter("b")
    flood = [gate.enter("f") for _ in range(3)]
    newcomer = gate.enter("c")  # total cap: the oldest of "f" goes, not "b"
    assert flood[0].evicted and not b.evicted and not newcomer.evicted
    assert gate.pending == 4


async def test_release_frees_the_slot_once() -> None:
    gate = Admission(Limits(max_pending=2, per_address=2, handshake_s=5))
    with gate.enter("a") as t:
        assert gate.pending == 1
    t.release()  # twice is harmless
    assert gate.pending == 0
    gate.enter("a"), gate.enter("a")
    assert gate.pending == 2


async def test_a_pending_slot_has_the_handshake_deadline() -> None:
    gate = Admission(Limits(handshake_s=0.05))
    ticket = gate.enter("a")
    with ticket.scope:
        await trio.sleep(10)
    assert ticket.scope.cancelled_caught and not ticket.evicted


def test_limits_are_checked() -> None:
    for bad in ((0, 0, 1.0), (2, 3, 1.0), (2, 1, 0)):
        with pytest.raises(ValueError):
            Limits(*bad)


def test_raise_nofile_limit_reaches_the_hard_limit() -> None:
    soft, hard = raise_nofile_limit()
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == soft
    assert soft == min(hard, 65536) or hard == resource.RLIM_INFINITY


# --- 2,000 idle connections against a real host on loopback ----------------------------------

FLOOD = 2000


async def _flood(port: int, count: int, held: list[trio.SocketStream]) -> None:
    """Open ``count`` connections to ``port`` and leave them idle (the host's challenge is
    never answered)."""
    for _ in range(count):
        held.append(await trio.open_tcp_stream("127.0.0.1", port))


async def _trickle(port: int, held: list[trio.SocketStream]) -> None:
    """Keep opening idle connections (one every 5 ms) while the test goes on."""
    while True:
        held.append(await trio.open_tcp_stream("127.0.0.1", port))
        await trio.sleep(0.005)


async def _close_all(held: list[trio.SocketStream]) -> None:
    for stream in held:
        await trio.aclose_forcefully(stream)


async def test_a_new_player_joins_within_2s_with_2000_idle_connections_open() -> None:
    from tests.net.test_handshake import KEYS, good_join, hosting

    raise_nofile_limit()  # as a real host would (and this test's own 2,000 sockets need it)
    held: list[trio.SocketStream] = []
    with trio.fail_after(120):
        async with hosting(players=3) as host:
            await _flood(host.port, FLOOD, held)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_trickle, host.port, held)
                start = trio.current_time()
                seat, _ = await good_join(host.port, KEYS[0])
                took = trio.current_time() - start
                nursery.cancel_scope.cancel()
            assert seat == 1 and took < 2.0, took
            assert host.admission.pending <= host.admission.limits.max_pending
            assert host.admission.evictions >= FLOOD - host.admission.limits.max_pending
    await _close_all(held)


async def test_a_seated_peer_resumes_within_2s_with_2000_idle_connections_open(
    tmp_path,
) -> None:
    from tests.net.helpers import FAST, play, transcripts, wait_for
    from tests.net.test_peer import mid_hand

    raise_nofile_limit()
    held: list[trio.SocketStream] = []
    took: list[float] = []

    async def flood_then_drop(table) -> None:
        await wait_for(lambda: mid_hand(table, 30), 60)
        async with trio.open_nursery() as nursery:
            await _flood(table.host.port, FLOOD, held)
            nursery.start_soon(_trickle, table.host.port, held)
            peer = table.peers[1]
            before = table.host.conns.get(1)
            start = trio.current_time()
            await trio.aclose_forcefully(peer.stream)  # the socket dies under the peer
            await wait_for(lambda: table.host.conns.get(1) not in (None, before), 10)
            took.append(trio.current_time() - start)
            at = len(table.host.records)
            await wait_for(lambda: len(table.host.records) > at + 10, 60)  # play goes on
            nursery.cancel_scope.cancel()
        await _close_all(held)
        for scope in table.scopes.values():  # a long match: stop here
            scope.cancel()

    timers = type(FAST)(turn_ms=20_000, declare_ms=30, grace_ms=15_000)
    table = await play(tmp_path, 2, watch=flood_then_drop, timers=timers, limit=180,
                       options={"match": ["hands", 50]})
    assert not table.errors
    assert table.peers[1].resumes == 1
    assert took and took[0] < 2.0, took
    got = transcripts(tmp_path, range(2))
    common = min(len(got[0]), len(got[1]))
    assert common > 50 and got[0][:common] == got[1][:common]
    bodies = [r["env"]["body"]["type"] for r in got[0]]
    assert "left" not in bodies and "timeout" not in bodies
