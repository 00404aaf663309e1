"""The hint for a person: the search bot's move for their seat and its reasons, in words."""

from __future__ import annotations

from dernier_p2p.bots import hint
from dernier_p2p.bots.hint import explain, move_words
from dernier_p2p.bots.search import SearchBot
from dernier_p2p.rules import Draw, Pass, Play, get_variant
from dernier_p2p.rules.simulate import Table

NAMES = ["Ann", "Bea"]


def _one_card(table: Table, seat: int, card: str) -> None:
    """A shortcut to a reachable table: ``seat`` holds only ``card``."""
    s = table.state
    keep = (table.slot(seat, card),)
    rest = tuple(x for x in s.hands[seat] if x not in keep)
    hands = list(s.hands)
    hands[seat] = keep
    hands[1 - seat] = hands[1 - seat] + rest
    table.state = s._replace(hands=tuple(hands))


def test_a_last_card_that_fits_is_the_hint() -> None:
    table = Table(get_variant("dernier"), ["7R 3B 5B 9B 2Y", "4Y 6Y 8R 9G QG"], first="4R",
                  dealer=1)
    _one_card(table, 0, "7R")
    words = hint(table.state, 0, table.dealer.view(table.state, 0), NAMES, iterations=50)
    assert words.startswith("Play 7♥: it is your last card: you go out")
    assert "Bea draws 2" in words  # a 7 still makes the previous player draw


def test_the_hint_gives_the_search_figures_and_the_next_best_choice() -> None:
    table = Table(get_variant("dernier"), ["AB 3R 4R 6R 8R", "AR 9Y KY QG 2G"], first="5B",
                  dealer=1)
    table.play(0, "AB")
    view = table.dealer.view(table.state, 1)
    words = hint(table.state, 1, view, NAMES, iterations=120, seed=4)
    assert "In 120 play-outs to the end of the hand" in words
    decision = SearchBot(4, iterations=120).decide(table.state, 1, view)
    assert words == explain(table.state, 1, view, decision, NAMES)  # the same seed, the same
    chosen, other = sorted(decision.options, key=lambda o: o.move != decision.move)
    if round(100 * other.wins) > round(100 * chosen.wins):  # the other's lead was not sure
        assert f"to {move_words(table.state, 1, other.move, NAMES)} won " in words
        assert "a lead too small to be sure of, so the usual choice stands." in words
    else:
        assert f"the next best choice, to {move_words(table.state, 1, other.move, NAMES)}" \
            in words
    if isinstance(decision.move, Play):
        assert words.startswith("Play A♥: it passes the chain on instead of taking 2 cards")
    else:
        assert words.startswith("Take the 2 pending cards")


def test_a_draw_with_nothing_that_fits_says_so() -> None:
    table = Table(get_variant("standard"), ["1Y 2Y 3Y 4Y 5Y 6Y 7Y", "1B 2B 3B 4B 5B 6B 7B"],
                  first="9R", then="8G", dealer=1)
    words = hint(table.state, 0, table.dealer.view(table.state, 0), NAMES, iterations=20)
    assert words == "Draw a card: nothing in your hand fits. Nothing else is worth weighing here."
    table.draw(0)
    words = hint(table.state, 0, table.dealer.view(table.state, 0), NAMES, iterations=20)
    assert words.startswith("Pass, keeping the card you drew: the card you drew does not fit")


def test_moves_in_words() -> None:
    table = Table(get_variant("moderno"), ["5R 6R 1G 2G 3G 4G 6G 7G", "1Y 2Y 3Y 4Y 6Y 7Y 8Y 9Y"],
                  first="9R", dealer=1)
    state = table.state
    assert move_words(state, 0, Draw(0), NAMES) == "draw a card"
    assert move_words(state, 0, Pass(0), NAMES) == "pass, keeping the card you drew"
    assert move_words(state, 0, None, NAMES) == "let play go on"


def test_the_hint_reads_no_hidden_face() -> None:
    """Two deals that differ only in what Ann cannot see (Bea's hand, the pile): the same
    words, figures included; a view holding every face (a careless caller) changes nothing."""
    rules = get_variant("dernier")
    mine = "JY 3B 5B 9B 2R"
    worlds = [
        Table(rules, [mine, "4Y 6Y 8R 9G QG"], first="4B", then="KR 7G", dealer=1),
        Table(rules, [mine, "AB 7B QB KB 10B"], first="4B", then="2Y 8Y", dealer=1),
    ]
    said = [hint(w.state, 0, w.dealer.view(w.state, 0), NAMES, iterations=80, seed=2)
            for w in worlds]
    assert said[0] == said[1] and "play-outs to the end of the hand" in said[0]
    table = worlds[1]
    everything = {x: table.dealer.face(table.state, x) for h in table.state.hands for x in h}
    assert hint(table.state, 0, everything, NAMES, iterations=80, seed=2) == said[0]


def test_the_hint_uses_what_the_seat_read_of_the_others_and_leaves_it_be() -> None:
    """Given the seat's tracker, a hint searches as the strong bot in the seat would, with the
    readings of the others' plays (the same seed without them deals other worlds, so the words
    differ); the seat's tracker is not moved on by it."""
    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.bots.tracker import Tracker
    from dernier_p2p.rules import MatchFormat
    from dernier_p2p.rules.simulate import play_match

    rules = get_variant("dernier", match=MatchFormat("hands", 1))
    seen = {"read": 0, "differed": 0}
    me = HeuristicBot(0)
    for seed in range(6):
        tracker = Tracker(plays=True)

        def seat_0(state, seat, view, tracker=tracker):
            tracker.observe(state, seat)
            if seen["read"] < 12 and (tracker.named or tracker.ranked):
                before = (tracker.last, dict(tracker.voids), list(tracker.named))
                with_readings = hint(state, seat, view, NAMES, iterations=80, tracker=tracker)
                without = hint(state, seat, view, NAMES, iterations=80)
                assert (tracker.last, tracker.voids, tracker.named) == before
                seen["read"] += 1
                seen["differed"] += with_readings != without
            return me(state, seat, view)

        play_match(rules, 2, [seat_0, HeuristicBot(1)], seed=seed)
    assert seen["read"] > 5 and seen["differed"] > 0, seen
