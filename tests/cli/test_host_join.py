"""`dernier host` and two `dernier join` as separate processes on 127.0.0.1, bots in every seat
and a `dernier watch` beside them: the match runs to the end and the four transcripts are
identical and verified."""

from __future__ import annotations

import os
import re
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.helpers import dernier, env_for, spawn


def _reap(*procs: subprocess.Popen[bytes]) -> None:
    """Kill whichever of ``procs`` still runs (a test failed before they ended)."""
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def _told(proc: subprocess.Popen[bytes], out: Path, pattern: str, limit: float = 30) -> re.Match:
    """Wait until the process ``proc`` writes a line matching ``pattern`` to ``out``."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        found = re.search(pattern, out.read_text())
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"never told {pattern!r}: {out.read_text()}")


def _port(proc: subprocess.Popen[bytes], out: Path, limit: float = 30) -> int:
    """Wait until the host tells its port."""
    return int(_told(proc, out, r"on port (\d+)", limit).group(1))


def test_host_and_two_joins_play_and_agree(tmp_path: Path) -> None:
    """Three bot seats in three processes, and a watcher process (plain, since its output is a
    file) that follows the table from the lobby to the end: it sees every public card and the
    revealed hands, and writes the same transcript as the seats."""
    common = ["--bot", "--no-colour"]
    outs = [tmp_path / f"out{k}" for k in range(4)]
    procs = [
        spawn(
            tmp_path, outs[0], "host", "--players", "3", "--hands", "1", "--port", "0",
            "--bind", "127.0.0.1", "--no-announce", "--key", str(tmp_path / "k0.pem"),
            "--transcript", str(tmp_path / "t0"), *common,
        )
    ]
    try:
        port = _port(procs[0], outs[0])
        procs.append(spawn(tmp_path, outs[3], "watch", f"127.0.0.1:{port}", "--no-colour",
                           "--transcript", str(tmp_path / "t3")))
        for k in (1, 2):
            procs.append(
                spawn(
                    tmp_path, outs[k], "join", f"127.0.0.1:{port}", "--name", f"J{k}",
                    "--key", str(tmp_path / f"k{k}.pem"), "--transcript", str(tmp_path / f"t{k}"),
                    *common,
                )
            )
        codes = [p.wait(timeout=120) for p in procs]
    finally:
        _reap(*procs)
    texts = [o.read_text() for o in outs]
    assert codes == [0, 0, 0, 0], texts
    assert "Created your identity key" in texts[0]
    assert "Hosting a dernier table for 3" in texts[0]
    for text in texts:
        assert "wins the match" in text and "Final scores:" in text
        assert "Traceback" not in text
    assert "Watching 127.0.0.1:" in texts[3] and "Every hand, revealed" in texts[3]
    assert re.search(r"(Host|J\d) plays ", texts[3]), texts[3]
    data = [(tmp_path / f"t{k}").read_bytes() for k in range(4)]
    assert data[0] == data[1] == data[2] == data[3]
    for k in range(4):
        if k < 3:
            assert (tmp_path / f"k{k}.pem").stat().st_mode & 0o777 == 0o600
        check = dernier(tmp_path, "verify", str(tmp_path / f"t{k}"))
        assert check.returncode == 0, check.stdout
        table = re.search(r"3 players \(0: Host, 1: (J\d), 2: (J\d)\)", check.stdout)
        assert table is not None and set(table.groups()) == {"J1", "J2"}, check.stdout


def test_bots_of_two_levels_play_a_host_and_a_join(tmp_path: Path) -> None:
    """``--bot --level``: the host's seat played by the strong bot, the joiner's by the easy
    one, over loopback TCP; both seats' transcripts verify. ``--level`` alone is refused."""
    outs = [tmp_path / "out0", tmp_path / "out1"]
    host = spawn(
        tmp_path, outs[0], "host", "--players", "2", "--hands", "1", "--port", "0",
        "--bind", "127.0.0.1", "--no-announce", "--key", str(tmp_path / "k0.pem"),
        "--transcript", str(tmp_path / "t0"), "--bot", "--level", "strong", "--no-colour",
    )
    procs = [host]
    try:
        port = _port(host, outs[0])
        procs.append(spawn(
            tmp_path, outs[1], "join", f"127.0.0.1:{port}", "--key", str(tmp_path / "k1.pem"),
            "--transcript", str(tmp_path / "t1"), "--bot", "--level", "easy", "--no-colour",
        ))
        codes = [p.wait(timeout=180) for p in procs]
    finally:
        _reap(*procs)
    texts = [o.read_text() for o in outs]
    assert codes == [0, 0], texts
    assert "The strong bot plays your seat." in texts[0]
    assert "The easy bot plays your seat." in texts[1]
    for k in (0, 1):
        assert "wins the match" in texts[k] and "Traceback" not in texts[k]
        check = dernier(tmp_path, "verify", str(tmp_path / f"t{k}"))
        assert check.returncode == 0, check.stdout
    for command in ("host", "join"):
        proc = dernier(tmp_path, command, "--level", "strong", "--key", str(tmp_path / "k.pem"))
        assert proc.returncode == 2 and "add --bot" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    proc = dernier(tmp_path, "join", "127.0.0.1:1", "--bot", "--level", "hard")
    assert proc.returncode == 2 and "Invalid value for '--level'" in proc.stderr


