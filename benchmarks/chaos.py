"""Chaos run: matches of four separate peer processes surviving kills, restarts and stalls.

Each match is ``dernier host`` and three ``dernier join`` processes (bots in every seat,
``--hands`` hands of ``dernier``, 2 by default) on 127.0.0.1. Each joiner reaches the host
through a loopback proxy of its own, and every seat listens so that it can take over as
host. While the match runs, faults are drawn at random (``random.Random(seed)``, a few seconds
apart):

- ``stall``: a joiner's proxy forwards nothing for 1 to 5 s (both directions);
- ``cut``: a joiner's proxy closes its connections (the peer resumes);
- ``kill``: a joiner's process is killed (SIGKILL) and started again with the same command
  after 0.5 to 3 s (it resumes from its transcript); no other kill for ``KILL_CALM_S`` after;
- ``host``: the host's process is killed and started again with the same command (the next
  seat hosts; the old host comes back as a seat of it); or, half the time, ``host+next``: the
  host and the next host (seat 1) are killed together and both started again (PROTOCOL.md 7.6:
  the others try seat 1, then the seats after it). At most one of these per match.

A match passes when every seat still in the match ends with exit code 0, their transcripts are
byte for byte the same (the same result for every surviving seat) and ``dernier verify``
accepts it. A seat killed so often that its grace ran out is out of the match (a ``left`` in
the agreed transcript, and the variant's rule for leaving); it is reported, not a failure.
Prints one line per match and the totals.

Run: ``python benchmarks/chaos.py [--matches N] [--seed S] [--budget SECONDS]`` (the budget
stops starting new matches once spent).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import trio

from dernier_p2p.wire.transcript import read_transcript

GRACE_S = 10
KILL_CALM_S = 4 * GRACE_S
"""After a kill, no other kill for this long: a seat (or the host, through the failover) has
come back by then."""
MATCH_LIMIT_S = 300.0


@dataclass
class Link:
    """One joiner's proxy: stalled until a time, or its connections cut."""

    stalled_until: float = 0.0
    scopes: set[trio.CancelScope] = field(default_factory=set)

    def cut(self) -> None:
        for scope in list(self.scopes):
            scope.cancel()


async def _pump(src: trio.SocketStream, dst: trio.SocketStream, link: Link) -> None:
    while True:
        data = await src.receive_some(65536)
        if not data:
            return
        while (wait := link.stalled_until - trio.current_time()) > 0:
            await trio.sleep(wait)
        await dst.send_all(data)


async def proxy(link: Link, target: int, task_status: trio.TaskStatus[int]) -> None:
    """Forward connections on a free loopback port to ``target`` (reported by ``start``)."""

    async def handler(client: trio.SocketStream) -> None:
        try:
            server = await trio.open_tcp_stream("127.0.0.1", target)
        except OSError:
            await trio.aclose_forcefully(client)
            return
        with trio.CancelScope() as scope:
            link.scopes.add(scope)
            try:
                async with trio.open_nursery() as nursery:

                    async def both(a: trio.SocketStream, b: trio.SocketStream) -> None:
                        try:
                            await _pump(a, b, link)
                        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                            pass
                        nursery.cancel_scope.cancel()  # one side ended: close both

                    nursery.start_soon(both, client, server)
                    nursery.start_soon(both, server, client)
            finally:
                link.scopes.discard(scope)
        await trio.aclose_forcefully(client)
        await trio.aclose_forcefully(server)

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    await trio.serve_listeners(handler, listeners)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Match:
    """The four processes of one match in folder ``home``."""

    def __init__(self, home: Path, rng: random.Random, hands: int) -> None:
        self.home = home
        self.hands = hands
        self.rng = rng
        self.host_port = _free_port()
        self.listen = [_free_port() for _ in range(3)]
        self.procs: dict[int, trio.Process] = {}
        self.outs: dict[int, int] = {}  # restarts per seat (for the output file names)
        self.faults: list[str] = []
        self.env = dict(os.environ, HOME=str(home), XDG_DATA_HOME=str(home / "data"),
                        PYTHONUNBUFFERED="1")

    def args(self, seat: int, proxies: list[int]) -> list[str]:
        common = ["--bot", "--no-colour", "--key", str(self.home / f"k{seat}.pem"),
                  "--transcript", str(self.home / f"t{seat}")]
        if seat == 0:
            return ["host", "--players", "4", "--hands", str(self.hands), "--bind", "127.0.0.1",
                    "--port", str(self.host_port), "--no-announce", "--no-map",
                    "--grace-seconds", str(GRACE_S), "--name", "Host", *common]
        return ["join", f"127.0.0.1:{proxies[seat - 1]}", "--name", f"P{seat}",
                "--listen", f"127.0.0.1:{self.listen[seat - 1]}", *common]

    async def start(self, seat: int, proxies: list[int]) -> None:
        n = self.outs.get(seat, 0)
        self.outs[seat] = n + 1
        out = open(self.home / f"out{seat}.{n}", "wb")  # noqa: SIM115 - the process owns it
        self.procs[seat] = await trio.lowlevel.open_process(
            [sys.executable, "-m", "dernier_p2p", *self.args(seat, proxies)],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=self.env,
        )
        out.close()

    def text(self, seat: int) -> str:
        n = self.outs.get(seat, 1) - 1
        return (self.home / f"out{seat}.{n}").read_text(errors="replace")


