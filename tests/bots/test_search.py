"""The search bot: it decides from its own view only, makes every kind of decision of every
variant with legal moves, and finds the moves that are plainly best."""

from __future__ import annotations

import random

import pytest

from dernier_p2p.bots import HeuristicBot, SearchBot
from dernier_p2p.bots.search import root_options
from dernier_p2p.rules import (
    Card,
    Catch,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    MatchFormat,
    NameSuit,
    Pass,
    Phase,
    Play,
    Rank,
    Suit,
    apply,
    chance_needed,
    deck_cards,
    get_variant,
    legal_moves,
    new_match,
    parse_card,
    to_act,
)
from dernier_p2p.rules.simulate import Dealer, Table, play_match
from tests.bots.test_view import _run

VARIANTS = ("dernier", "standard", "moderno", "originale")


def _bot(seed: int = 0, iterations: int = 40) -> SearchBot:
    return SearchBot(seed, iterations=iterations)


# --------------------------------------------------------------------------- its own view only
@pytest.mark.parametrize("close", [0.0, 1.0])
def test_the_same_public_state_with_other_hidden_cards_gives_the_same_decisions(
    close: float,
) -> None:
    """Two deals that differ only in what seat 0 cannot see (seat 1's hand, the pile): the
    public states are equal, and for each seed the bot makes the same decision in both (with
    and without more worlds for close calls)."""
    rules = get_variant("dernier")
    mine = "JY 3B 5B 9B 2R"
    worlds = [
        Table(rules, [mine, "4Y 6Y 8R 9G QG"], first="4B", then="KR 7G", dealer=1),
        Table(rules, [mine, "AB 7B QB KB 10B"], first="4B", then="2Y 8Y", dealer=1),
    ]
    a, b = (w.state for w in worlds)
    assert a == b  # nothing seat 0 may not know is in the state
    view = worlds[0].dealer.view(a, 0)
    assert view == worlds[1].dealer.view(b, 0)
    seen = set()
    for seed in range(6):
        moves = [SearchBot(seed, iterations=60, close=close)(w.state, 0,
                                                             w.dealer.view(w.state, 0))
                 for w in worlds]
        assert moves[0] == moves[1]
        # the whole world in the view (a careless caller) changes nothing either
        everything = {x: w.dealer.face(w.state, x) for w in worlds[:1]
                      for h in w.state.hands for x in h}
        assert SearchBot(seed, iterations=60, close=close)(a, 0, everything) == moves[0]
        seen.add(moves[0])
    assert len(seen) >= 1


@pytest.mark.parametrize("variant", ["dernier", "standard", "moderno"])
def test_a_whole_hand_is_played_alike_in_worlds_that_differ_only_in_hidden_faces(
    variant: str,
) -> None:
    """As tests/bots/test_view.py does for the other bots: world B permutes every face seat 0
    never holds nor sees; seat 0 sees the same public states and decides the same, and a view
    leaking every face decides the same too."""
    rules = get_variant(variant, match=MatchFormat("hands", 1))
    deck = deck_cards(rules.deck)
    changed = 0
    for seed in range(3):
        order_a = list(deck)
        random.Random(seed).shuffle(order_a)
        decisions_a, held = _run(rules, Dealer.stacked(rules, order_a, dealer=1, seed=seed),
                                 _bot(seed, 12))
        final = decisions_a[-1][0]
        public = set(final.discard) | {x for x in final.faces if x < len(deck)}
        hidden = [x for x in range(len(deck)) if x not in held and x not in public]
        moved = [order_a[x] for x in hidden]
        random.Random(seed + 1).shuffle(moved)
        order_b = list(order_a)
        for x, card in zip(hidden, moved, strict=True):
            order_b[x] = card
        changed += order_b != order_a
        decisions_b, _ = _run(rules, Dealer.stacked(rules, order_b, dealer=1, seed=seed),
                              _bot(seed, 12))
        assert decisions_b == decisions_a
        leaked, _ = _run(rules, Dealer.stacked(rules, order_a, dealer=1, seed=seed),
                         _bot(seed, 12), leak=True)
        assert leaked == decisions_a
    assert changed >= 2


