"""Shrinking a failing match: the smallest fault schedule (and table) that still fails the same
invariant.

:func:`shrink` tries, over and over until nothing more helps or its budget of runs is spent:
dropping each fault; making each lasting fault half as long; taking a process out of a
partition's group; playing one hand instead of two; and simpler processes (every seat
listening, every CPU at speed 1, every clock exact). A change is kept when the match still
violates the invariant the original failed. The result is a :class:`~.scenario.Case` whose
``repr`` a regression test replays (:func:`~.scenario.parse`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from dernier_p2p.sim.faults import Fault, Partition
from dernier_p2p.sim.run import Outcome, run_case
from dernier_p2p.sim.scenario import Case


def _candidates(case: Case) -> Iterator[Case]:
    faults = case.faults
    for i in range(len(faults)):
        yield replace(case, faults=faults[:i] + faults[i + 1:])
    for i, f in enumerate(faults):
        shorter = f.shorter()
        if shorter is not None:
            yield replace(case, faults=faults[:i] + [shorter] + faults[i + 1:])
    for i, f in enumerate(faults):
        if isinstance(f, Partition) and len(f.group) > 1:
            for pid in f.group:
                narrower: Fault = replace(f, group=tuple(p for p in f.group if p != pid))
                yield replace(case, faults=faults[:i] + [narrower] + faults[i + 1:])
    setup = case.setup
    match = setup.options.get("match")
    if isinstance(match, list) and match[0] == "hands" and match[1] > 1:
        options = dict(setup.options, match=["hands", match[1] - 1])
        yield replace(case, setup=replace(setup, options=options))
    if setup.listens is not None and not all(setup.listens):
        yield replace(case, setup=replace(setup, listens=None))
    if setup.speeds is not None:
        yield replace(case, setup=replace(setup, speeds=None))
    if setup.clocks is not None and any(c[0] for c in setup.clocks):
        clocks = [(0, offset, wall) for _, offset, wall in setup.clocks]
        yield replace(case, setup=replace(setup, clocks=clocks))


def shrink(case: Case, outcome: Outcome, max_runs: int = 80, max_s: float = 600.0,
           run: Callable[[Case], Outcome] = run_case) -> tuple[Case, Outcome, int]:
    """The smallest case found that fails ``outcome``'s first invariant, its outcome and the
    number of runs it took."""
    want = outcome.invariant
    if want is None:
        return case, outcome, 0
    best, best_out = case, outcome
    runs = 0
    t0 = time.monotonic()
    progress = True
    while progress:
        progress = False
        for cand in _candidates(best):
            if runs >= max_runs or time.monotonic() - t0 > max_s:
                return best, best_out, runs
            runs += 1
            out = run(cand)
            if any(v.invariant == want for v in out.violations):
                best, best_out = cand, out
                progress = True
                break
    return best, best_out, runs
