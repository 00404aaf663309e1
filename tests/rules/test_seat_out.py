"""A seat that leaves a table of three or more goes out (option leave "play_on", the default
but in `dernier`): the hand is void, the others play on."""

import random

import pytest

from dernier_p2p.rules import (
    Dealt,
    Draw,
    Forfeited,
    HandScored,
    HandStarted,
    IllegalMove,
    Leave,
    MatchFormat,
    Play,
    SeatOut,
    Timeout,
    apply,
    get_variant,
    leave_ends_match,
    legal_moves,
    new_match,
    to_act,
)
from dernier_p2p.rules.simulate import Dealer, Table, answer_chance

S = get_variant("standard")
M = get_variant("moderno")
D = get_variant("dernier", leave="play_on")  # dernier's own default ends the match
H0 = "1Y 2Y 3Y 4Y 6Y 8Y 9Y"
H1 = "5G 7G SKIPG DRAW2R WILD WILD4 9B"
H2 = "1R 2R 3R 4R SKIPB REVERSEB 8B"
H3 = "1B 2B 3B 4B 5B 6B 7B"


def test_a_leaver_at_three_seats_voids_the_hand_and_is_dealt_out():
    t = Table(S, [H0, H1, H2, H3], first="5R", dealer=0)
    scores = t.state.scores
    ev = t.move(Leave(1))
    assert SeatOut(1, "left", 1) in ev and not any(isinstance(e, Forfeited) for e in ev)
    st = t.state
    assert st.out == (1,) and st.hand_number == 2 and not st.match_over
    assert st.scores == scores  # the void hand scores nothing
    assert HandStarted(2, 2) in ev  # the deal passes from seat 0 to the next seat in play, 2
    dealt = [(e.seat, len(e.slots)) for e in ev if isinstance(e, Dealt)]
    assert dealt == [(3, S.hand_size), (0, S.hand_size), (2, S.hand_size)]  # from the dealer's left
    assert st.hands[1] == ()
    assert legal_moves(st, 1, {}) == []
    with pytest.raises(IllegalMove) as info:
        t.move(Draw(1))
    assert info.value.rule in ("seat-out", "not-your-turn")
    with pytest.raises(IllegalMove) as info:
        t.move(Leave(1))
    assert info.value.rule == "seat-out"
    with pytest.raises(IllegalMove) as info:
        t.move(Timeout(1))
    assert info.value.rule == "seat-out"


def test_turns_skip_a_seat_out_both_ways() -> None:
    t = Table(S, [H0, H1, H2, H3], first="5R", dealer=3)
    t.move(Leave(1))
    seen = []
    for _ in range(40):
        st = t.state
        if st.match_over or st.hand_number != 2:
            break
        seat = to_act(st)
        seen.append(seat)
        moves = [m for m in t.legal(seat) if not isinstance(m, Play) or m.declare is False]
        t.move(moves[0])
    assert seen and 1 not in seen


def test_swap_and_rotate_never_reach_a_seat_out() -> None:
    rng = random.Random(5)
    checked = 0
    for seed in range(60):
        state = new_match(M, 4)
        dealer = Dealer(M, seed)
        state, _ = answer_chance(state, dealer)
        state, _ = apply(state, Leave(seed % 4))
        state, _ = answer_chance(state, dealer)
        gone = seed % 4
        for _ in range(300):
            if state.match_over or state.out != (gone,):
                break
            seat = to_act(state)
            moves = legal_moves(state, seat, dealer.view(state, seat))
            for m in moves:
                assert getattr(m, "target", None) != gone
            state, _ = apply(state, moves[int(rng.random() * len(moves))])
            state, _ = answer_chance(state, dealer)
            assert state.hands[gone] == ()
            checked += 1
    assert checked > 1000


def test_the_last_two_play_on_and_the_leavers_rank_last_in_reverse_order() -> None:
    t = Table(S, [H0, H1, H2, H3], first="5R", dealer=0)
    t.move(Leave(2))
    t.move(Leave(0))
    st = t.state
    assert st.out == (2, 0) and not st.match_over
    t.move(Leave(3))  # two in play: leaving ends the match
    st = t.state
    assert st.match_over and st.standings == (1, 3, 0, 2) and st.winner == 1


def test_a_match_won_on_score_ranks_the_seats_out_last() -> None:
    rules = get_variant("standard", match=MatchFormat("target", 1))
    rng = random.Random(2)
    for seed in range(10):
        state = new_match(rules, 3)
        dealer = Dealer(rules, seed)
        state, _ = answer_chance(state, dealer)
        state, _ = apply(state, Leave(1))
        state, _ = answer_chance(state, dealer)
        for _ in range(2000):
            if state.match_over:
                break
            seat = to_act(state)
            moves = legal_moves(state, seat, dealer.view(state, seat))
            plays = [m for m in moves if isinstance(m, Play)] or moves
            state, _ = apply(state, plays[int(rng.random() * len(plays))])
            state, _ = answer_chance(state, dealer)
        assert state.match_over and state.standings[-1] == 1 and state.scores[1] == 0


