"""Human pacing of a table whose other seats run in this process (``dernier play``).

A :class:`Pacer` is shared by the human's agent and the bots' agents. While the human has an
out-of-turn offer open (a jump-in, a late declaration, a catch; a late declaration also while
the human is in turn, after a card that gave the turn back) the bots hold their moves, catches
and jump-ins included, until the human answers, lets it go, or the offer's window (``offer_s``)
runs out; at the end of a hand they hold until the human has seen every hand and pressed a key.
Once the human has left the table (:meth:`Pacer.leave`) the bots wait for nobody. Times come
from trio's clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import trio

from dernier_p2p.net.agent import Agent, Policy, think
from dernier_p2p.rules import Card, Move, State

DEFAULT_OFFER_S = 3.0


class Pacer:
    """Who the bots wait for: an open offer (until its deadline) or the end-of-hand key."""

    def __init__(self, offer_s: float = DEFAULT_OFFER_S, hand_key: bool = True) -> None:
        self.offer_s = offer_s
        self.hand_key = hand_key
        self.offer_until: float | None = None
        self._offer_for: object = None
        self.hand_held = False
        self.gone = False  # the human left the table: the bots play on without pauses
        self.on_release: Callable[[], None] | None = None  # the table is told of the key
        self._changed = trio.Event()
        # where the human's seat is: (hand, clock) of the state it has applied, None while it
        # is applying a record; set once the seat is known
        self.human_at: Callable[[], tuple[int, int] | None] | None = None

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def open_offer(self, key: object) -> float:
        """Open (or keep) the offer for table state ``key``; its deadline on trio's clock."""
        if self._offer_for is not key or self.offer_until is None:
            self._offer_for = key
            self.offer_until = trio.current_time() + self.offer_s
            self._wake()
        return self.offer_until

    def close_offer(self) -> None:
        """The offer was answered, let go, or overtaken by the table."""
        if self.offer_until is not None:
            self.offer_until = None
            self._wake()

    def offer_left(self) -> float:
        """Seconds left on the open offer (0 if none)."""
        if self.offer_until is None:
            return 0.0
        return max(0.0, self.offer_until - trio.current_time())

    def leave(self) -> None:
        """The human has left the table: no offer, no hand's end and no pause holds the bots
        from now on."""
        self.gone = True
        self.hand_key = False
        self.offer_until = None
        self.hand_held = False  # (no key was pressed: the table is not told of one)
        self._wake()

    def hold_hand(self) -> None:
        """A hand has ended: hold the bots until :meth:`release_hand` (if ``hand_key``)."""
        if self.hand_key and not self.hand_held:
            self.hand_held = True
            self._wake()

    def release_hand(self) -> None:
        if self.hand_held:
            self.hand_held = False
            self._wake()
            if self.on_release is not None:
                self.on_release()

    async def hand_ended(self) -> None:
        """Wait until a hand's end is held for a key."""
        while not self.hand_held:
            await self._changed.wait()

    async def caught_up(self, position: tuple[int, int]) -> None:
        """Wait until the human's seat has applied the table up to ``position`` and had the
        chance to open an offer on it."""
        if self.human_at is None or self.gone:
            return
        while not self.gone:
            at = self.human_at()
            if at is not None and at >= position:
                break
            await trio.sleep(0.02)
        await trio.sleep(0.02)  # the human's agent is asked right after the record applies

    async def clear_hand(self) -> None:
        """Wait until no hand's end is held."""
        while self.hand_held:
            await self._changed.wait()

    async def clear(self) -> None:
        """Wait until no offer is open and no hand's end is held."""
        while not self.gone:
            if self.offer_until is not None and trio.current_time() >= self.offer_until:
                self.offer_until = None
            if self.offer_until is None and not self.hand_held:
                return
            with trio.move_on_at(self.offer_until or float("inf")):
                await self._changed.wait()


def paced_bot(policy: Policy, pacer: Pacer, delay: float) -> Agent:
    """A bot agent that waits ``delay`` seconds, then for the pacer to be clear, then moves (at
    once when the human has left).

    Its move is for the state it was asked about, so a bot that takes time to think (a
    ``slow`` policy, run in a worker thread) thinks while it waits: the human's pacing is the
    same at every level, and only a search longer than ``delay`` adds to it."""

    async def agent(state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
        pause = 0.0 if pacer.gone else delay
        if not getattr(policy, "slow", False):
            await trio.sleep(pause)
            await pacer.caught_up((state.hand_number, state.clock))
            await pacer.clear()
            return policy(state, seat, view)
        box: list[Move | None] = []

        async def ask() -> None:
            box.append(await think(policy, state, seat, view))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask)
            await trio.sleep(pause)
            await pacer.caught_up((state.hand_number, state.clock))
            await pacer.clear()
        return box[0]

    return agent
