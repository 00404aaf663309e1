"""Scenario tests of `standard` (seed 004). Three seats unless said; seat 0 deals."""


from dernier_p2p.rules import (
    Catch,
    ChanceRequest,
    Declare,
    Drew,
    HandOver,
    HandScored,
    Leave,
    MatchFormat,
    NameSuit,
    Pass,
    Penalty,
    Phase,
    Play,
    Reshuffled,
    Skipped,
    Suit,
    Timeout,
    get_variant,
    parse_card,
    to_act,
)
from dernier_p2p.rules.simulate import Table
from tests.rules.scenario import illegal, snap

S = get_variant("standard")
S3 = get_variant("standard", hand_size=3)
S3_ONE = get_variant("standard", hand_size=3, match=MatchFormat("hands", 1))

H0 = "1Y 2Y 3Y 4Y 6Y 8Y 9Y"
H1 = "5G 7G SKIPG DRAW2R WILD WILD4 9B"
H2 = "1R 2R 3R 4R SKIPB REVERSEB 8B"






def test_seven_cards_each_and_the_dealers_next_starts():
    t = Table(S, [H0, H1, H2], first="5R")
    assert snap(t) == (1, "5R", None, 0, (7, 7, 7))
    assert t.state.pile_size == 108 - 22


def test_match_number_colour_or_symbol():
    t = Table(S, [H0, H1, H2], first="5R")
    t.play(1, "5G")  # number
    t.draw(2)
    t.pass_(2)
    illegal(t, Play(0, t.slot(0, "1Y"), parse_card("1Y")), "must-match")
    t.draw(0)
    t.pass_(0)
    t.play(1, "7G")  # colour
    assert snap(t)[:4] == (2, "7G", None, 0)
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    t.play(1, "SKIPG")  # colour
    assert snap(t)[:4] == (0, "SKIPG", None, 0)


def test_symbol_matches_symbol():
    t = Table(S, [H0, H1, H2], first="SKIPR", then="")
    # first SKIP: seat 1 is skipped, seat 2 starts and plays a skip on a skip
    assert t.state.turn == 2
    ev = t.play(2, "SKIPB")
    assert Skipped(0) in ev
    assert snap(t) == (1, "SKIPB", None, 0, (7, 7, 6))


def test_wild_names_the_colour_any_time():
    t = Table(S, [H0, H1, H2], first="5G")
    t.play(1, "WILD", suit=Suit.RED)  # 5G and 7G would also match
    assert snap(t) == (2, "WILD", Suit.RED, 0, (7, 6, 7))
    t.play(2, "1R")
    assert snap(t) == (0, "1R", None, 0, (7, 6, 6))


def test_wild_draw_four_next_draws_four_and_is_skipped_no_stacking():
    t = Table(S, [H0, H1, H2], first="5G")
    ev = t.play(1, "WILD4", suit=Suit.YELLOW)
    drew = [e for e in ev if isinstance(e, Drew)]
    assert [(e.seat, len(e.slots), e.reason) for e in drew] == [(2, 4, "penalty-WILD4")]
    assert Skipped(2) in ev
    assert snap(t) == (0, "WILD4", Suit.YELLOW, 0, (7, 6, 11))


def test_draw_two_next_draws_two_and_misses_the_turn():
    t = Table(S, [H0, H1, "DRAW2B 2R 3R 4R SKIPB REVERSEB 8B"], first="5R")
    ev = t.play(1, "DRAW2R")
    assert [(e.seat, len(e.slots)) for e in ev if isinstance(e, Drew)] == [(2, 2)]
    assert snap(t) == (0, "DRAW2R", None, 0, (7, 6, 9))
    # seat 2 could not answer with its draw-two: no stacking


def test_draw_one_play_it_if_it_fits_or_keep_it():
    t = Table(S, [H0, H1, H2], first="5R", then="6G 0B")
    t.draw(1)
    t.pass_(1)  # keep 6G
    assert snap(t) == (2, "5R", None, 0, (7, 8, 7))
    t.draw(2)  # 0B does not fit 5R
    assert [type(m).__name__ for m in t.legal(2)] == ["Pass"]
    t.pass_(2)
    assert snap(t) == (0, "5R", None, 0, (7, 8, 8))


