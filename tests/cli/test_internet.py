"""The host's and joiner's messages for Internet play, over loopback: invite codes, a wrong
host key (to join or to watch), a mistyped code, watching by code, a dead relay, routes
that all fail, and for whom a joiner can take over as host."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from pathlib import Path

from dernier_p2p.net.invite import Invite, Route, decode, fingerprint
from dernier_p2p.wire.identity import IdentityKey

from .helpers import dernier, spawn


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _code(proc: subprocess.Popen[bytes], out: Path, limit: float = 30) -> str:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"dernier join (dn1-[a-z2-7]+)", out.read_text())
        if found:
            return found.group(1)
        time.sleep(0.05)
    raise AssertionError(f"no invite code: {out.read_text()}")


def _host(tmp_path: Path, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    return spawn(tmp_path, out, "host", "--players", "2", "--hands", "1", "--port", "0",
                 "--bind", "127.0.0.1", "--no-announce", "--key", str(tmp_path / "k0.pem"),
                 "--transcript", str(tmp_path / "t0"), "--bot", "--no-colour", *extra)


def test_a_code_naming_another_key_is_refused_a_mistyped_code_is_caught_and_one_can_watch(
    tmp_path: Path,
) -> None:
    out = tmp_path / "host.out"
    host = _host(tmp_path, out)
    watcher: subprocess.Popen[bytes] | None = None
    try:
        code = _code(host, out)
        real = decode(code)
        assert [r.kind for r in real.routes] == ["direct"]  # loopback: no mapping, no relay
        told = out.read_text()
        assert (f"This code holds: {real.routes[0].where} (this machine only).\nNo route from "
                "outside this machine: only players on this machine can join.") in told, told
        other = IdentityKey.generate(b"\x09" * 32).public_bytes()
        forged = Invite(fingerprint(other), real.routes).encode()
        proc = dernier(tmp_path, "join", forged, "--key", str(tmp_path / "k1.pem"), "--bot",
                       timeout=60)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "WRONG_HOST" in proc.stderr and "not the one in the invite code" in proc.stderr
        assert "Traceback" not in proc.stderr
        typo = code[:-3] + ("a" if code[-3] != "a" else "b") + code[-2:]
        proc = dernier(tmp_path, "join", typo, "--key", str(tmp_path / "k1.pem"), timeout=60)
        assert proc.returncode == 2 and "does not check" in proc.stderr, proc.stderr
        proc = dernier(tmp_path, "watch", forged, "--plain", "--no-colour", timeout=60)
        assert proc.returncode == 1 and "WRONG_HOST" in proc.stderr, proc.stdout + proc.stderr
        # a watcher by the code waits in the lobby and follows the match to its end
        watcher = spawn(tmp_path, tmp_path / "w.out", "watch", code, "--plain", "--no-colour",
                        "--transcript", str(tmp_path / "w"))
        # the right code still works: the host was not disturbed by the refused joiner
        proc = dernier(tmp_path, "join", code, "--key", str(tmp_path / "k1.pem"), "--bot",
                       "--no-colour", "--transcript", str(tmp_path / "t1"), timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "connected directly at 127.0.0.1:" in proc.stdout
        told = [x for x in proc.stdout.splitlines()
                if "host goes away" in x and not x.startswith("Opening port")]
        assert len(told) == 1 and "this seat" in told[0], proc.stdout  # said once
        assert host.wait(timeout=60) == 0
        assert watcher.wait(timeout=60) == 0, (tmp_path / "w.out").read_text()
        assert (tmp_path / "w").read_bytes() == (tmp_path / "t0").read_bytes()
    finally:
        for proc in (host, watcher):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


def test_a_joiner_without_a_mapping_or_a_relay_is_told_once_for_whom_it_can_host(
    tmp_path: Path,
) -> None:
    """A joiner by code at an address of its network, the router left alone (--no-map) and no
    relay in the code: one line says it can take over only for the players on its network."""
    out = tmp_path / "host.out"
    host = _host(tmp_path, out)
    try:
        code = _code(host, out)
        port = _free_port()
        proc = dernier(tmp_path, "join", code, "--key", str(tmp_path / "k1.pem"), "--bot",
                       "--no-colour", "--listen", f"10.0.0.7:{port}", "--no-map",
                       "--transcript", str(tmp_path / "t1"), timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        told = [x for x in proc.stdout.splitlines() if "host goes away" in x]
        assert told == [
            f"If the host goes away, this seat can take over as host only for players on this "
            f"network (10.0.0.7:{port}): players elsewhere cannot reach that address; another "
            "seat takes over if one can."
        ], proc.stdout
        assert host.wait(timeout=60) == 0
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()


def test_the_note_on_taking_over_says_for_whom_in_each_case() -> None:
    """Mapping made, relay, none (this network, this machine, a public address, a name),
    --no-listen, a port that cannot be opened: each one sentence, none contradicting another."""
    from dernier_p2p.cli.internet import takeover_note

    head = "If the host goes away, this seat "
    lan = ("192.168.1.21", 47630)
    cases = {
        takeover_note(lan, mapped=("203.0.113.9", 47630)):
            "can take over as host for every player: the router forwards 203.0.113.9:47630 "
            "to it.",
        takeover_note(lan, relay=("relay.example.net", 47640)):
            "can take over as host for every player: players on this network reach it at "
            "192.168.1.21:47630, the others through the relay relay.example.net:47640.",
        takeover_note(lan):
            "can take over as host only for players on this network (192.168.1.21:47630): "
            "players elsewhere cannot reach that address; another seat takes over if one can.",
        takeover_note(("127.0.0.1", 40001)):
            "can take over as host only for players on this machine (127.0.0.1:40001).",
        takeover_note(("93.184.216.34", 47630)):
            "can take over as host for every player, at 93.184.216.34:47630. Once the match "
            "starts it also relays for the table's other seats (PROTOCOL.md 4.7 step 7).",
        takeover_note(lan, mapped=("11.22.33.9", 47630)):  # a global address: a seat relay
            "can take over as host for every player: the router forwards 11.22.33.9:47630 "
            "to it. Once the match starts it also relays for the table's other seats "
            "(PROTOCOL.md 4.7 step 7).",
        takeover_note(("2001:4860::8", 47630)):
            "can take over as host for players on this network and, where your router's "
            "firewall lets them in, players with IPv6, at [2001:4860::8]:47630; another seat "
            "takes over if one can.",
        takeover_note(("2001:4860::8", 47630), relay=("relay.example.net", 47640)):
            "can take over as host for every player: players on this network, and players "
            "with IPv6 where your router's firewall lets them in, reach it at "
            "[2001:4860::8]:47630, the others through the relay relay.example.net:47640.",
        takeover_note(("home.example.net", 47630)):
            "can take over as host for the players who reach home.example.net:47630.",
        takeover_note(None):
            "does not offer to take over as host; another seat takes over if one can.",
        takeover_note(None, problem="cannot listen on 10.0.0.7:47630: Address already in use"):
            "cannot take over as host (cannot listen on 10.0.0.7:47630: Address already in "
            "use); another seat takes over if one can.",
    }
    for text, rest in cases.items():
        assert text == head + rest


def test_a_dead_relay_is_reported_and_the_host_still_serves(tmp_path: Path) -> None:
    out = tmp_path / "host.out"
    dead = _free_port()
    host = _host(tmp_path, out, "--relay", f"127.0.0.1:{dead}")
    try:
        code = _code(host, out)
        text = out.read_text()
        assert f"Relay: relay 127.0.0.1:{dead} unreachable" in text, text
        assert [r.kind for r in decode(code).routes] == ["direct", "relay"]
        proc = dernier(tmp_path, "join", code, "--key", str(tmp_path / "k1.pem"), "--bot",
                       "--no-colour", "--transcript", str(tmp_path / "t1"), timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert host.wait(timeout=60) == 0
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()


def test_a_code_whose_routes_all_fail_says_why_without_hanging(tmp_path: Path) -> None:
    dead = _free_port()
    key = IdentityKey.generate(b"\x0a" * 32).public_bytes()
    code = Invite(fingerprint(key), (Route("direct", "127.0.0.1", dead),
                                     Route("relay", "127.0.0.1", dead, b"r" * 8))).encode()
    started = time.monotonic()
    proc = dernier(tmp_path, "join", code, "--key", str(tmp_path / "k1.pem"), timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "UNREACHABLE" in proc.stderr and f"direct 127.0.0.1:{dead}" in proc.stderr
    assert f"relay 127.0.0.1:{dead}" in proc.stderr and "--relay" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert time.monotonic() - started < 50


def test_the_relay_survives_hostile_bytes_and_stops_cleanly(tmp_path: Path) -> None:
    import signal

    from dernier_p2p.net.handshake import VERSION
    from dernier_p2p.wire.canonical import decode as unpack
    from dernier_p2p.wire.canonical import encode

    port = _free_port()
    out = tmp_path / "relay.out"
    relay = spawn(tmp_path, out, "relay", "--port", str(port), "--bind", "127.0.0.1")
    try:
        deadline = time.monotonic() + 30
        while "Relay listening" not in out.read_text():
            assert relay.poll() is None and time.monotonic() < deadline, out.read_text()
            time.sleep(0.05)
        for junk in [b"\xff\xff\xff\xff", b"\x00\x00\x00\x03abc", b"GET / HTTP/1.1\r\n\r\n"]:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(junk)
                sock.shutdown(socket.SHUT_WR)
                sock.recv(4096)  # an error frame or the close
        opening = encode({"k": "relay-join", "version": VERSION, "token": b"12345678"})
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(len(opening).to_bytes(4, "big") + opening)
            reply = sock.recv(4096)
        assert unpack(reply[4:])["code"] == "NO_TABLE"  # still serving
        relay.send_signal(signal.SIGINT)
        assert relay.wait(timeout=30) == 130
        text = out.read_text()
        assert "Relay stopped." in text and "Traceback" not in text, text
    finally:
        if relay.poll() is None:
            relay.kill()
            relay.wait()


def test_the_host_prints_each_command_whole_on_a_line_of_the_80_column_screen(
    tmp_path: Path,
) -> None:
    """The join and watch commands, and the local address's, stand alone on their lines with
    nothing around them, each within the 76 columns of the full screen's log, so a person
    copies a whole command."""
    out = tmp_path / "host.out"
    host = _host(tmp_path, out)
    try:
        code = _code(host, out)
        deadline = time.monotonic() + 30
        while "join 127.0.0.1:" not in out.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        lines = out.read_text().splitlines()
        assert f"  dernier join {code}" in lines
        assert f"  dernier watch {code}" in lines
        local = lines.index("On this network also:") + 1  # the command on a line of its own
        assert re.fullmatch(r"  dernier join 127\.0\.0\.1:\d+", lines[local]), lines
        assert all(len(x) <= 76 for x in lines if "dernier " in x), lines  # paths may be long
    finally:
        host.kill()
        host.wait()


def test_the_host_tells_the_truth_about_its_code_in_each_case() -> None:
    """Which routes the code holds and whether an outsider can use it, said before anyone
    tries: a LAN address alone, a mapping, a public address, a relay (answering or not), a
    global IPv6 address (behind a firewall the host cannot see), this machine only."""
    from dernier_p2p.cli.internet import code_truth

    lan = Route("direct", "192.168.10.2", 47630)
    six = Route("direct", "2a11:2233:10::2", 47630)
    mapped = Route("mapped", "11.22.33.10", 47630)
    relay = Route("relay", "11.22.33.100", 47640, b"T" * 8)
    todo = ("forward TCP port 47630 on your router to this machine, or add --relay HOST:PORT "
            "(anyone with a reachable machine can run `dernier relay`).")
    cases = {
        (lan,): ["This code holds: 192.168.10.2:47630 (your network only).",
                 "No route from the Internet: only players on your network can join. For "
                 "others, " + todo],
        (lan, mapped): ["This code holds: 192.168.10.2:47630 (your network only); your "
                        "router's mapping 11.22.33.10:47630.",
                        "Reachable from the Internet through your router's mapping "
                        "11.22.33.10:47630."],
        (Route("direct", "93.184.216.34", 47630),): [
            "This code holds: 93.184.216.34:47630 (direct).",
            "Reachable from the Internet directly at 93.184.216.34:47630."],
        (lan, relay): ["This code holds: 192.168.10.2:47630 (your network only); the relay "
                       "11.22.33.100:47640.",
                       "Reachable from the Internet through the relay: players outside your "
                       "network connect through the relay 11.22.33.100:47640."],
        (six, lan): ["This code holds: [2a11:2233:10::2]:47630 (IPv6: your network, and the "
                     "Internet if your router's firewall lets it in); 192.168.10.2:47630 (your "
                     "network only).",
                     "Reachable from the Internet only over IPv6, at [2a11:2233:10::2]:47630, "
                     "and only if your router's firewall lets new connections in (most home "
                     "routers drop them); otherwise no route from the Internet: only players "
                     "on your network can join. For certain: " + todo],
        (Route("direct", "127.0.0.1", 40001),): [
            "This code holds: 127.0.0.1:40001 (this machine only).",
            "No route from outside this machine: only players on this machine can join."],
    }
    for routes, lines in cases.items():
        assert code_truth(routes) == lines, routes
    assert code_truth((six,), pinhole="PCP") == [
        "This code holds: [2a11:2233:10::2]:47630 (IPv6: your network, and the Internet: your "
        "router's firewall opened it).",
        "Reachable from the Internet over IPv6 at [2a11:2233:10::2]:47630 (your router's "
        "firewall lets it in: PCP); players without IPv6 cannot join: for them, " + todo]
    assert code_truth((six, lan, relay), pinhole="UPnP")[1] == (
        "Reachable from the Internet over IPv6 at [2a11:2233:10::2]:47630 (your router's "
        "firewall lets it in: UPnP); players without IPv6 connect through the relay "
        "11.22.33.100:47640.")
    dead = code_truth((lan, relay), relay_answers=False)
    assert dead == ["This code holds: 192.168.10.2:47630 (your network only); the relay "
                    "11.22.33.100:47640 (not answering now).",
                    "No route from the Internet while the relay 11.22.33.100:47640 does not "
                    "answer: only players on your network can join until it does (the host "
                    "keeps trying it)."]


def test_a_code_with_a_malformed_ipv6_route_is_refused_clearly(tmp_path: Path) -> None:
    """A code whose checksum holds but whose IPv6 route is link-local (no interface can be
    named in a code): the joiner says what is wrong with the code, no traceback."""
    import base64

    from dernier_p2p.net.invite import _checksum

    key = IdentityKey.generate(b"\x0b" * 32).public_bytes()
    route = bytes([0, 6]) + bytes.fromhex("fe80") + bytes(13) + b"\x01" + (47630).to_bytes(2, "big")
    payload = bytes([1]) + fingerprint(key) + route
    code = "dn1-" + base64.b32encode(payload + _checksum(payload)).decode().rstrip("=").lower()
    proc = dernier(tmp_path, "join", code, "--key", str(tmp_path / "k1.pem"), timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "that invite code does not work" in proc.stderr
    assert "link-local address fe80::1 cannot be reached without its interface" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_relay_only_this_machine_or_network_reaches_brings_no_one_from_the_internet() -> None:
    """A code's relay at a loopback or home-network address is said to be one, on the host's
    screen and on a joiner's: no line claims the Internet reaches the table, or the seat,
    through it; a relay at any other address, or by name, still does."""
    from dernier_p2p.cli.internet import code_truth, takeover_note

    lan = Route("direct", "192.168.10.2", 47630)
    here = Route("relay", "127.0.0.1", 47800, b"T" * 8)
    home = Route("relay", "192.168.10.5", 47800, b"T" * 8)
    todo = ("For others, forward TCP port 47630 on your router to this machine, or give "
            "--relay a relay at an address the Internet reaches (anyone with a reachable "
            "machine can run `dernier relay`).")
    assert code_truth((lan, here)) == [
        "This code holds: 192.168.10.2:47630 (your network only); the relay 127.0.0.1:47800 "
        "(this machine only).",
        "No route from the Internet: the relay 127.0.0.1:47800 is reached only from this "
        "machine, so only players on your network can join. " + todo]
    assert code_truth((lan, home), relay_answers=False) == [
        "This code holds: 192.168.10.2:47630 (your network only); the relay 192.168.10.5:47800 "
        "(your network only; not answering now).",
        "No route from the Internet: the relay 192.168.10.5:47800 is reached only from your "
        "network, so only players on your network can join. " + todo]
    assert code_truth((Route("direct", "127.0.0.1", 40001), here))[1] == (
        "No route from outside this machine: only players on this machine can join.")
    lab = Route("relay", "203.0.113.100", 47640, b"T" * 8)  # not a home network's range
    assert code_truth((lan, lab))[1] == (
        "Reachable from the Internet through the relay: players outside your network connect "
        "through the relay 203.0.113.100:47640.")
    head = "If the host goes away, this seat can take over as host "
    assert takeover_note(("192.168.10.3", 47630), relay=("127.0.0.1", 47800)) == (
        head + "only for players on this network (192.168.10.3:47630): players elsewhere "
        "cannot reach that address; another seat takes over if one can.")
    assert takeover_note(("192.168.10.3", 47630), relay=("203.0.113.100", 47640)) == (
        head + "for every player: players on this network reach it at 192.168.10.3:47630, "
        "the others through the relay 203.0.113.100:47640.")


def test_the_path_a_joiner_got_reads_as_a_clause_with_no_parenthesis_inside_another() -> None:
    """Each route a joiner may get (directly, IPv6, the host's router, the relay, a seat's
    relay, punched, called back) is said after its seat as a clause of its own."""
    from dernier_p2p.cli.table import seated_line

    token = b"T" * 8
    routes = [Route("direct", "192.168.1.20", 47630), Route("direct", "2a11:2233::100", 47630),
              Route("mapped", "11.22.33.10", 47630), Route("relay", "11.22.33.100", 47640, token),
              Route("seat", "11.22.33.20", 47630, token),
              Route("punched", "11.22.33.10", 40212), Route("reversed", "11.22.33.10", 40213)]
    for route in routes:
        line = seated_line(1, route)
        assert line == f"Seated at seat 1, connected {route.describe()}; waiting for the table "\
                       "to fill.", line
        depth = 0
        for ch in line:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            assert 0 <= depth <= 1, line
    assert seated_line(2) == "Seated at seat 2; waiting for the table to fill."
    assert seated_line(1, routes[1]) == ("Seated at seat 1, connected directly at "
                                         "[2a11:2233::100]:47630 (IPv6); waiting for the table "
                                         "to fill.")


def test_the_host_is_told_in_plain_words_when_its_router_stops_renewing_and_again_after() -> None:
    from dernier_p2p.cli.internet import renewal_line

    lost = renewal_line(False, "port mapping", "203.0.113.7:40000")
    assert "did not renew the port mapping" in lost and "203.0.113.7:40000" in lost
    assert "may no longer reach" in lost
    back = renewal_line(True, "pinhole", "[2001:db8::7]:40000")
    assert back == "The router renews the pinhole again: the Internet reaches [2001:db8::7]:40000."
    # a joined seat's mapping serves links and a host change: said so
    lost = renewal_line(False, "port mapping", "203.0.113.7:47630", seat=True)
    assert "may no longer reach this seat at 203.0.113.7:47630" in lost
    assert "if it takes over as host" in lost and "asking again within a minute" in lost
    assert renewal_line(True, "pinhole", "[2001:db8::7]:47630", seat=True) == (
        "The router renews the pinhole again: the other players reach this seat at "
        "[2001:db8::7]:47630.")


def test_only_a_global_ipv4_address_not_of_this_machine_is_asked_of_the_router_again() -> None:
    from dernier_p2p.cli.internet import routed_here

    assert routed_here(("8.8.8.8", 47630))  # a router's outside address, as far as it can tell
    for listed in (None, ("127.0.0.1", 47630), ("192.168.1.7", 47630), ("10.0.0.2", 1),
                   ("100.64.0.1", 1), ("2001:4860::1", 47630), ("::1", 1),
                   ("example.org", 47630), ("", 1)):
        assert not routed_here(listed), listed  # (a global one of its own: tests/netlab)


async def test_a_seat_listing_no_router_address_asks_nothing_and_says_nothing() -> None:
    from dernier_p2p.cli.internet import listed_routes

    said: list[str] = []
    for listed, map_port in ((("192.168.1.7", 47630), True), (None, True),
                             (("8.8.8.8", 47630), False)):  # --no-map: the router left alone
        async with listed_routes(listed, said.append, map_port=map_port):
            pass
    assert said == []
