"""Build: compile the rules engine's hot modules with Cython, when asked (``DERNIER_COMPILE=1``)
and a C compiler is at hand.

A plain ``pip install .`` compiles nothing and takes seconds: at a table of people the compiled
engine makes no difference anyone notices (docs/PERFORMANCE.md), while compiling adds most of a
minute to an install on a small machine. Simulations, benchmarks and the search bot's thinking
gain from it: ``DERNIER_COMPILE=1 pip install .`` (the test command does).

The modules are compiled from their Python sources unchanged; each compiled source's SHA-256
goes into dernier_p2p/rules/compiled.json, which dernier_p2p/rules/accel.py checks before it
lets the compiled modules run. Every build compiles afresh (no reuse of an earlier build's
output) and records only the modules compiled in that build, from the bytes it compiled. A
module that fails to compile is left out (the extensions are optional) and the engine runs
from its Python sources. DERNIER_PURE_PYTHON=1 at build time skips compiling even when asked.

The same build compiles the deck's group arithmetic on public values, dernier_p2p/deck/_edwards.c
(plain C, no Cython needed); without it the deck runs on PyNaCl alone (docs/PERFORMANCE.md).
"""

from __future__ import annotations

import hashlib
import json
import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

PACKAGE_DIR = os.path.join("dernier_p2p", "rules")
# the deck's group arithmetic on public values (dernier_p2p/deck/edwards.py loads it)
EDWARDS_SOURCE = os.path.join("dernier_p2p", "deck", "_edwards.c")
# the same list as dernier_p2p.rules.accel.MODULES (setup.py must not import the package;
# tests/rules/test_accel.py checks that the two agree)
MODULES = ("engine", "flow", "hands", "legal", "scoring", "seat_moves", "simulate")
RECORD = "compiled.json"
# module -> SHA-256 of the source bytes Cython translated in this build
TRANSLATED: dict[str, str] = {}


class BuildAndRecord(build_ext):
    """build_ext that compiles every module afresh and records which ones it compiled."""

    def run(self) -> None:
        self.force = True  # never keep an earlier build's object files or modules
        self._built: set[str] = set()
        out_dirs = {
            os.path.dirname(self.get_ext_fullpath(ext.name))
            for ext in self.extensions
            if ext.name.rpartition(".")[2] in MODULES
        }
        for ext in self.extensions:  # an old module must not outlive a failed compile
            target = self.get_ext_fullpath(ext.name)
            if os.path.exists(target):
                os.remove(target)
        for out_dir in out_dirs:
            if os.path.exists(os.path.join(out_dir, RECORD)):
                os.remove(os.path.join(out_dir, RECORD))
        super().run()
        record = {
            name: TRANSLATED[name] for name in sorted(self._built) if name in TRANSLATED
        }
        for out_dir in out_dirs:
            if record:
                with open(os.path.join(out_dir, RECORD), "w", encoding="utf-8") as f:
                    json.dump(record, f, indent=1, sort_keys=True)

    def build_extension(self, ext) -> None:  # noqa: ANN001
        super().build_extension(ext)  # raises when it fails (optional: the caller goes on)
        self._built.add(ext.name.rpartition(".")[2])


def edwards_extension() -> Extension:
    """The deck's C group arithmetic (plain C, a couple of seconds to compile); the source's
    SHA-256 is compiled in, and dernier_p2p/deck/edwards.py uses the module only when it matches
    the source beside it."""
    with open(EDWARDS_SOURCE, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return Extension(
        "dernier_p2p.deck._edwards",
        sources=[EDWARDS_SOURCE],
        define_macros=[("EDWARDS_SOURCE_SHA256", f'"{digest}"')],
        extra_compile_args=["-O2"],
        optional=True,
    )


def extensions() -> list:
    if os.environ.get("DERNIER_PURE_PYTHON", "") not in ("", "0"):
        return []
    if os.environ.get("DERNIER_COMPILE", "") in ("", "0"):
        return []  # a plain install stays quick: compiling is asked for
    return [edwards_extension(), *rules_extensions()]


def rules_extensions() -> list:
    try:
        from Cython.Build import cythonize
    except ImportError:
        return []
    sources = []
    for name in MODULES:
        path = os.path.join(PACKAGE_DIR, name + ".py")
        with open(path, "rb") as f:
            TRANSLATED[name] = hashlib.sha256(f.read()).hexdigest()
        sources.append(path)
    exts = cythonize(
        sources,
        # annotations stay hints: the engine checks its inputs itself and raises IllegalMove
        compiler_directives={"language_level": 3, "annotation_typing": False},
        build_dir=os.path.join("build", "cython"),
        force=True,  # translate the sources as they are now, whatever their timestamps
        quiet=True,
    )
    for ext in exts:
        ext.optional = True
    return exts


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildAndRecord})
