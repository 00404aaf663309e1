"""The connection handshake and the frame codec of the table's TCP connections.

Every frame (see :mod:`.framing`, at most :data:`MAX_FRAME` bytes) holds one canonical msgpack map
with a kind ``"k"``. The handshake::

    host -> peer  {"k": "challenge", "version": 4, "nonce": 32 bytes,
                   "table": {"name", "variant", "players", "taken", "key"}}
    peer -> host  {"k": "hello", "version": 4, "name": str, "key": 32 bytes,
                   "listen": [host, port] | None, "sig": 64 bytes}
               or {"k": "resume", "version": 4, "key": 32 bytes, "have": int, "sig": 64 bytes}
               or {"k": "watch", "version": 4, "have": int}  (a watcher: no seat, PROTOCOL.md 4.10)
    host -> peer  {"k": "welcome", "seat": int}  or  {"k": "error", "code": str, "detail": str}
                  (to a watch: {"k": "watching", "last": int}, then the records after "have")
                  (a welcome to a resume adds "last": the index of the host's last record;
                  if "last" < "have", the peer first sends {"k": "rec", "rec"} for each
                  record after "last", which a new host after a host change may lack)

``hello.sig`` is the peer's identity signature ``sign("dernier-p2p/hello", {"key", "listen",
"name", "nonce"})`` and ``resume.sig`` is ``sign("dernier-p2p/resume", {"have", "key",
"nonce"})``, both over the challenge's fresh nonce, so a recorded handshake cannot be replayed.
``have`` is the index of the last record the peer holds (-1 for none); after a ``welcome`` to a
resume, the host sends every record after it. A name is 1 to 32 printable characters.

After the handshake: peer -> host ``{"k": "env", "env": envelope}``, host -> peer ``{"k": "rec",
"rec": record}``, and either way ``{"k": "error", "code", "detail"}``.
"""

from __future__ import annotations

from collections.abc import Callable, Set
from dataclasses import dataclass
from typing import Any

from dernier_p2p.net.framing import FramedStream
from dernier_p2p.protocol.frames import FRAME_FIELDS, RESUMED_WELCOME_FIELDS
from dernier_p2p.wire.canonical import EncodingError, decode, encode
from dernier_p2p.wire.identity import BadSignature, IdentityKey, check_public_key, verify
from dernier_p2p.wire.version import PROTOCOL_VERSION, version_mismatch

VERSION = PROTOCOL_VERSION
MAX_FRAME = 1 << 20
MAX_SEAT_FRAME = 1 << 17
"""A host refuses a frame from a seated peer above this size (OVERSIZED, 4.1): a seat sends one
envelope or record a frame, and the largest, a shuffle of 112 cards, is about 27 KiB. It bounds
what a seat's envelopes waiting to be sequenced can hold of the host's memory."""
MAX_OPENING = 4096
"""A host refuses a peer's opening frame (hello or resume, ~200 bytes) above this size."""
NONCE_SIZE = 32
MAX_NAME = 32
HELLO_LABEL = "dernier-p2p/hello"
RESUME_LABEL = "dernier-p2p/resume"

# Stable error codes of the handshake (later frames use the protocol's codes too).
VERSION_MISMATCH = "VERSION"
TABLE_FULL = "TABLE_FULL"
BAD_SIGNATURE = "BAD_SIGNATURE"
DUPLICATE_KEY = "DUPLICATE_KEY"
UNKNOWN_KEY = "UNKNOWN_KEY"
MALFORMED = "MALFORMED"
OVERSIZED = "OVERSIZED"
UNEXPECTED = "UNEXPECTED"


class NetError(Exception):
    """A typed failure on a connection: ``code`` (stable, as above) and ``detail``."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


class PeerClosedBeforeStart(ConnectionError):
    """The host closed the connection before the match started (a lobby seat freed)."""

    def __init__(self) -> None:
        super().__init__("the host closed the connection before the match started")


class RemoteError(NetError):
    """The other side sent an ``error`` frame."""


@dataclass(frozen=True)
class Hello:
    """A checked ``hello``: who the peer is and where it listens (for a later host change)."""

    name: str
    key: bytes
    listen: tuple[str, int] | None


@dataclass(frozen=True)
class Watch:
    """A checked ``watch``: an observer that holds the records up to index ``have``."""

    have: int


@dataclass(frozen=True)
class Resume:
    """A checked ``resume``: the peer's key and the index of the last record it holds."""

    key: bytes
    have: int


# --- frame codec -----------------------------------------------------------------------------


def pack(message: dict[str, Any]) -> bytes:
    """The frame payload of ``message``."""
    return encode(message)


