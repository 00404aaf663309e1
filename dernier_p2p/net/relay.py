"""The relay: pairs a table's host with its joiners and forwards their frames, nothing more.

Anyone with a reachable address runs ``dernier relay`` (PROTOCOL.md 4.7). A host behind a router
that nobody can reach registers its table under a random 8-byte token; a joiner names the token;
the relay asks the host to call back, pairs the two connections and from then on forwards whole
frames (at most :data:`~.handshake.MAX_FRAME` bytes) each way without decoding them. The table's
own handshake and records then run end to end through it. Relay frames::

    host   -> relay  {"k": "relay-host", "version": 5, "token": 8 bytes}
    relay  -> host   {"k": "relay-ready"}                      (or an error frame)
    joiner -> relay  {"k": "relay-join", "version": 5, "token": 8 bytes[, "punch": true,
                      "port": int[, "reach": [address, port]]]}
    relay  -> host   {"k": "relay-call", "id": int[, "at": [address, port], "port": int]
                      [, "reach": ...]}                         (on the registration)
    host   -> relay  {"k": "relay-answer", "version": 5, "token": 8 bytes, "id": int
                      [, "port": int]}
                     (a new connection; after it, both connections are paired)
    relay  -> host   {"k": "relay-seen"[, "self": [address, port]]}
                     (on the answer connection, to an answer with a port, before forwarding)
    relay  -> joiner {"k": "relay-paired"[, "at": [address, port], "self": [address, port]
                      [, "port": int]]}                        (or an error frame)
    relay  -> host   {"k": "relay-ping"}  every PING_S on the registration (liveness)

With ``punch`` (PROTOCOL.md 4.7 step 5) the joiner's and the host's connections come from
reusable ports, the relay tells each the other's address and port as it sees them (``at``),
and both try a direct connection (:mod:`.punch`); the pair stays as the fallback. Version 5
adds each side's local punch port (``port``, copied to the other) and its own address and port
as the relay saw them (``self``), so that both know whose router kept the port and whose
changed it, and a birthday punch plays only its useful half (:func:`.birthday.role`).
A joiner that can be reached adds ``reach`` (4.7 step 6: connection reversal), the relay
passes it on in the call, and the host also connects to it there, where the joiner listens.

A seat that may host after a host change but cannot be reached (no router mapping) stands by
at the relay its invite code named, under :func:`seat_token` (its game and key), with the same
frames as a host; after a host change the others find it there.

Every seat that listens is also a relay for its own table once record 0 exists (4.7 step 7,
:func:`seat_relay`): a connection to its listen address that answers its challenge with a
relay opening (the client reads the challenge first: :func:`past_challenge`) is served by
:meth:`Relay.serve_opened`, for the table's seat tokens only and within the table's budgets.

Admission (PROTOCOL.md 4.7) reuses the host's gate (:mod:`.admission`): openings,
registrations, waiting joiners and pairs are each capped in all, per source address and per
network (IPv4 /24, IPv6 /64), and at a cap the oldest idle one (of that address, or of the
busiest address of the network holding the most) is closed, never the newcomer. The joiner's
first forwarded frame is read: a ``watch`` makes the pair a watcher's, which has its own cap
besides the pairs'.

The relay learns nothing a seat would keep from it: everything it forwards is signed by its
author, and every private part (hands, the draw pile) is encrypted to its seat. It can drop or
delay frames, which the table sees as a dropped connection.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import os
import secrets
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from functools import partial
from typing import Any, BinaryIO

import trio

from dernier_p2p.net import birthday, firewall, punch
from dernier_p2p.net import handshake as hs
from dernier_p2p.net.admission import (
    MAX_PENDING,
    PER_ADDRESS,
    Admission,
    Limits,
    Ticket,
    raise_nofile_limit,
)
from dernier_p2p.net.framing import FramedStream, FrameError, PeerClosed, open_framed, serve_framed
from dernier_p2p.wire.canonical import encode
from dernier_p2p.wire.hashing import digest

log = logging.getLogger("dernier_p2p.net.relay")

TOKEN_SIZE = 8
SEAT_TOKEN_LABEL = "dernier-p2p/relay-seat"
PING_S = 10.0
CALL_S = 10.0  # how long a joiner waits for its call to reach the host and be answered
OPEN_S = 10.0  # how long a new connection has to send its first frame
SEND_S = 30.0  # how long a forwarded frame may wait for its reader before the pair is closed
MAX_OPENING = 256  # bytes of a relay opening frame (the largest is about 60)
# Admission (PROTOCOL.md 4.7): caps in all, per source address and per network; at a cap the
# oldest idle slot of that address (or of the busiest network's) is closed, not the newcomer.
MAX_TABLES = 256  # registrations (tables and standing-by seats)
TABLES_PER_ADDRESS = 16
MAX_JOINING = 128  # joiners waiting for their host's answer (each for CALL_S at most)
JOINING_PER_ADDRESS = 32
MAX_PAIRS = 512  # joiner and host connections paired, forwarding (players and watchers alike)
PAIRS_PER_ADDRESS = 32  # counted by the joiner's address
MAX_WAITING = 16  # joiners waiting for their host, per table
MAX_WATCHERS = 128  # pairs whose joiner opened with `watch` (4.10), in all
WATCHERS_PER_ADDRESS = 4
PER_PREFIX = 4  # each gate's cap per /24 or /64 network: this many times its per-address cap
# A seat relay's budgets (4.7 step 7): in all, per source address, deadline.
SEAT_RELAY_LIMITS = {
    "pending": (16, 4, OPEN_S),  # (unused: a seat's own admission reads its openings)
    "tables": (10, 10, math.inf),  # one registration per seat token, 10 seats at most
    "joining": (8, 4, CALL_S),
    "pairs": (16, 4, math.inf),
    "watchers": (2, 1, math.inf),
}
NO_TABLE = "NO_TABLE"
TOKEN_TAKEN = "TOKEN_TAKEN"
RELAY_BUSY = "RELAY_BUSY"
DROPPED = (PeerClosed, FrameError, trio.BrokenResourceError, trio.ClosedResourceError, OSError)


class RelayLost(Exception):
    """The relay is unreachable, refused the registration or went away."""


def seat_relay(tokens: Callable[[], Collection[bytes]]) -> Relay:
    """A seat's relay for its own table (PROTOCOL.md 4.7 step 7): only ``tokens`` (the seat
    tokens of its record 0), within the table's budgets (:data:`SEAT_RELAY_LIMITS`)."""
    return Relay(tokens=tokens, **{name: Limits(*figures, min(figures[0], figures[1] * 4))
                                   for name, figures in SEAT_RELAY_LIMITS.items()})


