"""Generate the conformance cases from real matches played in memory (deterministic).

``python -m interop.generate [--only NAME]`` plays every scenario of :data:`SCENARIOS` with
:class:`~dernier_p2p.protocol.local.LocalTable` (signed, sequenced records exactly as the network
carries them), searching trial seeds until the match shows the rule events the scenario asks
for, and writes each match as a transcript under ``cases/transcripts/``. Invalid cases are then
derived from those matches: one record changed (signed again by its author and by the host where
needed, so that only the intended fault is present), or a cheat injected into a replay of the
same match. Every case's expected verdict is the reference implementation's (the adapter's
observer), and for an invalid case the generator checks that the code and the seat at fault are
the intended ones: a case whose verdict is not the intended one is an error, not a case.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dernier_p2p.bots.view import seat_moves
from dernier_p2p.protocol.envelope import (
    ENVELOPE_HASH_LABEL,
    ENVELOPE_LABEL,
    RECORD_LABEL,
    record_hash,
)
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.local import LocalTable, play_round
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.rules import Catch, Declare, Draw, Move, Play, State
from dernier_p2p.rules.cards import Card, Rank, deck_cards
from dernier_p2p.rules.events import Drew, Penalty
from dernier_p2p.wire.canonical import encode
from dernier_p2p.wire.hashing import digest
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.version import PROTOCOL_VERSION
from interop.adapters.dernier_p2p_adapter import Verifier, verify_frame, verify_opening
from interop.channel import write_transcript_records

OUT = Path(__file__).resolve().parent / "cases"
ACTION_RANKS = {
    Rank.ACE, Rank.N2, Rank.N7, Rank.JOKER, Rank.JACK, Rank.QUEEN, Rank.KING, Rank.DRAW2,
    Rank.WILD4, Rank.SWAP, Rank.ROTATE, Rank.SKIP, Rank.REVERSE, Rank.WILD,
}


# ---------------------------------------------------------------------- policies
class Eager:
    """A bot that seeks rule events: it jumps in and catches whenever it may, prefers action
    cards, forgets its declaration at ``forget`` rate, draws instead of playing at ``draw``
    rate, and lets its clock run out at ``idle`` rate."""

    def __init__(
        self, seed: int, forget: float, draw: float, idle: float, reshuffle: bool = False
    ) -> None:
        self.rng = random.Random(seed)
        self.forget, self.draw, self.idle = forget, draw, idle
        self.reshuffle = reshuffle  # draw whenever possible until the pile has been reshuffled

    def __call__(self, state: State, seat: int, view: dict[int, Card]) -> Move | None:
        moves, in_turn = seat_moves(state, seat, view)
        if not moves:
            return None
        rng = self.rng
        if not in_turn:
            keen = [m for m in moves if isinstance(m, Catch | Play)]
            if keen:
                return self._pick_play(keen)
            late = [m for m in moves if isinstance(m, Declare)]
            if late and rng.random() >= self.forget:
                return late[0]
            return None
        if rng.random() < self.idle:
            return None
        if self.reshuffle and not any(p >= len(deck_cards(state.rules.deck)) for p in
                                      state.pile):
            draws = [m for m in moves if isinstance(m, Draw)]
            if draws:
                return draws[0]
        plays = [m for m in moves if isinstance(m, Play)]
        if plays and rng.random() >= self.draw:
            return self._pick_play(plays)
        rest = [m for m in moves if not isinstance(m, Play)]
        draws = [m for m in rest if isinstance(m, Draw)]
        if draws and rng.random() < self.draw:
            return draws[0]
        return rng.choice(rest or moves)

    def _pick_play(self, moves: list[Move]) -> Move:
        rng = self.rng
        plays = [m for m in moves if isinstance(m, Play)]
        if not plays:
            return rng.choice(moves)
        action = [m for m in plays if m.card.rank in ACTION_RANKS]
        pool = action if action and rng.random() < 0.7 else plays
        mv = rng.choice(pool)
        twins = [m for m in plays if (m.slot, m.suit, m.target) == (mv.slot, mv.suit, mv.target)]
        if len(twins) > 1:
            want = rng.random() >= self.forget
            mv = next((m for m in twins if m.declare == want), mv)
        return mv


# ---------------------------------------------------------------------- scenarios
Script = Callable[[LocalTable], None]


def ack(seat: int) -> Script:
    def run(table: LocalTable) -> None:
        s = table.sessions[seat]
        table.send(s._author.envelope({"type": "ack"}, s.head))

    return run


def leave(seat: int) -> Script:
    def run(table: LocalTable) -> None:
        table.send(table.sessions[table.host_seat].announce({"type": "left", "seat": seat}))

    return run


def host_change(new: int) -> Script:
    """The host (seat 0) is gone: ``new`` takes over with a host_change, then its ``left``."""

    def run(table: LocalTable) -> None:
        table.deliver()
        old = table.host_seat
        table.host = Sequencer(table.identities[new], table.game, new, records=table.records)
        table.host_seat = new
        s = table.sessions[new]
        table.send(s._author.envelope({"type": "host_change", "old": old, "new": new}, s.head))
        table.deliver()
        table.send(s.announce({"type": "left", "seat": old}))

    return run


@dataclass
class Scenario:
    name: str
    variant: str
    players: int
    want: frozenset[str]
    options: dict = field(default_factory=lambda: {"match": ["hands", 1]})
    forget: float = 0.4
    draw: float = 0.0
    idle: float = 0.0
    reshuffle: bool = False
    stop_after: str | None = None  # end the record this many rounds after this event
    extra_rounds: int = 4
    script: dict[int, Script] = field(default_factory=dict)
    trials: int = 6
    max_rounds: int = 400
    comment: str = ""


SCENARIOS: list[Scenario] = [
    Scenario("dernier-2p", "dernier", 2, frozenset({"ChainGrew", "Drew:penalty-declaration"}),
             script={3: ack(1)}, comment="a hand of dernier with chains, a missed DERNIER, an ack"),
    Scenario("dernier-3p-timeout", "dernier", 3, frozenset({"Forfeited"}), idle=0.2,
             comment="dernier: a seat lets its clock run out and forfeits"),
    Scenario("dernier-4p-left", "dernier", 4, frozenset({"Forfeited"}), script={2: leave(2)},
             comment="dernier: a seat leaves; the match ends"),
    Scenario("dernier-3p-hostchange", "dernier", 3, frozenset(), script={2: host_change(1)},
             comment="the host goes; seat 1 takes over with host_change, then left for seat 0"),
    Scenario("dernier-8p", "dernier", 8, frozenset(), forget=0.2,
             options={"match": ["hands", 1], "hand_size": 2},
             comment="a hand of dernier at eight seats"),
    Scenario("originale-3p", "originale", 3,
             frozenset({"JumpedIn", "ChainGrew", "HandSizeChosen", "Drew:penalty-declaration"}),
             forget=0.3, comment="originale: cut, hand size, jump-ins, A chains"),
    Scenario("originale-2p-cancel", "originale", 2, frozenset({"ChainCancelled", "CutKept"}),
             trials=12, comment="originale: a 2 of the A's suit cancels the chain; a cut kept"),
    Scenario("originale-2p-reshuffle", "originale", 2,
             frozenset({"Reshuffled", "Drew:penalty-timeout"}), reshuffle=True, idle=0.05,
             stop_after="Reshuffled",
             comment="originale: the draw pile runs out and the discards are reshuffled (the "
             "record stops a few rounds later)"),
    Scenario("moderno-3p", "moderno", 3, frozenset({"HandsSwapped", "JumpedIn"}), trials=10,
             comment="moderno: swap hands, jump-ins"),
    Scenario("moderno-4p-rotate", "moderno", 4, frozenset({"HandsRotated"}), trials=10,
             comment="moderno: rotate hands"),
    Scenario("moderno-10p", "moderno", 10, frozenset(), forget=0.3, trials=1,
             options={"match": ["hands", 1], "hand_size": 1},
             comment="moderno at ten seats, one card each"),
    Scenario("standard-3p", "standard", 3, frozenset({"Caught"}), forget=1.0, trials=10,
             comment="standard: a seat forgets UNO and is caught"),
    Scenario("standard-2p-reshuffle", "standard", 2, frozenset({"Reshuffled", "Passed"}),
             reshuffle=True, stop_after="Reshuffled",
             comment="standard: the draw pile runs out and is reshuffled (the record stops a "
             "few rounds later)"),
    Scenario("standard-5p-timeout", "standard", 5, frozenset({"Drew:timeout-draw"}), idle=0.15,
             comment="standard: time-outs draw and pass"),
]


def seeds_for(name: str, trial: int, n: int) -> list[bytes]:
    return [digest("dernier-p2p/interop-seed", [name, trial, k]) for k in range(n)]


def event_names(events: list[Any]) -> set[str]:
    out = set()
    for ev in events:
        kind = type(ev).__name__
        out.add(kind)
        if isinstance(ev, Drew):
            out.add(f"Drew:{ev.reason}")
        elif isinstance(ev, Penalty):
            out.add(f"Penalty:{getattr(ev, 'rule', '')}")
        elif kind == "SessionEvent":
            out.add(f"session:{ev.kind}")
    return out


@dataclass
class Run:
    table: LocalTable
    error: ProtocolError | None
    rounds: int


def drive(
    sc: Scenario,
    trial: int,
    stop: Callable[[LocalTable, int], bool] | None = None,
    tamper: Callable[[LocalTable], Callable[[dict], dict]] | None = None,
) -> Run:
    """Play the scenario's match for one trial seed. ``stop(table, round)`` may inject a cheat;
    when it returns True the match is delivered once more and ends there. ``tamper(table)``
    gives the table's hook that may rewrite an envelope before the host sequences it."""
    table = LocalTable(sc.variant, seeds_for(sc.name, trial, sc.players), dict(sc.options))
    if tamper is not None:
        table.tamper = tamper(table)
    rng = random.Random(trial)
    pol = [Eager(trial * 100 + k, sc.forget, sc.draw, sc.idle, sc.reshuffle)
           for k in range(sc.players)]
    rounds = 0
    stopping: int | None = None
    try:
        table.deliver()
        while not table.sessions[table.host_seat].finished and rounds < sc.max_rounds:
            if stop is not None and stop(table, rounds):
                table.deliver()
                break
            if rounds in sc.script:
                sc.script[rounds](table)
                table.deliver()
                if table.sessions[table.host_seat].finished:
                    break
            play_round(table, pol, rng)
            rounds += 1
            if sc.stop_after is not None and stop is None:
                names = event_names(table.sessions[table.host_seat].events)
                if sc.stop_after in names:
                    stopping = stopping + 1 if stopping is not None else 0
                    if stopping >= sc.extra_rounds:
                        break
    except ProtocolError as exc:
        return Run(table, exc, rounds)
    return Run(table, None, rounds)


