"""Human pacing across machines (PROTOCOL.md 18): the out-of-turn window every seat keeps.

After a record that changes the rules state, the seats that may act out of turn (a jump-in, a
late declaration, a catch) get ``declare_ms`` (the table's timer; ``--offer-seconds``) to do
so. A seat that has passed, or has nothing to offer, sends a signed ``ready`` frame
(:mod:`dernier_p2p.protocol.ready`) naming the last record it has seen; the host relays it. The
seat at turn holds its move until every other seat at the table is ready for the record that
opened the window, or the window's time is up. A move out of turn that would cost another seat
its late declaration (a catch of it, a jump-in closing its declaration window: see
:func:`owed_windows`) waits the same way for that seat alone. The time is counted from when the
table settled on the record (its seat asked): a person is shown the window only then. After a
hand is scored, a seat whose player wants a key before the next hand withholds its ``ready``
until the key; the others wait for it up to :data:`HAND_FACTOR` windows.

:class:`Pace` is one seat's side: what it has seen, what it has said, and the wait. Times are
trio's clock. The wait only delays this seat's own moves: it never makes a move illegal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import trio

from dernier_p2p.rules import Catch, Move, Play, State, to_act

HAND_FACTOR = 20
"""At a hand's end the wait for the others' key lasts up to this many windows."""


class Pace:
    """The out-of-turn window as one seat keeps it (see the module docstring)."""

    def __init__(self, seat: int, window_s: float) -> None:
        self.seat = seat
        self.window_s = window_s
        self.ready: dict[int, int] = {}  # seat -> highest record index it said it is ready for
        self.window_at = -1  # the record that opened the current window
        self.window_since = 0.0
        self.settled_since = 0.0  # when the table settled on that record (asked its seat)
        self._settled_at = -1
        self.hand_end_at = -1  # the last record that scored a hand
        self.hand_since = 0.0
        self.wants_key = False  # this seat's player presses a key after each hand
        self.key_pending = False  # ... and has not pressed it yet for the last hand
        self.said = -1  # the highest index this seat said it is ready for
        self.send: Callable[[dict[str, Any]], None] | None = None  # sends a ready frame
        self.sign: Callable[[int], dict[str, Any]] | None = None  # signs one for an index
        self._changed = trio.Event()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    # ------------------------------------------------------------------ what happened
    def opened(self, index: int, scored: bool) -> None:
        """Record ``index`` changed the rules state (``scored``: it scored a hand)."""
        now = trio.current_time()
        self.window_at, self.window_since = index, now
        self.settled_since = now
        self._settled_at = -1
        if scored:
            self.hand_end_at, self.hand_since = index, now
            self.key_pending = self.wants_key
        self._wake()

    def settled(self) -> None:
        """The table has settled on the current window (this seat's moves are known, its player
        is asked): the window's time counts from the first such moment."""
        if self._settled_at != self.window_at:
            self._settled_at = self.window_at
            self.settled_since = max(self.window_since, trio.current_time())

    def heard(self, seat: int, at: int) -> None:
        """Seat ``seat`` is ready for the records up to ``at`` (a checked ``ready`` frame)."""
        if at > self.ready.get(seat, -1):
            self.ready[seat] = at
            self._wake()

    def say_ready(self, at: int) -> None:
        """This seat has passed on the window of the records up to ``at``: tell the table
        (withheld while a hand's key is pending)."""
        if self.key_pending or at <= self.said or self.sign is None or self.send is None:
            return
        self.said = at
        self.send(self.sign(at))

    def key_pressed(self, at: int) -> None:
        """This seat's player pressed the key after a hand: ready for everything up to ``at``."""
        self.key_pending = False
        self.say_ready(at)

    # ------------------------------------------------------------------ waiting
    def deadline(self, others: Iterable[int]) -> float:
        """When this seat stops waiting for ``others`` (trio time)."""
        until = max(self.window_since, self.settled_since) + self.window_s
        if any(self.ready.get(s, -1) < self.hand_end_at for s in others):
            until = max(until, self.hand_since + HAND_FACTOR * self.window_s)
        return until

    def all_ready(self, others: Iterable[int]) -> bool:
        return all(self.ready.get(s, -1) >= self.window_at for s in others)

    async def wait(self, others: Callable[[], Iterable[int]]) -> None:
        """Hold this seat's move until every seat of ``others()`` is ready for the current
        window, or its time is up."""
        while True:
            seats = list(others())
            if self.all_ready(seats):
                return
            until = self.deadline(seats)
            if trio.current_time() >= until:
                return
            with trio.move_on_at(until):
                await self._changed.wait()


def owed_windows(state: State, seat: int, move: Move) -> tuple[int, ...]:
    """The other seats whose late declaration an out-of-turn ``move`` of ``seat`` would cost
    (PROTOCOL.md 18.1): the seat a catch names; for a jump-in, the seats whose declaration
    window it closes (``owes``). Empty for a move in turn (it waits for every other seat) and
    for any other move."""
    if to_act(state) == seat:
        return ()
    if isinstance(move, Catch):
        return (move.target,)
    if isinstance(move, Play):
        return tuple(s for s in state.owes if s != seat)
    return ()
