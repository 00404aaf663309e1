"""The compiled and the pure-Python builds of the engine: which one runs, and that they agree."""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dernier_p2p import rules
from dernier_p2p.rules import accel

# Plays seeded random matches of every variant through one build and prints a digest of every
# state and event, and of the error each of a few illegal moves raised.
TRACE = r"""
import hashlib, random, sys
from dernier_p2p import rules
from dernier_p2p.rules import simulate
from dernier_p2p.rules.moves import Play
from dernier_p2p.rules.state import PLAYED, RULES


def fields(state):
    out = list(state)
    out[RULES] = None
    node, played = out[PLAYED], []
    while node is not None:  # a linked list: flattened, as a deep repr would overflow
        played.append(node[:2])
        node = node[2]
    out[PLAYED] = played
    return out


digest = hashlib.sha256()
for variant in ("dernier", "originale", "moderno", "standard"):
    for players in (2, 3, 5):
        for seed in range(int(sys.argv[1])):
            rule_set = rules.get_variant(variant, match=rules.MatchFormat("hands", 2))
            rng = random.Random(f"{variant}/{players}/{seed}")
            dealer = simulate.Dealer(rule_set, rng.getrandbits(64))
            state = rules.new_match(rule_set, players)
            while not state.match_over:
                if state.chance is not None:
                    move = dealer.chance_move(state)
                else:
                    seat = rules.to_act(state)
                    if rng.random() < 0.3:  # someone else tries: a jump-in, a catch, a declaration
                        seat = rng.randrange(players)
                    view = dealer.view(state, seat)
                    legal = rules.legal_moves(state, seat, view)
                    if rng.random() < 0.02 and view:  # a play that may well be illegal
                        slot = rng.choice(sorted(view))
                        legal = legal + [Play(seat, slot, view[slot], declare=rng.random() < 0.5)]
                    if not legal:
                        continue
                    plays = [m for m in legal if m.__class__ is Play]
                    move = rng.choice(plays if plays and rng.random() < 0.9 else legal)
                try:
                    state, events = rules.apply(state, move)
                except rules.IllegalMove as e:
                    digest.update(f"illegal {e}".encode())
                    continue
                digest.update(repr((fields(state), events)).encode())
print(rules.BUILD)
print(digest.hexdigest())
"""