# ---------------------------------------------------------------------- recorded matches
@dataclass
class Base:
    """A recorded valid match."""

    sc: Scenario
    trial: int
    records: list[dict]
    raw: list[bytes]
    identities: list[IdentityKey]
    events: set[str]

    @property
    def name(self) -> str:
        return self.sc.name

    @property
    def game(self) -> bytes:
        return self.records[0]["env"]["game"]

    def find(self, pred: Callable[[dict], bool], start: int = 1) -> int | None:
        for k in range(start, len(self.records)):
            if pred(self.records[k]):
                return k
        return None

    def body_type(self, t: str, start: int = 1, seat: int | None = None) -> int | None:
        return self.find(
            lambda r: r["env"]["body"]["type"] == t and (seat is None or r["env"]["seat"] == seat),
            start,
        )

    def move(self, kind: str, start: int = 1) -> int | None:
        return self.find(
            lambda r: r["env"]["body"]["type"] == "move" and r["env"]["body"]["move"] == kind,
            start,
        )

    def host_at(self, k: int) -> int:
        return self.records[k]["h"]


def record_match(sc: Scenario) -> Base | None:
    best = None
    for trial in range(sc.trials):
        try:
            run = drive(sc, trial)
        except Exception as exc:  # the rules refused a bot's move: try the next trial
            print(f"  {sc.name} trial {trial} failed: {exc!r}", file=sys.stderr)
            continue
        if run.error is not None:
            raise RuntimeError(f"{sc.name} trial {trial}: {run.error}")
        names = event_names(run.table.sessions[run.table.host_seat].events)
        got = len(sc.want & names)
        if best is None or got > best[0]:
            best = (got, trial, run, names)
        if sc.want <= names:
            break
    if best is None:
        return None
    got, trial, run, names = best
    missing = sorted(sc.want - names)
    if missing:
        print(f"  {sc.name}: after {sc.trials} trials still missing {missing}", file=sys.stderr)
    records = run.table.records
    return Base(sc, trial, records, [encode(r) for r in records], run.table.identities, names)


