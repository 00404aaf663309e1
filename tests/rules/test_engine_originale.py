"""Scenario tests of `originale` (seed 002). Three seats, seat 0 deals, seat 2 cuts."""


from dernier_p2p.rules import (
    ChainCancelled,
    ChooseHandSize,
    Cut,
    CutKept,
    Drew,
    HandOver,
    JumpedIn,
    NameSuit,
    Penalty,
    Phase,
    Play,
    Reshuffled,
    Skipped,
    Suit,
    TakenBack,
    Timeout,
    get_variant,
    legal_moves,
    parse_card,
)
from dernier_p2p.rules.simulate import Table
from tests.rules.scenario import illegal, pm, snap

ORIG = get_variant("originale")

H0 = "2Y 3Y 4Y 5Y 6Y"
H1 = "5B 8B AB 7B QB"
H2 = "9R 9G KB 10G 8R"






def start(hands, first, then="", bottom="10B", keep=False, size=5):
    """Deal with a cut (seat 2 keeps the special bottom card or leaves it) and a hand size."""
    t = Table(ORIG, hands, first=first, then=then, bottom=bottom)
    t.move(Cut(2, keep, parse_card(bottom)))
    t.move(ChooseHandSize(0, size))
    return t




# --- cut, hand size, first card --------------------------------------------------------------


def test_cut_a_plain_bottom_card_stays_at_the_bottom():
    t = Table(ORIG, [H0, H1, H2], first="3B", bottom="4G")
    assert t.state.phase is Phase.CUT
    view = t.dealer.view(t.state, 2)
    assert legal_moves(t.state, 2, view) == [Cut(2, False, parse_card("4G"))]
    illegal(t, Cut(2, True, parse_card("4G")), "cut-not-special")
    illegal(t, Cut(1, False), "not-your-turn")
    bottom = t.state.pile[-1]
    t.move(Cut(2, False, parse_card("4G")))
    assert t.state.phase is Phase.HAND_SIZE
    illegal(t, ChooseHandSize(0, 4), "bad-hand-size")
    illegal(t, ChooseHandSize(0, 10), "bad-hand-size")
    illegal(t, ChooseHandSize(1, 5), "not-your-turn")
    t.move(ChooseHandSize(0, 5))
    assert snap(t) == (1, "3B", None, 0, (5, 5, 5))
    assert t.state.pile[-1] == bottom


def test_cut_a_special_card_is_kept_and_one_fewer_dealt():
    t = Table(ORIG, [H0, H1, "9R 9G KB 10G"], first="3B", bottom="QG")
    assert legal_moves(t.state, 2, t.dealer.view(t.state, 2)) == [Cut(2, True, parse_card("QG"))]
    illegal(t, Cut(2, False, parse_card("QG")), "cut-must-keep")
    ev = t.move(Cut(2, True, parse_card("QG")))
    assert isinstance(ev[0], CutKept)
    t.move(ChooseHandSize(0, 5))
    assert snap(t) == (1, "3B", None, 0, (5, 5, 5))
    assert sorted(t.hand(2)) == sorted("QG 9R 9G KB 10G".split())
    assert t.state.pile_size == 108 - 15 - 1


def test_dealer_chooses_five_to_nine():
    for size in (5, 7, 9):
        t = Table(ORIG, ["", "", "", ""], first="3B", bottom="4G")
        t.move(Cut(3, False, parse_card("4G")))
        ev = t.move(ChooseHandSize(0, size))
        dealt = {e.seat: len(e.slots) for e in ev if type(e).__name__ == "Dealt"}
        assert dealt == {0: size, 1: size, 2: size, 3: size}


def test_first_ace_next_draws_three_then_plays_as_usual():
    t = start([H0, H1, H2], first="AG", then="2G 3G 4G")
    assert snap(t) == (1, "AG", None, 3, (5, 5, 5))
    t.draw(1)
    assert snap(t) == (1, "AG", None, 0, (5, 8, 5))  # still seat 1's turn
    t.play(1, "2G")
    assert snap(t) == (2, "2G", None, 0, (5, 7, 5))


def test_first_matta_dealer_names_next_draws_five():
    t = start([H0, H1, H2], first="JOKER", bottom="10B")
    assert t.state.phase is Phase.NAME_SUIT and t.state.namer == 0
    t.move(NameSuit(0, Suit.BLUE))
    assert snap(t) == (1, "JOKER", Suit.BLUE, 5, (5, 5, 5))
    t.draw(1)
    t.play(1, "QB")  # plays on with the named suit
    assert snap(t) == (0, "QB", None, 0, (5, 9, 5))


