"""Scenario tests of `moderno` (seed 003). Three seats unless said; seat 0 deals."""


from dernier_p2p.rules import (
    Drew,
    HandOver,
    HandScored,
    HandsRotated,
    HandsSwapped,
    JumpedIn,
    MatchFormat,
    NameSuit,
    Penalty,
    Phase,
    Play,
    Reshuffled,
    Skipped,
    Suit,
    Timeout,
    get_variant,
)
from dernier_p2p.rules.simulate import Table
from tests.rules.scenario import illegal, pm, snap

M = get_variant("moderno")
M3 = get_variant("moderno", hand_size=3)
M3_ONE = get_variant("moderno", hand_size=3, match=MatchFormat("hands", 1))

H0 = "1Y 2Y 3Y 4Y 6Y 8Y 9Y 1B"
H1 = "5G 7G SKIPG DRAW2R WILD WILD4 9B SWAPG"
H2 = "1R 2R 3R 4R SKIPB REVERSEB 8B ROTATE"








def test_eight_cards_each_dealers_next_starts():
    t = Table(M, [H0, H1, H2], first="5R")
    assert snap(t) == (1, "5R", None, 0, (8, 8, 8))
    assert t.state.pile_size == 112 - 25


def test_colour_number_symbol_and_black_cards_on_anything():
    t = Table(M, [H0, H1, H2], first="5R")
    t.play(1, "5G")  # number
    illegal(t, pm(t, 2, "1R"), "must-match")
    ev = t.play(2, "ROTATE", suit=Suit.YELLOW)  # black: on anything
    assert HandsRotated(1) in ev
    assert snap(t) == (0, "ROTATE", Suit.YELLOW, 0, (7, 8, 7))
    # each hand went to the next seat: seat 0 now holds seat 2's old hand
    assert sorted(t.hand(0)) == sorted("1R 2R 3R 4R SKIPB REVERSEB 8B".split())
    assert sorted(t.hand(2)) == sorted("7G SKIPG DRAW2R WILD WILD4 9B SWAPG".split())


def test_skip_and_reverse():
    t = Table(M, [H0, H1, H2], first="5G")
    ev = t.play(1, "SKIPG")
    assert Skipped(2) in ev and t.state.turn == 0
    t2 = Table(M, [H0, H1, H2], first="5B")
    t2.play(1, "9B")
    t2.play(2, "REVERSEB")
    assert t2.state.direction == -1 and t2.state.turn == 1


def test_draw_two_stacks_and_taking_ends_the_turn():
    t = Table(M, [H0, H1, "1R 2R 3R DRAW2B SKIPB REVERSEB 8B ROTATE"], first="5R")
    t.play(1, "DRAW2R")
    assert snap(t) == (2, "DRAW2R", None, 2, (8, 7, 8))
    illegal(t, pm(t, 2, "ROTATE", suit=Suit.RED), "must-answer-chain")
    t.play(2, "DRAW2B")
    assert snap(t) == (0, "DRAW2B", None, 4, (8, 7, 7))
    ev = t.draw(0)
    assert [(e.seat, len(e.slots), e.reason) for e in ev if isinstance(e, Drew)] == [
        (0, 4, "penalty-DRAW2")]
    assert snap(t) == (1, "DRAW2B", None, 0, (12, 7, 7))


def test_wild_draw_four_names_and_stacks_only_with_a_wild_draw_four():
    t = Table(M, [H0, H1, "1R 2R 3R WILD4 DRAW2R REVERSEB 8B ROTATE"], first="5R")
    t.play(1, "WILD4", suit=Suit.BLUE)
    assert snap(t) == (2, "WILD4", Suit.BLUE, 4, (8, 7, 8))
    illegal(t, pm(t, 2, "DRAW2R"), "must-answer-chain")
    t.play(2, "WILD4", suit=Suit.RED)
    assert snap(t) == (0, "WILD4", Suit.RED, 8, (8, 7, 7))


def test_wild_names_the_colour():
    t = Table(M, [H0, H1, H2], first="5R")
    illegal(t, pm(t, 1, "WILD"), "must-name-suit")
    t.play(1, "WILD", suit=Suit.YELLOW)
    assert snap(t) == (2, "WILD", Suit.YELLOW, 0, (8, 7, 8))


def test_swap_hands_with_a_chosen_player():
    t = Table(M, [H0, H1, H2], first="5G")
    illegal(t, pm(t, 1, "SWAPG"), "must-choose-target")
    illegal(t, pm(t, 1, "SWAPG", target=1), "bad-target")
    targets = {m.target for m in t.legal(1) if isinstance(m, Play) and str(m.card) == "SWAPG"}
    assert targets == {0, 2}
    mine = sorted(set(t.state.hands[1]) - {t.slot(1, "SWAPG")})
    ev = t.play(1, "SWAPG", target=0)
    assert HandsSwapped(1, 0) in ev
    assert sorted(t.state.hands[0]) == mine
    assert snap(t) == (2, "SWAPG", None, 0, (7, 8, 8))


