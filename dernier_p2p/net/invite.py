"""Invite codes: one short line that carries where a table can be reached and whose it is.

``dernier host`` prints ``dernier join dn1-...``. The code (PROTOCOL.md 4.8) holds the host's
identity-key fingerprint and the table's reachable addresses in the order a joiner tries them:
direct (the host's own address), mapped (a port its router opened) and relay (a ``dernier
relay`` plus the table's relay token). A checksum catches typos; the fingerprint makes a joiner
refuse whoever answers at those addresses unless it is the host the code names.

Byte layout before base32 (lower case, no padding) behind the prefix ``dn1-``::

    version (1 byte, 1) || fingerprint (10) || route* || checksum (4)
    route = kind (1: 0 direct, 1 mapped, 2 relay) || family (1: 4 IPv4, 6 IPv6, 0 name)
            || address (4 | 16 | length byte + ASCII name) || port (2, big-endian)
            || token (8, relay routes only)

An address is a host's: never unspecified or multicast; an IPv6 one is not link-local (a code
cannot name the interface) nor IPv4-mapped (that travels as family 4); a name holds no ':'.
    checksum = digest("dernier-p2p/invite", everything before it)[:4]
"""

from __future__ import annotations

import base64
import ipaddress
from dataclasses import dataclass

from dernier_p2p.net.address import host_port
from dernier_p2p.wire.hashing import digest

PREFIX = "dn1-"
VERSION = 1
FINGERPRINT_SIZE = 10
TOKEN_SIZE = 8
CHECKSUM_SIZE = 4
KINDS = ("direct", "mapped", "relay")
MAX_ROUTES = 8


class InviteError(ValueError):
    """A code that cannot be read: wrong prefix, a typo (bad checksum), a malformed route."""


def fingerprint(key: bytes) -> bytes:
    """The 10-byte fingerprint of an identity public key."""
    return digest("dernier-p2p/fingerprint", key)[:FINGERPRINT_SIZE]


def show_fingerprint(fp: bytes) -> str:
    """A fingerprint as people read it aloud: hex in groups of four."""
    text = fp.hex()
    return "-".join(text[k : k + 4] for k in range(0, len(text), 4))


@dataclass(frozen=True)
class Route:
    """One way to reach the table: ``kind`` (direct, mapped, relay), address and port, and for
    a relay the table's ``token`` there."""

    kind: str
    host: str
    port: int
    token: bytes | None = None

    def __str__(self) -> str:
        return f"{self.kind} {self.where}"

    @property
    def where(self) -> str:
        """``host:port`` (an IPv6 address in brackets)."""
        return host_port(self.host, self.port)

    def describe(self) -> str:
        """How a connection by this route reads to a player."""
        return {"direct": f"directly at {self.where}" + (" (IPv6)" if ":" in self.host else ""),
                "mapped": f"through the host's router at {self.where}",
                "relay": f"through the relay {self.where}",
                "seat": f"through the seat relay {self.where} (a seat of the table)",
                "punched": f"directly at {self.where}, hole punched through the relay",
                "birthday": f"directly at {self.where}, hole punched through the relay "
                            "(birthday punch: a symmetric NAT)",
                "reversed": f"directly: the host called this seat back from {self.where} "
                            "(connection reversal at the relay)",
                }[self.kind]


@dataclass(frozen=True)
class Invite:
    """A decoded code: the host's key fingerprint and the routes, in the order to try."""

    fingerprint: bytes
    routes: tuple[Route, ...]

    def encode(self) -> str:
        """The code, ``dn1-`` and base32."""
        if len(self.fingerprint) != FINGERPRINT_SIZE:
            raise ValueError("a fingerprint is 10 bytes")
        if not 1 <= len(self.routes) <= MAX_ROUTES:
            raise ValueError(f"an invite carries 1 to {MAX_ROUTES} routes")
        out = bytearray([VERSION]) + self.fingerprint
        for route in self.routes:
            out += _pack_route(route)
        out += _checksum(bytes(out))
        return PREFIX + base64.b32encode(bytes(out)).decode().rstrip("=").lower()

    def matches(self, key: bytes) -> bool:
        """Whether ``key`` is the identity key this code names."""
        return fingerprint(key) == self.fingerprint


def _checksum(data: bytes) -> bytes:
    return digest("dernier-p2p/invite", data)[:CHECKSUM_SIZE]


