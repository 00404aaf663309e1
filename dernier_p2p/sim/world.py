"""A whole table in one process on a virtual clock: processes, a network and their faults.

The :class:`World` is a seeded priority queue of events (FoundationDB's and TigerBeetle's
simulators are built the same way). Each :class:`Proc` is one peer process: the real
:class:`~dernier_p2p.protocol.node.peer.PeerNode` (its session, rules, chain and liveness
core), a "disk" (its transcript: the records it persisted, which survive a kill), a CPU (work
takes the time the cost model says, scaled by the process's speed; events wait meanwhile), a
local clock (:class:`Clock`: it may run fast or slow and starts anywhere; the node only ever
sees local time, and its deadlines are converted back to world time) and a bot that plays its
seat. A hostile process has a *strategy* (:mod:`.hostile`) that filters what its node sends,
receives and shows; an honest one runs the node unchanged.

The network delivers frames in order on each connection after a per-link latency with jitter.
A direction may be *held* (a stall, a partition, a one-way cut): frames on an open connection
wait until it heals, as TCP retransmits them, unless the connection closes first; a direction
may also *refuse* new connections (a partition, a one-way cut: a dial, probe or link vote that
needs it fails at its timeout). A close reaches the other side in order after the frames sent
before it; a reset reaches both sides after the latency and loses what is in flight.

The world does for each node what the trio driver (:mod:`dernier_p2p.net.driver`) does: events
posted to the process run in order on its CPU; after them its work (each item its cost on the
CPU), then what came meanwhile, then ``advance``, then its effects; it sleeps until its
deadline. As in the driver, each connection's network side sends a ``beat`` after ``BEAT_MS``
with nothing sent (so a busy process is not silent), probes are answered from the node's last
state without waiting for its CPU (at most once a second per prober), every ``Dial`` runs to
its end (a later one that succeeds replaces the connection), and ``Close(seat)`` closes the
connection registered for that seat when the effect is carried out.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.liveness.budgets import BEAT_MS, PROBE_EVERY_MS, record_units
from dernier_p2p.protocol.node import effects as fx
from dernier_p2p.protocol.node.hosting import HostingConfig, Refusal
from dernier_p2p.protocol.node.peer import PeerNode
from dernier_p2p.rules.cards import deck_cards
from dernier_p2p.wire.identity import IdentityKey

Event = Callable[[], None]
INF = 1 << 62
"""A time that never comes (a fault that never heals)."""


@dataclass(frozen=True)
class Clock:
    """A process's clocks: its monotonic clock reads ``t + t * rate_ppm / 10**6 + offset`` at
    world time ``t`` (ms), and its wall clock is ``wall`` more than that (the node's
    ``wall_offset``, from which records' ``t`` come)."""

    rate_ppm: int = 0
    offset: int = 0
    wall: int = 0

    def local(self, t: int) -> int:
        """The process's monotonic clock at world time ``t``."""
        return t + (t * self.rate_ppm) // 1_000_000 + self.offset

    def world(self, local: int) -> int:
        """The first world time at which the monotonic clock reads at least ``local``."""
        r = 1_000_000 + self.rate_ppm
        t = ((local - self.offset) * 1_000_000) // r
        while self.local(t) < local:
            t += 1
        while self.local(t - 1) >= local:
            t -= 1
        return t


@dataclass(eq=False)
class Conn:
    """One connection between a seat process (``seat_proc``) and a host process."""

    number: int
    seat_proc: int
    host_proc: int
    seat: int | None = None  # the seat it resumed as, at the host
    gone: set[int] = field(default_factory=set)  # processes whose end is closed
    reset: bool = False  # reset: everything in flight is lost
    attached: bool = True  # the seat side holds it (a dial's: once its welcome came)
    dial: dict[str, Any] | None = None  # the dial that opened it (its state)
    have: int | None = None  # the last record its resume named
    pipes: dict[int, deque[Any]] = field(default_factory=dict)  # dst -> frames in flight
    last_sent: dict[int, int] = field(default_factory=dict)  # src -> last send time on it
    beat_check: dict[int, int] = field(default_factory=dict)  # src -> pending beat check time

    def other(self, pid: int) -> int:
        return self.host_proc if pid == self.seat_proc else self.seat_proc

    def open_for(self, pid: int) -> bool:
        """Whether ``pid``'s end is open (it may send; frames to it are taken)."""
        return not self.reset and pid not in self.gone

    @property
    def open(self) -> bool:
        return not self.reset and not self.gone


@dataclass
class NetConfig:
    latency_ms: int = 2
    jitter_ms: int = 3
    connect_timeout_ms: int = 5_000  # the driver's connect_s
    probe_timeout_ms: int = 5_000  # links.PROBE_S
    beat_ms: int = BEAT_MS


class Proc:
    """One peer process (see the module docstring)."""

    def __init__(self, world: World, pid: int, identity: IdentityKey, seed: bytes,
                 listens: bool, speed: float = 1.0, clock: Clock | None = None) -> None:
        self.world = world
        self.pid = pid
        self.identity = identity
        self.seed = seed
        self.listens = listens
        self.speed = speed
        self.clock = clock or Clock()
        self.node: PeerNode | None = None
        self.alive = True
        self.disk: list[dict[str, Any]] = []
        self.disk_old: list[list[dict[str, Any]]] = []
        self.busy_until = 0
        self.frozen_until = 0
        self.inbox: list[Event] = []
        self.drain_due = False  # a drain is scheduled
        self.up: Conn | None = None  # this seat's connection to its host
        self.attaches = 0  # welcomes taken (a connection attached as ``up``)
        self.seat_conns: dict[int, Conn] = {}  # seat -> connection, while hosting
        self.hosting = False
        self.wake_at: int | None = None
        self.ended: str | None = None
        self.stopped: ProtocolError | None = None
        self.notes: list[tuple[int, str, Any]] = []
        self.policy: Any = None
        self.strategy: Any = None  # a hostile strategy (:mod:`.hostile`); None: honest
        self.thinking = False
        self.generation = 0  # bumped by a kill: events of a dead incarnation are dropped
        self.present_next: dict[int, int] = {}  # prober -> when its next probe is answered
        self.kills = 0

    # ------------------------------------------------------------------ time
    def now(self) -> int:
        """This process's monotonic clock (what its node is told)."""
        return self.clock.local(self.world.now)

    @property
    def frozen(self) -> bool:
        return self.world.now < self.frozen_until

    # ------------------------------------------------------------------ scheduling
    def post(self, event: Event) -> None:
        """Queue ``event`` for this process (the driver's channel): it runs in order once the
        CPU is free, with everything else that came meanwhile, before the node's rules."""
        if not self.alive:
            return
        gen = self.generation

        def guarded() -> None:
            if self.alive and self.generation == gen:
                event()

        self.inbox.append(guarded)
        if not self.drain_due:
            self.drain_due = True

            def run() -> None:
                if self.generation == gen:
                    self.drain_due = False
                    if self.alive:
                        self.drain()

            self.world.at(max(self.world.now, self.busy_until), run)

    def call(self, fn: Callable[[PeerNode, int], None], node: PeerNode | None = None) -> None:
        """Post ``fn(node, local time)`` for the node of now (``node``: only for that one)."""
        want = node

        def event() -> None:
            current = self.node
            if current is None or (want is not None and current is not want):
                return
            fn(current, self.now())

        self.post(event)

    def drain(self) -> None:
        """Events queued while the CPU is free, then the node's work, then its rules."""
        w = self.world
        while self.alive and self.busy_until <= w.now and self.inbox:
            event = self.inbox.pop(0)
            event()
            self.flush()
        if not self.alive or self.node is None or self.busy_until > w.now:
            return
        if self.node.has_work() and (self.strategy is None or self.strategy.may_work(self)):
            cost = w.costs.work_ms(self.node, self.speed)
            node = self.node
            gen = self.generation
            self.busy_until = w.now + cost

            def done() -> None:
                if not self.alive or self.generation != gen or self.node is not node:
                    return
                if w.now < self.busy_until:  # frozen meanwhile
                    w.at(self.busy_until, done)
                    return
                try:
                    node.work(self.now())
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
        self.node.advance(self.now())
        self.flush()
        self.bot()
        if self.strategy is not None:
            self.strategy.tick(self)
            self.flush()
        local = self.node.deadline()
        if local is None:
            return
        deadline = max(self.clock.world(local), w.now + 1)
        if self.wake_at is None or deadline < self.wake_at or self.wake_at <= w.now:
            self.wake_at = deadline
            gen = self.generation

            def wake() -> None:
                if self.alive and self.generation == gen and self.wake_at == deadline:
                    self.wake_at = None
                    self.post(lambda: None)

            w.at(deadline, wake)

    # ------------------------------------------------------------------ effects
    def flush(self) -> None:
        if self.node is None:
            return
        for e in self.node.take():
            self.effect(e)

    def effect(self, e: Any) -> None:
        w = self.world
        if w.observer is not None:
            w.observer.effect(self, e)
        if isinstance(e, fx.Send):
            frames = [e.frame] if self.strategy is None else self.strategy.outgoing(
                self, e.conn, e.frame)
            for frame in frames:
                w.send(self, e.conn, frame)
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
        elif isinstance(e, act.Lend):
            w.lend(self, e.seat, e.records)
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
        if self.strategy is not None and not self.strategy.may_play(self):
            return
        own = node.own
        state, view = own.session.state, dict(own.session.view)
        move = self.policy(state, own.seat, view)
        if move is None:
            return
        think = self.world.bot_rng.randint(*self.world.think_ms)
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
            node.send_own(env, self.now())
            self.flush()
            self.drain()

        self.world.at(self.world.now + think, lambda: self.post(play))


class World:
    """The simulated table: the event queue, the processes and the network."""

    def __init__(self, seed: int, costs: Any, net: NetConfig | None = None,
                 think_ms: tuple[int, int] = (50, 400),
                 log: Callable[[int, str, str], None] | None = None) -> None:
        self.seed = seed
        self.net_rng = random.Random(seed * 4 + 1)
        self.bot_rng = random.Random(seed * 4 + 2)
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
        self.links: dict[tuple[int, int], tuple[int, int]] = {}  # (a, b) -> latency, jitter
        self.held: dict[tuple[int, int], int] = {}  # (a, b): frames from a to b wait until
        self.refused: dict[tuple[int, int], int] = {}  # (a, b): new connections fail until
        self.table: Any = None
        self.observer: Any = None  # told of every effect (:mod:`.invariants`)
        self.events = 0

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
            self.events += 1
            event()
            if stop is not None and stop():
                return
        if not self._queue or self._queue[0][0] > until:
            self.now = max(self.now, until)

    # ------------------------------------------------------------------ links
    def latency(self, a: int, b: int) -> int:
        lat, jitter = self.links.get((a, b), (self.net.latency_ms, self.net.jitter_ms))
        return lat + (self.net_rng.randint(0, jitter) if jitter > 0 else 0)

    def held_until(self, a: int, b: int) -> int:
        until = self.held.get((a, b), 0)
        return until if until > self.now else 0

    def refuses(self, a: int, b: int) -> bool:
        """Whether a new connection needing the direction a -> b fails now."""
        return self.refused.get((a, b), 0) > self.now

    def passage(self, a: int, b: int, legs: int = 1) -> int:
        """When something sent now from a reaches b over a fresh connection (``legs`` one-way
        trips), or INF if the direction refuses it."""
        if self.refuses(a, b):
            return INF
        return max(self.now, self.held_until(a, b)) + sum(
            self.latency(a, b) for _ in range(legs))

    def round_trip(self, a: int, b: int, legs: int = 1) -> tuple[int, int]:
        """(When a request from a reaches b, the extra delay of b's answer reaching a)."""
        there = self.passage(a, b, legs)
        if there >= INF or self.refuses(b, a):
            return INF, INF
        back_held = max(0, self.held_until(b, a) - there)
        return there, back_held + self.latency(b, a)

    # ------------------------------------------------------------------ connections
    def _deliver(self, conn: Conn, src: int, dst: int, event: Callable[[Proc], None],
                 direct: bool = False) -> None:
        """Deliver on ``conn`` from ``src`` to ``dst`` in order, after the latency (a held
        direction delivers when it heals): posted to ``dst``, or run at once by its network
        side when ``direct``."""
        if not conn.open_for(src):
            return
        pipe = conn.pipes.setdefault(dst, deque())
        pipe.append((self.now + self.latency(src, dst), event, direct))
        conn.last_sent[src] = self.now
        self._beat_later(conn, src)
        if len(pipe) == 1:
            self.at(pipe[0][0], lambda: self._pump(conn, src, dst))

    def _pump(self, conn: Conn, src: int, dst: int) -> None:
        """The first frame in flight from ``src`` to ``dst`` on ``conn`` arrives, unless the
        direction is held; the next one follows it."""
        pipe = conn.pipes[dst]
        if not pipe:
            return
        held = self.held_until(src, dst)
        if held:
            self.at(held + self.latency(src, dst), lambda: self._pump(conn, src, dst))
            return
        ready, event, direct = pipe[0]
        if ready > self.now:
            self.at(ready, lambda: self._pump(conn, src, dst))
            return
        pipe.popleft()
        proc = self.procs.get(dst)
        if conn.open_for(dst) and proc is not None and proc.alive:
            if direct:
                event(proc)
            else:
                proc.post(lambda: event(proc))
        if pipe:
            self.at(max(self.now, pipe[0][0]), lambda: self._pump(conn, src, dst))

    def _beat_later(self, conn: Conn, src: int) -> None:
        """The network side of ``src`` sends a beat on ``conn`` after ``beat_ms`` of nothing."""
        due = conn.last_sent.get(src, self.now) + self.net.beat_ms
        pending = conn.beat_check.get(src)
        if pending is not None and pending <= due:
            return
        conn.beat_check[src] = due
        proc = self.procs[src]
        gen = proc.generation

        def check() -> None:
            if conn.beat_check.get(src) != due:
                return
            del conn.beat_check[src]
            if not proc.alive or proc.generation != gen or not conn.open_for(src):
                return
            last = conn.last_sent.get(src, self.now)
            if proc.frozen or (proc.strategy is not None and not proc.strategy.beat(proc, conn)):
                conn.last_sent[src] = max(last, proc.frozen_until - self.net.beat_ms, self.now)
                self._beat_later(conn, src)
            elif self.now - last >= self.net.beat_ms:
                self._send_on(conn, src, {"k": "beat"})
            else:
                self._beat_later(conn, src)

        self.at(due, check)

    def _send_on(self, conn: Conn, src: int, frame: dict[str, Any]) -> None:
        if src == conn.seat_proc:
            seat = conn.seat

            def to_host(host: Proc) -> None:
                hostile = host.strategy
                if hostile is not None and not hostile.incoming(host, seat, frame):
                    return
                if host.node is not None and seat is not None and \
                        host.seat_conns.get(seat) is conn:
                    host.node.host_frame(seat, frame, host.now())

            self._deliver(conn, src, conn.host_proc, to_host)
            return

        def to_seat(seat_proc: Proc) -> None:
            if seat_proc.node is None:
                if seat_proc.up is conn and self.table is not None and frame.get("k") == "rec" \
                        and frame["rec"].get("i") == 0:
                    self.table.joiner_record0(seat_proc, frame["rec"])
                return
            if frame.get("k") == "welcome":
                if not self._attach(seat_proc, conn):
                    return
                seat_proc.node.welcomed(conn.host_proc, frame["seat"], frame.get("last", -1),
                                        seat_proc.now(), conn.have)
                return
            if seat_proc.up is not conn:
                return
            hostile = seat_proc.strategy
            if hostile is not None and not hostile.incoming(seat_proc, None, frame):
                return
            seat_proc.node.from_host(frame, seat_proc.now())

        self._deliver(conn, src, conn.seat_proc, to_seat)

    def send(self, proc: Proc, target: Any, frame: dict[str, Any]) -> None:
        """``proc``'s node sends ``frame`` on ``target`` (UP, or a seat's connection)."""
        if target == fx.UP:
            conn = proc.up
        elif isinstance(target, int) and target >= 0:
            conn = proc.seat_conns.get(target)
        else:
            return  # watchers: none in the simulation
        if conn is not None and conn.open_for(proc.pid):
            self._send_on(conn, proc.pid, frame)

    def close(self, proc: Proc, target: Any) -> None:
        """``proc``'s node closes ``target``: its end at once, the other after the frames."""
        conn = proc.up if target == fx.UP else (
            proc.seat_conns.get(target) if isinstance(target, int) else None)
        if conn is not None:
            self.close_end(proc, conn)

    def close_end(self, proc: Proc, conn: Conn, tell: bool = True, fin: bool = True) -> None:
        """Close ``proc``'s end of ``conn`` (told to its node when ``tell``); the other end
        learns it in order after what was sent before (``fin``), or never."""
        if not conn.open_for(proc.pid):
            return
        other = conn.other(proc.pid)
        if fin:
            def fin_arrives(peer: Proc) -> None:
                if conn.open_for(peer.pid):
                    conn.gone.add(peer.pid)
                    self._detach(peer, conn, True)

            # a host's driver drops a closed seat connection as its reader sees the end (a
            # later resume's connection then stands), and tells the node in order
            self._deliver(conn, proc.pid, other, fin_arrives, direct=other == conn.host_proc)
        conn.gone.add(proc.pid)
        self._detach(proc, conn, tell)

    def reset(self, conn: Conn) -> None:
        """The network resets ``conn``: both ends learn after the latency; what is in flight
        is lost."""
        if conn.reset or not conn.open:
            return
        conn.reset = True
        for pid in (conn.seat_proc, conn.host_proc):
            proc = self.procs[pid]
            when = self.now + self.latency(conn.other(pid), pid)

            def learn(proc: Proc = proc) -> None:
                if proc.pid not in conn.gone:
                    conn.gone.add(proc.pid)
                    self._detach(proc, conn, True)

            self.at(when, learn)

    def _detach(self, proc: Proc, conn: Conn, tell: bool) -> None:
        """``conn`` is closed at ``proc``'s end: the driver drops it and tells the node."""
        if not proc.alive:
            return
        if proc.pid == conn.seat_proc:
            if proc.up is conn:
                proc.up = None
                if tell:
                    # told in order with the welcomes: a welcome that came meanwhile (already
                    # queued here) made another connection the host's, and the driver tells
                    # the node of a closed connection only while it is still its ``up``
                    attaches = proc.attaches
                    proc.call(lambda node, now: node.closed(now)
                              if proc.attaches == attaches else None)
            return
        seat = conn.seat
        if seat is not None and proc.seat_conns.get(seat) is conn:
            del proc.seat_conns[seat]
            if tell:
                proc.call(lambda node, now: node.host.closed(seat, now)
                          if node.host is not None else None)

    def _attach(self, proc: Proc, conn: Conn) -> bool:
        """A dial's welcome came: ``conn`` is now ``proc``'s connection to its host (an older
        one is dropped, untold, as the driver's ``_upstream`` does)."""
        if not conn.open_for(proc.pid) or not proc.alive:
            return False
        if conn.dial is not None:
            if conn.dial["done"]:
                return False  # too late: the dial gave up (its end is closed)
            conn.dial["done"] = True
        old, proc.up = proc.up, conn
        proc.attaches += 1
        conn.attached = True
        if old is not None and old is not conn:
            self.close_end(proc, old, tell=False)
        return True

    # ------------------------------------------------------------------ dials, probes, links
    def dial(self, proc: Proc, seat: int, have: int) -> None:
        """``proc`` resumes with the process of seat ``seat`` as its host (4.4)."""
        target = self.procs.get(seat)
        me = proc.node
        gen = proc.generation
        deadline = self.now + self.net.connect_timeout_ms
        state: dict[str, Any] = {"done": False, "conn": None}

        def failed(code: str = "", detail: str = "") -> None:
            if state["done"] or not proc.alive or proc.generation != gen:
                return
            state["done"] = True
            conn = state["conn"]
            if conn is not None:  # welcomed too late: the driver closes it (its connect_s)
                self.close_end(proc, conn, tell=False)
            proc.call(lambda node, now: node.dial_failed(seat, now, code, detail), me)

        self.at(deadline, lambda: failed("", "timed out"))
        if target is None or not (target.listens or seat == 0):  # (the seats joined seat 0)
            self.at(self.now + 1, lambda: failed("", "no address"))
            return
        there, back = self.round_trip(proc.pid, seat, 2)
        if there >= INF:
            return  # the timeout says it
        if not target.alive:
            self.at(there + back, lambda: failed("", "connection refused"))
            return
        tgen = target.generation

        def answer() -> None:
            if state["done"] or not proc.alive or proc.generation != gen:
                return
            node = target.node
            if not target.alive or target.generation != tgen or node is None or \
                    not target.hosting or node.host is None or node.host.stepped_back:
                self.at(self.now + self.latency(seat, proc.pid),
                        lambda: failed("UNEXPECTED", "not a host"))
                return
            hostile = target.strategy
            try:
                if hostile is not None and not hostile.admit(target, proc.pid):
                    raise Refusal("UNEXPECTED", "not now")
                got, known = node.host.admit("resume", proc.identity.public_bytes(), have=have,
                                             now=target.now())
            except Refusal as exc:
                code, detail = exc.code, exc.detail
                self.at(self.now + self.latency(seat, proc.pid),
                        lambda: failed(code, detail))
                return
            self._conn_numbers += 1
            conn = Conn(self._conn_numbers, proc.pid, target.pid, got, attached=False,
                        dial=state, have=have)
            state["conn"] = conn
            self.conns[conn.number] = conn
            old = target.seat_conns.get(got)
            target.seat_conns[got] = conn
            if old is not None:
                self.close_end(target, old, tell=False)
            node.host.joined(got, known, target.now())
            target.flush()
            conn.last_sent[proc.pid] = self.now  # its network side beats from the resume on,
            self._beat_later(conn, proc.pid)  # its node busy or not (its welcome waits)

        self.at(there, lambda: target.post(answer))

    def probe(self, proc: Proc, seat: int) -> None:
        """``proc`` probes seat ``seat`` over a link (4.6); the answer, or None at the
        timeout, goes to the node that asked."""
        target = self.procs.get(seat)
        me = proc.node
        gen = proc.generation
        state = {"done": False}

        def answer(present: Any) -> None:
            if state["done"] or not proc.alive or proc.generation != gen:
                return
            state["done"] = True
            proc.call(lambda node, now: node.probe_answer(seat, present, now), me)

        self.at(self.now + self.net.probe_timeout_ms, lambda: answer(None))
        if target is None or not target.listens:
            self.at(self.now + 1, lambda: answer(None))
            return
        there, back = self.round_trip(proc.pid, seat, 2)
        if there >= INF:
            return
        if not target.alive:
            self.at(there + back, lambda: answer(None))
            return
        tgen = target.generation

        def ask() -> None:
            if not target.alive or target.generation != tgen or target.ended is not None:
                return  # (a process whose match ended for itself has closed its links)
            node = target.node
            if node is not None and node.stopped is not None and \
                    not node.lingering(target.now()):
                return  # (stopped, it answers while it has a proof to show, 4.6)
            if target.frozen:  # nothing answers until it thaws
                self.at(target.frozen_until, ask)
                return
            turn = max(self.now, target.present_next.get(proc.pid, self.now))
            if turn > self.now:
                self.at(turn, ask)
                return
            target.present_next[proc.pid] = self.now + PROBE_EVERY_MS
            if node is None or node.own is None or (target.hosting and not (
                    node.host is not None and node.host.gathering)):
                shown = None  # a host (or a process without its seat yet) refuses links
            elif target.strategy is not None:
                shown = target.strategy.present(target)
            else:
                shown = node.present()
            if node is not None and node.stopped is not None:
                node.probed(target.now(), proc.pid)
            delay = max(0, self.held_until(seat, proc.pid) - self.now) + self.latency(
                seat, proc.pid)
            if not self.refuses(seat, proc.pid):
                self.at(self.now + delay, lambda: answer(shown))

        self.at(there, ask)

    def lend(self, proc: Proc, seat: int, records: list[dict[str, Any]]) -> None:
        """``proc`` sends ``records`` to seat ``seat`` over a link, in order (4.6)."""

        def deliver(target: Proc, src: int) -> None:
            if target.ended is not None:
                return
            for rec in records:
                target.call(lambda node, now, r=rec: node.from_link(src, r, now))

        self._over_link(proc, seat, deliver)

    def urge(self, proc: Proc, seat: int, frame: dict[str, Any]) -> None:
        """``proc``'s ``depose`` vote to candidate ``seat`` over a link (7.6)."""
        self._over_link(proc, seat, lambda target, src: target.call(
            lambda node, now: node.link_vote(src, frame, now)))

    def _over_link(self, proc: Proc, seat: int, deliver: Any) -> None:
        """Open a link from ``proc`` to seat ``seat`` and, when it is there, ``deliver(target,
        src)`` unless the target died, restarted or hosts since (a host refuses links)."""
        target = self.procs.get(seat)
        src = proc.node.seat if proc.node is not None else None
        if target is None or not target.listens or src is None:
            return
        there, _ = self.round_trip(proc.pid, seat, 2)
        if there >= INF:
            return
        tgen = target.generation

        def take() -> None:
            if target.alive and target.generation == tgen and not target.hosting:
                deliver(target, src)

        self.at(there, take)


def host_config(players: int, variant: str, options: dict[str, Any], timers: dict[str, int],
                game: bytes, seed: bytes, constants: dict[str, int]) -> HostingConfig:
    return HostingConfig(players=players, variant=variant, options=options, timers=timers,
                         game=game, seed=seed, constants=constants)


def kill(world: World, pid: int, clean: bool = True) -> None:
    """Process ``pid`` dies: its node and CPU are lost, its disk (transcript) survives. A clean
    death (SIGKILL on a running machine) closes its connections, the others learning it after
    the frames sent before; an unclean one (power lost) closes nothing: the others find the
    connections silent."""
    proc = world.procs[pid]
    if not proc.alive:
        return
    for conn in list(world.conns.values()):
        if pid in (conn.seat_proc, conn.host_proc) and conn.open_for(pid):
            if clean:
                world.close_end(proc, conn, tell=False)
            else:
                conn.gone.add(pid)
    proc.alive = False
    proc.kills += 1
    proc.generation += 1
    proc.inbox.clear()
    proc.drain_due = False
    proc.busy_until = 0
    proc.frozen_until = 0
    proc.wake_at = None
    proc.thinking = False
    proc.up = None
    proc.seat_conns.clear()
    proc.hosting = False
    proc.node = None
    proc.present_next.clear()


def restart(world: World, pid: int, constants: dict[str, int]) -> None:
    """Process ``pid`` starts again with the same command: its seat comes back from its
    transcript (a host that crashed comes back as a seat of the new host)."""
    proc = world.procs[pid]
    if proc.alive:
        return
    proc.alive = True
    proc.ended = proc.stopped = None
    proc.busy_until = world.now
    if len(proc.disk) < 1:
        return  # it died before record 0: nothing to come back to
    proc.node = PeerNode.seated(proc.identity, proc.seed, list(proc.disk), proc.now(),
                                connected=False, constants=constants,
                                wall_offset=proc.clock.wall)
    proc.busy_until = world.now + restore_ms(world, proc)  # it checks its transcript again
    proc.post(lambda: None)


def restore_ms(world: World, proc: Proc) -> int:
    """The CPU time of checking ``proc``'s whole transcript again (a restart)."""
    cards = len(deck_cards(proc.node.own.session.rules.deck)) if proc.node is not None and \
        proc.node.own is not None else 54
    units = sum(record_units(r["env"]["body"], cards) for r in proc.disk)
    return int(units * getattr(world.costs, "unit_ms", 0.1) / max(proc.speed, 1e-6))


def freeze(world: World, pid: int, until: int) -> None:
    """Process ``pid`` is paused (SIGSTOP, a laptop asleep) until ``until``: no work, no
    beats, no probe answers; what comes waits."""
    proc = world.procs[pid]
    if not proc.alive:
        return
    proc.frozen_until = max(proc.frozen_until, until)
    proc.busy_until = max(proc.busy_until, until)
    gen = proc.generation

    def thaw() -> None:
        if proc.alive and proc.generation == gen and world.now >= proc.busy_until:
            proc.drain()

    world.at(until, thaw)
