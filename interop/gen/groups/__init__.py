"""The case groups: one module each, with a ``build(bases)`` that adds its cases (through
:func:`interop.gen.forge.add`) from the recorded matches ``bases`` (name -> :class:`Base`).

To add a group: write a module here with ``build``, and append it to :data:`GROUPS`. By default
each case lands in the case file of its PROTOCOL.md section (:data:`interop.gen.output.GROUPS`);
a module that sets ``FILE = ("name", "description")`` writes all its cases to ``cases/name.json``.
"""

from __future__ import annotations

from types import ModuleType

from interop.gen.groups import (
    ambiguity,
    bodies,
    chain,
    cheats,
    deck,
    encoding,
    frames,
    hostchange,
    limits,
    moves,
    record0,
    rules_order,
    session,
    valid,
    versions,
)

GROUPS: list[ModuleType] = [
    valid,
    deck,
    moves,
    hostchange,
    chain,
    record0,
    encoding,
    bodies,
    session,
    cheats,
    frames,
    ambiguity,
    rules_order,
    limits,
    versions,  # last: it adds the matches it signs again as another version
]
