"""The ``upnp`` fuzz target: a hostile home router answering the program's UPnP path.

A case is a :class:`~dernier_p2p.fuzz.upnp_router.Script`: the device list a local SSDP daemon
gives, the SSDP answers to the M-SEARCH, the device's XML description and the SOAP replies
(GetStatusInfo, GetExternalIPAddress, AddPortMapping, AddAnyPortMapping,
GetSpecificPortMappingEntry, DeletePortMapping), those of an honest router with one to three
changed: a hostile value (an outside address, a port, a client, a lease), a SOAP fault, no
answer, an answer cut short or never finished, the bytes mutated. The program's own path reads
it: :func:`~dernier_p2p.net.portmap._upnp_add` (miniupnpc in a worker thread, every check
of portmap.py), then a renewal and the removal of a mapping it took.

A case passes when the path gives a mapping that passes the checks (a public IPv4 outside
address, an outside port of 1 to 65535, this port forwarded, a lease of at most a week) or
refuses with :class:`MappingError` (the "no router mapping" of ``dernier host``), within its
deadlines. Anything else escaping is a crash; taking more than four times a step's timeout
plus two seconds is a hang (:class:`SlowRouterPath`).

Mutated replies name any host, and miniupnpc falls back to the SSDP multicast when the local
daemon's answer is unusable: the target only runs in a network namespace of its own with
loopback alone (``python -m dernier_p2p.fuzz upnp`` makes one with ``unshare --net``).
"""

from __future__ import annotations

import ipaddress
import random
import re
import socket
import time
from typing import Any

import msgpack
import trio

from dernier_p2p.fuzz.mutate import mutate_bytes
from dernier_p2p.fuzz.upnp_router import (
    ACTIONS,
    IGD,
    Router,
    Script,
    description,
    device_list,
    fault,
    honest,
    http,
    soap,
    ssdp_answer,
)
from dernier_p2p.net import portmap

PORT = 47630
TIMEOUT_S = 0.5  # the finding and the mapping deadline of a case (2 s in ``dernier host``)
SSDP_TIMEOUT_S = 2.5  # for the cases answered by SSDP (miniupnpc waits a second for answers)


class SlowRouterPath(Exception):
    """The UPnP path ran past its deadlines."""


class BadMapping(Exception):
    """The UPnP path gave a mapping that its checks should have refused."""


class NotIsolated(Exception):
    """The target was asked to run outside a network namespace of its own."""


def isolated() -> bool:
    """Whether this process sees no network interface but loopback (its own namespace)."""
    try:
        return [name for _, name in socket.if_nameindex()] == ["lo"]
    except OSError:
        return False


HOSTILE_VALUES = {
    "address": ["", "0.0.0.0", "192.168.1.1", "10.0.0.1", "100.64.0.1", "127.0.0.1",
                "224.0.0.1", "255.255.255.255", "169.254.0.1", "::1", "2001:db8::1",
                "11.22.33", "11.22.33.4.5", "011.022.033.004", "11.22.33.256", "x" * 40,
                "11.22.33.4\x1b[2J", "11.22.33.4 ", "&lt;b&gt;", "8.8.8.8"],
    "port": ["0", "-1", "65535", "65536", "99999999999", "abc", "", " 47630", "47630x",
             "0x1", "47631", "1", "-47630", "4294967296"],
    "client": ["", "127.0.0.2", "0.0.0.0", "192.168.1.2", "x" * 100, "127.0.0.1\x00x",
               "127.0.0.01"],
    "lease": ["0", "1", "-1", "abc", "", "4294967295", "4294967296", "604801", "2",
              "99999999999999999999"],
    "enabled": ["0", "", "yes", "2", "-1"],
    "status": ["Disconnected", "", "Connecting", "x" * 300],
}
FIELDS = {
    "GetExternalIPAddress": {"NewExternalIPAddress": "address"},
    "AddAnyPortMapping": {"NewReservedPort": "port"},
    "GetSpecificPortMappingEntry": {"NewInternalPort": "port", "NewInternalClient": "client",
                                    "NewEnabled": "enabled", "NewLeaseDuration": "lease"},
    "GetStatusInfo": {"NewConnectionStatus": "status"},
}
BASE = {"GetExternalIPAddress": {"NewExternalIPAddress": "11.22.33.4"},
        "AddAnyPortMapping": {"NewReservedPort": str(PORT)},
        "GetSpecificPortMappingEntry": {"NewInternalPort": str(PORT),
                                        "NewInternalClient": "127.0.0.1", "NewEnabled": "1",
                                        "NewPortMappingDescription": "dernier table",
                                        "NewLeaseDuration": "3600"},
        "GetStatusInfo": {"NewConnectionStatus": "Connected",
                          "NewLastConnectionError": "ERROR_NONE", "NewUptime": "100"}}