def test_a_dernier_time_out_still_ends_the_match_with_the_seats_out_last() -> None:
    hands = ["2Y 3Y 4Y 5Y 6Y", "5G 6G 9B 2R 3R", "4R 6R 8B 2B 3B", "3G 4B 5B 6B 9G"]
    t = Table(D, hands, first="9R", dealer=0)
    t.move(Leave(2))
    seat = to_act(t.state)
    ev = t.move(Timeout(seat))
    assert any(isinstance(e, Forfeited) for e in ev)
    st = t.state
    assert st.match_over and st.standings[-2:] == (seat, 2)


def test_leaving_before_the_first_deal_ends_the_match() -> None:
    state = new_match(S, 4)
    state, ev = apply(state, Leave(3))
    assert state.match_over and state.standings[-1] == 3 and state.out == ()


def test_a_dernier_leaver_at_three_seats_loses_a_match_point_and_the_match_goes_on() -> None:
    hands = ["2Y 3Y 4Y 5Y 6Y", "5G 6G 9B 2R 3R", "4R 6R 8B 2B 3B", "3G 4B 5B 6B 9G"]
    t = Table(D, hands, first="9R", dealer=0)
    t.move(Leave(1))
    assert not t.state.match_over and t.state.match_points == (1, -1, 1, 1)
    t.move(Leave(3))  # a seat already out gains nothing
    assert not t.state.match_over and t.state.match_points == (2, -1, 2, 0)
    t.move(Leave(0))  # two in play: the match ends; the seats out still gain nothing
    assert t.state.match_over and t.state.match_points == (1, -1, 3, 0)
    assert t.state.standings == (2, 0, 3, 1)


def test_readings_3_a_dernier_leave_plays_on_and_a_forfeit_pays_the_seats_out_too() -> None:
    """Version 3's reading (``readings`` 3, the rules of a version-2 or -3 transcript): option
    ``leave`` does not exist, so a ``dernier`` seat that leaves at three or more seats in play
    goes out and the others play on, whatever the option says; the forfeit that ends the match
    at two seats in play gives +1 to every other seat, out or in play."""
    hands = ["2Y 3Y 4Y 5Y 6Y", "5G 6G 9B 2R 3R", "4R 6R 8B 2B 3B", "3G 4B 5B 6B 9G"]
    for leave in ("end", "play_on"):
        t = Table(get_variant("dernier", readings=3, leave=leave), hands, first="9R", dealer=0)
        assert not leave_ends_match(t.state)
        t.move(Leave(1))
        assert not t.state.match_over and t.state.out == (1,)
        assert t.state.match_points == (1, -1, 1, 1)
        t.move(Leave(3))
        assert not t.state.match_over and t.state.match_points == (2, -1, 2, 0)
        assert leave_ends_match(t.state)  # two in play
        t.move(Leave(0))
        assert t.state.match_over and t.state.match_points == (1, 0, 3, 1)
        assert t.state.standings == (2, 0, 3, 1)


def test_whether_a_leave_ends_the_match_follows_the_option() -> None:
    hands = ["2Y 3Y 4Y 5Y 6Y", "5G 6G 9B 2R 3R", "4R 6R 8B 2B 3B", "3G 4B 5B 6B 9G"]
    ends = Table(get_variant("dernier"), hands, first="9R", dealer=0)
    goes_on = Table(D, hands, first="9R", dealer=0)
    assert leave_ends_match(ends.state) and not leave_ends_match(goes_on.state)
    assert not leave_ends_match(Table(S, [H0, H1, H2], first="5R", dealer=0).state)
    assert leave_ends_match(Table(S, [H0, H1], first="5R", dealer=0).state)
    assert leave_ends_match(new_match(S, 4))  # before the first dealer
    ends.move(Leave(2))
    assert ends.state.match_over and ends.state.out == ()
    goes_on.move(Leave(2))
    assert not goes_on.state.match_over and goes_on.state.out == (2,)
    assert leave_ends_match(goes_on.state) is False  # three still in play
    strict = Table(get_variant("standard", leave="end"), [H0, H1, H2], first="5R", dealer=0)
    strict.move(Leave(0))
    assert strict.state.match_over and strict.state.standings[-1] == 0
    assert strict.state.match_points == (0, 0, 0)  # match points are dernier's (timeout forfeit)


def test_a_seat_out_scores_nothing_in_later_hands_under_dernier_scoring() -> None:
    """Its score stays as it was (RULES.md "A seat out"): dernier scoring gives each seat the
    points of the others' cards, and a seat out, holding none, is not one of the scorers."""
    rng = random.Random(7)
    for seed in range(6):
        state = new_match(D, 4)
        dealer = Dealer(D, seed)
        state, _ = answer_chance(state, dealer)
        state, _ = apply(state, Leave(1))
        state, _ = answer_chance(state, dealer)
        scored = []
        for _ in range(2000):
            if state.match_over or state.hand_number > 3:
                break
            seat = to_act(state)
            moves = legal_moves(state, seat, dealer.view(state, seat))
            plays = [m for m in moves if isinstance(m, Play)] or moves
            state, ev = apply(state, plays[int(rng.random() * len(plays))])
            state, more = answer_chance(state, dealer)
            scored += [e for e in [*ev, *more] if isinstance(e, HandScored)]
        assert scored, seed
        assert all(e.deltas[1] == 0 for e in scored) and state.scores[1] == 0
        assert any(sum(e.deltas) > 0 for e in scored)
