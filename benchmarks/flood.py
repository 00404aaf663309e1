"""What a flooding seat costs the host and the honest seats: a table of three bots over loopback
TCP (the real :class:`Host` with its bot as seat 0, in a process of its own; the honest seat 1 a
real :class:`Peer` in this process; the flooding seat 2 a real :class:`Peer` in a third process,
so that its flood does not take the honest seat's interpreter), a fixed match (``dernier``,
``--hands`` hands, fixed keys and seeds, bots thinking ``--think`` s a move). Once seat 2 holds
a few records it floods ONE frame kind through its real connection to the host, past its node,
as fast as the host reads it (backpressure: a frame goes while less than 64 KiB wait unsent),
for ``--seconds``; seat 1 is honest. The host closes a connection after ``max_errors`` refusals;
seat 2's node resumes and the flood goes on on the new connection, as an attacker's would. Each
kind is a run of its own, next to a control run with no flood (``none``).

Kinds: ``chat`` (valid chat lines, each a different text, at the seat's next counters), ``ack``
(valid acks echoing the head at the next counters), ``refused`` (the same illegal move again and
again at its counter), ``junk`` (that envelope with its signature zeroed), ``pass`` (another
seat's envelope, sequenced already), ``vote`` (its own signed timeout/left/abandon votes about
the other seats), ``ready``, ``done``, ``beat``, ``error``, ``unknown`` (a frame kind no seat
sends).

Printed for each kind: frames sent (and the connections the flood went through), the host's
peak RSS during the flood minus its RSS in the control run at the same time since the flood
began (MB), the honest seat 1's transcript size and its ratio to the control run's, records of
the flooder sequenced (flood run / control run), whether the match finished and seat 1's
transcript verified (chain, signatures, offline audit), and PASS/FAIL against the requirement:
a flood raises no honest seat's transcript by more than 10 % and the host's memory by no more
than 50 MB. Exit status 1 if any kind fails.

Run: ``python benchmarks/flood.py [--seconds 30] [--kinds chat,ack,...]`` (a smoke check:
``--seconds 5``). Linux only (/proc). The match should outlast the flood: raise ``--hands`` if
the output says the flood was cut short by the end of the match.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net import handshake as hs
from dernier_p2p.net.agent import bot_agent
from dernier_p2p.net.peer import Peer, PeerConfig
from dernier_p2p.protocol.chain import ChainChecker
from dernier_p2p.protocol.envelope import Author
from dernier_p2p.protocol.ready import ready_frame
from dernier_p2p.protocol.verify import check_records
from dernier_p2p.protocol.votes import vote_frame
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.transcript import read_transcript

KINDS = ["none", "chat", "ack", "refused", "junk", "pass", "vote", "ready", "done", "beat",
         "error", "unknown"]
GAME = b"F" * 16
PLAYERS = 3
FLOODER = 2
HONEST = 1
START_AT = 10  # the flood begins once the flooder holds this many records
QUEUED_MAX = 64 * 1024  # unsent bytes on the flooder's connection before it waits
TRANSCRIPT_BOUND = 0.10
MEMORY_BOUND_MB = 50.0


def key(seat: int) -> IdentityKey:
    return IdentityKey.generate(bytes([60 + seat]) * 32)


def seed(seat: int) -> bytes:
    return bytes([seat + 1]) * 32


HOST_SCRIPT = """
import logging, sys, trio
from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net.agent import bot_agent
from dernier_p2p.net.host import Host, HostConfig
from dernier_p2p.net.timers import Timers
from dernier_p2p.wire.identity import IdentityKey
logging.disable(logging.WARNING)
config = HostConfig(players={players}, port={port}, options={{"match": ["hands", {hands}]}},
                    timers=Timers(turn_ms=10_000, declare_ms=200, grace_ms=5_000),
                    game={game!r}, seed={seed!r}, transcript={transcript!r}, linger_s=0.5)
