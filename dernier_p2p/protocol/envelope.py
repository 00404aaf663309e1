"""Signed envelopes and host-signed, hash-chained records.

Envelope (written and signed by its author)::

    {"body": {"type": str, ...}, "game": bytes16, "head": bytes32, "n": int, "seat": int,
     "sig": bytes64}
    sig = Ed25519 signature by the author's identity key of
          canonical(["dernier-p2p/envelope", {"body", "game", "head", "n", "seat"}])

``n`` is the author's own counter (0, 1, 2, ... with no gap or repeat); ``head`` is the hash of
the last record the author had applied when it wrote the envelope, or the genesis hash.

Record (sequenced and signed by the host)::

    {"env": envelope, "h": host seat, "hsig": bytes64, "i": index, "prev": bytes32, "t": int ms}
    hsig     = host key signature of canonical(["dernier-p2p/record",
               {"env_hash", "h", "i", "prev", "t"}])
    env_hash = digest("dernier-p2p/envelope-hash", envelope)          (the whole envelope)
    prev     = record_hash(record i-1), or genesis_hash(game) for i = 0
    record_hash(record) = digest("dernier-p2p/record-hash", record)  (the whole record)
    genesis_hash(game)  = digest("dernier-p2p/genesis", game)

``digest(label, v)`` is the first 32 bytes of SHA-512(canonical([label, v])) (wire/hashing.py).
Integers ``n``, ``i``, ``t`` are in 0 .. 2**63-1; seats in 0 .. players-1 (at most 10 seats).

Structural checks here raise :class:`ProtocolError` ``MALFORMED`` / ``BAD_SIGNATURE`` naming the
seat passed as ``fault``: the author for an envelope the host receives, the host for anything
inside a record (the host must have refused it). A value without a canonical encoding (possible
only for maps built in memory, never for decoded bytes) is ``MALFORMED`` when its signature is
verified. Chain checks are in :mod:`.chain`.

Additions to the session design contract (nothing in it is changed):

- error codes ``WRONG_GAME`` (envelope of another game) and ``WRONG_SEAT`` (author is not the
  connection's seat, a host-only body from another seat, or a seat that has left);
  :func:`.errors.from_deck_error`;
- :class:`Author` numbers and signs one seat's envelopes; :func:`check_envelope`,
  :func:`check_record` (structure), :func:`verify_envelope`, :func:`verify_record` (signature),
  each naming the seat passed as ``fault``;
- ``validate_body(..., host_seat=None)``: with the host seat given, ``table``/``timeout``/
  ``left`` from another seat are ``WRONG_SEAT``; ``host_change`` must be authored by its
  ``new`` seat; :func:`.messages.deck_message` / :func:`.messages.deck_body` convert between
  deck bodies and DeckTable messages; ``move_to_body`` also maps ``Timeout``/``Leave`` to the
  host's ``timeout``/``left`` bodies and ``body_to_move`` back;
- ``Sequencer(..., records=(), player_keys=None)``: resume from held records (a new host);
  the player keys come from the table body of record 0; ``records_since(i, seat=None)``
  raises ``BAD_CHAIN`` naming ``seat`` beyond the end;
- ``ChainChecker(..., host=None)`` (None: the ``h`` of record 0), ``feed(record) -> hash``,
  ``check(record)`` (no change), ``check_envelope(env, fault)``, ``next_host()``,
  ``index_of(hash)``, ``next_counter(seat)``; a ``left`` body removes its seat from the table
  (its later envelopes are refused) and a host change removes the old host.
"""

from __future__ import annotations

from typing import Any

from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.wire.canonical import EncodingError
from dernier_p2p.wire.hashing import digest
from dernier_p2p.wire.identity import BadSignature, IdentityKey, Verified, verify

ENVELOPE_LABEL = "dernier-p2p/envelope"
RECORD_LABEL = "dernier-p2p/record"
ENVELOPE_HASH_LABEL = "dernier-p2p/envelope-hash"
RECORD_HASH_LABEL = "dernier-p2p/record-hash"
GENESIS_LABEL = "dernier-p2p/genesis"

GAME_SIZE = 16
HASH_SIZE = 32
SIG_SIZE = 64
MAX_SEATS = 10
MAX_INT = 2**63 - 1

