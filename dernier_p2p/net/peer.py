"""A peer: joins a table (or comes back to it), plays its seat, and hosts if its turn comes.

:func:`run_peer` joins a table by address (or an invite code's dialer) and plays until the
match is over, through a :class:`~.driver.Driver` around a sans-IO
:class:`~dernier_p2p.protocol.node.peer.PeerNode`: every record goes to the transcript and the
session (which checks it completely: a host that drops, reorders, forges or tampers is caught
and named), the seat's envelopes go to the host in counter order (again after a resume), and
the local agent is asked for a move whenever the seat may act. Everything about absence,
votes, censorship, deposition, failover and taking over is the node's liveness machine
(PROTOCOL.md 7.5, 7.6); this module opens what it asks for: connections to a host (resumes),
seat links (probes, ``depose`` votes), and its listeners, where other seats link to it and,
once it hosts, resume with it.

``PeerConfig.restore`` restarts a seat after a crash from its transcript (same identity and
seed); a seat that was the host when it crashed looks for the new host and rebuilds from its
records (its old transcript is kept beside as ``<transcript>.crashed``). On the Internet
(PROTOCOL.md 4.7) a seat that cannot be reached at its ``listen`` address stands by at the
relay its invite code named (``relay_standby``); a new host is tried at its announced address,
then at that relay.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import trio

from dernier_p2p.net import handshake as hs
from dernier_p2p.net import links
from dernier_p2p.net.address import host_port
from dernier_p2p.net.agent import Agent
from dernier_p2p.net.driver import DROPPED, Driver, Routes
from dernier_p2p.net.firewall import leaves
from dernier_p2p.net.framing import FramedStream, open_framed, serve_framed
from dernier_p2p.net.reach import new_host_dialer
from dernier_p2p.net.relay import keep_registered, seat_token
from dernier_p2p.net.seat import BackgroundWriter, LocalSeat
from dernier_p2p.net.seatrelay import local_address, relays_to, stand_by
from dernier_p2p.protocol.liveness.budgets import CENSOR_MS
from dernier_p2p.protocol.node.own import RestoreError
from dernier_p2p.protocol.node.peer import PeerNode
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.transcript import TranscriptError, read_transcript

__all__ = ["DROPPED", "HostLost", "Peer", "PeerConfig", "run_peer"]

log = logging.getLogger("dernier_p2p.net.peer")


class HostLost(Exception):
    """The match ended for this seat without a result: the host is gone and no seat took
    over, or the table is stuck (an incomplete match; nobody is ranked)."""


@dataclass
class PeerConfig:
    """A peer's settings: its ``name``, the address it announces for a host change
    (``listen``), its transcript file and Drbg seed. ``restore``: restart after a crash from
    ``transcript``. ``listen_optional``: a ``listen`` address that cannot be opened is told
    (:attr:`Peer.listen_problem`) and the seat goes on without it; ``listen_bind``: the local
    address to open it on. ``dial``: opens the connection to the table's first host instead of
    TCP to the address (an invite code's routes, see :mod:`.reach`); ``check_host``: refuses a
    host by its identity key, at the challenge and again at record 0. ``announce``: the address
    to announce instead of the one this seat listens at (the router's mapping). ``relay``: the
    relay of the table's invite code; ``relay_standby``: this seat stands by there while the
    match lasts. ``ack_s``: how long an idle seat waits to echo the head. ``censor_ms`` and
    ``constants``: the protocol's constants, settings for tests only. ``offload``: long
    records are applied in a worker thread."""

    name: str
    listen: tuple[str, int] | None = None
    transcript: str | os.PathLike[str] | None = None
    seed: bytes | None = None
    listen_optional: bool = False
    listen_bind: str | None = None
    connect_s: float = 5.0
    linger_s: float = 1.0
    restore: bool = False
    offload: bool = True
    dial: Callable[[], Awaitable[FramedStream]] | None = None
    check_host: Callable[[bytes], None] | None = None
    censor_ms: int = CENSOR_MS
    probe_s: float = links.PROBE_S
    announce: tuple[str, int] | None = None
    relay: tuple[str, int] | None = None
    relay_standby: bool = False
    ack_s: float = 2.0
    constants: dict[str, int] | None = None

    def all_constants(self) -> dict[str, int]:
        out = dict(self.constants or {})
        if self.censor_ms != CENSOR_MS:
            out["censor_ms"] = self.censor_ms
        if self.ack_s != 2.0:
            out["ack_ms"] = int(self.ack_s * 1000)
        return out


class HostView:
    """What a peer that took over shows as its host (``peer.host``): its seat."""

    def __init__(self, peer: Peer) -> None:
        self.peer = peer

    @property
    def me(self) -> LocalSeat | None:
        return self.peer.me

    @property
    def faults(self) -> list[tuple[int, str, str]]:
        """The envelopes this host refused: ``(seat, code, detail)``."""
        node = self.peer.driver.node
        return [] if node is None or node.host is None else node.host.faults


class Peer:
    """One peer (see the module docstring). Use :meth:`run`. ``node_cls`` is the sans-IO node
    it runs (a test may subclass it)."""

    node_cls: type[PeerNode] = PeerNode

    def __init__(
        self,
        identity: IdentityKey,
        address: tuple[str, int],
        agent: Agent | None,
        config: PeerConfig,
    ) -> None:
        self.identity = identity
        self.address = address
        self.config = config
        self.seed = config.seed if config.seed is not None else os.urandom(32)
        self.driver = Driver(identity, agent=agent, transcript=config.transcript,
                             offload=config.offload, connect_s=config.connect_s,
                             probe_s=config.probe_s, relay=config.relay)
        self.driver.routes = Routes(self._route)
        self.driver.on_hosting = self._hosting
        self.seat: int | None = None
        self.table: dict[str, Any] | None = None
        self.listeners: list[trio.SocketListener] | None = None
        self.listen_problem: str | None = None
        self.joined = trio.Event()
        self.host: HostView | None = None
        self._first_host: int | None = None
        self._nursery: trio.Nursery | None = None

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
    def me(self) -> LocalSeat | None:
        return self.driver.me

    @property
    def started(self) -> trio.Event:
        return self.driver.started

    @property
    def resumes(self) -> int:
        return self.driver.resumes

    @property
    def votes_sent(self) -> list[tuple[str, int | None]]:
        return self.driver.votes_sent

    @property
    def errors(self) -> list[tuple[str, str]]:
        return self.driver.errors

    @property
    def stream(self) -> FramedStream | None:
        return None if self.driver.up is None else self.driver.up.stream

    async def local_seat(self) -> LocalSeat:
        """This peer's seat, once the match has started (record 0 received)."""
        await self.driver.started.wait()
        assert self.driver.me is not None
        return self.driver.me

    async def send(self, env: dict[str, Any]) -> None:
        """Send an own envelope (through the node: in counter order, again after a resume)."""
        await self.driver.send_own(env)

    def _hosting(self, listening: bool) -> None:
        self.host = HostView(self) if listening else None

    # ------------------------------------------------------------------ routes
    def _route(self, seat: int) -> tuple[Callable[[], Awaitable[FramedStream]],
                                         Callable[[bytes], None] | None]:
        """How to reach seat ``seat`` as the host: the table's first host by the address or
        the code this seat joined with (until a host change), any other at its listed
        address, then the code's relay under its seat token, its key checked."""
        node = self.driver.node
        assert node is not None and node.own is not None
        session = node.own.session
        first = session.host == self._first_host and seat == self._first_host
        # the seat relays (4.7 step 7), and this seat's own last where ``seat`` stands by
        relays, own = relays_to(session, node.own.seat, seat, self.driver.own_relay)
        if first and (self.config.dial is not None or self.address[1] != 0):
            add = getattr(self.config.dial, "add_seat_relays", None)
            if add is not None:
                token = seat_token(session.game, session.keys[seat])
                add(relays, token)
                add_own = getattr(self.config.dial, "add_own_relay", None)
                if add_own is not None:
                    add_own(own, token)
            return self._open_first, self.config.check_host
        listen = links.address_of(session, seat)
        if listen is None:
            async def nowhere() -> FramedStream:
                raise OSError(f"seat {seat} gives no address")
            return nowhere, None
        dialer = new_host_dialer(listen, self.config.relay, session.game, session.keys[seat],
                                 relays, own)
        return dialer, dialer.check_host

    async def _open_first(self) -> FramedStream:
        if self.config.dial is not None:
            return await self.config.dial()
        return await open_framed(*self.address, hs.MAX_FRAME)

    # ------------------------------------------------------------------ listening
    async def _listen(self, where: str, port: int) -> tuple[str, int] | None:
        """Open this seat's listeners (links, and resumes once it hosts); the announced
        address, or None when it cannot and ``listen_optional`` says to go on without."""
        bind = self.config.listen_bind if self.config.listen_bind is not None else where
        try:
            self.listeners = await trio.open_tcp_listeners(port, host=bind or None)
        except OSError as exc:
            why = exc.strerror or exc
            self.listen_problem = f"cannot listen on {host_port(where, port)}: {why}"
            if not self.config.listen_optional:
                raise OSError(exc.errno, self.listen_problem) from None
            log.warning("seat %s: %s; this seat cannot host", self.seat, self.listen_problem)
            return None
        return where, self.listeners[0].socket.getsockname()[1]

    async def _listen_as_listed(self) -> None:
        """After a restart: listen again at the address the table lists for this seat."""
        node = self.driver.node
        assert node is not None and node.own is not None and node.own.seat is not None
        listed = links.address_of(node.own.session, node.own.seat)
        if listed is not None:
            await self._listen(*listed)

    def _serve(self) -> None:
        """Answer on the listeners (links; resumes once hosting) and stand by at the relay."""
        assert self._nursery is not None
        if self.listeners:
            self.driver.own_relay = local_address(self.listeners)  # its seat relay, 4.7 step 7
            self._nursery.start_soon(partial(
                serve_framed, self.driver.handle, max_frame=hs.MAX_FRAME,
                listeners=self.listeners))
        if self.config.relay is not None and self.config.relay_standby:
            self._nursery.start_soon(self._stand_by, self.config.relay)
        node = self.driver.node
        if node is not None and node.own is not None and node.own.seat is not None:
            self._nursery.start_soon(stand_by, node.own.session, node.own.seat,
                                     self.identity.public_bytes(), self.driver.handle)

    async def _stand_by(self, relay: tuple[str, int]) -> None:
        node = self.driver.node
        assert node is not None and node.own is not None

        def notify(kind: str, text: str) -> None:
            log.info("seat %s: %s", self.seat, text)

        token = seat_token(node.own.session.game, self.identity.public_bytes())
        await keep_registered(relay, token, self.driver.handle, notify=notify)

    # ------------------------------------------------------------------ joining
    async def _join(self) -> None:
        cfg = self.config
        driver = self.driver
        listen = None
        if cfg.listen is not None:  # listen now, so the announced address is really ours
            listen = await self._listen(*cfg.listen)
            if listen is not None and cfg.announce is not None:
                listen = cfg.announce
        offer = getattr(cfg.dial, "offer_reach", None)  # an invite code's Dialer
        if offer is not None:  # the host may call this seat back there (4.7 step 6)
            offer(_reachable(listen, cfg.announce), self.listeners)
        try:
            with trio.fail_after(cfg.connect_s):
                stream = await self._open_first()
                try:
                    self.seat, self.table = await driver.join(stream, cfg.name, listen,
                                                              cfg.check_host)
                except BaseException:
                    await trio.aclose_forcefully(stream)
                    raise
        finally:
            if offer is not None:  # seated: the listeners answer links from now on
                offer(None)
        log.info("joined %s as seat %d", self.address, self.seat)
        self.joined.set()
        built = trio.Event()
        problem: list[BaseException] = []

        def first(msg: dict[str, Any] | None) -> None:
            if built.is_set() or (msg is not None and msg.get("k") == "beat"):
                return  # (the lobby may be long: its connection beats meanwhile)
            try:
                if msg is None:
                    raise hs.PeerClosedBeforeStart()
                self._first_record(msg)
            except BaseException as exc:
                problem.append(exc)
            built.set()

        assert self._nursery is not None
        self._nursery.start_soon(driver.run_joined, first)
        await built.wait()
        if problem:
            raise problem[0]

    def _first_record(self, msg: dict[str, Any]) -> None:
        rec = msg.get("rec") if msg.get("k") == "rec" else None
        if msg.get("k") == "error":
            raise hs.remote_error(msg)
        if not isinstance(rec, dict) or rec.get("i") != 0:
            raise hs.NetError(hs.UNEXPECTED, "the host's first record is not record 0")
        cfg = self.config
        writer = None
        if cfg.transcript is not None:
            writer = BackgroundWriter(cfg.transcript)
            if writer.count:
                writer.close()
                raise ValueError(f"transcript {cfg.transcript} already holds records")
        driver = self.driver
        node = self.node_cls.seated(self.identity, self.seed, [rec], driver.now(), connected=True,
                                    constants=cfg.all_constants(),
                                    wall_offset=driver.wall_offset(), welcomed=self.seat)
        assert node.own is not None
        session = node.own.session
        if cfg.check_host is not None:
            cfg.check_host(session.table_body["players"][session.host]["key"])
        self._first_host = session.host
        if writer is not None:
            writer.append(rec)
        driver.adopt(node, writer)
        driver.post(lambda n, now: n.start(now))

    async def _restore(self) -> None:
        """Restart after a crash: rebuild the seat from its transcript (in a worker thread:
        every record is checked again), then resume (a seat that was the host looks for the
        new host to rebuild from its records)."""
        cfg = self.config
        if cfg.transcript is None:
            raise ValueError("restoring needs the transcript file")
        records = read_transcript(cfg.transcript, allow_torn_tail=True)
        if not records:
            raise TranscriptError(f"{cfg.transcript}: no record to restore from")
        driver = self.driver
        now = driver.now()
        try:
            node = await trio.to_thread.run_sync(partial(
                self.node_cls.seated, self.identity, self.seed, records, now, connected=False,
                constants=cfg.all_constants(), wall_offset=driver.wall_offset()))
        except RestoreError as exc:
            raise TranscriptError(str(exc)) from None
        assert node.own is not None
        self.seat = node.own.seat
        self._first_host = records[0]["h"]
        writer = None
        if not node.finished:
            writer = BackgroundWriter(cfg.transcript)
            if writer.count != len(records):
                writer.close()
                raise TranscriptError(f"{cfg.transcript}: changed while it was being restored")
        driver.adopt(node, writer)
        if node.finished:
            self.joined.set()
            log.info("seat %d: the match in %s is over", self.seat, cfg.transcript)
            driver.over.set()
            return
        await self._listen_as_listed()
        if node.rebuild_suffix == ".crashed":  # it hosted: back once the new host's records are
            driver.on_rebuilt = self.joined.set
        else:
            self.joined.set()
        log.info("seat %d restored %d records", self.seat, len(records))

    # ------------------------------------------------------------------ running
    async def run(self) -> Any:
        """Play until the match is over; return the session's result.

        Raises :class:`~dernier_p2p.protocol.errors.ProtocolError` when a record is refused
        (naming the seat at fault), :class:`HostLost` when the match ends for this seat without
        a result (no host, a stuck table), :class:`~.handshake.RemoteError` when the host
        refuses the handshake."""
        driver = self.driver
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = driver.nursery = nursery
                nursery.start_soon(driver.pump)
                if self.config.restore:
                    await self._restore()
                else:
                    await self._join()
                if not driver.over.is_set():
                    self._serve()
                    me = driver.me
                    assert me is not None
                    if driver.agent is not None:
                        me.agent = driver.agent
                        nursery.start_soon(me.act, driver.send_own)
                        nursery.start_soon(me.chatter, driver.send_own)
                    await driver.ends()
                    if driver.host_done.is_set():
                        await self._end_as_host()
                    elif driver.up is not None:
                        up = driver.up
                        up.close()
                        with trio.move_on_after(self.config.linger_s):
                            await up.sent.wait()
                await self._linger()
                node = driver.node
                if node is not None and node.own is not None:  # 4.7 step 7
                    timers = node.own.session.table_body["timers"]
                    await driver.carry_on(timers["grace_ms"] / 1000)
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            raise _single(group) from None
        finally:
            driver.finish()
            with trio.CancelScope(shield=True):
                for listener in self.listeners or ():
                    await trio.aclose_forcefully(listener)
        if driver.stopped is not None:
            raise driver.stopped
        if driver.ended is not None:
            raise HostLost(driver.ended)
        assert driver.me is not None
        return driver.me.session.result

    async def _linger(self) -> None:
        """A seat stopped with a proof (4.6) lends it to every seat with an address first; if
        each lend went out and every other seat but the host gives an address, it is done (the
        player is not kept waiting). Otherwise it answers links as long as
        :meth:`PeerNode.lingering` says (``stuck_ms`` after it stopped and after each probe
        since; while a seat it could not lend to has not probed it, up to ``2 * stuck_ms``),
        so that seat sees the proof when it probes: it sleeps to each deadline (a probe moves
        it on). A seat without an address learns of the proof only through a probe of a seat
        that lingers (PROTOCOL.md 22)."""
        driver = self.driver
        if driver.lending:
            await driver.lends_done.wait()
        node = driver.node
        if not driver.lend_failed and (node is None or not node.unshown):
            return
        left = driver.lingering()
        if left is not None and driver.me is not None and driver.stopped is not None:
            driver.me.note("showing-proof", None, round(left * 1000), str(driver.stopped))
        while left is not None:
            await trio.sleep(left)
            left = driver.lingering()

    async def _end_as_host(self) -> None:
        """This seat hosted the end of the match: it waits for the seats' ``done``."""
        driver = self.driver
        node = driver.node
        assert node is not None and node.host is not None and node.own is not None
        grace = node.own.session.table_body["timers"]["grace_ms"] / 1000
        with trio.move_on_after(grace):
            while driver.stopped is None and not node.host.all_done():
                await driver.changed.wait()
        driver.close_all()
        with trio.move_on_after(self.config.linger_s):
            while driver.seat_conns or driver.watcher_conns:
                await driver.changed.wait()


def _single(group: BaseExceptionGroup) -> BaseException:
    """The one exception inside nested groups (so callers see HostLost, ProtocolError, ...);
    the group itself when there are several."""
    inner = leaves(group)
    return inner[0] if len(inner) == 1 else group


async def run_peer(
    identity: IdentityKey,
    address: tuple[str, int],
    agent: Agent | None,
    config: PeerConfig,
) -> Any:
    """Join the table at ``address`` and play until the match is over (see :class:`Peer`)."""
    return await Peer(identity, address, agent, config).run()


def _reachable(listen: tuple[str, int] | None,
               announce: tuple[str, int] | None) -> tuple[str, int] | None:
    """Where a joining seat can be called back (PROTOCOL.md 4.7 step 6): the address it
    announces instead of its own (its router's mapping), else its own if that is a global
    address; None if neither (or it does not listen)."""
    if listen is None:
        return None
    if announce is not None:
        return listen  # the announced address, set in place of the one listened at
    try:
        return listen if ipaddress.ip_address(listen[0]).is_global else None
    except ValueError:
        return None
