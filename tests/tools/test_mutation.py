"""The mutation runner's set-up (the run itself takes hours and is not part of the suite)."""

from __future__ import annotations

import importlib.util
import json
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("mutation", ROOT / "tools" / "mutation.py")
mutation = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutation)


def test_targets_are_every_module_of_deck_protocol_wire_and_legal_and_scoring():
    pkg = ROOT / "dernier_p2p"
    want = {f.relative_to(pkg).as_posix() for p in ("deck", "protocol", "wire")
            for f in (pkg / p).rglob("*.py") if f.name != "__init__.py"}
    assert "protocol/liveness/seat.py" in want and "protocol/node/peer.py" in want
    want |= {"rules/legal.py", "rules/scoring.py"}
    targets = mutation.all_targets()
    assert set(targets) == want and len(targets) == len(want)
    assert targets[:2] == ["deck/group.py", "deck/tokens.py"]


def test_each_target_mutates_only_itself_against_its_own_test_folder(tmp_path):
    (tmp_path / "dernier_p2p").mkdir()
    mutation.prepare("wire/hashing.py", tmp_path / "w", fresh=True)
    conf = tomllib.loads((tmp_path / "w" / "pyproject.toml").read_text())["tool"]["mutmut"]
    assert conf["only_mutate"] == ["dernier_p2p/wire/hashing.py"]
    assert conf["pytest_add_cli_args_test_selection"] == ["tests/wire"]
    assert (tmp_path / "w" / "dernier_p2p" / "wire" / "hashing.py").read_bytes() == (
        ROOT / "dernier_p2p" / "wire" / "hashing.py").read_bytes()
    assert (tmp_path / "w" / "tests" / "wire").is_dir()


def test_heavy_integration_files_are_left_out_except_for_their_own_module():
    def args(target, full=False):
        text = "[x]\n" + mutation.config_table(target, full).split("\n", 2)[2]
        return tomllib.loads(text)["x"]["pytest_add_cli_args"]

    assert "--ignore=tests/deck/test_table.py" in args("deck/group.py")
    assert "--ignore=tests/deck/test_table.py" not in args("deck/table.py")
    assert "--ignore=tests/deck/test_audit.py" in args("deck/table.py")
    assert not [a for a in args("deck/group.py", full=True) if a.startswith("--ignore")]
    assert not [a for a in args("wire/identity.py") if a.startswith("--ignore")]
    assert all(Path(ROOT, f).is_file() for f in mutation.HEAVY)


def test_message_only_mutants_are_told_from_logic_ones():
    def diff(old, new):
        return f"--- a\n+++ b\n@@ -1 +1 @@\n-{old}\n+{new}\n"

    raise_ = '        raise BadProof("token is for another position", seat)'
    assert mutation.message_only(diff(raise_, raise_.replace('"token', '"XXtoken')))
    assert mutation.message_only(diff(raise_, raise_.replace('"token is for another position"',
                                                             "None")))
    assert not mutation.message_only(diff(raise_, raise_.replace("seat)", "None)")))
    assert not mutation.message_only(diff("    if len(label) > 255:", "    if len(label) >= 255:"))
    assert not mutation.message_only(diff('    x = "a"', '    x = "XXaXX"'))  # not a raise


def test_own_runs_a_module_against_its_own_test_file_else_its_folder(tmp_path):
    def selection(target, own):
        text = "[x]\n" + mutation.config_table(target, own=own).split("\n", 2)[2]
        return tomllib.loads(text)["x"]["pytest_add_cli_args_test_selection"]

    assert selection("wire/transcript.py", True) == ["tests/wire/test_transcript.py"]
    assert selection("wire/transcript.py", False) == ["tests/wire"]
    missing = [t for t in mutation.all_targets()
               if not (ROOT / "tests" / t.split("/")[0] / f"test_{t.split('/')[1]}").exists()]
    for target in missing[:1]:  # a module with no test file of its own: its package's folder
        assert selection(target, True) == [f"tests/{target.split('/')[0]}"]
    (tmp_path / "tests" / "deck").mkdir(parents=True)
    assert mutation.own_tests("deck/drbg.py", tmp_path) == "tests/deck"
    (tmp_path / "tests" / "deck" / "test_drbg.py").write_text("")
    assert mutation.own_tests("deck/drbg.py", tmp_path) == "tests/deck/test_drbg.py"


def test_runs_on_rules_and_wire_empty_the_module_caches_before_each_test(tmp_path):
    (tmp_path / "dernier_p2p").mkdir()
    for target, module, names in (("wire/hashing.py", "identity", ["_CHECKED"]),
                                  ("rules/scoring.py", "legal", ["_MOVE_CACHE", "_GROUPS"])):
        mutation.prepare(target, tmp_path / target, fresh=True)
        conftest = tmp_path / target / "tests" / target.split("/")[0] / "conftest.py"
        text = conftest.read_text()
        compile(text, str(conftest), "exec")
        assert module in text and all(repr(n) in text for n in names)
        for name in names:
            assert isinstance(getattr(importlib.import_module(
                f"dernier_p2p.{target.split('/')[0]}.{module}"), name), dict)
    mutation.prepare("deck/group.py", tmp_path / "deck", fresh=True)
    assert not (tmp_path / "deck" / "tests" / "deck" / "conftest.py").exists()


def test_skipped_mutants_are_recorded_as_mutmut_reads_them(tmp_path):
    meta = tmp_path / "mutants" / "dernier_p2p" / "deck" / "table.py.meta"
    meta.parent.mkdir(parents=True)
    codes = {"m.x_a__mutmut_1": None, "m.x_a__mutmut_2": None, "m.x_b__mutmut_1": 1}
    meta.write_text(json.dumps({"exit_code_by_key": codes, "durations_by_key": {}}))
    mutation.mark_skipped(tmp_path, {"m.x_a__mutmut_2", "m.x_c__mutmut_1"})
    data = json.loads(meta.read_text())
    assert data["exit_code_by_key"] == {**codes, "m.x_a__mutmut_2": mutation.SKIPPED}
    assert data["durations_by_key"] == {}
    assert mutation.unchecked(tmp_path / "none") == {}  # nothing generated yet


def test_a_module_of_a_subpackage_runs_against_that_subpackage_s_tests():
    def selection(target, own=False):
        text = "[x]\n" + mutation.config_table(target, own=own).split("\n", 2)[2]
        return tomllib.loads(text)["x"]["pytest_add_cli_args_test_selection"]

    assert selection("protocol/liveness/seat.py") == ["tests/protocol/liveness"]
    assert selection("protocol/liveness/seat.py", own=True) == [
        "tests/protocol/liveness/test_seat.py"]
    assert selection("protocol/chain.py") == ["tests/protocol"]
    assert mutation.own_tests("protocol/liveness/actions.py") in (
        "tests/protocol/liveness/test_actions.py", "tests/protocol/liveness")
