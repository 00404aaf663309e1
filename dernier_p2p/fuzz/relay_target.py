"""The ``relay`` fuzz target: hostile connections against a running relay.

A case is a short script of connections to one :class:`~dernier_p2p.net.relay.Relay`: each
starts at a virtual time, sends its frames (openings for the tables' two tokens, mutated or
not, frames after them, a joiner's ``watch`` first in half of them, raw bytes with any length
prefix), reads or never reads what comes
back, answers the relay's calls (as a host does, sometimes mutated) or not, and closes or
stays; in the cases with small caps a host or a joiner may open several connections at
once from its one address (a flood). The relay runs behind trio's mock clock (autojump), so
its deadlines (the opening's, the call's, the pings, a slow reader's) pass at once and a case
takes milliseconds.

A case *crashes* if anything escapes ``Relay.handle`` (a handler's exception would only end its
connection behind the firewall in ``dernier relay``, but it is a bug), or if the relay leaks
(:class:`RelayLeak`): once every client has closed, it still holds a table, a waiting joiner
or an admission slot a virtual minute later (a leak a stranger could repeat until the relay is
full), or a clean host and joiner, paired through the same relay after the case, do not pair
or their frame does not pass (the case left the relay unusable). Caps of 1 to 3 in some
cases reach every eviction path within a few connections.

In half the cases the relay's ends of the connections tell a peer name (one address, a port
each, as a socket would), so that a punching join (version 5: ``punch`` and ``port``, which
half of the well-formed joins ask for, now and then with a bad ``port``) gets ``at`` and
``port`` in its call, its host's answer names a ``port`` (or, now and then, names one for a
call without ``at``, or a bad one), and the relay sends ``relay-seen`` and a ``relay-paired``
with ``self``; the clean pair after such a case punches too and checks those frames.
"""

from __future__ import annotations

import math
import random
from typing import Any

import msgpack
import trio
import trio.testing

from dernier_p2p.fuzz.mutate import mutate_bytes, mutate_value
from dernier_p2p.net import handshake as hs
from dernier_p2p.net import relay as rl
from dernier_p2p.net.admission import Limits
from dernier_p2p.net.framing import FramedStream
from dernier_p2p.wire.canonical import EncodingError, encode

TOKENS = (b"A" * rl.TOKEN_SIZE, b"B" * rl.TOKEN_SIZE)
NAMED = "198.51.100.7"  # the peer address the relay's ends tell, in the cases that name one
BAD_PORTS = (0, 65536, -1, True, "4000", None, 4000.5)
MAX_CONNS = 6
SETTLE_S = 60.0  # virtual seconds after the last client closed for the relay to let go


class RelayLeak(Exception):
    """The relay kept state for connections that are gone, or cannot pair a clean table."""


def _opening(kind: str, token: bytes, call: int | None = None) -> dict[str, Any]:
    msg = {"k": kind, "version": hs.VERSION, "token": token}
    if call is not None:
        msg["id"] = call
    return msg


def _frame(value: Any, rng: random.Random, garble: float = 0.2) -> bytes:
    """``value`` as a frame's payload: canonical, or msgpack as it comes, or mutated bytes."""
    try:
        data = encode(value)
    except (EncodingError, TypeError, ValueError, RecursionError):
        try:
            data = msgpack.packb(value, use_bin_type=True)
        except (OverflowError, ValueError, TypeError):  # past msgpack's own limits
            data = b"\xc0"
    return mutate_bytes(data, rng) if rng.random() < garble else data