def test_a_refused_connection_is_a_clear_failure(tmp_path: Path) -> None:
    proc = dernier(tmp_path, "join", "127.0.0.1:1", "--bot", "--key", str(tmp_path / "k.pem"))
    assert proc.returncode == 1
    assert "Cannot connect to 127.0.0.1:1" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_address_and_bad_key_are_usage_errors(tmp_path: Path) -> None:
    proc = dernier(tmp_path, "join", "nowhere", "--bot")
    assert proc.returncode == 2 and "is not HOST:PORT" in proc.stderr
    proc = dernier(tmp_path, "watch", "127.0.0.1:99999")
    assert proc.returncode == 2 and "'127.0.0.1:99999': the port must be 1 to 65535" in proc.stderr
    bad = tmp_path / "bad.pem"
    bad.write_bytes(b"not a key")
    bad.chmod(0o600)
    proc = dernier(tmp_path, "join", "127.0.0.1:1", "--key", str(bad))
    assert proc.returncode == 2 and "--key" in proc.stderr
    assert "Traceback" not in proc.stderr
    typo = tmp_path / "no-such-folder" / "k.pem"  # a mistyped folder is refused, not created
    proc = dernier(tmp_path, "join", "127.0.0.1:1", "--key", str(typo))
    assert proc.returncode == 2 and "--key" in proc.stderr
    assert f"no folder {typo.parent}" in proc.stderr and "Traceback" not in proc.stderr
    assert not typo.parent.exists()


def test_join_without_address_hears_no_table(tmp_path: Path) -> None:
    proc = dernier(tmp_path, "join", "--bot", "--wait", "0.5", "--key", str(tmp_path / "k.pem"))
    assert proc.returncode == 1
    assert "No open table heard on the LAN" in proc.stderr


def _read_until(
    proc: subprocess.Popen[bytes], text: str, limit: float = 30, stop: str | None = None
) -> str:
    """Read the process's stdout (a pipe) until ``text`` (or ``stop``) shows."""
    seen = b""
    deadline = time.monotonic() + limit
    fd = proc.stdout.fileno()  # type: ignore[union-attr]
    ends = [text.encode()] + ([stop.encode()] if stop else [])
    while time.monotonic() < deadline and not any(e in seen for e in ends):
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            seen += chunk
    return seen.decode()


