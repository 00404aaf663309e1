"""Internet play behind home routers, with real parts: namespaces, NAT, miniupnpd, processes.

Each test builds its own small Internet (see :mod:`.lab`) and runs ``dernier`` as real processes
inside it: a host behind a router that it opens by UPnP, and a host and two joiners behind
three routers without UPnP who play through a ``dernier relay`` on the Internet side.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from dernier_p2p.net.relay import read_record
from dernier_p2p.protocol.envelope import verify_envelope
from dernier_p2p.protocol.ready import check_ready_frame
from dernier_p2p.wire.canonical import decode
from dernier_p2p.wire.transcript import read_transcript
from tests.net.helpers import verify

from .lab import Lab
from .nat import NatLab

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
COMMON = ["--bot", "--no-colour"]


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), PYTHONUNBUFFERED="1",
               PYTHONPATH=str(ROOT))
    return env


def _dernier(lab: Lab, ns: str, home: Path, out: Path, *args: str) -> subprocess.Popen[bytes]:
    return lab.spawn(ns, out, sys.executable, "-m", "dernier_p2p", *args, env=_env(home))


def _wait_for(out: Path, pattern: str, proc: subprocess.Popen[bytes], limit: float = 30) -> str:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = re.search(pattern, out.read_text())
        if found:
            return found.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError(f"{pattern!r} never came: {out.read_text()}")


def _finish(procs: list[subprocess.Popen[bytes]], outs: list[Path], limit: float = 120) -> None:
    codes = [p.wait(timeout=limit) for p in procs]
    assert codes == [0] * len(procs), [o.read_text() for o in outs]


def _verified(paths: list[Path], hands: int) -> list[dict]:
    """The seats' transcripts, equal and verified, of a match of ``hands`` hands."""
    texts = [list(read_transcript(p)) for p in paths]
    assert all(t == texts[0] for t in texts)
    assert verify(texts[0]).summary.hands == hands
    return texts[0]


def test_a_host_behind_a_upnp_router_is_joined_from_the_internet(
    netlab: Callable[[dict[str, bool]], Lab], tmp_path: Path
) -> None:
    lab = netlab({"A": True})
    router = lab.rtr["A"]
    outs = [tmp_path / "host.out", tmp_path / "join.out"]
    host = _dernier(lab, router.home_ns, tmp_path, outs[0], "host", "--players", "2",
                    "--hands", "2", "--port", "47630", "--no-announce",
                    "--key", str(tmp_path / "k0.pem"), "--transcript", str(tmp_path / "t0"),
                    *COMMON)
    code = _wait_for(outs[0], r"dernier join (dn1-[a-z2-7]+)", host)
    text = outs[0].read_text()
    assert "Opening port 47630 on your router" in text
    assert f"done (UPnP): reachable at {router.wan_ip}:47630" in text, text
    join = _dernier(lab, lab.wan, tmp_path, outs[1], "join", code,
                    "--key", str(tmp_path / "k1.pem"), "--transcript", str(tmp_path / "t1"),
                    *COMMON)
    _finish([host, join], outs)
    joined = outs[1].read_text()
    assert f"connected through the host's router at {router.wan_ip}:47630" in joined, joined
    _verified([tmp_path / "t0", tmp_path / "t1"], hands=2)
    upnp_log = (lab.tmp / "miniupnpd-A.log").read_text()
    assert "redirecting port 47630 to 192.168.10.2:47630" in upnp_log
    assert "removing redirect rule port 47630" in upnp_log  # the mapping went with the table
    # The router goes off the Internet: the same code now fails fast and says why.
    lab.unplug("A")
    started = time.monotonic()
    again = subprocess.run(lab.cmd(lab.wan, sys.executable, "-m", "dernier_p2p", "join", code,
                                   "--key", str(tmp_path / "k1.pem"), *COMMON),
                           capture_output=True, text=True, timeout=60, env=_env(tmp_path))
    assert again.returncode == 1, again.stdout + again.stderr
    assert "UNREACHABLE" in again.stderr and "mapped" in again.stderr, again.stderr
    assert "--relay" in again.stderr  # what to do next
    assert time.monotonic() - started < 40


