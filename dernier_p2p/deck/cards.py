"""Physical cards as group elements.

Every physical card of a deck is an index ``k`` in ``0 .. N-1`` (the card faces belong to the
rules engine). Card ``k`` of deck ``name`` of size ``N`` is the element

    M_k = hash_to_element(b"dernier-p2p/card", canonical([name, N, k]))

so identical faces (the pairs of ``originale``) are still distinct cards. The deck before any
shuffle is the list of trivial ciphertexts ``(IDENTITY, M_k)``.
"""

from __future__ import annotations

from functools import lru_cache

from dernier_p2p.deck import group as g
from dernier_p2p.deck.elgamal import Ciphertext
from dernier_p2p.deck.errors import DeckError
from dernier_p2p.wire.canonical import encode

CARD_LABEL = b"dernier-p2p/card"

DECK_SIZES: dict[str, int] = {
    "dernier-54": 54,
    "originale-108": 108,
    "standard-108": 108,
    "moderno-112": 112,
}
"""The named physical decks and their sizes."""


class NotACard(DeckError):
    """A decryption gave an element that is no card of the deck."""


def deck_size(name: str) -> int:
    """The number of physical cards of deck ``name``; ``ValueError`` for an unknown name."""
    try:
        return DECK_SIZES[name]
    except KeyError:
        raise ValueError(f"unknown deck {name!r}") from None


def card_element(name: str, k: int) -> bytes:
    """The element M_k encoding physical card ``k`` of deck ``name``."""
    n = deck_size(name)
    if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < n:
        raise ValueError(f"card index {k!r} outside 0..{n - 1}")
    return g.hash_to_element(CARD_LABEL, encode([name, n, k]))


# Keyed by the group's order as well as the deck, so that a group swapped in at run time (the
# simulator's, sim/smallgroup.py) never gets the elements of another.
@lru_cache(maxsize=16)
def _elements(name: str, order: int) -> tuple[bytes, ...]:
    return tuple(card_element(name, k) for k in range(deck_size(name)))


@lru_cache(maxsize=16)
def _lookup(name: str, order: int) -> dict[bytes, int]:
    table = {m: k for k, m in enumerate(_elements(name, order))}
    if len(table) != deck_size(name):  # a collision would be a break of the hash
        raise AssertionError("card elements are not distinct")
    return table


def card_elements(name: str) -> list[bytes]:
    """All card elements of deck ``name``, by index."""
    return list(_elements(name, g.ORDER))


def card_index(name: str, element: bytes, seat: int | None = None) -> int:
    """The index of the card encoded by ``element``; :class:`NotACard` if none."""
    try:
        return _lookup(name, g.ORDER)[element]
    except KeyError:
        raise NotACard("decryption is not a card of the deck", seat) from None


def initial_deck(name: str, indices: list[int] | None = None) -> list[Ciphertext]:
    """The unshuffled deck ``[(IDENTITY, M_k)]`` for all cards, or for ``indices`` in order."""
    elems = _elements(name, g.ORDER)
    if indices is None:
        indices = list(range(len(elems)))
    out = []
    for k in indices:
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < len(elems):
            raise ValueError(f"card index {k!r} outside 0..{len(elems) - 1}")
        out.append((g.IDENTITY, elems[k]))
    return out
