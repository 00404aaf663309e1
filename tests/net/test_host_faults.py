"""Every fault leaves evidence: a cheating seat process (tests/net/cheat.py) against a real
``dernier host`` process over loopback TCP. The record that proves the cheat is relayed, every
seat stops at once on it (the turn timer is five minutes: no time-out is involved), and every
transcript, the honest ones first, verifies as ``FAULT ... seat k`` with that record as its
last: the author's own signed envelope, or, for a box only the end-of-hand audit can judge, the
record that completes the secrets."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dernier_p2p.wire.transcript import TranscriptWriter, read_transcript
from tests.cli.helpers import dernier, env_for, spawn

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 150  # seconds for a whole run on a busy machine; the turn timer is 300


def _reap(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def _wait_for(proc: subprocess.Popen[bytes], out: Path, pattern: str) -> re.Match[str]:
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(pattern, out.read_text())
        if found:
            return found
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError(f"{pattern!r} never came: {out.read_text()}")


def _cheat(tmp: Path, kind: str, port: int) -> subprocess.Popen[bytes]:
    env = env_for(tmp)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    with open(tmp / "out1", "wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.net.cheat", kind, f"127.0.0.1:{port}",
             str(tmp / "t1")],
            stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
        )


def play_with_cheat(
    tmp: Path, kind: str, players: int, variant: str, hands: int, *host_flags: str
) -> dict[int, str]:
    """Host (seat 0, bot), the cheat (seat 1) and honest joins; every process must end (exit 1)
    within LIMIT. Returns each seat's output."""
    procs = [
        spawn(tmp, tmp / "out0", "host", "--players", str(players), "--variant", variant,
              "--hands", str(hands), "--port", "0", "--bind", "127.0.0.1", "--no-announce",
              "--turn-seconds", "300", "--offer-seconds", "0.5", "--bot", "--no-colour",
              "--key", str(tmp / "k0.pem"),
              "--transcript", str(tmp / "t0"), *host_flags)
    ]
    try:
        port = int(_wait_for(procs[0], tmp / "out0", r"on port (\d+)").group(1))
        procs.append(_cheat(tmp, kind, port))
        _wait_for(procs[1], tmp / "out1", r"seat 1\b")
        for k in range(2, players):
            procs.append(
                spawn(tmp, tmp / f"out{k}", "join", f"127.0.0.1:{port}", "--bot", "--no-colour",
                      "--key", str(tmp / f"k{k}.pem"), "--transcript", str(tmp / f"t{k}"))
            )
            _wait_for(procs[k], tmp / f"out{k}", rf"seat {k}\b")
        codes = [p.wait(timeout=LIMIT) for p in procs]
    finally:
        _reap(procs)
    outs = {k: (tmp / f"out{k}").read_text() for k in range(players)}
    assert f"cheated: {kind}" in outs[1], outs[1]
    assert codes == [1] * players, outs
    return outs


def check_evidence(
    tmp: Path, players: int, code: str, detail: str, own_envelope: bool = True
) -> None:
    """Every seat was told at once and names seat 1; every transcript ends with the same
    record, the cheat's own envelope (else the one that completes the proof), and ``dernier
    verify`` names seat 1 there."""
    stopped = f"The match is stopped: {code} by seat 1: "
    outs = {k: (tmp / f"out{k}").read_text() for k in range(players)}
    for k in [0, *range(2, players)]:
        assert stopped in outs[k] and detail in outs[k], outs[k]
        assert "Traceback" not in outs[k], outs[k]
    records = {k: list(read_transcript(tmp / f"t{k}")) for k in range(players)}
    last = records[0][-1]
    if own_envelope:
        assert last["env"]["seat"] == 1  # the evidence is the cheat's own signed envelope
    for k in range(players):
        assert records[k] == records[0], f"seat {k} holds another history"
        check = dernier(tmp, "verify", str(tmp / f"t{k}"))
        assert check.returncode == 1, check.stdout
        want = f"FAULT at record {last['i']}: {code}: seat 1 (cheat) is at fault"
        assert want in check.stdout and detail in check.stdout, check.stdout
        assert "INCOMPLETE" not in check.stdout
    if not own_envelope:
        return
    # had the host never relayed it, its envelope side file would still prove the fault
    cut = tmp / "cut"
    with TranscriptWriter(cut) as writer:
        for rec in records[0][:-1]:
            writer.append(rec)
    assert "INCOMPLETE" in dernier(tmp, "verify", str(cut)).stdout
    side = list(read_transcript(tmp / "t0.envelopes"))
    assert last["env"] in side
    check = dernier(tmp, "verify", str(cut), "--envelopes", str(tmp / "t0.envelopes"))
    assert check.returncode == 1, check.stdout
    assert f"FAULT: {code}: seat 1 (cheat) is at fault" in check.stdout, check.stdout
    assert detail in check.stdout and "never sequenced" in check.stdout, check.stdout


@pytest.mark.slow
def test_an_illegal_play_is_revealed_and_proven_in_every_transcript(tmp_path: Path) -> None:
    play_with_cheat(tmp_path, "illegal-play", 3, "dernier", 1)
    check_evidence(tmp_path, 3, "ILLEGAL_MOVE", "[")  # "[rule-id] why"
    last = list(read_transcript(tmp_path / "t2"))[-1]
    assert last["env"]["body"]["type"] == "tokens"  # the token that reveals the card


@pytest.mark.slow
def test_a_false_complaint_is_recorded_and_proven(tmp_path: Path) -> None:
    # originale, two seats, two hands: each seat cuts (and gets the peek box) in one hand
    play_with_cheat(tmp_path, "false-complaint", 2, "originale", 2)
    check_evidence(tmp_path, 2, "DECK_FAULT", "false complaint about box")
    last = list(read_transcript(tmp_path / "t0"))[-1]
    assert last["env"]["body"]["type"] == "complaint"


@pytest.mark.slow
def test_a_bad_token_proof_found_after_relaying_is_proven(tmp_path: Path) -> None:
    play_with_cheat(tmp_path, "token-proof", 2, "dernier", 1, "--send-before-check")
    check_evidence(tmp_path, 2, "DECK_FAULT", "BadProof: seat 1: Chaum-Pedersen proof")


@pytest.mark.slow
def test_a_bad_shuffle_proof_found_after_relaying_is_proven(tmp_path: Path) -> None:
    # the old spelling of --send-before-check, kept as a hidden alias
    play_with_cheat(tmp_path, "shuffle-proof", 2, "dernier", 1, "--relay-first")
    check_evidence(tmp_path, 2, "DECK_FAULT", "BadProof: seat 1: shuffle proof does not check")


@pytest.mark.slow
def test_a_box_that_does_not_open_is_named_by_the_audit(tmp_path: Path) -> None:
    # the receiver complains (no plaintext); the hand stops, every secret is revealed and the
    # audit names the giver: the record completing the secrets ends every transcript
    play_with_cheat(tmp_path, "bad-box", 2, "originale", 2)
    check_evidence(tmp_path, 2, "DECK_FAULT", "box does not open", own_envelope=False)
    bodies = [r["env"]["body"] for r in read_transcript(tmp_path / "t0")]
    assert [b["type"] for b in bodies].count("complaint") == 1
    assert bodies[-1]["type"] == "secret"