# ---------------------------------------------------------------------- forging helpers
def env_part(env: dict) -> dict:
    return {k: env[k] for k in ("body", "game", "head", "n", "seat")}


def resign_env(base: Base | LocalTable, env: dict, signer: int | None = None) -> dict:
    """``env`` signed again by its seat (or by ``signer``), with the identities of ``base``."""
    env = dict(env)
    seat = env["seat"] if signer is None else signer
    env["sig"] = base.identities[seat].sign(ENVELOPE_LABEL, env_part(env))
    return env


def seal(base: Base, rec: dict, signer: int | None = None) -> dict:
    """Sign ``rec`` as its host ``h`` (or as ``signer``)."""
    rec = dict(rec)
    part = {
        "env_hash": digest(ENVELOPE_HASH_LABEL, rec["env"]),
        "h": rec["h"],
        "i": rec["i"],
        "prev": rec["prev"],
        "t": rec["t"],
    }
    rec["hsig"] = base.identities[rec["h"] if signer is None else signer].sign(RECORD_LABEL, part)
    return rec


def with_body(base: Base, k: int, body: dict, **env_over: Any) -> dict:
    """Record ``k`` with its envelope's body (and fields) replaced, signed again by both."""
    rec = base.records[k]
    env = {**rec["env"], "body": body, **env_over}
    return seal(base, {**rec, "env": resign_env(base, env)})


def as_record(base: Base, k: int, env: dict) -> dict:
    """``env`` sequenced as record ``k`` (the original record's host, time and prev)."""
    rec = base.records[k]
    return seal(base, {**rec, "env": env})


def head_now(base: Base, k: int) -> bytes:
    return record_hash(base.records[k - 1])


# ---------------------------------------------------------------------- cases
@dataclass
class Spec:
    id: str
    section: str
    comment: str
    flags: list[str]
    base: str | None
    k: int | None
    next: list[Any]  # records (dict) or raw bytes
    code: str | None  # None: valid
    seat: Any = "any"  # intended seat at fault ("any": not checked)
    frame: bytes | None = None
    nonce: bytes | None = None  # a handshake case: the challenge's nonce


SPECS: list[Spec] = []


def add(id_: str, section: str, comment: str, flags: list[str], base: Base | None,
        k: int | None, nxt: list[Any], code: str | None, seat: Any = "any") -> None:
    SPECS.append(Spec(id_, section, comment, flags, None if base is None else base.name, k,
                      nxt, code, seat))


def frame_case(id_: str, comment: str, flags: list[str], data: bytes, code: str | None) -> None:
    SPECS.append(Spec(id_, "4.1", comment, flags, None, None, [], code, None, data))


def flip(b: bytes, at: int = 0) -> bytes:
    return b[:at] + bytes([b[at] ^ 1]) + b[at + 1 :]


def counter_at(base: Base, k: int, seat: int) -> int:
    """The counter ``n`` the next envelope of ``seat`` must carry at record ``k``."""
    return sum(1 for r in base.records[:k] if r["env"]["seat"] == seat)


def new_env(base: Base, k: int, seat: int, body: dict, **over: Any) -> dict:
    """A fresh envelope of ``seat`` that the host sequences as record ``k``."""
    env = {"body": body, "game": base.game, "head": head_now(base, k),
           "n": counter_at(base, k, seat), "seat": seat, "sig": bytes(64), **over}
    return resign_env(base, env, signer=seat if seat < len(base.identities) else 0)


def map_bytes(d: dict, order: list[str] | None = None, over: dict[str, bytes] | None = None,
              header: bytes | None = None) -> bytes:
    """A msgpack map written by hand: keys in ``order`` (default canonical), some values given
    as raw bytes."""
    keys = order if order is not None else sorted(d, key=lambda s: s.encode())
    over = over or {}
    out = header if header is not None else bytes([0x80 | len(keys)])
    for key in keys:
        out += encode(key) + (over[key] if key in over else encode(d[key]))
    return out


# ---------------------------------------------------------------------- derivations
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


def record0_cases(b: Base, tag: str) -> None:
    r0 = b.records[0]
    body = r0["env"]["body"]

    def table(body2: dict) -> dict:
        return with_body(b, 0, body2)

    add(f"{tag}-table-version-1", "20", "a table of protocol version 1 (retired)",
        ["Version"], b, 0, [table({**body, "version": 1})], "VERSION", 0)
    add(f"{tag}-table-version-3", "20", "a table of protocol version 3",
        ["Version"], b, 0, [table({**body, "version": 3})], "VERSION", 0)
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


def encoding_cases(b: Base, tag: str) -> None:
    k = b.body_type("tokens")
    r = b.records[k]
    h = r["h"]
    order = sorted(r, key=lambda s: s.encode())
    canon = encode(r)
    assert map_bytes(r) == canon

    def ok(id_: str, comment: str, data: bytes, flags: list[str]) -> None:
        add(f"{tag}-enc-{id_}", "3.1", comment, ["Encoding", *flags], b, k, [data],
            "MALFORMED", h)

    ok("unsorted-keys", "record keys not in canonical order", map_bytes(r, order[::-1]),
       ["NonCanonical"])
    ok("int-not-shortest", "the index as a 4-byte integer",
       map_bytes(r, over={"i": b"\xce" + k.to_bytes(4, "big")}), ["NonCanonical"])
    ok("positive-as-int8", "the host seat as a signed 1-byte integer",
       map_bytes(r, over={"h": b"\xd0" + bytes([h])}), ["NonCanonical"])
    ok("str8-key", "a short key written as str8",
       map_bytes(r, order[:-1]) [0:0] + bytes([0x86]) + b"".join(
           (b"\xd9\x01t" if key == "t" else encode(key)) + encode(r[key]) for key in order),
       ["NonCanonical"])
    ok("bin16-prev", "prev written as bin16", map_bytes(r, over={"prev": b"\xc5\x00\x20" +
                                                                r["prev"]}), ["NonCanonical"])
    ok("map16-header", "the record map with a map16 header",
       map_bytes(r, header=b"\xde\x00\x06"), ["NonCanonical"])
    ok("duplicate-key", "the time key twice",
       map_bytes(r, order + ["t"], header=bytes([0x87])), ["NonCanonical"])
    ok("trailing-byte", "a byte after the record", canon + b"\x00", ["Trailing"])
    ok("truncated", "the record's last byte missing", canon[:-1], ["Truncated"])
    ok("float-time", "the time as a float",
       map_bytes(r, over={"t": b"\xcb" + __import__("struct").pack(">d", float(r["t"]))}),
       ["Float"])
    ok("ext-type", "the time as an extension type", map_bytes(r, over={"t": b"\xd4\x01\x00"}),
       ["Ext"])
    ok("bad-utf8", "a key that is not UTF-8",
       bytes([0x86]) + b"".join((b"\xa1\xff" if key == "t" else encode(key)) + encode(r[key])
                                for key in order), ["Utf8"])
    ok("bool-index", "the index as a boolean", map_bytes(r, over={"i": encode(True)}),
       ["TypeConfusion"])
    ok("str-host", "the host seat as a string", map_bytes(r, over={"h": encode("0")}),
       ["TypeConfusion"])
    ok("nil-time", "the time as nil", map_bytes(r, over={"t": encode(None)}), ["TypeConfusion"])
    ok("list-record", "a record written as a list", encode([r[key] for key in order]),
       ["TypeConfusion"])
    env = r["env"]
    body = env["body"]
    inner = map_bytes(body, sorted(body, key=lambda s: s.encode())[::-1])
    ok("body-unsorted", "the envelope body's keys not in canonical order",
       map_bytes(r, over={"env": map_bytes(env, over={"body": inner})}), ["NonCanonical"])