def new_token() -> bytes:
    """A fresh random relay token for a table."""
    return os.urandom(TOKEN_SIZE)


def seat_token(game: bytes, key: bytes) -> bytes:
    """The token under which a seat of match ``game`` with identity ``key`` stands by at a
    relay as a candidate host (PROTOCOL.md 4.7): any seat of the table can compute it."""
    return digest(SEAT_TOKEN_LABEL, [game, key])[:TOKEN_SIZE]


# ------------------------------------------------------------------------------ the relay
# the host's answering connection, set when done, and its punch port (None: not punching)
_Answer = tuple[FramedStream, trio.Event, int | None]


@dataclass
class _Table:
    control: FramedStream
    ticket: Ticket  # its slot among the registrations; busy while joiners wait or are paired
    waiting: dict[int, trio.MemorySendChannel[_Answer]] = field(default_factory=dict)
    punching: set[int] = field(default_factory=set)  # waiting calls that carried `at`


@dataclass
class RelayStats:
    """What a relay has done: tables registered, pairs made, frames and bytes forwarded."""

    tables: int = 0
    pairs: int = 0
    frames: int = 0
    bytes: int = 0


class Relay:
    """A running relay (see the module docstring). ``record``: a file that receives every
    forwarded frame, so its owner can see exactly what passed through."""

    def __init__(
        self,
        record: BinaryIO | None = None,
        *,
        pending: Limits | None = None,
        tables: Limits | None = None,
        joining: Limits | None = None,
        pairs: Limits | None = None,
        watchers: Limits | None = None,
        tokens: Callable[[], Collection[bytes]] | None = None,
    ) -> None:
        self.tables: dict[bytes, _Table] = {}
        self.tokens = tokens  # the only tokens served (a seat relay's table), else any
        self.stats = RelayStats()
        self.record = record
        self.pending = Admission(pending or _limits(MAX_PENDING, PER_ADDRESS, OPEN_S),
                                 "relay openings")
        self.registrations = Admission(
            tables or _limits(MAX_TABLES, TABLES_PER_ADDRESS, math.inf), "relay registrations")
        self.joining = Admission(joining or _limits(MAX_JOINING, JOINING_PER_ADDRESS, CALL_S),
                                 "relay joiners")
        self.pairs = Admission(pairs or _limits(MAX_PAIRS, PAIRS_PER_ADDRESS, math.inf),
                               "relay pairs")
        self.watchers = Admission(
            watchers or _limits(MAX_WATCHERS, WATCHERS_PER_ADDRESS, math.inf), "relayed watchers")
        self.carrying = 0  # joiners waiting for their host's answer or paired, forwarding
        self._carried = trio.Event()  # set (and replaced) whenever one of them ends

    async def carried(self) -> None:
        """Return once this relay carries no joiner: none waiting for its host, no pair
        forwarding (a seat relay's seat, its own match over, waits for this: 4.7 step 7)."""
        while self.carrying:
            await self._carried.wait()

    async def handle(self, stream: FramedStream) -> None:
        """Serve one connection by its first frame, within the caps (see :data:`MAX_TABLES`)."""
        source = firewall.source_of(firewall.peer_address(stream.stream))
        msg = None
        with self.pending.enter(source) as ticket:
            stream.max_frame = MAX_OPENING
            try:
                with ticket.scope:
                    msg = await hs.receive_message(stream)
            except (*DROPPED, hs.NetError) as exc:
                log.info("relay: a connection sent no usable first frame: %s", _reason(exc))
                return
        if msg is None:
            log.info("relay: a connection from %s %s", source,
                     "was evicted before its first frame" if ticket.evicted
                     else f"sent no first frame within {self.pending.limits.handshake_s:g} s")
            return
        await self.serve_opened(stream, msg, source)

    async def serve_opened(self, stream: FramedStream, msg: dict[str, Any], source: str) -> None:
        """Serve a connection whose opening ``msg`` from ``source`` is read (a seat relay's,
        read after its challenge, PROTOCOL.md 4.7 step 7)."""
        stream.max_frame = hs.MAX_FRAME
        try:
            kind, token = check_open(msg)
        except hs.NetError as exc:
            await _refuse(stream, exc.code, exc.detail)
            return
        if self.tokens is not None and kind != "relay-answer" and token not in self.tokens():
            await _refuse(stream, NO_TABLE, "this seat relays for its own table's seats only")
            return
        if kind == "relay-host":
            await self._host(stream, token, source)
        elif kind == "relay-join":
            await self._join(stream, token, source, msg.get("punch") is True,
                             msg.get("reach"), msg.get("port"))
        else:
            await self._answer(stream, token, msg["id"], msg.get("port"))

    async def _host(self, stream: FramedStream, token: bytes, source: str) -> None:
        if token in self.tables:
            await _refuse(stream, TOKEN_TAKEN, "a table is already registered with that token")
            return
        ticket = self.registrations.enter(source)  # may close another (idle) registration
        table = _Table(stream, ticket)
        self.tables[token] = table
        self.stats.tables += 1
        log.info("relay: table %s registered", token.hex())
        try:
            with ticket, ticket.scope:
                await hs.send_message(stream, {"k": "relay-ready"})
                stream.max_frame = MAX_OPENING  # the host sends nothing more; a big frame
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._ping, stream)
                    while True:  # ends the table, as its closing does
                        await stream.receive()
        except* (*DROPPED, trio.TooSlowError):
            pass
        finally:
            del self.tables[token]
            for waiting in table.waiting.values():
                waiting.close()
            log.info("relay: table %s closed%s", token.hex(),
                     " (evicted: its address or the relay at the cap)" if ticket.evicted else "")

    async def _ping(self, stream: FramedStream) -> None:
        while True:
            await trio.sleep(PING_S)
            with trio.fail_after(PING_S):  # a host that does not read its registration goes
                await hs.send_message(stream, {"k": "relay-ping"})

    async def _join(self, stream: FramedStream, token: bytes, source: str,
                    punching: bool = False, reach: list[Any] | None = None,
                    port: int | None = None) -> None:
        table = self.tables.get(token)
        if table is None:
            await _refuse(stream, NO_TABLE, "no table is registered here with that token")
            return
        if len(table.waiting) >= MAX_WAITING:
            await _refuse(stream, RELAY_BUSY, "too many joiners are waiting for that table")
            return
        call = _call_id(table.waiting)
        send, receive = trio.open_memory_channel[_Answer](1)
        table.waiting[call] = send
        table.ticket.busy += 1
        self.carrying += 1
        try:
            await self._paired(stream, token, source, table, call, receive, punching, reach,
                               port)
        finally:
            table.ticket.busy -= 1
            self.carrying -= 1
            self._carried.set()
            self._carried = trio.Event()

    async def _paired(
        self, stream: FramedStream, token: bytes, source: str, table: _Table, call: int,
        receive: trio.MemoryReceiveChannel[_Answer], punching: bool = False,
        reach: list[Any] | None = None, port: int | None = None,
    ) -> None:
        answer = None
        called = False
        waiting = self.joining.enter(source)
        calling: dict[str, Any] = {"k": "relay-call", "id": call}
        seen = _seen(stream) if punching else None
        if seen is not None:
            calling["at"] = seen
            calling["port"] = port  # the joiner's punch port (checked by check_open)
            table.punching.add(call)
            if reach is not None:
                calling["reach"] = reach  # checked by check_open
        try:
            with waiting, waiting.scope:  # the call and its answer, within CALL_S
                await hs.send_message(table.control, calling)
                called = True
                answer = await receive.receive()
        except (*DROPPED, trio.EndOfChannel):
            called = True  # the registration is gone already
        finally:
            table.waiting.pop(call, None)
            table.punching.discard(call)
        if answer is None:  # an answer that came as the wait ended: release its connection
            try:
                receive.receive_nowait()[1].set()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                pass
        if waiting.evicted:
            if answer is not None:
                answer[1].set()
            await _refuse(stream, RELAY_BUSY, "too many joiners are waiting from this address "
                                              "or at this relay")
            if not called:
                await trio.aclose_forcefully(table.control)  # a cut relay-call frame
            return
        if not called:  # a host that does not read its registration: end it (it may register
            log.info("relay: table %s: its host does not read its calls", token.hex())
            await trio.aclose_forcefully(table.control)  # again); a cut frame left it unusable
        if answer is None:
            await _refuse(stream, NO_TABLE, "the table's host did not answer")
            return
        other, done, host_port = answer
        paired: dict[str, Any] = {"k": "relay-paired"}
        own = seen  # the joiner's own address and port, as this relay sees them
        seen = _seen(other) if seen is not None else None
        if seen is not None and own is not None:
            paired["at"] = seen
            paired["self"] = own
            if host_port is not None:
                paired["port"] = host_port
        if host_port is not None:  # a punching host: its own address first (4.7 step 5)
            told: dict[str, Any] = {"k": "relay-seen"}
            if "at" in paired:
                told["self"] = seen
            try:
                with trio.fail_after(SEND_S):
                    await hs.send_message(other, told)
            except (*DROPPED, trio.TooSlowError):
                done.set()
                await _refuse(stream, NO_TABLE, "the table's host went away as it answered")
                return
        try:
            await hs.send_message(stream, paired)
        except DROPPED:
            done.set()
            return
        self.stats.pairs += 1
        log.info("relay: table %s: joiner %d paired with its host", token.hex(), call)
        try:
            with self.pairs.enter(source) as pair, pair.scope:  # may close another pair
                await self._forward(stream, other, call, source)
            if pair.evicted:
                log.info("relay: pair %d closed: its address or the relay at the cap", call)
        finally:
            done.set()

    async def _answer(self, stream: FramedStream, token: bytes, call: int,
                      port: int | None = None) -> None:
        table = self.tables.get(token)
        waiting = None if table is None else table.waiting.get(call)
        if waiting is None or table is None:
            await _refuse(stream, NO_TABLE, "no joiner is waiting for that call")
            return
        if port is not None and call not in table.punching:
            await _refuse(stream, hs.MALFORMED, "relay-answer port answers a punching call "
                                                "only (one whose relay-call had at)")
            return
        done = trio.Event()
        try:
            waiting.send_nowait((stream, done, port))
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            return
        await done.wait()  # the joiner's task forwards; this connection lives until it ends

    async def _forward(self, joiner: FramedStream, host: FramedStream, call: int,
                       source: str = "") -> None:
        sent = [0, 0]
        watching: list[Ticket] = []
        try:
            async with trio.open_nursery() as nursery:

                async def pump(src: FramedStream, dst: FramedStream, way: int) -> None:
                    try:
                        while True:
                            frame = await src.receive()
                            if way == 0 and sent[0] == 0 and _is_watch(frame):
                                watching.append(self._watcher(source, nursery.cancel_scope))
                            self._note(call, way, frame)
                            sent[way] += len(frame)
                            with trio.fail_after(SEND_S):  # a reader this slow ends the pair:
                                await dst.send(frame)  # at most one frame held per direction
                    except (*DROPPED, trio.TooSlowError):
                        pass
                    nursery.cancel_scope.cancel()

                nursery.start_soon(pump, joiner, host, 0)
                nursery.start_soon(pump, host, joiner, 1)
        finally:  # also when the pair is closed from outside (its own slot evicted)
            for ticket in watching:
                ticket.release()
        log.info("relay: pair %d closed after %d bytes to the host, %d from it%s",
                 call, sent[0], sent[1], " (a watcher evicted at its cap)"
                 if any(t.evicted for t in watching) else "")

    def _watcher(self, source: str, scope: trio.CancelScope) -> Ticket:
        """A slot among the relayed watchers for the pair forwarding in ``scope`` (closed if
        the slot is evicted: the oldest watcher of the address, or of the busiest network)."""
        ticket = self.watchers.enter(source)
        ticket.scope = scope
        return ticket

    def _note(self, call: int, way: int, frame: bytes) -> None:
        self.stats.frames += 1
        self.stats.bytes += len(frame)
        if self.record is not None:
            entry = encode([call, way, frame])
            self.record.write(len(entry).to_bytes(4, "big") + entry)
            self.record.flush()


