"""The host cannot choose the loser, over loopback TCP with separate processes: a cheating host
process (:mod:`tests.net.rogue_host`) announces ``left`` or ``timeout`` for a present seat with
only its own vote; the honest seats, ``dernier join --bot`` processes, refuse the record
(NO_QUORUM naming the host) and never record a loss, and ``dernier verify`` finds the same fault
offline in the host's own transcript."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dernier_p2p.protocol.verify import check_records
from dernier_p2p.wire.transcript import read_transcript
from tests.cli.helpers import dernier, env_for, spawn

ROOT = Path(__file__).resolve().parents[2]


def _port(proc: subprocess.Popen[str], deadline: float) -> int:
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("PORT "):
            return int(line.split()[1])
        if not line and proc.poll() is not None:
            break
    raise AssertionError("the rogue host did not start")


@pytest.mark.parametrize("attack", ["left", "timeout"])
def test_a_forged_absence_is_refused_by_every_process(tmp_path: Path, attack: str) -> None:
    env = {**env_for(tmp_path), "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get(
        "PYTHONPATH", "")}
    host = subprocess.Popen(
        [sys.executable, "-m", "tests.net.rogue_host", attack, "3", str(tmp_path / "t0")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT,
    )
    joins = []
    try:
        port = _port(host, time.monotonic() + 60)
        for k in (1, 2):
            joins.append(spawn(
                tmp_path, tmp_path / f"out{k}", "join", f"127.0.0.1:{port}", "--name", f"p{k}",
                "--key", str(tmp_path / f"k{k}.pem"), "--transcript", str(tmp_path / f"t{k}"),
                "--bot", "--no-colour", "--plain", "--no-listen",
            ))
        codes = [j.wait(timeout=120) for j in joins]
        host.wait(timeout=60)
    finally:
        for p in [host, *joins]:
            if p.poll() is None:
                p.kill()
                p.wait()
    for k, code in zip((1, 2), codes, strict=True):
        out = (tmp_path / f"out{k}").read_text()
        assert code != 0, out  # the match stops for the honest seat: it refuses the record
        assert "NO_QUORUM" in out and "Traceback" not in out, out
    rogue = list(read_transcript(tmp_path / "t0"))
    forged = rogue[-1]["env"]["body"]
    assert (forged["type"], forged["seat"]) == (attack, 1)
    for k in (1, 2):
        mine = list(read_transcript(tmp_path / f"t{k}"))
        assert mine == rogue[: len(mine)] and len(mine) < len(rogue)  # the forgery never kept
        assert not check_records(mine).ok and check_records(mine).code == "INCOMPLETE"
    proc = dernier(tmp_path, "verify", str(tmp_path / "t0"))
    assert proc.returncode == 1, proc.stdout
    assert f"FAULT at record {len(rogue) - 1}: NO_QUORUM: seat 0 (rogue) is at fault" in \
        proc.stdout
