"""Local agents: who chooses this seat's moves (a bot policy or a human front-end).

An :data:`Agent` is ``async agent(state, seat, view) -> Move | None``, asked whenever the seat
may act (its turn, or an out-of-turn move such as a jump-in, a late declaration or a catch);
``view`` holds the faces the seat may see. Out of turn it may return None (no move wanted).

An agent may also have a ``refused(code, detail)`` method: it is called when a move it chose is
refused (by the session before it is sent, or by the host's ``error`` frame), and the agent is
then asked again at once (an agent without it is asked again when the table changes).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from dernier_p2p.rules import Card, Move, State

Agent = Callable[[State, int, Mapping[int, Card]], Awaitable[Move | None]]


class Resign(Exception):
    """Raised by an agent whose player leaves the match on purpose: the seat sends ``resign``
    (PROTOCOL.md 6.3) before the exception goes on."""
Policy = Callable[[State, int, Mapping[int, Card]], Move | None]


def tell_refused(agent: object, code: str, detail: str) -> bool:
    """Call ``agent.refused(code, detail)`` if the agent has it; whether it had."""
    hook = getattr(agent, "refused", None)
    if not callable(hook):
        return False
    hook(code, detail)
    return True


async def think(policy: Policy, state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
    """Ask a synchronous bot ``policy`` for its move. A policy marked ``slow`` (one that searches
    for a noticeable time) runs in a worker thread, so the table's networking goes on meanwhile
    (it cannot be cut short: a cancelled call waits for the answer and drops it)."""
    if getattr(policy, "slow", False):
        import trio

        return await trio.to_thread.run_sync(policy, state, seat, dict(view))
    return policy(state, seat, view)


def bot_agent(policy: Policy, delay: float = 0.0) -> Agent:
    """An agent that asks a synchronous bot ``policy`` (optionally after ``delay`` seconds;
    a ``slow`` policy thinks during the delay, so it moves after the longer of the two)."""
    import trio

    async def agent(state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
        if not delay or not getattr(policy, "slow", False):
            if delay:
                await trio.sleep(delay)
            return await think(policy, state, seat, view)
        box: list[Move | None] = []

        async def ask() -> None:
            box.append(await think(policy, state, seat, view))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask)
            await trio.sleep(delay)
        return box[0]

    return agent
