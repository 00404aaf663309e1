"""In-process fuzz targets: each builds its seeds from a real match, then turns a seeded
random generator into one case (``make``) and runs it (``run``).

A case *passes* if it returns or raises one of the documented errors of :data:`EXPECTED`;
anything else is a crash.
"""

from __future__ import annotations

import copy
import ipaddress
import os
import random
import struct
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import msgpack

from dernier_p2p.bots.random_bot import RandomBot
from dernier_p2p.fuzz import finality_target, group_target, relay_target, upnp6_target
from dernier_p2p.fuzz.mutate import mutate_bytes, mutate_value
from dernier_p2p.net import handshake as hs
from dernier_p2p.net import links, relay
from dernier_p2p.net.discovery import Announcement, BadAnnouncement
from dernier_p2p.net.pinhole import PinholeError
from dernier_p2p.net.portmap import (
    OP_ADDRESS,
    OP_MAP_TCP,
    Mapping,
    MappingError,
    _check_mapping,
    _check_public,
    parse_reply,
)
from dernier_p2p.protocol.envelope import envelope_signature, record_signature
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.local import LocalTable, identity_for, play_round, run_local_match
from dernier_p2p.protocol.node.own import OwnSeat
from dernier_p2p.protocol.ready import check_ready_frame, ready_frame
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.protocol.session import Session
from dernier_p2p.protocol.verify import verify_file
from dernier_p2p.protocol.votes import check_vote_frame, sign_vote, vote_frame, vote_ok
from dernier_p2p.rules import to_act
from dernier_p2p.wire.canonical import EncodingError, decode, encode
from dernier_p2p.wire.hashing import digest
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.transcript import HEADER, LENGTH_SIZE

EXPECTED: tuple[type[BaseException], ...] = (
    ProtocolError, hs.NetError, BadAnnouncement, EncodingError, MappingError, PinholeError,
)
"""The documented errors: a refusal with a protocol code, or a router's answer found unusable
(``MappingError`` for IPv4 mappings, ``PinholeError`` and its ``Refused`` for IPv6 pinholes)."""

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

    @classmethod
    def with_votes(cls) -> Match:
        """A three-seat match with chat lines, a ``timeout`` of seat 2 with votes, a
        ``host_change`` deposing seat 0 with ``depose`` votes, then seat 2 ``left`` (a seat
        out), sequenced by seat 1 as the new host, and seat 0's ``resign``."""
        seeds = SEEDS[:3]
        table = LocalTable("dernier", seeds, {"match": ["hands", 1]},
                           listen=[("127.0.0.1", 7000 + k) for k in range(3)])
        table.deliver()
        bots, rng = [RandomBot(k) for k in range(3)], random.Random(3)
        table.send(table.sessions[1].chat("hello there")); table.deliver()  # noqa: E702
        while to_act(table.sessions[0].state) != 2:
            play_round(table, bots, rng)
        table.send(table.sessions[2].chat("one moment")); table.deliver()  # noqa: E702
        table.timeout(2)
        table.deliver()
        old = table.host_seat
        new = table.sessions[old].chain.next_host()
        votes = [table.sessions[v].vote("depose", old) for v in (1, 2)]
        body = table.sessions[new].votes_body("depose", old, votes)
        table.host = Sequencer(table.identities[new], table.game, new, records=table.records)
        table.host_seat = new
        table.send(table.sessions[new].sign_again([body])[0])
        table.deliver()
        table.absent("left", 2, [new, old])
        table.deliver()
        table.send(table.sessions[0].resign())
        table.deliver()
        return cls(list(table.records), list(table.identities), list(seeds))

    def session(self, upto: int) -> Session:
        """Seat 1's session after records ``0 .. upto-1``."""
        return self.sessions([upto])[upto]

    def sessions(self, points: list[int]) -> dict[int, Session]:
        """Seat 1's session after records ``0 .. at-1`` for each ``at`` of ``points``, the
        records replayed once."""
        seed = self.seeds[1]
        s = Session(self.identities[1], 1, self.records[0],
                    digest("dernier-p2p/local-seed", seed))
        out: dict[int, Session] = {}
        done = 1
        for at in sorted(set(points)):
            for rec in self.records[done:at]:
                s.receive(rec, rec["t"])
            done = max(done, at)
            out[at] = copy.deepcopy(s)
        return out

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
        host = rec.get("h")
        if not (isinstance(host, int) and 0 <= host < len(self.identities)):
            host = 0
        if rng.random() < 0.95:
            try:
                rec["hsig"] = record_signature(self.identities[host], rec)
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
    kind: Callable[[BaseException], str] | None = None
    """How a refusal is counted (default: its protocol code, or its type's name)."""
    close: Callable[[], None] | None = None
    """Called when a run of the target ends (what its cases set up for the run)."""