def test_join_picks_a_table_heard_on_the_lan(tmp_path: Path) -> None:
    out = tmp_path / "host.out"
    host = spawn(
        tmp_path, out, "host", "--players", "2", "--hands", "1", "--port", "0", "--bind",
        "0.0.0.0", "--advertise", "127.0.0.1", "--table-name", f"lan-{os.getpid()}",
        "--key", str(tmp_path / "k0.pem"),
        "--transcript", str(tmp_path / "t0"), "--bot", "--no-colour",
    )
    join = subprocess.Popen(
        [sys.executable, "-m", "dernier_p2p", "join", "--bot", "--wait", "2.5", "--key",
         str(tmp_path / "k1.pem"), "--transcript", str(tmp_path / "t1"), "--no-colour"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env=env_for(tmp_path),
    )
    try:
        port = _port(host, out)
        listing = _read_until(join, "Join which table", stop="\nJoining ")
        mine = re.search(rf"(\d+)\. lan-{os.getpid()} \(dernier, 1 seat\(s\) free\) at (.*)",
                         listing)
        assert mine is not None, listing
        assert mine.group(2).strip() == f"127.0.0.1:{port}"  # the advertised address
        assert join.stdin is not None
        # tables of other tests may be heard too: then the choice is read from stdin; this
        # table alone, without a terminal, is joined without asking
        assert ("Join which table" in listing) == (len(re.findall(r"\n  \d+\. ", listing)) > 1)
        join.stdin.write(f"{mine.group(1)}\n".encode())
        join.stdin.close()
        rest = join.stdout.read().decode()  # type: ignore[union-attr]
        codes = [join.wait(timeout=60), host.wait(timeout=60)]
    finally:
        _reap(host, join)
    assert codes == [0, 0], listing + rest + out.read_text()
    assert "wins the match" in rest
    assert (tmp_path / "t0").read_bytes() == (tmp_path / "t1").read_bytes()


HUMAN_SCRIPT = "xyz\n42\ny\n" + "".join(f"{k}\n" for k in range(1, 8)) + "d\np\nq\n"


def test_a_human_joins_over_the_network(tmp_path: Path) -> None:
    out = tmp_path / "host.out"
    host = spawn(
        tmp_path, out, "host", "--players", "2", "--port", "0", "--bind", "127.0.0.1",
        "--no-announce", "--key", str(tmp_path / "k0.pem"), "--transcript",
        str(tmp_path / "t0"), "--bot", "--no-colour",
    )
    try:
        port = _port(host, out)
        proc = dernier(
            tmp_path, "join", f"127.0.0.1:{port}", "--name", "Ann", "--key",
            str(tmp_path / "k1.pem"), "--transcript", str(tmp_path / "t1"), "--no-colour",
            stdin=HUMAN_SCRIPT, timeout=60,
        )
    finally:
        host.kill()
        host.wait()
    text = proc.stdout
    assert proc.returncode == 0, text + proc.stderr
    assert "Seated at seat 1" in text
    assert "▶ Ann (you)" in text or "  Ann (you)" in text
    # The deal is random: if Ann deals a first card that names a suit, she names it first.
    naming = "name the suit first: y/r/g/b" in text
    assert naming or "type a card number or one of the letters shown" in text, text
    assert naming or "pick a card from 1 to" in text, text
    assert any(line.startswith(("Ann plays", "Ann draws")) for line in text.splitlines()), text
    # leaving resigned: at two seats that ends the match, and the result is shown
    assert "You resign: the match ends here and you rank last." in text
    assert "You left the table. Your resignation ended the match." in text
    assert "Match points: Host 1, Ann -1" in text
    assert "Traceback" not in proc.stderr


def test_a_refused_handshake_and_ctrl_c_are_clear_messages(tmp_path: Path) -> None:
    """Joining with the host's own key is refused (DUPLICATE_KEY) with a hint; Ctrl-C ends the
    waiting host with exit code 130. No traceback either way."""
    import signal

    out = tmp_path / "host.out"
    key = str(tmp_path / "k0.pem")
    host = spawn(
        tmp_path, out, "host", "--players", "2", "--port", "0", "--bind", "127.0.0.1",
        "--no-announce", "--key", key, "--transcript", str(tmp_path / "t0"), "--bot",
    )
    try:
        port = _port(host, out)
        proc = dernier(tmp_path, "join", f"127.0.0.1:{port}", "--bot", "--key", key,
                       "--transcript", str(tmp_path / "t1"), timeout=30)
        host.send_signal(signal.SIGINT)
        code = host.wait(timeout=30)
    finally:
        _reap(host)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "The host refused: DUPLICATE_KEY" in proc.stderr
    assert "needs its own --key FILE" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    text = out.read_text()
    assert code == 130, text
    assert "Interrupted; you left the table." in text
    assert "Traceback" not in text


def test_a_server_that_is_not_a_table_is_a_clear_failure(tmp_path: Path) -> None:
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def hang_up() -> None:
        conn, _ = server.accept()
        conn.close()

    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    try:
        proc = dernier(tmp_path, "join", f"127.0.0.1:{port}", "--bot", "--key",
                       str(tmp_path / "k.pem"), "--transcript", str(tmp_path / "t"), timeout=30)
    finally:
        server.close()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"Connection closed to 127.0.0.1:{port}: the other side hung up" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_unreadable_key_file_for_the_host_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_bytes(b"-----BEGIN PRIVATE KEY-----\ncorrupt\n-----END PRIVATE KEY-----\n")
    bad.chmod(0o600)
    proc = dernier(tmp_path, "host", "--port", "0", "--no-announce", "--key", str(bad))
    assert proc.returncode == 2 and "--key" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    proc = dernier(tmp_path, "host", "--port", "99999")
    assert proc.returncode == 2 and "--port" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_ctrl_c_while_listening_for_tables(tmp_path: Path) -> None:
    import signal

    out = tmp_path / "join.out"
    proc = spawn(tmp_path, out, "join", "--bot", "--wait", "20", "--key", str(tmp_path / "k.pem"))
    try:
        deadline = time.monotonic() + 30
        while "Listening for tables" not in out.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
    finally:
        _reap(proc)
    text = out.read_text()
    assert code == 130, text
    assert "Interrupted." in text and "Traceback" not in text


def test_a_joiner_who_leaves_resigns_and_the_other_two_play_on(tmp_path: Path) -> None:
    """``q`` then ``y`` at a three-seat table that plays on (``--leave play_on``): the seat
    sends ``resign``, the host and the other joiner finish the match without waiting for a
    grace period, and the leaver ranks last."""
    from dernier_p2p.protocol.verify import verify_file

    out, bot_out = tmp_path / "host.out", tmp_path / "bot.out"
    host = spawn(
        tmp_path, out, "host", "--players", "3", "--port", "0", "--bind", "127.0.0.1",
        "--no-announce", "--key", str(tmp_path / "k0.pem"), "--transcript",
        str(tmp_path / "t0"), "--bot", "--no-colour", "--hands", "1", "--offer-seconds", "0.5",
        "--leave", "play_on",
    )
    bot = None
    try:
        port = _port(host, out)
        bot = spawn(
            tmp_path, bot_out, "join", f"127.0.0.1:{port}", "--bot", "--key",
            str(tmp_path / "k1.pem"), "--transcript", str(tmp_path / "t1"), "--no-colour",
        )
        _told(bot, bot_out, r"Seated at seat 1\b")  # the bot takes seat 1, Ann seat 2
        proc = dernier(
            tmp_path, "join", f"127.0.0.1:{port}", "--name", "Ann", "--key",
            str(tmp_path / "k2.pem"), "--transcript", str(tmp_path / "t2"), "--no-colour",
            stdin="q\ny\n", timeout=300,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "You left the table." in proc.stdout
        assert host.wait(timeout=600) == 0, out.read_text()
    finally:
        for p in (host, bot):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    verdict = verify_file(tmp_path / "t0")
    assert verdict.ok, verdict
    assert verdict.summary.finished and verdict.summary.standings[-1] == 2
    text = out.read_text()
    assert "Ann has left the match and ranks last" in text, text
    assert "Ann lost connection" not in text, text  # a seat that resigned is not waited for


def test_a_seat_that_was_to_host_without_a_quorum_is_told_in_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from dernier_p2p.cli.main import _run
    from dernier_p2p.net.host import NoQuorum

    async def takes_over() -> None:  # as a Peer's run ends when its host gets no quorum
        raise ExceptionGroup("nursery", [NoQuorum("fewer than 2 seats vote to depose host 0")])

    with pytest.raises(SystemExit) as exited:
        _run(takes_over)
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert "this seat was to host the table, but too few players reached it in time" in err
    assert "fewer than 2 seats vote to depose host 0" in err and "Unexpected" not in err


def test_a_host_that_cannot_listen_says_so(tmp_path: Path) -> None:
    """An address the host cannot listen on is a one-line failure about listening (not
    about connecting), with no traceback."""
    done = dernier(tmp_path, "host", "--bind", "999.1.1.1", "--port", "0", "--no-map",
                   "--no-announce", "--key", str(tmp_path / "k.pem"), "--transcript",
                   str(tmp_path / "t"), "--plain", timeout=60)
    assert done.returncode == 1, done
    assert "Cannot listen on 999.1.1.1:0: " in done.stderr + done.stdout, done
    assert "Traceback" not in done.stderr + done.stdout


def test_a_host_whose_port_is_taken_suggests_another_and_leaves_no_file(tmp_path: Path) -> None:
    """The port in use is found before the match is set up: one line naming the
    port, what to do (--port), and no transcript or side file left behind."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        path = tmp_path / "t.dnt"
        done = dernier(tmp_path, "host", "--bind", "127.0.0.1", "--port", str(port), "--no-map",
                       "--no-announce", "--key", str(tmp_path / "k.pem"), "--transcript",
                       str(path), "--plain", timeout=60)
    assert done.returncode == 1, done
    assert "Transcript" not in done.stdout, done
    assert f"Cannot listen on 127.0.0.1:{port}: " in done.stderr, done
    assert "choose another port with --port N" in done.stderr
    assert not path.exists() and not Path(f"{path}.envelopes").exists()


def test_join_without_a_terminal_and_several_tables_names_what_to_give(tmp_path: Path) -> None:
    """Two tables heard on the LAN and no terminal (a bot's seat, stdin closed): no question
    left unanswered ("Aborted!"), but a one-line failure naming what to give."""
    hosts, outs = [], [tmp_path / f"host{k}.out" for k in range(2)]
    try:
        for k in range(2):
            hosts.append(spawn(
                tmp_path, outs[k], "host", "--players", "2", "--hands", "1", "--port", "0",
                "--bind", "0.0.0.0", "--advertise", "127.0.0.1", "--table-name",
                f"two-{os.getpid()}-{k}", "--key", str(tmp_path / f"k{k}.pem"),
                "--transcript", str(tmp_path / f"t{k}"), "--bot", "--no-colour"))
        for k in range(2):
            _port(hosts[k], outs[k])
        done = subprocess.run(
            [sys.executable, "-m", "dernier_p2p", "join", "--bot", "--wait", "2.5", "--key",
             str(tmp_path / "kj.pem"), "--transcript", str(tmp_path / "tj"), "--no-colour"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
            env=env_for(tmp_path))
    finally:
        _reap(*hosts)
    assert done.returncode == 1, done
    assert "open tables heard on the LAN; name one: dernier join HOST:PORT" in done.stderr, done
    assert "Aborted!" not in done.stdout + done.stderr and "Traceback" not in done.stderr
