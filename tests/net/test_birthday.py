"""The birthday punch (PROTOCOL.md 4.7 step 5): its plan is capped, paced and spread over the
range a symmetric NAT draws from; a process runs up to three at once, which share its pace,
its sockets and its connections a minute; on loopback the first connection made is taken and
every other socket is closed at once, and punches at once each end on their own."""

from __future__ import annotations

import bisect
import logging
import math
import random
import socket

import pytest
import trio

from dernier_p2p.net import birthday as bd
from dernier_p2p.net.admission import raise_nofile_limit
from dernier_p2p.net.framing import FramedStream
from dernier_p2p.net.punch import reusable

LOOP = "127.0.0.1"


def test_a_plan_holds_at_most_the_caps_whatever_it_is_asked() -> None:
    steps = bd.plan(40000, random.Random(1), opens=10**6, guesses=10**6)
    assert sum(s.kind == "open" for s in steps) == bd.OPENS == 512
    assert sum(s.kind == "guess" for s in steps) == bd.GUESSES == 512
    assert bd.plan(40000, random.Random(1), opens=-5, guesses=-5) == []
    assert bd.counts(-1, 10**6, 10**6) == (10**6, 10**6)  # counts caps by files; plan by caps


def test_guesses_are_distinct_ports_of_the_range_the_next_ones_after_at_first() -> None:
    for seen in (40000, 65530, 1024, 80):
        ports = bd.guess_ports(seen, 512, random.Random(seen))
        assert len(ports) == len(set(ports)) == 512
        assert seen not in ports
        assert all(bd.PORT_LOW <= p <= bd.PORT_HIGH for p in ports)
        first = [bd.PORT_LOW + (max(seen, bd.PORT_LOW - 1) - bd.PORT_LOW + k) % bd.SPAN
                 for k in range(1, bd.SEQUENTIAL + 1)]
        assert ports[:bd.SEQUENTIAL] == first
    assert bd.guess_ports(65530, 16, random.Random(0))[:7] == [65531, 65532, 65533, 65534,
                                                               65535, 1024, 1025]
    # the randomness is given: the same seed, the same guesses; another seed, others
    assert bd.guess_ports(5000, 100, random.Random(7)) == bd.guess_ports(5000, 100,
                                                                        random.Random(7))
    assert bd.guess_ports(5000, 100, random.Random(7)) != bd.guess_ports(5000, 100,
                                                                        random.Random(8))


