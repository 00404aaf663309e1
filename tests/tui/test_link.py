"""Keys become lines for the human agent; a key pressed before a prompt opens never answers
it (type-ahead is dropped, so a jump-in key cannot land on the next offer or turn)."""

from __future__ import annotations

import pytest
import trio

from dernier_p2p.cli.human import HumanAgent, Stale
from dernier_p2p.tui.link import ScreenLink


def test_a_key_typed_before_an_offer_does_not_answer_it() -> None:
    link = ScreenLink()
    state = object()  # the table's state as the agent was asked on it (unchanged here)
    agent = HumanAgent(["Ann", "Bot 1"], link.log, link.lines, lambda: state,
                       echo=link.agent_echo, colour=False)

    async def main() -> None:
        link.lines._start()
        link.lines.feed("4")  # pressed before the offer opened
        await trio.sleep(0.05)
        with pytest.raises(Stale):  # the offer's window ran out unanswered
            await agent._ask("you may jump in > ", state, until=trio.current_time() + 0.2)
        assert link.prompt == ""  # the offer is gone from the screen

        async def press_later() -> None:
            await trio.sleep(0.05)
            link.lines.feed("2")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(press_later)
            answer = await agent._ask("you may jump in > ", state,
                                      until=trio.current_time() + 5.0)
        assert answer == "2"  # a key pressed while the offer stands is its answer

    trio.run(main)
