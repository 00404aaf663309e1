"""The network benchmarks (benchmarks/bench_net.py, benchmarks/bench_relay.py) on one hand: real
seat processes over loopback TCP (and a real relay process), every figure printed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NUMBER = r"(\d+\.\d+)"


def _run(script: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True, text=True, env=env, timeout=timeout,
    )


def test_one_hand_over_loopback_prints_every_figure() -> None:
    run = _run("bench_net.py", "--hands", "1")
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert "records: " in out and "hands: 1, all seats agree: True" in out
    first = re.search(rf"first card played after the table filled: {NUMBER} s", out)
    assert first is not None, out
    assert 0 < float(first.group(1)) < 120
    cpu = re.search(r"CPU seconds per seat from record 1 until it applied the first card: "
                    r"([\d., ]+);", out)
    assert cpu is not None, out
    per_seat = [float(c) for c in cpu.group(1).split(", ")]
    assert len(per_seat) == 4 and all(c > 0 for c in per_seat)
    latency = re.search(rf"move latency over (\d+) moves: median {NUMBER} ms .*"
                        rf"p99 {NUMBER} ms, max {NUMBER} ms", out)
    assert latency is not None, out
    moves, median, p99, most = (float(g) for g in latency.groups())
    assert moves > 0 and 0 < median <= p99 <= most
    per_minute = re.search(rf"hands per minute: {NUMBER} \(1 hands in {NUMBER} s\)", out)
    assert per_minute is not None and float(per_minute.group(1)) > 0, out
    memory = re.findall(r"seat (\d): (\d+) MB", out)
    assert [seat for seat, _ in memory] == ["0", "1", "2", "3"], out
    assert all(int(mb) > 0 for _, mb in memory)


@pytest.mark.slow
def test_one_hand_direct_and_through_a_relay() -> None:
    run = _run("bench_relay.py", "--hands", "1", "--pings", "20")
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    for name in ("direct", "relay "):
        rtt = re.search(rf"frame round trip {name}: median {NUMBER} ms, p99 {NUMBER} ms "
                        r"over 20", out)
        assert rtt is not None, out
        assert 0 < float(rtt.group(1)) <= float(rtt.group(2))
        match = re.search(rf"round 1 {name}: first card {NUMBER} s; move latency over (\d+) "
                          rf"moves: median {NUMBER} ms, p99 {NUMBER} ms", out)
        assert match is not None, out
        first, moves, median, p99 = (float(g) for g in match.groups())
        assert 0 < first < 120 and moves > 0 and 0 < median <= p99


@pytest.mark.parametrize("script, args, message", [
    ("bench_net.py", ["--hands", "0"], "--hands must be at least 1"),
    ("bench_relay.py", ["--pings", "0"], "--pings must be at least 1"),
])
def test_bad_settings_are_a_usage_error(script: str, args: list[str], message: str) -> None:
    run = _run(script, *args, timeout=60)
    assert run.returncode == 2 and message in run.stderr, run.stdout + run.stderr