def unpack(payload: bytes) -> dict[str, Any]:
    """Decode a frame payload; :class:`NetError` MALFORMED unless it is a map with a str ``k``."""
    try:
        message = decode(payload)
    except EncodingError as exc:  # OVERSIZED past a decoding limit, else MALFORMED
        raise NetError(exc.code, f"frame is not canonical msgpack: {exc}") from None
    if not isinstance(message, dict) or not isinstance(message.get("k"), str):
        raise NetError(MALFORMED, "frame is not a map with a string kind 'k'")
    return message


async def send_message(stream: FramedStream, message: dict[str, Any]) -> None:
    """Send one message as one frame."""
    await stream.send(pack(message))


async def receive_message(stream: FramedStream) -> dict[str, Any]:
    """Receive one message; an ``error`` frame is raised as :class:`RemoteError`, its code and
    detail made safe to show (see :func:`shown`)."""
    message = unpack(await stream.receive())
    if message["k"] == "error":
        raise remote_error(message)
    return message


def remote_error(message: dict[str, Any]) -> RemoteError:
    """The :class:`RemoteError` an ``error`` frame reports, its code and detail made safe to
    show; :class:`NetError` MALFORMED unless both are strings."""
    code, detail = message.get("code"), message.get("detail")
    if set(message) != FRAME_FIELDS["error"] or not isinstance(code, str) or \
            not isinstance(detail, str):
        raise NetError(MALFORMED, "an error frame is {k, code, detail}, both strings")
    return RemoteError(shown(code, 64), shown(detail, MAX_DETAIL))


def _int_in(v: object, lo: int, hi: int = 2**63) -> bool:
    """Whether ``v`` is an integer (not a bool) with ``lo <= v < hi``."""
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v < hi


def check_done(message: dict[str, Any]) -> int:
    """``last`` of a well-formed ``done`` frame (4.3); :class:`NetError` MALFORMED otherwise."""
    last = message.get("last")
    if set(message) != FRAME_FIELDS["done"] or not _int_in(last, -(2**63), 2**64):
        raise NetError(MALFORMED, "a done frame is {k, last}")
    return last


