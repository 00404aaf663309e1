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
from typing import Any

import pytest

from dernier_p2p.net.host import Host
from dernier_p2p.net.timers import Timers
from dernier_p2p.protocol.verify import check_records
from dernier_p2p.rules import Phase
from dernier_p2p.wire.transcript import read_transcript
from tests.cli.helpers import dernier, env_for, spawn
from tests.net.helpers import play, transcripts, verify, wait_for

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


class Censor(Host):
    """Holds every move of seat 2 once the match is mid-hand (never sequenced, no error)."""

    holding = False
    kept: list[dict] = []

    def _on_env(self, seat: int, env: Any) -> None:
        body = env.get("body") if isinstance(env, dict) else None
        me = self.me
        if (seat == 2 and me is not None and len(self.records) > 30
                and me.session.state.phase is Phase.PLAY and isinstance(body, dict)
                and body.get("type") == "move"):
            self.holding = True
        if seat == 2 and self.holding:
            self.kept.append(env)
            return
        super()._on_env(seat, env)


async def test_a_censoring_host_is_deposed_and_the_victim_plays_on(tmp_path: Path) -> None:
    """Silent censorship at three seats, in one process over loopback TCP: seat 2's moves are
    held; seat 1 probes it, sees the held move, votes depose instead of timeout, and takes
    over with seat 2's vote; the held move is sequenced by the new host and the match ends
    without a loss for seat 2; the transcripts verify."""

    async def stop_the_old_host(table: Any) -> None:
        await wait_for(lambda: 1 in table.peers and table.peers[1].host is not None, 40)
        await wait_for(lambda: table.peers[1].host.done.is_set(), 40)
        table.scopes[0].cancel()

    table = await play(
        tmp_path, 3, host_cls=Censor, listen=True, watch=stop_the_old_host,
        timers=Timers(turn_ms=1_500, declare_ms=30, grace_ms=4_000),
        peer_options={"censor_ms": 1_000}, limit=90,
    )
    assert table.host.kept  # the host did hold seat 2's move
    assert not table.errors, table.errors
    got = transcripts(tmp_path, [1, 2])
    assert got[1] == got[2]
    bodies = [r["env"]["body"] for r in got[1]]
    types = [b["type"] for b in bodies]
    change = types.index("host_change")
    assert [v["seat"] for v in bodies[change]["votes"]] == [1, 2]
    assert "timeout" not in types[:change]  # the host found no quorum against seat 2
    assert any(r["env"]["seat"] == 2 and r["env"]["body"]["type"] == "move"
               for r in got[1][change:])
    audit = verify(got[1])
    assert audit.ok and audit.summary.standings[-1] != 2  # the victim is not last
