"""One seat as its player and its screen see it: the node's own seat, with trio around it.

:class:`LocalSeat` wraps the sans-IO :class:`~dernier_p2p.protocol.node.own.OwnSeat` of a peer
(the driver of :mod:`.driver` applies records to it) with what lives in trio: the events a
front-end waits on (:attr:`LocalSeat.changed`, :meth:`LocalSeat.follow`), the local agent asked
for moves (:meth:`LocalSeat.act`), the out-of-turn pacing (:mod:`.pacing`), chat lines, and the
notices a player reads (drops and returns of seats, the host going and coming). A watcher's
seat (no identity, no agent) applies records itself (:meth:`LocalSeat.receive`).

Who follows the seat (a front-end) iterates :meth:`LocalSeat.follow` (every record, in order, once
the session has applied it) and may set :attr:`LocalSeat.on_work`, called just before a record
whose checking is long begins (another seat's shuffle to verify, this seat's own to compute).
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import trio

from dernier_p2p.net.agent import Agent, Resign, tell_refused
from dernier_p2p.net.pacing import Pace, owed_windows
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.node.own import OwnSeat, long_work
from dernier_p2p.protocol.node.pacing import ChatPace
from dernier_p2p.protocol.ready import ready_frame
from dernier_p2p.protocol.session import Session
from dernier_p2p.rules import IllegalMove, State, to_act
from dernier_p2p.wire.transcript import TranscriptWriter

log = logging.getLogger("dernier_p2p.net")

__all__ = ["BackgroundWriter", "LocalSeat", "Notice", "Presence", "WorkNotice", "long_work"]


class BackgroundWriter:
    """Appends records to a transcript (fsync per record) from a thread, in order, so the
    game loop never waits for the disk. :meth:`close` waits until everything is written; a
    write error is raised by the next :meth:`append` or by :meth:`close`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.writer = TranscriptWriter(path)
        self.count = self.writer.count
        self._queue: queue.SimpleQueue[dict[str, Any] | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="transcript", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (record := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self.writer.append(record)
                except BaseException as exc:  # kept for the game loop to raise
                    self._error = exc

    def append(self, record: dict[str, Any]) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(record)
        self.count += 1

    def close(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self.writer.close()
        if self._error is not None:
            raise self._error


MAX_PRESENCE = 4096
"""Presence notices a seat keeps (far more than the drops and returns of a real match)."""


@dataclass(frozen=True)
class Presence:
    """A seat's connection dropped (``state`` "dropped", ``grace_ms`` left to resume, counted
    from ``at``, trio time in seconds) or is ``"back"``. About this seat itself: its own
    connection to the host. Informative only (PROTOCOL.md 4.4, ``status`` frames)."""

    seat: int
    state: str
    grace_ms: int
    at: float

    @property
    def deadline(self) -> float:
        """When the grace runs out (trio time)."""
        return self.at + self.grace_ms / 1000


@dataclass(frozen=True)
class Notice:
    """What the liveness core tells the player (a ``Note`` action): ``kind`` ("host-lost",
    "reconnected", "failover", "trying", "new-host", "taking-over", "hosting", "step-back",
    "looking", "ended"; and "showing-proof", from the seat's network side, when it stopped on
    a proof and keeps answering links, ``detail`` the fault), about ``seat``, with ``ms`` (how
    long, when it says) from ``at`` (trio time in seconds)."""

    kind: str
    seat: int | None
    ms: int
    at: float
    detail: str = ""


Send = Callable[[dict[str, Any]], Awaitable[None]]
WorkNotice = Callable[[str, int, int], None]
"""``on_work(what, seat, number)``: ``what`` is "verify" (``seat``'s shuffle is being checked)
or "shuffle" (this seat computes its own); ``number`` is the shuffle's place (1..n) in the
round."""


class LocalSeat:
    """The seat ``own`` as its player sees it (see the module docstring)."""

    def __init__(
        self,
        own: OwnSeat,
        agent: Agent | None,
        writer: BackgroundWriter | None = None,
        offload: bool = False,
    ) -> None:
        self.own = own
        self.agent = agent
        self.writer = writer
        self.offload = offload
        self.changed = trio.Event()
        self.version = 0  # bumped per change (a record applied, a notice)
        self.busy = False  # the driver applies a record in a worker thread
        self.offloaded = 0  # records applied in a worker thread so far
        self.on_work: WorkNotice | None = None
        self.presence: list[Presence] = []
        self.notices: list[Notice] = []
        self.to_say: deque[str] = deque()
        self.chat_pace = ChatPace()
        self.leaving = False  # the player asked to leave (see :meth:`leave`)
        self.resigned = trio.Event()  # set once :meth:`act` has resigned for the player
        self.done_acting = trio.Event()  # set once :meth:`act` has ended, for any reason
        self.send_ready: Callable[[dict[str, Any]], None] | None = None
        self._windows_seen = 0
        self._told = 0
        self.pace = Pace(own.seat, own.session.table_body["timers"]["declare_ms"] / 1000)
        self._bind_pace()

    def _bind_pace(self) -> None:
        own = self.own
        identity, game, seat = own.identity, own.session.game, own.seat
        self.pace.sign = lambda at: ready_frame(identity, game, seat, at)
        self.pace.send = lambda frame: self.send_ready(frame) if self.send_ready else None

    @classmethod
    def observer(cls, table_record: dict[str, Any], transcript: str | os.PathLike[str] | None,
                 offload: bool = False,
                 check_host: Callable[[bytes], None] | None = None) -> LocalSeat:
        """A watcher's seat: an observer session (no identity, no seat, nothing sent), with
        its own transcript writer; it applies records itself (:meth:`receive`). Record 0 is
        checked (5.3) and its host's key given to ``check_host`` (an invite code's
        fingerprint check, which raises to refuse it) before anything is written."""
        own = OwnSeat(None, None, table_record, b"")
        if check_host is not None:
            check_host(own.session.keys[own.session.host])
        writer = None
        if transcript is not None:
            writer = BackgroundWriter(transcript)
            if writer.count:
                writer.close()
                raise ValueError(f"transcript {transcript} already holds records")
            writer.append(table_record)
        return cls(own, None, writer, offload)

    # ------------------------------------------------------------------ the seat
    @property
    def session(self) -> Session:
        return self.own.session

    @property
    def seat(self) -> int | None:
        return self.own.seat

    @property
    def records(self) -> list[dict[str, Any]]:
        return self.own.records

    @property
    def finished(self) -> bool:
        """Over, and its end final (PROTOCOL.md 7.11): until then the records (the seats'
        acks of the end) still come, and the result is not yet the table's."""
        return self.own.final

    @property
    def stopped(self) -> ProtocolError | None:
        return self.own.stopped

    @property
    def evidence(self) -> dict[str, Any] | None:
        return self.own.evidence

    @property
    def unsequenced(self) -> dict[int, dict[str, Any]]:
        return self.own.unsequenced

    @property
    def refusals(self) -> int:
        return self.own.refusals

    @property
    def in_flight(self) -> bool:
        return self.own.in_flight

    def rebind(self, own: OwnSeat) -> None:
        """The seat was rebuilt from a new host's records: follow the new one."""
        self.own = own
        self._windows_seen = len(own.windows)
        self._told = len(own.told)
        self.pace.window_at = own.last
        self._bind_pace()
        self.bump()

    def bump(self) -> None:
        """Something changed (records applied, a notice): wake whoever waits."""
        self.version += 1
        self._pacing()
        self._wake()

    def _pacing(self) -> None:
        """Open an out-of-turn window for each record that changed the rules state, and say
        ``ready`` when this seat has nothing to do out of turn (18.1)."""
        windows = self.own.windows
        for index, scored in windows[self._windows_seen :]:
            self.pace.opened(index, scored)
        self._windows_seen = len(windows)
        if self.agent is None or not self.own.session.legal():
            self.idle_ready()

    def _wake(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    def idle_ready(self) -> None:
        """Say ``ready`` for the current window if this seat has nothing to do out of turn
        in it: the table is settled (so the seat's moves are known), no own move is in flight
        and the match is on."""
        pace = self.pace
        if self.seat is None or pace.said >= pace.window_at or self.own.in_flight or \
                self.finished or self.busy:
            return
        if self.own.session.settled:
            pace.say_ready(pace.window_at)

    def heard_ready(self, seat: int, at: int) -> None:
        """Another seat's checked ``ready`` frame."""
        if seat != self.seat:
            self.pace.heard(seat, at)

    def others_at_table(self) -> list[int]:
        return self.own.others_at_table()

    def tell(self, code: str, detail: str) -> None:
        """The host (or the session) refused this seat's move: the agent is told."""
        tell_refused(self.agent, code, detail)
        self._wake()

    # ------------------------------------------------------------------ notices
    def note_status(self, seat: int, state: str, grace_ms: int) -> None:
        """Keep a drop or return of ``seat`` for whoever follows this seat (see
        :class:`Presence`): at most :data:`MAX_PRESENCE` of them."""
        if len(self.presence) >= MAX_PRESENCE:
            return
        self.presence.append(Presence(seat, state, grace_ms, trio.current_time()))
        if len(self.presence) == MAX_PRESENCE:
            log.warning("seat %s: %d presence notices: later ones are ignored", self.seat,
                        MAX_PRESENCE)
        self._wake()

    def note(self, kind: str, seat: int | None, ms: int, detail: str = "") -> None:
        """A liveness notice (see :class:`Notice`)."""
        if len(self.notices) < MAX_PRESENCE:
            self.notices.append(Notice(kind, seat, ms, trio.current_time(), detail))
        self._wake()

    def away(self) -> dict[int, Presence]:
        """The seats dropped now (as last told), with their latest notice."""
        last: dict[int, Presence] = {}
        for p in self.presence:
            last[p.seat] = p
        return {s: p for s, p in last.items() if p.state == "dropped"}

    async def follow(self, start: int = 0) -> AsyncIterator[dict[str, Any]]:
        """Every record from index ``start`` on, in order, each once the session has applied
        it; ends after the last record of the match (or when the seat stopped)."""
        at = start
        while True:
            changed = self.changed
            records = self.own.records
            while at < len(records):
                yield records[at]
                at += 1
            if self.finished or self.stopped is not None or getattr(self, "over", False):
                return
            await changed.wait()

    def close(self) -> None:
        """Finish writing the transcript and release it."""
        self.over = True
        if self.writer is not None:
            writer, self.writer = self.writer, None
            writer.close()
        self._wake()

    # ------------------------------------------------------------------ a watcher's records
    async def receive(self, record: dict[str, Any], now_ms: int) -> None:
        """Apply one record to a watcher's seat (in a worker thread when long and
        ``offload``), and write it; ProtocolError if refused (the evidence of a fault is kept
        as the transcript's last record)."""
        work = long_work(self.own.session, record)
        if self.on_work is not None:
            for what, seat, number in work:
                self.on_work(what, seat, number)
        try:
            if self.offload and work:
                self.busy = True
                self.offloaded += 1
                try:
                    await trio.to_thread.run_sync(self.own.apply, record, now_ms)
                finally:
                    self.busy = False
            else:
                self.own.apply(record, now_ms)
        except ProtocolError:
            if self.own.evidence is record and self.writer is not None:
                self.writer.append(record)
            self.bump()
            raise
        if self.writer is not None:
            self.writer.append(record)
        self.bump()

    # ------------------------------------------------------------------ moves
    def may_act(self) -> bool:
        """Whether the agent should be asked now."""
        return self.agent is not None and not self.busy and self.own.may_act()

    def leave(self) -> None:
        """The player leaves the match on purpose (asked from any task): :meth:`act` resigns
        for it (:meth:`resign`) and ends, then sets :attr:`resigned`."""
        self.leaving = True
        self._wake()

    async def resign(self, send: Send, wait_s: float = 5.0) -> None:
        """Leave the match on purpose: send ``resign`` and wait (up to ``wait_s``) for its
        record, so the transcript holds it and the others go on at once."""
        if self.finished or self.seat not in self.own.session.chain.at_table:
            return
        while self.busy:
            await self.changed.wait()
        env = self.own.session.resign()
        await send(env)
        with trio.move_on_after(wait_s):
            while self.seat in self.own.session.chain.at_table and not self.finished:
                await self.changed.wait()

    def say(self, text: str) -> None:
        """Queue a chat line for the table; :meth:`chatter` signs and sends it."""
        self.to_say.append(text)
        self._wake()

    async def chatter(self, send: Send) -> None:
        """Sign and send the chat lines queued by :meth:`say` until the match is over, at most
        5 in 10 s (the host's pace; more wait). A line the session refuses is dropped."""
        while not self.finished:
            if not self.to_say or self.busy:
                await self.changed.wait()
                continue
            now = int(trio.current_time() * 1000)
            wait = self.chat_pace.delay(now)
            if wait > 0:
                await trio.sleep(wait / 1000)
                continue
            text = self.to_say.popleft()
            try:
                env = self.own.session.chat(text)
            except (ValueError, ProtocolError) as exc:
                log.info("seat %s: chat line not sent: %s", self.seat, exc)
                continue
            self.chat_pace.note(now)
            await send(env)

    async def _window(self, others: Callable[[], Iterable[int]], state: State) -> None:
        """Wait for the out-of-turn window of ``others()`` (:meth:`.pacing.Pace.wait`), or
        until the table has moved past ``state`` (the move is then asked for again)."""
        with trio.CancelScope() as scope:

            async def moved() -> None:
                while self.own.session.state is state:
                    await self.changed.wait()
                scope.cancel()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(moved)
                await self.pace.wait(others)
                nursery.cancel_scope.cancel()

    async def act(self, send: Send) -> None:
        """Ask the agent for moves until the match is over; send each through ``send``.

        Pacing (:mod:`.pacing`): a seat that may not act, or whose agent lets an out-of-turn
        offer go, says ``ready``; a turn move waits for the others' window, and a move out of
        turn that would cost another seat its late declaration (a catch, a jump-in) for that
        seat's, unless the agent has ``waits_for_offers = False`` (a person, whose own pace is
        slower). A move the window overtook (the table moved meanwhile) is not sent: the agent
        is asked again. Once the player asked to leave (:meth:`leave`) it resigns and ends."""
        try:
            await self._act(send)
        finally:
            self.done_acting.set()
            self._wake()

    async def _act(self, send: Send) -> None:
        assert self.agent is not None
        seen: tuple[int, int] = (-1, -1)
        waits = getattr(self.agent, "waits_for_offers", True)
        while not self.finished and self.stopped is None:
            if self.leaving:
                await self.resign(send)
                self.resigned.set()
                return
            if self.busy or (self.version, self.refusals) == seen:
                await self.changed.wait()
                continue
            seen = (self.version, self.refusals)
            at = self.pace.window_at
            if not self.may_act():
                if not self.busy:
                    self.idle_ready()
                continue
            own = self.own
            state, view = own.session.state, dict(own.session.view)
            in_turn = to_act(state) == self.seat
            self.pace.settled()  # the window is shown from now (or from its first ask)
            try:
                move = await self.agent(state, self.seat, view)
            except Resign:
                await self.resign(send)
                raise
            if move is None:
                if not in_turn:
                    self.pace.say_ready(at)
                continue
            owed = owed_windows(state, self.seat, move)
            waited = waits and (in_turn or bool(owed))
            if waited:
                await self._window(self.others_at_table if in_turn else lambda o=owed: o, state)
            while self.busy:
                await self.changed.wait()
            if self.own is not own or (self.version != seen[0] and not self.may_act()):
                continue  # the table moved on while the agent thought
            if waited and own.session.state is not state:
                continue  # someone moved in the window: ask again
            try:
                env = own.session.intend(move)
            except IllegalMove as exc:
                log.info("seat %s: move %r not sent: %s", self.seat, move, exc)
                own.refusals += 1
                self.tell(exc.rule, exc.message)
                continue
            except ProtocolError as exc:
                log.info("seat %s: move %r not sent: %s", self.seat, move, exc)
                own.refusals += 1
                self.tell(exc.code, exc.detail)
                continue
            own.in_flight = True
            await send(env)
            if not in_turn:
                self.pace.say_ready(at)
