"""Canonical msgpack: one byte string for one value, so hashes and signatures are well defined.

Allowed values: None, bool, int (-2**63 .. 2**64-1), bytes, str (UTF-8), list/tuple, and dict with
str keys. Maps are written with keys sorted by their UTF-8 bytes; integers and lengths use the
shortest msgpack form (what msgpack itself does); floats, extension types and non-str keys are
refused. :func:`decode` accepts only bytes that re-encode to themselves.

Decoding is bounded (the protocol's limits, :data:`LIMITS`): a ``str`` of at most
:data:`MAX_STR` bytes, a ``bin`` of at most :data:`MAX_BIN`, an array of at most
:data:`MAX_ARRAY` items, a map of at most :data:`MAX_MAP` entries (checked by msgpack itself on
the length header, before it allocates), containers nested at most :data:`MAX_DEPTH` deep and at
most :data:`MAX_ITEMS` values in all (checked by an iterative walk before anything recurses).
A value over a limit raises :class:`OversizedError` (code ``OVERSIZED``); any other refusal is an
:class:`EncodingError` (code ``MALFORMED``).
"""

from __future__ import annotations

from typing import Any

import msgpack

MAX_DEPTH = 16
"""A container at a depth above this is refused (the top value is at depth 1)."""
MAX_ARRAY = 1024
MAX_MAP = 256
MAX_STR = 4096
MAX_BIN = 65536
MAX_ITEMS = 65536
"""Values in one decoded value, counting every container, key and scalar once."""
LIMITS: dict[str, int] = {
    "depth": MAX_DEPTH,
    "array": MAX_ARRAY,
    "map": MAX_MAP,
    "str": MAX_STR,
    "bin": MAX_BIN,
    "items": MAX_ITEMS,
}


class EncodingError(ValueError):
    """A value cannot be encoded canonically, or bytes are not a canonical encoding."""

    code = "MALFORMED"


class OversizedError(EncodingError):
    """Bytes that exceed one of the decoding limits (depth, lengths, item count)."""

    code = "OVERSIZED"


def _canon(obj: Any) -> Any:
    """``obj`` with every map's keys in canonical order; raises for what cannot be encoded.
    Lists of exact ``bytes`` and ``str`` (decks, proofs) take a short path; anything else,
    subclasses included, the general one."""
    t = type(obj)
    if t is bytes or t is str:
        return obj
    if t is list or t is tuple:
        out = []
        for x in obj:
            tx = type(x)
            out.append(x if tx is bytes or tx is str else _canon(x))
        return out
    return _canon_any(obj)


def _canon_any(obj: Any) -> Any:
    if obj is None or isinstance(obj, bool | str | bytes):
        return obj
    if isinstance(obj, int):
        if not -(2**63) <= obj < 2**64:
            raise EncodingError("integer out of range")
        return obj
    if isinstance(obj, list | tuple):
        return [_canon(x) for x in obj]
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not isinstance(k, str):
                raise EncodingError("map keys must be strings")
            items.append((k.encode("utf-8"), k, _canon(v)))
        items.sort(key=lambda t: t[0])
        return {k: v for _, k, v in items}
    raise EncodingError(f"cannot encode a value of type {type(obj).__name__}")


def encode(obj: Any) -> bytes:
    """The canonical msgpack encoding of ``obj``."""
    try:
        return msgpack.packb(_canon(obj), use_bin_type=True)
    except RecursionError:
        raise OversizedError("value nested too deeply to encode") from None
    except UnicodeEncodeError:  # a str holding a lone surrogate (e.g. from surrogateescape)
        raise EncodingError("text that is not valid Unicode has no UTF-8 encoding") from None


def check_shape(obj: Any) -> None:
    """Refuse a decoded value nested deeper than :data:`MAX_DEPTH` or holding more than
    :data:`MAX_ITEMS` values, or holding a type that is not allowed; iterative, so any input
    is safe."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    items = 0
    while stack:
        value, depth = stack.pop()
        items += 1
        if items > MAX_ITEMS:
            raise OversizedError(f"more than {MAX_ITEMS} values")
        if isinstance(value, list | dict) and depth > MAX_DEPTH:
            raise OversizedError(f"containers nested deeper than {MAX_DEPTH}")
        if isinstance(value, list):
            stack.extend((x, depth + 1) for x in value)
        elif isinstance(value, dict):
            items += len(value)  # the keys (str, checked by msgpack's strict_map_key)
            stack.extend((x, depth + 1) for x in value.values())
        elif not (value is None or isinstance(value, bool | int | str | bytes)):
            raise EncodingError(f"a value of type {type(value).__name__} is not allowed")


class _Budget:
    """The values msgpack has built so far, counted by its container hooks (each container's
    items, a map's keys too): past :data:`MAX_ITEMS` the decoding stops at once. Without it a
    frame of a million empty maps would become a million objects (about 70 MiB for 1 MiB)
    before :func:`check_shape` could refuse it; with it, the same frame stops after
    ``MAX_ITEMS`` of them. The count leaves out the outermost value, so it never refuses what
    :func:`check_shape` would take."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_ITEMS

    def _spend(self, count: int) -> None:
        self.left -= count
        if self.left < 0:
            raise OversizedError(f"more than {MAX_ITEMS} values")

    def array(self, value: list) -> list:
        self._spend(len(value))
        return value

    def map(self, value: dict) -> dict:
        self._spend(2 * len(value))
        return value


def decode(data: bytes, *, max_size: int | None = None) -> Any:
    """Decode canonical msgpack within the limits; raise :class:`OversizedError` for a value
    over a limit and :class:`EncodingError` for anything else that is not canonical."""
    if not isinstance(data, bytes | bytearray):
        raise EncodingError("expected bytes")
    if max_size is not None and len(data) > max_size:
        raise OversizedError("encoding larger than allowed")
    budget = _Budget()
    try:
        obj = msgpack.unpackb(
            bytes(data),
            raw=False,
            strict_map_key=True,
            use_list=True,
            unicode_errors="strict",
            max_str_len=MAX_STR,
            max_bin_len=MAX_BIN,
            max_array_len=MAX_ARRAY,
            max_map_len=MAX_MAP,
            list_hook=budget.array,
            object_hook=budget.map,
        )
    except OversizedError:
        raise
    except msgpack.StackError:
        raise OversizedError(f"containers nested deeper than {MAX_DEPTH}") from None
    except Exception as exc:  # msgpack raises several unrelated types
        if "exceeds max_" in str(exc):
            raise OversizedError(f"a length over the limits: {exc}") from None
        raise EncodingError(f"not valid msgpack: {exc}") from None
    check_shape(obj)
    if encode(obj) != bytes(data):
        raise EncodingError("not the canonical encoding")
    return obj
