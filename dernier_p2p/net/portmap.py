"""Asking the home router to open a port: UPnP-IGD (through miniupnpc), then NAT-PMP.

:func:`mapped` is an async context manager: it asks the router to forward a TCP port to this
machine, renews the mapping at half its lease while the table lasts and removes it on exit (also
on an error or Ctrl-C). It yields a :class:`Mapping`, or None when no router answered (the
reason is in :attr:`Attempt.notes`), so the caller can fall back to a relay.

UPnP-IGD uses the maintained ``miniupnpc`` library (wheels for Linux, macOS and Windows; its
blocking calls run in a worker thread). NAT-PMP (RFC 6886) is a two-message UDP exchange with
the default gateway and is written here: :func:`pack_map`, :func:`parse_reply` are pure.
"""

from __future__ import annotations

import ipaddress
import logging
import struct
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import trio

from dernier_p2p.net.udpquery import query

log = logging.getLogger("dernier_p2p.net.portmap")

LEASE_S = 3600
NATPMP_PORT = 5351
DESCRIPTION = "dernier table"


@dataclass(frozen=True)
class Mapping:
    """A port the router forwards: ``method`` (UPnP or NAT-PMP), the outside address and port,
    this machine's port, the lease in seconds (0: until removed) and, for NAT-PMP, the
    gateway."""

    method: str
    external_ip: str
    external_port: int
    internal_port: int
    lease_s: int
    gateway: str = ""


@dataclass
class Attempt:
    """What was tried: a line per method that did not give a mapping."""

    notes: list[str] = field(default_factory=list)


class MappingError(Exception):
    """A router answered but refused or gave something unusable."""


class Refused(MappingError):
    """The router's NAT-PMP answer to this request is a refusal: asking again changes
    nothing."""


# ------------------------------------------------------------------------------ UPnP-IGD
def _upnp_find(delay_ms: int, minissdpd: str | None = None) -> tuple[object, str]:
    """Find the UPnP router (SSDP, then its description): (the client, its outside address).
    No side effect on the router, so a caller may stop waiting for it. ``minissdpd``: the
    socket of a local SSDP daemon asked first (miniupnpc's default path when None)."""
    try:
        import miniupnpc
    except ImportError:
        raise MappingError("the miniupnpc library is not installed") from None
    upnp = miniupnpc.UPnP(minissdpdsocket=minissdpd) if minissdpd else miniupnpc.UPnP()
    upnp.discoverdelay = delay_ms  # per device type searched (miniupnpc waits at least 1 s)
    try:
        found = upnp.discover()
    except Exception:  # miniupnpc raises a bare Exception when nothing answers
        found = 0
    if found == 0:
        raise MappingError("no UPnP router answered")
    try:
        upnp.selectigd()
    except Exception as exc:  # miniupnpc raises a bare Exception
        raise MappingError(f"no usable UPnP router: {exc}") from None
    try:
        external = upnp.externalipaddress()
    except Exception as exc:  # miniupnpc raises a bare Exception for a SOAP fault
        raise MappingError(f"the UPnP router gave no outside address: {exc}") from None
    _check_public(external if isinstance(external, str) else None)
    return upnp, external


def _upnp_map(upnp: object, external: str, port: int, lease_s: int) -> Mapping:
    u: Any = upnp
    try:
        ok = u.addportmapping(port, "TCP", u.lanaddr, port, DESCRIPTION, "", lease_s)
    except Exception as exc:
        ok = False
        log.info("UPnP: port %d refused (%s); asking for any port", port, exc)
    external_port = port
    lease = lease_s
    if not ok:  # AddAnyPortMapping (IGD v2): the router picks the outside port, no lease asked
        lease = 0
        try:
            external_port = u.addanyportmapping(port, "TCP", u.lanaddr, port, DESCRIPTION, "")
        except Exception as exc:
            raise MappingError(f"the UPnP router refused the mapping: {exc}") from None
        if type(external_port) is not int:
            raise MappingError(f"the UPnP router gave outside port {external_port!r}")
    mapping = _check_mapping(Mapping("UPnP", external, external_port, port, lease), port)
    return _upnp_confirm(u, mapping, lease)


