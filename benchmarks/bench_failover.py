"""How long a table stands still when its host's process is killed (``kill -9``).

Each run starts four separate processes on 127.0.0.1 at the default timers (a 120 s turn, a
60 s grace): ``dernier host`` and three ``dernier join --bot``, every joiner listening so that
it can host. Just after the host has played (so the turn is another seat's), the host is killed
with SIGKILL. The figure is the time from the kill to the first ``move`` record after the
``host_change`` in seat 1's transcript (the record's time stamp, the new host's clock, which is
this machine's). A run that sees no such move within ``--limit`` seconds counts as stuck.

``--reference REV`` runs the same with the code of git revision REV (a temporary worktree
used through ``PYTHONPATH``) and prints the ratio reference / this code: the stand-still before
a faster host change, say ``64113b4`` (protocol version 2).

Run: ``python benchmarks/bench_failover.py [--runs N] [--reference REV] [--limit S]``.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dernier_p2p.wire.transcript import TranscriptError, read_transcript

ROOT = Path(__file__).resolve().parent.parent
SEATS = 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(home: Path, code: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), PYTHONUNBUFFERED="1",
               PYTHONPATH=str(code))
    return env


def _records(path: Path) -> list[dict]:
    try:
        return list(read_transcript(path, allow_torn_tail=True))
    except (TranscriptError, OSError):
        return []


def _wait(out: Path, pattern: str, limit: float) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if out.exists() and re.search(pattern, out.read_text(errors="replace")):
            return True
        time.sleep(0.05)
    return False


def one_run(code: Path, limit: float) -> float | None:
    """Seconds from the kill to the first move under the new host; None if none came."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        port = _free_port()
        env = _env(tmp, code)
        bot = ["--bot", "--no-colour"]
        commands = [
            ["host", "--players", str(SEATS), "--hands", "1", "--bind", "127.0.0.1",
             "--port", str(port), "--no-announce", "--no-map", "--key", str(tmp / "k0.pem"),
             "--transcript", str(tmp / "t0"), "--name", "Ann", *bot],
            *(["join", f"127.0.0.1:{port}", "--name", f"P{k}", "--key", str(tmp / f"k{k}.pem"),
               "--transcript", str(tmp / f"t{k}"), *bot] for k in range(1, SEATS)),
        ]
        procs = []
        try:
            for k, args in enumerate(commands):
                out = tmp / f"out{k}"
                with open(out, "wb") as sink:
                    procs.append(subprocess.Popen(
                        [sys.executable, "-m", "dernier_p2p", *args], stdin=subprocess.DEVNULL,
                        stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=tmp,
                    ))
                if not _wait(out, r"on port \d+" if k == 0 else r"Seated at seat", 60):
                    raise RuntimeError(f"process {k} did not start: {out.read_text()}")
            if not _wait(tmp / "out1", r"First card turned up[\s\S]*Ann plays ", 120):
                raise RuntimeError("the host never played")
            killed = time.time()
            procs[0].kill()
            procs[0].wait()
            deadline = time.monotonic() + limit
            while time.monotonic() < deadline:
                records = _records(tmp / "t1")
                kinds = [r["env"]["body"]["type"] for r in records]
                if "host_change" in kinds:
                    after = records[kinds.index("host_change"):]
                    move = next((r for r in after if r["env"]["body"]["type"] == "move"), None)
                    if move is not None:
                        return move["t"] / 1000 - killed
                time.sleep(0.1)
            return None
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()


def _worktree(rev: str, where: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), rev],
                   check=True, capture_output=True)
    return where


def _series(name: str, code: Path, runs: int, limit: float) -> list[float]:
    got: list[float] = []
    for i in range(runs):
        took = one_run(code, limit)
        shown = "stuck" if took is None else f"{took:.2f} s"
        print(f"{name} run {i + 1}: kill -> first move under the new host: {shown}", flush=True)
        got.append(limit if took is None else took)
    return got


def _summary(name: str, xs: list[float]) -> str:
    return (f"{name}: median {statistics.median(xs):.2f} s, range {min(xs):.2f} to "
            f"{max(xs):.2f} s over {len(xs)} runs")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--reference", metavar="REV", help="git revision to compare with")
    ap.add_argument("--limit", type=float, default=240.0, help="seconds before a run is stuck")
    a = ap.parse_args()
    mine = _series("this code", ROOT, a.runs, a.limit)
    print(_summary("this code", mine))
    if a.reference:
        with tempfile.TemporaryDirectory() as d:
            where = Path(d) / "ref"
            try:
                ref = _series(a.reference, _worktree(a.reference, where), a.runs, a.limit)
            finally:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(where)], capture_output=True)
        print(_summary(a.reference, ref))
        print(f"ratio {a.reference} / this code (medians): "
              f"{statistics.median(ref) / statistics.median(mine):.1f}")


if __name__ == "__main__":
    main()
