"""What a seat infers from the moves it sees: who drew rather than play, who took a chain,
who kept the card just drawn, and (``plays``) what a card played in turn says of a player who
sheds by rank; found by replaying the public moves with the rules engine."""

from __future__ import annotations

import pytest

from dernier_p2p.bots import HeuristicBot, RandomBot
from dernier_p2p.bots.belief import _held_most
from dernier_p2p.bots.tracker import Tracker, replay
from dernier_p2p.rules import (
    ChooseHandSize,
    Cut,
    Draw,
    MatchFormat,
    Pass,
    Play,
    Suit,
    get_variant,
    parse_card,
)
from dernier_p2p.rules.simulate import Dealer, Table, play_match


def test_a_draw_and_a_pass_are_found_and_read() -> None:
    rules = get_variant("standard")
    table = Table(rules, ["1Y 2Y 3Y 4Y 5Y 6Y 7R", "1B 2B 3B 4B 5B 6B 7B"], first="9R",
                  then="8G", dealer=1)
    tracker = Tracker()
    tracker.observe(table.state, 0)
    play = Play(0, table.slot(0, "7R"), parse_card("7R"))
    tracker.moved(table.state, play)  # replays start after seat 0's own move
    table.move(play)
    start = table.state
    table.draw(1)
    table.pass_(1)
    path = replay(start, table.state)
    assert path is not None and [m for _, m in path] == [Draw(1), Pass(1)]
    voids = tracker.observe(table.state, 0)
    red = parse_card("3R")
    for x in start.hands[1]:  # on a red 7 seat 1 held no red, no 7, no wild
        assert red in voids[x] and parse_card("7G") in voids[x] and parse_card("WILD") in voids[x]
        assert parse_card("3B") not in voids[x]
    drawn = table.state.hands[1][-1]
    assert red in voids[drawn]  # the card it drew and kept did not fit either


def test_no_inference_when_the_moves_cannot_be_told() -> None:
    rules = get_variant("standard")
    table = Table(rules, ["1Y 2Y 3Y 4Y 5Y 6Y 7R", "1B 2B 3B 4B 5B 6B 7B"], first="9R",
                  then="8G", dealer=1)
    start = table.state
    table.draw(0)
    assert replay(table.state, start) is None  # backwards
    other = Table(get_variant("dernier"), ["JY 3B 5B 9B 2R", "4Y 6Y 8R 9G QG"], first="4B",
                  dealer=1)
    assert replay(start, other.state) is None


def _seat_0_plays(table: Table, card: str, plays: bool = True) -> Tracker:
    """Seat 0's tracker, having seen the table, and seat 0's ``card`` played."""
    tracker = Tracker(plays=plays)
    tracker.observe(table.state, 0)
    play = Play(0, table.slot(0, card), parse_card(card))
    tracker.moved(table.state, play)  # replays start after seat 0's own move
    table.move(play)
    return tracker


def _after_seat_0(plays: bool, seat_1: str, first: str = "9B",
                  then: str = "8G 8Y 8R") -> tuple[Table, Tracker]:
    """A standard table where seat 0 has played its 9 of blue (seen by seat 0's tracker)."""
    table = Table(get_variant("standard"), ["9B 1Y 2Y 3Y 4Y 5Y 6Y", seat_1], first=first,
                  then=then, dealer=1)
    return table, _seat_0_plays(table, "9B", plays)


def test_a_card_played_in_turn_says_its_player_held_no_fitting_card_worth_more() -> None:
    table, tracker = _after_seat_0(True, "5B 1R 2R 3R 4R 5R 6R")
    others = [x for x in table.state.hands[1] if x != table.slot(1, "5B")]
    table.play(1, "5B")
    voids = tracker.observe(table.state, 0)
    for x in others:  # a card worth more that would have fitted the blue 9
        for worth_more in ("DRAW2B", "SKIPB", "9B", "7B", "9R"):
            assert parse_card(worth_more) in voids[x], worth_more
        # worth less (wild cards are kept), the same, or not fitting
        for not_more in ("WILD", "WILD4", "5B", "3B", "5G", "3R"):
            assert parse_card(not_more) not in voids[x], not_more
    assert table.slot(1, "1R") in voids  # (its slot was read)


