"""A host change, a seat leaving, time-outs (sections 6.2, 7.5, 7.6)."""

from __future__ import annotations

import sys

from dernier_p2p.protocol.envelope import record_hash
from interop.gen.forge import add, new_env, seal, with_body
from interop.gen.scenarios import Base


def build(bases: dict[str, Base]) -> None:
    for b in bases.values():
        if b.sc.whole:
            continue
        left_cases(b)
        timeout_cases(b)
    if "dernier-3p-hostchange" in bases:
        host_change_cases(bases["dernier-3p-hostchange"])


def host_change_cases(b: Base) -> None:
    hc = b.body_type("host_change")
    if hc is None:
        print("  no host change recorded", file=sys.stderr)
        return
    r = b.records[hc]
    new, old = r["h"], r["env"]["body"]["old"]
    after = hc + 1
    ra = b.records[after]
    add("hostchange-old-host-signs", "7.6", "after the host change the old host signs a record",
        ["HostChange", "HostKey"], b, after, [seal(b, {**ra, "h": old}, signer=old)],
        "BAD_CHAIN", old)
    env0 = new_env(b, after, old, {"type": "ack"})
    rec0 = {"env": env0, "h": new, "hsig": bytes(64), "i": after,
            "prev": record_hash(b.records[hc]), "t": b.records[hc]["t"]}
    add("hostchange-old-host-stays-a-seat", "7.6",
        "after the host change the old host writes as an ordinary seat (it resumed with the new "
        "host): valid", ["HostChange", "Valid"], b, after, [seal(b, rec0)], None)
    n = len(b.identities)
    wrong = (new + 1) % n
    env = new_env(b, hc, wrong, {"type": "host_change", "old": old, "new": wrong})
    add("hostchange-out-of-turn", "7.6", "a seat that is not the next host takes over",
        ["HostChange"], b, hc, [seal(b, {**r, "env": env, "h": wrong}, signer=wrong)],
        "BAD_CHAIN", wrong)
    lf = b.body_type("left")
    if lf is not None and lf + 1 <= len(b.records):
        gone = b.records[lf]["env"]["body"]["seat"]
        env2 = new_env(b, lf + 1, gone, {"type": "ack"})
        rec = {"env": env2, "h": new, "hsig": bytes(64), "i": lf + 1,
               "prev": record_hash(b.records[lf]), "t": b.records[lf]["t"]}
        if lf + 1 == len(b.records):
            add("hostchange-left-seat-writes", "7.5", "a seat that has left sends an envelope",
                ["WrongSeat", "Left"], b, lf + 1, [seal(b, rec)], "WRONG_SEAT", new)


def timeout_cases(b: Base) -> None:
    tk = b.body_type("timeout")
    if tk is None:
        return
    r = b.records[tk]
    n = len(b.identities)
    add(f"{b.name}-timeout-seat-outside", "6.2", "a timeout of a seat the table does not have",
        ["Malformed", "Timeout"], b, tk, [with_body(b, tk, {"type": "timeout", "seat": n})],
        "MALFORMED", r["h"])
    add(f"{b.name}-timeout-extra-field", "6.2", "a timeout with a field it does not have",
        ["UnknownField", "Timeout"], b, tk,
        [with_body(b, tk, {**r["env"]["body"], "ms": 30000})], "MALFORMED", r["h"])


def left_cases(b: Base) -> None:
    lf = b.body_type("left")
    if lf is None or lf + 1 != len(b.records):
        return
    gone = b.records[lf]["env"]["body"]["seat"]
    h = b.records[lf]["h"]
    env = new_env(b, lf + 1, gone, {"type": "ack"})
    rec = {"env": env, "h": h, "hsig": bytes(64), "i": lf + 1,
           "prev": record_hash(b.records[lf]), "t": b.records[lf]["t"]}
    add(f"{b.name}-left-seat-writes", "7.5", "a seat that has left sends an envelope",
        ["WrongSeat", "Left"], b, lf + 1, [seal(b, rec)], "WRONG_SEAT", h)
