"""Shrunk failures of the simulator, replayed exactly (docs/LIVENESS.md, "Replaying and
shrinking"): each failed an invariant until the fix named with it; each must pass now.

The cases were found and shrunk with the small group (:mod:`dernier_p2p.sim.smallgroup`), so
they replay with it: the deal, and so the course of the match, depend on the group.
"""

from __future__ import annotations

import pytest

from dernier_p2p.sim.run import run_case
from dernier_p2p.sim.scenario import parse
from dernier_p2p.sim.smallgroup import insecure_small_group
from dernier_p2p.sim.speed import shared_checks

CASES = {
    # A stalling host is deposed; the seats' timeout votes about its seat, sent to it before,
    # were never sent to the new host (once per after): no quorum, the table was abandoned.
    # Fix: SeatWatch sends its votes again after every resume.
    "votes-after-resume": (
        "no-contest",
        "Case(seed=24, setup=Setup(players=5, variant='moderno', options={'match': ['hands', 1]}, "
        "timers={'turn_ms': 8360, 'declare_ms': 373, 'grace_ms': 12991}, listens=None, "
        "speeds=None, clocks=[(0, 929616026, 1699070452987), (0, 30247674, 1699969767826), "
        "(0, 527540135, 1699472533628), (0, 732133642, 1699267826207), "
        "(0, 91395179, 1699908664974)], constants={}), "
        "faults=[Hostile(at=2583, pid=0, kind='stall', target=1, until=62583)])",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_regression(name: str) -> None:
    invariant, literal = CASES[name]
    with insecure_small_group(), shared_checks():
        out = run_case(parse(literal))
    assert not out.violations, [(v.invariant, v.detail) for v in out.violations]
