"""The side-by-side benchmark with libTMCG (benchmarks/bench_tmcg.py): it says "skipped" and
exits 0 where libTMCG is not installed, and where it is, times both sides and prints ratios."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "bench_tmcg.py"


def _run(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_without_libtmcg_it_says_skipped_and_exits_0(tmp_path: Path) -> None:
    run = _run("--repeat", "1", "--cards", "4", path=str(tmp_path))  # nothing on PATH
    assert run.returncode == 0, run.stdout + run.stderr
    assert "libTMCG is not installed (no libTMCG-config on PATH): skipped" in run.stdout
    assert "ratio" not in run.stdout


def test_bad_sizes_are_a_usage_error() -> None:
    run = _run("--cards", "52,x")
    assert run.returncode == 2 and "--cards takes sizes separated by commas" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.skipif(shutil.which("libTMCG-config") is None, reason="libTMCG is not installed")
def test_with_libtmcg_both_sides_are_timed_and_compared() -> None:
    run = _run("--repeat", "2", "--cards", "6")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "libTMCG 1." in run.stdout and "2048-bit field, 256-bit subgroup" in run.stdout
    rows = [line.split() for line in run.stdout.splitlines() if line.startswith("    6 ")]
    assert len(rows) == 5  # four steps and the wire size
    for row in rows[:4]:
        ours, theirs, ratio = row[-3], row[-2], float(row[-1])
        assert all(float(x) > 0 for x in (*ours.split("-"), *theirs.split("-")))
        assert ratio > 0
    assert "load average after" in run.stdout
