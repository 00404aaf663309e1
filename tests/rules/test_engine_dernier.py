"""Scenario tests of `dernier` (seeds 000/001): one or more per rule line of the digest.

Three seats unless said; seat 0 deals, so seat 1 starts. Hands are stacked with Table.
"""

import pytest

from dernier_p2p.rules import (
    Declare,
    Draw,
    Drew,
    Forfeited,
    HandOver,
    HandScored,
    IllegalMove,
    Leave,
    MatchFormat,
    MatchOver,
    NameSuit,
    Pass,
    Penalty,
    Phase,
    Play,
    SeatOut,
    Skipped,
    Suit,
    Timeout,
    get_variant,
    parse_card,
)
from dernier_p2p.rules.simulate import Table
from tests.rules.scenario import illegal, snap
from tests.rules.scenario import pm as play_move

R = get_variant("dernier")
ONE_HAND = get_variant("dernier", match=MatchFormat("hands", 1))
# two-card hands keep end-of-hand scenarios short (hand_size is an option)
R2 = get_variant("dernier", hand_size=2)
ONE2 = get_variant("dernier", hand_size=2, match=MatchFormat("hands", 1))

H0 = "2Y 3Y 4Y 5Y 6Y"
H1 = "5B 8B AB 7B QB"
H2 = "9R 9G KB 10G 8R"








# --- deck, players, dealer, deal ------------------------------------------------------------


def test_deal_five_each_from_the_dealers_next_and_turn_up_the_first_card():
    t = Table(R, [H0, H1, H2], first="3B")
    s = t.state
    assert s.phase is Phase.PLAY and s.dealer == 0 and s.hand_number == 1
    assert snap(t) == (1, "3B", None, 0, (5, 5, 5))
    assert s.pile_size == 54 - 15 - 1
    dealt = [e.seat for e in t.all_events if type(e).__name__ == "Dealt"]
    assert dealt == [1, 2, 0]
    assert t.hand(1) == H1.split()


def test_dealer_two_deals_and_seat_zero_starts():
    t = Table(R, [H0, H1, H2], first="3B", dealer=2)
    assert t.state.dealer == 2 and t.state.turn == 0


# --- the first card -------------------------------------------------------------------------


def test_first_jack_dealer_names_the_suit():
    t = Table(R, [H0, H1, H2], first="JR")
    assert t.state.phase is Phase.NAME_SUIT
    illegal(t, NameSuit(1, Suit.GREEN), "not-your-turn")
    illegal(t, play_move(t, 1, "5B"), "wrong-phase")
    t.move(NameSuit(0, Suit.BLUE))
    assert snap(t) == (1, "JR", Suit.BLUE, 0, (5, 5, 5))
    t.play(1, "5B")
    assert snap(t) == (2, "5B", None, 0, (5, 4, 5))


def test_first_ace_next_player_draws_two_or_answers():
    t = Table(R, [H0, H1, H2], first="AY", then="KR KG")
    assert snap(t) == (1, "AY", None, 2, (5, 5, 5))
    t.draw(1)
    assert snap(t) == (2, "AY", None, 0, (5, 7, 5))
    t2 = Table(R, [H0, H1, H2], first="AY")
    t2.play(1, "AB")
    assert snap(t2) == (2, "AB", None, 4, (5, 4, 5))


def test_first_jolly_dealer_names_and_next_draws_four():
    t = Table(R, [H0, H1, H2], first="JOKER")
    assert t.state.phase is Phase.NAME_SUIT
    t.move(NameSuit(0, Suit.RED))
    assert snap(t) == (1, "JOKER", Suit.RED, 4, (5, 5, 5))
    t.draw(1)
    assert snap(t) == (2, "JOKER", Suit.RED, 0, (5, 9, 5))
    t.play(2, "9R")
    assert snap(t) == (0, "9R", None, 0, (5, 9, 4))


def test_first_seven_dealers_previous_draws_two():
    t = Table(R, [H0, H1, H2], first="7G")
    assert snap(t) == (1, "7G", None, 0, (5, 5, 7))
    assert [e.reason for e in t.all_events if isinstance(e, Drew)] == ["penalty-7"]


