"""The table-of-processes benchmark (benchmarks/bench_table.py) on a small table: real
``dernier host --bot`` and ``dernier join --bot`` processes, the time to the first card."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_two_seat_table_turns_its_first_card() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_table.py"), "--seats", "2",
         "--variant", "dernier", "--runs", "1", "--limit", "120"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    got = re.search(r"run 1: first card turned up (\d+\.\d+) s after the table filled", run.stdout)
    assert got is not None, run.stdout
    assert 0 < float(got.group(1)) < 120
    assert "dernier, 2 processes" in run.stdout and "range" in run.stdout


def test_bad_arguments_are_a_usage_error() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_table.py"), "--seats", "1"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert run.returncode == 2 and "--seats must be at least 2" in run.stderr
