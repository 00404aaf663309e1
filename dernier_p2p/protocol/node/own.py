"""One seat's own side of a networked match, sans-IO: its session, its records and its envelopes.

:class:`OwnSeat` is what the host and every peer keep for their own seat: each record goes into
the session (which returns this seat's new envelopes) and into :attr:`OwnSeat.records` (the
driver writes them to the transcript); own envelopes are remembered until a record carries them
(:meth:`sent`, :meth:`resend`), signed again after a refusal (:meth:`refused`) or a host change
(:meth:`take_over`), and a seat rebuilt from its records (:meth:`from_records`) signs afresh
what it still owed (:meth:`finish_restore`). Nothing here reads a clock or touches a file.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from dernier_p2p.protocol.envelope import Author, genesis_hash, record_hash
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.session import Session
from dernier_p2p.protocol.votes import quorum
from dernier_p2p.rules import events as ev
from dernier_p2p.wire.identity import IdentityKey


class RestoreError(ValueError):
    """Records that cannot rebuild a seat (record 0 seats another key, or none)."""


def long_work(session: Session, record: Any) -> list[tuple[str, int, int]]:
    """What applying ``record`` will take long for, as ``(what, seat, number)``: "verify"
    (``seat``'s shuffle is being checked) or "shuffle" (this seat computes its own; ``number``
    is the shuffle's place, 1..m, among the m seats in play, see :func:`shufflers`). The record
    is not checked here: a wrong guess only changes a progress line or where the record is
    applied."""
    env = record.get("env") if isinstance(record, dict) else None
    body = env.get("body") if isinstance(env, dict) else None
    author = env.get("seat") if isinstance(env, dict) else None
    if not isinstance(body, dict) or body.get("type") not in ("shuffle", "key_reveal"):
        return []
    pending = session.pending
    turn = next((s for s, what in pending if what.startswith("shuffle")), None)
    out = []
    me = session.seat
    parts = shufflers(session)
    if body["type"] == "shuffle" and author == turn and author in parts:
        k = parts.index(author)
        if author != me:
            out.append(("verify", author, k + 1))
        if me is not None and parts[k + 1 : k + 2] == (me,):
            out.append(("shuffle", me, k + 2))
    elif (body["type"] == "key_reveal" and me is not None and parts[:1] == (me,)
          and pending == [(author, "key_reveal")]):
        out.append(("shuffle", me, 1))
    return out


def shufflers(session: Session) -> tuple[int, ...]:
    """The seats that shuffle the deck of the hand, in order: those still in play."""
    state = session.state
    return tuple(range(session.n)) if state is None else state.in_play


class _AnsweredEach(Exception):
    """Internal: a ``tokens`` record of the seat being rebuilt that its session did not make
    (its client answered deck operations another way)."""


class OwnSeat:
    """Session, records and own envelopes of seat ``seat``, built from record 0 (the table);
    with no identity and ``seat=None``, an observer's (a watcher's: nothing is sent)."""

    def __init__(
        self,
        identity: IdentityKey | None,
        seat: int | None,
        table_record: dict[str, Any],
        seed: bytes,
        batch_answers: bool | None = None,
    ) -> None:
        self.identity = identity
        self.seat = seat
        self.seed = seed
        self.session = Session(identity, seat, table_record, seed, batch_answers=batch_answers)
        self.records: list[dict[str, Any]] = [table_record]
        self.in_flight = False  # an own move sent, its record not back yet
        self.unsequenced: dict[int, dict[str, Any]] = {}  # own envelopes sent, not yet back
        self.unechoed = False  # a record other than an ack came since the last own envelope
        self.replaying: list[dict[str, Any]] | None = None  # bodies owed after a restart
        self._stale = 0  # error frames still due for envelopes signed again
        self.refusals = 0  # own moves refused so far
        self.told: list[tuple[str, str]] = []  # refusals to tell the agent, oldest first
        self.stopped: ProtocolError | None = None  # the fault that stopped the match, if any
        self.evidence: dict[str, Any] | None = None  # the record that proves it
        self.last_refused: dict[str, Any] | None = None  # a restored transcript's last
        # record, refused (it ends on the fault that stopped the seat)
        self.windows: list[tuple[int, bool]] = []  # (record, scored) that opened windows
        self._state_seen: object = None
        self._events_seen = 0
        self.end_at: int | None = None  # the record that ended the match (7.11)
        self._late: set[bytes] = set()  # hashes of the records from it on
        self._holders: set[int] = set()  # the seats the chain shows holding it
        self._m: list[int] = [len(self.session.chain.at_table)]  # seats at the table before
        # each record (record 0 seats them all): a quorum about record i counts among these

    # ------------------------------------------------------------------ building
    @classmethod
    def from_records(
        cls,
        identity: IdentityKey,
        seed: bytes,
        records: list[dict[str, Any]],
        where: str = "the records",
        stopped_ok: bool = False,
    ) -> OwnSeat:
        """Rebuild a seat from the records of its match (same identity and seed). Every record
        is checked and applied again; the bodies the session produced on the way that no record
        of this seat carries were never sequenced: they are kept in :attr:`replaying` and
        signed afresh by :meth:`finish_restore` once the seat has caught up (moves are not kept:
        the player is asked again). ``stopped_ok``: the last record may be one this seat
        refused (its own transcript ends with the record that stopped it): the seat is then
        :attr:`stopped` on it, the record in :attr:`last_refused`.

        Records of a client that answered each deck operation alone (before one ``tokens``
        message answered a run of them, PROTOCOL.md 15): a ``tokens`` record of this seat's
        that the session did not make shows it, and the seat is rebuilt answering each
        operation alone, as it did (else it would owe again what its records answered)."""
        if not records:
            raise RestoreError(f"{where}: no record to restore from")
        first = records[0]
        try:
            keys = [p["key"] for p in first["env"]["body"]["players"]]
            seat = keys.index(identity.public_bytes())
        except (KeyError, TypeError, ValueError):
            raise RestoreError(f"{where}: record 0 is not a table seating this key") from None
        replay = partial(cls._replayed, identity, seat, seed, records, stopped_ok)
        try:
            return replay(True, True)
        except _AnsweredEach:
            try:
                return replay(False, True)
            except _AnsweredEach:  # neither way: the records as they come
                return replay(True, False)

    @classmethod
    def _replayed(cls, identity: IdentityKey, seat: int, seed: bytes,
                  records: list[dict[str, Any]], stopped_ok: bool, batch: bool,
                  check_own: bool) -> OwnSeat:
        me = cls(identity, seat, records[0], seed, batch_answers=batch)
        me.replaying = [env["body"] for env in me.start()]
        for k, rec in enumerate(records[1:], 1):
            env = rec.get("env") if isinstance(rec, dict) else None
            if check_own and isinstance(env, dict) and env.get("seat") == seat:
                body = env.get("body")
                if isinstance(body, dict) and body.get("type") == "tokens" \
                        and body not in me.replaying:
                    raise _AnsweredEach
            try:
                me.apply(rec, 0)
            except ProtocolError as exc:
                if not stopped_ok or k != len(records) - 1:
                    raise
                me.stopped, me.last_refused = exc, rec
        return me

    @staticmethod
    def table_envelope(
        identity: IdentityKey, game: bytes, seat: int, body: dict[str, Any]
    ) -> dict[str, Any]:
        """The host's envelope of record 0 (its counter 0, echoing the genesis hash)."""
        return Author(identity, game, seat).envelope(body, genesis_hash(game))

    def finish_restore(self) -> list[dict[str, Any]]:
        """After a restart, once caught up: the owed bodies signed with the next counters."""
        bodies, self.replaying = self.replaying or [], None
        return self.session.sign_again(bodies)

    # ------------------------------------------------------------------ own envelopes
    def start(self) -> list[dict[str, Any]]:
        """This seat's first envelopes (its accept of the table)."""
        return self.session.start()

    def sent(self, env: dict[str, Any]) -> None:
        """Remember an own envelope until its record comes back (for a resume)."""
        self.unsequenced[env["n"]] = env
        if env["head"] == self.session.head:
            self.unechoed = False

    def ack(self) -> dict[str, Any] | None:
        """An ``ack`` envelope echoing the head, if records other than acks came since this
        seat last echoed one (so an idle seat still shows the host which history it holds)."""
        if not self.unechoed or self.finished or self.seat is None:
            return None
        return self.session.ack()

    def resend(self) -> list[dict[str, Any]]:
        """Own envelopes sent but not sequenced, in counter order (to send again after a
        resume: no error frame for the envelopes sent before is expected any more)."""
        self._stale = 0
        return [self.unsequenced[n] for n in sorted(self.unsequenced)]

    def take_over(self, old_host: int, votes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """This seat becomes the host: its ``host_change`` envelope carrying the ``depose``
        ``votes``, then its own envelopes the old host never sequenced, signed again after it
        (the counter goes back to the chain's next one, so nothing is skipped). A move among
        them is signed again only if it is legal at the head it now echoes, a play with the card
        it is (it was legal at its old one; the turn may have passed, a hand may have ended
        since): otherwise it is dropped and the player asked again, as after a restart, rather
        than signed as an illegal move (a play legal for some other face, a jump-in with an
        identical card say, is not legal with this one)."""
        head = self.session.count - 1
        bodies = []
        view = self.session.view  # its own faces: a play is judged with the card it is
        for env in self.resend():
            body = env["body"]
            face = view.get(body["slot"]) if body.get("move") == "play" else None
            if body.get("type") == "move" and not self.session.legal_at(head, self.seat, body,
                                                                         face):
                self.in_flight = False
                continue
            bodies.append(body)
        change = self.session.votes_body("depose", old_host, votes)
        out = self.session.sign_again([change, *bodies])
        self.unsequenced = {env["n"]: env for env in out}
        return out

    def refused(self, code: str, detail: str) -> list[dict[str, Any]]:
        """The host refused an own envelope (its ``error`` frame); return the envelopes to send
        again.

        The host takes a seat's envelopes in counter order, so the refused one is the lowest
        not sequenced yet; those sent after it carry counters the host now refuses as out of
        order (their error frames are expected and skipped here). They are signed again from
        the refused one's counter and returned. The refused move is dropped: the agent is told
        (:attr:`told`) and asked again (a refused chat line or ack is dropped the same way,
        untold). An error frame while no move, chat or ack of this seat is the lowest one in
        flight concerns nothing this seat sent honestly and changes nothing.

        A ``DUPLICATE`` refusal is of an envelope the host holds already (another seat passed
        it on, or it was sent again after a resume, 4.3): its record has come or comes, and
        nothing in flight is refused, so nothing changes (taking it for the lowest envelope
        in flight would drop that one and sign the next at a counter the host has taken)."""
        if code == "DUPLICATE":
            return []
        if self._stale:
            self._stale -= 1
            return []
        if not self.unsequenced:
            if self.in_flight:  # the host's own seat keeps no envelopes: just tell
                self.in_flight = False
                self._tell(code, detail)
            return []
        lowest = self.unsequenced[min(self.unsequenced)]
        chat = lowest["body"].get("type") in ("chat", "ack")  # host pacing (4.9): dropped
        if not chat and (not self.in_flight or lowest["body"].get("type") != "move"):
            return []  # not about an honest envelope of this seat's (nothing to mend)
        del self.unsequenced[lowest["n"]]
        rest = self.resend()
        out = self.session.sign_again([e["body"] for e in rest])
        self.unsequenced = {e["n"]: e for e in out}
        self._stale = len(rest)
        if chat:
            return out
        self.in_flight = False
        self._tell(code, detail)
        return out

    def _tell(self, code: str, detail: str) -> None:
        self.refusals += 1
        self.told.append((code, detail))

    # ------------------------------------------------------------------ records
    def apply(
        self, record: dict[str, Any], now_ms: int, keep_evidence: bool = True
    ) -> list[dict[str, Any]]:
        """Verify and apply one record; return the envelopes to send. Raises ProtocolError if
        the record is refused; nothing is applied then, and nothing kept unless the record is
        the evidence of the fault (see :meth:`keep`; ``keep_evidence=False`` leaves that to the
        caller)."""
        before = len(self.session.chain.at_table)
        try:
            out = self.session.receive(record, now_ms)
        except ProtocolError as exc:
            if keep_evidence:
                self.keep(record, exc)
            raise
        if len(self._m) == len(self.records):  # (the record takes index len(records))
            self._m.append(before)
        return self._applied(record, out)

    def keep(self, record: dict[str, Any], exc: ProtocolError) -> bool:
        """Keep ``record`` if it is the evidence of the fault ``exc`` (it passed every check of
        the chain and its body shows the fault, section 19): the transcript then ends with the
        signed proof against the seat named. Once per match; returns whether it was kept."""
        if self.stopped is not None or exc.evidence is None or exc.evidence != record.get("i"):
            return False
        self.stopped = exc
        self.evidence = record
        return True

    def _applied(self, record: dict[str, Any], out: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Keep a record the session has applied (``out``: its envelopes)."""
        self.records.append(record)
        env = record["env"]
        if self.replaying is not None:  # restoring: collect owed bodies, send nothing yet
            if env["seat"] == self.seat and env["body"] in self.replaying:
                self.replaying.remove(env["body"])
            self.replaying.extend(e["body"] for e in out)
            out = []
        if env["seat"] != self.seat and env["body"]["type"] != "ack":
            self.unechoed = True
        if env["seat"] == self.seat:
            held = self.unsequenced.pop(env["n"], None)
            if env["body"].get("type") == "move":
                self.in_flight = False
            if held is not None and held["body"] != env["body"]:
                # (the same body at another head is the same message: a restart signs what
                # it owed again, and the host may hold the first signing)
                out = out + self._sign_after(env["n"], held)
        self._pacing(record)
        self._finality(record)
        return out

    def _sign_after(self, n: int, held: dict[str, Any]) -> list[dict[str, Any]]:
        """Another envelope of this seat's took counter ``n`` in a record (another body), not
        ``held``, the one it holds for ``n`` now (an ``error`` frame about another frame was
        taken for the refusal of the envelope the record carries, and what followed it was
        signed again from its counter): ``held`` and those after it can never be sequenced at their
        counters, so they are signed again after the record, a move only if still legal (else
        it is dropped and the player asked again, as after a host change). Returns them, to
        send."""
        if self.seat is None:
            return []
        later = [held, *(self.unsequenced.pop(k) for k in sorted(self.unsequenced) if k > n)]
        head = self.session.count - 1
        view = self.session.view
        bodies = []
        for env in later:
            body = env["body"]
            if body.get("type") == "move":
                face = view.get(body["slot"]) if body.get("move") == "play" else None
                if not self.session.legal_at(head, self.seat, body, face):
                    self.in_flight = False
                    continue
            bodies.append(body)
        out = self.session.sign_again(bodies)
        self.unsequenced.update({e["n"]: e for e in out})
        return out

    def _pacing(self, record: dict[str, Any]) -> None:
        """A record that changed the rules state opens an out-of-turn window (PROTOCOL.md 18.1):
        noted in :attr:`windows` for whoever paces the seat."""
        state = self.session.state
        if state is None or state is self._state_seen:
            return
        self._state_seen = state
        events = self.session.events
        scored = any(isinstance(e, ev.HandScored) for e in events[self._events_seen :])
        self._events_seen = len(events)
        self.windows.append((record["i"], scored))

    def _finality(self, record: dict[str, Any]) -> None:
        """Count the seats this chain shows holding the record that ended the match (7.11):
        the signers of it and of every later record, and the authors of later envelopes whose
        head is one of them (:mod:`~dernier_p2p.protocol.finality`, incrementally)."""
        session = self.session
        if not session.finished:
            return
        if self.end_at is None:
            self.end_at = record["i"]
        self._late.add(record_hash(record))
        self._holders.add(record["h"])
        env = record["env"]
        if record["i"] > self.end_at and env["head"] in self._late:
            self._holders.add(env["seat"])
        session.unfinal = not self.final
        session.end_owed = () if not session.unfinal else tuple(
            s for s in session.chain.at_table if s not in self._holders)

    # ------------------------------------------------------------------ queries
    @property
    def finished(self) -> bool:
        """Over by the rules (the result may not be final yet: :attr:`final`)."""
        return bool(self.session.finished)

    @property
    def final(self) -> bool:
        """Over, and the record that ended it final (7.11): ``q(m)`` seats at the table shown
        holding it (at once at two seats, and for a no contest, which a quorum's votes made)."""
        session = self.session
        if not session.finished:
            return False
        m = self.m_at(self.end_at) if self.end_at is not None else len(session.chain.at_table)
        return session.no_contest or m <= 2 or len(self._holders) >= quorum(m)

    def m_at(self, i: int) -> int:
        """The seats at the table before record ``i`` (the table's size now past the last):
        a quorum about record ``i`` counts among them, not among those left once a ``left``
        or a ``resign`` at ``i`` or later took a seat off (a leave that ends the match, 7.9,
        would otherwise make its own record final at once at two seats)."""
        if 0 <= i < len(self._m):
            return self._m[i]
        return len(self.session.chain.at_table)

    @property
    def end_holders(self) -> frozenset[int]:
        """The seats this chain shows holding the record that ended the match."""
        return frozenset(self._holders)

    @property
    def last(self) -> int:
        """The index of the last record held."""
        return len(self.records) - 1

    def others_at_table(self) -> list[int]:
        """The other seats still playing (whose window this seat's turn move waits for)."""
        state = self.session.state
        out = state.out if state is not None else ()
        return [s for s in sorted(self.session.chain.at_table) if s != self.seat and s not in out]

    def may_act(self) -> bool:
        """Whether the seat's player should be asked now: the deck is quiescent, the match is
        not over, no own move is in flight, and the seat has a legal move."""
        if self.in_flight or self.finished or self.seat is None:
            return False
        return bool(self.session.legal())