def test_three_homes_without_upnp_play_through_a_relay_that_sees_only_signed_frames(
    natlab: Callable[[dict[str, str]], NatLab], tmp_path: Path
) -> None:
    # Symmetric routers: no punch meets between two of them, not even a birthday punch
    # (PROTOCOL.md 4.7 step 5), so the whole match goes through the relay. (Between the lab's
    # plain routers, which answer an unexpected connection with a reset, a punch met in one
    # of six runs.)
    lab = natlab({"A": "symmetric", "B": "symmetric", "C": "symmetric"})
    record = tmp_path / "relay.rec"
    outs = [tmp_path / f"{n}.out" for n in ("relay", "host", "j1", "j2")]
    relay = _dernier(lab, lab.wan, tmp_path, outs[0], "relay", "--port", "47640",
                     "--record", str(record))
    _wait_for(outs[0], r"(Relay listening)", relay)
    host = _dernier(lab, lab.rtr["A"].home_ns, tmp_path, outs[1], "host", "--players", "3",
                    "--hands", "1", "--port", "47630", "--no-announce",
                    "--relay", f"{lab.wan_ip}:47640", "--key", str(tmp_path / "k0.pem"),
                    "--transcript", str(tmp_path / "t0"), *COMMON)
    code = _wait_for(outs[1], r"dernier join (dn1-[a-z2-7]+)", host)
    text = outs[1].read_text()
    assert "no router mapping (UPnP: no UPnP router answered; NAT-PMP:" in text, text
    assert f"connect through the relay {lab.wan_ip}:47640" in text
    joins = [
        _dernier(lab, lab.rtr[x].home_ns, tmp_path, outs[2 + k], "join", code, "--name", f"J{k}",
                 "--key", str(tmp_path / f"k{k + 1}.pem"),
                 "--transcript", str(tmp_path / f"t{k + 1}"), *COMMON)
        for k, x in enumerate("BC")
    ]
    _finish([host, *joins], outs[1:])
    for out in outs[2:]:
        assert f"connected through the relay {lab.wan_ip}:47640" in out.read_text()
    records = _verified([tmp_path / f"t{k}" for k in range(3)], hands=1)
    relay.terminate()
    relay.wait(timeout=10)
    # What the relay forwarded: handshakes, then only envelopes signed by their seats and
    # records of the verified transcript (the private cards are ciphertexts inside them).
    keys = [p["key"] for p in records[0]["env"]["body"]["players"]]
    seen = {"challenge": 0, "hello": 0, "welcome": 0, "env": 0, "rec": 0, "ready": 0, "done": 0}
    for _call, way, frame in read_record(record.read_bytes()):
        msg = decode(frame)
        seen[msg["k"]] += 1
        if msg["k"] == "rec":
            assert way == 1 and msg["rec"] == records[msg["rec"]["i"]]
        elif msg["k"] == "env":  # signed by its seat (a refused one is not in the transcript)
            assert way == 0
            verify_envelope(msg["env"], keys[msg["env"]["seat"]], None)
        elif msg["k"] == "ready":  # a seat passed on a window: signed by it (PROTOCOL.md 18.1)
            check_ready_frame(msg, keys, records[0]["env"]["game"])
        elif msg["k"] == "done":  # the end of the match, with nothing in it
            assert way == 0 and msg == {"k": "done", "last": len(records) - 1}
    assert seen["hello"] == 2 and seen["rec"] == 2 * len(records) and seen["env"] > 0
    log = outs[0].read_text()
    assert log.count("paired with its host") == 2 and "registered" in log


