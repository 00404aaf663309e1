"""Match formats, dealer rotation and the tie-breaks (rules/scoring.py and the engine)."""

import random

import pytest

from dernier_p2p.rules import (
    HandOver,
    HandStarted,
    MatchFormat,
    Play,
    apply,
    chance_needed,
    get_variant,
    legal_moves,
    new_match,
    to_act,
)
from dernier_p2p.rules.scoring import hand_deltas, match_ended, standings
from dernier_p2p.rules.simulate import Dealer, play_match


def _play_out(rules, players, seed, max_moves=20_000):
    """A whole match with a play-first random policy; returns final state and all events."""
    rng = random.Random(seed)
    dealer = Dealer(rules, seed)
    state = new_match(rules, players)
    events = []
    for _ in range(max_moves):
        if state.match_over:
            break
        req = chance_needed(state)
        if req is not None:
            state, ev = apply(state, dealer.chance_move(state, req))
        else:
            seat = to_act(state)
            moves = legal_moves(state, seat, dealer.view(state, seat))
            plays = [m for m in moves if isinstance(m, Play)]
            state, ev = apply(state, rng.choice(plays or moves))
        events.extend(ev)
    return state, events


def test_fixed_number_of_hands_rotates_the_dealer_and_most_points_wins():
    rules = get_variant("dernier", match=MatchFormat("hands", 3))
    state, events = _play_out(rules, 3, seed=5)
    assert state.match_over and state.hand_number == 3
    dealers = [e.dealer for e in events if isinstance(e, HandStarted)]
    assert dealers == [(dealers[0] + k) % 3 for k in range(3)]
    assert state.scores[state.winner] == max(state.scores)
    assert sorted(state.standings) == [0, 1, 2]


def test_target_score_ends_when_someone_passes_it():
    rules = get_variant("dernier", match=MatchFormat("target", 120))
    state, _ = _play_out(rules, 3, seed=7)
    assert state.match_over and max(state.scores) > 120
    assert state.scores[state.winner] == max(state.scores)


def test_originale_first_to_three_hands():
    rules = get_variant("originale")
    state, _ = _play_out(rules, 3, seed=3, max_moves=60_000)
    assert state.match_over
    assert max(state.hands_won) == 3 and state.hands_won[state.winner] == 3
    assert state.scores == state.hands_won


def test_moderno_ends_past_300_penalty_points_lowest_wins():
    state, _ = _play_out(get_variant("moderno"), 3, seed=11)
    assert state.match_over and max(state.scores) > 300
    assert state.scores[state.winner] == min(state.scores)


def test_standard_first_to_500():
    state, _ = _play_out(get_variant("standard"), 2, seed=13, max_moves=60_000)
    assert state.match_over and max(state.scores) >= 500
    assert state.scores[state.winner] >= 500


def test_match_ended_by_format():
    d = get_variant("dernier")
    assert not match_ended(d, (500, 0), (3, 0), 9)
    assert match_ended(d, (501, 0), (3, 0), 9)
    h = get_variant("dernier", match=MatchFormat("hands", 2))
    assert not match_ended(h, (900, 0), (1, 0), 1) and match_ended(h, (0, 0), (0, 0), 2)
    o = get_variant("originale")
    assert not match_ended(o, (2, 2), (2, 2), 4) and match_ended(o, (3, 2), (3, 2), 5)
    m = get_variant("moderno")
    assert not match_ended(m, (300, 10), (0, 1), 5) and match_ended(m, (301, 10), (0, 1), 5)
    s = get_variant("standard")
    assert match_ended(s, (500, 10), (1, 0), 5) and not match_ended(s, (499, 10), (1, 0), 5)


def test_dernier_hand_score_reading():
    d = get_variant("dernier")
    assert hand_deltas(d, (10, 0, 25), 1) == (25, 50 + 35, 10)
    assert hand_deltas(d, (10, 4, 25), None) == (29, 35, 14)  # empty pile: no bonus
    alt = get_variant("dernier", others_score=False)
    assert hand_deltas(alt, (10, 0, 25), 1) == (0, 85, 0)


def test_a_seat_out_scores_nothing():
    d = get_variant("dernier")
    assert hand_deltas(d, (10, 0, 0, 25), 1, (2,)) == (25, 50 + 35, 0, 10)
    assert hand_deltas(d, (10, 4, 0, 25), None, (2,)) == (29, 35, 0, 14)
    assert hand_deltas(get_variant("moderno"), (10, 0, 0, 25), 1, (2,)) == (10, 0, 0, 25)


def test_other_scorings():
    assert hand_deltas(get_variant("moderno"), (10, 0, 25), 1) == (10, 0, 25)
    assert hand_deltas(get_variant("standard"), (10, 0, 25), 1) == (0, 35, 0)
    assert hand_deltas(get_variant("originale"), (10, 0, 25), 1) == (0, 1, 0)


