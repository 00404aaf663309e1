"""Following a seat's session as records arrive: the table's log and the shuffle progress.

:func:`follow` waits on the seat's :class:`~dernier_p2p.net.seat.LocalSeat` and, after each
record the session has checked, prints one line per rules event worth telling (see
:mod:`.narrate`), a line per verified shuffle of the deck ("Shuffling hand 1: seat 2 of 4
verified"), and the session's own notices (a move that lost a race, a time-out, a stall, the
deck audit of a finished hand, a new host). The lines also go to ``log`` for the table view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trio

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
    return f"{what} hand {body['hand']}: seat {counts[key]} of {n} verified"


async def follow(
    current: Callable[[], LocalSeat | None],
    echo: Callable[[str], None],
    log: list[str],
    colour: bool = True,
    progress: bool = True,
) -> None:
    """Narrate the seat's match until it is over (run as a task; cancel to stop early)."""
    while (seat := current()) is None:
        await trio.sleep(0.02)
    names = names_of(seat)
    rules = seat.session.rules
    n = seat.session.n
    me = seat.seat
    done_records = 1
    done_events = 0
    counts: dict[tuple[int, int], int] = {}
    while True:
        changed = seat.changed
        records = seat.records
        for rec in records[done_records:]:
            line = progress_line(rec["env"]["body"], counts, n) if progress else None
            if line:
                echo(line)
        done_records = len(records)
        events = seat.session.events
        for event in events[done_events:]:
            if isinstance(event, SessionEvent):
                line = session_notice(event, names, me)
            else:
                line = narrate(event, names, rules, colour)
            if line:
                log.append(line)
                echo(line)
        done_events = len(events)
        if seat.finished:
            return
        await changed.wait()
