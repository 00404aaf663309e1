"""Making a hosted table reachable from the Internet, and saying so at each step.

:func:`open_routes` runs beside a :class:`~dernier_p2p.net.host.Host`: it asks the router for a
port mapping (UPnP, then NAT-PMP), registers the table with a relay if one is given (and again
if the relay goes away), tells the user what worked and what to do when nothing did, and
builds the invite code. The mapping is removed when the table closes. :func:`seat_routes` does
the same for a joining seat that offers to host if the host goes away, and
:func:`takeover_note` says, once, for whom that seat can take over. :func:`listed_routes` asks
the router again, after a crash, for the mapping the table lists as a seat's address.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import trio

from dernier_p2p.net.address import host_port, is_loopback
from dernier_p2p.net.invite import Invite, Route, fingerprint, show_fingerprint
from dernier_p2p.net.ipv6 import is_global_ipv6
from dernier_p2p.net.pinhole import Pinhole, pinholed
from dernier_p2p.net.portmap import LEASE_S, Attempt, Mapping, mapped
from dernier_p2p.net.relay import keep_registered, new_token
from dernier_p2p.net.seatrelay import is_reachable

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
    ipv6: str | None = None,
    map_lease_s: int = LEASE_S,
    announce_mapping: bool = False,
) -> AsyncIterator[Invite]:
    """Make ``host`` (a running Host) reachable; yield its :class:`Invite` while it lasts.
    ``ipv6``: this machine's global IPv6 address, where the host listens too (offered first);
    ``map_lease_s``: the lease asked of the router for the port mapping;
    ``announce_mapping``: the host lists the mapping's outside address as its ``listen`` in
    record 0 (:meth:`~dernier_p2p.net.host.Host.announce`), as a joining seat with a mapping
    announces it (no --advertise given).
    Before the code, says which routes it holds and whether an outsider can use it
    (:func:`code_truth`)."""
    port = host.port
    routes = [Route("direct", advertise, port)]
    if ipv6 is not None and ipv6 != advertise:
        routes.insert(0, Route("direct", ipv6, port))
    public = _is_public(advertise) and ":" not in advertise  # IPv6: a firewall may stand
    wanted = map_port and not is_loopback(advertise) and not public and ":" not in advertise
    attempt = Attempt()
    registered = False
    if public:
        echo(f"This machine has a public address: players reach it directly at "
             f"{host_port(advertise, port)}.")
    if wanted:
        echo(f"Opening port {port} on your router (UPnP, then NAT-PMP)...")
    six = next((r.host for r in routes if ":" in r.host and _is_public(r.host)), None)
    async with trio.open_nursery() as nursery, _maybe_mapped(
            wanted, port, attempt, map_timeout_s, echo, map_lease_s) as mapping:
        if mapping is not None:
            echo(f"  done ({mapping.method}): reachable at "
                 f"{mapping.external_ip}:{mapping.external_port}")
            routes.append(Route("mapped", mapping.external_ip, mapping.external_port))
            if announce_mapping:
                host.announce((mapping.external_ip, mapping.external_port))
        elif wanted:
            echo("  no router mapping (" + "; ".join(attempt.notes) + ")")
        hole = None
        if six is not None and map_port:
            hole = await nursery.start(_keep_pinhole, six, port, echo, map_timeout_s)
        if relay is not None:
            token = new_token()
            registered = await _register(nursery, host, relay, token, echo)
            routes.append(Route("relay", relay[0], relay[1], token))
        for line in code_truth(routes, relay_answers=registered,
                               pinhole="" if hole is None else hole.method):
            echo(line)
        invite = Invite(fingerprint(host.identity.public_bytes()), tuple(routes))
        echo(f"Host key fingerprint: {show_fingerprint(invite.fingerprint)}")
        yield invite
        nursery.cancel_scope.cancel()


LOCAL_NETS = tuple(ipaddress.ip_network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16",
    "fc00::/7", "fe80::/10"))
"""The ranges of home and carrier networks (RFC 1918, RFC 6598, link-local, RFC 4193): an
address in one is reached only from its own network."""


def _relay_reach(host: str) -> str:
    """Who reaches a relay at ``host``: ``machine`` (a loopback address), ``network`` (an
    address of :data:`LOCAL_NETS`) or ``internet`` (any other address, or a name: a relay
    server, as its operator gave it)."""
    if is_loopback(host):
        return "machine"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return "internet"
    return "network" if any(ip in net for net in LOCAL_NETS) else "internet"


def _reach(route: Route) -> str:
    """Who can use one route of a code: ``internet``, ``ipv6`` (a global IPv6 address: the
    Internet where the router's firewall lets it in), ``network``, ``machine`` or ``name`` (a
    host name: whoever it leads to). A relay is judged by its own address (see
    :func:`_relay_reach`)."""
    if route.kind == "mapped":
        return "internet"
    if route.kind == "relay":
        return _relay_reach(route.host)
    if is_loopback(route.host):
        return "machine"
    if _is_public(route.host):
        return "ipv6" if ":" in route.host else "internet"
    try:
        ipaddress.ip_address(route.host)
    except ValueError:
        return "name"  # whoever it leads to, as the host chose it
    return "network"


def code_truth(
    routes: Sequence[Route], *, relay_answers: bool = True, pinhole: str = ""
) -> list[str]:
    """The host's plain account of its invite code, said before anyone tries it: one line
    listing the routes it holds and who can use each, and one on whether a player outside
    this network can join, and how (or what to do when nobody can). ``relay_answers``:
    whether the code's relay took the registration; ``pinhole``: how the router's IPv6
    firewall opened the port to the code's IPv6 address ("PCP", "UPnP"), if it did."""
    notes = []
    for route in routes:
        reach = _reach(route)
        if route.kind == "mapped":
            notes.append(f"your router's mapping {route.where}")
        elif route.kind == "relay":
            said = {"machine": "this machine only", "network": "your network only"}.get(reach)
            if not relay_answers:
                said = f"{said}; not answering now" if said else "not answering now"
            notes.append(f"the relay {route.where}" + (f" ({said})" if said else ""))
        else:
            notes.append(f"{route.where} " + {
                "machine": "(this machine only)", "network": "(your network only)",
                "internet": "(direct)", "name": "(wherever that name leads)",
                "ipv6": "(IPv6: your network, and the Internet: your router's firewall "
                        "opened it)" if pinhole else
                        "(IPv6: your network, and the Internet if your router's firewall "
                        "lets it in)"}[reach])
    lines = ["This code holds: " + "; ".join(notes) + "."]
    mapped = next((r for r in routes if r.kind == "mapped"), None)
    relay = next((r for r in routes if r.kind == "relay" and _reach(r) == "internet"), None)
    near = next((r for r in routes if r.kind == "relay" and _reach(r) != "internet"), None)
    direct = next((r for r in routes if _reach(r) == "internet" and r.kind == "direct"), None)
    six = next((r for r in routes if _reach(r) == "ipv6"), None)
    port = routes[0].port
    todo = (f"forward TCP port {port} on your router to this machine, or add --relay "
            "HOST:PORT (anyone with a reachable machine can run `dernier relay`)")
    if relay is None and near is not None:  # a relay only this machine or network reaches
        todo = (f"forward TCP port {port} on your router to this machine, or give --relay a "
                "relay at an address the Internet reaches (anyone with a reachable machine "
                "can run `dernier relay`)")
    if all(_reach(r) == "machine" for r in routes):
        lines.append("No route from outside this machine: only players on this machine can "
                     "join.")
    elif mapped is not None:
        lines.append(f"Reachable from the Internet through your router's mapping "
                     f"{mapped.where}.")
    elif direct is not None:
        lines.append(f"Reachable from the Internet directly at {direct.where}.")
    elif six is not None and pinhole:
        rest = (f"players without IPv6 connect through the relay {relay.where}"
                if relay is not None and relay_answers else
                f"players without IPv6 cannot join: for them, {todo}")
        lines.append(f"Reachable from the Internet over IPv6 at {six.where} (your router's "
                     f"firewall lets it in: {pinhole}); {rest}.")
    elif relay is not None and relay_answers:
        lines.append(f"Reachable from the Internet through the relay: players outside your "
                     f"network connect through the relay {relay.where}.")
    elif (named := next((r for r in routes if _reach(r) == "name"), None)) is not None:
        lines.append(f"Reachable by whoever reaches {named.where}: that name was given "
                     "(--advertise), so this program cannot tell who that is.")
    elif six is not None:
        lines.append(f"Reachable from the Internet only over IPv6, at {six.where}, and only "
                     "if your router's firewall lets new connections in (most home routers "
                     "drop them); otherwise no route from the Internet: only players on your "
                     f"network can join. For certain: {todo}.")
    elif relay is not None:
        lines.append(f"No route from the Internet while the relay {relay.where} does not "
                     "answer: only players on your network can join until it does (the host "
                     "keeps trying it).")
    elif near is not None:
        where = "this machine" if _reach(near) == "machine" else "your network"
        lines.append(f"No route from the Internet: the relay {near.where} is reached only from "
                     f"{where}, so only players on your network can join. For others, "
                     f"{todo}.")
    else:
        lines.append(f"No route from the Internet: only players on your network can join. "
                     f"For others, {todo}.")
    return lines


