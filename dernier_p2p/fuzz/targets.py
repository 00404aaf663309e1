"""In-process fuzz targets: each builds its seeds from a real match, then turns a seeded
random generator into one case (``make``) and runs it (``run``).

A case *passes* if it returns or raises one of the documented errors of :data:`EXPECTED`;
anything else is a crash.
"""

from __future__ import annotations

import copy
import os
import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import msgpack

from dernier_p2p.bots.random_bot import RandomBot
from dernier_p2p.fuzz.mutate import mutate_bytes, mutate_value
from dernier_p2p.net import handshake as hs
from dernier_p2p.net.discovery import Announcement, BadAnnouncement
from dernier_p2p.protocol.envelope import envelope_signature, record_signature
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.local import identity_for, run_local_match
from dernier_p2p.protocol.session import Session
from dernier_p2p.protocol.verify import verify_file
from dernier_p2p.wire.canonical import EncodingError, decode, encode
from dernier_p2p.wire.hashing import digest
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.transcript import HEADER, LENGTH_SIZE

EXPECTED: tuple[type[BaseException], ...] = (
    ProtocolError, hs.NetError, BadAnnouncement, EncodingError,
)
"""The documented errors: a refusal with a protocol code."""

NONCE = b"N" * hs.NONCE_SIZE
SEEDS = [bytes([i + 1]) * 32 for i in range(3)]


def _encode(value: Any, rng: random.Random) -> bytes:
    """Canonical bytes if the value has them (mostly), else msgpack as it comes."""
    if rng.random() < 0.9:
        try:
            return encode(value)
        except (EncodingError, RecursionError):
            pass
    try:
        return msgpack.packb(value, use_bin_type=rng.random() < 0.9)
    except (OverflowError, ValueError, TypeError):  # e.g. nested past msgpack's own limit
        return b"\xc0"


@dataclass
class Match:
    """A real two-seat match played in memory: its records and the seats' identities."""

    records: list[dict]
    identities: list[IdentityKey]
    seeds: list[bytes]

    @classmethod
    def play(cls, players: int = 2) -> Match:
        seeds = SEEDS[:players]
        result = run_local_match("dernier", players, seeds,
                                 [RandomBot(i) for i in range(players)],
                                 options={"match": ["hands", 1]})
        return cls(result.records, [identity_for(s) for s in seeds], seeds)

    def session(self, upto: int) -> Session:
        """Seat 1's session after records ``0 .. upto-1``."""
        seed = self.seeds[1]
        s = Session(self.identities[1], 1, self.records[0],
                    digest("dernier-p2p/local-seed", seed))
        for rec in self.records[1:upto]:
            s.receive(rec, rec["t"])
        return s

    def resign(self, rec: dict, rng: random.Random) -> dict:
        """Sign the (mutated) envelope again with its author's key, if the seat is one, and the
        record with the host's, so that the checks behind the signatures are reached."""
        env = rec.get("env")
        if isinstance(env, dict):
            seat = env.get("seat")
            if isinstance(seat, int) and 0 <= seat < len(self.identities) and rng.random() < 0.95:
                try:
                    env["sig"] = envelope_signature(self.identities[seat], env)
                except (EncodingError, KeyError, TypeError, ValueError, RecursionError):
                    pass
        if rng.random() < 0.95:
            try:
                rec["hsig"] = record_signature(self.identities[0], rec)
            except (EncodingError, KeyError, TypeError, ValueError, RecursionError):
                pass
        return rec


@dataclass
class Target:
    """One fuzz target: ``make(rng) -> input`` and ``run(input)``; ``dump(input) -> bytes``
    for the reproducer."""

    name: str
    make: Callable[[random.Random], Any]
    run: Callable[[Any], None]
    dump: Callable[[Any], bytes] = field(default=lambda x: x if isinstance(x, bytes) else
                                         msgpack.packb(x, use_bin_type=True))


