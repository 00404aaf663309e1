"""Bots decide from their own view: hidden faces (other hands, the pile) never change a choice."""

from __future__ import annotations

import random

import pytest

from dernier_p2p.bots import HeuristicBot, RandomBot, own_faces
from dernier_p2p.rules import (
    Draw,
    MatchFormat,
    Pass,
    Phase,
    apply,
    chance_needed,
    deck_cards,
    get_variant,
    legal_moves,
    new_match,
    to_act,
)
from dernier_p2p.rules.simulate import Dealer, answer_chance

BOTS = {"heuristic": HeuristicBot, "random": RandomBot}


def test_own_faces_keeps_only_the_seats_slots() -> None:
    rules = get_variant("dernier")
    dealer = Dealer(rules, 4)
    state, _ = answer_chance(new_match(rules, 3), dealer)
    assert state.phase is Phase.PLAY
    everything = {x: dealer.face(state, x) for x in range(len(deck_cards(rules.deck)))}
    for seat in range(3):
        mine = own_faces(state, seat, everything)
        assert mine == dealer.view(state, seat)
        assert set(mine) == set(state.hands[seat])


def _drawer(state, seat, view):
    """An opponent that never shows a card: in turn it draws or passes (or names a first suit)."""
    if to_act(state) != seat:
        return None
    moves = legal_moves(state, seat, view)
    return next((m for m in moves if isinstance(m, (Draw, Pass))), moves[0])


def _run(rules, dealer: Dealer, bot, leak: bool = False) -> tuple[list, set[int]]:
    """One hand: seat 0 is ``bot`` (asked in and out of turn), seat 1 the drawer.

    Returns seat 0's decisions (the state it saw and its answer) and every slot it ever held.
    With ``leak``, the bot's view also carries the true faces of every other slot.
    """
    decisions: list = []
    held: set[int] = set()
    state = new_match(rules, 2)
    while not state.match_over and len(decisions) < 1000:  # a drawer may stall a hand
        req = chance_needed(state)
        if req is not None:
            state, _ = apply(state, dealer.chance_move(state, req))
            continue
        held.update(state.hands[0])
        view = dealer.view(state, 0)
        if leak:
            view = {x: dealer.face(state, x) for h in state.hands for x in h} | {
                x: dealer.face(state, x) for x in state.pile
            }
        move = bot(state, 0, view) if legal_moves(state, 0, dealer.view(state, 0)) else None
        decisions.append((state, move))
        if move is None:
            move = _drawer(state, 1, dealer.view(state, 1))
        state, _ = apply(state, move)
    return decisions, held


@pytest.mark.parametrize("variant", ["dernier", "standard", "moderno"])
@pytest.mark.parametrize("kind", sorted(BOTS))
def test_decisions_do_not_change_when_hidden_faces_change(variant: str, kind: str) -> None:
    """Replay a hand in a second world where every face the bot cannot know is different.

    Seat 0 is the bot; seat 1 never shows a card. World B keeps the faces of every slot seat 0
    ever holds and of every card turned up or played, and permutes all the others (seat 1's
    hand and draws, the rest of the pile). Seat 0 must see the same public states and make the
    very same decisions; a third run that leaks every face into its view must too.
    """
    rules = get_variant(variant, match=MatchFormat("hands", 1))
    deck = deck_cards(rules.deck)
    changed = 0
    for seed in range(10):
        order_a = list(deck)
        random.Random(seed).shuffle(order_a)
        world_a = Dealer.stacked(rules, order_a, dealer=1, seed=seed)
        decisions_a, held = _run(rules, world_a, BOTS[kind](seed))
        final = decisions_a[-1][0]
        public = set(final.discard) | {x for x in final.faces if x < len(deck)}
        hidden = [x for x in range(len(deck)) if x not in held and x not in public]
        moved = [order_a[x] for x in hidden]
        random.Random(seed + 1).shuffle(moved)
        order_b = list(order_a)
        for x, card in zip(hidden, moved, strict=True):
            order_b[x] = card
        changed += order_b != order_a
        world_b = Dealer.stacked(rules, order_b, dealer=1, seed=seed)
        decisions_b, _ = _run(rules, world_b, BOTS[kind](seed))
        assert decisions_b == decisions_a
        dealer = Dealer.stacked(rules, order_a, dealer=1, seed=seed)
        leaked, _ = _run(rules, dealer, BOTS[kind](seed), leak=True)
        assert leaked == decisions_a
    # a moderno swap shows the bot the other hand, which then is no longer hidden
    assert changed >= 3
