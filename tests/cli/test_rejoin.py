"""Real processes on 127.0.0.1 surviving what networks and laptops do: a joiner killed mid-hand
and started again with the same command; the host killed mid-hand, the match finishing under
the next host and the old host coming back as a seat with the same `dernier host` command."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dernier_p2p.cli.rejoin import latest_open_match, listed_address, parse_listen, seat_seed
from dernier_p2p.wire.identity import IdentityKey
from tests.cli.helpers import dernier, spawn

BOT = ["--bot", "--no-colour"]


class Table:
    """The ``dernier`` processes of one table on 127.0.0.1, each writing to ``out-NAME`` in the
    test's folder: started, watched, killed and started again; :meth:`reap` kills what is left
    (the fixture does, whatever the test's end)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.port = _free_ports(1)[0]

    def out(self, name: str) -> Path:
        return self.tmp / f"out-{name}"

    def text(self, name: str) -> str:
        return self.out(name).read_text(errors="replace")

    def start(self, name: str, *args: str) -> None:
        self.procs[name] = spawn(self.tmp, self.out(name), *args)

    def host(self, name: str = "host", players: int = 4, *extra: str) -> None:
        """``dernier host`` (Ann, seat 0) on the table's port; waits until it listens (or, run
        again after a crash, until it restarts as a seat)."""
        self.start(name, *_host_args(self.tmp, players, "--port", str(self.port), *extra))
        self.wait(name, r"on port \d+|Restarting from")

    def join(self, k: int, *extra: str, name: str | None = None, seated: bool = True) -> None:
        """``dernier join`` as P``k``; waits until it is seated (``seated``)."""
        self.start(name or f"p{k}", *_join_args(self.tmp, k, self.port, *extra))
        if seated:
            self.wait(name or f"p{k}", r"Seated at seat (\d)")

    def wait(self, name: str, pattern: str, limit: float = 120) -> str:
        """Wait until ``name``'s output matches ``pattern``; the first group (or the match)."""
        proc = self.procs[name]
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            found = re.search(pattern, self.text(name))
            if found:
                return found.group(1) if found.groups() else found.group(0)
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"{name} never showed {pattern!r}: {self.text(name)}")

    def kill(self, name: str) -> None:
        """The process dies (SIGKILL): only its key and transcript survive."""
        self.procs[name].kill()
        self.procs[name].wait()

    def finish(self, *names: str) -> dict[str, str]:
        """Wait for ``names`` to end; their outputs. Each must exit 0, show the final scores
        and no traceback."""
        codes = {n: self.procs[n].wait(timeout=300) for n in names}
        texts = {n: self.text(n) for n in names}
        assert set(codes.values()) == {0}, (codes, texts)
        for text in texts.values():
            assert "Final scores:" in text and "Traceback" not in text
        return texts

    def verified(self, seats: list[int]) -> None:
        """The seats' transcripts are the same bytes and ``dernier verify`` accepts each."""
        data = [(self.tmp / f"t{k}").read_bytes() for k in seats]
        assert all(d == data[0] for d in data)
        for k in seats:
            check = dernier(self.tmp, "verify", str(self.tmp / f"t{k}"))
            assert check.returncode == 0, check.stdout

    def reap(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = Table(tmp_path)
    try:
        yield t
    finally:
        t.reap()


def _free_ports(count: int) -> list[int]:
    socks = [socket.socket() for _ in range(count)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _host_args(tmp: Path, players: int, *extra: str) -> list[str]:
    return ["host", "--players", str(players), "--hands", "1", "--bind", "127.0.0.1",
            "--no-announce", "--no-map", "--key", str(tmp / "k0.pem"),
            "--transcript", str(tmp / "t0"), "--name", "Ann", *extra, *BOT]


def _join_args(tmp: Path, k: int, port: int, *extra: str) -> list[str]:
    return ["join", f"127.0.0.1:{port}", "--name", f"P{k}", "--key", str(tmp / f"k{k}.pem"),
            "--transcript", str(tmp / f"t{k}"), *extra, *BOT]


@pytest.mark.slow
def test_a_joiner_killed_mid_hand_comes_back_with_the_same_command(table: Table) -> None:
    table.host()
    for k in (1, 2, 3):
        table.join(k)
    table.wait("p2", r"First card turned up")
    table.wait("p2", r"\b(Ann|P\d) plays ")  # a card played (not "The bot plays your seat")
    table.kill("p2")  # the process dies mid-hand: only its transcript and key survive
    table.join(2, name="p2b", seated=False)
    texts = table.finish("host", "p1", "p3", "p2b")
    assert "Resuming your seat from" in texts["p2b"] and "Back at seat" in texts["p2b"]
    assert "forfeits" not in texts["host"]
    table.verified([0, 1, 2, 3])


@pytest.mark.slow
def test_a_restarted_host_is_a_candidate_again_and_hosts_after_the_next(table: Table) -> None:
    """Three seats; P2 gives no listen address (never a candidate, PROTOCOL.md 7.6). The host
    is killed mid-hand: P1 hosts, and the host, started again with the same command, comes back
    as a seat of P1 (listening at its old address). Then P1 is killed: the old host, the only
    candidate left, hosts again, and P1, started again, comes back as its seat."""
    grace = ["--grace-seconds", "3"]
    listen = _free_ports(1)[0]
    table.host("host", 3, *grace)
    table.join(1, "--listen", f"127.0.0.1:{listen}")
    table.join(2, "--no-listen")
    table.wait("p1", r"this seat can take over as host")
    table.wait("p1", r"\b(Ann|P\d) plays ")  # a card played (not "The bot plays your seat")
    table.kill("host")
    table.host("host2", 3, *grace)
    table.wait("p1", r"You host the table from now on\.")
    table.wait("host2", r"Back at seat 0")
    table.kill("p1")
    table.join(1, "--listen", f"127.0.0.1:{listen}", name="p1b", seated=False)
    texts = table.finish("host2", "p2", "p1b")
    assert "Restarting from" in texts["host2"]
    assert "P1 hosts the table from now on." in texts["host2"]
    assert "You host the table from now on." in texts["host2"]
    assert "P1 hosts the table from now on." in texts["p2"]
    assert "Ann hosts the table from now on." in texts["p2"]
    assert "Resuming your seat from" in texts["p1b"]
    assert "Ann hosts the table from now on." in texts["p1b"]
    for text in texts.values():
        assert "forfeits" not in text
    assert (table.tmp / "t0.crashed").exists() and (table.tmp / "t1.crashed").exists()
    table.verified([0, 1, 2])
    changes = [(b["old"], b["new"]) for b in _bodies(table.tmp / "t0")
               if b["type"] == "host_change"]
    assert changes == [(0, 1), (1, 0)]


def _bodies(path: Path) -> list[dict]:
    from dernier_p2p.wire.transcript import read_transcript

    return [r["env"]["body"] for r in read_transcript(path)]


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


def test_the_address_a_match_lists_for_a_key_is_read_from_its_first_record(
        tmp_path: Path) -> None:
    import trio

    from dernier_p2p.wire.transcript import read_transcript
    from tests.net.helpers import KEYS, play

    trio.run(lambda: play(tmp_path, 3))
    path = tmp_path / "t1.bin"
    players = read_transcript(path)[0]["env"]["body"]["players"]
    assert players[0]["listen"] is not None and players[1]["listen"] is None
    assert listed_address(path, KEYS[0]) == tuple(players[0]["listen"])  # the host's
    assert listed_address(path, KEYS[1]) is None  # a seat that gave no address
    assert listed_address(path, KEYS[5]) is None  # a key the match does not seat
    (tmp_path / "junk").write_bytes(b"not a transcript")
    assert listed_address(tmp_path / "junk", KEYS[0]) is None
    assert listed_address(tmp_path / "missing", KEYS[0]) is None


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
def test_a_joiner_gone_for_good_at_four_seats_leaves_and_three_finish(table: Table) -> None:
    table.host("host", 4, "--grace-seconds", "3", "--leave", "play_on")
    for k in (1, 2, 3):
        table.join(k)
    table.wait("p2", r"\b(Ann|P\d) plays ")  # a card played (not "The bot plays your seat")
    table.kill("p2")  # gone for good: never started again
    texts = table.finish("host", "p1", "p3")
    for text in texts.values():
        assert "P2 lost connection — waiting 3 s (reconnecting…)" in text
    table.verified([0, 1, 3])
    bodies = _bodies(table.tmp / "t0")
    gone = next(i for i, b in enumerate(bodies) if b["type"] == "left" and b["seat"] == 2)
    from dernier_p2p.wire.transcript import read_transcript

    records = read_transcript(table.tmp / "t0")
    assert {r["env"]["seat"] for r in records[gone + 1 :]} >= {0, 1, 3}  # the three play on