ENVELOPE_KEYS = frozenset({"body", "game", "head", "n", "seat", "sig"})
RECORD_KEYS = frozenset({"env", "h", "hsig", "i", "prev", "t"})


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _bytes(v: Any, size: int) -> bool:
    return isinstance(v, bytes) and len(v) == size


def _seat_ok(v: Any, n_players: int | None) -> bool:
    return _int(v) and 0 <= v < (MAX_SEATS if n_players is None else n_players)


def genesis_hash(game: bytes) -> bytes:
    """The ``prev`` of record 0 and the head of a peer that has applied nothing."""
    if not _bytes(game, GAME_SIZE):
        raise ValueError(f"a game id is {GAME_SIZE} bytes")
    return digest(GENESIS_LABEL, game)


# ---------------------------------------------------------------------- envelopes
def _envelope_problem(env: Any, n_players: int | None) -> str | None:
    if not isinstance(env, dict):
        return "an envelope is a map"
    if set(env) != ENVELOPE_KEYS:
        return f"an envelope has exactly the keys {sorted(ENVELOPE_KEYS)}"
    body = env["body"]
    if not isinstance(body, dict) or not isinstance(body.get("type"), str):
        return "an envelope body is a map with a string type"
    if not _bytes(env["game"], GAME_SIZE):
        return f"the game id is {GAME_SIZE} bytes"
    if not _bytes(env["head"], HASH_SIZE):
        return f"the head echo is {HASH_SIZE} bytes"
    if not _int(env["n"]) or not 0 <= env["n"] <= MAX_INT:
        return "the counter n is an integer in 0 .. 2**63-1"
    if not _seat_ok(env["seat"], n_players):
        return "the envelope seat is not a seat of the table"
    if not _bytes(env["sig"], SIG_SIZE):
        return f"an envelope signature is {SIG_SIZE} bytes"
    return None


def check_envelope(env: Any, fault: int | None, n_players: int | None = None) -> dict:
    """Check the structure of an envelope (not its body's schema, nor its signature); return it.

    ``MALFORMED`` naming ``fault`` if anything is off."""
    problem = _envelope_problem(env, n_players)
    if problem is not None:
        raise ProtocolError("MALFORMED", fault, problem)
    return env


def _signed_envelope_part(env: dict) -> dict:
    return {k: env[k] for k in ("body", "game", "head", "n", "seat")}


def sign_envelope(
    identity: IdentityKey, game: bytes, seat: int, n: int, head: bytes, body: dict
) -> dict:
    """A signed envelope; ``ValueError`` if a field is malformed (a caller's mistake)."""
    env = {"body": body, "game": game, "head": head, "n": n, "seat": seat, "sig": bytes(SIG_SIZE)}
    problem = _envelope_problem(env, None)
    if problem is not None:
        raise ValueError(problem)
    env["sig"] = identity.sign(ENVELOPE_LABEL, _signed_envelope_part(env))
    return env


def envelope_signature(identity: IdentityKey, env: dict) -> bytes:
    """The signature ``identity`` makes over ``env``'s signed fields (``body``, ``game``,
    ``head``, ``n``, ``seat``), whatever their values: builds an envelope of any content,
    well-formed or not (conformance cases, tests). :func:`sign_envelope` is the checked way."""
    return identity.sign(ENVELOPE_LABEL, _signed_envelope_part(env))


def verify_envelope(
    env: dict, public: bytes, fault: int | None, verified: Verified | None = None
) -> None:
    """``BAD_SIGNATURE`` naming ``fault`` unless ``env`` (already structure-checked) carries
    ``public``'s signature (``verified``: successes remembered by the caller)."""
    try:
        verify(public, ENVELOPE_LABEL, _signed_envelope_part(env), env["sig"], verified)
    except EncodingError as exc:
        raise ProtocolError("MALFORMED", fault, f"envelope not encodable: {exc}") from None
    except BadSignature as exc:
        detail = f"envelope of seat {env['seat']}: {exc}"
        raise ProtocolError("BAD_SIGNATURE", fault, detail) from None