def test_plays_are_read_only_when_asked_and_only_when_chosen_in_turn() -> None:
    table, tracker = _after_seat_0(False, "5B 1R 2R 3R 4R 5R 6R")
    table.play(1, "5B")
    assert tracker.observe(table.state, 0) == {}  # (no plays: nothing read of a play)
    # a card played just after drawing it was the only one that could be
    table, tracker = _after_seat_0(True, "1R 2R 3R 4R 5R 6R 7R", first="8B", then="8G 8Y 8B")
    table.draw(1)  # the 8 of green: it does not fit the 9 of blue, and is kept
    drawn = table.state.hands[1][-1]
    table.pass_(1)
    voids = tracker.observe(table.state, 0)
    assert parse_card("9R") in voids[drawn]  # what the pass says, as before
    table.draw(0)
    table.pass_(0)
    tracker.observe(table.state, 0)
    table.draw(1)  # the 8 of blue: it fits, and is played at once
    table.play(1, "8B")
    tracker.observe(table.state, 0)
    assert not tracker.ranked
    # a chain answered is not a choice among fitting cards (dernier: a Jolly makes the next
    # player draw 4 unless it answers with a Jolly)
    table = Table(get_variant("dernier"), ["JOKER 2Y 3Y 4Y 5Y", "JOKER 2R 3R 4R KB"],
                  first="9B", then="8G 8Y 8R 8B 7G 7Y", dealer=1)
    tracker = Tracker(plays=True)
    tracker.observe(table.state, 0)
    play = Play(0, table.slot(0, "JOKER"), parse_card("JOKER"), Suit.BLUE)
    tracker.moved(table.state, play)
    table.move(play)
    assert table.state.pending_draw
    table.play(1, "JOKER", Suit.BLUE)  # (the king of blue fitted, but did not answer)
    tracker.observe(table.state, 0)
    assert not tracker.ranked


def test_the_reading_of_plays_is_dropped_for_a_player_seen_not_to_shed_by_rank() -> None:
    table, tracker = _after_seat_0(True, "5B 7B 1R 2R 3R 4R 5R")
    seven = table.slot(1, "7B")
    table.play(1, "5B")  # read: no blue card worth more than a 5 left, the 7 included
    assert parse_card("7B") in tracker.observe(table.state, 0)[seven]
    table.draw(0)
    table.pass_(0)
    table.play(1, "7B")  # it held the 7 of blue then: its plays were not by rank
    voids = tracker.observe(table.state, 0)
    assert tracker.unranked == {1} and not tracker.ranked
    assert all(parse_card("9R") not in v for v in voids.values())  # nothing read of plays
    assert tracker.unranked == {1}


@pytest.mark.parametrize("variant", ["dernier", "originale", "moderno", "standard"])
@pytest.mark.parametrize("plays", [False, True])
def test_what_is_inferred_of_heuristic_players_is_true(variant: str, plays: bool) -> None:
    """The heuristic bot draws only when nothing fits and sheds its most valuable fitting card
    first: every inference about it holds, and it is never seen to shed otherwise."""
    rules = get_variant(variant, match=MatchFormat("hands", 2))
    inferred = 0
    named = [0]
    for players in (2, 3, 4):  # (at three seats and more, a suit named can be covered unseen)
        dealer = Dealer(rules, players)
        tracker = Tracker(plays=plays)

        def watcher(state, seat, view, tracker=tracker, dealer=dealer):
            nonlocal inferred
            voids = tracker.observe(state, seat)
            for x, void in voids.items():
                if x in state.hands[seat] or not any(x in h for h in state.hands):
                    continue
                assert dealer.face(state, x) not in void
                inferred += 1
            for slots, suit in tracker.named:
                faces = {x: dealer.face(state, x) for x in slots}
                assert _held_most(faces, slots, suit), (faces, suit)
                named[0] += 1
            move = HeuristicBot(seat)(state, seat, view)
            tracker.moved(state, move)
            return move

        policies = [watcher] + [HeuristicBot(k) for k in range(1, players)]
        state, _ = play_match(rules, players, policies, dealer=dealer, max_moves=20_000)
        assert state.match_over
        assert not tracker.unranked
    assert inferred > 10
    assert (named[0] > 0) == plays  # (every variant has wild cards that name a suit)