def _is_watch(frame: bytes) -> bool:
    """Whether a joiner's first frame is a watcher's opening (4.10): the relay forwards frames
    undecoded, but it reads this one to give watchers their own cap."""
    if len(frame) > MAX_OPENING:
        return False
    try:
        msg = hs.unpack(frame)
    except hs.NetError:
        return False
    return msg.get("k") == "watch"


def _seen(stream: FramedStream) -> list[Any] | None:
    """The address and port a connection comes from, as ``at`` (an IPv4-mapped IPv6 address
    as IPv4), or None if the socket cannot tell."""
    sock = getattr(stream.stream, "socket", None)
    try:
        host, port = sock.getpeername()[:2]  # type: ignore[union-attr]
        address = ipaddress.ip_address(host)
    except (AttributeError, OSError, TypeError, ValueError):
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return [str(address), port]


def _limits(total: int, per_address: int, deadline: float) -> Limits:
    return Limits(total, per_address, deadline, min(total, PER_PREFIX * per_address))


def _call_id(waiting: dict[int, Any]) -> int:
    """A fresh call id, random (1 .. 2^62): whoever knows a table's token (every joiner with
    its invite code) cannot guess the call of another joiner and answer it in the host's
    place."""
    while True:
        call = secrets.randbelow(1 << 62) + 1
        if call not in waiting:
            return call