def shown(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, each character that is not printable (a control
    character such as a terminal escape's ESC, a format character) replaced by ``?``: the
    other side's words reach a screen or a log only so."""
    return "".join(ch if ch.isprintable() else "?" for ch in text[:limit])


MAX_DETAIL = 1000
"""An error frame's detail is cut to this many characters (a ``str`` is at most
:data:`~dernier_p2p.wire.canonical.MAX_STR` bytes on the wire)."""


def error_message(code: str, detail: str) -> dict[str, Any]:
    """An ``error`` frame (the detail cut to :data:`MAX_DETAIL` characters)."""
    return {"k": "error", "code": code[:64], "detail": detail[:MAX_DETAIL]}


def status_message(seat: int, state: str, grace_ms: int) -> dict[str, Any]:
    """A host's presence notice: ``seat`` is "dropped" (``grace_ms`` left to resume) or "back"."""
    return {"k": "status", "seat": seat, "state": state, "grace_ms": grace_ms}


def check_status(message: dict[str, Any], n: int) -> tuple[int, str, int] | None:
    """The seat, state and grace of a ``status`` frame at a table of ``n`` seats, or None if it
    is malformed (a status is informative only: the caller logs and ignores it)."""
    seat, state, grace = message.get("seat"), message.get("state"), message.get("grace_ms")
    ok = (
        set(message) == FRAME_FIELDS["status"]
        and _int_in(seat, 0, n) and state in ("dropped", "back") and _int_in(grace, 0, 2**31)
    )
    return (seat, state, grace) if ok else None  # type: ignore[return-value]


# --- building and checking the handshake frames ----------------------------------------------


def challenge_message(nonce: bytes, table: dict[str, Any]) -> dict[str, Any]:
    """The host's opening frame."""
    return {"k": "challenge", "version": VERSION, "nonce": nonce, "table": table}


def check_challenge(message: dict[str, Any]) -> tuple[bytes, dict[str, Any]]:
    """The nonce and table summary of a ``challenge``; :class:`NetError` otherwise."""
    _expect(message, "challenge")
    _check_version(message, "this table")
    if set(message) != FRAME_FIELDS["challenge"]:
        raise NetError(MALFORMED, "a challenge is {k, version, nonce, table}")
    nonce, table = message.get("nonce"), message.get("table")
    if not isinstance(nonce, bytes) or len(nonce) != NONCE_SIZE:
        raise NetError(MALFORMED, f"challenge nonce must be {NONCE_SIZE} bytes")
    if not isinstance(table, dict):
        raise NetError(MALFORMED, "challenge table summary must be a map")
    return nonce, table


def summary_host_key(table: dict[str, Any]) -> bytes:
    """The host's identity key from a challenge's table summary (4.2), for a peer that expects
    a particular host; :class:`NetError` MALFORMED when the summary carries none."""
    key = table.get("key")
    if not isinstance(key, bytes):
        raise NetError(MALFORMED, "the challenge's table summary carries no host key")
    return key


def _hello_signed(nonce: bytes, name: str, key: bytes, listen: list[Any] | None) -> dict[str, Any]:
    return {"nonce": nonce, "name": name, "key": key, "listen": listen}


def hello_message(
    identity: IdentityKey, nonce: bytes, name: str, listen: tuple[str, int] | None
) -> dict[str, Any]:
    """The peer's signed ``hello`` answering the challenge ``nonce``."""
    key = identity.public_bytes()
    where = None if listen is None else [listen[0], listen[1]]
    sig = identity.sign(HELLO_LABEL, _hello_signed(nonce, name, key, where))
    return {"k": "hello", "version": VERSION, "name": name, "key": key, "listen": where, "sig": sig}


def resume_message(identity: IdentityKey, nonce: bytes, have: int) -> dict[str, Any]:
    """A reconnecting peer's signed ``resume``: it holds records up to index ``have``."""
    key = identity.public_bytes()
    sig = identity.sign(RESUME_LABEL, {"nonce": nonce, "key": key, "have": have})
    return {"k": "resume", "version": VERSION, "key": key, "have": have, "sig": sig}


def _expect(message: dict[str, Any], *kinds: str) -> None:
    if message.get("k") not in kinds:
        raise NetError(UNEXPECTED, f"expected {' or '.join(kinds)}, got {message.get('k')!r}")


def _check_version(message: dict[str, Any], what: str) -> None:
    """A live connection speaks this protocol's version alone (older transcripts still verify,
    but no table runs an older version: PROTOCOL.md 20)."""
    version = message.get("version")
    if version != VERSION:
        raise NetError(VERSION_MISMATCH, version_mismatch(what, version))


def _check_fields(message: dict[str, Any], fields: Set[str]) -> None:
    if set(message) != fields:
        raise NetError(MALFORMED, f"{message['k']} fields must be exactly {sorted(fields)}")


def check_name(name: object) -> str:
    """``name`` if it is 1..32 printable characters; :class:`NetError` MALFORMED otherwise."""
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME or not name.isprintable():
        raise NetError(MALFORMED, f"a name is 1 to {MAX_NAME} printable characters")
    return name


def check_listen(listen: object) -> tuple[str, int] | None:
    """A ``listen`` field: None or ``[host, port]``, the host 1..255 printable characters (as
    the table record requires, 6.2) and the port 1..65535."""
    if listen is None:
        return None
    if (
        not isinstance(listen, list)
        or len(listen) != 2
        or not isinstance(listen[0], str)
        or not 1 <= len(listen[0]) <= 255
        or not listen[0].isprintable()
        or not isinstance(listen[1], int)
        or isinstance(listen[1], bool)
        or not 1 <= listen[1] <= 65535
    ):
        raise NetError(MALFORMED, "listen must be None or [host, port]: 1 to 255 printable "
                                  "characters and a port 1..65535")
    return (listen[0], listen[1])


def _check_key(key: object) -> bytes:
    try:
        check_public_key(key)  # type: ignore[arg-type]
    except BadSignature as exc:
        raise NetError(BAD_SIGNATURE, f"identity key refused: {exc}") from None
    assert isinstance(key, bytes)
    return key


def watch_message(have: int) -> dict[str, Any]:
    """A watcher's opening: it holds the records up to index ``have`` (-1: none)."""
    return {"k": "watch", "version": VERSION, "have": have}


def _have(message: dict[str, Any]) -> int:
    have = message["have"]
    if not _int_in(have, -1):
        raise NetError(MALFORMED, f"{message['k']} 'have' must be an integer >= -1")
    return have


def check_opening(message: dict[str, Any], nonce: bytes) -> Hello | Resume | Watch:
    """Check a peer's ``hello``, ``resume`` or ``watch`` against the challenge ``nonce``.

    Raise :class:`NetError`: UNEXPECTED for another kind, VERSION for another version (checked
    before anything else in the frame), MALFORMED for missing, extra or ill-typed fields,
    BAD_SIGNATURE for an unacceptable key or a signature that does not verify.
    """
    _expect(message, "hello", "resume", "watch")
    _check_version(message, "this watcher" if message["k"] == "watch" else "this player")
    if message["k"] == "watch":
        _check_fields(message, FRAME_FIELDS["watch"])
        return Watch(_have(message))
    if message["k"] == "hello":
        _check_fields(message, FRAME_FIELDS["hello"])
        name = check_name(message["name"])
        listen = check_listen(message["listen"])
        key = _check_key(message["key"])
        signed = _hello_signed(nonce, name, key, message["listen"])
        _check_sig(key, HELLO_LABEL, signed, message["sig"])
        return Hello(name, key, listen)
    _check_fields(message, FRAME_FIELDS["resume"])
    have = _have(message)
    key = _check_key(message["key"])
    _check_sig(key, RESUME_LABEL, {"nonce": nonce, "key": key, "have": have}, message["sig"])
    return Resume(key, have)


def _check_sig(key: bytes, label: str, value: Any, sig: object) -> None:
    try:
        verify(key, label, value, sig)  # type: ignore[arg-type]
    except BadSignature as exc:
        raise NetError(BAD_SIGNATURE, f"{label.rsplit('/', 1)[-1]} signature: {exc}") from None


def check_welcome(message: dict[str, Any], resumed: bool = False) -> int:
    """The seat of a ``welcome`` (answering a ``resume``: with ``last``, 4.4)."""
    _expect(message, "welcome")
    if set(message) != (RESUMED_WELCOME_FIELDS if resumed else FRAME_FIELDS["welcome"]):
        raise NetError(MALFORMED, "a welcome answering a resume is {k, seat, last}" if resumed
                       else "a welcome is {k, seat}")
    seat = message.get("seat")
    if not _int_in(seat, 0, 2**64):
        raise NetError(MALFORMED, "welcome seat must be a non-negative integer")
    return seat


# --- the peer's side -------------------------------------------------------------------------


async def _receive_challenge(
    stream: FramedStream, check_host: Callable[[bytes], None] | None
) -> tuple[bytes, dict[str, Any]]:
    """Receive and check the host's challenge; give ``check_host`` (if any) the host's key from
    its table summary (it raises to refuse the host). Return the nonce and the summary."""
    nonce, table = check_challenge(await receive_message(stream))
    if check_host is not None:
        check_host(summary_host_key(table))
    return nonce, table


async def join(
    stream: FramedStream,
    identity: IdentityKey,
    name: str,
    listen: tuple[str, int] | None = None,
    check_host: Callable[[bytes], None] | None = None,
) -> tuple[int, dict[str, Any]]:
    """Run the peer's side of a first handshake; return the seat and the table summary.

    ``check_host`` is given the host's key from the challenge's table summary before the hello
    is sent (it raises to refuse the host). A refusal by the host raises :class:`RemoteError`
    with its code.
    """
    nonce, table = await _receive_challenge(stream, check_host)
    await send_message(stream, hello_message(identity, nonce, name, listen))
    return check_welcome(await receive_message(stream)), table


async def rejoin(
    stream: FramedStream,
    identity: IdentityKey,
    have: int,
    check_host: Callable[[bytes], None] | None = None,
) -> tuple[int, int]:
    """Run the peer's side of a resume handshake; return the seat and the index of the host's
    last record: the records after ``have`` up to it follow at once, and if it is below
    ``have`` (a new host after a host change), the peer sends the host the records it lacks.
    ``check_host``: as for :func:`join`."""
    nonce, table = await _receive_challenge(stream, check_host)
    await send_message(stream, resume_message(identity, nonce, have))
    welcome = await receive_message(stream)
    seat = check_welcome(welcome, resumed=True)
    last = welcome.get("last")
    if not _int_in(last, 0, 2**64):
        raise NetError(MALFORMED, "a resume welcome carries the host's last record index")
    return seat, last


async def watch(
    stream: FramedStream, have: int = -1, check_host: Callable[[bytes], None] | None = None
) -> tuple[int, dict[str, Any]]:
    """Run a watcher's side of the handshake; return the index of the host's last record (-1
    before the match starts) and the table summary. ``check_host`` is given the host's key
    before the ``watch`` is sent (it raises to refuse the host)."""
    nonce, table = await _receive_challenge(stream, check_host)
    del nonce  # a watcher proves nothing: it only reads
    await send_message(stream, watch_message(have))
    return check_watching(await receive_message(stream)), table


def check_watching(message: dict[str, Any]) -> int:
    """The index of the host's last record in a ``watching`` answer (-1 before record 0)."""
    _expect(message, "watching")
    last = message.get("last")
    if set(message) != FRAME_FIELDS["watching"] or not _int_in(last, -1, 2**64):
        raise NetError(MALFORMED, "watching carries the index of the host's last record")
    return last
