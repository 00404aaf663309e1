"""Schemas of every envelope body, and the codec between ``move`` bodies and rules moves.

Every body is a map with a string ``"type"`` and exactly the fields listed in
:data:`BODY_FIELDS` (plus ``"type"``). :func:`validate_body` checks types, byte lengths, key sets
and integer ranges, and raises :class:`ProtocolError` naming the author: ``UNKNOWN_MESSAGE`` for a
type (or move kind) the protocol does not define, ``VERSION`` for a table of another protocol
version (a verifier also takes the older versions it reads), ``WRONG_SEAT`` for a host-only
body from another seat, ``MALFORMED`` for anything else. Group elements and scalars stay
bytes: decoding them is the deck's job.

Host-authored bodies:

============== ===================================================================================
``table``      ``version``: 3, ``variant``: str, ``options``: map (rule overrides, str keys),
               ``players``: list (one per seat) of ``{"name": str, "key": bytes32, "listen":
               [host str, port int] | None}``, ``timers``: ``{"turn_ms", "declare_ms",
               "grace_ms"}`` (ints 0 .. 2**31-1)
``timeout``    ``seat``: the seat whose time ran out; ``votes``: 1..10 votes (:mod:`.votes`)
``left``       ``seat``: the seat found absent; ``votes``: 1..10 votes
``no_contest`` ``seat``: seat or nil; ``votes``: 0..10 votes (``abandon``)
``host_change````old``, ``new``: seats; ``votes``: 1..10 ``depose`` votes; authored by ``new``
============== ===================================================================================

Every seat: ``accept`` {``table``: bytes32}, ``ack`` {}, ``resign`` {} (leaving on purpose),
``chat`` {``text``: str} (a line to the table, which rules and deck ignore),
``coin_commit`` {``step``: str, ``commit``: bytes32}, ``coin_reveal`` {``step``: str,
``value``: bytes32}, the deck messages of
:data:`dernier_p2p.deck.table.MESSAGE_FIELDS` with an added ``hand`` (int) and without ``seat``
(the author is the envelope's seat), and ``move`` {``hand``, ``move``: kind, ...} with the kinds
of :data:`MOVE_FIELDS`. A suit is an int 0..3 (:class:`~dernier_p2p.rules.cards.Suit`).

Limits: strings are printable (``str.isprintable``): a name 1..64 characters, a variant and a coin
step 1..64, a listen host 1..255, a port 1..65535; seats 0..players-1; ``hand``, ``epoch`` and a
complaint's ``ref`` 0..2**63-1; deck positions and slots 0..65535; a shuffled deck 1..112
ciphertexts ``[c1, c2]`` with proof lists of the deck's length (``s``: 4, ``t``: 5); 1..4096
tokens; a chat text 1..200 printable characters and at most 400 bytes of UTF-8; a box
16..512 bytes; a complaint plaintext None or at most 512 bytes; a hand size 1..112;
every element, scalar, key, commitment, nonce and hash exactly 32 bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dernier_p2p.deck.cards import DECK_SIZES
from dernier_p2p.deck.table import MESSAGE_FIELDS
from dernier_p2p.deck.transfer import MAX_BOX
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.votes import VOTE_KEYS
from dernier_p2p.rules.cards import Card, Suit
from dernier_p2p.rules.moves import (
    Catch,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    Leave,
    NameSuit,
    Pass,
    Play,
    Timeout,
)
from dernier_p2p.wire.identity import BadPublicKey, check_public_key
from dernier_p2p.wire.version import PROTOCOL_VERSION, version_mismatch

VERSION = PROTOCOL_VERSION
MAX_INT = 2**63 - 1
MAX_TIMER_MS = 2**31 - 1
MAX_POSITION = 2**16 - 1  # deck positions grow with reshuffles; far above any real hand
MAX_LIST = 4096
MAX_DECK = max(DECK_SIZES.values())
MAX_NAME = 64
MAX_STEP = 64
MAX_VARIANT = 64
MAX_HOSTNAME = 255
MAX_CHAT = 200
"""Characters of a ``chat`` text (PROTOCOL.md 6.3)."""
MAX_CHAT_BYTES = 400
"""Bytes of a ``chat`` text in UTF-8."""

DECK_TYPES = frozenset(MESSAGE_FIELDS)
HOST_TYPES = frozenset({"table", "timeout", "left", "no_contest"})
"""Bodies only the current host may author (``host_change`` is authored by the next host)."""
TALK_TYPES = frozenset({"chat", "ack"})
"""Bodies that are no progress of the table: talk and head echoes (PROTOCOL.md 7.5, 18)."""


def is_progress(body: dict[str, Any]) -> bool:
    """Whether a (validated) body moves the table on: anything but a ``chat`` or an ``ack``."""
    return body["type"] not in TALK_TYPES

MOVE_FIELDS: dict[str, frozenset[str]] = {
    "play": frozenset({"slot", "suit", "target", "declare"}),
    "draw": frozenset(),
    "pass": frozenset(),
    "declare": frozenset(),
    "catch": frozenset({"target"}),
    "name_suit": frozenset({"suit"}),
    "hand_size": frozenset({"size"}),
    "cut": frozenset({"keep"}),
}
"""The fields of each move kind besides ``type``, ``hand`` and ``move``."""

BODY_FIELDS: dict[str, frozenset[str]] = {
    "table": frozenset({"version", "variant", "options", "players", "timers"}),
    "timeout": frozenset({"seat", "votes"}),
    "left": frozenset({"seat", "votes"}),
    "no_contest": frozenset({"seat", "votes"}),
    "host_change": frozenset({"old", "new", "votes"}),
    "accept": frozenset({"table"}),
    "ack": frozenset(),
    "resign": frozenset(),
    "chat": frozenset({"text"}),
    "coin_commit": frozenset({"step", "commit"}),
    "coin_reveal": frozenset({"step", "value"}),
    **{kind: fields | {"hand"} for kind, fields in MESSAGE_FIELDS.items()},
    "move": frozenset({"hand", "move"}),  # plus the fields of the move kind
}
"""The fields of each body type besides ``type``."""

TIMER_KEYS = frozenset({"turn_ms", "declare_ms", "grace_ms"})
PLAYER_KEYS = frozenset({"name", "key", "listen"})
PROOF_KEYS = frozenset({"e", "s"})
SHUFFLE_PROOF_KEYS = frozenset({"c", "c_hat", "s", "s_hat", "s_prime", "t", "t_hat"})
TOKEN_KEYS = frozenset({"position", "owner", "token", "proof"})
MAX_VOTES = 10


class _Bad(Exception):
    """Internal: a field fails its check (message)."""


# ---------------------------------------------------------------------- field checks
def _int(v: Any, lo: int, hi: int, what: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise _Bad(f"{what} must be an integer in {lo} .. {hi}")
    return v


def _b32(v: Any, what: str) -> bytes:
    if not isinstance(v, bytes) or len(v) != 32:
        raise _Bad(f"{what} must be 32 bytes")
    return v


def _str(v: Any, lo: int, hi: int, what: str) -> str:
    if not isinstance(v, str) or not lo <= len(v) <= hi:
        raise _Bad(f"{what} must be a string of {lo} to {hi} characters")
    if not v.isprintable():
        raise _Bad(f"{what} must be printable (no control or separator characters but space)")
    return v


def _bool(v: Any, what: str) -> bool:
    if not isinstance(v, bool):
        raise _Bad(f"{what} must be a boolean")
    return v


def _map(v: Any, keys: frozenset[str], what: str) -> dict:
    if not isinstance(v, dict) or set(v) != keys:
        raise _Bad(f"{what} must be a map with exactly the keys {sorted(keys)}")
    return v


def _list(v: Any, lo: int, hi: int, what: str) -> list:
    if not isinstance(v, list) or not lo <= len(v) <= hi:
        raise _Bad(f"{what} must be a list of {lo} to {hi} items")
    return v


class _Ctx:
    def __init__(self, author: int, n: int, versions: tuple[int, ...] = (VERSION,)) -> None:
        self.author, self.n, self.versions = author, n, versions

    def seat(self, v: Any, what: str) -> int:
        return _int(v, 0, self.n - 1, what)


def _proof(v: Any, what: str) -> None:
    _map(v, PROOF_KEYS, what)
    _b32(v["e"], f"{what} e")
    _b32(v["s"], f"{what} s")


# ---------------------------------------------------------------------- body checks
def _table(b: dict, c: _Ctx) -> None:
    if not isinstance(b["version"], int) or isinstance(b["version"], bool):
        raise _Bad("table version must be an integer")
    if b["version"] not in c.versions:
        refusal = version_mismatch("the table", b["version"], c.versions)
        raise ProtocolError("VERSION", c.author, refusal)
    _str(b["variant"], 1, MAX_VARIANT, "variant")
    opts = b["options"]
    if not isinstance(opts, dict) or not all(isinstance(k, str) for k in opts):
        raise _Bad("options must be a map with string keys")
    players = _list(b["players"], c.n, c.n, "players (one per seat)")
    keys = set()
    for s, p in enumerate(players):
        _map(p, PLAYER_KEYS, f"player {s}")
        _str(p["name"], 1, MAX_NAME, f"player {s} name")
        _b32(p["key"], f"player {s} key")
        try:
            check_public_key(p["key"])
        except BadPublicKey as exc:
            raise _Bad(f"player {s} key: {exc}") from None
        if p["key"] in keys:
            raise _Bad(f"player {s} has the key of another seat")
        keys.add(p["key"])
        listen = p["listen"]
        if listen is not None:
            _list(listen, 2, 2, f"player {s} listen address")
            _str(listen[0], 1, MAX_HOSTNAME, f"player {s} listen host")
            _int(listen[1], 1, 65535, f"player {s} listen port")
    timers = _map(b["timers"], TIMER_KEYS, "timers")
    for k in sorted(TIMER_KEYS):
        _int(timers[k], 0, MAX_TIMER_MS, k)


def _votes(v: Any, c: _Ctx, lo: int) -> None:
    for k, vote in enumerate(_list(v, lo, MAX_VOTES, "votes")):
        _map(vote, VOTE_KEYS, f"vote {k}")
        c.seat(vote["seat"], f"vote {k} seat")
        _int(vote["after"], -1, MAX_INT, f"vote {k} after")
        if not isinstance(vote["sig"], bytes) or len(vote["sig"]) != 64:
            raise _Bad(f"vote {k} sig must be 64 bytes")


def _seat_body(b: dict, c: _Ctx) -> None:
    c.seat(b["seat"], "seat")
    _votes(b["votes"], c, 1)


def _no_contest(b: dict, c: _Ctx) -> None:
    if b["seat"] is not None:
        c.seat(b["seat"], "seat")
    _votes(b["votes"], c, 0)


def _host_change(b: dict, c: _Ctx) -> None:
    old, new = c.seat(b["old"], "old host"), c.seat(b["new"], "new host")
    if old == new:
        raise _Bad("a host change names two different seats")
    _votes(b["votes"], c, 1)
    if new != c.author:
        raise ProtocolError("WRONG_SEAT", c.author, "a host change is authored by the new host")


def _accept(b: dict, c: _Ctx) -> None:
    _b32(b["table"], "accepted table hash")


def _nothing(b: dict, c: _Ctx) -> None:
    return None


def clean_chat(text: str) -> str:
    """A typed line made fit for a ``chat`` body: white space of any kind becomes a space, any
    other character that is not printable (control characters, escape sequences' ESC, format
    characters such as a right-to-left override) is dropped, the ends are stripped and the text
    is cut to :data:`MAX_CHAT` characters and :data:`MAX_CHAT_BYTES` bytes. May be empty."""
    kept = "".join(
        ch if ch.isprintable() else " " for ch in text if ch.isprintable() or ch.isspace()
    ).strip()[:MAX_CHAT]
    while len(kept.encode("utf-8")) > MAX_CHAT_BYTES:
        kept = kept[:-1]
    return kept.rstrip()


def _chat(b: dict, c: _Ctx) -> None:
    text = _str(b["text"], 1, MAX_CHAT, "chat text")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_CHAT_BYTES:
        raise _Bad(f"chat text must be at most {MAX_CHAT_BYTES} bytes of UTF-8")


def _coin(field: str) -> Callable[[dict, _Ctx], None]:
    def check(b: dict, c: _Ctx) -> None:
        _str(b["step"], 1, MAX_STEP, "coin step")
        _b32(b[field], f"coin {field}")

    return check


def _hand(b: dict) -> None:
    _int(b["hand"], 0, MAX_INT, "hand")


def _key_commit(b: dict, c: _Ctx) -> None:
    _b32(b["commit"], "key commitment")


def _key_reveal(b: dict, c: _Ctx) -> None:
    for k in ("share", "xpub", "nonce"):
        _b32(b[k], f"key reveal {k}")
    _proof(b["proof"], "key reveal proof")


def _shuffle(b: dict, c: _Ctx) -> None:
    _int(b["epoch"], 0, MAX_INT, "shuffle epoch")
    deck = _list(b["deck"], 1, MAX_DECK, "shuffled deck")
    for k, ct in enumerate(deck):
        _list(ct, 2, 2, f"ciphertext {k}")
        _b32(ct[0], f"ciphertext {k} c1")
        _b32(ct[1], f"ciphertext {k} c2")
    proof = _map(b["proof"], SHUFFLE_PROOF_KEYS, "shuffle proof")
    n = len(deck)
    lengths = {"c": n, "c_hat": n, "s": 4, "s_hat": n, "s_prime": n, "t": 5, "t_hat": n}
    for key, size in sorted(lengths.items()):
        for k, x in enumerate(_list(proof[key], size, size, f"shuffle proof {key}")):
            _b32(x, f"shuffle proof {key}[{k}]")


def _tokens(b: dict, c: _Ctx) -> None:
    for k, tok in enumerate(_list(b["tokens"], 1, MAX_LIST, "tokens")):
        _map(tok, TOKEN_KEYS, f"token {k}")
        _int(tok["position"], 0, MAX_POSITION, f"token {k} position")
        c.seat(tok["owner"], f"token {k} owner")
        _b32(tok["token"], f"token {k} value")
        _proof(tok["proof"], f"token {k} proof")


def _box(b: dict, c: _Ctx) -> None:
    _int(b["position"], 0, MAX_POSITION, "position")
    c.seat(b["to"], "receiving seat")
    _b32(b["epk"], "ephemeral key")
    if not isinstance(b["box"], bytes) or not 16 <= len(b["box"]) <= MAX_BOX:
        raise _Bad(f"a box is 16 to {MAX_BOX} bytes")
    _b32(b["commit"], "box commitment")


def _complaint(b: dict, c: _Ctx) -> None:
    _int(b["ref"], 0, MAX_INT, "complaint ref")
    text = b["plaintext"]
    if text is not None and (not isinstance(text, bytes) or len(text) > MAX_BOX):
        raise _Bad(f"complaint plaintext must be None or at most {MAX_BOX} bytes")


def _secret(b: dict, c: _Ctx) -> None:
    _b32(b["secret"], "secret")


def _suit(v: Any, what: str, optional: bool) -> None:
    if v is None and optional:
        return
    _int(v, 0, len(Suit) - 1, what)


def _move(b: dict, c: _Ctx) -> None:
    kind = b["move"]
    if not isinstance(kind, str) or kind not in MOVE_FIELDS:
        raise ProtocolError("UNKNOWN_MESSAGE", c.author, f"unknown move kind {kind!r}")
    need = MOVE_FIELDS[kind] | BODY_FIELDS["move"] | {"type"}
    if set(b) != need:
        raise _Bad(f"a {kind} move has exactly the fields {sorted(need)}")
    if kind == "play":
        _int(b["slot"], 0, MAX_POSITION, "slot")
        _suit(b["suit"], "named suit", True)
        if b["target"] is not None:
            c.seat(b["target"], "swap target")
        _bool(b["declare"], "declare")
    elif kind == "catch":
        c.seat(b["target"], "caught seat")
    elif kind == "name_suit":
        _suit(b["suit"], "named suit", False)
    elif kind == "hand_size":
        _int(b["size"], 1, MAX_DECK, "hand size")
    elif kind == "cut":
        _bool(b["keep"], "keep")


_CHECKS: dict[str, Callable[[dict, _Ctx], None]] = {
    "table": _table,
    "timeout": _seat_body,
    "left": _seat_body,
    "no_contest": _no_contest,
    "host_change": _host_change,
    "accept": _accept,
    "ack": _nothing,
    "resign": _nothing,
    "chat": _chat,
    "coin_commit": _coin("commit"),
    "coin_reveal": _coin("value"),
    "key_commit": _key_commit,
    "key_reveal": _key_reveal,
    "shuffle": _shuffle,
    "tokens": _tokens,
    "transfer": _box,
    "peek": _box,
    "complaint": _complaint,
    "secret": _secret,
    "move": _move,
}
assert set(_CHECKS) == set(BODY_FIELDS)


def validate_body(
    body: Any,
    author_seat: int,
    n_players: int,
    *,
    host_seat: int | None = None,
    versions: tuple[int, ...] = (VERSION,),
) -> dict:
    """Check ``body`` written by ``author_seat`` at a table of ``n_players``; return it.

    With ``host_seat`` given, a host-only body (:data:`HOST_TYPES`) from another seat is
    ``WRONG_SEAT``. A table's version must be one of ``versions`` (a live table: this
    protocol's; a verifier: :data:`~dernier_p2p.wire.version.READABLE_VERSIONS`). Raises
    :class:`ProtocolError` naming ``author_seat``.
    """
    if not isinstance(body, dict):
        raise ProtocolError("MALFORMED", author_seat, "a body is a map")
    kind = body.get("type")
    if not isinstance(kind, str):
        raise ProtocolError("MALFORMED", author_seat, "a body has a string type")
    if kind not in BODY_FIELDS:
        raise ProtocolError("UNKNOWN_MESSAGE", author_seat, f"unknown body type {kind!r}")
    if kind in HOST_TYPES and host_seat is not None and author_seat != host_seat:
        raise ProtocolError("WRONG_SEAT", author_seat, f"only the host sends {kind}")
    if kind != "move" and set(body) != BODY_FIELDS[kind] | {"type"}:
        fields = sorted(BODY_FIELDS[kind] | {"type"})
        raise ProtocolError("MALFORMED", author_seat, f"{kind} has exactly the fields {fields}")
    if kind == "move" and not BODY_FIELDS["move"] <= set(body):
        raise ProtocolError("MALFORMED", author_seat, "a move has a hand and a move kind")
    try:
        if "hand" in BODY_FIELDS[kind]:
            _hand(body)
        _CHECKS[kind](body, _Ctx(author_seat, n_players, versions))
    except _Bad as exc:
        raise ProtocolError("MALFORMED", author_seat, f"{kind}: {exc}") from None
    return body


# ---------------------------------------------------------------------- deck bodies
def deck_message(body: dict, seat: int) -> dict:
    """The :class:`~dernier_p2p.deck.table.DeckTable` message of a (validated) deck body."""
    if body.get("type") not in DECK_TYPES:
        raise ValueError(f"not a deck body: {body.get('type')!r}")
    msg = {k: v for k, v in body.items() if k != "hand"}
    msg["seat"] = seat
    return msg


def deck_body(msg: dict, hand: int) -> dict:
    """The body of one of this seat's deck messages (drops ``seat``, adds ``hand``)."""
    if msg.get("type") not in DECK_TYPES:
        raise ValueError(f"not a deck message: {msg.get('type')!r}")
    body = {k: v for k, v in msg.items() if k != "seat"}
    body["hand"] = hand
    return body