def test_first_card_reverse_dealer_starts_the_other_way():
    t = Table(S, [H0, H1, H2], first="REVERSER")
    assert t.state.direction == -1
    assert snap(t) == (0, "REVERSER", None, 0, (7, 7, 7))


def test_first_card_draw_two_first_player_draws_and_is_skipped():
    t = Table(S, [H0, H1, H2], first="DRAW2G")
    assert snap(t) == (2, "DRAW2G", None, 0, (7, 9, 7))


def test_first_card_wild_first_player_names_the_colour():
    t = Table(S, [H0, H1, H2], first="WILD")
    assert t.state.phase is Phase.NAME_SUIT
    illegal(t, NameSuit(0, Suit.RED), "not-your-turn")
    t.move(NameSuit(1, Suit.GREEN))
    assert snap(t) == (1, "WILD", Suit.GREEN, 0, (7, 7, 7))
    t.play(1, "5G")
    assert snap(t) == (2, "5G", None, 0, (7, 6, 7))


def test_first_card_wild_draw_four_goes_back_and_a_new_card_is_turned():
    t = Table(S, [H0, H1, "1R 2R 3R 4R SKIPB REVERSEB 8B"], first="WILD4",
              reshuffles=["6R"])
    reshuffled = [e for e in t.all_events if isinstance(e, Reshuffled)]
    assert reshuffled == [Reshuffled(108 - 21)]
    assert snap(t) == (1, "6R", None, 0, (7, 7, 7))
    assert t.state.pile_size == 108 - 22


def test_empty_pile_reshuffles_the_discards_but_the_top():
    t = Table(S3, ["1Y 2Y 3Y", "5G 7G 9G", "1G 2G 3G"], first="4G")
    t.play(1, "5G")
    t.play(2, "1G")
    t.play(0, "1Y")
    # cut the draw pile short to one card to reach its end quickly
    t.state = t.state._replace(pile=t.state.pile[:1])
    discards = t.state.discard
    assert len(discards) == 4
    t.draw(1)
    assert any(isinstance(e, Reshuffled) for e in t.events)
    assert t.state.discard == (discards[-1],)
    assert t.state.pile_size == 3
    assert set(t.state.pile) == {t.state.next_slot - 3, t.state.next_slot - 2,
                                 t.state.next_slot - 1}


def test_draw_two_across_a_reshuffle():
    t = Table(S3, ["1Y 2Y 3Y", "5G DRAW2G 9G", "1G 2G 3G"], first="4G")
    t.play(1, "5G")
    t.play(2, "1G")
    t.draw(0)
    t.pass_(0)
    t.state = t.state._replace(pile=t.state.pile[:1])
    before = t.state.hand_sizes
    # the engine must take one card, ask for a shuffle, then take the second
    from dernier_p2p.rules import apply

    state, ev = apply(t.state, Play(1, t.slot(1, "DRAW2G"), parse_card("DRAW2G")))
    assert state.chance == ChanceRequest(
        "shuffle", count=3, first_slot=state.next_slot, source=state.discard[:-1]
    )
    assert state.owed == ((2, 1, "penalty-DRAW2"),)
    assert state.hand_sizes[2] == before[2] + 1
    t.state = state
    t._chance()
    assert t.state.hand_sizes[2] == before[2] + 2 and t.state.owed == ()
    assert t.state.turn == 0


def test_dernier_must_be_said_or_another_seat_may_catch():
    t = Table(S3, ["1Y 2Y 3Y", "5G 7G 9G", "1G 2G 3G"], first="4G")
    t.play(1, "5G")
    t.play(2, "1G")
    t.draw(0)
    t.pass_(0)
    t.play(1, "7G")  # one card, not declared
    assert t.state.owes == (1,)
    illegal(t, Catch(1, 1), "nothing-to-catch")
    assert Catch(0, 1) in t.legal(0) and Catch(2, 1) in t.legal(2)
    ev = t.move(Catch(0, 1))
    assert Penalty(1, 2, "declaration") in ev
    assert snap(t) == (2, "7G", None, 0, (4, 3, 2))
    illegal(t, Catch(2, 1), "nothing-to-catch")


