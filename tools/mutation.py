"""Mutation run: mutmut over one source file at a time, against its own package's tests.

    python tools/mutation.py                      # every target below, in order
    python tools/mutation.py deck/group.py rules/legal.py --budget 900 --children 1
    python tools/mutation.py wire/transcript.py --own     # only tests/wire/test_transcript.py

For each target ``PKG/FILE.py`` (or ``PKG/SUB/FILE.py``, tested by ``tests/PKG/SUB``) a
scratch copy of the project (``dernier_p2p``, ``tests``, ``pyproject.toml`` with a
``[tool.mutmut]`` table) is made under ``--workdir`` (default
``build/mutation/<target>``); mutmut mutates only that file and runs, for each mutant, the tests
of ``tests/PKG`` (with ``--own``, of the module's own ``tests/PKG/test_FILE.py`` when there is
one) that reach the mutated function (``-x``; slow-marked tests and the HEAVY whole-table files
of other modules left out unless ``--full``), under ``nice``. A run
interrupted by its ``--budget`` (seconds) leaves the rest "not checked"; running the same
target again resumes where it stopped (``--fresh`` starts over; with ``--only`` too, since the
selection is then passed to mutmut as the exact names of its mutants not checked yet).
``--skip-messages`` marks the mutants not checked yet that only change the text of a raised
message as "skipped" instead of running them (each would cost a run of every test that reaches
its function, and only a test of the message text could notice it). The figures per target
(killed, survived, timeout, no tests, not checked) are printed as a Markdown table and each
surviving mutant's diff is written to ``<workdir>/survivors.txt``. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import time
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "dernier_p2p"
PACKAGES = ("deck", "protocol", "wire")  # every module of these, and EXTRA
EXTRA = ("rules/legal.py", "rules/scoring.py")
FIRST = (  # the checks on untrusted input first, then the rest in name order
    "deck/group.py",
    "deck/tokens.py",
    "deck/proofs.py",
    "protocol/chain.py",
    "protocol/envelope.py",
    "rules/scoring.py",
    "rules/legal.py",
    "deck/shuffle.py",
    "wire/canonical.py",
    "wire/hashing.py",
    "wire/version.py",
    "wire/identity.py",
    "wire/transcript.py",
)


def all_targets() -> list[str]:
    """FIRST, then every other module of PACKAGES (their subpackages too, as
    ``protocol/liveness/seat.py``) and EXTRA (``__init__`` aside)."""
    base = ROOT / PACKAGE
    found = {f.relative_to(base).as_posix() for p in PACKAGES for f in (base / p).rglob("*.py")
             if f.name != "__init__.py"}
    found |= set(EXTRA)
    return [t for t in FIRST if t in found] + sorted(found - set(FIRST))


# Whole-table and property tests that take most of their folder's time (85 % of tests/deck,
# 70 % of tests/protocol): left out unless --full or the target is the module they are about.
HEAVY = {
    "tests/deck/test_table.py": "deck/table.py",
    "tests/deck/test_audit.py": "deck/audit.py",
    "tests/protocol/test_session.py": "protocol/session.py",
    "tests/protocol/test_replay.py": "protocol/replay.py",
    "tests/protocol/test_verify.py": "protocol/verify.py",
    "tests/rules/test_properties.py": "rules/engine.py",
}
# Tests that read the package's source text or its build set-up rather than run it: mutmut's
# copy holds every mutant's text side by side, so they cannot pass over it.
UNFIT = (
    "tests/protocol/test_errors.py::test_every_code_raised_in_the_package_is_documented",
    "tests/rules/test_accel.py",
)
# Module-level caches that let a test which finds them warm skip the mutated function (mutmut
# then does not map the test to it): emptied before each test of a run on that package.
# legal.py keeps Play objects; identity.py keeps parsed public keys (the test modules build
# their keys at import, so without this the key check is reached by almost no test).
CACHES = {
    "rules": ("dernier_p2p.rules.legal", ("_MOVE_CACHE", "_GROUPS", "_PLAIN_CACHE")),
    "wire": ("dernier_p2p.wire.identity", ("_CHECKED",)),
}
CONFTEST = '''"""Mutation runs only: empty {module}'s caches before each test."""
import importlib

import pytest

_MODULE = importlib.import_module("{module}")


@pytest.fixture(autouse=True)
def _cold_caches():
    for name in {names!r}:
        getattr(_MODULE, name).clear()