def check_open(msg: dict[str, Any]) -> tuple[str, bytes]:
    kind = msg.get("k")
    fields = {
        "relay-host": {"k", "version", "token"},
        "relay-join": {"k", "version", "token"},
        "relay-answer": {"k", "version", "token", "id"},
    }.get(kind)  # type: ignore[arg-type]
    if fields is None:
        raise hs.NetError(hs.UNEXPECTED, f"a relay expects relay-host, -join or -answer, "
                                         f"not {kind!r}")
    if msg.get("version") != hs.VERSION:
        raise hs.NetError(hs.VERSION_MISMATCH, (
            f"this {kind} speaks protocol version {msg.get('version')!r}; this relay speaks "
            f"{hs.VERSION}: the relay, the host and the players need the same release"))
    if kind == "relay-join" and "punch" in msg:
        if msg["punch"] is not True:
            raise hs.NetError(hs.MALFORMED, "relay-join punch, if given, is true")
        if "port" not in msg:
            raise hs.NetError(hs.MALFORMED, "relay-join punch goes with port (version 5)")
        try:
            punch.check_port(msg["port"])
        except ValueError as exc:
            raise hs.NetError(hs.MALFORMED, f"relay-join {exc}") from None
        fields = fields | {"punch", "port"}
        if "reach" in msg:
            try:
                punch.check_at(msg["reach"])
            except ValueError as exc:
                raise hs.NetError(hs.MALFORMED, f"relay-join {exc}".replace("`at`",
                                                                           "`reach`")) from None
            fields = fields | {"reach"}
    elif kind == "relay-join" and ("reach" in msg or "port" in msg):
        raise hs.NetError(hs.MALFORMED, f"relay-join {'reach' if 'reach' in msg else 'port'} "
                                        "goes with punch: true")
    if kind == "relay-answer" and "port" in msg:
        try:
            punch.check_port(msg["port"])
        except ValueError as exc:
            raise hs.NetError(hs.MALFORMED, f"relay-answer {exc}") from None
        fields = fields | {"port"}
    if set(msg) != fields:
        raise hs.NetError(hs.MALFORMED, f"{kind} fields must be exactly {sorted(fields)}")
    token = msg["token"]
    if not isinstance(token, bytes) or len(token) != TOKEN_SIZE:
        raise hs.NetError(hs.MALFORMED, f"a relay token is {TOKEN_SIZE} bytes")
    if kind == "relay-answer" and (
        not isinstance(msg["id"], int) or isinstance(msg["id"], bool) or msg["id"] < 1
    ):
        raise hs.NetError(hs.MALFORMED, "a relay call id is a positive integer")
    return kind, token  # type: ignore[return-value]


