"""Relay benchmark: the same four-seat table played directly and through a ``dernier relay``.

One run plays a match of bot seats twice over loopback TCP, each seat its own process (as
``bench_net.py``): first with the peers connected straight to the host, then with every peer
connected through a relay running as a fifth process (the host registered with it, each peer
paired by it, every frame forwarded by it). Printed for both, side by side:

- **first card**: wall time from the table filling to the host applying the first card played;
- **move latency**: per seat move, from its author sending it until every seat has applied it;
  median and 99th percentile over the match.

- **frame round trip**: a 200-byte frame sent and echoed back, direct and through the relay
  (the relay in its own process), median and 99th percentile over ``--pings`` round trips: the
  cost of the extra hop by itself, with no game work around it.

Run: ``python benchmarks/bench_relay.py [--hands N] [--rounds R] [--pings P] [--no-offload]``
(default 2 hands, 1 round, 500 pings; each round plays direct then relayed; the seats apply
shuffle records in a worker thread unless ``--no-offload``). Timings are taken as in
``bench_net.py`` (its :class:`SeatProbe`).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_net import (  # noqa: E402
    SEATS,
    SeatProbe,
    _finish,
    percentile,
    port_of,
    probed_host,
    probed_peer,
)

TOKEN = b"benchtab"


def relay_process(port_q: Any) -> None:
    import trio

    from dernier_p2p.net.relay import Relay, serve_relay

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(serve_relay, Relay(), 0, "127.0.0.1")
            port_q.put(listeners[0].socket.getsockname()[1])

    trio.run(main)


def host_process(
    port_q: Any, path: str, tmp: str, hands: int, relay: int | None, offload: bool
) -> None:
    import trio

    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.net.agent import bot_agent
    from dernier_p2p.net.host import Host, HostConfig
    from dernier_p2p.net.relay import host_through_relay
    from dernier_p2p.wire.identity import IdentityKey

    probe = SeatProbe()

    async def main() -> Any:
        config = HostConfig(players=SEATS, options={"match": ["hands", hands]},
                            seed=os.urandom(32), transcript=Path(tmp) / "t0.bin",
                            offload=offload)
        host = Host(IdentityKey.generate(os.urandom(32)), config, bot_agent(HeuristicBot(0)))

        async def serve(host: Host, nursery: trio.Nursery) -> None:
            if relay is not None:  # registered until the match is over
                await nursery.start(host_through_relay, ("127.0.0.1", relay), TOKEN,
                                    host.handle)
            port_q.put(host.port)

        result = await probed_host(host, probe, serve)
        probe.out["hands_done"] = host.me.session.state.hand_number
        return result

    result = trio.run(main)
    _finish(probe.out, path, result, hands)


def peer_process(
    seat: int, port: int, path: str, tmp: str, hands: int, relay: int | None, offload: bool
) -> None:
    import trio

    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.net.agent import bot_agent
    from dernier_p2p.net.invite import Invite, Route
    from dernier_p2p.net.peer import Peer, PeerConfig
    from dernier_p2p.net.reach import Dialer
    from dernier_p2p.wire.identity import IdentityKey

    probe = SeatProbe()
    dial = None
    if relay is not None:  # through the relay only: no hole punched past it
        invite = Invite(b"\0" * 10, (Route("relay", "127.0.0.1", relay, TOKEN),))
        dial = Dialer(invite, punch=False)
    config = PeerConfig(name=f"bot{seat}", seed=os.urandom(32),
                        transcript=Path(tmp) / f"t{seat}.bin", dial=dial, offload=offload)
    peer = Peer(IdentityKey.generate(os.urandom(32)), ("127.0.0.1", port),
                bot_agent(HeuristicBot(seat)), config)
    result = trio.run(probed_peer, peer, probe)
    probe.out["route"] = "direct" if dial is None or dial.used is None else dial.used.kind
    _finish(probe.out, path, result, hands)


def play(
    ctx: Any, hands: int, relay: int | None, offload: bool = True
) -> tuple[float, list[float]]:
    """One match; (first card seconds, move latencies in ms)."""
    import time

    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, f"seat{s}.json") for s in range(SEATS)]
        port_q = ctx.Queue()
        host_args = (port_q, paths[0], tmp, hands, relay, offload)
        procs = [ctx.Process(target=host_process, args=host_args, name="host")]
        procs[0].start()
        port = port_of(procs[0], port_q)
        for seat in range(1, SEATS):
            procs.append(ctx.Process(target=peer_process,
                                     args=(seat, port, paths[seat], tmp, hands, relay,
                                           offload)))
            procs[-1].start()
            time.sleep(0.05)
        for p in procs:
            p.join(timeout=600)
        if any(p.exitcode != 0 for p in procs):
            sys.exit(f"a seat process failed: {[p.exitcode for p in procs]}")
        data = [json.loads(Path(p).read_text()) for p in paths]
    if len({d["result"] for d in data}) != 1:
        sys.exit("the seats disagree on the result")
    routes = {d["route"] for d in data[1:]}
    if routes != {"direct" if relay is None else "relay"}:
        sys.exit(f"the peers joined by {sorted(routes)}, not as this match means to")
    sent: dict[str, float] = {}
    for d in data:
        sent.update(d["sent"])
    latencies = []
    for key, t0 in sent.items():
        times = [d["applied"].get(key) for d in data]
        if all(t is not None for t in times):
            latencies.append((max(times) - t0) * 1000)
    return data[0].get("first_play", math.nan) - data[0]["full_at"], latencies


async def _pings(relay: int, count: int) -> dict[str, list[float]]:
    """Round trips of a 200-byte frame to an echo handler, direct and through the relay."""
    import time

    import trio

    from dernier_p2p.net.framing import FramedStream, open_framed, serve_framed
    from dernier_p2p.net.handshake import MAX_FRAME
    from dernier_p2p.net.relay import host_through_relay, join_through_relay

    async def echo(stream: FramedStream) -> None:
        while True:
            await stream.send(await stream.receive())

    out: dict[str, list[float]] = {}
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            partial(serve_framed, echo, 0, host="127.0.0.1", max_frame=MAX_FRAME)
        )
        port = listeners[0].socket.getsockname()[1]
        await nursery.start(host_through_relay, ("127.0.0.1", relay), b"pingpong", echo)
        frame = b"x" * 200
        for name in ("direct", "relay"):
            if name == "direct":
                stream = await open_framed("127.0.0.1", port, MAX_FRAME)
            else:
                stream = await join_through_relay(("127.0.0.1", relay), b"pingpong")
            times = []
            for _ in range(count):
                t0 = time.perf_counter()
                await stream.send(frame)
                await stream.receive()
                times.append((time.perf_counter() - t0) * 1000)
            out[name] = times
            await stream.aclose()
        nursery.cancel_scope.cancel()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--pings", type=int, default=500)
    parser.add_argument(
        "--offload", action=argparse.BooleanOptionalAction, default=True,
        help="apply shuffle records in a worker thread, as by default; --no-offload: on the"
        " trio loop",
    )
    args = parser.parse_args()
    for name in ("hands", "rounds", "pings"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    ctx = mp.get_context("spawn")
    port_q = ctx.Queue()
    relay = ctx.Process(target=relay_process, args=(port_q,), daemon=True, name="relay")
    relay.start()
    relay_port = port_of(relay, port_q)
    print(f"dernier, {SEATS} seats (host + 3 peers), one process each, loopback TCP; the relay "
          f"is a fifth process; {args.hands} hands per match; shuffle records applied "
          f"{'in a worker thread' if args.offload else 'on the trio loop'}")
    try:
        import trio

        rtt = trio.run(_pings, relay_port, args.pings)
        for name, times in rtt.items():
            print(f"frame round trip {name:6}: median {statistics.median(times):.3f} ms, "
                  f"p99 {percentile(times, 0.99):.3f} ms over {len(times)}")
        for r in range(args.rounds):
            for name, via in (("direct", None), ("relay ", relay_port)):
                first, lat = play(ctx, args.hands, via, args.offload)
                print(f"round {r + 1} {name}: first card {first:.3f} s; move latency over "
                      f"{len(lat)} moves: median {statistics.median(lat):.1f} ms, "
                      f"p99 {percentile(lat, 0.99):.1f} ms")
    finally:
        relay.kill()
    print(f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