def test_first_queen_skips_the_dealers_next():
    t = Table(R, [H0, H1, H2], first="QG")
    assert snap(t) == (2, "QG", None, 0, (5, 5, 5))


def test_first_king_reverses_and_dealers_previous_starts():
    t = Table(R, [H0, H1, H2], first="KG")
    assert t.state.direction == -1
    assert snap(t) == (2, "KG", None, 0, (5, 5, 5))


# --- matching and action cards ----------------------------------------------------------------


def test_play_on_suit_or_rank_else_must_match():
    t = Table(R, [H0, H1, H2], first="3B", then="2G")
    t.play(1, "5B")  # suit
    assert snap(t) == (2, "5B", None, 0, (5, 4, 5))
    illegal(t, play_move(t, 2, "9R"), "must-match")
    t.draw(2)
    t.pass_(2)
    t.play(0, "5Y")  # rank
    assert snap(t) == (1, "5Y", None, 0, (4, 4, 6))


def test_wrong_seat_and_unknown_slot_are_illegal():
    t = Table(R, [H0, H1, H2], first="3B")
    illegal(t, play_move(t, 0, "3Y"), "not-your-turn")
    illegal(t, Play(1, 999, parse_card("5B")), "card-not-held")
    illegal(t, Play(7, 0, parse_card("5B")), "bad-seat")
    illegal(t, Draw(2), "not-your-turn")
    illegal(t, Play(1, t.slot(1, "5B"), parse_card("WILD")), "unknown-card")


def test_ace_chain_adds_two_each_and_taking_ends_the_turn():
    t = Table(R, ["AY 3Y 4Y 5Y 6Y", H1, "AR 9G KB 10G 8R"], first="3B", then="2G 3G 4G 5G 6G")
    t.play(1, "AB")
    assert snap(t) == (2, "AB", None, 2, (5, 4, 5))
    illegal(t, play_move(t, 2, "KB"), "must-answer-chain")
    t.play(2, "AR")
    assert snap(t) == (0, "AR", None, 4, (5, 4, 4))
    illegal(t, Pass(0), "pass-before-draw")
    t.play(0, "AY")
    assert snap(t) == (1, "AY", None, 6, (4, 4, 4))
    ev = t.draw(1)
    assert [e.reason for e in ev if isinstance(e, Drew)] == ["penalty-A"]
    assert snap(t) == (2, "AY", None, 0, (4, 10, 4))


def test_ace_plays_only_on_its_suit_or_an_ace():
    t = Table(R, [H0, "AY 8B 5B 7B QB", H2], first="3B")
    illegal(t, play_move(t, 1, "AY"), "must-match")


def test_seven_previous_player_draws_two_and_does_not_stack():
    t = Table(R, [H0, H1, "7R 9G KB 10G 8R"], first="3B", then="2G 3G 4G 5G")
    t.play(1, "7B")
    assert snap(t) == (2, "7B", None, 0, (7, 4, 5))
    t.play(2, "7R")  # a 7 on a 7: seat 1 (previous of seat 2) draws 2, seat 0 plays on
    assert snap(t) == (0, "7R", None, 0, (7, 6, 4))


def test_jack_plays_on_anything_names_the_suit():
    t = Table(R, [H0, "JR 8B 5B 7B QB", H2], first="3B")
    illegal(t, play_move(t, 1, "JR"), "must-name-suit")
    t.play(1, "JR", suit=Suit.GREEN)
    assert snap(t) == (2, "JR", Suit.GREEN, 0, (5, 4, 5))
    illegal(t, play_move(t, 2, "9R"), "must-match")
    t.play(2, "9G")
    assert snap(t) == (0, "9G", None, 0, (5, 4, 4))


def test_queen_skips_the_next_player():
    t = Table(R, [H0, H1, H2], first="3B")
    ev = t.play(1, "QB")
    assert Skipped(2) in ev
    assert snap(t) == (0, "QB", None, 0, (5, 4, 5))


