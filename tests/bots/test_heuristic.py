"""The heuristic bot: legal moves only, its habits, and how often it beats the random bot."""

from __future__ import annotations

import pytest

from dernier_p2p.bots import HeuristicBot, RandomBot
from dernier_p2p.rules import (
    Catch,
    Declare,
    MatchFormat,
    Play,
    Suit,
    get_variant,
    legal_moves,
    to_act,
)
from dernier_p2p.rules.simulate import Table, play_match

VARIANTS = ("dernier", "standard", "moderno", "originale")


def checked(policy, seen: list):
    """A policy wrapper asserting each answer is legal; records (state, seat, legal, move)."""

    def wrapped(state, seat, view):
        move = policy(state, seat, view)
        legal = legal_moves(state, seat, view)
        if to_act(state) == seat:
            assert move is not None, "a bot must move in its turn"
        if move is not None:
            assert move in legal, f"illegal {move} in {state!r}"
        seen.append((state, seat, legal, move))
        return move

    return wrapped


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("players", [2, 4, 10])
def test_heuristic_bot_only_returns_legal_moves(variant: str, players: int) -> None:
    rules = get_variant(variant, match=MatchFormat("hands", 2))
    players = min(players, rules.max_players)
    seen: list = []
    for seed in range(3):
        policies = [checked(HeuristicBot(seed + i), seen) for i in range(players)]
        state, _ = play_match(rules, players, policies, seed=seed, max_moves=20_000)
        assert state.match_over
    assert seen


@pytest.mark.parametrize("variant", VARIANTS)
def test_heuristic_bot_habits_hold_at_every_decision(variant: str) -> None:
    """Declares, catches and answers chains whenever it can; a wild only when nothing else fits."""
    rules = get_variant(variant, match=MatchFormat("hands", 3))
    seen: list = []
    policies = [checked(HeuristicBot(i), seen) for i in range(3)]
    play_match(rules, 3, policies, seed=5, max_moves=20_000)
    wild = rules.wild_ranks
    counts = {"declare": 0, "chain": 0, "wild": 0, "jump": 0}
    for state, seat, legal, move in seen:
        if any(isinstance(m, Declare) for m in legal):
            assert isinstance(move, Declare)
            counts["declare"] += 1
            continue
        if any(isinstance(m, Catch) for m in legal):
            assert isinstance(move, Catch)
            continue
        plays = [m for m in legal if isinstance(m, Play)]
        if not plays:
            continue
        assert isinstance(move, Play), "it never draws, passes or lets a jump-in go"
        counts["jump"] += to_act(state) != seat
        if any(m.declare for m in plays if m.slot == move.slot):
            assert move.declare
            counts["declare"] += 1
        if state.pending_draw and to_act(state) == seat:
            counts["chain"] += 1
        if move.card.rank in wild:
            counts["wild"] += 1
            assert all(m.card.rank in wild for m in plays), "a wild is kept while others fit"
    assert counts["wild"] > 0
    assert counts["chain"] > 0 or not rules.chain_draws
    assert counts["jump"] > 0 or not rules.jump_in
    assert counts["declare"] > 0


def test_heuristic_bot_sheds_its_costliest_card_and_keeps_the_jack() -> None:
    rules = get_variant("dernier")
    table = Table(rules, ["JY 3B 5B 9B 2R", "4Y 6Y 8R 9G QG"], first="4B", dealer=1)
    move = HeuristicBot(0)(table.state, 0, table.dealer.view(table.state, 0))
    assert isinstance(move, Play) and str(move.card) == "9B"


def test_heuristic_bot_names_the_suit_it_holds_most_of() -> None:
    rules = get_variant("dernier")
    table = Table(rules, ["JY 3B 5B 9B 2R", "4Y 6Y 8R 9G QG"], first="8Y", dealer=1)
    move = HeuristicBot(0)(table.state, 0, table.dealer.view(table.state, 0))
    assert isinstance(move, Play) and str(move.card) == "JY" and move.suit is Suit.BLUE


def test_heuristic_bot_answers_a_chain_with_its_ace() -> None:
    rules = get_variant("dernier")
    table = Table(rules, ["AB 3R 4R 6R 8R", "AR 9R KR QG 2G"], first="5B", dealer=1)
    table.play(0, "AB")
    assert table.state.pending_draw == 2
    move = HeuristicBot(0)(table.state, 1, table.dealer.view(table.state, 1))
    assert isinstance(move, Play) and str(move.card) == "AR"


def test_heuristic_bot_swaps_with_the_seat_holding_fewest_cards() -> None:
    rules = get_variant("moderno")
    table = Table(
        rules,
        ["SWAPR 3R 4G 5G 6G 7G 8G 9G", "1Y 2Y 3Y 4Y 5Y 6Y 7Y 8Y", "1B 2B 3B 4B 5B 6B 7B 4R"],
        first="9R",
        then="1G",
        dealer=2,
    )
    table.play(0, "3R")
    table.draw(1)
    table.pass_(1)
    table.play(2, "4R")
    assert table.state.hand_sizes == (7, 9, 7)
    move = HeuristicBot(0)(table.state, 0, table.dealer.view(table.state, 0))
    assert isinstance(move, Play) and move.card.rank.value == "SWAP" and move.target == 2


def _win_rate(variant: str, games: int, hands: int | None) -> float:
    rules = get_variant(variant)
    if hands is not None:
        rules = get_variant(variant, match=MatchFormat("hands", hands))
    wins = 0
    for g in range(games):
        seat = g % 2  # the heuristic bot alternates seats
        policies = [RandomBot(g + 10_000), RandomBot(g + 10_000)]
        policies[seat] = HeuristicBot(g)
        state, _ = play_match(rules, 2, policies, seed=g, max_moves=100_000)
        assert state.match_over
        wins += state.winner == seat
    return wins / games


# Measured with these seeds (two players, the heuristic bot alternating seats): full matches
# 0.975 (dernier, 200), 1.0 (standard, 200); single hands 0.715 (dernier, 400), 0.69 (standard,
# 400). The engine's readings may still move these a little: the thresholds leave a wide margin.
@pytest.mark.parametrize("variant", ["dernier", "standard"])
def test_heuristic_bot_wins_most_two_player_matches(variant: str) -> None:
    assert _win_rate(variant, 200, None) >= 0.9


@pytest.mark.parametrize("variant", ["dernier", "standard"])
def test_heuristic_bot_wins_most_single_hands(variant: str) -> None:
    assert _win_rate(variant, 400, 1) >= 0.6


def test_heuristic_bot_catches_a_missed_declaration() -> None:
    rules = get_variant("standard")
    table = Table(rules, ["5R 6R 1G 2G 3G 4G 6G", "1Y 2Y 3Y 4Y 6Y 7Y 8Y"], first="9R", dealer=1)
    # a shortcut to a reachable table: seat 0 is down to two cards
    s = table.state
    keep = (table.slot(0, "5R"), table.slot(0, "6R"))
    rest = tuple(x for x in s.hands[0] if x not in keep)
    table.state = s._replace(hands=(keep, s.hands[1] + rest))
    table.play(0, "5R")  # no DERNIER
    move = HeuristicBot(0)(table.state, 1, table.dealer.view(table.state, 1))
    assert move == Catch(1, 0)
