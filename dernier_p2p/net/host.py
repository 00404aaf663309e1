"""The host of a table: a peer that also accepts the table's peers (the host is seat 0).

:class:`Host` listens on TCP (and LAN discovery), runs the lobby until the table is full, then
the match, through a :class:`~.driver.Driver` around a sans-IO
:class:`~dernier_p2p.protocol.node.peer.PeerNode` whose
:class:`~dernier_p2p.protocol.node.hosting.Hosting` does everything a host decides: admission,
resumes, sequencing and relaying, the declaration window, watchers, and (through its liveness
machine) drops, graces, votes and time-outs. Once the match is over the host waits (up to
``grace_ms``) until every seat at the table has said ``done`` for the last record, answering
resumes meanwhile, and then closes.

A front-end follows the lobby with ``async for event in host.joins()`` (a :class:`LobbyEvent`
per seat taken or freed, until the table is full) and the match with ``await host.local_seat()``
(the host's own :class:`~.seat.LocalSeat`, once record 0 is sequenced).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import trio

from dernier_p2p.net import handshake as hs
from dernier_p2p.net.address import host_port
from dernier_p2p.net.admission import (
    HANDSHAKE_S,
    MAX_PENDING,
    PER_ADDRESS,
    Limits,
    raise_nofile_limit,
)
from dernier_p2p.net.agent import Agent
from dernier_p2p.net.discovery import DEFAULT_PORT, Announcement, announce, announce_target
from dernier_p2p.net.driver import SEND_QUEUE_BYTES, Driver
from dernier_p2p.net.framing import FramedStream, serve_framed
from dernier_p2p.net.peer import HostLost
from dernier_p2p.net.seat import BackgroundWriter, LocalSeat
from dernier_p2p.net.seatrelay import local_address, stand_by
from dernier_p2p.net.timers import Timers
from dernier_p2p.protocol.liveness.budgets import CENSOR_MS
from dernier_p2p.protocol.node.hosting import SEATED_KEY, Hosting, HostingConfig
from dernier_p2p.protocol.node.own import OwnSeat
from dernier_p2p.protocol.node.peer import PeerNode
from dernier_p2p.wire.identity import IdentityKey

__all__ = ["SEATED_KEY", "Host", "HostConfig", "LobbyEvent", "NoQuorum", "run_host"]

log = logging.getLogger("dernier_p2p.net.host")

INBOX_PER_SEAT = 64
MAX_WATCHERS = 16
WATCHERS_PER_ADDRESS = 4


@dataclass
class HostConfig:
    """How to run a table. ``advertise`` is the address peers can reach this host at (put in
    the table as its ``listen`` and in LAN announcements; default ``bind``); ``listen_host``:
    the host of its ``listen`` in the table instead (its global IPv6 address); ``announce_to``
    enables LAN discovery. Admission (see :mod:`.admission`): at most ``max_pending``
    connections (``per_address`` from one address) in the handshake, each for at most
    ``handshake_s``; a connection whose unsent frames exceed ``send_queue_bytes`` is dropped; a
    seat with ``inbox_per_seat`` envelopes waiting to be sequenced is not read until one is
    done. ``check_first``: the host's session checks every other seat's record before it is
    relayed. ``max_watchers``, ``watchers_per_address``: observers admitted (0: none).
    ``envelopes``: the envelope side file (PROTOCOL.md 21.1). ``censor_ms``: the protocol's
    constant, here a setting for tests only. ``offload``: long records are applied in a worker
    thread (the connections stay live meanwhile)."""

    players: int
    variant: str = "dernier"
    options: dict[str, Any] = field(default_factory=dict)
    timers: Timers = field(default_factory=Timers)
    name: str = "host"
    table_name: str = "table"
    bind: str = "127.0.0.1"
    port: int = 0
    advertise: str | None = None
    listen_host: str | None = None
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
    offload: bool = True
    censor_ms: int = CENSOR_MS
    constants: dict[str, int] = field(default_factory=dict)

    def hosting(self, game: bytes, seed: bytes) -> HostingConfig:
        """The sans-IO part of these settings."""
        constants = dict(self.constants)
        if self.censor_ms != CENSOR_MS:
            constants["censor_ms"] = self.censor_ms
        return HostingConfig(
            players=self.players, variant=self.variant, options=dict(self.options),
            timers=self.timers.to_body(), game=game, seed=seed, max_errors=self.max_errors,
            inbox_per_seat=self.inbox_per_seat, check_first=self.check_first,
            constants=constants,
        )


class NoQuorum(Exception):
    """A host taking over did not gather a quorum of ``depose`` votes in time: it stepped back
    (having sequenced nothing)."""


@dataclass(frozen=True)
class LobbyEvent:
    """A seat taken (``kind`` "join") or freed ("leave") before the match, and how many seats
    are taken after it (the host's included); or ("version", seat -1) a player refused for
    another protocol version, ``name`` then saying who and why."""

    kind: str
    seat: int
    name: str
    taken: int


class Host:
    """A running table (see the module docstring). Use :func:`run_host`, or ``run``."""

    hosting_cls: type[Hosting] = Hosting
    node_cls: type[PeerNode] = PeerNode

    def __init__(
        self,
        identity: IdentityKey,
        config: HostConfig,
        agent: Agent | None,
        *,
        listeners: list[trio.SocketListener] | None = None,
        takeover: OwnSeat | None = None,
    ) -> None:
        if not 2 <= config.players <= 10:
            raise ValueError("a table has 2 to 10 players")
        hs.check_name(config.name)
        self.identity = identity
        self.config = config
        self.listeners = listeners
        self.seed = config.seed if config.seed is not None else os.urandom(32)
        self.game = config.game if config.game is not None else os.urandom(16)
        self.driver = Driver(
            identity, agent=agent, transcript=config.transcript, envelopes=config.envelopes,
            offload=config.offload, limits=Limits(config.max_pending, config.per_address,
                                                  config.handshake_s),
            send_queue_bytes=config.send_queue_bytes, max_watchers=config.max_watchers,
            watchers_per_address=config.watchers_per_address, table_name=config.table_name,
        )
        self.takeover = takeover
        if takeover is not None:  # a seat of a running match taking over (gathering)
            self.game = takeover.session.game
        hosting = config.hosting(self.game, self.seed)
        self.node = self.node_cls(identity, self.seed, 0, hosting.constants)
        if takeover is None:
            self.node.host = self.hosting_cls(identity, hosting, 0)
        else:
            self.node.own = takeover
            self.node.host = self.hosting_cls(identity, hosting, 0, own=takeover,
                                              old=takeover.session.host)
        self.driver.node = self.node
        self._hosting = self.node.host
        self.driver.hosting = True
        self.driver.on_lobby = self._lobby_note
        self.driver.on_full = self._full
        self.port = 0
        self.full = trio.Event()
        self.lobby: list[LobbyEvent] = []
        self._lobby_changed = trio.Event()

    # ------------------------------------------------------------------ facade
    @property
    def agent(self) -> Agent | None:
        return self.driver.agent

    @agent.setter
    def agent(self, agent: Agent | None) -> None:
        self.driver.agent = agent
        if self.driver.me is not None:
            self.driver.me.agent = agent

    @property
    def hosting(self) -> Hosting:
        return self._hosting

    @property
    def me(self) -> LocalSeat | None:
        return self.driver.me

    @property
    def players(self) -> dict[int, Any]:
        return self.hosting.players

    @property
    def conns(self) -> dict[int, Any]:
        return self.driver.seat_conns

    @property
    def watchers(self) -> dict[int, Any]:
        return self.driver.watcher_conns

    @property
    def records(self) -> list[dict[str, Any]]:
        return [] if self.me is None else self.me.records

    @property
    def faults(self) -> list[tuple[int, str, str]]:
        return self.hosting.faults

    @property
    def sequencer(self) -> Any:
        return self.hosting.sequencer

    @property
    def confirmed(self) -> dict[int, int]:
        return self.hosting.confirmed

    @property
    def admission(self) -> Any:
        return self.driver.admission

    @property
    def stopped(self) -> Any:
        return self.driver.stopped

    def summary(self) -> dict[str, Any]:
        return self.hosting.summary(self.config.table_name)

    def announce(self, address: tuple[str, int]) -> bool:
        """List ``address`` as this host's own ``listen`` in record 0 instead of the one it
        listens at (its router's mapping of its port, as a joining seat announces its own:
        so the table's other seats reach it there after a host change, and it is a seat
        relay, PROTOCOL.md 4.7 step 7); whether it was taken (not once record 0 is made)."""
        own = self.hosting.players.get(0)
        if own is None or self.full.is_set() or self.driver.started.is_set():
            return False
        self.hosting.set_own_player(own.name, own.key, address)
        log.info("the host announces %s as its listen address", host_port(*address))
        return True

    async def handle(self, stream: FramedStream) -> None:
        """Serve one connection (from the listener, or one a relay paired)."""
        await self.driver.handle(stream)

    async def local_seat(self) -> LocalSeat:
        """The host's own seat, once the match has started."""
        await self.driver.started.wait()
        assert self.driver.me is not None
        return self.driver.me

    # ------------------------------------------------------------------ lobby
    def _lobby_note(self, kind: str, seat: int, name: str) -> None:
        if self.full.is_set():
            return
        if kind == "leave":
            name = next((e.name for e in reversed(self.lobby) if e.seat == seat), name)
        # kind "version": ``name`` is the refusal's text (a player of another release)
        self.lobby.append(LobbyEvent(kind, seat, name, len(self.hosting.players)))
        self._lobby_changed.set()
        self._lobby_changed = trio.Event()

    def _full(self) -> None:
        self.full.set()
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

    def announcement(self) -> Announcement | None:
        if self.full.is_set():
            return None
        cfg = self.config
        free = cfg.players - len(self.hosting.players)
        where = cfg.advertise or ("" if cfg.bind in ("", "0.0.0.0", "::") else cfg.bind)
        return Announcement(cfg.table_name, cfg.variant, free, self.port, host=where)

    # ------------------------------------------------------------------ run
    def _start(self, node: PeerNode, now: int) -> None:
        """In the pump: the lobby is full: record 0, the seat, its transcript."""
        node.wall_offset = self.driver.wall_offset()
        self.hosting.wall_offset = node.wall_offset
        writer = None
        if self.config.transcript is not None:
            writer = BackgroundWriter(self.config.transcript)
            if writer.count:
                writer.close()
                raise ValueError(f"transcript {self.config.transcript} already holds records")
        node.start_match(now)
        self.driver.adopt(node, writer)

    async def run(self, task_status: trio.TaskStatus[Host] = trio.TASK_STATUS_IGNORED) -> Any:
        """Serve until the match is over; return the host session's result."""
        cfg = self.config
        driver = self.driver
        raise_nofile_limit()
        lost = False
        try:
            async with trio.open_nursery() as nursery:
                driver.nursery = nursery
                self.listeners = await nursery.start(
                    partial(serve_framed, driver.handle, cfg.port, host=cfg.bind,
                            max_frame=hs.MAX_FRAME, listeners=self.listeners))
                self.port = self.listeners[0].socket.getsockname()[1]
                driver.own_relay = local_address(self.listeners)  # its seat relay (4.7 step 7)
                where = (cfg.listen_host or cfg.advertise or cfg.bind, self.port)
                self.hosting.set_own_player(cfg.name, self.identity.public_bytes(), where)
                if cfg.announce_to is not None:
                    addr, port = cfg.announce_to
                    addr = announce_target(cfg.bind, addr)
                    beacon = partial(announce, address=addr, port=port or DEFAULT_PORT)
                    nursery.start_soon(beacon, self.announcement)
                nursery.start_soon(driver.pump)
                task_status.started(self)
                if self.takeover is None:
                    await self.full.wait()
                    await driver.call(self._start)
                else:  # its watch's clocks start now
                    assert self.takeover is not None
                    self.node.host = self._hosting = self.hosting_cls(
                        self.identity, cfg.hosting(self.game, self.seed), driver.now(),
                        own=self.takeover, old=self.takeover.session.host,
                        wall_offset=driver.wall_offset())
                    driver.adopt(self.node, None)
                    self.full.set()
                me = driver.me
                assert me is not None
                own = self.node.own
                if own is not None and own.seat is not None:  # 4.7 step 7
                    nursery.start_soon(stand_by, own.session, own.seat,
                                       self.identity.public_bytes(), driver.handle)
                if driver.agent is not None:
                    me.agent = driver.agent
                    nursery.start_soon(me.act, driver.send_own)
                    nursery.start_soon(me.chatter, driver.send_own)
                await driver.ends()
                if self.hosting.stepped_back:
                    raise NoQuorum("no quorum of depose votes came: this seat does not host")
                if driver.ended is not None and not driver.host_done.is_set():
                    driver.close_all()  # deposed and handed to no seat: nothing left to serve
                    nursery.cancel_scope.cancel()
                    lost = True
                # every seat at the table gets up to its grace to say it holds the last record
                with trio.move_on_after(cfg.timers.grace_ms / 1000):
                    while driver.stopped is None and not self.hosting.all_done():
                        await driver.changed.wait()
                driver.close_all()
                with trio.move_on_after(cfg.linger_s):
                    while driver.seat_conns or driver.watcher_conns:
                        await driver.changed.wait()
                driver.over.set()
                nursery.cancel_scope.cancel()
        finally:
            driver.finish()
        if driver.stopped is not None:
            raise driver.stopped
        if lost:  # deposed, and no seat of the table took it back: no result, as for a seat
            raise HostLost(driver.ended)
        assert driver.me is not None
        return driver.me.session.result


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
