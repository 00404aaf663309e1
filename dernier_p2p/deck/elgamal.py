"""ElGamal over the group: a card is ``(c1, c2) = (r*G, M + r*Y)`` under the joint key ``Y``."""

from __future__ import annotations

from dernier_p2p.deck import group as g
from dernier_p2p.deck.errors import BadElement

Ciphertext = tuple[bytes, bytes]


def encrypt(pk: bytes, m: bytes, r: int) -> Ciphertext:
    """Encrypt element ``m`` under ``pk`` with randomness ``r`` (r = 0 gives ``(O, m)``)."""
    return (g.base_mul(r), g.add(m, g.mul(r, pk)))


def reencrypt(pk: bytes, ct: Ciphertext, r: int) -> Ciphertext:
    """Re-mask ``ct``: add an encryption of the identity with randomness ``r``."""
    return (g.add(ct[0], g.base_mul(r)), g.add(ct[1], g.mul(r, pk)))


def decode_ciphertext(obj: object, seat: int | None = None) -> Ciphertext:
    """Validate a received ciphertext ``[c1, c2]``; raise :class:`BadElement` naming ``seat``."""
    if not isinstance(obj, list | tuple) or len(obj) != 2:
        raise BadElement("a ciphertext is a pair of elements", seat)
    try:
        return (g.decode(obj[0]), g.decode(obj[1]))
    except g.InvalidElement as exc:
        raise BadElement(f"bad ciphertext element: {exc}", seat) from None


def decode_ciphertexts(objs: list, seat: int | None = None) -> list[Ciphertext]:
    """:func:`decode_ciphertext` of every item, in order, the elements checked in one batch:
    the same ciphertexts, or the error it raises for the first item it refuses."""
    shaped = []
    for obj in objs:
        if not isinstance(obj, list | tuple) or len(obj) != 2:
            break
        shaped.append(obj)
    try:
        flat = g.decode_many([x for obj in shaped for x in obj])
    except g.InvalidElement as exc:
        raise BadElement(f"bad ciphertext element: {exc}", seat) from None
    if len(shaped) < len(objs):
        raise BadElement("a ciphertext is a pair of elements", seat)
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(len(shaped))]
