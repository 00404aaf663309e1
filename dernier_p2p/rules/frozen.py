"""A faster ``__init__`` for the frozen, slotted dataclasses built on every move.

A frozen dataclass's generated ``__init__`` calls ``object.__setattr__(self, name, value)``
for each field, which looks the field's slot up by name every time. ``fast_init`` gives the
class an ``__init__`` with the same parameters and defaults that stores each value through its
slot descriptor directly (about half the time). Equality, hashing, repr, pattern matching
and immutability stay the dataclass's own.
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

T = TypeVar("T")


def fast_init(cls: type[T]) -> type[T]:
    """Replace the ``__init__`` of a frozen ``slots=True`` dataclass without defaults
    factories; returns the class (usable as a decorator above ``@dataclass``)."""
    namespace: dict = {}
    params: list[str] = []
    body: list[str] = []
    for i, f in enumerate(dataclasses.fields(cls)):
        if f.default_factory is not dataclasses.MISSING or not f.init:
            raise TypeError(f"fast_init does not handle field {f.name} of {cls.__name__}")
        namespace[f"_set{i}"] = cls.__dict__[f.name].__set__
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            namespace[f"_default{i}"] = f.default
            params.append(f"{f.name}=_default{i}")
        body.append(f"    _set{i}(self, {f.name})")
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body) + "\n"
    exec(source, namespace)  # noqa: S102 (generated from the field names, as dataclasses does)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = f"Build a {cls.__name__} (fields stored through their slots)."
    cls.__init__ = init  # type: ignore[misc]
    return cls
