"""Asking the home router's IPv6 firewall to let the Internet in to one TCP port: a PCP MAP.

An IPv6 home has no NAT, but most routers drop new connections from outside. PCP (Port
Control Protocol, RFC 6887) is how a machine asks its router to open a *pinhole*: a MAP
request for its own IPv6 address and port, sent over UDP to port 5351 of its IPv6 default
router, which answers with the lifetime granted. :func:`pinholed` is an async context
manager: it asks, renews at half the lifetime while the table lasts and closes the pinhole
(a MAP with lifetime 0) at the end, also after an error or Ctrl-C. It yields a
:class:`Pinhole`, or None with the reason in :attr:`~.portmap.Attempt.notes`.

:func:`pack_map` and :func:`parse_map` are pure; every byte of a reply is judged (a reply
that is not PCP, not to our request, or malformed gives :class:`PinholeError`, never a
traceback). Where PCP gives none, a router's UPnP IGDv2 pinhole service
(WANIPv6FirewallControl, :mod:`.upnp6`) is asked instead, within the same time: the two are
asked at once, and PCP's pinhole is taken where both could give one.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import trio

from dernier_p2p.net import upnp6
from dernier_p2p.net.portmap import Attempt, Renewals, Told
from dernier_p2p.net.udpquery import query

log = logging.getLogger("dernier_p2p.net.pinhole")

PCP_PORT = 5351
VERSION = 2
OP_MAP = 1
TCP = 6
LIFETIME_S = 3600
HEADER = struct.Struct("!BBBBI")  # version, R|opcode, reserved, result (0 asking), lifetime
MAP = struct.Struct("!12sB3xHH16s")  # nonce, protocol, internal port, external port, address
SIZE = 24 + MAP.size  # a MAP request or reply without options: 60 bytes
RESULTS = {1: "unsupported version", 2: "not authorised", 3: "malformed request",
           4: "unsupported opcode", 5: "unsupported option", 6: "malformed option",
           7: "network failure", 8: "out of resources", 9: "unsupported protocol",
           10: "user over quota", 11: "cannot provide that external port or address",
           12: "address mismatch", 13: "excessive remote peers"}


class PinholeError(Exception):
    """No pinhole: no router answered, or it refused, or its reply is unusable."""


class Refused(PinholeError):
    """The router's answer to this request gives no pinhole (a refusal, or another port or
    address than the one asked): asking again changes nothing."""


@dataclass(frozen=True)
class Pinhole:
    """A port the router's firewall lets the Internet reach: this machine's IPv6 ``address``
    and ``port``, the lifetime granted in seconds, the router asked (``gateway``, with its
    interface index for a link-local one) and the request's ``nonce`` (renewals reuse it)."""

    address: str
    port: int
    lifetime_s: int
    gateway: tuple[str, int]
    nonce: bytes
    method: str = "PCP"  # or "UPnP" (IGDv2 WANIPv6FirewallControl, :mod:`.upnp6`)
    control: Any = None  # UPnP: the router's :class:`.upnp6.Control`
    uid: int = -1  # UPnP: the pinhole's UniqueID


def pack_map(address: str, port: int, lifetime_s: int, nonce: bytes) -> bytes:
    """A PCP MAP request (RFC 6887 11.1) for TCP ``port`` of IPv6 ``address``, suggesting the
    same port and address outside (no NAT); lifetime 0 closes the pinhole."""
    ip = ipaddress.IPv6Address(address)
    if len(nonce) != 12 or not 0 < port < 65536 or not 0 <= lifetime_s < 2**32:
        raise ValueError("a nonce is 12 bytes, a port 1..65535, a lifetime 0..2^32-1")
    return (HEADER.pack(VERSION, OP_MAP, 0, 0, lifetime_s) + ip.packed  # client address
            + MAP.pack(nonce, TCP, port, port, ip.packed))


