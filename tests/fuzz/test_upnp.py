"""The ``upnp`` fuzz target: a scripted hostile router against the program's UPnP path, in a
network namespace of its own (skipped where one cannot be made: root and unshare needed)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dernier_p2p.fuzz import upnp_target

pytest.importorskip("miniupnpc")
ROOT = Path(__file__).resolve().parents[2]


def _no_namespace() -> str | None:
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("unshare") is None:
        return "needs root on Linux with unshare"
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"unshare --net: {probe.stderr.strip()}"


def test_the_target_refuses_to_run_beside_a_real_network() -> None:
    if upnp_target.isolated():
        pytest.skip("this process already has a namespace of its own")
    target = upnp_target.UpnpTarget()
    with pytest.raises(upnp_target.NotIsolated):
        target.run(target.make(random.Random("0:0")))


def test_cases_change_what_an_honest_router_says() -> None:
    cases = [upnp_target.make(random.Random(f"5:{k}")) for k in range(300)]
    honest = upnp_target.honest(1)
    changed = {key for case in cases for key, reply in case["replies"].items()
               if reply != honest[key]}
    assert {"desc", "GetExternalIPAddress", "AddAnyPortMapping",
            "GetSpecificPortMappingEntry"} <= changed
    assert any(case["stall"] for case in cases)
    assert any(case["devices"] is not None for case in cases)


def test_a_short_run_finds_no_crash_and_reaches_the_checks(tmp_path: Path) -> None:
    reason = _no_namespace()
    if reason is not None:
        pytest.skip(reason)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("DERNIER_FUZZ_NETNS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "dernier_p2p.fuzz", "upnp", "--cases", "200", "--seed", "3",
         "--out", str(tmp_path)], capture_output=True, text=True, env=env, timeout=240,
        cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert "200 cases" in proc.stdout and "0 crashes, 0 hangs" in proc.stdout
    for reason in ("forwards the port", "did not keep the mapping", "outside address"):
        assert reason in proc.stdout, proc.stdout
