"""Bots at a table with a person (``dernier play``). The out-of-turn window: a person who may
still declare late sees the offer with its seconds, and no bot catches them before it has run
its full length, whether the person is out of turn or in turn again after a card that gave the
turn back (two seats, ``standard``); the person's agent, the pacer and the paced bot run
together under trio's virtual clock. A bot that searches thinks in a worker thread, during the
pause every bot makes before its move, so the table keeps its pace and its networking runs."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from dernier_p2p.bots import HeuristicBot, SearchBot
from dernier_p2p.bots.levels import LEVELS, make_bot
from dernier_p2p.cli.human import HumanAgent
from dernier_p2p.cli.pacing import Pacer, paced_bot
from dernier_p2p.cli.table import BOT_PACE
from dernier_p2p.net.agent import bot_agent
from dernier_p2p.rules import (
    Card,
    Catch,
    Declare,
    Phase,
    Play,
    Rank,
    State,
    Suit,
    apply,
    chance_needed,
    get_variant,
    legal_moves,
    new_match,
    to_act,
)
from dernier_p2p.rules.simulate import Dealer, Table
from dernier_p2p.tui.link import KeyLines

NAMES = ["Ann", "Bot 1"]
OFFER_S = 3.0
RED, BLUE = Suit.RED, Suit.BLUE


def _deal(variant: str, hands: list[list[Card]], first: Card, dealer: int,
          **options: Any) -> tuple[State, Dealer]:
    """Two seats of ``variant`` dealt ``hands`` with ``first`` turned up, in play."""
    rules = get_variant(variant, hand_size=len(hands[0]), **options)
    deck = Dealer.for_hands(rules, hands, first=first, dealer=dealer)
    state = new_match(rules, 2)
    while (req := chance_needed(state)) is not None or state.phase is not Phase.PLAY:
        assert req is not None
        state, _ = apply(state, deck.chance_move(state, req))
    return state, deck


def _after(card: Card, last: Card, **options: Any) -> tuple[State, dict, dict]:
    """Two seats of ``standard`` with two-card hands: Ann (seat 0) plays ``card`` as her
    second-last card without declaring, ``last`` left in her hand; the state then and both
    seats' views."""
    hands = [[card, last], [Card(Rank.N3, Suit.GREEN), Card(Rank.N8, Suit.YELLOW)]]
    state, deck = _deal("standard", hands, Card(Rank.N4, RED), 1, **options)
    assert to_act(state) == 0
    suit = RED if card.suit is None else None
    state, _ = apply(state, Play(0, state.hands[0][0], card, suit=suit, declare=False))
    assert chance_needed(state) is None and state.owes == (0,)
    return state, deck.view(state, 0), deck.view(state, 1)


def _table(state: State, views: tuple[dict, dict], typed: list[tuple[float, str]] = ()
           ) -> dict[str, Any]:
    """Ask Ann's agent and the bot's at once, as the table does after the play; type
    ``typed`` lines (at virtual seconds, once a prompt is open). Returns when the bot moved
    (``bot``: its move and when) and what Ann chose (``ann``, if she did) and saw (``out``)."""
    got: dict[str, Any] = {"out": []}

    def echo(text: str = "", nl: bool = True) -> None:
        got["out"].append(text + ("\n" if nl else ""))

    async def main() -> None:
        pacer = Pacer(OFFER_S, hand_key=False)
        lines = KeyLines()
        ann = HumanAgent(NAMES, [], lines, lambda: state, echo=echo, colour=False, pacer=pacer)
        bot = paced_bot(HeuristicBot(1), pacer, BOT_PACE)

        async def person() -> None:
            got["ann"] = (await ann(state, 0, views[0]), trio.current_time())

        async def typist() -> None:
            for at, line in typed:
                await trio.sleep_until(at)
                while not ann.open_prompt:
                    await trio.sleep(0.01)
                lines.feed(line)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(person)
            nursery.start_soon(typist)
            got["bot"] = (await bot(state, 1, views[1]), trio.current_time())
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    got["text"] = "".join(got["out"])
    return got


TURN_BACK = {
    "draw-two": (Card(Rank.DRAW2, RED), {}),
    "skip": (Card(Rank.SKIP, RED), {}),
    "wild draw-four": (Card(Rank.WILD4, None), {}),
    "reverse (reverse_skips_with_two)": (Card(Rank.REVERSE, RED),
                                         {"reverse_skips_with_two": True}),
}


@pytest.mark.parametrize("name", list(TURN_BACK))
def test_after_a_card_that_gives_the_turn_back_the_catch_waits_for_the_window(name: str) -> None:
    card, options = TURN_BACK[name]
    state, *views = _after(card, Card(Rank.N5, BLUE), **options)
    assert to_act(state) == 0  # Ann is in turn again, still owing her declaration
    got = _table(state, tuple(views))
    move, at = got["bot"]
    assert move == Catch(1, 0)
    assert at >= OFFER_S, f"Bot 1 caught Ann {at:.2f} s into a {OFFER_S:.0f} s window"
    assert f"(late declaration) you have not declared: ! = declare DERNIER! ({OFFER_S:.0f} s)" \
        in got["text"]
    # the turn's prompt, still open: the declaration alone, or a draw
    assert got["text"].endswith("\nd = draw · ! = declare DERNIER/SOLO · q = leave > ")


@pytest.mark.parametrize("card", [Card(Rank.N7, RED), Card(Rank.REVERSE, RED)],
                         ids=["a number", "reverse (two seats: the other seat plays)"])
def test_out_of_turn_the_catch_waits_for_the_window(card: Card) -> None:
    state, *views = _after(card, Card(Rank.N5, BLUE))
    assert to_act(state) == 1
    got = _table(state, tuple(views))
    assert got["bot"][0] == Catch(1, 0) and got["bot"][1] >= OFFER_S
    assert f"(out of turn) ! = declare DERNIER/SOLO · Enter = let play go on · q = leave " \
           f"({OFFER_S:.0f} s)" in got["text"]