def _upnp_confirm(u: Any, mapping: Mapping, lease_s: int) -> Mapping:
    """The mapping as the router reads it back (GetSpecificPortMappingEntry): forwarded to this
    machine's port, for the lease it keeps (a shorter one is renewed sooner). A router that
    cannot read entries back (a SOAP fault) is taken at its word; one that forgot the mapping or
    forwards it elsewhere gives no mapping."""
    try:
        entry = u.getspecificportmapping(mapping.external_port, "TCP")
    except Exception as exc:  # miniupnpc raises a bare Exception for a SOAP fault
        log.info("UPnP: the mapping could not be read back (%s)", exc)
        return mapping
    if entry is None:
        raise MappingError("the UPnP router did not keep the mapping")
    if not isinstance(entry, tuple) or len(entry) < 5:
        raise MappingError("the UPnP router read the mapping back unreadably")
    client, internal, _, enabled, lease = entry[:5]
    if client != u.lanaddr:
        raise MappingError(f"the UPnP router forwards the port to {client!r}, not to "
                           f"{u.lanaddr!r}")
    if internal != mapping.internal_port:
        raise MappingError(f"the router mapped port {internal!r}, not {mapping.internal_port}")
    if not enabled:
        raise MappingError("the UPnP router keeps the mapping disabled")
    if type(lease) is not int or lease < 0:
        raise MappingError(f"the router gave a lease of {lease!r} s")
    if 0 < lease < mapping.lease_s or (lease_s == 0 and lease > 0):
        mapping = _check_mapping(Mapping("UPnP", mapping.external_ip, mapping.external_port,
                                         mapping.internal_port, lease), mapping.internal_port)
    return mapping


async def _upnp_add(port: int, timeout_s: float, lease_s: int,
                    minissdpd: str | None = None) -> tuple[Mapping, object]:
    """Map ``port`` by UPnP. Finding the router is given ``timeout_s`` (miniupnpc searches four
    device types, at least a second each, when no router answered: a thread left behind ends
    by itself); the mapping and its reading back as long again (a router that answers slowly
    or never finishes an answer gives no mapping)."""
    found = None
    with trio.move_on_after(timeout_s):
        found = await trio.to_thread.run_sync(_upnp_find, min(1000, int(timeout_s * 1000)),
                                              minissdpd, abandon_on_cancel=True)
    if found is None:
        raise MappingError("no UPnP router answered")
    upnp, external = found
    mapping = None
    with trio.move_on_after(timeout_s):
        mapping = await trio.to_thread.run_sync(_upnp_map, upnp, external, port, lease_s,
                                                abandon_on_cancel=True)
    if mapping is None:
        raise MappingError(f"the UPnP router did not answer the mapping within {timeout_s:g} s")
    return mapping, upnp


def _upnp_remove(upnp: object, mapping: Mapping) -> None:
    try:
        upnp.deleteportmapping(mapping.external_port, "TCP")  # type: ignore[attr-defined]
    except Exception as exc:
        log.info("UPnP: removing the mapping failed: %s", exc)


def _check_public(address: str | None) -> None:
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        raise MappingError(f"the router gave no outside address ({address!r})") from None
    if ip.is_private or ip.is_loopback or ip.is_unspecified or ip in _CGNAT:
        raise MappingError(f"the router's outside address {ip} is private (a second router or "
                           "the provider's NAT is in the way)")
    if ip.is_multicast or ip.is_link_local or ip.is_reserved or ip.version != 4:
        raise MappingError(f"the router's outside address {ip} is no address a seat can dial")


MAX_LEASE_S = 7 * 24 * 3600
"""The longest lease taken from a router's answer (renewed at half of it)."""


def _check_mapping(mapping: Mapping, port: int) -> Mapping:
    """A router's mapping, or :class:`MappingError`: the port asked for (``port``) forwarded
    from an outside port a seat can dial (1 to 65535), for a lease of at least a second (0:
    until removed, UPnP only), the outside address public. Its values go into invite codes and
    the renewals, so nothing a router says is taken unchecked."""
    if not 1 <= mapping.external_port <= 65535:
        raise MappingError(f"the router gave outside port {mapping.external_port}")
    if mapping.internal_port != port:
        raise MappingError(f"the router mapped port {mapping.internal_port}, not {port}")
    if mapping.lease_s < 0 or (mapping.lease_s == 0 and mapping.method == "NAT-PMP"):
        raise MappingError(f"the router gave a lease of {mapping.lease_s} s")
    _check_public(mapping.external_ip)
    if mapping.lease_s > MAX_LEASE_S:
        mapping = Mapping(mapping.method, mapping.external_ip, mapping.external_port,
                          mapping.internal_port, MAX_LEASE_S, mapping.gateway)
    return mapping


_CGNAT = ipaddress.ip_network("100.64.0.0/10")


