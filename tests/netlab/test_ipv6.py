"""IPv6 pairs and the truth about a code, with real parts: namespaces, NAT, a stateful IPv6
firewall (nftables), ``dernier`` as processes.

A host with a global IPv6 address offers it first in its code; joiners in an IPv6-only home
and in a dual-stack home, both behind their routers' firewalls, reach it over IPv6 and
announce their own global addresses for a host change, which the firewalls keep closed to the
Internet. A host behind a router without UPnP says before anyone tries that nobody outside its
network can use its code: a player on its network joins, one on the Internet cannot.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dernier_p2p.net.invite import decode

from .lab import Lab
from .test_internet import COMMON, _dernier, _env, _finish, _verified, _wait_for
from .v6 import add_ipv6, wan_ipv6

pytestmark = pytest.mark.slow


def test_an_ipv6_pair_plays_through_stateful_firewalls_ipv6_first(
    netlab: Callable[[dict[str, bool]], Lab], tmp_path: Path
) -> None:
    lab = netlab({"A": False, "B": False})
    only6 = add_ipv6(lab, "A", only=True)  # an IPv6-only home
    dual = add_ipv6(lab, "B")  # IPv4 behind NAT and IPv6 behind the firewall
    outs = [tmp_path / f"{n}.out" for n in ("host", "a", "b")]
    host = _dernier(lab, lab.wan, tmp_path, outs[0], "host", "--players", "3", "--hands", "1",
                    "--port", "47630", "--no-announce",
                    "--key", str(tmp_path / "k0"), "--transcript", str(tmp_path / "t0"),
                    *COMMON)
    code = _wait_for(outs[0], r"dernier join (dn1-[a-z2-7]+)", host)
    routes = decode(code).routes
    v6 = f"[{wan_ipv6(lab)}]:47630"
    assert [r.where for r in routes] == [v6, f"{lab.wan_ip}:47630"], routes
    said = outs[0].read_text()
    assert f"This code holds: {v6} (IPv6: your network, and the Internet" in said, said
    assert f"Reachable from the Internet only over IPv6, at {v6}" in said, said
    joins = []
    for k, x in enumerate("AB"):  # A joins first: seat 1
        joins.append(_dernier(lab, lab.rtr[x].home_ns, tmp_path, outs[1 + k], "join", code,
                              "--name", f"J{x}", "--key", str(tmp_path / f"k{k + 1}"),
                              "--transcript", str(tmp_path / f"t{k + 1}"), *COMMON))
        _wait_for(outs[1 + k], r"Seated at seat (\d)", joins[-1])
    for out in outs[1:]:  # B could have used IPv4 (the host's address is on its Internet)
        text = out.read_text()
        assert f"connected directly at {v6} (IPv6)" in text, text
        assert "no pinhole (PCP: " in text  # a router without PCP refuses at once
    assert "players with IPv6, at" in outs[1].read_text()  # for whom A can take over
    # The firewalls drop a new connection from the Internet to the seats' listen ports.
    for home in (only6, dual):
        knock = subprocess.run(lab.cmd(lab.wan, sys.executable, "-c", (
            f"import socket; socket.create_connection(('{home}', 47630), 2)")),
            capture_output=True, text=True, timeout=30)
        assert knock.returncode != 0 and "timed out" in knock.stderr, knock.stderr
    _finish([host, *joins], outs)
    records = _verified([tmp_path / f"t{k}" for k in range(3)], hands=1)
    players = records[0]["env"]["body"]["players"]
    assert players[0]["listen"] == [wan_ipv6(lab), 47630]  # the host's too (no public IPv4)
    assert players[1]["listen"] == [only6, 47630]  # each seat announces its global address
    assert players[2]["listen"] == [dual, 47630]


def test_a_host_behind_a_router_without_upnp_says_its_code_works_only_on_its_network(
    netlab: Callable[[dict[str, bool]], Lab], tmp_path: Path
) -> None:
    lab = netlab({"A": False})
    router = lab.rtr["A"]
    outs = [tmp_path / "host.out", tmp_path / "lan.out"]
    host = _dernier(lab, router.home_ns, tmp_path, outs[0], "host", "--players", "2",
                    "--hands", "1", "--port", "47630", "--no-announce",
                    "--key", str(tmp_path / "k0"), "--transcript", str(tmp_path / "t0"),
                    *COMMON)
    code = _wait_for(outs[0], r"dernier join (dn1-[a-z2-7]+)", host)
    said = outs[0].read_text()
    assert "no router mapping (UPnP: no UPnP router answered; NAT-PMP:" in said, said
    truth = (f"This code holds: {router.home_ip}:47630 (your network only).\n"
             "No route from the Internet: only players on your network can join. For others, "
             "forward TCP port 47630 on your router to this machine, or add --relay HOST:PORT")
    assert truth in said, said
    assert said.index(truth) < said.index(code)  # said before the code
    # Nobody on the Internet can use it...
    started = time.monotonic()
    outside = subprocess.run(lab.cmd(lab.wan, sys.executable, "-m", "dernier_p2p", "join", code,
                                     "--key", str(tmp_path / "k9"), *COMMON),
                             capture_output=True, text=True, timeout=60, env=_env(tmp_path))
    assert outside.returncode == 1 and "UNREACHABLE" in outside.stderr, outside.stderr
    assert time.monotonic() - started < 40
    # ...and a player on the host's network (the router's own LAN side) joins and plays.
    lan = _dernier(lab, router.ns, tmp_path, outs[1], "join", code, "--key",
                   str(tmp_path / "k1"), "--transcript", str(tmp_path / "t1"), *COMMON)
    _finish([host, lan], outs)
    assert f"connected directly at {router.home_ip}:47630" in outs[1].read_text()
    _verified([tmp_path / "t0", tmp_path / "t1"], hands=1)


def _host_in_a(lab: Lab, tmp_path: Path, out: Path, where: str, method: str
               ) -> tuple[Any, str]:
    """A two-seat, one-hand host in home A on port 47630, which must say that its router's
    firewall lets the Internet in at ``where`` by ``method``: its process and invite code."""
    host = _dernier(lab, lab.rtr["A"].home_ns, tmp_path, out, "host", "--players", "2",
                    "--hands", "1", "--port", "47630", "--no-announce",
                    "--key", str(tmp_path / "k0"), "--transcript", str(tmp_path / "t0"),
                    *COMMON)
    code = _wait_for(out, r"dernier join (dn1-[a-z2-7]+)", host)
    said = out.read_text()
    assert f"done ({method}): the Internet reaches {where}" in said, said
    assert (f"Reachable from the Internet over IPv6 at {where} (your router's firewall lets "
            f"it in: {method}); players without IPv6 cannot join") in said, said
    return host, code


def test_two_ipv6_homes_open_their_routers_firewalls_by_pcp_and_play_directly(
    netlab: Callable[[dict[str, bool]], Lab], tmp_path: Path
) -> None:
    """Two IPv6-only homes, each behind a router with miniupnpd (PCP) and a stateful
    firewall. The host asks for a pinhole to its port and says its code is reachable over
    IPv6; the joiner asks for one to its listen port (a candidate host), plays through the
    host's pinhole, and the Internet reaches its seat through its own; both pinholes are
    closed with the table."""
    lab = netlab({"A": True, "B": True})
    home = add_ipv6(lab, "A", only=True)
    seat = add_ipv6(lab, "B", only=True)
    where = f"[{home}]:47630"
    outs = [tmp_path / "host.out", tmp_path / "join.out"]
    host, code = _host_in_a(lab, tmp_path, outs[0], where, "PCP")
    assert [r.where for r in decode(code).routes] == [where]
    join = _dernier(lab, lab.rtr["B"].home_ns, tmp_path, outs[1], "join", code, "--key",
                    str(tmp_path / "k1"), "--transcript", str(tmp_path / "t1"), *COMMON)
    _wait_for(outs[1], r"Seated at seat (\d)", join)
    joined = outs[1].read_text()
    assert f"connected directly at {where} (IPv6)" in joined, joined
    assert f"done (PCP): the Internet reaches [{seat}]:47630" in joined, joined
    knock = subprocess.run(lab.cmd(lab.wan, sys.executable, "-c", (
        f"import socket; s = socket.create_connection(('{seat}', 47630), 5); s.settimeout(5); "
        "print(len(s.recv(64)))")), capture_output=True, text=True, timeout=30)
    assert knock.returncode == 0 and int(knock.stdout) > 0, knock.stderr  # its link challenge
    _finish([host, join], outs)
    records = _verified([tmp_path / "t0", tmp_path / "t1"], hands=1)
    assert records[0]["env"]["body"]["players"][1]["listen"] == [seat, 47630]
    for name, address in (("A", home), ("B", seat)):
        log = (lab.tmp / f"miniupnpd-{name}.log").read_text()
        assert f"PCP MAP: added mapping TCP 47630->{address}:47630" in log, log
        rules = subprocess.run(lab.cmd(lab.rtr[name].ns, "nft", "list", "chain", "inet",
                                       "filter", "miniupnpd"), capture_output=True,
                               text=True).stdout
        assert "dport 47630" not in rules, rules  # closed with the table


def test_a_host_opens_its_routers_ipv6_firewall_by_upnp_where_the_router_has_no_pcp(
    netlab: Callable[[dict[str, bool]], Lab], tmp_path: Path
) -> None:
    """An IPv6-only home behind a router whose miniupnpd answers UPnP only (no PCP): the host
    finds the router's IPv6 firewall control by SSDP over IPv6, opens a pinhole there
    (IGDv2 AddPinhole), says so, and a joiner on the Internet plays through it; the pinhole
    is deleted with the table."""
    lab = netlab({"A": True})
    home = add_ipv6(lab, "A", only=True, pcp=False)
    where = f"[{home}]:47630"
    outs = [tmp_path / "host.out", tmp_path / "join.out"]
    host, code = _host_in_a(lab, tmp_path, outs[0], where, "UPnP")
    join = _dernier(lab, lab.wan, tmp_path, outs[1], "join", code, "--key",
                    str(tmp_path / "k1"), "--transcript", str(tmp_path / "t1"), *COMMON)
    _finish([host, join], outs)
    assert f"connected directly at {where} (IPv6)" in outs[1].read_text(), outs[1].read_text()
    _verified([tmp_path / "t0", tmp_path / "t1"], hands=1)
    log = (lab.tmp / "miniupnpd-A.log").read_text()
    assert f"AddPinhole: (inbound) from []:0 to [{home}]:47630 with proto 6" in log, log
    assert "DeletePinhole" in log, log
    assert "PCP MAP" not in log, log  # not asked that way: the router does not answer it
    rules = subprocess.run(lab.cmd(lab.rtr["A"].ns, "nft", "list", "chain", "inet", "filter",
                                   "miniupnpd"), capture_output=True, text=True).stdout
    assert "dport 47630" not in rules, rules  # closed with the table


def test_an_ipv6_table_survives_its_hosts_loss_through_a_seats_pinhole(
    netlab: Callable[[dict[str, bool]], Lab], tmp_path: Path
) -> None:
    """The host (on the Internet side) dies mid-match; seat 1, in an IPv6-only home whose
    router opened a pinhole to its listen port by PCP, takes over, and seat 2 (another such
    home) reaches it at the IPv6 address record 0 announced: no relay anywhere."""
    from .test_internet import _kill_after_first_move

    lab = netlab({"A": True, "B": True})
    homes = [add_ipv6(lab, x, only=True) for x in "AB"]
    outs = [tmp_path / f"{n}.out" for n in ("host", "j1", "j2")]
    # (the dead host never comes back: --leave play_on keeps the table playing after
    # its `left`, which in dernier would end the match, PROTOCOL.md 7.9)
    host = _dernier(lab, lab.wan, tmp_path, outs[0], "host", "--players", "3", "--hands", "1",
                    "--leave", "play_on",
                    "--port", "47630", "--no-announce", "--grace-seconds", "2",
                    "--key", str(tmp_path / "k0"), "--transcript", str(tmp_path / "t0"),
                    *COMMON)
    code = _wait_for(outs[0], r"dernier join (dn1-[a-z2-7]+)", host)
    joins = []
    for k, x in enumerate("AB"):  # A joins first: seat 1, the next host
        joins.append(_dernier(lab, lab.rtr[x].home_ns, tmp_path, outs[1 + k], "-v", "join",
                              code, "--name", f"J{x}", "--key", str(tmp_path / f"k{k + 1}"),
                              "--transcript", str(tmp_path / f"t{k + 1}"), *COMMON))
        _wait_for(outs[1 + k], r"Seated at seat (\d)", joins[-1])
        assert f"done (PCP): the Internet reaches [{homes[k]}]:47630" in outs[1 + k].read_text()
    _kill_after_first_move(host, tmp_path / "t1")  # the host dies mid-match
    _finish(joins, outs[1:])
    records = _verified([tmp_path / "t1", tmp_path / "t2"], hands=1)
    players = records[0]["env"]["body"]["players"]
    assert [p["listen"] for p in players[1:]] == [[h, 47630] for h in homes]
    changes = [r["env"]["body"] for r in records if r["env"]["body"]["type"] == "host_change"]
    assert [(c["old"], c["new"]) for c in changes] == [(0, 1)]
    after = outs[2].read_text().split("failover (seat 1", 1)  # B turns to A, the next host
    assert len(after) == 2 and f"connected by the direct [{homes[0]}]:47630" in after[1], outs[2]
