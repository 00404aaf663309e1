"""``python -m dernier_p2p.fuzz TARGET [--cases N] [--seconds S] [--seed K] [--out DIR]``.

Exit 0 when no case crashed or hung, 1 otherwise. ``all`` runs every in-process target.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from dernier_p2p.fuzz.runner import run
from dernier_p2p.fuzz.targets import IN_PROCESS, Targets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dernier_p2p.fuzz", description=__doc__)
    parser.add_argument("target", choices=[*IN_PROCESS, "live", "all"])
    parser.add_argument("--cases", type=int, default=None, help="stop after N cases")
    parser.add_argument("--seconds", type=float, default=None, help="stop after S seconds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("fuzz-crashes"),
                        help="where reproducers are saved")
    parser.add_argument("--only", type=int, default=None, help="run case K alone (a repro)")
    parser.add_argument("--hang", type=float, default=10.0, help="seconds before a hang")
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args(argv)
    quiet = logging.getLogger("dernier_p2p")  # the relay's notices at its caps, say: not news
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    if args.cases is None and args.seconds is None and args.only is None:
        args.cases = 100_000
    if args.target == "live":
        from dernier_p2p.fuzz.live import run_live

        report = run_live(cases=args.cases, seconds=args.seconds, seed=args.seed, out=args.out)
        print(report.line())
        print("  host transcript records while fuzzed:",
              [n for name, n in report.kinds.items() if name.startswith("records@")])
        for note in report.saved:
            print(f"  {note}")
        return 0 if report.crashes == report.hangs == 0 else 1
    targets = Targets()
    targets.warm()
    bad = 0
    for name in IN_PROCESS if args.target == "all" else [args.target]:
        report = run(targets.get(name), cases=args.cases, seconds=args.seconds, seed=args.seed,
                     out=args.out, hang_s=args.hang, only=args.only, progress=args.progress)
        print(report.line(), flush=True)
        top = sorted(report.kinds.items(), key=lambda kv: -kv[1])[:8]
        print("  refusals by code: " + ", ".join(f"{k} {v}" for k, v in top), flush=True)
        for path in report.saved:
            print(f"  reproducer: {path}")
        bad += report.crashes + report.hangs
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
