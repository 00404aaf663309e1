"""The simulator's own parts: clocks, the network's order, kills and restarts, scenarios,
shrinking, determinism and the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest

from dernier_p2p.sim import __main__ as cli
from dernier_p2p.sim.costs import Costs
from dernier_p2p.sim.faults import INF, Kill, Latency, Partition, Stall
from dernier_p2p.sim.invariants import Judge, Violation
from dernier_p2p.sim.run import Outcome, run_case
from dernier_p2p.sim.scenario import Case, draw, draw_small, parse
from dernier_p2p.sim.shrink import shrink
from dernier_p2p.sim.smallgroup import insecure_small_group
from dernier_p2p.sim.speed import forget, shared_checks
from dernier_p2p.sim.table import Setup
from dernier_p2p.sim.world import Clock, Conn, Proc, World, kill, restart
from dernier_p2p.wire.identity import IdentityKey


@pytest.fixture
def fast() -> Any:
    with insecure_small_group(), shared_checks():
        forget()
        yield


# ---------------------------------------------------------------------- clocks
@pytest.mark.parametrize("rate", [-20_000, -137, 0, 1, 999, 50_000])
@pytest.mark.parametrize("offset", [0, 12_345, 10**9])
def test_clock_conversion(rate: int, offset: int) -> None:
    c = Clock(rate, offset, 0)
    last = c.local(0)
    for t in range(0, 200_000, 997):
        local = c.local(t)
        assert local >= last  # monotonic
        last = local
        w = c.world(local)
        assert w <= t and c.local(w) >= local and c.local(w - 1) < local  # the first such
    for local in range(offset, offset + 50_000, 113):
        w = c.world(local)
        assert c.local(w) >= local > c.local(w - 1)


class FakeNode:
    """Just enough of a PeerNode for the world: it records what reaches it."""

    def __init__(self, deadline: int | None = None) -> None:
        self.got: list[tuple[str, Any, int]] = []
        self._deadline = deadline
        self.own = None
        self.host = self
        self.hosting_now = False
        self.advanced: list[int] = []

    def has_work(self) -> bool:
        return False

    def advance(self, now: int) -> None:
        self.advanced.append(now)

    def take(self) -> list[Any]:
        return []

    def deadline(self) -> int | None:
        return self._deadline

    def host_frame(self, seat: int, frame: dict[str, Any], now: int) -> None:
        self.got.append(("frame", frame.get("x", frame["k"]), now))

    def from_host(self, frame: dict[str, Any], now: int) -> None:
        self.got.append(("frame", frame.get("x", frame["k"]), now))

    def closed(self, *args: Any) -> None:
        self.got.append(("closed", args[0] if len(args) == 2 else None, args[-1]))


def _pair(clock: Clock | None = None) -> tuple[World, Proc, Proc, Conn]:
    w = World(1, Costs())
    key = IdentityKey.generate(b"\x01" * 32)
    seat = Proc(w, 1, key, b"s" * 32, True, clock=clock)
    host = Proc(w, 0, key, b"h" * 32, True)
    w.procs = {0: host, 1: seat}
    seat.node, host.node = FakeNode(), FakeNode()  # type: ignore[assignment]
    conn = Conn(1, 1, 0, seat=1)
    w.conns[1] = conn
    seat.up = conn
    host.seat_conns[1] = conn
    return w, seat, host, conn


def test_node_sees_local_time_and_wakes_at_its_deadline() -> None:
    clock = Clock(10_000, 5_000_000, 0)  # 1 % fast, started long ago
    w, seat, _, _ = _pair(clock)
    seat.node = FakeNode(deadline=clock.local(0) + 10_000)  # type: ignore[assignment]
    seat.tick()
    w.run(20_000)
    node = seat.node
    assert node.advanced[0] == clock.local(0)
    woke = node.advanced[1]
    assert woke >= clock.local(0) + 10_000
    assert clock.world(woke) <= 9_901 + 1  # 10 s of its clock are 9.9 s of the world's


def test_frames_keep_their_order_through_a_hold() -> None:
    w, seat, host, conn = _pair()
    for k in range(5):
        w.at(k * 10, lambda k=k: w.send(seat, "up", {"k": "env", "x": k}))
    w.at(15, lambda: Stall(at=15, src=1, dst=0, until=3_000).install(w, {}))
    for k in range(5, 10):
        w.at(100 + k, lambda k=k: w.send(seat, "up", {"k": "env", "x": k}))
    w.run(10_000)
    got = [x for kind, x, _ in host.node.got if kind == "frame" and x != "beat"]
    assert got == list(range(10))
    times = [t for kind, x, t in host.node.got if kind == "frame" and x != "beat" and x >= 2]
    assert min(times) >= 3_000  # nothing passed the stall


def test_a_close_comes_after_the_frames_and_a_reset_loses_them() -> None:
    w, seat, host, conn = _pair()
    w.send(seat, "up", {"k": "env", "x": "a"})
    w.close(seat, "up")
    w.run(1_000)
    kinds = [(k, x) for k, x, _ in host.node.got]
    assert kinds[0] == ("frame", "a") and kinds[-1][0] == "closed"
    w, seat, host, conn = _pair()
    w.send(seat, "up", {"k": "env", "x": "lost"})
    w.reset(conn)
    w.run(1_000)
    assert [k for k, _, _ in host.node.got] == ["closed"]
    assert seat.up is None and [k for k, _, _ in seat.node.got] == ["closed"]


def test_a_partition_refuses_new_connections_until_it_heals() -> None:
    w, seat, host, _ = _pair()
    Partition(at=0, group=(1,), until=5_000).install(w, {})
    w.run(1)
    assert w.refuses(1, 0) and w.refuses(0, 1)
    w.run(5_001)
    assert not w.refuses(1, 0)


# ---------------------------------------------------------------------- kills and restarts
def test_a_killed_seat_restarts_from_its_disk_and_the_match_ends(fast: Any) -> None:
    setup = Setup(players=3, options={"match": ["hands", 1], "hand_size": 2},
                  timers={"turn_ms": 5_000, "declare_ms": 300, "grace_ms": 8_000})
    case = Case(5, setup, [Kill(at=1_500, pid=2, until=4_000)])
    w = World(5, Costs())
    from dernier_p2p.sim.table import Table

    judge = Judge(setup, case.faults)
    judge.world = w
    w.observer = judge
    table = Table(w, setup, 5)
    table.open()
    w.run(1_500)
    kept = len(w.procs[2].disk)
    kill(w, 2)
    assert w.procs[2].node is None and not w.procs[2].alive and w.procs[2].disk
    assert len(w.procs[2].disk) == kept
    w.run(4_000)
    restart(w, 2, {})
    assert w.procs[2].node is not None and w.procs[2].node.own.last == kept - 1
    w.run(600_000, stop=lambda: judge.done(w.procs))
    judge.finish(w.procs)
    assert not judge.violations
    assert all(p.node.finished for p in w.procs.values())


# ---------------------------------------------------------------------- scenarios
@pytest.mark.parametrize("seed", [0, 1, 17, 4242])
def test_a_case_prints_as_a_literal(seed: int) -> None:
    for case in (draw(seed), draw_small(seed)):
        assert parse(repr(case)) == case
        assert draw(seed) == draw(seed)


def test_the_same_case_plays_the_same_match(fast: Any) -> None:
    case = draw_small(3)
    a = run_case(case)
    forget()
    b = run_case(case)
    assert (a.end_ms, a.events, a.result) == (b.end_ms, b.events, b.result)


def test_no_hash_order_in_a_match() -> None:
    code = ("from dernier_p2p.sim.run import run_case; from dernier_p2p.sim.scenario import "
            "draw_small; from dernier_p2p.sim.smallgroup import insecure_small_group\n"
            "with insecure_small_group():\n o = run_case(draw_small(11))\n"
            "print(o.end_ms, o.events, o.result)")
    outs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                capture_output=True, text=True).stdout)
    assert len(outs) == 1


# ---------------------------------------------------------------------- shrinking
def test_shrinking_keeps_only_what_fails() -> None:
    culprit = Stall(at=1_000, src=0, dst=1, until=41_000)
    case = Case(1, Setup(options={"match": ["hands", 2]}, listens=[True, False, True]), [
        Latency(at=0, a=0, b=1), culprit, Kill(at=5_000, pid=2, until=INF),
        Partition(at=9_000, group=(1, 2), until=12_000)])

    def run(c: Case) -> Outcome:
        stalls = [f for f in c.faults if isinstance(f, Stall)]
        fails = any(f.until - f.at >= 5_000 for f in stalls)
        return Outcome(c, [Violation("no-end", "x")] if fails else [])

    small, out, runs = shrink(case, run(case), run=run)
    assert [type(f) for f in small.faults] == [Stall]
    assert 5_000 <= small.faults[0].until - small.faults[0].at < 10_000
    assert small.setup.options["match"] == ["hands", 1] and small.setup.listens is None
    assert out.invariant == "no-end" and runs > 0


def test_the_command_line_prints_its_totals(capsys: Any) -> None:
    assert cli.main(["--matches", "2", "--seed", "3", "--jobs", "1", "-v"]) in (0, 1)
    mix, last = capsys.readouterr().out.strip().splitlines()[-2:]
    assert last.startswith("matches 2, faults ") and "matches/min" in last
    faults = int(last.split("faults ")[1].split(",")[0])
    kinds = [cli.fault_kind(f) for seed in (3, 4) for f in draw(seed).faults]
    assert len(kinds) == faults
    assert mix == "fault mix: " + ", ".join(
        f"{k} {kinds.count(k)}" for k in sorted(set(kinds), key=lambda k: (-kinds.count(k), k)))


def test_outcome_of_a_seed_is_reported(fast: Any) -> None:
    out = run_case(replace(draw_small(2), faults=[]))
    assert out.result == "ranked" and not out.failed and out.live