async def _keep_pinhole(
    address: str, port: int, echo: Callable[..., None], timeout_s: float,
    seat: bool = False,
    task_status: trio.TaskStatus[Pinhole | None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Ask the router's IPv6 firewall for a pinhole to ``address``:``port`` (PCP, or UPnP)
    and keep it until cancelled; report the pinhole (or None) to ``task_status``, telling
    the user (a joined ``seat``'s words for the renewals)."""
    echo(f"Opening port {port} in your router's IPv6 firewall (PCP, or UPnP)...")
    attempt = Attempt()
    where = host_port(address, port)
    async with pinholed(address, port, attempt, timeout_s=timeout_s,
                        told=lambda ok: echo(renewal_line(ok, "pinhole", where, seat))) as hole:
        if hole is not None:
            echo(f"  done ({hole.method}): the Internet reaches {host_port(address, port)}")
        else:
            echo("  no pinhole (" + "; ".join(attempt.notes) + ")")
        task_status.started(hole)
        if hole is not None:
            await trio.sleep_forever()


def renewal_line(ok: bool, what: str, where: str, seat: bool = False) -> str:
    """What the host (``seat``: a joined seat, whose mapping is for links and for hosting if
    the host goes away) is told when its router stops taking, or takes again, the renewals of
    its port mapping or IPv6 pinhole (``what``) to ``where``."""
    if seat:
        if ok:
            return (f"The router renews the {what} again: the other players reach this seat "
                    f"at {where}.")
        return (f"The router did not renew the {what}: the other players may no longer reach "
                f"this seat at {where} (to link to it, or if it takes over as host); asking "
                "again within a minute, until it does.")
    if ok:
        return f"The router renews the {what} again: the Internet reaches {where}."
    return (f"The router did not renew the {what}: players outside may no longer reach "
            f"{where} (connections already made usually stay up); asking again within "
            f"a minute, until it does.")


@asynccontextmanager
async def _maybe_mapped(
    wanted: bool, port: int, attempt: Attempt, timeout_s: float,
    echo: Callable[..., None],
    lease_s: int = LEASE_S,
    seat: bool = False,
) -> AsyncIterator[Mapping | None]:
    """The router's mapping of ``port`` (asked for ``lease_s``) while the block lasts, if
    ``wanted``; each change between renewals taken and not is told with :func:`renewal_line`
    (a joined ``seat``'s words)."""
    if not wanted:
        yield None
        return
    seen: list[str] = []

    def told(ok: bool) -> None:
        echo(renewal_line(ok, "port mapping", seen[0] if seen else f"port {port}", seat))

    async with mapped(port, attempt, timeout_s=timeout_s, lease_s=lease_s,
                      told=told) as mapping:
        if mapping is not None:
            seen.append(f"{mapping.external_ip}:{mapping.external_port}")
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
    ipv6: str | None = None,
    map_lease_s: int = LEASE_S,
) -> AsyncIterator[None]:
    """Make a joining seat reachable as a candidate host (PROTOCOL.md 7.6) while the block
    lasts: ask the router to forward its fixed ``listen`` port and announce the mapping
    (``config.announce``, a PeerConfig's), else announce this machine's global IPv6 address
    if it has one (a router's firewall may still keep outsiders off it) and stand by at the
    code's relay (``config.relay_standby``), asking the router's IPv6 firewall to let the
    Internet in to that address (PCP), telling the user how the router answered (for
    whom the seat can then take over is said once seated: :func:`takeover_note`). ``ipv6``:
    this machine's global IPv6 address, given when the seat listens on every interface at its
    own address. ``map_lease_s``: the lease asked of the router for the mapping. A loopback
    or public IPv4 listen address, or port 0, needs none of this."""
    listen = config.listen
    if listen is None or listen[1] == 0 or is_loopback(listen[0]) or (
            _is_public(listen[0]) and ":" not in listen[0]):
        yield
        return
    port = listen[1]
    pinhole = map_port  # --no-map leaves the router alone, its firewall too
    if ":" in listen[0]:  # an IPv6 address: no NAT to map; a firewall may still be there
        map_port, ipv6 = False, None
    attempt = Attempt()
    relay = config.relay
    if map_port:
        echo(f"Opening port {port} on your router, so that this seat can host if the host "
             "goes away (UPnP, then NAT-PMP)...")
    six = listen[0] if is_global_ipv6(listen[0]) else ipv6  # a pinhole for a global one
    async with _maybe_mapped(map_port, port, attempt, map_timeout_s, echo,
                             map_lease_s, seat=True) as mapping, \
            trio.open_nursery() as nursery:
        if mapping is not None:
            config.announce = (mapping.external_ip, mapping.external_port)
            echo(f"  done ({mapping.method}): the router forwards "
                 f"{host_port(mapping.external_ip, mapping.external_port)} to this machine")
        else:
            if map_port:
                echo("  no router mapping (" + "; ".join(attempt.notes) + ")")
            if ipv6 is not None:  # reaches this network at least, and IPv6 past open firewalls
                config.announce = (ipv6, port)
            if six is not None and pinhole:
                await nursery.start(_keep_pinhole, six, port, echo, map_timeout_s, True)
            if relay is not None:
                config.relay_standby = True
        yield
        nursery.cancel_scope.cancel()


def routed_here(listed: tuple[str, int] | None) -> bool:
    """Whether the address the table lists for this seat is a router's outside address that
    must forward to this machine: a global IPv4 address that is not one of this machine's
    (it cannot be bound here). None, a loopback, a local or IPv6 address, or a name: no."""
    if listed is None:
        return False
    try:
        ip = ipaddress.ip_address(listed[0])
    except ValueError:
        return False
    if ip.version != 4 or not ip.is_global:
        return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((listed[0], 0))
        except OSError:
            return True
    return False


@asynccontextmanager
async def listed_routes(
    listed: tuple[str, int] | None,
    echo: Callable[..., None],
    *,
    map_port: bool = True,
    map_timeout_s: float = 2.0,
    map_lease_s: int = LEASE_S,
) -> AsyncIterator[None]:
    """A seat coming back after a crash (``dernier host`` or ``join`` run again with the
    transcript) listens again on the port the table lists for it. Where that address is its
    router's (:func:`routed_here`), the mapping the crashed process held may have lapsed or
    gone with a restart of the router: ask for it again while the block lasts (renewed, and
    removed at the end, as when the seat joined) and say whether the router forwards the
    listed address again. ``map_port`` False (``--no-map``) leaves the router alone."""
    if not map_port or not routed_here(listed):
        yield
        return
    assert listed is not None
    where = host_port(*listed)
    port = listed[1]
    echo(f"Asking your router again to forward {where}, the address the table lists for this "
         "seat (UPnP, then NAT-PMP)...")
    attempt = Attempt()
    async with _maybe_mapped(True, port, attempt, map_timeout_s, echo, map_lease_s,
                             seat=True) as mapping:
        if mapping is None:
            echo("  no router mapping (" + "; ".join(attempt.notes) + "): players outside "
                 f"your network may not reach this seat at {where}.")
        elif (mapping.external_ip, mapping.external_port) == listed:
            echo(f"  done ({mapping.method}): the router forwards {where} to this machine "
                 "again")
        else:
            echo(f"  the router forwards {host_port(mapping.external_ip, mapping.external_port)}"
                 f" now, not {where}, the address the table lists: players outside your "
                 "network cannot reach this seat there.")
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
    relays = (" Once the match starts it also relays for the table's other seats (PROTOCOL.md"
              " 4.7 step 7).")
    if mapped is not None:
        return (f"{head} can take over as host for every player: the router forwards "
                f"{host_port(*mapped)} to it." + (relays if is_reachable(mapped) else ""))
    six = ":" in listen[0] and _is_public(listen[0])  # a global IPv6 address
    if relay is not None and _relay_reach(relay[0]) != "internet":
        relay = None  # a relay on this machine or network takes no one else to this seat
    if relay is not None:
        if six:
            return (f"{head} can take over as host for every player: players on this network, "
                    f"and players with IPv6 where your router's firewall lets them in, reach "
                    f"it at {at}, the others through the relay {host_port(*relay)}.")
        return (f"{head} can take over as host for every player: players on this network "
                f"reach it at {at}, the others through the relay {host_port(*relay)}.")
    if is_loopback(listen[0]):
        return f"{head} can take over as host only for players on this machine ({at})."
    if six:
        return (f"{head} can take over as host for players on this network and, where your "
                f"router's firewall lets them in, players with IPv6, at {at}; {others}.")
    if _is_public(listen[0]):
        return f"{head} can take over as host for every player, at {at}." + (
            relays if is_reachable(listen) else "")
    try:
        ipaddress.ip_address(listen[0])
    except ValueError:  # a name: whoever it leads to
        return f"{head} can take over as host for the players who reach {at}."
    return (f"{head} can take over as host only for players on this network ({at}): "
            f"players elsewhere cannot reach that address; {others}.")
