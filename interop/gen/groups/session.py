"""The match flow judged against the state: accepts and the coin (sections 7.1, 14)."""

from __future__ import annotations

from interop.gen.forge import add, flip, with_body
from interop.gen.scenarios import Base, first_base


def build(bases: dict[str, Base]) -> None:
    first = first_base(bases)
    session_cases(first, first.name)
    for name in ("moderno-3p", "standard-3p", "originale-3p"):
        if name in bases:
            session_cases(bases[name], name)


def session_cases(b: Base, tag: str) -> None:
    """Faults of the match flow (accept, coin) judged against the state."""
    n = len(b.identities)
    acc = b.body_type("accept", seat=1)
    ra = b.records[acc]
    a = ra["env"]["seat"]
    add(f"{tag}-accept-other-table", "7.1", "an accept of another table hash",
        ["TableMismatch"], b, acc, [with_body(b, acc, {"type": "accept", "table": bytes(32)})],
        "TABLE_MISMATCH", a)
    later = b.find(lambda r: r["env"]["seat"] == a, acc + 1)
    add(f"{tag}-accept-twice", "7.1", "a seat accepts the table a second time",
        ["Duplicate"], b, later, [with_body(b, later, ra["env"]["body"])], "DUPLICATE", a)
    cc = b.body_type("coin_commit", seat=1)
    rc = b.records[cc]
    c = rc["env"]["seat"]
    add(f"{tag}-coin-wrong-step", "14", "a coin commitment for a step that is not due",
        ["Coin"], b, cc, [with_body(b, cc, {**rc["env"]["body"], "step": "cut"})],
        "DECK_FAULT", c)
    add(f"{tag}-coin-reveal-early", "14", "a coin reveal before every commitment is in",
        ["Coin"], b, cc, [with_body(b, cc, {"type": "coin_reveal", "step": "dealer",
                                             "value": bytes(32)})], "DECK_FAULT", c)
    cr = b.body_type("coin_reveal", seat=1)
    rr = b.records[cr]
    add(f"{tag}-coin-reveal-mismatch", "14", "a coin reveal that is not the committed value",
        ["Coin", "BadCommitment"], b, cr,
        [with_body(b, cr, {**rr["env"]["body"], "value": flip(rr["env"]["body"]["value"])})],
        "DECK_FAULT", rr["env"]["seat"])
    add(f"{tag}-deck-before-hand", "7.3", "a key commitment before the dealer is chosen",
        ["Deck", "Unexpected"], b, cc,
        [with_body(b, cc, {"type": "key_commit", "hand": 1, "commit": bytes(32)})],
        "DECK_FAULT", c)
    ack_at = b.body_type("ack")
    if ack_at is not None:
        return
    del n