def test_first_seven_dealers_previous_draws_one():
    t = start([H0, H1, H2], first="7G")
    assert snap(t) == (1, "7G", None, 0, (5, 5, 6))


def test_first_jack_dealer_names_the_suit():
    t = start([H0, H1, H2], first="JG")
    assert t.state.phase is Phase.NAME_SUIT
    t.move(NameSuit(0, Suit.YELLOW))
    assert snap(t) == (1, "JG", Suit.YELLOW, 0, (5, 5, 5))


# --- play -------------------------------------------------------------------------------------


def test_same_suit_or_value_else_draw_then_play_it_or_passo():
    t = start([H0, H1, H2], first="3B", then="6G 2R")
    t.play(1, "8B")
    t.play(2, "8R")
    assert snap(t) == (0, "8R", None, 0, (5, 4, 4))
    t.draw(0)  # 6G does not fit
    t.pass_(0)
    assert snap(t) == (1, "8R", None, 0, (6, 4, 4))


def test_ace_chain_three_each_and_a_two_of_the_suit_cancels():
    t = start(["2R 3Y 4Y 5Y 6Y", H1, "AR 9G KB 10G 8R"], first="3B")
    t.play(1, "AB")
    assert snap(t) == (2, "AB", None, 3, (5, 4, 5))
    t.play(2, "AR")
    assert snap(t) == (0, "AR", None, 6, (5, 4, 4))
    ev = t.play(0, "2R")
    assert ChainCancelled(0) in ev
    assert snap(t) == (1, "2R", None, 0, (4, 4, 4))


def test_a_two_of_another_suit_does_not_cancel_it_is_a_wrong_card():
    t = start(["2Y 3Y 4Y 5Y 6Y", H1, "AR 9G KB 10G 8R"], first="3B")
    t.play(1, "AB")
    t.play(2, "AR")
    ev = t.play(0, "2Y")
    assert TakenBack(0, t.slot(0, "2Y"), parse_card("2Y")) in ev
    # wrong card: taken back, 2 cards, and (reading) the pending 6 too; the turn is lost
    assert snap(t) == (1, "AR", None, 0, (13, 4, 4))
    assert t.state.faces[t.slot(0, "2Y")] == parse_card("2Y")


def test_taking_the_ace_chain_then_the_turn_goes_on():
    t = start([H0, H1, H2], first="3B")
    t.play(1, "AB")
    t.draw(2)
    assert snap(t) == (2, "AB", None, 0, (5, 4, 8))
    t.play(2, "KB")
    assert t.state.direction == -1 and t.state.turn == 1


def test_matta_on_an_ace_chain_adds_five_then_only_mattas():
    t = start([H0, H1, "JOKER 9G KB 10G 8R"], first="3B", bottom="10B")
    t.play(1, "AB")
    t.play(2, "JOKER", suit=Suit.GREEN)
    assert snap(t) == (0, "JOKER", Suit.GREEN, 8, (5, 4, 4))
    assert t.state.pending_kind.value == "JOKER"
    t.draw(0)
    assert snap(t) == (0, "JOKER", Suit.GREEN, 0, (13, 4, 4))  # play resumes from the drawer


def test_seven_previous_draws_one_and_play_goes_on():
    t = start([H0, H1, H2], first="3B")
    ev = t.play(1, "7B")
    assert [(e.seat, len(e.slots), e.reason) for e in ev if isinstance(e, Drew)] == [
        (0, 1, "penalty-7")]
    assert snap(t) == (2, "7B", None, 0, (6, 4, 5))


def test_jack_may_name_a_suit_or_not():
    t = start([H0, "JB 8B AB 7B QB", H2], first="3B")
    t.play(1, "JB")
    assert snap(t) == (2, "JB", None, 0, (5, 4, 5))
    t.play(2, "KB")
    t2 = start([H0, "JB 8B AB 7B QB", H2], first="3B")
    t2.play(1, "JB", suit=Suit.RED)
    assert snap(t2) == (2, "JB", Suit.RED, 0, (5, 4, 5))
    t2.play(2, "9R")


