"""Domain-separated hashing of canonical values.

Every hash in the protocol is ``SHA-512(canonical([label, value]))`` (or its first 32 bytes,
:func:`digest`), where ``label`` is a string starting with ``"dernier-p2p/"``. A Fiat-Shamir
challenge is that digest read little-endian and reduced mod the group order.
"""

from __future__ import annotations

import hashlib
from typing import Any

from dernier_p2p.wire.canonical import encode

PREFIX = "dernier-p2p/"


def _check(label: str) -> None:
    if not label.startswith(PREFIX):
        raise ValueError(f"hash label must start with {PREFIX!r}")


def hash512(label: str, value: Any) -> bytes:
    """SHA-512 of the canonical encoding of ``[label, value]``."""
    _check(label)
    return hashlib.sha512(encode([label, value])).digest()


def digest(label: str, value: Any) -> bytes:
    """The first 32 bytes of :func:`hash512`."""
    return hash512(label, value)[:32]


def challenge(label: str, value: Any, order: int) -> int:
    """A Fiat-Shamir challenge: :func:`hash512` read little-endian, reduced mod ``order``."""
    return int.from_bytes(hash512(label, value), "little") % order
