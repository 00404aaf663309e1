"""What a seat infers from the moves it sees: who drew rather than play, who took a chain,
who kept the card just drawn; found by replaying the public moves with the rules engine."""

from __future__ import annotations

import pytest

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.bots.tracker import Tracker, replay
from dernier_p2p.rules import Draw, MatchFormat, Pass, Play, get_variant, parse_card
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


@pytest.mark.parametrize("variant", ["dernier", "originale", "moderno", "standard"])
def test_what_is_inferred_of_heuristic_players_is_true(variant: str) -> None:
    """The heuristic bot draws only when nothing fits: every inference about it holds."""
    rules = get_variant(variant, match=MatchFormat("hands", 2))
    inferred = 0
    for players in (2, 3):
        dealer = Dealer(rules, players)
        tracker = Tracker()

        def watcher(state, seat, view, tracker=tracker, dealer=dealer):
            nonlocal inferred
            voids = tracker.observe(state, seat)
            for x, void in voids.items():
                if x in state.hands[seat] or not any(x in h for h in state.hands):
                    continue
                assert dealer.face(state, x) not in void
                inferred += 1
            move = HeuristicBot(seat)(state, seat, view)
            tracker.moved(state, move)
            return move

        policies = [watcher] + [HeuristicBot(k) for k in range(1, players)]
        state, _ = play_match(rules, players, policies, dealer=dealer, max_moves=20_000)
        assert state.match_over
    assert inferred > 10
