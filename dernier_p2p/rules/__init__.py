"""The pure rules engine of the four Dernier variants (dernier, originale, moderno, standard).

Everything public is importable from here; docs/RULES.md states the rules and the model.

Additions to the API contract (nothing in it was removed or renamed):
- ``State`` is an immutable named tuple. Public faces are ``state.shown`` (faces of slots not
  played: a wrong card shown and taken back, a kept cut card, the end-of-hand reveal) plus
  ``state.played`` (every card turned up or played this hand, a linked list); the properties
  ``faces`` (a new dict) and ``public_faces`` combine them. More fields: ``owes`` (seats whose
  declaration window is open), ``owed`` (forced draws waiting on a reshuffle), ``chance``,
  ``match_points`` (dernier forfeits), ``standings``, ``hand_winner``, ``hand_end``,
  ``last_draw``, ``final_sizes``, ``stalls``, ``clock``.
- ``Phase`` also has DEALER, DEAL, CUT, HAND_SIZE, FLIP, NAME_SUIT (HAND_OVER is REVEAL).
- More events than the contract's list (Flipped, TakenBack, ChainGrew, ChainCancelled, Passed,
  Forfeited, SeatOut, Revealed, DealerChosen, HandStarted, Shuffled, CutKept, HandSizeChosen).
- ``legal_moves`` never lists Timeout/Leave nor originale's penalised wrong plays, which
  ``apply`` accepts with their penalty.
- ``Rules`` has many named options (see variants.py and docs/RULES.md).
- simulate: ``Dealer(rules, seed, stack=, dealer=, reshuffles=, bottom=)``,
  ``Dealer.stacked``, ``Dealer.for_hands``, ``Dealer.face``; ``play_match(..., dealer=None)``;
  ``answer_chance``, ``deal_order`` and the ``Table`` scenario driver.
- cards: ``parse_card``/``parse_cards`` ("7R", "AB", "JOKER"), ``canonical_card``.
- ``leave_ends_match(state)``: whether a ``Leave`` now ends the match (option ``leave``).
- ``BUILD``: which build of the engine runs, compiled or pure Python (see accel.py).
"""

# first: it decides whether the engine modules load compiled or from their sources
from dernier_p2p.rules.accel import BUILD
from dernier_p2p.rules.cards import (
    BLACK_RANKS,
    Card,
    Rank,
    Suit,
    deck_cards,
    parse_card,
    parse_cards,
)
from dernier_p2p.rules.engine import (
    apply,
    chance_needed,
    leave_ends_match,
    legal_moves,
    new_match,
    to_act,
)
from dernier_p2p.rules.errors import IllegalMove
from dernier_p2p.rules.events import (
    Caught,
    ChainCancelled,
    ChainGrew,
    CutKept,
    DealerChosen,
    Dealt,
    Declared,
    DirectionChanged,
    Drew,
    Event,
    Flipped,
    Forfeited,
    HandOver,
    HandScored,
    HandSizeChosen,
    HandsRotated,
    HandsSwapped,
    HandStarted,
    JumpedIn,
    MatchOver,
    Passed,
    Penalty,
    Played,
    Reshuffled,
    Revealed,
    SeatOut,
    Shuffled,
    Skipped,
    SuitNamed,
    TakenBack,
)
from dernier_p2p.rules.moves import (
    Catch,
    ChanceMove,
    ChooseDealer,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    Flip,
    Leave,
    Move,
    NameSuit,
    Pass,
    Play,
    Reveal,
    SeatMove,
    Shuffle,
    Timeout,
)
from dernier_p2p.rules.state import ChanceRequest, Phase, State
from dernier_p2p.rules.variants import VARIANTS, MatchFormat, Rules, get_variant

__all__ = [
    "BUILD",
    "BLACK_RANKS",
    "VARIANTS",
    "Card",
    "Catch",
    "Caught",
    "ChainCancelled",
    "ChainGrew",
    "ChanceMove",
    "ChanceRequest",
    "ChooseDealer",
    "ChooseHandSize",
    "Cut",
    "CutKept",
    "DealerChosen",
    "Dealt",
    "Declare",
    "Declared",
    "DirectionChanged",
    "Draw",
    "Drew",
    "Event",
    "Flip",
    "Flipped",
    "Forfeited",
    "SeatOut",
    "HandOver",
    "HandScored",
    "HandSizeChosen",
    "HandStarted",
    "HandsRotated",
    "HandsSwapped",
    "IllegalMove",
    "JumpedIn",
    "Leave",
    "MatchFormat",
    "MatchOver",
    "Move",
    "NameSuit",
    "Pass",
    "Passed",
    "Penalty",
    "Phase",
    "Play",
    "Played",
    "Rank",
    "Reshuffled",
    "Reveal",
    "Revealed",
    "Rules",
    "SeatMove",
    "Shuffle",
    "Shuffled",
    "Skipped",
    "State",
    "Suit",
    "SuitNamed",
    "TakenBack",
    "Timeout",
    "apply",
    "chance_needed",
    "deck_cards",
    "get_variant",
    "leave_ends_match",
    "legal_moves",
    "new_match",
    "parse_card",
    "parse_cards",
    "to_act",
]
