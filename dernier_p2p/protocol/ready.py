"""``ready`` frames (PROTOCOL.md 4.1, 18): a seat has nothing more to do out of turn.

A seat that has passed on the out-of-turn window (jump-in, declaration, catch) opened by the
records up to index ``at`` says so with ``{"k": "ready", "seat", "at", "sig"}``, where
``sig = sign("dernier-p2p/ready", {"at", "game", "seat"})``. The host relays it to every other
seat. It is not recorded and changes no state: it only lets the seat at turn move before the
window's time (``declare_ms``) is up. Being signed, a host cannot forge one to cut a seat's
window short; withholding one only makes the window last its full time.

Pure: signing and checking only; when to send and how long to wait are the network layer's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.frames import FRAME_FIELDS
from dernier_p2p.wire.identity import BadSignature, IdentityKey, verify

READY_LABEL = "dernier-p2p/ready"
READY_FIELDS = FRAME_FIELDS["ready"]


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def ready_frame(identity: IdentityKey, game: bytes, seat: int, at: int) -> dict[str, Any]:
    """Seat ``seat``'s signed ``ready`` frame for the records up to index ``at``."""
    sig = identity.sign(READY_LABEL, {"at": at, "game": game, "seat": seat})
    return {"k": "ready", "seat": seat, "at": at, "sig": sig}


def ready_fields(msg: Mapping[str, Any], n: int) -> tuple[int, int]:
    """``(seat, at)`` of a well-formed ``ready`` frame at a table of ``n`` seats, its signature
    not checked (a host drops a repeat before paying for that, PROTOCOL.md 18.1); ProtocolError
    MALFORMED (no seat named) otherwise."""
    seat, at, sig = msg.get("seat"), msg.get("at"), msg.get("sig")
    ok = (
        set(msg) == READY_FIELDS
        and _int(seat) and 0 <= seat < n
        and _int(at) and 0 <= at < 2**63
        and isinstance(sig, bytes) and len(sig) == 64
    )
    if not ok:
        raise ProtocolError("MALFORMED", None, "a ready frame is {seat, at, sig} (4.1)")
    return seat, at


def check_ready_signature(msg: Mapping[str, Any], keys: Mapping[int, bytes] | list[bytes],
                          game: bytes) -> None:
    """Check the signature of a well-formed ``ready`` frame (see :func:`ready_fields`) under
    its seat's key; ProtocolError BAD_SIGNATURE (no seat named) if it is not that seat's."""
    seat, at = msg["seat"], msg["at"]
    try:
        verify(keys[seat], READY_LABEL, {"at": at, "game": game, "seat": seat}, msg["sig"])
    except BadSignature:
        raise ProtocolError("BAD_SIGNATURE", None, f"a ready frame that is not seat {seat}'s")\
            from None


def check_ready_frame(msg: Mapping[str, Any], keys: Mapping[int, bytes] | list[bytes],
                      game: bytes) -> tuple[int, int]:
    """``(seat, at)`` of a well-formed, well-signed ``ready`` frame at a table whose seats have
    identity ``keys``; ProtocolError MALFORMED or BAD_SIGNATURE (no seat named) otherwise."""
    seat, at = ready_fields(msg, len(keys))
    check_ready_signature(msg, keys, game)
    return seat, at
