"""The lab's NAT kinds (:mod:`.nat`) show their defining behaviour to plain socket probes.

A home machine connects from one port to two outside machines, which tell it the address and
port they saw (the mapping); then a third outside machine, never contacted, and one of the
two, from a new port, try to connect to that mapped port (the filtering).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .nat import NatLab

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
PORT = 47650
ECHO = 9000


def _probe(lab: NatLab, ns: str, *args: str) -> list[str]:
    return lab.cmd(ns, sys.executable, "-m", "tests.netlab.nat_probe", *args)


def _lines(out: Path, word: str, count: int, proc: subprocess.Popen[bytes]) -> list[str]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        lines = [ln.split()[1] for ln in out.read_text().splitlines() if ln.startswith(word)]
        if len(lines) >= count or proc.poll() is not None:
            return lines
        time.sleep(0.05)
    raise AssertionError(out.read_text())


def _behaviour(lab: NatLab, tmp_path: Path) -> tuple[list[str], str, str]:
    """The mappings seen by two outside machines of the home behind router ``X``, then what a
    contacted machine (from a new port) and a never-contacted one get at the first mapping."""
    router = lab.rtr["X"]
    first, stranger = lab.others
    echo_out, home_out = tmp_path / "echo.out", tmp_path / "home.out"
    echo = lab.spawn(lab.wan, echo_out, *_probe(lab, lab.wan, "echo", lab.wan_ip, first,
                                                 str(ECHO))[4:], env={"PYTHONPATH": str(ROOT)})
    _lines(echo_out, "ECHOING", 0, echo)
    time.sleep(0.2)
    home = lab.spawn(router.home_ns, home_out, *_probe(
        lab, router.home_ns, "home", str(PORT), f"{lab.wan_ip}:{ECHO}", f"{first}:{ECHO}")[4:],
        env={"PYTHONPATH": str(ROOT)})
    mapped = _lines(home_out, "MAPPED", 2, home)
    assert len(mapped) == 2, home_out.read_text()

    def knock(source: str) -> str:
        done = subprocess.run(_probe(lab, lab.wan, "knock", source, mapped[0]),
                              capture_output=True, text=True, timeout=30,
                              env={"PYTHONPATH": str(ROOT)})
        return done.stdout.strip()

    return mapped, knock(first), knock(stranger)


@pytest.mark.parametrize("kind, same_port, contacted, stranger", [
    ("full-cone", True, "IN", "IN"),
    ("address-restricted", True, "IN", "SILENT"),
    ("port-restricted", True, "SILENT", "SILENT"),
    ("symmetric", False, "SILENT", "SILENT"),
    ("cgn", True, "SILENT", "SILENT"),
    ("plain", True, "REFUSED", "REFUSED"),
])
def test_each_nat_kind_maps_and_filters_as_named(
    natlab: Callable[[dict[str, str]], NatLab], tmp_path: Path, kind: str, same_port: bool,
    contacted: str, stranger: str,
) -> None:
    lab = natlab({"X": kind})
    mapped, by_contacted, by_stranger = _behaviour(lab, tmp_path)
    addresses = {m.rsplit(":", 1)[0] for m in mapped}
    assert addresses == {lab.rtr["X"].wan_ip}  # the Internet sees the (outer) router
    ports = {m.rsplit(":", 1)[1] for m in mapped}
    assert (ports == {str(PORT)}) if same_port else len(ports) == 2, mapped
    assert (by_contacted, by_stranger) == (contacted, stranger)
