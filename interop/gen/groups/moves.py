"""Moves the rules refuse and cards not held (section 7.4), derived from every match."""

from __future__ import annotations

from interop.gen.forge import add, as_record, new_env, with_body
from interop.gen.scenarios import Base


def build(bases: dict[str, Base]) -> None:
    for name, b in bases.items():
        if not b.sc.whole:
            move_cases(b, name)


def move_cases(b: Base, tag: str) -> None:
    n = len(b.identities)
    dk = b.move("draw")
    pk = b.move("play")
    if dk is not None:
        r = b.records[dk]
        s, body = r["env"]["seat"], r["env"]["body"]
        t = (s + 1) % n
        add(f"{tag}-draw-out-of-turn", "7.4", "a seat draws when it is not its turn",
            ["IllegalMove", "OutOfTurn"], b, dk, [as_record(b, dk, new_env(b, dk, t, body))],
            "ILLEGAL_MOVE", t)
        add(f"{tag}-pass-before-draw", "7.4", "a pass before drawing",
            ["IllegalMove"], b, dk, [with_body(b, dk, {**body, "move": "pass"})],
            "ILLEGAL_MOVE", s)
        add(f"{tag}-name-suit-not-due", "7.4", "naming a suit when none is to be named",
            ["IllegalMove"], b, dk, [with_body(b, dk, {"type": "move", "hand": body["hand"],
                                                       "move": "name_suit", "suit": 1})],
            "ILLEGAL_MOVE", s)
        add(f"{tag}-declare-not-owed", "7.4", "a declaration nobody owes",
            ["IllegalMove", "Declaration"], b, dk,
            [with_body(b, dk, {"type": "move", "hand": body["hand"], "move": "declare"})],
            "ILLEGAL_MOVE", s)
        add(f"{tag}-move-other-hand", "7.4", "a move for the next hand",
            ["IllegalMove"], b, dk, [with_body(b, dk, {**body, "hand": body["hand"] + 1})],
            "ILLEGAL_MOVE", s)
        add(f"{tag}-hand-size-not-due", "7.4", "choosing a hand size during play",
            ["IllegalMove"], b, dk, [with_body(b, dk, {"type": "move", "hand": body["hand"],
                                                       "move": "hand_size", "size": 5})],
            "ILLEGAL_MOVE", s)
        add(f"{tag}-catch-nobody", "7.4", "a catch when nobody owes a declaration",
            ["IllegalMove", "Catch"], b, dk,
            [with_body(b, dk, {"type": "move", "hand": body["hand"], "move": "catch",
                               "target": t})], "ILLEGAL_MOVE", s)
        add(f"{tag}-cut-not-due", "7.4", "a cut during play", ["IllegalMove"], b, dk,
            [with_body(b, dk, {"type": "move", "hand": body["hand"], "move": "cut",
                               "keep": False})], "ILLEGAL_MOVE", s)
    hk = b.move("hand_size")
    if hk is not None:
        r = b.records[hk]
        s, body = r["env"]["seat"], r["env"]["body"]
        add(f"{tag}-hand-size-out-of-range", "7.4", "the dealer chooses 4 cards (5 to 9 allowed)",
            ["IllegalMove"], b, hk, [with_body(b, hk, {**body, "size": 4})], "ILLEGAL_MOVE", s)
        t = (s + 1) % n
        add(f"{tag}-hand-size-by-other", "7.4", "a seat that is not the dealer chooses",
            ["IllegalMove", "OutOfTurn"], b, hk, [as_record(b, hk, new_env(b, hk, t, body))],
            "ILLEGAL_MOVE", t)
    ck = b.move("cut")
    if ck is not None:
        r = b.records[ck]
        s, body = r["env"]["seat"], r["env"]["body"]
        t = next(x for x in range(n) if x != s)
        add(f"{tag}-cut-by-other", "7.4", "a seat that is not the cutter cuts",
            ["IllegalMove", "OutOfTurn"], b, ck, [as_record(b, ck, new_env(b, ck, t, body))],
            "ILLEGAL_MOVE", t)
    if pk is not None:
        r = b.records[pk]
        s, body = r["env"]["seat"], r["env"]["body"]
        add(f"{tag}-play-slot-not-held", "7.4", "a play of a slot no seat holds",
            ["NotHeld", "CardNotHeld"], b, pk, [with_body(b, pk, {**body, "slot": 60000})],
            "NOT_HELD", s)
        pk2 = b.move("play", pk + 1)
        if pk2 is not None:
            add(f"{tag}-play-discarded-slot", "7.4", "a play of a card already on the pile",
                ["NotHeld", "CardNotHeld", "Replay"], b, pk2,
                [with_body(b, pk2, {**b.records[pk2]["env"]["body"], "slot": body["slot"]})],
                "NOT_HELD", b.records[pk2]["env"]["seat"])
