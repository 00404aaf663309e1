"""Watching a live table: an observer that follows the host's records without a seat.

A :class:`Watcher` connects to a host (at an address, or through an invite code's dialer),
answers the challenge with ``watch`` (PROTOCOL.md 4.10) and then only reads: every record is
checked and applied by an observer session (``seat=None``: every public card, no hand until it
is revealed) and appended to the watcher's own transcript, which ``dernier verify`` checks like a
seat's. It sends nothing; ``status`` frames become presence notices. The match's end (the host
closes after its last record) ends the watch; a record the session refuses stops it (the record
that proves a fault is kept as the transcript's last, as a seat keeps it).

A connection that breaks before the end, or stays silent longer than an honest host can (no
frame for ``max(turn_ms, censor_ms) + grace_ms``: a Wi-Fi link or a home router that dropped the
connection without a word, or a host frozen in place), is opened again with ``have`` = the last
record held,
at the host's address and at the listen address of the seat that takes over if the host is gone
(7.6), in turn, for up to ``2 * grace_ms`` plus ``turn_ms`` of the table; then HostLost. A record
only the lost host ever relayed (to this watcher alone) would make the new host's next record a
BAD_CHAIN here: a watcher cannot hand records to a new host, as seats do.

A watcher that dialled by an invite code checks the code's fingerprint against the key in
the challenge (unsigned) and again against record 0's host key (signed): a relay or a router
in the middle cannot show it another host's match (WRONG_HOST); every later host change is
checked against the chain, as a seat checks it.

The watched seat is a :class:`~.seat.LocalSeat` without identity, agent or seat number, so the
narrator and the full-screen table follow it as they follow a player's seat.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio

from dernier_p2p.net import handshake as hs
from dernier_p2p.net import links
from dernier_p2p.net.framing import FramedStream, FrameError, open_framed
from dernier_p2p.net.peer import DROPPED, HostLost
from dernier_p2p.net.reach import new_host_dialer
from dernier_p2p.net.seat import LocalSeat
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.frames import FRAME_FIELDS
from dernier_p2p.protocol.votes import CENSOR_MS

log = logging.getLogger("dernier_p2p.net.watch")

Candidate = tuple[Callable[[], Awaitable[FramedStream]], Callable[[bytes], None] | None]
"""A way to open a connection to the table's host, and the check of its challenge key."""


@dataclass
class WatchConfig:
    """``transcript``: where to write the records (None: nowhere); ``dial``: an invite code's
    dialer (instead of the address); ``check_host``: refuses a host key (an invite's
    fingerprint); ``offload``: check long records (shuffles) in a worker thread, so a screen
    stays live."""

    transcript: str | os.PathLike[str] | None = None
    connect_s: float = 10.0
    dial: Callable[[], Awaitable[FramedStream]] | None = None
    check_host: Callable[[bytes], None] | None = None
    offload: bool = True
    silence_s: float | None = None  # None: the table's max(turn_ms, CENSOR_MS) + grace_ms


