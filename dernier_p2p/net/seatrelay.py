"""Seat relays: every seat that can be reached relays for its own table (PROTOCOL.md 4.7 step 7).

A seat serves its relay at its ``listen`` address (a relay opening answering its challenge:
:meth:`~.driver.Driver.serve_relayed`). This module is the other side: which seats of a table
are seat relays (record 0's ``listen`` addresses that are global: :func:`seat_relays`), and
standing by at them (:func:`stand_by`), so that a resume or a new host after a host change is
reached through a seat once the outside relay is gone, or where there was none.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

import trio

from dernier_p2p.net import links
from dernier_p2p.net.relay import Handler, keep_registered, seat_token

log = logging.getLogger("dernier_p2p.net.seatrelay")

MAX_SEAT_RELAYS = 4  # seat relays a seat stands by at, and tries, in seat order
RETRY_S = 5.0  # a lost registration at a seat relay is made again after this


def is_reachable(address: tuple[str, int] | None) -> bool:
    """Whether a ``listen`` address can be reached from the Internet as far as a seat can tell:
    a global IP address (a router's mapping, a public IPv4 or a global IPv6 address)."""
    if address is None:
        return False
    try:
        return ipaddress.ip_address(address[0]).is_global
    except ValueError:
        return False


def seat_relays(session: Any, own: int | None, target: int | None = None,
                ) -> list[tuple[str, int]]:
    """The seat relays of ``session``'s table a seat ``own`` uses to reach seat ``target``:
    the global ``listen`` addresses of the other seats, in seat order, the first
    :data:`MAX_SEAT_RELAYS`."""
    out = []
    for seat in range(session.n):
        address = links.address_of(session, seat)
        if seat not in (own, target) and is_reachable(address):
            assert address is not None
            out.append(address)
    return out[:MAX_SEAT_RELAYS]


def stands_by_at(session: Any, relay: int, target: int) -> bool:
    """Whether seat ``target`` stands by at seat ``relay``'s seat relay: its own ``listen``
    address is not reachable and ``relay``'s is among the seat relays it uses
    (:func:`seat_relays`, as :func:`stand_by` picks them)."""
    if relay == target or is_reachable(links.address_of(session, target)):
        return False
    here = links.address_of(session, relay)
    return is_reachable(here) and here in seat_relays(session, target)


def relays_to(session: Any, own: int | None, target: int, own_relay: tuple[str, int] | None
              ) -> tuple[list[tuple[str, int]], tuple[str, int] | None]:
    """The seat relays by which seat ``own`` reaches seat ``target`` (:func:`seat_relays`),
    and its own seat relay, at ``own_relay`` on this machine, when ``target`` stands by there
    (:func:`stands_by_at`; else None): for resumes, a new host and links alike."""
    relays = seat_relays(session, own, target)
    if own is None or own_relay is None or not stands_by_at(session, own, target):
        return relays, None
    return relays, own_relay


def local_address(listeners: list[Any] | None) -> tuple[str, int] | None:
    """Where this process reaches its own listener (its seat relay, PROTOCOL.md 4.7 step 7)
    on this machine: the listening socket's own address, the loopback address for one bound
    to every interface (never the router's outside address, which only a router that
    hairpins would bring back); an IPv4 listener first. None without a listener."""
    found = []
    for listener in listeners or ():
        try:
            host, port = listener.socket.getsockname()[:2]
        except OSError:
            continue
        if host in ("0.0.0.0", ""):
            host = "127.0.0.1"
        elif host == "::":
            host = "::1"
        found.append((":" in host, (host, port)))
    return min(found, key=lambda f: f[0])[1] if found else None


async def stand_by(session: Any, own: int, key: bytes, handler: Handler) -> None:
    """Stand by under this seat's token at each seat relay of its table while the match lasts
    (until cancelled), unless its own ``listen`` address is reachable (PROTOCOL.md 4.7 step 7).
    Connections paired there are served by ``handler``, as on the seat's listener."""
    if is_reachable(links.address_of(session, own)):
        return
    relays = seat_relays(session, own)
    if not relays:
        return
    token = seat_token(session.game, key)
    async with trio.open_nursery() as nursery:
        for address in relays:
            where = f"{address[0]}:{address[1]}"

            def notify(kind: str, text: str, where: str = where) -> None:
                log.info("seat %d at the seat relay %s: %s", own, where, text)

            nursery.start_soon(_keep, address, token, handler, notify)


async def _keep(address: tuple[str, int], token: bytes, handler: Handler, notify: Any) -> None:
    await keep_registered(address, token, handler, retry_s=RETRY_S, notify=notify, seat=True)