@pytest.mark.parametrize("method, asked, removed", [
    ("UPnP", "AddPortMapping: ext port 47631 to 192.168.10.2:47631",
     "removing redirect rule port 47631"),
    ("NAT-PMP", "NAT-PMP port mapping request : 47631->192.168.10.2:47631 tcp",
     "NAT-PMP TCP port 47631 mapping removed"),
])
def test_each_mapping_method_opens_the_port_renews_it_and_removes_it(
    netlab: Callable[[dict[str, bool]], Lab], tmp_path: Path, method: str, asked: str,
    removed: str,
) -> None:
    lab = netlab({"A": True})
    router = lab.rtr["A"]
    out = tmp_path / "map.out"
    proc = lab.spawn(router.home_ns, out, sys.executable, "-m", "tests.netlab.map_port", method,
                     "47631", env=_env(tmp_path))
    _wait_for(out, r"(MAPPED Mapping)", proc)
    assert f"method='{method}', external_ip='{router.wan_ip}', external_port=47631" in (
        out.read_text())
    reach = subprocess.run(
        lab.cmd(lab.wan, sys.executable, "-c",
                f"import socket; socket.create_connection(('{router.wan_ip}', 47631), 5)"),
        capture_output=True, text=True, timeout=30)
    assert reach.returncode == 0, reach.stderr  # the Internet reaches the home through it
    assert proc.wait(timeout=30) == 0
    text = out.read_text()
    assert "ACCEPTED" in text and "mapping renewed" in text and "removed" in text, text
    upnp_log = (lab.tmp / "miniupnpd-A.log").read_text()
    assert upnp_log.count(asked) >= 2 and removed in upnp_log  # asked, renewed, removed
    gone = subprocess.run(
        lab.cmd(lab.wan, sys.executable, "-c",
                f"import socket; socket.create_connection(('{router.wan_ip}', 47631), 3)"),
        capture_output=True, text=True, timeout=30)
    assert gone.returncode != 0  # the port is closed again


def test_the_host_says_when_it_is_public_and_when_nothing_makes_it_reachable(
    netlab: Callable[[dict[str, bool]], Lab], tmp_path: Path
) -> None:
    lab = netlab({"A": True})
    outs = [tmp_path / "public.out", tmp_path / "home.out"]
    common = ["host", "--players", "2", "--port", "47630", "--no-announce", *COMMON]
    public = _dernier(lab, lab.wan, tmp_path, outs[0], *common, "--key", str(tmp_path / "k0"),
                      "--advertise", lab.wan_ip)
    home = _dernier(lab, lab.rtr["A"].home_ns, tmp_path, outs[1], *common, "--no-map",
                    "--key", str(tmp_path / "k1"))
    for proc, out in zip((public, home), outs, strict=True):
        _wait_for(out, r"dernier join (dn1-[a-z2-7]+)", proc)
        proc.kill()
        proc.wait(timeout=30)
    text = outs[0].read_text()
    assert f"public address: players reach it directly at {lab.wan_ip}:47630" in text, text
    assert "Opening port" not in text and "No route from the Internet" not in text
    assert f"Reachable from the Internet directly at {lab.wan_ip}:47630." in text, text
    text = outs[1].read_text()
    assert "Opening port" not in text  # --no-map
    assert "No route from the Internet: only players on your network can join" in text, text
    assert "forward TCP port 47630" in text and "--relay HOST:PORT" in text


def test_a_joiner_asks_its_router_for_the_lease_it_was_given_and_renews_it(
    netlab: Callable[[dict[str, bool]], Lab], tmp_path: Path
) -> None:
    # A public host; the joiner is behind A, whose router maps by UPnP: its candidate port
    # (the table's) is asked for a 2 s lease (--map-lease-seconds), so renewed every second.
    lab = netlab({"A": True})
    outs = [tmp_path / "host.out", tmp_path / "join.out"]
    host = _dernier(lab, lab.wan, tmp_path, outs[0], "host", "--players", "2", "--port",
                    "47630", "--no-announce", *COMMON, "--key", str(tmp_path / "k0"),
                    "--advertise", lab.wan_ip, "--turn-seconds", "600")
    try:
        code = _wait_for(outs[0], r"dernier join (dn1-[a-z2-7]+)", host)
        joiner = _dernier(lab, lab.rtr["A"].home_ns, tmp_path, outs[1], "join", code,
                          *COMMON, "--key", str(tmp_path / "k1"), "--map-lease-seconds", "2")
        try:
            _wait_for(outs[1], r"(done \(UPnP\))", joiner, 60)
            log = lab.tmp / "miniupnpd-A.log"
            deadline = time.monotonic() + 30
            while log.read_text().count("AddPortMapping: ext port 47630") < 2 and (
                    time.monotonic() < deadline):
                time.sleep(0.2)
            text = log.read_text()
            assert text.count("AddPortMapping: ext port 47630") >= 2, text  # asked, renewed
            assert "leaseduration=2 " in text, text
            assert joiner.poll() is None, outs[1].read_text()
        finally:
            joiner.kill()
            joiner.wait(timeout=30)
    finally:
        host.kill()
        host.wait(timeout=30)


