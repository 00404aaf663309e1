"""The clocks of waits and drops, by one peer's own clock (PROTOCOL.md 7.5, 18.2).

:class:`Waits` keeps, for each seat the table waits on, when the wait began and its limit:
``turn_ms`` plus the budget of the work that seat must do before it can answer (the records
after the head it last echoed, and what it owes), plus, once per wait after it came back from a
drop, and once per wait after this peer lent it the records it lacked (7.5, ``lend``), the
catch-up budget (the work of every record so far). :class:`Drops` keeps the seats the
host reports dropped. Both are fed what the peer applied and when; neither reads a clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dernier_p2p.protocol.liveness.budgets import Budgets, answer_units, record_units
from dernier_p2p.protocol.messages import is_progress

MAX_LENDS = 2
"""Lends (and restarts) per wait on a seat: one, and one more when the first never reached it;
a seat feigning that cannot hold the table longer than two catch-up budgets."""


@dataclass
class Wait:
    """One wait on one seat: begun (or restarted) at ``start`` (ms) after record ``at``."""

    start: int
    at: int
    echo: int = -1  # the newest head the seat had echoed when the wait began
    back_used: bool = False
    lent: bool = False  # this peer lent the seat the records it lacked in this wait
    lent_have: int | None = None  # the seat's ``have`` when it was last lent to
    lends: int = 0  # lends in this wait (a second only when the first never reached it)
    catchup: int = 0  # units granted on coming back (or on a lend)
    answer: int = 0  # units of what the seat owes


class Waits:
    """The waits of one peer on the seats of a table (see the module docstring)."""

    def __init__(self, budgets: Budgets, cards: int) -> None:
        self.budgets = budgets
        self.cards = cards
        self._cum: list[int] = []  # work units of records 0..i, summed
        self._echo: dict[int, int] = {}  # seat -> the newest head index it echoed in a record
        self._waits: dict[int, Wait] = {}
        self._back: set[int] = set()  # came back while not awaited and not caught up since

    # ------------------------------------------------------------------ events
    def on_record(
        self,
        index: int,
        author: int,
        body: Mapping[str, Any],
        head_index: int | None,
        waiting: Iterable[int],
        owed: Mapping[int, Sequence[str]],
        now: int,
    ) -> None:
        """Record ``index`` (by ``author``, echoing record ``head_index``) was applied at
        ``now``; the table now waits on ``waiting``, which owe ``owed``."""
        units = record_units(body, self.cards)
        self._cum.append((self._cum[-1] if self._cum else 0) + units)
        if head_index is not None:
            self._echo[author] = max(self._echo.get(author, -1), head_index)
        self._back.discard(author)  # it has shown what it holds
        restarted = author if is_progress(body) else None
        timed_out = body.get("seat") if body.get("type") == "timeout" else None
        changed = body.get("type") == "host_change"  # every clock starts again: the seats
        # were busy failing over, and the new host's clocks start at its take-over (7.6)
        waits: dict[int, Wait] = {}
        for seat in waiting:
            wait = self._waits.get(seat)
            if wait is None or changed or seat == restarted or seat == timed_out:
                wait = Wait(now, index, self._echo.get(seat, -1))
                if seat in self._back:
                    wait.back_used = True
                    self._grant(wait)
                    self._back.discard(seat)
            wait.answer = answer_units(owed.get(seat, ()), self.cards)
            waits[seat] = wait
        self._waits = waits

    def count(self, body: Mapping[str, Any], author: int | None = None,
              head_index: int | None = None) -> None:
        """Count the work of a record applied before these clocks existed (a restored seat),
        and the head its author echoed in it."""
        self._cum.append((self._cum[-1] if self._cum else 0) + record_units(body, self.cards))
        if author is not None and head_index is not None:
            self._echo[author] = max(self._echo.get(author, -1), head_index)

    @property
    def counted(self) -> int:
        """How many records these clocks have counted."""
        return len(self._cum)

    def begin(self, waiting: Iterable[int], owed: Mapping[int, Sequence[str]], now: int) -> None:
        """Start a wait at ``now`` on every seat of ``waiting`` (clocks built mid-match)."""
        at = max(0, len(self._cum) - 1)
        self._waits = {}
        for seat in waiting:
            wait = Wait(now, at, self._echo.get(seat, -1))
            wait.answer = answer_units(owed.get(seat, ()), self.cards)
            self._waits[seat] = wait

    def on_back(self, seat: int, now: int) -> bool:
        """``seat`` came back from a drop at ``now``: its wait restarts with the catch-up budget,
        once per wait (a seat not awaited gets it on its next wait, until it shows it has caught
        up by authoring a record). Whether a wait on it restarted now."""
        wait = self._waits.get(seat)
        if wait is None:
            self._back.add(seat)
            return False
        if wait.back_used:
            return False
        wait.back_used = True
        wait.start = now
        self._grant(wait)
        return True

    def on_lend(self, seat: int, now: int, have: int | None = None, took: bool = True) -> bool:
        """This peer lends ``seat`` the records it lacks at ``now`` (7.5, ``lend``): once per
        wait, the wait restarts with the catch-up budget (a restart ``back`` gave does not
        count); once more in the same wait if the seat's answer, once the restarted wait has
        run out, shows that the first lend never reached it (``have`` no further than at that
        lend, and it ``took`` nothing over a link: it was gathering as a candidate, which takes
        no records over links, or the link broke). Whether it did (False: not awaited, or lent
        to already in this wait)."""
        wait = self._waits.get(seat)
        if wait is None:
            return False
        if wait.lent:
            missed = (have is not None and not took and wait.lent_have is not None
                      and have <= wait.lent_have)
            ends = self.ends(seat)
            if wait.lends >= MAX_LENDS or not missed or ends is None or now < ends:
                return False  # (before the restarted wait ran out, the lend may be on its way)
        wait.lent = True
        wait.lends += 1
        wait.lent_have = have
        wait.start = now
        self._grant(wait)
        return True

    def _grant(self, wait: Wait) -> None:
        wait.catchup = self._cum[-1] if self._cum else 0

    # ------------------------------------------------------------------ queries
    @property
    def awaited(self) -> list[int]:
        """The seats waited on, in seat order."""
        return sorted(self._waits)

    def backlog(self, seat: int) -> int:
        """The work units of the records after the head ``seat`` had echoed when its wait began,
        up to the record that began the wait (an echo during the wait, an ``ack`` once it has
        checked them, does not take back the time it spent on them)."""
        wait = self._waits.get(seat)
        if wait is None or not self._cum:
            return 0
        echo = wait.echo
        if echo >= wait.at:
            return 0
        return self._cum[wait.at] - (self._cum[echo] if echo >= 0 else 0)

    def limit(self, seat: int) -> int | None:
        """The limit (ms) of the wait on ``seat``, None if it is not awaited."""
        wait = self._waits.get(seat)
        if wait is None:
            return None
        units = self.backlog(seat) + wait.answer + wait.catchup
        return self.budgets.turn_ms + self.budgets.work_ms(units)

    def ends(self, seat: int, extra_ms: int = 0) -> int | None:
        """When the wait on ``seat`` (plus ``extra_ms``) runs out, None if not awaited."""
        wait = self._waits.get(seat)
        limit = self.limit(seat)
        return None if wait is None or limit is None else wait.start + limit + extra_ms

    def all_late(self, now: int) -> bool:
        """Whether no awaited seat is still within its limit (the table is not merely waiting
        on work that takes long)."""
        return all(self.late(seat, now) for seat in self._waits)

    def late(self, seat: int, now: int, extra_ms: int = 0) -> bool:
        """Whether the wait on ``seat`` has reached its limit plus ``extra_ms`` at ``now``."""
        end = self.ends(seat, extra_ms)
        return end is not None and now >= end

    def started(self, seat: int) -> int | None:
        wait = self._waits.get(seat)
        return None if wait is None else wait.start

    def began(self, seat: int) -> int | None:
        """The index of the record that began the wait on ``seat``, None if not awaited."""
        wait = self._waits.get(seat)
        return None if wait is None else wait.at

    def lent(self, seat: int) -> bool:
        """Whether this peer lent ``seat`` records in the wait on it."""
        wait = self._waits.get(seat)
        return wait is not None and wait.lent

    def total_units(self) -> int:
        """The work of every record applied so far."""
        return self._cum[-1] if self._cum else 0


class Drops:
    """The seats the host reports dropped, with when the report came (the host: when their
    connection went). A drop ends with a ``back`` report or a record of the seat."""

    def __init__(self) -> None:
        self._since: dict[int, int] = {}

    def dropped(self, seat: int, now: int) -> None:
        self._since.setdefault(seat, now)

    def back(self, seat: int) -> bool:
        """End ``seat``'s drop; whether it was dropped."""
        return self._since.pop(seat, None) is not None

    def since(self, seat: int) -> int | None:
        return self._since.get(seat)

    def is_dropped(self, seat: int) -> bool:
        return seat in self._since

    @property
    def seats(self) -> list[int]:
        return sorted(self._since)

    def clear(self) -> None:
        self._since.clear()
