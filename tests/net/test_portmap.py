"""NAT-PMP messages (RFC 6886) built and read without a network: requests, replies, refusals
and hostile replies. The exchange with a real router runs in tests/netlab."""

from __future__ import annotations

import struct
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dernier_p2p.net.portmap import (
    MAX_LEASE_S,
    OP_ADDRESS,
    OP_MAP_TCP,
    Mapping,
    MappingError,
    Refused,
    _check_mapping,
    _check_public,
    pack_address,
    pack_map,
    parse_reply,
)


def test_requests_have_the_rfc_layout() -> None:
    assert pack_address() == b"\x00\x00"
    assert pack_map(47630, 47630, 3600) == bytes.fromhex("00020000ba0eba0e00000e10")
    assert pack_map(47630, 0, 0) == bytes.fromhex("00020000ba0e000000000000")  # a removal


def test_replies_are_read() -> None:
    address = struct.pack("!BBHI4s", 0, 128, 0, 77, bytes([203, 0, 113, 10]))
    assert parse_reply(address, OP_ADDRESS) == (0xCB00710A,)
    mapping = struct.pack("!BBHIHHI", 0, 130, 0, 77, 47630, 50000, 7200)
    assert parse_reply(mapping, OP_MAP_TCP) == (47630, 50000, 7200)


@pytest.mark.parametrize(
    "data, op, says",
    [
        (struct.pack("!BBHIHHI", 0, 130, 2, 1, 1, 1, 1), OP_MAP_TCP, "not authorised"),
        (struct.pack("!BBHIHHI", 0, 130, 9, 1, 1, 1, 1), OP_MAP_TCP, "result 9"),
        (struct.pack("!BBHIHHI", 0, 129, 0, 1, 1, 1, 1), OP_MAP_TCP, "not a NAT-PMP reply"),
        (struct.pack("!BBHIHHI", 1, 130, 0, 1, 1, 1, 1), OP_MAP_TCP, "not a NAT-PMP reply"),
        (b"\x00\x82\x00", OP_MAP_TCP, "not a NAT-PMP reply"),
        (struct.pack("!BBHIHH", 0, 130, 0, 1, 1, 1), OP_MAP_TCP, "16 bytes"),
        (struct.pack("!BBHIH", 0, 128, 0, 1, 1), OP_ADDRESS, "12 bytes"),
    ],
)
def test_refusals_and_malformed_replies_are_mapping_errors(data: bytes, op: int, says: str) -> None:
    with pytest.raises(MappingError, match=says) as raised:
        parse_reply(data, op)
    # only a refusal ends the exchange (Refused); a reply not to this request is dropped
    assert isinstance(raised.value, Refused) == ("refused" in str(raised.value)), raised.value


@given(st.binary(max_size=40), st.sampled_from([OP_ADDRESS, OP_MAP_TCP]))
def test_hostile_replies_never_raise_anything_else(data: bytes, op: int) -> None:
    try:
        parse_reply(data, op)
    except MappingError:
        pass


@pytest.mark.parametrize("address", ["192.168.1.1", "10.0.0.1", "100.64.3.2", "0.0.0.0", None,
                                     "", "garbage"])
def test_a_private_or_missing_outside_address_is_not_a_usable_mapping(address: str | None) -> None:
    with pytest.raises(MappingError):
        _check_public(address)


@pytest.mark.parametrize("address", ["224.0.0.1", "169.254.1.1", "240.0.0.1", "::1",
                                     "2001:db8::1"])
def test_an_outside_address_no_seat_can_dial_is_not_a_usable_mapping(address: str) -> None:
    with pytest.raises(MappingError):
        _check_public(address)


GOOD = Mapping("NAT-PMP", "11.22.33.4", 47630, 47630, 3600, "192.168.1.1")


@pytest.mark.parametrize(
    "bad, says",
    [
        ({"external_port": 0}, "outside port 0"),  # once ended the host with a ValueError
        ({"external_port": 65536}, "outside port 65536"),
        ({"internal_port": 47631}, "mapped port 47631, not 47630"),
        ({"lease_s": 0}, "lease of 0 s"),
        ({"lease_s": -1}, "lease of -1 s"),
        ({"external_ip": "10.1.2.3"}, "private"),
    ],
)
def test_a_routers_mapping_is_checked_before_use(bad: dict, says: str) -> None:
    with pytest.raises(MappingError, match=says):
        _check_mapping(replace(GOOD, **bad), 47630)


def test_a_good_mapping_passes_and_a_huge_lease_is_capped() -> None:
    assert _check_mapping(GOOD, 47630) == GOOD
    assert _check_mapping(replace(GOOD, method="UPnP", lease_s=0), 47630).lease_s == 0
    assert _check_mapping(replace(GOOD, external_port=1), 47630).external_port == 1
    assert _check_mapping(replace(GOOD, external_port=65535), 47630).external_port == 65535
    assert _check_mapping(replace(GOOD, lease_s=1), 47630).lease_s == 1
    assert _check_mapping(replace(GOOD, lease_s=2**32 - 1), 47630).lease_s == MAX_LEASE_S
