"""Versions (PROTOCOL.md 20): the three rules version 4 changed, each shown by the same moves
judged under both versions. A recorded match of one version is signed again as a match of the
other (record 0's ``version`` changed, every head echo, ``prev``, accepted table hash and
signature made anew: only the version differs) and judged with that version's rules; a refused
one is cut after its refused record. A table of version 2 or 3 naming option ``leave`` (an
option of version 4) is refused."""

from __future__ import annotations

import dataclasses

from dernier_p2p.protocol.envelope import genesis_hash, record_hash
from dernier_p2p.protocol.session import Session
from dernier_p2p.wire.canonical import encode
from dernier_p2p.wire.version import READABLE_VERSIONS
from interop.adapters.dernier_p2p_adapter import Verifier
from interop.gen.forge import SPECS, Spec, add, resign_env, seal, with_body
from interop.gen.scenarios import Base

FILE = ("versions", "Versions: the rules version 4 changed, the same moves judged under "
        "versions 3 and 4, and version 4's option leave in an older table")

# (point of interop/README.md, recorded match, the other version, expected code (None: valid),
#  seat at fault, what the case shows)
CONTRASTS = [
    (26, "dernier-4p-left-ends", 3, None, None,
     "the version-4 match that a leave at four seats ends (dernier-4p-left-ends) as a version-3 "
     "table: under version 3's reading the seat goes out and the others play on, so the "
     "same records are a valid match that is not over (no outcome)"),
    (26, "dernier-4p-left", 4, None, None,
     "the version-3 match where a seat leaves at four seats and the others play on "
     "(dernier-4p-left) as a version-4 table: the leave ends the match there, the leaver "
     "last (another outcome), and the records after the end change nothing (7.8)"),
    (27, "dernier-2p-own-draw", 3, "DECK_FAULT", 1,
     "the version-4 match where a seat at one card, its declaration owed, draws on its own "
     "extra turn and pays the 2 penalty cards first (dernier-2p-own-draw) as a version-3 "
     "table: under version 3's reading the obligation lapses, no penalty is due, and the "
     "first token for a penalty card is refused"),
    (28, "standard-2p-first-reverse", 3, "ILLEGAL_MOVE", 1,
     "the version-4 match whose first card is a reverse and whose dealer plays first "
     "(standard-2p-first-reverse) as a version-3 table: under version 3's reading the "
     "dealer's next seat starts, and the dealer's first move is refused"),
]


def as_version(base: Base, version: int, name: str) -> Base:
    """``base`` signed again as a match of protocol ``version`` (record 0's ``version``); every
    record after it is the same envelope with the new head echoes (and, in an ``accept``, the
    new table hash), signed again by its author and by its host."""
    renamed: dict[bytes, bytes] = {genesis_hash(base.game): genesis_hash(base.game)}
    records: list[dict] = []
    for k, rec in enumerate(base.records):
        env = dict(rec["env"])
        body = env["body"]
        if k == 0:
            body = {**body, "version": version}
        elif body["type"] == "accept":
            body = {**body, "table": renamed[body["table"]]}
        env["body"] = body
        env["head"] = renamed[env["head"]]
        new = seal(base, {**rec, "env": resign_env(base, env),
                          "prev": renamed[rec["prev"]]})
        renamed[record_hash(rec)] = record_hash(new)
        records.append(new)
    sc = dataclasses.replace(base.sc, name=name, version=version, whole=True)
    return Base(sc, base.trial, records, [encode(r) for r in records], base.identities,
                set(base.events))


def end_of_match(base: Base) -> int:
    """The index of the record after which an observer finds the match over (the last one if
    it never is)."""
    obs = Session(None, None, base.records[0], versions=READABLE_VERSIONS)
    for k, rec in enumerate(base.records[1:], 1):
        obs.receive(rec)
        if obs.finished:
            return k
    return len(base.records) - 1


def build(bases: dict[str, Base]) -> None:
    made: dict[str, Base] = {}
    for point, name, version, code, seat, comment in CONTRASTS:
        if name not in bases:
            continue
        other = as_version(bases[name], version, f"{name}-as-v{version}")
        verdict = Verifier().records(other.raw, [])
        if verdict.result == "invalid" and verdict.index is not None:
            cut = verdict.index + 1  # the refused record is the last one kept
        else:  # one record after the end the other version reads (it changes nothing, 7.8)
            cut = min(len(other.raw), end_of_match(other) + 2)
        other = dataclasses.replace(other, records=other.records[:cut], raw=other.raw[:cut])
        made[other.name] = other
        flags = ["Version", f"version:{version}", f"point:{point}"]
        SPECS.append(Spec(f"{other.name}-match", "20", f"{comment} ({len(other.records)} "
                          "records)", flags, other.name, None, [], code, seat))
    bases.update(made)
    play_on = bases.get("dernier-4p-left-play-on")
    if play_on is not None:
        body = play_on.records[0]["env"]["body"]
        for version in (2, 3):
            add(f"version-{version}-table-leave", "20",
                f"a table of version {version} naming option leave (play_on), an option of "
                "version 4: the rules refuse the table", ["Version", "TableMismatch"], play_on,
                0, [with_body(play_on, 0, {**body, "version": version})], "TABLE_MISMATCH", 0)