def test_rotate_passes_every_hand_to_the_next_player_and_names_the_colour():
    t = Table(M, [H0, H1, H2], first="5R")
    t.draw(1)
    t.pass_(1)
    hands = t.state.hands
    ev = t.play(2, "ROTATE", suit=Suit.GREEN)
    assert HandsRotated(1) in ev
    after = t.state.hands
    assert after[0] == tuple(x for x in hands[2] if x != t.state.discard[-1])
    assert after[1] == hands[0] and after[2] == hands[1]
    assert snap(t) == (0, "ROTATE", Suit.GREEN, 0, (7, 8, 9))


def test_solo_forgotten_draws_two_at_once():
    t = Table(M3, ["1Y 2Y 3Y", "5G 7G 9B", "1R 2R 3R"], first="5R")
    t.play(1, "5G")
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    ev = t.play(1, "7G")
    assert Penalty(1, 2, "declaration") in ev
    assert t.state.hand_sizes[1] == 3


def test_solo_said_with_the_second_last_card():
    t = Table(M3, ["1Y 2Y 3Y", "5G 7G 9B", "1R 2R 3R"], first="5R")
    t.play(1, "5G")
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    ev = t.play(1, "7G", declare=True)
    assert not any(isinstance(e, Penalty) for e in ev)
    assert t.state.hand_sizes[1] == 1


def test_jump_in_exactly_equal_card_any_seat_play_continues_after_the_jumper():
    t = Table(M, ["1Y 2Y 3Y 4Y 6Y 8Y 9Y SKIPG", H1, H2], first="5G")
    t.play(1, "SKIPG")  # skips seat 2; seat 0 to play
    assert t.state.turn == 0
    ev = t.play(0, "SKIPG")  # seat 0 is the seat to play: a normal play, seat 1 skipped
    assert JumpedIn(0) not in ev and Skipped(1) in ev
    assert t.state.turn == 2
    t2 = Table(M, ["1Y 2Y 3Y 4Y 6Y 8Y 9Y 5G", "5G 7G SKIPG DRAW2R WILD WILD4 9B SWAPG", H2],
               first="9G")
    t2.play(1, "5G")
    ev = t2.play(0, "5G")  # out of turn (seat 2 is to play): a jump-in
    assert JumpedIn(0) in ev
    assert snap(t2) == (1, "5G", None, 0, (7, 7, 8))


def test_jump_in_on_a_black_card_names_again():
    t = Table(M, ["1Y 2Y 3Y 4Y 6Y 8Y 9Y WILD", H1, H2], first="5R")
    t.play(1, "WILD", suit=Suit.GREEN)
    ev = t.play(0, "WILD", suit=Suit.RED)
    assert JumpedIn(0) in ev
    assert snap(t) == (1, "WILD", Suit.RED, 0, (7, 7, 8))


def test_not_identical_out_of_turn_is_illegal():
    t = Table(M, [H0, H1, H2], first="5R")
    illegal(t, pm(t, 0, "1Y"), "not-identical")


def test_draw_one_and_play_it():
    t = Table(M, [H0, H1, H2], first="5R", then="6R")
    t.draw(1)
    t.play(1, "6R")
    assert snap(t) == (2, "6R", None, 0, (8, 8, 8))


def test_empty_pile_reshuffles():
    t = Table(M, [H0, H1, H2], first="5R")
    t.play(1, "DRAW2R")
    t.draw(2)
    t.state = t.state._replace(pile=t.state.pile[:1])  # reach the end of the pile quickly
    ev = t.draw(0)
    assert Reshuffled(1) in ev
    assert t.state.pile_size == 1 and len(t.state.discard) == 1


def test_others_score_their_cards_as_penalty_points():
    t = Table(M3_ONE, ["WILD4 SWAPY 3Y", "5G 7G 9G", "ROTATE REVERSEB 8B"], first="5R")
    t.play(1, "5G")
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    t.play(1, "7G", declare=True)
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    ev = t.play(1, "9G")
    assert HandOver(1, "out") in ev
    faces = t.state.faces
    pts = [sum(M.card_points(faces[x].rank) for x in h) for h in t.state.hands]
    assert pts[0] >= 50 + 30 + 3 and pts[2] >= 40 + 10 + 8
    scored = [e for e in ev if isinstance(e, HandScored)][0]
    assert scored.deltas == (pts[0], 0, pts[2])


def test_first_card_rotate_dealer_names_first_swap_does_nothing():
    t = Table(M, [H0, H1, H2], first="ROTATE")
    assert t.state.phase is Phase.NAME_SUIT and t.state.namer == 0
    hands = t.state.hands
    t.move(NameSuit(0, Suit.BLUE))
    assert t.state.hands == (hands[2], hands[0], hands[1])
    assert snap(t) == (1, "ROTATE", Suit.BLUE, 0, (8, 8, 8))
    t2 = Table(M, [H0, H1, H2], first="SWAPY")
    assert snap(t2) == (1, "SWAPY", None, 0, (8, 8, 8))


M2 = get_variant("moderno", hand_size=2)