def test_king_reverses_and_with_two_players_changes_nothing_else():
    t = Table(R, [H0, "KB 8B 5B 7B QB", "9R 9G 2B 10G 8R"], first="3B")
    t.play(1, "KB")
    assert t.state.direction == -1
    assert snap(t) == (0, "KB", None, 0, (5, 4, 5))
    t2 = Table(R, [H0, "KB 8B 5B 7B QB"], first="3B")
    t2.play(1, "KB")
    assert t2.state.direction == -1 and t2.state.turn == 0


def test_jolly_names_suit_next_draws_four_unless_jolly_then_eight():
    t = Table(R, [H0, "JOKER 8B 5B 7B QB", "JOKER 9G KB 10G 8R"], first="3B",
              then=" ".join(["2G"] * 1 + ["3G", "4G", "5G", "6G", "2R", "3R", "4R"]))
    t.play(1, "JOKER", suit=Suit.YELLOW)
    assert snap(t) == (2, "JOKER", Suit.YELLOW, 4, (5, 4, 5))
    illegal(t, play_move(t, 2, "9G"), "must-answer-chain")
    t.play(2, "JOKER", suit=Suit.GREEN)
    assert snap(t) == (0, "JOKER", Suit.GREEN, 8, (5, 4, 4))
    t.draw(0)
    assert snap(t) == (1, "JOKER", Suit.GREEN, 0, (13, 4, 4))


def test_a_jolly_does_not_answer_an_ace_chain():
    t = Table(R, [H0, H1, "JOKER 9G KB 10G 8R"], first="3B")
    t.play(1, "AB")
    illegal(t, play_move(t, 2, "JOKER", suit=Suit.RED), "must-answer-chain")


# --- drawing and passing ----------------------------------------------------------------------


def test_draw_then_play_only_the_drawn_card_or_pass():
    t = Table(R, [H0, H1, H2], first="3G", then="4G 2R")
    illegal(t, Pass(1), "pass-before-draw")
    t.draw(1)
    assert snap(t) == (1, "3G", None, 0, (5, 6, 5))
    assert t.state.drawn == t.slot(1, "4G")
    illegal(t, Draw(1), "already-drawn")
    illegal(t, play_move(t, 1, "QB"), "only-drawn-card")
    assert {type(m).__name__ for m in t.legal(1)} == {"Play", "Pass"}
    t.play(1, "4G")
    assert snap(t) == (2, "4G", None, 0, (5, 5, 5))
    t.draw(2)  # 2R does not match 4G: pass
    assert [type(m).__name__ for m in t.legal(2)] == ["Pass"]
    t.pass_(2)
    assert snap(t) == (0, "4G", None, 0, (5, 5, 6))


def test_may_draw_instead_of_playing_a_valid_card():
    t = Table(R, [H0, H1, H2], first="3B", then="2R")
    t.draw(1)
    t.pass_(1)
    assert snap(t) == (2, "3B", None, 0, (5, 6, 5))


# --- DERNIER ----------------------------------------------------------------------------------


def test_declare_with_the_play_of_the_second_last_card():
    t = Table(R2, ["3B 4Y", "5B 8B", "5R 8R"], first="5Y")
    ev = t.play(1, "5B", declare=True)
    assert "Declared(seat=1)" in map(repr, ev)
    assert t.state.owes == ()
    ev = t.play(2, "5R", declare=True)
    assert not any(isinstance(e, Penalty) for e in ev)
    assert snap(t) == (0, "5R", None, 0, (2, 1, 1))


def test_forgotten_dernier_costs_two_when_the_next_player_moves():
    t = Table(R2, ["3B 4Y", "5B 8B", "5R 8R"], first="5Y", then="2G 3G")
    t.play(1, "5B")
    assert t.state.owes == (1,)
    ev = t.play(2, "5R")
    assert Penalty(1, 2, "declaration") in ev
    assert snap(t) == (0, "5R", None, 0, (2, 3, 1))
    assert t.state.owes == (2,)


def test_declare_alone_within_the_window_avoids_the_penalty():
    t = Table(R2, ["3B 4Y", "5B 8B", "5R 8R"], first="5Y")
    t.play(1, "5B")
    illegal(t, Declare(0), "not-owed")
    t.move(Declare(1))
    assert t.state.owes == ()
    t.play(2, "5R", declare=True)
    assert snap(t) == (0, "5R", None, 0, (2, 1, 1))


