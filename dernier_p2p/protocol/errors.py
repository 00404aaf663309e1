"""Typed protocol errors: a stable code, the seat at fault (None when unknown) and a detail.

Every fault found in a received message or record raises :class:`ProtocolError`. ``code`` is one
of :data:`CODES` (stable: it is written to logs and shown to players); ``seat`` names the seat
whose fault it is. For a sequenced record that seat is usually the host, since the host must
refuse a bad envelope before sequencing it; for an envelope refused by the host it is the seat of
the connection it came from.

``evidence`` is the index of the record that proves the fault when the chain of records holds it:
a record that passed every check of the chain (host signature, index, author signature, counter,
head echo, schema) and whose body, applied to the state of the match, shows the fault (an
illegal play revealed by its token, a false complaint, a bad proof). Such a record is kept in
every transcript: it is the signed evidence against the seat named. ``None`` otherwise.
"""

from __future__ import annotations

from dernier_p2p.deck.errors import DeckError

CODES: dict[str, str] = {
    "MALFORMED": "a value has the wrong structure: type, byte length, key set or integer range",
    "OVERSIZED": "bytes over a decoding limit: nesting depth, a length, or the frame size",
    "UNKNOWN_MESSAGE": "a body type that the protocol does not define",
    "BAD_SIGNATURE": "an envelope or record signature does not verify under the registered key",
    "WRONG_GAME": "an envelope names another game id",
    "WRONG_SEAT": (
        "an envelope's author is not the seat of the connection it came from, or a seat "
        "sent a body only the host (or the next host) may send"
    ),
    "DUPLICATE": "an author counter ``n`` already used (a replayed or repeated envelope)",
    "OUT_OF_ORDER": "an author counter ``n`` beyond the next one (an envelope was skipped)",
    "BAD_CHAIN": (
        "a record with the wrong index, a ``prev`` that is not the receiver's head, a time "
        "before the previous record's, or signed by a seat that is not the host"
    ),
    "FORK": (
        "an envelope's head echo is not the hash of a record the receiver holds at an earlier "
        "index: the host showed the author a different history"
    ),
    "ILLEGAL_MOVE": "a move that the rules do not allow now",
    "NOT_HELD": "a move that refers to a card or slot the seat does not hold",
    "DECK_FAULT": "a deck protocol message failed its checks (wraps the deck layer's error)",
    "TIMEOUT": "a seat did not act or send a message it owed within its time",
    "VERSION": "a protocol version that this implementation does not speak",
    "TABLE_MISMATCH": "the table (players, keys, variant, options) differs from the agreed one",
    "NO_QUORUM": (
        "a ``timeout``, ``left``, ``no_contest`` or ``host_change`` without the votes of a "
        "quorum of the seats at the table"
    ),
    "STALE_VOTE": "a vote used twice, or older than a record its target authored (or signed)",
    "UNEXPECTED": (
        "a frame of a kind not expected at that point, or about a match that is over (a code of "
        "connections, PROTOCOL.md 4.1)"
    ),
}
"""Every error code and what it means."""


class ProtocolError(Exception):
    """A protocol fault: ``code`` (one of :data:`CODES`), ``seat`` at fault, ``detail``."""

    def __init__(
        self, code: str, seat: int | None, detail: str, evidence: int | None = None
    ) -> None:
        if not isinstance(code, str) or not code:
            raise ValueError("an error code is a non-empty string")
        who = "unknown seat" if seat is None else f"seat {seat}"
        super().__init__(f"{code} ({who}): {detail}")
        self.code = code
        self.seat = seat
        self.detail = detail
        self.evidence = evidence

    def __reduce__(self):  # keep pickling/copying working with the four-argument constructor
        return (type(self), (self.code, self.seat, self.detail, self.evidence))


def from_deck_error(exc: DeckError) -> ProtocolError:
    """A ``DECK_FAULT`` naming the seat the deck layer named."""
    return ProtocolError("DECK_FAULT", exc.seat, f"{type(exc).__name__}: {exc.reason}")