def test_in_turn_again_a_lone_bang_declares_within_the_window() -> None:
    state, *views = _after(Card(Rank.DRAW2, RED), Card(Rank.N5, BLUE))
    got = _table(state, tuple(views), typed=[(1.0, "!")])
    assert "ann" in got, f"Bot 1 moved first, {got['bot'][1]:.2f} s into the window"
    move, at = got["ann"]
    assert move == Declare(0) and at < OFFER_S
    assert got["bot"][1] >= at  # nothing of the bot's came first


def test_in_turn_again_the_last_card_is_still_played_within_the_window() -> None:
    state, *views = _after(Card(Rank.DRAW2, RED), Card(Rank.N5, RED))
    got = _table(state, tuple(views), typed=[(0.5, "1")])
    assert "ann" in got, f"Bot 1 moved first, {got['bot'][1]:.2f} s into the window"
    move, at = got["ann"]
    assert isinstance(move, Play) and move.seat == 0 and move.card == Card(Rank.N5, RED)
    assert at < OFFER_S and got["bot"][1] >= at


def test_a_jump_in_that_would_cost_the_late_declaration_waits_for_the_window() -> None:
    """``moderno``, two seats: the bot plays a rotate card (the hands change places), and Ann
    is left with one card and in turn; the hand she passed on holds another rotate card, so
    the bot may jump in at once, which would close her window (she would draw 2)."""
    rotate = Card(Rank.ROTATE, None)
    hands = [[rotate, Card(Rank.N5, Suit.GREEN)], [rotate, Card(Rank.N7, BLUE)]]
    state, deck = _deal("moderno", hands, Card(Rank.N4, RED), 0)
    assert to_act(state) == 1
    state, _ = apply(state, Play(1, state.hands[1][0], rotate, suit=RED, declare=True))
    assert to_act(state) == 0 and state.owes == (0,)
    got = _table(state, (deck.view(state, 0), deck.view(state, 1)))
    move, at = got["bot"]
    assert isinstance(move, Play) and move.seat == 1 and move.card == rotate  # the jump-in
    assert at >= OFFER_S, f"Bot 1 jumped in {at:.2f} s into a {OFFER_S:.0f} s window"
    assert f"! = declare SOLO! ({OFFER_S:.0f} s)" in got["text"]


def _search_table() -> tuple:
    table = Table(get_variant("standard"), ["7R 3R 5B 9B 2Y 4Y 6Y", "8R 6B 8G 9G 1G 2G 3G"],
                  first="9R", dealer=1)
    return table.state, 0, table.dealer.view(table.state, 0)


async def _ask(agent, state, seat, view) -> tuple[object, float, float]:
    """The agent's move, the seconds it took and the longest the event loop went unserved."""
    gaps: list[float] = []
    got: list = []

    async def ticker() -> None:
        last = trio.current_time()
        while True:
            await trio.sleep(0.01)
            now = trio.current_time()
            gaps.append(now - last)
            last = now

    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ticker)
        got.append(await agent(state, seat, view))
        nursery.cancel_scope.cancel()
    return got[0], trio.current_time() - start, max(gaps, default=0.0)


def test_a_searching_bot_thinks_in_a_thread_while_the_table_runs() -> None:
    state, seat, view = _search_table()

    async def main() -> None:
        move, took, gap = await _ask(bot_agent(SearchBot(0, seconds=1.2)), state, seat, view)
        assert move in legal_moves(state, seat, view)
        assert took >= 1.0  # it did think
        # and the loop went on meanwhile: a blocked loop would go 1.2 s unserved; a loaded
        # machine pauses the whole process now and then (0.4 s seen at a load average of 6)
        assert gap < 0.6

    trio.run(main)


def test_a_searching_bot_thinks_during_the_human_pace() -> None:
    """The pause before a bot's move (0.8 s here) and its search (0.8 s) overlap: the move
    comes after about the longer of the two, not their sum."""
    state, seat, view = _search_table()

    async def main() -> None:
        pacer = Pacer(3.0, hand_key=False)
        agent = paced_bot(SearchBot(0, seconds=0.8), pacer, 0.8)
        move, took, gap = await _ask(agent, state, seat, view)
        assert move in legal_moves(state, seat, view)
        assert 0.75 <= took < 1.4
        assert gap < 0.4
        # a heuristic bot keeps the same pause
        move, took, _ = await _ask(paced_bot(HeuristicBot(0), pacer, 0.8), state, seat, view)
        assert isinstance(move, Play) and took >= 0.75

    trio.run(main)


@pytest.mark.parametrize("level", LEVELS)
def test_bots_of_every_level_keep_the_human_pace(level: str) -> None:
    """``--bots easy|normal|strong`` with a person at the table: each waits the table's pause
    before its move (the strong one thinking meanwhile, in a worker thread, at its own default
    budget), and moves without it once the person has left."""
    state, seat, view = _search_table()

    async def main() -> None:
        pacer = Pacer(3.0, hand_key=False)
        agent = paced_bot(make_bot(level, 0), pacer, 0.8)
        move, took, gap = await _ask(agent, state, seat, view)
        assert move in legal_moves(state, seat, view)
        assert took >= 0.75, f"the {level} bot moved after {took:.2f} s"
        assert gap < 0.4  # the table's loop ran meanwhile
        pacer.leave()
        move, took, _ = await _ask(paced_bot(make_bot(level, 0), pacer, 30.0), state, seat,
                                   view)
        assert move in legal_moves(state, seat, view) and took < 20

    trio.run(main)
