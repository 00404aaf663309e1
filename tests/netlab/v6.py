"""IPv6 in the lab: a global prefix on the Internet side and homes behind a stateful firewall.

:func:`add_ipv6` gives a lab's Internet (the ``wan`` bridge) the network ``V6::/64`` with the
``wan`` namespace at ``V6::100`` (also the routers' default router, forwarding between them),
and a home behind router X the routed network ``V6:N::/64`` (no NAT: every machine has a
global address, as IPv6 homes do). The router forwards IPv6 with a stateful firewall
(nftables): answers to connections made from inside come in, a new connection from the
Internet is dropped, as most home routers do. ``only=True`` takes the home's IPv4 away (an
IPv6-only home). A router with miniupnpd gets the same firewall in its forward chain around
miniupnpd's own (so a pinhole it opens lets connections in), and its miniupnpd is restarted
to serve IPv6 too: PCP MAP requests for an IPv6 address open a pinhole there. ``V6`` is a
global prefix so that the programs take it for the Internet; like the lab's IPv4 Internet it
exists only inside the lab's namespaces.
"""

from __future__ import annotations

import subprocess
import time

from .lab import Lab, _run

V6 = "2a11:2233"  # exists only in the lab (see the module docstring)

FIREWALL = (
    "table ip6 homefw {\n"
    " chain forward { type filter hook forward priority 0; policy accept;\n"
    "  ct state established,related accept\n"
    '  iifname "wan0" ct state new drop\n'
    '  iifname "wan0" drop\n'
    " }\n}\n"
)


def wan_ipv6(lab: Lab) -> str:
    """The ``wan`` namespace's global IPv6 address (a machine with no router before it)."""
    return f"{V6}::100"


def home_ipv6(lab: Lab, name: str) -> str:
    """The global IPv6 address of the home behind router ``name``."""
    return f"{V6}:{lab.rtr[name].n}::2"


def _wan_up(lab: Lab) -> None:
    shown = _run("ip", "-n", lab.wan, "-6", "addr", "show", "dev", "br0")
    if wan_ipv6(lab) in shown:
        return
    _run("ip", "netns", "exec", lab.wan, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0")
    _run("ip", "-n", lab.wan, "addr", "add", f"{wan_ipv6(lab)}/64", "dev", "br0", "nodad")
    # a default route, so that the wan host finds its own global address as the way out, and
    # forwarding: the routers' default route leads here, and from here to each home's router
    _run("ip", "-n", lab.wan, "-6", "route", "add", "default", "dev", "br0")
    # and an IPv4 one, so that a program there finds its own IPv4 address as it would at home
    _run("ip", "-n", lab.wan, "route", "add", "default", "dev", "br0")
    _run("ip", "netns", "exec", lab.wan, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")


def add_ipv6(lab: Lab, name: str, *, only: bool = False, pcp: bool = True) -> str:
    """Give home ``name`` a global IPv6 address behind its router's stateful firewall (and,
    with ``only``, no IPv4); return that address. ``pcp=False``: a router with miniupnpd
    refuses PCP over IPv6 (an ICMP "port unreachable": its pinholes are UPnP's only)."""
    _wan_up(lab)
    r = lab.rtr[name]
    for ns in (r.ns, r.home_ns):
        _run("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0")
    _run("ip", "netns", "exec", r.ns, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1")
    _run("ip", "-n", r.ns, "addr", "add", f"{V6}::{r.n}/64", "dev", "wan0", "nodad")
    _run("ip", "-n", r.ns, "addr", "add", f"{V6}:{r.n}::1/64", "dev", "lan0", "nodad")
    _run("ip", "-n", r.ns, "-6", "route", "add", "default", "via", wan_ipv6(lab))
    if r.upnp:
        _upnp_ipv6(lab, name, pcp)
    else:
        _run("ip", "netns", "exec", r.ns, "nft", "-f", "-", input=FIREWALL)
    home = home_ipv6(lab, name)
    _run("ip", "-n", r.home_ns, "addr", "add", f"{home}/64", "dev", "eth0", "nodad")
    _run("ip", "-n", r.home_ns, "-6", "route", "add", "default", "via", f"{V6}:{r.n}::1")
    _run("ip", "-n", lab.wan, "-6", "route", "add", f"{V6}:{r.n}::/64", "via", f"{V6}::{r.n}")
    if only:
        _run("ip", "-n", r.home_ns, "-4", "addr", "flush", "dev", "eth0")
    return home


def _upnp_ipv6(lab: Lab, name: str, pcp: bool = True) -> None:
    """The firewall in miniupnpd's forward chain, and miniupnpd restarted with IPv6 (it turns
    IPv6 off when it starts on a router without a global address)."""
    r = lab.rtr[name]
    _run("ip", "netns", "exec", r.ns, "nft", "insert", "rule", "inet", "filter", "forward",
         "ct", "state", "established,related", "accept")
    _run("ip", "netns", "exec", r.ns, "nft", "add", "rule", "inet", "filter", "forward",
         "iifname", "wan0", "meta", "nfproto", "ipv6", "drop")
    lab.stop_upnp(name)
    conf = lab.tmp / f"miniupnpd-{name}.conf"
    conf.write_text(conf.read_text() + f"ipv6_listening_ip={V6}:{r.n}::1\next_ifname6=wan0\n")
    if not pcp:  # (miniupnpd 2.3.1 answers PCP over IPv6 even with enable_natpmp=no)
        _run("ip", "netns", "exec", r.ns, "nft", "-f", "-", input=(
            "table ip6 nopcp {\n chain input { type filter hook input priority -10;"
            " policy accept;\n  udp dport 5351 reject\n }\n}\n"))
    pid = lab.tmp / f"miniupnpd-{name}-6.pid"  # the killed one left its own behind
    log = open(lab.tmp / f"miniupnpd-{name}.log", "ab")
    lab.procs.append(subprocess.Popen(
        lab.cmd(r.ns, "miniupnpd", "-d", "-f", str(conf), "-P", str(pid)),
        stdout=log, stderr=subprocess.STDOUT))
    time.sleep(0.3)
