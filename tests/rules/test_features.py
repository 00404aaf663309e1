"""Features together: jump-ins on chains and at the end, swap/rotate with declarations and
pending draws, a skip over a one-card player, and last cards that make someone draw."""

import pytest

from dernier_p2p.rules import (
    ChooseHandSize,
    Cut,
    Declare,
    Drew,
    HandOver,
    HandsRotated,
    IllegalMove,
    JumpedIn,
    MatchFormat,
    Penalty,
    Play,
    Skipped,
    Suit,
    get_variant,
    parse_card,
)
from dernier_p2p.rules.simulate import Table
from tests.rules.scenario import snap

M3 = get_variant("moderno", hand_size=3)
M3_ONE = get_variant("moderno", hand_size=3, match=MatchFormat("hands", 1))
O2 = get_variant("originale", hand_size_range=(2, 9))
D2_ONE = get_variant("dernier", hand_size=2, match=MatchFormat("hands", 1))




def drew(ev):
    return [(e.seat, len(e.slots), e.reason) for e in ev if isinstance(e, Drew)]


def originale(hands, first, then=""):
    t = Table(O2, hands, first=first, then=then, bottom="4G")
    t.move(Cut(2, False, parse_card("4G")))
    t.move(ChooseHandSize(0, len(hands[0].split())))
    return t


def test_jump_in_on_a_draw_two_chain_passes_it_on_from_the_jumper():
    t = Table(M3, ["DRAW2R 2Y 3Y", "DRAW2R 5G 7G", "1R 2R 3R"], first="5R")
    t.play(1, "DRAW2R")
    assert snap(t) == (2, "DRAW2R", None, 2, (3, 2, 3))
    ev = t.play(0, "DRAW2R")  # seat 0 jumps in: seat 2 escapes, seat 1 is under 4
    assert JumpedIn(0) in ev
    assert snap(t) == (1, "DRAW2R", None, 4, (2, 2, 3))
    t.draw(1)
    assert snap(t) == (2, "DRAW2R", None, 0, (2, 6, 3))


def test_jump_in_on_a_matta_chain_continues_it():
    t = originale(["JOKER 2Y 3Y", "JOKER 5G 7G", "3R 8R 9R"], first="5R")
    t.play(1, "JOKER", suit=Suit.GREEN)
    t.play(0, "JOKER", suit=Suit.YELLOW)
    assert snap(t) == (1, "JOKER", Suit.YELLOW, 10, (2, 2, 3))


def test_jump_in_that_ends_the_hand_with_a_draw_two_makes_the_next_draw():
    t = Table(M3_ONE, ["5R 4R DRAW2R", "DRAW2R 5G 9G", "1Y 2Y 3Y"], first="5Y",
              then="8Y 9Y 8B")
    t.play(1, "5G")
    t.draw(2)
    t.pass_(2)
    t.play(0, "5R")
    t.draw(1)
    t.pass_(1)
    t.draw(2)
    t.pass_(2)
    t.play(0, "4R", declare=True)
    assert snap(t) == (1, "4R", None, 0, (1, 3, 5))
    t.play(1, "DRAW2R")
    assert snap(t) == (2, "DRAW2R", None, 2, (1, 2, 5))
    ev = t.play(0, "DRAW2R")  # seat 0's last card, identical to the top
    assert JumpedIn(0) in ev and HandOver(0, "out") in ev
    assert drew(ev) == [(1, 4, "penalty-DRAW2")]
    assert t.state.final_sizes == (0, 6, 5)


def test_swap_leaves_the_target_with_one_card_who_must_declare():
    t = Table(M3, ["1Y 2Y 3Y", "5G SWAPG 9B", "1R 2R 3R"], first="5R", then="8Y 8R 6Y 6R")
    t.play(1, "5G")
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    ev = t.play(1, "SWAPG", target=0, declare=True)  # SOLO! on its second-last card
    assert t.state.hand_sizes == (1, 4, 4)
    assert t.state.owes == (0,)
    assert Declare(0) in t.legal(0)
    ev = t.draw(2)  # the next player moves: seat 0 forgot and draws 2 first
    assert Penalty(0, 2, "declaration") in ev
    assert drew(ev)[0] == (0, 2, "penalty-declaration")
    assert t.state.hand_sizes == (3, 4, 5)


def test_swap_then_declare_in_time():
    t = Table(M3, ["1Y 2Y 3Y", "5G SWAPG 9B", "1R 2R 3R"], first="5R", then="8Y 8R 6Y 6R")
    t.play(1, "5G")
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    t.play(1, "SWAPG", target=0, declare=True)
    t.move(Declare(0))
    ev = t.draw(2)
    assert not any(isinstance(e, Penalty) for e in ev)
    assert t.state.hand_sizes == (1, 4, 5)


