"""Cards: suits, ranks, faces and the four physical decks (index = physical card id)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, StrEnum


class Suit(IntEnum):
    """A suit of the French decks, or a colour of the coloured decks (same values)."""

    YELLOW = 0  # Quadri, diamonds
    RED = 1  # Cuori, hearts
    GREEN = 2  # Fiori, clubs
    BLUE = 3  # Picche, spades


class Rank(StrEnum):
    """Every rank of every deck; number ranks are their digits."""

    N0 = "0"
    N1 = "1"
    N2 = "2"
    N3 = "3"
    N4 = "4"
    N5 = "5"
    N6 = "6"
    N7 = "7"
    N8 = "8"
    N9 = "9"
    N10 = "10"
    ACE = "A"
    JACK = "J"
    QUEEN = "Q"
    KING = "K"
    JOKER = "JOKER"  # dernier's Jolly, originale's Matta
    SKIP = "SKIP"
    REVERSE = "REVERSE"
    DRAW2 = "DRAW2"
    SWAP = "SWAP"
    WILD = "WILD"
    WILD4 = "WILD4"
    ROTATE = "ROTATE"


NUMBER_RANKS: tuple[Rank, ...] = tuple(Rank(str(i)) for i in range(11))
BLACK_RANKS = frozenset({Rank.JOKER, Rank.WILD, Rank.WILD4, Rank.ROTATE})


@dataclass(frozen=True, slots=True)
class Card:
    """A card face. ``suit`` is None for black cards (JOKER, WILD, WILD4, ROTATE)."""

    rank: Rank
    suit: Suit | None
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.rank, Rank):
            raise ValueError(f"not a rank: {self.rank!r}")
        if (self.suit is None) != (self.rank in BLACK_RANKS):
            raise ValueError(f"rank {self.rank.value} and suit {self.suit!r} do not form a card")
        if self.suit is not None and not isinstance(self.suit, Suit):
            raise ValueError(f"not a suit: {self.suit!r}")
        object.__setattr__(self, "_hash", hash((self.rank.value, self.suit)))

    def __hash__(self) -> int:  # cached: cards are hashed on every move
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if other.__class__ is not Card:
            return NotImplemented
        return self.rank is other.rank and self.suit is other.suit  # type: ignore[attr-defined]

    def __str__(self) -> str:
        return self.rank.value if self.suit is None else f"{self.rank.value}{'YRGB'[self.suit]}"


_CANONICAL: dict[tuple[Rank, Suit | None], Card] = {}


def canonical_card(rank: Rank, suit: Suit | None) -> Card:
    """The canonical (shared) Card object of a face; equal to ``Card(rank, suit)``."""
    c = _CANONICAL.get((rank, suit))
    if c is None:
        c = _CANONICAL[(rank, suit)] = Card(rank, suit)
    return c


def _french_block() -> list[Card]:
    ranks = [Rank.ACE, *NUMBER_RANKS[2:], Rank.JACK, Rank.QUEEN, Rank.KING]
    return [canonical_card(r, s) for s in Suit for r in ranks]


def _coloured(zero: bool, swap: bool) -> list[Card]:
    out: list[Card] = []
    for s in Suit:
        if zero:
            out.append(canonical_card(Rank.N0, s))
        for r in NUMBER_RANKS[1:10]:
            out += [canonical_card(r, s)] * 2
        for r in (Rank.SKIP, Rank.REVERSE, Rank.DRAW2):
            out += [canonical_card(r, s)] * 2
        if swap:
            out.append(canonical_card(Rank.SWAP, s))
    return out


def _build(name: str) -> tuple[Card, ...]:
    if name == "dernier-54":
        return tuple(_french_block() + [canonical_card(Rank.JOKER, None)] * 2)
    if name == "originale-108":
        return tuple(_french_block() * 2 + [canonical_card(Rank.JOKER, None)] * 4)
    if name == "moderno-112":
        black = [
            canonical_card(r, None) for r in (Rank.WILD, Rank.WILD4, Rank.ROTATE) for _ in range(4)
        ]
        return tuple(_coloured(False, True) + black)
    if name == "standard-108":
        black = [canonical_card(r, None) for r in (Rank.WILD, Rank.WILD4) for _ in range(4)]
        return tuple(_coloured(True, False) + black)
    raise ValueError(f"unknown deck {name!r}")


DECK_NAMES = ("dernier-54", "originale-108", "moderno-112", "standard-108")
_DECKS = {name: _build(name) for name in DECK_NAMES}


def deck_cards(deck_name: str) -> tuple[Card, ...]:
    """The canonical physical deck named ``deck_name``; index = physical card id."""
    try:
        return _DECKS[deck_name]
    except KeyError:
        raise ValueError(f"unknown deck {deck_name!r}; known: {', '.join(DECK_NAMES)}") from None


def parse_card(text: str) -> Card:
    """A card from its short form: rank then suit letter (Y/R/G/B), e.g. "7R", "AB", "JOKER"."""
    for rank in Rank:
        if rank in BLACK_RANKS and text == rank.value:
            return canonical_card(rank, None)
    suit = "YRGB".find(text[-1:]) if text else -1
    if suit < 0:
        raise ValueError(f"not a card: {text!r}")
    try:
        return canonical_card(Rank(text[:-1]), Suit(suit))
    except ValueError:
        raise ValueError(f"not a card: {text!r}") from None


def parse_cards(text: str) -> list[Card]:
    """Cards from a space-separated list of short forms, e.g. "7R AB JOKER"."""
    return [parse_card(t) for t in text.split()]