def make(rng: random.Random) -> dict[str, Any]:
    """A script of 1 to :data:`MAX_CONNS` connections (see the module docstring)."""
    conns = []
    small = rng.random() < 0.4  # caps of 1 to 3: every eviction path within a few connections
    kinds = ("relay-host", "relay-host", "relay-join", "relay-join", "relay-answer", "other")
    if small:  # more joiners: several waiting at once meet the waiting joiners' cap
        kinds = ("relay-host", "relay-join", "relay-join", "relay-join", "relay-answer", "other")
    for _ in range(rng.randint(1, MAX_CONNS)):
        kind = rng.choice(kinds)
        token = TOKENS[0] if rng.random() < 0.7 else TOKENS[1]
        if kind == "other":
            opening = mutate_value(_opening(rng.choice(("relay-host", "relay-join")), token), rng)
        else:
            opening = _opening(kind, token, rng.randrange(1 << 62) if kind == "relay-answer"
                               else None)
            if rng.random() < 0.15:
                opening = mutate_value(opening, rng)
        frames = [_frame(opening, rng, 0.1)]
        for _ in range(rng.choice((0, 0, 1, 2, 4))):
            frames.append(_frame(mutate_value({"k": "x", "n": rng.randrange(9)}, rng), rng))
        raw = b""
        if rng.random() < 0.2:  # a length prefix of any size, then a few bytes
            raw = rng.randrange(1 << 32).to_bytes(4, "big") + rng.randbytes(rng.randrange(8))
        late = (0.5, 1.0, 5.0, 11.0) if kind in ("relay-join", "relay-answer") else ()
        conns.append({
            "start": rng.choice((0.0, 0.0, 0.5, 5.0, 11.0, *late)),
            "frames": frames,
            "raw": raw,
            "read": rng.random() < 0.8,
            "answer": rng.random() < 0.8,  # a host's connection answers its calls
            "mutate_answer": rng.random() < 0.2,
            "close": rng.choice((0.1, 1.0, 9.0, 25.0, 40.0) if kind != "relay-host"
                                else (0.1, 9.0, 25.0, 40.0, 40.0)),
            # a flood from one address: the same script on several connections
            "copies": rng.choice((1, 2, 4)) if small and kind in ("relay-join", "relay-host")
            else 1,
        })
    limits = [rng.randint(1, 3) for _ in range(8)] if small else None
    return {"conns": conns, "seed": rng.randrange(1 << 30), "limits": limits}


def _opens(frame: bytes) -> Any:
    try:
        return hs.unpack(frame).get("k")
    except hs.NetError:
        return None


def _copy(conn: dict[str, Any], k: int) -> dict[str, Any]:
    """The ``k``-th connection of a flood: a host's copies register tables of their own (a
    taken token is refused, not held), a joiner's are the same script."""
    if k == 0 or _opens(conn["frames"][0]) != "relay-host":
        return conn
    token = bytes([0x44 + k]) * rl.TOKEN_SIZE
    return {**conn, "frames": [encode(_opening("relay-host", token)), *conn["frames"][1:]]}


def dump(case: dict[str, Any]) -> bytes:
    return msgpack.packb(case, use_bin_type=True)


