"""Invite codes: round trip, typo detection, fingerprints, malformed codes refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dernier_p2p.net.invite import (
    Invite,
    InviteError,
    Route,
    decode,
    fingerprint,
    show_fingerprint,
)
from dernier_p2p.wire.identity import IdentityKey

KEY = IdentityKey.generate(b"\x07" * 32).public_bytes()
OTHER = IdentityKey.generate(b"\x08" * 32).public_bytes()
ROUTES = (
    Route("direct", "192.168.10.2", 47630),
    Route("mapped", "203.0.113.10", 47630),
    Route("relay", "relay.example.net", 47640, b"T" * 8),
    Route("direct", "2001:db8::7", 47630),
)


def test_a_code_round_trips_and_names_its_host() -> None:
    invite = Invite(fingerprint(KEY), ROUTES)
    code = invite.encode()
    assert code.startswith("dn1-") and code == code.lower() and " " not in code
    back = decode(code)
    assert back == invite
    assert back.matches(KEY) and not back.matches(OTHER)


def test_case_spaces_dashes_and_the_whole_pasted_line_are_accepted() -> None:
    code = Invite(fingerprint(KEY), ROUTES[:2]).encode()
    body = code[4:]
    spaced = "DN1-" + "-".join(body[k : k + 5] for k in range(0, len(body), 5)).upper()
    assert decode(spaced) == decode(code)
    assert decode(f"  dernier join {code}\n") == decode(code)


def test_every_single_character_typo_is_caught() -> None:
    code = Invite(fingerprint(KEY), ROUTES[:3]).encode()
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    for at in range(4, len(code)):
        wrong = alphabet[(alphabet.index(code[at]) + 1) % 32]
        with pytest.raises(InviteError):
            decode(code[:at] + wrong + code[at + 1 :])
    with pytest.raises(InviteError):
        decode(code[:-1])  # a character missing
    with pytest.raises(InviteError):
        decode(code[:20] + code[21:])


@pytest.mark.parametrize(
    "text, says",
    [
        ("dn2-abc", "starts with"),
        ("hello", "starts with"),
        ("dn1-", "too short"),
        ("dn1-!!!!", "alphabet"),
        ("dn1-aaaaaaaa", "too short"),
    ],
)
def test_not_a_code(text: str, says: str) -> None:
    with pytest.raises(InviteError, match=says):
        decode(text)


def test_invalid_invites_cannot_be_written() -> None:
    fp = fingerprint(KEY)
    for routes in [(), (Route("relay", "1.2.3.4", 1),), (Route("direct", "1.2.3.4", 1, b"x" * 8),),
                   (Route("mapped", "1.2.3.4", 0),), (Route("other", "1.2.3.4", 1),)]:
        with pytest.raises(ValueError):
            Invite(fp, routes).encode()


def test_a_fingerprint_reads_aloud_in_groups() -> None:
    shown = show_fingerprint(fingerprint(KEY))
    assert len(shown.split("-")) == 5 and all(len(g) == 4 for g in shown.split("-"))


@given(st.binary(max_size=80))
def test_hostile_bytes_give_an_invite_error_or_a_valid_invite(data: bytes) -> None:
    import base64

    text = "dn1-" + base64.b32encode(data).decode().rstrip("=").lower()
    try:
        invite = decode(text)
    except InviteError:
        return
    assert decode(invite.encode()) == invite


# written by the encoder as it was before addresses were checked
OLD_CODE = ("dn1-aeaacaqdaqcqmbyibeaajqfibibludqbaqfrmiikxihaeaarojswyylzfzsxqylnobwgkltom"
            "v2lugcukrkfivcukrkaabraaeg3qaaaaaaaaaaaaaaaaaahxiheqxibdi")


def test_a_code_written_before_ipv6_checks_still_reads_the_same() -> None:
    assert decode(OLD_CODE).routes == (
        Route("direct", "192.168.10.2", 47630), Route("mapped", "11.22.33.10", 47630),
        Route("relay", "relay.example.net", 47640, b"T" * 8),
        Route("direct", "2001:db8::7", 47630))


def _raw_code(route: bytes) -> str:
    """A code holding one route of raw bytes, with a good checksum (only the route is bad)."""
    import base64

    from dernier_p2p.net.invite import _checksum

    payload = bytes([1]) + fingerprint(KEY) + route
    data = payload + _checksum(payload)
    return "dn1-" + base64.b32encode(data).decode().rstrip("=").lower()


PORT = (47630).to_bytes(2, "big")


@pytest.mark.parametrize("route, says", [
    (bytes([0, 6]) + bytes(16) + PORT, "unspecified address ::"),
    (bytes([0, 6]) + bytes.fromhex("ff02") + bytes(13) + b"\x01" + PORT, "multicast"),
    (bytes([1, 6]) + bytes.fromhex("fe80") + bytes(13) + b"\x01" + PORT, "link-local"),
    (bytes([0, 6]) + bytes(10) + b"\xff\xff" + bytes([11, 22, 33, 4]) + PORT, "IPv4-mapped"),
    (bytes([0, 6]) + bytes.fromhex("2a11") + bytes(6) + PORT, "cut short"),
    (bytes([0, 6]) + bytes.fromhex("2a11") + bytes(13) + b"\x01" + bytes(2), "port is 0"),
    (bytes([0, 4]) + bytes(4) + PORT, "unspecified address 0.0.0.0"),
    (bytes([0, 4]) + bytes([224, 0, 0, 1]) + PORT, "multicast"),
    (bytes([0, 0, 5]) + b"a::b1" + PORT, "family 6"),
    (bytes([0, 5]) + bytes(16) + PORT, "unknown address family 5"),
])
def test_a_malformed_ip_route_is_a_clear_invite_error(route: bytes, says: str) -> None:
    with pytest.raises(InviteError, match=says):
        decode(_raw_code(route))


def test_ipv6_routes_are_written_as_hosts_can_be_reached() -> None:
    fp = fingerprint(KEY)
    mapped = decode(Invite(fp, (Route("direct", "::ffff:11.22.33.4", 47630),)).encode())
    assert mapped.routes == (Route("direct", "11.22.33.4", 47630),)  # an IPv4 route
    bracketed = decode(Invite(fp, (Route("direct", "[2a11:2233::1]", 47630),)).encode())
    assert bracketed.routes == (Route("direct", "2a11:2233::1", 47630),)
    for host in ("fe80::1", "::", "ff02::1", "a:b"):
        with pytest.raises(ValueError):
            Invite(fp, (Route("direct", host, 47630),)).encode()
