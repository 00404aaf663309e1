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
  tokens that reveal its card, a draw the token of the drawn card); median and 99th percentile
  over the whole run;
- **hands per minute**: hands completed over the wall time from record 0 to the end;
- **peak memory per seat**: ``ru_maxrss`` of each process (whole interpreter included).

Times come from ``time.monotonic`` (one clock for all processes on Linux).
Run: ``python benchmarks/bench_net.py [--hands N] [--offload]`` (default 3 hands; ``--offload``
applies the records whose checking is long, the shuffles, in a worker thread).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SEATS = 4
GOALS = {"first_card_s": 1.5, "median_ms": 20.0, "peak_mb": 100.0}


def _instrument(out: dict[str, Any]) -> None:
    """Record, in this process, when own moves are sent and when each move takes effect."""
    from dernier_p2p.net.seat import LocalSeat

    sent: dict[str, float] = out.setdefault("sent", {})
    applied: dict[str, float] = out.setdefault("applied", {})
    pending: list[str] = []
    original_applied = LocalSeat._applied
    original_sent = LocalSeat.sent

    timeline: list[tuple[float, str]] = out.setdefault("timeline", [])

    def on_applied(
        self: LocalSeat, record: dict[str, Any], envs: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        out.setdefault("cpu0", time.process_time())  # record 1: the match has started
        result = original_applied(self, record, envs)
        env = record["env"]
        body = env["body"]
        if "first_play" not in out:
            timeline.append((time.monotonic(), body["type"] + "/" + str(body.get("move", ""))))
        if body["type"] == "move":
            pending.append(f"{env['seat']}/{env['n']}")
            if body["move"] == "play" and "first_play" not in out:
                out["first_play_pending"] = True
        session = self.session
        # moves run in record order; those still queued, or waiting for their card's face,
        # are the newest ones (instrumentation reads the session's private queue)
        waiting = len(session._moves) + (session._await is not None and session._await[0] == "face")
        done = len(pending) if session.finished else len(pending) - waiting
        if done > 0:
            now = time.monotonic()
            for key in pending[:done]:
                applied[key] = now
            del pending[:done]
            if out.pop("first_play_pending", False):
                out["first_play"] = now
                out["first_play_cpu"] = time.process_time()
        return result

    def mark_sent(self: LocalSeat, env: dict[str, Any]) -> None:
        if env["body"]["type"] == "move":
            sent[f"{env['seat']}/{env['n']}"] = time.monotonic()
        original_sent(self, env)

    LocalSeat._applied = on_applied  # type: ignore[method-assign]
    LocalSeat.sent = mark_sent  # type: ignore[method-assign]


def _finish(out: dict[str, Any], path: str, result: Any, hands: int) -> None:
    out["peak_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out["end"] = time.monotonic()
    out["result"] = repr(result)
    out["hands"] = hands
    Path(path).write_text(json.dumps(out))


def timed_host(out: dict[str, Any]) -> Any:
    """A Host class that times its own moves as a peer's (sent, then seen in a record) and
    notes in ``out["full_at"]`` when the table filled."""
    from dernier_p2p.net.host import Host

    class TimedHost(Host):
        async def _send_own(self, env: dict[str, Any]) -> None:
            self.me.sent(env)  # only to time it; the host's own envelopes are never lost
            self.me.unsequenced.pop(env["n"], None)
            await super()._send_own(env)

        def _start_match(self) -> None:
            out["full_at"] = time.monotonic()
            super()._start_match()

    return TimedHost


def host_process(
    port_q: Any, path: str, tmp: str, hands: int, check_first: bool, offload: bool
) -> None:
    import trio

    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.net.agent import bot_agent
    from dernier_p2p.net.host import HostConfig
    from dernier_p2p.wire.identity import IdentityKey

    out: dict[str, Any] = {}
    _instrument(out)
    TimedHost = timed_host(out)  # noqa: N806 - a class

    async def main() -> Any:
        config = HostConfig(
            players=SEATS,
            options={"match": ["hands", hands]},
            seed=os.urandom(32),
            transcript=Path(tmp) / "t0.bin",
            check_first=check_first,
            offload=offload,
        )
        host = TimedHost(IdentityKey.generate(os.urandom(32)), config, bot_agent(HeuristicBot(0)))
        async with trio.open_nursery() as nursery:
            await nursery.start(host.run)
            port_q.put(host.port)
        out["records"] = len(host.records)
        out["bytes"] = (Path(tmp) / "t0.bin").stat().st_size
        out["hands_done"] = host.me.session.state.hand_number
        return host.me.session.result

    result = trio.run(main)
    _finish(out, path, result, hands)


def peer_process(seat: int, port: int, path: str, tmp: str, hands: int, offload: bool) -> None:
    import trio

    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.net.agent import bot_agent
    from dernier_p2p.net.peer import PeerConfig, run_peer
    from dernier_p2p.wire.identity import IdentityKey

    out: dict[str, Any] = {}
    _instrument(out)
    transcript = Path(tmp) / f"t{seat}.bin"
    config = PeerConfig(
        name=f"bot{seat}", seed=os.urandom(32), transcript=transcript, offload=offload
    )
    result = trio.run(
        run_peer,
        IdentityKey.generate(os.urandom(32)),
        ("127.0.0.1", port),
        bot_agent(HeuristicBot(seat)),
        config,
    )
    _finish(out, path, result, hands)


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
        action="store_true",
        help="apply shuffle records in a worker thread (HostConfig/PeerConfig.offload)",
    )
    args = parser.parse_args()
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, f"seat{s}.json") for s in range(SEATS)]
        port_q = ctx.Queue()
        host_args = (port_q, paths[0], tmp, args.hands, not args.send_before_check, args.offload)
        procs = [ctx.Process(target=host_process, args=host_args)]
        procs[0].start()
        port = port_q.get(timeout=60)
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
    first_card = host["first_play"] - host["full_at"]
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
    cpu = [d.get("first_play_cpu", float("nan")) - d["cpu0"] for d in data]
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