def test_queen_skips_king_reverses():
    t = start([H0, H1, H2], first="3B")
    ev = t.play(1, "QB")
    assert Skipped(2) in ev and t.state.turn == 0
    t2 = start([H0, H1, H2], first="3B")
    t2.play(1, "8B")
    t2.play(2, "KB")
    assert t2.state.direction == -1 and t2.state.turn == 1


# --- anticipo ---------------------------------------------------------------------------------


def test_anticipo_identical_card_out_of_turn_play_resumes_after_the_jumper():
    t = start(["5B 3Y 4Y 5Y 6Y", H1, H2], first="3B")
    t.play(1, "5B")
    assert t.state.turn == 2
    assert pm(t, 0, "5B") in t.legal(0)
    ev = t.play(0, "5B")
    assert JumpedIn(0) in ev
    assert snap(t) == (1, "5B", None, 0, (4, 4, 5))


def test_anticipo_on_an_ace_continues_the_chain():
    t = start(["AB 3Y 4Y 5Y 6Y", H1, H2], first="3B")
    t.play(1, "AB")
    t.play(0, "AB")
    assert snap(t) == (1, "AB", None, 6, (4, 4, 5))


def test_anticipo_on_a_jack_its_own_suit_stands_or_a_new_one():
    t = start(["JR 3Y 4Y 5Y 6Y", "JR 8B AB 7B QB", H2], first="3R")
    t.play(1, "JR", suit=Suit.GREEN)
    assert t.state.named_suit is Suit.GREEN
    t.play(0, "JR")
    assert snap(t) == (1, "JR", None, 0, (4, 4, 5))


def test_anticipo_may_end_the_hand():
    o2 = get_variant("originale", hand_size_range=(2, 9))
    t = Table(o2, ["5G 5B", "9G 9B", "8B 5B"], first="9Y", bottom="4G")
    t.move(Cut(2, False, parse_card("4G")))
    t.move(ChooseHandSize(0, 2))
    t.play(1, "9B", declare=True)
    t.play(2, "8B", declare=True)
    t.play(0, "5B", declare=True)
    assert snap(t) == (1, "5B", None, 0, (1, 1, 1))
    ev = t.play(2, "5B")  # seat 2's last card is identical to the top: anticipo wins
    assert JumpedIn(2) in ev and HandOver(2, "out") in ev
    assert t.state.hands_won == (0, 0, 1)


def test_two_identical_cards_one_after_the_other():
    t = start([H0, "5B 5B AB 7B QB", H2], first="3B")
    t.play(1, "5B")
    t.play(1, "5B")
    assert snap(t) == (2, "5B", None, 0, (5, 3, 5))


# --- errors -----------------------------------------------------------------------------------


def test_wrong_card_in_turn_is_taken_back_draws_two_and_loses_the_turn():
    t2 = start([H0, H1, H2], first="3G")
    ev = t2.move(pm(t2, 1, "5B"))
    assert Penalty(1, 2, "must-match") in ev
    assert snap(t2) == (2, "3G", None, 0, (5, 7, 5))
    assert t2.state.faces[t2.slot(1, "5B")] == parse_card("5B")


def test_card_out_of_turn_not_an_anticipo_draws_two():
    t = start([H0, H1, H2], first="3B")
    ev = t.move(pm(t, 0, "2Y"))
    assert Penalty(0, 2, "not-identical") in ev
    assert snap(t) == (1, "3B", None, 0, (7, 5, 5))


def test_race_the_earlier_card_stands_the_later_draws_two():
    t = start(["5B 3Y 4Y 5Y 6Y", H1, "9B 9G KB 10G 8R"], first="3B")
    t.play(1, "5B")
    t.play(0, "5B")  # the jumper's card came first
    ev = t.move(pm(t, 2, "9B"))  # seat 2's card was valid on 5B but came later
    assert Penalty(2, 2, "not-identical") in ev
    assert snap(t) == (1, "5B", None, 0, (4, 4, 7))


def test_forgotten_dernier_draws_two_at_once():
    o2 = get_variant("originale", hand_size_range=(2, 9))
    t = Table(o2, ["2Y 3Y", "5B 8B", "9R 9G"], first="3B", bottom="4G")
    t.move(Cut(2, False, parse_card("4G")))
    t.move(ChooseHandSize(0, 2))
    ev = t.play(1, "5B")
    assert Penalty(1, 2, "declaration") in ev
    assert snap(t) == (2, "5B", None, 0, (2, 3, 2))


