"""Canonical msgpack: one byte string for one value, so hashes and signatures are well defined.

Allowed values: None, bool, int (-2**63 .. 2**64-1), bytes, str (UTF-8), list/tuple, and dict with
str keys. Maps are written with keys sorted by their UTF-8 bytes; integers and lengths use the
shortest msgpack form (what msgpack itself does); floats, extension types and non-str keys are
refused. :func:`decode` accepts only bytes that re-encode to themselves.
"""

from __future__ import annotations

from typing import Any

import msgpack


class EncodingError(ValueError):
    """A value cannot be encoded canonically, or bytes are not a canonical encoding."""


def _canon(obj: Any) -> Any:
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
    return msgpack.packb(_canon(obj), use_bin_type=True)


def decode(data: bytes, *, max_size: int | None = None) -> Any:
    """Decode canonical msgpack; raise :class:`EncodingError` for anything else."""
    if not isinstance(data, bytes | bytearray):
        raise EncodingError("expected bytes")
    if max_size is not None and len(data) > max_size:
        raise EncodingError("encoding larger than allowed")
    try:
        obj = msgpack.unpackb(
            bytes(data), raw=False, strict_map_key=True, use_list=True, unicode_errors="strict"
        )
    except Exception as exc:  # msgpack raises several unrelated types
        raise EncodingError(f"not valid msgpack: {exc}") from None
    try:
        again = encode(obj)
    except EncodingError:
        raise
    if again != bytes(data):
        raise EncodingError("not the canonical encoding")
    return obj
