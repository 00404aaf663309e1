"""Following a seat's session as records arrive: the table's log and the shuffle progress.

:meth:`Narrator.follow` iterates the seat's :class:`~dernier_p2p.net.seat.LocalSeat` records and,
after each record the session has checked, prints one line per rules event worth telling (see
:mod:`.narrate`), a line per verified shuffle of the deck ("Shuffling hand 1: shuffle 2 of 4
verified"), a line before each long check or computation of a shuffle ("Verifying Bob's shuffle
(2 of 4)…", "Shuffling the deck: your shuffle, 3 of 4…"), and the session's own notices (a
move that lost a race, a time-out, a stall, the deck audit of a finished hand, a new host).
The lines also go to ``log`` for the table view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dernier_p2p.cli.narrate import narrate
from dernier_p2p.net.seat import LocalSeat
from dernier_p2p.protocol.session import SessionEvent


def names_of(seat: LocalSeat) -> list[str]:
    """The players' names from the table record."""
    return [str(p["name"]) for p in seat.session.table_body["players"]]


def session_notice(event: SessionEvent, names: list[str], me: int | None) -> str | None:
    """A line for a session event, or None."""
    who = "someone" if event.seat is None else names[event.seat]
    if event.seat is not None and event.seat == me:
        who = "you"
    match event.kind:
        case "race-lost":
            return f"({who}: a move came too late and was ignored: {event.detail})"
        case "timeout-ignored":
            return None
        case "stall":
            return f"{who} kept the deck waiting too long and leaves the table."
        case "audit-ok":
            return f"The deck of {event.detail} is audited: every shuffle and card checks."
        case "host-change":
            return f"{who} hosts the table from now on."
    return None


def progress_line(body: dict[str, Any], counts: dict[tuple[int, int], int], n: int) -> str | None:
    """A progress line for a verified ``shuffle`` body (``counts`` per hand and epoch)."""
    if body.get("type") != "shuffle":
        return None
    key = (body["hand"], body["epoch"])
    counts[key] = counts.get(key, 0) + 1
    what = "Shuffling" if body["epoch"] == 0 else "Reshuffling"
    return f"{what} hand {body['hand']}: shuffle {counts[key]} of {n} verified"


class Narrator:
    """Turns what a seat's session has checked into lines; :meth:`flush` tells what is new."""

    def __init__(
        self,
        echo: Callable[[str], None],
        log: list[str],
        colour: bool = True,
        progress: bool = True,
    ) -> None:
        self.echo = echo
        self.log = log
        self.colour = colour
        self.progress = progress
        self.seat: LocalSeat | None = None
        self._records = 1
        self._events = 0
        self._counts: dict[tuple[int, int], int] = {}

    def flush(self) -> None:
        """Print the lines for every record and event not told yet."""
        seat = self.seat
        if seat is None:
            return
        names = names_of(seat)
        session = seat.session
        records = seat.records
        if self.progress:
            for rec in records[self._records :]:
                line = progress_line(rec["env"]["body"], self._counts, session.n)
                if line:
                    self.echo(line)
        self._records = len(records)
        events = session.events
        for event in events[self._events :]:
            if isinstance(event, SessionEvent):
                line = session_notice(event, names, seat.seat)
            else:
                line = narrate(event, names, session.rules, self.colour)
            if line:
                self.log.append(line)
                self.echo(line)
        self._events = len(events)

    def work(self, what: str, seat: int, number: int) -> None:
        """A line before a long step of the shuffle (see :data:`.seat.WorkNotice`)."""
        if not self.progress or self.seat is None:
            return
        self.flush()
        n = self.seat.session.n
        if what == "shuffle":
            self.echo(f"Shuffling the deck: your shuffle, {number} of {n}…")
        else:
            name = names_of(self.seat)[seat]
            self.echo(f"Verifying {name}'s shuffle (seat {seat}, {number} of {n})…")

    async def follow(self, seat: LocalSeat) -> None:
        """Narrate the seat's match until it is over (run as a task; cancel to stop early)."""
        self.seat = seat
        seat.on_work = self.work
        self.flush()
        async for _ in seat.follow(self._records):
            self.flush()
