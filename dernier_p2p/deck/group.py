"""The prime-order group behind the deck: the Ed25519 subgroup of order l through PyNaCl.

Elements are their canonical 32-byte encodings (``bytes``); scalars are Python ints mod ``ORDER``.
Everything received from another peer goes through :func:`decode`, which rejects non-canonical
encodings, points off the curve, points of small order and points outside the prime-order
subgroup. The identity element never travels on the wire (``decode`` rejects it) but may appear
inside a computation (``mul`` by zero, ``sub`` of equal points).

Two functions take PUBLIC values only: :func:`decode_many` (received elements) and
:func:`public_multi_mul` (multi-scalar multiplication with public scalars, for verifiers). When
the compiled arithmetic is built (:mod:`dernier_p2p.deck.edwards`; :data:`FAST`) they run on it,
with the same decisions as PyNaCl's; otherwise, and for every secret scalar, PyNaCl runs.
"""

from __future__ import annotations

import hashlib

from nacl import bindings as _na
from nacl.exceptions import RuntimeError as _NaclRuntimeError

from dernier_p2p.deck import edwards as _ed

ORDER = 2**252 + 27742317777372353535851937790883648493
"""The prime order l of the group."""

ELEMENT_SIZE = 32
SCALAR_SIZE = 32
IDENTITY = b"\x01" + b"\x00" * 31
GENERATOR = _na.crypto_scalarmult_ed25519_base_noclamp((1).to_bytes(32, "little"))

Element = bytes

FAST = _ed.AVAILABLE
"""True when :func:`decode_many` and :func:`public_multi_mul` run on the compiled arithmetic
(verifiers then check their equations in one batch: dernier_p2p/deck/shuffle.py)."""
PATH = _ed.PATH
"""Which group arithmetic runs, for ``dernier --version``."""


class InvalidElement(ValueError):
    """A received byte string is not a canonical element of the prime-order group."""


class InvalidScalar(ValueError):
    """A received byte string is not a canonical scalar (an integer below ``ORDER``)."""


def _sb(k: int) -> bytes:
    return (k % ORDER).to_bytes(SCALAR_SIZE, "little")


def decode(data: bytes) -> Element:
    """Validate a received element; raise :class:`InvalidElement` unless it is canonical,
    on the curve, not the identity and in the prime-order subgroup."""
    if not isinstance(data, bytes | bytearray) or len(data) != ELEMENT_SIZE:
        raise InvalidElement("an element is exactly 32 bytes")
    data = bytes(data)
    valid = _ed.check([data]) < 0 if FAST else _na.crypto_core_ed25519_is_valid_point(data)
    if not valid:
        raise InvalidElement("not a canonical element of the prime-order subgroup")
    return data


def decode_many(items: list | tuple) -> tuple[Element, ...]:
    """:func:`decode` of every item, in order: the same elements, or the error :func:`decode`
    raises for the first item it refuses."""
    if not FAST:
        return tuple(decode(x) for x in items)
    out = []
    for x in items:
        if not isinstance(x, bytes | bytearray) or len(x) != ELEMENT_SIZE:
            break
        out.append(bytes(x))
    bad = _ed.check(out)
    if bad >= 0:
        raise InvalidElement("not a canonical element of the prime-order subgroup")
    if len(out) < len(items):
        raise InvalidElement("an element is exactly 32 bytes")
    return tuple(out)


def encode(p: Element) -> bytes:
    """The canonical encoding of an element (elements are already their encoding)."""
    return p


def decode_scalar(data: bytes) -> int:
    """Validate a received scalar: 32 little-endian bytes encoding an integer below ``ORDER``."""
    if not isinstance(data, bytes | bytearray) or len(data) != SCALAR_SIZE:
        raise InvalidScalar("a scalar is exactly 32 bytes")
    k = int.from_bytes(data, "little")
    if k >= ORDER:
        raise InvalidScalar("scalar is not reduced below the group order")
    return k


def encode_scalar(k: int) -> bytes:
    """32 little-endian bytes of ``k mod ORDER``."""
    return _sb(k)


def add(a: Element, b: Element) -> Element:
    """a + b."""
    return _na.crypto_core_ed25519_add(a, b)


def sub(a: Element, b: Element) -> Element:
    """a - b."""
    return _na.crypto_core_ed25519_sub(a, b)


def neg(a: Element) -> Element:
    """-a."""
    return _na.crypto_core_ed25519_sub(IDENTITY, a)


def mul(k: int, p: Element) -> Element:
    """k * p for any scalar k (reduced mod ORDER); zero or the identity give the identity.

    Raises :class:`InvalidElement` when libsodium refuses ``p`` (not a valid element)."""
    k %= ORDER
    if k == 0 or p == IDENTITY:
        return IDENTITY
    if k == 1:
        return p
    try:
        return _na.crypto_scalarmult_ed25519_noclamp(_sb(k), p)
    except _NaclRuntimeError:
        # libsodium refuses both an identity result and an invalid input point: tell them apart
        if not _na.crypto_core_ed25519_is_valid_point(p):
            raise InvalidElement("scalar multiplication of an invalid element") from None
        return IDENTITY


def base_mul(k: int) -> Element:
    """k * G for the fixed generator G."""
    k %= ORDER
    if k == 0:
        return IDENTITY
    return _na.crypto_scalarmult_ed25519_base_noclamp(_sb(k))


def multi_mul(scalars: list[int], points: list[Element]) -> Element:
    """The sum of k_i * P_i."""
    acc = IDENTITY
    for k, p in zip(scalars, points, strict=True):
        acc = add(acc, mul(k, p))
    return acc


def public_multi_mul(scalars: list[int], points: list[Element]) -> Element:
    """The sum of k_i * P_i for PUBLIC scalars only (proof responses, challenges, verifier
    weights): on the compiled arithmetic it runs in variable time. The points must be elements
    or the identity (:class:`InvalidElement` otherwise)."""
    if not FAST:
        return multi_mul(scalars, points)
    try:
        return _ed.msm(scalars, points)
    except ValueError:
        raise InvalidElement("scalar multiplication of an invalid element") from None


def sum_elements(points: list[Element]) -> Element:
    """The sum of the points (the identity for an empty list)."""
    acc = IDENTITY
    for p in points:
        acc = add(acc, p)
    return acc


def hash_to_element(label: bytes, data: bytes) -> Element:
    """Map ``(label, data)`` to an element with unknown discrete log.

    ``r = SHA-512(len(label) as 1 byte || label || data)[:32]``, then libsodium's
    ``crypto_core_ed25519_from_uniform(r)`` (Elligator 2, then multiplication by the cofactor 8).
    """
    if len(label) > 255:
        raise ValueError("label longer than 255 bytes")
    r = hashlib.sha512(bytes([len(label)]) + label + data).digest()[:32]
    return _na.crypto_core_ed25519_from_uniform(r)
