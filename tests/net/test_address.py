"""HOST:PORT as shown and loopback hosts."""

from __future__ import annotations

import pytest

from dernier_p2p.net.address import bracketed, host_port, is_loopback


def test_host_port_brackets_only_ipv6() -> None:
    assert host_port("::1", 47650) == "[::1]:47650"
    assert host_port("192.168.1.5", 47650) == "192.168.1.5:47650"
    assert host_port("table.example", 1) == "table.example:1"
    assert bracketed("fe80::1") == "[fe80::1]" and bracketed("10.0.0.1") == "10.0.0.1"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True),
     ("localhost", True), ("0.0.0.0", False), ("", False), ("10.0.0.1", False),
     ("128.0.0.1", False), ("127.example", False), ("::2", False), ("lo", False)],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_public_hosts_are_global_addresses_of_either_family() -> None:
    from dernier_p2p.net.address import is_public

    assert is_public("93.184.216.34") and is_public("2a11:2233::1") and is_public("[2a11::1]")
    for host in ("192.168.1.5", "10.0.0.1", "127.0.0.1", "fd00::2", "fe80::1", "::1",
                 "example.net", "203.0.113.5"):
        assert not is_public(host), host
