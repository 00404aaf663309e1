"""How a joiner reaches a host behind each pair of home NAT kinds, and how soon the match starts.

Run (as root, Linux): python benchmarks/bench_reach.py [--kinds full-cone,symmetric,...]
                                                       [--hosts KINDS] [--joiners KINDS]
                     python benchmarks/bench_reach.py --pairs HOST:JOINER,... [--rounds N]

For every pair (host's home kind x joiner's home kind, :mod:`tests.netlab.nat`), a fresh lab of
network namespaces: ``dernier relay`` on the Internet side, ``dernier host --relay`` (2 seats,
1 hand, ``--bot``) behind a router of the first kind, which tries its router's UPnP and
NAT-PMP as usual, and, once the host has printed its invite code, ``dernier join CODE --bot
--no-map`` behind a router of the second kind (``--no-map``: asking a router without UPnP costs
2 s), except behind a ``upnp`` router, where the joiner maps its listen port as by default so
that the host can call it back there (connection reversal). Printed per pair: the
path the joiner's connection took (``direct``, ``mapped``, ``punched``, ``birthday``, ``reversed``,
``relayed``, as it says when seated), the time from starting ``dernier join`` to its
transcript holding the first move of the match (the first card played or drawn), and to the
end of the match. A ``*`` marks a match that failed (its outputs are kept and their folder printed).

``--pairs`` plays only the pairs named (``host-kind:joiner-kind``), in that order, ``--rounds``
times round (interleaved: one of each pair a round), printing each match with the load average
when it ended, then each pair's median seconds to the first move.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dernier_p2p.wire.transcript import read_transcript  # noqa: E402
from tests.netlab.lab import ensure_tools  # noqa: E402
from tests.netlab.nat import NatLab  # noqa: E402

KINDS = ("full-cone", "address-restricted", "port-restricted", "symmetric", "cgn", "upnp")
PATHS = (("called this seat back", "reversed"), ("birthday punch", "birthday"),
         ("hole punched", "punched"),
         ("through the host's router", "mapped"), ("through the relay", "relayed"),
         ("directly at", "direct"))
COMMON = ["--bot", "--no-colour"]
LIMIT_S = 120.0


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), PYTHONUNBUFFERED="1",
               PYTHONPATH=str(ROOT))
    return env


def _first_move(path: Path) -> bool:
    try:
        records = list(read_transcript(path, allow_torn_tail=True))
    except (OSError, ValueError):
        return False
    return any(r["env"]["body"]["type"] == "move" for r in records)


def play(host_kind: str, join_kind: str, tmp: Path) -> tuple[str, float | None, float | None]:
    """One match over a fresh lab: the path, seconds to the first move and to the end."""
    lab = NatLab.of({"A": host_kind, "B": join_kind}).up()
    procs: list[subprocess.Popen[bytes]] = []

    def run(ns: str, name: str, *args: str) -> subprocess.Popen[bytes]:
        proc = lab.spawn(ns, tmp / f"{name}.out", sys.executable, "-m", "dernier_p2p", *args,
                         env=_env(tmp))
        procs.append(proc)
        return proc

    def wait(name: str, pattern: str, proc: subprocess.Popen[bytes]) -> str | None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            found = re.search(pattern, (tmp / f"{name}.out").read_text())
            if found:
                return found.group(1)
            time.sleep(0.02)
        return None

    try:
        relay = run(lab.wan, "relay", "relay", "--port", "47640")
        if wait("relay", r"(Relay listening)", relay) is None:
            return "no relay", None, None
        host = run(lab.rtr["A"].home_ns, "host", "-v", "host", "--players", "2", "--hands", "1",
                   "--port", "47630", "--no-announce", "--relay", f"{lab.wan_ip}:47640",
                   "--key", str(tmp / "k0"), "--transcript", str(tmp / "t0"), *COMMON)
        code = wait("host", r"dernier join (dn1-[a-z2-7]+)", host)
        if code is None:
            return "no code", None, None
        started = time.monotonic()
        no_map = () if join_kind == "upnp" else ("--no-map",)
        join = run(lab.rtr["B"].home_ns, "join", "-v", "join", code, *no_map,
                   "--key", str(tmp / "k1"), "--transcript", str(tmp / "t1"), *COMMON)
        first = None
        while time.monotonic() - started < LIMIT_S and join.poll() is None:
            if _first_move(tmp / "t1"):
                first = time.monotonic() - started
                break
            time.sleep(0.02)
        codes = [p.wait(timeout=LIMIT_S) for p in (host, join)]
        ended = time.monotonic() - started if codes == [0, 0] else None
        seated = re.search(r"Seated at seat \d, connected ([^\n]*)",
                           (tmp / "join.out").read_text())
        path = "?" if seated is None else next(
            (name for phrase, name in PATHS if phrase in seated.group(1)), "?")
        return path, first, ended
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        lab.down()


def rounds(pairs: list[str], count: int) -> None:
    """``count`` rounds of ``pairs`` (``host:joiner``), one match of each pair a round."""
    firsts: dict[str, list[float]] = {pair: [] for pair in pairs}
    for k in range(count):
        for pair in pairs:
            h, j = pair.split(":")
            tmp = Path(tempfile.mkdtemp(prefix="bench-reach-"))
            path, first, ended = play(h, j, tmp)
            load = os.getloadavg()[0]
            ok = first is not None and ended is not None
            if ok:
                firsts[pair].append(first)  # type: ignore[arg-type]
                shutil.rmtree(tmp, ignore_errors=True)
            shown = f"{first:.2f}s/{ended:.2f}s" if ok else f"* ({tmp})"
            print(f"round {k + 1} host {h:<16} joiner {j:<16} {path:<9} {shown} "
                  f"load {load:.2f}", flush=True)
    print("\npair: median seconds to the first move (matches)")
    for pair, values in firsts.items():
        median = f"{statistics.median(values):.2f}" if values else "-"
        print(f"{pair:<36} {median} ({len(values)}: {', '.join(f'{v:.2f}' for v in values)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--hosts", default=None, help="host kinds (default: --kinds)")
    parser.add_argument("--joiners", default=None, help="joiner kinds (default: --kinds)")
    parser.add_argument("--pairs", default=None,
                        help="host:joiner kinds, comma-separated (instead of the matrix)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of --pairs")
    args = parser.parse_args()
    reason = ensure_tools()
    if reason is not None:
        sys.exit(f"the lab cannot run here: {reason}")
    if args.pairs is not None:
        rounds(args.pairs.split(","), args.rounds)
        return
    hosts = (args.hosts or args.kinds).split(",")
    joiners = (args.joiners or args.kinds).split(",")
    results: dict[tuple[str, str], str] = {}
    for h in hosts:
        for j in joiners:
            tmp = Path(tempfile.mkdtemp(prefix="bench-reach-"))
            path, first, ended = play(h, j, tmp)
            ok = first is not None and ended is not None
            cell = f"{path} {first:.1f}s/{ended:.1f}s" if ok else f"{path}*"
            if ok:
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                cell += f" ({tmp})"
            results[h, j] = cell
            print(f"host {h:<18} joiner {j:<18} {cell}", flush=True)
    width = max(len(c) for c in results.values()) + 2
    print("\nhost \\ joiner: path, seconds to the first move / to the end of the match")
    print(" " * 20 + "".join(f"{j:<{width}}" for j in joiners))
    for h in hosts:
        print(f"{h:<20}" + "".join(f"{results[h, j]:<{width}}" for j in joiners))


if __name__ == "__main__":
    main()
