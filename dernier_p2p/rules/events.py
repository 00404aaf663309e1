"""Events: what happened when a move was applied (small frozen records)."""

from __future__ import annotations

from dataclasses import dataclass

from dernier_p2p.rules.cards import Card, Suit
from dernier_p2p.rules.frozen import fast_init


@fast_init
@dataclass(frozen=True, slots=True)
class DealerChosen:
    dealer: int


@fast_init
@dataclass(frozen=True, slots=True)
class HandStarted:
    hand_number: int
    dealer: int


@fast_init
@dataclass(frozen=True, slots=True)
class Shuffled:
    """The draw pile was formed from ``count`` slots (a new hand's deck)."""

    count: int


@fast_init
@dataclass(frozen=True, slots=True)
class Reshuffled:
    """The discards but the top card (or a returned first card) became the draw pile."""

    count: int


@fast_init
@dataclass(frozen=True, slots=True)
class CutKept:
    seat: int
    slot: int


@fast_init
@dataclass(frozen=True, slots=True)
class HandSizeChosen:
    seat: int
    size: int


@fast_init
@dataclass(frozen=True, slots=True)
class Dealt:
    seat: int
    slots: tuple[int, ...]


@fast_init
@dataclass(frozen=True, slots=True)
class Flipped:
    """The first discard was turned up."""

    slot: int
    card: Card


@fast_init
@dataclass(frozen=True, slots=True)
class Drew:
    """``seat`` took ``slots``; reason: "draw", "penalty-A", "penalty-7", "penalty-declaration"…"""

    seat: int
    slots: tuple[int, ...]
    reason: str


@fast_init
@dataclass(frozen=True, slots=True)
class Played:
    seat: int
    slot: int
    card: Card


@fast_init
@dataclass(frozen=True, slots=True)
class JumpedIn:
    seat: int


@fast_init
@dataclass(frozen=True, slots=True)
class TakenBack:
    """originale: a wrong card was shown and went back into the hand."""

    seat: int
    slot: int
    card: Card


@fast_init
@dataclass(frozen=True, slots=True)
class SuitNamed:
    seat: int
    suit: Suit


@fast_init
@dataclass(frozen=True, slots=True)
class DirectionChanged:
    direction: int


@fast_init
@dataclass(frozen=True, slots=True)
class Skipped:
    seat: int


@fast_init
@dataclass(frozen=True, slots=True)
class ChainGrew:
    """A draw chain now stands at ``total`` cards for ``victim``."""

    victim: int
    total: int


@fast_init
@dataclass(frozen=True, slots=True)
class ChainCancelled:
    seat: int


@fast_init
@dataclass(frozen=True, slots=True)
class Passed:
    seat: int


@fast_init
@dataclass(frozen=True, slots=True)
class Declared:
    seat: int


@fast_init
@dataclass(frozen=True, slots=True)
class Caught:
    seat: int
    target: int


@fast_init
@dataclass(frozen=True, slots=True)
class Penalty:
    """``seat`` owes ``cards`` cards for breaking ``rule`` (they follow as a Drew event)."""

    seat: int
    cards: int
    rule: str


@fast_init
@dataclass(frozen=True, slots=True)
class HandsSwapped:
    a: int
    b: int


@fast_init
@dataclass(frozen=True, slots=True)
class HandsRotated:
    direction: int


@fast_init
@dataclass(frozen=True, slots=True)
class HandOver:
    """winner is None when the hand ended on an empty draw pile; reason says why."""

    winner: int | None
    reason: str


@fast_init
@dataclass(frozen=True, slots=True)
class Revealed:
    faces: tuple[tuple[int, Card], ...]


@fast_init
@dataclass(frozen=True, slots=True)
class HandScored:
    deltas: tuple[int, ...]
    scores: tuple[int, ...]


@fast_init
@dataclass(frozen=True, slots=True)
class Forfeited:
    """``seat`` timed out or left; ``match_points`` after the forfeit."""

    seat: int
    reason: str
    match_points: tuple[int, ...]


@fast_init
@dataclass(frozen=True, slots=True)
class MatchOver:
    winner: int | None
    standings: tuple[int, ...]


Event = (
    DealerChosen | HandStarted | Shuffled | Reshuffled | CutKept | HandSizeChosen | Dealt
    | Flipped | Drew | Played | JumpedIn | TakenBack | SuitNamed | DirectionChanged | Skipped
    | ChainGrew | ChainCancelled | Passed | Declared | Caught | Penalty | HandsSwapped
    | HandsRotated | HandOver | Revealed | HandScored | Forfeited | MatchOver
)
