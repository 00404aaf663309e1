"""Engine events -> deck operations, reshuffle forms, table options."""

import pytest

from dernier_p2p.protocol.bridge import card_face, ops_for_events, reshuffle_op, rules_from_table
from dernier_p2p.rules import (
    CutKept,
    Dealt,
    Drew,
    HandsRotated,
    HandsSwapped,
    MatchFormat,
    Played,
    TakenBack,
    parse_card,
)
from dernier_p2p.rules.cards import Rank, deck_cards


def deal(p, to):
    return {"op": "deal", "position": p, "to": to}


def move(p, to):
    return {"op": "transfer", "position": p, "to": to}


def test_deals_follow_event_order():
    events = [Dealt(1, (0, 3)), Dealt(2, (1, 4)), Drew(0, (7,), "draw")]
    ops, hands = ops_for_events([[], [], []], events)
    assert ops == [deal(0, 1), deal(3, 1), deal(1, 2), deal(4, 2), deal(7, 0)]
    assert hands == [[7], [0, 3], [1, 4]]


def test_swap_moves_lower_seat_first_in_old_hand_order_after_earlier_events():
    card = parse_card("5R")
    events = [
        Drew(2, (9, 10), "penalty-declaration"),  # before the swap: seat 2's old hand grows
        Played(0, 1, card),
        HandsSwapped(2, 0),
    ]
    ops, hands = ops_for_events([[1, 2], [5], [3]], events)
    assert ops == [deal(9, 2), deal(10, 2), move(2, 2), move(3, 0), move(9, 0), move(10, 0)]
    assert hands == [[3, 9, 10], [5], [2]]


def test_rotation_each_seat_in_order():
    ops, hands = ops_for_events([[1], [2, 3], [4]], [HandsRotated(-1)])
    assert ops == [move(1, 2), move(2, 0), move(3, 0), move(4, 1)]
    assert hands == [[2, 3], [4], [1]]
    ops, hands = ops_for_events([[1], [2, 3], [4]], [HandsRotated(1)])
    assert ops == [move(1, 1), move(2, 2), move(3, 2), move(4, 0)]
    assert hands == [[4], [1], [2, 3]]


def test_cut_kept_is_dealt_and_taken_back_card_stays():
    card = parse_card("AR")
    ops, hands = ops_for_events([[], [4]], [CutKept(0, 107), TakenBack(1, 4, card)])
    assert ops == [deal(107, 0)]
    assert hands == [[107], [4]]


def test_reshuffle_forms():
    assert reshuffle_op([5, 2], {5: 40, 2: 7}) == {"op": "reshuffle", "cards": [40, 7]}
    assert reshuffle_op([5, 60, 61], {5: 40}) == {"op": "reshuffle", "positions": [5, 60, 61]}


def test_rules_from_table_options():
    rules = rules_from_table("moderno", {"match": ["hands", 2], "hand_size": 5})
    assert rules.match == MatchFormat("hands", 2) and rules.hand_size == 5
    with pytest.raises(ValueError):
        rules_from_table("moderno", {"no_such_option": 1})
    with pytest.raises(ValueError):
        rules_from_table("nope", {})
    for match in ("hands", 2, None, ["hands"], ["hands", 2, 3]):
        with pytest.raises(ValueError):
            rules_from_table("dernier", {"match": match})
    for key, val in (("deck", "moderno-112"), ("name", "moderno")):  # the variant decides them
        with pytest.raises(ValueError):
            rules_from_table("dernier", {key: val})
    # rank options travel as their strings (PROTOCOL.md 17.2)
    r = rules_from_table("moderno", {"skip_ranks": ["SKIP", "REVERSE"], "reverse_ranks": [],
                                     "chain_draws": [["DRAW2", 2]], "forced_draws": [["WILD4", 4]]})
    assert r.skip_ranks == (Rank.SKIP, Rank.REVERSE) and r.forced_draws == ((Rank.WILD4, 4),)


def test_rules_from_table_read_the_tables_version():
    """Version 4's readings for a table of version 4 (the default), version 3's for 2 and 3
    (PROTOCOL.md 20); ``readings`` is not a table option, and ``leave`` is one of version 4
    only."""
    assert rules_from_table("dernier", {}).readings == 4
    assert [rules_from_table("dernier", {}, v).readings for v in (2, 3, 4)] == [3, 3, 4]
    assert rules_from_table("dernier", {"leave": "play_on"}, 4).leave == "play_on"
    for version in (2, 3):
        with pytest.raises(ValueError, match=f"option leave is an option of protocol version 4; "
                           f"a table of version {version} has none"):
            rules_from_table("dernier", {"leave": "play_on"}, version)
    for version in (3, 4):
        with pytest.raises(ValueError, match="readings is not a table option"):
            rules_from_table("standard", {"readings": 3}, version)


def test_card_faces_share_deck_indices():
    for deck in ("dernier-54", "originale-108", "moderno-112", "standard-108"):
        assert [card_face(deck, k) for k in range(len(deck_cards(deck)))] == list(deck_cards(deck))
