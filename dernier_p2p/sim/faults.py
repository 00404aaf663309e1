"""The faults a simulated match suffers: small frozen dataclasses, each with its time ``at``
(world ms) and, for a lasting one, ``until`` (when it heals; :data:`~.world.INF`: never).

A *fault schedule* is a list of them; its ``repr`` is a Python literal (the names of this
module) that a regression test replays. :func:`install` puts a schedule on a world: each
fault acts at its time. Latency aside, each one names the processes it *touches*
(:meth:`Fault.touches`), from which :mod:`.invariants` decides which seats stayed connected to
a majority.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from dernier_p2p.sim.world import INF, World, freeze, kill, restart


@dataclass(frozen=True)
class Fault:
    at: int

    @property
    def end(self) -> int:
        """When the fault has healed (for an instant fault, its time)."""
        return getattr(self, "until", self.at)

    def touches(self, players: int) -> frozenset[int]:
        """The processes whose links or process this fault disturbs."""
        return frozenset()

    def install(self, world: World, constants: dict[str, int]) -> None:
        raise NotImplementedError

    def shorter(self) -> Fault | None:
        """The same fault, half as long (None: it cannot be shorter)."""
        until = getattr(self, "until", None)
        if until is None or until - self.at <= 200:
            return None
        if until >= INF:
            return replace(self, until=self.at + 60_000)  # type: ignore[call-arg]
        return replace(self, until=self.at + (until - self.at) // 2)  # type: ignore[call-arg]


def _hold(world: World, a: int, b: int, until: int, refuse: bool) -> None:
    world.held[(a, b)] = max(world.held.get((a, b), 0), until)
    if refuse:
        world.refused[(a, b)] = max(world.refused.get((a, b), 0), until)


@dataclass(frozen=True)
class Latency(Fault):
    """The link between ``a`` and ``b`` (both directions) has this latency and jitter from
    ``at`` until ``until`` (then the default again). Slow is still connected: touches nobody."""

    a: int = 0
    b: int = 1
    latency_ms: int = 50
    jitter_ms: int = 20
    until: int = INF

    def install(self, world: World, constants: dict[str, int]) -> None:
        def on() -> None:
            for d in ((self.a, self.b), (self.b, self.a)):
                world.links[d] = (self.latency_ms, self.jitter_ms)

        def off() -> None:
            for d in ((self.a, self.b), (self.b, self.a)):
                world.links.pop(d, None)

        world.at(self.at, on)
        if self.until < INF:
            world.at(self.until, off)


@dataclass(frozen=True)
class Stall(Fault):
    """The direction ``src`` -> ``dst`` delivers nothing until ``until`` (then everything sent
    meanwhile on connections still open, in order); new connections over it wait too."""

    src: int = 0
    dst: int = 1
    until: int = 0

    def touches(self, players: int) -> frozenset[int]:
        return frozenset({self.src, self.dst})

    def install(self, world: World, constants: dict[str, int]) -> None:
        world.at(self.at, lambda: _hold(world, self.src, self.dst, self.until, False))


@dataclass(frozen=True)
class OneWay(Fault):
    """The direction ``src`` -> ``dst`` is cut until ``until``: open connections carry
    nothing that way until it heals (TCP retransmits), new ones fail."""

    src: int = 0
    dst: int = 1
    until: int = 0

    def touches(self, players: int) -> frozenset[int]:
        return frozenset({self.src, self.dst})

    def install(self, world: World, constants: dict[str, int]) -> None:
        world.at(self.at, lambda: _hold(world, self.src, self.dst, self.until, True))


@dataclass(frozen=True)
class Partition(Fault):
    """The processes of ``group`` are cut off from the others (both ways) until ``until``.
    It touches the side without a majority of the table (both sides when neither has one);
    see :meth:`touches_among` for a table with cheaters."""

    group: tuple[int, ...] = ()
    until: int = 0

    def touches(self, players: int) -> frozenset[int]:
        return self.touches_among(players, frozenset())

    def touches_among(self, players: int, cheaters: frozenset[int]) -> frozenset[int]:
        """A side is touched unless its honest seats alone make a majority of the table: the
        ``cheaters`` on it vote as they please, so with them the others (the honest seats
        beyond it, cut off from it) can raise a quorum against its seats. With no cheater:
        the side without a majority (both sides when neither has one)."""
        inside = set(self.group)
        outside = set(range(players)) - inside
        need = players // 2 + 1
        touched: set[int] = set()
        if len(inside - cheaters) < need:
            touched |= inside
        if len(outside - cheaters) < need:
            touched |= outside
        return frozenset(touched)

    def forks_among(self, players: int, cheaters: frozenset[int]) -> bool:
        """Whether the ``cheaters`` can complete a quorum on both sides at once, so that each
        side may go on with its own history (PROTOCOL.md 22): honest seats on both sides, and
        each side's honest seats plus every cheater make a majority of the table. A cheater
        counts on both sides: its votes cast before the cut stay fresh at one side's host, and
        a cheater the cut does not hold (it may be the one cutting) votes at both. Possible only
        with at least ``2 * q(n) - n`` cheaters (one at an odd count of seats, two at an even
        one), and only while neither side's honest seats make a majority alone."""
        inside = set(self.group) - cheaters
        outside = set(range(players)) - set(self.group) - cheaters
        need = players // 2 + 1
        return bool(inside) and bool(outside) and len(inside) + len(cheaters) >= need and \
            len(outside) + len(cheaters) >= need

    def install(self, world: World, constants: dict[str, int]) -> None:
        def on() -> None:
            inside = set(self.group)
            for a in sorted(world.procs):
                for b in sorted(world.procs):
                    if (a in inside) != (b in inside):
                        _hold(world, a, b, self.until, True)

        world.at(self.at, on)


