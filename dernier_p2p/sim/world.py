"""A whole table in one process on a virtual clock: processes, a network and their faults.

The :class:`World` is a seeded priority queue of events (FoundationDB's and TigerBeetle's
simulators are built the same way). Each :class:`Proc` is one peer process: the real
:class:`~dernier_p2p.protocol.node.peer.PeerNode` (its session, rules, chain and liveness
core), a "disk" (its transcript: the records it persisted, which survive a kill), a CPU (work
takes the time the cost model says, scaled by the process's speed; events wait meanwhile) and a
bot that plays its seat. The network delivers frames in order on each connection after a
latency with jitter; connections open only to a process that listens, close on either side,
and break on faults (:mod:`.faults`). The world does for each node exactly what the trio
driver of :mod:`dernier_p2p.net` does for it: deliver events, carry out effects, wake it at its
deadline.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.liveness.budgets import BEAT_MS
from dernier_p2p.protocol.node import effects as fx
from dernier_p2p.protocol.node.hosting import HostingConfig, Refusal
from dernier_p2p.protocol.node.peer import PeerNode
from dernier_p2p.wire.identity import IdentityKey

Event = Callable[[], None]


@dataclass
class Conn:
    """One connection between a seat process (``seat_side``) and a host process."""

    number: int
    seat_proc: int
    host_proc: int
    seat: int | None = None  # the seat it resumed as, at the host
    open: bool = True
    last_at: dict[int, int] = field(default_factory=dict)  # proc -> last delivery time on it


@dataclass
class NetConfig:
    latency_ms: int = 2
    jitter_ms: int = 3
    connect_ms: int = 2
    probe_timeout_ms: int = 5_000


class Proc:
    """One peer process (see the module docstring)."""

    def __init__(self, world: World, pid: int, identity: IdentityKey, seed: bytes,
                 listens: bool, speed: float = 1.0, drift: int = 0) -> None:
        self.world = world
        self.pid = pid
        self.identity = identity
        self.seed = seed
        self.listens = listens
        self.speed = speed
        self.drift = drift  # its wall clock minus the world's, ms
        self.node: PeerNode | None = None
        self.alive = True
        self.disk: list[dict[str, Any]] = []
        self.disk_old: list[list[dict[str, Any]]] = []
        self.busy_until = 0
        self.inbox: list[Event] = []
        self.up: Conn | None = None  # this seat's connection to its host
        self.seat_conns: dict[int, Conn] = {}  # seat -> connection, while hosting
        self.hosting = False
        self.wake_at: int | None = None
        self.ended: str | None = None
        self.stopped: ProtocolError | None = None
        self.notes: list[tuple[int, str, Any]] = []
        self.policy: Any = None
        self.thinking = False
        self.generation = 0  # bumped by a kill: events of a dead incarnation are dropped

    # ------------------------------------------------------------------ scheduling
    def post(self, event: Event) -> None:
        """Run ``event`` on this process when its CPU is free (in order)."""
        if not self.alive:
            return
        gen = self.generation

        def run() -> None:
            if self.alive and self.generation == gen:
                self.inbox.append(event)
                self.drain()

        self.world.at(max(self.world.now, self.busy_until), run)

    def drain(self) -> None:
        """Process queued events while the CPU is free, then the node's work."""
        w = self.world
        while self.alive and self.busy_until <= w.now and self.inbox:
            event = self.inbox.pop(0)
            event()
            self.flush()
        if not self.alive or self.node is None:
            return
        if self.busy_until > w.now:
            return
        if self.node.has_work():
            cost = w.costs.work_ms(self.node, self.speed)
            node = self.node
            gen = self.generation
            self.busy_until = w.now + cost

            def done() -> None:
                if not self.alive or self.generation != gen or self.node is not node:
                    return
                try:
                    node.work(w.now)
                except ProtocolError as exc:  # a fault the node did not turn into an effect
                    self.stopped = exc
                self.flush()
                self.drain()

            w.at(self.busy_until, done)
            return
        self.tick()

    def tick(self) -> None:
        """Run the node's rules now and wake it at its deadline."""
        w = self.world
        if not self.alive or self.node is None:
            return
        self.node.advance(w.now)
        self.flush()
        self.bot()
        deadline = self.node.deadline()
        if deadline is not None and (self.wake_at is None or deadline < self.wake_at
                                     or self.wake_at <= w.now):
            self.wake_at = deadline
            gen = self.generation

            def wake() -> None:
                if self.alive and self.generation == gen and self.wake_at == deadline:
                    self.wake_at = None
                    self.post(lambda: None)

            w.at(max(deadline, w.now + 1), wake)

    # ------------------------------------------------------------------ effects
    def flush(self) -> None:
        if self.node is None:
            return
        for e in self.node.take():
            self.effect(e)

    def effect(self, e: Any) -> None:
        w = self.world
        if isinstance(e, fx.Send):
            w.send(self, e.conn, e.frame)
        elif isinstance(e, fx.Close):
            w.close(self, e.conn)
        elif isinstance(e, fx.Persist):
            self.disk.append(e.record)
        elif isinstance(e, fx.Restart):
            self.disk_old.append(self.disk)
            self.disk = list(e.records)
        elif isinstance(e, fx.Hosting):
            self.hosting = e.listening
        elif isinstance(e, fx.Stopped):
            self.stopped = e.fault
        elif isinstance(e, act.Dial):
            w.dial(self, e.seat, e.have)
        elif isinstance(e, act.Probe):
            w.probe(self, e.seat)
        elif isinstance(e, act.Urge):
            w.urge(self, e.seat, e.frame)
        elif isinstance(e, act.End):
            self.ended = e.why
            self.notes.append((w.now, "end", e.why))
        elif isinstance(e, act.Note):
            self.notes.append((w.now, e.kind, e.seat))
        elif isinstance(e, fx.Log):
            if w.log is not None:
                w.log(self.pid, e.level, e.text)

    # ------------------------------------------------------------------ the bot
    def bot(self) -> None:
        node = self.node
        if node is None or self.policy is None or self.thinking or node.own is None:
            return
        if node.own.in_flight or node.stopped or node.ended or not node.own.may_act():
            return
        own = node.own
        state, view = own.session.state, dict(own.session.view)
        move = self.policy(state, own.seat, view)
        if move is None:
            return
        think = self.world.rng.randint(*self.world.think_ms)
        self.thinking = True
        gen = self.generation

        def play() -> None:
            self.thinking = False
            if not self.alive or self.generation != gen or self.node is not node:
                return
            if node.own is None or node.own.session.state is not state or not node.own.may_act():
                self.tick()
                return
            try:
                env = node.own.session.intend(move)
            except Exception:  # the table moved on: ask again
                self.tick()
                return
            node.send_own(env, self.world.now)
            self.flush()
            self.drain()

        self.world.at(self.world.now + think, lambda: self.post(play))