class Watcher:
    """Follows the table at ``address`` (see the module docstring); use :meth:`run`."""

    def __init__(self, address: tuple[str, int], config: WatchConfig | None = None) -> None:
        self.address = address
        self.config = config or WatchConfig()
        self.me: LocalSeat | None = None
        self.started = trio.Event()
        self.table: dict[str, Any] = {}  # the challenge's table summary
        self.last = -1  # the host's last record when the watch began
        # how to reach the host now, and the key check of its challenge
        self._at_host: Candidate = (self._open, self.config.check_host)

    async def local_seat(self) -> LocalSeat:
        """The watched seat, once record 0 has come."""
        await self.started.wait()
        assert self.me is not None
        return self.me

    async def _open(self) -> FramedStream:
        if self.config.dial is not None:
            return await self.config.dial()
        return await open_framed(*self.address, hs.MAX_FRAME)

    async def run(self) -> Any:
        """Watch until the match is over; return its result. Raises RemoteError (the host
        refused the watch), HostLost (the connection ended before the match did), ProtocolError
        (a record refused, naming the seat at fault)."""
        with trio.fail_after(self.config.connect_s):
            stream = await self._open()
            self.last, self.table = await hs.watch(stream, -1, self.config.check_host)
        log.info("watching %s (host at record %d)", self.address, self.last)
        try:
            while self.me is None or not self.me.finished:
                msg = None
                try:
                    with trio.move_on_after(self._silence_s()):
                        msg = await hs.receive_message(stream)
                except DROPPED:
                    if self.me is None:
                        raise HostLost("the host closed the connection before the match "
                                       "started") from None
                if msg is None:  # dropped, or silent for longer than a live table is
                    log.info("watching: the connection to the host broke or went silent")
                    await trio.aclose_forcefully(stream)
                    stream = await self._reconnect()
                    continue
                await self._on_message(msg)
        finally:
            if self.me is not None:
                self.me.close()
            await trio.aclose_forcefully(stream)
        return self.me.session.result

    def _silence_s(self) -> float:
        """How long the connection may bring no frame at all before it counts as broken: for
        ever in the lobby (a table may wait long for its players), then the longest an honest
        host stays silent: a turn (or the censor bound) and a dropped seat's grace."""
        if self.me is None:
            return float("inf")
        if self.config.silence_s is not None:
            return self.config.silence_s
        timers = self.me.session.table_body["timers"]
        return (max(timers["turn_ms"], CENSOR_MS) + timers["grace_ms"]) / 1000

    async def _reconnect(self) -> FramedStream:
        """Watch again after a broken connection: at the host, or at the seat that takes over
        (see the module docstring); HostLost if neither admits this watcher in time."""
        assert self.me is not None
        session = self.me.session
        timers = session.table_body["timers"]
        until = trio.current_time() + (2 * timers["grace_ms"] + timers["turn_ms"]) / 1000
        while trio.current_time() < until:
            for open_stream, check in self._candidates():
                stream = None
                try:
                    with trio.fail_after(self.config.connect_s):
                        stream = await open_stream()
                        have = len(self.me.records) - 1
                        self.last, _ = await hs.watch(stream, have, check)
                    log.info("watching again from record %d", have + 1)
                    self._at_host = (open_stream, check)
                    return stream
                except (*DROPPED, hs.NetError, FrameError, trio.TooSlowError) as exc:
                    log.info("watching: not yet back at the table: %s", exc)
                    if stream is not None:
                        await trio.aclose_forcefully(stream)
            await trio.sleep(0.25)
        raise HostLost("the host is gone and no seat took over in time")

    def _candidates(self) -> list[Candidate]:
        """Where the table may be now: the host as first reached, and the listen address of
        the seat that takes over if the host is gone (its key must be that seat's)."""
        assert self.me is not None
        session = self.me.session
        out = [self._at_host]
        new = session.chain.next_host()
        listen = None if new is None else links.address_of(session, new)
        if new is not None and listen is not None:  # refuses another key (WRONG_HOST)
            dial = new_host_dialer(listen, None, session.game, session.keys[new])
            out.append((dial, dial.check_host))
        return out

    async def _on_message(self, msg: dict[str, Any]) -> None:
        if msg["k"] == "status":
            self._on_status(msg)
            return
        if msg["k"] in ("ready", "beat"):  # a seat's pass (18), a keepalive (4.3)
            return
        if msg["k"] != "rec":
            raise hs.NetError(hs.UNEXPECTED, f"unexpected frame {msg['k']!r} from the host")
        if set(msg) != FRAME_FIELDS["rec"]:
            raise hs.NetError(hs.MALFORMED, "a rec frame is {k, rec}")
        rec = msg["rec"]
        if self.me is None:
            self.me = LocalSeat.observer(rec, self.config.transcript, self.config.offload,
                                         self.config.check_host)  # the code names its host
            self.started.set()
            return
        now = int(trio.current_time() * 1000)
        try:
            await self.me.receive(rec, now)
        except ProtocolError:
            log.error("watching: record %s refused", rec.get("i") if isinstance(rec, dict)
                      else "?")
            raise

    def _on_status(self, msg: dict[str, Any]) -> None:
        """A ``status`` frame: a presence notice if well formed, else ignored (informative)."""
        status = hs.check_status(msg, self.me.session.n if self.me is not None else 0)
        if status is None or self.me is None:
            log.warning("watching: malformed status frame from the host ignored")
            return
        self.me.note_status(*status)
