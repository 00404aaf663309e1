"""``python -m dernier_p2p.sim --matches N --seed S [--budget SECONDS] [--real] [--jobs K] [-v]``

Plays matches S, S+1, ... (each drawn from its seed, :mod:`.scenario`) across K worker
processes, prints one line per failing match (its seed, the invariant, the detail and the
shrunk case as a Python literal) and, last, one line of totals: matches, faults injected,
violations (safety and liveness), how many majority-connected matches ended ranked, and
matches per minute. Long runs use the INSECURE small group (:mod:`.smallgroup`); ``--real``
keeps the real one. The exit status is 1 when a match failed.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

_stack = contextlib.ExitStack()
_shrink = 20


@dataclass
class Report:
    seed: int
    faults: int
    live: bool
    result: str
    wall_s: float
    end_ms: int = 0
    events: int = 0
    violations: list[tuple[str, str, bool]] = field(default_factory=list)
    shrunk: str = ""
    shrink_runs: int = 0
    gap: bool = False  # it fails only by liveness, and passes under the proposed rules
    kinds: list[str] = field(default_factory=list)  # the kind of each fault injected


def fault_kind(fault: Any) -> str:
    """A fault's kind as the report counts it: its class, a hostile strategy by its name."""
    kind = type(fault).__name__.lower()
    return f"{kind} {fault.kind}" if kind == "hostile" else kind


def _init(real: bool, shrink: int) -> None:
    global _shrink
    from dernier_p2p.sim.speed import shared_checks

    _shrink = shrink
    if not real:
        from dernier_p2p.sim.smallgroup import insecure_small_group

        _stack.enter_context(insecure_small_group())
    _stack.enter_context(shared_checks())


def play(seed: int) -> Report:
    """Play the match of ``seed`` (in a worker); a failing one is shrunk."""
    from dernier_p2p.sim.run import run_case
    from dernier_p2p.sim.scenario import draw
    from dernier_p2p.sim.shrink import shrink
    from dernier_p2p.sim.speed import forget

    forget()
    case = draw(seed)
    out = run_case(case)
    rep = Report(seed, len(case.faults), out.live, out.result, out.wall_s, out.end_ms,
                 out.events, [(v.invariant, v.detail, v.safety) for v in out.violations],
                 kinds=[fault_kind(f) for f in case.faults])
    from dernier_p2p.sim.whatif import PROPOSALS

    if out.failed and PROPOSALS and not any(v.safety for v in out.violations):
        from dernier_p2p.sim.whatif import proposed_rules

        with proposed_rules():
            forget()
            rep.gap = not run_case(case).failed
    if out.failed and not rep.gap:
        small = case
        if _shrink:
            small, _, rep.shrink_runs = shrink(case, out, max_runs=_shrink, max_s=6.0 * _shrink)
        rep.shrunk = repr(small)
    return rep


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m dernier_p2p.sim", description=__doc__.split(
        "\n\n")[1])
    p.add_argument("--matches", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--budget", type=float, default=None,
                   help="stop starting matches after this many seconds")
    p.add_argument("--real", action="store_true", help="the real group (slow)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--shrink-runs", type=int, default=20,
                   help="matches played to shrink a failing one (0: no shrinking)")
    p.add_argument("--no-shrink", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true", help="a line per match")
    args = p.parse_args(argv)
    t0 = time.monotonic()
    seeds = range(args.seed, args.seed + args.matches)
    reports: list[Report] = []

    def over_budget() -> bool:
        return args.budget is not None and time.monotonic() - t0 > args.budget

    def show(rep: Report) -> None:
        reports.append(rep)
        if args.verbose:
            print(f"seed {rep.seed}: {rep.result}{' live' if rep.live else ''}, "
                  f"{rep.faults} faults, {rep.end_ms} ms, {rep.events} events, {rep.wall_s:.2f} s"
                  f"{', FAILED' if rep.violations else ''}", flush=True)
        for inv, detail, _ in rep.violations[:1]:
            if rep.gap:
                print(f"GAP seed {rep.seed}: {inv}: {detail} (passes under the proposed rules)",
                      flush=True)
                continue
            print(f"FAIL seed {rep.seed}: {inv}: {detail}", flush=True)
            print(f"  shrunk ({rep.shrink_runs} runs): {rep.shrunk}", flush=True)

    if args.jobs <= 1:
        _init(args.real, 0 if args.no_shrink else args.shrink_runs)
        for seed in seeds:
            if over_budget():
                break
            show(play(seed))
        _stack.close()
    else:
        ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
        shrink_runs = 0 if args.no_shrink else args.shrink_runs
        with ctx.Pool(args.jobs, _init, (args.real, shrink_runs)) as pool:
            pending: list[Any] = []
            it = iter(seeds)
            window = 2 * args.jobs
            while True:
                while len(pending) < window and not over_budget():
                    seed = next(it, None)
                    if seed is None:
                        break
                    pending.append(pool.apply_async(play, (seed,)))
                if not pending:
                    break
                show(pending.pop(0).get())
    elapsed = time.monotonic() - t0
    n = len(reports)
    faults = sum(r.faults for r in reports)
    failed = [r for r in reports if r.violations and not r.gap]
    gaps = [r for r in reports if r.gap]
    safety = sum(1 for r in failed for v in r.violations if v[2])
    liveness = sum(1 for r in failed for v in r.violations if not v[2])
    live = [r for r in reports if r.live]
    ranked = sum(1 for r in live if not any(not v[2] for v in r.violations))
    pct = 100.0 * ranked / len(live) if live else 100.0
    pct_gaps = 100.0 * (ranked + sum(1 for r in live if r.gap)) / len(live) if live else 100.0
    rate = 60.0 * n / elapsed if elapsed > 0 else 0.0
    from dernier_p2p.sim.whatif import PROPOSALS

    mix = Counter(k for r in reports for k in r.kinds)
    print("fault mix: " + ", ".join(f"{k} {c}" for k, c in sorted(mix.items(), key=lambda kc: (
        -kc[1], kc[0]))), flush=True)
    proposed = f", design gaps in {len(gaps)} more ({pct_gaps:.2f} % ended under the " \
        "proposed rules)" if PROPOSALS else ""
    print(f"matches {n}, faults {faults}, violations {safety + liveness} (safety {safety}, "
          f"liveness {liveness}) in {len(failed)} matches{proposed}, majority-connected "
          f"{len(live)} ended ranked {ranked} ({pct:.2f} %), {rate:.1f} matches/min "
          f"({elapsed:.0f} s, {args.jobs} jobs, {'real' if args.real else 'small'} group)",
          flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