def envelope_hash(env: dict) -> bytes:
    """The 32-byte hash of a whole envelope (signature included) that a record signs."""
    return digest(ENVELOPE_HASH_LABEL, env)


class Author:
    """Numbers and signs the envelopes of one seat: counter ``n`` starts at ``next_n``."""

    def __init__(self, identity: IdentityKey, game: bytes, seat: int, next_n: int = 0) -> None:
        genesis_hash(game)
        self.identity, self.game, self.seat, self.next_n = identity, game, seat, next_n

    def envelope(self, body: dict, head: bytes) -> dict:
        """The next envelope of this seat, echoing ``head``."""
        env = sign_envelope(self.identity, self.game, self.seat, self.next_n, head, body)
        self.next_n += 1
        return env


# ---------------------------------------------------------------------- records
def _record_problem(rec: Any, n_players: int | None) -> str | None:
    if not isinstance(rec, dict):
        return "a record is a map"
    if set(rec) != RECORD_KEYS:
        return f"a record has exactly the keys {sorted(RECORD_KEYS)}"
    if not _seat_ok(rec["h"], n_players):
        return "the record's host seat is not a seat of the table"
    if not _int(rec["i"]) or not 0 <= rec["i"] <= MAX_INT:
        return "the record index is an integer in 0 .. 2**63-1"
    if not _bytes(rec["prev"], HASH_SIZE):
        return f"the record's prev is {HASH_SIZE} bytes"
    if not _int(rec["t"]) or not 0 <= rec["t"] <= MAX_INT:
        return "the record time is an integer in 0 .. 2**63-1 (milliseconds)"
    if not _bytes(rec["hsig"], SIG_SIZE):
        return f"a record signature is {SIG_SIZE} bytes"
    problem = _envelope_problem(rec["env"], n_players)
    return None if problem is None else f"record envelope: {problem}"


def check_record(rec: Any, fault: int | None, n_players: int | None = None) -> dict:
    """Check the structure of a record and its envelope; return it (``MALFORMED`` naming
    ``fault``, normally the host)."""
    problem = _record_problem(rec, n_players)
    if problem is not None:
        raise ProtocolError("MALFORMED", fault, problem)
    return rec


def _signed_record_part(rec: dict) -> dict:
    return {
        "env_hash": envelope_hash(rec["env"]),
        "h": rec["h"],
        "i": rec["i"],
        "prev": rec["prev"],
        "t": rec["t"],
    }


def make_record(
    host: IdentityKey, env: dict, h: int, i: int, prev: bytes, t: int
) -> dict:
    """A record of ``env`` at index ``i`` signed by the host key; ``ValueError`` if malformed."""
    rec = {"env": env, "h": h, "hsig": bytes(SIG_SIZE), "i": i, "prev": prev, "t": t}
    problem = _record_problem(rec, None)
    if problem is not None:
        raise ValueError(problem)
    rec["hsig"] = host.sign(RECORD_LABEL, _signed_record_part(rec))
    return rec


def record_signature(identity: IdentityKey, rec: dict) -> bytes:
    """The host signature ``identity`` makes over ``rec``'s signed part (the envelope's hash,
    ``h``, ``i``, ``prev``, ``t``), whatever their values: builds a record of any content
    (conformance cases, tests). :func:`make_record` is the checked way."""
    return identity.sign(RECORD_LABEL, _signed_record_part(rec))


def verify_record(
    rec: dict, host_public: bytes, fault: int | None, verified: Verified | None = None
) -> None:
    """``BAD_SIGNATURE`` naming ``fault`` unless ``rec`` (already structure-checked) carries
    the host signature of ``host_public`` (``verified``: successes remembered by the caller)."""
    try:
        verify(host_public, RECORD_LABEL, _signed_record_part(rec), rec["hsig"], verified)
    except EncodingError as exc:
        raise ProtocolError("MALFORMED", fault, f"record not encodable: {exc}") from None
    except BadSignature as exc:
        raise ProtocolError("BAD_SIGNATURE", fault, f"record {rec['i']}: {exc}") from None


def record_hash(rec: dict) -> bytes:
    """The 32-byte hash of a whole record: the next record's ``prev`` and a head echo."""
    return digest(RECORD_HASH_LABEL, rec)
