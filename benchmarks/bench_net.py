"""Network benchmark: four bot seats playing dernier over loopback TCP, one process each.

The host (seat 0) and three peers run as four separate processes (so each has its own CPU time
and memory), talking over 127.0.0.1 with the real handshake, framing, sequencing, session
checks and a transcript file per seat (fsync per record). Every seat is a HeuristicBot.

Printed figures:

- **first card**: wall time from the moment the table is full (every handshake done, record 0
  sequenced) until the host has applied the first card played (the key set-up, the four proven
  shuffles, the deal and the first flip all happen in between), and the CPU seconds each seat
  process spent from record 1 to that point (independent of other load on the machine);
- **move latency**: for each seat move (play, draw, pass, declare, ...), from the moment its
  author sends it until every seat has applied it to its rules state (so a play includes the
  tokens that reveal its card, a draw the token of the drawn card: see :class:`SeatProbe`);
  median and 99th percentile over the whole run;
- **hands per minute**: hands completed over the wall time from record 0 to the end;
- **peak memory per seat**: ``ru_maxrss`` of each process (whole interpreter included).

Times come from ``time.monotonic`` (one clock for all processes on Linux), taken through the
seats' public hooks (:class:`SeatProbe`). Run: ``python benchmarks/bench_net.py [--hands N]
[--no-offload] [--send-before-check] [--timeline]`` (default 3 hands; the records whose
checking is long, the shuffles, are applied in a worker thread unless ``--no-offload``).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import queue
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SEATS = 4
GOALS = {"first_card_s": 1.5, "median_ms": 20.0, "peak_mb": 100.0}


class SeatProbe:
    """Times one seat process through the public hooks of its seat and driver: its own moves
    as they go out (:meth:`~dernier_p2p.net.driver.Driver.send_own`, the path of every envelope
    the seat's agent signs), and every record as the seat has applied it
    (:meth:`~dernier_p2p.net.seat.LocalSeat.follow`).

    A move counts as applied at a seat once that seat's session has run every move it holds,
    with the faces and tokens they wait for (a play's card opened, a drawn card's token in):
    the session is quiescent again, the match is over, or its rules wait on chance (the next
    hand's shuffle). Figures go to :attr:`out` (plain values, for JSON)."""

    def __init__(self, timeline: bool = False) -> None:
        self.out: dict[str, Any] = {"sent": {}, "applied": {}, "timeline": []}
        self.timeline = timeline
        self.pending: list[str] = []
        self.first_play: str | None = None
        self.seen = 0

    def time_sends(self, driver: Any) -> None:
        """Note when each own move leaves through ``driver`` (set before the match starts)."""
        send_own = driver.send_own
        sent: dict[str, float] = self.out["sent"]

        async def timed(env: dict[str, Any]) -> None:
            if env["body"]["type"] == "move":
                sent[f"{env['seat']}/{env['n']}"] = time.monotonic()
            await send_own(env)

        driver.send_own = timed

    async def follow(self, seat: Any) -> None:
        """Note every record of ``seat`` (a LocalSeat) as it is applied, to the match's end."""
        async for record in seat.follow(self.seen):
            self.saw(seat, record)

    def catch_up(self, seat: Any) -> None:
        """Note the records applied since :meth:`follow` last ran (at the end of the match)."""
        for record in seat.records[self.seen :]:
            self.saw(seat, record)

    def saw(self, seat: Any, record: dict[str, Any]) -> None:
        """One record, applied by ``seat``'s session."""
        self.seen += 1
        out = self.out
        now = time.monotonic()
        if record.get("i", 0) >= 1:
            out.setdefault("cpu0", time.process_time())  # record 1: the match has started
        body = record["env"]["body"]
        if self.timeline and "first_play" not in out:
            out["timeline"].append((now, body["type"] + "/" + str(body.get("move", ""))))
        if body["type"] == "move":
            key = f"{record['env']['seat']}/{record['env']['n']}"
            self.pending.append(key)
            if body["move"] == "play" and self.first_play is None:
                self.first_play = key
        session = seat.session
        chance = session.state is not None and session.state.chance is not None
        if not self.pending or not (session.finished or session.quiescent or chance):
            return
        for key in self.pending:
            out["applied"][key] = now
            if key == self.first_play:
                out["first_play"] = now
                out["first_play_cpu"] = time.process_time()
        self.pending.clear()


def _finish(out: dict[str, Any], path: str, result: Any, hands: int) -> None:
    out["peak_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out["end"] = time.monotonic()
    out["result"] = repr(result)
    out["hands"] = hands
    Path(path).write_text(json.dumps(out))


async def probed_host(host: Any, probe: SeatProbe, serve: Any = None) -> Any:
    """Run ``host`` (a :class:`~dernier_p2p.net.host.Host`) to its end under ``probe``: its
    port is put where ``serve(port)`` says once it listens, the table's filling is noted in
    ``probe.out["full_at"]``; returns the host's result."""
    import trio

    out = probe.out
    probe.time_sends(host.driver)
    result: list[Any] = []
    done = trio.Event()

    async def run(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        result.append(await host.run(task_status=task_status))
        done.set()

    async def watch() -> None:
        await host.full.wait()
        out["full_at"] = time.monotonic()
        await probe.follow(await host.local_seat())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch)
        await nursery.start(run)
        if serve is not None:
            await serve(host, nursery)
        await done.wait()  # (a relay registration, say, runs until cancelled)
        nursery.cancel_scope.cancel()
    probe.catch_up(host.me)
    return result[0]


async def probed_peer(peer: Any, probe: SeatProbe) -> Any:
    """Run ``peer`` (a :class:`~dernier_p2p.net.peer.Peer`) to its end under ``probe``."""
    import trio

    probe.time_sends(peer.driver)
    result: list[Any] = []

    async def watch() -> None:
        await probe.follow(await peer.local_seat())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch)
        result.append(await peer.run())
        nursery.cancel_scope.cancel()
    probe.catch_up(peer.me)
    return result[0]


def host_process(
    port_q: Any, path: str, tmp: str, hands: int, check_first: bool, offload: bool,
    timeline: bool = False,
) -> None:
    import trio

    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.net.agent import bot_agent
    from dernier_p2p.net.host import Host, HostConfig
    from dernier_p2p.wire.identity import IdentityKey

    probe = SeatProbe(timeline)
    out = probe.out
    transcript = Path(tmp) / "t0.bin"

    async def main() -> Any:
        config = HostConfig(
            players=SEATS,
            options={"match": ["hands", hands]},
            seed=os.urandom(32),
            transcript=transcript,
            check_first=check_first,
            offload=offload,
        )
        host = Host(IdentityKey.generate(os.urandom(32)), config, bot_agent(HeuristicBot(0)))

        async def serve(host: Host, nursery: Any) -> None:
            port_q.put(host.port)

        result = await probed_host(host, probe, serve)
        out["records"] = len(host.records)
        out["hands_done"] = host.me.session.state.hand_number
        return result

    result = trio.run(main)
    out["bytes"] = transcript.stat().st_size
    _finish(out, path, result, hands)


def peer_process(seat: int, port: int, path: str, tmp: str, hands: int, offload: bool) -> None:
    import trio

    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.net.agent import bot_agent
    from dernier_p2p.net.peer import Peer, PeerConfig
    from dernier_p2p.wire.identity import IdentityKey

    probe = SeatProbe()
    transcript = Path(tmp) / f"t{seat}.bin"
    config = PeerConfig(
        name=f"bot{seat}", seed=os.urandom(32), transcript=transcript, offload=offload
    )
    peer = Peer(IdentityKey.generate(os.urandom(32)), ("127.0.0.1", port),
                bot_agent(HeuristicBot(seat)), config)
    result = trio.run(probed_peer, peer, probe)
    _finish(probe.out, path, result, hands)


def port_of(proc: Any, port_q: Any, limit_s: float = 60.0) -> int:
    """The port ``proc`` puts on ``port_q`` once it listens; exits at once if it dies first."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            return int(port_q.get(timeout=0.2))
        except queue.Empty:
            if not proc.is_alive():
                sys.exit(f"the {proc.name} process ended before listening: exit {proc.exitcode}")
    sys.exit(f"the {proc.name} process did not listen within {limit_s:g} s")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=3)
    parser.add_argument(
        "--timeline", action="store_true", help="when the host applied what, up to the first card"
    )
    parser.add_argument(
        "--send-before-check",
        action="store_true",
        help="the host relays each record before checking it (HostConfig.check_first=False)",
    )
    parser.add_argument(
        "--offload",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="apply shuffle records in a worker thread, as by default"
        " (HostConfig/PeerConfig.offload); --no-offload: on the trio loop",
    )
    args = parser.parse_args()
    if args.hands < 1:
        parser.error("--hands must be at least 1")
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, f"seat{s}.json") for s in range(SEATS)]
        port_q = ctx.Queue()
        host_args = (port_q, paths[0], tmp, args.hands, not args.send_before_check, args.offload,
                     args.timeline)
        procs = [ctx.Process(target=host_process, args=host_args, name="host")]
        procs[0].start()
        port = port_of(procs[0], port_q)
        for seat in range(1, SEATS):
            procs.append(
                ctx.Process(
                    target=peer_process,
                    args=(seat, port, paths[seat], tmp, args.hands, args.offload),
                )
            )
            procs[-1].start()
            time.sleep(0.05)  # join in seat order (cosmetic)
        for p in procs:
            p.join(timeout=600)
        if any(p.exitcode != 0 for p in procs):
            sys.exit(f"a seat process failed: {[p.exitcode for p in procs]}")
        data = [json.loads(Path(p).read_text()) for p in paths]
    host = data[0]
    results = {d["result"] for d in data}
    sent: dict[str, float] = {}
    for d in data:
        sent.update(d["sent"])
    latencies = []
    for key, t0 in sent.items():
        times = [d["applied"].get(key) for d in data]
        if all(t is not None for t in times):
            latencies.append((max(times) - t0) * 1000)
    first_card = host.get("first_play", math.nan) - host["full_at"]
    wall = max(d["end"] for d in data) - host["full_at"]
    hands = host["hands_done"]
    peak_mb = [d["peak_kb"] / 1024 for d in data]
    mode = "relays first, checks after" if args.send_before_check else "checks each record first"
    where = "in a worker thread" if args.offload else "on the trio loop"
    print(f"dernier, {SEATS} seats (host + 3 peers), one process each, loopback TCP; host {mode};"
          f" shuffle records applied {where}")
    print(f"records: {host['records']}, hands: {hands}, all seats agree: {len(results) == 1}")
    print(f"first card played after the table filled: {first_card:.3f} s "
          f"(goal <= {GOALS['first_card_s']} s)")
    cpu = [d.get("first_play_cpu", math.nan) - d["cpu0"] for d in data]
    print("  CPU seconds per seat from record 1 until it applied the first card: "
          + ", ".join(f"{c:.2f}" for c in cpu)
          + f"; load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"move latency over {len(latencies)} moves: median {statistics.median(latencies):.1f} ms"
          f" (goal <= {GOALS['median_ms']:.0f} ms), p99 {percentile(latencies, 0.99):.1f} ms,"
          f" max {max(latencies):.1f} ms")
    print(f"transcript bytes per hand: {host['bytes'] / max(hands, 1):.0f} "
          f"({host['bytes']} bytes, {hands} hands)")
    print(f"hands per minute: {hands / (wall / 60):.1f} ({hands} hands in {wall:.1f} s)")
    if args.timeline:
        print("host timeline to the first card (s after the table filled, last of each kind):")
        last: dict[str, float] = {}
        for t, kind in host["timeline"]:
            last[kind.rstrip("/")] = t - host["full_at"]
        for kind, t in sorted(last.items(), key=lambda kv: kv[1]):
            print(f"  {t:7.3f}  {kind}")
    print("peak memory per seat (ru_maxrss): "
          + ", ".join(f"seat {s}: {mb:.0f} MB" for s, mb in enumerate(peak_mb))
          + f" (goal <= {GOALS['peak_mb']:.0f} MB)")


if __name__ == "__main__":
    main()
