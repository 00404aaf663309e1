"""One seat's side of a networked match: its session, transcript and local agent.

:class:`LocalSeat` is what the host and every peer run for their own seat: each record goes to
the transcript (flushed per record) and into the sans-IO session, which returns this seat's new
envelopes; the local agent is asked for a move whenever the seat may act and the move goes out
through the session. Sending is the caller's business (a callback), so the same class serves the
host (which sequences its own envelopes) and a peer (which sends them to the host).

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
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio

from dernier_p2p.net.agent import Agent, Resign, tell_refused
from dernier_p2p.net.pacing import Pace
from dernier_p2p.net.timers import ChatPace
from dernier_p2p.protocol.envelope import Author, genesis_hash
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.ready import ready_frame
from dernier_p2p.protocol.session import Session
from dernier_p2p.rules import IllegalMove, to_act
from dernier_p2p.rules import events as ev
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.transcript import TranscriptError, TranscriptWriter, read_transcript

log = logging.getLogger("dernier_p2p.net")


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


Send = Callable[[dict[str, Any]], Awaitable[None]]
WorkNotice = Callable[[str, int, int], None]
"""``on_work(what, seat, number)``: ``what`` is "verify" (``seat``'s shuffle is being checked)
or "shuffle" (this seat computes its own); ``number`` is the shuffle's place (1..n) in the
round."""


def long_work(session: Session, record: Any) -> list[tuple[str, int, int]]:
    """What applying ``record`` will take long for, as ``(what, seat, number)`` (see
    :data:`WorkNotice`): verifying another seat's shuffle, and computing this seat's own
    shuffle when the record makes it this seat's turn (the first shuffle of a hand follows the
    last key reveal; each next one follows the previous seat's shuffle). The record is not
    checked here: a wrong guess only changes a progress line."""
    env = record.get("env") if isinstance(record, dict) else None
    body = env.get("body") if isinstance(env, dict) else None
    author = env.get("seat") if isinstance(env, dict) else None
    if not isinstance(body, dict) or body.get("type") not in ("shuffle", "key_reveal"):
        return []
    pending = session.pending
    turn = next((s for s, what in pending if what.startswith("shuffle")), None)
    out = []
    me = session.seat
    if body["type"] == "shuffle" and author == turn and isinstance(author, int):
        if author != me:
            out.append(("verify", author, author + 1))
        if me is not None and author + 1 == me:
            out.append(("shuffle", me, me + 1))
    elif body["type"] == "key_reveal" and me == 0 and pending == [(author, "key_reveal")]:
        out.append(("shuffle", me, 1))
    return out


class LocalSeat:
    """Session + transcript + agent of seat ``seat``, built from record 0 (the table); with no
    identity and ``seat=None``, a watcher's (an observer's session, no agent, nothing sent)."""

    def __init__(
        self,
        identity: IdentityKey | None,
        seat: int | None,
        table_record: dict[str, Any],
        seed: bytes,
        agent: Agent | None,
        transcript: str | os.PathLike[str] | None = None,
        offload: bool = False,
    ) -> None:
        self.seat = seat
        self.agent = agent
        self.session = Session(identity, seat, table_record, seed)
        self.records: list[dict[str, Any]] = [table_record]
        self.writer = BackgroundWriter(transcript) if transcript is not None else None
        if self.writer is not None:
            if self.writer.count:
                self.writer.close()
                raise ValueError(f"transcript {transcript} already holds records")
            self.writer.append(table_record)
        self.in_flight = False  # an own move sent, its record not back yet
        self.unsequenced: dict[int, dict[str, Any]] = {}  # own envelopes sent, not yet back
        self.unechoed = False  # a record other than an ack came since the last own envelope
        self.changed = trio.Event()
        self.version = 0  # bumped per applied record
        self.replaying: list[dict[str, Any]] | None = None  # bodies owed after a restart
        self._stale = 0  # error frames still due for envelopes signed again
        self.refusals = 0  # own moves refused so far (the agent is asked again after each)
        self.on_work: WorkNotice | None = None
        self.offload = offload
        self.busy = False  # a record is being applied in a worker thread
        self.offloaded = 0  # records applied in a worker thread so far
        self.stopped: ProtocolError | None = None  # the fault that stopped the match, if any
        self.evidence: dict[str, Any] | None = None  # the record that proves it
        self.presence: list[Presence] = []  # drops and returns, in the order they were told
        self.to_say: deque[str] = deque()  # chat lines waiting to be signed (see chatter)
        self.chat_pace = ChatPace()  # this seat's lines, paced as the host wants them
        body = table_record["env"]["body"]
        self.pace = Pace(seat, body["timers"]["declare_ms"] / 1000)  # the out-of-turn window
        game = table_record["env"]["game"]
        self.pace.sign = lambda at: ready_frame(identity, game, seat, at)
        self._state_seen: object = None
        self._events_seen = 0

    @classmethod
    def from_records(
        cls,
        identity: IdentityKey,
        seed: bytes,
        agent: Agent | None,
        records: list[dict[str, Any]],
        where: str = "the records",
    ) -> LocalSeat:
        """Rebuild a seat from the records of its match (same identity and seed), without a
        transcript writer. Every record is checked and applied again; the bodies the session
        produced on the way that no record of this seat carries were never sequenced: they are
        kept in :attr:`replaying` and signed afresh by :meth:`finish_restore` once the peer has
        caught up with the host (moves are not kept: the agent is asked again)."""
        if not records:
            raise TranscriptError(f"{where}: no record to restore from")
        first = records[0]
        try:
            keys = [p["key"] for p in first["env"]["body"]["players"]]
            seat = keys.index(identity.public_bytes())
        except (KeyError, TypeError, ValueError):
            why = "record 0 is not a table seating this key"
            raise TranscriptError(f"{where}: {why}") from None
        me = cls(identity, seat, first, seed, agent)
        me.replaying = [env["body"] for env in me.start()]
        for rec in records[1:]:
            me.apply(rec, 0)
        return me

    @classmethod
    def restore(
        cls,
        identity: IdentityKey,
        seed: bytes,
        agent: Agent | None,
        transcript: str | os.PathLike[str],
    ) -> LocalSeat:
        """Rebuild a seat after a crash from its transcript (see :meth:`from_records`); the
        transcript goes on from its last record."""
        records = read_transcript(transcript, allow_torn_tail=True)
        me = cls.from_records(identity, seed, agent, records, str(transcript))
        writer = BackgroundWriter(transcript)
        if writer.count != len(records):
            writer.close()
            raise TranscriptError(f"{transcript}: changed while it was being restored")
        me.writer = writer
        return me

    def keep_in(self, transcript: str | os.PathLike[str]) -> None:
        """Write every record so far to a new (empty) transcript file and every later one."""
        writer = BackgroundWriter(transcript)
        if writer.count:
            writer.close()
            raise ValueError(f"transcript {transcript} already holds records")
        for rec in self.records:
            writer.append(rec)
        self.writer = writer

    def finish_restore(self) -> list[dict[str, Any]]:
        """After a restart, once caught up: the owed bodies signed with the next counters."""
        bodies, self.replaying = self.replaying or [], None
        return self.session.sign_again(bodies)

    @staticmethod
    def table_envelope(
        identity: IdentityKey, game: bytes, seat: int, body: dict[str, Any]
    ) -> dict[str, Any]:
        """The host's envelope of record 0 (its counter 0, echoing the genesis hash)."""
        return Author(identity, game, seat).envelope(body, genesis_hash(game))

    def start(self) -> list[dict[str, Any]]:
        """This seat's first envelopes (its accept of the table)."""
        return self.session.start()

    def sent(self, env: dict[str, Any]) -> None:
        """Remember an own envelope until its record comes back (for a resume)."""
        self.unsequenced[env["n"]] = env
        if env["head"] == self.session.head:
            self.unechoed = False

    def ack(self) -> dict[str, Any] | None:
        """An ``ack`` envelope echoing the head, if records other than acks came since this
        seat last echoed one (so an idle seat still shows the host which history it holds)."""
        if not self.unechoed or self.finished or self.busy:
            return None
        return self.session.ack()

    def resend(self) -> list[dict[str, Any]]:
        """Own envelopes sent but not sequenced, in counter order (to send again after a
        resume: no error frame for the envelopes sent before is expected any more)."""
        self._stale = 0
        return [self.unsequenced[n] for n in sorted(self.unsequenced)]

    def take_over(self, old_host: int, votes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """This seat becomes the host: its ``host_change`` envelope carrying the ``depose``
        ``votes``, then its own envelopes the old host never sequenced, signed again after it
        (the counter goes back to the chain's next one, so nothing is skipped)."""
        bodies = [env["body"] for env in self.resend()]
        change = self.session.votes_body("depose", old_host, votes)
        out = self.session.sign_again([change, *bodies])
        self.unsequenced = {env["n"]: env for env in out}
        return out

    # ------------------------------------------------------------------ records
    def apply(
        self, record: dict[str, Any], now_ms: int, keep_evidence: bool = True
    ) -> list[dict[str, Any]]:
        """Verify and apply one record; return the envelopes to send. Raises ProtocolError if
        the record is refused; nothing is applied then, and nothing written unless the record
        is the evidence of the fault (see :meth:`keep`; ``keep_evidence=False`` leaves that to
        the caller)."""
        self._announce_work(record)
        try:
            out = self.session.receive(record, now_ms)
        except ProtocolError as exc:
            if keep_evidence:
                self.keep(record, exc)
            raise
        return self._applied(record, out)

    def keep(self, record: dict[str, Any], exc: ProtocolError) -> bool:
        """Write ``record`` to the transcript if it is the evidence of the fault ``exc`` (it
        passed every check of the chain and its body shows the fault, section 19): the
        transcript then ends with the signed proof against the seat named. Once per match;
        returns whether it was written."""
        if self.stopped is not None or exc.evidence is None or exc.evidence != record.get("i"):
            return False
        self.stopped = exc
        self.evidence = record
        if self.writer is not None:
            self.writer.append(record)
        self._wake()
        return True

    async def receive(
        self, record: dict[str, Any], now_ms: int, keep_evidence: bool = True
    ) -> list[dict[str, Any]]:
        """:meth:`apply` for the trio loop: with :attr:`offload`, a record whose checking is
        long (a shuffle to verify or to compute, see :func:`long_work`) is applied in a worker
        thread, so the loop keeps relaying and printing meanwhile. One record at a time: the
        caller awaits each before the next, and while it runs :attr:`busy` is true (the agent
        is not asked, no ack is signed)."""
        if not self.offload or not self._announce_work(record):
            return self.apply(record, now_ms, keep_evidence)
        self.busy = True
        self.offloaded += 1
        try:
            out = await trio.to_thread.run_sync(self.session.receive, record, now_ms)
        except ProtocolError as exc:
            if keep_evidence:
                self.keep(record, exc)
            raise
        finally:
            self.busy = False
            self._wake()
        return self._applied(record, out)

    def _announce_work(self, record: dict[str, Any]) -> bool:
        """Tell :attr:`on_work` what is long in applying ``record``; whether anything is."""
        work = long_work(self.session, record)
        if self.on_work is not None:
            for what, seat, number in work:
                self.on_work(what, seat, number)
        return bool(work)

    def _applied(self, record: dict[str, Any], out: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Keep a record the session has applied (``out``: its envelopes)."""
        self.records.append(record)
        if self.writer is not None:
            self.writer.append(record)
        env = record["env"]
        if self.replaying is not None:  # restoring: collect owed bodies, send nothing yet
            if env["seat"] == self.seat and env["body"] in self.replaying:
                self.replaying.remove(env["body"])
            self.replaying.extend(e["body"] for e in out)
            out = []
        if env["seat"] != self.seat and env["body"]["type"] != "ack":
            self.unechoed = True
        if env["seat"] == self.seat:
            self.unsequenced.pop(env["n"], None)
            if env["body"].get("type") == "move":
                self.in_flight = False
        self._pacing(record)
        if self.agent is None or not self.session.legal():
            self.idle_ready()
        self.version += 1
        self._wake()
        return out

    def _pacing(self, record: dict[str, Any]) -> bool:
        """A record that changed the rules state opens an out-of-turn window (see
        :mod:`.pacing`); whether this one did."""
        state = self.session.state
        if state is None or state is self._state_seen:
            return False
        self._state_seen = state
        events = self.session.events
        scored = any(isinstance(e, ev.HandScored) for e in events[self._events_seen :])
        self._events_seen = len(events)
        self.pace.opened(record["i"], scored)
        return True

    def idle_ready(self) -> None:
        """Say ``ready`` for the current window if this seat has nothing to do out of turn
        in it: the table is settled (so the seat's moves are known), no own move is in flight
        and the match is on. The caller knows the seat has no legal move, or no agent."""
        pace = self.pace
        if pace.said >= pace.window_at or self.in_flight or self.finished:
            return
        if self.session.settled:
            pace.say_ready(pace.window_at)

    def heard_ready(self, seat: int, at: int) -> None:
        """Another seat's checked ``ready`` frame."""
        if seat != self.seat:
            self.pace.heard(seat, at)

    def others_at_table(self) -> list[int]:
        """The other seats still playing (whose window this seat's turn move waits for)."""
        state = self.session.state
        out = state.out if state is not None else ()
        return [s for s in sorted(self.session.chain.at_table) if s != self.seat and s not in out]


    def note_status(self, seat: int, state: str, grace_ms: int) -> None:
        """Keep a drop or return of ``seat`` for whoever follows this seat (see
        :class:`Presence`): at most :data:`MAX_PRESENCE` of them, later ones are ignored (a
        host sending ``status`` frames without end would fill memory and the screen)."""
        if len(self.presence) >= MAX_PRESENCE:
            return
        self.presence.append(Presence(seat, state, grace_ms, trio.current_time()))
        if len(self.presence) == MAX_PRESENCE:
            log.warning("seat %s: %d presence notices: later ones are ignored", self.seat,
                        MAX_PRESENCE)
        self._wake()

    def away(self) -> dict[int, Presence]:
        """The seats dropped now (as last told), with their latest notice."""
        last: dict[int, Presence] = {}
        for p in self.presence:
            last[p.seat] = p
        return {s: p for s, p in last.items() if p.state == "dropped"}

    def _wake(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    async def follow(self, start: int = 0) -> AsyncIterator[dict[str, Any]]:
        """Every record from index ``start`` on, in order, each once the session has applied
        it; ends after the last record of the match."""
        at = start
        while True:
            changed = self.changed
            while at < len(self.records):
                yield self.records[at]
                at += 1
            if self.finished:
                return
            await changed.wait()

    def refused(self, code: str, detail: str) -> list[dict[str, Any]]:
        """The host refused an own envelope (its ``error`` frame); return the envelopes to send
        again.

        The host takes a seat's envelopes in counter order, so the refused one is the lowest
        not sequenced yet; those sent after it carry counters the host now refuses as out of
        order (their error frames are expected and skipped here). They are signed again from
        the refused one's counter and returned. The refused move is dropped: the agent is told
        and asked again (a refused chat line is dropped the same way, untold). An error frame
        while no move or chat of this seat is the lowest one in flight concerns nothing this
        seat sent honestly and changes nothing."""
        if self._stale:
            self._stale -= 1
            return []
        if not self.unsequenced:
            if self.in_flight:  # the host's own seat keeps no envelopes: just tell
                self.in_flight = False
                self._tell(code, detail)
            return []
        lowest = self.unsequenced[min(self.unsequenced)]
        chat = lowest["body"].get("type") == "chat"  # a chat line refused: dropped, no move
        if not chat and (not self.in_flight or lowest["body"].get("type") != "move"):
            return []  # not about an honest envelope of this seat's (nothing to mend)
        del self.unsequenced[lowest["n"]]
        rest = self.resend()
        out = self.session.sign_again([e["body"] for e in rest])
        self.unsequenced = {e["n"]: e for e in out}
        self._stale = len(rest)
        if chat:
            log.info("seat %s: chat line refused (%s: %s)", self.seat, code, detail)
            return out
        self.in_flight = False
        self._tell(code, detail)
        return out

    def _tell(self, code: str, detail: str) -> None:
        if tell_refused(self.agent, code, detail):
            self.refusals += 1
        self._wake()

    @property
    def finished(self) -> bool:
        return bool(self.session.finished)

    def close(self) -> None:
        """Finish writing the transcript and release it."""
        if self.writer is not None:
            writer, self.writer = self.writer, None
            writer.close()

    # ------------------------------------------------------------------ moves
    def may_act(self) -> bool:
        """Whether the agent should be asked now: the deck is quiescent, the match not over,
        no own move in flight, and the seat has a legal move."""
        if self.agent is None or self.in_flight or self.busy or self.finished:
            return False
        return bool(self.session.legal())

    async def resign(self, send: Send, wait_s: float = 5.0) -> None:
        """Leave the match on purpose: send ``resign`` and wait (up to ``wait_s``) for its
        record, so the transcript holds it and the others go on at once."""
        if self.finished or self.seat not in self.session.chain.at_table:
            return
        while self.busy:
            await self.changed.wait()
        env = self.session.resign()
        await send(env)
        with trio.move_on_after(wait_s):
            while self.seat in self.session.chain.at_table and not self.finished:
                await self.changed.wait()

    def say(self, text: str) -> None:
        """Queue a chat line for the table; :meth:`chatter` signs and sends it."""
        self.to_say.append(text)
        self._wake()

    async def chatter(self, send: Send) -> None:
        """Sign and send the chat lines queued by :meth:`say` until the match is over (run as
        a task beside :meth:`act`, with the same ``send``), at most 5 in 10 s (the host's
        pace, :class:`~.timers.ChatPace`; more wait). A line the session refuses (too long, a
        control character) is dropped with a log line."""
        while not self.finished:
            if not self.to_say or self.busy:
                await self.changed.wait()
                continue
            wait = self.chat_pace.delay(trio.current_time())
            if wait > 0:  # the host refuses lines beyond its pace: hold this one meanwhile
                await trio.sleep(wait)
                continue
            text = self.to_say.popleft()
            try:
                env = self.session.chat(text)
            except (ValueError, ProtocolError) as exc:
                log.info("seat %d: chat line not sent: %s", self.seat, exc)
                continue
            self.chat_pace.note(trio.current_time())
            await send(env)

    async def act(self, send: Send) -> None:
        """Ask the agent for moves until the match is over; send each through ``send``.

        Pacing (:mod:`.pacing`): a seat that may not act, or whose agent lets an out-of-turn
        offer go, says ``ready``; a turn move waits for the others' window unless the agent
        has ``waits_for_offers = False`` (a person, whose own pace is slower)."""
        assert self.agent is not None
        seen: tuple[int, int] = (-1, -1)
        waits = getattr(self.agent, "waits_for_offers", True)
        while not self.finished:
            if self.busy or (self.version, self.refusals) == seen:
                await self.changed.wait()
                continue
            seen = (self.version, self.refusals)
            at = self.pace.window_at
            if not self.may_act():
                if not self.busy:
                    self.idle_ready()
                continue
            state, view = self.session.state, dict(self.session.view)
            in_turn = to_act(state) == self.seat
            try:
                move = await self.agent(state, self.seat, view)
            except Resign:
                await self.resign(send)
                raise
            if move is None:
                if not in_turn:
                    self.pace.say_ready(at)
                continue
            if in_turn and waits:
                await self.pace.wait(self.others_at_table)
            while self.busy:  # a record is being applied: wait for it
                await self.changed.wait()
            if self.version != seen[0] and not self.may_act():
                continue  # the table moved on while the agent thought
            if in_turn and waits and self.session.state is not state:
                continue  # someone moved in the window: ask again
            try:
                env = self.session.intend(move)
            except IllegalMove as exc:
                log.info("seat %d: move %r not sent: %s", self.seat, move, exc)
                self._tell(exc.rule, exc.message)
                continue
            except ProtocolError as exc:
                log.info("seat %d: move %r not sent: %s", self.seat, move, exc)
                self._tell(exc.code, exc.detail)
                continue
            self.in_flight = True
            await send(env)
            if not in_turn:
                self.pace.say_ready(at)
