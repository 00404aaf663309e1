"""``python -m dernier_p2p.fuzz TARGET [--cases N] [--seconds S] [--seed K] [--out DIR]``.

Exit 0 when no case crashed or hung, 1 otherwise. ``all`` runs every in-process target.
``upnp`` runs in a network namespace of its own (made with ``unshare --net``: root), where
its scripted router is the only thing to reach.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
from pathlib import Path

from dernier_p2p.fuzz.runner import run
from dernier_p2p.fuzz.targets import IN_PROCESS, Target, Targets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dernier_p2p.fuzz", description=__doc__)
    parser.add_argument("target", choices=[*IN_PROCESS, "upnp", "live", "all"])
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
    if args.target == "upnp":
        return _upnp(args, argv if argv is not None else sys.argv[1:])
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


NAMESPACE_SETUP = ("ip link set lo up && { ip link set lo multicast on && "
                   "ip route add 224.0.0.0/4 dev lo; } ; exec \"$@\"")
"""Loopback up, and the SSDP multicast routed to it, in the new namespace."""


def _upnp(args: argparse.Namespace, argv: list[str]) -> int:
    """The ``upnp`` target, in a network namespace of its own (this process re-run there)."""
    from dernier_p2p.fuzz import upnp_target

    if not upnp_target.isolated():
        unshare = shutil.which("unshare")
        if os.environ.get("DERNIER_FUZZ_NETNS") or unshare is None or os.geteuid() != 0:
            print("the upnp target needs a network namespace of its own: run it as root on "
                  "Linux with unshare (util-linux) and ip (iproute2)", file=sys.stderr)
            return 2
        env = dict(os.environ, DERNIER_FUZZ_NETNS="1")
        os.execvpe(unshare, [unshare, "--net", "--", "sh", "-c", NAMESPACE_SETUP, "sh",
                             sys.executable, "-m", "dernier_p2p.fuzz", *argv], env)
    target = upnp_target.UpnpTarget(ssdp=True)
    try:
        report = run(Target("upnp", target.make, target.run, upnp_target.dump, upnp_target.reason),
                     cases=args.cases, seconds=args.seconds, seed=args.seed, out=args.out,
                     hang_s=args.hang, only=args.only, progress=args.progress)
    finally:
        target.close()
    print(report.line(), flush=True)
    top = sorted(report.kinds.items(), key=lambda kv: -kv[1])[:12]
    print("  refusals: " + ", ".join(f"{k} {v}" for k, v in top), flush=True)
    for path in report.saved:
        print(f"  reproducer: {path}")
    return 0 if report.crashes == report.hangs == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
