"""Seat a simulated table: a host process and its seats, joined through the lobby, bots in
every seat (:class:`Table`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.protocol.node.hosting import HostingConfig
from dernier_p2p.protocol.node.peer import PeerNode
from dernier_p2p.sim.world import Clock, Conn, Proc, World
from dernier_p2p.wire.hashing import digest
from dernier_p2p.wire.identity import IdentityKey


@dataclass
class Setup:
    """What a simulated match is: its table and the processes' traits. ``listens``: which
    seats give a listen address; ``speeds``: CPU speed factors (1: the reference machine);
    ``clocks``: each process's ``(rate_ppm, offset, wall)`` (:class:`~.world.Clock`)."""

    players: int = 3
    variant: str = "dernier"
    options: dict[str, Any] = field(default_factory=lambda: {"match": ["hands", 1]})
    timers: dict[str, int] = field(
        default_factory=lambda: {"turn_ms": 20_000, "declare_ms": 500, "grace_ms": 10_000})
    listens: list[bool] | None = None
    speeds: list[float] | None = None
    clocks: list[tuple[int, int, int]] | None = None
    constants: dict[str, int] = field(default_factory=dict)

    def listen(self, pid: int) -> bool:
        return True if self.listens is None else self.listens[pid]

    def speed(self, pid: int) -> float:
        return 1.0 if self.speeds is None else self.speeds[pid]

    def clock(self, pid: int) -> Clock:
        return Clock() if self.clocks is None else Clock(*self.clocks[pid])


def identity_of(seed: int, pid: int) -> IdentityKey:
    return IdentityKey.generate(digest("dernier-p2p/sim-identity", [seed, pid]))


class Table:
    """The processes of one simulated table (see :class:`Setup`)."""

    def __init__(self, world: World, setup: Setup, seed: int) -> None:
        self.world = world
        self.setup = setup
        self.seed = seed
        self.game = digest("dernier-p2p/sim-game", [seed])[:16]
        for pid in range(setup.players):
            proc = Proc(world, pid, identity_of(seed, pid),
                        digest("dernier-p2p/sim-seed", [seed, pid]), setup.listen(pid),
                        setup.speed(pid), setup.clock(pid))
            proc.policy = HeuristicBot(seed * 31 + pid)
            world.procs[pid] = proc
        world.table = self

    def open(self) -> None:
        """The host opens its lobby and every seat joins in seat order; record 0 follows."""
        w, s = self.world, self.setup
        host = w.procs[0]
        config = HostingConfig(players=s.players, variant=s.variant, options=dict(s.options),
                               timers=dict(s.timers), game=self.game, seed=host.seed,
                               constants=dict(s.constants))
        host.node = PeerNode.hosting(host.identity, host.seed, config, host.now(),
                                     host.clock.wall)
        host.hosting = True
        assert host.node.host is not None
        hosting = host.node.host
        hosting.set_own_player("seat 0", host.identity.public_bytes(),
                               ("sim", 1) if host.listens else None)
        for pid in range(1, s.players):
            proc = w.procs[pid]
            seat, _ = hosting.admit("hello", proc.identity.public_bytes(), f"seat {pid}",
                                    ("sim", pid + 1) if proc.listens else None)
            w._conn_numbers += 1
            conn = Conn(w._conn_numbers, pid, 0, seat)
            w.conns[conn.number] = conn
            proc.up = conn
            host.seat_conns[seat] = conn
            full = hosting.joined(seat, None, host.now())
            host.flush()
            if full:
                host.node.start_match(host.now())
                host.flush()
        host.drain()

    def joiner_record0(self, proc: Proc, record: dict[str, Any]) -> None:
        """A joiner's first record: its node is built on it."""
        proc.node = PeerNode.seated(proc.identity, proc.seed, [record], proc.now(),
                                    connected=True, constants=dict(self.setup.constants),
                                    wall_offset=proc.clock.wall)
        proc.disk.append(record)
        proc.node.start(proc.now())
        proc.flush()
        proc.drain()