def test_slowing_the_game_draws_two():
    t = start([H0, H1, H2], first="3B")
    ev = t.move(Timeout(1))
    assert Penalty(1, 2, "timeout") in ev
    assert snap(t) == (2, "3B", None, 0, (5, 7, 5))


def test_structural_errors_are_still_illegal_moves():
    t = start([H0, H1, H2], first="3B")
    illegal(t, Play(1, 999, parse_card("5B")), "card-not-held")
    illegal(t, pm(t, 1, "5B", suit=Suit.RED), "cannot-name-suit")


def test_exhausted_pile_reshuffles_the_discards():
    t = start([H0, H1, H2], first="3B")
    t.play(1, "8B")
    t.play(2, "8R")
    t.state = t.state._replace(pile=t.state.pile[:1])  # reach the end of the pile quickly
    ev = t.draw(0)
    assert Reshuffled(2) in ev
    assert t.state.pile_size == 2 and len(t.state.discard) == 1


def test_a_hand_is_won_by_the_last_card():
    o2 = get_variant("originale", hand_size_range=(2, 9))
    t = Table(o2, ["2Y 3Y", "5B 8B", "9R 9G"], first="3B", bottom="4G")
    t.move(Cut(2, False, parse_card("4G")))
    t.move(ChooseHandSize(0, 2))
    t.play(1, "5B", declare=True)
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    ev = t.play(1, "8B")
    assert HandOver(1, "out") in ev
    assert t.state.hands_won == (0, 1, 0) and t.state.scores == (0, 1, 0)
    assert t.state.hand_number == 2 and t.state.dealer == 1


def test_matta_answered_by_a_matta_adds_five():
    t = start([H0, "JOKER 8B AB 7B QB", "JOKER 9G KB 10G 8R"], first="3B")
    t.play(1, "JOKER", suit=Suit.RED)
    assert snap(t) == (2, "JOKER", Suit.RED, 5, (5, 4, 5))
    t.play(2, "JOKER", suit=Suit.YELLOW)
    assert snap(t) == (0, "JOKER", Suit.YELLOW, 10, (5, 4, 4))
    t.draw(0)
    assert snap(t) == (0, "JOKER", Suit.YELLOW, 0, (15, 4, 4))
    t.play(0, "2Y")  # plays on with the named suit
    assert snap(t) == (1, "2Y", None, 0, (14, 4, 4))


def test_deal_order_and_the_cutter_skipped_in_the_last_round():
    """The cut comes before the hand size; Dealt events run from the dealer's next seat; the
    deal goes round by round, and the cutter who kept a card is left out of the last round."""
    t = Table(ORIG, ["", "", "", ""], first="3B", bottom="QG")
    assert t.state.phase is Phase.CUT
    illegal(t, ChooseHandSize(0, 5), "wrong-phase")
    t.move(Cut(3, True, parse_card("QG")))
    pile = t.state.pile
    ev = t.move(ChooseHandSize(0, 5))
    dealt = [(e.seat, e.slots) for e in ev if type(e).__name__ == "Dealt"]
    assert [seat for seat, _ in dealt] == [1, 2, 3, 0]
    # rounds 0..3 give seats 1, 2, 3, 0 one card each; round 4 skips the cutter (seat 3)
    want = {1: [], 2: [], 3: [], 0: []}
    k = 0
    for rnd in range(5):
        for seat in (1, 2, 3, 0):
            if seat == 3 and rnd == 4:
                continue
            want[seat].append(pile[k])
            k += 1
    assert {seat: list(slots) for seat, slots in dealt} == want


def test_a_forgotten_declaration_is_drawn_after_the_plays_own_draws():
    """with_play: a 7 played as the second-last card without DERNIER: the previous player's
    draw (the 7's effect) comes first, then the player's two penalty cards."""
    rules = get_variant("originale", cut=False, hand_size_range=None, hand_size=2)
    t = Table(rules, ["4Y 5Y", "7Y 5B", "9R 9G"], first="3Y", then="AY 2G 3G")
    pile = t.state.pile
    ev = t.play(1, "7Y")
    assert [(e.seat, e.reason, e.slots) for e in ev if isinstance(e, Drew)] == [
        (0, "penalty-7", pile[:1]),
        (1, "penalty-declaration", pile[1:3]),
    ]