def body_cases(b: Base, tag: str) -> None:
    n = len(b.identities)
    k = b.move("draw") or b.move("play")
    r = b.records[k]
    body, h, a = r["env"]["body"], r["h"], r["env"]["seat"]
    hand = body["hand"]

    def case(id_: str, sec: str, comment: str, flags: list[str], at: int, new_body: dict,
             code: str, seat: Any = "any") -> None:
        add(f"{tag}-{id_}", sec, comment, flags, b, at, [with_body(b, at, new_body)], code,
            h if seat == "any" else seat)

    case("unknown-body-type", "20", "a body type this version does not define",
         ["UnknownMessage"], k, {"type": "chat", "text": "hi"}, "UNKNOWN_MESSAGE")
    case("unknown-move-kind", "20", "a move kind this version does not define",
         ["UnknownMessage"], k, {"type": "move", "hand": hand, "move": "shout"},
         "UNKNOWN_MESSAGE")
    case("move-extra-field", "20", "a draw with a field it does not have",
         ["UnknownField", "Malformed"], k, {"type": "move", "hand": hand, "move": "draw",
                                             "note": "x"}, "MALFORMED")
    case("move-missing-hand", "6.5", "a move without its hand",
         ["Malformed"], k, {"type": "move", "move": "draw"}, "MALFORMED")
    case("body-type-int", "6", "a body whose type is an integer",
         ["Malformed"], k, {"type": 5}, "MALFORMED")
    base_play = {"type": "move", "hand": hand, "move": "play", "slot": 0, "suit": None,
                 "target": None, "declare": False}
    case("play-suit-4", "6.5", "a play naming suit 4", ["Malformed"], k,
         {**base_play, "suit": 4}, "MALFORMED")
    case("play-declare-int", "6.5", "a play whose declare is 1, not true", ["Malformed"], k,
         {**base_play, "declare": 1}, "MALFORMED")
    case("play-slot-negative", "6.5", "a play of slot -1", ["Malformed"], k,
         {**base_play, "slot": -1}, "MALFORMED")
    case("play-target-outside", "6.5", "a swap target that is no seat", ["Malformed"], k,
         {**base_play, "target": n}, "MALFORMED")
    case("catch-target-outside", "6.5", "a catch of no seat", ["Malformed"], k,
         {"type": "move", "hand": hand, "move": "catch", "target": n + 3}, "MALFORMED")
    case("hand-size-zero", "6.5", "a hand size of 0", ["Malformed"], k,
         {"type": "move", "hand": hand, "move": "hand_size", "size": 0}, "MALFORMED")
    case("cut-keep-string", "6.5", "a cut whose keep is a string", ["Malformed"], k,
         {"type": "move", "hand": hand, "move": "cut", "keep": "yes"}, "MALFORMED")
    case("name-suit-nil", "6.5", "naming no suit", ["Malformed"], k,
         {"type": "move", "hand": hand, "move": "name_suit", "suit": None}, "MALFORMED")
    case("ack-with-field", "6.3", "an ack with a field", ["Malformed"], k,
         {"type": "ack", "x": 1}, "MALFORMED")
    case("accept-31-bytes", "6.3", "an accept naming a 31-byte hash", ["Malformed"], k,
         {"type": "accept", "table": bytes(31)}, "MALFORMED")
    case("coin-step-empty", "6.3", "a coin commitment with an empty step", ["Malformed"], k,
         {"type": "coin_commit", "step": "", "commit": bytes(32)}, "MALFORMED")
    case("key-commit-hand-negative", "6.4", "a key commitment for hand -1", ["Malformed"], k,
         {"type": "key_commit", "hand": -1, "commit": bytes(32)}, "MALFORMED")
    case("tokens-empty", "6.4", "a tokens message with no token", ["Malformed"], k,
         {"type": "tokens", "hand": hand, "tokens": []}, "MALFORMED")
    case("transfer-box-short", "6.4", "a transfer box of 15 bytes", ["Malformed"], k,
         {"type": "transfer", "hand": hand, "position": 0, "to": 0, "epk": bytes(32),
          "box": bytes(15), "commit": bytes(32)}, "MALFORMED")
    case("complaint-text-str", "6.4", "a complaint whose plaintext is a string", ["Malformed"],
         k, {"type": "complaint", "hand": hand, "ref": 0, "plaintext": "x"}, "MALFORMED")
    case("secret-33-bytes", "6.4", "a secret of 33 bytes", ["Malformed"], k,
         {"type": "secret", "hand": hand, "secret": bytes(33)}, "MALFORMED")
    case("shuffle-empty-deck", "6.4", "a shuffle of no card", ["Malformed"], k,
         {"type": "shuffle", "hand": hand, "epoch": 0, "deck": [], "proof": {}}, "MALFORMED")
    case("host-change-same-seat", "6.2", "a host change from a seat to itself", ["Malformed"],
         k, {"type": "host_change", "old": a, "new": a}, "MALFORMED")
    if a != h and n > 2:
        other = next(x for x in range(n) if x not in (a, h))
        case("host-change-by-other", "6.2", "a host change authored by a seat it does not name",
             ["WrongSeat"], k, {"type": "host_change", "old": h, "new": other}, "WRONG_SEAT")
    if a != h:
        case("timeout-from-non-host", "6.2", "a seat other than the host sends a timeout",
             ["WrongSeat", "HostOnly"], k, {"type": "timeout", "seat": a}, "WRONG_SEAT")
        case("left-from-non-host", "6.2", "a seat other than the host sends left",
             ["WrongSeat", "HostOnly"], k, {"type": "left", "seat": a}, "WRONG_SEAT")


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


