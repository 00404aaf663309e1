"""The random bot: legal, reproducible, plays rather than draws when asked to."""

from __future__ import annotations

import pytest

from dernier_p2p.bots import RandomBot
from dernier_p2p.rules import MatchFormat, Play, get_variant, legal_moves, to_act
from dernier_p2p.rules.simulate import play_match

VARIANTS = ("dernier", "standard", "moderno", "originale")


class Recorder:
    """Wraps a policy: checks every answer against the legal moves and records it."""

    def __init__(self, policy) -> None:
        self.policy = policy
        self.calls = 0
        self.in_turn_with_play = 0
        self.drew_with_play = 0

    def __call__(self, state, seat, view):
        move = self.policy(state, seat, view)
        legal = legal_moves(state, seat, view)
        self.calls += 1
        if to_act(state) == seat:
            assert move is not None, "a bot must move in its turn"
            if any(isinstance(m, Play) for m in legal):
                self.in_turn_with_play += 1
                self.drew_with_play += not isinstance(move, Play)
        if move is not None:
            assert move in legal, f"illegal {move} in {state!r}"
        return move


def _match(variant: str, players: int, seed: int, hands: int = 2, **kw):
    rules = get_variant(variant, match=MatchFormat("hands", hands))
    recorders = [Recorder(RandomBot(seed * 31 + i, **kw)) for i in range(players)]
    state, moves = play_match(rules, players, recorders, seed=seed, max_moves=20_000)
    return state, moves, recorders


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("players", [2, 3, 5, 10])
def test_random_bot_only_returns_legal_moves(variant: str, players: int) -> None:
    players = min(players, get_variant(variant).max_players)
    for seed in range(3):
        state, _, recorders = _match(variant, players, seed)
        assert state.match_over
        assert all(r.calls > 0 for r in recorders)


def test_random_bot_prefers_a_play_to_a_draw() -> None:
    _, _, recorders = _match("dernier", 3, 7, hands=3)
    assert sum(r.in_turn_with_play for r in recorders) > 50
    assert sum(r.drew_with_play for r in recorders) == 0


def test_random_bot_without_preference_sometimes_draws_instead_of_playing() -> None:
    _, _, recorders = _match("dernier", 3, 7, hands=3, prefer_play=False)
    assert sum(r.drew_with_play for r in recorders) > 0


def test_random_bot_is_reproducible_from_its_seed() -> None:
    first = _match("moderno", 4, 11)[1]
    again = _match("moderno", 4, 11)[1]
    other = [
        RandomBot(1000 + i) for i in range(4)
    ]  # same deal, other bot seeds: another game
    rules = get_variant("moderno", match=MatchFormat("hands", 2))
    different = play_match(rules, 4, other, seed=11, max_moves=20_000)[1]
    assert first == again
    assert first != different


def test_random_bot_with_optional_rate_zero_never_moves_out_of_turn() -> None:
    rules = get_variant("originale", match=MatchFormat("hands", 2))
    bots = [RandomBot(i, optional_rate=0.0) for i in range(4)]
    outside = []

    def watch(bot):
        def policy(state, seat, view):
            move = bot(state, seat, view)
            if to_act(state) != seat:
                outside.append(move)
            return move

        return policy

    play_match(rules, 4, [watch(b) for b in bots], seed=3, max_moves=50_000)
    assert outside, "originale offers jump-ins, so bots are asked out of turn"
    assert all(m is None for m in outside)


def test_random_bot_rejects_a_bad_optional_rate() -> None:
    with pytest.raises(ValueError, match="optional_rate"):
        RandomBot(0, optional_rate=1.5)
