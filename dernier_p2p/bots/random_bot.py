"""A seeded random player: a uniform choice among its legal moves, from its own view only."""

from __future__ import annotations

import random
from collections.abc import Mapping

from dernier_p2p.bots.view import seat_moves
from dernier_p2p.rules import Card, Move, Play, State


class RandomBot:
    """Chooses uniformly among the legal moves of its seat.

    ``prefer_play``: on its turn, choose among the plays whenever there is one, and draw only when
    nothing can be played (uniform random play makes ``originale`` hands grow without end).
    ``optional_rate``: when asked out of turn (jump-in, late declaration, catch), the chance of
    taking one of the optional moves; otherwise it answers None.
    """

    def __init__(self, seed: int, *, prefer_play: bool = True, optional_rate: float = 0.5) -> None:
        if not 0.0 <= optional_rate <= 1.0:
            raise ValueError(f"optional_rate must lie in [0, 1], not {optional_rate!r}")
        self.rng = random.Random(seed)
        self.prefer_play = prefer_play
        self.optional_rate = optional_rate

    def __call__(self, state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
        moves, in_turn = seat_moves(state, seat, view)
        if not moves:
            return None
        if not in_turn:
            if self.rng.random() >= self.optional_rate:
                return None
            return self.rng.choice(moves)
        if self.prefer_play:
            plays = [m for m in moves if isinstance(m, Play)]
            if plays:
                return self.rng.choice(plays)
        return self.rng.choice(moves)
