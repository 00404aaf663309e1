"""Which build of the engine runs: the compiled modules, or their Python sources.

``pip install`` compiles the engine's hot modules (``MODULES``) from their unchanged Python
sources with Cython when a C compiler is at hand (see setup.py), and records the SHA-256 of
each source it compiled in ``compiled.json`` beside them. At import, the compiled modules are
used only when every recorded hash matches the source beside it; otherwise (no compiler, a
source edited since the build, or ``DERNIER_PURE_PYTHON=1`` in the environment) an import hook
loads the Python sources instead. Both builds are the same program: tests play the same
seeded matches through each and compare every state and event.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys

MODULES = (
    "engine",
    "flow",
    "hands",
    "legal",
    "scoring",
    "seat_moves",
    "simulate",
)
PACKAGE = "dernier_p2p.rules"
RECORD = "compiled.json"
PURE_ENV = "DERNIER_PURE_PYTHON"
_HERE = os.path.dirname(os.path.abspath(__file__))


def source_digest(path: str) -> str:
    """The SHA-256 (hex) of a source file's bytes, as recorded at build time."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _is_compiled(directory: str, name: str) -> bool:
    """Whether a compiled module ``name`` lies in ``directory``."""
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    return any(os.path.exists(os.path.join(directory, name + s)) for s in suffixes)


def compiled_state(directory: str, environ: dict | os._Environ) -> tuple[bool, str]:
    """(use the compiled modules in ``directory``?, a one-line description of the build)."""
    if environ.get(PURE_ENV, "") not in ("", "0"):
        return False, f"pure Python ({PURE_ENV} is set)"
    try:
        with open(os.path.join(directory, RECORD), encoding="utf-8") as f:
            recorded = json.load(f)
    except (OSError, ValueError):
        return False, "pure Python (no compiled modules)"
    if not isinstance(recorded, dict):
        return False, f"pure Python ({RECORD} is not a record of compiled sources)"
    for name in MODULES:
        if name not in recorded:
            return False, f"pure Python ({name} was not compiled)"
        if not _is_compiled(directory, name):
            return False, f"pure Python (the compiled {name} is missing)"
        try:
            digest = source_digest(os.path.join(directory, name + ".py"))
        except OSError:
            return False, f"pure Python (the source of {name} is missing)"
        if digest != recorded[name]:
            return False, f"pure Python ({name}.py changed since it was compiled: reinstall)"
    return True, "compiled (Cython)"


class _SourcesFirst(importlib.abc.MetaPathFinder):
    """Finds the engine modules as Python sources, ahead of their compiled builds."""

    def find_spec(self, fullname, path, target=None):  # noqa: ANN001, ANN201
        package, _, name = fullname.rpartition(".")
        if package != PACKAGE or name not in MODULES:
            return None
        source = os.path.join(_HERE, name + ".py")
        if not os.path.isfile(source):
            return None  # no source to prefer (a zip, a build without sources): usual import
        return importlib.util.spec_from_file_location(fullname, source)


COMPILED, BUILD = compiled_state(_HERE, os.environ)
# only compiled modules can shadow the sources: without any, the usual import finds them
if (
    not COMPILED
    and any(_is_compiled(_HERE, name) for name in MODULES)
    and not any(isinstance(f, _SourcesFirst) for f in sys.meta_path)
):
    sys.meta_path.insert(0, _SourcesFirst())
