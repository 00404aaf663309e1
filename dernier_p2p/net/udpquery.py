"""One request to the home router over UDP, sent again with a doubling wait until it answers.

NAT-PMP (RFC 6886, :mod:`.portmap`) and PCP (RFC 6887, :mod:`.pinhole`) ask the router the same
way: a datagram to its port 5351, sent again at 0.25 s, 0.5 s, 1 s ... until a reply comes or
the time is up (RFC 6886 3.1 doubles from 250 ms). :func:`query` is that exchange; the caller's
``read`` judges each datagram that comes back, and the type of what it raises decides what
happens next: ``final`` (the router answered this request, say a refusal: asking again changes
nothing) ends the exchange with that error, ``skip`` (not the answer: another request's, or
bytes that are not the protocol's) is ignored while the wait goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import trio

T = TypeVar("T")

FIRST_WAIT_S = 0.25
"""The wait after the first send; it doubles after each send."""


async def query(
    family: int,
    address: tuple[str | int, ...],
    request: bytes,
    read: Callable[[bytes], T],
    *,
    final: tuple[type[Exception], ...],
    skip: type[Exception],
    timeout_s: float,
    size: int = 1100,
) -> T | None:
    """Send ``request`` to ``address`` (a ``family`` socket address) and again after each wait
    (:data:`FIRST_WAIT_S`, doubling) within ``timeout_s``; the value ``read`` gives the first
    datagram (of at most ``size`` bytes) it accepts, or None when none came in time.
    ``read`` raising one of ``final`` ends the exchange with that error; raising ``skip`` (and
    not ``final``) drops the datagram. An OSError of the socket (an ICMP "port unreachable"
    reported on the receive) ends it too."""
    sock = trio.socket.socket(family, trio.socket.SOCK_DGRAM)
    with sock:
        await sock.connect(address)
        wait = FIRST_WAIT_S
        deadline = trio.current_time() + timeout_s
        while trio.current_time() < deadline:
            await sock.send(request)
            with trio.move_on_after(min(wait, deadline - trio.current_time())):
                while True:
                    data = await sock.recv(size)
                    try:
                        return read(data)
                    except final:
                        raise
                    except skip:
                        continue
            wait *= 2
    return None
