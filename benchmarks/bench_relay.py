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

Run: ``python benchmarks/bench_relay.py [--hands N] [--rounds R] [--pings P]`` (default 2 hands,
1 round, 500 pings; each round plays direct then relayed).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_net import SEATS, _finish, _instrument, percentile, timed_host  # noqa: E402

TOKEN = b"benchtab"


def relay_process(port_q: Any) -> None:
    import trio

    from dernier_p2p.net.relay import Relay, serve_relay

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(serve_relay, Relay(), 0, "127.0.0.1")
            port_q.put(listeners[0].socket.getsockname()[1])

    trio.run(main)


def host_process(port_q: Any, path: str, tmp: str, hands: int, relay: int | None) -> None:

    import trio

    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.net.agent import bot_agent
    from dernier_p2p.net.host import HostConfig
    from dernier_p2p.net.relay import host_through_relay
    from dernier_p2p.wire.identity import IdentityKey

    out: dict[str, Any] = {}
    _instrument(out)
    TimedHost = timed_host(out)  # noqa: N806 - a class

    async def main() -> Any:
        config = HostConfig(players=SEATS, options={"match": ["hands", hands]},
                            seed=os.urandom(32), transcript=Path(tmp) / "t0.bin")
        host = TimedHost(IdentityKey.generate(os.urandom(32)), config, bot_agent(HeuristicBot(0)))
        async with trio.open_nursery() as nursery:
            await nursery.start(host.run)
            if relay is not None:
                await nursery.start(host_through_relay, ("127.0.0.1", relay), TOKEN, host.handle)
            port_q.put(host.port)
            await host.done.wait()
            with trio.move_on_after(host.config.linger_s + 1):
                while host.conns:
                    await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
        out["hands_done"] = host.me.session.state.hand_number
        return host.me.session.result

    result = trio.run(main)
    _finish(out, path, result, hands)


def peer_process(seat: int, port: int, path: str, tmp: str, hands: int, relay: int | None) -> None:
    import trio

    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.net.agent import bot_agent
    from dernier_p2p.net.invite import Invite, Route
    from dernier_p2p.net.peer import PeerConfig, run_peer
    from dernier_p2p.net.reach import Dialer
    from dernier_p2p.wire.identity import IdentityKey

    out: dict[str, Any] = {}
    _instrument(out)
    dial = None
    if relay is not None:
        dial = Dialer(Invite(b"\0" * 10, (Route("relay", "127.0.0.1", relay, TOKEN),)))
    config = PeerConfig(name=f"bot{seat}", seed=os.urandom(32),
                        transcript=Path(tmp) / f"t{seat}.bin", dial=dial)
    result = trio.run(run_peer, IdentityKey.generate(os.urandom(32)), ("127.0.0.1", port),
                      bot_agent(HeuristicBot(seat)), config)
    _finish(out, path, result, hands)


def play(ctx: Any, hands: int, relay: int | None) -> tuple[float, list[float]]:
    """One match; (first card seconds, move latencies in ms)."""
    import time

    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, f"seat{s}.json") for s in range(SEATS)]
        port_q = ctx.Queue()
        procs = [ctx.Process(target=host_process, args=(port_q, paths[0], tmp, hands, relay))]
        procs[0].start()
        port = port_q.get(timeout=60)
        for seat in range(1, SEATS):
            procs.append(ctx.Process(target=peer_process,
                                     args=(seat, port, paths[seat], tmp, hands, relay)))
            procs[-1].start()
            time.sleep(0.05)
        for p in procs:
            p.join(timeout=600)
        if any(p.exitcode != 0 for p in procs):
            sys.exit(f"a seat process failed: {[p.exitcode for p in procs]}")
        data = [json.loads(Path(p).read_text()) for p in paths]
    if len({d["result"] for d in data}) != 1:
        sys.exit("the seats disagree on the result")
    sent: dict[str, float] = {}
    for d in data:
        sent.update(d["sent"])
    latencies = []
    for key, t0 in sent.items():
        times = [d["applied"].get(key) for d in data]
        if all(t is not None for t in times):
            latencies.append((max(times) - t0) * 1000)
    return data[0]["first_play"] - data[0]["full_at"], latencies


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
    args = parser.parse_args()
    ctx = mp.get_context("spawn")
    port_q = ctx.Queue()
    relay = ctx.Process(target=relay_process, args=(port_q,), daemon=True)
    relay.start()
    relay_port = port_q.get(timeout=60)
    print(f"dernier, {SEATS} seats (host + 3 peers), one process each, loopback TCP; the relay "
          f"is a fifth process; {args.hands} hands per match")
    try:
        import trio

        rtt = trio.run(_pings, relay_port, args.pings)
        for name, times in rtt.items():
            print(f"frame round trip {name:6}: median {statistics.median(times):.3f} ms, "
                  f"p99 {percentile(times, 0.99):.3f} ms over {len(times)}")
        for r in range(args.rounds):
            for name, via in (("direct", None), ("relay ", relay_port)):
                first, lat = play(ctx, args.hands, via)
                print(f"round {r + 1} {name}: first card {first:.3f} s; move latency over "
                      f"{len(lat)} moves: median {statistics.median(lat):.1f} ms, "
                      f"p99 {percentile(lat, 0.99):.1f} ms")
    finally:
        relay.kill()
    print(f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