# --------------------------------------------------------------------------- every decision
def _checked(policy, seen: list):
    def wrapped(state, seat, view):
        move = policy(state, seat, view)
        legal = legal_moves(state, seat, view)
        if to_act(state) == seat:
            assert move is not None, "a bot must move in its turn"
        if move is not None:
            assert move in legal, f"illegal {move} in {state!r}"
        seen.append((state, seat, legal, move))
        return move

    return wrapped


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_decision_of_whole_matches_is_legal(variant: str) -> None:
    """Two-hand matches at 2 and 3 seats, every seat a search bot (few worlds a move): every
    answer is legal, and the kinds of decision each variant asks for all come up."""
    rules = get_variant(variant, match=MatchFormat("hands", 2))
    kinds: set[str] = set()
    for players, seed in ((2, 1), (3, 2)):
        seen: list = []
        policies = [_checked(_bot(seed * 10 + k, 8), seen) for k in range(players)]
        state, _ = play_match(rules, players, policies, seed=seed, max_moves=20_000)
        assert state.match_over
        for st, seat, _legal, move in seen:
            if move is None:
                continue
            name = type(move).__name__
            if isinstance(move, Play) and to_act(st) != seat:
                name = "JumpIn"
            kinds.add(name)
    assert {"Play", "Draw"} <= kinds
    if variant == "originale":
        assert {"ChooseHandSize", "Cut", "JumpIn"} <= kinds
    if variant == "moderno":
        assert "JumpIn" in kinds


def test_it_goes_out_with_its_last_card() -> None:
    rules = get_variant("dernier")
    table = Table(rules, ["7R 3B 5B 9B 2Y", "4Y 6Y 8R 9G QG"], first="4R", dealer=1)
    s = table.state
    keep = (table.slot(0, "7R"),)
    rest = tuple(x for x in s.hands[0] if x not in keep)
    table.state = s._replace(hands=(keep, s.hands[1] + rest))
    move = _bot()(table.state, 0, table.dealer.view(table.state, 0))
    assert isinstance(move, Play) and str(move.card) == "7R"


def test_it_draws_when_nothing_fits_and_passes_a_drawn_card_that_does_not() -> None:
    rules = get_variant("standard")
    table = Table(rules, ["1Y 2Y 3Y 4Y 5Y 6Y 7Y", "1B 2B 3B 4B 5B 6B 7B"], first="9R",
                  then="8G", dealer=1)
    bot = _bot()
    move = bot(table.state, 0, table.dealer.view(table.state, 0))
    assert move == Draw(0)
    table.draw(0)
    move = bot(table.state, 0, table.dealer.view(table.state, 0))
    assert move == Pass(0)


def test_it_answers_a_draw_chain_rather_than_taking_it() -> None:
    rules = get_variant("dernier")
    table = Table(rules, ["AB 3R 4R 6R 8R", "AR 9Y KY QG 2G"], first="5B", dealer=1)
    table.play(0, "AB")
    assert table.state.pending_draw == 2
    move = SearchBot(0, iterations=200)(table.state, 1, table.dealer.view(table.state, 1))
    assert isinstance(move, Play) and str(move.card) == "AR"


def test_it_names_the_suit_it_holds_when_the_first_card_asks_for_one() -> None:
    rules = get_variant("dernier")
    table = Table(rules, ["2R 3R 5R 9R 10R", "4Y 6Y 8Y 9G QG"], first="JB", dealer=0)
    assert table.state.phase is Phase.NAME_SUIT and to_act(table.state) == 0
    move = SearchBot(0, iterations=200)(table.state, 0, table.dealer.view(table.state, 0))
    assert move == NameSuit(0, Suit.RED)


