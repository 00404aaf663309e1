"""The bot that plays the recorded matches: it seeks rule events (jump-ins, catches, action
cards, forgotten declarations, time-outs) so that a short match shows what its scenario needs."""

from __future__ import annotations

import random

from dernier_p2p.bots.view import seat_moves
from dernier_p2p.rules import Catch, Declare, Draw, Move, Play, State
from dernier_p2p.rules.cards import Card, Rank, deck_cards
from dernier_p2p.rules.flow import step

ACTION_RANKS = {
    Rank.ACE, Rank.N2, Rank.N7, Rank.JOKER, Rank.JACK, Rank.QUEEN, Rank.KING, Rank.DRAW2,
    Rank.WILD4, Rank.SWAP, Rank.ROTATE, Rank.SKIP, Rank.REVERSE, Rank.WILD,
}


class Eager:
    """A bot that seeks rule events: it jumps in and catches whenever it may, prefers action
    cards, forgets its declaration at ``forget`` rate, draws instead of playing at ``draw``
    rate, and lets its clock run out at ``idle`` rate."""

    def __init__(
        self, seed: int, forget: float, draw: float, idle: float, reshuffle: bool = False
    ) -> None:
        self.rng = random.Random(seed)
        self.forget, self.draw, self.idle = forget, draw, idle
        self.reshuffle = reshuffle  # draw whenever possible until the pile has been reshuffled

    def __call__(self, state: State, seat: int, view: dict[int, Card]) -> Move | None:
        moves, in_turn = seat_moves(state, seat, view)
        if not moves:
            return None
        rng = self.rng
        if not in_turn:
            keen = [m for m in moves if isinstance(m, Catch | Play)]
            if keen:
                return self._pick_play(keen)
            late = [m for m in moves if isinstance(m, Declare)]
            if late and rng.random() >= self.forget:
                return late[0]
            return None
        if rng.random() < self.idle:
            return None
        if self.reshuffle and not any(p >= len(deck_cards(state.rules.deck)) for p in
                                      state.pile):
            draws = [m for m in moves if isinstance(m, Draw)]
            if draws:
                return draws[0]
        plays = [m for m in moves if isinstance(m, Play)]
        if plays and rng.random() >= self.draw:
            return self._pick_play(plays)
        rest = [m for m in moves if not isinstance(m, Play)]
        draws = [m for m in rest if isinstance(m, Draw)]
        if draws and rng.random() < self.draw:
            return draws[0]
        return rng.choice(rest or moves)

    def _pick_play(self, moves: list[Move]) -> Move:
        rng = self.rng
        plays = [m for m in moves if isinstance(m, Play)]
        if not plays:
            return rng.choice(moves)
        action = [m for m in plays if m.card.rank in ACTION_RANKS]
        pool = action if action and rng.random() < 0.7 else plays
        mv = rng.choice(pool)
        twins = [m for m in plays if (m.slot, m.suit, m.target) == (mv.slot, mv.suit, mv.target)]
        if len(twins) > 1:
            want = rng.random() >= self.forget
            mv = next((m for m in twins if m.declare == want), mv)
        return mv



class SkipSeeker(Eager):
    """``dernier``: an :class:`Eager` bot that, holding two cards, plays a skip card (a Q, or a
    rank of the ``skip_ranks`` option) undeclared whenever it skips a seat holding one card, and,
    skipped that way, does not declare again: one move of the next seat then closes two
    declaration windows (RULES.md "Order of draws")."""

    def __call__(self, state: State, seat: int, view: dict[int, Card]) -> Move | None:
        moves, in_turn = seat_moves(state, seat, view)
        if in_turn and len(state.hands[seat]) == 2:
            nxt = step(seat, state.direction, state.players, state.out)
            if len(state.hands[nxt]) == 1:
                for m in moves:
                    if (isinstance(m, Play) and m.card.rank in state.rules.skip_ranks
                            and not m.declare):
                        return m
        if (not in_turn and seat in state.owes and state.top is not None
                and state.top.rank in state.rules.skip_ranks
                and all(isinstance(m, Declare) for m in moves)):
            return None
        return super().__call__(state, seat, view)


class OwnDrawSeeker(Eager):
    """``dernier`` at two seats: an :class:`Eager` bot that, holding two cards, plays a skip card
    undeclared, and, moving again at one card with its declaration still owed, draws: its own
    draw closes its window, the penalty first (RULES.md `dernier`, seed 000/001)."""

    def __call__(self, state: State, seat: int, view: dict[int, Card]) -> Move | None:
        moves, in_turn = seat_moves(state, seat, view)
        if in_turn and len(state.hands[seat]) == 2:
            for m in moves:
                if (isinstance(m, Play) and m.card.rank in state.rules.skip_ranks
                        and not m.declare):
                    return m
        if seat in state.owes and len(state.hands[seat]) == 1:
            if not in_turn:
                return None  # (no late declaration)
            draws = [m for m in moves if isinstance(m, Draw)]
            if draws:
                return draws[0]
        return super().__call__(state, seat, view)
