"""The immutable game state (public information only) and the chance request."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from dernier_p2p.rules.cards import Card, Rank, Suit

if TYPE_CHECKING:
    from dernier_p2p.rules.variants import Rules


class Phase(Enum):
    """Where a match stands."""

    DEALER = "dealer"  # waiting for ChooseDealer
    DEAL = "deal"  # waiting for the hand's Shuffle
    CUT = "cut"  # originale: the dealer's previous player cuts
    HAND_SIZE = "hand-size"  # originale: the dealer chooses the hand size
    FLIP = "flip"  # waiting for the first discard's face
    NAME_SUIT = "name-suit"  # a first card asks a seat to name a suit
    PLAY = "play"
    REVEAL = "reveal"  # hand over, waiting for the faces left in hands
    MATCH_OVER = "match-over"
    HAND_OVER = "reveal"  # alias of REVEAL


# The phases as module constants: reading an Enum member off its class is slow (a
# descriptor call), and the engine compares phases on every move.
DEALER_PHASE = Phase.DEALER
DEAL_PHASE = Phase.DEAL
CUT_PHASE = Phase.CUT
HAND_SIZE_PHASE = Phase.HAND_SIZE
FLIP_PHASE = Phase.FLIP
NAME_SUIT_PHASE = Phase.NAME_SUIT
PLAY_PHASE = Phase.PLAY
REVEAL_PHASE = Phase.REVEAL
MATCH_OVER_PHASE = Phase.MATCH_OVER


@dataclass(frozen=True, slots=True)
class ChanceRequest:
    """The input the deck layer must supply next.

    kind "dealer": ChooseDealer(0 <= dealer < players).
    kind "shuffle": Shuffle of ``count`` new slot ids ``first_slot .. first_slot+count-1``;
    ``source`` is None for a new hand's full deck, else the slots whose (public) cards are
    reshuffled, in the order they lay.
    kind "flip": Flip of the face of slot ``slots[0]`` (top of the draw pile).
    kind "reveal": Reveal of the faces of ``slots`` (every slot still in a hand).
    """

    kind: str
    count: int = 0
    first_slot: int = 0
    source: tuple[int, ...] | None = None
    slots: tuple[int, ...] = ()


class State(NamedTuple):
    """Immutable public state of a match (a named tuple). Build with ``engine.new_match``.

    ``hands`` holds slot ids per seat; ``shown`` the public faces of slots not played (a wrong
    card taken back, a kept cut card, the hands revealed at the end; never mutate it);
    ``played`` the cards turned up or played this hand as a linked list (slot, card, rest);
    ``faces``/``public_faces`` combine both. ``pile`` the draw pile in draw order;
    ``discard`` the discard slots, top last. ``pending_draw``/``pending_kind``: an answerable
    draw chain on the seat at turn. ``drawn``: the slot drawn this turn (-1 if none), the only
    card that may still be played. ``owes``: seats at one card that still owe a declaration
    (their window is open). ``owed``: forced draws (seat, cards, reason) waiting on a reshuffle.
    ``last_draw``: per seat, the ``clock`` of its last draw (-1: none this hand).
    ``stalls``: passes in a row made without drawing (nothing left to draw); when every seat
    has passed so, the hand is blocked and ends. ``out``: seats out of play (left at a table
    of three or more), in the order they went out; they are skipped and hold no cards.
    """

    rules: Rules
    players: int
    phase: Phase
    hand_number: int
    dealer: int
    turn: int
    direction: int
    hands: tuple[tuple[int, ...], ...]
    pile: tuple[int, ...]
    discard: tuple[int, ...]
    top: Card | None
    named_suit: Suit | None
    pending_draw: int
    pending_kind: Rank | None
    drawn: int
    owes: tuple[int, ...]
    owed: tuple[tuple[int, int, str], ...]
    chance: ChanceRequest | None
    shown: dict[int, Card]
    next_slot: int
    scores: tuple[int, ...]
    hands_won: tuple[int, ...]
    match_points: tuple[int, ...]
    winner: int | None
    standings: tuple[int, ...]
    hand_winner: int | None
    hand_end: str | None
    cut_kept: int
    namer: int
    last_draw: tuple[int, ...]
    clock: int
    final_sizes: tuple[int, ...]
    played: tuple | None
    stalls: int
    out: tuple[int, ...] = ()

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(len(h) for h in self.hands)

    @property
    def pile_size(self) -> int:
        return len(self.pile)

    @property
    def in_play(self) -> tuple[int, ...]:
        """The seats still in play, ascending."""
        out = self[34]
        return tuple(s for s in range(self[1]) if s not in out)

    @property
    def match_over(self) -> bool:
        return self[2] is MATCH_OVER_PHASE

    @property
    def faces(self) -> dict[int, Card]:
        """Every face of this hand known to everyone: slot -> card (a new dict each call)."""
        out: dict[int, Card] = {}
        node = self.played
        while node is not None:
            out[node[0]] = node[1]
            node = node[2]
        out.update(self.shown)
        return out

    @property
    def public_faces(self) -> MappingProxyType[int, Card]:
        return MappingProxyType(self.faces)

    @property
    def effective_suit(self) -> Suit | None:
        """The suit to follow: the named suit, else the top card's suit."""
        if self.named_suit is not None:
            return self.named_suit
        return None if self.top is None else self.top.suit

    def __repr__(self) -> str:
        top = "-" if self.top is None else str(self.top)
        return (
            f"State({self.rules.name}, hand {self.hand_number}, {self.phase.value}, turn "
            f"{self.turn}, dir {self.direction}, top {top}, named {self.named_suit}, pending "
            f"{self.pending_draw}, sizes {self.hand_sizes}, pile {len(self.pile)}, scores "
            f"{self.scores})"
        )


# Field indices, for the engine's list-based copy-with-changes.
(
    RULES, PLAYERS, PHASE, HAND_NUMBER, DEALER, TURN, DIRECTION, HANDS, PILE, DISCARD, TOP,
    NAMED_SUIT, PENDING_DRAW, PENDING_KIND, DRAWN, OWES, OWED, CHANCE, SHOWN, NEXT_SLOT, SCORES,
    HANDS_WON, MATCH_POINTS, WINNER, STANDINGS, HAND_WINNER, HAND_END, CUT_KEPT, NAMER,
    LAST_DRAW, CLOCK, FINAL_SIZES, PLAYED, STALLS, OUT,
) = range(35)
assert State._fields[PLAYED] == "played" and State._fields[SHOWN] == "shown"
