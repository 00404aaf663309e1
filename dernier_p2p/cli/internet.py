"""Making a hosted table reachable from the Internet, and saying so at each step.

:func:`open_routes` runs beside a :class:`~dernier_p2p.net.host.Host`: it asks the router for a
port mapping (UPnP, then NAT-PMP), registers the table with a relay if one is given (and again
if the relay goes away), tells the user what worked and what to do when nothing did, and
builds the invite code. The mapping is removed when the table closes. :func:`seat_routes` does
the same for a joining seat that offers to host if the host goes away, and
:func:`takeover_note` says, once, for whom that seat can take over.
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import trio

from dernier_p2p.net.address import host_port, is_loopback
from dernier_p2p.net.invite import Invite, Route, fingerprint, show_fingerprint
from dernier_p2p.net.portmap import Attempt, Mapping, mapped
from dernier_p2p.net.relay import keep_registered, new_token

RETRY_S = 5.0


def _is_public(address: str) -> bool:
    """Whether ``address`` is a global IP address (no router stands in the way)."""
    try:
        return ipaddress.ip_address(address).is_global
    except ValueError:
        return False


@asynccontextmanager
async def open_routes(
    host: Any,
    echo: Callable[..., None],
    *,
    advertise: str,
    relay: tuple[str, int] | None = None,
    map_port: bool = True,
    map_timeout_s: float = 2.0,
) -> AsyncIterator[Invite]:
    """Make ``host`` (a running Host) reachable; yield its :class:`Invite` while it lasts."""
    port = host.port
    routes = [Route("direct", advertise, port)]
    public = _is_public(advertise)
    wanted = map_port and not is_loopback(advertise) and not public
    attempt = Attempt()
    if public:
        echo(f"This machine has a public address: players reach it directly at "
             f"{routes[0].where}.")
    if wanted:
        echo(f"Opening port {port} on your router (UPnP, then NAT-PMP)...")
    async with trio.open_nursery() as nursery, _maybe_mapped(wanted, port, attempt,
                                                              map_timeout_s) as mapping:
        if mapping is not None:
            echo(f"  done ({mapping.method}): reachable at "
                 f"{mapping.external_ip}:{mapping.external_port}")
            routes.append(Route("mapped", mapping.external_ip, mapping.external_port))
        elif wanted:
            echo("  no router mapping (" + "; ".join(attempt.notes) + ")")
        if relay is not None:
            token = new_token()
            registered = await _register(nursery, host, relay, token, echo)
            routes.append(Route("relay", relay[0], relay[1], token))
            if registered and mapping is None:
                echo(f"Players outside your network will connect through the relay "
                     f"{relay[0]}:{relay[1]}.")
        if mapping is None and relay is None and not is_loopback(advertise) and not public:
            echo("Nothing makes this table reachable from the Internet: players on your own "
                 f"network can join; for others, forward TCP port {port} on your router to "
                 f"this machine, or add --relay HOST:PORT (anyone with a reachable machine "
                 "can run `dernier relay`).")
        invite = Invite(fingerprint(host.identity.public_bytes()), tuple(routes))
        echo(f"Host key fingerprint: {show_fingerprint(invite.fingerprint)}")
        yield invite
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def _maybe_mapped(
    wanted: bool, port: int, attempt: Attempt, timeout_s: float
) -> AsyncIterator[Mapping | None]:
    if not wanted:
        yield None
        return
    async with mapped(port, attempt, timeout_s=timeout_s) as mapping:
        yield mapping


async def _register(
    nursery: trio.Nursery, host: Any, relay: tuple[str, int], token: bytes,
    echo: Callable[..., None],
) -> bool:
    """Register with the relay and keep it registered (again after a loss, every RETRY_S);
    whether the first registration worked. Tells the user of each loss and comeback."""
    where = f"{relay[0]}:{relay[1]}"
    seen = [0]

    def notify(kind: str, text: str) -> None:
        if kind == "lost":
            echo(f"Relay: {text}; trying again every {RETRY_S:g} s.")
        else:
            seen[0] += 1
            echo(f"Registered the table with the relay {where}"
                 + (" again." if seen[0] > 1 else "."))

    return bool(await nursery.start(partial(keep_registered, relay, token, host.handle,
                                            retry_s=RETRY_S, notify=notify)))


@asynccontextmanager
async def seat_routes(
    config: Any,
    echo: Callable[..., None],
    *,
    map_port: bool = True,
    map_timeout_s: float = 2.0,
) -> AsyncIterator[None]:
    """Make a joining seat reachable as a candidate host (PROTOCOL.md 7.6) while the block
    lasts: ask the router to forward its fixed ``listen`` port and announce the mapping
    (``config.announce``, a PeerConfig's), else stand by at the code's relay
    (``config.relay_standby``), telling the user how the router answered (for whom the seat
    can then take over is said once seated: :func:`takeover_note`). A loopback or public
    listen address, or port 0, needs neither."""
    listen = config.listen
    if listen is None or listen[1] == 0 or is_loopback(listen[0]) or _is_public(listen[0]):
        yield
        return
    port = listen[1]
    attempt = Attempt()
    relay = config.relay
    if map_port:
        echo(f"Opening port {port} on your router, so that this seat can host if the host "
             "goes away (UPnP, then NAT-PMP)...")
    async with _maybe_mapped(map_port, port, attempt, map_timeout_s) as mapping:
        if mapping is not None:
            config.announce = (mapping.external_ip, mapping.external_port)
            echo(f"  done ({mapping.method}): the router forwards "
                 f"{host_port(mapping.external_ip, mapping.external_port)} to this machine")
        else:
            if map_port:
                echo("  no router mapping (" + "; ".join(attempt.notes) + ")")
            if relay is not None:
                config.relay_standby = True
        yield


def takeover_note(
    listen: tuple[str, int] | None,
    *,
    problem: str | None = None,
    mapped: tuple[str, int] | None = None,
    relay: tuple[str, int] | None = None,
) -> str:
    """The one line a joiner reads about hosting the table if the host goes away: for whom
    this seat can take over (every player, the players on this network, on this machine),
    or why it cannot. ``listen``: the address the table lists for this seat, with the port it
    listens on (None: it offers none); ``problem``: why it could not listen; ``mapped``: the
    router's address forwarded to it; ``relay``: the relay where it stands by."""
    head = "If the host goes away, this seat"
    others = "another seat takes over if one can"
    if problem is not None:
        return f"{head} cannot take over as host ({problem}); {others}."
    if listen is None:
        return f"{head} does not offer to take over as host; {others}."
    at = host_port(*listen)
    if mapped is not None:
        return (f"{head} can take over as host for every player: the router forwards "
                f"{host_port(*mapped)} to it.")
    if relay is not None:
        return (f"{head} can take over as host for every player: players on this network "
                f"reach it at {at}, the others through the relay {host_port(*relay)}.")
    if is_loopback(listen[0]):
        return f"{head} can take over as host only for players on this machine ({at})."
    if _is_public(listen[0]):
        return f"{head} can take over as host for every player, at {at}."
    try:
        ipaddress.ip_address(listen[0])
    except ValueError:  # a name: whoever it leads to
        return f"{head} can take over as host for the players who reach {at}."
    return (f"{head} can take over as host only for players on this network ({at}): "
            f"players elsewhere cannot reach that address; {others}.")