# ---------------------------------------------------------------------- move codec
def move_to_body(move: Any, hand: int) -> dict:
    """The body of a seat move (``Timeout``/``Leave`` give the host's ``timeout``/``left``,
    without votes: the host adds them before it announces one)."""
    head = {"type": "move", "hand": hand}
    if isinstance(move, Play):
        return {
            **head,
            "move": "play",
            "slot": move.slot,
            "suit": None if move.suit is None else int(move.suit),
            "target": move.target,
            "declare": bool(move.declare),
        }
    if isinstance(move, Draw):
        return {**head, "move": "draw"}
    if isinstance(move, Pass):
        return {**head, "move": "pass"}
    if isinstance(move, Declare):
        return {**head, "move": "declare"}
    if isinstance(move, Catch):
        return {**head, "move": "catch", "target": move.target}
    if isinstance(move, NameSuit):
        return {**head, "move": "name_suit", "suit": int(move.suit)}
    if isinstance(move, ChooseHandSize):
        return {**head, "move": "hand_size", "size": move.size}
    if isinstance(move, Cut):
        return {**head, "move": "cut", "keep": bool(move.keep)}
    if isinstance(move, Timeout):
        return {"type": "timeout", "seat": move.seat, "votes": []}
    if isinstance(move, Leave):
        return {"type": "left", "seat": move.seat, "votes": []}
    raise ValueError(f"not a seat move: {move!r}")


