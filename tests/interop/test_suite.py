"""The whole conformance suite through this project's adapter, as CI runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_our_adapter_passes_every_case(tmp_path):
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "interop", "--report", str(report)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    data = json.loads(report.read_text())
    failed = [r for r in data["results"] if r["status"] != "passed"]
    assert proc.returncode == 0, (proc.stdout[-2000:], failed[:5])
    assert data["passed"] == data["cases"] >= 150
