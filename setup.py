"""Build: compile the rules engine's hot modules with Cython, when a C compiler is at hand.

The modules are compiled from their Python sources unchanged; each compiled source's SHA-256
goes into dernier_p2p/rules/compiled.json, which dernier_p2p/rules/accel.py checks before it
lets the compiled modules run. A module that fails to compile is left out (the extensions are
optional) and the engine runs from its Python sources. DERNIER_PURE_PYTHON=1 at build time
skips compiling.
"""

from __future__ import annotations

import hashlib
import json
import os

from setuptools import setup
from setuptools.command.build_ext import build_ext

PACKAGE_DIR = os.path.join("dernier_p2p", "rules")
# the same list as dernier_p2p.rules.accel.MODULES (setup.py must not import the package)
MODULES = ("engine", "flow", "hands", "legal", "scoring", "seat_moves", "simulate")


class BuildAndRecord(build_ext):
    """build_ext that records which sources were compiled, beside the compiled modules."""

    def run(self) -> None:
        super().run()
        record: dict[str, str] = {}
        out_dir = None
        for ext in self.extensions:
            target = self.get_ext_fullpath(ext.name)
            if not os.path.exists(target):
                continue  # optional: it did not compile
            name = ext.name.rpartition(".")[2]
            with open(os.path.join(PACKAGE_DIR, name + ".py"), "rb") as f:
                record[name] = hashlib.sha256(f.read()).hexdigest()
            out_dir = os.path.dirname(target)
        if out_dir is not None:
            with open(os.path.join(out_dir, "compiled.json"), "w", encoding="utf-8") as f:
                json.dump(record, f, indent=1, sort_keys=True)


def extensions() -> list:
    if os.environ.get("DERNIER_PURE_PYTHON", "") not in ("", "0"):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        return []
    exts = cythonize(
        [os.path.join(PACKAGE_DIR, m + ".py") for m in MODULES],
        # annotations stay hints: the engine checks its inputs itself and raises IllegalMove
        compiler_directives={"language_level": 3, "annotation_typing": False},
        build_dir=os.path.join("build", "cython"),
        quiet=True,
    )
    for ext in exts:
        ext.optional = True
    return exts


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildAndRecord})