def parse_map(data: bytes, address: str, port: int, nonce: bytes) -> int:
    """The lifetime a PCP MAP reply grants to our request (``address``, ``port``,
    ``nonce``; 0 when it closed the pinhole); :class:`PinholeError` for a refusal or a reply
    that is not to that request. Options after the MAP body are not read."""
    if len(data) < SIZE or len(data) > 1100 or len(data) % 4:
        raise PinholeError("not a PCP reply (its length)")
    version, op, _reserved, result, lifetime = HEADER.unpack_from(data)
    if version != VERSION or op != 0x80 | OP_MAP:
        raise PinholeError("not a PCP MAP reply")
    got_nonce, protocol, internal, external, outside = MAP.unpack_from(data, 24)
    if got_nonce != nonce or protocol != TCP or internal != port:
        raise PinholeError("a PCP reply to another request")
    if result:
        raise Refused(f"PCP refused: {RESULTS.get(result, f'result {result}')}")
    if external != port or outside != ipaddress.IPv6Address(address).packed:
        raise Refused("the router opened another port or address than this one")
    return lifetime


def ipv6_gateways() -> list[tuple[str, int]]:
    """The IPv6 default routers from /proc/net/ipv6_route (Linux), each with the index of
    its interface (needed to reach a link-local one); empty if none is known."""
    out: list[tuple[str, int]] = []
    try:
        with open("/proc/net/ipv6_route") as table:
            lines = table.readlines()
    except OSError:
        return out
    for line in lines:
        fields = line.split()
        if len(fields) < 10 or fields[0] != "0" * 32 or fields[1] != "00":
            continue
        try:
            hop = ipaddress.IPv6Address(bytes.fromhex(fields[4]))
            index = socket.if_nametoindex(fields[9])
        except (ValueError, OSError):
            continue
        if not hop.is_unspecified and (str(hop), index) not in out:
            out.append((str(hop), index))
    return out


async def _ask(gateway: tuple[str, int], request: bytes, address: str, port: int,
               nonce: bytes, timeout_s: float) -> int:
    """Send ``request`` to ``gateway``, again at 0.25 s, 0.5 s ... within ``timeout_s``
    (:func:`~.udpquery.query`); the lifetime granted. A :class:`Refused` ends the exchange at
    once; a datagram that is not the answer to this request is dropped."""
    host, index = gateway
    scope = index if ipaddress.ip_address(host).is_link_local else 0
    got = await query(trio.socket.AF_INET6, (host, PCP_PORT, 0, scope), request,
                      lambda data: parse_map(data, address, port, nonce), final=(Refused,),
                      skip=PinholeError, timeout_s=timeout_s, size=1100)
    if got is None:
        raise PinholeError(f"no PCP answer from {host}")
    return got


async def open_pinhole(address: str, port: int, *, timeout_s: float = 2.0,
                       lifetime_s: int = LIFETIME_S) -> Pinhole:
    """Ask the IPv6 default router for a pinhole to ``address``:``port``: by PCP (each
    router in turn) and, at the same time, by UPnP (:mod:`.upnp6`), which is used where PCP
    gives none. :class:`PinholeError` saying what each answered, within ``timeout_s``."""
    gateways = ipv6_gateways()
    if not gateways:
        raise PinholeError("PCP: no IPv6 default router to ask")
    upnp: list[Pinhole | str] = []
    done = trio.Event()

    async def by_upnp() -> None:
        try:
            with trio.fail_after(timeout_s):
                control = await upnp6.discover(gateways, timeout_s)
                lease = min(lifetime_s, upnp6.LEASE_S) if lifetime_s else upnp6.LEASE_S
                uid = await upnp6.add_pinhole(control, address, port, lease, timeout_s)
            upnp.append(Pinhole(address, port, lease, gateways[0], b"", "UPnP", control, uid))
        except trio.TooSlowError:
            upnp.append(f"no UPnP IPv6 firewall answered in {timeout_s:g} s")
        except (PinholeError, OSError, ValueError) as exc:
            upnp.append(str(exc))
        finally:
            done.set()

    pcp: Pinhole | None = None
    failed = ""
    async with trio.open_nursery() as nursery:  # (nothing raised in here: no group to open)
        nursery.start_soon(by_upnp)
        try:
            pcp = await _by_pcp(gateways, address, port, timeout_s, lifetime_s)
        except PinholeError as exc:
            failed = str(exc)
        if pcp is not None:
            nursery.cancel_scope.cancel()
        else:
            await done.wait()
    got = upnp[0] if upnp else "not asked"
    if pcp is not None:
        if isinstance(got, Pinhole):  # both gave one in the same instant
            await _close(got)
        return pcp
    if isinstance(got, Pinhole):
        return got
    raise PinholeError(f"PCP: {failed}; UPnP: {got}")