def test_it_swaps_hands_with_the_seat_holding_the_fewest_cards() -> None:
    rules = get_variant("moderno")
    table = Table(
        rules,
        ["SWAPR 3R 4G 5G 6G 7G 8G 9G", "1Y 2Y 3Y 4Y 5Y 6Y 7Y 8Y", "1B 2B 3B 4B 5B 6B 7B 4R"],
        first="9R",
        then="1G 2G 3G 5Y 6B",
        dealer=2,
    )
    s = table.state
    # a shortcut to a reachable table: seat 2 is down to two cards, seat 1 holds many
    keep = tuple(table.slot(2, c) for c in ("1B", "2B"))
    rest = tuple(x for x in s.hands[2] if x not in keep)
    table.state = s._replace(hands=(s.hands[0], s.hands[1] + rest, keep))
    move = SearchBot(0, iterations=300)(table.state, 0, table.dealer.view(table.state, 0))
    assert isinstance(move, Play) and move.card.rank is Rank.SWAP and move.target == 2


def test_it_chooses_a_hand_size_and_cuts_in_originale() -> None:
    rules = get_variant("originale")
    dealer = Dealer(rules, 3, dealer=1)
    state = new_match(rules, 3)
    seen = set()
    while state.phase is not Phase.PLAY:
        req = chance_needed(state)
        if req is not None:
            state, _ = apply(state, dealer.chance_move(state, req))
            continue
        seat = to_act(state)
        move = _bot()(state, seat, dealer.view(state, seat))
        assert move in legal_moves(state, seat, dealer.view(state, seat))
        seen.add(type(move))
        state, _ = apply(state, move)
    assert {Cut, ChooseHandSize} <= seen


@pytest.mark.parametrize("variant", ["originale", "moderno"])
def test_it_jumps_in_to_go_out(variant: str) -> None:
    """Out of turn with one card identical to the top card: jumping in wins the hand."""
    rules = get_variant(variant)
    if variant == "originale":  # dealer 0, seat 2 cuts, seat 1 plays first, seat 2 next
        table = Table(rules, ["7R 3Y 4Y 5Y 6Y", "7R 3B 5B 9B 2Y", "8G 6B 8R 9G QG"],
                      first="9R", then="8Y", bottom="10B")
        table.move(Cut(2, False, parse_card("10B")))
        table.move(ChooseHandSize(0, 5))
        actor, jumper = 1, 0
    else:  # dealer 2, seat 0 plays first, seat 1 next
        table = Table(rules, ["7R 3B 5B 9B 2Y 4Y 6Y 8Y", "1B 6B 8R 9G 1G 2G 3G 5G",
                              "7R 6B 8R 9G 1G 2G 3G 4G"], first="5R", then="8B", dealer=2)
        actor, jumper = 0, 2
    assert to_act(table.state) == actor
    s = table.state
    keep = (table.slot(jumper, "7R"),)
    rest = tuple(x for x in s.hands[jumper] if x not in keep)
    hands = list(s.hands)
    hands[jumper] = keep
    third = 3 - actor - jumper
    hands[third] = hands[third] + rest
    table.state = s._replace(hands=tuple(hands))
    table.play(actor, "7R")
    assert to_act(table.state) != jumper
    view = table.dealer.view(table.state, jumper)
    options, in_turn = root_options(table.state, jumper, view)
    assert not in_turn and options[0] is None and len(options) >= 2
    move = SearchBot(0, iterations=100)(table.state, jumper, view)
    assert isinstance(move, Play) and str(move.card) == "7R" and move.seat == jumper


def test_it_declares_and_catches_at_once() -> None:
    rules = get_variant("standard")
    table = Table(rules, ["5R 6R 1G 2G 3G 4G 6G", "1Y 2Y 3Y 4Y 6Y 7Y 8Y"], first="9R", dealer=1)
    s = table.state
    keep = (table.slot(0, "5R"), table.slot(0, "6R"))
    rest = tuple(x for x in s.hands[0] if x not in keep)
    table.state = s._replace(hands=(keep, s.hands[1] + rest))
    table.play(0, "5R")  # no DERNIER
    assert _bot()(table.state, 1, table.dealer.view(table.state, 1)) == Catch(1, 0)
    assert _bot()(table.state, 0, table.dealer.view(table.state, 0)) == Declare(0)
    decision = _bot().decide(table.state, 0, table.dealer.view(table.state, 0))
    assert not decision.searched


