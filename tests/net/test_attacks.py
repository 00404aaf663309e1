"""The host cannot choose the loser, over loopback TCP with separate processes: a cheating host
process (:mod:`tests.net.rogue_host`) against honest ``dernier join --bot`` processes.

* A forged ``left`` or ``timeout`` record (only the host's vote) is refused by every honest
  seat (NO_QUORUM naming the host), and ``dernier verify`` names the host offline.
* Silent censorship, with lies (``status`` dropped) and the host's own votes, at 2, 3 and 5
  seats: the victim is never voted out; the host is deposed (3, 5 seats) or the match ends as
  no contest (2 seats), and ``dernier verify`` agrees on every transcript."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


@dataclass
class Run:
    """What a table of a rogue host process and ``dernier join --bot`` processes left."""

    rogue_out: str
    codes: dict[int, int]
    outs: dict[int, str]


def run_rogue(tmp_path: Path, attack: str, players: int, *join_args: str) -> Run:
    """Run ``tests.net.rogue_host ATTACK PLAYERS`` (seat 0) and ``players - 1`` honest
    ``dernier join --bot`` processes (transcripts ``t0`` .. ``t{n-1}``) to the end."""
    env = {**env_for(tmp_path), "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get(
        "PYTHONPATH", "")}
    host = subprocess.Popen(
        [sys.executable, "-m", "tests.net.rogue_host", attack, str(players),
         str(tmp_path / "t0")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT,
    )
    joins: dict[int, subprocess.Popen[bytes]] = {}
    try:
        port = _port(host, time.monotonic() + 60)
        for k in range(1, players):
            joins[k] = spawn(
                tmp_path, tmp_path / f"out{k}", "join", f"127.0.0.1:{port}", "--name", f"p{k}",
                "--key", str(tmp_path / f"k{k}.pem"), "--transcript", str(tmp_path / f"t{k}"),
                "--bot", "--no-colour", "--plain", *join_args,
            )
        codes = {k: j.wait(timeout=150) for k, j in joins.items()}
        rogue_out = host.communicate(timeout=60)[0]
    finally:
        for p in [host, *joins.values()]:
            if p.poll() is None:
                p.kill()
                p.wait()
    outs = {k: (tmp_path / f"out{k}").read_text() for k in joins}
    return Run(rogue_out, codes, outs)


def verify_all(tmp_path: Path, players: int) -> dict[int, str]:
    """``dernier verify`` on every transcript of the table, run at once; its output by seat."""
    procs = {
        k: subprocess.Popen(
            [sys.executable, "-m", "dernier_p2p", "verify", str(tmp_path / f"t{k}")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env_for(tmp_path))
        for k in range(players)
    }
    return {k: p.communicate(timeout=120)[0] for k, p in procs.items()}


@pytest.mark.parametrize("players", [2, 3, 5])
@pytest.mark.parametrize("attack", ["left", "timeout"])
def test_a_forged_absence_is_refused_by_every_process(
    tmp_path: Path, attack: str, players: int
) -> None:
    """The host relays ``left`` or ``timeout`` for the present last seat with only its own
    vote: every honest process refuses it (NO_QUORUM naming the host), records no loss and
    keeps the forged record last as the evidence: ``dernier verify`` names the host offline
    from any transcript."""
    run = run_rogue(tmp_path, attack, players, "--no-listen")
    victim = players - 1
    for k, code in run.codes.items():
        out = run.outs[k]
        assert code != 0, out  # the match stops for the honest seat: it refuses the record
        assert "NO_QUORUM" in out and "Traceback" not in out, out
    rogue = list(read_transcript(tmp_path / "t0"))
    forged = rogue[-1]["env"]["body"]
    assert (forged["type"], forged["seat"]) == (attack, victim)
    for k in run.codes:
        mine = list(read_transcript(tmp_path / f"t{k}"))
        assert mine == rogue  # the forgery kept last, as the evidence (PROTOCOL.md 19.1)
        verdict = check_records(mine)
        assert (verdict.ok, verdict.code, verdict.seat) == (False, "NO_QUORUM", 0)
    proc = dernier(tmp_path, "verify", str(tmp_path / "t0"))
    assert proc.returncode == 1, proc.stdout
    assert f"FAULT at record {len(rogue) - 1}: NO_QUORUM: seat 0 (rogue) is at fault" in \
        proc.stdout


@pytest.mark.parametrize("players", [2, 3, pytest.param(5, marks=pytest.mark.slow)])
def test_a_censoring_host_process_cannot_make_a_seat_lose(tmp_path: Path, players: int) -> None:
    """Silent censorship with separate processes: the rogue host holds every envelope of the
    last seat from its first move in play, tells the others it dropped, and votes ``left`` and
    ``timeout`` against it. The honest ``dernier join`` processes probe the victim over a
    seat link, find it present with a move the host holds, refuse to vote against it, and at
    three and five seats vote ``depose``: seat 1 hosts, the held move is sequenced, the rogue
    seat is voted out (``left``) and the match ends with the victim ranked. At two seats no
    majority exists: the match ends as no contest. ``dernier verify`` agrees on every
    transcript."""
    run = run_rogue(tmp_path, "censor", players, "--censor-ms", "1000")
    victim = players - 1
    assert "CENSOR" in run.rogue_out, run.rogue_out
    for k, code in run.codes.items():
        assert code == 0 and "Traceback" not in run.outs[k], run.outs[k]
    honest = transcripts_of(tmp_path, range(1, players))
    records = honest[1]
    assert all(honest[k] == records for k in honest)  # one history for every honest seat
    bodies = [r["env"]["body"] for r in records]
    assert not [b for b in bodies if b["type"] in ("timeout", "left") and b["seat"] == victim]
    verdicts = verify_all(tmp_path, players)
    if players == 2:
        assert bodies[-1] == {"type": "no_contest", "seat": victim, "votes": []}
        assert "No contest" in run.outs[victim]
        for k in range(players):  # the rogue's own transcript too: a valid no contest
            assert verdicts[k].startswith("OK"), verdicts[k]
            assert "no contest" in verdicts[k].lower(), verdicts[k]
        return
    assert "DEPOSED" in run.rogue_out, run.rogue_out
    change = [b["type"] for b in bodies].index("host_change")
    assert (bodies[change]["old"], bodies[change]["new"]) == (0, 1)
    voters = [v["seat"] for v in bodies[change]["votes"]]
    assert len(voters) >= players // 2 + 1 and 0 not in voters
    assert any(r["env"]["seat"] == victim and b["type"] == "move"
               for r, b in zip(records[change:], bodies[change:], strict=True))
    assert {"type": "left", "seat": 0} in [
        {k: b[k] for k in ("type", "seat")} for b in bodies[change:] if b["type"] == "left"]
    audit = check_records(records)
    assert audit.ok and audit.summary.finished and not audit.summary.no_contest
    assert audit.summary.standings[-1] == 0  # the rogue left: last; the victim is ranked
    for k in range(1, players):
        assert verdicts[k].startswith("OK"), verdicts[k]
    rogue = list(read_transcript(tmp_path / "t0"))
    assert rogue == records[: len(rogue)] and len(rogue) <= change
    assert "INCOMPLETE" in verdicts[0], verdicts[0]


def transcripts_of(tmp_path: Path, seats: Any) -> dict[int, list[dict[str, Any]]]:
    return {k: list(read_transcript(tmp_path / f"t{k}")) for k in seats}

