"""Following a seat's session as records arrive: the table's log and the shuffle progress.

:meth:`Narrator.follow` iterates the seat's :class:`~dernier_p2p.net.seat.LocalSeat` records and,
after each record the session has checked, prints one line per rules event worth telling (see
:mod:`.narrate`), a line per verified shuffle of the deck ("Shuffling hand 1: shuffle 2 of 4
verified"), a line before each long check or computation of a shuffle ("Verifying Bob's shuffle
(2 of 4)…", "Shuffling the deck: your shuffle, 3 of 4…"), the session's own notices (a
move that lost a race, a time-out, a stall, the deck audit of a finished hand, a new host), and
the seats' connections ("Bea lost connection — waiting 60 s (reconnecting…)", a countdown line
every 15 s from :meth:`Narrator.countdown`, "Bea is back."; see :func:`presence_line`).
The lines also go to ``log`` for the table view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trio

from dernier_p2p.cli.narrate import narrate, reveal_lines, session_notice
from dernier_p2p.cli.pacing import Pacer
from dernier_p2p.net.seat import LocalSeat, Notice, Presence
from dernier_p2p.protocol.node.own import shufflers
from dernier_p2p.protocol.session import SessionEvent
from dernier_p2p.protocol.votes import quorum
from dernier_p2p.rules import events as ev

__all__ = ["Narrator", "names_of", "progress_line", "session_notice"]


def names_of(seat: LocalSeat) -> list[str]:
    """The players' names from the table record."""
    return [str(p["name"]) for p in seat.session.table_body["players"]]


def presence_line(p: Presence, names: list[str], me: int | None) -> str:
    """The line for a drop or a return (``p.seat == me``: this seat's own connection)."""
    secs = max(0, round(p.grace_ms / 1000))
    if p.seat == me:
        if p.state == "dropped":
            return f"Connection to the host lost — reconnecting (up to {secs} s)…"
        return "Reconnected to the table."
    name = names[p.seat] if 0 <= p.seat < len(names) else f"seat {p.seat}"
    if p.state == "dropped":
        return f"{name} lost connection — waiting {secs} s (reconnecting…)"
    return f"{name} is back."


FAILOVER_WHY = {
    "gone": "No connection to the host ({host})",
    "censored": "The host ({host}) holds back a message it was given",
    "host-late": "The host ({host}) is past its own time limit",
}
"""Why a seat votes to move the table (the rule of its ``failover`` notice, PROTOCOL.md 7.5)."""


def notice_line(n: Notice, names: list[str], me: int | None, host: int | None) -> str | None:
    """The line for what the seat's liveness tells its player (a host lost and replaced, a
    failover, a match that ends for this seat), or None when a record's line says it."""
    secs = max(0, round(n.ms / 1000))

    def who(seat: int | None) -> str:
        if seat is None:
            return "the host"
        if seat == me:
            return "this seat"
        return names[seat] if 0 <= seat < len(names) else f"seat {seat}"

    match n.kind:
        case "host-lost":
            return (f"Connection to the host ({who(n.seat)}) lost — reconnecting (up to "
                    f"{secs} s)…")
        case "reconnected":
            return "Reconnected to the table."
        case "failover":  # (what this seat knows: not that the host is gone for everyone)
            why = FAILOVER_WHY.get(n.detail, FAILOVER_WHY["gone"]).format(host=who(host))
            if n.seat == me:
                return (f"{why}: this seat hosts if most seats vote for it (up to {secs} s)…")
            return f"{why}: voting for {who(n.seat)} to host (up to {secs} s)…"
        case "host-kept":
            return f"The host ({who(host)}) moves the table on again: staying with it."
        case "trying":
            if n.seat == host:  # (the old host again, in case the trouble was this link)
                return f"Trying the host ({who(n.seat)}) again (up to {secs} s)…"
            return f"Trying {who(n.seat)} as the new host (up to {secs} s)…"
        case "new-host":
            return f"Reconnected to {who(n.seat)}, the new host."
        case "taking-over":
            return "Taking over as host: the other seats are coming here…"
        case "step-back":
            return "Not enough seats came to host here: trying the next seat…"
        case "looking":
            return f"Looking for the seat that hosts the table now (up to {secs} s)…"
        case "ended":
            return f"The match ends here for this seat: {n.detail}."
        case "showing-proof":
            return (f"The match is stopped: {n.detail}. This seat keeps answering the other "
                    f"seats for up to {secs} s, so that those it could not reach see the proof "
                    f"when they ask (Ctrl-C leaves now).")
    return None