class Targets:
    """The targets, sharing one real match (built on first use)."""

    def __init__(self, checkpoints: int = 10) -> None:
        self.count = checkpoints
        self._sessions: dict[int, Session] = {}
        self._pristine: dict[int, Session] = {}

    def warm(self) -> None:
        """Build the match and the sessions at every checkpoint (before any timing)."""
        for at in self.checkpoints:
            self.snapshot(at)

    @cached_property
    def match(self) -> Match:
        return Match.play()

    @cached_property
    def checkpoints(self) -> list[int]:
        """Record indices to mutate: spread over the match, shuffles excluded (each costs a
        shuffle proof check, about a thousand times another record)."""
        recs = self.match.records
        cheap = [i for i in range(1, len(recs)) if recs[i]["env"]["body"]["type"] != "shuffle"]
        step = max(1, len(cheap) // self.count)
        return cheap[::step][: self.count]

    def snapshot(self, at: int) -> Session:
        """Seat 1's session before record ``at`` (a working copy of a pristine one)."""
        if at not in self._pristine:
            self._pristine[at] = self.match.session(at)
            self._sessions[at] = copy.deepcopy(self._pristine[at])
        return self._sessions[at]

    # --------------------------------------------------------------- frames and handshakes
    @cached_property
    def frame_seeds(self) -> list[dict]:
        m = self.match
        ident = m.identities[1]
        recs = m.records
        summary = {"name": "t", "variant": "dernier", "players": 2, "taken": 1}
        return [
            hs.challenge_message(NONCE, summary),
            hs.hello_message(ident, NONCE, "ann", ("127.0.0.1", 4000)),
            hs.hello_message(ident, NONCE, "bob", None),
            hs.resume_message(ident, NONCE, 12),
            hs.watch_message(-1),
            {"k": "welcome", "seat": 1},
            {"k": "welcome", "seat": 1, "last": 40},
            {"k": "watching", "last": 40},
            hs.error_message("MALFORMED", "x"),
            *({"k": "env", "env": recs[i]["env"]} for i in self.checkpoints),
            *({"k": "rec", "rec": recs[i]} for i in self.checkpoints),
        ]

    def make_frame(self, rng: random.Random) -> bytes:
        seed = rng.choice(self.frame_seeds)
        if rng.random() < 0.5:
            return mutate_bytes(encode(seed), rng)
        value = mutate_value(seed, rng)
        if isinstance(value, dict) and value.get("k") in ("hello", "resume") and rng.random() < .7:
            self._resign_opening(value)
        return _encode(value, rng)

    def _resign_opening(self, msg: dict) -> None:
        ident = self.match.identities[1]
        try:
            if msg["k"] == "hello":
                signed = {k: msg[k] for k in ("name", "key", "listen")}
                msg["sig"] = ident.sign(hs.HELLO_LABEL, {**signed, "nonce": NONCE})
            else:
                msg["sig"] = ident.sign(hs.RESUME_LABEL,
                                        {"have": msg["have"], "key": msg["key"], "nonce": NONCE})
        except (KeyError, TypeError, EncodingError, RecursionError):
            pass

    def run_frame(self, payload: bytes) -> None:
        """What the host and a peer do with a frame: decode, then check it as its kind."""
        msg = hs.unpack(payload)
        kind = msg["k"]
        if kind in ("hello", "resume", "watch"):
            hs.check_opening(msg, NONCE)
        elif kind == "watching":
            hs.check_watching(msg)
        elif kind == "challenge":
            hs.check_challenge(msg)
        elif kind == "welcome":
            hs.check_welcome(msg)
        elif kind == "error":
            code, detail = msg.get("code"), msg.get("detail")
            if not isinstance(code, str) or not isinstance(detail, str):
                raise hs.NetError(hs.MALFORMED, "error frame")
        elif kind == "env":
            at = self.checkpoints[len(payload) % len(self.checkpoints)]
            self.snapshot(at).chain.check_envelope(msg.get("env"), 1)
        elif kind == "rec":
            at = self.checkpoints[len(payload) % len(self.checkpoints)]
            self.snapshot(at).chain.check(msg.get("rec"))
        else:
            raise hs.NetError(hs.UNEXPECTED, kind)

    def make_opening(self, rng: random.Random) -> bytes:
        seed = rng.choice(self.frame_seeds[1:5])
        value = mutate_value(seed, rng)
        if isinstance(value, dict) and rng.random() < 0.8:
            self._resign_opening(value)
        return _encode(value, rng) if rng.random() < 0.8 else mutate_bytes(encode(seed), rng)

    def run_opening(self, payload: bytes) -> None:
        hs.check_opening(hs.unpack(payload), NONCE)

    # --------------------------------------------------------------- records
    def make_record(self, rng: random.Random) -> tuple[int, Any]:
        at = rng.choice(self.checkpoints)
        rec = copy.deepcopy(self.match.records[at])
        where = rng.random()
        if where < 0.6:
            rec["env"]["body"] = mutate_value(rec["env"]["body"], rng)
        elif where < 0.85:
            rec["env"] = mutate_value(rec["env"], rng)
        else:
            rec = mutate_value(rec, rng)
        if isinstance(rec, dict):
            rec = self.match.resign(rec, rng)
        return at, _encode(rec, rng)[: hs.MAX_FRAME]  # as it would come in a rec frame

    def run_record(self, case: tuple[int, bytes]) -> None:
        """Decode the record within the limits, as a peer does, then apply it."""
        at, data = case
        rec = decode(data)
        session = self.snapshot(at)
        before = session.chain.head
        try:
            session.receive(rec, 10**12)
        finally:
            if session.chain.head != before or session.fault is not None:  # it changed
                self._sessions[at] = copy.deepcopy(self._pristine[at])

    # --------------------------------------------------------------- transcripts
    @cached_property
    def transcript_prefix(self) -> list[dict]:
        recs = self.match.records
        first_shuffle = next(i for i, r in enumerate(recs) if r["env"]["body"]["type"] == "shuffle")
        return recs[:first_shuffle]

    def make_transcript(self, rng: random.Random) -> bytes:
        recs = [copy.deepcopy(r) for r in self.transcript_prefix]
        if rng.random() < 0.5 and len(recs) > 1:
            i = rng.randrange(1, len(recs))
            rec = mutate_value(recs[i], rng)
            recs[i] = self.match.resign(rec, rng) if isinstance(rec, dict) else rec
        bodies = [_encode(r, rng) for r in recs]
        data = HEADER + b"".join(len(b).to_bytes(LENGTH_SIZE, "big") + b for b in bodies)
        return mutate_bytes(data, rng) if rng.random() < 0.5 else data

    @cached_property
    def _scratch(self) -> str:
        folder = tempfile.mkdtemp(prefix="dernier-fuzz-")
        return os.path.join(folder, "case.transcript")

    def run_transcript(self, data: bytes) -> None:
        with open(self._scratch, "wb") as f:
            f.write(data)
        verify_file(self._scratch)  # a verdict, whatever the bytes

    # --------------------------------------------------------------- LAN datagrams
    def make_datagram(self, rng: random.Random) -> bytes:
        seed = Announcement("table", "dernier", 2, 47630, host="10.0.0.1").to_bytes()
        if rng.random() < 0.5:
            return mutate_bytes(seed, rng)
        return _encode(mutate_value(msgpack.unpackb(seed, raw=False), rng), rng)

    def run_datagram(self, data: bytes) -> None:
        Announcement.from_bytes(data, "10.0.0.2")

    # --------------------------------------------------------------- registry
    def get(self, name: str) -> Target:
        table: dict[str, Target] = {
            "frames": Target("frames", self.make_frame, self.run_frame),
            "handshake": Target("handshake", self.make_opening, self.run_opening),
            "records": Target("records", self.make_record, self.run_record,
                              lambda c: c[0].to_bytes(4, "big") + c[1]),
            "transcript": Target("transcript", self.make_transcript, self.run_transcript),
            "datagram": Target("datagram", self.make_datagram, self.run_datagram),
        }
        return table[name]


IN_PROCESS = ("frames", "handshake", "records", "transcript", "datagram")
