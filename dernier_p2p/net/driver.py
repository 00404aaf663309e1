"""The trio driver of one peer process: it moves bytes for a sans-IO
:class:`~dernier_p2p.protocol.node.peer.PeerNode` and wakes it at its deadline.

Everything the node decides happens in one task, the *pump*: events (a frame read, a
connection made or lost, a probe's answer, a move of the local agent) are posted to it as
callables and run in order; after each, the node's work is done (a long item, such as checking
a shuffle proof, in a worker thread, while reading and sending go on and new events wait), its
rules are advanced, and its effects are carried out: frames queued on connections, records
written to the transcript, dials, probes and votes over links started as tasks, notices handed
to the seat's front-end. The pump sleeps until the next event or the node's deadline; nothing
here polls and nothing here decides.

Connections: a seat's connection to its host (opened by a ``Dial`` action, resuming), and,
while the process hosts, its seats' and watchers' connections, accepted on its listeners (or
paired by a relay) and told apart from seat links by their opening frame.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio

from dernier_p2p.net import firewall, links
from dernier_p2p.net import handshake as hs
from dernier_p2p.net import relay as relay_
from dernier_p2p.net.admission import HANDSHAKE_S, MAX_PENDING, PER_ADDRESS, Admission, Limits
from dernier_p2p.net.framing import FramedStream, FrameError, PeerClosed
from dernier_p2p.net.seat import BackgroundWriter, LocalSeat
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.liveness.budgets import BEAT_MS
from dernier_p2p.protocol.node import effects as fx
from dernier_p2p.protocol.node.hosting import Refusal
from dernier_p2p.protocol.node.own import long_work
from dernier_p2p.protocol.node.peer import PeerNode, queued_record
from dernier_p2p.wire.identity import IdentityKey

log = logging.getLogger("dernier_p2p.net.driver")

DROPPED = (PeerClosed, trio.BrokenResourceError, trio.ClosedResourceError, OSError)
"""How a broken connection shows (FrameError, a ValueError, is not among them)."""
SEND_QUEUE_BYTES = 32 << 20
"""Unsent bytes a connection may have queued before it is dropped as a slow reader."""
POSTED_PER_CONN = 64
"""Frames of one connection read and not yet handled by the pump before its reader waits."""
BEAT = {"k": "beat"}
Event = Callable[[PeerNode, int], Any]


MAX_VERSION_NOTES = 8
"""Version refusals told to the host's player (one per source address): a stranger's flood of
wrong-version openings cannot fill the screen."""


class ConnIO:
    """One connection's outgoing side: a queue drained by a sender task, bounded to
    ``max_queued`` unsent bytes (a reader slower than that is dropped)."""

    def __init__(self, key: Any, stream: FramedStream, address: str = "?",
                 max_queued: int = SEND_QUEUE_BYTES, beat_s: float | None = None) -> None:
        self.key = key
        self.stream = stream
        self.address = address
        self.max_queued = max_queued
        self._tx, self._rx = trio.open_memory_channel[bytes | None](math.inf)
        self.queued = 0
        self.closing = False
        self.scope = trio.CancelScope()
        self.beat_s = beat_s
        self.posted = 0  # frames read and not yet handled
        self.posted_envs = 0  # of which envelopes (``env`` and ``pass``)
        self.readable = trio.Event()  # set while its reader may read (backpressure)
        self.readable.set()
        self.sent = trio.Event()  # its sender is done (closed after what was queued)

    def push(self, payload: bytes) -> None:
        if self.closing:
            return
        self.queued += len(payload)
        if self.queued > self.max_queued:
            log.warning("%s (%s): %d unsent bytes: dropped as a slow reader", self.key,
                        self.address, self.queued)
            self.kill()
            return
        self._tx.send_nowait(payload)

    def close(self) -> None:
        """Send what is queued, then close."""
        if not self.closing:
            self._tx.send_nowait(None)
            self.closing = True

    def kill(self) -> None:
        """Close at once."""
        self.closing = True
        self.scope.cancel()

    def block(self, blocked: bool) -> None:
        """Let the reader read, or make it wait."""
        if blocked and self.readable.is_set():
            self.readable = trio.Event()
        elif not blocked and not self.readable.is_set():
            self.readable.set()

    async def sender(self) -> None:
        """Send what is queued; with ``beat_s``, a ``beat`` after that long with nothing to
        send (4.3): the keepalive goes while the node is busy."""
        beat = hs.pack(BEAT)
        while True:
            payload: bytes | None = beat
            with trio.move_on_after(math.inf if self.beat_s is None else self.beat_s):
                payload = await self._rx.receive()
            if payload is None:
                break
            try:
                await self.stream.send(payload)
            except DROPPED:  # the reader sees the end too
                break
            if payload is not beat:
                self.queued -= len(payload)
        self.sent.set()
        self.scope.cancel()


@dataclass
class Routes:
    """How this process reaches a seat as its host: ``open_to(seat)`` returns a way to open a
    stream and the check of the challenge's key (None for no check)."""

    open_to: Callable[[int], tuple[Callable[[], Awaitable[FramedStream]],
                                    Callable[[bytes], None] | None]]