def test_queen_skipping_a_one_card_player_makes_them_declare():
    t = Table(R2, ["4Y QY", "5Y 8R", "5B 8B"], first="2Y", then="2G 3G")
    t.play(1, "5Y", declare=True)
    t.draw(2)
    t.pass_(2)
    # seat 0 plays Q: seat 1 (one card) is skipped and must declare again
    ev = t.play(0, "QY", declare=True)
    assert Skipped(1) in ev and t.state.owes == (1,)
    assert snap(t) == (2, "QY", None, 0, (1, 1, 3))
    ev = t.draw(2)
    assert Penalty(1, 2, "declaration") in ev
    assert t.state.hand_sizes == (1, 3, 4)


def test_skipped_one_card_player_who_declares_pays_nothing():
    t = Table(R2, ["4Y QY", "5Y 8R", "5B 8B"], first="2Y", then="2G 3G")
    t.play(1, "5Y", declare=True)
    t.draw(2)
    t.pass_(2)
    t.play(0, "QY", declare=True)
    t.move(Declare(1))
    ev = t.draw(2)
    assert not any(isinstance(e, Penalty) for e in ev)
    assert t.state.hand_sizes == (1, 1, 4)


# --- end of hand, scoring ---------------------------------------------------------------------


def test_going_out_wins_fifty_plus_the_others_cards():
    t = Table(ONE2, ["KY 4Y", "5B 8B", "JOKER AR"], first="5Y", then="2G 3G")
    t.play(1, "5B", declare=True)
    t.draw(2)  # 2G
    t.pass_(2)
    t.draw(0)  # 3G
    t.pass_(0)
    ev = t.play(1, "8B")
    assert HandOver(1, "out") in ev
    scored = [e for e in ev if isinstance(e, HandScored)][0]
    # seat 0 holds K 4 3 = 17, seat 2 holds Jolly A 2 = 28
    assert scored.deltas == (28, 50 + 17 + 28, 17)
    assert t.state.scores == (28, 95, 17)
    assert t.state.match_over and t.state.winner == 1 and t.state.standings == (1, 0, 2)


def test_last_card_ace_makes_the_next_draw_two_counted_in_the_score():
    t = Table(ONE2, ["3Y 4Y", "AB 8B", "5R 8R"], first="8Y", then="2G 3G")
    t.play(1, "8B", declare=True)
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    ev = t.play(1, "AB")
    drew = [e for e in ev if isinstance(e, Drew)]
    assert len(drew) == 1 and drew[0].seat == 2 and len(drew[0].slots) == 2
    assert drew[0].reason == "penalty-A"
    assert HandOver(1, "out") in ev
    assert t.state.final_sizes == (3, 0, 5)


def test_last_card_seven_draw_goes_to_the_previous():
    t = Table(ONE2, ["3Y 4Y", "7B 8B", "5R 8R"], first="8Y", then="2G 3G 4G 5G")
    t.play(1, "8B", declare=True)
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    ev = t.play(1, "7B")
    drew = [e for e in ev if isinstance(e, Drew)]
    assert [(e.seat, len(e.slots), e.reason) for e in drew] == [(0, 2, "penalty-7")]
    assert t.state.final_sizes == (5, 0, 3)


EIGHT = [" ".join(f"{r}{s}" for r in "23456") for s in "YRGB"] + [
    "8Y 8R 8G 8B JOKER", "9R 9G 9B 10Y 10R", "10G 10B JY JR JG", "JB QY QR QG QB"]
EIGHT_THEN = "KR KG KB AY AR AG AB 7Y 7R 7G 7B 9Y"


def test_empty_pile_ends_the_hand_without_bonus():
    t = Table(ONE_HAND, EIGHT, first="KY", then=EIGHT_THEN)
    assert t.state.pile_size == 54 - 41
    while t.state.pile_size > 1:
        seat = t.state.turn
        t.draw(seat)
        t.pass_(seat)
    ev = t.draw(t.state.turn)
    assert HandOver(None, "pile-empty") in ev
    scored = [e for e in ev if isinstance(e, HandScored)][0]
    faces = t.state.faces
    pts = [sum(R.card_points(faces[x].rank) for x in h) for h in t.state.hands]
    assert scored.deltas == tuple(sum(pts) - p for p in pts)  # no 50 for anyone


