"""Receiver-side checking of the record chain (every peer, every record, in order).

For each record :meth:`ChainChecker.feed` checks, raising :class:`ProtocolError` and leaving the
checker unchanged:

1. structure of the record and its envelope (``MALFORMED``, the host);
2. the record is signed by the host: ``h`` is the current host, or the next host taking over with
   a ``host_change`` (see below); the signature under that seat's host key (``BAD_SIGNATURE``,
   the host; a record validly signed by a seat that is not the host: ``BAD_CHAIN``, that seat);
3. ``i`` is the next index and ``prev`` this peer's head (``BAD_CHAIN``, the host: a record
   dropped, reordered or forged for this peer); ``t`` is not before the previous record's
   (``BAD_CHAIN``); a record for an index this peer holds, signed by the seat that signed the
   one it holds and following the same record, with another hash, is ``FORK`` naming that
   seat (it signed two records for one index, PROTOCOL.md 4.6);
4. the envelope, everything the host had to check before sequencing it, all naming the host:
   game id (``WRONG_GAME``), author still at the table (``WRONG_SEAT``), author signature
   (``BAD_SIGNATURE``), author counter ``n`` is the author's next (``DUPLICATE`` if lower,
   ``OUT_OF_ORDER`` if higher), head echo is the hash of a record this peer holds at an earlier
   index, or the genesis hash (``FORK``: the host showed the author another history), body schema
   (the codes of :func:`.messages.validate_body`), record 0 is the host's ``table`` listing the
   agreed keys (``TABLE_MISMATCH``) and no later record is a table (``BAD_CHAIN``).

Votes (:mod:`.votes`): a ``timeout``, ``left``, ``no_contest`` or ``host_change`` record is
valid only with the votes of a quorum of the seats at the table (``NO_QUORUM``, ``STALE_VOTE``,
``BAD_SIGNATURE``, ``WRONG_SEAT``, naming the record's signer); a ``no_contest`` without votes
only at a table of two seats, naming the other seat. The checker remembers, per seat, the last
record it authored (a ``chat`` aside: talking is not playing) and signed, and per
``(kind, target)`` the last record that used votes.

Host changes: a ``host_change`` body ``{"old": current host, "new": s}`` authored by ``s``, where
``s`` is a *candidate* (:meth:`ChainChecker.candidates`: a seat other than the current host, still
at the table, whose ``table`` entry gives a ``listen`` address), may be sequenced by the old host
or by ``s`` (another seat: ``BAD_CHAIN``). Seats try the candidates in order, the next one first
(:meth:`ChainChecker.next_host`), so a later one hosts only when the earlier ones did not.
From the next record on (the host change record itself when ``s`` signs it) records must be
signed by ``s``'s host key. The old host stays at the table as an
ordinary seat (its envelopes are sequenced again once it resumes with the new host); a record it
signs as host following the change (its ``prev`` the host change or a later record) is
``BAD_CHAIN`` naming it. One it signed for an index at or after the change without following it
is *stale* (:meth:`ChainChecker.stale`: a host frozen or cut off signs on until it learns of its
replacement): no fault of its; from the host it is not the next record (``BAD_CHAIN``, the host
that relayed it), and a peer ignores one that came from elsewhere. A ``left`` body removes its
seat from the table; later envelopes by that seat are refused.

Records that come over a seat link (lent, or shown as a proof, PROTOCOL.md 4.6) are judged by
:meth:`ChainChecker.from_link` first: only one signed by the seat that signs its index, and
either the next record or a second record for a held index, is then checked as the host's.

Each signature is verified once: :meth:`ChainChecker.check` verifies a record without applying
it (a peer checks the body against its own state in between), and :meth:`ChainChecker.commit`
then applies that very record without verifying or hashing it again.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence

from dernier_p2p.protocol.envelope import (
    RECORD_KEYS,
    check_envelope,
    check_record,
    genesis_hash,
    record_hash,
    verify_envelope,
    verify_record,
)
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.messages import is_progress, validate_body
from dernier_p2p.protocol.votes import RECORD_KIND, check_votes
from dernier_p2p.wire.canonical import EncodingError
from dernier_p2p.wire.identity import Verified, check_public_key
from dernier_p2p.wire.version import PROTOCOL_VERSION

KeyTable = Mapping[int, bytes] | Sequence[bytes]


def _key_dict(keys: KeyTable, what: str) -> dict[int, bytes]:
    out = dict(keys) if isinstance(keys, Mapping) else dict(enumerate(keys))
    for seat, key in out.items():
        if not isinstance(seat, int) or isinstance(seat, bool) or seat < 0:
            raise ValueError(f"{what}: seats are non-negative integers")
        check_public_key(key)
    return out


class ChainChecker:
    """The chain as one peer sees it: feed records in order; :attr:`head` is the last hash.

    ``player_keys``: each seat's identity key (seats 0 .. n-1); ``host_keys``: the key each seat
    signs records with when it hosts (usually the same keys). ``host``: the first host; None
    takes the ``h`` of record 0. ``versions``: the protocol versions a table may be of (a live
    table: this protocol's; a verifier of old transcripts: more, PROTOCOL.md 20).
    """

    def __init__(
        self,
        game: bytes,
        host_keys: KeyTable,
        player_keys: KeyTable,
        *,
        host: int | None = None,
        versions: tuple[int, ...] = (PROTOCOL_VERSION,),
    ) -> None:
        self.game = game
        self.versions = tuple(versions)
        self.genesis = genesis_hash(game)
        self.player_keys = _key_dict(player_keys, "player keys")
        self.n = len(self.player_keys)
        if set(self.player_keys) != set(range(self.n)) or not 2 <= self.n <= 10:
            raise ValueError("player keys cover seats 0 .. n-1 of a table of 2 to 10")
        self.host_keys = _key_dict(host_keys, "host keys")
        if not set(self.host_keys) <= set(self.player_keys):
            raise ValueError("host keys for seats outside the table")
        if host is not None and host not in self.host_keys:
            raise ValueError("the first host has no host key")
        self._host = host
        self._hashes: list[bytes] = []
        self._index: dict[bytes, int] = {self.genesis: -1}
        self._next_n = [0] * self.n
        self._at_table = set(range(self.n))
        self._verified = Verified()  # signatures this checker has verified lately
        self._vote_sigs = Verified(32)  # votes verified lately (a host checks them twice)
        self._last_by = [-1] * self.n  # last record each seat authored (its presence)
        self._last_moved = [-1] * self.n  # last one other than an ack (its play, 7.5)
        self._last_signed = [-1] * self.n  # last record each seat signed as host
        self._echo_by = [-1] * self.n  # the head index each seat's last record echoed
        self._news = [0]  # _news[i + 1]: records 0..i other than acks
        self._news_by: list[list[int]] = [[] for _ in range(self.n)]  # their indices, by seat
        self._signers: list[int] = []  # the seat that signed each record
        self._changes: list[tuple[int, int]] = []  # (index, old host) of each host_change
        self._last_use: dict[tuple[str, int | None], int] = {}  # last record using such votes
        self._last_play = -1  # the last record other than a chat or an ack
        self._last_t: int | None = None
        self._checked: tuple[bytes, int] | None = None  # (record hash, index) last passed
        self._checked_rec: dict | None = None  # the record object last passed
        self._listening: set[int] | None = None  # seats with a listen address (record 0)

    # ------------------------------------------------------------------ queries
    @property
    def head(self) -> bytes:
        """Hash of the last record fed, or the genesis hash."""
        return self._hashes[-1] if self._hashes else self.genesis

    @property
    def hashes(self) -> list[bytes]:
        """Record hashes in index order (a copy)."""
        return list(self._hashes)

    @property
    def next_index(self) -> int:
        return len(self._hashes)

    @property
    def host(self) -> int | None:
        """The seat whose key must sign the next record (None before record 0 if not given)."""
        return self._host

    @property
    def at_table(self) -> frozenset[int]:
        return frozenset(self._at_table)

    @property
    def last_t(self) -> int | None:
        return self._last_t

    def vote_since(self, kind: str, target: int | None) -> int:
        """The lowest ``after`` a ``kind`` vote about ``target`` may carry now: the last record
        where ``target`` showed itself (authored one; for ``depose``, signed one) or where
        votes of this kind about it were used (-1 if none); for ``abandon`` (no target) the
        last record other than a chat: the table is stuck there."""
        if target is None:  # abandon: the table is stuck since the last record (chats aside)
            return self._last_play
        use = self._last_use.get((kind, target), -1)
        if kind == "depose":
            seen = self._last_signed[target]
        else:  # a seat that only acks is connected (no ``left``) but not at play (``timeout``)
            seen = (self._last_moved if kind == "timeout" else self._last_by)[target]
        return max(use, seen)

    def vote_target(self, body: dict) -> tuple[str, int | None] | None:
        """``(vote kind, target)`` of a vote-carrying body, None for other bodies."""
        kind = RECORD_KIND.get(body["type"])
        if kind is None:
            return None
        if kind == "depose":
            return kind, body["old"]
        return kind, None if kind == "abandon" else body["seat"]

    def check_vote_body(self, body: dict, author: int, fault: int | None) -> None:
        """The votes of a vote-carrying body, as the next record (see the module docstring)."""
        kt = self.vote_target(body)
        if kt is None:
            return
        kind, target = kt
        votes = body["votes"]
        m = len(self._at_table)
        if kind == "abandon" and not votes:
            other = body["seat"]
            if m != 2 or other is None or other == author or other not in self._at_table:
                raise ProtocolError(
                    "NO_QUORUM", fault, "no contest without votes: only at two seats, naming "
                    "the other seat"
                )
            return
        if kind == "abandon" and body["seat"] is not None:
            raise ProtocolError("MALFORMED", fault, "a no contest by abandon votes names no seat")
        if kind != "depose" and target is not None and target not in self._at_table:
            raise ProtocolError("WRONG_SEAT", fault, f"{body['type']} of seat {target}, not at "
                                "the table")
        check_votes(
            votes, kind=kind, target=target, index=len(self._hashes),
            since=self.vote_since(kind, target), at_table=self._at_table,
            keys=self.player_keys, game=self.game, fault=fault, verified=self._vote_sigs,
        )

    def echo_of(self, seat: int) -> int:
        """The index of the head ``seat``'s last record echoed (-1: none, or the genesis)."""
        return self._echo_by[seat]

    def news_for(self, seat: int, since: int, upto: int) -> bool:
        """Whether a record of another seat than ``seat``, other than an ``ack``, lies after
        index ``since`` up to index ``upto`` (4.9: what an ack of ``seat`` may echo)."""
        lo, hi = max(since + 1, 0), min(upto, len(self._hashes) - 1)
        if hi < lo:
            return False
        mine = self._news_by[seat]
        own = bisect_right(mine, hi) - bisect_left(mine, lo)
        return self._news[hi + 1] - self._news[lo] - own > 0

    def next_counter(self, seat: int) -> int:
        """The ``n`` the next envelope of ``seat`` must carry."""
        return self._next_n[seat]

    def index_of(self, h: bytes) -> int | None:
        """The index of the record with hash ``h`` (-1 for the genesis hash), or None."""
        return self._index.get(h)

    def signer_of(self, i: int) -> int | None:
        """The seat that signed record ``i``, None if this chain does not hold it."""
        return self._signers[i] if 0 <= i < len(self._signers) else None

    def replaced_at(self, seat: int, i: int) -> int | None:
        """The index of the ``host_change`` of this chain that last replaced ``seat`` as host
        at or before index ``i``, if ``seat`` does not sign index ``i`` here (past this
        chain's end, the current host signs); None otherwise."""
        signer = self.signer_of(i) if i < len(self._signers) else self._host
        if signer == seat:
            return None
        for j, old in reversed(self._changes):
            if j <= i and old == seat:
                return j
        return None

    def stale(self, rec: object) -> bool:
        """Whether ``rec`` is a record of a host this chain replaced that it signed without
        knowing of it (PROTOCOL.md 5.3 step 2, 7.6): its signer ``h`` was replaced by the
        ``host_change`` at index ``j``, ``rec`` is for an index at or after ``j`` that ``h``
        does not sign here, and its ``prev`` is not a record of this chain at ``j`` or after
        (it does not follow the host change: ``h`` had not seen it, a host frozen or cut off
        meanwhile). Such a record belongs to no chain this peer holds and proves nothing
        against its signer, whatever its signature."""
        try:
            rec = check_record(rec, None, self.n)
        except ProtocolError:
            return False
        return self._stale(rec)

    def _stale(self, rec: dict) -> bool:
        """:meth:`stale` of a record whose structure is checked."""
        if not self._changes:
            return False
        j = self.replaced_at(rec["h"], rec["i"])
        if j is None:
            return False
        k = self._index.get(rec["prev"])
        return k is None or k < j

    def signed(self, rec: object) -> bool:
        """Whether ``rec`` is a record (its structure) whose record signature is valid for
        the seat it names as signer (``h``), wherever it would go."""
        try:
            rec = check_record(rec, None, self.n)
            verify_record(rec, self.host_keys[rec["h"]], None, self._verified)
        except (ProtocolError, KeyError):
            return False
        return True

    def from_link(self, rec: object) -> bool:
        """Whether a record that came over a seat link (lent, or shown as a proof,
        PROTOCOL.md 4.6) is to be checked as if the host had sent it: a record signed by the
        seat that signs its index at this chain, and either the next record (its ``prev``
        this chain's head) or a second record for an index held here (the same ``prev``,
        another hash: :meth:`check` finds the ``FORK``). A record held already, or any other,
        is not (it proves nothing, and is ignored)."""
        try:
            rec = check_record(rec, None, self.n)
        except ProtocolError:
            return False
        i = rec["i"]
        if i < len(self._hashes):
            try:
                self._second(rec)
            except ProtocolError:
                return True
            return False
        if i != len(self._hashes) or rec["prev"] != self.head:
            return False
        try:
            signer = self._signer(rec)
            verify_record(rec, self.host_keys[signer], signer, self._verified)
        except ProtocolError:
            return False
        return True

    def _second(self, rec: dict) -> None:
        """``FORK`` naming the signer of held record ``rec["i"]`` if ``rec`` is a second record
        it signed for that index after the same record (the same ``prev``, another hash);
        nothing otherwise."""
        i = rec["i"]
        h = self.signer_of(i)
        if h is None or rec["h"] != h or rec["prev"] != (self._hashes[i - 1] if i else
                                                         self.genesis):
            return
        try:
            verify_record(rec, self.host_keys[h], h, self._verified)
            other = record_hash(rec) != self._hashes[i]
        except (ProtocolError, EncodingError):
            return
        if other:
            raise ProtocolError("FORK", h, f"seat {h} signed two records for index {i}, "
                                "each after the same record")

    def candidates(self) -> list[int]:
        """The seats that may take over from the current host, in the order the seats try them:
        the seats after it, cyclically, still at the table, with a host key and (once record 0
        is in) a ``listen`` address in the table (PROTOCOL.md 7.6)."""
        if self._host is None:
            return []
        out = []
        for k in range(1, self.n):
            s = (self._host + k) % self.n
            listens = self._listening is None or s in self._listening
            if s in self._at_table and s in self.host_keys and listens:
                out.append(s)
        return out

    def next_host(self) -> int | None:
        """The first candidate (:meth:`candidates`): the seat that takes over if the host goes
        and that seat is there to do it; None if there is none."""
        first = self.candidates()[:1]
        return first[0] if first else None

    # ------------------------------------------------------------------ checks
    def signed_by(self, env: object, author: int) -> bool:
        """Whether ``env`` is a well-formed envelope of this game signed by ``author`` (a seat
        of the table), whatever its counter, head or body: one that could prove a fault of its
        author (21.1). Changes nothing; never raises."""
        try:
            env = check_envelope(env, author, self.n)
            if env["seat"] != author or env["game"] != self.game:
                return False
            verify_envelope(env, self.player_keys[author], author, self._verified)
        except ProtocolError:
            return False
        return True

    def check_envelope(self, env: object, fault: int | None, lead: int = 0) -> dict:
        """Check an envelope against the current chain as the next one to be sequenced (or,
        with ``lead``, as its author's envelope after ``lead`` more of its author's); every
        fault names ``fault``. Returns the envelope; changes nothing."""
        env = check_envelope(env, fault, self.n)
        author = env["seat"]
        if env["game"] != self.game:
            raise ProtocolError("WRONG_GAME", fault, f"envelope of seat {author} for another game")
        if author not in self._at_table:
            raise ProtocolError("WRONG_SEAT", fault, f"seat {author} has left the table")
        verify_envelope(env, self.player_keys[author], fault, self._verified)
        want = self._next_n[author] + lead
        if env["n"] < want:
            raise ProtocolError("DUPLICATE", fault, f"seat {author} counter {env['n']} reused")
        if env["n"] > want:
            raise ProtocolError(
                "OUT_OF_ORDER", fault, f"seat {author} counter {env['n']}, expected {want}"
            )
        if env["head"] not in self._index:
            raise ProtocolError(
                "FORK", fault, f"seat {author} echoes a head this chain does not hold"
            )
        body = env["body"]
        try:
            validate_body(body, author, self.n, host_seat=self._host, versions=self.versions)
        except ProtocolError as exc:
            raise ProtocolError(exc.code, fault, f"body of seat {author}: {exc.detail}") from None
        kind = body["type"]
        first = not self._hashes
        if first and kind != "table":
            detail = f"record 0 is the table, not seat {author}'s {kind}"
            raise ProtocolError("BAD_CHAIN", fault, detail)
        if not first and kind == "table":
            raise ProtocolError("BAD_CHAIN", fault, f"a table from seat {author} after record 0")
        if kind == "host_change" and (
            body["old"] != self._host or body["new"] not in self.candidates()
        ):
            raise ProtocolError(
                "BAD_CHAIN", fault,
                f"host change {body['old']} -> {body['new']}: not the host, or a seat that "
                "cannot host (gone, or no listen address)",
            )
        self.check_vote_body(body, author, fault)
        if kind == "table":
            keys = [p["key"] for p in body["players"]]
            if keys != [self.player_keys[s] for s in range(self.n)]:
                raise ProtocolError(
                    "TABLE_MISMATCH", fault, f"the table of seat {author} lists other player keys"
                )
        return env

    def count_unsequenced(self, env: dict) -> None:
        """Take the counter of an envelope :meth:`check_envelope` passed that no record
        carries (an envelope judged from a side file after the last record, section 21.1)."""
        self._next_n[env["seat"]] += 1

    def _signer(self, rec: dict) -> int:
        """The seat that must have signed ``rec``; raises if ``h`` may not sign it."""
        h = rec["h"]
        if self._host is None and not self._hashes:
            if h not in self.host_keys:
                raise ProtocolError("BAD_CHAIN", None, f"record 0 by seat {h}, not a host")
            return h
        if h not in self.host_keys:
            raise ProtocolError("BAD_CHAIN", self._host, f"record signed as seat {h}, no host key")
        if h == self._host:
            return h
        # Only the next host may sign, and only its own host_change record.
        try:
            verify_record(rec, self.host_keys[h], self._host)
        except ProtocolError:
            raise ProtocolError(
                "BAD_SIGNATURE", self._host, f"record {rec['i']} claims host {h} and is not its"
            ) from None
        body = rec["env"]["body"]
        ok = (
            body.get("type") == "host_change"
            and rec["env"]["seat"] == h
            and body.get("new") == h
            and h in self.candidates()
        )
        if not ok:
            raise ProtocolError("BAD_CHAIN", h, f"seat {h} signed a record but is not the host")
        return h

    def check(self, rec: object) -> dict:
        """Every check of :meth:`feed` without applying the record; returns it."""
        fault = self._host
        rec = check_record(rec, fault, self.n)
        if rec["i"] < len(self._hashes):
            self._second(rec)
        if self._stale(rec):  # not its signer's fault; not the next record (step 3)
            raise ProtocolError(
                "BAD_CHAIN", fault, f"record {rec['i']} of seat {rec['h']}, a replaced host "
                "that had not seen the host change: not of this chain"
            )
        signer = self._signer(rec)
        fault = signer
        verify_record(rec, self.host_keys[signer], fault, self._verified)
        i = len(self._hashes)
        if rec["i"] != i:
            raise ProtocolError("BAD_CHAIN", fault, f"record index {rec['i']}, expected {i}")
        if rec["prev"] != self.head:
            raise ProtocolError("BAD_CHAIN", fault, f"record {i} does not follow this peer's head")
        if self._last_t is not None and rec["t"] < self._last_t:
            raise ProtocolError("BAD_CHAIN", fault, f"record {i} goes back in time")
        env = self.check_envelope(rec["env"], fault)
        if self._host is None and env["seat"] != signer:
            detail = f"the table of seat {env['seat']}, not of the host"
            raise ProtocolError("WRONG_SEAT", fault, detail)
        self._checked = (record_hash(rec), i)
        self._checked_rec = rec
        return rec

    def commit(self, rec: dict) -> bytes:
        """Apply the record :meth:`check` has just returned, without checking it again; return
        its hash (the new head). ``rec`` must be that very object, not modified since, and the
        chain unchanged since; any other record is checked in full, as by :meth:`feed`."""
        if (
            rec is self._checked_rec
            and self._checked is not None
            and self._checked[1] == len(self._hashes)
        ):
            return self._apply(rec, self._checked[0])
        return self.feed(rec)

    def feed(self, rec: object) -> bytes:
        """Check and apply the next record; return its hash (the new head).

        A record that :meth:`check` has just passed (same bytes, chain unchanged since) is not
        checked a second time."""
        h = None
        if self._checked is not None and isinstance(rec, dict) and set(rec) == RECORD_KEYS:
            try:
                h = record_hash(rec)
            except EncodingError:
                h = None
        if h is None or self._checked != (h, len(self._hashes)):
            rec = self.check(rec)
            h = self._checked[0]
        assert isinstance(rec, dict)
        return self._apply(rec, h)

    def _apply(self, rec: dict, h: bytes) -> bytes:
        self._checked = self._checked_rec = None
        env = rec["env"]
        body = env["body"]
        echoed = self._index.get(env["head"])
        self._echo_by[env["seat"]] = -1 if echoed is None else echoed
        ack = body["type"] == "ack"
        self._news.append(self._news[-1] + (0 if ack else 1))
        if not ack:
            self._news_by[env["seat"]].append(rec["i"])
        self._hashes.append(h)
        self._index[h] = rec["i"]
        self._next_n[env["seat"]] += 1
        self._last_t = rec["t"]
        if body["type"] != "chat":  # a chat is no sign of a seat at play (7.5)
            self._last_by[env["seat"]] = rec["i"]
        if is_progress(body):  # nor is an ack: it only echoes the head
            self._last_moved[env["seat"]] = rec["i"]
            self._last_play = rec["i"]
        self._last_signed[rec["h"]] = rec["i"]
        self._signers.append(rec["h"])
        kt = self.vote_target(body)
        if kt is not None:
            self._last_use[kt] = rec["i"]
        if self._host is None:
            self._host = rec["h"]
        if body["type"] == "table":
            self._listening = {
                s for s, p in enumerate(body["players"]) if p.get("listen") is not None
            }
        elif body["type"] == "left":
            self._at_table.discard(body["seat"])
        elif body["type"] == "resign":
            self._at_table.discard(env["seat"])
        elif body["type"] == "host_change":
            self._changes.append((rec["i"], body["old"]))
            self._host = body["new"]  # the old host stays at the table as a seat
        return h