def body_to_move(body: dict, seat: int, face: Card | None = None) -> Any:
    """The rules move of a validated ``move`` (or ``timeout``/``left``) body from ``seat``.

    ``face`` is the card a play reveals (required for ``play``) or the cut card (for ``cut``,
    None if the cutter's peek is not known to this peer)."""
    kind = body.get("type")
    if kind == "timeout":
        return Timeout(body["seat"])
    if kind == "left":
        return Leave(body["seat"])
    if kind != "move":
        raise ValueError(f"not a move body: {kind!r}")
    m = body["move"]
    if m == "play":
        if not isinstance(face, Card):
            raise ValueError("a play needs the face of the played card")
        suit = None if body["suit"] is None else Suit(body["suit"])
        return Play(seat, body["slot"], face, suit, body["target"], body["declare"])
    if m == "draw":
        return Draw(seat)
    if m == "pass":
        return Pass(seat)
    if m == "declare":
        return Declare(seat)
    if m == "catch":
        return Catch(seat, body["target"])
    if m == "name_suit":
        return NameSuit(seat, Suit(body["suit"]))
    if m == "hand_size":
        return ChooseHandSize(seat, body["size"])
    if m == "cut":
        return Cut(seat, body["keep"], face)
    raise ValueError(f"unknown move kind {m!r}")
