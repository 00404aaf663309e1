"""The offline auditor: replay a hand's recorded deck messages and operations, check everything,
and name the seat at fault.

The record is the list :attr:`DeckTable.log` keeps (messages with ``"type"``, operations with
``"op"``, in the order the host relayed them). An observer :class:`DeckTable` replays it, which
checks every commitment, proof, token and reveal as it goes. After the end-of-hand secrets it

* decrypts every position with ``x = sum x_i`` and checks each shuffle epoch holds exactly the
  cards it was given (epoch 0 every card, a reshuffle by cards the listed discards, a
  reshuffle by positions the cards those positions decrypt to);
* checks every published token equals ``x_j*c1`` (on the compiled group arithmetic all at once
  first, by a random linear combination; one by one when that fails) and every opened card its
  decryption;
* opens every transfer and peek box with the receiver's re-derived X25519 key and checks the
  commitment, the owner and the token proof, naming the giver of a bad box, or the complainer
  of a sound one.

:func:`audit` is the offline auditor: it has only the record and checks everything once.
:func:`audit_table` audits an observer table that was fed the hand live and has therefore
checked every proof, token and secret already: it only makes the checks above, which need the
secrets.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

from dernier_p2p.deck import group as g
from dernier_p2p.deck.cards import NotACard, deck_size
from dernier_p2p.deck.errors import DeckError, MissingMessage
from dernier_p2p.deck.keys import transfer_private_key
from dernier_p2p.deck.table import DeckTable, TransferDispute
from dernier_p2p.deck.transfer import (
    BadTransfer,
    check_transfer_token,
    open_box,
    parse_plaintext,
)


@dataclass
class AuditReport:
    """What the audit found: every position's card (once secrets are in) and every fault."""

    cards: list[int] | None = None
    opened: dict[int, int] = field(default_factory=dict)
    faults: list[DeckError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.faults

    def raise_first(self) -> None:
        """Raise the first fault found, if any."""
        if self.faults:
            raise self.faults[0]


def audit(game: bytes, hand: int, n: int, deck: str, log: list[dict]) -> AuditReport:
    """Replay ``log`` and check the whole hand; faults are collected in the report."""
    report = AuditReport()
    verdicts: list[DeckError] = []  # complaint verdicts from public data, superseded by boxes
    obs = DeckTable(game, hand, n, deck)
    obs.start()
    for entry in log:
        try:
            if isinstance(entry, dict) and "op" in entry:
                obs.apply(entry)
            else:
                obs.receive(entry)
        except (BadTransfer, TransferDispute) as exc:
            if not isinstance(entry, dict) or entry.get("type") != "complaint":
                report.faults.append(exc)
                return report
            if not isinstance(exc, TransferDispute):
                verdicts.append(exc)
        except DeckError as exc:
            report.faults.append(exc)
            return report
    return _after_replay(obs, report, verdicts)


def audit_table(obs: DeckTable, opened: Collection[int] = ()) -> AuditReport:
    """Audit the hand an observer table (``seat=None``) was fed live, message by message (every
    message it accepted was checked then; a message it refused stopped the hand). Only the
    checks that need the secrets run; the report is the one :func:`audit` gives for the
    table's log. ``opened``: numbers of boxes this peer opened live and found sound (boxes to
    its own seat that it did not complain of); they are not opened again."""
    if obs.seat is not None:
        raise ValueError("audit_table takes an observer table, not a seat's")
    verdicts = []  # complaints public data settled (the live table raised their verdicts)
    for ref, _, _ in obs.complaints:
        verdict = obs.judge(ref)
        if not isinstance(verdict, TransferDispute):
            verdicts.append(verdict)
    return _after_replay(obs, AuditReport(), verdicts, frozenset(opened))


def _after_replay(
    obs: DeckTable,
    report: AuditReport,
    verdicts: list[DeckError],
    opened: frozenset[int] = frozenset(),
) -> AuditReport:
    report.opened = {p: s.card for p, s in enumerate(obs.slots) if s.opened and s.card is not None}
    if obs.pending() or not obs.ended:
        report.faults.extend(verdicts)
        if obs.pending():
            seat, what = obs.pending()[0]
            report.faults.append(MissingMessage(f"still owed: {what}", seat))
        return report
    _check_deal(obs, report)
    _check_boxes(obs, report, opened)
    return report


def _check_deal(obs: DeckTable, report: AuditReport) -> None:
    xs = obs.secrets
    try:
        cards = obs.all_cards()
    except NotACard as exc:
        report.faults.append(DeckError(f"a position decrypts to no card: {exc.reason}"))
        return
    report.cards = cards
    # each epoch holds exactly its input cards
    inputs = _epoch_inputs(obs, cards)
    for epoch, expected in enumerate(inputs):
        got = [c for c, s in zip(cards, obs.slots, strict=True) if s.epoch == epoch]
        if Counter(got) != Counter(expected):
            report.faults.append(DeckError(f"shuffle epoch {epoch} does not hold its cards"))
    tokens_hold = g.FAST and _tokens_hold(obs)
    for p, slot in enumerate(obs.slots):
        for seat, tok in () if tokens_hold else slot.public.items():
            if tok != g.mul(xs[seat], slot.ct[0]):
                report.faults.append(DeckError(f"token for position {p} is wrong", seat))
        if slot.opened and slot.card != cards[p]:
            report.faults.append(DeckError(f"position {p} was opened as the wrong card"))


def _tokens_hold(obs: DeckTable) -> bool:
    """True when every published token ``T = x_j*c1`` holds, checked at once: ``sum_k w_k*(T_k -
    x_k*c1_k) = O`` with fresh random 128-bit weights (the secrets are public by now). False
    when one is wrong, except with probability at most 2^-128; the tokens are then checked one
    by one, which names each wrong one."""
    xs = obs.secrets
    scalars: list[int] = []
    points: list[bytes] = []
    for slot in obs.slots:
        for seat, tok in slot.public.items():
            w = int.from_bytes(os.urandom(16), "little")
            scalars += (w, -w * xs[seat])
            points += (tok, slot.ct[0])
    return g.public_multi_mul(scalars, points) == g.IDENTITY


def _epoch_inputs(obs: DeckTable, cards: list[int]) -> list[list[int]]:
    """The input cards of every epoch, given every position's decrypted card."""
    inputs = [list(range(deck_size(obs.deck)))]
    for entry in obs.log:
        if entry.get("op") != "reshuffle":
            continue
        if "positions" in entry:
            inputs.append([cards[p] for p in entry["positions"]])
        else:
            inputs.append(list(entry["cards"]))
    return inputs


def _check_boxes(obs: DeckTable, report: AuditReport, opened: frozenset[int]) -> None:
    complained = {ref: seat for ref, seat, _ in obs.complaints}
    for ref, box in enumerate(obs.boxes):
        if ref in opened and ref not in complained:
            continue
        t = box.transfer
        priv = transfer_private_key(obs.game, obs.hand, t.receiver, obs.secrets[t.receiver])
        slot = obs.slots[t.position]
        share = obs.keys.reveals[box.owner].share
        try:
            plain = open_box(obs.game, obs.hand, t, priv)
            try:
                token = parse_plaintext(obs.game, obs.hand, t, plain)
            except BadTransfer as exc:
                raise BadTransfer(exc.reason, t.giver) from None
            check_transfer_token(obs.game, obs.hand, t, token, box.owner, share, slot.ct)
        except BadTransfer as exc:
            report.faults.append(BadTransfer(f"box {ref}: {exc.reason}", t.giver))
            continue
        if ref in complained:
            report.faults.append(BadTransfer(f"false complaint about box {ref}", t.receiver))