class World:
    """The simulated table: the event queue, the processes and the network."""

    def __init__(self, seed: int, costs: Any, net: NetConfig | None = None,
                 think_ms: tuple[int, int] = (50, 400),
                 log: Callable[[int, str, str], None] | None = None) -> None:
        self.rng = random.Random(seed)
        self.now = 0
        self._queue: list[tuple[int, int, Event]] = []
        self._seq = 0
        self.costs = costs
        self.net = net or NetConfig()
        self.think_ms = think_ms
        self.procs: dict[int, Proc] = {}
        self.conns: dict[int, Conn] = {}
        self._conn_numbers = 0
        self.log = log
        self.cut: set[tuple[int, int]] = set()  # (a, b): nothing from a reaches b
        self.stalled: dict[tuple[int, int], int] = {}  # (a, b) -> stalled until
        self.table: Any = None

    # ------------------------------------------------------------------ the clock
    def at(self, when: int, event: Event) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (when, self._seq, event))

    def run(self, until: int, stop: Callable[[], bool] | None = None) -> None:
        """Run events in time order until ``until`` (ms) or ``stop()``."""
        while self._queue:
            when, _, event = self._queue[0]
            if when > until:
                break
            heapq.heappop(self._queue)
            self.now = max(self.now, when)
            event()
            if stop is not None and stop():
                return
        self.now = max(self.now, until) if not self._queue else self.now

    # ------------------------------------------------------------------ network
    def _latency(self, a: int, b: int) -> int:
        return self.net.latency_ms + self.rng.randint(0, self.net.jitter_ms)

    def _deliver(self, conn: Conn, src: int, dst: int, event: Callable[[Proc], None]) -> None:
        """Deliver on ``conn`` from ``src`` to ``dst`` in order, after the latency."""
        if (src, dst) in self.cut:
            return  # lost: the other side will find the connection silent
        when = self.now + self._latency(src, dst)
        when = max(when, self.stalled.get((src, dst), 0), conn.last_at.get(dst, 0))
        conn.last_at[dst] = when

        def arrive() -> None:
            proc = self.procs.get(dst)
            if conn.open and proc is not None and proc.alive:
                proc.post(lambda: event(proc))

        self.at(when, arrive)

    def send(self, proc: Proc, target: Any, frame: dict[str, Any]) -> None:
        if target == fx.UP:
            conn = proc.up
            if conn is None or not conn.open:
                return
            seat = conn.seat

            def to_host(host: Proc) -> None:
                if host.node is not None and host.seat_conns.get(seat) is conn and seat is not None:
                    host.node.host_frame(seat, frame, self.now)

            self._deliver(conn, proc.pid, conn.host_proc, to_host)
            return
        if not isinstance(target, int) or target < 0:
            return  # watchers: none in the simulation
        conn = proc.seat_conns.get(target)
        if conn is None or not conn.open:
            return

        def to_seat(seat_proc: Proc) -> None:
            if seat_proc.node is None and seat_proc.up is conn and self.table is not None:
                if frame.get("k") == "rec" and frame["rec"].get("i") == 0:
                    self.table.joiner_record0(seat_proc, frame["rec"])
                return
            if seat_proc.node is not None and seat_proc.up is conn:
                if frame.get("k") == "welcome":
                    seat_proc.node.welcomed(conn.host_proc, frame["seat"], frame.get("last", -1),
                                            self.now)
                else:
                    seat_proc.node.from_host(frame, self.now)

        self._deliver(conn, proc.pid, conn.seat_proc, to_seat)

    def beats(self, conn: Conn) -> None:
        """Both ends of ``conn`` beat every ``BEAT_MS`` while it is open and they live: the
        network code's keepalive (4.3), which goes on while a process works."""
        for src, dst in ((conn.seat_proc, conn.host_proc), (conn.host_proc, conn.seat_proc)):
            self._beat(conn, src, dst)

    def _beat(self, conn: Conn, src: int, dst: int) -> None:
        proc = self.procs[src]
        gen = proc.generation

        def beat() -> None:
            if not conn.open or not proc.alive or proc.generation != gen:
                return
            if dst == conn.host_proc:
                def to_host(host: Proc) -> None:
                    seat = conn.seat
                    if host.node is not None and seat is not None and \
                            host.seat_conns.get(seat) is conn:
                        host.node.host_frame(seat, {"k": "beat"}, self.now)
                self._deliver(conn, src, dst, to_host)
            else:
                def to_seat(seat_proc: Proc) -> None:
                    if seat_proc.node is not None and seat_proc.up is conn:
                        seat_proc.node.from_host({"k": "beat"}, self.now)
                self._deliver(conn, src, dst, to_seat)
            self.at(self.now + BEAT_MS, beat)

        self.at(self.now + BEAT_MS, beat)

    def close(self, proc: Proc, target: Any) -> None:
        conn = proc.up if target == fx.UP else proc.seat_conns.get(target)
        if conn is not None:
            self.break_conn(conn)

    def break_conn(self, conn: Conn) -> None:
        """Close ``conn``: each side learns it after the latency (or at once, if dead)."""
        if not conn.open:
            return
        conn.open = False
        seat_proc, host_proc = self.procs[conn.seat_proc], self.procs[conn.host_proc]
        if seat_proc.up is conn:
            seat_proc.up = None
            seat_proc.post(lambda: seat_proc.node.closed(self.now) if seat_proc.node else None)
        seat = conn.seat
        if seat is not None and host_proc.seat_conns.get(seat) is conn:
            del host_proc.seat_conns[seat]

            def gone() -> None:
                node = host_proc.node
                if node is not None and node.host is not None:
                    node.host.closed(seat, self.now)

            host_proc.post(gone)

    def dial(self, proc: Proc, seat: int, have: int) -> None:
        """``proc`` resumes with the process of seat ``seat`` as its host."""
        target = self.procs.get(seat)
        me = proc.node

        def failed(code: str = "", detail: str = "") -> None:
            proc.post(lambda: me.dial_failed(seat, self.now, code, detail) if proc.node is me
                      else None)

        reachable = target is not None and target.alive and (proc.pid, seat) not in self.cut \
            and (seat, proc.pid) not in self.cut and target.listens
        if not reachable or target is None:
            self.at(self.now + self.net.connect_ms * 3, failed)
            return
        gen = target.generation

        def answer() -> None:
            node = target.node
            if not target.alive or target.generation != gen or node is None or \
                    not target.hosting or node.host is None or node.host.stepped_back:
                failed("UNEXPECTED", "not a host")
                return
            try:
                got, known = node.host.admit("resume", proc.identity.public_bytes(), have=have)
            except Refusal as exc:
                failed(exc.code, exc.detail)
                return
            self._conn_numbers += 1
            conn = Conn(self._conn_numbers, proc.pid, target.pid, got)
            self.conns[conn.number] = conn
            self.beats(conn)
            if proc.up is not None:
                self.break_conn(proc.up)
            proc.up = conn
            old = target.seat_conns.get(got)
            target.seat_conns[got] = conn
            if old is not None:
                old.open = False
            node.host.joined(got, known, self.now)
            target.flush()
            target.drain()

        self.at(self.now + self.net.connect_ms, lambda: target.post(answer))

    def probe(self, proc: Proc, seat: int) -> None:
        target = self.procs.get(seat)
        me = proc.node
        ok = target is not None and target.alive and target.listens and not target.hosting \
            and (proc.pid, seat) not in self.cut and (seat, proc.pid) not in self.cut
        if not ok or target is None or target.node is None or target.node.own is None:
            when = self.now + (self.net.connect_ms * 3 if target is None or not target.alive
                               else self.net.probe_timeout_ms)
            self.at(when, lambda: proc.post(
                lambda: me.probe_answer(seat, None, self.now) if proc.node is me else None))
            return

        def ask() -> None:
            node = target.node
            answer = node.present() if node is not None and node.own is not None else None
            self.at(self.now + self._latency(seat, proc.pid), lambda: proc.post(
                lambda: me.probe_answer(seat, answer, self.now) if proc.node is me else None))

        self.at(self.now + self._latency(proc.pid, seat), lambda: target.post(ask))

    def urge(self, proc: Proc, seat: int, frame: dict[str, Any]) -> None:
        target = self.procs.get(seat)
        if target is None or not target.alive or not target.listens or target.hosting or \
                (proc.pid, seat) in self.cut:
            return
        src = proc.node.seat if proc.node is not None else None
        if src is None:
            return

        def take() -> None:
            if target.node is not None:
                target.node.link_vote(src, frame, self.now)

        self.at(self.now + self._latency(proc.pid, seat), lambda: target.post(take))


