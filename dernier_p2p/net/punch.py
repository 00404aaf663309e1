"""Hole punching: a direct TCP connection between two peers behind routers, met at a relay.

PROTOCOL.md 4.7 step 5 (version 4). Each side opens its relay connection from a fresh port
that every socket of it may share (SO_REUSEADDR and SO_REUSEPORT): :func:`open_reusable`. The
relay tells each side the address and port it saw for the other (``at``: its router's mapping
of that port). Then :func:`punch` listens on the port and connects from it to the other's
``at``, again after each reset or timeout, for :data:`PUNCH_S`: the two connections meet in
TCP's simultaneous open (each router has let the other side in by sending out first), or one
comes in to the listener. Each connection made is handed to ``take`` until one is taken.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from dernier_p2p.net.address import is_loopback
from dernier_p2p.net.framing import FramedStream

log = logging.getLogger("dernier_p2p.net.punch")

CAN_PUNCH = hasattr(socket, "SO_REUSEPORT")  # where sockets can share a port
PUNCH_S = 2.0  # how long both sides try, from the rendezvous
ATTEMPT_S = 1.0  # one connect attempt at most (a dropped packet is not waited for longer)
RETRY_S = 0.2  # after a reset or a timeout
MAX_PUNCHING = 8  # punches a host runs at once (beyond: answered through the relay only)
MAX_OFFERS = 16  # connections one punch looks at (more, coming in to its listener, are closed)
MAX_REVERSING = 8  # calls back to joiners a host runs at once (4.7 step 6)

Take = Callable[[FramedStream], Awaitable[bool]]


def check_at(value: Any) -> tuple[str, int]:
    """An ``at`` field (``[address, port]``: an IP address in text, a port 1..65535) as a
    tuple; :class:`ValueError` saying what is wrong otherwise."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ValueError("`at` is [address, port]")
    address, port = value
    if not isinstance(address, str) or len(address) > 64:
        raise ValueError("`at` address is an IP address in text")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        raise ValueError("`at` address is an IP address in text") from None
    if ip.is_unspecified or ip.is_multicast or address == "255.255.255.255":
        raise ValueError("`at` address is one machine's (not unspecified, multicast or "
                         "broadcast)")
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise ValueError("`at` port is an integer 1..65535")
    return address, port