def test_a_play_that_may_declare_always_declares() -> None:
    rules = get_variant("moderno")
    table = Table(rules, ["5R 6R 1G 2G 3G 4G 6G 7G", "1Y 2Y 3Y 4Y 6Y 7Y 8Y 9Y"], first="9R",
                  dealer=1)
    s = table.state
    keep = (table.slot(0, "5R"), table.slot(0, "6R"))
    rest = tuple(x for x in s.hands[0] if x not in keep)
    table.state = s._replace(hands=(keep, s.hands[1] + rest))
    move = _bot()(table.state, 0, table.dealer.view(table.state, 0))
    assert isinstance(move, Play) and move.declare


def test_budgets_are_checked_and_a_time_budget_stops_the_search() -> None:
    with pytest.raises(ValueError, match="iterations"):
        SearchBot(0, iterations=0)
    with pytest.raises(ValueError, match="seconds"):
        SearchBot(0, seconds=0)
    rules = get_variant("standard")
    table = Table(rules, ["7R 3R 5B 9B 2Y 4Y 6Y", "8R 6B 8R 9G 1G 2G 3G"], first="9R", dealer=1)
    bot = SearchBot(0, seconds=0.05)
    bot(table.state, 0, table.dealer.view(table.state, 0))
    assert bot.last is not None and bot.last.searched and bot.last.iterations >= 1
    assert bot.last.seconds < 5


def test_close_calls_get_more_worlds_within_the_bound_and_close_is_checked() -> None:
    """With ``close``, some decisions of a hand play more worlds than the budget, never more
    than (1 + close) times it; without it, none plays more than the budget."""
    with pytest.raises(ValueError, match="close"):
        SearchBot(0, close=-1)
    rules = get_variant("dernier", match=MatchFormat("hands", 1))
    spent: dict[float, list[int]] = {0.0: [], 1.0: []}
    for close, seen in spent.items():
        for g in range(4):
            bot = SearchBot(g, iterations=40, close=close)

            def watched(state, seat, view, bot=bot, seen=seen):  # type: ignore[no-untyped-def]
                move = bot(state, seat, view)
                if bot.last is not None and bot.last.searched:
                    seen.append(bot.last.iterations)
                return move

            play_match(rules, 2, [watched, HeuristicBot(g)], seed=g)
    assert spent[0.0] and max(spent[0.0]) <= 40
    assert max(spent[1.0]) > 40 and max(spent[1.0]) <= 80


def test_it_beats_the_random_bot_more_often_than_not() -> None:
    """A smoke figure (benchmarks/bench_bots.py measures it properly): 40 two-seat hands of
    dernier at a small budget, seats rotated, against the random bot."""
    from dernier_p2p.bots import RandomBot

    rules = get_variant("dernier", match=MatchFormat("hands", 1))
    wins = 0
    for g in range(40):
        seat = g % 2
        policies = [RandomBot(g + 100), RandomBot(g + 100)]
        policies[seat] = SearchBot(g, iterations=60)
        state, _ = play_match(rules, 2, policies, seed=g // 2)
        wins += state.winner == seat
    assert wins >= 24


def test_root_options_leave_out_what_is_never_searched() -> None:
    rules = get_variant("dernier")
    table = Table(rules, ["JY 3B 5B 9B 2R", "4Y 6Y 8R 9G QG"], first="4B", dealer=1)
    options, in_turn = root_options(table.state, 0, table.dealer.view(table.state, 0))
    assert in_turn
    cards = sorted(str(m.card) for m in options if isinstance(m, Play))
    # the J once per suit, the three blue cards, and the draw
    assert cards == ["3B", "5B", "9B", "JY", "JY", "JY", "JY"]
    assert Draw(0) in options
    heuristic = HeuristicBot(0)(table.state, 0, table.dealer.view(table.state, 0))
    assert heuristic in options
    assert parse_card("JY") == Card(Rank.JACK, Suit.YELLOW)
