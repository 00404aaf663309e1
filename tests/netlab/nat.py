"""The kinds of NAT a home router may be, built with nftables in the lab's router namespaces.

RFC 4787 names a NAT by its *mapping* (which outside port a home's outgoing connection gets)
and its *filtering* (which packets from outside it lets in to that port):

    full-cone           endpoint-independent mapping (the home's port kept for every
                        destination), endpoint-independent filtering: anyone may come in to a
                        port the home has used.
    address-restricted  the same mapping; only the addresses the home has sent to may come in
                        (from any of their ports).
    port-restricted     the same mapping; only the exact address and port the home has sent to
                        (its own connections). New connections from outside are dropped, not
                        answered: the common home router.
    symmetric           a new outside port for every connection (``masquerade random``), so a
                        port seen by one destination is no use to another; filtering as
                        port-restricted.
    cgn                 two NATs in a row: a port-restricted home router whose outside address
                        is 100.64.N.2 (RFC 6598 shared space) behind the ISP's port-restricted
                        NAT, which holds the Internet address.
    upnp                port-restricted, with miniupnpd (UPnP and NAT-PMP) to map a port.
    plain               the lab's default (masquerade, no filter): a Linux router that answers
                        a connection to a port it has no rule for with a reset.

:class:`NatLab` is a :class:`~.lab.Lab` whose routers are of these kinds (``kinds``: name ->
kind; only ``upnp`` runs miniupnpd) and whose Internet has two more addresses,
:attr:`NatLab.others`, for probes from a second and a third outside machine. The cone kinds
let unsolicited connections in by destination-NAT to the home machine (``192.168.N.2``):
Linux conntrack has no cone mode, so the router remembers the home's outgoing ports (and,
address-restricted, the addresses it sent to) in nftables sets for ``MEMORY_S``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .lab import Lab, Router, _run

KINDS = ("full-cone", "address-restricted", "port-restricted", "symmetric", "cgn", "upnp",
         "plain")
MEMORY_S = 300  # how long a cone router remembers a port the home used, or an address
CGN_NET = "100.64"  # RFC 6598 shared address space: the home router's side of the ISP NAT


def ruleset(kind: str, home: str) -> str:
    """The nftables ruleset of a router of ``kind`` whose home machine is ``home``: outside
    interface ``wan0``; ``cgn`` here is its outer (ISP) NAT, a port-restricted one, and
    ``upnp`` a port-restricted one (miniupnpd adds its own table)."""
    if kind not in KINDS:
        raise ValueError(f"unknown NAT kind {kind!r} (one of {', '.join(KINDS)})")
    masquerade = "masquerade random" if kind == "symmetric" else "masquerade"
    inbound = {
        "full-cone": f'iifname "wan0" tcp dport @ports dnat to {home}',
        "address-restricted": f'iifname "wan0" ip saddr @peers tcp dport @ports dnat to {home}',
    }.get(kind, "")
    drop = "" if kind == "plain" else 'iifname "wan0" ct state new drop;'
    return (
        "flush ruleset\n"
        "table ip nat {\n"
        f" set ports {{ type inet_service; flags dynamic, timeout; timeout {MEMORY_S}s; }}\n"
        f" set peers {{ type ipv4_addr; flags dynamic, timeout; timeout {MEMORY_S}s; }}\n"
        " chain prerouting { type nat hook prerouting priority -100; policy accept;"
        f" {inbound}; }}\n"
        " chain note { type filter hook postrouting priority 0; policy accept;"
        ' oifname "wan0" meta l4proto tcp update @ports { tcp sport };'
        ' oifname "wan0" update @peers { ip daddr }; }\n'
        " chain postrouting { type nat hook postrouting priority 100; policy accept;"
        f' oifname "wan0" {masquerade}; }}\n'
        " chain input { type filter hook input priority 0; policy accept;"
        f" {drop} }}\n"
        " chain forward { type filter hook forward priority 0; policy accept;"
        f' iifname "wan0" ct status dnat accept; {drop} }}\n'
        "}\n"
    )


@dataclass
class NatLab(Lab):
    """A lab whose routers are NATs of ``kinds`` (name -> kind, see :data:`KINDS`); only
    ``upnp`` routers run miniupnpd. ``cpe[name]``: the home router's namespace of a ``cgn``
    home (its ``ns`` is then the ISP's NAT)."""

    kinds: dict[str, str] = field(default_factory=dict)
    cpe: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, kinds: dict[str, str]) -> NatLab:
        """A lab (not yet up) with a router of each of ``kinds``."""
        return cls({}, kinds=dict(kinds))

    def __post_init__(self) -> None:
        for kind in self.kinds.values():
            ruleset(kind, "")  # an unknown kind is refused before anything is made
        self.routers = {name: kind == "upnp" for name, kind in self.kinds.items()}

    @property
    def others(self) -> tuple[str, str]:
        """Two more Internet addresses of the ``wan`` namespace (outside machines)."""
        return f"{self.net}.101", f"{self.net}.102"

    def up(self) -> NatLab:
        super().up()
        for address in self.others:
            _run("ip", "-n", self.wan, "addr", "add", f"{address}/24", "dev", "br0")
        return self

    def _wire(self, r: Router) -> None:
        kind = self.kinds[r.name]
        if kind != "cgn":
            super()._wire(r)
            _run("ip", "netns", "exec", r.ns, "nft", "-f", "-", input=ruleset(kind, r.home_ip))
            return
        self._wire_cgn(r)

    def _wire_cgn(self, r: Router) -> None:
        """ISP NAT (``r.ns``: W.N outside, 100.64.N.1 inside) -> home router (100.64.N.2
        outside, 192.168.N.1 inside) -> home (192.168.N.2)."""
        p, x = self.prefix, r.name
        cpe = self._ns(f"cpe{x}")
        self.cpe[x] = cpe
        shared = f"{CGN_NET}.{r.n}"
        links = [  # (outer namespace, its interface, inner namespace, its interface)
            (self.wan, f"{p}w{x}", r.ns, "wan0"),
            (r.ns, "lan0", cpe, "wan0"),
            (cpe, "lan0", r.home_ns, "eth0"),
        ]
        for k, (outer, out_if, inner, in_if) in enumerate(links):
            a, b = f"{p}{k}a{x}", f"{p}{k}b{x}"
            _run("ip", "link", "add", a, "type", "veth", "peer", "name", b)
            _run("ip", "link", "set", a, "netns", outer)
            _run("ip", "link", "set", b, "netns", inner)
            _run("ip", "-n", outer, "link", "set", a, "name", out_if)
            _run("ip", "-n", inner, "link", "set", b, "name", in_if)
            _run("ip", "-n", outer, "link", "set", out_if, "up")
            _run("ip", "-n", inner, "link", "set", in_if, "up")
        _run("ip", "-n", self.wan, "link", "set", f"{p}w{x}", "master", "br0")
        _run("ip", "-n", r.ns, "addr", "add", f"{r.wan_ip}/24", "dev", "wan0")
        _run("ip", "-n", r.ns, "addr", "add", f"{shared}.1/24", "dev", "lan0")
        _run("ip", "-n", r.ns, "route", "add", f"192.168.{r.n}.0/24", "via", f"{shared}.2")
        _run("ip", "-n", cpe, "addr", "add", f"{shared}.2/24", "dev", "wan0")
        _run("ip", "-n", cpe, "addr", "add", f"192.168.{r.n}.1/24", "dev", "lan0")
        _run("ip", "-n", cpe, "route", "add", "default", "via", f"{shared}.1")
        _run("ip", "-n", r.home_ns, "addr", "add", f"{r.home_ip}/24", "dev", "eth0")
        _run("ip", "-n", r.home_ns, "route", "add", "default", "via", f"192.168.{r.n}.1")
        for ns, home in ((r.ns, f"{shared}.2"), (cpe, r.home_ip)):
            _run("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
            _run("ip", "netns", "exec", ns, "nft", "-f", "-",
                 input=ruleset("port-restricted", home))