def countdown_line(p: Presence, names: list[str], now: float) -> str | None:
    """A reminder while another seat is away ("Bea: 40 s left to reconnect"), or None once its
    grace has run out."""
    left = round(p.deadline - now)
    if left <= 0:
        return None
    name = names[p.seat] if 0 <= p.seat < len(names) else f"seat {p.seat}"
    return f"{name}: {left} s left to reconnect…"


COUNTDOWN_EVERY = 15.0
"""Seconds between two countdown lines while a seat is away (plain line mode)."""


def progress_line(body: dict[str, Any], counts: dict[tuple[int, int], int], n: int) -> str | None:
    """A progress line for a verified ``shuffle`` body (``counts`` per hand and epoch; ``n``
    seats shuffle)."""
    if body.get("type") != "shuffle":
        return None
    key = (body["hand"], body["epoch"])
    counts[key] = counts.get(key, 0) + 1
    what = "Shuffling" if body["epoch"] == 0 else "Reshuffling"
    return f"{what} hand {body['hand']}: shuffle {counts[key]} of {n} verified"


def _alike(told: list[Any], events: list[Any]) -> int:
    """How many events from the start ``events`` has as ``told`` has them."""
    n = 0
    for a, b in zip(told, events, strict=False):
        if a != b:
            break
        n += 1
    return n