def deck_cases(b: Base, tag: str, other: Base | None, shuffles: str = "none") -> None:
    kr = b.body_type("key_reveal", seat=1)
    r = b.records[kr]
    s, body = r["env"]["seat"], r["env"]["body"]
    proof = body["proof"]

    def case(id_: str, sec: str, comment: str, flags: list[str], at: int, new_body: dict,
             seat: int) -> None:
        add(f"{tag}-{id_}", sec, comment, ["Deck", *flags], b, at, [with_body(b, at, new_body)],
            "DECK_FAULT", seat)

    case("key-reveal-bad-proof", "10", "a key share whose Schnorr proof fails",
         ["BadProof"], kr, {**body, "proof": {**proof, "s": flip(proof["s"])}}, s)
    kr2 = b.body_type("key_reveal", seat=0)
    other_share = b.records[kr2]["env"]["body"]["share"]
    case("key-reveal-other-share", "10", "a key share that is not the committed one",
         ["BadCommitment"], kr, {**body, "share": other_share}, s)
    case("key-reveal-not-point", "8", "a key share that is not a group element",
         ["BadElement"], kr, {**body, "share": b"\xff" * 32}, s)
    case("key-reveal-identity", "8", "a key share that is the neutral element",
         ["BadElement"], kr, {**body, "share": bytes([1]) + bytes(31)}, s)
    case("key-reveal-wrong-hand", "15", "a key reveal for another hand",
         ["Unexpected"], kr, {**body, "hand": body["hand"] + 1}, s)
    if other is not None:
        okr = other.body_type("key_reveal", seat=s)
        if okr is not None:
            ob = dict(other.records[okr]["env"]["body"])
            ob["hand"] = body["hand"]
            case("key-reveal-from-other-game", "10", "a key reveal replayed from another game",
                 ["Replay", "ReplayAcrossGames"], kr, ob, s)
    kc = b.body_type("key_commit")
    rkc = b.records[kc]
    case("key-commit-twice", "15", "a second key commitment from the same seat",
         ["Unexpected"], kr, {**rkc["env"]["body"]} if rkc["env"]["seat"] == s else
         {"type": "key_commit", "hand": body["hand"], "commit": bytes(32)}, s)

    if shuffles != "none":
        shuffle_cases(b, tag, None if shuffles == "all" else {shuffles})

    tk = b.find(lambda x: x["env"]["body"]["type"] == "tokens" and x["env"]["seat"] != x["h"],
                b.move("play") or 1)
    rt = b.records[tk]
    ts, tb = rt["env"]["seat"], rt["env"]["body"]
    t0 = tb["tokens"][0]
    rest = tb["tokens"][1:]
    case("token-bad-proof", "12", "a reveal token whose proof has a changed scalar",
         ["BadProof"], tk, {**tb, "tokens": [{**t0, "proof": {**t0["proof"],
                                                                "e": flip(t0["proof"]["e"])}},
                                             *rest]}, ts)
    case("token-wrong-value", "12", "a wrong token (another valid element) with its proof",
         ["BadProof", "WrongToken"], tk,
         {**tb, "tokens": [{**t0, "token": b.records[kr]["env"]["body"]["share"]}, *rest]}, ts)
    case("token-not-point", "8", "a token that is not a group element",
         ["BadElement"], tk, {**tb, "tokens": [{**t0, "token": b"\xfe" * 32}, *rest]}, ts)
    case("token-other-position", "12",
         "a token and proof moved to another position (a proof replayed)",
         ["Replay", "BadProof"], tk, {**tb, "tokens": [{**t0, "position": t0["position"] + 1},
                                                        *rest]}, ts)
    case("token-wrong-owner", "12", "a token claiming another owner",
         ["Unexpected"], tk, {**tb, "tokens": [{**t0, "owner": (t0["owner"] + 1) %
                                                len(b.identities)}, *rest]}, ts)
    case("token-unasked-position", "15", "a token for a position nobody asked to open",
         ["Unexpected"], tk, {**tb, "tokens": [{**t0, "position": 400}]}, ts)
    nxt = b.find(lambda x: x["env"]["seat"] == ts and x["env"]["body"]["type"] not in
                 ("host_change", "left", "timeout"), tk + 1)
    if nxt is not None:
        case("tokens-replayed", "15", "the same tokens sent again in a new envelope",
             ["Replay", "Unexpected"], nxt, tb, ts)
    se = b.body_type("secret", seat=1)
    if se is not None:
        rse = b.records[se]
        sb2 = rse["env"]["body"]
        case("secret-wrong", "10", "an end-of-hand secret that is not the share's",
             ["BadCommitment"], se, {**sb2, "secret": flip(sb2["secret"])}, rse["env"]["seat"])
        case("secret-early", "15", "a secret sent in the middle of the hand",
             ["Unexpected"], tk, {"type": "secret", "hand": tb["hand"],
                                  "secret": rse["env"]["body"]["secret"]}, ts)


