"""IPv6 beside IPv4: route order for the race (RFC 8305), global addresses, one port on both
families."""

from __future__ import annotations

import socket

import trio

from dernier_p2p.net.invite import Route
from dernier_p2p.net.ipv6 import family, happy_order, is_global_ipv6, open_dual_listeners

V4 = Route("direct", "192.168.1.5", 47630)
V6 = Route("direct", "2a11:2233:10::2", 47630)
MAPPED = Route("mapped", "11.22.33.10", 47630)
V6B = Route("mapped", "2a11:2233:20::2", 47630)
RELAY = Route("relay", "relay.example.net", 47640, b"T" * 8)


def test_ipv6_goes_first_the_families_interleave_and_relays_keep_their_places() -> None:
    assert happy_order([V4, MAPPED, V6, RELAY]) == [V6, V4, MAPPED, RELAY]
    assert happy_order([V4, MAPPED, V6, V6B, RELAY]) == [V6, V4, V6B, MAPPED, RELAY]
    assert happy_order([RELAY, V4, V6]) == [RELAY, V6, V4]
    assert happy_order([V4, MAPPED, RELAY]) == [V4, MAPPED, RELAY]  # an IPv4 code: unchanged


def test_families_and_global_addresses() -> None:
    assert family("::1") == 6 and family("[2001:db8::1]") == 6
    assert family("10.0.0.1") == 4 and family("example.net") == 4
    assert is_global_ipv6("2a11:2233::1")
    for host in ("fd00::2", "fe80::1", "::1", "2001:db8::1", "::ffff:11.22.33.4", "11.22.33.4",
                 "name"):
        assert not is_global_ipv6(host), host


async def test_one_port_is_opened_on_both_families() -> None:
    listeners, problem = await open_dual_listeners(0)
    try:
        assert problem is None
        assert [ln.socket.family for ln in listeners] == [socket.AF_INET, socket.AF_INET6]
        ports = {ln.socket.getsockname()[1] for ln in listeners}
        assert len(ports) == 1
        port = ports.pop()
        for host in ("127.0.0.1", "::1"):
            stream = await trio.open_tcp_stream(host, port)
            await stream.aclose()
    finally:
        for ln in listeners:
            await ln.aclose()


async def test_a_port_taken_on_ipv6_leaves_ipv4_and_says_why() -> None:
    with socket.socket(socket.AF_INET6) as taken:
        taken.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        taken.bind(("::", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        listeners, problem = await open_dual_listeners(port)
        try:
            assert [ln.socket.family for ln in listeners] == [socket.AF_INET]
            assert problem is not None and f"[::]:{port}" in problem and "taken" in problem
        finally:
            for ln in listeners:
                await ln.aclose()
