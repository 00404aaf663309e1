"""The per-hand deck state machine of one seat (or of an observer such as the auditor).

A :class:`DeckTable` consumes deck messages from the other seats and *operations* decided by
the rules engine (the same operations in every peer, in the same order), and produces this
seat's own messages. It knows nothing of the rules: it is told "deal position p to seat s",
"seat s opens position p" and so on.

Messages are plain dicts (canonical-msgpack-able) with ``"type"`` and ``"seat"`` (the author):

=============== =================================================================================
``key_commit``  ``commit``: 32 bytes (:mod:`keys`)
``key_reveal``  ``share``, ``xpub``, ``nonce``, ``proof`` (:mod:`keys`)
``shuffle``     ``epoch``: int, ``deck``: list of ``[c1, c2]``, ``proof``: shuffle proof map
``tokens``      ``tokens``: list of ``{"position", "owner", "token", "proof"}`` (:mod:`tokens`)
``transfer``    ``position``, ``to``, ``epk``, ``box``, ``commit`` (:mod:`transfer`)
``peek``        same fields as ``transfer``; the box holds the author's own token
``complaint``   ``ref``: relay-order index of the box complained of, ``plaintext``: bytes/None
``secret``      ``secret``: the author's per-hand secret scalar (32 bytes)
=============== =================================================================================

Operations are dicts with ``"op"``: ``{"op": "deal", "position", "to"}``, ``{"op": "peek",
"position", "to"}``, ``{"op": "open", "position"}``, ``{"op": "transfer", "position", "to"}``,
``{"op": "reshuffle", "cards": [card indices]}``, ``{"op": "reshuffle", "positions":
[positions]}``, ``{"op": "end"}``.

A reshuffle by ``cards`` starts the next epoch from open discards re-encoded as ``(O, M_k)``; a
reshuffle by ``positions`` starts it from the current ciphertexts of those positions (opened
discards, or stock cards no token of which was ever published). Either way the positions whose
cards go into the new epoch are *retired*: no operation may name them again.

Own messages are applied locally when produced. The relay returns them in its one global
order; feeding an own message back (:meth:`DeckTable.receive`) changes no state but fixes its
place in that order: a box takes its number (the ``ref`` complaints use) and the message its
place in :attr:`DeckTable.log` when it comes back. Boxes are numbered in relay order: box ``k``
is the ``k``-th ``transfer`` or ``peek`` message the relay delivered in the hand, whoever made
it. :attr:`DeckTable.log` records every message and operation in order (an own message not yet
returned sits where it was made); an observer table fed the same log reaches the same public
state (that is how :mod:`audit` works).

Verification happens once per peer. ``receive(msg, sender, verified=True)`` applies a message
that another table of this peer has already checked completely (a seat's table fed what its
public observer table accepted, or an observer fed this seat's own message): every state check
still runs, but no element is validated, no proof, token or secret is checked again and a
complaint is not judged again (its verdict was a dispute, or the caller would have stopped).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from dernier_p2p.deck import group as g
from dernier_p2p.deck.cards import card_index, deck_size, initial_deck
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.elgamal import Ciphertext, decode_ciphertexts
from dernier_p2p.deck.errors import BadElement, DeckError, MissingMessage
from dernier_p2p.deck.keys import KeyReveal, KeySecret, KeySetup, check_secret
from dernier_p2p.deck.proofs import Proof
from dernier_p2p.deck.shuffle import ShuffleProof, shuffle, verify_shuffle
from dernier_p2p.deck.tokens import Token, make_token, unmask, verify_token
from dernier_p2p.deck.transfer import (
    BadTransfer,
    Transfer,
    judge_complaint,
    open_box,
    receive_transfer,
    seal_transfer,
)

MESSAGE_FIELDS: dict[str, frozenset[str]] = {
    "key_commit": frozenset({"commit"}),
    "key_reveal": frozenset({"share", "xpub", "nonce", "proof"}),
    "shuffle": frozenset({"epoch", "deck", "proof"}),
    "tokens": frozenset({"tokens"}),
    "transfer": frozenset({"position", "to", "epk", "box", "commit"}),
    "peek": frozenset({"position", "to", "epk", "box", "commit"}),
    "complaint": frozenset({"ref", "plaintext"}),
    "secret": frozenset({"secret"}),
}
"""The fields of each message type besides ``type`` and ``seat``."""


class UnexpectedMessage(DeckError):
    """A message that the protocol does not call for at this point (named after its author)."""


class StateError(DeckError):
    """An operation that does not fit the current deck state (a caller's mistake)."""


class TransferDispute(DeckError):
    """A receiver complained of a box that only the end-of-hand reveal can judge."""


def shuffle_step(epoch: int) -> str:
    """The proof-context step of the shuffles of ``epoch`` (0: the deal, k: the k-th reshuffle)."""
    return "shuffle" if epoch == 0 else f"reshuffle/{epoch}"


@dataclass
class Slot:
    """One deck position: its final ciphertext and who may read it."""

    ct: Ciphertext
    epoch: int
    holder: int | None = None
    owner: int | None = None  # seat whose token is withheld from the public
    public: dict[int, bytes] = field(default_factory=dict)  # verified tokens by owner
    private: dict[int, Token] = field(default_factory=dict)  # tokens this seat got in boxes
    card: int | None = None  # the card index, once this seat can read it
    opened: bool = False
    peeked: bool = False  # a peek was called for (some seat may know the card)
    retired: bool = False  # its card went into a later epoch; no operation may name it


@dataclass(frozen=True)
class Box:
    """A transfer or peek box as recorded by every peer (``kind`` is the message type)."""

    kind: str
    transfer: Transfer
    owner: int  # whose token the box must hold


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class DeckTable:
    """The deck of one hand as seen by ``seat`` (``None`` for an observer)."""

    def __init__(
        self,
        game: bytes,
        hand: int,
        n: int,
        deck: str,
        seat: int | None = None,
        drbg: Drbg | None = None,
    ) -> None:
        self.game, self.hand, self.n, self.deck = game, hand, n, deck
        self.size = deck_size(deck)
        self.keys = KeySetup(game, hand, n)
        if seat is not None and (not _int(seat) or not 0 <= seat < n):
            raise ValueError("seat outside the table")
        if (seat is None) != (drbg is None):
            raise ValueError("a seat needs a Drbg; an observer has none")
        self.seat, self.drbg = seat, drbg
        self.secret = None if seat is None else KeySecret.generate(game, hand, seat, drbg)
        self.joint_key: bytes | None = None
        self.slots: list[Slot] = []
        self.epoch = -1  # epoch being shuffled or last shuffled
        self.turn: int | None = None  # seat due to shuffle, None when no shuffle runs
        self.pile: list[Ciphertext] = []  # deck of the running shuffle
        self.expect_tokens: dict[int, dict[int, int]] = {}  # position -> seat -> owner
        self.expect_boxes: dict[tuple[str, int, int], int] = {}  # (kind, pos, giver) -> to
        self.boxes: list[Box] = []  # in relay order
        self._unreturned: deque[tuple[dict, Box | None]] = deque()  # own, not back from relay
        self.complaints: list[tuple[int, int, bytes | None]] = []  # (ref, complainer, text)
        self.discards: list[int] = []  # opened cards not yet reshuffled
        self.secrets: dict[int, int] = {}
        self.ended = False
        self.started = False
        self.log: list[dict] = []

    # ------------------------------------------------------------------ queries
    def hand_positions(self) -> list[int]:
        """Positions held by this seat."""
        if self.seat is None:
            return []
        return [p for p, s in enumerate(self.slots) if s.holder == self.seat]

    def card(self, position: int) -> int | None:
        """The card at ``position`` if this seat can read it, else ``None``."""
        return self.slots[position].card

    def holder(self, position: int) -> int | None:
        return self.slots[position].holder

    @property
    def ready(self) -> bool:
        """True when the joint key is set and no shuffle is running."""
        return self.joint_key is not None and self.turn is None and not self.ended

    def pending(self) -> list[tuple[int, str]]:
        """Every message still owed: ``(seat, what)``, in seat order."""
        due: list[tuple[int, str]] = []
        if not self.keys.complete:
            what = "key_reveal" if self.keys.committed else "key_commit"
            due += [(s, what) for s in self.keys.missing()]
        if self.turn is not None:
            due.append((self.turn, f"shuffle epoch {self.epoch}"))
        for p, seats in self.expect_tokens.items():
            due += [(s, f"token for position {p}") for s in seats]
        for (kind, p, giver), to in self.expect_boxes.items():
            due.append((giver, f"{kind} of position {p} to seat {to}"))
        if self.ended:
            due += [(s, "secret") for s in range(self.n) if s not in self.secrets]
        return sorted(due)

    def require_complete(self) -> None:
        """:class:`MissingMessage` naming the first seat that still owes a message."""
        due = self.pending()
        if due:
            raise MissingMessage(f"still owed: {due[0][1]}", due[0][0])

    # ------------------------------------------------------------------ entry points
    def start(self) -> list[dict]:
        """Begin the hand: this seat's key commitment."""
        if self.started:
            raise StateError("hand already started")
        self.started = True
        if self.secret is None:
            return []
        commit = self.secret.commitment()
        self.keys.add_commitment(self.seat, commit)
        return self._emit({"type": "key_commit", "commit": commit}) + self._maybe_reveal()

    def receive(self, msg: Any, sender: int | None = None, *, verified: bool = False) -> list[dict]:
        """Apply a message from another seat; return this seat's messages now due.

        ``sender`` is the seat that signed the envelope, if known. ``verified``: the caller has
        already checked this message completely (see the module notes); only the state checks
        run. Any fault raises a :class:`DeckError` naming the author; the state is then
        unchanged (a complaint is recorded before its verdict is raised).

        This seat's own message, fed back as the relay returns it, must be one it made and that
        has not come back yet (:class:`UnexpectedMessage` otherwise); it changes no state but
        takes its place in the relay order.
        """
        seat = self._check_envelope(msg, sender)
        if seat == self.seat:
            return self._returned(msg)
        kind = msg["type"]
        handler = getattr(self, f"_on_{kind}")
        self.log.append(msg)
        try:
            return handler(seat, msg, verified)
        except DeckError:
            if kind != "complaint":
                self.log.pop()
            raise

    def returning(self, msg: Any) -> bool:
        """True if ``msg`` may be this seat's own message coming back from the relay: one of the
        own messages not yet returned has its type (see :meth:`receive`)."""
        return self._returning(msg) is not None

    def made(self, msg: Any) -> bool:
        """True if ``msg`` is exactly (field for field) one of this seat's own messages not yet
        returned by the relay: another table of this peer need not check it."""
        k = self._returning(msg)
        return k is not None and _same_wire(msg, self._unreturned[k][0])

    def _returning(self, msg: Any) -> int | None:
        """Index in the unreturned own messages of the one ``msg`` returns: the first that is
        exactly ``msg``, else the first of its type."""
        if not isinstance(msg, dict):
            return None
        for k, (own, _) in enumerate(self._unreturned):
            if _same_wire(msg, own):
                return k
        for k, (own, _) in enumerate(self._unreturned):
            if own["type"] == msg.get("type"):
                return k
        return None

    def _returned(self, msg: dict) -> list[dict]:
        """An own message back from the relay. If the relay delivered other content than this
        seat made (only possible with this seat's signing key), what it delivered is what
        every peer saw: the log and the box numbering take that."""
        k = self._returning(msg)
        if k is None:
            raise UnexpectedMessage("own message fed back that this seat did not make", self.seat)
        made, box = self._unreturned[k]
        del self._unreturned[k]
        here = made
        if not _same_wire(msg, made):
            if box is not None:
                box = Box(box.kind, Transfer.from_wire(self.seat, msg), box.owner)
            here = msg
        for i in range(len(self.log) - 1, -1, -1):  # move it to its place in relay order
            if self.log[i] is made:
                del self.log[i]
                self.log.append(here)
                break
        if box is not None:
            self.boxes.append(box)
        return []

    def apply(self, op: Any, *, answer: bool = True) -> list[dict]:
        """Apply an operation decided by the rules; return this seat's messages now due.

        ``answer=False`` keeps this seat's tokens and boxes due after it for a later
        :meth:`answer`, so that the operations of one record are answered together."""
        if not isinstance(op, dict) or op.get("op") not in {
            "deal", "peek", "open", "transfer", "reshuffle", "end"
        }:
            raise StateError(f"unknown operation {op!r}")
        if not self.keys.complete and op["op"] != "end":
            raise StateError("the key setup is not complete")
        self.log.append(dict(op))
        try:
            out = getattr(self, f"_op_{op['op']}")(op)
        except DeckError:
            self.log.pop()
            raise
        return (out + self._flush_after_op()) if answer else out

    def answer(self) -> list[dict]:
        """This seat's tokens and boxes due now (after operations applied with
        ``answer=False``): one ``tokens`` message with every token it owes, positions
        ascending, then its boxes by kind and position."""
        return self._flush_after_op()

    def deal(self, position: int, to: int) -> list[dict]:
        return self.apply({"op": "deal", "position": position, "to": to})

    def peek(self, position: int, to: int) -> list[dict]:
        return self.apply({"op": "peek", "position": position, "to": to})

    def open(self, position: int) -> list[dict]:
        return self.apply({"op": "open", "position": position})

    def transfer(self, position: int, to: int) -> list[dict]:
        return self.apply({"op": "transfer", "position": position, "to": to})

    def reshuffle(self, cards: list[int]) -> list[dict]:
        return self.apply({"op": "reshuffle", "cards": list(cards)})

    def reshuffle_positions(self, positions: list[int]) -> list[dict]:
        return self.apply({"op": "reshuffle", "positions": list(positions)})

    def end(self) -> list[dict]:
        return self.apply({"op": "end"})

    # ------------------------------------------------------------------ helpers
    def _emit(self, body: dict, box: Box | None = None) -> list[dict]:
        msg = {"type": body.pop("type"), "seat": self.seat, **body}
        self.log.append(msg)
        self._unreturned.append((msg, box))
        return [msg]

    def _check_envelope(self, msg: Any, sender: int | None) -> int:
        if not isinstance(msg, dict):
            raise BadElement("a deck message is a map", sender)
        seat = msg.get("seat")
        if not _int(seat) or not 0 <= seat < self.n:
            raise BadElement("message seat outside the table", sender)
        if sender is not None and sender != seat:
            raise BadElement("message seat differs from its signer", sender)
        kind = msg.get("type")
        if not isinstance(kind, str) or kind not in MESSAGE_FIELDS:
            raise BadElement(f"unknown message type {kind!r}", seat)
        if set(msg) != MESSAGE_FIELDS[kind] | {"type", "seat"}:
            raise BadElement(f"{kind} message has the wrong fields", seat)
        if not self.started:
            raise StateError("receive before start")
        return seat

    def _slot(self, position: Any, seat: int | None) -> Slot:
        if not _int(position) or not 0 <= position < len(self.slots):
            raise BadElement(f"no deck position {position!r}", seat)
        return self.slots[position]

    def _op_slot(self, op: dict) -> tuple[int, Slot]:
        p = op.get("position")
        if not _int(p) or not 0 <= p < len(self.slots):
            raise StateError(f"no deck position {p!r}")
        slot = self.slots[p]
        if slot.retired:
            raise StateError(f"position {p} was reshuffled into a later epoch")
        if slot.opened:
            raise StateError(f"position {p} is already open")
        if self.ended:
            raise StateError("the hand has ended")
        return p, slot

    def _op_seat(self, op: dict) -> int:
        to = op.get("to")
        if not _int(to) or not 0 <= to < self.n:
            raise StateError(f"no seat {to!r}")
        return to

    def _learn(self, p: int) -> None:
        """Finish decryption of position ``p`` if every token is known here."""
        slot = self.slots[p]
        own = set() if self.seat is None else {self.seat}
        known = len(slot.public.keys() | slot.private.keys() | own | self.secrets.keys())
        if slot.card is not None or known < self.n:
            return
        vals = dict(slot.public)
        for owner, tok in slot.private.items():
            vals.setdefault(owner, tok.value)
        if self.secret is not None:
            vals.setdefault(self.seat, g.mul(self.secret.x, slot.ct[0]))
        for s, x in self.secrets.items():
            if s not in vals:
                vals[s] = g.mul(x, slot.ct[0])
        if len(vals) == self.n:
            slot.card = card_index(self.deck, unmask(slot.ct, list(vals.values())))

    def _own_token(self, p: int) -> Token:
        assert self.secret is not None and self.drbg is not None
        slot = self.slots[p]
        return make_token(self.game, self.hand, self.seat, self.secret.x, p, slot.ct, self.drbg)

    # ------------------------------------------------------------------ key setup
    def _on_key_commit(self, seat: int, msg: dict, verified: bool) -> list[dict]:
        if self.keys.committed:
            raise UnexpectedMessage("key commitment after all were in", seat)
        self.keys.add_commitment(seat, msg["commit"])
        return self._maybe_reveal()

    def _maybe_reveal(self) -> list[dict]:
        if self.secret is None or not self.keys.committed or self.seat in self.keys.reveals:
            return []
        reveal = self.secret.reveal(self.drbg)
        self.keys.reveals[self.seat] = reveal
        out = self._emit({"type": "key_reveal", **reveal.to_wire()})
        return out + self._maybe_keys_done()

    def _on_key_reveal(self, seat: int, msg: dict, verified: bool) -> list[dict]:
        if not verified:
            self.keys.add_reveal(KeyReveal.from_wire(seat, msg))
            return self._maybe_keys_done()
        if not self.keys.committed:
            raise DeckError("key revealed before every seat committed", seat)
        if seat in self.keys.reveals:
            raise DeckError("second key reveal", seat)
        proof = Proof.from_wire(msg["proof"], seat)
        self.keys.reveals[seat] = KeyReveal(seat, msg["share"], msg["xpub"], msg["nonce"], proof)
        return self._maybe_keys_done()

    def _maybe_keys_done(self) -> list[dict]:
        if not self.keys.complete:
            return []
        self.joint_key = self.keys.joint_key()
        return self._begin_epoch(initial_deck(self.deck))

    # ------------------------------------------------------------------ shuffles
    def _begin_epoch(self, deck: list[Ciphertext]) -> list[dict]:
        self.epoch += 1
        self.pile = deck
        self.turn = 0
        return self._maybe_shuffle()

    def _context(self, step: str, seat: int) -> dict:
        return {"game": self.game, "hand": self.hand, "step": step, "seat": seat}

    def _maybe_shuffle(self) -> list[dict]:
        if self.turn is None or self.turn != self.seat:
            return []
        ctx = self._context(shuffle_step(self.epoch), self.seat)
        out_deck, proof = shuffle(self.joint_key, self.pile, self.drbg, ctx)
        msg = self._emit(
            {
                "type": "shuffle",
                "epoch": self.epoch,
                "deck": [list(ct) for ct in out_deck],
                "proof": proof.to_wire(),
            }
        )
        return msg + self._advance(out_deck)

    def _advance(self, out_deck: list[Ciphertext]) -> list[dict]:
        self.pile = out_deck
        self.turn += 1
        if self.turn < self.n:
            return self._maybe_shuffle()
        self.turn = None
        self.slots.extend(Slot(ct, self.epoch) for ct in self.pile)
        self.pile = []
        return []

    def _on_shuffle(self, seat: int, msg: dict, verified: bool) -> list[dict]:
        if self.turn != seat:
            raise UnexpectedMessage("shuffle out of turn", seat)
        if msg["epoch"] != self.epoch:
            raise UnexpectedMessage("shuffle for another epoch", seat)
        deck = msg["deck"]
        m = len(self.pile)
        if not isinstance(deck, list) or len(deck) != m:
            raise BadElement(f"shuffled deck must hold {m} cards", seat)
        if verified:
            return self._advance([(ct[0], ct[1]) for ct in deck])
        out_deck = decode_ciphertexts(deck, seat)
        proof = ShuffleProof.from_wire(msg["proof"], m, seat)
        ctx = self._context(shuffle_step(self.epoch), seat)
        verify_shuffle(self.joint_key, self.pile, out_deck, proof, ctx, seat)
        return self._advance(out_deck)

    def _op_reshuffle(self, op: dict) -> list[dict]:
        if not self.ready:
            raise StateError("reshuffle while a shuffle runs or before the keys")
        if ("cards" in op) == ("positions" in op):
            raise StateError("reshuffle takes either cards or positions")
        if "positions" in op:
            return self._reshuffle_positions(op["positions"])
        cards = op["cards"]
        if not isinstance(cards, list) or not cards:
            raise StateError("reshuffle needs a non-empty list of cards")
        left = list(self.discards)
        for k in cards:
            if not _int(k) or k not in left:
                raise StateError(f"card {k!r} is not an open discard")
            left.remove(k)
        live = self._open_discards()
        for k in cards:
            self.slots[live.pop(k)].retired = True
        self.discards = left
        return self._begin_epoch(initial_deck(self.deck, cards))

    def _open_discards(self) -> dict[int, int]:
        """Card index -> the opened, not retired position that shows it (the last if several)."""
        return {s.card: p for p, s in enumerate(self.slots) if s.opened and not s.retired
                and s.card is not None and p not in self.expect_tokens}

    def reshufflable(self, p: int) -> bool:
        """True if position ``p`` may go into a reshuffle by positions now: not retired, no
        holder, and either opened with no token or box still owed for it, or never dealt,
        opened or peeked."""
        if not _int(p) or not 0 <= p < len(self.slots):
            return False
        slot = self.slots[p]
        if slot.retired or slot.holder is not None:
            return False
        if slot.opened:
            owed = p in self.expect_tokens or any(k[1] == p for k in self.expect_boxes)
            return not owed and slot.card is not None
        return slot.owner is None and not slot.peeked and not slot.public

    def _reshuffle_positions(self, positions: Any) -> list[dict]:
        if not isinstance(positions, list) or not positions:
            raise StateError("reshuffle needs a non-empty list of positions")
        for p in positions:
            if not _int(p) or not 0 <= p < len(self.slots):
                raise StateError(f"no deck position {p!r}")
            if not self.reshufflable(p):
                raise StateError(f"position {p} cannot be reshuffled")
        if len(set(positions)) != len(positions):
            raise StateError("a position listed twice in a reshuffle")
        left = list(self.discards)
        for p in positions:
            slot = self.slots[p]
            if slot.opened:
                left.remove(slot.card)
        for p in positions:
            self.slots[p].retired = True
        self.discards = left
        return self._begin_epoch([self.slots[p].ct for p in positions])

    # ------------------------------------------------------------------ tokens
    def _op_deal(self, op: dict) -> list[dict]:
        p, slot = self._op_slot(op)
        to = self._op_seat(op)
        if slot.holder is not None or slot.owner is not None:
            raise StateError(f"position {p} was dealt already")
        if to in slot.public:
            raise StateError(f"position {p} cannot be dealt privately any more")
        slot.holder = slot.owner = to
        due = {j: j for j in range(self.n) if j != to and j not in slot.public}
        if due:
            self.expect_tokens.setdefault(p, {}).update(due)
        self._learn(p)
        return []

    def _op_open(self, op: dict) -> list[dict]:
        p, slot = self._op_slot(op)
        due = self.expect_tokens.setdefault(p, {})
        if slot.holder is not None and slot.owner is not None and slot.owner not in slot.public:
            due[slot.holder] = slot.owner  # own token, or the forwarded token of the owner
        for j in range(self.n):
            if j not in slot.public and j not in due.values():
                due[j] = j
        slot.holder = None
        slot.opened = True  # no further operation; complete once the tokens are in
        if not due:
            del self.expect_tokens[p]
            self._opened(p)
        return []

    def _flush_after_op(self) -> list[dict]:
        """This seat's tokens and boxes due after an operation."""
        if self.seat is None:
            return []
        items = []
        for p, due in sorted(self.expect_tokens.items()):
            owner = due.get(self.seat)
            if owner is None:
                continue
            if owner == self.seat:
                items.append(self._own_token(p))
            elif owner in self.slots[p].private:
                items.append(self.slots[p].private[owner])
            # else: this seat never got a sound token for the card (it complained); it stays owed
        out: list[dict] = []
        if items:
            msg = {"type": "tokens", "tokens": [t.to_wire() for t in items]}
            out += self._emit(msg)
            for t in items:
                self._accept_token(self.seat, t)
        for (kind, p, giver), to in sorted(self.expect_boxes.items()):
            if giver == self.seat and self._can_give(kind, p):
                out += self._send_box(kind, p, to)
            # else: this seat never got a sound token to pass on (it complained); it stays owed
        return out

    def _can_give(self, kind: str, p: int) -> bool:
        """True if this seat holds the token a box of ``kind`` for position ``p`` must carry."""
        owner = self.slots[p].owner
        return kind == "peek" or owner == self.seat or owner in self.slots[p].private

    def _on_tokens(self, seat: int, msg: dict, verified: bool) -> list[dict]:
        items = msg["tokens"]
        if not isinstance(items, list) or not items:
            raise BadElement("tokens must be a non-empty list", seat)
        if verified:
            toks = [
                Token(o["owner"], o["position"], o["token"], Proof.from_wire(o["proof"], seat))
                for o in items
            ]
        else:
            toks = [Token.from_wire(obj, seat) for obj in items]
        if len({t.position for t in toks}) != len(toks):
            raise BadElement("two tokens for one position", seat)
        for t in toks:
            slot = self._slot(t.position, seat)
            owner = self.expect_tokens.get(t.position, {}).get(seat)
            if owner is None:
                raise UnexpectedMessage(f"token for position {t.position} not due", seat)
            if t.owner != owner:
                raise UnexpectedMessage(f"token of seat {t.owner} where {owner}'s is due", seat)
            if verified:
                continue
            share = self.keys.reveals[owner].share
            verify_token(self.game, self.hand, share, slot.ct, t, t.position, blame=seat)
        for t in toks:
            self._accept_token(seat, t)
        return []

    def _accept_token(self, seat: int, t: Token) -> None:
        p = t.position
        slot = self.slots[p]
        slot.public[t.owner] = t.value
        due = self.expect_tokens[p]
        del due[seat]
        if not due:
            del self.expect_tokens[p]
            if slot.opened:
                self._opened(p)
        self._learn(p)

    def _opened(self, p: int) -> None:
        slot = self.slots[p]
        card = card_index(self.deck, unmask(slot.ct, list(slot.public.values())))
        if slot.card is not None and slot.card != card:
            raise DeckError(f"position {p} opened as another card than this seat read")
        slot.card = card
        self.discards.append(card)

    # ------------------------------------------------------------------ boxes
    def _op_peek(self, op: dict) -> list[dict]:
        p, slot = self._op_slot(op)
        to = self._op_seat(op)
        if slot.holder is not None:
            raise StateError(f"position {p} is held; only stock cards are peeked")
        slot.peeked = True
        for j in range(self.n):
            if j != to and j not in slot.public:
                self.expect_boxes[("peek", p, j)] = to
        return []

    def _op_transfer(self, op: dict) -> list[dict]:
        p, slot = self._op_slot(op)
        to = self._op_seat(op)
        if slot.holder is None or slot.holder == to:
            raise StateError(f"position {p} is not held by another seat than {to}")
        if p in self.expect_tokens or any(k[1] == p for k in self.expect_boxes):
            raise StateError(f"position {p} has messages outstanding")
        self.expect_boxes[("transfer", p, slot.holder)] = to
        return []

    def _send_box(self, kind: str, p: int, to: int) -> list[dict]:
        slot = self.slots[p]
        if kind == "peek":
            token = self._own_token(p)
        elif slot.owner == self.seat:
            token = self._own_token(p)
        elif slot.owner in slot.private:
            token = slot.private[slot.owner]
        else:
            raise StateError(f"this seat cannot pass on position {p}: it never got its token")
        xpub = self.keys.reveals[to].xpub
        t, _ = seal_transfer(self.game, self.hand, self.seat, to, xpub, token, self.drbg)
        box = self._record_box(kind, t)
        return self._emit({"type": kind, **t.to_wire()}, box)

    def _record_box(self, kind: str, t: Transfer) -> Box:
        """Apply a box; a received one takes the next number, an own one its number when the
        relay returns it."""
        slot = self.slots[t.position]
        owner = t.giver if kind == "peek" else slot.owner
        del self.expect_boxes[(kind, t.position, t.giver)]
        box = Box(kind, t, owner)
        if t.giver != self.seat:
            self.boxes.append(box)
        if kind == "transfer":
            slot.holder = t.receiver
        return box

    def _on_box(self, kind: str, seat: int, msg: dict) -> list[dict]:
        t = Transfer.from_wire(seat, msg)
        slot = self._slot(t.position, seat)
        if self.expect_boxes.get((kind, t.position, seat)) != t.receiver:
            what = f"{kind} of position {t.position} to seat {t.receiver}"
            raise UnexpectedMessage(f"{what} not due", seat)
        ref = len(self.boxes)
        self._record_box(kind, t)
        if self.seat != t.receiver:
            return []
        box = self.boxes[ref]
        share = self.keys.reveals[box.owner].share
        priv = self.secret.transfer_private
        try:
            token, _ = receive_transfer(
                self.game, self.hand, t, priv, box.owner, share, slot.ct
            )
        except BadTransfer:
            try:
                text: bytes | None = open_box(self.game, self.hand, t, priv)
            except BadTransfer:
                text = None
            self.complaints.append((ref, self.seat, text))
            return self._emit({"type": "complaint", "ref": ref, "plaintext": text})
        slot.private[box.owner] = token
        self._learn(t.position)
        return []

    def _on_transfer(self, seat: int, msg: dict, verified: bool) -> list[dict]:
        return self._on_box("transfer", seat, msg)

    def _on_peek(self, seat: int, msg: dict, verified: bool) -> list[dict]:
        return self._on_box("peek", seat, msg)

    def _on_complaint(self, seat: int, msg: dict, verified: bool) -> list[dict]:
        ref, text = msg["ref"], msg["plaintext"]
        if not _int(ref) or not 0 <= ref < len(self.boxes):
            raise BadElement("complaint about no box", seat)
        if text is not None and not isinstance(text, bytes):
            raise BadElement("complaint plaintext must be bytes or nil", seat)
        box = self.boxes[ref]
        if box.transfer.receiver != seat:
            raise UnexpectedMessage("complaint about a box sent to another seat", seat)
        self.complaints.append((ref, seat, text))
        if verified:  # judged by the caller: public data cannot settle it
            raise TransferDispute(f"seat {seat} disputes box {ref}; the end-of-hand reveal decides")
        raise self.judge(ref)

    def judge(self, ref: int) -> DeckError:
        """The verdict, from public data, on the complaint about box ``ref``."""
        box = self.boxes[ref]
        text = next(c[2] for c in self.complaints if c[0] == ref)
        slot = self.slots[box.transfer.position]
        share = self.keys.reveals[box.owner].share
        t = box.transfer
        fault = judge_complaint(self.game, self.hand, t, text, box.owner, share, slot.ct)
        if fault is None:
            return TransferDispute(
                f"seat {t.receiver} disputes box {ref} from seat {t.giver}; "
                "the end-of-hand reveal decides"
            )
        if fault == t.receiver:
            return BadTransfer(f"false complaint about box {ref}", fault)
        return BadTransfer(f"box {ref} carries a bad token", fault)

    # ------------------------------------------------------------------ end of hand
    def _op_end(self, op: dict) -> list[dict]:
        if self.ended:
            raise StateError("the hand has ended already")
        self.ended = True
        if self.secret is None or self.seat not in self.keys.reveals:
            return []
        self.secrets[self.seat] = self.secret.x
        return self._emit({"type": "secret", "secret": g.encode_scalar(self.secret.x)})

    def _on_secret(self, seat: int, msg: dict, verified: bool) -> list[dict]:
        if not self.ended:
            raise UnexpectedMessage("secret revealed before the end of the hand", seat)
        if seat in self.secrets:
            raise UnexpectedMessage("second secret", seat)
        if seat not in self.keys.reveals:
            raise UnexpectedMessage("secret of a seat that never revealed its key", seat)
        try:
            x = g.decode_scalar(msg["secret"])
        except g.InvalidScalar as exc:
            raise BadElement(f"secret: {exc}", seat) from None
        if not verified:
            check_secret(self.game, self.hand, self.keys.reveals[seat], x)
        self.secrets[seat] = x
        return []

    def all_cards(self) -> list[int]:
        """Every position's card, computed from the revealed secrets (after the hand)."""
        if len(self.secrets) < self.n:
            miss = [s for s in range(self.n) if s not in self.secrets]
            raise MissingMessage(f"secrets missing from seats {miss}", miss[0])
        xs = sum(self.secrets.values()) % g.ORDER
        out = []
        for slot in self.slots:  # every secret is public now: c2 - xs*c1 on public scalars
            plain = g.public_multi_mul([1, g.ORDER - xs], [slot.ct[1], slot.ct[0]])
            out.append(card_index(self.deck, plain))
        return out


def deliver(tables: list[DeckTable], msgs: list[dict]) -> list[dict]:
    """Deliver ``msgs`` (and every reply they cause) to every table in one global order, as
    the host's relay would (the author's table gets its own message back); return every
    message delivered. For local play, tests and benchmarks: all tables live in one process."""
    queue = deque(msgs)
    done: list[dict] = []
    while queue:
        msg = queue.popleft()
        done.append(msg)
        for t in tables:
            queue.extend(t.receive(msg))
    return done


def apply_all(tables: list[DeckTable], op: dict) -> list[dict]:
    """Apply ``op`` at every table, then deliver the messages it causes."""
    out: list[dict] = []
    for t in tables:
        out.extend(t.apply(op))
    return deliver(tables, out)


def start_all(tables: list[DeckTable]) -> list[dict]:
    """Start every table and run the key setup and the first shuffles to completion."""
    out: list[dict] = []
    for t in tables:
        out.extend(t.start())
    return deliver(tables, out)


def _same_wire(a: Any, b: Any) -> bool:
    """Equality of two wire values, lists and tuples alike (as canonical msgpack sees them)."""
    if a is b:
        return True
    if isinstance(a, list | tuple):
        return (
            isinstance(b, list | tuple)
            and len(a) == len(b)
            and all(_same_wire(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_same_wire(v, b[k]) for k, v in a.items())
        )
    return type(a) is type(b) and a == b