def shuffle_cases(b: Base, tag: str, which: set[str] | None) -> None:
    """Faulty shuffles (each case holds a whole shuffled deck, so only a few bases get them);
    ``which``: the case ids to make (None: all)."""

    def case(id_: str, sec: str, comment: str, flags: list[str], at: int, new_body: dict,
             seat: int) -> None:
        if which is None or id_ in which:
            add(f"{tag}-{id_}", sec, comment, ["Deck", *flags], b, at,
                [with_body(b, at, new_body)], "DECK_FAULT", seat)

    sh = b.body_type("shuffle")
    rs = b.records[sh]
    ss, sb = rs["env"]["seat"], rs["env"]["body"]
    pr = sb["proof"]
    case("shuffle-bad-proof", "11.2", "a shuffle whose proof has one scalar changed",
         ["BadProof"], sh, {**sb, "proof": {**pr, "s": [flip(pr["s"][0]), *pr["s"][1:]]}}, ss)
    deck = sb["deck"]
    case("shuffle-cards-swapped", "11.2", "two output cards swapped after proving",
         ["BadProof"], sh, {**sb, "deck": [deck[1], deck[0], *deck[2:]]}, ss)
    case("shuffle-identity", "11.2", "a shuffled card whose c1 is the neutral element",
         ["BadElement"], sh, {**sb, "deck": [[bytes([1]) + bytes(31), deck[0][1]], *deck[1:]]},
         ss)
    case("shuffle-short-deck", "11.2", "a shuffle that drops a card",
         ["BadProof"], sh, {**sb, "deck": deck[:-1],
                            "proof": {x: (v[:-1] if x in ("c", "c_hat", "s_hat", "s_prime",
                                                          "t_hat") else v)
                                      for x, v in pr.items()}}, ss)
    case("shuffle-wrong-epoch", "11", "a shuffle for epoch 1 in epoch 0",
         ["Unexpected"], sh, {**sb, "epoch": 1}, ss)
    sh2 = b.body_type("shuffle", sh + 1)
    if sh2 is not None:
        rs2 = b.records[sh2]
        s2 = rs2["env"]["seat"]
        case("shuffle-replayed-from-other-seat", "11.2",
             "a seat submits the previous seat's shuffle and proof as its own",
             ["Replay", "BadProof"], sh2, {**sb}, s2)
        sh3 = b.body_type("shuffle", sh2 + 1)
        if sh3 is not None and (which is None or "shuffle-out-of-turn" in which):
            s3 = b.records[sh3]["env"]["seat"]
            env3 = new_env(b, sh2, s3, b.records[sh3]["env"]["body"])
            add(f"{tag}-shuffle-out-of-turn", "11", "a seat shuffles before its turn",
                ["Deck", "Unexpected"], b, sh2, [as_record(b, sh2, env3)], "DECK_FAULT", s3)


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



# ---------------------------------------------------------------------- live cheats
def illegal_play_case(b: Base, tag: str) -> None:
    """Replay ``b``'s match; at the first chance the seat to act plays a held card that does
    not match (signed and sequenced correctly): once the card opens every peer refuses it."""
    from dernier_p2p.protocol.messages import move_to_body
    from dernier_p2p.rules import apply, to_act
    from dernier_p2p.rules.errors import IllegalMove

    injected: dict[str, Any] = {}

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
            mv = Play(seat, slot, face)
            try:
                apply(sess.state, mv)
            except IllegalMove as exc:
                if exc.rule != "must-match":
                    continue
                injected.update(seat=seat, k=len(table.records))
                body = move_to_body(mv, sess.state.hand_number)
                table.send(sess._author.envelope(body, sess.head))
                return True
        return False

    run = drive(b.sc, b.trial, stop)
    _add_injected(
        b, run, injected, f"{tag}: no illegal play injected",
        (f"{tag}-play-does-not-match", "7.4",
         "a held card that does not match, correctly signed and sequenced; refused when its "
         "tokens reveal the face", ["IllegalMove", "LiveCheat"]),
        "ILLEGAL_MOVE", injected.get("seat", -1),
    )


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
    from cryptography.hazmat.primitives.asymmetric.x25519 import (
        X25519PrivateKey,
        X25519PublicKey,
    )

    from dernier_p2p.deck.keys import x25519_public
    from dernier_p2p.deck.transfer import NONCE, Transfer, _aad, _aead, transfer_commitment

    game = table.game
    rpub = x25519_public(table.sessions[to].mine.secret.transfer_private)
    commit = transfer_commitment(game, hand, giver, to, position, plaintext)
    epk = x25519_public(eph)
    shared = X25519PrivateKey.from_private_bytes(eph).exchange(
        X25519PublicKey.from_public_bytes(rpub)
    )
    head = Transfer(giver, to, position, epk, b"", commit)
    box = _aead(shared, game, hand, epk, rpub).encrypt(NONCE, plaintext, _aad(game, hand, head))
    return {"position": position, "to": to, "epk": epk, "box": box, "commit": commit}


def _plaintext(table: LocalTable, body: dict, giver: int) -> bytes:
    from dernier_p2p.deck.transfer import Transfer, open_box

    to = body["to"]
    t = Transfer(giver, to, body["position"], body["epk"], body["box"], body["commit"])
    return open_box(table.game, body["hand"], t, table.sessions[to].mine.secret.transfer_private)


def bad_box_case(b: Base, kind: str) -> None:
    """Replay ``b``'s match; the first ``kind`` box holds a token with a broken proof (the box
    opens and matches its commitment). Its receiver complains with the plaintext, and every peer
    names the giver."""
    from dernier_p2p.wire.canonical import decode

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
        table.send(sess._author.envelope(body, sess.head))
        return True

    run = drive(b.sc, b.trial, stop)
    _add_injected(
        b, run, seen, f"{b.name}: no false complaint injected",
        (f"{b.name}-false-complaint", "13",
         "a receiver complains about a sound box, quoting its true plaintext",
         ["Deck", "BadTransfer", "Complaint", "LiveCheat"]),
        "DECK_FAULT", seen.get("seat", -1),
    )


# ---------------------------------------------------------------------- frames
def frame_cases(b: Base) -> None:
    from dernier_p2p.net import handshake as hs

    def fr(payload: bytes) -> bytes:
        return len(payload).to_bytes(4, "big") + payload

    env = b.records[5]["env"]
    ident = b.identities[1]
    nonce = bytes(range(32))
    good = {
        "env": {"k": "env", "env": env},
        "rec": {"k": "rec", "rec": b.records[5]},
        "error": {"k": "error", "code": "BAD_CHAIN", "detail": "record 5"},
        "hello": hs.hello_message(ident, nonce, "seat one", None),
        "resume": hs.resume_message(ident, nonce, 41),
        "challenge": hs.challenge_message(nonce, {"name": "t", "variant": "dernier",
                                                  "players": 3, "taken": 1}),
        "welcome": {"k": "welcome", "seat": 2},
        "welcome-resume": {"k": "welcome", "seat": 2, "last": 57},
    }
    for name, msg in good.items():
        frame_case(f"frame-{name}-valid", f"a well-formed {name} frame", ["Frame", "Valid"],
                   fr(encode(msg)), None)
    payload = encode(good["env"])
    frame_case("frame-oversized", "a frame announcing 1 MiB + 1 bytes (refused on the length)",
               ["Frame", "Oversized"], (hs.MAX_FRAME + 1).to_bytes(4, "big") + payload, "OVERSIZED")
    frame_case("frame-length-max", "a frame announcing 2^32-1 bytes",
               ["Frame", "Oversized"], b"\xff\xff\xff\xff" + payload, "OVERSIZED")
    frame_case("frame-truncated", "a frame shorter than its length",
               ["Frame", "Truncated"], fr(payload)[:-3], "MALFORMED")
    frame_case("frame-stray-bytes", "bytes after the frame's end",
               ["Frame", "Trailing"], fr(payload) + b"\x00", "MALFORMED")
    frame_case("frame-short-prefix", "three bytes, no whole length prefix",
               ["Frame", "Truncated"], b"\x00\x00\x01", "MALFORMED")
    frame_case("frame-empty", "a frame of length 0", ["Frame", "Malformed"], fr(b""),
               "MALFORMED")
    frame_case("frame-not-canonical", "a frame whose map keys are out of order",
               ["Frame", "Encoding", "NonCanonical"],
               fr(map_bytes(good["env"], ["k", "env"])), "MALFORMED")
    frame_case("frame-not-map", "a frame holding a list", ["Frame", "Malformed"],
               fr(encode(["env", env])), "MALFORMED")
    frame_case("frame-kind-int", "a frame whose kind is an integer", ["Frame", "Malformed"],
               fr(encode({"k": 1, "env": env})), "MALFORMED")
    frame_case("frame-unknown-kind", "a frame of a kind the protocol lacks",
               ["Frame", "UnknownMessage"], fr(encode({"k": "gossip", "x": 1})), "UNEXPECTED")
    frame_case("frame-env-extra", "an env frame with an extra key", ["Frame", "UnknownField"],
               fr(encode({"k": "env", "env": env, "pad": b"x"})), "MALFORMED")
    frame_case("frame-garbage", "bytes that are not msgpack", ["Frame", "Encoding"],
               fr(b"\xc1\xc1\xc1"), "MALFORMED")


