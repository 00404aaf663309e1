"""Live cheats: a match replayed with a fault injected by a seat (an illegal play, a bad
or unopenable box, a false complaint), correctly signed and sequenced."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from dernier_p2p.deck.keys import x25519_public
from dernier_p2p.deck.transfer import Transfer, box_plaintext, open_box
from dernier_p2p.protocol.local import LocalTable
from dernier_p2p.protocol.messages import move_to_body
from dernier_p2p.rules import Play, apply, to_act
from dernier_p2p.rules.cards import Suit
from dernier_p2p.rules.errors import IllegalMove
from dernier_p2p.wire.canonical import decode, encode
from dernier_p2p.wire.hashing import digest
from interop.gen.forge import add, flip, resign_env
from interop.gen.scenarios import Base, drive, first_base


def build(bases: dict[str, Base]) -> None:
    first = first_base(bases)
    illegal_play_case(first, first.name)
    for name, kind in (("moderno-3p", "transfer"), ("originale-3p", "peek")):
        if name in bases:
            bad_box_case(bases[name], kind)
            false_complaint_case(bases[name])
            if name == "moderno-3p":
                unopenable_box_case(bases[name], kind)
    for name in ("moderno-3p", "originale-3p", "standard-3p"):
        if name in bases and name != first.name:
            illegal_play_case(bases[name], name)


def illegal_play_case(b: Base, tag: str) -> None:
    """Replay ``b``'s match; at the first chance the seat to act plays a held card that does
    not match (signed and sequenced correctly): once the card opens every peer refuses it. Where
    the rules take a card that does not match as a penalised error (``originale``), the seat
    plays a held card naming a suit that the card cannot name instead."""
    injected: dict[str, Any] = {}
    penalised = b.sc.variant == "originale"
    rule = "cannot-name-suit" if penalised else "must-match"

    def stop(table: LocalTable, rnd: int) -> bool:
        if rnd < 2:
            return False
        s0 = table.sessions[0]
        if not s0.quiescent:
            return False
        seat = to_act(s0.state)
        if seat is None:
            return False
        sess = table.sessions[seat]
        for slot, face in sorted(sess.view.items()):
            if slot not in sess.state.hands[seat]:
                continue
            mv = Play(seat, slot, face, Suit.GREEN if penalised else None)
            try:
                apply(sess.state, mv)
            except IllegalMove as exc:
                if exc.rule != rule:
                    continue
                injected.update(seat=seat, k=len(table.records))
                body = move_to_body(mv, sess.state.hand_number)
                table.send(sess.sign(body))
                return True
        return False

    run = drive(b.sc, b.trial, stop)
    if penalised:
        case = (f"{tag}-play-names-no-suit", "7.4",
                "a held card played naming a suit it cannot name, correctly signed and "
                "sequenced; refused when its tokens reveal the face (a card that does not "
                "match is a penalised error in this variant, not a refusal)",
                ["IllegalMove", "LiveCheat"])
    else:
        case = (f"{tag}-play-does-not-match", "7.4",
                "a held card that does not match, correctly signed and sequenced; refused when "
                "its tokens reveal the face", ["IllegalMove", "LiveCheat"])
    _add_injected(b, run, injected, f"{tag}: no illegal play injected", case, "ILLEGAL_MOVE",
                  injected.get("seat", -1))


def _add_injected(
    b: Base, run: Any, seen: dict[str, Any], missing: str, case: tuple, code: str, seat: int
) -> None:
    """Add the case cut from a replay of ``b`` at the record where a cheat was injected
    (``seen["k"]``), checking that the replay matched the recording up to there; ``case`` is
    (id, section, comment, flags). Report ``missing`` when nothing was injected."""
    if run.error is None or not seen:
        print(f"  {missing} ({run.error})", file=sys.stderr)
        return
    recs = run.table.records
    k = seen["k"]
    assert [encode(x) for x in recs[:k]] == b.raw[:k], "the replay left the recorded match"
    add(*case, b, k, recs[k:], code, seat)


def _box_for(table: LocalTable, giver: int, to: int, hand: int, position: int,
             plaintext: bytes, eph: bytes) -> dict:
    """The wire fields of a box from ``giver`` to ``to`` holding ``plaintext``."""
    rpub = x25519_public(table.sessions[to].mine.secret.transfer_private)
    t = box_plaintext(table.game, hand, giver, to, rpub, position, plaintext, eph)
    return t.to_wire()


def _plaintext(table: LocalTable, body: dict, giver: int) -> bytes:
    to = body["to"]
    t = Transfer(giver, to, body["position"], body["epk"], body["box"], body["commit"])
    return open_box(table.game, body["hand"], t, table.sessions[to].mine.secret.transfer_private)


def bad_box_case(b: Base, kind: str) -> None:
    """Replay ``b``'s match; the first ``kind`` box holds a token with a broken proof (the box
    opens and matches its commitment). Its receiver complains with the plaintext, and every peer
    names the giver."""
    seen: dict[str, Any] = {}

    def tamper(table: LocalTable) -> Callable[[dict], dict]:
        def hook(env: dict) -> dict:
            body = env["body"]
            if seen or body["type"] != kind:
                return env
            giver = env["seat"]
            plain = decode(_plaintext(table, body, giver))
            plain["proof"] = {**plain["proof"], "s": flip(plain["proof"]["s"])}
            eph = digest("dernier-p2p/interop-eph", [b.name, kind])
            fields = _box_for(table, giver, body["to"], body["hand"], body["position"],
                              encode(plain), eph)
            seen.update(k=len(table.records), giver=giver)
            return resign_env(table, {**env, "body": {**body, **fields}}, signer=giver)

        return hook

    run = drive(b.sc, b.trial, tamper=tamper)
    _add_injected(
        b, run, seen, f"{b.name}: no bad {kind} box injected",
        (f"{b.name}-{kind}-box-bad-token", "13",
         f"a {kind} box whose token proof is broken; the receiver complains with the plaintext "
         "and the giver is named", ["Deck", "BadTransfer", "Complaint", "LiveCheat"]),
        "DECK_FAULT", seen.get("giver", -1),
    )


def unopenable_box_case(b: Base, kind: str) -> None:
    """Replay ``b``'s match; the first ``kind`` box is altered so that it does not open. The
    receiver complains with no plaintext; nobody can judge that before the secrets are
    revealed, so the hand stops, the secrets follow and the audit names the giver."""
    seen: dict[str, Any] = {}

    def tamper(table: LocalTable) -> Callable[[dict], dict]:
        def hook(env: dict) -> dict:
            body = env["body"]
            if seen or body["type"] != kind:
                return env
            seen.update(k=len(table.records), giver=env["seat"])
            return resign_env(table, {**env, "body": {**body, "box": flip(body["box"], 3)}})

        return hook

    run = drive(b.sc, b.trial, tamper=tamper)
    _add_injected(
        b, run, seen, f"{b.name}: no unopenable {kind} box injected",
        (f"{b.name}-{kind}-box-unopenable", "16",
         f"a {kind} box that does not open: the receiver's complaint is a dispute, which stops "
         "the hand; the secrets follow and the audit names the giver",
         ["Deck", "BadTransfer", "Complaint", "Audit", "LiveCheat"]),
        "DECK_FAULT", seen.get("giver", -1),
    )


def false_complaint_case(b: Base) -> None:
    """Replay ``b``'s match; after the first box, its receiver complains although the box is
    sound (quoting the true plaintext): the complainer is named."""
    seen: dict[str, Any] = {}

    def stop(table: LocalTable, rnd: int) -> bool:
        pub = table.sessions[0].pub
        if pub is None or not pub.boxes:
            return False
        ref = len(pub.boxes) - 1
        t = pub.boxes[ref].transfer
        rec = next(r for r in reversed(table.records)
                   if r["env"]["body"]["type"] in ("transfer", "peek")
                   and r["env"]["seat"] == t.giver and r["env"]["body"]["position"] == t.position)
        text = _plaintext(table, rec["env"]["body"], t.giver)
        sess = table.sessions[t.receiver]
        body = {"type": "complaint", "hand": pub.hand, "ref": ref, "plaintext": text}
        seen.update(k=len(table.records), seat=t.receiver)
        table.send(sess.sign(body))
        return True

    run = drive(b.sc, b.trial, stop)
    _add_injected(
        b, run, seen, f"{b.name}: no false complaint injected",
        (f"{b.name}-false-complaint", "13",
         "a receiver complains about a sound box, quoting its true plaintext",
         ["Deck", "BadTransfer", "Complaint", "LiveCheat"]),
        "DECK_FAULT", seen.get("seat", -1),
    )
