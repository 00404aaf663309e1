"""A table of bots over loopback TCP for the host and peer tests, and transcript checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net.agent import Agent, bot_agent
from dernier_p2p.net.host import Host, HostConfig
from dernier_p2p.net.peer import Peer, PeerConfig
from dernier_p2p.net.timers import Timers
from dernier_p2p.protocol.chain import ChainChecker
from dernier_p2p.protocol.verify import Verdict, check_records
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.transcript import read_transcript

GAME = b"G" * 16
KEYS = [IdentityKey.generate(bytes([40 + i]) * 32) for i in range(10)]
ONE_HAND = {"match": ["hands", 1], "leave": "play_on"}
"""One hand of ``dernier`` whose table plays on when a seat leaves at three or more seats
(PROTOCOL.md 7.9; ``dernier``'s own default, option ``leave`` ``end``, ends the match)."""
FAST = Timers(turn_ms=3_000, declare_ms=30, grace_ms=400)


def seed(seat: int) -> bytes:
    return bytes([seat + 1]) * 32


@dataclass
class Table:
    """What a run produced: the host, the peers, results by seat, exceptions by seat."""

    host: Host
    peers: dict[int, Peer]
    results: dict[int, Any] = field(default_factory=dict)
    errors: dict[int, BaseException] = field(default_factory=dict)
    scopes: dict[int, trio.CancelScope] = field(default_factory=dict)


async def play(
    tmp: Path,
    players: int,
    *,
    host_cls: type[Host] = Host,
    peer_cls: dict[int, type[Peer]] | None = None,
    agents: dict[int, Agent | None] | None = None,
    timers: Timers = FAST,
    options: dict[str, Any] | None = None,
    watch: Any = None,
    listen: bool = False,
    host_options: dict[str, Any] | None = None,
    peer_options: dict[str, Any] | None = None,
    limit: float = 60,
    on_start: Any = None,
) -> Table:
    """Run a table of ``players`` bots (host = seat 0) until every task ends.

    ``on_start(table)`` is called first; ``watch(table)`` runs as a task alongside (to kill a
    peer mid-hand, ...). A peer raising is recorded in ``errors`` (the others go on);
    ``scopes[seat]`` cancels a seat (the host too).
    With ``listen`` every peer announces a loopback address (so it can take over as host)."""
    agents = agents or {}
    peer_cls = peer_cls or {}

    def agent(seat: int) -> Agent | None:
        return agents[seat] if seat in agents else bot_agent(HeuristicBot(seat))

    config = HostConfig(
        players=players,
        options=ONE_HAND if options is None else options,
        timers=timers,
        game=GAME,
        seed=seed(0),
        transcript=tmp / "t0.bin",
        linger_s=0.5,
        **(host_options or {}),
    )
    host = host_cls(KEYS[0], config, agent(0))
    table = Table(host, {})
    if on_start is not None:
        on_start(table)
    with trio.fail_after(limit):
        async with trio.open_nursery() as nursery:

            async def run_host(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
                with trio.CancelScope() as scope:
                    table.scopes[0] = scope
                    table.results[0] = await host.run(task_status=task_status)

            await nursery.start(run_host)

            async def run_peer(seat: int) -> None:
                cls = peer_cls.get(seat, Peer)
                peer = cls(
                    KEYS[seat],
                    ("127.0.0.1", host.port),
                    agent(seat),
                    PeerConfig(
                        name=f"p{seat}",
                        seed=seed(seat),
                        transcript=tmp / f"t{seat}.bin",
                        listen=("127.0.0.1", 0) if listen else None,
                        linger_s=0.5,
                        **(peer_options or {}),
                    ),
                )
                table.peers[seat] = peer
                with trio.CancelScope() as scope:
                    table.scopes[seat] = scope
                    try:
                        table.results[seat] = await peer.run()
                    except Exception as exc:  # recorded for the test to judge
                        table.errors[seat] = exc

            for seat in range(1, players):
                nursery.start_soon(run_peer, seat)
                # join in seat order so that seat numbers are predictable
                with trio.fail_after(5):
                    while len(host.players) <= seat:
                        await trio.sleep(0.005)
            if watch is not None:
                nursery.start_soon(watch, table)
    return table


def transcripts(tmp: Path, seats: range | list[int]) -> dict[int, list[dict]]:
    return {s: list(read_transcript(tmp / f"t{s}.bin")) for s in seats}


def verify(records: list[dict]) -> Verdict:
    """Check a transcript: chain and every signature (ChainChecker), then the offline audit
    (protocol.verify: rules, deck proofs, audits, a complete match). Returns the verdict."""
    first = records[0]
    keys = [p["key"] for p in first["env"]["body"]["players"]]
    chain = ChainChecker(first["env"]["game"], keys, keys)
    for rec in records:
        chain.feed(rec)
    verdict = check_records(records)
    assert verdict.ok, verdict
    return verdict


def same_result(result: dict[str, Any], verdict: Verdict) -> bool:
    """Whether a seat's session result is the audit's."""
    s = verdict.summary
    return (result["scores"], result["match_points"], result["winner"]) == (
        s.scores,
        s.match_points,
        s.winner,
    )


async def wait_for(predicate: Any, timeout: float = 20) -> None:
    with trio.fail_after(timeout):
        while not predicate():
            await trio.sleep(0.005)
