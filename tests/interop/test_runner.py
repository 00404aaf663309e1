"""The runner, with stand-in adapters: verdicts compared, failures counted, exit status."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from interop.cases import Case, adapter_input, load_cases
from interop.runner import judge, run, shown

ROOT = Path(__file__).resolve().parents[2]
FAKE = f"{shlex.quote(sys.executable)} -m tests.interop.fake_adapter"


def _case(expected: dict) -> Case:
    return Case("x", "5.3", "", (), {"frame": "00"}, expected, "g")


def test_judge_compares_result_code_and_seat():
    bad = {"result": "invalid", "code": "BAD_CHAIN", "seat": 0, "index": 3}
    assert judge(_case(bad), {"result": "invalid", "code": "BAD_CHAIN"}).status == "passed"
    assert judge(_case(bad), {"result": "invalid", "code": "FORK"}).status == "failed"
    assert judge(_case(bad), {"result": "valid"}).status == "failed"
    assert judge(_case(bad), {"result": "invalid", "code": "BAD_CHAIN", "seat": 1}).status == (
        "failed"
    )
    assert judge(_case(bad), {"result": "unimplemented"}).status == "unimplemented"
    assert judge(_case({"result": "valid"}), {"result": "valid"}).status == "passed"
    assert judge(_case({"result": "valid"}), {"result": "error"}).status == "failed"


def test_judge_compares_the_match_outcome_when_the_adapter_gives_one():
    end = {"winner": 1, "standings": [1, 0], "scores": [0, 62], "match_points": [0, 0]}
    over = _case({"result": "valid", "outcome": end})
    assert judge(over, {"result": "valid", "outcome": end}).status == "passed"
    assert judge(over, {"result": "valid"}).status == "passed"  # the outcome is optional
    wrong = {**end, "scores": [0, 61]}
    failed = judge(over, {"result": "valid", "outcome": wrong})
    assert failed.status == "failed" and "outcome" in failed.why
    # a match that is not over has no outcome: an adapter that ends it early fails
    assert judge(_case({"result": "valid"}), {"result": "valid", "outcome": end}).status == (
        "failed"
    )


def _small_cases(tmp_path: Path) -> Path:
    """Three frame cases in a case directory of their own."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    tests = [
        {"id": f"f{k}", "section": "4.1", "comment": "", "flags": [], "input": {"frame": h},
         "expected": exp}
        for k, (h, exp) in enumerate([
            ("0000000181", {"result": "valid"}),
            ("ffffffff00", {"result": "invalid", "code": "OVERSIZED", "seat": None}),
            ("00", {"result": "invalid", "code": "MALFORMED", "seat": None}),
        ])
    ]
    (tmp_path / "frames.json").write_text(json.dumps({"group": "frames", "tests": tests}))
    return tmp_path


@pytest.mark.parametrize(
    ("mode", "statuses"),
    [
        ("valid", ["passed", "failed", "failed"]),
        ("invalid-malformed", ["failed", "failed", "passed"]),
        ("unimplemented", ["unimplemented"] * 3),
        ("wrong-id", ["failed", "failed", "failed"]),
        ("crash", ["passed", "failed", "failed"]),
    ],
)
def test_run_with_stand_in_adapters(tmp_path, mode, statuses):
    cases = _small_cases(tmp_path)
    outcomes = run(f"{FAKE} {mode}", cases, cwd=str(ROOT), timeout_s=30)
    assert [o.status for o in outcomes] == statuses
    if mode == "crash":
        assert "adapter exited" in outcomes[1].why and "not running" in outcomes[2].why


def test_cli_exit_status_and_report(tmp_path):
    cases = _small_cases(tmp_path / "cases")
    report = tmp_path / "report.json"

    def cli(*args: str) -> int:
        cmd = [sys.executable, "-m", "interop", "--cases", str(cases), *args]
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=60).returncode

    assert cli("--adapter", f"{FAKE} valid", "--report", str(report)) == 1
    data = json.loads(report.read_text())
    assert (data["cases"], data["passed"], data["failed"]) == (3, 1, 2)
    assert {r["id"]: r["status"] for r in data["results"]}["f0"] == "passed"
    assert cli("--adapter", f"{FAKE} unimplemented") == 1  # nothing was checked
    assert cli("--adapter", f"{FAKE} unimplemented", "--allow-unimplemented") == 0
    assert cli("--adapter", f"{FAKE} valid", "--allow-unimplemented") == 1  # failures still fail


def test_half_an_answer_then_silence_fails_within_the_timeout(tmp_path):
    cases = _small_cases(tmp_path)
    t0 = time.monotonic()
    outcomes = run(f"{FAKE} partial", cases, cwd=str(ROOT), timeout_s=1.0)
    assert time.monotonic() - t0 < 15  # not the adapter's 60 s of silence
    assert [o.status for o in outcomes] == ["failed"] * 3
    assert "no whole answer within 1.0 s" in outcomes[0].why
    assert "not running" in outcomes[1].why


def test_an_adapters_text_reaches_the_terminal_with_its_control_characters_escaped(tmp_path):
    cases = _small_cases(tmp_path / "cases")
    cmd = [sys.executable, "-m", "interop", "--cases", str(cases), "--adapter",
           f"{FAKE} escapes"]
    got = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=60)
    assert got.returncode == 1
    assert b"\x1b" not in got.stdout and b"\x07" not in got.stdout and b"\r" not in got.stdout
    assert b"\\x1b[2J\\x1b]0;owned\\x07\\rdone" in got.stdout


def test_shown_escapes_and_bounds():
    assert shown("a\x1bb\n") == "a\\x1bb\\n"
    assert shown(["x"]) == "['x']"
    assert len(shown("y" * 1000)) == 300


def test_adapter_input_forms():
    cases = {c.id: c for c in load_cases()}
    full = next(c for c in cases.values() if "transcript" in c.input and "prefix" not in
                c.input)
    one = next(c for c in cases.values() if len(c.input.get("next", [])) == 1)
    many = next(c for c in cases.values() if len(c.input.get("next", [])) > 1)
    frame = next(c for c in cases.values() if "frame" in c.input)
    assert set(adapter_input(full)) == {"records"}
    got = adapter_input(one)
    assert set(got) == {"prefix", "next"} and len(got["prefix"]) == one.input["prefix"]
    got = adapter_input(many)
    assert len(got["records"]) == many.input["prefix"] + len(many.input["next"])
    assert isinstance(adapter_input(frame)["frame"], bytes)
