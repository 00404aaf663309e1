"""Moves: seat moves (the ``seat`` is the actor, in turn or not) and chance moves (deck inputs)."""

from __future__ import annotations

from dataclasses import dataclass

from dernier_p2p.rules.cards import Card, Suit


@dataclass(frozen=True, slots=True)
class Play:
    """Play hand slot ``slot``, whose face ``card`` playing reveals.

    ``suit`` is the named suit, ``target`` the seat to swap hands with (SWAP), ``declare`` says
    DERNIER/SOLO with this play. A play by a seat not to act is a jump-in (anticipo).
    """

    seat: int
    slot: int
    card: Card
    suit: Suit | None = None
    target: int | None = None
    declare: bool = False


@dataclass(frozen=True, slots=True)
class Draw:
    """Draw one card, or take the whole pending draw when one is pending."""

    seat: int


@dataclass(frozen=True, slots=True)
class Pass:
    """End the turn after drawing, keeping the drawn card."""

    seat: int


@dataclass(frozen=True, slots=True)
class Declare:
    """Say DERNIER (or SOLO) outside a play, within the window."""

    seat: int


@dataclass(frozen=True, slots=True)
class Catch:
    """standard: catch ``target``, who holds one card and has not declared, within the window."""

    seat: int
    target: int


@dataclass(frozen=True, slots=True)
class NameSuit:
    """Name a suit when the engine asks for one on its own (a first card that names a suit)."""

    seat: int
    suit: Suit


@dataclass(frozen=True, slots=True)
class ChooseHandSize:
    """originale: the dealer chooses how many cards each player gets."""

    seat: int
    size: int


@dataclass(frozen=True, slots=True)
class Cut:
    """originale cut: ``keep`` takes the bottom card (it must be special); ``card`` its face."""

    seat: int
    keep: bool
    card: Card | None = None


@dataclass(frozen=True, slots=True)
class Timeout:
    """The table's clock says ``seat`` ran out of time."""

    seat: int


@dataclass(frozen=True, slots=True)
class Leave:
    """``seat`` left the table."""

    seat: int


@dataclass(frozen=True, slots=True)
class ChooseDealer:
    """Chance: the first dealer of the match."""

    dealer: int


@dataclass(frozen=True, slots=True)
class Shuffle:
    """Chance: a (re)shuffled draw pile; ``slots`` in draw order, first drawn first."""

    slots: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Flip:
    """Chance: the face of the card turned up from the top of the draw pile."""

    card: Card


@dataclass(frozen=True, slots=True)
class Reveal:
    """Chance: at the end of a hand, the face of every slot still in a hand."""

    faces: tuple[tuple[int, Card], ...]


SeatMove = Play | Draw | Pass | Declare | Catch | NameSuit | ChooseHandSize | Cut | Timeout | Leave
ChanceMove = ChooseDealer | Shuffle | Flip | Reveal
Move = SeatMove | ChanceMove
CHANCE_TYPES = (ChooseDealer, Shuffle, Flip, Reveal)