def handshake_cases(b: Base) -> None:
    """A peer's opening frame (hello or resume) against the challenge's nonce."""
    from dernier_p2p.net import handshake as hs

    ident, other = b.identities[1], b.identities[0]
    nonce = digest("dernier-p2p/interop-nonce", b.name)

    def fr(msg: dict) -> bytes:
        payload = encode(msg)
        return len(payload).to_bytes(4, "big") + payload

    def case(id_: str, comment: str, flags: list[str], msg: dict, code: str | None) -> None:
        SPECS.append(Spec(f"handshake-{id_}", "4.2", comment, ["Handshake", *flags], None, None,
                          [], code, None, fr(msg), nonce))

    hello = hs.hello_message(ident, nonce, "seat one", None)
    case("hello-valid", "a hello signed over the challenge's nonce", ["Valid"], hello, None)
    case("hello-listen-valid", "a hello with a listen address", ["Valid"],
         hs.hello_message(ident, nonce, "seat one", ("10.0.0.7", 47001)), None)
    resume = hs.resume_message(ident, nonce, 57)
    case("resume-valid", "a resume holding records up to 57", ["Valid"], resume, None)
    case("resume-none-valid", "a resume holding no record (have -1)", ["Valid"],
         hs.resume_message(ident, nonce, -1), None)
    case("hello-other-nonce", "a hello signed over another nonce (a replayed handshake)",
         ["Replay", "BadSignature"], hs.hello_message(ident, flip(nonce), "seat one", None),
         "BAD_SIGNATURE")
    case("hello-sig-flipped", "a hello whose signature has a bit flipped", ["BadSignature"],
         {**hello, "sig": flip(hello["sig"], 4)}, "BAD_SIGNATURE")
    case("hello-key-of-other", "a hello naming another seat's key", ["BadSignature"],
         {**hello, "key": other.public_bytes()}, "BAD_SIGNATURE")
    case("hello-small-order-key", "a hello whose key is the neutral element",
         ["BadSignature", "IdentityKey"], {**hello, "key": bytes([1]) + bytes(31)},
         "BAD_SIGNATURE")
    case("hello-version-1", "a hello of protocol version 1 (retired)", ["Version"],
         {**hello, "version": 1}, "VERSION")
    case("hello-version-3", "a hello of protocol version 3", ["Version"],
         {**hello, "version": 3}, "VERSION")
    case("hello-version-3-extra", "version 3 with an extra field: the version is checked first",
         ["Version", "UnknownField"], {**hello, "version": 3, "x": 1}, "VERSION")
    case("hello-extra-field", "a hello with an extra field", ["UnknownField", "Malformed"],
         {**hello, "x": 1}, "MALFORMED")
    case("hello-no-listen", "a hello without its listen field", ["Malformed"],
         {k: v for k, v in hello.items() if k != "listen"}, "MALFORMED")
    case("hello-name-33", "a name of 33 characters", ["Malformed"],
         hs.hello_message(ident, nonce, "x" * 33, None), "MALFORMED")
    case("hello-name-control", "a name with a control character", ["Malformed"],
         hs.hello_message(ident, nonce, "a\tb", None), "MALFORMED")
    case("hello-port-zero", "a listen port of 0", ["Malformed"],
         {**hello, "listen": ["10.0.0.7", 0]}, "MALFORMED")
    case("resume-have-minus-2", "a resume with have -2", ["Malformed"],
         hs.resume_message(ident, nonce, -2), "MALFORMED")
    case("resume-signed-by-other", "a resume naming one key, signed by another",
         ["BadSignature"], {**resume, "key": other.public_bytes()}, "BAD_SIGNATURE")
    case("welcome-instead", "a welcome where a hello is due", ["Unexpected"],
         {"k": "welcome", "seat": 1}, "UNEXPECTED")
    case("env-instead", "an envelope before the handshake", ["Unexpected"],
         {"k": "env", "env": b.records[3]["env"]}, "UNEXPECTED")


# ---------------------------------------------------------------------- valid cases
def valid_cases(b: Base) -> None:
    types = sorted({r["env"]["body"]["type"] for r in b.records})
    kinds = sorted({r["env"]["body"]["move"] for r in b.records
                    if r["env"]["body"]["type"] == "move"})
    rules = sorted(e for e in b.events if e[0].isupper() or e.startswith("session:"))
    flags = ["Valid", f"variant:{b.sc.variant}", f"players:{b.sc.players}"]
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
    late = seal(b, {**b.records[k], "t": b.records[k]["t"] + 3_600_000})
    add(f"{tag}-time-jump", "18", "a record an hour after the previous one",
        ["Valid", "Timing"], b, k, [late], None)
    same = seal(b, {**b.records[k], "t": b.records[k - 1]["t"]})
    add(f"{tag}-time-equal", "5.3", "a record with the previous record's time",
        ["Valid", "Timing"], b, k, [same], None)


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


