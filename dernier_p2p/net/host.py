"""The host: a peer that also accepts the table's peers, sequences and relays their messages.

The host is trusted for nothing but ordering: every record it signs is checked by every peer.
It listens on TCP, runs the handshake of :mod:`.handshake` with each connection until the table
is full (the host is seat 0), then sequences record 0 (the ``table``) and runs the match:

- every ``env`` frame goes through the :class:`~dernier_p2p.protocol.sequencer.Sequencer`; a
  refused one gets an ``error`` frame on its own connection and a log line, and after
  ``max_errors`` refusals that connection (only) is closed;
- each record is appended to the host's transcript, broadcast to every connection and applied
  by the host's own session, whose envelopes are sequenced in turn;
- timers (see :mod:`.timers`): the seat the table waits on too long gets the host's own
  ``timeout`` vote, a dropped connection that does not resume within ``grace_ms`` its ``left``
  vote; the seats send theirs as ``vote`` frames (each by its own clock, :mod:`.peer`); once a
  quorum of fresh votes is in (:mod:`~dernier_p2p.protocol.votes`), the host sequences the
  ``timeout`` or ``left`` carrying them, a ``timeout`` of its own seat too (the host does not vote
  about itself; PROTOCOL.md 7.5) (the other connections get ``status`` frames: "dropped"
  with the grace left, then "back"). At two seats no quorum exists: when the host's clock runs
  out on the other seat it sequences ``no_contest``. With no record for ``stuck_ms`` (a split
  vote) the host votes ``abandon``, and a quorum of such votes ends the match as
  ``no_contest``. After a record that opens a
  declaration window, move envelopes other than declarations and catches are held for
  ``declare_ms`` (or until the window closes) so a declaration can come first.

A peer that reconnects sends ``resume`` and receives a ``welcome`` with ``"last"`` (the index of
the host's last record) followed by every record after the one it holds; a resume replaces at
once a connection of that seat the host still holds (a stale one). A ``hello`` with the key of a
seat of the running match is refused (UNKNOWN_KEY, :data:`SEATED_KEY`): that client resumes.

Every record of another seat is applied by the host's own session *before* it is relayed
(``HostConfig.check_first``): a message every peer would refuse (a deck message with a bad
proof, a coin message not due) is retracted and answered with an error frame instead of
stopping the match. A ``move`` must also be legal in the state its head echo names (the
session's rule for races), else ``ILLEGAL_MOVE`` (``NOT_HELD`` for a play of a slot the seat
held neither then nor now).

A record whose body, once applied, proves a seat's fault (an illegal play its token reveals, a
complaint judged, a failed audit; with ``check_first`` off, any message every peer refuses) is
never retracted: it is relayed as the evidence, every peer refuses it and keeps it as the last
record of its transcript, and the match ends (:meth:`Host.run` raises the fault once the
connections have the record). Every envelope received from a connection is also appended to
the envelope side file (``HostConfig.envelopes``) before it is checked.

A *watcher* (``dernier watch``, PROTOCOL.md 4.10) opens with ``watch`` instead of ``hello``: it
takes no seat, gets ``watching`` and then every record (from the one after its ``have``) and
every ``status`` frame, and may send nothing: any frame from it closes its connection. At most
``HostConfig.max_watchers`` watch at once (``watchers_per_address`` from one address); a watcher's
unsent frames are bounded like a seat's.

Once the match is over the host waits (up to ``grace_ms``) until every seat at the table has
sent ``done`` for the last record, answering resumes meanwhile, and then closes (a seat whose
connection broke at the very end can still fetch the last records).

A front-end follows the lobby with ``async for event in host.joins()`` (a :class:`LobbyEvent` per
seat taken or freed, until the table is full) and the match with ``await host.local_seat()``
(the host's own :class:`~.seat.LocalSeat`, once record 0 is sequenced).

A host built with ``takeover=`` (a peer's seat, after the host was lost; see :mod:`.peer`)
gathers the other seats' resumes and their ``depose`` votes first, then sequences the host change
carrying a quorum of them; the old host stays a seat and may resume with it within ``grace_ms``
(else it gets a ``left`` record with votes like any seat).
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import trio

from dernier_p2p.net import firewall
from dernier_p2p.net import handshake as hs
from dernier_p2p.net.admission import (
    HANDSHAKE_S,
    MAX_PENDING,
    PER_ADDRESS,
    Admission,
    Limits,
    raise_nofile_limit,
)
from dernier_p2p.net.agent import Agent
from dernier_p2p.net.discovery import DEFAULT_PORT, Announcement, announce, announce_target
from dernier_p2p.net.framing import FramedStream, FrameError, PeerClosed, serve_framed
from dernier_p2p.net.seat import BackgroundWriter, LocalSeat
from dernier_p2p.net.timers import (
    CHAT_BURST,
    CHAT_WINDOW_S,
    ChatPace,
    Deadlines,
    Grace,
    Timers,
    Window,
    acting_author,
)
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.messages import is_progress
from dernier_p2p.protocol.ready import check_ready_signature, ready_fields
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.protocol.votes import (
    CENSOR_MS,
    Tally,
    check_vote_frame,
    quorum,
    stuck_ms,
    vote_ok,
)
from dernier_p2p.rules import to_act
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.version import PROTOCOL_VERSION

log = logging.getLogger("dernier_p2p.net.host")

HOST_SEAT = 0
HOLD_FREE = frozenset({"declare", "catch"})
"""Move kinds never held by the declaration window."""
SEND_QUEUE_BYTES = 32 << 20
"""Unsent bytes a connection may have queued before it is dropped as a slow reader."""
INBOX_PER_SEAT = 64
"""Envelopes of one seat waiting to be sequenced before its connection is no longer read."""
MAX_WATCHERS = 16
"""Watchers a host admits at once by default (``HostConfig.max_watchers``)."""
WATCHERS_PER_ADDRESS = 4
"""Watchers from one address a host admits at once by default."""
SEATED_KEY = "this key has a seat: resume"
"""The detail of the UNKNOWN_KEY refusal of a ``hello`` whose key has a seat in the running
match (the client should resume instead, PROTOCOL.md 4.4)."""


@dataclass
class HostConfig:
    """How to run a table. ``advertise`` is the address peers can reach this host at (put in
    the table as its ``listen`` and in LAN announcements; default ``bind``); ``announce_to``
    enables LAN discovery (a host bound to a loopback address announces on loopback only).

    Admission (see :mod:`.admission`): at most ``max_pending`` connections (``per_address``
    from one address) may be in the handshake, each for at most ``handshake_s``; a connection
    whose unsent frames exceed ``send_queue_bytes`` is a slow reader and is dropped; a seat with
    ``inbox_per_seat`` envelopes waiting to be sequenced is not read from until one is done.

    ``check_first``: the host's session checks every other seat's record completely before it
    is relayed, so a message that every peer would refuse (a deck message with a bad proof, a
    coin message not due) is refused with an error frame and never enters the chain. It costs
    latency: the host verifies each proof before the peers start on theirs. Without it the
    record is relayed first and such a message stops the match, naming its author.

    ``max_watchers``, ``watchers_per_address``: how many observers may follow the table live
    (0: none), in all and from one address; more are refused with TABLE_FULL.

    ``envelopes``: the envelope side file (PROTOCOL.md 21.1): every envelope received from a
    connection is appended to it before it is checked, so that the signed evidence of a fault
    survives even if this host never relays it (``dernier verify --envelopes``).

    ``censor_ms``: the protocol's constant (7.5), here a setting for tests only; with the
    timers it says when a table without records is stuck and the host votes ``abandon``.
    """

    players: int
    variant: str = "dernier"
    options: dict[str, Any] = field(default_factory=dict)
    timers: Timers = field(default_factory=Timers)
    name: str = "host"
    table_name: str = "table"
    bind: str = "127.0.0.1"
    port: int = 0
    advertise: str | None = None
    transcript: str | os.PathLike[str] | None = None
    envelopes: str | os.PathLike[str] | None = None
    max_errors: int = 5
    handshake_s: float = HANDSHAKE_S
    max_pending: int = MAX_PENDING
    per_address: int = PER_ADDRESS
    send_queue_bytes: int = SEND_QUEUE_BYTES
    inbox_per_seat: int = INBOX_PER_SEAT
    max_watchers: int = MAX_WATCHERS
    watchers_per_address: int = WATCHERS_PER_ADDRESS
    game: bytes | None = None
    seed: bytes | None = None
    announce_to: tuple[str, int] | None = None
    linger_s: float = 2.0
    check_first: bool = True
    offload: bool = False
    censor_ms: int = CENSOR_MS


@dataclass
class Player:
    name: str
    key: bytes
    listen: tuple[str, int] | None

    def body(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "key": self.key,
            "listen": None if self.listen is None else list(self.listen),
        }


@dataclass(frozen=True)
class LobbyEvent:
    """A seat taken (``kind`` "join") or freed ("leave") before the match, and how many seats
    are taken after it (the host's included)."""

    kind: str
    seat: int
    name: str
    taken: int


class NoQuorum(Exception):
    """A new host did not get the ``depose`` votes of a quorum of the seats in time."""


class Conn:
    """One peer's connection: an outgoing queue drained by a sender task, bounded to
    ``max_queued`` unsent bytes (a reader slower than that is dropped), and a count of its
    envelopes waiting to be sequenced (``inbox``; its reader waits while it is full)."""

    def __init__(
        self, seat: int, stream: FramedStream, max_queued: int = SEND_QUEUE_BYTES,
        address: str = "?",
    ) -> None:
        self.seat = seat
        self.stream = stream
        self.address = address
        self._tx, self._rx = trio.open_memory_channel[bytes | None](math.inf)
        self.queued = 0
        self.max_queued = max_queued
        self.waiting = 0  # envelopes in the host's inbox
        self.drained = trio.Event()
        self.errors = 0
        self.closing = False
        self.replaced = False
        self.scope = trio.CancelScope()
        self.next_i = 0  # a watcher's next record index (records below it are not sent again)
        self.have = -1  # the last record the peer said it holds when it resumed

    def push(self, payload: bytes) -> None:
        if self.closing:
            return
        self.queued += len(payload)
        if self.queued > self.max_queued:
            log.warning("seat %d (%s): %d unsent bytes: dropped as a slow reader",
                        self.seat, self.address, self.queued)
            self.kill()
            return
        self._tx.send_nowait(payload)

    def sequenced(self) -> None:
        """One of this connection's envelopes left the host's inbox."""
        self.waiting -= 1
        self.drained.set()

    def close(self) -> None:
        """Send what is queued, then close."""
        if not self.closing:
            self._tx.send_nowait(None)
            self.closing = True

    def kill(self) -> None:
        """Close at once."""
        self.closing = True
        self.scope.cancel()

    async def sender(self) -> None:
        async for payload in self._rx:
            if payload is None:
                break
            await self.stream.send(payload)
            self.queued -= len(payload)
        self.scope.cancel()


def _ms() -> int:
    return int(trio.current_time() * 1000)


class Host:
    """A running table (see the module docstring). Use :func:`run_host`."""

    def __init__(
        self,
        identity: IdentityKey,
        config: HostConfig,
        agent: Agent | None,
        *,
        takeover: LocalSeat | None = None,
        listeners: list[trio.SocketListener] | None = None,
    ) -> None:
        if not 2 <= config.players <= 10:
            raise ValueError("a table has 2 to 10 players")
        hs.check_name(config.name)
        self.identity = identity
        self.config = config
        self.agent = agent
        self.listeners = listeners
        self.seed = config.seed if config.seed is not None else os.urandom(32)
        self.players: dict[int, Player] = {}
        self.conns: dict[int, Conn] = {}
        self.watchers: dict[int, Conn] = {}  # by a number of their own (never a seat)
        self._watcher_ids = 0
        self.me: LocalSeat | None = takeover
        self.port = 0
        self.full = trio.Event()
        self.started = trio.Event()  # set once the host's own seat (``me``) exists
        self.lobby: list[LobbyEvent] = []
        self._lobby_changed = trio.Event()
        self.gathering = takeover is not None  # a new host collecting the others' records
        self.old_host: int | None = None
        self._early: list[tuple[int, Any]] = []  # envelopes that came while gathering
        self._catching_up: set[int] = set()  # seats forwarding records to a new host
        if takeover is None:
            self.seat = HOST_SEAT
            self.game = config.game if config.game is not None else os.urandom(16)
            self.sequencer: Sequencer | None = Sequencer(identity, self.game, HOST_SEAT)
        else:
            session = takeover.session
            self.seat = takeover.seat
            self.game = session.game
            self.old_host = session.host
            self.sequencer = None  # built from the records once gathered
            for seat, p in enumerate(session.table_body["players"]):
                listen = None if p["listen"] is None else (p["listen"][0], p["listen"][1])
                self.players[seat] = Player(p["name"], p["key"], listen)
            self.full.set()
            self.started.set()
        self.done = trio.Event()
        self.deadlines = Deadlines(config.timers.turn_ms)
        self.grace = Grace(config.timers.grace_ms)
        self.window = Window(config.timers.declare_ms)
        self._window_at = -1  # the record that opened the declaration window
        self.held: deque[tuple[int, dict[str, Any]]] = deque()
        self._inbox, self._outbox = trio.open_memory_channel[tuple[int, Any, bool]](math.inf)
        self._wake = trio.Event()
        self._owes: tuple[int, ...] = ()
        self.left: set[int] = set()
        if takeover is not None:
            takeover.pace.send = self._own_ready
            self.left = set(range(config.players)) - set(takeover.session.chain.at_table)
        self.faults: list[tuple[int, str, str]] = []  # (seat, code, detail) refused envelopes
        self.admission = Admission(
            Limits(config.max_pending, config.per_address, config.handshake_s)
        )
        self.stopped: ProtocolError | None = None  # a fault that ended the match, with evidence
        self.side = None if config.envelopes is None else BackgroundWriter(config.envelopes)
        if self.side is not None and self.side.count:
            self.side.close()
            raise ValueError(f"envelope file {config.envelopes} already holds envelopes")
        self.tally = Tally()  # votes received (and the host's own)
        self.chat_paces: dict[int, ChatPace] = {}  # each other seat's chat lines
        self._last_record_ms: int | None = None  # when the last record was published
        self._abandoned: set[int] = set()  # the records the host voted abandon at
        self._asked: set[tuple[str, int | None, int]] = set()  # vote bodies sequenced
        self.confirmed: dict[int, int] = {}  # seat -> the last record its ``done`` names
        self._ready_at: dict[int, int] = {}  # seat -> the ``at`` of its last ready relayed

    @property
    def records(self) -> list[dict[str, Any]]:
        """Every record so far (the host seat's own list)."""
        return [] if self.me is None else self.me.records

    # ------------------------------------------------------------------ lobby
    def _lobby_note(self, kind: str, seat: int, name: str) -> None:
        self.lobby.append(LobbyEvent(kind, seat, name, len(self.players)))
        self._lobby_wake()

    def _lobby_wake(self) -> None:
        self._lobby_changed.set()
        self._lobby_changed = trio.Event()

    async def joins(self) -> AsyncIterator[LobbyEvent]:
        """Every lobby event from the first, in order; ends once the table is full."""
        at = 0
        while True:
            changed = self._lobby_changed
            while at < len(self.lobby):
                yield self.lobby[at]
                at += 1
            if self.full.is_set():
                return
            await changed.wait()

    async def local_seat(self) -> LocalSeat:
        """The host's own seat, once the match has started."""
        await self.started.wait()
        assert self.me is not None
        return self.me

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.config.table_name,
            "variant": self.config.variant,
            "players": self.config.players,
            "taken": len(self.players),
            "key": self.identity.public_bytes(),
        }

    def announcement(self) -> Announcement | None:
        if self.full.is_set():
            return None
        cfg = self.config
        free = cfg.players - len(self.players)
        where = cfg.advertise or ("" if cfg.bind in ("", "0.0.0.0", "::") else cfg.bind)
        return Announcement(cfg.table_name, cfg.variant, free, self.port, host=where)

    def _admit(self, opening: hs.Hello | hs.Resume) -> tuple[int, int | None]:
        """The seat for a checked opening and, for a resume, the index it holds."""
        if isinstance(opening, hs.Resume):
            for seat, p in self.players.items():
                if p.key == opening.key and self.full.is_set() and seat != self.seat:
                    if seat in self.left:
                        raise hs.NetError(hs.UNKNOWN_KEY, f"seat {seat} has left the table")
                    if opening.have >= len(self.records) and not self.gathering:
                        raise hs.NetError(hs.MALFORMED, "resume beyond the host's last record")
                    return seat, opening.have
            raise hs.NetError(hs.UNKNOWN_KEY, "no seat of this game has that key")
        if any(p.key == opening.key for p in self.players.values()):
            if self.full.is_set():
                raise hs.NetError(hs.UNKNOWN_KEY, SEATED_KEY)
            raise hs.NetError(hs.DUPLICATE_KEY, "that identity key already has a seat")
        if self.full.is_set() or len(self.players) >= self.config.players:
            raise hs.NetError(hs.TABLE_FULL, f"all {self.config.players} seats are taken")
        seat = min(s for s in range(self.config.players) if s not in self.players)
        self.players[seat] = Player(opening.name, opening.key, opening.listen)
        self._lobby_note("join", seat, opening.name)
        return seat, None

    async def _refuse(self, stream: FramedStream, address: str, code: str, detail: str) -> None:
        log.warning("connection from %s refused: %s: %s", address, code, detail)
        with trio.move_on_after(1):
            await hs.send_message(stream, hs.error_message(code, detail))

    async def _opening(
        self, stream: FramedStream, address: str
    ) -> hs.Hello | hs.Resume | hs.Watch | None:
        """The checked opening of a new connection, within the admission caps and deadline;
        None (the connection refused or evicted) if there is none."""
        nonce = os.urandom(hs.NONCE_SIZE)
        with self.admission.enter(firewall.source_of(address)) as ticket:  # by host, not port
            try:
                with ticket.scope:
                    await hs.send_message(stream, hs.challenge_message(nonce, self.summary()))
                    stream.max_frame = hs.MAX_OPENING  # an outsider's frame stays small
                    opening = hs.check_opening(await hs.receive_message(stream), nonce)
                    stream.max_frame = hs.MAX_FRAME
                    return opening
            except hs.RemoteError as exc:
                log.info("%s gave up the handshake: %s", address, exc)
                return None
            except hs.NetError as exc:
                await self._refuse(stream, address, exc.code, exc.detail)
                return None
            except FrameError as exc:
                await self._refuse(stream, address, hs.OVERSIZED, str(exc))
                return None
        if not ticket.evicted:
            await self._refuse(stream, address, "TIMEOUT", "no hello in time")
        return None

    async def handle(self, stream: FramedStream) -> None:
        """Serve one connection: handshake, then its frames until it closes. Any framed
        connection will do: one from the listener, or one a relay paired (see :mod:`.relay`)."""
        address = firewall.peer_address(stream.stream)
        opening = await self._opening(stream, address)
        if opening is None:
            return
        if isinstance(opening, hs.Watch):
            await self._serve_watcher(stream, address, opening.have)
            return
        try:
            seat, have = self._admit(opening)
        except hs.NetError as exc:
            await self._refuse(stream, address, exc.code, exc.detail)
            return
        conn = Conn(seat, stream, self.config.send_queue_bytes, address)
        conn.have = -1 if have is None else have
        old = self.conns.get(seat)
        if old is not None:
            old.replaced = True
            old.kill()
        self.conns[seat] = conn
        welcome: dict[str, Any] = {"k": "welcome", "seat": seat}
        last = len(self.records) - 1
        if have is not None:
            welcome["last"] = last
            log.info("seat %d resumed after record %d", seat, have)
        conn.push(hs.pack(welcome))
        if have is not None:
            for rec in self.records[have + 1 :]:
                conn.push(hs.pack({"k": "rec", "rec": rec}))
            now = _ms()
            for other in self.grace.dropped_seats:  # who is away, as the others were told
                if other != seat:
                    conn.push(self._status_frame(other, "dropped", now))
            if self.grace.is_dropped(seat):
                self.grace.back(seat)
                self._status(seat, "back")
            self._wake.set()
        elif len(self.players) == self.config.players:
            self.full.set()
            self._lobby_wake()
        log.info("seat %d: %s connected from %s", seat, self.players[seat].name, address)
        try:
            with conn.scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(conn.sender)
                    if have is not None and have > last:
                        self._catching_up.add(seat)
                        try:
                            await self._take_forwarded(conn, have - last, last)
                        finally:
                            self._catching_up.discard(seat)
                    await self._reader(conn)
                    conn.close()
        except* (PeerClosed, trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        finally:
            self._detach(conn)

    async def _serve_watcher(self, stream: FramedStream, address: str, have: int) -> None:
        """A watcher (PROTOCOL.md 4.10): within the caps, ``watching``, the records after
        ``have`` and who is away; then every record and status as relayed, until the end. It
        may send nothing: a frame from it (an ``error`` included) closes its connection."""
        cfg = self.config
        source = firewall.source_of(address)
        same = sum(1 for w in self.watchers.values() if firewall.source_of(w.address) == source)
        if len(self.watchers) >= cfg.max_watchers or same >= cfg.watchers_per_address:
            await self._refuse(stream, address, hs.TABLE_FULL, "no room for another watcher")
            return
        if have >= len(self.records) and not self.gathering:
            await self._refuse(stream, address, hs.MALFORMED, "watch beyond the host's last record")
            return
        self._watcher_ids += 1
        number = self._watcher_ids
        conn = Conn(-number, stream, cfg.send_queue_bytes, address)
        conn.next_i = have + 1
        self.watchers[number] = conn
        conn.push(hs.pack({"k": "watching", "last": len(self.records) - 1}))
        for rec in self.records[have + 1 :]:
            self._push_watcher(conn, rec)
        now = _ms()
        for other in self.grace.dropped_seats:
            conn.push(self._status_frame(other, "dropped", now))
        if self.done.is_set():
            conn.close()  # the match is over: the records, then goodbye
        log.info("watcher %d connected from %s (%d watching)", number, address,
                 len(self.watchers))
        try:
            with conn.scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(conn.sender)
                    await self._watcher_reader(conn)
        except* (PeerClosed, trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        finally:
            self.watchers.pop(number, None)
            log.info("watcher %d (%s) gone", number, address)

    async def _watcher_reader(self, conn: Conn) -> None:
        """Wait for a frame from a watcher (it should send none) and close its connection."""
        try:
            msg = await hs.receive_message(conn.stream)
        except hs.RemoteError as exc:  # e.g. it refused a record: its own business
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

    def _push_watcher(self, conn: Conn, rec: dict[str, Any], payload: bytes | None = None) -> None:
        """Queue a record for a watcher unless it has it already."""
        if rec["i"] < conn.next_i:
            return
        conn.next_i = rec["i"] + 1
        conn.push(payload if payload is not None else hs.pack({"k": "rec", "rec": rec}))

    def _detach(self, conn: Conn) -> None:
        if conn.replaced or self.conns.get(conn.seat) is not conn:
            return
        del self.conns[conn.seat]
        seat = conn.seat
        if not self.full.is_set():
            name = self.players.pop(seat).name  # a lobby seat is simply freed
            self._lobby_note("leave", seat, name)
            log.info("seat %d left the lobby", seat)
        elif seat not in self.left and not (self.done.is_set() and conn.queued == 0):
            self._dropped(seat)  # after the end too, if it went before its last records

    def _dropped(self, seat: int) -> None:
        """``seat``'s connection is gone: its grace starts and everyone is told."""
        self.grace.dropped(seat, _ms())
        self._wake.set()
        log.warning("seat %d dropped; %d ms to resume", seat, self.grace.left_ms(seat, _ms()))
        self._status(seat, "dropped")

    def _status_frame(self, seat: int, state: str, now: int) -> bytes:
        grace = self.grace.left_ms(seat, now) if state == "dropped" else 0
        return hs.pack(hs.status_message(seat, state, grace))

    def _status(self, seat: int, state: str) -> None:
        """A ``status`` frame about ``seat`` ("dropped" with its grace left, or "back") to every
        other connection, and the same notice to the host's own seat (PROTOCOL.md 4.4)."""
        now = _ms()
        payload = self._status_frame(seat, state, now)
        for other, conn in self.conns.items():
            if other != seat:
                conn.push(payload)
        for conn in self.watchers.values():
            conn.push(payload)
        if self.me is not None:
            grace = self.grace.left_ms(seat, now) if state == "dropped" else 0
            self.me.note_status(seat, state, grace)

    async def _reader(self, conn: Conn) -> None:
        while not conn.closing:
            try:
                msg = await hs.receive_message(conn.stream)
            except hs.RemoteError as exc:
                log.warning("seat %d reports %s: %s", conn.seat, exc.code, exc.detail)
                continue
            except hs.NetError as exc:
                self._fault(conn.seat, exc.code, exc.detail)
                continue
            except FrameError as exc:
                self._fault(conn.seat, hs.OVERSIZED, str(exc), close=True)
                return
            if msg["k"] == "vote" and self.full.is_set():
                self._on_vote(conn.seat, msg)
            elif msg["k"] == "ready" and self.me is not None:
                self._on_ready(conn.seat, msg)
            elif msg["k"] == "done":
                self._on_done(conn.seat, msg)
            elif msg["k"] != "env" or set(msg) != {"k", "env"}:
                self._fault(conn.seat, hs.UNEXPECTED, f"unexpected frame {msg['k']!r}")
            elif not self.gathering and (not self.full.is_set() or self.me is None):
                self._fault(conn.seat, hs.UNEXPECTED, "the match has not started")
            else:
                while conn.waiting >= self.config.inbox_per_seat:  # backpressure (while
                    conn.drained = trio.Event()  # gathering too: held until the host change)
                    await conn.drained.wait()
                conn.waiting += 1
                if self.gathering:
                    self._early.append((conn.seat, msg["env"]))
                else:
                    self._on_env(conn.seat, msg["env"])

    def _on_done(self, seat: int, msg: dict[str, Any]) -> None:
        """A ``done`` frame: the seat holds the records up to ``last`` and the match is over for
        it (PROTOCOL.md 4.3); the host may close once every seat at the table says so."""
        try:
            self.confirmed[seat] = hs.check_done(msg)
        except hs.NetError as exc:
            self._fault(seat, exc.code, exc.detail)

    def _all_done(self) -> bool:
        """Whether every other seat at the table has said ``done`` for the last record."""
        assert self.me is not None
        last = len(self.records) - 1
        seats = set(self.me.session.chain.at_table) - {self.seat}
        return all(self.confirmed.get(s, -2) >= last for s in seats)

    def _on_vote(self, seat: int, msg: dict[str, Any]) -> None:
        """A ``vote`` frame from ``seat``: checked (its own vote, a good signature) and
        tallied; a quorum makes the host sequence the record (see :meth:`_count_votes`)."""
        try:
            kind, target, vote = check_vote_frame(msg, self.config.players)
        except ProtocolError as exc:
            self._fault(seat, exc.code, exc.detail)
            return
        key = self.players[seat].key
        if vote["seat"] != seat or not vote_ok(vote, key, self.game, kind, target):
            self._fault(seat, "BAD_SIGNATURE", f"a {kind} vote that is not seat {seat}'s")
            return
        log.info("seat %d votes %s about %s (after record %d)", seat, kind, target,
                 vote["after"])
        self.tally.add(kind, target, vote)
        self._wake.set()

    def _on_ready(self, seat: int, msg: dict[str, Any]) -> None:
        """A ``ready`` frame from ``seat`` (PROTOCOL.md 18): checked, kept for the host's own
        seat and relayed to every other connection, once per window: one whose ``at`` is not
        past the seat's last ready, or past the host's last record, is dropped (a seat repeating
        its ready would have the host send every other seat a frame to check each time), and
        dropped before its signature is checked (nor does the host verify a flood of them)."""
        assert self.me is not None
        session = self.me.session
        try:
            author, at = ready_fields(msg, session.n)
            if author != seat:
                raise ProtocolError("WRONG_SEAT", seat,
                                    f"a ready frame of seat {author} from seat {seat}")
            if not self._ready_at.get(seat, -1) < at < len(self.records):
                return  # a repeat, or ahead of the records: covers nothing new, not relayed
                # (nor its signature checked: a seat repeating it costs no verification)
            check_ready_signature(msg, session.keys, session.game)
        except ProtocolError as exc:
            self._fault(seat, exc.code, exc.detail)
            return
        self._ready_at[seat] = at
        self.me.heard_ready(seat, at)
        self._wake.set()  # the declaration window may close early
        payload = hs.pack(msg)
        for other, conn in self.conns.items():
            if other != seat:
                conn.push(payload)

    def _own_ready(self, frame: dict[str, Any]) -> None:
        """The host's own seat is ready: its frame to every connection."""
        payload = hs.pack(frame)
        for conn in self.conns.values():
            conn.push(payload)
        self._wake.set()

    def own_vote(self, kind: str, target: int | None) -> None:
        """The host's own vote (its clock ran out on ``target``)."""
        assert self.me is not None
        self.tally.add(kind, target, self.me.session.vote(kind, target))
        self._wake.set()

    def _count_votes(self) -> None:
        """Sequence a ``timeout`` or ``left`` for which a quorum of fresh votes is in."""
        if self.me is None or self.me.busy or self.me.finished or self.gathering:
            return
        chain = self.me.session.chain
        m = len(chain.at_table)
        for kind, target in self.tally.keys():
            if kind not in ("timeout", "left", "abandon") or \
                    (target == self.seat and kind != "timeout"):
                continue  # a quorum timing out this host's own seat is sequenced too (7.5)
            if target is not None and target not in chain.at_table:
                self.tally.drop(kind, target)
                continue
            since = chain.vote_since(kind, target)
            votes = self.tally.fresh(kind, target, since, chain.next_index)
            if len(votes) < quorum(m) or (kind, target, since) in self._asked:
                continue
            self._asked.add((kind, target, since))
            log.warning("a quorum votes %s about seat %s", kind, target)
            self.host_body(self.me.session.votes_body(kind, target, votes[: quorum(m)]))

    async def _take_forwarded(self, conn: Conn, count: int, after: int) -> None:
        """While gathering: the resuming peer holds ``count`` records this new host lacks and
        sends them (signed by the old host, so checked like any record); each is relayed to the
        connections of the seats that lack it (several may be forwarding at once). They come in
        order after record ``after`` (the last one the peer was told this host holds)."""
        assert self.me is not None
        for _ in range(count):
            try:
                msg = await hs.receive_message(conn.stream)
            except (hs.NetError, FrameError) as exc:
                code = exc.code if isinstance(exc, hs.NetError) else hs.OVERSIZED
                self._fault(conn.seat, code, f"while forwarding records: {exc}")
                return
            if not self.gathering:
                self._fault(conn.seat, hs.UNEXPECTED, "records forwarded after the host change")
                return
            rec = msg.get("rec") if msg["k"] == "rec" else None
            if not isinstance(rec, dict) or not isinstance(rec.get("i"), int):
                self._fault(conn.seat, hs.UNEXPECTED, "expected a forwarded record")
                return
            if rec["i"] <= after:  # (else a seat claiming more records than it holds could
                # forward the same one until the gathering gave up, and no host change came)
                self._fault(conn.seat, hs.UNEXPECTED, "forwarded records out of order")
                return
            after = rec["i"]
            if rec["i"] < len(self.records):
                continue  # another peer forwarded it first
            try:
                out = self.me.apply(rec, _ms())
            except ProtocolError as exc:
                self._fault(conn.seat, exc.code, f"forwarded record {rec['i']}: {exc.detail}")
                return
            self._early.extend((self.seat, env) for env in out)
            payload = hs.pack({"k": "rec", "rec": rec})
            for other in self.conns.values():
                if other.have < rec["i"]:  # not to a seat that holds it (one forwarding too)
                    other.push(payload)
            for watcher in self.watchers.values():
                self._push_watcher(watcher, rec, payload)

    def _fault(self, seat: int, code: str, detail: str, close: bool = False) -> None:
        """Tell ``seat`` its message was refused; close its connection after max_errors."""
        conn = self.conns.get(seat)
        if seat == self.seat:
            self.faults.append((seat, code, detail))
            log.error("own envelope refused: %s: %s", code, detail)
            if self.me is not None:
                for env in self.me.refused(code, detail):
                    self._submit(self.seat, env)
            return
        if conn is None or conn.closing:
            log.info("seat %d (connection closed): %s: %s", seat, code, detail)
            return
        self.faults.append((seat, code, detail))
        conn.errors += 1
        log.warning("seat %d refused (%d): %s: %s", seat, conn.errors, code, detail)
        conn.push(hs.pack(hs.error_message(code, detail)))
        if close or conn.errors >= self.config.max_errors:
            log.warning("seat %d: closing its connection after %d errors", seat, conn.errors)
            conn.close()

    # ------------------------------------------------------------------ sequencing
    def _on_env(self, seat: int, env: Any) -> None:
        if self.side is not None and seat != self.seat and isinstance(env, dict):
            self.side.append(env)
        self._inbox.send_nowait((seat, env, False))

    def _must_hold(self, seat: int, env: Any) -> bool:
        if any(s == seat for s, _ in self.held):
            return True  # keep one author's envelopes in order
        if not self.window.is_open(_ms()):
            return False
        body = env.get("body") if isinstance(env, dict) else None
        return (
            isinstance(body, dict)
            and body.get("type") == "move"
            and body.get("move") not in HOLD_FREE
        )

    def _everyone_ready(self) -> bool:
        """Every seat but the one at turn has said ``ready`` for the record that opened the
        declaration window (PROTOCOL.md 18): the window closes early."""
        me = self.me
        if me is None or me.session.state is None:
            return False
        turn = to_act(me.session.state)
        pace = me.pace
        for seat in me.others_at_table() + [self.seat]:
            said = pace.said if seat == self.seat else pace.ready.get(seat, -1)
            if seat != turn and said < self._window_at:
                return False
        return True

    def _release(self) -> None:
        if self.window.until is not None and self._everyone_ready():
            self.window.close()
        while self.held and not self.window.is_open(_ms()):
            seat, env = self.held.popleft()
            self._inbox.send_nowait((seat, env, True))

    def _submit(self, seat: int, env: Any) -> None:
        """Queue an envelope for sequencing, past the declaration hold."""
        self._inbox.send_nowait((seat, env, True))

    async def _sequencing(self) -> None:
        """Sequence queued envelopes one at a time, in arrival order, letting the connections'
        senders run between records."""
        async for seat, env, unheld in self._outbox:
            if not unheld and self._must_hold(seat, env):
                self.held.append((seat, env))
                self._wake.set()
                continue
            conn = self.conns.get(seat) if seat != self.seat else None
            if conn is not None and conn.waiting > 0:
                conn.sequenced()  # its reader may read on
            await self._sequence_guarded(seat, env)
            await trio.sleep(0)

    async def _sequence_guarded(self, seat: int, env: Any) -> None:
        """:meth:`_sequence` behind the firewall: an unexpected exception while checking
        another seat's envelope is that seat's fault (MALFORMED), never the host's end."""
        before = None if self.sequencer is None else len(self.sequencer.records)
        try:
            await self._sequence(seat, env)
        except Exception as exc:
            if seat == self.seat or isinstance(exc, ProtocolError):
                raise
            conn = self.conns.get(seat)
            where = conn.address if conn is not None else f"seat {seat}"
            firewall.report(where, exc, "envelope refused")
            if self.sequencer is not None and len(self.sequencer.records) != before:
                self._retract()
            self._fault(seat, "MALFORMED", f"envelope could not be handled: {type(exc).__name__}")

    def _record_time(self) -> int:
        return int(time.time() * 1000)

    async def _sequence(self, seat: int, env: Any) -> None:
        if self.done.is_set():
            return  # the match is over: nothing more is sequenced
        assert self.sequencer is not None and self.me is not None
        try:
            if seat != self.seat:
                self.vet(seat, env)
                if self._chat_too_soon(seat, env):
                    why = f"chat too often: at most {CHAT_BURST} lines in {CHAT_WINDOW_S:.0f} s"
                    self._fault(seat, hs.UNEXPECTED, why)
                    return
            rec = self.sequencer.submit(env, seat, self._record_time())
        except ProtocolError as exc:
            self._fault(seat, exc.code, exc.detail)
            return
        if seat == self.seat or not self.config.check_first:
            await self._publish(rec)  # relayed first, applied by the host's session after
            return
        try:  # another seat's: the host's session checks it completely before relaying it
            out = await self.me.receive(rec, _ms(), keep_evidence=False)
        except ProtocolError as exc:
            if self.me.session.fault is None:  # refused, nothing changed: the match goes on
                self._retract()
                self._fault(seat, exc.code, exc.detail)
                return
            # a fault the record proves (an illegal play its token reveals, a complaint
            # judged): every peer must hold the evidence, so it is relayed and the match ends
            if not self.me.keep(rec, exc):
                raise
            self._relay(rec)
            self._stop(exc)
            return
        await self._publish(rec, out)

    def _chat_too_soon(self, seat: int, env: Any) -> bool:
        """Whether ``env`` is a chat line beyond ``seat``'s pace (PROTOCOL.md 7.10); a line
        within it is counted."""
        body = env.get("body") if isinstance(env, dict) else None
        if not isinstance(body, dict) or body.get("type") != "chat":
            return False
        pace = self.chat_paces.setdefault(seat, ChatPace())
        now = trio.current_time()
        if pace.delay(now) > 0:
            return True
        pace.note(now)
        return False

    def _stop(self, exc: ProtocolError) -> None:
        """End the match on a fault whose evidence (record ``exc.evidence``) is relayed: the
        connections get every queued record, then close; :meth:`run` raises ``exc``."""
        log.error("the match stops at record %s: %s", exc.evidence, exc)
        self.stopped = exc
        self.deadlines.clear()
        self.done.set()

    def _retract(self) -> None:
        """Forget the last record (refused by the host's session, never relayed): the
        sequencer is rebuilt from the records before it."""
        assert self.sequencer is not None
        records = self.sequencer.records[:-1]
        self.sequencer = Sequencer(self.identity, self.game, self.seat, records=records)

    def vet(self, seat: int, env: Any) -> None:
        """Checks of the rules the sequencer does not make, before sequencing; raises
        ProtocolError naming ``seat``. A ``move`` must be legal in the state its head echo
        names (so at worst it loses a race when it runs); a play's face is not known yet, so
        some face must make it legal."""
        assert self.me is not None and self.sequencer is not None
        chain = self.sequencer.chain
        if chain is None:
            return
        env = chain.check_envelope(env, seat)
        body = env["body"]
        session = self.me.session
        head_i = session.chain.index_of(env["head"])
        if body["type"] != "move" or head_i is None or session.finished:
            return
        if body["move"] == "play" and not session.held_at(head_i, seat, body["slot"]):
            raise ProtocolError("NOT_HELD", seat, f"seat {seat} held no slot {body['slot']}")
        if not session.legal_at(head_i, seat, body):
            raise ProtocolError("ILLEGAL_MOVE", seat, "not a legal move at the head it echoes")

    async def _publish(
        self, rec: dict[str, Any], out: list[dict[str, Any]] | None = None
    ) -> None:
        """Relay a record, apply it to the host's session (unless ``out``, its envelopes, says
        it is applied already) and run the timers."""
        assert self.me is not None
        now = _ms()
        self._relay(rec)
        if out is None:
            try:
                out = await self.me.receive(rec, now)
            except ProtocolError as exc:  # the host's session refuses a relayed record
                if exc.evidence != rec["i"] or self.me.evidence is not rec:
                    log.error("host session refused record %d: %s", rec["i"], exc)
                    raise
                self._stop(exc)  # every peer refuses it too: the record is the evidence
                return
        for env in out:
            self._submit(self.seat, env)
        body = rec["env"]["body"]
        gone = {"left": body.get("seat"), "resign": rec["env"]["seat"]}.get(body["type"])
        if gone is not None:
            self.left.add(gone)  # out of the match: its closing connection is no drop
            self.grace.back(gone)
        if is_progress(body):  # talk and head echoes are no progress (7.5)
            self._last_record_ms = now
        self._after_record(rec, now)

    def _relay(self, rec: dict[str, Any]) -> None:
        """Queue a record for every connection."""
        payload = hs.pack({"k": "rec", "rec": rec})  # encoded once for every connection
        for seat, conn in self.conns.items():
            out_rec = self.relay_to(seat, rec)
            if out_rec is rec:
                conn.push(payload)
            elif out_rec is not None:
                conn.push(hs.pack({"k": "rec", "rec": out_rec}))
        for conn in self.watchers.values():
            self._push_watcher(conn, rec, payload)

    def relay_to(self, seat: int, rec: dict[str, Any]) -> dict[str, Any] | None:
        """The record as sent to ``seat``, None to send nothing (a test subclass tampers
        here)."""
        return rec

    def _after_record(self, rec: dict[str, Any], now: int) -> None:
        assert self.me is not None
        session = self.me.session
        if self.me.finished:
            self.deadlines.clear()
            self.done.set()
            return
        waiting = [s for s in session.waiting_on() if s not in self.left]
        self.deadlines.update(waiting, now, acting_author(rec))
        owes = tuple(session.state.owes) if session.state is not None else ()
        if owes and any(s not in self._owes for s in owes):
            self.window.open(now)
            self._window_at = rec["i"]
        elif not owes:
            self.window.close()
        self._owes = owes
        self._wake.set()

    def host_body(self, body: dict[str, Any]) -> None:
        """Sequence a host-authored body (table, timeout, left, no_contest, host_change)."""
        assert self.me is not None
        self._submit(self.seat, self.me.session.announce(body))

    # ------------------------------------------------------------------ timers
    async def _timers(self) -> None:
        while not self.done.is_set():
            if self.me is not None and self.me.busy:  # no host body while a record applies
                await self.me.changed.wait()
                continue
            now = _ms()
            for seat in self.grace.expired(now):
                log.warning("seat %d did not resume in time: the host votes left", seat)
                self._absent("left", seat)
            if self.done.is_set():
                break
            for seat in self.deadlines.expired(now):
                if self.grace.is_dropped(seat) or seat in self.left:
                    continue
                log.warning("seat %d ran out of time: the host votes timeout", seat)
                self._absent("timeout", seat)
            stuck = self._stuck_at()
            if stuck is not None and now >= stuck:
                self._abandon()
                stuck = None
            self._count_votes()
            self._release()
            times = [
                t
                for t in (self.deadlines.next_deadline(), self.grace.next_deadline(),
                          self.window.until if self.held else None, stuck)
                if t is not None
            ]
            self._wake = trio.Event()
            if times:
                with trio.move_on_at(min(times) / 1000):
                    await self._wake.wait()
            else:
                await self._wake.wait()

    def _stuck_at(self) -> int | None:
        """When the table counts as stuck (no record for ``stuck_ms``, 7.5), while the match
        runs and this host has not voted ``abandon`` at this record yet."""
        me = self.me
        if me is None or me.finished or self.gathering or self._last_record_ms is None:
            return None
        if me.session.chain.vote_since("abandon", None) in self._abandoned:
            return None
        return self._last_record_ms + stuck_ms(me.session.table_body["timers"],
                                               self.config.censor_ms)

    def _abandon(self) -> None:
        """The table is stuck (a split vote): the host's own ``abandon`` vote (7.5)."""
        assert self.me is not None
        self._abandoned.add(self.me.session.chain.vote_since("abandon", None))
        log.warning("no record for %d ms: the host votes abandon",
                    stuck_ms(self.me.session.table_body["timers"], self.config.censor_ms))
        self.own_vote("abandon", None)

    def _absent(self, kind: str, seat: int) -> None:
        """The host's clock ran out on ``seat``: its vote, or at two seats ``no_contest``."""
        assert self.me is not None
        if self.me.finished or seat == self.seat:
            return
        if len(self.me.session.chain.at_table) == 2:
            log.warning("seat %d is absent at two seats: no contest", seat)
            self.host_body({"type": "no_contest", "seat": seat, "votes": []})
            return
        self.own_vote(kind, seat)

    # ------------------------------------------------------------------ match
    def _start_match(self) -> None:
        cfg = self.config
        body = {
            "type": "table",
            "version": PROTOCOL_VERSION,
            "variant": cfg.variant,
            "options": dict(cfg.options),
            "players": [self.players[s].body() for s in range(cfg.players)],
            "timers": cfg.timers.to_body(),
        }
        assert self.sequencer is not None
        env = LocalSeat.table_envelope(self.identity, self.game, HOST_SEAT, body)
        rec = self.sequencer.submit(env, HOST_SEAT, self._record_time())
        self.me = LocalSeat(
            self.identity, HOST_SEAT, rec, self.seed, self.agent, cfg.transcript, cfg.offload
        )
        self.me.pace.send = self._own_ready
        self.started.set()
        self._relay(rec)  # record 0: the host's seat is built on it, nothing to apply
        for env in self.me.start():
            self._submit(HOST_SEAT, env)

    async def _send_own(self, env: dict[str, Any]) -> None:
        self._on_env(self.seat, env)

    async def _gather(self) -> None:
        """A new host: wait (up to grace_ms) for every other seat still at the table to resume,
        taking the records it lacks from them; then sequence ``host_change`` and what was sent
        meanwhile. The old host stays a seat: its grace starts now (it may resume here)."""
        assert self.me is not None and self.old_host is not None
        others = set(self.me.session.chain.at_table) - {self.seat, self.old_host}
        with trio.move_on_after(self.config.timers.grace_ms / 1000):
            while not others <= set(self.conns) or self._catching_up:
                await trio.sleep(0.005)
        votes = await self._depose_votes()
        self.sequencer = Sequencer(self.identity, self.game, self.seat, records=self.records)
        self.gathering = False
        log.warning("seat %d takes over from host %d at record %d", self.seat, self.old_host,
                    len(self.records))
        if self.me.replaying is not None:  # restarted from its transcript: what it owed then
            for env in self.me.finish_restore():
                self.me.sent(env)  # signed again after the host change (take_over)
        for env in self.me.take_over(self.old_host, votes):  # host_change first
            self._submit(self.seat, env)
        held = {(r["env"]["seat"], r["env"]["n"]): r["env"] for r in self.records[1:]}
        for seat, env in self._early:
            if seat != self.seat and isinstance(env, dict) and \
                    held.get((seat, env.get("n"))) == env:
                # sent again on resuming, before the record another seat forwarded here
                # reached it (PROTOCOL.md 4.4): nothing to refuse
                conn = self.conns.get(seat)
                if conn is not None and conn.waiting > 0:
                    conn.sequenced()
                continue
            self._on_env(seat, env)
        self._early = []
        for seat in sorted((others | {self.old_host}) - set(self.conns)):
            self._dropped(seat)  # the old host too: it may come back as a seat (7.6)

    async def _depose_votes(self) -> list[dict[str, Any]]:
        """A quorum of fresh ``depose`` votes about the old host, this seat's own first,
        waiting up to ``grace_ms`` for the others' (they vote again after every record they
        apply); NoQuorum if they do not come."""
        assert self.me is not None and self.old_host is not None
        chain = self.me.session.chain
        need = quorum(len(chain.at_table))
        signed_since: int | None = None  # the record this seat's own vote counts from
        with trio.move_on_after(self.config.timers.grace_ms / 1000):
            while True:
                while self._catching_up:
                    await trio.sleep(0.005)
                since = chain.vote_since("depose", self.old_host)
                if since != signed_since:  # signed again only when it would say more
                    self.tally.add("depose", self.old_host,
                                   self.me.session.vote("depose", self.old_host))
                    signed_since = since
                votes = self.tally.fresh("depose", self.old_host, since, chain.next_index)
                if len(votes) >= need:
                    votes.sort(key=lambda v: v["seat"] != self.seat)
                    return votes[:need]
                await trio.sleep(0.01)
        raise NoQuorum(f"fewer than {need} seats vote to depose host {self.old_host}")

    async def run(self, task_status: trio.TaskStatus[Host] = trio.TASK_STATUS_IGNORED) -> Any:
        """Serve until the match is over; return the host session's result."""
        cfg = self.config
        raise_nofile_limit()
        try:
            async with trio.open_nursery() as nursery:
                self.listeners = await nursery.start(
                    partial(serve_framed, self.handle, cfg.port, host=cfg.bind,
                            max_frame=hs.MAX_FRAME, listeners=self.listeners)
                )
                self.port = self.listeners[0].socket.getsockname()[1]
                if self.me is None:
                    where = (cfg.advertise or cfg.bind, self.port)
                    self.players[HOST_SEAT] = Player(cfg.name, self.identity.public_bytes(), where)
                if cfg.announce_to is not None:
                    addr, port = cfg.announce_to
                    addr = announce_target(cfg.bind, addr)
                    beacon = partial(announce, address=addr, port=port or DEFAULT_PORT)
                    nursery.start_soon(beacon, self.announcement)
                task_status.started(self)
                await self.full.wait()
                nursery.start_soon(self._sequencing)
                if self.gathering:
                    await self._gather()
                else:
                    self._start_match()
                nursery.start_soon(self._timers)
                if self.agent is not None:
                    assert self.me is not None
                    nursery.start_soon(self.me.act, self._send_own)
                    nursery.start_soon(self.me.chatter, self._send_own)
                await self.done.wait()
                # every seat at the table gets up to its grace to say it holds the last record
                # (``done``): one whose connection broke near the end resumes meanwhile
                with trio.move_on_after(cfg.timers.grace_ms / 1000):
                    while self.stopped is None and not self._all_done():
                        await trio.sleep(0.05)  # (a fault ended it: they refuse, not confirm)
                for conn in [*self.conns.values(), *self.watchers.values()]:
                    conn.close()
                with trio.move_on_after(cfg.linger_s):
                    while self.conns or self.watchers:
                        await trio.sleep(0.01)
                nursery.cancel_scope.cancel()
        finally:
            if self.me is not None:
                self.me.close()
            if self.side is not None:
                self.side.close()
        assert self.me is not None
        if self.stopped is not None:
            raise self.stopped
        return self.me.session.result


async def run_host(
    identity: IdentityKey,
    config: HostConfig,
    agent: Agent | None,
    *,
    task_status: trio.TaskStatus[Host] = trio.TASK_STATUS_IGNORED,
) -> Any:
    """Host a table until its match is over (see :class:`Host`); with ``nursery.start`` the
    running :class:`Host` (its ``port``) is reported once it listens."""
    return await Host(identity, config, agent).run(task_status=task_status)