def call_id(msg: dict[str, Any]) -> int | None:
    """The call id of a ``relay-call`` frame (1 .. 2^62, 4.7), or None for any other frame
    on the control connection (ignored: the relay-ping frames, or garbage)."""
    read = read_call(msg)
    return None if read is None else read[0]


def read_call(msg: dict[str, Any]) -> tuple[int, tuple[str, int] | None] | None:
    """The call id of a ``relay-call`` frame and the joiner's ``at`` if it asks to punch
    (4.7 step 5), or None for any other frame (ignored: the relay-ping frames, or garbage,
    a malformed ``at`` or ``port`` among it, or one without the other)."""
    call = msg.get("id")
    if msg.get("k") != "relay-call" or set(msg) - {"at", "port", "reach"} != {"k", "id"} \
            or not isinstance(call, int) or isinstance(call, bool) or not 1 <= call <= 2**62:
        return None
    if "at" not in msg:
        return None if "reach" in msg or "port" in msg else (call, None)
    try:
        at = punch.check_at(msg["at"])
        punch.check_port(msg.get("port"))
        if "reach" in msg:
            punch.check_at(msg["reach"])
    except ValueError:
        return None
    return call, at


def read_port(msg: dict[str, Any]) -> int | None:
    """The joiner's punch ``port`` of a ``relay-call`` that :func:`read_call` reads with an
    ``at`` (version 5, 4.7 step 5), or None."""
    read = read_call(msg)
    return None if read is None or read[1] is None else msg["port"]


def read_seen(msg: dict[str, Any]) -> tuple[str, int] | None:
    """The host's own address and port of a ``relay-seen`` frame (version 5, 4.7 step 5), or
    None where the relay could not tell; :class:`~.handshake.NetError` MALFORMED for anything
    but ``{k}`` or ``{k, self}`` with ``self`` as ``at`` is, UNEXPECTED for another frame."""
    if msg.get("k") != "relay-seen":
        raise hs.NetError(hs.UNEXPECTED, f"the relay answered {msg.get('k')!r}, "
                                         "not relay-seen")
    if set(msg) - {"self"} != {"k"}:
        raise hs.NetError(hs.MALFORMED, "relay-seen is {k} or {k, self}")
    if "self" not in msg:
        return None
    try:
        return punch.check_at(msg["self"])
    except ValueError as exc:
        raise hs.NetError(hs.MALFORMED, f"relay-seen: {exc}".replace("`at`", "`self`")) from None


def read_paired(msg: dict[str, Any], punching: bool) -> tuple[
        tuple[str, int] | None, tuple[str, int] | None, int | None]:
    """The ``at``, ``self`` and host's ``port`` (each None if absent) of a ``relay-paired``
    frame to a join that asked to punch (``punching``) or not (4.7 step 5);
    :class:`~.handshake.NetError`: UNEXPECTED for another frame, MALFORMED for fields other
    than ``{k}``, ``{k, at, self}`` or ``{k, at, self, port}`` (``{k}`` alone without
    ``punching``), or a bad value."""
    if msg.get("k") != "relay-paired":
        raise hs.NetError(hs.UNEXPECTED, f"the relay answered {msg.get('k')!r}")
    fields = set(msg)
    if not punching:
        if fields != {"k"}:
            raise hs.NetError(hs.MALFORMED, "relay-paired to a join without punch is {k}")
        return None, None, None
    if fields not in ({"k"}, {"k", "at", "self"}, {"k", "at", "self", "port"}):
        raise hs.NetError(hs.MALFORMED,
                          "relay-paired is {k}, {k, at, self} or {k, at, self, port}")
    if fields == {"k"}:
        return None, None, None
    try:
        at = punch.check_at(msg["at"])
        port = punch.check_port(msg["port"]) if "port" in msg else None
    except ValueError as exc:
        raise hs.NetError(hs.MALFORMED, f"relay-paired: {exc}") from None
    try:
        own = punch.check_at(msg["self"])
    except ValueError as exc:
        raise hs.NetError(hs.MALFORMED,
                          f"relay-paired: {exc}".replace("`at`", "`self`")) from None
    return at, own, port


