"""Real processes on 127.0.0.1 surviving what networks and laptops do: a joiner killed mid-hand
and started again with the same command; the host killed mid-hand, the match finishing under
the next host and the old host coming back as a seat with the same `dernier host` command."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

from dernier_p2p.cli.rejoin import latest_open_match, parse_listen, seat_seed
from dernier_p2p.wire.identity import IdentityKey
from tests.cli.helpers import dernier, spawn

BOT = ["--bot", "--no-colour"]


def _reap(*procs: subprocess.Popen[bytes]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def _wait_text(proc: subprocess.Popen[bytes], out: Path, pattern: str, limit: float = 120) -> str:
    """Wait until ``out`` matches ``pattern``; the first group (or the match)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = re.search(pattern, out.read_text(errors="replace"))
        if found:
            return found.group(1) if found.groups() else found.group(0)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError(f"never saw {pattern!r}: {out.read_text(errors='replace')}")


def _free_ports(count: int) -> list[int]:
    socks = [socket.socket() for _ in range(count)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _host_args(tmp: Path, *extra: str) -> list[str]:
    return ["host", "--players", "4", "--hands", "1", "--bind", "127.0.0.1", "--no-announce",
            "--no-map", "--key", str(tmp / "k0.pem"), "--transcript", str(tmp / "t0"),
            "--name", "Ann", *extra, *BOT]


def _join_args(tmp: Path, k: int, port: int, *extra: str) -> list[str]:
    return ["join", f"127.0.0.1:{port}", "--name", f"P{k}", "--key", str(tmp / f"k{k}.pem"),
            "--transcript", str(tmp / f"t{k}"), *extra, *BOT]


def _verified(tmp: Path, seats: list[int]) -> None:
    data = [(tmp / f"t{k}").read_bytes() for k in seats]
    assert all(d == data[0] for d in data)
    for k in seats:
        check = dernier(tmp, "verify", str(tmp / f"t{k}"))
        assert check.returncode == 0, check.stdout


@pytest.mark.slow
def test_a_joiner_killed_mid_hand_comes_back_with_the_same_command(tmp_path: Path) -> None:
    outs = [tmp_path / f"out{k}" for k in range(4)]
    host_port = _free_ports(1)[0]
    procs = [spawn(tmp_path, outs[0], *_host_args(tmp_path, "--port", str(host_port)))]
    again = None
    try:
        _wait_text(procs[0], outs[0], r"on port (\d+)")
        for k in (1, 2, 3):
            procs.append(spawn(tmp_path, outs[k], *_join_args(tmp_path, k, host_port)))
            _wait_text(procs[k], outs[k], r"Seated at seat (\d)")
        _wait_text(procs[2], outs[2], r"First card turned up")
        _wait_text(procs[2], outs[2], r" plays ")
        procs[2].kill()  # the process dies mid-hand: only its transcript and key survive
        procs[2].wait()
        again = spawn(tmp_path, tmp_path / "out2b", *_join_args(tmp_path, 2, host_port))
        codes = [p.wait(timeout=300) for p in (procs[0], procs[1], procs[3], again)]
    finally:
        _reap(*procs, *([again] if again else []))
    texts = [o.read_text() for o in (outs[0], outs[1], outs[3], tmp_path / "out2b")]
    assert codes == [0, 0, 0, 0], texts
    assert "Resuming your seat from" in texts[3] and "Back at seat" in texts[3]
    for text in texts:
        assert "Final scores:" in text and "Traceback" not in text
    assert "forfeits" not in texts[0]
    _verified(tmp_path, [0, 1, 2, 3])


@pytest.mark.slow
def test_the_host_killed_mid_hand_comes_back_as_a_seat_of_the_next_host(tmp_path: Path) -> None:
    outs = [tmp_path / f"out{k}" for k in range(4)]
    host_port, *listen = _free_ports(4)
    grace = ["--grace-seconds", "5"]
    procs = [spawn(tmp_path, outs[0], *_host_args(tmp_path, "--port", str(host_port), *grace))]
    again = None
    try:
        _wait_text(procs[0], outs[0], r"on port (\d+)")
        for k in (1, 2, 3):
            where = f"127.0.0.1:{listen[k - 1]}"
            procs.append(spawn(tmp_path, outs[k],
                               *_join_args(tmp_path, k, host_port, "--listen", where)))
            _wait_text(procs[k], outs[k], r"Seated at seat (\d)")
        for k in (1, 2, 3):
            _wait_text(procs[k], outs[k], r"this seat can host the table")
        _wait_text(procs[1], outs[1], r" plays ")
        procs[0].kill()  # the host's process dies mid-hand
        procs[0].wait()
        again = spawn(tmp_path, tmp_path / "out0b", *_host_args(tmp_path, "--port",
                                                                str(host_port), *grace))
        codes = [p.wait(timeout=300) for p in (procs[1], procs[2], procs[3], again)]
    finally:
        _reap(*procs, *([again] if again else []))
    texts = [o.read_text() for o in (outs[1], outs[2], outs[3], tmp_path / "out0b")]
    assert codes == [0, 0, 0, 0], texts
    assert "You host the table from now on." in texts[0]
    assert "P1 hosts the table from now on." in texts[1]
    assert "Restarting from" in texts[3] and "P1 hosts the table from now on." in texts[3]
    for text in texts:
        assert "Final scores:" in text and "Traceback" not in text
        assert "Ann forfeits" not in text
    assert (tmp_path / "t0.crashed").exists()
    _verified(tmp_path, [0, 1, 2, 3])


def test_listen_takes_host_and_an_optional_port() -> None:
    assert parse_listen("192.168.1.7", 47630) == ("192.168.1.7", 47630)
    assert parse_listen("192.168.1.7:47640", 47630) == ("192.168.1.7", 47640)
    assert parse_listen("[::1]:5000", 47630) == ("::1", 5000)
    assert parse_listen("::1", 47630) == ("::1", 47630)
    assert parse_listen("example.org", 9) == ("example.org", 9)
    for bad in ("", ":5000", "host:0", "host:70000", "host:x", "[::1]x", "a b"):
        with pytest.raises(ValueError):
            parse_listen(bad, 47630)


def test_the_seat_seed_is_the_keys_own_and_secret() -> None:
    a, b = IdentityKey.generate(b"a" * 32), IdentityKey.generate(b"b" * 32)
    assert seat_seed(a) == seat_seed(IdentityKey.generate(b"a" * 32))
    assert seat_seed(a) != seat_seed(b) and len(seat_seed(a)) == 32
    assert seat_seed(a) != a.seed() and a.public_bytes() not in seat_seed(a)


def test_the_newest_transcript_seating_the_key_is_found(tmp_path: Path) -> None:
    from tests.net.helpers import KEYS, play

    assert latest_open_match(KEYS[1], tmp_path) is None
    import trio

    trio.run(lambda: play(tmp_path, 2))
    for k in (0, 1):
        (tmp_path / f"t{k}.bin").rename(tmp_path / f"m{k}.transcript")
    (tmp_path / "junk.transcript").write_bytes(b"not a transcript")
    assert latest_open_match(KEYS[1], tmp_path) in {tmp_path / "m0.transcript",
                                                    tmp_path / "m1.transcript"}
    assert latest_open_match(KEYS[5], tmp_path) is None


async def test_a_hello_told_to_resume_comes_back_from_the_transcript(tmp_path: Path) -> None:
    from dernier_p2p.cli.table import Seating, join_table
    from dernier_p2p.net.peer import PeerConfig
    from dernier_p2p.net.timers import Timers
    from dernier_p2p.wire.transcript import read_transcript
    from tests.net.helpers import KEYS, play, seed, transcripts, verify, wait_for
    from tests.net.test_peer import mid_hand

    lines: list[str] = []
    back: dict[str, object] = {}

    async def crash_then_join_again(table: object) -> None:
        await wait_for(lambda: mid_hand(table, 30))
        table.scopes[1].cancel()  # the process dies; the user runs `dernier join` again
        await wait_for(lambda: table.peers[1].me.writer is None, 5)
        config = PeerConfig(name="p1", transcript=tmp_path / "fresh.transcript", seed=seed(1))
        seating = Seating(bot=True, colour=False, echo=lines.append)
        back["seat"] = await join_table(
            KEYS[1], ("127.0.0.1", table.host.port), config, seating,
            lambda: tmp_path / "t1.bin",
        )
        back["config"] = config

    table = await play(tmp_path, 2, watch=crash_then_join_again,
                       timers=Timers(turn_ms=10_000, declare_ms=30, grace_ms=5_000))
    assert not table.errors
    assert f"Your seat is still held: resuming from {tmp_path / 't1.bin'}." in lines
    assert "Back at seat 1; catching up with the table." in lines
    assert back["config"].transcript == tmp_path / "t1.bin" and back["config"].restore
    assert not (tmp_path / "fresh.transcript").exists()
    got = transcripts(tmp_path, [0, 1])
    assert got[0] == got[1] == list(read_transcript(tmp_path / "t1.bin"))
    assert "left" not in [r["env"]["body"]["type"] for r in got[0]]
    assert verify(got[0]).ok


@pytest.mark.slow
def test_a_joiner_gone_for_good_at_four_seats_leaves_and_three_finish(tmp_path: Path) -> None:
    outs = [tmp_path / f"out{k}" for k in range(4)]
    host_port = _free_ports(1)[0]
    procs = [spawn(tmp_path, outs[0], *_host_args(tmp_path, "--port", str(host_port),
                                                  "--grace-seconds", "3"))]
    try:
        _wait_text(procs[0], outs[0], r"on port (\d+)")
        for k in (1, 2, 3):
            procs.append(spawn(tmp_path, outs[k], *_join_args(tmp_path, k, host_port)))
            _wait_text(procs[k], outs[k], r"Seated at seat (\d)")
        _wait_text(procs[2], outs[2], r" plays ")
        procs[2].kill()  # gone for good: never started again
        procs[2].wait()
        codes = [p.wait(timeout=300) for p in (procs[0], procs[1], procs[3])]
    finally:
        _reap(*procs)
    texts = [o.read_text() for o in (outs[0], outs[1], outs[3])]
    assert codes == [0, 0, 0], texts
    for text in texts:
        assert "P2 lost connection — waiting 3 s (reconnecting…)" in text
        assert "Final scores:" in text and "Traceback" not in text
    _verified(tmp_path, [0, 1, 3])
    from dernier_p2p.wire.transcript import read_transcript

    records = read_transcript(tmp_path / "t0")
    bodies = [r["env"]["body"] for r in records]
    gone = next(i for i, b in enumerate(bodies) if b["type"] == "left" and b["seat"] == 2)
    assert {r["env"]["seat"] for r in records[gone + 1 :]} >= {0, 1, 3}  # the three play on