@dataclass(frozen=True)
class Reset(Fault):
    """The network resets every connection between ``a`` and ``b``."""

    a: int = 0
    b: int = 1

    def touches(self, players: int) -> frozenset[int]:
        return frozenset({self.a, self.b})

    def install(self, world: World, constants: dict[str, int]) -> None:
        def on() -> None:
            for conn in list(world.conns.values()):
                if {conn.seat_proc, conn.host_proc} == {self.a, self.b}:
                    world.reset(conn)

        world.at(self.at, on)


@dataclass(frozen=True)
class Kill(Fault):
    """Process ``pid`` dies at ``at`` and, unless ``until`` is INF, starts again from its disk
    at ``until``. ``clean``: its machine stays up (the others' connections close); else its
    machine loses power (they go silent)."""

    pid: int = 0
    until: int = INF
    clean: bool = True

    def touches(self, players: int) -> frozenset[int]:
        return frozenset({self.pid})

    def install(self, world: World, constants: dict[str, int]) -> None:
        world.at(self.at, lambda: kill(world, self.pid, self.clean))
        if self.until < INF:
            world.at(self.until, lambda: restart(world, self.pid, constants))


@dataclass(frozen=True)
class Freeze(Fault):
    """Process ``pid`` is paused from ``at`` to ``until`` (a laptop asleep, SIGSTOP)."""

    pid: int = 0
    until: int = 0

    def touches(self, players: int) -> frozenset[int]:
        return frozenset({self.pid})

    def install(self, world: World, constants: dict[str, int]) -> None:
        world.at(self.at, lambda: freeze(world, self.pid, self.until))


@dataclass(frozen=True)
class SlowCpu(Fault):
    """Process ``pid`` runs at ``speed`` (times its own) from ``at`` to ``until``. It touches
    the process only when that takes it below the speed the budgets cover
    (:data:`~.invariants.BUDGET_SPEED`); the invariants judge that."""

    pid: int = 0
    speed: float = 0.1
    until: int = 0

    def install(self, world: World, constants: dict[str, int]) -> None:
        proc = world.procs[self.pid]
        base = {"speed": proc.speed}

        def on() -> None:
            base["speed"] = proc.speed
            proc.speed = proc.speed * self.speed

        def off() -> None:
            proc.speed = base["speed"]

        world.at(self.at, on)
        if self.until < INF:
            world.at(self.until, off)


@dataclass(frozen=True)
class Hostile(Fault):
    """Process ``pid`` runs the hostile strategy ``kind`` (:mod:`.hostile`) from ``at`` to
    ``until``, against seat ``target`` where the strategy has one. A hostile process is a
    cheater for the whole match: no invariant protects it."""

    pid: int = 0
    kind: str = "withhold"
    target: int | None = None
    until: int = INF

    def install(self, world: World, constants: dict[str, int]) -> None:
        from dernier_p2p.sim.hostile import strategy

        proc = world.procs[self.pid]
        plan = strategy(self)

        def on() -> None:
            proc.strategy = plan
            plan.start(proc)

        def off() -> None:
            if proc.strategy is plan:
                proc.strategy = None

        world.at(self.at, on)
        if self.until < INF:
            world.at(self.until, off)


KINDS: tuple[type[Fault], ...] = (Latency, Stall, OneWay, Partition, Reset, Kill, Freeze,
                                  SlowCpu, Hostile)
NAMES: dict[str, Any] = {k.__name__: k for k in KINDS}
NAMES["INF"] = INF


def install(world: World, faults: list[Fault], constants: dict[str, int]) -> None:
    """Schedule every fault of ``faults`` on ``world``."""
    for fault in faults:
        fault.install(world, constants)


def hostile_pids(faults: list[Fault]) -> frozenset[int]:
    return frozenset(f.pid for f in faults if isinstance(f, Hostile))


def settled(faults: list[Fault]) -> int:
    """When the last fault (latency aside) has healed, or, for one that never heals, begun:
    from then on nothing changes but what the faults left behind."""
    ends = [f.at if f.end >= INF else f.end for f in faults if not isinstance(f, Latency)]
    return max(ends, default=0)
