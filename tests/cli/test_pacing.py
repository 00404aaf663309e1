"""Bots at a table with a person: a bot that searches thinks in a worker thread, during the
pause every bot makes before its move, so the table keeps its pace and its networking runs."""

from __future__ import annotations

import trio

from dernier_p2p.bots import HeuristicBot, SearchBot
from dernier_p2p.cli.pacing import Pacer, paced_bot
from dernier_p2p.net.agent import bot_agent
from dernier_p2p.rules import Play, get_variant, legal_moves
from dernier_p2p.rules.simulate import Table


def _table() -> tuple:
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
    state, seat, view = _table()

    async def main() -> None:
        move, took, gap = await _ask(bot_agent(SearchBot(0, seconds=0.6)), state, seat, view)
        assert move in legal_moves(state, seat, view)
        assert took >= 0.5  # it did think
        assert gap < 0.3  # and the loop went on meanwhile (a blocked loop: a 0.6 s gap)

    trio.run(main)


def test_a_searching_bot_thinks_during_the_human_pace() -> None:
    """The pause before a bot's move (0.8 s here) and its search (0.8 s) overlap: the move
    comes after about the longer of the two, not their sum."""
    state, seat, view = _table()

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