# ------------------------------------------------------------------------------ NAT-PMP
OP_ADDRESS = 0
OP_MAP_TCP = 2
RESULTS = {1: "unsupported version", 2: "not authorised or refused", 3: "network failure",
           4: "out of resources", 5: "unsupported opcode"}


def pack_address() -> bytes:
    """The NAT-PMP request for the router's outside address."""
    return bytes([0, OP_ADDRESS])


def pack_map(internal: int, external: int, lease_s: int) -> bytes:
    """The NAT-PMP request to map TCP ``internal`` (lease 0 with external 0 removes it)."""
    return struct.pack("!BBHHHI", 0, OP_MAP_TCP, 0, internal, external, lease_s)


def parse_reply(data: bytes, op: int) -> tuple[int, ...]:
    """A NAT-PMP reply to ``op``: (outside address as int,) for op 0, (internal, external,
    lease) for a mapping. :class:`MappingError` for anything else or a refusal."""
    if len(data) < 8 or data[0] != 0 or data[1] != 128 + op:
        raise MappingError("not a NAT-PMP reply to our request")
    result = struct.unpack("!H", data[2:4])[0]
    if result:
        raise Refused(f"NAT-PMP refused: {RESULTS.get(result, f'result {result}')}")
    if op == OP_ADDRESS:
        if len(data) != 12:
            raise MappingError("a NAT-PMP address reply is 12 bytes")
        return (struct.unpack("!I", data[8:12])[0],)
    if len(data) != 16:
        raise MappingError("a NAT-PMP mapping reply is 16 bytes")
    return struct.unpack("!HHI", data[8:16])


def default_gateway() -> str | None:
    """The IPv4 default gateway from /proc/net/route (Linux); None if unknown."""
    try:
        with open("/proc/net/route") as table:
            for line in table.readlines()[1:]:
                fields = line.split()
                if len(fields) > 3 and fields[1] == "00000000" and int(fields[3], 16) & 2:
                    return str(ipaddress.IPv4Address(struct.pack("<I", int(fields[2], 16))))
    except OSError:
        return None
    return None


async def _natpmp(gateway: str, request: bytes, op: int, timeout_s: float) -> tuple[int, ...]:
    """Ask ``gateway`` (:func:`~.udpquery.query`): its reply to ``op``; a refusal ends the
    exchange at once, a datagram that is not the reply is dropped."""
    got = await query(trio.socket.AF_INET, (gateway, NATPMP_PORT), request,
                      lambda data: parse_reply(data, op), final=(Refused,), skip=MappingError,
                      timeout_s=timeout_s, size=64)
    if got is None:
        raise MappingError(f"no NAT-PMP answer from {gateway}")
    return got


async def _natpmp_add(port: int, timeout_s: float, lease_s: int) -> Mapping:
    gateway = default_gateway()
    if gateway is None:
        raise MappingError("no default gateway to ask")
    try:
        (raw,) = await _natpmp(gateway, pack_address(), OP_ADDRESS, timeout_s)
        external = str(ipaddress.IPv4Address(raw))
        _check_public(external)
        internal, external_port, lease = await _natpmp(gateway, pack_map(port, port, lease_s),
                                                       OP_MAP_TCP, timeout_s)
    except OSError as exc:
        raise MappingError(str(exc.strerror or exc)) from None
    return _check_mapping(Mapping("NAT-PMP", external, external_port, internal, lease, gateway),
                          port)


async def _natpmp_remove(mapping: Mapping) -> None:
    try:
        await _natpmp(mapping.gateway, pack_map(mapping.internal_port, 0, 0), OP_MAP_TCP, 1.0)
    except (MappingError, OSError) as exc:
        log.info("NAT-PMP: removing the mapping failed: %s", exc)


# ------------------------------------------------------------------------------ both
METHODS = ("UPnP", "NAT-PMP")


async def _add(port: int, timeout_s: float, lease_s: int, attempt: Attempt,
               methods: tuple[str, ...] = METHODS) -> tuple[Mapping, object] | None:
    if "UPnP" in methods:
        try:
            return await _upnp_add(port, timeout_s, lease_s)
        except MappingError as exc:
            attempt.notes.append(f"UPnP: {exc}")
    if "NAT-PMP" in methods:
        try:
            return await _natpmp_add(port, timeout_s, lease_s), None
        except MappingError as exc:
            attempt.notes.append(f"NAT-PMP: {exc}")
    return None


async def _remove(mapping: Mapping, upnp: object) -> None:
    if mapping.method == "UPnP":
        await trio.to_thread.run_sync(_upnp_remove, upnp, mapping, abandon_on_cancel=True)
    else:
        await _natpmp_remove(mapping)