def test_declaring_in_time_or_the_next_move_closes_the_window():
    t = Table(S3, ["1Y 2Y 3Y", "5G 7G 9G", "1G 2G 3G"], first="4G")
    t.play(1, "5G")
    t.play(2, "1G")
    t.draw(0)
    t.pass_(0)
    t.play(1, "7G")
    t.move(Declare(1))
    illegal(t, Catch(0, 1), "nothing-to-catch")
    t2 = Table(S3, ["1Y 2Y 3Y", "5G 7G 9G", "1G 2G 3G"], first="4G")
    t2.play(1, "5G")
    t2.play(2, "1G")
    t2.draw(0)
    t2.pass_(0)
    t2.play(1, "7G")
    t2.play(2, "2G")  # the next player moved: too late to catch seat 1
    illegal(t2, Catch(0, 1), "nothing-to-catch")
    assert t2.state.hand_sizes[1] == 1


def test_dernier_is_said_again_each_time_a_player_is_down_to_one():
    t = Table(S3, ["1Y 2Y 3Y", "5G 7G 9B", "1G 2G 3G"], first="4G", then="8G 6G 2B")
    t.play(1, "5G")
    t.play(2, "1G")
    t.draw(0)
    t.pass_(0)
    t.play(1, "7G", declare=True)
    t.play(2, "2G")
    t.draw(0)
    t.pass_(0)
    t.draw(1)  # 2B: two cards again
    t.play(1, "2B")  # down to one again, not declared
    assert t.state.owes == (1,)
    t.move(Catch(2, 1))
    assert t.state.hand_sizes[1] == 3


def test_winner_scores_the_cards_left_in_the_others_hands():
    t = Table(S3_ONE, ["1Y WILD4 3Y", "5G 7G 9G", "SKIPG 2G DRAW2B"], first="4G")
    t.play(1, "5G")
    t.play(2, "2G")
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
    pts0 = sum(S.card_points(faces[x].rank) for x in t.state.hands[0])
    pts2 = sum(S.card_points(faces[x].rank) for x in t.state.hands[2])
    assert pts0 >= 1 + 50 + 3 and pts2 >= 20 + 20
    scored = [e for e in ev if isinstance(e, HandScored)][0]
    assert scored.deltas == (0, pts0 + pts2, 0)


def test_timeout_draws_and_passes_and_a_leaver_goes_out():
    t = Table(S, [H0, H1, H2], first="5R")
    ev = t.move(Timeout(1))
    assert [(e.seat, len(e.slots)) for e in ev if isinstance(e, Drew)] == [(1, 1)]
    assert snap(t) == (2, "5R", None, 0, (7, 8, 7))
    t.move(Leave(2))  # three seats: the hand is void and the other two play on
    assert not t.state.match_over and t.state.out == (2,) and t.state.hand_number == 2
    t.move(Leave(1))  # two seats in play: leaving ends the match
    assert t.state.match_over and t.state.standings == (0, 1, 2)
    assert t.state.match_points == (0, 0, 0)


def test_reverse_with_two_players_option():
    t = Table(S, [H0, H1], first="5G")
    assert t.state.turn == 1
    t2 = Table(get_variant("standard", reverse_skips_with_two=True),
               [H0, "REVERSEG 7G SKIPG DRAW2R WILD WILD4 9B"], first="5G")
    t2.play(1, "REVERSEG")
    assert t2.state.turn == 1
    t3 = Table(S, [H0, "REVERSEG 7G SKIPG DRAW2R WILD WILD4 9B"], first="5G")
    t3.play(1, "REVERSEG")
    assert t3.state.turn == 0


def test_pass_without_drawing_is_illegal():
    t = Table(S, [H0, H1, H2], first="5R")
    illegal(t, Pass(1), "pass-before-draw")


