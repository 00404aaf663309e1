"""The fault firewall: whatever goes wrong while handling one connection's bytes ends that
connection only.

:func:`guard` runs a connection handler. The expected ends of a connection (the peer closed,
a frame too long, a broken stream) end it quietly; any other exception (a bug reached by
hostile bytes) is logged with the peer's address and the error, with its traceback at debug
level, and also ends only that connection: never the listener, another connection, the host
process or its match. Cancellation passes through untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import trio

from dernier_p2p.net.address import host_port
from dernier_p2p.net.framing import FrameError, PeerClosed

log = logging.getLogger("dernier_p2p.net.firewall")

QUIET = (FrameError, PeerClosed, trio.BrokenResourceError, trio.ClosedResourceError, OSError)
"""Exceptions that are an ordinary end of a connection."""


class Faults:
    """Counts of connections ended by an internal fault (for tests and the fuzz harness)."""

    count = 0
    last: BaseException | None = None


def peer_address(stream: object) -> str:
    """``host:port`` of the far end of a socket stream (``?`` if it cannot be told)."""
    sock = getattr(stream, "socket", None)
    try:
        host, port = sock.getpeername()[:2]  # type: ignore[union-attr]
    except (AttributeError, OSError, TypeError, ValueError):
        return "?"
    return host_port(str(host), port)


def source_of(address: str) -> str:
    """The host part of a :func:`peer_address` (what per-address caps count by, not the port)."""
    return address.rsplit(":", 1)[0]


def report(address: str, exc: BaseException, outcome: str = "connection ended") -> None:
    """Log an internal fault met while handling bytes from ``address``."""
    Faults.count += 1
    Faults.last = exc
    log.error("internal fault on bytes from %s (%s): %s: %s",
              address, outcome, type(exc).__name__, exc)
    log.debug("traceback of the fault", exc_info=exc)


async def guard(run: Callable[[], Awaitable[None]], address: str) -> None:
    """Await ``run()``; end quietly on :data:`QUIET`, report any other exception."""
    try:
        await run()
    except* QUIET:
        pass
    except* Exception as group:
        for exc in leaves(group):
            report(address, exc)


def leaves(group: BaseException) -> list[BaseException]:
    """Every exception inside ``group`` and its nested groups (``group`` itself if it is none)."""
    out: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        exc = stack.pop()
        if isinstance(exc, BaseExceptionGroup):
            stack.extend(exc.exceptions)
        else:
            out.append(exc)
    return out