@pytest.mark.parametrize("variant", ["dernier", "standard"])
def test_random_players_are_soon_seen_not_to_shed_by_rank(variant: str) -> None:
    """... and stay seen so in the match's later hands (not for another seat's tracker)."""
    rules = get_variant(variant, match=MatchFormat("hands", 4))
    flagged = carried = 0
    for seed in range(3):
        tracker = Tracker(plays=True)
        hands: dict[int, bool] = {}  # hand -> flagged when the hand was first looked at

        def watcher(state, seat, view, tracker=tracker, hands=hands):
            tracker.observe(state, seat)
            hands.setdefault(state.hand_number, 1 in tracker.unranked)
            move = HeuristicBot(seat)(state, seat, view)
            tracker.moved(state, move)
            return move

        play_match(rules, 2, [watcher, RandomBot(seed)], seed=seed)
        flagged += 1 in tracker.unranked
        carried += sum(hands.get(h, False) for h in range(2, 5))
        assert tracker.last is not None
        tracker.observe(tracker.last, 1)
        assert not tracker.unranked  # another seat's view starts afresh
    assert flagged >= 2 and carried >= 2


def test_a_bot_used_for_a_second_match_starts_it_knowing_nothing_of_the_first() -> None:
    """Two one-hand matches have the same hand number; the clock going back tells them apart,
    so nothing read or remembered in the first is carried into the second."""
    from dernier_p2p.bots import SearchBot
    from dernier_p2p.bots.view import own_faces

    rules = get_variant("dernier", match=MatchFormat("hands", 1))
    bot = SearchBot(1, iterations=10)
    play_match(rules, 2, [bot, RandomBot(2)], seed=3)
    assert bot.tracker.voids or bot.tracker.ranked or bot.tracker.unranked  # it read something
    firsts: list = []

    def first_look(state, seat, view):
        if not firsts:
            bot.decide(state, seat, view)
            firsts.append((state, seat, view))
        return HeuristicBot(seat)(state, seat, view)

    play_match(rules, 2, [first_look, HeuristicBot(1)], seed=4)
    state, seat, view = firsts[0]
    assert bot._memory == own_faces(state, seat, view)
    assert not bot.tracker.unranked and not bot.tracker.ranked
    assert all(x in state.hands[1] for x in bot.tracker.voids)  # (only this match's reading)


def test_a_suit_named_then_covered_by_a_wild_card_is_not_taken_for_the_replays_guess() -> None:
    """Seat 1 names red, seat 2 (no red, no wild) draws a wild card and plays it before seat 0
    looks: any suit could have been named, so the draw says only that seat 2 held no wild
    card, not that it held no yellow (the first suit a replay tries)."""
    rules = get_variant("standard")
    table = Table(rules, ["5G 6G 7G 8G 9G 1B 2B", "WILD 4B 6B 7B 8B 9B 1B",
                          "1Y 2Y 3Y 4Y 6Y 7Y 9Y"], first="3G", then="WILD", dealer=2)
    tracker = Tracker(plays=True)
    tracker.observe(table.state, 0)
    play = Play(0, table.slot(0, "5G"), parse_card("5G"))
    tracker.moved(table.state, play)
    table.move(play)
    table.play(1, "WILD", Suit.RED)
    held = table.state.hands[2]
    table.draw(2)
    table.play(2, "WILD", Suit.BLUE)
    voids = tracker.observe(table.state, 0)
    for x in held:
        assert parse_card("WILD") in voids[x]  # it drew: it held no wild card
        assert parse_card("1Y") not in voids[x] and parse_card("1R") not in voids[x]
    # seat 1's suit is not known; seat 2's, still on the pile, is
    assert [(slots, suit) for slots, suit in tracker.named] == [
        (table.state.hands[2], int(Suit.BLUE))]


