"""The chaos run (benchmarks/chaos.py) with a short budget: one match of four peer processes
under random stalls, cuts, kills and restarts ends with one verified transcript that every
surviving seat holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_one_match_survives_the_chaos(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "chaos.py"), "--matches", "1", "--seed", "3",
         "--hands", "1", "--keep", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=400,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 of 1 matches passed" in run.stdout
    assert "match 0: PASS" in run.stdout
