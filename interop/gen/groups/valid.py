"""Valid cases: every recorded match whole and as a prefix, and records that are valid
although unusual (old head echoes, equal or distant times)."""

from __future__ import annotations

from dernier_p2p.protocol.envelope import record_hash
from interop.gen.forge import SPECS, Spec, add, as_record, new_env, seal
from interop.gen.scenarios import Base, first_base


def build(bases: dict[str, Base]) -> None:
    for b in bases.values():
        valid_cases(b)
    first = first_base(bases)
    extra_valid_cases(first, first.name)


def valid_cases(b: Base) -> None:
    types = sorted({r["env"]["body"]["type"] for r in b.records})
    kinds = sorted({r["env"]["body"]["move"] for r in b.records
                    if r["env"]["body"]["type"] == "move"})
    rules = sorted(e for e in b.events if e[0].isupper() or e.startswith("session:"))
    flags = ["Valid", f"variant:{b.sc.variant}", f"players:{b.sc.players}",
             f"version:{b.sc.version}"]
    flags += [f"type:{t}" for t in types] + [f"move:{m}" for m in kinds]
    flags += [f"event:{e}" for e in rules]
    SPECS.append(Spec(f"{b.name}-match", "7", f"{b.sc.comment} ({len(b.records)} records)",
                      flags, b.name, None, [], None))
    mid = len(b.records) // 2
    SPECS.append(Spec(f"{b.name}-prefix-half", "21",
                      "the first half of a recorded match: a transcript may end anywhere",
                      ["Valid", "Prefix"], b.name, mid, [], None))


def extra_valid_cases(b: Base, tag: str) -> None:
    """Records that are valid although unusual."""
    k = b.move("draw") or b.move("play")
    s = b.records[k]["env"]["seat"]
    t = (s + 1) % len(b.identities)
    ack_now = new_env(b, k, t, {"type": "ack"})
    add(f"{tag}-ack-valid", "6.3", "an ack echoing the current head", ["Valid", "HeadEcho"], b,
        k, [as_record(b, k, ack_now)], None)
    old = new_env(b, k, t, {"type": "ack"}, head=record_hash(b.records[1]))
    add(f"{tag}-ack-old-head", "5.3", "an ack echoing an old record's hash (not a fork)",
        ["Valid", "HeadEcho"], b, k, [as_record(b, k, old)], None)
    gen = new_env(b, k, t, {"type": "ack"}, head=b.records[0]["prev"])
    add(f"{tag}-ack-genesis-head", "5.3", "an ack echoing the genesis hash",
        ["Valid", "HeadEcho"], b, k, [as_record(b, k, gen)], None)
    chat = new_env(b, k, t, {"type": "chat", "text": "Bea: good luck \u2665"})
    add(f"{tag}-chat-valid", "6.3", "a chat line to the table (rules and deck ignore it)",
        ["Valid", "Chat"], b, k, [as_record(b, k, chat)], None)
    full = new_env(b, k, t, {"type": "chat", "text": "\u00e9" * 200})
    add(f"{tag}-chat-longest", "6.3", "a chat of 200 characters and 400 bytes (the limits)",
        ["Valid", "Chat"], b, k, [as_record(b, k, full)], None)
    late = seal(b, {**b.records[k], "t": b.records[k]["t"] + 3_600_000})
    add(f"{tag}-time-jump", "18", "a record an hour after the previous one",
        ["Valid", "Timing"], b, k, [late], None)
    same = seal(b, {**b.records[k], "t": b.records[k - 1]["t"]})
    add(f"{tag}-time-equal", "5.3", "a record with the previous record's time",
        ["Valid", "Timing"], b, k, [same], None)
