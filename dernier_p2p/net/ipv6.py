"""IPv6 beside IPv4: this machine's global IPv6 address, listening on both families at one
port, and the order in which a joiner races a code's routes ("happy eyeballs", RFC 8305).

A home with IPv6 usually gives each machine a global address: no NAT stands between it and the
Internet, only (in most homes) the router's stateful firewall, which lets answers in and drops
new connections from outside. So a global IPv6 address is a route worth offering (it works on
the home network, from any IPv6 network where the firewall lets it, and from a host that has
one to a joiner behind such a firewall), but not one the host can promise to outsiders.
"""

from __future__ import annotations

import errno
import ipaddress
import socket

import trio

# Any global address: the kernel picks the source address it would use to reach the IPv6
# Internet; no packet is sent (a UDP "connect" only chooses a route).
_PROBE = "2001:4860:4860::8888"


def family(host: str) -> int:
    """6 for an IPv6 address, 4 for anything else (an IPv4 address or a host name)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).version
    except ValueError:
        return 4


def is_global_ipv6(host: str) -> bool:
    """Whether ``host`` is a global (Internet-routable) IPv6 address."""
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return ip.version == 6 and ip.is_global and ip.ipv4_mapped is None


def global_ipv6() -> str | None:
    """This machine's global IPv6 address (the source it would use towards the IPv6 Internet),
    or None where it has none (no IPv6, only link-local or unique-local addresses)."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
            s.connect((_PROBE, 9))
            here = str(s.getsockname()[0])
    except OSError:
        return None
    return here if is_global_ipv6(here) else None


async def open_dual_listeners(port: int) -> tuple[list[trio.SocketListener], str | None]:
    """TCP listeners on every IPv4 and every IPv6 interface at one ``port`` (0: a free port
    chosen for IPv4, then taken on IPv6 too), and why IPv6 could not be opened (or None): IPv4
    alone is then served."""
    v4 = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
    v4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        await v4.bind(("0.0.0.0", port))
        v4.listen(128)
    except OSError:
        v4.close()
        raise
    listeners = [trio.SocketListener(v4)]
    chosen = v4.getsockname()[1]
    v6 = trio.socket.socket(trio.socket.AF_INET6, trio.socket.SOCK_STREAM)
    try:
        v6.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        await v6.bind(("::", chosen))
        v6.listen(128)
    except OSError as exc:
        v6.close()
        why = "the port is taken" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc)
        return listeners, f"cannot listen on [::]:{chosen}: {why}"
    listeners.append(trio.SocketListener(v6))
    return listeners, None


def happy_order(routes: list) -> list:
    """``routes`` (invite routes: ``.kind``, ``.host``) in the order a joiner starts them: the
    direct and mapped routes with their address families interleaved, IPv6 first (RFC 8305
    section 4), each family keeping the code's order; relay routes keep their places."""
    slots = [k for k, r in enumerate(routes) if r.kind != "relay"]
    six = [routes[k] for k in slots if family(routes[k].host) == 6]
    four = [routes[k] for k in slots if family(routes[k].host) != 6]
    mixed = []
    for k in range(max(len(six), len(four))):
        mixed += six[k : k + 1] + four[k : k + 1]
    out = list(routes)
    for k, route in zip(slots, mixed, strict=True):
        out[k] = route
    return out
