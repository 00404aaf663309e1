"""A whole table in one process: a host that sequences, one :class:`Session` per seat, and
policies (bots) choosing from each session's own view. For tests, benchmarks and local play.

Everything is deterministic: identities, game id and Drbg seeds derive from the seats' seeds;
the clock advances one millisecond per record; the order in which seats are asked for moves
comes from a seeded generator. Envelopes are sequenced first come, first served, so moves
intended at the same moment race and the host's order decides. A seat whose policy does not move
is timed out with the votes of a quorum of the others (all honest here); at two seats the match
then ends as no contest.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dernier_p2p.protocol.envelope import genesis_hash, sign_envelope
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.protocol.session import Session
from dernier_p2p.protocol.votes import quorum
from dernier_p2p.rules import Move, State, to_act
from dernier_p2p.rules.cards import Card
from dernier_p2p.wire.hashing import digest
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.version import PROTOCOL_VERSION

Policy = Callable[[State, int, dict[int, Card]], Move | None]
Tamper = Callable[[dict], dict]

DEFAULT_TIMERS = {"turn_ms": 30_000, "declare_ms": 3_000, "grace_ms": 2_000}


def identity_for(seed: bytes) -> IdentityKey:
    """The identity key a local seat derives from its seed."""
    return IdentityKey.generate(digest("dernier-p2p/local-identity", seed))


class LocalTable:
    """Seats, host and sessions wired in memory. ``tamper(env) -> env`` (tests) may rewrite an
    envelope before the host sequences it. ``version``: record 0's protocol version (an older
    readable one records a match as that version played it: tests, the conformance suite).
    ``batch_answers``: as for :class:`Session` (False: one ``tokens`` message per operation)."""

    def __init__(
        self,
        variant: str,
        seeds: Sequence[bytes],
        options: dict | None = None,
        host: int = 0,
        tamper: Tamper | None = None,
        listen: Sequence[tuple[str, int] | None] | None = None,
        version: int = PROTOCOL_VERSION,
        batch_answers: bool = True,
    ) -> None:
        n = len(seeds)
        self.versions = (version,)
        where = list(listen) if listen is not None else [None] * n
        self.n = n
        self.seeds = [bytes(s) for s in seeds]
        self.game = digest("dernier-p2p/local-game", [variant, self.seeds])[:16]
        self.identities = [identity_for(s) for s in self.seeds]
        body = {
            "type": "table",
            "version": version,
            "variant": variant,
            "options": dict(options or {}),
            "players": [
                {"name": f"seat {k}", "key": self.identities[k].public_bytes(),
                 "listen": None if where[k] is None else list(where[k])}
                for k in range(n)
            ],
            "timers": dict(DEFAULT_TIMERS),
        }
        self.host_seat = host
        self.host = Sequencer(self.identities[host], self.game, host, versions=self.versions)
        self.clock = 0
        gen = genesis_hash(self.game)
        rec0 = self.sequence(sign_envelope(self.identities[host], self.game, host, 0, gen, body))
        self.sessions = [
            Session(self.identities[k], k, rec0, digest("dernier-p2p/local-seed", self.seeds[k]),
                    versions=self.versions, batch_answers=batch_answers)
            for k in range(n)
        ]
        self.tamper = tamper
        self.queue: deque[dict] = deque()
        for s in self.sessions:
            self.queue.extend(s.start())

    @property
    def records(self) -> list[dict]:
        return self.host.records

    def sequence(self, env: dict) -> dict:
        """Have the host sequence ``env`` now (no delivery); returns the record."""
        rec = self.host.submit(env, env["seat"], self.clock)
        self.clock += 1
        return rec

    def send(self, env: dict) -> None:
        self.queue.append(env)

    def deliver(self) -> None:
        """Sequence every queued envelope (and every reply) and feed each record to every
        session; a ProtocolError from a session propagates."""
        while self.queue:
            env = self.queue.popleft()
            if self.tamper is not None:
                env = self.tamper(env)
            rec = self.sequence(env)
            for s in self.sessions:
                self.queue.extend(s.receive(rec, rec["t"]))

    def collect(self, kind: str, target: int | None, voters: Sequence[int] | None = None) -> list:
        """Votes of ``voters`` (default: every seat at the table but ``target``, the host
        first), as many as a quorum needs when ``voters`` is not given."""
        host = self.sessions[self.host_seat]
        at = sorted(host.chain.at_table)
        if voters is None:
            first = [self.host_seat] if self.host_seat != target else []
            others = [s for s in at if s not in (target, self.host_seat)]
            voters = [*first, *others][: quorum(len(at))]
        return [self.sessions[v].vote(kind, target) for v in voters]

    def absent(self, kind: str, seat: int, voters: Sequence[int] | None = None) -> None:
        """The host sequences ``timeout`` or ``left`` for ``seat`` with the votes of
        ``voters`` (default: a quorum of the others, honest seats that see it absent); at two
        seats absence is ``no_contest`` without votes."""
        host = self.sessions[self.host_seat]
        if len(host.chain.at_table) == 2 and voters is None:
            body = {"type": "no_contest", "seat": seat, "votes": []}
        else:
            body = host.votes_body(kind, seat, self.collect(kind, seat, voters))
        self.send(host.announce(body))

    def timeout(self, seat: int) -> None:
        """The clocks ran out for ``seat`` (see :meth:`absent`)."""
        self.absent("timeout", seat)


@dataclass
class LocalResult:
    sessions: list[Session]
    records: list[dict]
    moves: int  # move envelopes sent (intended moves and host timeouts)

    @property
    def state(self) -> State:
        return self.sessions[0].state


def play_round(table: LocalTable, policies: Sequence[Policy], rng: random.Random) -> int:
    """Ask every seat that can move (in a seeded order) for a move, send the moves, deliver.

    The seat to act must answer; if its policy returns None the host times it out. Returns the
    number of envelopes sent."""
    st = table.sessions[0].state
    actor = to_act(st)
    order = list(range(table.n))
    rng.shuffle(order)
    sent = 0
    for seat in order:
        s = table.sessions[seat]
        if not s.legal():
            continue
        mv = policies[seat](s.state, seat, s.view)
        if mv is None:
            if seat == actor:
                table.timeout(seat)
                sent += 1
            continue
        table.send(s.intend(mv))
        sent += 1
    if sent == 0 and actor is not None and not table.sessions[actor].legal():
        table.timeout(actor)
        sent += 1
    table.deliver()
    return sent


def run_local_match(
    variant: str,
    players: int,
    seeds: Sequence[bytes],
    policies: Sequence[Policy],
    max_moves: int = 10_000,
    options: dict | None = None,
    order_seed: int = 0,
    tamper: Tamper | None = None,
    version: int = PROTOCOL_VERSION,
) -> LocalResult:
    """Play a match of ``players`` seats in memory (a table of protocol ``version``); stops when
    it is over or after ``max_moves`` move envelopes."""
    if len(seeds) != players or len(policies) != players:
        raise ValueError("one seed and one policy per seat")
    table = LocalTable(variant, seeds, options, tamper=tamper, version=version)
    table.deliver()
    rng = random.Random(order_seed)
    moves = 0
    while not table.sessions[0].finished and moves < max_moves:
        sent = play_round(table, policies, rng)
        if sent == 0:
            raise RuntimeError(f"no seat can move: {table.sessions[0].pending}")
        moves += sent
    return LocalResult(table.sessions, table.records, moves)