def rotated_to_one_card():
    """Seat 1 plays a rotate from two cards: seat 2 receives its last card, owes SOLO and
    is next to play; seat 0 now holds seat 2's old hand (with a rotate)."""
    t = Table(M2, ["3Y 4Y", "ROTATE 1G", "ROTATE 9B"], first="5G", then="7R 8R 9R")
    t.play(1, "ROTATE", suit=Suit.GREEN, declare=True)  # SOLO! on its second-last card
    assert t.hand(2) == ["1G"] and t.state.owes == (2,) and t.state.turn == 2
    return t


def test_a_receiver_whose_turn_is_next_is_not_penalised_by_its_own_move():
    t = rotated_to_one_card()
    ev = t.play(2, "1G")
    assert not any(isinstance(e, Penalty) for e in ev)
    assert HandOver(2, "out") in ev

    t = rotated_to_one_card()
    ev = t.draw(2)
    assert not any(isinstance(e, Penalty) for e in ev)
    assert t.state.owes == ()  # two cards: the obligation lapsed


def test_another_seats_move_closes_a_receivers_window():
    t = rotated_to_one_card()
    ev = t.play(0, "ROTATE", suit=Suit.RED, declare=True)  # a jump-in by seat 0
    assert isinstance(ev[0], Penalty) and ev[0].seat == 2 and JumpedIn(0) in ev
    assert [e.seat for e in ev if isinstance(e, Drew)] == [2]


# --- the declaration of a swap or rotate played as the second-last card (seed 003) ---------


def _swap_from_two(rules, declare):
    """Seat 1 plays its swap as its second-last card and takes seat 0's hand of three."""
    t = Table(rules, ["1Y 2Y 3Y", "5G SWAPG 9B", "1R 2R 3R"], first="5R", then="8Y 8R 6Y 6R")
    t.play(1, "5G")
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    return t, t.play(1, "SWAPG", target=0, declare=declare)


def test_a_swap_as_second_last_card_without_solo_costs_two_at_once():
    """Seed 003: SOLO! is said before discarding the second-last card; forgotten, draw two.
    The exchange that brings several cards back does not excuse it."""
    m = get_variant("moderno", hand_size=3)
    t, ev = _swap_from_two(m, False)
    assert Penalty(1, 2, "declaration") in ev
    assert [(e.seat, e.reason) for e in ev if isinstance(e, Drew)] == [(1, "penalty-declaration")]
    assert t.state.hand_sizes == (1, 4 + 2, 4)
    # the legal moves offered both declarations for that play
    t2 = Table(m, ["1Y 2Y 3Y", "5G SWAPG 9B", "1R 2R 3R"], first="5R", then="8Y 8R 6Y 6R")
    t2.play(1, "5G")
    t2.draw(2)
    t2.pass_(2)
    t2.draw(0)
    t2.pass_(0)
    swaps = [mv for mv in t2.legal(1) if isinstance(mv, Play) and mv.target == 0]
    assert {mv.declare for mv in swaps} == {False, True}
    _, ev = _swap_from_two(m, True)
    assert not any(isinstance(e, Penalty) for e in ev)


def test_declare_before_exchange_off_keeps_the_hand_after_the_exchange_reading():
    m = get_variant("moderno", hand_size=3, declare_before_exchange=False)
    t, ev = _swap_from_two(m, False)
    assert not any(isinstance(e, Penalty) for e in ev)
    assert t.state.hand_sizes == (1, 4, 4) and t.state.owes == (0,)


def test_a_rotate_as_second_last_card_without_solo_costs_two():
    t = Table(M2, ["3Y 4Y", "ROTATE 1G", "ROTATE 9B"], first="5G", then="7R 8R 9R")
    ev = t.play(1, "ROTATE", suit=Suit.GREEN)
    assert Penalty(1, 2, "declaration") in ev
    # the receiver of the last card still owes its own SOLO! within its window
    assert t.state.owes == (2,) and t.hand(2) == ["1G"]


def test_first_rotate_acts_off_only_names_the_colour():
    m = get_variant("moderno", first_rotate_acts=False)
    t = Table(m, [H0, H1, H2], first="ROTATE")
    hands = t.state.hands
    ev = t.move(NameSuit(0, Suit.BLUE))
    assert not any(isinstance(e, HandsRotated) for e in ev)
    assert t.state.hands == hands
    assert snap(t) == (1, "ROTATE", Suit.BLUE, 0, (8, 8, 8))


def test_a_timeout_after_drawing_passes_without_another_draw():
    """moderno and standard: a time-out takes the chain or draws one, unless the seat has
    already drawn this turn: then the turn just passes."""
    for rules in (M, get_variant("standard", hand_size=8)):
        t = Table(rules, [H0, "5G 7G SKIPG DRAW2R WILD WILD4 9B 8G",
                          "1R 2R 3R 4R SKIPB REVERSEB 8B WILD"], first="5R", then="7B")
        t.draw(1)
        assert t.state.drawn >= 0
        ev = t.move(Timeout(1))
        assert not any(isinstance(e, Drew) for e in ev)
        assert t.state.turn == 2 and t.state.hand_sizes[1] == 9