def host_config(players: int, variant: str, options: dict[str, Any], timers: dict[str, int],
                game: bytes, seed: bytes, constants: dict[str, int]) -> HostingConfig:
    return HostingConfig(players=players, variant=variant, options=options, timers=timers,
                         game=game, seed=seed, constants=constants)


def kill(world: World, pid: int) -> None:
    """Process ``pid`` dies (SIGKILL): its connections close, its node and CPU are lost; its
    disk (transcript) survives."""
    proc = world.procs[pid]
    if not proc.alive:
        return
    proc.alive = False
    proc.generation += 1
    proc.inbox.clear()
    proc.busy_until = 0
    proc.wake_at = None
    proc.thinking = False
    for conn in list(world.conns.values()):
        if conn.open and pid in (conn.seat_proc, conn.host_proc):
            world.break_conn(conn)
    proc.up = None
    proc.seat_conns.clear()
    proc.hosting = False
    proc.node = None


def restart(world: World, pid: int, constants: dict[str, int]) -> None:
    """Process ``pid`` starts again with the same command: its seat comes back from its
    transcript (a host that crashed comes back as a seat of the new host)."""
    proc = world.procs[pid]
    if proc.alive:
        return
    proc.alive = True
    if len(proc.disk) < 1:
        return  # it died before record 0: nothing to come back to
    proc.node = PeerNode.seated(proc.identity, proc.seed, list(proc.disk), world.now,
                                connected=False, constants=constants, wall_offset=proc.drift)
    proc.post(lambda: None)
