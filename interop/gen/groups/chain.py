"""Envelopes, records and the hash chain (PROTOCOL.md section 5): signatures, indices,
prev, counters, head echoes, game ids, structure."""

from __future__ import annotations

from dernier_p2p.protocol.envelope import record_hash
from interop.gen.forge import add, as_record, flip, resign_env, seal, with_body
from interop.gen.scenarios import Base, first_base


def build(bases: dict[str, Base]) -> None:
    first = first_base(bases)
    chain_cases(first, first.name)
    for name in ("moderno-3p", "standard-3p", "originale-3p"):
        if name in bases:
            chain_cases(bases[name], name)


def chain_cases(b: Base, tag: str) -> None:
    k = b.move("play") or b.body_type("tokens")
    r = b.records[k]
    h, env, n = r["h"], r["env"], len(b.identities)
    other = next(s for s in range(n) if s != h)
    add(f"{tag}-record-sig-flipped", "5.2", "a bit of the host's record signature flipped",
        ["RecordSignature"], b, k, [{**r, "hsig": flip(r["hsig"], 5)}], "BAD_SIGNATURE", h)
    add(f"{tag}-envelope-sig-flipped", "5.1",
        "the author's envelope signature is broken; the host sequenced it anyway",
        ["EnvelopeSignature", "HostMustCheck"], b, k,
        [as_record(b, k, {**env, "sig": flip(env["sig"], 9)})], "BAD_SIGNATURE", h)
    add(f"{tag}-envelope-signed-by-other", "5.1",
        "the envelope is signed by another seat's key than its author's",
        ["EnvelopeSignature"], b, k,
        [as_record(b, k, resign_env(b, env, signer=(env["seat"] + 1) % n))], "BAD_SIGNATURE", h)
    add(f"{tag}-prev-wrong", "5.3", "prev is not the hash of the previous record (re-signed)",
        ["BrokenChain"], b, k, [seal(b, {**r, "prev": bytes(32)})], "BAD_CHAIN", h)
    add(f"{tag}-prev-of-older", "5.3", "prev names the record before the previous one",
        ["BrokenChain"], b, k, [seal(b, {**r, "prev": b.records[k - 1]["prev"]})], "BAD_CHAIN", h)
    add(f"{tag}-index-skipped", "5.3", "the record index skips one (re-signed)",
        ["BrokenChain"], b, k, [seal(b, {**r, "i": k + 1})], "BAD_CHAIN", h)
    add(f"{tag}-index-repeated", "5.3", "the record index repeats the previous one",
        ["BrokenChain"], b, k, [seal(b, {**r, "i": k - 1})], "BAD_CHAIN", h)
    add(f"{tag}-record-dropped", "5.3", "the host drops a record: the next one arrives",
        ["BrokenChain", "Relay"], b, k, [b.records[k + 1]], "BAD_CHAIN", h)
    add(f"{tag}-record-repeated", "5.3", "the host relays the previous record again",
        ["BrokenChain", "Replay"], b, k, [b.records[k - 1]], "BAD_CHAIN", h)
    if b.records[k - 1]["t"] > 0:
        add(f"{tag}-time-backwards", "5.3", "the record time is before the previous record's",
            ["BrokenChain", "Timing"], b, k, [seal(b, {**r, "t": b.records[k - 1]["t"] - 1})],
            "BAD_CHAIN", h)
    j = max(x for x in range(1, k) if b.records[x]["env"]["seat"] != h or x < k)
    add(f"{tag}-envelope-replayed", "5.3", "an earlier envelope sequenced again (a replay)",
        ["Replay", "Counter"], b, k, [as_record(b, k, b.records[j]["env"])], "DUPLICATE", h)
    add(f"{tag}-counter-gap", "5.3", "the author's counter skips one",
        ["Counter"], b, k, [with_body(b, k, env["body"], n=env["n"] + 1)], "OUT_OF_ORDER", h)
    add(f"{tag}-head-unknown", "5.3", "the head echo names no record of this chain",
        ["Fork", "HeadEcho"], b, k, [with_body(b, k, env["body"], head=bytes(range(32)))],
        "FORK", h)
    add(f"{tag}-head-future", "5.3", "the head echo names the record itself (a later record)",
        ["Fork", "HeadEcho"], b, k,
        [with_body(b, k, env["body"], head=record_hash(b.records[k]))], "FORK", h)
    add(f"{tag}-wrong-game", "5.3", "the envelope names another game id",
        ["WrongGame", "ReplayAcrossGames"], b, k,
        [with_body(b, k, env["body"], game=flip(b.game, 3))], "WRONG_GAME", h)
    add(f"{tag}-signed-by-non-host", "5.3", "a record signed by a seat that is not the host",
        ["HostKey"], b, k, [seal(b, {**r, "h": other}, signer=other)], "BAD_CHAIN", other)
    add(f"{tag}-claims-other-host", "5.3", "h names another seat, the host's key signs",
        ["HostKey", "RecordSignature"], b, k, [seal(b, {**r, "h": other}, signer=h)],
        "BAD_SIGNATURE", h)
    bad = resign_env(b, {**env, "seat": n}, signer=0)
    add(f"{tag}-seat-out-of-range", "5.1", "the envelope's seat is not a seat of the table",
        ["Malformed"], b, k, [as_record(b, k, bad)], "MALFORMED", h)
    add(f"{tag}-record-extra-key", "5.2", "a record with a key the protocol does not define",
        ["Malformed", "UnknownField"], b, k, [seal(b, {**r, "x": 1})], "MALFORMED", h)
    add(f"{tag}-record-missing-t", "5.2", "a record without its time",
        ["Malformed"], b, k, [{x: v for x, v in r.items() if x != "t"}], "MALFORMED", h)
    add(f"{tag}-envelope-extra-key", "5.1", "an envelope with an extra key",
        ["Malformed", "UnknownField"], b, k, [as_record(b, k, {**env, "x": 0})], "MALFORMED", h)
    short = resign_env(b, {**env, "game": b.game[:15]})
    add(f"{tag}-game-15-bytes", "5.1", "a game id of 15 bytes",
        ["Malformed"], b, k, [as_record(b, k, short)], "MALFORMED", h)
    neg = resign_env(b, {**env, "n": -1})
    add(f"{tag}-counter-negative", "5.1", "a negative counter",
        ["Malformed", "Counter"], b, k, [as_record(b, k, neg)], "MALFORMED", h)
    add(f"{tag}-sig-63-bytes", "5.2", "a record signature of 63 bytes",
        ["Malformed", "RecordSignature"], b, k, [{**r, "hsig": r["hsig"][:63]}], "MALFORMED", h)
