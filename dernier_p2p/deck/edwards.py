"""The compiled arithmetic on PUBLIC elements of the group (``_edwards.c``), when it is built.

:mod:`dernier_p2p.deck.group` uses it for batch decoding and multi-scalar multiplication with
public scalars (verifiers); everything with a secret scalar stays on libsodium. The module is
used when it was built (``DERNIER_COMPILE=1``, see setup.py), was built from the source beside
it (its SHA-256 is compiled in), and ``DERNIER_PURE_GROUP`` is unset or ``0`` at import;
otherwise :data:`AVAILABLE` is False and the deck runs on PyNaCl alone. :data:`PATH` says which.

Elements that passed the full check (or came out of arithmetic on such elements) are cached with
their affine coordinates, so an element is decoded and checked once however often it is used.
The generator, and any element used often in a sum of one or two terms (a seat's key share in
its tokens' proofs), gets a fixed-base table: its multiples ``(j + 1) * 16^i * P``, so that
``s*G - e*X`` needs no doubling.
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
GENERATOR = bytes.fromhex("5866666666666666666666666666666666666666666666666666666666666666")
TABLE_AFTER = 3
"""A point gets a fixed-base table at its third use in a sum of at most two terms."""
TABLE_LIMIT = 64
"""Fixed-base tables kept at most (60 KiB each); they start afresh when full."""
_cache: dict[bytes, bytes] = {}
_tables: dict[bytes, bytes] = {}
_uses: dict[bytes, int] = {}


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


def _fixed_tables(points: list[bytes]) -> tuple[bytes, ...] | None:
    """The fixed-base tables of ``points`` when every one has one, or earns one now (the
    generator at once, another point at its :data:`TABLE_AFTER`-th use in a small sum)."""
    tables = []
    for p in points:
        uses = _uses.get(p, 0) + 1
        if len(_uses) >= CACHE_LIMIT:
            _uses.clear()
        _uses[p] = uses
        table = _tables.get(p)
        if table is None and uses < TABLE_AFTER and p != GENERATOR:
            return None
        tables.append(table)
    for i, p in enumerate(points):
        if tables[i] is None:
            if len(_tables) >= TABLE_LIMIT:
                _tables.clear()
            tables[i] = _tables[p] = _ext.comb_table(coordinates([p]))
    return tuple(tables)


def msm(scalars: Sequence[int], points: Sequence[bytes], algo: int = 0) -> bytes:
    """The sum of ``k_i * P_i`` for PUBLIC scalars (variable time), as an encoding.

    ``algo``: 0 chooses (fixed-base tables for a sum of at most two terms whose points are
    used often, such as a proof's ``s*G - e*X``; Straus below 190 terms, Pippenger above),
    1 Straus, 2 Pippenger, 3 fixed-base tables."""
    assert _ext is not None
    ks, ps = [], []
    for k, p in zip(scalars, points, strict=True):
        k %= ORDER
        if k and p != IDENTITY:
            ks.append(k.to_bytes(32, "little"))
            ps.append(p)
    if not ks:
        return IDENTITY
    tables = None
    if algo == 3 or (algo == 0 and len(ps) <= 2):
        coordinates(ps)  # every point checked before it gets a table
        tables = _fixed_tables(ps)
        if algo == 3 and tables is None:
            tables = tuple(_tables.get(p) or _ext.comb_table(coordinates([p])) for p in ps)
    if tables is not None:
        out = _ext.comb_msm(b"".join(ks), tables)
    else:
        out = _ext.msm(b"".join(ks), coordinates(ps), algo)
    enc = out[:32]
    if enc not in _cache:
        _remember(enc, out[32:])
    return enc


def clear_cache() -> None:
    """Forget every cached element and fixed-base table (tests of the checks themselves)."""
    _cache.clear()
    _tables.clear()
    _uses.clear()