def test_a_draw_longer_than_the_pile_takes_what_is_left_then_the_hand_ends():
    t = Table(ONE_HAND, EIGHT, first="KY", then=EIGHT_THEN)
    for _ in range(11):  # 11 seats draw and pass: 2 cards left
        seat = t.state.turn
        t.draw(seat)
        t.pass_(seat)
    # the first K reversed the direction: seats 7, 6, ..., 0, 7, 6, 5 drew; seat 4 plays
    assert t.state.turn == 4 and t.state.pile_size == 2
    t.play(4, "JOKER", suit=Suit.YELLOW)
    assert snap(t)[:4] == (3, "JOKER", Suit.YELLOW, 4)
    ev = t.draw(3)
    drew = [e for e in ev if isinstance(e, Drew)]
    assert [(e.seat, len(e.slots), e.reason) for e in drew] == [(3, 2, "penalty-JOKER")]
    assert HandOver(None, "pile-empty") in ev
    assert t.state.final_sizes[3] == 8


# --- time-out and leaving (seed 000) -------------------------------------------------------------


def test_timeout_ends_the_match_minus_one_to_the_seat_plus_one_to_others():
    t = Table(R, [H0, H1, H2], first="3B")
    illegal(t, Timeout(2), "not-your-turn")
    ev = t.move(Timeout(1))
    assert t.state.match_over
    assert t.state.match_points == (1, -1, 1)
    assert t.state.standings[-1] == 1 and t.state.winner != 1
    assert any(isinstance(e, MatchOver) for e in ev)
    assert t.state.scores == (0, 0, 0)


def test_leaving_ends_the_match_and_leaver_loses():
    t = Table(R, [H0, H1], first="3B")
    t.move(Leave(0))
    assert t.state.match_points == (-1, 1)
    assert t.state.winner == 1
    with pytest.raises(IllegalMove) as info:
        t.move(Draw(1))
    assert info.value.rule == "match-over"


def test_leaving_at_three_seats_ends_the_match_as_a_time_out_does():
    """Seed 000/001: "Se un giocatore fa scadere il tempo massimo o il timeout o clicca sul
    tasto 'abbandona' la partita ha termine": a leave at four seats ends the match with the
    same match points and standings as a time-out of that seat (the leaver last)."""
    hands = ["2Y 3Y 4Y 5Y 6Y", "5G 6G 9B 2R 3R", "4R 6R 8B 2B 3B", "3G 4B 5B 6B 9G"]
    left = Table(R, hands, first="9R", dealer=0)
    ev = left.move(Leave(1))
    timed = Table(R, hands, first="9R", dealer=0)
    timed.move(Timeout(1))
    assert Forfeited(1, "left", (1, -1, 1, 1)) in ev and not any(isinstance(e, SeatOut) for e in ev)
    st = left.state
    assert st.match_over and st.out == () and st.standings[-1] == 1 and st.winner != 1
    assert (st.match_points, st.standings, st.scores) == (
        timed.state.match_points, timed.state.standings, timed.state.scores)
    with pytest.raises(IllegalMove) as info:
        left.move(Draw(2))
    assert info.value.rule == "match-over"


def test_last_card_jolly_makes_the_next_draw_four():
    t = Table(ONE2, ["3Y 4Y", "JOKER 8B", "5R 8R"], first="8Y", then="2G 3G")
    t.play(1, "8B", declare=True)
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    ev = t.play(1, "JOKER", suit=Suit.RED)
    assert drew_of(ev) == [(2, 4, "penalty-JOKER")]
    assert HandOver(1, "out") in ev
    assert t.state.final_sizes == (3, 0, 7)


def drew_of(ev):
    return [(e.seat, len(e.slots), e.reason) for e in ev if isinstance(e, Drew)]


