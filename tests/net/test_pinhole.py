"""PCP MAP requests and replies for an IPv6 firewall pinhole (RFC 6887): the bytes written,
a router's answers judged, hostile bytes refused without a traceback."""

from __future__ import annotations

import ipaddress
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dernier_p2p.net.pinhole import PinholeError, Refused, pack_map, parse_map

HOME = "2a11:2233:10::2"
NONCE = bytes(range(12))


def _reply(result: int = 0, lifetime: int = 600, nonce: bytes = NONCE, port: int = 47630,
           external: int = 47630, address: str = HOME, op: int = 0x81) -> bytes:
    """A router's MAP reply: header (version, R|opcode, reserved, result, lifetime, epoch,
    12 reserved bytes), then the MAP body."""
    return (struct.pack("!BBBBII", 2, op, 0, result, lifetime, 77) + bytes(12) + nonce
            + struct.pack("!B3xHH", 6, port, external) + ipaddress.IPv6Address(address).packed)


def test_a_map_request_asks_for_this_address_and_port_unchanged() -> None:
    request = pack_map(HOME, 47630, 3600, NONCE)
    me = ipaddress.IPv6Address(HOME).packed
    assert len(request) == 60
    assert request[:8] == bytes([2, 1, 0, 0]) + (3600).to_bytes(4, "big")
    assert request[8:24] == me  # the client's address
    assert request[24:36] == NONCE and request[36] == 6 and request[37:40] == bytes(3)
    assert request[40:44] == (47630).to_bytes(2, "big") * 2 and request[44:] == me
    assert pack_map(HOME, 47630, 0, NONCE)[4:8] == bytes(4)  # lifetime 0 closes it
    with pytest.raises(ValueError):
        pack_map(HOME, 47630, 3600, b"short")


def test_a_reply_grants_a_lifetime_or_says_why_not() -> None:
    assert parse_map(_reply(), HOME, 47630, NONCE) == 600
    assert parse_map(_reply() + bytes(4), HOME, 47630, NONCE) == 600  # an option after it
    assert parse_map(_reply(lifetime=0), HOME, 47630, NONCE) == 0  # a closing answered
    cases = [
        (_reply(result=2), "PCP refused: not authorised"),
        (_reply(result=99), "PCP refused: result 99"),
        (_reply(nonce=bytes(12)), "another request"),
        (_reply(port=1), "another request"),
        (_reply(external=1), "another port or address"),
        (_reply(address="2a11:2233:10::3"), "another port or address"),
        (_reply(op=0x82), "not a PCP MAP reply"),
        (_reply(op=0x01), "not a PCP MAP reply"),
        (_reply()[:59], "length"),
        (_reply() + b"x", "length"),
        (b"", "length"),
    ]
    final = ("PCP refused", "another port or address")  # the router's answer to this request
    for data, says in cases:
        with pytest.raises(PinholeError, match=says) as raised:
            parse_map(data, HOME, 47630, NONCE)
        # only the router's answer to this request ends the exchange (Refused); a datagram
        # that is not that answer is dropped
        assert isinstance(raised.value, Refused) == says.startswith(final), says


@given(st.binary(max_size=120))
def test_hostile_bytes_are_a_pinhole_error_or_a_lifetime(data: bytes) -> None:
    try:
        lifetime = parse_map(data, HOME, 47630, NONCE)
    except PinholeError:
        return
    assert 0 <= lifetime < 2**32


@given(st.binary(min_size=36, max_size=36))
def test_hostile_map_bodies_behind_a_good_header(body: bytes) -> None:
    data = struct.pack("!BBBBII", 2, 0x81, 0, 0, 600, 1) + bytes(12) + body
    try:
        parse_map(data, HOME, 47630, NONCE)
    except PinholeError:
        pass