class Narrator:
    """Turns what a seat's session has checked into lines; :meth:`flush` tells what is new."""

    def __init__(
        self,
        echo: Callable[[str], None],
        log: list[str],
        colour: bool = True,
        progress: bool = True,
        pacer: Pacer | None = None,
    ) -> None:
        self.echo = echo
        self.pacer = pacer
        self._final_hands: tuple[tuple[int, ...], ...] = ()
        self.log = log
        self.colour = colour
        self.progress = progress
        self.seat: LocalSeat | None = None
        self._records = 1
        self._events = 0
        self._session: Any = None  # the session whose events were told
        self._presence = 0
        self._notices = 0
        self._counts: dict[tuple[int, int], int] = {}
        self._end_told = ""  # what was told of the match's end: "", "waiting" or "final"
        self._holders_told = 0  # the most seats told holding the end while waiting
        # the prompt open at the terminal, if any: lines printed meanwhile end its line first,
        # and it is printed again after them
        self.open_prompt: Callable[[], str] | None = None

    def flush(self) -> None:
        """Print the lines for every record and event not told yet."""
        seat = self.seat
        if seat is None:
            return
        prompt = self.open_prompt() if self.open_prompt is not None else ""
        plain_echo = self.echo
        cut = [False]

        def echo(text: str) -> None:
            if prompt and not cut[0]:
                plain_echo("")
                cut[0] = True
            plain_echo(text)

        self.echo = echo
        try:
            self._flush(seat)
        finally:
            self.echo = plain_echo
        if cut[0]:
            plain_echo(prompt, nl=False)  # type: ignore[call-arg]

    def _flush(self, seat: LocalSeat) -> None:
        names = names_of(seat)
        session = seat.session
        records = seat.records
        if self.progress:
            for rec in records[self._records :]:
                line = progress_line(rec["env"]["body"], self._counts,
                                     len(shufflers(session)))
                if line:
                    self.echo(line)
        self._records = len(records)
        for p in seat.presence[self._presence :]:  # drops come before what follows them
            line = presence_line(p, names, seat.seat)
            self.log.append(line)
            self.echo(line)
        self._presence = len(seat.presence)
        for n in seat.notices[self._notices :]:
            line = notice_line(n, names, seat.seat, session.host)
            if line:
                self.log.append(line)
                self.echo(line)
        self._notices = len(seat.notices)
        events = session.events
        if self._session is not None and session is not self._session:
            # rebuilt from a new host's records: what both chains tell alike was told; from
            # where they part (the new host's take-over, at the latest) the new one is told
            self._events = _alike(self._session.events[: self._events], events)
        self._session = session
        scored = False
        for event in events[self._events :]:
            if isinstance(event, SessionEvent):
                line = session_notice(event, names, seat.seat)
            else:
                line = narrate(event, names, session.rules, self.colour)
            if isinstance(event, ev.HandOver):
                self._final_hands = tuple(tuple(h) for h in session.state.hands)
            if isinstance(event, ev.Revealed):
                hands = self._final_hands or tuple(tuple(h) for h in session.state.hands)
                faces = {**session.view, **dict(event.faces)}
                for text in reveal_lines(faces, hands, names, session.rules, self.colour):
                    self.log.append(text)
                    self.echo(text)
            if line:
                self.log.append(line)
                self.echo(line)
            scored = isinstance(event, ev.HandScored) or (
                scored and not isinstance(event, ev.MatchOver)
            )
        self._events = len(events)
        if scored and self.pacer is not None:
            self.pacer.hold_hand()
        line = self._end_line(seat)
        if line:
            self.log.append(line)
            self.echo(line)

    def _end_line(self, seat: LocalSeat) -> str | None:
        """Once the match is over here: a line while the table has not yet confirmed its end
        (PROTOCOL.md 7.11: the result is the table's once a quorum holds the last record),
        again each time more seats are shown holding it than were told (never fewer: a new
        host's chain may show fewer at first), and one when it has confirmed it, once."""
        own = seat.own
        session = own.session
        if not session.finished or session.no_contest or seat.stopped is not None:
            return None
        if own.final:
            if self._end_told != "waiting":
                self._end_told = "final"
                return None  # (final at once: nothing was awaited)
            self._end_told = "final"
            return "The table has confirmed the result."
        held = len(own.end_holders)
        if self._end_told == "final" or (self._end_told and held <= self._holders_told):
            return None
        self._end_told, self._holders_told = "waiting", held
        # the quorum counts the seats at the table before the end (OwnSeat.final): a
        # resignation or a leave that ended the match does not shrink it
        m = own.m_at(own.end_at) if own.end_at is not None else len(session.chain.at_table)
        return (f"Waiting for the table to confirm the result ({held} of {quorum(m)} seats so "
                f"far)…")

    async def countdown(self, seat: LocalSeat, every: float = COUNTDOWN_EVERY) -> None:
        """While another seat is away, a line every ``every`` seconds with the time it has left
        to reconnect (run as a task beside :meth:`follow`)."""
        names = names_of(seat)
        shown = 0.0
        while not seat.finished:
            if len(seat.presence) > self._presence or len(seat.notices) > self._notices:
                self.flush()  # a drop or a return is told at once, not with the next record
            away = [p for s, p in sorted(seat.away().items()) if s != seat.seat]
            if not away:
                await seat.changed.wait()
                continue
            due = max(shown, *(p.at for p in away)) + every
            now = trio.current_time()
            if now < due:
                with trio.move_on_at(due):
                    await seat.changed.wait()
                continue
            self.flush()
            shown = now
            for p in away:
                line = countdown_line(p, names, now)
                if line:
                    self.echo(line)

    def work(self, what: str, seat: int, number: int) -> None:
        """A line before a long step of the shuffle (see :data:`.seat.WorkNotice`)."""
        if not self.progress or self.seat is None:
            return
        self.flush()
        n = len(shufflers(self.seat.session))
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
        while seat.stopped is not None and not getattr(seat, "over", False):
            self.flush()  # a seat stopped on a proof may show it a while (4.6): say so
            await seat.changed.wait()