def test_a_hand_with_nothing_to_draw_and_nothing_to_play_ends_blocked():
    t = Table(S3_ONE, ["1Y 2Y 3Y", "5R 7R 9B", "1B 2B 3B"], first="4G")
    # reach the end of the pile with nothing to reshuffle
    t.state = t.state._replace(pile=())
    assert [type(m).__name__ for m in t.legal(1)] == ["Pass"]
    t.pass_(1)
    t.pass_(2)
    assert t.state.stalls == 2
    ev = t.pass_(0)
    assert HandOver(None, "blocked") in ev
    scored = [e for e in ev if isinstance(e, HandScored)][0]
    assert scored.deltas == (0, 0, 0)


def test_an_empty_pile_is_refilled_from_discards_that_grew_after_a_short_draw():
    from dernier_p2p.rules import Draw, apply, chance_needed
    from dernier_p2p.rules.cards import deck_cards

    rules = get_variant("standard", max_players=2, hand_size=53)
    rest = [str(c) for c in deck_cards("standard-108")]
    rest.remove("0Y")
    rest.remove("WILD4")
    t = Table(rules, [" ".join(rest[53:]), " ".join(rest[:53])], first="0Y", then="WILD4")
    t.draw(1)  # the last card of the pile: nothing under the top card to reshuffle yet
    t.move(Play(1, t.state.drawn, parse_card("WILD4"), Suit.RED))
    # seat 0 owed 4 but only the 0Y could be reshuffled: the draw was short
    assert t.state.pile_size == 0 and t.state.turn == 1
    t.play(1, "1R")
    assert t.state.pile_size == 0 and len(t.state.discard) == 2 and t.state.turn == 0
    assert Draw(0) in t.legal(0) and Pass(0) not in t.legal(0)
    illegal(t, Pass(0), "pass-before-draw")
    state, ev = apply(t.state, Draw(0))
    req = chance_needed(state)
    assert req.kind == "shuffle" and req.source == t.state.discard[:1] and ev == ()
    before = t.state.hand_sizes[0]
    t.draw(0)
    assert [e.count for e in t.events if isinstance(e, Reshuffled)] == [1]
    drew = [e for e in t.events if isinstance(e, Drew)]
    assert [(e.seat, e.reason) for e in drew] == [(0, "draw")]
    assert t.state.drawn == drew[0].slots[0] and t.state.hand_sizes[0] == before + 1
    assert t.state.stalls == 0


def test_first_card_reverse_with_two_players_lets_the_dealer_start():
    """Seed 004: a first action card "applies and must be carried out by the first player";
    the common rule for a first reverse is that the dealer starts, the other way round. So at
    two seats, as at three or more (and whatever reverse_skips_with_two says), the dealer
    starts; the non-dealer starting would leave the reverse without any effect."""
    for rules in (S, get_variant("standard", reverse_skips_with_two=True)):
        t = Table(rules, [H0, H1], first="REVERSER")
        assert t.state.direction == -1 and t.state.turn == 0
        assert snap(t) == (0, "REVERSER", None, 0, (7, 7))
    t = Table(S, [H0, H1], first="REVERSER", dealer=1)
    assert t.state.turn == 1 and to_act(t.state) == 1
    # version 3's reading (readings 3: a version-2 or -3 transcript): with two players a first
    # reverse changes nothing but the direction and the first player starts, unless a reverse
    # skips with two (reverse_skips_with_two): then the dealer starts
    old = Table(get_variant("standard", readings=3), [H0, H1], first="REVERSER")
    assert old.state.direction == -1 and old.state.turn == 1
    assert snap(old) == (1, "REVERSER", None, 0, (7, 7))
    skips = get_variant("standard", readings=3, reverse_skips_with_two=True)
    assert Table(skips, [H0, H1], first="REVERSER").state.turn == 0
    three = Table(get_variant("standard", readings=3), [H0, H1, H0], first="REVERSER")
    assert three.state.turn == three.state.dealer  # at three seats as in version 4
    # a reverse played in the hand with two players changes nothing but the direction
    t3 = Table(S, ["REVERSEG 7G SKIPG DRAW2R WILD WILD4 9B", H1], first="5G", dealer=1)
    t3.play(0, "REVERSEG")
    assert t3.state.turn == 1
