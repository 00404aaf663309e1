"""Local agents: who chooses this seat's moves (a bot policy or a human front-end).

An :data:`Agent` is ``async agent(state, seat, view) -> Move | None``, asked whenever the seat
may act (its turn, or an out-of-turn move such as a jump-in, a late declaration or a catch);
``view`` holds the faces the seat may see. Out of turn it may return None (no move wanted).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from dernier_p2p.rules import Card, Move, State

Agent = Callable[[State, int, Mapping[int, Card]], Awaitable[Move | None]]
Policy = Callable[[State, int, Mapping[int, Card]], Move | None]


def bot_agent(policy: Policy, delay: float = 0.0) -> Agent:
    """An agent that asks a synchronous bot ``policy`` (optionally after ``delay`` seconds)."""
    import trio

    async def agent(state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
        if delay:
            await trio.sleep(delay)
        return policy(state, seat, view)

    return agent