@asynccontextmanager
async def mapped(
    port: int,
    attempt: Attempt | None = None,
    *,
    timeout_s: float = 2.0,
    lease_s: int = LEASE_S,
    methods: tuple[str, ...] = METHODS,
    told: Told | None = None,
) -> AsyncIterator[Mapping | None]:
    """Map TCP ``port`` on the router for the duration of the block (renewed at half the
    lease, by the method that worked; removed at the end); yield the :class:`Mapping` or None
    (see ``attempt.notes``). ``methods``: which of UPnP and NAT-PMP to try, in that order;
    ``told``: of each change between renewals taken and not (:class:`Renewals`)."""
    attempt = attempt if attempt is not None else Attempt()
    got = await _add(port, timeout_s, lease_s, attempt, methods)
    if got is None:
        yield None
        return
    mapping, upnp = got
    log.info("%s mapping: %s:%d -> port %d, lease %d s", mapping.method, mapping.external_ip,
             mapping.external_port, port, mapping.lease_s)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_renew, mapping, lease_s, upnp, told)
            yield mapping
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True), trio.move_on_after(5):
            await _remove(mapping, upnp)
            log.info("%s mapping of port %d removed", mapping.method, port)


RENEW_TIMEOUT_S = 10.0
"""How long one renewal may wait for the router (a router that never answers is asked again,
:data:`RETRY_S` later)."""
RETRY_S = 60.0
"""After a renewal the router did not take, the next comes this soon (or at half the lease, if
sooner): a router that restarted and forgot the mapping is asked again within a minute, not
half an hour."""


Told = Callable[[bool], None]
"""Told when a renewal's outcome changes: False once the router stopped taking them (the
route may be gone for newcomers), True once it takes them again."""


class Renewals:
    """Which renewals to tell of: the first failure after successes, the first success after
    failures (the mapping or pinhole starts out renewed)."""

    def __init__(self, told: Told | None) -> None:
        self.told = told
        self.ok = True

    def __call__(self, ok: bool) -> None:
        if ok != self.ok:
            self.ok = ok
            if self.told is not None:
                self.told(ok)

    def wait_s(self, lease_s: float) -> float:
        """Seconds to the next renewal of a lease of ``lease_s``: half of it, or, while the
        router takes none, :data:`RETRY_S` if sooner (at least a second)."""
        half = lease_s / 2
        return max(1.0, half if self.ok else min(half, RETRY_S))


async def _renew(mapping: Mapping, lease_s: int, upnp: object, told: Told | None = None
                 ) -> None:
    """Ask again at half the lease, by the same method (a router that restarted forgets), and
    sooner after a failure (:meth:`Renewals.wait_s`); ``told`` of each change between taken
    and not (:class:`Renewals`)."""
    renewals = Renewals(told)
    while mapping.lease_s:
        await trio.sleep(renewals.wait_s(mapping.lease_s))
        renewals(await _renew_once(mapping, lease_s, upnp))


async def _renew_once(mapping: Mapping, lease_s: int, upnp: object,
                      timeout_s: float = RENEW_TIMEOUT_S) -> bool:
    """One renewal, within ``timeout_s``: whether the router took it (a failure is logged)."""
    try:
        with trio.fail_after(timeout_s):
            if mapping.method == "UPnP":
                await trio.to_thread.run_sync(_upnp_renew, upnp, mapping, lease_s,
                                              abandon_on_cancel=True)
            else:
                await _natpmp(mapping.gateway, pack_map(mapping.internal_port,
                                                        mapping.external_port, lease_s),
                              OP_MAP_TCP, min(2.0, timeout_s))
    except trio.TooSlowError:
        log.warning("renewing the %s mapping: no answer within %g s", mapping.method, timeout_s)
        return False
    except (MappingError, OSError) as exc:
        log.warning("renewing the %s mapping failed: %s", mapping.method, exc)
        return False
    log.info("%s mapping renewed", mapping.method)
    return True


def _upnp_renew(upnp: object, mapping: Mapping, lease_s: int) -> None:
    try:
        ok = upnp.addportmapping(  # type: ignore[attr-defined]
            mapping.external_port, "TCP", upnp.lanaddr,  # type: ignore[attr-defined]
            mapping.internal_port, DESCRIPTION, "", lease_s)
    except Exception as exc:
        raise MappingError(str(exc)) from None
    if not ok:
        raise MappingError("the router refused the renewal")
