"""Record 0, the table: versions, variants, options, players and keys, who writes it."""

from __future__ import annotations

from interop.gen.forge import add, as_record, resign_env, seal, with_body
from interop.gen.scenarios import Base, first_base


def build(bases: dict[str, Base]) -> None:
    first = first_base(bases)
    record0_cases(first, first.name)


def record0_cases(b: Base, tag: str) -> None:
    r0 = b.records[0]
    body = r0["env"]["body"]

    def table(body2: dict) -> dict:
        return with_body(b, 0, body2)

    add(f"{tag}-table-version-1", "20", "a table of protocol version 1 (retired)",
        ["Version"], b, 0, [table({**body, "version": 1})], "VERSION", 0)
    add(f"{tag}-table-version-6", "20", "a table of protocol version 6",
        ["Version"], b, 0, [table({**body, "version": 6})], "VERSION", 0)
    add(f"{tag}-table-unknown-variant", "6.2", "a table of a variant this protocol lacks",
        ["TableMismatch"], b, 0, [table({**body, "variant": "tressette"})], "TABLE_MISMATCH", 0)
    add(f"{tag}-table-bad-option", "6.2", "a table with an option the rules refuse",
        ["TableMismatch"], b, 0, [table({**body, "options": {"hand_size": 0}})],
        "TABLE_MISMATCH", 0)
    players = body["players"]
    dup = [*players[:-1], {**players[-1], "key": players[0]["key"]}]
    add(f"{tag}-table-duplicate-key", "6.2", "two seats with one identity key",
        ["Malformed", "IdentityKey"], b, 0, [table({**body, "players": dup})], "MALFORMED", 0)
    ident = bytes([1]) + bytes(31)
    weak = [*players[:-1], {**players[-1], "key": ident}]
    add(f"{tag}-table-small-order-key", "3.3", "a seat's key is the neutral element",
        ["Malformed", "IdentityKey"], b, 0, [table({**body, "players": weak})], "MALFORMED", 0)
    add(f"{tag}-table-one-player", "6.2", "a table of one seat",
        ["Malformed"], b, 0, [table({**body, "players": players[:1]})], "MALFORMED", 0)
    add(f"{tag}-table-timers-missing", "6.2", "timers without grace_ms",
        ["Malformed"], b, 0,
        [table({**body, "timers": {"turn_ms": 1000, "declare_ms": 1000}})], "MALFORMED", 0)
    add(f"{tag}-table-name-control", "6.2", "a player name with a control character",
        ["Malformed"], b, 0,
        [table({**body, "players": [{**players[0], "name": "a\nb"}, *players[1:]]})],
        "MALFORMED", 0)
    add(f"{tag}-record0-prev", "5.2", "record 0 whose prev is not the genesis hash",
        ["BrokenChain"], b, 0, [seal(b, {**r0, "prev": bytes(32)})], "BAD_CHAIN", 0)
    acc = b.body_type("accept")
    first = seal(b, {**b.records[acc], "i": 0, "prev": r0["prev"]})
    add(f"{tag}-record0-not-table", "7.1", "record 0 is an accept, not the table",
        ["BrokenChain"], b, 0, [first], "BAD_CHAIN", "any")
    env1 = {**r0["env"], "seat": 1, "n": 0}
    env1 = resign_env(b, env1)
    add(f"{tag}-table-not-from-host", "5.3", "the table is authored by seat 1, sequenced by 0",
        ["WrongSeat"], b, 0, [as_record(b, 0, env1)], "WRONG_SEAT", 0)
    k = b.move("play") or b.body_type("tokens")
    hk = next(x for x in range(1, len(b.records)) if b.records[x]["env"]["seat"] == 0)
    add(f"{tag}-second-table", "7.1", "a second table record later in the match",
        ["BrokenChain"], b, hk, [with_body(b, hk, body)], "BAD_CHAIN", 0)
    del k
