"""Play one simulated match and judge it: :func:`run_case`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from dernier_p2p.sim.costs import Costs
from dernier_p2p.sim.faults import INF, install
from dernier_p2p.sim.invariants import Judge, Violation
from dernier_p2p.sim.scenario import Case
from dernier_p2p.sim.table import Table
from dernier_p2p.sim.world import World

CAP_MS = 3_600_000
"""A run stops this long after its faults settled, whatever happened (the liveness bound
stops a live one much sooner)."""


@dataclass
class Outcome:
    case: Case
    violations: list[Violation] = field(default_factory=list)
    end_ms: int = 0  # world time when the run stopped
    result: str = ""  # ranked, no-contest, fault, incomplete
    live: bool = False  # the match was majority-connected (liveness required)
    events: int = 0
    wall_s: float = 0.0

    @property
    def failed(self) -> bool:
        return bool(self.violations)

    @property
    def invariant(self) -> str | None:
        return self.violations[0].invariant if self.violations else None


def run_case(case: Case, log: Callable[[int, str, str], None] | None = None,
             strict: bool = False) -> Outcome:
    """Play ``case`` to its end (or its bound) and check every invariant (``strict``: the
    targets of the host strategies the rules do not defend yet are protected too)."""
    t0 = time.perf_counter()
    costs = Costs()
    world = World(case.seed, costs, log=log)
    judge = Judge(case.setup, case.faults, costs.unit_ms, () if strict else None)
    judge.world = world
    world.observer = judge
    table = Table(world, case.setup, case.seed)
    install(world, case.faults, dict(case.setup.constants))
    cap = (judge.settled if judge.settled < INF else 0) + CAP_MS
    try:
        table.open()
        world.run(cap, stop=lambda: judge.done(world.procs))
        judge.finish(world.procs)
    except Exception as exc:  # a bug: the node's or the simulator's
        judge.crashed(exc)
    out = Outcome(case, judge.violations, world.now, _result(judge, world), judge.live,
                  world.events, time.perf_counter() - t0)
    return out


def _result(judge: Judge, world: World) -> str:
    for pid in sorted(judge.honest):
        node = world.procs[pid].node
        if node is None or node.own is None:
            continue
        s = node.own.session
        if s.finished and s.unfinal:
            return "incomplete"  # (over by the rules, its end never final: 7.11)
        if s.finished:
            return "no-contest" if s.no_contest else "ranked"
        if node.stopped is not None or node.own.stopped is not None:
            return "fault"
    return "incomplete"