def check_port(value: Any, field: str = "port") -> int:
    """A ``port`` field of the relay frames (version 5: a local punch port, 4.7 step 5): an
    int 1..65535, not a boolean; :class:`ValueError` saying what is wrong otherwise."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 65535:
        raise ValueError(f"`{field}` is an integer 1..65535")
    return value


def may_punch(at: tuple[str, int], relay: tuple[str, int]) -> bool:
    """Whether to punch toward ``at`` given by the relay at ``relay``: a loopback ``at`` only
    from a relay reached on loopback (a relay elsewhere cannot point this machine at its own
    services)."""
    return not is_loopback(at[0]) or is_loopback(relay[0])


def may_call(reach: tuple[str, int], at: tuple[str, int], relay: tuple[str, int]) -> bool:
    """Whether a host calls a joiner back at ``reach`` (4.7 step 6), the joiner seen by the
    relay at ``relay`` from ``at``: ``reach`` is at the joiner's own outside address or a
    global one (never a machine of the host's network named by someone else), and a loopback
    one only from a relay reached on loopback."""
    if not may_punch(reach, relay):
        return False
    ip = ipaddress.ip_address(reach[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return False
    return reach[0] == at[0] or ip.is_global


def reusable(family: int, port: int) -> trio.socket.SocketType:
    """A TCP socket that shares its port with the others of a punch (SO_REUSEADDR and
    SO_REUSEPORT; IPv6 only, for IPv6); :class:`OSError` where the system cannot."""
    sock = trio.socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    except (OSError, AttributeError) as exc:  # no SO_REUSEPORT (Windows): no punching here
        sock.close()
        raise OSError(f"cannot share a port for hole punching: {exc}") from None
    return sock


async def open_reusable(host: str, port: int, max_frame: int) -> tuple[FramedStream, int, int]:
    """Connect to ``host``:``port`` from a fresh local port that a listener and other
    connections may share: the framed stream, the address family and the local port.
    :class:`OSError` if it cannot (a name that does not resolve, no route, no reusable
    ports on this system)."""
    infos = await trio.socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    if not infos:
        raise OSError(f"{host} has no address")
    family, _, _, _, address = infos[0]
    sock = reusable(family, 0)
    try:
        await sock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", 0))
        await sock.connect(address)
    except BaseException:
        sock.close()
        raise
    return FramedStream(trio.SocketStream(sock), max_frame), family, sock.getsockname()[1]


async def punch(family: int, port: int, remote: tuple[str, int], take: Take, max_frame: int,
                window_s: float = PUNCH_S, made: trio.Event | None = None) -> bool:
    """For ``window_s``: listen on local ``port`` and connect from it to ``remote``, handing
    each connection made to ``take`` (which returns whether it keeps it; one not kept is
    closed). Whether one was taken; at most one is. ``made`` is set at the first connection
    made (the birthday punch, :mod:`.birthday`, then starts nothing more)."""
    bind = "::" if family == socket.AF_INET6 else "0.0.0.0"
    taken = False
    with trio.move_on_after(window_s):
        async with trio.open_nursery() as nursery:
            offers = 0

            async def offer(stream: trio.SocketStream) -> None:
                nonlocal taken, offers
                framed = FramedStream(stream, max_frame)
                kept = False
                offers += 1
                if made is not None:
                    made.set()
                try:
                    if not taken and offers <= MAX_OFFERS:
                        kept = await take(framed)
                finally:
                    if kept and not taken:
                        taken = True
                        nursery.cancel_scope.cancel()
                    elif not kept:
                        await trio.aclose_forcefully(framed)

            async def listen() -> None:
                listener = None
                try:
                    listener = reusable(family, port)
                    await listener.bind((bind, port))
                    listener.listen(4)
                except OSError as exc:  # connecting alone may still meet the other side
                    log.info("punch: cannot listen on port %d: %s", port, exc)
                    if listener is not None:
                        listener.close()
                    return
                with listener:
                    while True:
                        sock, _ = await listener.accept()
                        log.info("punch: a connection came in from %s", sock.getpeername()[:2])
                        nursery.start_soon(offer, trio.SocketStream(sock))

            async def connect() -> None:
                attempts = 0
                while True:
                    attempts += 1
                    connected = False
                    sock = None
                    try:
                        sock = reusable(family, port)
                        await sock.bind((bind, port))
                        with trio.move_on_after(ATTEMPT_S):
                            await sock.connect(remote)
                            connected = True
                    except OSError as exc:
                        log.debug("punch attempt %d to %s: %s", attempts, remote, exc)
                    if connected and sock is not None:
                        log.info("punch: connected to %s at attempt %d", remote, attempts)
                        nursery.start_soon(offer, trio.SocketStream(sock))
                        return
                    if sock is not None:
                        sock.close()
                    await trio.sleep(RETRY_S)

            nursery.start_soon(listen)
            nursery.start_soon(connect)
    return taken


async def accept(listeners: list[trio.SocketListener], take: Take, max_frame: int,
                 window_s: float = PUNCH_S, made: trio.Event | None = None
                 ) -> FramedStream | None:
    """For ``window_s``: accept connections on ``listeners`` (a joiner's, called back by its
    host, 4.7 step 6), handing each to ``take`` until one is taken (at most
    :data:`MAX_OFFERS` are looked at; one not taken is closed). The one taken, or None.
    ``made`` is set at the first connection that comes in."""
    kept: list[FramedStream] = []
    with trio.move_on_after(window_s):
        async with trio.open_nursery() as nursery:
            offers = 0

            async def offer(stream: trio.abc.Stream) -> None:
                framed = FramedStream(stream, max_frame)
                ok = False
                try:
                    ok = not kept and await take(framed)
                finally:
                    if ok and not kept:
                        kept.append(framed)
                        nursery.cancel_scope.cancel()
                    else:
                        await trio.aclose_forcefully(framed)

            async def listen(listener: trio.SocketListener) -> None:
                nonlocal offers
                while True:
                    stream = await listener.accept()
                    offers += 1
                    if made is not None:
                        made.set()
                    if offers > MAX_OFFERS:
                        await trio.aclose_forcefully(stream)
                        continue
                    log.info("a call back came in from %s",
                             stream.socket.getpeername()[:2])
                    nursery.start_soon(offer, stream)

            for listener in listeners:
                nursery.start_soon(listen, listener)
    return kept[0] if kept else None

