"""Events: what happened when a move was applied (small frozen records)."""

from __future__ import annotations

from dataclasses import dataclass

from dernier_p2p.rules.cards import Card, Suit

# The most frequent events set their fields through this (a frozen dataclass's generated
# __init__ looks the setter up for every field).
_SET = object.__setattr__


@dataclass(frozen=True, slots=True)
class DealerChosen:
    dealer: int


@dataclass(frozen=True, slots=True)
class HandStarted:
    hand_number: int
    dealer: int


@dataclass(frozen=True, slots=True)
class Shuffled:
    """The draw pile was formed from ``count`` slots (a new hand's deck)."""

    count: int


@dataclass(frozen=True, slots=True)
class Reshuffled:
    """The discards but the top card (or a returned first card) became the draw pile."""

    count: int


@dataclass(frozen=True, slots=True)
class CutKept:
    seat: int
    slot: int


@dataclass(frozen=True, slots=True)
class HandSizeChosen:
    seat: int
    size: int


@dataclass(frozen=True, slots=True)
class Dealt:
    seat: int
    slots: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Flipped:
    """The first discard was turned up."""

    slot: int
    card: Card


@dataclass(frozen=True, slots=True, init=False)
class Drew:
    """``seat`` took ``slots``; reason: "draw", "penalty-A", "penalty-7", "penalty-declaration"…"""

    seat: int
    slots: tuple[int, ...]
    reason: str

    def __init__(self, seat: int, slots: tuple[int, ...], reason: str, _set=_SET) -> None:
        _set(self, "seat", seat)
        _set(self, "slots", slots)
        _set(self, "reason", reason)


@dataclass(frozen=True, slots=True, init=False)
class Played:
    seat: int
    slot: int
    card: Card

    def __init__(self, seat: int, slot: int, card: Card, _set=_SET) -> None:
        _set(self, "seat", seat)
        _set(self, "slot", slot)
        _set(self, "card", card)


@dataclass(frozen=True, slots=True)
class JumpedIn:
    seat: int


@dataclass(frozen=True, slots=True)
class TakenBack:
    """originale: a wrong card was shown and went back into the hand."""

    seat: int
    slot: int
    card: Card


@dataclass(frozen=True, slots=True)
class SuitNamed:
    seat: int
    suit: Suit


@dataclass(frozen=True, slots=True)
class DirectionChanged:
    direction: int


@dataclass(frozen=True, slots=True)
class Skipped:
    seat: int


@dataclass(frozen=True, slots=True)
class ChainGrew:
    """A draw chain now stands at ``total`` cards for ``victim``."""

    victim: int
    total: int


@dataclass(frozen=True, slots=True)
class ChainCancelled:
    seat: int


@dataclass(frozen=True, slots=True, init=False)
class Passed:
    seat: int

    def __init__(self, seat: int, _set=_SET) -> None:
        _set(self, "seat", seat)


@dataclass(frozen=True, slots=True)
class Declared:
    seat: int


@dataclass(frozen=True, slots=True)
class Caught:
    seat: int
    target: int


@dataclass(frozen=True, slots=True)
class Penalty:
    """``seat`` owes ``cards`` cards for breaking ``rule`` (they follow as a Drew event)."""

    seat: int
    cards: int
    rule: str


@dataclass(frozen=True, slots=True)
class HandsSwapped:
    a: int
    b: int


@dataclass(frozen=True, slots=True)
class HandsRotated:
    direction: int


@dataclass(frozen=True, slots=True)
class HandOver:
    """winner is None when the hand ended on an empty draw pile; reason says why."""

    winner: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class Revealed:
    faces: tuple[tuple[int, Card], ...]


@dataclass(frozen=True, slots=True)
class HandScored:
    deltas: tuple[int, ...]
    scores: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Forfeited:
    """``seat`` timed out or left; ``match_points`` after the forfeit."""

    seat: int
    reason: str
    match_points: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SeatOut:
    """``seat`` left a table of three or more (``reason``: "left"); the match goes on without
    it, and the hand ``voided`` was void (no scores) and is dealt again among the others."""

    seat: int
    reason: str
    voided: int


@dataclass(frozen=True, slots=True)
class MatchOver:
    winner: int | None
    standings: tuple[int, ...]


Event = (
    DealerChosen | HandStarted | Shuffled | Reshuffled | CutKept | HandSizeChosen | Dealt
    | Flipped | Drew | Played | JumpedIn | TakenBack | SuitNamed | DirectionChanged | Skipped
    | ChainGrew | ChainCancelled | Passed | Declared | Caught | Penalty | HandsSwapped
    | HandsRotated | HandOver | Revealed | HandScored | Forfeited | SeatOut | MatchOver
)