def _records(path: Path) -> list[dict]:
    try:
        return list(read_transcript(path, allow_torn_tail=True))
    except (OSError, ValueError):
        return []


def _kill_after_first_move(host: subprocess.Popen[bytes], transcript: Path) -> None:
    """Kill the host's process (SIGKILL) once ``transcript`` holds the first move (or after
    60 s): the host dies mid-hand."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(
            r["env"]["body"]["type"] == "move" for r in _records(transcript)):
        time.sleep(0.05)
    host.kill()
    host.wait(timeout=10)


def _join_in_seat_order(lab: Lab, tmp_path: Path, outs: list[Path], code: str,
                        homes: list[tuple[str, list[str]]]) -> list[subprocess.Popen[bytes]]:
    """Seat ``homes`` (a router's name and its extra options) one after the other with
    ``dernier -v join code``, the k-th home as J{k+1} writing ``outs[k]``, key ``k{k+1}`` and
    transcript ``t{k+1}``: the first to join is seat 1, the next host."""
    joins = []
    for k, (home, opts) in enumerate(homes):
        joins.append(_dernier(lab, lab.rtr[home].home_ns, tmp_path, outs[k], "-v", "join",
                              code, *opts, "--name", f"J{k + 1}",
                              "--key", str(tmp_path / f"k{k + 1}"),
                              "--transcript", str(tmp_path / f"t{k + 1}"), *COMMON))
        _wait_for(outs[k], r"Seated at seat (\d)", joins[-1])
    return joins


@pytest.mark.slow
def test_a_table_on_the_internet_survives_the_loss_of_its_host(
    netlab: Callable[[dict[str, bool]], Lab], tmp_path: Path
) -> None:
    # Three homes behind NAT; only C's router has UPnP. The host (A) and the next host (B)
    # cannot be reached but through the relay; C maps its --listen port on its router.
    lab = netlab({"A": False, "B": False, "C": True})
    relay_at = f"{lab.wan_ip}:47640"
    outs = [tmp_path / f"{n}.out" for n in ("relay", "host", "j1", "j2")]
    relay = _dernier(lab, lab.wan, tmp_path, outs[0], "-v", "relay", "--port", "47640")
    _wait_for(outs[0], r"(Relay listening)", relay)
    host = _dernier(lab, lab.rtr["A"].home_ns, tmp_path, outs[1], "host", "--players", "3",
                    "--hands", "1", "--port", "47630", "--no-announce", "--no-map",
                    "--relay", relay_at, "--grace-seconds", "2", "--key", str(tmp_path / "k0"),
                    "--transcript", str(tmp_path / "t0"), "--leave", "play_on", *COMMON)
    code = _wait_for(outs[1], r"dernier join (dn1-[a-z2-7]+)", host)
    joins = []
    for k, x in enumerate("BC"):  # B joins first: seat 1, the next host
        joins.append(_dernier(lab, lab.rtr[x].home_ns, tmp_path, outs[2 + k], "-v", "join",
                              code, "--name", f"J{k + 1}", "--key", str(tmp_path / f"k{k + 1}"),
                              "--transcript", str(tmp_path / f"t{k + 1}"), *COMMON))
        _wait_for(outs[2 + k], r"Seated at seat (\d)", joins[-1])
    c_wan = lab.rtr["C"].wan_ip
    j2 = outs[3].read_text()
    assert f"done (UPnP): the router forwards {c_wan}:47630 to this machine" in j2, j2
    assert "can take over as host for every player" in j2, j2
    j1 = outs[2].read_text()
    assert "no router mapping (UPnP: no UPnP router answered; NAT-PMP: " in j1, j1
    assert f"the others through the relay {relay_at}" in j1, j1
    # The match runs; C's mapped port leads from the Internet to C's seat (a link challenge).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(
            r["env"]["body"]["type"] == "move" for r in _records(tmp_path / "t1")):
        time.sleep(0.05)
    knock = subprocess.run(lab.cmd(lab.wan, sys.executable, "-c", (
        "import socket; s = socket.create_connection(('" + c_wan + "', 47630), 5); "
        "s.settimeout(5); print(len(s.recv(64)))")), capture_output=True, text=True, timeout=30)
    assert knock.returncode == 0 and int(knock.stdout) > 0, knock.stderr
    host.kill()  # the host's process dies mid-match
    host.wait(timeout=10)
    _finish(joins, outs[2:])
    records = _verified([tmp_path / "t1", tmp_path / "t2"], hands=1)
    players = records[0]["env"]["body"]["players"]
    assert players[2]["listen"] == [c_wan, 47630]  # C announced its router's mapping
    assert players[1]["listen"] == [lab.rtr["B"].home_ip, 47630]  # B: its own, unreachable
    changes = [r["env"]["body"] for r in records if r["env"]["body"]["type"] == "host_change"]
    assert [(c["old"], c["new"]) for c in changes] == [(0, 1)]
    assert len(_records(tmp_path / "t0")) < len(records)  # the old host saw only the start
    # C turns to B, the next host, which stands by at the relay and at C's own seat relay
    # (4.7 step 7): C reaches it at either, whichever pairs first (its own relay needs no
    # punch window, and mostly wins)
    after = outs[3].read_text().split("failover (seat 1", 1)
    assert len(after) == 2 and (f"connected by the relay {relay_at}" in after[1] or
                                "connected by the seat 127.0.0.1:47630, this seat's own seat "
                                "relay" in after[1]), outs[3]
    upnp_log = (lab.tmp / "miniupnpd-C.log").read_text()
    assert "redirecting port 47630 to 192.168.30.2:47630" in upnp_log
    assert "removing redirect rule port 47630" in upnp_log  # C's mapping went with the match
    relay.terminate()
    relay.wait(timeout=10)
    log = outs[0].read_text()
    assert log.count("registered") >= 2  # the host's table, and B standing by


def _knock(lab: Lab, address: str, port: int) -> subprocess.CompletedProcess[str]:
    """Connect from the Internet to ``address``:``port`` and read what a seat's listener says
    first (a link challenge): printed as its length; a non-zero exit when nothing answers."""
    return subprocess.run(lab.cmd(lab.wan, sys.executable, "-c", (
        f"import socket; s = socket.create_connection(('{address}', {port}), 3); "
        "s.settimeout(5); print(len(s.recv(64)))")), capture_output=True, text=True, timeout=30)


def _routed_here(lab: Lab, ns: str, address: str) -> bool:
    """:func:`~dernier_p2p.cli.internet.routed_here` of ``address`` as a machine in ``ns``."""
    got = subprocess.run(lab.cmd(ns, sys.executable, "-c", (
        "from dernier_p2p.cli.internet import routed_here; "
        f"print(routed_here(('{address}', 47630)))")), capture_output=True, text=True,
        timeout=30, env=_env(lab.tmp))
    assert got.returncode == 0, got.stderr
    return got.stdout.strip() == "True"


@pytest.mark.slow
def test_a_host_back_from_a_crash_asks_its_router_again_and_hosts_again_for_the_internet(
    netlab: Callable[[dict[str, bool]], Lab], tmp_path: Path
) -> None:
    # The host (A, whose router maps by UPnP) lists its router's address; J1, on the Internet,
    # is the next host; J2 (on the Internet too) never hosts. The host's process dies, and its
    # router forgets the mapping (a lease run out, a router restarted) before the player runs
    # `dernier host` again.
    lab = netlab({"A": True})
    router = lab.rtr["A"]
    assert _routed_here(lab, router.home_ns, router.wan_ip)  # the router's, not the machine's
    assert not _routed_here(lab, lab.wan, lab.wan_ip)  # the machine's own public address
    outs = [tmp_path / f"{n}.out" for n in ("host", "j1", "j2", "host2", "j1b")]
    host_args = ["host", "--players", "3", "--hands", "2", "--port", "47630", "--no-announce",
                 "--grace-seconds", "15", "--key", str(tmp_path / "k0"),
                 "--transcript", str(tmp_path / "t0"), *COMMON]
    host = _dernier(lab, router.home_ns, tmp_path, outs[0], *host_args)
    code = _wait_for(outs[0], r"dernier join (dn1-[a-z2-7]+)", host)
    joins = []
    for k, extra in ((1, ["--listen", f"{lab.wan_ip}:47630"]), (2, ["--no-listen"])):
        joins.append(_dernier(lab, lab.wan, tmp_path, outs[k], "-v", "join", code, *extra,
                              "--name", f"J{k}", "--key", str(tmp_path / f"k{k}"),
                              "--transcript", str(tmp_path / f"t{k}"), *COMMON))
        _wait_for(outs[k], r"Seated at seat (\d)", joins[-1])  # J1 first: the next host
    _kill_after_first_move(host, tmp_path / "t0")
    _wait_for(outs[1], r"(You host the table from now on\.)", joins[0], 60)
    forget = subprocess.run(lab.cmd(router.home_ns, sys.executable, "-c", (
        "import miniupnpc; u = miniupnpc.UPnP(); u.discoverdelay = 1000; u.discover(); "
        "u.selectigd(); print(u.deleteportmapping(47630, 'TCP'))")),
        capture_output=True, text=True, timeout=30, env=_env(tmp_path))
    assert forget.stdout.strip() == "True", forget.stdout + forget.stderr
    assert _knock(lab, router.wan_ip, 47630).returncode != 0  # nothing forwards there now
    host2 = _dernier(lab, router.home_ns, tmp_path, outs[3], "-v", *host_args)
    _wait_for(outs[3], r"(Back at seat 0)", host2, 60)
    text = outs[3].read_text()
    assert (f"done (UPnP): the router forwards {router.wan_ip}:47630 to this machine again"
            in text), text
    knock = _knock(lab, router.wan_ip, 47630)
    assert knock.returncode == 0 and int(knock.stdout) > 0, knock.stderr  # forwarded again
    # J1's process dies in turn: the host, back behind its router, is the only candidate and
    # hosts again, and J1, run again with its transcript, finds it through the router.
    joins[0].kill()
    joins[0].wait(timeout=10)
    _wait_for(outs[3], r"(You host the table from now on\.)", host2, 60)
    j1b = _dernier(lab, lab.wan, tmp_path, outs[4], "-v", "join", "--transcript",
                   str(tmp_path / "t1"), "--key", str(tmp_path / "k1"), *COMMON)
    _finish([host2, joins[1], j1b], [outs[3], outs[2], outs[4]])
    again = outs[4].read_text()
    assert "Back at seat 1" in again, again
    assert "Asking your router again" not in again  # its own public address: nothing to ask
    records = _verified([tmp_path / f"t{k}" for k in range(3)], hands=2)
    changes = [(r["env"]["body"]["old"], r["env"]["body"]["new"]) for r in records
               if r["env"]["body"]["type"] == "host_change"]
    assert changes == [(0, 1), (1, 0)]
    assert records[0]["env"]["body"]["players"][0]["listen"] == [router.wan_ip, 47630]
    upnp_log = (lab.tmp / "miniupnpd-A.log").read_text()
    assert upnp_log.count("redirecting port 47630 to 192.168.10.2:47630") >= 2, upnp_log
