"""The compiled arithmetic on PUBLIC elements of the group (``_edwards.c``), when it is built.

:mod:`dernier_p2p.deck.group` uses it for batch decoding and multi-scalar multiplication with
public scalars (verifiers); everything with a secret scalar stays on libsodium. The module is
used when it was built (``DERNIER_COMPILE=1``, see setup.py), was built from the source beside
it (its SHA-256 is compiled in), and ``DERNIER_PURE_GROUP`` is unset or ``0`` at import;
otherwise :data:`AVAILABLE` is False and the deck runs on PyNaCl alone. :data:`PATH` says which.

Elements that passed the full check (or came out of arithmetic on such elements) are cached with
their affine coordinates, so an element is decoded and checked once however often it is used.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

PURE_ENV = "DERNIER_PURE_GROUP"
ORDER = 2**252 + 27742317777372353535851937790883648493
IDENTITY = b"\x01" + b"\x00" * 31
CACHE_LIMIT = 1 << 17
"""Cached elements at most; the cache starts afresh when it is full."""


def _load() -> tuple[ModuleType | None, str]:
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return None, f"PyNaCl ({PURE_ENV} set)"
    try:
        from dernier_p2p.deck import _edwards
    except ImportError:
        return None, "PyNaCl (the compiled group arithmetic is not built)"
    source = Path(__file__).with_name("_edwards.c")
    if source.exists():
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
        if digest != getattr(_edwards, "SOURCE_SHA256", ""):
            return None, "PyNaCl (the compiled group arithmetic is older than its source)"
    return _edwards, "compiled (public values; secrets on libsodium)"


_ext, PATH = _load()
AVAILABLE = _ext is not None
"""True when the compiled arithmetic runs."""

_IDENTITY_XY = bytes(32) + IDENTITY
_cache: dict[bytes, bytes] = {}


def _remember(enc: bytes, xy: bytes) -> None:
    if len(_cache) >= CACHE_LIMIT:
        _cache.clear()
    _cache[enc] = xy


def check(encodings: Sequence[bytes]) -> int:
    """Index of the first of ``encodings`` (32-byte strings) that is not a canonical encoding of
    an element of the prime-order subgroup other than the identity; -1 when all are."""
    assert _ext is not None
    todo = []
    for i, enc in enumerate(encodings):
        if not isinstance(enc, bytes) or len(enc) != 32:
            raise ValueError("an element is exactly 32 bytes")
        if enc == IDENTITY:
            todo.append(i)
            break
        if enc not in _cache:
            todo.append(i)
    if not todo:
        return -1
    blob = b"".join(encodings[i] for i in todo)
    bad, xy = _ext.decode(blob)
    upto = len(todo) if bad < 0 else bad
    for k in range(upto):
        _remember(encodings[todo[k]], xy[64 * k : 64 * k + 64])
    return -1 if bad < 0 else todo[bad]


def coordinates(points: Sequence[bytes]) -> bytes:
    """The affine coordinates of ``points`` (elements or the identity), concatenated; raise
    ValueError naming the first that is not one."""
    assert _ext is not None
    out: list[bytes | None] = []
    missing = []
    for i, p in enumerate(points):
        xy = _cache.get(p)
        if xy is None:
            if p == IDENTITY:
                xy = _IDENTITY_XY
            elif not isinstance(p, bytes) or len(p) != 32:
                raise ValueError("an element is exactly 32 bytes")
            else:
                missing.append(i)
        out.append(xy)
    if missing:
        bad, xys = _ext.decode(b"".join(points[i] for i in missing))
        if bad >= 0:
            raise ValueError(f"not an element of the group: {points[missing[bad]].hex()}")
        for k, i in enumerate(missing):
            out[i] = xys[64 * k : 64 * k + 64]
            _remember(points[i], xys[64 * k : 64 * k + 64])
    return b"".join(out)  # type: ignore[arg-type]


def msm(scalars: Sequence[int], points: Sequence[bytes], algo: int = 0) -> bytes:
    """The sum of ``k_i * P_i`` for PUBLIC scalars (variable time), as an encoding.

    ``algo``: 0 chooses (Straus below 190 terms, Pippenger above), 1 Straus, 2 Pippenger."""
    assert _ext is not None
    ks, ps = [], []
    for k, p in zip(scalars, points, strict=True):
        k %= ORDER
        if k and p != IDENTITY:
            ks.append(k.to_bytes(32, "little"))
            ps.append(p)
    if not ks:
        return IDENTITY
    out = _ext.msm(b"".join(ks), coordinates(ps), algo)
    enc = out[:32]
    if enc not in _cache:
        _remember(enc, out[32:])
    return enc


def clear_cache() -> None:
    """Forget every cached element (tests of the checks themselves)."""
    _cache.clear()