def test_a_plain_card_played_on_a_named_suit_shows_the_suit() -> None:
    """Seat 1 names red and seat 2 plays a red card on it: red was named, so seat 1's reading
    holds, and seat 2's play is read against red."""
    rules = get_variant("standard")
    table = Table(rules, ["5G 6G 7G 8G 9G 1B 2B", "WILD 4R 6B 7B 8B 9B 1B",
                          "1R 2Y 3Y 4Y 6Y 7Y 9Y"], first="3G", dealer=2)
    tracker = Tracker(plays=True)
    tracker.observe(table.state, 0)
    play = Play(0, table.slot(0, "5G"), parse_card("5G"))
    tracker.moved(table.state, play)
    table.move(play)
    held = tuple(x for x in table.state.hands[1] if x != table.slot(1, "WILD"))
    table.play(1, "WILD", Suit.RED)
    table.play(2, "1R")
    tracker.observe(table.state, 0)
    assert (held, int(Suit.RED)) in tracker.named


def test_a_jack_that_may_name_a_suit_leaves_the_suit_unknown_when_covered() -> None:
    """``originale``: seat 1's jack of green names yellow (it may, or may not), and seat 2's
    jack of yellow covers it before seat 0 looks. A replay cannot tell whether green or yellow
    was to follow, so seat 2's choice is not read as made on green: its 7 of green (an attack,
    worth more than a jack, but not fitting yellow) is not ruled out."""
    rules = get_variant("originale")
    table = Table(rules, ["2Y 3Y 4Y 5Y 6Y", "JG 5B 8B 6B QB", "JY 7G 9R 9B 8R"], first="3G",
                  bottom="10B")
    table.move(Cut(2, False, parse_card("10B")))
    table.move(ChooseHandSize(0, 5))
    tracker = Tracker(plays=True)
    tracker.observe(table.state, 0)
    seven = table.slot(2, "7G")
    table.play(1, "JG", Suit.YELLOW)
    table.play(2, "JY")
    voids = tracker.observe(table.state, 0)
    assert parse_card("7G") not in voids.get(seven, frozenset())


def _moderno_three(seat_2: str) -> tuple[Table, Tracker]:
    """A moderno table of three (jump-ins allowed) where seat 0 has played its red 5."""
    table = Table(get_variant("moderno"), ["5R 1Y 2Y 3Y 4Y 6Y 7Y 8Y",
                                           "7R 1B 2B 3B 4B 6B 8B 9B", seat_2],
                  first="9R", then="1R 2R 3R", dealer=2)
    return table, _seat_0_plays(table, "5R")


def test_a_move_made_in_turn_says_the_others_held_no_card_identical_to_the_top() -> None:
    table, tracker = _moderno_three("7G 1G 2G 3G 4G 6G 8G 9G")
    table.play(1, "7R")  # seat 2 was offered a jump-in on the red 5 first, and took none
    table.play(2, "7G")  # and seat 1 one on the red 7
    voids = tracker.observe(table.state, 0)  # seat 0's turn: both let the green 7 come
    for x in table.state.hands[2]:
        assert {parse_card("5R"), parse_card("7G")} <= voids[x]
    for x in table.state.hands[1]:
        assert {parse_card("7R"), parse_card("7G")} <= voids[x]
        assert parse_card("5R") not in voids[x]  # it moved on the red 5: it was not offered
    plain = Tracker()  # without ``plays``, no habit is read
    plain.observe(table.state, 0)
    assert plain.observe(table.state, 0) == {}


def test_a_player_seen_not_to_jump_in_with_a_card_it_held_is_read_no_more() -> None:
    table, tracker = _moderno_three("5R 1G 2G 3G 4G 6G 8G 9G")  # the other red 5
    table.play(1, "7R")  # seat 2 let the red 5 go by: read, wrongly, as not holding one
    table.play(2, "5R")  # then plays it from the slot it held
    tracker.observe(table.state, 0)
    assert tracker.unranked == {2} and 2 not in tracker.ranked


def test_heads_up_the_other_let_its_own_card_go_by_and_held_no_twin() -> None:
    table = Table(get_variant("moderno"), ["9B 1Y 2Y 3Y 4Y 5Y 6Y 7Y", "8B 1R 2R 3R 4R 5R 6R 8R"],
                  first="9G", then="8G 8Y 8R", dealer=1)
    tracker = _seat_0_plays(table, "9B")
    table.play(1, "8B")
    voids = tracker.observe(table.state, 0)  # seat 1 could have played its twin at once
    for x in table.state.hands[1]:
        assert parse_card("8B") in voids[x]