async def run_match(home: Path, rng: random.Random, hands: int) -> tuple[bool, str, list[str]]:
    """One match under chaos: (passed, why, faults)."""
    m = Match(home, rng, hands)
    links = [Link() for _ in range(3)]
    host_killed = False
    with trio.move_on_after(MATCH_LIMIT_S) as limit:
        async with trio.open_nursery() as nursery:
            proxies = [await nursery.start(proxy, links[k], m.host_port) for k in range(3)]
            await m.start(0, proxies)
            while "on port" not in m.text(0):
                await trio.sleep(0.05)
            for seat in (1, 2, 3):
                await m.start(seat, proxies)
                while "Seated at seat" not in m.text(seat):
                    await trio.sleep(0.05)
                    if m.procs[seat].returncode is not None:
                        break

            def running() -> bool:
                return any(p.returncode is None for p in m.procs.values())

            await trio.sleep(rng.uniform(0.5, 2))  # into the first hand
            calm_until = 0.0  # no kill before a killed seat is back (or the failover done)
            while running():
                kind = rng.choice(["stall", "stall", "cut", "kill", "host"])
                if kind == "host" and host_killed:
                    kind = "kill"
                if kind in ("kill", "host") and trio.current_time() < calm_until:
                    kind = "cut"
                seat = rng.randint(1, 3)
                if kind == "stall":
                    secs = rng.uniform(1, 5)
                    links[seat - 1].stalled_until = trio.current_time() + secs
                    m.faults.append(f"stall P{seat} {secs:.1f}s")
                elif kind == "cut":
                    links[seat - 1].cut()
                    m.faults.append(f"cut P{seat}")
                else:
                    whom = [seat]
                    if kind == "host":
                        whom = [0, 1] if rng.random() < 0.5 else [0]
                    if any(m.procs[w].returncode is not None for w in whom):
                        await trio.sleep(1)
                        continue
                    for w in whom:
                        m.procs[w].send_signal(signal.SIGKILL)
                    for w in whom:
                        await m.procs[w].wait()
                    pause = rng.uniform(0.5, 3)
                    await trio.sleep(pause)
                    for w in whom:
                        await m.start(w, proxies)
                    host_killed |= 0 in whom
                    calm_until = trio.current_time() + KILL_CALM_S
                    names = "+".join("Host" if w == 0 else f"P{w}" for w in whom)
                    m.faults.append(f"kill {names} {pause:.1f}s")
                with trio.move_on_after(rng.uniform(1.5, 4)):
                    while running():
                        await trio.sleep(0.2)
            nursery.cancel_scope.cancel()
    if limit.cancelled_caught:
        for p in m.procs.values():
            if p.returncode is None:
                p.kill()
        return False, f"not over within {MATCH_LIMIT_S:.0f} s", m.faults
    codes = {s: p.returncode for s, p in m.procs.items()}
    good = [s for s, c in codes.items() if c == 0]
    if not good:
        return False, "no seat finished", m.faults
    data = {s: (home / f"t{s}").read_bytes() for s in good}
    if len(set(data.values())) != 1:
        return False, "the surviving seats' transcripts differ", m.faults
    agreed = read_transcript(home / f"t{good[0]}")
    out = {r["env"]["body"]["seat"] for r in agreed if r["env"]["body"]["type"] == "left"}
    bad = {s: c for s, c in codes.items() if c != 0 and s not in out}
    if bad:
        seat = min(bad)
        tail = m.text(seat).strip().splitlines()[-3:]
        return False, f"seat {seat} exit {bad[seat]}: {' | '.join(tail)}", m.faults
    check = subprocess.run(
        [sys.executable, "-m", "dernier_p2p", "verify", str(home / f"t{good[0]}")],
        capture_output=True, text=True, env=m.env,
    )
    if check.returncode != 0:
        return False, f"verify: {check.stdout.strip()}", m.faults
    why = "ok" if not out else "ok; out of the match: " + ", ".join(f"seat {s}" for s in out)
    return True, why, m.faults


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hands", type=int, default=2, help="hands per match")
    ap.add_argument("--budget", type=float, default=None, help="seconds; no new match after")
    ap.add_argument("--keep", type=Path, default=None, help="keep every match's files here")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    started = time.monotonic()
    passed = 0
    counts: dict[str, int] = {}
    durations: list[float] = []
    runs = 0
    for k in range(args.matches):
        if args.budget is not None and time.monotonic() - started > args.budget:
            break
        root = args.keep or Path(tempfile.mkdtemp(prefix="dernier-chaos-"))
        home = root / f"match{k}"
        home.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        ok, why, faults = trio.run(run_match, home, rng, args.hands)
        took = time.monotonic() - t0
        durations.append(took)
        runs += 1
        passed += ok
        for f in faults:
            kinds = [f.split()[0]]
            if f.startswith("kill Host"):  # of which the host's, alone or with the next host
                kinds.append("of them host+next" if f.startswith("kill Host+") else
                             "of them host")
            for kind in kinds:
                counts[kind] = counts.get(kind, 0) + 1
        print(f"match {k}: {'PASS' if ok else 'FAIL'} in {took:.0f} s; faults: "
              f"{', '.join(faults) or 'none'}; {why}", flush=True)
    print(f"{passed} of {runs} matches passed; faults injected: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
          + (f"; match time {min(durations):.0f}-{max(durations):.0f} s" if durations else "")
          + f"; wall time {time.monotonic() - started:.0f} s")
    sys.exit(0 if passed == runs and runs > 0 else 1)


if __name__ == "__main__":
    main()
