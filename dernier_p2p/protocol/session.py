"""The per-peer session: the ordered record stream in, this seat's envelopes out.

A :class:`Session` is sans-IO and deterministic. Every peer (each seat, and any observer) runs
one; fed the same records they reach the same rules state, the same deck state and the same
faults. The flow, applied identically by every peer from the record sequence:

1. Record 0 is the host's ``table``. Each seat sends ``accept`` with the record hash of record 0.
2. When every seat has accepted: a joint coin flip (``coin_commit`` then, once all commitments
   are in, ``coin_reveal``; step ``"dealer"``, hand 0, range ``players``) gives
   ``ChooseDealer``.
3. Each hand: a new :class:`~dernier_p2p.deck.table.DeckTable` per peer (the seat's own, with
   ``Drbg(digest("dernier-p2p/hand-seed", [seed, game, hand]))``, and a public observer table
   fed every record in order, the seat's own messages included, when they come back). Every
   proof, token and secret is checked once per peer, by the public table; the seat's table
   then takes the message as verified, and the public table takes as verified an own message
   that is exactly what the seat's table made. The key
   setup and the shuffles of epoch 0 run; when the epoch is final the engine gets
   ``Shuffle(first_slot .. first_slot + count - 1)``: slot id == deck position.
4. Engine events become deck operations (:mod:`.bridge`); entering the originale ``CUT`` phase
   adds ``peek(bottom slot, cutter)``. Chance requests: ``flip`` -> ``open(slot)`` then
   ``Flip(face)`` once every token is in; ``shuffle`` with a source -> ``reshuffle`` (``cards``
   form when every source slot is open, else ``positions``) then ``Shuffle`` when the epoch is
   final; ``reveal`` -> ``end``, then, with every secret in, the deck audit of the public table
   (:func:`~dernier_p2p.deck.audit.audit_table`: only the checks that need the secrets), a
   replay of the hand's moves with every face known, and ``Reveal``.
5. A ``move`` record is queued; queued moves run one at a time, in record order, whenever the
   session is *quiescent* (no deck operation waiting, no engine input awaited, no chance request
   open). A play of a slot not yet open first applies ``open(slot)``; the engine gets the
   ``Play`` when the face is known. Deck messages always apply at once.
6. Deck operations run in order; an operation waits until it can apply in every peer: a
   ``transfer`` until no token or box is owed for its position, a ``reshuffle`` until no
   shuffle runs, ``end`` until nothing is owed. A transfer of an open position is skipped.

Races. A move is judged against the state the author had seen: the session keeps the rules
state after every record (and whether it was quiescent) and the envelope's ``head`` names it.
A move that the rules refuse when it runs, but that was legal at its head (which was
quiescent), lost a race to the host's order: it is ignored and logged as a ``race-lost``
:class:`SessionEvent`. Otherwise it is ``ILLEGAL_MOVE`` (or ``NOT_HELD`` for a play of a slot
the author did not hold at its head), naming the author. Before opening a card for a play, the
session checks that some face would make the play legal now; if none would, the play is judged
at once (without revealing the card).

Host ``timeout``/``left`` records carry the votes of a quorum of the seats (checked by the
chain, :mod:`.votes`): ``left`` -> ``Leave(seat)``. A ``timeout`` of a seat that owes
a deck, accept or coin message is a stall: ``Leave(seat)`` at once (the hand cannot go on
without that seat's key). Otherwise the timeout is queued as ``Timeout(seat)``; if the rules
refuse it when it runs (the seat moved first), it is logged as ``timeout-ignored``. A valid
``no_contest`` ends the match at once with the result ``{"no_contest": True}``: nobody ranked, no
score or match point changed (logged as a ``no-contest`` event).

A complaint about a box (a transfer or peek) that public data settles is a fault of the giver
or of the complainer at once. One it cannot settle (the box does not open) stops the hand:
waiting work is dropped, ``end`` runs, every seat reveals its secret and the audit names the
giver or the false complainer. The complainer's ``ref`` is the box's index in record order.

Faults raise :class:`~dernier_p2p.protocol.errors.ProtocolError` naming the seat at fault. A
fault of the record itself (chain, signature, counter, head, body schema, a deck message that
fails its checks, a move that would run at once and is refused without being a lost race)
leaves the session unchanged. A fault found while running earlier queued work (a queued move,
or a play shown illegal once its card opens, an audit failure) stops the session:
:attr:`Session.fault` is set and every later call raises it again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dernier_p2p.deck.audit import audit_table
from dernier_p2p.deck.coin import CoinFlip, coin_commitment, coin_value
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.errors import DeckError
from dernier_p2p.deck.table import DeckTable, TransferDispute
from dernier_p2p.protocol.bridge import card_face, ops_for_events, reshuffle_op, rules_from_table
from dernier_p2p.protocol.chain import ChainChecker
from dernier_p2p.protocol.envelope import Author, check_record
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.messages import (
    DECK_TYPES,
    body_to_move,
    deck_body,
    deck_message,
    move_to_body,
    validate_body,
)
from dernier_p2p.protocol.votes import sign_vote
from dernier_p2p.rules import (
    Card,
    ChooseDealer,
    Cut,
    Flip,
    HandStarted,
    IllegalMove,
    Leave,
    Move,
    Phase,
    Play,
    Reveal,
    SeatOut,
    Shuffle,
    State,
    Timeout,
    apply,
    legal_moves,
    new_match,
    to_act,
)
from dernier_p2p.rules.cards import deck_cards
from dernier_p2p.wire.hashing import digest
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.version import PROTOCOL_VERSION

HAND_SEED_LABEL = "dernier-p2p/hand-seed"
COIN_STEP = "dealer"
HISTORY = 4096  # rules states kept for judging head echoes (records)
BATCHED_OPS = frozenset({"deal", "peek", "open"})
"""Operations whose tokens and boxes a seat sends once for a run of them (PROTOCOL.md 15)."""


def _renumbered(msg: dict, seat_of: Callable[[int], int]) -> dict:
    """A copy of deck message ``msg`` with every seat it names (author, token owners, box
    receiver) mapped by ``seat_of``."""
    msg = dict(msg)
    if "seat" in msg:
        msg["seat"] = seat_of(msg["seat"])
    if msg["type"] == "tokens":
        msg["tokens"] = [{**t, "owner": seat_of(t["owner"])} for t in msg["tokens"]]
    if "to" in msg:
        msg["to"] = seat_of(msg["to"])
    return msg


@dataclass(frozen=True)
class SessionEvent:
    """Something the session decided that is not a rules event: ``race-lost``,
    ``timeout-ignored``, ``stall``, ``dispute``, ``audit-ok``, ``host-change``, ``no-contest``,
    and ``chat`` (a line a seat said to the table: ``detail`` is its text)."""

    kind: str
    seat: int | None
    detail: str


def hand_seed(seed: bytes, game: bytes, hand: int) -> bytes:
    """The Drbg seed of a seat for one hand (hand 0: the match set-up, i.e. the dealer coin)."""
    return digest(HAND_SEED_LABEL, [seed, game, hand])


ANSWER_RUNS = True
"""The default of :class:`Session`'s ``batch_answers``: a run of deals, peeks and opens is
answered at once. The simulator turns it off to replay cases recorded before
(:mod:`~dernier_p2p.sim.legacy`)."""


class Session:
    """One peer's view of a match, driven by sequenced records.

    ``identity`` and ``seat``: this peer's key and seat (``seat=None`` for an observer, whose
    identity is unused); ``table_record``: record 0 (the host's ``table``); ``drbg_seed``: the
    seat's secret randomness (32+ bytes); ``versions``: the protocol versions record 0 may be of
    (a live table runs this protocol's alone; a verifier also reads older transcripts, 20);
    ``batch_answers``: the tokens this seat owes for a run of deals, peeks and opens go in one
    ``tokens`` message after the run (PROTOCOL.md 15); False sends one per operation, as matches
    recorded before did (the conformance suite reproduces those byte for byte).

    Outgoing: :meth:`start` (the ``accept``), :meth:`receive` (envelopes due after a record),
    :meth:`intend` (a local move), :meth:`announce` (the host's ``timeout``/``left``). Queries:
    :attr:`state`, :attr:`view`, :meth:`legal`, :attr:`pending`, :meth:`waiting_on`,
    :attr:`waiting_since`, :attr:`events`, :attr:`finished`, :attr:`result`,
    :attr:`hand_cards` (every audited card per hand), :attr:`fault`. Feeding a new session the
    records of a game again recomputes this seat's messages byte for byte (a resume)."""

    def __init__(
        self,
        identity: IdentityKey | None,
        seat: int | None,
        table_record: dict,
        drbg_seed: bytes = b"",
        versions: tuple[int, ...] = (PROTOCOL_VERSION,),
        batch_answers: bool | None = None,
    ) -> None:
        rec = check_record(table_record, None)
        env = rec["env"]
        host = rec["h"]
        body = env["body"]
        players = body.get("players") if isinstance(body, dict) else None
        if not isinstance(body, dict) or body.get("type") != "table":
            raise ProtocolError("BAD_CHAIN", host, "record 0 is the host's table")
        if not isinstance(players, list) or not 2 <= len(players) <= 10:
            raise ProtocolError("MALFORMED", host, "record 0 is a table of 2 to 10 players")
        n = len(players)
        validate_body(body, host, n, host_seat=host, versions=versions)
        self.game: bytes = env["game"]
        self.keys: list[bytes] = [p["key"] for p in players]
        try:
            self.chain = ChainChecker(self.game, self.keys, self.keys, versions=versions)
        except ValueError as exc:
            raise ProtocolError("TABLE_MISMATCH", host, f"table keys: {exc}") from None
        self.chain.feed(rec)
        try:
            self.rules = rules_from_table(body["variant"], body["options"], body["version"])
            self.state: State = new_match(self.rules, n)
        except (ValueError, TypeError) as exc:
            raise ProtocolError("TABLE_MISMATCH", host, f"table: {exc}") from None
        if seat is not None:
            if not isinstance(seat, int) or not 0 <= seat < n:
                raise ValueError("seat outside the table")
            if identity is None or identity.public_bytes() != self.keys[seat]:
                raise ValueError("the identity key is not the key of that seat")
            if len(drbg_seed) < 32:
                raise ValueError("the Drbg seed must be at least 32 bytes")
        self.n, self.seat = n, seat
        self.table_body = body
        self.table_hash = self.chain.head
        self._seed = bytes(drbg_seed)
        self._author = (
            None if seat is None else Author(identity, self.game, seat, 1 if seat == host else 0)
        )
        self.accepted: set[int] = set()
        self.coin: CoinFlip | None = None
        self._coin_drbg = None if seat is None else Drbg(hand_seed(self._seed, self.game, 0))
        self._coin_value: bytes | None = None
        self.pub: DeckTable | None = None  # the public (observer) table of the running hand
        self.mine: DeckTable | None = None  # this seat's table
        self._ops: deque[dict] = deque()
        # False: one answer per operation, as before (None: :data:`ANSWER_RUNS`)
        self.batch_answers = ANSWER_RUNS if batch_answers is None else batch_answers
        self._unanswered = False  # operations applied whose tokens and boxes are not sent yet
        self._await: tuple | None = None
        self._moves: deque[tuple[int, dict, int]] = deque()
        self._outbox: list[dict] = []
        self._history: dict[int, tuple[State | None, bool]] = {-1: (None, False)}
        self._history[0] = (self.state, False)
        self._hand_start: State | None = None
        self._hand_moves: list[Move] = []
        self.events: list[Any] = []
        self.fault: ProtocolError | None = None
        self.hand_cards: dict[int, list[int]] = {}  # audited card of every position, per hand
        self.no_contest = False  # the match ended as no contest (7.5)
        self.unfinal = False  # over by the rules, its end not yet final (7.11)
        self.end_owed: tuple[int, ...] = ()  # then, the seats at the table not shown holding
        # the end: the table waits on their ``ack`` (set by whoever counts finality)
        self._wait: list[int] = []
        self.waiting_since: int = rec["t"]  # host time of the record that began the wait
        # the seats that take part in the running hand's deck (all, until a seat goes out):
        # the deck layer numbers them 0..m-1 in this order (PROTOCOL.md 7.9)
        self._parts: tuple[int, ...] = tuple(range(n))
        self._void: set[int] = set()  # hands made void by a seat going out

    # ------------------------------------------------------------------ queries
    @property
    def head(self) -> bytes:
        """Hash of the last record applied (the head echo of this seat's envelopes)."""
        return self.chain.head

    @property
    def host(self) -> int:
        return self.chain.host

    @property
    def count(self) -> int:
        """Records applied."""
        return self.chain.next_index

    @property
    def finished(self) -> bool:
        return self.no_contest or self.state.match_over

    @property
    def concluded(self) -> bool:
        """Over and final (PROTOCOL.md 7.11): the liveness rules run until then. The seat
        that holds the records says whether the end is final (:attr:`unfinal`)."""
        return self.finished and not self.unfinal

    @property
    def result(self) -> dict | None:
        """Winner, standings, scores and match points once the match is over;
        ``{"no_contest": True}`` for a match ended as no contest (nobody ranked)."""
        if not self.finished:
            return None
        if self.no_contest:
            return {"no_contest": True}
        st = self.state
        return {
            "winner": st.winner,
            "standings": st.standings,
            "scores": st.scores,
            "match_points": st.match_points,
        }

    @property
    def quiescent(self) -> bool:
        """True when no deck operation, engine input or queued move is waiting and a seat (not
        chance) is to move: the moment moves are applied, and local moves may be intended."""
        return (
            not self._ops
            and self._await is None
            and not self._moves
            and self.state.chance is None
            and not self.finished
        )

    @property
    def settled(self) -> bool:
        """Quiescent with no deck message owed by anyone: when local moves may be intended (a
        cutter then knows the bottom card, a drawer its drawn card)."""
        return self.quiescent and not (self.pub is not None and self.pub.pending())

    @property
    def view(self) -> dict[int, Card]:
        """This seat's private faces: its hand slots (and the cut card it peeked) -> Card."""
        if self.seat is None or self.mine is None:
            return {}
        st = self.state
        slots = list(st.hands[self.seat])
        if st.phase is Phase.CUT and st.pile and to_act(st) == self.seat:
            slots.append(st.pile[-1])
        out: dict[int, Card] = {}
        for p in slots:
            if p < len(self.mine.slots):
                k = self.mine.card(p)
                if k is not None:
                    out[p] = card_face(self.rules.deck, k)
        return out

    def legal(self) -> list[Move]:
        """This seat's legal moves now (none unless settled)."""
        if self.seat is None or self.fault is not None or not self.settled:
            return []
        return legal_moves(self.state, self.seat, self.view)

    @property
    def pending(self) -> list[tuple[int, str]]:
        """Who owes what now: ``(seat, what)`` for accepts, coin messages, deck messages, the
        seat to act, and open declaration windows (``"declare (optional)"``); once the match
        is over and its end not yet final, the ``ack`` of each seat at the table not shown
        holding the end (7.11)."""
        if self.fault is not None:
            return []
        if self.finished:
            return [(s, "ack") for s in self.end_owed] if self.unfinal else []
        missing = [s for s in range(self.n) if s not in self.accepted]
        if missing:
            return [(s, "accept") for s in missing]
        if self.coin is not None and self.state.chance is not None:
            if self.state.chance.kind == "dealer":
                what = "coin_reveal" if self.coin.committed else "coin_commit"
                return [(s, what) for s in self.coin.missing()]
        if self.pub is not None:
            due = self.pub.pending()
            if due:
                return [(self._parts[c], what) for c, what in due]
        if not self.quiescent:
            return []
        out = []
        actor = to_act(self.state)
        if actor is not None:
            out.append((actor, "move"))
        out += [(s, "declare (optional)") for s in self.state.owes]
        return out

    def waiting_on(self) -> list[int]:
        """The seats whose message or move the table needs now (for the host's timers); the
        wait began at :attr:`waiting_since` (host time of the record after which it began)."""
        return sorted({s for s, what in self.pending if not what.endswith("(optional)")})

    # ------------------------------------------------------------------ outgoing
    def start(self) -> list[dict]:
        """This seat's first envelope: its ``accept`` of the table."""
        if self.seat is None:
            return []
        return [self._author.envelope({"type": "accept", "table": self.table_hash}, self.head)]

    def intend(self, move: Move) -> dict:
        """The signed envelope of a local move, checked against the current state.

        Raises IllegalMove if the move is not legal now (or the table is not settled). The
        move takes effect only when its record comes back."""
        if self.fault is not None:
            raise self.fault
        if self.seat is None:
            raise ValueError("an observer makes no moves")
        if not self.settled:
            raise IllegalMove("busy", "the table is waiting for the deck or the host")
        if isinstance(move, (Timeout, Leave)) or getattr(move, "seat", None) != self.seat:
            raise IllegalMove("bad-seat", f"{move!r} is not a move of seat {self.seat}")
        if isinstance(move, Play) and self.view.get(move.slot) != move.card:
            raise IllegalMove("face-mismatch", f"slot {move.slot} does not hold {move.card}")
        if isinstance(move, Cut) and move.card is not None:
            bottom = self.state.pile[-1] if self.state.pile else None
            if self.view.get(bottom) != move.card:
                raise IllegalMove("face-mismatch", "that is not the bottom card")
        apply(self.state, move)  # raises IllegalMove
        return self._author.envelope(move_to_body(move, self.state.hand_number), self.head)

    def sign_again(self, bodies: list[dict]) -> list[dict]:
        """This seat's envelopes for ``bodies``, numbered from the chain's next counter of this
        seat and echoing the current head: after a host change, the envelopes the old host
        never sequenced are signed again (the new host's ``host_change`` first)."""
        if self.seat is None:
            raise ValueError("an observer sends nothing")
        for body in bodies:
            validate_body(body, self.seat, self.n)
        self._author.next_n = self.chain.next_counter(self.seat)
        return [self._author.envelope(body, self.head) for body in bodies]

    def ack(self) -> dict:
        """This seat's ``ack`` envelope: its next counter, echoing the current head (an idle
        seat shows the host which history it holds)."""
        if self.seat is None:
            raise ValueError("an observer sends nothing")
        return self._author.envelope({"type": "ack"}, self.head)

    def chat(self, text: str) -> dict:
        """This seat's ``chat`` envelope saying ``text`` to the table (checked as every peer
        checks it: 1..200 printable characters, at most 400 bytes; ValueError otherwise)."""
        if self.seat is None:
            raise ValueError("an observer sends nothing")
        body = {"type": "chat", "text": text}
        try:
            validate_body(body, self.seat, self.n)
        except ProtocolError as exc:
            raise ValueError(exc.detail) from None
        return self._author.envelope(body, self.head)

    def sign(self, body: dict) -> dict:
        """This seat's next envelope for ``body``, echoing the current head, with no check of
        the body: what a faulty or cheating peer could send (conformance cases, tests). An
        honest client sends only the envelopes of :meth:`move`, :meth:`receive`, :meth:`ack`
        and :meth:`announce`."""
        if self.seat is None:
            raise ValueError("an observer sends nothing")
        return self._author.envelope(body, self.head)

    def vote(self, kind: str, target: int | None) -> dict:
        """This seat's vote (7.5) that ``target`` is absent (``kind``: ``timeout``, ``left``,
        ``depose``, ``abandon``), stating it has seen nothing of it since the last record where
        it showed itself (or where such votes were last used). Whether to vote is the caller's
        policy."""
        if self.seat is None:
            raise ValueError("an observer does not vote")
        after = self.chain.vote_since(kind, target)
        return sign_vote(self._author.identity, self.game, kind, target, self.seat, after)

    def votes_body(self, kind: str, target: int | None, votes: list[dict]) -> dict:
        """The body of the vote-carrying record the votes call for (``host_change`` by this
        seat taking over for ``depose``)."""
        if kind == "timeout" or kind == "left":
            return {"type": kind, "seat": target, "votes": votes}
        if kind == "depose":
            return {"type": "host_change", "old": target, "new": self.seat, "votes": votes}
        return {"type": "no_contest", "seat": None, "votes": votes}

    def legal_at(self, head_index: int, seat: int, body: dict, face: Card | None = None) -> bool:
        """Whether ``body`` (a ``move`` body of ``seat``) was legal in the state after record
        ``head_index`` (a play: with ``face``, or for some face when it is not known), that
        state being quiescent. The host may refuse before sequencing a move that fails this; a
        move that passes can at worst lose a race."""
        if body.get("type") != "move":
            return False
        return self._legal_at(head_index, seat, body, face)

    def held_at(self, head_index: int, seat: int, slot: int) -> bool:
        """Whether ``seat`` holds ``slot`` now or held it after record ``head_index``. A play
        of a slot held at neither moment is ``NOT_HELD`` (the host refuses it before
        sequencing with that code, as every peer would judge it, 7.4)."""
        st = self._history.get(head_index, (None, False))[0]
        return slot in self.state.hands[seat] or (st is not None and slot in st.hands[seat])

    def resign(self) -> dict:
        """This seat's ``resign`` envelope: it leaves the match on purpose and ranks last."""
        if self.seat is None:
            raise ValueError("an observer does not resign")
        return self._author.envelope({"type": "resign"}, self.head)

    def announce(self, body: dict) -> dict:
        """The host's own envelope for a host-only body (``timeout``, ``left``,
        ``no_contest``, with their votes)."""
        if self.seat is None or self.seat != self.host:
            raise ValueError("only the host's session announces host bodies")
        validate_body(body, self.seat, self.n, host_seat=self.host)
        return self._author.envelope(body, self.head)

    # ------------------------------------------------------------------ incoming
    def receive(self, record: Any, now_ms: int = 0) -> list[dict]:
        """Verify and apply one sequenced record; return this seat's envelopes to send."""
        if self.fault is not None:
            raise self.fault
        rec = self.chain.check(record)
        env, i, author = rec["env"], rec["i"], rec["env"]["seat"]
        head_i = self.chain.index_of(env["head"])
        try:
            follow = self._check_body(author, env["body"], head_i)  # no change on a fault
        except ProtocolError as exc:  # the signed record itself is the evidence
            exc.evidence = i
            raise
        self.chain.commit(rec)
        if author == self.seat:  # a resumed session skips the counters it used before
            self._author.next_n = max(self._author.next_n, env["n"] + 1)
        self._outbox = []
        try:
            if not self.finished:
                follow()
                self._pump()
        except ProtocolError as exc:
            exc.evidence = i
            self.fault = exc
            raise
        except DeckError as exc:
            self.fault = ProtocolError(
                "DECK_FAULT", self._table_seat(exc.seat), f"{type(exc).__name__}: {exc}",
                evidence=i,
            )
            raise self.fault from None
        self._history[i] = (self.state, self.quiescent)
        self._history.pop(i - HISTORY, None)
        wait = self.waiting_on()
        if wait != self._wait:
            self._wait, self.waiting_since = wait, rec["t"]
        if self.seat is None:
            return []
        return [self._author.envelope(b, self.head) for b in self._outbox]

    def judge_unsequenced(self, envelope: Any) -> ProtocolError | None:
        """Judge an envelope that no record carries, after the last record (an envelope side
        file, PROTOCOL.md 21.1): the fault it proves against its author, or None.

        Only an envelope that could have been the next record counts: signed by its author,
        of this game, its counter the author's next, its head a record this session holds, its
        body of the schema; anything else proves nothing and is passed over (None). A sound one
        is applied as if sequenced (its counter is taken), so the next can be judged after it.
        The faults it can prove are those a record proves (PROTOCOL.md 19.1): a fault found
        applying it (an illegal play its token reveals, a complaint judged, a failed audit) or
        a proof that fails (``BadProof``); a message merely not due proves nothing, since the
        host's order may have made it so."""
        if self.fault is not None or self.finished:
            return None
        try:
            env = self.chain.check_envelope(envelope, None)
        except ProtocolError:
            return None
        author, body = env["seat"], env["body"]
        if body["type"] in ("table", "timeout", "left", "host_change"):
            return None  # host bodies prove nothing without the host's record
        head_i = self.chain.index_of(env["head"])
        try:
            follow = self._check_body(author, body, head_i)
        except ProtocolError as exc:
            if self.fault is exc or "BadProof" in exc.detail:
                self.fault = exc
                return exc
            return None
        self.chain.count_unsequenced(env)
        self._outbox = []
        try:
            follow()
            self._pump()
        except ProtocolError as exc:
            self.fault = exc
            return exc
        except DeckError as exc:
            seat = self._table_seat(exc.seat)
            self.fault = ProtocolError("DECK_FAULT", seat, f"{type(exc).__name__}: {exc}")
            return self.fault
        return None

    # ------------------------------------------------------------------ body checks
    def _check_body(self, author: int, body: dict, head_i: int):
        """Check a body against the current state without changing it; return the action."""
        kind = body["type"]
        if self.finished:
            return lambda: None
        if kind == "table":
            raise ProtocolError("BAD_CHAIN", self.host, "a second table record")
        if kind == "ack":
            return lambda: None
        if kind == "chat":  # rules and deck ignore it: a line for the log
            return lambda: self.events.append(SessionEvent("chat", author, body["text"]))
        if kind == "accept":
            if body["table"] != self.table_hash:
                raise ProtocolError("TABLE_MISMATCH", author, "accepted another table")
            if author in self.accepted:
                raise ProtocolError("DUPLICATE", author, "a second accept")
            return lambda: self._on_accept(author)
        if kind in ("coin_commit", "coin_reveal"):
            return self._check_coin(author, body)
        if kind in DECK_TYPES:
            return self._check_deck(author, body)
        if kind == "move":
            if self.quiescent and not self._moves:  # it runs at once: judge it before commit
                self._verdict(author, body, head_i)
            return lambda: self._moves.append((author, body, head_i))
        if kind in ("timeout", "left"):
            return lambda: self._on_host_seat_body(body, head_i)
        if kind == "resign":
            return lambda: self._seat_gone(author)
        if kind == "host_change":
            return lambda: self._on_host_change(body)
        if kind == "no_contest":
            return lambda: self._on_no_contest(body)
        raise ProtocolError("UNKNOWN_MESSAGE", author, f"no handling of {kind!r}")

    def _check_coin(self, author: int, body: dict):
        if body["step"] != COIN_STEP or self.coin is None:
            raise ProtocolError("DECK_FAULT", author, f"coin message {body['step']!r} not due")
        try:
            if body["type"] == "coin_commit":
                self.coin.add_commitment(author, body["commit"])
            else:
                self.coin.add_reveal(author, body["value"])
        except DeckError as exc:
            raise ProtocolError("DECK_FAULT", author, f"coin: {exc}") from None
        return lambda: self._after_coin(body["type"])

    def _check_deck(self, author: int, body: dict):
        if body["hand"] in self._void:
            return lambda: None  # sent before its author saw the hand made void
        if self.pub is None or body["hand"] != self.pub.hand:
            now = None if self.pub is None else self.pub.hand
            raise ProtocolError(
                "DECK_FAULT", author, f"{body['type']} for hand {body['hand']} during hand {now}"
            )
        if author not in self._parts:
            raise ProtocolError("DECK_FAULT", author, f"seat {author} takes no part in this hand")
        msg = self._msg_in(deck_message(body, author))
        mine = self.mine
        # this seat's own message, exactly as its table made it, needs no check (a complaint
        # still needs the public verdict)
        own = (
            author == self.seat
            and mine is not None
            and body["type"] != "complaint"
            and mine.made(msg)
        )
        try:
            self.pub.receive(msg, msg["seat"], verified=own)
        except TransferDispute as exc:  # recorded; the end-of-hand audit decides
            why = str(exc)
            return lambda: self._dispute(author, msg, why)
        except DeckError as exc:
            seat = self._table_seat(exc.seat)
            if seat is None and body["type"] != "complaint":
                seat = author
            err = ProtocolError("DECK_FAULT", seat, f"{type(exc).__name__}: {exc}")
            if body["type"] == "complaint":
                self.fault = err  # the table records a complaint before its verdict
            raise err from None
        if mine is None or (author == self.seat and not mine.returning(msg)):
            return lambda: None  # an own message this seat's table did not make: public only
        return lambda: self._deck_out(mine.receive(msg, msg["seat"], verified=True))

    def _dispute(self, author: int, msg: dict, why: str) -> None:
        """A complaint that public data cannot settle stops the hand: every waiting operation
        and move is dropped, ``end`` is applied (once nothing else is owed), every seat reveals
        its secret, and the audit names the giver of the box or the false complainer."""
        self.events.append(SessionEvent("dispute", author, why))
        mine = self.mine
        if mine is not None and (author != self.seat or mine.returning(msg)):
            try:
                self._deck_out(mine.receive(msg, msg["seat"], verified=True))
            except TransferDispute:
                pass
        self._ops = deque([{"op": "end"}])
        self._moves.clear()
        self._await = ("dispute",)

    # ------------------------------------------------------------------ set-up
    def _on_accept(self, author: int) -> None:
        self.accepted.add(author)
        if len(self.accepted) < self.n:
            return
        self.coin = CoinFlip(self.game, 0, COIN_STEP, self.n, self.n)
        if self.seat is not None:
            self._coin_value = coin_value(self._coin_drbg)
            commit = coin_commitment(self.game, 0, COIN_STEP, self.seat, self._coin_value)
            self._outbox.append({"type": "coin_commit", "step": COIN_STEP, "commit": commit})

    def _after_coin(self, kind: str) -> None:
        coin = self.coin
        if kind == "coin_commit" and coin.committed and self.seat is not None:
            if not coin.values:
                self._outbox.append(
                    {"type": "coin_reveal", "step": COIN_STEP, "value": self._coin_value}
                )
        if kind == "coin_reveal" and not coin.missing():
            self._engine(ChooseDealer(coin.result()))

    def _on_host_change(self, body: dict) -> None:
        self.events.append(SessionEvent("host-change", body["new"], f"from seat {body['old']}"))

    def _on_no_contest(self, body: dict) -> None:
        seat = body["seat"]
        why = "absent at two seats" if seat is not None else "abandoned by a quorum"
        self.events.append(SessionEvent("no-contest", seat, why))
        self.no_contest = True
        self._ops.clear()
        self._moves.clear()
        self._await = None

    def _on_host_seat_body(self, body: dict, head_i: int) -> None:
        seat = body["seat"]
        if seat in self.state.out:  # out already (a resign or a stall sequenced first)
            self.events.append(SessionEvent(f"{body['type']}-ignored", seat, "already out"))
            return
        if body["type"] == "left" or seat in self._owing():
            if body["type"] == "timeout":
                self.events.append(SessionEvent("stall", seat, "timed out owing a message"))
            self._seat_gone(seat)
            return
        self._moves.append((self.host, body, head_i))

    def _seat_gone(self, seat: int) -> None:
        """``seat`` left (a ``left``, a stall or its own ``resign``): waiting work is dropped
        and the rules take ``Leave`` (at three or more seats in play under the option ``leave``
        ``play_on`` the hand is void and the others play on, PROTOCOL.md 7.9; else, as in
        ``dernier`` by default, the match ends and the hand is never revealed)."""
        self._ops.clear()
        self._await = None
        self._moves.clear()
        self._engine(Leave(seat))

    def _owing(self) -> set[int]:
        """Seats that owe an accept, a coin message or a deck message now."""
        return {s for s, what in self.pending if what not in ("move", "declare (optional)")}

    # ------------------------------------------------------------------ deck plumbing
    def _deck_out(self, msgs: list[dict]) -> None:
        for msg in msgs:
            self._outbox.append(deck_body(self._msg_out(msg), self.mine.hand))

    # ------------------------------------------------------------------ deck seats
    def _deck_seat(self, seat: int) -> int:
        """The deck layer's number of table seat ``seat`` in the running hand."""
        return self._parts.index(seat)

    def _table_seat(self, c: int | None) -> int | None:
        """The table seat of the deck layer's seat ``c``."""
        return None if c is None else self._parts[c]

    def _identity(self) -> bool:
        return len(self._parts) == self.n

    def _msg_in(self, msg: dict) -> dict:
        """A deck message with its seats (author, token owners, box receiver) renumbered for
        the deck layer of the running hand."""
        if self._identity():
            return msg
        author = msg["seat"]

        def part(seat: int) -> int:
            if seat not in self._parts:  # e.g. a token owner or a receiver that is out
                raise ProtocolError(
                    "DECK_FAULT", author, f"seat {seat} takes no part in this hand"
                )
            return self._parts.index(seat)

        return _renumbered(msg, part)

    def _msg_out(self, msg: dict) -> dict:
        """The inverse of :meth:`_msg_in` for this seat's own deck messages."""
        return msg if self._identity() else _renumbered(msg, self._parts.__getitem__)

    def _op_in(self, op: dict) -> dict:
        if self._identity() or "to" not in op:
            return op
        return {**op, "to": self._deck_seat(op["to"])}

    def _opened_boxes(self) -> set[int]:
        """Numbers of the boxes to this seat that its table opened and found sound (both tables
        number boxes in relay order)."""
        mine, pub = self.mine, self.pub
        if mine is None or len(mine.boxes) != len(pub.boxes):
            return set()
        complained = {ref for ref, _, _ in mine.complaints}
        return {
            ref
            for ref, box in enumerate(mine.boxes)
            if box.transfer.receiver == self._deck_seat(self.seat)
            and ref not in complained
            and box.transfer == pub.boxes[ref].transfer
        }

    def _new_hand(self, count: int, first: int) -> None:
        hand, deck = self.state.hand_number, self.rules.deck
        self._parts = self.state.in_play
        m = len(self._parts)
        self.pub = DeckTable(self.game, hand, m, deck)
        self.pub.start()
        self.mine = None
        if self.seat is not None and self.seat in self._parts:
            drbg = Drbg(hand_seed(self._seed, self.game, hand))
            self.mine = DeckTable(self.game, hand, m, deck, self._deck_seat(self.seat), drbg)
            self._deck_out(self.mine.start())
        self._await = ("epoch", first, count)

    def _op_ready(self, op: dict) -> bool:
        pub = self.pub
        kind = op["op"]
        if kind == "transfer":
            p = op["position"]
            return p not in pub.expect_tokens and not any(k[1] == p for k in pub.expect_boxes)
        if kind == "reshuffle":
            return pub.ready
        if kind == "end":
            return pub.turn is None and not pub.expect_tokens and not pub.expect_boxes
        return pub.ready and op["position"] < len(pub.slots)

    def _apply_op(self, op: dict) -> None:
        if op["op"] == "transfer" and self.pub.slots[op["position"]].opened:
            return  # an open card's holder no longer matters to the deck
        op = self._op_in(op)
        try:
            self.pub.apply(op)
            if self.mine is not None:
                later = self.batch_answers and op["op"] in BATCHED_OPS
                if not later:
                    self._answer_ops()
                self._deck_out(self.mine.apply(op, answer=not later))
                self._unanswered = self._unanswered or later
        except DeckError as exc:
            seat = self._table_seat(exc.seat)
            raise ProtocolError("DECK_FAULT", seat, f"operation {op}: {exc}") from None

    def _face(self, p: int) -> Card | None:
        """The public face of position ``p`` once it is open and every token is in."""
        slot = self.pub.slots[p]
        if not slot.opened or p in self.pub.expect_tokens or slot.card is None:
            return None
        return card_face(self.rules.deck, slot.card)

    def _await_ready(self) -> bool:
        aw = self._await
        pub = self.pub
        if aw[0] == "epoch":
            return pub.ready and len(pub.slots) == aw[1] + aw[2]
        if aw[0] in ("flip", "face"):
            return self._face(aw[1]) is not None
        if aw[0] in ("secrets", "dispute"):
            return len(pub.secrets) == len(self._parts) and not pub.pending()
        raise AssertionError(aw)

    # ------------------------------------------------------------------ the pump
    def _answer_ops(self) -> None:
        """This seat's tokens and boxes owed for the operations applied since the last answer:
        one ``tokens`` message for all of them (PROTOCOL.md 15), then the boxes."""
        if self._unanswered:
            self._unanswered = False
            if self.mine is not None:
                self._deck_out(self.mine.answer())

    def _pump(self) -> None:
        """Run every deck operation, engine input and queued move that can run now. A run of
        deals, peeks and opens (a flip's open included) is answered once, after its last
        operation and before anything else runs (an engine input, a move, a new hand, another
        kind of operation, the end of the pump)."""
        while not self.finished:
            if self._ops:
                if not self._op_ready(self._ops[0]):
                    break
                self._apply_op(self._ops.popleft())
                continue
            if self._await is not None:
                if not self._await_ready():
                    break
                self._answer_ops()
                aw, self._await = self._await, None
                self._resolve(aw)
                continue
            req = self.state.chance
            if req is not None:
                if req.kind == "dealer":
                    break  # the coin flip answers it
                if req.kind != "flip":  # a flip only queues an open, answered with the run
                    self._answer_ops()
                self._start_chance(req)
                continue
            if self._moves and not self._moves_held():
                self._answer_ops()
                self._run_move(*self._moves.popleft())
                continue
            break
        else:
            self._ops.clear()
        self._answer_ops()

    def _moves_held(self) -> bool:
        """Whether a queued move waits although no operation, awaited input or chance request
        holds it: never (7.4; tokens or boxes still owed do not hold moves)."""
        return False

    def _start_chance(self, req) -> None:
        if req.kind == "shuffle" and req.source is None:
            self._new_hand(req.count, req.first_slot)
        elif req.kind == "shuffle":
            opened = {}
            for p in req.source:
                face_known = self.pub.slots[p].opened and self.pub.slots[p].card is not None
                if face_known:
                    opened[p] = self.pub.slots[p].card
            self._ops.append(reshuffle_op(req.source, opened))
            self._await = ("epoch", req.first_slot, req.count)
        elif req.kind == "flip":
            p = req.slots[0]
            if not self.pub.slots[p].opened:
                self._ops.append({"op": "open", "position": p})
            self._await = ("flip", p)
        elif req.kind == "reveal":
            self._ops.append({"op": "end"})
            self._await = ("secrets",)
        else:
            raise AssertionError(req)

    def _resolve(self, aw: tuple) -> None:
        if aw[0] == "epoch":
            self._engine(Shuffle(tuple(range(aw[1], aw[1] + aw[2]))))
        elif aw[0] == "flip":
            self._engine(Flip(self._face(aw[1])))
        elif aw[0] == "face":
            _, p, author, body, head_i = aw
            face = self._face(p)
            verdict = self._try(self.state, body_to_move(body, author, face), author, body,
                                head_i, face)
            if verdict[0] == "apply":
                self._engine(verdict[1])
            else:
                self.events.append(SessionEvent("race-lost", author, verdict[1]))
        elif aw[0] == "secrets":
            self._reveal()
        elif aw[0] == "dispute":
            report = audit_table(self.pub, self._opened_boxes())
            f = report.faults[0] if report.faults else None
            who = None if f is None else self._table_seat(f.seat)
            raise ProtocolError("DECK_FAULT", who, f"audit of hand {self.pub.hand}: {f}")

    def _engine(self, move: Move) -> None:
        """Apply a move to the rules state and queue the deck operations its events call for."""
        before = self.state
        new, events = apply(before, move)
        ops, hands = ops_for_events(before.hands, events, before.out)
        started = any(isinstance(e, HandStarted) for e in events)
        if not started and [list(h) for h in new.hands] != hands:
            raise AssertionError("the deck bridge lost track of the hands")
        self._hand_moves.append(move)
        if new.phase is Phase.CUT and before.phase is not Phase.CUT:
            ops.append({"op": "peek", "position": new.pile[-1], "to": to_act(new)})
        self._void.update(e.voided for e in events if isinstance(e, SeatOut))
        self.state = new
        self.events.extend(events)
        self._ops.extend(ops)
        if started:
            self._hand_start = new
            self._hand_moves = []

    # ------------------------------------------------------------------ moves
    def _run_move(self, author: int, body: dict, head_i: int) -> None:
        if body["type"] in ("timeout", "left"):
            move = body_to_move(body, author)
            try:
                self._engine(move)
            except IllegalMove as exc:
                self.events.append(SessionEvent("timeout-ignored", body["seat"], str(exc)))
            return
        verdict = self._verdict(author, body, head_i)
        if verdict[0] == "apply":
            self._engine(verdict[1])
        elif verdict[0] == "lost":
            self.events.append(SessionEvent("race-lost", author, verdict[1]))
        else:
            self._ops.append({"op": "open", "position": verdict[1]})
            self._await = ("face", verdict[1], author, body, head_i)

    def _verdict(self, author: int, body: dict, head_i: int) -> tuple:
        """What a ``move`` body does in the current state, changing nothing: ``("apply",
        move)``, ``("lost", why)`` (a lost race) or ``("open", slot)`` (a play whose card must
        open first). Raises ProtocolError (ILLEGAL_MOVE, NOT_HELD) naming the author."""
        st = self.state
        if body["hand"] != st.hand_number:
            return self._lost(author, body, head_i, None, "a move for another hand")
        if body["move"] != "play":
            return self._try(st, body_to_move(body, author, None), author, body, head_i, None)
        slot = body["slot"]
        if slot not in st.hands[author]:
            then = self._history.get(head_i, (None, False))[0]
            if then is not None and self._held(then, author, slot, body):
                return ("lost", f"slot {slot} left the hand")
            raise ProtocolError("NOT_HELD", author, f"seat {author} holds no slot {slot}")
        face = self._face(slot) if self.pub.slots[slot].opened else None
        if face is not None:
            return self._try(st, body_to_move(body, author, face), author, body, head_i, face)
        if not self._some_face_legal(st, author, body):
            return self._lost(author, body, head_i, None, "no card makes this play legal")
        return ("open", slot)

    def _try(
        self, st: State, move: Move, author: int, body: dict, head_i: int, face: Card | None
    ) -> tuple:
        try:
            apply(st, move)
        except IllegalMove as exc:
            return self._lost(author, body, head_i, face, str(exc))
        return ("apply", move)

    def _lost(self, author: int, body: dict, head_i: int, face: Card | None, why: str) -> tuple:
        """A move the rules refuse now: a lost race if it was legal at its head, else a fault."""
        if self._legal_at(head_i, author, body, face):
            return ("lost", why)
        raise ProtocolError("ILLEGAL_MOVE", author, why)

    @staticmethod
    def _held(st: State, author: int, slot: int, body: dict) -> bool:
        return body["hand"] == st.hand_number and slot in st.hands[author]

    def _some_face_legal(self, st: State, author: int, body: dict) -> bool:
        for face in dict.fromkeys(deck_cards(self.rules.deck)):
            try:
                apply(st, body_to_move(body, author, face))
                return True
            except IllegalMove:
                continue
        return False

    def _legal_at(self, head_i: int, author: int, body: dict, face: Card | None) -> bool:
        st, quiet = self._history.get(head_i, (None, False))
        if st is None or not quiet or body["hand"] != st.hand_number:
            return False
        if body["move"] == "play":
            if body["slot"] not in st.hands[author]:
                return False
            if face is None:
                return self._some_face_legal(st, author, body)
        try:
            apply(st, body_to_move(body, author, face))
        except IllegalMove:
            return False
        return True

    # ------------------------------------------------------------------ end of hand
    def _reveal(self) -> None:
        pub = self.pub
        report = audit_table(pub, self._opened_boxes())
        if not report.ok:
            f = report.faults[0]
            seat = self._table_seat(f.seat)
            raise ProtocolError("DECK_FAULT", seat, f"audit of hand {pub.hand}: {f}")
        cards = report.cards
        req = self.state.chance
        faces = tuple((p, card_face(self.rules.deck, cards[p])) for p in req.slots)
        move = Reveal(faces)
        self._replay(cards, move)
        self.hand_cards[pub.hand] = list(cards)
        self.events.append(SessionEvent("audit-ok", None, f"hand {pub.hand}"))
        self._engine(move)

    def _replay(self, cards: list[int], reveal: Reveal) -> None:
        """Replay the hand's moves with every face known (the cut card included)."""
        st = self._hand_start
        for mv in [*self._hand_moves, reveal]:
            if isinstance(mv, Cut) and mv.card is None and st.pile:
                mv = Cut(mv.seat, mv.keep, card_face(self.rules.deck, cards[st.pile[-1]]))
            try:
                st, _ = apply(st, mv)
            except IllegalMove as exc:
                seat = getattr(mv, "seat", None)
                raise ProtocolError("ILLEGAL_MOVE", seat, f"replay of hand: {exc}") from None
