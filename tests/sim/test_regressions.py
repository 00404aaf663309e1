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
    # A host censors seat 6; the others probe it every grace_ms once it is dropped, and each
    # probe passed its envelope on again, restarting the censor_ms clock: the host was never
    # deposed. Fix: SeatWatch keeps the first delivery of an envelope it passed on.
    "evidence-clock": (
        "no-contest",
        "Case(seed=1066, setup=Setup(players=7, variant='dernier', options={'match': "
        "['hands', 1], 'hand_size': 3}, timers={'turn_ms': 18757, 'declare_ms': 756, "
        "'grace_ms': 6763}, listens=None, speeds=None, clocks=[(0, 198025233, 1699801870045), "
        "(0, 246449149, 1699753619968), (0, 774085746, 1699225983450), "
        "(0, 933433515, 1699066457470), (0, 1565406, 1699998406797), "
        "(0, 446999854, 1699552920746), (0, 180661486, 1699819239999)], constants={}), "
        "faults=[Hostile(at=4276, pid=0, kind='censor', target=6, until=34276)])",
    ),
}

GAPS = {
    # Design gap (docs/LIVENESS.md, "Design gaps", G6): the host drops one envelope of seat 6
    # and then behaves. Seat 6 alone holds evidence, deposes, closes its connection and tries
    # the first candidate for turn_ms + censor_ms + try_ms; nobody else deposes (the host
    # sequences the envelope once it is passed on, which ends seat 6's drop), and at its next
    # turn the absent seat is timed out. Passes once a lone deposer keeps its seat at the table.
    "provoked-lone-depose": (
        "verdict",
        "Case(seed=1066, setup=Setup(players=7, variant='dernier', options={'match': "
        "['hands', 1], 'hand_size': 3}, timers={'turn_ms': 18757, 'declare_ms': 756, "
        "'grace_ms': 6763}, listens=None, speeds=None, clocks=[(0, 198025233, 1699801870045), "
        "(0, 246449149, 1699753619968), (0, 774085746, 1699225983450), "
        "(0, 933433515, 1699066457470), (0, 1565406, 1699998406797), "
        "(0, 446999854, 1699552920746), (0, 180661486, 1699819239999)], constants={}), "
        "faults=[Hostile(at=4276, pid=0, kind='censor', target=6, until=4510)])",
    ),
}


def _replay(literal: str) -> list[tuple[str, str]]:
    with insecure_small_group(), shared_checks():
        out = run_case(parse(literal))
    return [(v.invariant, v.detail) for v in out.violations]


@pytest.mark.parametrize("name", sorted(CASES))
def test_regression(name: str) -> None:
    invariant, literal = CASES[name]
    assert not _replay(literal), invariant


@pytest.mark.parametrize("name", sorted(GAPS))
@pytest.mark.xfail(strict=True, reason="a design gap of the liveness rules (docs/LIVENESS.md)")
def test_design_gap(name: str) -> None:
    invariant, literal = GAPS[name]
    assert not _replay(literal), invariant
