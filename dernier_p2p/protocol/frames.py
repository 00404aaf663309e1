"""The frame kinds of a table's connections and the exact fields of each (PROTOCOL.md 4.1).

Every frame holds one canonical msgpack map with a ``str`` kind ``"k"`` and exactly the fields
of its kind: a known kind with other fields is MALFORMED, an unknown kind UNEXPECTED. Each
check of a frame, at the host, a seat, a watcher or a seat link, takes its field set from
:data:`FRAME_FIELDS`, and so does the conformance suite's adapter.

Relay frames (``relay-*``, PROTOCOL.md 4.7) travel on a relay's own connections and are not
listed here (:mod:`dernier_p2p.net.relay`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType


def _fields(*names: str) -> frozenset[str]:
    return frozenset({"k", *names})


FRAME_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType({
    # the handshake (4.2) and a watcher's opening (4.10)
    "challenge": _fields("version", "nonce", "table"),
    "hello": _fields("version", "name", "key", "listen", "sig"),
    "resume": _fields("version", "key", "have", "sig"),
    "watch": _fields("version", "have"),
    "watching": _fields("last"),
    "welcome": _fields("seat"),  # after a resume also "last": RESUMED_WELCOME_FIELDS
    # the match (4.3, 4.4, 7.5, 18.1)
    "env": _fields("env"),
    "rec": _fields("rec"),
    "error": _fields("code", "detail"),
    "vote": _fields("kind", "target", "vote"),
    "status": _fields("seat", "state", "grace_ms"),
    "done": _fields("last"),
    "ready": _fields("seat", "at", "sig"),
    "pass": _fields("env"),
    "beat": _fields(),
    # seat links (4.6)
    "link": _fields("version", "game", "seat", "sig"),
    "probe": _fields("nonce"),
    "present": _fields("nonce", "have", "pending", "proof", "lent", "sig"),
})
"""Each frame kind and its exact field set, ``"k"`` included."""

RESUMED_WELCOME_FIELDS = FRAME_FIELDS["welcome"] | {"last"}
"""A ``welcome`` answering a ``resume`` also carries ``last``, the host's last record (4.4)."""


def shapes(kind: str) -> tuple[frozenset[str], ...]:
    """The field sets a frame of ``kind`` may have (none for a kind the protocol lacks)."""
    if kind not in FRAME_FIELDS:
        return ()
    if kind == "welcome":
        return (FRAME_FIELDS[kind], RESUMED_WELCOME_FIELDS)
    return (FRAME_FIELDS[kind],)
