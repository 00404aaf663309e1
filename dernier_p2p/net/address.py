"""Addresses as people type and read them: ``HOST:PORT`` with an IPv6 host in brackets, and
whether a host is this machine's loopback or a public (global) address."""

from __future__ import annotations

import ipaddress


def bracketed(host: str) -> str:
    """``host`` as it is written before ``:PORT``: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


def host_port(host: str, port: int) -> str:
    """``host:port``, ``[v6]:port`` for an IPv6 host."""
    return f"{bracketed(host)}:{port}"


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address, bracketed or not, or ``localhost``) is the loopback
    interface only: 127.0.0.0/8, ::1 or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_public(host: str) -> bool:
    """Whether ``host`` is a global IP address (IPv4 or IPv6; no NAT stands in its way)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_global
    except ValueError:
        return False
