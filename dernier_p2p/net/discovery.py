"""LAN discovery: a host announces its table by UDP datagrams; a listener collects them.

Datagram (one canonical msgpack map, at most :data:`MAX_DATAGRAM` bytes)::

    {"magic": "dernier-p2p/lan", "version": 4, "name": str, "variant": str,
     "free": int (seats still free), "port": int (the host's TCP port),
     "host": str (optional: the address the host advertises, 1..253 printable characters
     without spaces)}

A joiner connects to ``host``:``port`` when ``host`` is present, else to the datagram's source
address (:attr:`Announcement.reach`). The host sends one every second (by default to the
broadcast address ``255.255.255.255`` on :data:`DEFAULT_PORT`); a host bound to a loopback
address only announces on loopback (``127.255.255.255``, see :func:`announce_target`), so no
listener on the LAN is told about a table it cannot reach. A listener binds the port and keeps
the latest announcement per (source address, TCP port) for a given time. Datagrams that are not
announcements are skipped (counted in :attr:`Listing.ignored`).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from dernier_p2p.net import firewall
from dernier_p2p.net.address import is_loopback
from dernier_p2p.net.handshake import NetError, check_name
from dernier_p2p.wire.canonical import EncodingError, decode, encode
from dernier_p2p.wire.version import PROTOCOL_VERSION, version_mismatch

MAGIC = "dernier-p2p/lan"
VERSION = PROTOCOL_VERSION
DEFAULT_PORT = 47631
BROADCAST = "255.255.255.255"
LOOPBACK_BROADCAST = "127.255.255.255"
MAX_HOST = 253
_FIELDS = frozenset({"magic", "version", "name", "variant", "free", "port"})
MAX_DATAGRAM = 512
INTERVAL = 1.0


class BadAnnouncement(ValueError):
    """A datagram that is not a well-formed table announcement."""


@dataclass(frozen=True)
class Announcement:
    """A table open on the LAN: its ``name``, ``variant``, ``free`` seats and TCP ``port``;
    ``address`` is the sender's IP address (empty before it is received); ``host`` the address
    the host advertises (empty: none, the sender's address is used)."""

    name: str
    variant: str
    free: int
    port: int
    address: str = ""
    host: str = ""

    @property
    def reach(self) -> str:
        """The address to connect to: the advertised one, else the datagram's source."""
        return self.host or self.address

    def to_bytes(self) -> bytes:
        """The datagram."""
        value: dict[str, Any] = {
            "magic": MAGIC,
            "version": VERSION,
            "name": self.name,
            "variant": self.variant,
            "free": self.free,
            "port": self.port,
        }
        if self.host:
            value["host"] = _check_host(self.host)
        data = encode(value)
        if len(data) > MAX_DATAGRAM:
            raise BadAnnouncement(f"announcement of {len(data)} bytes exceeds {MAX_DATAGRAM}")
        return data

    @classmethod
    def from_bytes(cls, data: bytes, address: str = "") -> Announcement:
        """Parse a datagram; :class:`BadAnnouncement` for anything else."""
        if len(data) > MAX_DATAGRAM:
            raise BadAnnouncement("datagram too large")
        try:
            value: Any = decode(data)
        except EncodingError as exc:
            raise BadAnnouncement(f"not canonical msgpack: {exc}") from None
        if not isinstance(value, dict) or value.get("magic") != MAGIC:
            raise BadAnnouncement("not a table announcement (magic)")
        if value.get("version") != VERSION:
            raise BadAnnouncement(version_mismatch("this announcement", value.get("version")))
        if set(value) - {"host"} != _FIELDS:
            raise BadAnnouncement("announcement fields do not match")
        host = _check_host(value["host"]) if "host" in value else ""
        name, variant, free, port = value["name"], value["variant"], value["free"], value["port"]
        try:
            check_name(name)
            check_name(variant)
        except NetError:
            raise BadAnnouncement("name and variant must be 1..32 printable characters") from None
        for what, n, hi in (("free", free, 255), ("port", port, 65535)):
            if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= hi:
                raise BadAnnouncement(f"{what} must be an integer 0..{hi}")
        if port == 0:
            raise BadAnnouncement("port must not be 0")
        return cls(name, variant, free, port, address, host)


def _check_host(host: object) -> str:
    if (
        not isinstance(host, str)
        or not 1 <= len(host) <= MAX_HOST
        or not host.isprintable()
        or any(c.isspace() for c in host)
    ):
        raise BadAnnouncement(f"host must be 1..{MAX_HOST} printable characters, no spaces")
    return host


def announce_target(bind: str, target: str) -> str:
    """Where to send announcements: ``target``, except that a host bound to a loopback address
    only announces on loopback (a LAN listener could not reach it)."""
    return LOOPBACK_BROADCAST if is_loopback(bind) and not is_loopback(target) else target


def _udp_socket(broadcast: bool) -> trio.socket.SocketType:
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM)
    if broadcast:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
    return sock


async def announce(
    current: Callable[[], Announcement | None],
    *,
    address: str = BROADCAST,
    port: int = DEFAULT_PORT,
    interval: float = INTERVAL,
) -> None:
    """Send ``current()`` to ``address``:``port`` every ``interval`` seconds until cancelled.

    ``current`` is called each time, so the free seats stay current; None skips a beat. A send
    that the network refuses (no route, no broadcast) is skipped, not fatal.
    """
    with _udp_socket(broadcast=True) as sock:
        while True:
            item = current()
            if item is not None:
                try:
                    await sock.sendto(item.to_bytes(), (address, port))
                except OSError:
                    pass
            await trio.sleep(interval)


@dataclass
class Listing:
    """Announcements heard, latest per (address, port), and the count of ignored datagrams."""

    tables: dict[tuple[str, int], Announcement] = field(default_factory=dict)
    ignored: int = 0


async def listen(
    duration: float,
    *,
    port: int = DEFAULT_PORT,
    bind: str = "",
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> Listing:
    """Collect announcements on UDP ``port`` for ``duration`` seconds.

    ``bind`` is the local address to listen on ("" for all; "127.0.0.1" in tests). With
    ``nursery.start`` the bound port is reported once listening (useful with ``port=0``).
    """
    listing = Listing()
    with _udp_socket(broadcast=True) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        await sock.bind((bind, port))
        task_status.started(sock.getsockname()[1])
        with trio.move_on_after(duration):
            while True:
                data, (host, _) = await sock.recvfrom(MAX_DATAGRAM + 1)
                try:
                    item = Announcement.from_bytes(data, host)
                except BadAnnouncement:
                    listing.ignored += 1
                    continue
                except Exception as exc:  # the firewall: one datagram never ends discovery
                    firewall.report(host, exc, "datagram ignored")
                    listing.ignored += 1
                    continue
                listing.tables[(host, item.port)] = item
    return listing