# ---------------------------------------------------------------------- checking and writing
GROUPS = [
    ("encoding", ("3",), "Canonical msgpack: every non-canonical or mistyped record is refused"),
    ("frames", ("4",), "Frames on a connection: length limits, the frame codec, the handshake"),
    ("chain", ("5",), "Envelopes, records and the hash chain"),
    ("bodies", ("6", "20"), "Message bodies: schemas, unknown types and fields, host-only bodies"),
    ("moves", ("7.4",), "Moves the rules refuse, cards not held"),
    ("flow", ("7", "14", "18", "21"), "The course of a match: table, accepts, coin, host"),
    ("deck", ("8", "10", "11", "12", "13", "15", "16"), "Mental poker: keys, shuffles, tokens"),
]


def group_of(spec: Spec) -> str:
    if spec.code is None and spec.frame is None and spec.k is None:
        return "valid"
    if spec.code is None and spec.frame is None and "Prefix" in spec.flags:
        return "valid"
    best = ("flow", 0)
    for name, prefixes, _ in GROUPS:
        for p in prefixes:
            if (spec.section == p or spec.section.startswith(p + ".")) and len(p) > best[1]:
                best = (name, len(p))
    return best[0]


def check_all(bases: dict[str, Base]) -> list[tuple[Spec, dict]]:
    """Judge every spec with the reference adapter; keep those judged as intended."""
    out = []
    verifier = Verifier()
    order = sorted(SPECS, key=lambda s: (s.base or "~", s.k if s.k is not None else 1 << 60))
    dropped = 0
    for spec in order:
        if spec.nonce is not None:
            v = verify_opening(spec.nonce, spec.frame)
        elif spec.frame is not None:
            v = verify_frame(spec.frame)
        else:
            b = bases[spec.base]
            if spec.k is None:
                v = verifier.records(b.raw, [])
            else:
                more = [x if isinstance(x, bytes) else encode(x) for x in spec.next]
                v = verifier.records(b.raw[: spec.k], more)
        want = "valid" if spec.code is None else "invalid"
        ok = v.result == want and (spec.code is None or v.code == spec.code)
        if ok and spec.code is not None and spec.seat != "any":
            ok = v.seat == spec.seat
        if not ok:
            dropped += 1
            print(f"  DROPPED {spec.id}: intended {spec.code} seat {spec.seat}, got {v.result} "
                  f"{v.code} seat {v.seat}: {v.detail}", file=sys.stderr)
            continue
        expected: dict[str, Any] = {"result": v.result}
        if v.result == "invalid":
            expected.update(code=v.code, seat=v.seat, index=v.index)
        out.append((spec, expected))
    print(f"{len(out)} cases kept, {dropped} dropped", file=sys.stderr)
    return out


def case_json(spec: Spec, expected: dict) -> dict:
    if spec.nonce is not None:
        inp: dict[str, Any] = {"handshake": {"nonce": spec.nonce.hex(),
                                             "frame": spec.frame.hex()}}
    elif spec.frame is not None:
        inp = {"frame": spec.frame.hex()}
    elif spec.k is None:
        inp = {"transcript": spec.base}
    else:
        more = [x if isinstance(x, bytes) else encode(x) for x in spec.next]
        inp = {"transcript": spec.base, "prefix": spec.k, "next": [m.hex() for m in more]}
    return {"id": spec.id, "section": spec.section, "comment": spec.comment,
            "flags": spec.flags, "input": inp, "expected": expected}


def write_cases(kept: list[tuple[Spec, dict]], out: Path) -> None:
    groups: dict[str, list[dict]] = {}
    for spec, expected in kept:
        groups.setdefault(group_of(spec), []).append(case_json(spec, expected))
    about = {name: text for name, _, text in GROUPS}
    about["valid"] = "Recorded matches of every variant, 2 to 10 seats, and valid prefixes"
    for old in out.glob("*.json"):
        old.unlink()
    for name, tests in sorted(groups.items()):
        data = {"group": name, "description": about[name], "protocol_version": PROTOCOL_VERSION,
                "tests": sorted(tests, key=lambda t: t["id"])}
        (out / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m interop.generate")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--only", default=None, help="comma-separated scenario names")
    args = parser.parse_args(argv)
    out = Path(args.out)
    (out / "transcripts").mkdir(parents=True, exist_ok=True)
    only = None if args.only is None else set(args.only.split(","))
    bases: dict[str, Base] = {}
    for sc in SCENARIOS:
        if only is not None and sc.name not in only:
            continue
        b = record_match(sc)
        if b is None:
            print(f"{sc.name}: no match recorded", file=sys.stderr)
            continue
        bases[sc.name] = b
        size = sum(len(x) for x in b.raw)
        print(f"{sc.name}: trial {b.trial}, {len(b.records)} records, {size} bytes, events "
              f"{sorted(sc.want & b.events)}", file=sys.stderr)
        write_transcript_records(out / "transcripts" / f"{sc.name}.dtr", b.raw)
    names = list(bases)
    for i, name in enumerate(names):
        b = bases[name]
        other = bases[names[(i + 1) % len(names)]] if len(names) > 1 else None
        valid_cases(b)
        shuffles = {"dernier-2p": "all", "dernier-3p-timeout": "shuffle-out-of-turn",
                    "originale-3p": "shuffle-bad-proof", "moderno-3p": "shuffle-bad-proof",
                    "standard-3p": "shuffle-bad-proof"}.get(name, "none")
        deck_cases(b, name, other, shuffles)
        move_cases(b, name)
        left_cases(b)
        timeout_cases(b)
    first = bases.get("dernier-2p") or bases[names[0]]
    tag = first.name
    chain_cases(first, tag)
    record0_cases(first, tag)
    encoding_cases(first, tag)
    body_cases(first, tag)
    session_cases(first, tag)
    extra_valid_cases(first, tag)
    illegal_play_case(first, tag)
    frame_cases(first)
    handshake_cases(first)
    for name, kind in (("moderno-3p", "transfer"), ("originale-3p", "peek")):
        if name in bases:
            bad_box_case(bases[name], kind)
            false_complaint_case(bases[name])
            if name == "moderno-3p":
                unopenable_box_case(bases[name], kind)
    for name in ("moderno-3p", "originale-3p", "standard-3p"):
        if name in bases and name != tag:
            illegal_play_case(bases[name], name)
    if "dernier-3p-hostchange" in bases:
        host_change_cases(bases["dernier-3p-hostchange"])
    for name in ("moderno-3p", "standard-3p", "originale-3p"):
        if name in bases:
            chain_cases(bases[name], name)
            session_cases(bases[name], name)
    kept = check_all(bases)
    write_cases(kept, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