host = Host(IdentityKey.generate({key!r}), config, bot_agent(HeuristicBot(0), {think}))
trio.run(host.run)
"""


def _rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{model}; {os.cpu_count()} cores (affinity {len(os.sched_getaffinity(0))}); "
            f"Python {platform.python_version()}; {platform.platform()}")


class Flooder:
    """Frames of one kind for seat ``peer`` to write past its node."""

    def __init__(self, kind: str, peer: Peer) -> None:
        self.kind, self.peer, self.i = kind, peer, 0
        self._refused: tuple[int, bytes, dict[str, Any]] | None = None
        self.resumes = -1

    def frame(self) -> dict[str, Any] | None:
        peer = self.peer
        me = peer.me
        assert me is not None and peer.seat is not None
        session = me.session
        seat, ident = peer.seat, peer.identity
        self.i += 1
        if peer.driver.resumes != self.resumes:  # a new connection: the host's next counter
            self.resumes = peer.driver.resumes
            session._author.next_n = session.chain.next_counter(seat)
        if self.kind == "chat":  # through the node's own author: its later envelopes follow
            return {"k": "env", "env": session._author.envelope(
                {"type": "chat", "text": f"flood line {self.i}"}, session.head)}
        if self.kind == "ack":
            return {"k": "env", "env": session._author.envelope({"type": "ack"}, session.head)}
        if self.kind in ("refused", "junk"):
            n = session.chain.next_counter(seat)
            if self._refused is None or self._refused[:2] != (n, session.head):
                env = Author(ident, session.game, seat, n).envelope(
                    {"type": "move", "hand": session.state.hand_number, "move": "pass"},
                    session.head)
                self._refused = (n, session.head, env)
            env = self._refused[2]
            if self.kind == "junk":
                env = dict(env, sig=bytes(64))
            return {"k": "env", "env": env}
        if self.kind == "pass":
            others = [r for r in me.records[1:] if r["env"]["seat"] not in (seat, None)]
            if not others:
                return None
            return {"k": "pass", "env": others[self.i % len(others)]["env"]}
        if self.kind == "vote":
            targets = [s for s in range(session.n) if s != seat]
            kinds = ("timeout", "left", "abandon")
            vk = kinds[self.i % len(kinds)]
            target = None if vk == "abandon" else targets[(self.i // 3) % len(targets)]
            return vote_frame(vk, target, session.vote(vk, target))
        if self.kind == "ready":
            return ready_frame(ident, session.game, seat, len(me.records) - 1)
        if self.kind == "done":
            return {"k": "done", "last": len(me.records) - 1}
        if self.kind == "beat":
            return {"k": "beat"}
        if self.kind == "error":
            return {"k": "error", "code": "FLOOD", "detail": f"flood {self.i} " + "x" * 150}
        if self.kind == "unknown":
            return {"k": "bogus", "n": self.i}
        raise ValueError(self.kind)


def _peer(seat: int, port: int, think: float, home: Path) -> Peer:
    return Peer(key(seat), ("127.0.0.1", port), bot_agent(HeuristicBot(seat), think),
                PeerConfig(name=f"p{seat}", seed=seed(seat), transcript=home / f"t{seat}.bin",
                           linger_s=0.5))


async def _flooder(kind: str, port: int, args: argparse.Namespace, home: Path) -> None:
    """Seat 2 in a process of its own: play, and flood ``kind`` for ``args.seconds`` once it
    holds START_AT records; its figures go to ``home/flooder.json``."""
    out: dict[str, Any] = {"sent": 0, "conns": 0, "cut_short": False, "error": None}
    peer = _peer(FLOODER, port, args.think, home)

    async def flood() -> None:
        while peer.me is None or len(peer.me.records) < START_AT:
            await trio.sleep(0.01)
        if kind == "none":
            return
        frames = Flooder(kind, peer)
        start = time.perf_counter()
        end = start + args.seconds
        seen_up = None
        while time.perf_counter() < end:
            me = peer.me
            if me is not None and me.session.finished:
                out["cut_short"] = True
                break
            up = peer.driver.up
            if up is None or up.closing or me is None:
                await trio.sleep(0.005)
                continue
            if up is not seen_up:
                seen_up = up
                out["conns"] += 1
            if up.queued > QUEUED_MAX:
                await trio.sleep(0.001)
                continue
            frame = frames.frame()
            if frame is None:
                await trio.sleep(0.01)
                continue
            up.push(hs.pack(frame))
            out["sent"] += 1
            await trio.sleep(0)
        out["flood_s"] = time.perf_counter() - start

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(flood)
            try:
                await peer.run()
            except Exception as exc:
                out["error"] = repr(exc)
            nursery.cancel_scope.cancel()
    finally:
        out["resumes"] = peer.driver.resumes if peer.driver is not None else 0
        (home / "flooder.json").write_text(json.dumps(out))


async def _table(kind: str, args: argparse.Namespace, home: Path) -> dict[str, Any]:
    port = _free_port()
    script = HOST_SCRIPT.format(players=PLAYERS, port=port, hands=args.hands, game=GAME,
                                seed=seed(0), transcript=str(home / "t0.bin"),
                                key=bytes([60]) * 32, think=args.think)
    host = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=str(home))
    flooder: subprocess.Popen | None = None
    out: dict[str, Any] = {"kind": kind, "rss": [], "errors": {}}
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                await trio.sleep(0.1)
        honest = _peer(HONEST, port, args.think, home)
        t0: list[float] = []

        async def run_honest() -> None:
            try:
                out[f"result{HONEST}"] = await honest.run()
            except Exception as exc:  # recorded
                out["errors"][HONEST] = repr(exc)

        async def sample() -> None:
            while honest.me is None or len(honest.me.records) < START_AT:
                await trio.sleep(0.01)
            t0.append(time.perf_counter())
            while host.poll() is None:
                rss = _rss_kib(host.pid)
                if rss is not None:
                    out["rss"].append((time.perf_counter() - t0[0], rss))
                await trio.sleep(0.1)

        with trio.fail_after(args.seconds + args.limit):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(sample)
                nursery.start_soon(run_honest)
                with trio.fail_after(10):
                    while honest.seat is None:
                        await trio.sleep(0.005)
                flooder = subprocess.Popen(
                    [sys.executable, __file__, "--flooder", kind, "--port", str(port),
                     "--home", str(home), "--seconds", str(args.seconds),
                     "--think", str(args.think)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            while host.poll() is None or flooder.poll() is None:
                await trio.sleep(0.05)
    except trio.TooSlowError:
        out["errors"]["timeout"] = "the match did not end in time"
    finally:
        for proc in (host, flooder):
            if proc is not None:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
    out["host_rc"] = host.returncode
    try:
        out.update(json.loads((home / "flooder.json").read_text()))
    except (OSError, ValueError) as exc:
        out.update(sent=0, conns=0, cut_short=False)
        out["errors"]["flooder"] = f"no figures: {exc}"
    if out.get("error"):
        out["errors"][FLOODER] = out["error"]
    return out


def _judge(home: Path, out: dict[str, Any]) -> None:
    path = home / f"t{HONEST}.bin"
    out["bytes"] = path.stat().st_size if path.exists() else 0
    try:
        records = list(read_transcript(path))
    except Exception as exc:
        out["verified"], out["why"] = False, f"unreadable: {exc}"
        return
    out["records"] = len(records)
    out["flooder_recs"] = sum(r["env"]["seat"] == FLOODER for r in records)
    try:
        first = records[0]
        keys = [p["key"] for p in first["env"]["body"]["players"]]
        chain = ChainChecker(first["env"]["game"], keys, keys)
        for rec in records:
            chain.feed(rec)
        verdict = check_records(records)
        out["verified"], out["why"] = bool(verdict.ok), "" if verdict.ok else str(verdict)
    except Exception as exc:
        out["verified"], out["why"] = False, repr(exc)
    out["finished"] = out.get(f"result{HONEST}") is not None


def run_kind(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix=f"dernier-flood-{kind}-"))
    out = trio.run(_table, kind, args, home)
    _judge(home, out)
    for seat in (1, 2):
        out.pop(f"result{seat}", None)
    return out


def _rss_at(samples: list[tuple[float, int]], t: float) -> int | None:
    if not samples:
        return None
    return min(samples, key=lambda s: abs(s[0] - t))[1]


def report(out: dict[str, Any], control: dict[str, Any], seconds: float) -> bool:
    window = [s for s in out["rss"] if s[0] <= seconds + 1.0] or out["rss"]
    if window and control["rss"]:
        t, peak = max(window, key=lambda s: s[1])
        ctrl = _rss_at(control["rss"], t)
        mem_mb = (peak - (ctrl or peak)) / 1024
    else:
        peak, mem_mb = 0, float("nan")
    ratio = out["bytes"] / control["bytes"] if control.get("bytes") else float("nan")
    ok_mem = mem_mb <= MEMORY_BOUND_MB
    ok_tr = ratio <= 1 + TRANSCRIPT_BOUND
    ok = ok_mem and ok_tr and out.get("verified", False) and out.get("finished", False)
    cut = " (flood cut short: match over)" if out["cut_short"] else ""
    match_s = out["rss"][-1][0] if out["rss"] else float("nan")
    print(f"{out['kind']:>8}: sent {out['sent']:>8} frames over {out['conns']} conn(s), "
          f"{out['sent'] / max(out.get('flood_s', 1e-9), 1e-9):>8.0f}/s{cut}; "
          f"host peak RSS {peak / 1024:6.1f} MB, {mem_mb:+6.1f} MB vs control; "
          f"seat {HONEST} transcript {out['bytes']} B = {ratio * 100:6.1f} % of control; "
          f"flooder records {out.get('flooder_recs')}/{control.get('flooder_recs')}; "
          f"match {match_s:.0f} s after the flood began; "
          f"finished {out.get('finished')}, verified {out.get('verified')}; "
          f"{'PASS' if ok else 'FAIL'}"
          + (f" [{'; '.join(f'{k}: {v}' for k, v in out['errors'].items())}]"
             if out["errors"] else "")
          + (f" [{out['why']}]" if out.get("why") else ""), flush=True)
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=30.0, help="flood length (s)")
    parser.add_argument("--kinds", default=",".join(KINDS[1:]),
                        help=f"comma-separated, of {','.join(KINDS[1:])} (the control run "
                             "'none' always runs)")
    parser.add_argument("--hands", type=int, default=0,
                        help="hands of the match (default: enough to outlast the flood)")
    parser.add_argument("--think", type=float, default=0.2, help="a bot's think time (s)")
    parser.add_argument("--limit", type=float, default=240.0,
                        help="seconds a run may take beyond the flood")
    parser.add_argument("--json", help="also write the raw figures to this file")
    parser.add_argument("--flooder", help=argparse.SUPPRESS)  # (the flooding seat's process)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--home", help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the flooder's seat logs every refusal
    if args.flooder:
        trio.run(_flooder, args.flooder, args.port, args, Path(args.home))
        return
    if not args.hands:
        args.hands = max(2, int(args.seconds // 3) + 2)
    kinds = [k for k in args.kinds.split(",") if k and k != "none"]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown kinds: {', '.join(sorted(unknown))}")
    print(f"machine: {machine()}")
    print(f"flood: {args.seconds:g} s per kind by seat {FLOODER} of {PLAYERS}; dernier, "
          f"{args.hands} hands, bots think {args.think:g} s; bounds: transcript +"
          f"{TRANSCRIPT_BOUND * 100:.0f} %, host memory +{MEMORY_BOUND_MB:.0f} MB", flush=True)
    control = run_kind("none", args)
    report(control, control, args.seconds)
    results = {"none": control}
    failed = []
    for kind in kinds:
        results[kind] = run_kind(kind, args)
        if not report(results[kind], control, args.seconds):
            failed.append(kind)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    print(f"failed: {', '.join(failed)}" if failed else "all kinds within the bounds")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
