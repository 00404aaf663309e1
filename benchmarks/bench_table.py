"""How long a full table of bot processes takes from filling to its first card turned up.

Each run starts ``dernier host --bot`` and ``--seats - 1`` ``dernier join --bot`` as separate
processes on 127.0.0.1 (the command line as a player runs it: its default settings, a
transcript file per seat), joined one after the other. The figure is the time from the table
filling (the wall-clock time stamp of record 0, the table record, which the host writes when
the last seat is in) to the moment the host prints "First card turned up" (seen by polling its
output every 20 ms): the dealer's coin, the key set-up, one proven shuffle per seat checked by
every other seat, the cut (in originale) and the deal happen in between. It also prints each
process's CPU seconds from the last seat's "Seated" line to that moment (``/proc``), their sum,
and that sum over the CPU count (the least time idle CPUs would need). The processes are then
stopped: the hand is not played out.

Run: ``python benchmarks/bench_table.py [--seats 10] [--variant originale] [--runs 3]``
(``DERNIER_PURE_GROUP=1`` in the environment reaches every process: PyNaCl alone).
Linux (``/proc``) for the CPU seconds; the time figure needs only the output.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_failover import ROOT, _env, _free_port, _records, _wait

from dernier_p2p.deck import group

FLIPPED = "First card turned up"
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (None where /proc is not)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def one_run(seats: int, variant: str, limit: float) -> tuple[float, list[float | None]]:
    """Seconds from the table filling to the first card turned up, and each process's CPU
    seconds in between (None where /proc is not)."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        port = _free_port()
        env = _env(tmp, ROOT)
        bot = ["--bot", "--no-colour"]
        commands = [
            ["host", "--players", str(seats), "--variant", variant, "--hands", "1",
             "--bind", "127.0.0.1", "--port", str(port), "--no-announce", "--no-map",
             "--key", str(tmp / "k0.pem"), "--transcript", str(tmp / "t0"), "--name", "Host",
             *bot],
            *(["join", f"127.0.0.1:{port}", "--name", f"P{k}", "--key", str(tmp / f"k{k}.pem"),
               "--transcript", str(tmp / f"t{k}"), *bot] for k in range(1, seats)),
        ]
        procs: list[subprocess.Popen] = []
        try:
            for k, args in enumerate(commands):
                out = tmp / f"out{k}"
                with open(out, "wb") as sink:
                    procs.append(subprocess.Popen(
                        [sys.executable, "-m", "dernier_p2p", *args], stdin=subprocess.DEVNULL,
                        stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=tmp,
                    ))
                if not _wait(out, r"on port \d+" if k == 0 else r"Seated at seat", 120):
                    raise RuntimeError(f"process {k} did not start: {out.read_text()}")
            at_full = [cpu_seconds(p.pid) for p in procs]  # the last seat is in
            host_out = tmp / "out0"
            deadline = time.monotonic() + limit
            while FLIPPED not in host_out.read_text(errors="replace"):
                if time.monotonic() > deadline or procs[0].poll() is not None:
                    raise RuntimeError(f"no first card within {limit:.0f} s:\n"
                                       f"{host_out.read_text(errors='replace')[-2000:]}")
                time.sleep(0.02)
            flipped = time.time()
            cpu = [None if a is None or b is None else b - a
                   for a, b in zip(at_full, (cpu_seconds(p.pid) for p in procs), strict=True)]
            records = _records(tmp / "t0")
            if not records:
                raise RuntimeError("the host's transcript has no record 0")
            return flipped - records[0]["t"] / 1000, cpu
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seats", type=int, default=10, help="processes at the table (default 10)")
    ap.add_argument("--variant", default="originale", help="the rules (default originale)")
    ap.add_argument("--runs", type=int, default=3, help="tables in a row (default 3)")
    ap.add_argument("--limit", type=float, default=300.0,
                    help="seconds to wait for the first card (default 300)")
    a = ap.parse_args()
    if a.seats < 2 or a.runs < 1:
        ap.error("--seats must be at least 2 and --runs at least 1")
    print(f"{a.variant}, {a.seats} processes (dernier host --bot and {a.seats - 1} dernier join "
          f"--bot) on loopback; {os.cpu_count()} CPUs; group arithmetic: {group.PATH}")
    took: list[float] = []
    for i in range(a.runs):
        before = " ".join(f"{x:.2f}" for x in os.getloadavg())
        try:
            t, cpu = one_run(a.seats, a.variant, a.limit)
        except RuntimeError as exc:
            sys.exit(f"run {i + 1}: {exc}")
        took.append(t)
        shown = [c for c in cpu if c is not None]
        cpus = (f"; CPU s per process meanwhile: host {shown[0]:.2f}, others "
                f"{min(shown[1:]):.2f}-{max(shown[1:]):.2f}, all {sum(shown):.2f} (so at least "
                f"{sum(shown) / (os.cpu_count() or 1):.2f} s on {os.cpu_count()} idle CPUs)"
                if len(shown) == len(cpu) else "")
        print(f"run {i + 1}: first card turned up {t:.2f} s after the table filled{cpus} "
              f"(load average before {before})", flush=True)
    print(f"first card after the table filled: median {statistics.median(took):.2f} s, range "
          f"{min(took):.2f}-{max(took):.2f} s over {len(took)} runs; load average now "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