def test_a_seats_own_moves_leave_its_declaration_window_open():
    # two players: seat 1 plays a Q down to one card without declaring; seat 0 is skipped, so
    # seat 1 moves again before any other seat has started a turn
    t = Table(R2, ["2Y 3Y", "QB 5B"], first="10B", then="7G 8G")
    t.play(1, "QB")
    assert t.state.owes == (1,) and t.state.turn == 1
    ev = t.play(1, "5B")
    assert not any(isinstance(e, Penalty) for e in ev)
    assert HandOver(1, "out") in ev

    t = Table(R2, ["2Y 3Y", "QB 5B"], first="10B", then="7G 8G")
    t.play(1, "QB")
    t.move(Declare(1))
    ev = t.draw(1)  # declared in time: its own draw costs nothing
    assert not any(isinstance(e, Penalty) for e in ev)
    assert t.state.owes == () and t.state.hand_sizes == (2, 2)


def test_two_players_a_q_down_to_one_card_undeclared_then_a_draw_pays_the_penalty():
    """Seed 000/001: "Se ci si dimentica di dichiarare DERNIER! quando si rimane con una sola
    carta in mano, si devono pescare due carte di penalità", with no exception for a player
    who moves again. Seat 1's Q skips seat 0; on its extra turn seat 1, still at one card and
    undeclared, draws: the two penalty cards come first, then the card it drew, which alone it
    may still play."""
    t = Table(R2, ["2Y 3Y", "QB 5B"], first="10B", then="7G 8G 9G 10G")
    t.play(1, "QB")
    pile = t.state.pile
    ev = t.draw(1)
    assert Penalty(1, 2, "declaration") in ev
    assert [(e.seat, e.slots, e.reason) for e in ev if isinstance(e, Drew)] == [
        (1, pile[0:2], "penalty-declaration"), (1, pile[2:3], "draw"),
    ]
    assert t.state.owes == () and t.state.hand_sizes == (2, 4) and t.state.drawn == pile[2]
    assert t.state.turn == 1
    assert not any(isinstance(e, Penalty) for e in t.pass_(1) + t.draw(0))  # charged once


def test_readings_3_an_own_draw_at_one_card_lets_the_window_lapse():
    """Version 3's reading (``readings`` 3, the rules of a version-2 or -3 transcript): the same
    moves as above cost nothing; the seat's window stays open through its own draw and the
    obligation lapses at two cards."""
    t = Table(get_variant("dernier", hand_size=2, readings=3), ["2Y 3Y", "QB 5B"],
              first="10B", then="7G 8G 9G 10G")
    t.play(1, "QB")
    pile = t.state.pile
    ev = t.draw(1)
    assert not any(isinstance(e, Penalty) for e in ev)
    assert [(e.seat, e.slots, e.reason) for e in ev if isinstance(e, Drew)] == [
        (1, pile[0:1], "draw")]
    assert t.state.owes == () and t.state.hand_sizes == (2, 2)  # at two cards it lapsed
    t.pass_(1)
    assert not any(isinstance(e, Penalty) for e in t.draw(0))


def test_two_declaration_penalties_in_one_move_follow_the_order_the_windows_opened():
    """Seat 1's Q skips seat 2 (one card: it must declare again) and leaves seat 1 at one card
    undeclared. Seat 0's draw closes both windows: the skipped seat draws first, then the Q's
    player, each two cards from the front of the pile, then seat 0 its own card."""
    rules = get_variant("dernier", hand_size=3)
    t = Table(rules, ["8Y 10Y 2B", "4Y QY 5G", "6Y 9Y 9B"], first="3Y", dealer=1,
              then="JB JR JG JY KB")
    t.play(2, "6Y")
    t.play(0, "8Y")
    t.play(1, "4Y")
    t.play(2, "9Y", declare=True)
    t.play(0, "10Y", declare=True)
    ev = t.play(1, "QY")
    assert Skipped(2) in ev and t.state.owes == (2, 1) and t.state.turn == 0
    pile = t.state.pile
    ev = t.draw(0)
    assert [e.seat for e in ev if isinstance(e, Penalty)] == [2, 1]
    assert [(e.seat, e.slots) for e in ev if isinstance(e, Drew)] == [
        (2, pile[0:2]), (1, pile[2:4]), (0, pile[4:5]),
    ]
