"""A heuristic player that plays to win, deciding from the public state and its own hand only.

Its habits, in order of priority:
- always declare DERNIER/SOLO (with the play, or on its own within the window) and catch a
  player who forgot (``standard``);
- answer a pending draw chain whenever it can, and jump in whenever the variant lets it;
- keep wild cards (J and Jolly in ``dernier``, Matta, wild, wild draw-4, rotate) for the end:
  play one only when no other card fits (still rather than draw, which only adds cards);
- otherwise shed the card that hurts the others (draws, skips), then the costliest card first
  (card points of the variant);
- name the suit it holds most of; swap hands with the seat holding the fewest cards;
- after a draw, play the drawn card when it fits.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping

from dernier_p2p.bots.view import own_faces, seat_moves
from dernier_p2p.rules import (
    Card,
    Catch,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    Move,
    NameSuit,
    Pass,
    Play,
    Rank,
    Rules,
    State,
    Suit,
)


class HeuristicBot:
    """A policy that plays to win; ``seed`` breaks ties between equal cards reproducibly."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def __call__(self, state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
        moves, in_turn = seat_moves(state, seat, view)
        if not moves:
            return None
        faces = own_faces(state, seat, view)
        declares = [m for m in moves if isinstance(m, Declare)]
        if declares:
            return declares[0]
        catches = [m for m in moves if isinstance(m, Catch)]
        if catches:
            return min(catches, key=lambda m: m.target)
        plays = [m for m in moves if isinstance(m, Play)]
        if not in_turn:  # only jump-ins are left: always take one
            return self._best_play(state, seat, faces, plays) if plays else None
        names = [m for m in moves if isinstance(m, NameSuit)]
        if names:
            best = most_held_suit(faces.values())
            return next((m for m in names if m.suit == best), names[0])
        sizes = [m for m in moves if isinstance(m, ChooseHandSize)]
        if sizes:  # fewer cards each: a shorter hand
            return min(sizes, key=lambda m: m.size)
        cuts = [m for m in moves if isinstance(m, Cut)]
        if cuts:  # keep a special card whenever the rules allow it
            return max(cuts, key=lambda m: m.keep)
        if plays:
            return self._best_play(state, seat, faces, plays)
        for kind in (Draw, Pass):
            found = [m for m in moves if isinstance(m, kind)]
            if found:
                return found[0]
        return moves[0]

    def _best_play(
        self, state: State, seat: int, faces: dict[int, Card], plays: list[Play]
    ) -> Play:
        """The card worth shedding first, then its best suit, swap target and declaration."""
        rules = state.rules
        wild = rules.wild_ranks

        def card_value(m: Play) -> tuple[bool, bool, int, float]:
            rank = m.card.rank
            return (
                rank not in wild,
                attacks(rules, rank),
                rules.card_points(rank),
                self.rng.random(),
            )

        slot = max(plays, key=card_value).slot
        options = [m for m in plays if m.slot == slot]
        rest = [c for s, c in faces.items() if s != slot]
        suit = most_held_suit(rest)
        sizes = state.hand_sizes

        def option_value(m: Play) -> tuple[bool, int, bool]:
            fewest = -sizes[m.target] if m.target is not None else 0
            return (m.declare, fewest, m.suit == suit)

        return max(options, key=option_value)


def attacks(rules: Rules, rank: Rank) -> bool:
    """Whether a card of ``rank`` makes another player draw or lose a turn."""
    if rank in rules.skip_ranks:
        return True
    return any(
        rank == r for table in (rules.chain_draws, rules.forced_draws, rules.previous_draws)
        for r, _ in table
    )


def most_held_suit(cards: Iterable[Card]) -> Suit:
    """The suit with the most cards among ``cards`` (lowest suit on a tie; YELLOW if none)."""
    held = Counter(c.suit for c in cards if c.suit is not None)
    if not held:
        return Suit.YELLOW
    return max(held, key=lambda s: (held[s], -int(s)))