def _pack_route(route: Route) -> bytes:
    if route.kind not in KINDS:
        raise ValueError(f"unknown route kind {route.kind!r}")
    if not 1 <= route.port <= 65535:
        raise ValueError("a port is 1..65535")
    if (route.kind == "relay") != (route.token is not None):
        raise ValueError("relay routes, and only they, carry a token")
    out = bytearray([KINDS.index(route.kind)])
    try:
        ip = ipaddress.ip_address(route.host.strip("[]"))
    except ValueError:
        name = route.host.encode("ascii")
        if not 1 <= len(name) <= 255 or b":" in name:
            raise ValueError("a host name is 1 to 255 ASCII characters, no ':'") from None
        out += bytes([0, len(name)]) + name
    else:
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # an IPv4 address written as IPv6 travels as IPv4
        problem = address_problem(ip)
        if problem is not None:
            raise ValueError(problem)
        out += bytes([ip.version]) + ip.packed
    out += route.port.to_bytes(2, "big")
    if route.token is not None:
        if len(route.token) != TOKEN_SIZE:
            raise ValueError("a relay token is 8 bytes")
        out += route.token
    return bytes(out)


def address_problem(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why ``ip`` cannot be a route's address, or None: the unspecified and multicast
    addresses lead to no host, an IPv6 link-local address needs the interface it is on
    (which a code cannot name), and an IPv4-mapped IPv6 address is carried as IPv4."""
    if ip.is_unspecified:
        return f"the unspecified address {ip} is not a host"
    if ip.is_multicast:
        return f"the multicast address {ip} is not a host"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.is_link_local:
            return f"the link-local address {ip} cannot be reached without its interface"
        if ip.ipv4_mapped is not None:
            return f"the IPv4-mapped address {ip} belongs in an IPv4 route"
    return None


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise InviteError("the code is cut short")
        out = self.data[self.at : self.at + n]
        self.at += n
        return out


def decode(text: str) -> Invite:
    """Read a code (case, spaces and dashes after the prefix do not matter); :class:`InviteError`
    if it is not a valid code."""
    code = "".join(text.split()).lower()
    if code.startswith("dernierjoin"):  # the whole line pasted
        code = code[len("dernierjoin"):]
    if not code.startswith(PREFIX):
        raise InviteError(f"an invite code starts with {PREFIX!r}")
    body = code[len(PREFIX):].replace("-", "").upper()
    try:
        data = base64.b32decode(body + "=" * (-len(body) % 8))
    except ValueError:
        raise InviteError("the code has a character that is not in the alphabet a-z, 2-7") from None
    if base64.b32encode(data).decode().rstrip("=") != body:  # unused low bits must be zero
        raise InviteError("the code does not check: its last character is wrong")
    if len(data) < 1 + FINGERPRINT_SIZE + CHECKSUM_SIZE:
        raise InviteError("the code is too short")
    payload, check = data[:-CHECKSUM_SIZE], data[-CHECKSUM_SIZE:]
    if _checksum(payload) != check:
        raise InviteError("the code does not check: a character is wrong or missing")
    if payload[0] != VERSION:
        raise InviteError(f"invite code version {payload[0]} is not known to this program")
    reader = _Reader(payload[1:])
    fp = reader.take(FINGERPRINT_SIZE)
    routes = []
    while reader.at < len(reader.data):
        routes.append(_read_route(reader))
    if not 1 <= len(routes) <= MAX_ROUTES:
        raise InviteError(f"an invite carries 1 to {MAX_ROUTES} routes")
    return Invite(fp, tuple(routes))


def _read_route(reader: _Reader) -> Route:
    kind_byte, family = reader.take(2)
    if kind_byte >= len(KINDS):
        raise InviteError(f"unknown route kind {kind_byte}")
    kind = KINDS[kind_byte]
    if family in (4, 6):
        ip = ipaddress.ip_address(reader.take(4 if family == 4 else 16))
        problem = address_problem(ip)
        if problem is not None:
            raise InviteError(f"a {kind} route in the code is not usable: {problem}")
        host = str(ip)
    elif family == 0:
        raw = reader.take(reader.take(1)[0])
        if not raw or not raw.isascii() or not raw.decode().isprintable():
            raise InviteError("a host name in the code is not printable ASCII")
        if b":" in raw:
            raise InviteError("a host name in the code holds ':' (an IPv6 address is carried "
                              "as family 6)")
        host = raw.decode()
    else:
        raise InviteError(f"unknown address family {family}")
    port = int.from_bytes(reader.take(2), "big")
    if port == 0:
        raise InviteError("a route's port is 0")
    token = reader.take(TOKEN_SIZE) if kind == "relay" else None
    return Route(kind, host, port, token)