def test_single_hand_ties_points_then_fewest_cards_then_earliest_last_draw():
    one = get_variant("dernier", match=MatchFormat("hands", 1))
    # seats 0 and 2 tie on points; seat 2 holds fewer cards
    assert standings(one, (40, 10, 40), (0, 0, 0), (3, 5, 2), (4, 1, 9)) == (2, 0, 1)
    # same cards: whoever drew their last card earliest wins
    assert standings(one, (40, 10, 40), (0, 0, 0), (3, 5, 3), (9, 1, 4)) == (2, 0, 1)


def test_several_hands_ties_hands_won_then_cards_then_last_drawer_loses():
    many = get_variant("dernier", match=MatchFormat("hands", 3))
    assert standings(many, (90, 90), (1, 2), (3, 1), (5, 1)) == (1, 0)
    assert standings(many, (90, 90), (2, 2), (1, 3), (5, 1)) == (0, 1)
    assert standings(many, (90, 90), (2, 2), (3, 3), (7, 2)) == (1, 0)
    target = get_variant("dernier")
    assert standings(target, (600, 600, 100), (2, 3, 0), (0, 0, 0), (0, 0, 0)) == (1, 0, 2)


def test_forfeited_seats_come_last():
    d = get_variant("dernier")
    assert standings(d, (10, 90, 40), (0, 1, 0), (1, 1, 1), (0, 0, 0), last=(1,)) == (2, 0, 1)


def test_play_match_returns_the_moves_and_asks_out_of_turn_seats():
    asked = []
    rng = random.Random(4)

    def policy(state, seat, view):
        moves = legal_moves(state, seat, view)
        if seat != to_act(state):
            asked.append(seat)
            return None
        plays = [m for m in moves if isinstance(m, Play)]
        return rng.choice(plays or moves)

    rules = get_variant("moderno", match=MatchFormat("hands", 1))
    state, moves = play_match(rules, 3, [policy] * 3, seed=2)
    assert state.match_over
    assert moves and state.hand_number == 1
    # replaying the recorded moves gives the same final state
    replay = new_match(rules, 3)
    for m in moves:
        replay, _ = apply(replay, m)
    assert replay == state
    assert asked  # jump-ins were possible and offered at some point


# Each variant under a fixed number of hands, a target score and its own format; the winner
# must hold the best score in the variant's direction (moderno counts penalty points: fewest
# wins; originale counts hands won).
_FORMATS = {
    "dernier": (MatchFormat("hands", 1), MatchFormat("hands", 2), MatchFormat("target", 120)),
    "originale": (MatchFormat("hands", 1), MatchFormat("hands", 2), MatchFormat("target", 1)),
    "moderno": (MatchFormat("hands", 1), MatchFormat("hands", 2), MatchFormat("target", 30)),
    "standard": (MatchFormat("hands", 1), MatchFormat("hands", 2), MatchFormat("target", 100)),
}
_CASES = [
    (name, fmt, seed)
    for name, fmts in _FORMATS.items()
    for fmt in (*fmts, get_variant(name).match)
    for seed in (5, 6)
]


@pytest.mark.parametrize(
    "name,fmt,seed", _CASES, ids=[f"{n}-{f.kind}{f.value}-s{s}" for n, f, s in _CASES]
)
def test_winner_per_variant_and_match_format(name, fmt, seed):
    rules = get_variant(name, match=fmt)
    state, events = _play_out(rules, 3, seed=seed, max_moves=80_000)
    assert state.match_over
    if rules.scoring == "wins" or fmt.kind == "wins":
        measure = [-w for w in state.hands_won]
    elif rules.scoring == "penalty":
        measure = list(state.scores)
    else:
        measure = [-s for s in state.scores]
    assert state.standings[0] == state.winner
    assert [measure[s] for s in state.standings] == sorted(measure)
    if fmt == MatchFormat("hands", 1):
        out = [e.winner for e in events if isinstance(e, HandOver)]
        assert len(out) == 1
        if out[0] is not None:  # one hand: whoever went out wins the match
            assert state.winner == out[0]


def test_ties_past_the_documented_keys_in_originale_and_standard():
    """RULES.md "Ties in every variant": after the format's keys, fewest cards, then the
    earliest last draw, then the lowest seat, in every variant."""
    orig = get_variant("originale")  # wins 3: hands won first
    assert standings(orig, (3, 3, 1), (3, 3, 1), (4, 2, 0), (5, 9, 1)) == (1, 0, 2)
    assert standings(orig, (3, 3, 1), (3, 3, 1), (2, 2, 0), (9, 5, 1)) == (1, 0, 2)
    assert standings(orig, (3, 3, 1), (3, 3, 1), (2, 2, 0), (-1, -1, 1)) == (0, 1, 2)
    std = get_variant("standard")  # first to 500: points, then hands won
    assert standings(std, (500, 500, 80), (2, 2, 1), (3, 1, 0), (4, 8, 2)) == (1, 0, 2)
    assert standings(std, (500, 500, 80), (2, 2, 1), (1, 1, 0), (8, 4, 2)) == (1, 0, 2)
    assert standings(std, (500, 500, 80), (2, 2, 1), (1, 1, 0), (4, 4, 2)) == (0, 1, 2)
