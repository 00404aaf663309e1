"""Running tables from the command line: a local table against bots, a hosted table, a join.

Every seat is a real peer speaking the protocol over TCP. :func:`play_local` hosts a table on
the loopback interface (the user's seat is the host, seat 0) and seats one bot peer per other
seat, each a :class:`~dernier_p2p.net.peer.Peer` task in this process with its own identity,
session and deck secrets. :func:`host_table` and :func:`join_table` serve the ``host`` and
``join`` commands. The user's seat is played by a :class:`~.human.HumanAgent` or, with ``bot``,
by the heuristic bot; a :class:`~.follow.Narrator` narrates the match.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.cli.follow import Narrator, names_of
from dernier_p2p.cli.human import HumanAgent, LineReader
from dernier_p2p.net.agent import Agent, bot_agent
from dernier_p2p.net.host import Host, HostConfig
from dernier_p2p.net.peer import Peer, PeerConfig
from dernier_p2p.net.seat import LocalSeat
from dernier_p2p.net.timers import Timers
from dernier_p2p.wire.hashing import digest
from dernier_p2p.wire.identity import IdentityKey

LOOPBACK = "127.0.0.1"
AUTO_TIMERS = Timers(turn_ms=30_000, declare_ms=50, grace_ms=5_000)
HUMAN_TIMERS = Timers(turn_ms=3_600_000, declare_ms=1_500, grace_ms=15_000)
BOT_PACE = 0.4  # seconds a bot waits before each move when a human plays along


@dataclass
class Seating:
    """How the user's seat is played and shown."""

    bot: bool
    colour: bool
    echo: Callable[..., None] = click.echo
    bot_seed: int = 0
    lines: LineReader | None = None
    log: list[str] = field(default_factory=list)
    narrator: Narrator | None = None

    def __post_init__(self) -> None:
        if self.narrator is None:
            self.narrator = Narrator(self.echo, self.log, self.colour)

    async def follow(self, current: Callable[[], LocalSeat | None]) -> None:
        assert self.narrator is not None
        await self.narrator.follow(current)


def local_seed(seed: int, what: str, seat: int) -> bytes:
    """A 32-byte value derived from the table seed (identities, Drbg seeds, game id)."""
    return digest("dernier-p2p/cli-local", [seed, what, seat])


def _user_agent(seating: Seating, current: Callable[[], LocalSeat | None]) -> Agent:
    if seating.bot:
        return bot_agent(HeuristicBot(seating.bot_seed))
    lines = seating.lines or LineReader()
    names: list[str] = []

    def state() -> Any:
        me = current()
        return None if me is None else me.session.state

    assert seating.narrator is not None
    agent = HumanAgent(
        names, seating.log, lines, state, echo=seating.echo, colour=seating.colour,
        flush=seating.narrator.flush,
    )

    async def ask(st: Any, seat: int, view: Any) -> Any:
        if not agent.names:
            me = current()
            assert me is not None
            agent.names = names_of(me)
        return await agent(st, seat, view)

    return ask


async def play_local(
    variant: str,
    players: int,
    options: dict[str, Any],
    seed: int,
    name: str,
    transcript: Path,
    seating: Seating,
) -> LocalSeat | None:
    """Host a loopback table, seat ``players - 1`` bot peers, play until the match is over;
    return the user's seat. The user's QuitGame (or any fault) propagates."""
    timers = AUTO_TIMERS if seating.bot else HUMAN_TIMERS
    pace = 0.0 if seating.bot else BOT_PACE
    host: Host | None = None

    def current() -> LocalSeat | None:
        return None if host is None else host.me

    config = HostConfig(
        players=players,
        variant=variant,
        options=options,
        timers=timers,
        name=name,
        table_name=f"{name}'s table",
        bind=LOOPBACK,
        port=0,
        transcript=transcript,
        game=local_seed(seed, "game", 0)[:16],
        seed=local_seed(seed, "drbg", 0),
        linger_s=0.2,
    )
    seating.bot_seed = seed * 31
    host = Host(
        IdentityKey.generate(local_seed(seed, "identity", 0)), config,
        _user_agent(seating, current),
    )
    async with trio.open_nursery() as nursery:

        async def run_host(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
            await host.run(task_status=task_status)

        await nursery.start(run_host)
        nursery.start_soon(seating.follow, current)
        for seat in range(1, players):
            peer = Peer(
                IdentityKey.generate(local_seed(seed, "identity", seat)),
                (LOOPBACK, host.port),
                bot_agent(HeuristicBot(seed * 31 + seat), pace),
                PeerConfig(name=f"Bot {seat}", seed=local_seed(seed, "drbg", seat),
                           linger_s=0.2),
            )
            nursery.start_soon(peer.run)
            with trio.fail_after(10):  # join in seat order: the same seats on every run
                while len(host.players) <= seat:
                    await trio.sleep(0.005)
    return current()


async def _announce_joins(host: Host, echo: Callable[..., None]) -> None:
    """Tell the host's user who sits down (and leaves the lobby) until the table is full."""
    seen: dict[int, str] = {}
    while not host.full.is_set():
        now = {s: p.name for s, p in host.players.items()}
        for s in sorted(set(now) - set(seen)):
            if s != 0:
                echo(f"Seat {s}: {now[s]} sits down ({len(now)} of {host.config.players}).")
        for s in sorted(set(seen) - set(now)):
            echo(f"Seat {s}: {seen[s]} leaves the lobby.")
        seen = now
        await trio.sleep(0.1)
    echo("The table is full; the match begins.")


async def host_table(
    identity: IdentityKey, config: HostConfig, seating: Seating
) -> LocalSeat | None:
    """Host a table for peers on other machines; the user plays seat 0."""
    host: Host | None = None

    def current() -> LocalSeat | None:
        return None if host is None else host.me

    host = Host(identity, config, _user_agent(seating, current))
    async with trio.open_nursery() as nursery:

        async def run_host(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
            await host.run(task_status=task_status)

        await nursery.start(run_host)
        where = config.advertise or config.bind
        seating.echo(
            f"Hosting a {config.variant} table for {config.players} on port {host.port}. "
            f"Others join with: dernier join {where}:{host.port}"
        )
        nursery.start_soon(_announce_joins, host, seating.echo)
        nursery.start_soon(seating.follow, current)
    return current()


async def join_table(
    identity: IdentityKey, address: tuple[str, int], config: PeerConfig, seating: Seating
) -> LocalSeat | None:
    """Join the table at ``address`` and play until the match is over."""
    peer: Peer | None = None

    def current() -> LocalSeat | None:
        return None if peer is None else peer.me

    seating.bot_seed = int.from_bytes(os.urandom(4), "little")
    peer = Peer(identity, address, _user_agent(seating, current), config)
    async with trio.open_nursery() as nursery:

        async def run_peer() -> None:
            await peer.run()

        nursery.start_soon(run_peer)
        nursery.start_soon(seating.follow, current)

        async def seated() -> None:
            while peer.seat is None:
                await trio.sleep(0.02)
            seating.echo(f"Seated at seat {peer.seat}; waiting for the table to fill.")

        nursery.start_soon(seated)
    return current()