'''


def conftest(package: str) -> str | None:
    """The conftest.py text that empties ``package``'s caches, if it has any."""
    if package not in CACHES:
        return None
    module, names = CACHES[package]
    return CONFTEST.format(module=module, names=names)


def own_tests(target: str, root: Path = ROOT) -> str:
    """The test file mirroring ``target`` (``tests/PKG/test_FILE.py``), else its folder."""
    folder, _, name = target.rpartition("/")
    own = f"tests/{folder}/test_{name}"
    return own if (root / own).is_file() else f"tests/{folder}"


MUTMUT = str(Path(sys.executable).with_name("mutmut"))


def also(root: Path) -> list[Path]:
    """The other top-level files and folders tests may read (vectors, docs, setup.py...)."""
    skip = {PACKAGE, "tests", "build", "dist", "pyproject.toml"}
    return sorted(p for p in root.iterdir() if not p.name.startswith(".") and p.name not in skip
                  and not p.name.endswith(".egg-info"))


def config_table(target: str, full: bool = False, own: bool = False) -> str:
    tests = "tests/" + target.split("/")[0]
    selection = own_tests(target) if own else "tests/" + target.rpartition("/")[0]
    args = ["-p", "no:cacheprovider", "-m", "not slow"]
    args += [("--deselect=" if "::" in t else "--ignore=") + t for t in UNFIT
             if t.startswith(tests + "/")]
    if not full:
        args += [f"--ignore={f}" for f, mod in HEAVY.items() if f.startswith(tests + "/")
                 and mod != target]
    return (
        "\n[tool.mutmut]\n"
        f'source_paths = ["{PACKAGE}"]\n'
        f'only_mutate = ["{PACKAGE}/{target}"]\n'
        f'pytest_add_cli_args_test_selection = ["{selection}"]\n'
        f"pytest_add_cli_args = {json.dumps(args)}\n"
        f"also_copy = {json.dumps([p.name for p in also(ROOT)])}\n"
        "use_git_change_detection = false\n"
    )


def prepare(target: str, work: Path, fresh: bool, full: bool = False, own: bool = False) -> None:
    """A scratch copy of the project configured for ``target`` (kept to resume unless fresh)."""
    if fresh and work.exists():
        shutil.rmtree(work)
    if (work / "mutants").exists():
        return
    work.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "compiled.json", ".hypothesis")
    for name in (PACKAGE, "tests"):
        shutil.rmtree(work / name, ignore_errors=True)
        shutil.copytree(ROOT / name, work / name, ignore=ignore)
    for src in also(ROOT):
        name = src.name
        if src.is_dir():
            shutil.rmtree(work / name, ignore_errors=True)
            shutil.copytree(src, work / name, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, work / name)
    package = target.split("/")[0]
    text = conftest(package)
    if text is not None:
        (work / "tests" / package / "conftest.py").write_text(text)
    text = (ROOT / "pyproject.toml").read_text()
    (work / "pyproject.toml").write_text(text + config_table(target, full, own))


def run(
    target: str, work: Path, children: int, budget: float | None, only: list[str] = (),
    exact: bool = False,
) -> float:
    """Run mutmut in ``work`` for at most ``budget`` seconds (only the mutants of functions
    whose names hold one of ``only``, if given; the mutants so named if ``exact``); return the
    seconds taken."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["DERNIER_PURE_PYTHON"] = "1"
    cmd = ["nice", "-n", "10", MUTMUT, "run", "--max-children", str(children)]
    cmd += list(only) if exact else [f"*{part}*" for part in only]
    start = time.monotonic()
    with open(work / "run.log", "ab") as log:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=log, stderr=log,
                                start_new_session=True)
        try:
            proc.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 15)  # mutmut and its workers; finished results are on disk
            proc.wait()
    return time.monotonic() - start


def _shape(line: str) -> list[str] | None:
    """The tokens of a source line with every string literal (and None) made one token."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    out = []
    for t in toks:
        if t.type == tokenize.STRING or (t.type == tokenize.NAME and t.string == "None"):
            out.append("<text>")
        elif t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.COMMENT):
            out.append(t.string)
    return out


def message_only(diff: str) -> bool:
    """Whether a mutant only changes the text of a message: its removed and added lines differ
    in string literals alone (or a string replaced by None) inside a raise."""
    old = [x[1:] for x in diff.splitlines() if x.startswith("-") and not x.startswith("---")]
    new = [x[1:] for x in diff.splitlines() if x.startswith("+") and not x.startswith("+++")]
    if len(old) != len(new) or not old:
        return False
    for a, b in zip(old, new, strict=True):
        if "raise " not in a or _shape(a) is None or _shape(a) != _shape(b):
            return False
    return True


SKIPPED = 34  # mutmut's exit code for "skipped"

# Run in the scratch copy with mutmut importable: each selected mutant not checked yet, with its
# diff, as JSON ({name: diff}). ``argv[1:]`` are fnmatch patterns (none: every mutant).
_LISTER = """
import fnmatch, json, sys
from mutmut.__main__ import collect_source_file_mutation_data
from mutmut.mutation.diff_apply import get_diff_for_mutant
mutants, _ = collect_source_file_mutation_data(mutant_names=[])
pats = sys.argv[1:]
out = {}
for m, name, code in mutants:
    if code is None and (not pats or any(fnmatch.fnmatch(name, p) for p in pats)):
        out[name] = get_diff_for_mutant(name, path=m.path)
print(json.dumps(out))
"""


def unchecked(work: Path, only: list[str] = ()) -> dict[str, str]:
    """The mutants of ``work`` not checked yet (of the functions ``only`` names, if given),
    with their diffs; empty before mutmut has generated them."""
    if not (work / "mutants").is_dir():
        return {}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([sys.executable, "-c", _LISTER, *[f"*{part}*" for part in only]],
                         cwd=work, env=env, capture_output=True, text=True)
    return json.loads(res.stdout) if res.returncode == 0 and res.stdout.strip() else {}


def mark_skipped(work: Path, names: set[str]) -> None:
    """Record ``names`` as skipped in mutmut's result files (so no run takes them)."""
    for meta in (work / "mutants").rglob("*.meta"):
        data = json.loads(meta.read_text())
        codes = data.get("exit_code_by_key", {})
        hit = names & codes.keys()
        if hit:
            codes.update(dict.fromkeys(hit, SKIPPED))
            meta.write_text(json.dumps(data, indent=4))


def summarise(target: str, work: Path) -> dict:
    """The counts of mutmut's result files, and the survivors' diffs in survivors.txt."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([MUTMUT, "export-cicd-stats"], cwd=work, env=env, capture_output=True)
    stats_file = work / "mutants" / "mutmut-cicd-stats.json"
    try:
        stats = json.loads(stats_file.read_text())
    except (OSError, ValueError):
        stats = {}
    listing = subprocess.run([MUTMUT, "results", "--all", "true"], cwd=work, env=env,
                             capture_output=True, text=True).stdout
    survivors, not_checked, skipped = [], 0, 0
    for line in listing.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if status == "survived":
            survivors.append(name)
        elif status == "not checked":
            not_checked += 1
        elif status == "skipped":
            skipped += 1
    messages = 0
    with open(work / "survivors.txt", "w") as out:
        for name in survivors:
            diff = subprocess.run([MUTMUT, "show", name], cwd=work, env=env,
                                  capture_output=True, text=True).stdout
            kind = "message" if message_only(diff) else "logic"
            messages += kind == "message"
            out.write(f"## {name} [{kind}]\n{diff}\n")
    stats["not_checked"] = not_checked
    stats["skipped"] = skipped
    stats["messages"] = messages
    stats["target"] = target
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("targets", nargs="*", help="PKG/FILE.py under dernier_p2p (default all)")
    parser.add_argument("--workdir", type=Path, default=ROOT / "build" / "mutation")
    parser.add_argument("--children", type=int, default=1, help="parallel mutants (default 1)")
    parser.add_argument("--budget", type=float, default=None, help="seconds per target")
    parser.add_argument("--fresh", action="store_true", help="discard earlier results")
    parser.add_argument("--summary-only", action="store_true", help="only print the figures")
    parser.add_argument("--full", action="store_true", help="keep the HEAVY tests for all")
    parser.add_argument("--own", action="store_true",
                        help="only the module's own test file tests/PKG/test_FILE.py, if any")
    parser.add_argument("--only", nargs="+", default=[], metavar="PART",
                        help="only the mutants of functions whose names hold one of these")
    parser.add_argument("--skip-messages", action="store_true",
                        help="do not run the mutants that only change a raised message's text")
    args = parser.parse_args()
    targets = args.targets or all_targets()
    for t in targets:
        if not (ROOT / PACKAGE / t).is_file():
            parser.error(f"no such module: {PACKAGE}/{t}")
    print("| module | mutants | killed | survived (message text) | timeout | no tests |"
          " not checked | skipped (message text) | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for target in targets:
        work = args.workdir / target.replace("/", "__")
        took = 0.0
        if not args.summary_only:
            prepare(target, work, args.fresh, args.full, args.own)
            only = args.only
            if args.only or args.skip_messages:
                todo = unchecked(work, args.only)
                if args.skip_messages:
                    mark_skipped(work, {k for k, d in todo.items() if message_only(d)})
                if todo and args.only:  # resume: mutmut reruns every mutant a pattern names
                    only = [k for k, d in todo.items()
                            if not (args.skip_messages and message_only(d))]
            if only or not args.only:
                took = run(target, work, args.children, args.budget, only, exact=only != args.only)
        s = summarise(target, work)
        cells = [target, s.get("total", 0), s.get("killed", 0),
                 f"{s.get('survived', 0)} ({s['messages']})", s.get("timeout", 0),
                 s.get("no_tests", 0), s["not_checked"], s["skipped"], f"{took:.0f}"]
        print("| " + " | ".join(map(str, cells)) + " |", flush=True)


if __name__ == "__main__":
    main()
