"""Withhold and show (PROTOCOL.md 22), over loopback TCP with separate processes: an honest
``dernier host`` (seat 0), the cheat (``tests/net/cheat.py withhold``, seat 1, the next host)
and honest ``dernier join --bot`` processes.

At its first turn in play the cheat signs its move, never sends it to the host and shows it to
every probe as unsequenced; it also votes to depose the host. Version 2 took such a shown
envelope for the host's censorship: the others voted ``depose``, the cheat hosted and the old
host, cut off, was voted out and ranked last. In version 3 a seat that is shown an envelope
passes it on to the host (``pass``) instead: the honest host sequences the withheld move, keeps
hosting, and the match ends with nobody deposed, timed out or voted out; every transcript is the
same and verifies."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dernier_p2p.protocol.envelope import record_hash
from dernier_p2p.protocol.verify import check_records
from dernier_p2p.wire.transcript import read_transcript
from tests.cli.helpers import env_for, spawn
from tests.net.test_host_faults import _reap, _wait_for

ROOT = Path(__file__).resolve().parents[2]


def _cheat(tmp: Path, port: int) -> subprocess.Popen[bytes]:
    env = env_for(tmp)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    with open(tmp / "out1", "wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.net.cheat", "withhold", f"127.0.0.1:{port}",
             str(tmp / "t1")],
            stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
        )


def withhold_and_show(tmp: Path, players: int, timers: list[str], limit: float) -> float:
    """Play a one-hand table with the cheat at seat 1; every process must end with exit code 0
    within ``limit``; returns how long the withheld move waited for its record (seconds,
    by the host's record clock)."""
    procs = [
        spawn(tmp, tmp / "out0", "host", "--players", str(players), "--hands", "1",
              "--port", "0", "--bind", "127.0.0.1", "--no-announce", "--no-map", "--bot",
              "--no-colour", "--key", str(tmp / "k0.pem"), "--transcript", str(tmp / "t0"),
              *timers)
    ]
    try:
        port = int(_wait_for(procs[0], tmp / "out0", r"on port (\d+)").group(1))
        procs.append(_cheat(tmp, port))
        _wait_for(procs[1], tmp / "out1", r"seat 1\b")
        for k in range(2, players):
            procs.append(spawn(
                tmp, tmp / f"out{k}", "join", f"127.0.0.1:{port}", "--bot", "--no-colour",
                "--key", str(tmp / f"k{k}.pem"), "--transcript", str(tmp / f"t{k}")))
            _wait_for(procs[k], tmp / f"out{k}", rf"seat {k}\b")
        deadline = time.monotonic() + limit
        codes = [p.wait(timeout=max(1.0, deadline - time.monotonic())) for p in procs]
    finally:
        _reap(procs)
    outs = {k: (tmp / f"out{k}").read_text() for k in range(players)}
    assert codes == [0] * players, outs
    found = re.search(r"cheated: withhold n=(\d+)", outs[1])
    assert found, outs[1]
    for k in range(players):
        assert "Traceback" not in outs[k], outs[k]
    records = list(read_transcript(tmp / "t0"))
    for k in range(1, players):  # one history, the cheat's included
        assert list(read_transcript(tmp / f"t{k}")) == records
    bodies = [r["env"]["body"] for r in records]
    kinds = {b["type"] for b in bodies}
    assert not {"host_change", "timeout", "left", "no_contest"} & kinds, kinds
    assert {r["h"] for r in records} == {0}  # the honest host hosted to the end
    audit = check_records(records)
    assert audit.ok and audit.summary.finished, audit
    # the withheld move came in, passed on by a seat that was shown it: from the record it
    # echoes (what the cheat saw when it signed) to its own record, it waited for the probes
    index = {record_hash(r): r["i"] for r in records}
    rec = next(r for r in records if r["env"]["seat"] == 1 and r["env"]["n"] == int(found[1]))
    assert rec["env"]["body"]["type"] == "move"
    return (rec["t"] - records[index[rec["env"]["head"]]]["t"]) / 1000


@pytest.mark.slow
@pytest.mark.parametrize("players", [3, 4, 5])
def test_a_seat_withholding_its_move_gets_no_honest_host_deposed(
    tmp_path: Path, players: int
) -> None:
    """Short timers (a 3 s turn, a 2 s grace, censor_ms as in the protocol): the withheld move
    is sequenced once the others probe the cheat at its limit, and the host keeps hosting."""
    waited = withhold_and_show(tmp_path, players,
                               ["--turn-seconds", "3", "--grace-seconds", "2"], limit=150)
    assert waited >= 3.0  # it waited for the probes at the limit of the turn, no sooner


@pytest.mark.slow
def test_at_default_timers_the_withheld_move_is_passed_on_and_the_host_keeps_hosting(
    tmp_path: Path,
) -> None:
    """The default timers (a 120 s turn, a 60 s grace): the same, one turn later."""
    waited = withhold_and_show(tmp_path, 3, [], limit=330)
    assert waited >= 120.0