async def _by_pcp(gateways: list[tuple[str, int]], address: str, port: int,
                  timeout_s: float, lifetime_s: int) -> Pinhole:
    """A PCP pinhole from the first of ``gateways`` that grants one."""
    nonce = os.urandom(12)
    request = pack_map(address, port, lifetime_s, nonce)
    why = []
    for gateway in gateways:
        try:
            lifetime = await _ask(gateway, request, address, port, nonce, timeout_s)
        except OSError as exc:
            why.append(f"{gateway[0]}: {exc.strerror or exc}")
            continue
        except PinholeError as exc:
            why.append(str(exc))
            continue
        if lifetime == 0:
            why.append("PCP granted no lifetime")
            continue
        return Pinhole(address, port, lifetime, gateway, nonce)
    raise PinholeError("; ".join(why))


async def _close(pinhole: Pinhole) -> None:
    if pinhole.method == "UPnP":
        try:
            await upnp6.delete_pinhole(pinhole.control, pinhole.uid, 1.0)
        except PinholeError as exc:
            log.info("UPnP: closing the pinhole failed: %s", exc)
        return
    request = pack_map(pinhole.address, pinhole.port, 0, pinhole.nonce)
    try:
        await _ask(pinhole.gateway, request, pinhole.address, pinhole.port, pinhole.nonce, 1.0)
    except (PinholeError, OSError) as exc:
        log.info("PCP: closing the pinhole failed: %s", exc)


async def _renew(pinhole: Pinhole, lifetime_s: int, told: Told | None = None) -> None:
    """Ask again at half the lifetime (a router that restarted forgets), sooner after a
    failure; ``told`` of each change between renewals taken and not
    (:class:`~.portmap.Renewals`)."""
    lifetime = pinhole.lifetime_s
    renewals = Renewals(told)
    while True:
        await trio.sleep(renewals.wait_s(lifetime))
        if pinhole.method == "UPnP":
            try:
                await upnp6.update_pinhole(pinhole.control, pinhole.uid, lifetime, 2.0)
                log.info("UPnP pinhole renewed")
                renewals(True)
            except PinholeError as exc:
                log.warning("renewing the UPnP pinhole failed: %s", exc)
                renewals(False)
            continue
        request = pack_map(pinhole.address, pinhole.port, lifetime_s, pinhole.nonce)
        try:
            got = await _ask(pinhole.gateway, request, pinhole.address, pinhole.port,
                             pinhole.nonce, 2.0)
        except (PinholeError, OSError) as exc:
            log.warning("renewing the PCP pinhole failed: %s", exc)
            renewals(False)
            continue
        lifetime = got or lifetime
        log.info("PCP pinhole renewed")
        renewals(True)


@asynccontextmanager
async def pinholed(
    address: str, port: int, attempt: Attempt | None = None, *, timeout_s: float = 2.0,
    lifetime_s: int = LIFETIME_S, told: Told | None = None,
) -> AsyncIterator[Pinhole | None]:
    """A pinhole to ``address``:``port`` for the duration of the block (renewed at half its
    lifetime, closed at the end); yield the :class:`Pinhole` or None (see ``attempt.notes``);
    ``told`` of each change between renewals taken and not."""
    attempt = attempt if attempt is not None else Attempt()
    try:
        pinhole = await open_pinhole(address, port, timeout_s=timeout_s, lifetime_s=lifetime_s)
    except PinholeError as exc:
        attempt.notes.append(str(exc))
        yield None
        return
    log.info("%s pinhole to [%s]:%d, lifetime %d s", pinhole.method, address, port,
             pinhole.lifetime_s)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_renew, pinhole, lifetime_s, told)
            yield pinhole
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True), trio.move_on_after(5):
            await _close(pinhole)
            log.info("%s pinhole to port %d closed", pinhole.method, port)