class Driver:
    """One peer process's pump and connections (see the module docstring)."""

    def __init__(
        self,
        identity: IdentityKey,
        *,
        agent: Any = None,
        transcript: str | os.PathLike[str] | None = None,
        envelopes: str | os.PathLike[str] | None = None,
        offload: bool = True,
        connect_s: float = 5.0,
        probe_s: float = links.PROBE_S,
        limits: Limits | None = None,
        send_queue_bytes: int = SEND_QUEUE_BYTES,
        max_watchers: int = 16,
        watchers_per_address: int = 4,
        table_name: str = "table",
        relay: tuple[str, int] | None = None,
    ) -> None:
        self.identity = identity
        self.agent = agent
        self.transcript = transcript
        self.offload = offload
        self.connect_s = connect_s
        self.probe_s = probe_s
        self.send_queue_bytes = send_queue_bytes
        self.max_watchers = max_watchers
        self.watchers_per_address = watchers_per_address
        self.table_name = table_name
        self.relay = relay  # where seats the routers do not map stand by (links go there too)
        # the local address of this process's own listener: its own seat relay (4.7 step 7)
        self.own_relay: tuple[str, int] | None = None
        self.node: PeerNode | None = None
        self.me: LocalSeat | None = None
        self.writer: BackgroundWriter | None = None
        self.side = None if envelopes is None else BackgroundWriter(envelopes)
        if self.side is not None and self.side.count:
            self.side.close()
            raise ValueError(f"envelope file {envelopes} already holds envelopes")
        self._tx, self._rx = trio.open_memory_channel[Event](math.inf)
        self.up: ConnIO | None = None
        self.seat_conns: dict[int, ConnIO] = {}
        self.watcher_conns: dict[int, ConnIO] = {}
        self._watcher_ids = 0
        self.hosting = False
        self.ended: str | None = None
        self.stopped: ProtocolError | None = None
        self.over = trio.Event()
        self.host_done = trio.Event()
        self.started = trio.Event()  # the node and the seat exist
        self.changed = trio.Event()
        self.admission = Admission(limits or Limits(MAX_PENDING, PER_ADDRESS, HANDSHAKE_S))
        self.link_server: links.LinkServer | None = None
        self._seat_relay: tuple[Any, relay_.Relay] | None = None  # (its session, the relay)
        self._present: tuple[int, list[dict[str, Any]], dict[str, Any] | None, int | None] = (
            -1, [], None, None)
        self.lending = 0  # lends under way (a stopped seat's proof, among them)
        self.lends_done = trio.Event()  # set when no lend is under way (made anew on each)
        self.lend_failed = False  # a lend did not reach its seat
        self.routes: Routes | None = None
        self.nursery: trio.Nursery | None = None
        self.on_lobby: Callable[[str, int, str], None] | None = None
        self._version_noted: set[str] = set()
        self.on_hosting: Callable[[bool], None] | None = None
        self.on_full: Callable[[], None] | None = None
        self.on_rebuilt: Callable[[], None] | None = None
        self.resumes = 0
        self.votes_sent: list[tuple[str, int | None]] = []
        self.errors: list[tuple[str, str]] = []
        self._dialing = 0

    # ------------------------------------------------------------------ the clock
    @staticmethod
    def now() -> int:
        return int(trio.current_time() * 1000)

    @staticmethod
    def wall_offset() -> int:
        """The wall clock minus trio's, in ms (records' ``t`` are wall time)."""
        return int(time.time() * 1000) - int(trio.current_time() * 1000)

    # ------------------------------------------------------------------ the node
    def adopt(self, node: PeerNode, writer: BackgroundWriter | None) -> None:
        """Run ``node`` (its seat exists: record 0 is in)."""
        self.node = node
        self.writer = writer
        if node.own is not None and self.me is None:
            self.me = LocalSeat(node.own, self.agent, writer)
            self.me.send_ready = lambda frame: self.post(
                lambda n, now: n.ready(frame, now))
            self.started.set()
        self._snapshot()
        self.post(lambda n, now: None)  # a first step: its rules run, its deadline is set

    async def ends(self) -> None:
        """Wait until the match is over for this process, as a seat (:attr:`over`) or as the
        host (:attr:`host_done`: its facade then waits for the seats' ``done``)."""
        while not (self.over.is_set() or self.host_done.is_set()):
            await self.changed.wait()

    def post(self, event: Event) -> None:
        """Run ``event(node, now)`` in the pump, after the events before it."""
        try:
            self._tx.send_nowait(event)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass

    async def call(self, event: Event) -> Any:
        """Run ``event`` in the pump and return its result (or raise its exception)."""
        done = trio.Event()
        box: list[Any] = []

        def run(node: PeerNode, now: int) -> None:
            try:
                box.append((True, event(node, now)))
            except BaseException as exc:  # handed back to the caller
                box.append((False, exc))
            finally:
                done.set()

        self.post(run)
        await done.wait()
        ok, value = box[0]
        if not ok:
            raise value
        return value

    async def send_own(self, env: dict[str, Any]) -> None:
        """An envelope of this seat's own (the agent's move, a chat line): to the node at
        once, so that it goes out in counter order with the envelopes the node signs itself
        (acks, deck messages). Signing never overlaps the node's work in a worker thread: the
        seat's agent waits while it is :attr:`~.seat.LocalSeat.busy`; an envelope that comes
        then anyway waits in the pump."""
        node = self.node
        if node is None or (self.me is not None and self.me.busy):
            self.post(lambda n, now: n.send_own(env, now))
            return
        node.send_own(env, self.now())
        self._effects(node.take())
        self.post(lambda n, now: None)  # a step: a host sequences it, the rules run

    async def pump(self) -> None:
        """Run the node until the match is over for this process (see the module
        docstring)."""
        while not self.over.is_set():
            node = self.node
            deadline = None if node is None else node.deadline()
            event = None
            with trio.move_on_at(math.inf if deadline is None else deadline / 1000):
                event = await self._rx.receive()
            node = self.node
            if node is None:
                continue
            if event is not None:
                self._run(node, event)
            while True:  # work, then what came meanwhile, before any rule is judged
                await self._work(node)
                got = False
                while True:
                    try:
                        more = self._rx.receive_nowait()
                    except trio.WouldBlock:
                        break
                    self._run(node, more)
                    got = True
                if not got:
                    break
            node.advance(self.now())
            self._effects(node.take())
            self._after_step(node)

    def _may_read(self, conn: ConnIO, seat: int) -> bool:
        """Backpressure (4.9): a seat's frames read and not handled stay under
        :data:`POSTED_PER_CONN`, and its envelopes waiting (in the host's inbox, or read and
        not yet handed to it) under the host's ``inbox_per_seat``."""
        if conn.posted >= POSTED_PER_CONN:
            return False
        node = self.node
        host = None if node is None else node.host
        if host is None:
            return True
        held = host.conns.get(seat)
        waiting = 0 if held is None else held.waiting
        return waiting + conn.posted_envs < host.config.inbox_per_seat

    def _run(self, node: PeerNode, event: Event) -> None:
        try:
            event(node, self.now())
        except ProtocolError as exc:
            log.error("seat %s: a fault while handling an event: %s", self._seat(), exc)

    def _after_step(self, node: PeerNode) -> None:
        self._snapshot()
        for seat, conn in self.seat_conns.items():
            conn.block(not self._may_read(conn, seat))
        if self.me is not None:
            self.me.bump()
        self._wake()
        self._check_over(node)

    async def _work(self, node: PeerNode) -> None:
        while node.has_work() and self.node is node:
            self._effects(node.take())
            self._announce(node)
            if self.offload and node.work_is_long():
                if self.me is not None:
                    self.me.busy = True
                    self.me.offloaded += 1
                try:
                    await trio.to_thread.run_sync(node.work, self.now())
                finally:
                    if self.me is not None:
                        self.me.busy = False
            else:
                node.work(self.now())
            self._effects(node.take())
            if self.me is not None:
                self.me.bump()
            await trio.sleep(0)  # let the connections' senders and readers run

    def _announce(self, node: PeerNode) -> None:
        """Tell the front-end what the next long work is (a shuffle to check or compute)."""
        if self.me is None or self.me.on_work is None or node.own is None:
            return
        item = None
        if node.hosting_now and node.host is not None:
            for kind, _, it, _ in node.host.inbox:
                item = it if kind == "fwd" else {"env": it}
                break
        elif node.queue:
            item = queued_record(node.queue[0])
        if item is not None:
            for what, seat, number in long_work(node.own.session, item):
                self.me.on_work(what, seat, number)

    def _snapshot(self) -> None:
        node = self.node
        if node is not None and node.own is not None:
            self._present = node.present()

    def _wake(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    def _check_over(self, node: PeerNode) -> None:
        """A seat is over once it has the last record (and said ``done``), or stopped, or
        ended; a host's end is :attr:`host_done` (its facade waits for the seats' ``done``
        with the pump running, then sets :attr:`over`)."""
        if node.host is None and node.watch is None:  # a host that stepped back: nothing left
            self.ended = self.ended or "no quorum of depose votes: it did not host"
            self.over.set()
            return
        if self.ended is not None and not self.host_done.is_set():
            self.over.set()  # (a host still hosting that found no seat to hand over to)
            return
        if node.hosting_now and node.host is not None:
            if node.host.done:
                if node.host.stopped is not None:
                    self.stopped = node.host.stopped
                self.host_done.set()
            return
        if self.ended is not None or self.stopped is not None:
            self.over.set()
        elif node.finished and (node.said_done or self.up is None):
            self.over.set()

    # ------------------------------------------------------------------ effects
    def _effects(self, items: list[Any]) -> None:
        packed: dict[int, bytes] = {}
        for e in items:
            if isinstance(e, fx.Send):
                conn = self._conn(e.conn)
                if conn is not None:
                    payload = packed.get(id(e.frame))
                    if payload is None:
                        payload = packed[id(e.frame)] = hs.pack(e.frame)
                    conn.push(payload)
                    if e.conn == fx.UP and e.frame.get("k") == "vote":
                        self.votes_sent.append((e.frame["kind"], e.frame["target"]))
            elif isinstance(e, fx.Close):
                conn = self._conn(e.conn)
                if conn is not None:
                    conn.kill() if e.now else conn.close()
            elif isinstance(e, fx.Persist):
                if self.writer is not None:
                    self.writer.append(e.record)
            elif isinstance(e, fx.Restart):
                self._restart(e.records, e.suffix)
            elif isinstance(e, fx.Keep):
                if self.side is not None:
                    self.side.append(e.env)
            elif isinstance(e, fx.Log):
                getattr(log, e.level, log.info)("seat %s: %s", self._seat(), e.text)
            elif isinstance(e, fx.Ready):
                if self.me is not None:
                    self.me.heard_ready(e.seat, e.at)
            elif isinstance(e, fx.Status):
                if self.me is not None:
                    self.me.note_status(e.seat, e.state, e.grace_ms)
            elif isinstance(e, fx.Refused):
                if self.me is not None:
                    self.me.tell(e.code, e.detail)
            elif isinstance(e, fx.Stopped):
                self.stopped = e.fault
            elif isinstance(e, fx.Hosting):
                self.hosting = e.listening
                if e.listening:
                    self.link_server = None
                if self.on_hosting is not None:
                    self.on_hosting(e.listening)
            elif isinstance(e, fx.Rebuilt):
                self._rebuilt()
            elif isinstance(e, act.Dial):
                self._start(self._dial, e.seat, e.have)
            elif isinstance(e, act.Probe):
                self._start(self._probe, e.seat)
            elif isinstance(e, act.Urge):
                self._start(self._urge, e.seat, e.frame)
            elif isinstance(e, act.Lend):
                if self.nursery is not None:
                    self.lending += 1  # (counted now: a seat about to end waits for it)
                    if self.lends_done.is_set():
                        self.lends_done = trio.Event()
                    self._start(self._lend, e.seat, e.records)
            elif isinstance(e, act.Note):
                log.info("seat %s: %s (seat %s, %d ms)", self._seat(), e.kind, e.seat, e.ms)
                if self.me is not None:
                    self.me.note(e.kind, e.seat, e.ms, e.detail or e.rule)
            elif isinstance(e, act.End):
                log.warning("seat %s: %s", self._seat(), e.why)
                self.ended = e.why
                if self.me is not None:
                    self.me.note("ended", None, 0, e.why)

    def _seat(self) -> Any:
        return None if self.node is None else self.node.seat

    def _conn(self, key: Any) -> ConnIO | None:
        if key == fx.UP:
            return self.up
        if isinstance(key, int) and key < 0:
            return self.watcher_conns.get(-key)
        return self.seat_conns.get(key)

    def _start(self, fn: Callable[..., Awaitable[None]], *args: Any) -> None:
        if self.nursery is not None:
            self.nursery.start_soon(fn, *args)

    def _restart(self, records: list[dict[str, Any]], suffix: str) -> None:
        """Start the transcript afresh from a new host's records (the old file kept beside)."""
        if self.transcript is None:
            return
        if self.writer is not None:
            self.writer.close()
        path = os.fspath(self.transcript)
        if os.path.exists(path):
            os.replace(path, path + suffix)
        self.writer = BackgroundWriter(path)
        for rec in records:
            self.writer.append(rec)
        if self.me is not None:
            self.me.writer = self.writer

    def _rebuilt(self) -> None:
        node = self.node
        if node is None or node.own is None or self.me is None:
            return
        self.me.rebind(node.own)
        self.link_server = None
        if self.on_rebuilt is not None:
            self.on_rebuilt()

    # ------------------------------------------------------------------ as a seat: dials
    async def _dial(self, host: int, have: int) -> None:
        """Resume with seat ``host`` as the host (4.4); the node hears how it went."""
        if self.routes is None:
            self.post(lambda node, now: node.dial_failed(host, now))
            return
        open_stream, check = self.routes.open_to(host)
        stream = None
        code, detail = "", ""
        try:
            with trio.fail_after(self.connect_s):
                stream = await open_stream()
                seat, last = await hs.rejoin(stream, self.identity, have, check)
        except hs.RemoteError as exc:
            code, detail = exc.code, exc.detail
        except (*DROPPED, hs.NetError, FrameError, trio.TooSlowError) as exc:
            code, detail = getattr(exc, "code", ""), str(exc)
        else:
            await self._upstream(host, stream, seat, last, have)
            return
        if stream is not None:
            await trio.aclose_forcefully(stream)
        log.info("seat %s: resume with seat %d failed: %s %s", self._seat(), host, code, detail)
        self.post(lambda node, now: node.dial_failed(host, now, code, detail))

    async def _upstream(self, host: int, stream: FramedStream, seat: int, last: int,
                        have: int | None = None) -> None:
        """Run a welcomed connection to the host (a resume's: ``have``) until it ends."""
        conn = ConnIO(fx.UP, stream, f"host {host}", self.send_queue_bytes, BEAT_MS / 1000)
        old, self.up = self.up, conn
        if old is not None:
            old.kill()
        self.resumes += 1
        self.post(lambda node, now: node.welcomed(host, seat, last, now, have))
        try:
            with conn.scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(conn.sender)
                    while True:
                        msg = hs.unpack(await stream.receive())
                        self._heard(msg)
                        self.post(lambda node, now, m=msg: node.from_host(m, now))
        except* (*DROPPED, hs.NetError, FrameError):
            pass
        finally:
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)
            if self.up is conn:
                self.up = None
                self.post(lambda node, now: node.closed(now))

    def _heard(self, msg: dict[str, Any]) -> None:
        """Keep the host's ``error`` frames (their words made safe to show)."""
        if msg["k"] == "error":
            try:
                exc = hs.remote_error(msg)
            except hs.NetError:
                return
            self.errors.append((exc.code, exc.detail))

    async def join(self, stream: FramedStream, name: str, listen: Any,
                   check_host: Callable[[bytes], None] | None) -> tuple[int, dict[str, Any]]:
        """Join a table on ``stream`` (``hello``), then run the connection: the seat and the
        table summary; record 0 builds the node (see :meth:`_first_record`)."""
        seat, table = await hs.join(stream, self.identity, name, listen, check_host)
        self.up = ConnIO(fx.UP, stream, "host", self.send_queue_bytes, BEAT_MS / 1000)
        return seat, table

    async def run_joined(self, first: Callable[[dict[str, Any] | None], None]) -> None:
        """Read the joined connection: record 0 goes to ``first`` (which builds the node),
        every later frame to the node."""
        conn = self.up
        assert conn is not None
        stream = conn.stream
        try:
            with conn.scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(conn.sender)
                    while True:
                        msg = hs.unpack(await stream.receive())
                        if self.node is None:
                            first(msg)
                            continue
                        self._heard(msg)
                        self.post(lambda node, now, m=msg: node.from_host(m, now))
        except* (*DROPPED, hs.NetError, FrameError):
            pass
        finally:
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)
            if self.node is None:
                first(None)  # closed before record 0
            if self.up is conn:
                self.up = None
                self.post(lambda node, now: node.closed(now) if node is not None else None)

    # ------------------------------------------------------------------ as a seat: links
    def serve_links_on(self) -> links.LinkServer | None:
        """The link server of this seat (probes and votes of the others), made on demand."""
        node = self.node
        if node is None or node.own is None or node.own.seat is None:
            return None
        if self.link_server is None or self.link_server.session is not node.own.session:
            self.link_server = links.LinkServer(
                self.identity, node.own.session, lambda: self._present[1], self._link_vote,
                proof=lambda: self._present[2], on_rec=self._link_rec,
                on_present=self._presented, lent=lambda: self._present[3])
            self.link_server.relay = self.serve_relayed
        return self.link_server

    def seat_relay(self) -> relay_.Relay | None:
        """This seat's relay for its own table (PROTOCOL.md 4.7 step 7), made once record 0
        is known: the seat tokens of its keys only, within the table's budgets."""
        node = self.node
        if node is None or node.own is None:
            return None
        session = node.own.session
        if self._seat_relay is None or self._seat_relay[0] is not session:
            tokens = frozenset(relay_.seat_token(session.game, key) for key in session.keys)
            self._seat_relay = (session, relay_.seat_relay(lambda: tokens))
        return self._seat_relay[1]

    async def carry_on(self, limit_s: float) -> None:
        """This seat's match is over: as a seat relay (PROTOCOL.md 4.7 step 7) it goes on
        forwarding for the other seats until it carries no joiner (none waiting for its host,
        no pair), at most ``limit_s``: their last records and acks may still pass through it
        (a seat relay that left at once cut the seat behind it off the end, and its host
        waited its grace for that seat's ``done``)."""
        served = None if self._seat_relay is None else self._seat_relay[1]
        if served is None or not served.carrying:
            return
        log.info("the match is over; still relaying %d connection(s) for the table's other "
                 "seats (up to %g s)", served.carrying, limit_s)
        with trio.move_on_after(limit_s):
            await served.carried()

    async def serve_relayed(self, stream: FramedStream, msg: dict[str, Any],
                            address: str) -> None:
        """Serve a connection that answered this seat's challenge with a relay opening."""
        served = self.seat_relay()
        if served is None:
            await self._refuse(stream, address, relay_.NO_TABLE, "no table here yet")
            return
        await served.serve_opened(stream, msg, firewall.source_of(address))

    def _link_vote(self, seat: int, msg: dict[str, Any]) -> None:
        self.post(lambda node, now: node.link_vote(seat, msg, now))

    def _link_rec(self, seat: int, rec: Any) -> None:
        self.post(lambda node, now: node.from_link(seat, rec, now))

    def _presented(self, seat: int) -> None:
        """A ``present`` went to ``seat``: a stopped seat answers on for a while (4.6)."""
        node = self.node
        if node is not None and node.stopped is not None:  # (its pump may have ended)
            node.probed(self.now(), seat)

    def lingering(self) -> float | None:
        """How long (s) this stopped seat still answers links with its proof (4.6), None once
        it no longer does (a probe since may have made it longer)."""
        node = self.node
        if node is None:
            return None
        now = self.now()
        until = node.linger_deadline(now)
        return None if until is None else max(0.001, (until - now) / 1000)

    async def _probe(self, seat: int) -> None:
        node = self.node
        if node is None or node.own is None:
            return
        found = await links.probe(self.identity, node.own.session, seat, self.probe_s,
                                  self.relay, self.own_relay)
        answer = None if found is None else (found.have, found.pending, found.proof,
                                             found.lent)
        self.post(lambda n, now: n.probe_answer(seat, answer, now))

    async def _lend(self, seat: int, records: list[dict[str, Any]]) -> None:
        node = self.node
        try:
            if node is not None and node.own is not None and not await links.lend(
                    self.identity, node.own.session, seat, records, self.relay,
                    own=self.own_relay):
                self.lend_failed = True
                node.lend_failed(seat)
        finally:
            self.lending -= 1
            if not self.lending:
                self.lends_done.set()

    async def _urge(self, seat: int, frame: dict[str, Any]) -> None:
        node = self.node
        if node is None or node.own is None:
            return
        await links.send_vote(self.identity, node.own.session, seat, frame, self.relay,
                              self.own_relay)

    # ------------------------------------------------------------------ accepting
    async def handle(self, stream: FramedStream) -> None:
        """Serve one connection accepted on this process's listeners (or paired by a relay):
        while it hosts, a seat's or a watcher's; else a seat link."""
        if not self.hosting:
            server = self.serve_links_on()
            if server is not None:
                await server.handle(stream)
            return
        address = firewall.peer_address(stream.stream)
        opening = await self._opening(stream, address)
        if opening is None:
            return
        if isinstance(opening, _Relayed):  # a seat relay's client (4.7 step 7)
            await self.serve_relayed(stream, opening.msg, address)
            return
        if isinstance(opening, tuple):  # a link to a candidate gathering (4.6)
            server = self.serve_links_on()
            if server is not None:
                await server.handle(stream, opening)
            return
        if isinstance(opening, hs.Watch):
            await self._serve_watcher(stream, address, opening.have)
            return
        kind = "resume" if isinstance(opening, hs.Resume) else "hello"
        try:
            seat, have = await self.call(lambda node, now: node.host.admit(
                kind, opening.key, getattr(opening, "name", ""), getattr(opening, "listen", None),
                getattr(opening, "have", -1), now))
        except Refusal as exc:
            await self._refuse(stream, address, exc.code, exc.detail)
            return
        except AttributeError:  # no longer hosting
            await self._refuse(stream, address, hs.UNEXPECTED, "not a host")
            return
        stream.max_frame = hs.MAX_SEAT_FRAME  # one envelope or record a frame (4.1)
        conn = ConnIO(seat, stream, address, self.send_queue_bytes, BEAT_MS / 1000)
        if have is None and self.on_lobby is not None:
            self.on_lobby("join", seat, getattr(opening, "name", ""))

        def join(node: PeerNode, now: int) -> bool:
            # the connection takes the seat's frames from the event that welcomes it on: the
            # frames of the events before it (a `ready`, a record) go to the old one, so that
            # nothing comes before the welcome on the new one
            self._effects(node.take())
            old = self.seat_conns.get(seat)
            self.seat_conns[seat] = conn
            if old is not None:
                old.kill()
            return bool(node.host.joined(seat, have, now))

        full = await self.call(join)
        if full and have is None and self.on_full is not None:
            self.on_full()
        log.info("seat %d connected from %s", seat, address)
        try:
            with conn.scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(conn.sender)
                    await self._read_seat(conn, seat)
                    conn.close()
        except* (*DROPPED, FrameError):
            pass
        finally:
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)
            if self.seat_conns.get(seat) is conn:
                del self.seat_conns[seat]
                lobby = self.on_lobby if not full and have is None else None

                def gone(node: PeerNode, now: int) -> None:
                    if node.host is not None:
                        node.host.closed(seat, now)
                    if lobby is not None:
                        lobby("leave", seat, "")

                self.post(gone)

    async def _read_seat(self, conn: ConnIO, seat: int) -> None:
        while not conn.closing:
            if not conn.readable.is_set():
                await conn.readable.wait()
                continue
            try:
                msg = await hs.receive_message(conn.stream)
            except hs.RemoteError as exc:
                log.warning("seat %d reports %s: %s", seat, exc.code, exc.detail)
                continue
            except hs.NetError as exc:
                self.post(lambda node, now, e=exc: node.host._fault(seat, e.code, e.detail, now)
                          if node.host is not None else None)
                continue
            except FrameError as exc:
                self.post(lambda node, now, e=exc: node.host._fault(
                    seat, hs.OVERSIZED, str(e), now, close=True) if node.host is not None
                    else None)
                return
            envelope = msg["k"] in ("env", "pass")
            conn.posted += 1
            conn.posted_envs += envelope

            def frame(node: PeerNode, now: int, m: dict[str, Any] = msg,
                      env: bool = envelope) -> None:
                conn.posted -= 1
                conn.posted_envs -= env
                if self.seat_conns.get(seat) is conn:
                    node.host_frame(seat, m, now)

            self.post(frame)
            if not self._may_read(conn, seat):
                conn.block(True)

    async def _opening(
        self, stream: FramedStream, address: str,
    ) -> hs.Hello | hs.Resume | hs.Watch | tuple[bytes, dict[str, Any]] | _Relayed | None:
        """The checked opening of a new connection, within the admission caps and deadline; a
        ``link`` while this seat is a candidate gathering (it answers links until it hosts,
        4.6) is returned unchecked with the challenge's nonce, for the link server."""
        nonce = os.urandom(hs.NONCE_SIZE)
        node = self.node
        if node is None or node.host is None:
            return None
        summary = node.host.summary(self.table_name)
        with self.admission.enter(firewall.source_of(address)) as ticket:
            try:
                with ticket.scope:
                    await hs.send_message(stream, hs.challenge_message(nonce, summary))
                    stream.max_frame = hs.MAX_OPENING
                    message = await hs.receive_message(stream)
                    stream.max_frame = hs.MAX_FRAME
                    if message.get("k") == "link" and self._gathering():
                        return nonce, message
                    if message.get("k") in links.RELAY_OPENINGS and node.own is not None:
                        return _Relayed(message)
                    return hs.check_opening(message, nonce)
            except hs.RemoteError as exc:
                log.info("%s gave up the handshake: %s", address, exc)
                return None
            except hs.NetError as exc:
                if exc.code == hs.VERSION_MISMATCH:
                    self._version_refused(address, exc.detail)
                await self._refuse(stream, address, exc.code, exc.detail)
                return None
            except FrameError as exc:
                await self._refuse(stream, address, hs.OVERSIZED, str(exc))
                return None
        if not ticket.evicted:
            await self._refuse(stream, address, "TIMEOUT", "no hello in time")
        return None

    def _version_refused(self, address: str, detail: str) -> None:
        """Tell the host's player (through ``on_lobby``) that someone could not join for the
        protocol version, once per source address and at most :data:`MAX_VERSION_NOTES` times."""
        source = firewall.source_of(address)
        if (self.on_lobby is None or source in self._version_noted
                or len(self._version_noted) >= MAX_VERSION_NOTES):
            return
        self._version_noted.add(source)
        self.on_lobby("version", -1, f"a player at {address} could not join: {detail}")

    def _gathering(self) -> bool:
        node = self.node
        return node is not None and node.host is not None and node.host.gathering

    async def _refuse(self, stream: FramedStream, address: str, code: str, detail: str) -> None:
        log.warning("connection from %s refused: %s: %s", address, code, detail)
        with trio.move_on_after(1):
            try:
                await hs.send_message(stream, hs.error_message(code, detail))
            except DROPPED:
                pass

    async def _serve_watcher(self, stream: FramedStream, address: str, have: int) -> None:
        """A watcher (PROTOCOL.md 4.10), within the caps: the node sends it the records; any
        frame from it closes its connection."""
        source = firewall.source_of(address)
        same = sum(1 for w in self.watcher_conns.values()
                   if firewall.source_of(w.address) == source)
        if len(self.watcher_conns) >= self.max_watchers or same >= self.watchers_per_address:
            await self._refuse(stream, address, hs.TABLE_FULL, "no room for another watcher")
            return
        node = self.node
        if node is None or node.host is None:
            return
        if have >= len(node.host.records) and not node.host.gathering:
            await self._refuse(stream, address, hs.MALFORMED,
                               "watch beyond the host's last record")
            return
        try:
            node.host.resend_check(source, have, self.now())
        except Refusal as exc:
            await self._refuse(stream, address, exc.code, exc.detail)
            return
        self._watcher_ids += 1
        number = self._watcher_ids
        conn = ConnIO(-number, stream, address, self.send_queue_bytes, BEAT_MS / 1000)
        self.watcher_conns[number] = conn
        self.post(lambda n, now: n.host.watcher(number, have, now) if n.host else None)
        log.info("watcher %d connected from %s", number, address)
        try:
            with conn.scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(conn.sender)
                    await self._watcher_reader(conn)
        except* (*DROPPED, FrameError):
            pass
        finally:
            self.watcher_conns.pop(number, None)
            self.post(lambda n, now: n.host.watcher_gone(number) if n.host else None)
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)

    async def _watcher_reader(self, conn: ConnIO) -> None:
        try:
            msg = await hs.receive_message(conn.stream)
        except hs.RemoteError as exc:
            log.warning("watcher at %s reports %s: %s", conn.address, exc.code, exc.detail)
            conn.close()
            return
        except (hs.NetError, FrameError) as exc:
            code = exc.code if isinstance(exc, hs.NetError) else hs.OVERSIZED
            conn.push(hs.pack(hs.error_message(code, "a watcher sends nothing")))
            conn.close()
            return
        log.warning("watcher at %s sent a %r frame: closed", conn.address, msg["k"])
        conn.push(hs.pack(hs.error_message(hs.UNEXPECTED, "a watcher sends nothing")))
        conn.close()

    # ------------------------------------------------------------------ the end
    def close_all(self) -> None:
        for conn in [*self.seat_conns.values(), *self.watcher_conns.values()]:
            conn.close()

    def finish(self) -> None:
        """Close the files (the transcript is complete on disk before anything else)."""
        if self.me is not None:
            self.me.close()
        elif self.writer is not None:
            self.writer.close()
        self.writer = None
        if self.side is not None:
            self.side.close()
            self.side = None


@dataclass
class _Relayed:
    """A relay opening answering the host's challenge: a client of its seat relay (4.7 step 7)."""

    msg: dict[str, Any]
