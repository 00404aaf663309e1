"""Live mode: fuzz a real ``dernier host`` process on loopback while it hosts a match.

Two real processes are started, ``dernier host --bot`` and ``dernier join --bot``, on a long
match. Once the match runs, connections from outside the table each send one fuzzed thing
after the challenge: a mutated frame of any kind, a mutated or re-signed handshake opening, a
frame announcing a huge length, a truncated frame, or raw bytes. Each connection must be
answered (an ``error`` frame or a close) within the handshake deadline plus a margin, or it is
a *hang*; the host ending, or logging an internal fault or a traceback, is a *crash*. The
host's transcript must keep growing while it is fuzzed (it keeps playing), and the transcript
it wrote must verify (complete, or incomplete without a fault) when it is stopped.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from dernier_p2p.fuzz.mutate import mutate_bytes
from dernier_p2p.fuzz.runner import Report
from dernier_p2p.fuzz.targets import Targets
from dernier_p2p.net import handshake as hs
from dernier_p2p.protocol.verify import INCOMPLETE, verify_file

CONCURRENCY = 16
ANSWER_S = 8.0  # the host's handshake deadline (5 s) and a margin
CRASH_MARKS = ("internal fault", "Traceback")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawn(home: Path, log: Path, *args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, HOME=str(home), XDG_DATA_HOME=str(home / "data"),
               PYTHONUNBUFFERED="1")
    with open(log, "wb") as sink:
        return subprocess.Popen([sys.executable, "-m", "dernier_p2p", *args],
                                stdin=subprocess.DEVNULL, stdout=sink,
                                stderr=subprocess.STDOUT, env=env)


def _records(path: Path) -> int:
    """Records in a transcript, counted by their length prefixes (torn tail ignored)."""
    try:
        data = path.read_bytes()
    except OSError:
        return 0
    at, n = 20, 0
    while at + 4 <= len(data):
        at += 4 + int.from_bytes(data[at:at + 4], "big")
        n += at <= len(data)
    return n


def _case(targets: Targets, rng: random.Random) -> bytes:
    """The bytes a hostile connection sends after the challenge."""
    kind = rng.random()
    if kind < 0.45:
        payload = targets.make_frame(rng)
    elif kind < 0.8:
        payload = targets.make_opening(rng)
    elif kind < 0.88:
        return rng.randbytes(4) + rng.randbytes(rng.randrange(64))  # any length prefix
    elif kind < 0.94:
        payload = targets.make_frame(rng)
        return len(payload).to_bytes(4, "big") + payload[: rng.randrange(len(payload) + 1)]
    else:
        payload = mutate_bytes(b"\x91" * rng.randrange(1, 2000) + b"\xc0", rng)
    return len(payload).to_bytes(4, "big") + payload


async def _one(port: int, data: bytes, eof: bool) -> bool:
    """Send ``data`` on a new connection (then end the sending side if ``eof``, else leave it
    open as a slow peer would); True if the host answered or closed in time."""
    with trio.move_on_after(ANSWER_S) as scope:
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.receive_some(1 << 16)  # the challenge
            try:
                await stream.send_all(data)
                if eof:
                    await stream.send_eof()
                got = b""
                while chunk := await stream.receive_some(1 << 16):
                    got += chunk  # an error frame, then the close; or a watcher served
                    if _watching(got):
                        break
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
    return not scope.cancelled_caught


def _watching(got: bytes) -> bool:
    """Whether ``got`` starts with a ``watching`` frame: a valid ``watch`` opening was accepted
    and the host serves a watcher (it keeps the connection open by design: an answer)."""
    if len(got) < 4 or len(got) < 4 + (size := int.from_bytes(got[:4], "big")):
        return False
    try:
        return hs.unpack(got[4:4 + size])["k"] == "watching"
    except hs.NetError:
        return False


async def _fuzz(port: int, host: subprocess.Popen[bytes], transcript: Path, report: Report,
                cases: int | None, seconds: float | None, seed: int) -> list[int]:
    targets = Targets()
    targets.warm()
    start = time.perf_counter()
    counts = [_records(transcript)]
    next_k = 0

    def more() -> bool:
        if host.poll() is not None:
            return False
        if cases is not None and next_k >= cases:
            return False
        return seconds is None or time.perf_counter() - start < seconds

    async def worker() -> None:
        nonlocal next_k
        while more():
            k = next_k
            next_k += 1
            rng = random.Random(f"live:{seed}:{k}")
            data = _case(targets, rng)
            try:
                ok = await _one(port, data, rng.random() < 0.97)
            except OSError:
                ok = host.poll() is not None  # refused: only fine if the host is gone
            report.cases += 1
            if not ok:
                report.hangs += 1
                report.saved.append(f"case live:{seed}:{k} not answered in {ANSWER_S:g} s "
                                    f"({len(data)} bytes, first {data[:16].hex()})")
            if report.cases % 5000 == 0:
                counts.append(_records(transcript))

    async with trio.open_nursery() as nursery:
        for _ in range(CONCURRENCY):
            nursery.start_soon(worker)
    report.seconds = time.perf_counter() - start
    counts.append(_records(transcript))
    return counts


def run_live(*, cases: int | None, seconds: float | None, seed: int = 0,
             out: Path | None = None) -> Report:
    """Fuzz a live host (see the module docstring); the report's ``kinds`` holds the record
    counts of the host's transcript sampled while it was fuzzed."""
    report = Report("live")
    home = Path(tempfile.mkdtemp(prefix="dernier-live-"))
    port = _free_port()
    transcript = home / "host.transcript"
    host = _spawn(home, home / "host.log", "host", "--players", "2", "--bot", "--hands",
                  "10000", "--bind", "127.0.0.1", "--port", str(port), "--no-announce",
                  "--turn-seconds", "60", "--key", str(home / "host.pem"),
                  "--transcript", str(transcript), "--no-colour")
    joiner = None
    try:
        deadline = time.monotonic() + 60
        while _records(transcript) < 3:  # wait for the table to listen, the join and the start
            if joiner is None:
                try:
                    socket.create_connection(("127.0.0.1", port), 1).close()
                    joiner = _spawn(home, home / "join.log", "join", f"127.0.0.1:{port}",
                                    "--bot", "--key", str(home / "join.pem"), "--transcript",
                                    str(home / "join.transcript"), "--no-colour")
                except OSError:
                    pass
            if time.monotonic() > deadline or host.poll() is not None:
                raise RuntimeError(f"the match did not start; see {home}")
            time.sleep(0.2)
        counts = trio.run(_fuzz, port, host, transcript, report, cases, seconds, seed)
        report.kinds = {f"records@{i}": n for i, n in enumerate(counts)}
        if host.poll() is not None:
            report.crashes += 1
            report.saved.append(f"host exited with {host.returncode}; see {home / 'host.log'}")
    finally:
        report.peak_kib = _peak_kib(host.pid)  # the host's, before it is stopped
        for proc in (joiner, host):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in (joiner, host):
            if proc is not None:
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
    log = (home / "host.log").read_text(errors="replace")
    marks = sum(log.count(m) for m in CRASH_MARKS)
    report.crashes += marks
    if marks:
        report.saved.append(f"{marks} internal faults or tracebacks in {home / 'host.log'}")
    verdict = verify_file(transcript)
    if not verdict.ok and verdict.code != INCOMPLETE:
        report.crashes += 1
        report.saved.append(f"host transcript: {verdict.code}: {verdict.detail}")
    report.kinds["verdict"] = 0 if verdict.ok else 1
    report.refused = report.cases - report.hangs
    return report


def _peak_kib(pid: int) -> int:
    """The peak resident memory (VmHWM) of a running process, in KiB (0 if unknown)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0
