"""legal_moves against a brute force: every move ``apply`` accepts is listed, and only those.

Random matches of every variant (and the other readings of the options that change what is
legal) are played by seeded random seats. At sampled states, for every seat, every candidate
move is put to ``apply``: each card of the seat's hand with every suit (or none), every target
(or none) and both declarations; Draw, Pass, Declare, a Catch of every seat, NameSuit of every
suit, ChooseHandSize 0..15 and both cuts. Faces are those the seat knows (its view, as
legal_moves is given it; a face the engine cannot see is checked by the audit, docs/RULES.md).
The moves apply accepts (originale's wrong plays, taken back with a penalty, aside) must be
exactly the moves legal_moves lists for that seat.
"""

from __future__ import annotations

import random

import pytest

from dernier_p2p.rules import (
    Catch,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    IllegalMove,
    MatchFormat,
    NameSuit,
    Pass,
    Phase,
    Play,
    Suit,
    apply,
    chance_needed,
    get_variant,
    legal_moves,
    new_match,
    to_act,
)
from dernier_p2p.rules.events import TakenBack
from dernier_p2p.rules.simulate import Dealer

SUITS_OR_NONE = (None, *Suit)


def outcome(state, move):
    """``apply``'s state and events for a legal move; None if it refuses the move or takes it
    as a penalised wrong play."""
    try:
        after, events = apply(state, move)
    except IllegalMove:
        return None
    if any(isinstance(e, TakenBack) for e in events):
        return None
    return tuple(after), after.shown, events


def is_ignored_declaration(state, move, result) -> bool:
    """A DERNIER said with a play that does not leave one card: apply ignores it (the result is
    that of the same play without it), so legal_moves lists the play once, without it."""
    if not isinstance(move, Play) or not move.declare:
        return False
    plain = Play(move.seat, move.slot, move.card, move.suit, move.target, False)
    return outcome(state, plain) == result


def candidates(state, seat: int, view: dict) -> list:
    """Every move ``seat`` could try now (Timeout and Leave come from the clock and network)."""
    n = state.players
    out: list = [Draw(seat), Pass(seat), Declare(seat)]
    out += [Catch(seat, t) for t in range(n)]
    out += [NameSuit(seat, s) for s in Suit]
    out += [ChooseHandSize(seat, k) for k in range(16)]
    bottom = view.get(state.pile[-1]) if state.pile else None  # the cutter's peek
    out += [Cut(seat, keep, bottom) for keep in (False, True)]
    for slot in state.hands[seat]:
        card = view[slot]
        for suit in SUITS_OR_NONE:
            for target in (None, *range(n)):
                for declare in (False, True):
                    out.append(Play(seat, slot, card, suit, target, declare))
    return out


def check_state(state, dealer: Dealer) -> int:
    """Compare the lists of every seat with the brute force; return the moves compared."""
    compared = 0
    for seat in range(state.players):
        view = dealer.view(state, seat)
        listed = legal_moves(state, seat, view)
        assert len(set(listed)) == len(listed), f"a move listed twice: {listed}"
        brute = set()
        for move in candidates(state, seat, view):
            result = outcome(state, move)
            if result is not None and not is_ignored_declaration(state, move, result):
                brute.add(move)
        missing, extra = brute - set(listed), set(listed) - brute
        assert not missing and not extra, (
            f"seat {seat}: accepted but not listed {sorted(map(repr, missing))}; "
            f"listed but refused {sorted(map(repr, extra))}; state {state!r}"
        )
        compared += len(listed)
    return compared


def walk(variant: str, players: int, seed: int, samples: int, **options) -> dict:
    """Play a seeded random match, checking ``samples`` states spread along it."""
    rules = get_variant(variant, match=MatchFormat("hands", 2), **options)
    dealer = Dealer(rules, seed)
    rng = random.Random(seed)
    state = new_match(rules, players)
    seen = {"states": 0, "moves": 0, "phases": set()}
    for _ in range(4000):
        if state.match_over or seen["states"] >= samples:
            break
        request = chance_needed(state)
        if request is not None:
            state, _ = apply(state, dealer.chance_move(state, request))
            continue
        rare = state.phase is not Phase.PLAY or state.pending_draw or state.owes
        if rare or rng.random() < 0.25:
            seen["moves"] += check_state(state, dealer)
            seen["states"] += 1
            seen["phases"].add(state.phase)
        actor = to_act(state)
        move = None
        if rng.random() < 0.3:  # someone else may move out of turn first
            other = rng.randrange(players)
            extra = legal_moves(state, other, dealer.view(state, other)) if other != actor else []
            move = rng.choice(extra) if extra else None
        if move is None:
            legal = legal_moves(state, actor, dealer.view(state, actor))
            plays = [m for m in legal if isinstance(m, Play)]
            move = rng.choice(plays) if plays and rng.random() < 0.9 else rng.choice(legal)
        state, _ = apply(state, move)
    return seen


READINGS = [
    ("dernier", {}),
    ("dernier", {"jump_in": True, "taking_ends_turn": False}),
    ("originale", {}),
    ("originale", {"cancel_same_suit": False}),
    ("moderno", {}),
    ("standard", {}),
]


@pytest.mark.parametrize(("variant", "options"), READINGS)
def test_legal_moves_are_exactly_the_moves_apply_accepts(variant: str, options: dict) -> None:
    seen_phases: set = set()
    total = 0
    for players, seed in ((2, 11), (3, 12), (4, 13), (6, 14)):
        seen = walk(variant, players, seed, samples=40, **options)
        assert seen["states"] >= 10
        total += seen["moves"]
        seen_phases |= seen["phases"]
    assert total > 0 and Phase.PLAY in seen_phases