def make(rng: random.Random, router_port: int = 0, ssdp: bool = False) -> dict[str, Any]:
    """A case: a router's answers, an honest router's with one to three changes. The router's
    HTTP port is filled in by :func:`run` (``router_port`` 0 until then)."""
    replies = honest(router_port or 1)
    for _ in range(rng.randint(1, 3)):
        key = rng.choice(["desc", *ACTIONS, *FIELDS, *FIELDS])
        replies[key] = _changed(key, replies[key], rng)
    if rng.random() < 0.3:  # a router without AddPortMapping: the path asks for any port
        replies["AddPortMapping"] = fault(rng.choice([718, 724, 725, 501, 606]), "refused")
    case: dict[str, Any] = {"replies": replies, "stall": "", "devices": b"", "ssdp": []}
    if rng.random() < 0.01:
        case["stall"] = rng.choice(["desc", *ACTIONS])
    roll = rng.random()
    if ssdp and roll < 0.002:  # found by the SSDP search, its answers mutated
        case["ssdp"] = [_mutated_answer(rng) for _ in range(rng.randint(1, 3))]
    elif roll < 0.02:
        case["devices"] = _mutated_devices(rng)
    else:
        case["devices"] = None  # the honest device list, with the router's port
    return case


def _changed(key: str, reply: bytes, rng: random.Random) -> bytes:
    roll = rng.random()
    if key in FIELDS and roll < 0.6:
        values = dict(BASE[key])
        for name, kind in FIELDS[key].items():
            if rng.random() < 0.5:
                values[name] = rng.choice(HOSTILE_VALUES[kind])
        if rng.random() < 0.1:
            del values[rng.choice(sorted(values))]
        return http(soap(key, values))
    if roll < 0.7:
        return fault(rng.choice([402, 501, 606, 713, 714, 718, 724, 725, 726, 727, 728,
                                 rng.getrandbits(32), -1]), rng.choice(["x", "", "y" * 2000]))
    if roll < 0.75:
        return b""  # the connection closed unanswered
    if roll < 0.8:
        return reply[: rng.randrange(len(reply) + 1)]
    if roll < 0.85:  # chunked, or a length that is not the body's
        head, _, body = reply.partition(b"\r\n\r\n")
        if rng.random() < 0.5:
            size = rng.choice([b"ffffffff", b"-1", b"zz", b"%x" % len(body), b"0"])
            return head.replace(b"Content-Length", b"X-Length") + \
                b"\r\nTransfer-Encoding: chunked\r\n\r\n" + size + b"\r\n" + body + b"\r\n0\r\n\r\n"
        length = rng.choice([0, 1, len(body) * 2, 2**31, 2**32 + 5, 2**64])
        return head.split(b"Content-Length")[0] + b"Content-Length: %d\r\n\r\n" % length + body
    if key == "desc" and roll < 0.92:
        return http(_hostile_description(rng))
    return mutate_bytes(reply, rng)


def _hostile_description(rng: random.Random) -> bytes:
    text = description(1).decode()
    change = rng.randrange(6)
    if change == 0:  # the control URL elsewhere (only loopback exists where this runs)
        text = text.replace("/ctl/IPConn", rng.choice(["http://127.0.0.1:1/ctl", "", "/" * 600,
                                                        "http://[::1]:1/x", "ftp://x/y",
                                                        "http://8.8.8.8/x"]))
    elif change == 1:
        text = text.replace("<URLBase>http://127.0.0.1:1</URLBase>",
                            rng.choice(["", "<URLBase>http://127.0.0.2:1</URLBase>",
                                        "<URLBase>" + "h" * 3000 + "</URLBase>"]))
    elif change == 2:
        text = text.replace("WANIPConnection", rng.choice(["WANPPPConnection", "WANIPv6", ""]))
    elif change == 3:
        depth = rng.choice([50, 1000, 20000])
        text = text.replace("<friendlyName>", "<a>" * depth + "</a>" * depth + "<friendlyName>")
    elif change == 4:
        text = text.replace("</serviceList>", "<service>" * rng.choice([2, 200]) +
                            "</serviceList>")
    else:
        text = text[: rng.randrange(len(text))]
    return text.encode()


