"""A seat relay reaches a seat standing by at itself (PROTOCOL.md 4.7 step 7), with real
processes and no outside relay: a table whose only seat relay is D, and whose next host, B,
stands by there. D's links to B and its resume with B after the host change go to its own
relay, at its listener's local address, unpunched; the relay pairs them with B's registration
as any other."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from .nat import NatLab
from .test_internet import (
    COMMON,
    _dernier,
    _finish,
    _join_in_seat_order,
    _kill_after_first_move,
    _verified,
    _wait_for,
)

pytestmark = pytest.mark.slow


def test_the_one_seat_relay_reaches_the_next_host_standing_by_at_itself(
    natlab: Callable[[dict[str, str]], NatLab], tmp_path: Path
) -> None:
    # Three homes, no outside relay. The host (A) maps its port by UPnP, so the joins reach
    # it there, but announces its private address (--advertise wins over the mapping): it is
    # no seat relay. B (seat 1, the next host) sits behind a port-restricted NAT and maps
    # nothing (--no-map): its listen address is private, so it stands by at the table's one
    # seat relay, D (seat 2), whose router maps its listen port by UPnP. The host dies after
    # the first move: D's `depose` vote (a link, 7.6) can reach B only through D's own relay,
    # and so can D's resume with B once B hosts; there is no other relay.
    lab = natlab({"A": "upnp", "B": "port-restricted", "D": "upnp"})
    a_home, b_home, d_wan = lab.rtr["A"].home_ip, lab.rtr["B"].home_ip, lab.rtr["D"].wan_ip
    outs = [tmp_path / f"{n}.out" for n in ("host", "j1", "j2")]
    # (--leave play_on: the dead host's `left` does not end the match, PROTOCOL.md 7.9)
    host = _dernier(lab, lab.rtr["A"].home_ns, tmp_path, outs[0], "-v", "host", "--players",
                    "3", "--leave", "play_on", "--hands", "1", "--port", "47630",
                    "--advertise", a_home, "--no-announce", "--grace-seconds", "2",
                    "--key", str(tmp_path / "k0"), "--transcript", str(tmp_path / "t0"),
                    *COMMON)
    code = _wait_for(outs[0], r"dernier join (dn1-[a-z2-7]+)", host)
    joins = _join_in_seat_order(lab, tmp_path, outs[1:], code,  # B: seat 1
                                [("B", ["--no-map"]), ("D", [])])
    relay = f"{d_wan}:47630"  # B stands by at D, the one seat relay
    _wait_for(outs[1], rf"at the seat relay ({re.escape(relay)}): registered", joins[0])
    _kill_after_first_move(host, tmp_path / "t1")  # the host dies mid-match
    _finish(joins, outs[1:], limit=240)
    records = _verified([tmp_path / "t1", tmp_path / "t2"], hands=1)
    players = records[0]["env"]["body"]["players"]
    assert players[0]["listen"] == [a_home, 47630], players  # --advertise, not the mapping
    assert players[1]["listen"] == [b_home, 47630], players  # no mapping: private
    assert players[2]["listen"] == [d_wan, 47630], players  # D's mapping: the seat relay
    changes = [r["env"]["body"] for r in records if r["env"]["body"]["type"] == "host_change"]
    assert [(c["old"], c["new"]) for c in changes] == [(0, 1)]
    d_log = outs[2].read_text()
    after = d_log.split("seat 2: failover (seat 1", 1)
    assert len(after) == 2, d_log
    # D's links to B after the host died: through its own seat relay, at its local address
    ways = re.findall(r"seat 2: link to seat 1 by the ([^\n]+)", after[1])
    assert ways, d_log
    assert all(w.endswith("this seat's own seat relay") and w.startswith("seat 127.0.0.1:")
               for w in ways), ways
    # and its resume with B, the new host, the same way
    resumes = re.findall(r"connected by the ([^\n]+)", after[1])
    assert resumes and all(r.startswith("seat 127.0.0.1:") and
                           r.endswith("this seat's own seat relay") for r in resumes), resumes
    for text in (d_log, outs[1].read_text()):
        assert "carries no host key" not in text, text