def _trace(pure: bool, seeds: int) -> tuple[str, str]:
    env = dict(os.environ)
    env.pop(accel.PURE_ENV, None)
    if pure:
        env[accel.PURE_ENV] = "1"
    out = subprocess.run(
        [sys.executable, "-c", TRACE, str(seeds)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout.split("\n")
    return out[0], out[1]


def test_the_build_in_use_is_the_one_reported() -> None:
    for name in accel.MODULES:
        path = importlib.import_module(f"dernier_p2p.rules.{name}").__file__
        compiled = path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
        assert compiled == accel.COMPILED, (name, path, rules.BUILD)
    assert rules.BUILD.startswith("compiled" if accel.COMPILED else "pure Python")


@pytest.mark.slow
def test_the_compiled_and_the_pure_builds_play_the_same_matches() -> None:
    if not accel.COMPILED:
        pytest.skip(f"only one build here: {rules.BUILD}")
    pure_build, pure_digest = _trace(True, 15)
    compiled_build, compiled_digest = _trace(False, 15)
    assert pure_build.startswith("pure Python") and compiled_build.startswith("compiled")
    assert compiled_digest == pure_digest


def test_the_trace_tells_matches_apart() -> None:
    # the comparison above would pass vacuously if the digest did not depend on the play
    a = _trace(True, 1)
    b = _trace(True, 2)
    assert a[1] != b[1]


def _fake_build(tmp_path: Path, sources: dict[str, bytes], extensions: bool = True) -> Path:
    for name, text in sources.items():
        (tmp_path / f"{name}.py").write_bytes(text)
        if extensions:
            (tmp_path / f"{name}{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    return tmp_path


def test_compiled_modules_run_only_when_every_source_matches_its_record(tmp_path) -> None:
    sources = {name: f"# {name}\n".encode() for name in accel.MODULES}
    directory = _fake_build(tmp_path, sources)
    record = {name: hashlib.sha256(text).hexdigest() for name, text in sources.items()}
    (directory / accel.RECORD).write_text(json.dumps(record))
    assert accel.compiled_state(str(directory), {}) == (True, "compiled (Cython)")

    use, why = accel.compiled_state(str(directory), {accel.PURE_ENV: "1"})
    assert not use and accel.PURE_ENV in why
    assert accel.compiled_state(str(directory), {accel.PURE_ENV: "0"})[0]

    edited = accel.MODULES[3]
    (directory / f"{edited}.py").write_bytes(b"# edited\n")
    use, why = accel.compiled_state(str(directory), {})
    assert not use and f"{edited}.py changed" in why


def test_a_missing_or_broken_record_or_extension_means_pure_python(tmp_path) -> None:
    sources = {name: b"pass\n" for name in accel.MODULES}
    record = {name: hashlib.sha256(b"pass\n").hexdigest() for name in accel.MODULES}
    (tmp_path / "a").mkdir()
    directory = _fake_build(tmp_path / "a", sources)
    assert accel.compiled_state(str(directory), {})[1] == "pure Python (no compiled modules)"

    (directory / accel.RECORD).write_text("{not json")
    assert not accel.compiled_state(str(directory), {})[0]
    (directory / accel.RECORD).write_text("[1, 2]")
    assert not accel.compiled_state(str(directory), {})[0]

    partial = dict(record)
    del partial[accel.MODULES[0]]
    (directory / accel.RECORD).write_text(json.dumps(partial))
    use, why = accel.compiled_state(str(directory), {})
    assert not use and "was not compiled" in why

    (tmp_path / "b").mkdir()
    bare = _fake_build(tmp_path / "b", sources, extensions=False)
    (bare / accel.RECORD).write_text(json.dumps(record))
    use, why = accel.compiled_state(str(bare), {})
    assert not use and "missing" in why


def test_setup_compiles_the_modules_accel_checks() -> None:
    import ast

    tree = ast.parse((Path(__file__).parents[2] / "setup.py").read_text())
    listed = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "MODULES"
    )
    assert tuple(listed) == accel.MODULES


def _setup_with_cython(monkeypatch) -> dict:
    """setup.py's functions, with ``setup()`` not run and Cython's ``cythonize`` standing in
    (a build-time tool: only what setup.py asks of it is looked at)."""
    import runpy
    import sys
    import types

    import setuptools

    def cythonize(sources, **kwargs):  # noqa: ANN001, ANN202
        return [types.SimpleNamespace(name=src[:-3].replace("/", "."), optional=False)
                for src in sources]

    build = types.ModuleType("Cython.Build")
    build.cythonize = cythonize  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "Cython", types.ModuleType("Cython"))
    monkeypatch.setitem(sys.modules, "Cython.Build", build)
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: None)
    monkeypatch.chdir(Path(__file__).parents[2])
    return runpy.run_path("setup.py")


def test_a_plain_install_compiles_nothing_and_compiling_is_asked_for(monkeypatch) -> None:
    """A newcomer's ``pip install .`` takes seconds (no Cython build, even where Cython is at
    hand); ``DERNIER_COMPILE=1`` asks for the build of every engine module and of the deck's
    group arithmetic (with its source's SHA-256 compiled in), and ``DERNIER_PURE_PYTHON=1``
    refuses it whatever else is set."""
    import hashlib

    setup = _setup_with_cython(monkeypatch)
    monkeypatch.delenv("DERNIER_PURE_PYTHON", raising=False)
    for value in ("", "0"):
        monkeypatch.setenv("DERNIER_COMPILE", value)
        assert setup["extensions"]() == []
    monkeypatch.setenv("DERNIER_COMPILE", "1")
    exts = setup["extensions"]()
    names = sorted(e.name.rpartition(".")[2] for e in exts)
    assert names == sorted([*accel.MODULES, "_edwards"])
    assert all(e.optional for e in exts)  # a module that fails to build is left out
    edwards = next(e for e in exts if e.name == "dernier_p2p.deck._edwards")
    source = Path(__file__).parents[2] / "dernier_p2p" / "deck" / "_edwards.c"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert ("EDWARDS_SOURCE_SHA256", f'"{digest}"') in edwards.define_macros
    monkeypatch.setenv("DERNIER_PURE_PYTHON", "1")
    assert setup["extensions"]() == []


def test_the_sources_finder_claims_only_sources_that_exist(tmp_path, monkeypatch) -> None:
    finder = accel._SourcesFirst()
    monkeypatch.setattr(accel, "_HERE", str(tmp_path))
    name = f"{accel.PACKAGE}.{accel.MODULES[0]}"
    assert finder.find_spec(name, None) is None  # no source here: the usual import decides
    (tmp_path / f"{accel.MODULES[0]}.py").write_text("x = 1\n")
    spec = finder.find_spec(name, None)
    assert spec is not None and spec.origin == str(tmp_path / f"{accel.MODULES[0]}.py")
    assert finder.find_spec(f"{accel.PACKAGE}.cards", None) is None  # not an engine module
    assert finder.find_spec("json", None) is None