class _Run:
    """One case against one relay, under the mock clock."""

    def __init__(self, case: dict[str, Any]) -> None:
        self.case = case
        caps = case.get("limits")
        # which joiners open as watchers, and the watchers' caps: drawn apart, so the cases
        # of a seed stay those of the target before watchers had a cap of their own
        self.watch_rng = random.Random(f"{case['seed']}:watch")
        if caps is None:
            self.relay = rl.Relay()
        else:  # (in all, per address) for openings, registrations, joiners, pairs, watchers
            watch = [self.watch_rng.randint(1, 3) for _ in range(2)]
            self.relay = rl.Relay(
                pending=Limits(max(caps[0], caps[1]), caps[1], rl.OPEN_S),
                tables=Limits(max(caps[2], caps[3]) + 1, caps[3], math.inf),
                joining=Limits(max(caps[4], caps[5]), caps[5], rl.CALL_S),
                pairs=Limits(max(caps[6], caps[7]) + 1, caps[7], math.inf),
                watchers=Limits(max(watch), watch[1], math.inf),
            )
        self.rng = random.Random(case["seed"])
        # how long a host's connection takes to answer each call (0, or long enough for later
        # joiners to queue behind the call: the waiting joiners' cap), drawn apart as well
        self.answer_rng = random.Random(f"{case['seed']}:answer")
        self.spread = self.answer_rng.random() < 0.5
        # the punch fields of version 5, drawn apart too: whether the relay's ends tell a peer
        # name (so that it can give `at` and `self`), which joins punch and what ports say
        self.punch_rng = random.Random(f"{case['seed']}:punch")
        self.named = self.punch_rng.random() < 0.5
        self.ports = 40000

    async def connect(self, nursery: trio.Nursery) -> FramedStream:
        """A new connection: the relay's end served by ``Relay.handle`` in ``nursery``."""
        ours, theirs = trio.testing.memory_stream_pair()
        if self.named:  # as a socket's: the relay's `at` and `self` (and its caps' source)
            self.ports += 1
            theirs.socket = _Named((NAMED, self.ports))  # type: ignore[attr-defined]
        served = FramedStream(theirs, hs.MAX_FRAME)

        async def serve() -> None:
            try:
                await self.relay.handle(served)
            finally:
                await trio.aclose_forcefully(served)

        nursery.start_soon(serve)
        return FramedStream(ours, hs.MAX_FRAME)

    async def client(self, conn: dict[str, Any], nursery: trio.Nursery) -> None:
        # (in half the cases a few virtual milliseconds apart: clients opening at one instant
        # meet the openings' cap, and seldom the waiting joiners' one)
        await trio.sleep(conn["start"] + self.answer_rng.random() / 64 * self.spread)
        stream = await self.connect(nursery)
        token = None
        with trio.move_on_after(conn["close"]):
            try:
                frames = list(conn["frames"])
                frames[0] = self.punching(frames[0])
                if self.watch_rng.random() < 0.5 and _opens(frames[0]) == "relay-join":
                    frames.insert(1, encode({"k": "watch", "version": hs.VERSION,
                                             "have": -1}))  # forwarded first once paired
                for frame in frames:
                    await stream.send(frame)
                if conn["raw"]:
                    await stream.stream.send_all(conn["raw"])
                try:
                    token = hs.unpack(conn["frames"][0]).get("token")
                except hs.NetError:
                    pass
                while conn["read"]:
                    frame = await stream.receive()
                    if conn["answer"] and isinstance(token, bytes):
                        await self.answer(frame, token, conn["mutate_answer"], nursery)
                await trio.sleep_forever()
            except (*rl.DROPPED, hs.NetError):
                pass
        await trio.aclose_forcefully(stream)

    def punching(self, frame: bytes) -> bytes:
        """A well-formed join, asking to punch (``punch`` and ``port``) in half the cases, now
        and then with a bad ``port`` or none; any other frame as it is."""
        try:
            msg = hs.unpack(frame)
        except hs.NetError:
            return frame
        if msg.get("k") != "relay-join" or set(msg) != {"k", "version", "token"} \
                or self.punch_rng.random() < 0.5:
            return frame
        port = self.punch_rng.choice((4000, 40001, 65535, 1) if self.punch_rng.random() < 0.75
                                     else BAD_PORTS)
        msg = {**msg, "punch": True, "port": port}
        if self.punch_rng.random() < 0.1:
            del msg["port"]  # a version-4 punching join
        try:
            return encode(msg)
        except (EncodingError, TypeError, ValueError):  # (a float is not canonical)
            return msgpack.packb(msg, use_bin_type=True)

    async def answer(self, frame: bytes, token: bytes, mutate: bool, nursery: trio.Nursery) -> None:
        """A host's answer to a ``relay-call``: a new connection naming the call (and a punch
        port where the call carried ``at``, or now and then where it did not, or a bad one)."""
        try:
            read = rl.read_call(hs.unpack(frame))
        except hs.NetError:
            return
        if read is None:
            return
        call, at = read
        msg: Any = _opening("relay-answer", token, call)
        draw = self.punch_rng.random()
        if (at is not None and draw < 0.8) or draw < 0.1:
            msg["port"] = self.punch_rng.choice((4000, 40002, *BAD_PORTS[:3]))
        if mutate:
            msg = mutate_value(msg, self.rng)

        delay = self.answer_rng.choice((0.0, 0.0, 0.0, 3.0, 12.0))

        async def answering() -> None:
            await trio.sleep(delay)
            stream = await self.connect(nursery)
            with trio.move_on_after(5):
                try:
                    await stream.send(_frame(msg, self.rng) if mutate else encode(msg))
                    await stream.send(b"\x80")  # a frame through the pair, if it forms
                    await stream.receive()
                except (*rl.DROPPED, hs.NetError):
                    pass
            await trio.aclose_forcefully(stream)

        nursery.start_soon(answering)

    def leftover(self) -> str | None:
        relay = self.relay
        if relay.tables:
            return f"{len(relay.tables)} table(s) still registered"
        for gate in (relay.pending, relay.registrations, relay.joining, relay.pairs,
                     relay.watchers):
            if gate.pending:
                return f"{gate.pending} slot(s) still held in {gate.name}"
        return None

    async def clean_pair(self, nursery: trio.Nursery) -> None:
        """A host registers a fresh token and answers; a joiner pairs and a frame passes."""
        token = b"C" * rl.TOKEN_SIZE
        host = await self.connect(nursery)
        await hs.send_message(host, _opening("relay-host", token))
        if (await hs.receive_message(host)).get("k") != "relay-ready":
            raise RelayLeak("a clean host was not registered after the case")
        joiner = await self.connect(nursery)
        opening = _opening("relay-join", token)
        if self.named:  # a punching pair: `at` and `port` in the call, `self` to each
            opening.update(punch=True, port=4000)
        await hs.send_message(joiner, opening)
        called = await hs.receive_message(host)
        call = rl.call_id(called)
        answer = await self.connect(nursery)
        opening = _opening("relay-answer", token, call)
        if self.named:
            if rl.read_port(called) != 4000:
                raise RelayLeak(f"a clean punching joiner's call is {called}")
            opening["port"] = 5000
        await hs.send_message(answer, opening)
        if self.named:
            seen = rl.read_seen(await hs.receive_message(answer))
            at, own, port = rl.read_paired(await hs.receive_message(joiner), True)
            if seen is None or at != seen or own is None or port != 5000:
                raise RelayLeak("a clean punching pair was not told its addresses and ports")
        elif (await hs.receive_message(joiner)).get("k") != "relay-paired":
            raise RelayLeak("a clean joiner was not paired after the case")
        await joiner.send(b"ping")
        if await answer.receive() != b"ping":
            raise RelayLeak("a frame did not pass through a clean pair")
        for stream in (host, joiner, answer):
            await trio.aclose_forcefully(stream)

    async def main(self) -> None:
        async with trio.open_nursery() as nursery:
            async with trio.open_nursery() as clients:
                for conn in self.case["conns"]:
                    for copy in range(conn.get("copies", 1)):
                        clients.start_soon(self.client, _copy(conn, copy), nursery)
            await trio.sleep(SETTLE_S)
            left = self.leftover()
            if left is not None:
                raise RelayLeak(f"{SETTLE_S:g} s after every client closed: {left}")
            with trio.fail_after(SETTLE_S):
                await self.clean_pair(nursery)
            nursery.cancel_scope.cancel()


class _Named:
    """What the relay asks of a socket: its peer's name."""

    def __init__(self, name: tuple[str, int]) -> None:
        self.name = name

    def getpeername(self) -> tuple[str, int]:
        return self.name


def run(case: dict[str, Any]) -> None:
    """Run the script; raises on a crash (anything escaping the relay) or a leak."""
    trio.run(_Run(case).main, clock=trio.testing.MockClock(autojump_threshold=0))
