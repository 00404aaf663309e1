"""Standings: every tie-break key of every match format, each shown to decide an order."""

from __future__ import annotations

import pytest

from dernier_p2p.rules import MatchFormat, get_variant
from dernier_p2p.rules.scoring import match_ended, standings


def rules(kind: str, value: int, variant: str = "dernier"):
    return get_variant(variant, match=MatchFormat(kind, value))


def test_wins_format_ranks_hands_won_then_cards_then_earliest_last_draw_then_seat():
    wins = rules("wins", 3, "originale")
    # seat 0 has by far the most points but fewer wins: points do not count
    scores, won = (500, 0, 0, 0, 0), (1, 2, 2, 2, 2)
    sizes, drawn = (0, 3, 1, 1, 1), (0, 1, 7, 2, 2)
    # wins 2: seat 1 holds 3 cards; seats 2, 3, 4 hold 1, seat 2 drew last (7); 3 and 4 tie
    assert standings(wins, scores, won, sizes, drawn) == (3, 4, 2, 1, 0)
    # more hands won beats fewer cards and an earlier draw
    assert standings(wins, (0, 0), (3, 2), (9, 0), (9, -1)) == (0, 1)
    # on equal wins, the same number of cards: the earlier last draw (-1: none) ranks first
    assert standings(wins, (0, 0), (2, 2), (4, 4), (3, -1)) == (1, 0)
    assert standings(wins, (7, 0), (2, 2), (4, 4), (6, 6), last=(1,)) == (0, 1)


def test_one_hand_match_ignores_hands_won():
    one = rules("hands", 1)
    # seats 0, 1, 2 tie on points; seat 1 won the hand's count but holds more cards
    scores, won = (10, 10, 10, 5), (0, 1, 0, 0)
    sizes, drawn = (2, 3, 2, 0), (4, 1, 3, -1)
    assert standings(one, scores, won, sizes, drawn) == (2, 0, 1, 3)
    # full tie: seat order
    assert standings(one, (10, 10), (1, 0), (2, 2), (5, 5)) == (0, 1)
    assert standings(one, (10, 10), (0, 1), (2, 2), (5, 5)) == (0, 1)


def test_two_hand_match_counts_hands_won_before_cards():
    two = rules("hands", 2)
    assert standings(two, (10, 10, 10, 5), (0, 1, 0, 0), (2, 3, 2, 0), (4, 1, 3, -1)) == (
        1, 2, 0, 3)


def test_penalty_limit_ranks_lowest_score_then_most_wins():
    pen = rules("penalty_limit", 500, "moderno")
    assert standings(pen, (120, 40, 40, 40), (0, 1, 2, 2), (0, 1, 3, 3), (0, 0, 5, 2)) == (
        3, 2, 1, 0)
    assert standings(pen, (40, 40), (1, 1), (1, 1), (2, 2)) == (0, 1)


@pytest.mark.parametrize("kind", ["target", "first_to"])
def test_point_formats_rank_most_points_then_wins_then_cards_then_draw(kind: str):
    fmt = rules(kind, 500)
    assert standings(fmt, (90, 90, 90, 90, 95), (1, 2, 2, 2, 0), (0, 4, 2, 2, 9),
                     (0, 0, 8, 3, 9)) == (4, 3, 2, 1, 0)


def test_match_end_of_each_format_at_its_bound():
    assert not match_ended(rules("hands", 2), (0, 0), (1, 0), 1)
    assert match_ended(rules("hands", 2), (0, 0), (1, 0), 2)
    assert not match_ended(rules("wins", 3), (900, 0), (2, 2), 9)
    assert match_ended(rules("wins", 3), (0, 0), (3, 0), 3)
    assert not match_ended(rules("first_to", 500), (499, 0), (0, 0), 5)
    assert match_ended(rules("first_to", 500), (500, 0), (0, 0), 5)
    assert not match_ended(rules("target", 500), (500, 0), (0, 0), 5)
    assert match_ended(rules("target", 500), (501, 0), (0, 0), 5)
    assert not match_ended(rules("penalty_limit", 500, "moderno"), (500, 0), (0, 0), 5)
    assert match_ended(rules("penalty_limit", 500, "moderno"), (0, 501), (0, 0), 5)


def test_penalty_limit_ranks_fewest_points_first_under_any_scoring():
    """The format alone makes points a penalty: dernier's scoring under a penalty limit."""
    pen = rules("penalty_limit", 500, "dernier")
    assert pen.scoring != "penalty"
    assert standings(pen, (120, 40, 40, 40), (0, 1, 2, 2), (0, 1, 3, 3), (0, 0, 5, 2)) == (
        3, 2, 1, 0)