def test_rotate_cannot_answer_a_pending_draw_and_rotates_after_it_is_taken():
    t = Table(M3, ["1Y 2Y 3Y", "DRAW2R 5G 7G", "ROTATE 1R 2R"], first="5R")
    t.play(1, "DRAW2R")
    before = t.state
    with pytest.raises(IllegalMove) as info:
        t.move(Play(2, t.slot(2, "ROTATE"), parse_card("ROTATE"), Suit.RED))
    assert info.value.rule == "must-answer-chain" and t.state is before
    t.draw(2)  # takes 2; the turn passes
    assert snap(t) == (0, "DRAW2R", None, 0, (3, 2, 5))
    t.draw(0)
    t.pass_(0)
    t.draw(1)
    t.pass_(1)
    hands = t.state.hands
    ev = t.play(2, "ROTATE", suit=Suit.BLUE)
    assert HandsRotated(1) in ev
    assert t.state.hands[0] == tuple(x for x in hands[2] if x != t.state.discard[-1])
    assert snap(t) == (0, "ROTATE", Suit.BLUE, 0, (4, 4, 3))


def test_rotate_hands_a_one_card_hand_to_a_seat_who_must_declare():
    t = Table(M3, ["1Y 2Y 3Y", "5G 7G ROTATE", "1R 2R 3R"], first="5R", then="8Y 9Y")
    t.play(1, "5G")
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    ev = t.play(1, "ROTATE", suit=Suit.GREEN, declare=True)
    # seat 1's one card went to seat 2, seat 1 got seat 0's four cards
    assert t.state.hand_sizes == (4, 4, 1)
    assert t.state.owes == (2,)
    assert not any(isinstance(e, Penalty) for e in ev)


def test_queen_skipping_a_one_card_player_who_forgets():
    t = Table(D2_ONE, ["4Y QY", "5Y 8R", "5B 8B"], first="2Y", then="2G 3G")
    t.play(1, "5Y", declare=True)
    t.draw(2)
    t.pass_(2)
    ev = t.play(0, "QY", declare=True)
    assert Skipped(1) in ev and t.state.owes == (1,)
    ev = t.draw(2)
    assert drew(ev)[0] == (1, 2, "penalty-declaration")


def test_moderno_skip_over_a_one_card_player_needs_no_new_declaration():
    t = Table(M3, ["1Y 2Y SKIPG", "5G 7G 9B", "1R 2R 3R"], first="5R")
    t.play(1, "5G")
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    t.play(1, "7G", declare=True)
    t.draw(2)
    t.pass_(2)
    ev = t.play(0, "SKIPG")
    assert Skipped(1) in ev and t.state.turn == 2
    assert t.state.owes == ()


def test_last_card_an_ace_answering_a_chain_makes_the_next_take_the_whole_chain():
    t = Table(D2_ONE, ["AB 4Y", "AY 9B", "3R 8R"], first="9Y")
    t.play(1, "9B", declare=True)
    t.draw(2)
    t.pass_(2)
    t.play(0, "AB", declare=True)
    assert snap(t) == (1, "AB", None, 2, (1, 1, 3))
    ev = t.play(1, "AY")
    assert drew(ev) == [(2, 4, "penalty-A")]
    assert HandOver(1, "out") in ev


def test_originale_last_card_ace_next_draws_three_last_seven_previous_draws_one():
    t = originale(["2Y 3Y", "AB 9B", "3R 8R"], first="9Y")
    t.play(1, "9B", declare=True)
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    ev = t.play(1, "AB")
    assert drew(ev) == [(2, 3, "penalty-A")] and HandOver(1, "out") in ev
    t = originale(["2Y 3Y", "7B 9B", "3R 8R"], first="9Y")
    t.play(1, "9B", declare=True)
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    ev = t.play(1, "7B")
    assert drew(ev) == [(0, 1, "penalty-7")] and HandOver(1, "out") in ev


def test_a_penalty_that_empties_the_pile_before_a_play_reshuffles_the_right_discards():
    t = Table(M3, ["1Y 2Y 3Y", "5G SWAPG 9B", "1R 2R 6G"], first="5R", then="8Y 8R")
    t.play(1, "5G")
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    t.play(1, "SWAPG", target=0)  # seat 0 is left with one card and owes SOLO
    assert t.state.owes == (0,)
    t.state = t.state._replace(pile=t.state.pile[:1])  # one card left in the draw pile
    discards = t.state.discard  # 5R 5G SWAPG
    total = sum(t.state.hand_sizes) + t.state.pile_size + len(discards)
    ev = t.play(2, "6G")  # closes the window: seat 0 takes 1 card, then the pile is reshuffled
    assert Penalty(0, 2, "declaration") in ev
    assert len(t.state.discard) == 2 and t.state.discard[0] == discards[-1]
    assert t.state.hand_sizes[0] == 3
    places = [x for h in t.state.hands for x in h] + list(t.state.pile) + list(t.state.discard)
    assert len(places) == len(set(places)) == total
    assert t.state.pile_size == 2 - 1  # 5R and 5G were reshuffled; seat 0 took one of them
