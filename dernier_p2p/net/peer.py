"""A peer: connects to the host, applies the records it relays, sends its own envelopes.

:func:`run_peer` joins a table by address and plays until the match is over: every record goes
to the peer's transcript and its session (which checks it completely: a host that drops,
reorders, forges or tampers is caught and named), the session's envelopes go back to the host in
counter order, and the local agent is asked for a move whenever the seat may act. An idle peer
sends an ``ack`` every ``ack_s`` when records other than acks came since its last envelope, so
the host's view of its history is echoed (and a fork is caught) even when it has nothing to say.

An ``error`` frame from the host while this seat's move is the oldest envelope not sequenced
refuses that move: the agent is told (``refused``, see :mod:`.agent`) and asked again, and the
envelopes sent after the move are signed again from its counter (see
:meth:`~.seat.LocalSeat.refused`). A front-end follows the seat with ``await peer.local_seat()``.

A dropped connection is retried (``resume`` with the index of the last record held) until the
table's ``grace_ms`` runs out; envelopes sent but never sequenced are sent again once the peer
has caught up.

Votes (PROTOCOL.md 7.5): the peer measures every wait with its own clock. A seat the table has
waited on for ``turn_ms`` gets this seat's ``timeout`` vote; a seat the host reports dropped
(``status``) and that has authored nothing for ``grace_ms`` since gets its ``left`` vote; both go
to the host as ``vote`` frames, unless a probe over a
seat link (:mod:`.links`) shows the seat present: answered at all for ``left``, or holding a
valid envelope the host has not sequenced, which is censorship. Censorship (that envelope, or
this seat's own, unsequenced for ``censor_ms``), or at three seats or more a host whose own seat
the table has waited on for ``turn_ms + grace_ms`` (it did not sequence the ``timeout`` votes
about its seat, which it must: it is timed out like any seat, unprobed), makes the peer vote
``depose`` instead and leave
the host for the next one, which it tries for ``grace_ms + turn_ms + censor_ms`` (the next host
sees the censorship later, by its own clock). A peer that has applied no record for
``stuck_ms`` (:func:`~dernier_p2p.protocol.votes.stuck_ms`: the table is stuck on a split vote)
votes ``abandon``, once per record; if ``grace_ms`` more pass without a record (no quorum, or a
host that will not end the match), it ends with :class:`HostLost` (nobody ranked). A peer
with a ``listen`` address answers links while it is not the host.

Host change: when the host does not come back within ``grace_ms``, or censors, the seats try
the candidates (``ChainChecker.candidates``: the seats after the host still at the table with a
listen address) in turn, each for ``grace_ms``; the first that is there hosts (so the table goes
on when the host and the next host are lost together). A seat trying a candidate sends it its
``depose`` vote over a link every :data:`URGE_S`; a candidate restarted after a crash, not
resumed since, that holds such votes of a quorum (its own included) takes over at once, so a
next host restarting behind the others is not late for them (PROTOCOL.md 7.6). That peer listens on
the address it announced in its hello (opened when it joined), waits up to ``grace_ms`` for the
others to resume, takes from them any records it lacks (they are signed by the old host, so
checked like any other), collects their ``depose`` votes (each peer votes again after every
record it applies until the host change), then sequences ``host_change`` {old, new, votes}
(signed with its own key); its own envelopes the old host never sequenced are signed again after
the host change. The old host stays a seat: it may come back and resume with the new host within
``grace_ms``. The others connect to the new host's announced address and resume there. At two
seats no majority can depose: the peer waits another ``grace_ms`` for the host, then ends with
:class:`HostLost` (nobody ranked). If no candidate hosts, :class:`HostLost` ends the peer.
Once the match is over the peer sends ``done`` (PROTOCOL.md 4.3) so the host may close.

On the Internet (PROTOCOL.md 4.7): a seat that cannot be reached at its ``listen`` address (no
router mapping) stands by at the relay its invite code named (``relay_standby``), under its
:func:`~.relay.seat_token`, while the match lasts: connections the relay pairs with it are
served as on its listen address (links, then resumes once it hosts). After a host change a
seat that knows that relay (``relay``) tries the new host's announced address, then the relay.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio

from dernier_p2p.net import handshake as hs
from dernier_p2p.net import links
from dernier_p2p.net.address import host_port
from dernier_p2p.net.agent import Agent
from dernier_p2p.net.firewall import leaves
from dernier_p2p.net.framing import FramedStream, FrameError, PeerClosed, open_framed
from dernier_p2p.net.host import Host, HostConfig
from dernier_p2p.net.reach import Dialer, new_host_dialer
from dernier_p2p.net.relay import keep_registered, seat_token
from dernier_p2p.net.seat import LocalSeat
from dernier_p2p.net.timers import Deadlines, Timers, acting_author
from dernier_p2p.protocol.chain import ChainChecker
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.messages import is_progress
from dernier_p2p.protocol.ready import check_ready_frame
from dernier_p2p.protocol.votes import (
    CENSOR_MS,
    Tally,
    check_vote_frame,
    quorum,
    stuck_ms,
    vote_frame,
    vote_ok,
)
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.transcript import read_transcript

log = logging.getLogger("dernier_p2p.net.peer")

DROPPED = (PeerClosed, trio.BrokenResourceError, trio.ClosedResourceError, OSError)
"""How a broken connection shows (FrameError, a ValueError, is not among them)."""


FIND_HOST_MS = 1000
"""How long a restarted seat tries each later candidate before it takes over itself."""
URGE_S = 1.0
"""How often a seat trying a candidate sends it its ``depose`` vote again over a link."""
CANDIDATE_RETRY_S = 0.25
"""The longest pause between a seat's resumes with a candidate that does not host yet (it may
take over any moment: a pause of seconds would waste much of the grace it is given)."""


class HostLost(Exception):
    """The host did not come back within the grace period."""


@dataclass
class PeerConfig:
    """A peer's settings: its ``name``, the address it announces for a host change
    (``listen``), its transcript file and Drbg seed, and the retry pace after a drop.
    ``restore``: restart after a crash from ``transcript`` (same identity and ``seed``) and
    resume with the host instead of joining; a seat that was hosting when it crashed resumes
    with the next host instead and rebuilds from that host's records (its own transcript may
    hold records nobody else received; it is kept beside as ``<transcript>.crashed``). After a
    drop the peer retries with a growing pause (``retry_s`` doubling up to ``retry_max_s``).
    ``listen_optional``: a ``listen`` address that cannot be opened is told
    (:attr:`Peer.listen_problem`) and the seat goes on without it (it cannot take over as
    host); ``listen_bind``: the local address to open it on (default: the listen host).
    ``dial``: opens the connection to the host instead
    of TCP to the address (e.g. an invite code's routes, see :mod:`.reach`), until a host
    change; ``check_host``: refuses a host by its identity key (raises), at the challenge and
    again at record 0. ``announce``: the address to announce instead of the one this seat
    listens at (the router's mapping of it, see :mod:`.portmap`). ``relay``: the relay of the
    table's invite code, through which a new host is tried after its announced address;
    ``relay_standby``: this seat stands by there while the match lasts (it has no mapping)."""

    name: str
    listen: tuple[str, int] | None = None
    transcript: str | os.PathLike[str] | None = None
    seed: bytes | None = None
    retry_s: float = 0.05
    retry_max_s: float = 2.0
    listen_optional: bool = False
    listen_bind: str | None = None
    connect_s: float = 5.0
    linger_s: float = 1.0
    ack_s: float = 2.0
    restore: bool = False
    offload: bool = False
    dial: Callable[[], Awaitable[FramedStream]] | None = None
    check_host: Callable[[bytes], None] | None = None
    censor_ms: int = CENSOR_MS
    probe_s: float = links.PROBE_S
    announce: tuple[str, int] | None = None
    relay: tuple[str, int] | None = None
    relay_standby: bool = False


class Deposing(Exception):
    """This seat votes to depose the host (censorship): it leaves it for the next host."""


class Peer:
    """One peer's connection to the host and its local seat (see :func:`run_peer`)."""

    def __init__(
        self,
        identity: IdentityKey,
        address: tuple[str, int],
        agent: Agent | None,
        config: PeerConfig,
    ) -> None:
        self.identity = identity
        self.address = address
        self.agent = agent
        self.config = config
        self.seed = config.seed if config.seed is not None else os.urandom(32)
        self.stream: FramedStream | None = None
        self.me: LocalSeat | None = None
        self.seat: int | None = None
        self.table: dict[str, Any] | None = None
        self.errors: list[tuple[str, str]] = []  # error frames received from the host
        self.resumes = 0
        self.listeners: list[trio.SocketListener] | None = None
        self.host: Host | None = None  # set when this peer takes over as host
        self._act_scope = trio.CancelScope()
        self.joined = trio.Event()  # set once seated (``seat`` known)
        self.started = trio.Event()  # set once the seat's session exists (``me``)
        self._tx, self._rx = trio.open_memory_channel[bytes](math.inf)
        self.sent_at: dict[int, float] = {}  # own counter -> when first sent (own clock)
        self.awaited: Deadlines | None = None  # who the table waits on, by this seat's clock
        self.last_seen: dict[int, float] = {}  # seat -> when its last record came
        self.dropped_at: dict[int, float] = {}  # seat -> when the host reported it dropped
        self.pending_seen: dict[tuple[int, int], float] = {}  # (seat, n) held by the host
        self.held_probe: dict[int, float] = {}  # seat -> no new probe before (it showed one)
        self.last_record_at = 0.0
        self.held: dict[tuple[int, int], list[int]] = {}  # (seat, n) -> [head index, newer]
        self.voted: set[tuple[str, int | None, int]] = set()
        self.votes_sent: list[tuple[str, int | None]] = []  # (kind, target) of every vote sent
        self.depose_votes = Tally()  # depose votes other seats sent this seat (the next host)
        self.deposing: int | None = None  # the host this seat votes to depose
        self._links = trio.CancelScope()
        self._dial = config.dial
        self.listen_problem: str | None = None  # why this seat could not listen, if it could not
        self._link_server: links.LinkServer | None = None
        self._serving_links = False
        self._host_wait: trio.CancelScope | None = None  # a wait for the lost host, cut short
        # when a quorum of the seats asks this seat to host (see :meth:`_asked_to_host`)
        self._nursery: trio.Nursery | None = None  # the running peer's tasks

    async def _open(self) -> FramedStream:
        """A new connection to the host: by the configured dialer, else TCP to ``address``."""
        if self._dial is not None:
            return await self._dial()
        return await open_framed(*self.address, hs.MAX_FRAME)

    async def local_seat(self) -> LocalSeat:
        """This peer's seat, once the match has started (record 0 received)."""
        await self.started.wait()
        assert self.me is not None
        return self.me

    # ------------------------------------------------------------------ sending
    async def send(self, env: dict[str, Any]) -> None:
        """Queue an own envelope for the host, in counter order; it is remembered until its
        record comes back (and sent again after a resume)."""
        assert self.me is not None
        self.me.sent(env)
        self.sent_at.setdefault(env["n"], trio.current_time())
        self._hold(env)
        self._tx.send_nowait(hs.pack({"k": "env", "env": env}))

    async def _sender(self) -> None:
        """Write queued envelopes in order. A broken connection is left to the receiving loop
        (what was lost is sent again after the resume)."""
        async for payload in self._rx:
            stream = self.stream
            if stream is None:
                continue
            try:
                await stream.send(payload)
            except DROPPED:
                pass

    def _drain(self) -> None:
        """Forget queued frames (all of them are sent again by the resume)."""
        while True:
            try:
                self._rx.receive_nowait()
            except trio.WouldBlock:
                return

    # ------------------------------------------------------------------ records
    async def _apply(self, rec: Any) -> list[dict[str, Any]]:
        assert self.me is not None
        return await self.me.receive(rec, int(trio.current_time() * 1000))

    def _on_status(self, msg: dict[str, Any]) -> None:
        """A ``status`` frame: kept for the front-end if well formed, else logged and ignored
        (it is informative only and changes nothing)."""
        status = hs.check_status(msg, self.me.session.n if self.me is not None else 0)
        if status is None:
            log.warning("seat %s: malformed status frame from the host ignored", self.seat)
            return
        assert self.me is not None
        seat, state, grace = status
        self.me.note_status(seat, state, grace)
        if state == "dropped":
            self.dropped_at.setdefault(seat, trio.current_time())
        else:
            self.dropped_at.pop(seat, None)

    def _on_ready(self, msg: dict[str, Any]) -> None:
        """A relayed ``ready`` frame (PROTOCOL.md 18): kept if it checks, else logged and
        ignored (it only shortens a wait; a bad one just lets the window run its time)."""
        assert self.me is not None
        try:
            seat, at = check_ready_frame(msg, self.me.session.keys, self.me.session.game)
        except ProtocolError as exc:
            log.warning("seat %s: ready frame ignored: %s", self.seat, exc.detail)
            return
        self.me.heard_ready(seat, at)

    def _send_ready(self, frame: dict[str, Any]) -> None:
        """This seat's ``ready`` frame to the host (or, once hosting, to every seat)."""
        if self.host is not None:
            self.host._own_ready(frame)
        else:
            self._tx.send_nowait(hs.pack(frame))

    async def _on_message(self, msg: dict[str, Any]) -> None:
        if msg["k"] == "status":
            self._on_status(msg)
            return
        if msg["k"] == "ready" and self.me is not None:
            self._on_ready(msg)
            return
        if msg["k"] != "rec" or set(msg) != {"k", "rec"}:
            raise hs.NetError(hs.UNEXPECTED, f"unexpected frame {msg['k']!r} from the host")
        for env in await self._apply(msg["rec"]):
            await self.send(env)
        self._watch(msg["rec"])

    def _watch(self, rec: dict[str, Any]) -> None:
        """After a record: who the table waits on and who showed itself, by this seat's clock;
        while deposing, a fresh ``depose`` vote for the new host."""
        assert self.me is not None
        session = self.me.session
        now = trio.current_time()
        if is_progress(rec["env"]["body"]):  # talk and head echoes are no progress (7.5)
            self.last_record_at = now
        author = rec["env"]["seat"]
        self.last_seen[author] = now
        if author == self.seat:
            self.sent_at = {n: t for n, t in self.sent_at.items() if n in self.me.unsequenced}
        head = session.chain.index_of(rec["env"]["head"])
        for key, seen in list(self.held.items()):
            if session.chain.next_counter(key[0]) > key[1]:
                del self.held[key]  # sequenced
            elif author != key[0] and head is not None and head > seen[0]:
                seen[1] += 1  # an envelope written after a newer state went first
        if self.awaited is None:
            self.awaited = Deadlines(session.table_body["timers"]["turn_ms"])
        self.awaited.update(session.waiting_on(), int(now * 1000), acting_author(rec))
        if self.deposing is not None and session.host == self.deposing:
            self._vote("depose", self.deposing)
        elif self.deposing is not None:
            self.deposing = None  # the host change is through

    def _vote(self, kind: str, target: int | None) -> None:
        """Send this seat's vote to the host (once per state of the chain)."""
        assert self.me is not None
        key = (kind, target, self.me.session.chain.vote_since(kind, target))  # the vote's after
        if key in self.voted and kind != "depose":
            return  # sent already: not signed again for nothing (the voter asks every step)
        vote = self.me.session.vote(kind, target)
        self.voted.add(key)
        self.votes_sent.append((kind, target))
        log.info("seat %s votes %s about seat %s", self.seat, kind, target)
        self._tx.send_nowait(hs.pack(vote_frame(kind, target, vote)))

    async def _receive(self) -> dict[str, Any]:
        """The next message from the host; error frames are logged and skipped."""
        assert self.stream is not None
        while True:
            try:
                return await hs.receive_message(self.stream)
            except hs.RemoteError as exc:
                log.warning("seat %s: host refused a message: %s: %s", self.seat, exc.code,
                            exc.detail)
                self.errors.append((exc.code, exc.detail))
                if self.me is not None:  # the agent is told, counters are mended
                    for env in self.me.refused(exc.code, exc.detail):
                        self._tx.send_nowait(hs.pack({"k": "env", "env": env}))

    # ------------------------------------------------------------------ connecting
    async def _join(self) -> None:
        cfg = self.config
        listen = None
        if cfg.listen is not None:  # listen now, so the announced address is really ours
            listen = await self._listen(*cfg.listen)
            if listen is not None and cfg.announce is not None:
                listen = cfg.announce  # the router forwards it here
        with trio.fail_after(cfg.connect_s):
            self.stream = await self._open()
            self.seat, self.table = await hs.join(
                self.stream, self.identity, cfg.name, listen, cfg.check_host
            )
        log.info("joined %s as seat %d", self.address, self.seat)
        self.joined.set()
        msg = await self._receive()  # the match starts when the table is full
        rec = msg.get("rec") if msg["k"] == "rec" else None
        if not isinstance(rec, dict) or rec.get("i") != 0:
            raise hs.NetError(hs.UNEXPECTED, "the host's first record is not record 0")
        self.me = LocalSeat(
            self.identity, self.seat, rec, self.seed, self.agent, self.config.transcript,
            self.config.offload,
        )
        if cfg.check_host is not None:  # record 0, checked and signed by the host's key
            session = self.me.session
            cfg.check_host(session.table_body["players"][session.host]["key"])
        self.me.pace.send = self._send_ready
        self.started.set()
        for env in self.me.start():
            await self.send(env)

    async def _listen(self, where: str, port: int) -> tuple[str, int] | None:
        """Open this seat's listeners (to take over as host); the announced address, or None
        when it cannot and ``listen_optional`` says to go on without."""
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

    async def _restore(self) -> bool:
        """Restart after a crash: rebuild the seat from the transcript, then resume (a seat
        that was the host resumes with the next host, see :meth:`_rebuild`); True if this seat
        then hosted the rest of the match (the next host in turn)."""
        cfg = self.config
        if cfg.transcript is None:
            raise ValueError("restoring needs the transcript file")
        records = read_transcript(cfg.transcript, allow_torn_tail=True)
        if records and records[-1]["h"] == self._seat_of(records[0]):
            done = LocalSeat.from_records(self.identity, self.seed, self.agent, records)
            if not done.finished:
                await self._rebuild(records)
                return False
            self.me = done  # it crashed after the match was over: nothing to fetch
        else:
            self.me = LocalSeat.restore(self.identity, self.seed, self.agent, cfg.transcript)
        self.me.offload = cfg.offload
        self.seat = self.me.seat
        if self.me.finished:  # the match ended before the crash: its transcript is whole
            self.joined.set()
            self.started.set()
            log.info("seat %d: the match in %s is over", self.seat, cfg.transcript)
            return False
        session = self.me.session
        moved = session.host != self.me.records[0]["h"]  # a host change since the table
        if moved or (self.address[1] == 0 and self._dial is None):  # the current host's
            listed = links.address_of(session, session.host)
            if listed is None:
                raise HostLost(f"seat {session.host} hosts and the table lists no address")
            self.address = listed
            if moved:  # not the code's host any more: its address, or the relay
                self._dial = self._new_host_dialer(session.host, (listed[0], listed[1]))
        await self._listen_as_announced()
        self.joined.set()
        self.me.pace.send = self._send_ready
        self.started.set()
        log.info("seat %d restored %d records", self.seat, len(self.me.records))
        self._start_links()  # the others' depose votes may come while it waits for the host
        return await self._reconnect(self.me.session.table_body["timers"]["grace_ms"])

    def _seat_of(self, table_record: dict[str, Any]) -> int | None:
        try:
            keys = [p["key"] for p in table_record["env"]["body"]["players"]]
            return keys.index(self.identity.public_bytes())
        except (KeyError, TypeError, ValueError):
            return None

    async def _listen_as_announced(self) -> None:
        """After a restart: listen again at the address the table lists for this seat."""
        assert self.me is not None and self.seat is not None
        listed = links.address_of(self.me.session, self.seat)
        if listed is not None:
            await self._listen(*listed)

    async def _rebuild(self, crashed: list[dict[str, Any]]) -> None:
        """This seat was the host when it crashed: resume with the next host (as an ordinary
        seat, PROTOCOL.md 7.6) asking for every record (``have`` -1), rebuild the seat from
        them, and start the transcript afresh from them (the old one, which may hold records
        that never reached anyone, is kept as ``<transcript>.crashed``)."""
        cfg = self.config
        assert cfg.transcript is not None
        checker = LocalSeat.from_records(self.identity, self.seed, None, crashed[:1])
        table = checker.session.table_body
        chain = ChainChecker(checker.session.game, checker.session.keys, checker.session.keys)
        for rec in crashed:
            chain.feed(rec)
        self.seat = checker.seat
        grace_ms = table["timers"]["grace_ms"]
        candidates = chain.candidates()
        if not candidates:
            raise HostLost("this seat hosted and no other seat can take over")
        got = None
        for k, new in enumerate(candidates):  # the first: the others' wait, then gathering
            listen = links.address_of(checker.session, new)
            assert listen is not None  # a candidate announced an address
            self.address = listen
            self._dial = None
            got = await self._fetch_all((2 if k == 0 else 1) * grace_ms / 1000)
            if got is not None:
                break
        if got is None:
            raise HostLost("no seat took over as host")
        stream, seat, records = got
        if seat != self.seat:
            raise hs.NetError(hs.UNEXPECTED, f"resumed as seat {seat}")
        self.me = LocalSeat.from_records(self.identity, self.seed, self.agent, records)
        self.me.offload = cfg.offload
        path = os.fspath(cfg.transcript)
        os.replace(path, path + ".crashed")
        self.me.keep_in(path)
        self.stream = stream
        await self._listen_as_announced()
        self.joined.set()
        self.me.pace.send = self._send_ready
        self.started.set()
        self.resumes += 1
        log.info("seat %d (the old host) resumed with seat %s at record %d", self.seat, new,
                 len(records) - 1)
        for env in self.me.finish_restore():
            await self.send(env)

    async def _fetch_all(
        self, wait_s: float
    ) -> tuple[FramedStream, int, list[dict[str, Any]]] | None:
        """Resume at ``address`` with ``have`` -1, retrying for ``wait_s``: the stream, the seat
        and every record; None if nobody answered as host in time."""
        deadline = trio.current_time() + wait_s
        pause = self.config.retry_s
        while True:
            try:
                with trio.fail_at(deadline):
                    stream = await self._open()
                    try:
                        seat, last = await hs.rejoin(stream, self.identity, -1)
                        records: list[dict[str, Any]] = []
                        while len(records) <= last:
                            msg = await hs.receive_message(stream)
                            if msg["k"] == "rec" and set(msg) == {"k", "rec"}:
                                records.append(msg["rec"])
                    except BaseException:
                        await trio.aclose_forcefully(stream)
                        raise
                return stream, seat, records
            except trio.TooSlowError:
                log.info("seat %s: no new host at %s in time", self.seat, self.address)
                return None
            except (*DROPPED, hs.NetError, FrameError) as exc:
                log.info("seat %s: resume with the new host failed: %s", self.seat, exc)
                await trio.sleep(pause)
                pause = min(pause * 2, self.config.retry_max_s)

    async def _resume(
        self, grace_ms: int, yield_to_quorum: bool = False, max_pause_s: float | None = None
    ) -> None:
        """Reconnect and catch up, retrying until ``grace_ms`` has passed (pausing at most
        ``max_pause_s`` between tries, default ``retry_max_s``); HostLost after.
        ``yield_to_quorum``: HostLost at once, before a host has answered, when a quorum asks
        this seat to host instead (:meth:`_asked_to_host`)."""
        assert self.me is not None
        asked = trio.CancelScope()
        try:
            with asked:
                if yield_to_quorum and self._asked_to_host():
                    asked.cancel()
                await self._reach_host(grace_ms, asked if yield_to_quorum else None,
                                       max_pause_s)
        finally:
            self._host_wait = None
        if asked.cancelled_caught:
            raise HostLost("a quorum of the seats votes to depose the host and asks this seat "
                           "to host")
        self.resumes += 1
        if self.last_record_at:
            self.last_record_at = trio.current_time()  # the stuck clock counts while connected
        log.info("seat %d resumed at record %d", self.seat, len(self.me.records) - 1)
        self._drain()
        for env in self.me.resend():
            await self.send(env)
        if self.me.replaying is not None:  # after a restart: what the crash lost
            for env in self.me.finish_restore():
                await self.send(env)

    async def _reach_host(
        self, grace_ms: int, asked: trio.CancelScope | None, max_pause_s: float | None
    ) -> None:
        """Open a connection to the host, resume and catch up, retrying until ``grace_ms``
        has passed (HostLost after). While no host has answered, ``asked`` (if any) is
        :attr:`_host_wait`, which a quorum asking this seat to host cancels."""
        assert self.me is not None
        deadline = trio.current_time() + grace_ms / 1000
        pause = self.config.retry_s
        most = self.config.retry_max_s if max_pause_s is None else max_pause_s
        while True:
            if self.stream is not None:
                await trio.aclose_forcefully(self.stream)
                self.stream = None
            self._host_wait = asked
            try:
                with trio.fail_at(deadline):
                    stream = await self._open()
                    have = len(self.me.records) - 1
                    check = getattr(self._dial, "check_host", None)  # a code's host, or the new
                    try:
                        seat, last = await hs.rejoin(stream, self.identity, have, check)
                    except BaseException:
                        await trio.aclose_forcefully(stream)
                        raise
                    self._host_wait = None  # a host answered: no quorum cuts this short now
                    if seat != self.seat:
                        await trio.aclose_forcefully(stream)
                        raise hs.NetError(hs.UNEXPECTED, f"resumed as seat {seat}")
                    for rec in self.me.records[last + 1 :]:  # a new host may lack some
                        await hs.send_message(stream, {"k": "rec", "rec": rec})
                    self.stream = stream
                    while len(self.me.records) <= last:
                        await self._on_message(await self._receive())
                return
            except trio.TooSlowError:
                raise HostLost(f"host {self.address} not back within {grace_ms} ms") from None
            except hs.RemoteError as exc:
                if exc.code == hs.UNKNOWN_KEY:  # this seat is out of the match
                    raise
                log.info("seat %s: resume refused: %s", self.seat, exc)
            except (*DROPPED, hs.NetError, FrameError) as exc:
                log.info("seat %s: resume failed: %s", self.seat, exc)
            await trio.sleep(pause)
            pause = min(pause * 2, most)

    # ------------------------------------------------------------------ running
    async def run(self) -> Any:
        """Play until the match is over; return the session's result.

        Raises :class:`~dernier_p2p.protocol.errors.ProtocolError` when a record is refused
        (naming the seat at fault; the host is told by an error frame), :class:`HostLost` when
        the host does not come back, :class:`~.handshake.RemoteError` when the host refuses
        the handshake.
        """
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._sender)
                hosted = False
                if self.config.restore:
                    hosted = await self._restore()
                else:
                    await self._join()
                assert self.me is not None
                grace_ms = self.me.session.table_body["timers"]["grace_ms"]
                if self.agent is not None and not hosted:
                    nursery.start_soon(self._act)
                nursery.start_soon(self._acker)
                if self.listeners is not None and not hosted:
                    self._start_links()
                    if self.config.relay is not None and self.config.relay_standby:
                        nursery.start_soon(self._stand_by, self.config.relay)
                deposed: list[int] = []
                if not hosted:
                    nursery.start_soon(self._voter, deposed)
                while not self.me.finished and not hosted:
                    try:
                        if deposed:
                            deposed.clear()
                            raise Deposing()
                        await self._on_message(await self._receive())
                    except Deposing:
                        log.warning("seat %d: the host censors or stalls: deposing it", self.seat)
                        hosted = await self._failover(grace_ms, deposing=True)
                    except DROPPED as exc:
                        if deposed:
                            continue
                        log.warning("seat %d: connection to the host lost: %s", self.seat, exc)
                        self.me.note_status(self.seat, "dropped", grace_ms)
                        hosted = await self._reconnect(grace_ms)
                    except ProtocolError as exc:
                        await self._report(exc)
                        raise
                if not hosted:
                    await self._done()
                nursery.cancel_scope.cancel()
            return self.me.session.result
        except BaseExceptionGroup as group:
            raise _single(group) from None
        finally:
            if self.me is not None:
                self.me.close()  # the transcript is complete on disk before anything else
            with trio.CancelScope(shield=True):
                if self.stream is not None:
                    await trio.aclose_forcefully(self.stream)
                for listener in self.listeners or ():
                    await trio.aclose_forcefully(listener)

    async def _reconnect(self, grace_ms: int) -> bool:
        """Resume with the host, or after ``grace_ms`` with the next one (:meth:`_failover`);
        True once this peer has hosted the rest of the match."""
        assert self.me is not None
        try:
            await self._resume(grace_ms, yield_to_quorum=True)
        except HostLost as lost:
            log.warning("seat %d: %s", self.seat, lost)
            if await self._failover(grace_ms):
                return True
        self.me.note_status(self.seat, "back", 0)
        return False

    async def _acker(self) -> None:
        """Every ``ack_s``, echo the head if this seat has been silent since records came."""
        assert self.me is not None
        while True:
            await trio.sleep(self.config.ack_s)
            if self.host is not None:
                return  # this seat hosts now
            env = self.me.ack()
            if env is not None:
                await self.send(env)

    # ------------------------------------------------------------------ links and votes
    def _start_links(self) -> None:
        """Answer links on this seat's listen address from now on (once)."""
        if self._serving_links or self.listeners is None or self._nursery is None:
            return
        self._serving_links = True
        self._nursery.start_soon(self._serve_links)

    async def _serve_links(self) -> None:
        """Answer probes and take ``depose`` votes on this seat's listen address, until it
        hosts."""
        assert self.me is not None and self.listeners is not None
        server = links.LinkServer(
            self.identity, self.me.session, self.me.resend, self._on_link_vote)
        self._link_server = server
        with self._links:  # links.serve_links leaves the listeners open for the host
            await links.serve_links(self.listeners, server)

    async def _stand_by(self, relay: tuple[str, int]) -> None:
        """Stand by at ``relay`` as this seat's listen address would (see the module
        docstring), registering again after a loss, until the match ends."""
        assert self.me is not None

        def notify(kind: str, text: str) -> None:
            log.info("seat %s: %s", self.seat, text)

        token = seat_token(self.me.session.game, self.identity.public_bytes())
        await keep_registered(relay, token, self._relayed, notify=notify)

    async def _relayed(self, stream: FramedStream) -> None:
        """A connection the relay paired with this seat: the host's once this seat hosts,
        else a link."""
        if self.host is not None:
            await self.host.handle(stream)
        elif self._link_server is not None and not self._links.cancel_called:
            await self._link_server.handle(stream)

    def _new_host_dialer(self, seat: int, listen: tuple[str, int]) -> Dialer:
        """How to reach ``seat``, the new host: its announced address, then (if this seat
        knows the table's relay) the relay under its seat token; a host at either with another
        key than ``seat``'s is refused (WRONG_HOST) and the resume tries again."""
        assert self.me is not None
        session = self.me.session
        return new_host_dialer(listen, self.config.relay, session.game, session.keys[seat])

    def _on_link_vote(self, seat: int, msg: dict[str, Any]) -> None:
        """A ``vote`` frame over a link: kept if it is a ``depose`` vote of that seat about the
        current host (this seat may be the next host)."""
        assert self.me is not None
        session = self.me.session
        try:
            kind, target, vote = check_vote_frame(msg, session.n)
        except ProtocolError:
            return
        if kind == "depose" and vote["seat"] == seat and target == session.host and vote_ok(
                vote, session.keys[seat], session.game, kind, target):
            log.info("seat %s: seat %d votes to depose host %d", self.seat, seat, target)
            self.depose_votes.add(kind, target, vote)
            if self._host_wait is not None and self._asked_to_host():
                self._host_wait.cancel()  # stop waiting for the host: take over

    def _asked_to_host(self) -> bool:
        """Whether this seat, a candidate restarted after a crash and not resumed with a host
        since (it cannot measure how long its connection has been down), holds ``depose``
        votes about the host from other seats that with its own make a quorum (PROTOCOL.md
        7.6): those seats try it as the new host now, so it takes over at once. A vote counts
        unless this seat holds a record of the host newer than the vote's ``after`` (a vote
        past this seat's last record counts: it is fresh once the voter has forwarded what this
        seat lacks)."""
        assert self.me is not None and self.seat is not None
        chain = self.me.session.chain
        host = self.me.session.host
        if not self.config.restore or self.resumes or self.seat not in chain.candidates():
            return False
        since = chain.vote_since("depose", host)
        voters = {v["seat"] for v in self.depose_votes.fresh("depose", host, since, 2**63)}
        voters &= set(chain.at_table) - {self.seat, host}
        return len(voters) + 1 >= quorum(len(chain.at_table))

    async def _voter(self, deposed: list[int]) -> None:
        """This seat's vote policy (PROTOCOL.md 7.5), by its own clock."""
        assert self.me is not None and self.seat is not None
        session = self.me.session
        timers = session.table_body["timers"]
        step = max(0.02, min(timers["turn_ms"], timers["grace_ms"], self.config.censor_ms)
                   / 10_000)
        stuck = stuck_ms(timers, self.config.censor_ms) / 1000
        while True:
            await trio.sleep(step)
            if self.host is not None or session.finished:
                return
            if self.deposing is not None or self.stream is None or self.me.busy:
                continue
            late = self._host_late(timers["grace_ms"])
            if late and session.chain.next_host() is not None or \
                    len(session.chain.at_table) > 2 and await self._censored():
                self.deposing = session.host
                self._vote("depose", session.host)
                deposed.append(session.host)
                if self.stream is not None:
                    await trio.aclose_forcefully(self.stream)  # wakes the receiving loop
                continue
            now = trio.current_time()
            if self.awaited is not None:
                host = session.host
                for target in self.awaited.expired(int(now * 1000), skip=host):
                    if target != self.seat:
                        await self._absent("timeout", target)
                if self._host_late(0):  # the host's own seat: no probe, the host holds its own
                    self._vote("timeout", host)  # envelopes; once per record (7.5)
            grace = timers["grace_ms"] / 1000
            for target, since in sorted(self.dropped_at.items()):
                seen = self.last_seen.get(target, 0.0)
                if target in session.chain.at_table and min(now - seen, now - since) >= grace:
                    await self._absent("left", target)
            if self.last_record_at and now - self.last_record_at >= stuck:
                if ("abandon", None, session.chain.vote_since("abandon", None)) not in self.voted:
                    self._vote("abandon", None)  # stuck on a split vote (7.5)
                elif now - self.last_record_at >= stuck + grace:
                    raise HostLost(
                        f"no record for {now - self.last_record_at:.0f} s, and no end of the "
                        "match after this seat's abandon vote: the table is stuck (nobody is "
                        "ranked)")

    async def _absent(self, kind: str, target: int) -> None:
        """Vote ``kind`` about ``target`` unless a probe shows it present."""
        assert self.me is not None
        session = self.me.session
        if (kind, target, session.chain.vote_since(kind, target)) in self.voted:
            return
        if trio.current_time() < self.held_probe.get(target, -math.inf):
            return  # it showed an unsequenced envelope lately: no new probe yet
        present = await links.probe(self.identity, session, target, self.config.probe_s)
        if present is not None:
            env = links.unsequenced(session, target, present)
            if env is not None:
                now = trio.current_time()
                self.pending_seen.setdefault((target, env["n"]), now)
                self.held_probe[target] = now + self.config.probe_s
                self._hold(env)
                return  # held by the host: evidence of censorship, not of absence
            if kind == "left":
                self.last_seen[target] = trio.current_time()  # it answers: present
                return
        self._vote(kind, target)

    def _hold(self, env: dict[str, Any]) -> None:
        """Watch an envelope until it is sequenced (see :meth:`_censored`)."""
        assert self.me is not None
        head = self.me.session.chain.index_of(env["head"])
        self.held.setdefault((env["seat"], env["n"]), [-1 if head is None else head, 0])

    def _bypassed(self, seat: int, n: int) -> bool:
        """Whether the host passes over envelope ``(seat, n)``: the table waits on ``seat`` and
        no record came for ``censor_ms`` (the host is idle, not busy), or it has sequenced, since,
        at least two per
        seat of other seats' envelopes written after a newer state (a busy host serves in
        arrival order, so it would have sequenced that one first)."""
        assert self.me is not None
        session = self.me.session
        quiet = trio.current_time() - self.last_record_at >= self.config.censor_ms / 1000
        if seat in session.waiting_on() and quiet:
            return True
        seen = self.held.get((seat, n))
        return seen is not None and seen[1] >= 2 * len(session.chain.at_table)

    def _host_late(self, extra_ms: int) -> bool:
        """Whether, at three or more seats, the table has waited on the host's own seat for
        ``turn_ms + extra_ms`` by this seat's clock (PROTOCOL.md 7.5). After ``turn_ms`` the
        seats vote ``timeout`` about the host's seat and the host sequences it like any other;
        a host that has not done so ``grace_ms`` later is deposed (it would otherwise hold the
        table until ``stuck_ms``, and the abandon votes would end a match it is losing as no
        contest). The clock restarts at every record the host authors, that timeout too."""
        assert self.me is not None
        session = self.me.session
        return self.awaited is not None and len(session.chain.at_table) > 2 and \
            session.host in session.waiting_on() and \
            self.awaited.late(session.host, int(trio.current_time() * 1000), extra_ms)

    async def _censored(self) -> bool:
        """Whether this seat holds an envelope (its own, or one a probe returned) that the host
        has not sequenced for ``censor_ms`` while sequencing newer envelopes of other seats
        (so a host merely slow, busy checking shuffles, is not taken for a censor)."""
        assert self.me is not None
        session = self.me.session
        now = trio.current_time()
        limit = self.config.censor_ms / 1000
        for n, t in self.sent_at.items():
            if n in self.me.unsequenced and now - t >= limit and self._bypassed(self.seat, n):
                return True
        for (seat, n), first in list(self.pending_seen.items()):
            if session.chain.next_counter(seat) > n:
                del self.pending_seen[(seat, n)]  # sequenced after all
            elif now - first >= limit and self._bypassed(seat, n):
                return True
        return False

    async def _act(self) -> None:
        assert self.me is not None
        with self._act_scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self.me.chatter, self.send)
                await self.me.act(self.send)
                nursery.cancel_scope.cancel()

    async def _failover(self, grace_ms: int, deposing: bool = False) -> bool:
        """The host is gone (or censors, ``deposing``): this seat votes ``depose`` and tries the
        candidates in turn (PROTOCOL.md 7.6), each for ``grace_ms``, the old host once more
        after the first (the drop may have been this seat's own link); the first that hosts is
        the new host, and this seat hosts when its turn comes. Return True once this peer has
        hosted the rest of the match; False once resumed with a host; raise HostLost if none
        works."""
        assert self.me is not None and self.seat is not None
        session = self.me.session
        old = session.host
        if len(session.chain.at_table) <= 2:
            if not deposing:  # no majority can depose: wait for the host a while more
                await self._resume(grace_ms)
                return False
            raise HostLost("no majority can replace the host at two seats")
        candidates = session.chain.candidates()
        if not candidates:
            raise HostLost("no seat can take over as host (the others announced no address)")
        if self._asked_to_host():  # a quorum tries this seat now: no other candidate first
            self.deposing = old
            log.warning("seat %d: a quorum of the seats asks it to host", self.seat)
            return await self._take_over()
        before = (self.address, self._dial)
        for k, new in enumerate(candidates):
            self.deposing = old
            if new == self.seat:
                if self.config.restore and not self._asked_to_host() and \
                        await self._find_host(candidates[k + 1 :]):
                    return False  # restarted late: a later candidate hosts already
                return await self._take_over()
            urging = trio.CancelScope()
            if self._nursery is not None:  # beside the resume: an address that swallows
                # packets must not hold it up (the vote also goes over the resumed connection)
                self._nursery.start_soon(self._urge, urging, new, old)
            try:
                hosted = await self._try_candidate(new, old, k, before, grace_ms, deposing,
                                                   urging)
            finally:
                urging.cancel()
            if hosted is not None:
                return hosted
        raise HostLost("no seat took over as host")

    async def _urge(self, scope: trio.CancelScope, new: int, old: int) -> None:
        """Send this seat's ``depose`` vote about ``old`` to candidate ``new`` over a link, now
        and every :data:`URGE_S` until ``scope`` is cancelled (this seat has resumed with it,
        or moved on): a candidate restarting after a crash may not listen yet (7.6)."""
        assert self.me is not None
        session = self.me.session
        with scope:
            while True:
                frame = vote_frame("depose", old, session.vote("depose", old))
                await links.send_vote(self.identity, session, new, frame)
                await trio.sleep(URGE_S)

    async def _try_candidate(
        self, new: int, old: int, k: int, before: tuple[tuple[str, int], Dialer | None],
        grace_ms: int, deposing: bool, urging: trio.CancelScope,
    ) -> bool | None:
        """Resume with candidate ``new`` (the ``k``-th), which should host after ``old``
        (``urging`` sends it this seat's vote meanwhile): False once resumed with a host, None
        to try the next candidate (see :meth:`_failover`)."""
        assert self.me is not None
        session = self.me.session
        listen = links.address_of(session, new)
        assert listen is not None  # a candidate announced an address
        log.warning("seat %d: seat %d hosts from now on at %s", self.seat, new, listen)
        self.address = listen
        self._dial = self._new_host_dialer(new, listen)  # its address (or the relay)
        wait_ms = grace_ms
        if deposing:  # the candidate sees the censorship by its own clock: allow it that
            wait_ms += session.table_body["timers"]["turn_ms"] + self.config.censor_ms
        try:
            await self._resume(wait_ms, max_pause_s=min(CANDIDATE_RETRY_S, self.config.retry_max_s))
        except HostLost:
            log.warning("seat %d: seat %d does not host", self.seat, new)
            urging.cancel()  # this seat no longer asks it to host
            if k > 0:
                return None
            # the drop may have been this seat's own (a stalled link) and the host still
            # there: one more grace with it (it refuses the seat once it has it as gone)
            self.address, self._dial = before
            self.deposing = None
            try:
                await self._resume(grace_ms)
            except HostLost:
                return None
            return False
        if session.host == old and self.deposing is not None:
            self._vote("depose", old)
        return False

    async def _find_host(self, later: list[int]) -> bool:
        """After a restart, before this seat takes over: whether a later candidate hosts
        already (the others moved on while this seat was down); resumed with it if so."""
        assert self.me is not None
        session = self.me.session
        for seat in later:
            listen = links.address_of(session, seat)
            assert listen is not None  # a candidate announced an address
            self.address = listen
            self._dial = self._new_host_dialer(seat, listen)
            try:  # (the others asking this seat to host end the search)
                await self._resume(FIND_HOST_MS, yield_to_quorum=True)
            except HostLost:
                if self._asked_to_host():
                    return False
                continue
            if session.host != seat:  # it is still gathering: it needs this seat's vote
                self._vote("depose", session.host)
            return True
        return False

    async def _take_over(self) -> bool:
        """This seat is the candidate whose turn it is: host the rest of the match."""
        assert self.me is not None
        session = self.me.session
        self._links.cancel()  # the host answers on the listen address from now on
        if self.listeners is None:
            raise HostLost("this seat is the next host but announced no address")
        self._act_scope.cancel()  # the host runs this seat's agent from now on
        if self.stream is not None:
            await trio.aclose_forcefully(self.stream)
            self.stream = None
        body = session.table_body
        config = HostConfig(
            players=session.n,
            variant=body["variant"],
            options=body["options"],
            timers=Timers.from_body(body["timers"]),
            name=self.config.name,
            seed=self.seed,
            linger_s=self.config.linger_s,
            censor_ms=self.config.censor_ms,
        )
        self.host = Host(
            self.identity, config, self.agent, takeover=self.me, listeners=self.listeners
        )
        self.host.tally = self.depose_votes
        await self.host.run()
        return True

    async def _done(self) -> None:
        """Tell the host this seat holds the last record (PROTOCOL.md 4.3), so it need not wait
        for it; best effort (a host not told waits out the grace)."""
        assert self.me is not None
        if self.stream is None:
            return
        with trio.move_on_after(1):
            try:
                await hs.send_message(self.stream, {"k": "done", "last": len(self.me.records) - 1})
            except DROPPED:
                pass

    async def _report(self, exc: ProtocolError) -> None:
        log.error("seat %s refuses a record: %s", self.seat, exc)
        if self.stream is not None:
            with trio.move_on_after(1):
                try:
                    await hs.send_message(self.stream, hs.error_message(exc.code, exc.detail))
                except DROPPED:
                    pass


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