def _mutated_devices(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.3:
        return b""
    if roll < 0.5:
        return device_list(rng.choice(["http://127.0.0.1:1/x", "", "x" * 300,
                                       "http://8.8.8.8/rootDesc.xml"]),
                           rng.choice([IGD, "upnp:rootdevice", ""]))
    if roll < 0.6:
        return bytes([rng.randrange(256)]) + b"\xff" * rng.randrange(300)
    return mutate_bytes(device_list("http://127.0.0.1:1/rootDesc.xml"), rng)


def _mutated_answer(rng: random.Random) -> bytes:
    answer = ssdp_answer("http://127.0.0.1:1/rootDesc.xml")
    return answer if rng.random() < 0.3 else mutate_bytes(answer, rng)


def reason(exc: BaseException) -> str:
    """A refusal's reason without the values it names (for the counts by reason)."""
    return re.sub(r"(?<!\w)'[^']*'|\"[^\"]*\"|[0-9.]+", "N", str(exc))[:70]


def dump(case: dict[str, Any]) -> bytes:
    return msgpack.packb(case, use_bin_type=True)


class UpnpTarget:
    """Runs cases against one scripted router (started on first use, in this namespace)."""

    def __init__(self, ssdp: bool = False) -> None:
        self.ssdp = ssdp
        self._router: Router | None = None

    @property
    def router(self) -> Router:
        if self._router is None:
            if not isolated():
                raise NotIsolated("the upnp target runs only in a network namespace of its "
                                  "own (python -m dernier_p2p.fuzz upnp makes one)")
            self._router = Router(ssdp=self.ssdp).start()
        return self._router

    def make(self, rng: random.Random) -> dict[str, Any]:
        return make(rng, ssdp=self.ssdp)

    def run(self, case: dict[str, Any]) -> None:
        router = self.router
        router.set(_script(case, router))
        timeout = SSDP_TIMEOUT_S if case["ssdp"] else TIMEOUT_S
        start = time.perf_counter()
        try:
            trio.run(_path, router.minissdpd, timeout)
        finally:
            took = time.perf_counter() - start
            if took > 4 * timeout + 2:
                raise SlowRouterPath(f"the UPnP path took {took:.1f} s")

    def close(self) -> None:
        if self._router is not None:
            self._router.stop()
            self._router = None


async def _path(minissdpd: str, timeout: float) -> None:
    """What ``dernier host`` does with a UPnP router, each step with ``timeout`` (the program's
    own: 2 s to find and to map, 10 s to renew, 5 s to remove): map, check, renew, remove."""
    mapping, upnp = await portmap._upnp_add(PORT, timeout, portmap.LEASE_S, minissdpd)
    _check(mapping)
    await portmap._renew_once(mapping, portmap.LEASE_S, upnp, timeout)
    with trio.move_on_after(timeout):
        await portmap._remove(mapping, upnp)


def _script(case: dict[str, Any], router: Router) -> Script:
    """The case with the router's real port in its URLs (the description's and the list's)."""
    def here(data: bytes) -> bytes:
        return data.replace(b"127.0.0.1:1/", b"127.0.0.1:%d/" % router.port).replace(
            b"127.0.0.1:1<", b"127.0.0.1:%d<" % router.port)

    devices = case["devices"]
    replies = {k: here(v) for k, v in case["replies"].items()}
    return Script(devices=device_list(router.url) if devices is None else here(devices),
                  ssdp=[here(a) for a in case["ssdp"]], replies=replies, stall=case["stall"])


def _check(mapping: portmap.Mapping) -> None:
    """What a mapping the path hands on must be (else the checks let a bad value through)."""
    ip = ipaddress.ip_address(mapping.external_ip)
    if ip.version != 4 or not ip.is_global:
        raise BadMapping(f"outside address {mapping.external_ip!r}")
    if not 1 <= mapping.external_port <= 65535 or mapping.internal_port != PORT:
        raise BadMapping(f"ports {mapping.external_port}, {mapping.internal_port}")
    if not 0 <= mapping.lease_s <= portmap.MAX_LEASE_S or type(mapping.lease_s) is not int:
        raise BadMapping(f"lease {mapping.lease_s!r}")