class Targets:
    """The targets, sharing one real match (built on first use)."""

    def __init__(self, checkpoints: int = 10) -> None:
        self.count = checkpoints
        self._sessions: dict[tuple[int, int], Session] = {}
        self._pristine: dict[tuple[int, int], Session] = {}

    def warm(self) -> None:
        """Build the matches and the sessions at every checkpoint (before any timing)."""
        for m, match in enumerate(self.matches):
            points = [at for k, at in self.spots if k == m]
            if m == 1:
                points.append(len(match.records))  # the table's frames are checked there
            for at, session in match.sessions(points).items():
                self._pristine[m, at] = session
                self._sessions[m, at] = copy.deepcopy(session)

    @cached_property
    def matches(self) -> list[Match]:
        """A plain two-seat match, and a three-seat one with chat, votes and a seat out."""
        return [Match.play(), Match.with_votes()]

    @property
    def match(self) -> Match:
        return self.matches[0]

    @cached_property
    def spots(self) -> list[tuple[int, int]]:
        """``(match, record index)`` pairs to mutate: the plain match's checkpoints, and every
        chat and vote-carrying record of the other, with a few records around them."""
        recs = self.matches[1].records
        kinds = ("chat", "timeout", "host_change", "left", "no_contest", "resign")
        marked = [i for i, r in enumerate(recs) if r["env"]["body"]["type"] in kinds]
        near = {j for i in marked for j in (i - 1, i, i + 1) if 0 < j < len(recs)}
        near = {j for j in near if recs[j]["env"]["body"]["type"] != "shuffle"}
        return [(0, at) for at in self.checkpoints] + [(1, at) for at in sorted(near)]

    @cached_property
    def table(self) -> Session:
        """Seat 1's session at the end of the three-seat match: the keys and game that frames
        about the table (ready, vote, status, link, present) are checked against."""
        return self.snapshot(len(self.matches[1].records), 1)

    @cached_property
    def checkpoints(self) -> list[int]:
        """Record indices to mutate: spread over the match, shuffles excluded (each costs a
        shuffle proof check, about a thousand times another record)."""
        recs = self.match.records
        cheap = [i for i in range(1, len(recs)) if recs[i]["env"]["body"]["type"] != "shuffle"]
        step = max(1, len(cheap) // self.count)
        return cheap[::step][: self.count]

    def snapshot(self, at: int, m: int = 0) -> Session:
        """Seat 1's session before record ``at`` of match ``m`` (a working copy of a pristine
        one)."""
        key = (m, at)
        if key not in self._pristine:
            self._pristine[key] = self.matches[m].session(at)
            self._sessions[key] = copy.deepcopy(self._pristine[key])
        return self._sessions[key]

    # --------------------------------------------------------------- frames and handshakes
    @cached_property
    def frame_seeds(self) -> list[dict]:
        m = self.match
        ident = m.identities[1]
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
            *({"k": "env", "env": self.matches[m].records[i]["env"]} for m, i in self.spots),
            *({"k": "rec", "rec": self.matches[m].records[i]} for m, i in self.spots),
            *self.table_frames,
        ]

    @cached_property
    def table_frames(self) -> list[dict]:
        """Frames about the three-seat table: ready, vote, status, done, seat links (link,
        probe, present) and the relay's openings."""
        m, s = self.matches[1], self.table
        by_type = {r["env"]["body"]["type"]: r for r in m.records}
        timeout, change = by_type["timeout"]["env"]["body"], by_type["host_change"]["env"]["body"]
        env2 = next(r["env"] for r in m.records if r["env"]["seat"] == 2)
        pending = [env2]
        present_sig = m.identities[2].sign(
            links.PRESENT_LABEL, {"game": s.game, "have": 30, "lent": 29, "nonce": NONCE,
                                  "pending": pending, "proof": None, "seat": 2})
        token = b"T" * relay.TOKEN_SIZE
        return [
            ready_frame(m.identities[1], s.game, 1, 40),
            vote_frame("timeout", timeout["seat"], timeout["votes"][0]),
            vote_frame("depose", change["seat"] if "seat" in change else 0, change["votes"][0]),
            vote_frame("abandon", None, sign_vote(m.identities[1], s.game, "abandon", None, 1,
                                                  len(m.records) - 1)),
            {"k": "status", "seat": 2, "state": "dropped", "grace_ms": 30_000},
            {"k": "status", "seat": 0, "state": "back", "grace_ms": 0},
            {"k": "done", "last": 40},
            links.link_message(m.identities[1], s.game, 1, NONCE),
            {"k": "probe", "nonce": NONCE},
            {"k": "present", "nonce": NONCE, "have": 30, "pending": pending, "proof": None,
             "lent": 29, "sig": present_sig},
            {"k": "relay-host", "version": hs.VERSION, "token": token},
            {"k": "relay-join", "version": hs.VERSION, "token": token},
            {"k": "relay-answer", "version": hs.VERSION, "token": token, "id": 7},
            {"k": "relay-call", "id": 7},
            {"k": "relay-join", "version": hs.VERSION, "token": token, "punch": True,
             "port": 40000},  # the punch fields of version 5 (4.7 step 5)
            {"k": "relay-answer", "version": hs.VERSION, "token": token, "id": 7,
             "port": 40001},
            {"k": "relay-call", "id": 7, "at": ["198.51.100.2", 40000], "port": 40000},
            {"k": "relay-paired", "at": ["198.51.100.3", 5000], "self": ["198.51.100.2", 40000],
             "port": 40001},
            {"k": "relay-seen", "self": ["198.51.100.3", 5000]},
        ]

    def make_frame(self, rng: random.Random) -> bytes:
        seed = rng.choice(self.frame_seeds)
        if rng.random() < 0.5:
            return mutate_bytes(encode(seed), rng)
        value = mutate_value(seed, rng)
        if isinstance(value, dict) and value.get("k") in ("hello", "resume") and rng.random() < .7:
            self._resign_opening(value)
        if isinstance(value, dict) and rng.random() < .7:
            self._resign_table_frame(value)
        return _encode(value, rng)

    def _resign_table_frame(self, msg: dict) -> None:
        """Sign a mutated ready, link or present frame again as its seat, so that what comes
        after the signature check is reached."""
        m, game = self.matches[1], self.table.game
        try:
            if msg.get("k") == "ready":
                msg["sig"] = m.identities[msg["seat"]].sign(
                    "dernier-p2p/ready", {"at": msg["at"], "game": game, "seat": msg["seat"]})
            elif msg.get("k") == "link":
                msg["sig"] = m.identities[msg["seat"]].sign(
                    links.LINK_LABEL, {"game": msg["game"], "nonce": NONCE, "seat": msg["seat"]})
            elif msg.get("k") == "present":
                msg["sig"] = m.identities[2].sign(
                    links.PRESENT_LABEL, {"game": game, "have": msg["have"],
                                          "lent": msg["lent"], "nonce": NONCE,
                                          "pending": msg["pending"], "proof": msg["proof"],
                                          "seat": 2})
        except (KeyError, TypeError, IndexError, EncodingError, RecursionError):
            pass

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
            hs.remote_error(msg)
        elif kind == "env":
            m, at = self.spots[len(payload) % len(self.spots)]
            self.snapshot(at, m).chain.check_envelope(msg.get("env"), 1)
        elif kind == "rec":
            m, at = self.spots[len(payload) % len(self.spots)]
            self.snapshot(at, m).chain.check(msg.get("rec"))
        else:
            self._run_table_frame(kind, msg)

    def _run_table_frame(self, kind: str, msg: dict) -> None:
        """The checks the host, a peer, a watcher, a seat link or the relay run on receipt."""
        s = self.table
        if kind == "ready":
            check_ready_frame(msg, s.keys, s.game)
        elif kind == "vote":
            kind, target, vote = check_vote_frame(msg, s.n)
            vote_ok(vote, s.keys[vote["seat"]], s.game, kind, target)
        elif kind == "status":
            if hs.check_status(msg, s.n) is None:  # logged and ignored by the receiver
                raise hs.NetError(hs.MALFORMED, "status")
        elif kind == "done":
            hs.check_done(msg)
        elif kind == "link":
            links.check_link(msg, NONCE, s)
        elif kind == "probe":
            links.check_probe(msg)
        elif kind == "present":
            links.unsequenced(s, 2, links.check_present(msg, NONCE, s, 2))
        elif kind == "relay-call":
            if relay.call_id(msg) is None:  # ignored by the host's control connection
                raise hs.NetError(hs.MALFORMED, "relay-call")
        elif kind == "relay-paired":
            relay.read_paired(msg, True)
        elif kind == "relay-seen":
            relay.read_seen(msg)
        elif kind.startswith("relay-"):
            relay.check_open(msg)
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
    def make_record(self, rng: random.Random) -> tuple[int, int, bytes]:
        m, at = rng.choice(self.spots)
        match = self.matches[m]
        rec = copy.deepcopy(match.records[at])
        where = rng.random()
        if where < 0.6:
            rec["env"]["body"] = mutate_value(rec["env"]["body"], rng)
        elif where < 0.85:
            rec["env"] = mutate_value(rec["env"], rng)
        else:
            rec = mutate_value(rec, rng)
        if isinstance(rec, dict):
            rec = match.resign(rec, rng)
        return m, at, _encode(rec, rng)[: hs.MAX_FRAME]  # as it would come in a rec frame

    def run_record(self, case: tuple[int, int, bytes]) -> None:
        """Decode the record within the limits, as a peer does, then apply it."""
        m, at, data = case
        rec = decode(data)
        session = self.snapshot(at, m)
        before = session.chain.head
        try:
            session.receive(rec, 10**12)
        finally:
            if session.chain.head != before or session.fault is not None:  # it changed
                self._sessions[m, at] = copy.deepcopy(self._pristine[m, at])

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

    # --------------------------------------------------------------- a router's replies
    ROUTER_PORT = 47630

    def make_router(self, rng: random.Random) -> bytes:
        """A NAT-PMP reply (RFC 6886) to the address or the mapping request: well formed with
        random values (an outside address, ports, a lease), or a real one mutated."""
        if rng.random() < 0.5:
            address = struct.pack("!BBHI4s", 0, 128, 0, rng.getrandbits(32),
                                  rng.getrandbits(32).to_bytes(4, "big"))
            ports = [rng.choice([0, 1, self.ROUTER_PORT, 65535, rng.getrandbits(16)])
                     for _ in range(2)]
            lease = rng.choice([0, 1, 3600, 2**32 - 1, rng.getrandbits(32)])
            mapping = struct.pack("!BBHIHHI", 0, 130, rng.choice([0, 0, 0, rng.getrandbits(16)]),
                                  rng.getrandbits(32), *ports, lease)
            return rng.choice([address, mapping])
        seed = rng.choice([
            struct.pack("!BBHI4s", 0, 128, 0, 77, bytes([11, 22, 33, 4])),
            struct.pack("!BBHIHHI", 0, 130, 0, 77, self.ROUTER_PORT, 50000, 3600),
        ])
        return mutate_bytes(seed, rng)

    def run_router(self, data: bytes) -> None:
        """What the host does with a router's reply: read it, then check the outside address
        or the mapping before an invite code or a renewal uses it (MappingError: no mapping)."""
        op = OP_ADDRESS if len(data) > 1 and data[1] == 128 else OP_MAP_TCP
        got = parse_reply(data, op)
        if op == OP_ADDRESS:
            _check_public(str(ipaddress.IPv4Address(got[0])))
        else:
            internal, external, lease = got
            _check_mapping(Mapping("NAT-PMP", "11.22.33.4", external, internal, lease,
                                   "192.168.1.1"), self.ROUTER_PORT)

    # --------------------------------------------------------------- a watcher's record 0
    def make_watch(self, rng: random.Random) -> bytes:
        """Record 0 as a watcher gets it: mutated, and signed again by the host of the match
        or by another key (a replayed or forged table) half the time."""
        match = self.matches[rng.randrange(2)]
        rec = mutate_value(copy.deepcopy(match.records[0]), rng) if rng.random() < 0.7 \
            else copy.deepcopy(match.records[0])
        if isinstance(rec, dict) and rng.random() < 0.5:
            rec = match.resign(rec, rng)
        return _encode(rec, rng)[: hs.MAX_FRAME]

    def run_watch(self, data: bytes) -> None:
        """A watcher's check of record 0 (4.10): decoded, applied by an observer session, its
        host key compared with the invite code's (the match's host's, or another seat's key
        for about half the cases: a code naming someone else)."""
        want = self.match.identities[len(data) % 2].public_bytes()

        def check_host(key: bytes) -> None:
            if key != want:
                raise hs.NetError("WRONG_HOST", "not the host the code names")

        own = OwnSeat(None, None, decode(data), b"")
        check_host(own.session.keys[own.session.host])

    # --------------------------------------------------------------- finality (7.11)
    def make_finality(self, rng: random.Random) -> tuple[list[Any], list[Any], Any]:
        """Two histories of the three-seat match (a host change in it), the second changed
        from a random index on (:mod:`.finality_target`)."""
        return finality_target.make(self.matches[1].records, rng)

    # --------------------------------------------------------------- registry
    def get(self, name: str) -> Target:
        table: dict[str, Target] = {
            "frames": Target("frames", self.make_frame, self.run_frame),
            "handshake": Target("handshake", self.make_opening, self.run_opening),
            "records": Target("records", self.make_record, self.run_record,
                              lambda c: bytes([c[0]]) + c[1].to_bytes(4, "big") + c[2]),
            "transcript": Target("transcript", self.make_transcript, self.run_transcript),
            "datagram": Target("datagram", self.make_datagram, self.run_datagram),
            "router": Target("router", self.make_router, self.run_router),
            "watch": Target("watch", self.make_watch, self.run_watch),
            "relay": Target("relay", relay_target.make, relay_target.run, relay_target.dump),
            "group": Target("group", group_target.make, group_target.run),
            "finality": Target("finality", self.make_finality, finality_target.run),
            "upnp6": Target("upnp6", upnp6_target.make, upnp6_target.run, upnp6_target.dump,
                            upnp6_target.reason, upnp6_target.close),
        }
        return table[name]


IN_PROCESS = ("frames", "handshake", "records", "transcript", "datagram", "router", "watch",
              "relay", "group", "finality", "upnp6")