def test_after_the_sequential_guesses_come_the_ports_linux_draws_twice_as_often() -> None:
    ports = bd.guess_ports(30000, 2000, random.Random(3))
    favoured = ports[bd.SEQUENTIAL:bd.SEQUENTIAL + 1024]
    assert sorted(favoured) == list(range(1024, 2048))
    assert favoured != sorted(favoured)  # in an order drawn by the randomness given
    rest = ports[bd.SEQUENTIAL + 1024:]
    assert len(rest) == 2000 - 1024 - bd.SEQUENTIAL and min(rest) >= 2048
    halves = sum(p < bd.PORT_LOW + bd.SPAN // 2 for p in rest)
    assert 0.35 < halves / len(rest) < 0.65  # the whole range, evenly


def test_a_plan_is_paced_opens_lead_and_everything_ends_within_the_window() -> None:
    steps = bd.plan(40000, random.Random(2))
    assert [s.at_s for s in steps] == sorted(s.at_s for s in steps)
    opens = [s.at_s for s in steps if s.kind == "open"]
    guesses = [s.at_s for s in steps if s.kind == "guess"]
    assert min(opens) == bd.OPEN_START_S == 0.05  # the plain punch has a round trip first
    assert min(guesses) == bd.GUESS_START_S == 0.15  # and the guesses wait longer
    assert max(opens) == 0.68 and max(guesses) == 0.78 < bd.WINDOW_S
    assert all(s.port == 40000 for s in steps if s.kind == "open")  # to `at` itself
    per_tick: dict[float, dict[str, int]] = {}
    for s in steps:
        count = per_tick.setdefault(s.at_s, {"open": 0, "guess": 0})
        count[s.kind] += 1
    assert max(sum(c.values()) for c in per_tick.values()) == 16  # 16 new connections a tick
    assert all(c["open"] <= 8 and c["guess"] <= 8 for c in per_tick.values())
    assert len(per_tick) == 74  # 1024 over 74 ticks of 10 ms


def test_the_counts_fit_the_open_files_limit() -> None:
    assert bd.counts(20000) == (512, 512)
    assert bd.counts(1024) == (384, 384)  # (1024 - 256) / 2 each
    assert bd.counts(256 + 2 * 16) == (16, 16)
    assert bd.counts(256 + 2 * 16 - 1) == (0, 0)  # too few to be worth it
    assert bd.counts(256) == (0, 0)


def test_a_later_punch_gets_the_sockets_the_running_ones_left_or_none_below_the_minimum(
) -> None:
    # 1024 files: 384 of each kind to spare; one running holds all of them, so a second gets
    # none; with 2,000 files (872 of each), a second gets what the first's 512 left: 360.
    allowance = bd.Allowance()
    assert allowance.fit(1024) == (384, 384)
    assert allowance.start(0.0, 768, (384, 384))
    assert allowance.held == (384, 384) and allowance.fit(1024) == (0, 0)
    allowance.end(0.5, 768, 10, (384, 384))
    assert allowance.held == (0, 0) and allowance.fit(1024) == (384, 384)
    assert bd.counts(2000) == (512, 512)
    assert allowance.start(1.0, 1024, (512, 512))
    assert allowance.fit(2000) == (360, 360)
    assert allowance.fit(2000, 100, 0) == (100, 0)  # at most as asked
    assert allowance.start(1.0, 720, (360, 360))
    assert allowance.fit(2000) == (0, 0)  # nothing left: a third is refused
    assert allowance.fit(-1) == (512, 512)  # no limit known
    assert bd.counts(2000, held=(872 - 16, 872 - 16)) == (16, 16)  # the minimum left
    assert bd.counts(2000, held=(872 - 15, 0)) == (0, 0)  # below it for either kind
    allowance.end(2.0, 1024, 0, (512, 512))
    allowance.end(2.0, 720, 0, (360, 360))
    assert allowance.held == (0, 0) and allowance.running == 0


def _run_pace(pace: bd.Pace, plans: dict[int, tuple[float, list[bd.Step]]], until: float,
              leave: dict[int, float] | None = None) -> dict[int, dict[int, list[int]]]:
    """Each punch of ``plans`` (its start and steps) joins at its start and asks every tick
    (as :func:`bd.birthday` does, from 1 ms after the tick's start), leaving at ``leave``:
    per tick, what each was given (opens, guesses)."""
    keys: dict[int, int] = {}
    out: dict[int, dict[int, list[int]]] = {}
    for tick in range(int(until / bd.TICK_S)):
        now = tick * bd.TICK_S + 0.001
        for name, (start, steps) in plans.items():
            if name not in keys and start <= now:
                keys[name] = pace.join(start, steps)
            if name in keys and (leave or {}).get(name, until) <= now:
                pace.leave(keys[name])
        for name in sorted(keys, key=lambda k: (tick + k) % 3):  # in varying orders
            given = pace.take(keys[name], now)
            if any(given):
                out.setdefault(tick, {})[name] = list(given)
    return out


def test_a_lone_punch_keeps_its_plans_pace() -> None:
    steps = bd.plan(40000, random.Random(2))
    out = _run_pace(bd.Pace(), {0: (0.0, steps)}, 1.0)
    assert sum(g[0][0] for g in out.values()) == 512
    assert sum(g[0][1] for g in out.values()) == 512
    assert min(out) == 5 and max(out) == 78  # from 0.05 s to 0.78 s, as planned
    assert all(g[0][0] <= 8 and g[0][1] <= 8 for g in out.values())


def test_punches_at_once_share_the_processes_pace_round_robin_never_more_in_sum() -> None:
    # Three whole punches started together: every tick at most 8 opens and 8 guesses in sum,
    # handed 3/3/2 in turn, so that each got a third; one started later gets its share from
    # its first tick; one that leaves gives its share to the others.
    plans = {k: (0.0, bd.plan(40000 + k, random.Random(k))) for k in range(3)}
    out = _run_pace(bd.Pace(), plans, 3.0)
    for kind in (0, 1):
        assert all(sum(g[kind] for g in per.values()) <= 8 for per in out.values())
        assert all(sum(out[t][k][kind] for k in out[t]) == 8  # every slot used while due
                   for t in range(16 + 5 * kind, 170))
        for k in range(3):
            assert sum(per.get(k, [0, 0])[kind] for per in out.values()) == 512
        by_1s = [sum(per.get(k, [0, 0])[kind] for t, per in out.items() if t < 100)
                 for k in range(3)]
        assert max(by_1s) - min(by_1s) <= 2  # a third each, within one turn
    assert min(out) == 5 and max(out) == 15 + 191  # 1,536 guesses at 8 a tick from 0.15 s
    plans = {0: (0.0, bd.plan(40000, random.Random(0))),
             1: (0.3, bd.plan(40001, random.Random(1)))}
    out = _run_pace(bd.Pace(), plans, 3.0, leave={0: 0.6})
    assert out[10] == {0: [8, 0]}  # alone: the whole pace
    assert out[36] == {0: [4, 8], 1: [4, 0]}  # half the opens each from the later one's start
    assert sorted(out[50].values()) == [[4, 4], [4, 4]]  # and the guesses from its 0.15 s
    assert out[61] == {1: [8, 8]}  # the first has left: the later one has it all again


def test_a_punch_due_later_in_a_tick_gets_what_the_others_left() -> None:
    pace = bd.Pace()
    one = pace.join(0.0, [bd.Step(0.0, "open", 1)] * 3)
    two = pace.join(0.0, [bd.Step(0.005, "open", 1)] * 20)
    assert pace.take(one, 0.001) == (3, 0)  # the first to ask hands the tick: 3 due
    assert pace.take(two, 0.006) == (5, 0)  # due since: what is left of the 8
    assert pace.take(two, 0.007) == (0, 0)
    assert pace.take(two, 0.011) == (8, 0) and pace.next_due(one) is None
    pace.leave(two)
    assert pace.take(two, 0.021) == (0, 0) and pace.next_due(two) is None


def test_the_success_chance_is_the_hypergeometric_one() -> None:
    # 3 opens among 10 ports, 3 guesses: misses all 3 in C(7,3)/C(10,3) = 35/120 cases
    assert math.isclose(bd.success(3, 3, 10), 1 - 35 / 120)
    assert bd.success(0, 512) == 0.0 and bd.success(10, 10, 15) == 1.0
    assert round(bd.success(512, 512), 3) == 0.983  # the counts used, over 1024..65535
    assert round(bd.success(256, 256), 3) == 0.639
    # against a simulated uniform symmetric NAT: 512 draws without repetition from the range
    rng = random.Random(11)
    met = 0
    for _ in range(300):
        drawn = set(rng.sample(range(bd.PORT_LOW, bd.PORT_HIGH + 1), 512))
        guesses = bd.guess_ports(rng.randint(bd.PORT_LOW, bd.PORT_HIGH), 512, rng)
        met += bool(drawn.intersection(guesses))
    assert met >= 280  # 98.3 % expected: 295 of 300


def _linux_random(rng: random.Random, used: set[int]) -> int:
    """An outside port as Linux `masquerade random` picks it: a 16-bit random offset modulo
    the range, then the next free port."""
    off = rng.getrandbits(16)
    for k in range(bd.SPAN):
        port = bd.PORT_LOW + (off + k) % bd.SPAN
        if port not in used:
            used.add(port)
            return port
    raise AssertionError("no port left")


def test_against_the_way_linux_draws_the_guesses_meet_almost_always() -> None:
    # 1 - (1 - (496 * 2 + 16) / 65536) ** 512: about 99.96 %
    rng = random.Random(12)
    met = 0
    for _ in range(300):
        used: set[int] = set()
        drawn = {_linux_random(rng, used) for _ in range(512)}
        guesses = bd.guess_ports(rng.randint(bd.PORT_LOW, bd.PORT_HIGH), 512, rng)
        met += bool(drawn.intersection(guesses))
    assert met >= 297


def test_a_process_runs_three_birthday_punches_at_once_and_4096_connections_a_minute() -> None:
    allowance = bd.Allowance()
    assert bd.MAX_RUNNING == 3
    for _ in range(3):
        assert allowance.start(100.0, 1024)
    assert not allowance.start(100.1, 16)  # three running
    for _ in range(3):
        allowance.end(100.5, 1024, 0)
    assert allowance.start(100.0, 1024)
    allowance.end(100.5, 1024, 1024)
    for t in (101.0, 102.0, 103.0):
        assert allowance.start(t, 1024)
        allowance.end(t + 0.5, 1024, 1024)
    assert not allowance.start(110.0, 1024)  # four whole ones in the last 60 s
    assert allowance.start(161.0, 1024)  # the first has left the minute
    allowance.end(161.5, 1024, 1024)
    early = bd.Allowance()
    for t in range(10):  # ended early by a plain punch's connection, as most are: 20 made
        assert early.start(200.0 + t, 1024)
        early.end(200.5 + t, 1024, 20)
    for t in (211.0, 212.0, 213.0):
        assert early.start(t, 1024)
        early.end(t + 0.5, 1024, 1024)
    assert not early.start(214.0, 1024)  # 200 + 3 x 1024 made: a whole one no longer fits
    assert early.start(214.0, 800)
    early.end(214.5, 800, 5000)  # counted at most as reserved
    early.end(215.0, 1024, 1024)  # an extra end gives nothing back
    assert early.running == 0 and early.reserved == 0
    assert sum(n for _, n in early.made) == 200 + 3 * 1024 + 800


def test_a_birthday_punch_goes_only_to_an_ipv4_address_across_a_nat() -> None:
    for address in ("203.0.113.7", "11.22.33.10", "198.51.100.2", "100.64.1.2", "8.8.8.8"):
        assert bd.may_birthday((address, 4000)), address
    for address in ("127.0.0.1", "10.1.2.3", "172.16.0.9", "192.168.1.2", "169.254.0.1",
                    "224.0.0.1", "0.0.0.0", "255.255.255.255", "2001:db8::1", "::1",
                    "::ffff:203.0.113.7", "nowhere"):
        assert not bd.may_birthday((address, 4000)), address


async def test_nothing_is_tried_for_ipv6_or_past_the_allowance() -> None:
    calls: list[FramedStream] = []

    async def take(stream: FramedStream) -> bool:
        calls.append(stream)
        return True

    full = bd.Allowance(running=bd.MAX_RUNNING)
    with trio.fail_after(1):
        assert not await bd.birthday(socket.AF_INET6, 1, ("::1", 9), take, 1024)
        assert not await bd.birthday(socket.AF_INET, 1, (LOOP, 9), take, 1024, allowance=full)
    assert calls == [] and full.running == bd.MAX_RUNNING


async def _free_port() -> int:
    sock = reusable(socket.AF_INET, 0)
    await sock.bind((LOOP, 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


async def _listening() -> tuple[trio.socket.SocketType, tuple[str, int]]:
    """A listening socket on loopback (the other side's ``at``, no NAT) and its address."""
    listener = trio.socket.socket()
    await listener.bind((LOOP, 0))
    listener.listen(128)
    return listener, listener.getsockname()


async def test_the_first_connection_taken_ends_it_and_every_other_socket_is_closed() -> None:
    # The other side's `at` listens on loopback (no NAT: every open connects): the first
    # connection offered is taken, the others are closed at once and nothing more is opened.
    listener, at = await _listening()
    served: list[trio.socket.SocketType] = []
    offered: list[FramedStream] = []

    async def take(stream: FramedStream) -> bool:
        offered.append(stream)
        return len(offered) == 1

    async def accept() -> None:
        while True:
            sock, _ = await listener.accept()
            served.append(sock)

    port = await _free_port()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(accept)
            start = trio.current_time()
            took = await bd.birthday(socket.AF_INET, port, at, take, 1024,
                                     allowance=bd.Allowance(), opens=512, guesses=0)
            elapsed = trio.current_time() - start
            await trio.sleep(0.2)
            nursery.cancel_scope.cancel()
    assert took and len(offered) >= 1
    assert elapsed < 0.68  # ended at the first taken, not at the last open or the window's end
    assert len(served) < 512  # the later opens were never made
    kept = offered[0].stream.socket  # type: ignore[attr-defined]
    assert kept.fileno() >= 0  # the one taken stays open; every other is closed
    assert all(s.stream.socket.fileno() == -1 for s in offered[1:])  # type: ignore[attr-defined]
    gone: list[int] = []

    async def ended(sock: trio.socket.SocketType) -> None:
        with trio.move_on_after(1):
            if await sock.recv(1) == b"":
                gone.append(1)

    async with trio.open_nursery() as nursery:  # the other side sees every other one end
        for sock in served:
            nursery.start_soon(ended, sock)
    assert len(gone) == len(served) - 1
    kept.close()
    listener.close()


async def test_guesses_leave_from_the_punch_port_and_a_refused_one_is_not_retried() -> None:
    # Nothing listens at `at`; one port after it does: the guess to it (the first of the
    # sequential guesses) is made from the punch port; the other guesses and every open are
    # refused on loopback, and the punch ends without one taken once every step has run
    # (nothing left pending: it does not wait for the end of the window).
    listener = trio.socket.socket()
    await listener.bind((LOOP, 0))
    listener.listen(16)
    seen = listener.getsockname()[1] - 1
    port = await _free_port()
    sources: list[int] = []

    async def take(stream: FramedStream) -> bool:
        sources.append(stream.stream.socket.getsockname()[1])  # type: ignore[attr-defined]
        return False

    with trio.fail_after(10):
        start = trio.current_time()
        took = await bd.birthday(socket.AF_INET, port, (LOOP, seen), take, 1024,
                                 allowance=bd.Allowance(), opens=16, guesses=16)
        elapsed = trio.current_time() - start
    listener.close()
    assert not took
    assert sources == [port]
    assert bd.GUESS_START_S + bd.TICK_S - 0.05 <= elapsed <= bd.WINDOW_S + 1.0


async def test_the_hosts_side_hands_on_each_connection_made_up_to_the_cap() -> None:
    # first=False (the host's side): every connection made is handed on, not only the first,
    # at most MAX_OFFERS of them (the rest are closed), until the window ends.
    listener, at = await _listening()
    served: list[trio.socket.SocketType] = []
    offered: list[FramedStream] = []

    async def take(stream: FramedStream) -> bool:
        offered.append(stream)
        return True

    async def accept() -> None:
        while True:
            sock, _ = await listener.accept()
            served.append(sock)

    port = await _free_port()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(accept)
            took = await bd.birthday(socket.AF_INET, port, at, take, 1024,
                                     allowance=bd.Allowance(), opens=24, guesses=0, first=False)
            await trio.sleep(0.2)
            nursery.cancel_scope.cancel()
    assert took
    assert len(served) == 24 and len(offered) == 16  # punch.MAX_OFFERS
    assert all(s.stream.socket.fileno() >= 0 for s in offered)  # type: ignore[attr-defined]
    closed: list[int] = []

    async def ended(sock: trio.socket.SocketType) -> None:
        with trio.move_on_after(0.5):
            if await sock.recv(1) == b"":
                closed.append(1)

    async with trio.open_nursery() as nursery:
        for sock in served:
            nursery.start_soon(ended, sock)
    assert len(closed) == 24 - 16
    for s in offered:
        s.stream.socket.close()  # type: ignore[attr-defined]
    listener.close()


async def test_a_direct_connection_made_otherwise_ends_it_and_the_allowance_counts_what_it_tried(
) -> None:
    # Started at the rendezvous besides the plain punch: once that (or a call back) makes a
    # connection, no further step starts and every socket is closed; the allowance counts
    # only the connections tried, so the many joins a plain punch serves leave it whole.
    port = await _free_port()
    at = (LOOP, await _free_port())  # nothing listens: every attempt is refused

    async def take(stream: FramedStream) -> bool:
        return False

    allowance = bd.Allowance()
    direct = trio.Event()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            start = trio.current_time()

            async def made_later() -> None:
                await trio.sleep(0.1)
                direct.set()

            nursery.start_soon(made_later)
            took = await bd.birthday(socket.AF_INET, port, at, take, 1024,
                                     allowance=allowance, direct=direct)
            elapsed = trio.current_time() - start
    assert not took
    assert 0.1 <= elapsed < 0.3  # not the 0.78 s of every step
    tried = sum(n for _, n in allowance.made)
    assert 0 < tried <= 8 * 6 + 8  # opens from 0.05 s, guesses never (from 0.15 s)
    assert allowance.running == 0 and allowance.reserved == 0
    with trio.fail_after(5):  # already made: nothing at all is tried
        assert not await bd.birthday(socket.AF_INET, port, at, take, 1024,
                                     allowance=allowance, direct=direct)
    assert sum(n for _, n in allowance.made) == tried


async def test_three_punches_at_once_all_run_sharing_the_pace_and_the_sockets() -> None:
    # Three punches of 96 opens each toward three listeners on loopback (no NAT: every open
    # connects, none is kept, so each runs all its steps): all 288 connections are made, at
    # no more than the process's 8 opens a tick in sum (36 ticks at least: a pace of their
    # own would take 12), handed round robin (each is nearly done when the first is), and the
    # sockets they hold are counted in the allowance while they run.
    listeners = [await _listening() for _ in range(3)]
    arrived: list[list[float]] = [[], [], []]
    served: list[trio.socket.SocketType] = []
    allowance, pace = bd.Allowance(), bd.Pace()
    held: list[tuple[int, int]] = []
    ended: list[float] = [0.0, 0.0, 0.0]

    async def take(stream: FramedStream) -> bool:
        held.append(allowance.held)
        return False

    async def accept(k: int) -> None:
        while True:
            sock, _ = await listeners[k][0].accept()
            arrived[k].append(trio.current_time())
            served.append(sock)

    async def one(k: int) -> None:
        await bd.birthday(socket.AF_INET, await _free_port(), listeners[k][1], take, 1024,
                          allowance=allowance, pace=pace, opens=96, guesses=0)
        ended[k] = trio.current_time()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            for k in range(3):
                nursery.start_soon(accept, k)
            async with trio.open_nursery() as punches:
                for k in range(3):
                    punches.start_soon(one, k)
            await trio.sleep(0.2)
            nursery.cancel_scope.cancel()
    assert [len(a) for a in arrived] == [96, 96, 96]
    times = sorted(t for a in arrived for t in a)
    span = times[-1] - times[0]
    assert span >= 0.30  # 288 opens at 8 a tick: 0.35 s
    in_200ms = max(bisect.bisect_right(times, t + 0.2) - i for i, t in enumerate(times))
    assert in_200ms <= 176  # 160 a 200 ms (168 across a tick's edge); 288 with a pace each
    first_done = min(a[-1] for a in arrived)
    assert all(bisect.bisect_right(a, first_done) >= 80 for a in arrived)
    assert (0, 0) not in held and max(held) == (3 * 96, 0)  # held while they ran
    assert allowance.held == (0, 0) and allowance.running == 0
    assert all(e > 0 for e in ended) and pace.due == {}
    print(f"288 opens, first to last {span:.3f} s, at most {in_200ms} in any 200 ms")
    for sock in served:
        sock.close()
    for listener, _ in listeners:
        listener.close()


async def test_punches_at_once_each_end_on_their_own_and_the_rest_speed_up() -> None:
    # Three at once: the first takes its first connection (and ends then), the second sees a
    # direct connection made otherwise at 0.2 s (and ends then), the third keeps none and
    # runs all its 256 opens, at a third of the pace, then the whole of it once alone.
    listeners = [await _listening() for _ in range(3)]
    served: list[trio.socket.SocketType] = []
    allowance, pace = bd.Allowance(), bd.Pace()
    direct = trio.Event()
    ended: dict[int, float] = {}
    took: dict[int, bool] = {}
    offered: list[FramedStream] = []

    async def keep(stream: FramedStream) -> bool:
        offered.append(stream)
        return True

    async def drop(stream: FramedStream) -> bool:
        return False

    async def accept(k: int) -> None:
        while True:
            sock, _ = await listeners[k][0].accept()
            served.append(sock)

    async def one(k: int, start: float) -> None:
        took[k] = await bd.birthday(
            socket.AF_INET, await _free_port(), listeners[k][1], keep if k == 0 else drop,
            1024, allowance=allowance, pace=pace, opens=256, guesses=0,
            direct=direct if k == 1 else None)
        ended[k] = trio.current_time() - start

    async def made_later() -> None:
        await trio.sleep(0.2)
        direct.set()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            for k in range(3):
                nursery.start_soon(accept, k)
            async with trio.open_nursery() as punches:
                start = trio.current_time()
                punches.start_soon(made_later)
                for k in range(3):
                    punches.start_soon(one, k, start)
            await trio.sleep(0.2)
            nursery.cancel_scope.cancel()
    assert took == {0: True, 1: False, 2: False}
    assert ended[0] < 0.2 <= ended[1] < 0.35 < ended[2]
    # 4 a tick shared with the second until 0.2 s (60), then 8 a tick alone: 0.45 s; with
    # a pace of its own 0.37 s; at a third of the pace throughout 1.01 s
    assert 0.4 < ended[2] < 0.75
    assert allowance.running == 0 and allowance.held == (0, 0) and pace.due == {}
    print(f"ended after {ended[0]:.3f}, {ended[1]:.3f} and {ended[2]:.3f} s")
    for s in offered:
        s.stream.socket.close()  # type: ignore[attr-defined]
    for sock in served:
        sock.close()
    for listener, _ in listeners:
        listener.close()


async def test_a_punch_that_finds_too_few_files_left_is_refused_with_a_log_line(
        caplog: pytest.LogCaptureFixture) -> None:
    # One running holds all but 10 of each kind the open-files limit leaves: a second, after
    # asking again once at 0.15 s, is refused, says why, and touches no socket.
    nofile = raise_nofile_limit()[0]
    spare = (nofile - bd.RESERVE) // 2
    allowance = bd.Allowance(running=1, held=(spare - 10, spare - 10))
    calls: list[FramedStream] = []

    async def take(stream: FramedStream) -> bool:
        calls.append(stream)
        return True

    listener, at = await _listening()
    caplog.set_level(logging.INFO, logger="dernier_p2p.net.birthday")
    with trio.fail_after(2):
        start = trio.current_time()
        assert not await bd.birthday(socket.AF_INET, await _free_port(), at, take, 1024,
                                     allowance=allowance, pace=bd.Pace())
        waited = trio.current_time() - start
    listener.close()
    assert calls == [] and allowance.running == 1 and allowance.held == (spare - 10,) * 2
    assert bd.GUESS_START_S <= waited < 0.5
    assert "not started (too few open files left by the 1 running)" in caplog.text


# ---------------------------------------------------------------- version 5: the split roles
def test_the_role_follows_whose_port_was_kept_and_is_the_same_seen_from_both_sides() -> None:
    # (local punch port, outside port as the relay saw it) for this side, then the other
    kept, changed = (40000, 40000), (40000, 51234)
    assert bd.role(changed, kept) == bd.OPENS_ONLY  # this side symmetric: opens only
    assert bd.role(kept, changed) == bd.GUESSES_ONLY  # the other side's port changed
    assert bd.role(kept, kept) == bd.BOTH  # two cones, or two that keep ports: as version 4
    assert bd.role(changed, changed) == bd.BOTH  # either may be the symmetric one
    for own, other in ((changed, kept), (kept, changed), (kept, kept), (changed, changed)):
        split = {bd.role(own, other), bd.role(other, own)}  # the two sides, from one set of facts
        assert split in ({bd.OPENS_ONLY, bd.GUESSES_ONLY}, {bd.BOTH})
    assert bd.role(None, kept) == bd.role(changed, None) == bd.role(None, None) == bd.BOTH


@pytest.mark.parametrize("bad", [0, 65536, -1, True, "40000", 40000.0, None])
def test_a_role_from_a_port_out_of_range_or_of_another_type_is_refused(bad: object) -> None:
    for own, other in (((bad, 40000), (40000, 40000)), ((40000, bad), (40000, 40000)),
                       ((40000, 40000), (bad, 40000)), ((40000, 40000), (40000, bad))):
        with pytest.raises(ValueError):
            bd.role(own, other)  # type: ignore[arg-type]


def test_a_split_plan_plays_one_kind_at_the_whole_pace_in_both_lanes() -> None:
    opens = bd.plan(40000, random.Random(1), 5000, 5000, bd.OPENS_ONLY)
    assert len(opens) == bd.OPENS + bd.GUESSES == 1024  # the sockets of both parts
    assert {s.kind for s in opens} == {"open"} and {s.port for s in opens} == {40000}
    assert (opens[0].at_s, opens[-1].at_s) == (bd.OPEN_START_S, 0.68)  # 16 a tick
    assert [s.lane for s in opens[:4]] == [0, 1, 0, 1]
    per_tick: dict[float, int] = {}
    for s in opens:
        per_tick[s.at_s] = per_tick.get(s.at_s, 0) + 1
    assert set(per_tick.values()) == {2 * bd.PER_TICK}
    guesses = bd.plan(40000, random.Random(1), 0, 1024, bd.GUESSES_ONLY)
    assert len(guesses) == 1024 and {s.kind for s in guesses} == {"guess"}
    assert len({s.port for s in guesses}) == 1024 and 40000 not in {s.port for s in guesses}
    assert [s.port for s in guesses[:2]] == [40001, 40002]  # the sequential ones first
    assert (guesses[0].at_s, guesses[-1].at_s) == (bd.SPLIT_GUESS_START_S, 0.7)
    assert bd.SPLIT_GUESS_START_S < bd.GUESS_START_S  # not held back for two cones
    assert bd.plan(40000, random.Random(1), 20, 7, bd.OPENS_ONLY) == opens[:20]
    assert bd.plan(40000, random.Random(1), 7, 20, bd.GUESSES_ONLY) == guesses[:20]
    assert bd.plan(40000, random.Random(1), 512, 512) == bd.plan(40000, random.Random(1))


def test_a_lone_split_punch_gets_sixteen_a_tick_and_shares_the_lanes_with_another() -> None:
    opens = bd.plan(40000, random.Random(2), 1024, 0, bd.OPENS_ONLY)
    out = _run_pace(bd.Pace(), {0: (0.0, opens)}, 1.0)
    assert sum(sum(g[0]) for g in out.values()) == 1024
    assert all(g[0] == [8, 8] for t, g in out.items() if t < 68)  # 8 in each lane
    assert min(out) == 5 and max(out) == 68
    both = bd.plan(40001, random.Random(3))  # and one playing both parts beside it
    out = _run_pace(bd.Pace(), {0: (0.0, opens), 1: (0.0, both)}, 3.0)
    assert all(sum(g[lane] for g in per.values()) <= bd.PER_TICK
               for per in out.values() for lane in (0, 1))  # the process's pace, unchanged
    assert sum(sum(per.get(0, [0, 0])) for per in out.values()) == 1024
    assert sum(sum(per.get(1, [0, 0])) for per in out.values()) == 1024


def test_a_split_punch_holds_the_sockets_of_both_lanes() -> None:
    # 1,024 opens alone take what 512 opens and 512 guesses took: 512 a lane.
    allowance = bd.Allowance()
    assert allowance.fit(1024, 512, 512) == (384, 384)  # (1024 - 256) / 2 a lane
    assert allowance.start(0.0, 768, (384, 384))
    assert allowance.fit(1024, 512, 512) == (0, 0)
    allowance.end(0.5, 768, 0, (384, 384))


async def test_a_guessing_side_makes_guesses_only_and_says_so(
        caplog: pytest.LogCaptureFixture) -> None:
    # The first guess (the port after `at`'s) meets a listener on loopback; no open is made.
    listener = trio.socket.socket()
    await listener.bind((LOOP, 0))
    listener.listen(16)
    seen = listener.getsockname()[1] - 1
    port = await _free_port()
    sources: list[int] = []

    async def take(stream: FramedStream) -> bool:
        sources.append(stream.stream.socket.getsockname()[1])  # type: ignore[attr-defined]
        return True

    with caplog.at_level(logging.INFO, logger="dernier_p2p.net.birthday"), trio.fail_after(10):
        start = trio.current_time()
        took = await bd.birthday(socket.AF_INET, port, (LOOP, seen), take, 1024,
                                 allowance=bd.Allowance(), opens=16, guesses=16,
                                 part=bd.GUESSES_ONLY, pace=bd.Pace())
        elapsed = trio.current_time() - start
    listener.close()
    assert took and sources == [port]  # a guess, from the punch port
    assert elapsed < bd.GUESS_START_S  # from 0.07 s, not held back to 0.15 s
    assert "0 opens, 32 guesses (guesses only: this side's port was kept, the other's " \
        "changed)" in caplog.text
