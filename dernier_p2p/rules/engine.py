"""The rules engine: ``new_match``, ``apply``, ``legal_moves``, ``chance_needed``, ``to_act``.

Pure and deterministic. It sees only public information: hands are tuples of slot ids, and a
card's face enters the state when it is opened (played, turned up, shown, revealed). Which slot
is drawn next (Shuffle), the faces of the first discard (Flip) and of the hands at the end
(Reveal) are chance moves supplied from outside. See docs/RULES.md for the model.
"""

from __future__ import annotations

from dernier_p2p.rules.errors import IllegalMove
from dernier_p2p.rules.flow import leave_ends_match, to_act
from dernier_p2p.rules.hands import on_choose_dealer, on_flip, on_reveal, on_shuffle
from dernier_p2p.rules.legal import legal_moves
from dernier_p2p.rules.moves import (
    Catch,
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
    Shuffle,
    Timeout,
)
from dernier_p2p.rules.seat_moves import (
    on_catch,
    on_choose_hand_size,
    on_cut,
    on_declare,
    on_draw,
    on_leave,
    on_name_suit,
    on_pass,
    on_play,
    on_timeout,
)
from dernier_p2p.rules.state import (
    CLOCK,
    DEALER_PHASE,
    MATCH_OVER_PHASE,
    ChanceRequest,
    State,
)
from dernier_p2p.rules.variants import (
    Rules,
)

__all__ = [
    "apply", "chance_needed", "leave_ends_match", "legal_moves", "new_match", "to_act",
]

_new_state = tuple.__new__


def new_match(rules: Rules, players: int) -> State:
    """A new match of ``players`` seats; the first input needed is ChooseDealer."""
    if not isinstance(rules, Rules):
        raise ValueError("rules must be a Rules rule set")
    if not isinstance(players, int) or not rules.min_players <= players <= rules.max_players:
        raise ValueError(
            f"{rules.name} is played by {rules.min_players} to {rules.max_players} players,"
            f" not {players!r}"
        )
    zeros = (0,) * players
    return State(
        rules=rules,
        players=players,
        phase=DEALER_PHASE,
        hand_number=0,
        dealer=-1,
        turn=-1,
        direction=1,
        hands=((),) * players,
        pile=(),
        discard=(),
        top=None,
        named_suit=None,
        pending_draw=0,
        pending_kind=None,
        drawn=-1,
        owes=(),
        owed=(),
        chance=ChanceRequest("dealer", count=players),
        shown={},
        next_slot=0,
        scores=zeros,
        hands_won=zeros,
        match_points=zeros,
        winner=None,
        standings=(),
        hand_winner=None,
        hand_end=None,
        cut_kept=-1,
        namer=-1,
        last_draw=(-1,) * players,
        clock=0,
        final_sizes=zeros,
        played=None,
        stalls=0,
        out=(),
    )


def chance_needed(state: State) -> ChanceRequest | None:
    """The chance input needed next, or None when a seat is to move."""
    return state.chance


def apply(state: State, move: Move) -> tuple[State, tuple]:
    """Apply ``move``; return the new state and the events. Raises IllegalMove; pure."""
    entry = _DISPATCH.get(move.__class__)
    if entry is None:
        raise IllegalMove("not-a-move", f"{move!r} is not a move")
    handler, is_chance = entry
    if state.phase is MATCH_OVER_PHASE:
        raise IllegalMove("match-over", "the match is over")
    chance = state.chance
    if is_chance:
        if chance is None:
            raise IllegalMove("no-pending-chance", f"no chance move is expected, got {move!r}")
    elif chance is not None and handler is not on_leave:
        raise IllegalMove(
            "chance-pending", f"waiting for a {chance.kind} input before any seat moves"
        )
    s = list(state)
    ev: list = []
    handler(state, s, move, ev)
    s[CLOCK] += 1
    return _new_state(State, s), tuple(ev)


_HANDLERS = {
    Play: on_play,
    Draw: on_draw,
    Pass: on_pass,
    Declare: on_declare,
    Catch: on_catch,
    NameSuit: on_name_suit,
    ChooseHandSize: on_choose_hand_size,
    Cut: on_cut,
    Timeout: on_timeout,
    Leave: on_leave,
    ChooseDealer: on_choose_dealer,
    Shuffle: on_shuffle,
    Flip: on_flip,
    Reveal: on_reveal,
}
_CHANCE_HANDLERS = frozenset({on_choose_dealer, on_shuffle, on_flip, on_reveal})
_DISPATCH = {kind: (h, h in _CHANCE_HANDLERS) for kind, h in _HANDLERS.items()}