def read_reach(msg: dict[str, Any]) -> tuple[str, int] | None:
    """The joiner's ``reach`` of a ``relay-call`` that :func:`read_call` reads (4.7 step 6),
    or None if it gives none."""
    if read_call(msg) is None or "reach" not in msg:
        return None
    return punch.check_at(msg["reach"])


async def _refuse(stream: FramedStream, code: str, detail: str) -> None:
    log.info("relay: refused: %s: %s", code, detail)
    with trio.move_on_after(1):
        try:
            await hs.send_message(stream, hs.error_message(code, detail))
        except DROPPED:
            pass


async def serve_relay(
    relay: Relay,
    port: int,
    host: str | None = None,
    *,
    task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run ``relay`` on TCP ``port`` forever (``nursery.start`` reports the listeners), the
    open-files limit raised first as a host does (its caps hold, not the descriptor table)."""
    raise_nofile_limit()
    await serve_framed(relay.handle, port, host=host, max_frame=hs.MAX_FRAME,
                       task_status=task_status)


# ------------------------------------------------------------------------------ the host's side
Handler = Callable[[FramedStream], Awaitable[None]]


async def host_through_relay(
    address: tuple[str, int],
    token: bytes,
    handler: Handler,
    *,
    connect_s: float = 10.0,
    serving: trio.Nursery | None = None,
    seat: bool = False,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Register the table ``token`` at the relay ``address`` and run ``handler`` on every
    joiner's connection it pairs (or punches, 4.7 step 5), until cancelled. :class:`RelayLost`
    if the relay cannot be reached, refuses, or goes silent (no ping for three PING_S).
    ``serving``: the nursery the connections run in (they outlive the registration), else
    they end with it. ``seat``: ``address`` is a seat relay (4.7 step 7)."""
    try:
        with trio.fail_after(connect_s):
            control = await open_framed(*address, hs.MAX_FRAME)
            if seat:
                await past_challenge(control)
            await hs.send_message(control, _opening("relay-host", token))
            reply = await hs.receive_message(control)
    except trio.TooSlowError:
        raise RelayLost(f"relay {_show(address)} did not answer in {connect_s:g} s") from None
    except hs.RemoteError as exc:
        raise RelayLost(f"relay {_show(address)} refused: {exc.code}: {exc.detail}") from None
    except (*DROPPED, hs.NetError) as exc:
        raise RelayLost(f"relay {_show(address)} unreachable: {_reason(exc)}") from None
    if reply.get("k") != "relay-ready":
        await trio.aclose_forcefully(control)
        raise RelayLost(f"relay {_show(address)} answered {reply.get('k')!r}")
    task_status.started()
    lost: RelayLost | None = None
    punching = [0]  # punches under way (at most punch.MAX_PUNCHING)
    reversing = [0]  # calls back under way (at most punch.MAX_REVERSING)
    try:
        async with trio.open_nursery() as nursery:
            while lost is None:
                try:
                    with trio.fail_after(3 * PING_S):
                        msg = await hs.receive_message(control)
                except trio.TooSlowError:
                    lost = RelayLost(f"relay {_show(address)} went silent")
                except (*DROPPED, hs.NetError) as exc:
                    lost = RelayLost(f"relay {_show(address)} went away: {_reason(exc)}")
                else:
                    read = read_call(msg)
                    if read is not None:
                        (serving or nursery).start_soon(partial(
                            _answer_call, address, token, read[0], handler, read[1], punching,
                            reach=read_reach(msg), reversing=reversing, seat=seat,
                            joiner_port=read_port(msg)))
            nursery.cancel_scope.cancel()
    finally:
        await trio.aclose_forcefully(control)
    raise lost


async def keep_registered(
    address: tuple[str, int],
    token: bytes,
    handler: Handler,
    *,
    retry_s: float = 5.0,
    notify: Callable[[str, str], None] | None = None,
    seat: bool = False,
    task_status: trio.TaskStatus[bool] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Keep the table ``token`` registered at the relay until cancelled: after a failure or a
    loss, register again every ``retry_s`` (a restarted relay gets the table back, and the
    peers' resumes through it succeed). ``notify(kind, text)`` hears "ready" for every
    registration and "lost" for the first failure after one (or before any). ``nursery.start``
    reports whether the first attempt registered."""
    async with trio.open_nursery() as serving:  # connections outlive a lost registration
        await _keep(address, token, handler, retry_s, notify, task_status, serving, seat)


async def _keep(
    address: tuple[str, int], token: bytes, handler: Handler, retry_s: float,
    notify: Callable[[str, str], None] | None, task_status: trio.TaskStatus[bool],
    serving: trio.Nursery, seat: bool = False,
) -> None:
    started = False
    quiet = False  # a failure already told, no registration since

    class Ready:
        def started(self, value: object = None) -> None:
            nonlocal started, quiet
            quiet = False
            if notify is not None:
                notify("ready", f"registered with the relay {_show(address)}")
            if not started:
                started = True
                task_status.started(True)

    while True:
        try:
            await host_through_relay(address, token, handler, serving=serving, seat=seat,
                                     task_status=Ready())  # type: ignore[arg-type]
        except RelayLost as exc:
            if not quiet and notify is not None:
                notify("lost", str(exc))
            quiet = True
            if not started:
                started = True
                task_status.started(False)
        await trio.sleep(retry_s)


async def _answer_call(
    address: tuple[str, int], token: bytes, call: int, handler: Handler,
    at: tuple[str, int] | None = None, punching: list[int] | None = None, *,
    reach: tuple[str, int] | None = None, reversing: list[int] | None = None,
    seat: bool = False, joiner_port: int | None = None,
) -> None:
    """Answer a call: a new connection to the relay, served by ``handler``; with the joiner's
    ``at`` (4.7 step 5) and fewer than :data:`~.punch.MAX_PUNCHING` punches under way, from a
    reusable port named in the answer (``port``, version 5; the relay then tells this side its
    own address, ``relay-seen``, before the handler speaks), and a punch toward ``at`` whose
    connection is served by ``handler`` too, its birthday punch playing the part
    :func:`.birthday.role` gives from both sides' ports (``joiner_port``: the joiner's); with its
    ``reach`` (step 6, :func:`~.punch.may_call`) and fewer than
    :data:`~.punch.MAX_REVERSING` under way, a call back to it, served by ``handler``."""
    reusable = None
    part = birthday.BOTH
    try:
        with trio.fail_after(OPEN_S):
            stream = None
            if at is not None and punching is not None and punching[0] < punch.MAX_PUNCHING \
                    and punch.CAN_PUNCH and punch.may_punch(at, address):
                try:
                    stream, family, port = await punch.open_reusable(*address, hs.MAX_FRAME)
                    reusable = (family, port)
                except OSError as exc:  # answered without punching (relayed only)
                    log.info("relay call %d: no port to punch from: %s", call, _reason(exc))
            if stream is None:
                stream = await open_framed(*address, hs.MAX_FRAME)
            if seat:
                await past_challenge(stream)
        opening = _opening("relay-answer", token)
        opening["id"] = call
        if reusable is not None:
            opening["port"] = reusable[1]
        await hs.send_message(stream, opening)
        if reusable is not None:  # the relay's relay-seen comes before any forwarded frame
            with trio.fail_after(OPEN_S):
                own = read_seen(await hs.receive_message(stream))
            if own is not None and at is not None and joiner_port is not None:
                part = birthday.role((reusable[1], own[1]), (joiner_port, at[1]))
    except (*DROPPED, trio.TooSlowError, hs.NetError) as exc:
        log.warning("relay call %d not answered: %s", call, _reason(exc))
        if stream is not None:
            await trio.aclose_forcefully(stream)
        return
    made = trio.Event()  # a direct connection made, punched or called back
    settled = trio.Event()  # the relayed pair is over: the joiner has chosen (or left)
    async with trio.open_nursery() as nursery:
        if reusable is not None and at is not None and punching is not None:
            punching[0] += 1
            nursery.start_soon(_punch_toward, reusable, at, call, handler, punching, nursery,
                               made, settled, part)
        if reach is not None and at is not None and reversing is not None \
                and reversing[0] < punch.MAX_REVERSING and punch.may_call(reach, at, address):
            reversing[0] += 1
            nursery.start_soon(_call_back, reach, call, handler, reversing, nursery, made)
        try:
            await _serve(stream, handler, f"{_show(address)} (relay call {call})")
        finally:
            settled.set()


async def _serve(stream: FramedStream, handler: Handler, where: str) -> None:
    try:  # whatever the handler meets ends this connection only, as on the host's listener
        await firewall.guard(partial(handler, stream), where)
    finally:
        await trio.aclose_forcefully(stream)


async def _punch_toward(
    reusable: tuple[int, int], at: tuple[str, int], call: int, handler: Handler,
    punching: list[int], nursery: trio.Nursery, made: trio.Event | None = None,
    settled: trio.Event | None = None, part: str = birthday.BOTH,
) -> None:
    """The host's side of a punch (4.7 step 5): a connection made is served as the relayed
    one is (the joiner chooses which to keep); a birthday punch besides, from the start,
    which ends once one is ``made`` (this punch's, or a call back's) and whose every
    connection is served too. Both end at their windows' end or once the relayed pair is
    ``settled`` (the joiner has taken a direct connection and closed it, or left). ``part``:
    the birthday punch's role (:func:`.birthday.role`)."""
    where = f"{at[0]}:{at[1]}"
    made = trio.Event() if made is None else made
    took: list[str] = []

    async def take(stream: FramedStream, how: str = "punched") -> bool:
        if how != "punched":
            try:
                peer = stream.stream.socket.getpeername()[:2]  # type: ignore[attr-defined]
            except OSError:
                return False  # reset since
            how = f"{how}: {_show(peer)}"
        else:
            both.cancel_scope.cancel()  # no birthday punch besides a punched connection
        nursery.start_soon(_serve, stream, handler, f"{where} ({how}, relay call {call})")
        took.append(how)
        return True

    async def birthday_punch() -> None:
        if birthday.may_birthday(at):
            await birthday.birthday(*reusable, at, partial(take, how="birthday punch"),
                                    hs.MAX_FRAME, first=False, direct=made, part=part)

    async def settle() -> None:  # the joiner has left the relayed pair: stop punching
        if settled is not None:
            await settled.wait()
            both.cancel_scope.cancel()

    running = [2]

    async def run(task: Callable[[], Awaitable[object]]) -> None:
        await task()
        running[0] -= 1
        if not running[0]:
            both.cancel_scope.cancel()  # both over: stop waiting for the relayed pair

    try:
        async with trio.open_nursery() as both:
            both.start_soon(settle)
            both.start_soon(run, partial(punch.punch, *reusable, at, take, hs.MAX_FRAME,
                                         made=made))
            both.start_soon(run, birthday_punch)
    finally:
        punching[0] -= 1
    log.info("relay call %d: %s", call,
             f"a direct connection with {where} (hole punched)" if took == ["punched"] else
             f"a direct connection with {where} (hole punched, {took[0]})" if took else
             f"no direct connection with {where}; the relay carries it")


async def _call_back(
    reach: tuple[str, int], call: int, handler: Handler, reversing: list[int],
    nursery: trio.Nursery, made: trio.Event | None = None,
) -> None:
    """The host's side of a connection reversal (4.7 step 6): one connection to the joiner's
    ``reach`` within the punch window, served as any other (the joiner chooses which to keep)."""
    where = _show(reach)
    stream = None
    try:
        with trio.move_on_after(punch.PUNCH_S):
            stream = await open_framed(*reach, hs.MAX_FRAME)
    except OSError as exc:
        log.info("relay call %d: no call back to %s: %s", call, where, _reason(exc))
    finally:
        reversing[0] -= 1
    if stream is not None:
        if made is not None:
            made.set()
        log.info("relay call %d: called the joiner back at %s (reversed)", call, where)
        nursery.start_soon(_serve, stream, handler, f"{where} (reversed, relay call {call})")


# ------------------------------------------------------------------------------ the joiner's side
async def past_challenge(stream: FramedStream) -> None:
    """Read a seat relay's challenge (4.7 step 7), the first frame of a connection to a seat's
    listen address, before the relay opening; :class:`~.handshake.NetError` if it is not one."""
    stream.max_frame = hs.MAX_OPENING
    msg = await hs.receive_message(stream)
    if msg.get("k") != "challenge":
        raise hs.NetError(hs.UNEXPECTED, f"a seat relay sent {msg.get('k')!r}, not a challenge")
    stream.max_frame = hs.MAX_FRAME


async def join_through_relay(address: tuple[str, int], token: bytes,
                             seat: bool = False) -> FramedStream:
    """Open a connection to the table ``token`` through the relay ``address``, paired with its
    host: the host's challenge is the next frame. :class:`~.handshake.RemoteError` if the relay
    refuses (NO_TABLE: no such table, or its host did not answer). ``seat``: ``address`` is a
    seat relay (4.7 step 7)."""
    stream = await open_framed(*address, hs.MAX_FRAME)
    try:
        if seat:
            await past_challenge(stream)
        await hs.send_message(stream, _opening("relay-join", token))
        read_paired(await hs.receive_message(stream), punching=False)
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    return stream


async def rendezvous(
    address: tuple[str, int], token: bytes, reach: tuple[str, int] | None = None,
    seat: bool = False,
) -> tuple[FramedStream, tuple[str, int] | None, int, int, str]:
    """:func:`join_through_relay` asking to punch (4.7 step 5), from a reusable port: the
    paired connection, the host's address and port as the relay saw them (None from a relay
    that gave none), the family and local port to punch from, and the birthday punch's part
    (:func:`.birthday.role`, from this side's port and ``self`` and the host's ``port`` and
    ``at``; :data:`.birthday.BOTH` where one is missing). ``reach``: where this joiner
    listens for its host's call back (step 6)."""
    stream, family, port = await punch.open_reusable(*address, hs.MAX_FRAME)
    try:
        if seat:
            await past_challenge(stream)
        opening = _opening("relay-join", token)
        opening["punch"] = True
        opening["port"] = port
        if reach is not None:
            opening["reach"] = list(reach)
        await hs.send_message(stream, opening)
        at, own, host_port = read_paired(await hs.receive_message(stream), punching=True)
        part = birthday.BOTH
        if at is not None and not punch.may_punch(at, address):
            at = None  # relayed only
        elif at is not None and own is not None and host_port is not None:
            part = birthday.role((port, own[1]), (host_port, at[1]))
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    return stream, at, family, port, part


def _opening(kind: str, token: bytes) -> dict[str, Any]:
    return {"k": kind, "version": hs.VERSION, "token": token}


def _show(address: tuple[str, int]) -> str:
    return f"{address[0]}:{address[1]}"


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def open_record(path: str | os.PathLike[str]) -> BinaryIO:
    """A new record file at ``path`` for :class:`Relay`: created with ``O_EXCL | O_NOFOLLOW``,
    mode 0600 (what passed through is its owner's business), never an existing file nor
    through a symbolic link (:class:`FileExistsError` for either)."""
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))
    return os.fdopen(os.open(path, flags, 0o600), "wb")


def read_record(data: bytes) -> list[tuple[int, int, bytes]]:
    """The (call, direction, frame) entries of a relay's ``record`` file (0: to the host)."""
    from dernier_p2p.wire.canonical import decode

    out, at = [], 0
    while at < len(data):
        n = int.from_bytes(data[at : at + 4], "big")
        call, way, frame = decode(data[at + 4 : at + 4 + n])
        out.append((call, way, frame))
        at += 4 + n
    return out

