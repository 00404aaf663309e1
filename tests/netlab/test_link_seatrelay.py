"""Seat links (PROTOCOL.md 4.6) through a seat relay (4.7 step 7), with real processes and no
outside relay at all: a link to a seat whose router maps nothing goes to the table's seat
relays under that seat's token, where it stands by, as a resume or a new host is reached."""

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


def test_a_depose_vote_reaches_a_next_host_behind_nat_through_a_seat_relay(
    natlab: Callable[[dict[str, str]], NatLab], tmp_path: Path
) -> None:
    # Five homes, no outside relay. The host (A) maps its port by UPnP: the joins reach it
    # there, and record 0 lists that mapping as its listen address, as a joining seat with a
    # mapping announces its own, so A is a seat relay too (until it dies). B (seat 1, the
    # next host) and C (seat 2) sit behind port-restricted NATs and map nothing (--no-map):
    # their listen addresses are private, so they stand by at the table's seat relays, A,
    # D (seat 3) and E (seat 4), whose routers map their listen ports by UPnP (global
    # addresses in the lab's 11.22.33.0/24). D reaches B through E, or through its own relay
    # (tried last, at its listener's local address, 4.7 step 7), and E through D or its own.
    # The host dies mid-hand; in the failover C, D and E urge B with their `depose` votes
    # over links (7.6), which can only go through a seat relay under B's token (punched
    # there, or carried by it): B takes over.
    lab = natlab({"A": "upnp", "B": "port-restricted", "C": "port-restricted", "D": "upnp",
                  "E": "upnp"})
    outs = [tmp_path / f"{n}.out" for n in ("host", "j1", "j2", "j3", "j4")]
    # (--leave play_on: the dead host's `left` does not end the match, PROTOCOL.md 7.9)
    host = _dernier(lab, lab.rtr["A"].home_ns, tmp_path, outs[0], "-v", "host", "--players",
                    "5", "--leave", "play_on", "--hands", "1", "--port", "47630",
                    "--no-announce", "--grace-seconds", "2", "--key", str(tmp_path / "k0"),
                    "--transcript", str(tmp_path / "t0"), *COMMON)
    code = _wait_for(outs[0], r"dernier join (dn1-[a-z2-7]+)", host)
    joins = _join_in_seat_order(lab, tmp_path, outs[1:], code,  # B: seat 1, the next host
                                [("B", ["--no-map"]), ("C", ["--no-map"]), ("D", []),
                                 ("E", [])])
    a_wan, b_wan, d_wan, e_wan = (lab.rtr[x].wan_ip for x in "ABDE")
    seat_relays = {f"{a_wan}:47630", f"{d_wan}:47630", f"{e_wan}:47630"}
    # B and C stand by at the seat relays (D's and E's listen addresses are global)
    for out, proc in ((outs[1], joins[0]), (outs[2], joins[1])):
        for where in sorted(seat_relays):
            _wait_for(out, rf"at the seat relay ({re.escape(where)}): registered", proc)
    _kill_after_first_move(host, tmp_path / "t1")  # the host dies mid-match
    _finish(joins, outs[1:], limit=240)
    records = _verified([tmp_path / f"t{k}" for k in range(1, 5)], hands=1)
    players = records[0]["env"]["body"]["players"]
    assert players[0]["listen"] == [a_wan, 47630], players  # the host's mapping
    for seat, x in ((1, "B"), (2, "C")):  # no way in: private addresses
        assert players[seat]["listen"] == [lab.rtr[x].home_ip, 47630], players
    assert players[3]["listen"] == [d_wan, 47630] and players[4]["listen"] == [e_wan, 47630]
    changes = [r["env"]["body"] for r in records if r["env"]["body"]["type"] == "host_change"]
    assert [(c["old"], c["new"]) for c in changes] == [(0, 1)]
    logs = {x: out.read_text() for x, out in zip("BCDE", outs[1:], strict=True)}

    def links_to_b(x: str, seat: int) -> list[str]:
        """How seat ``seat`` (home ``x``) made its links to seat 1 after the host died: each
        a route of its Dialer (and, for a punched one, the seat relay it was punched at)."""
        after = logs[x].split(f"seat {seat}: failover (seat 1", 1)
        assert len(after) == 2, logs[x]
        return re.findall(rf"seat {seat}: link to seat 1 by the ([^\n]+)", after[1])

    # C's links to B: through a seat relay, D's or E's (carried by it, or punched there to
    # B's router; A's died with it): there is no other relay, and B's listen address is
    # private
    ways = links_to_b("C", 2)
    assert ways, logs["C"]
    for way in ways:
        assert way.rsplit(", at the ", 1)[-1] in {f"seat {d_wan}:47630",
                                                   f"seat {e_wan}:47630"}, ways
        assert way.startswith(("seat ", f"punched {b_wan}:")), ways
    # D's and E's: through the other one's seat relay, or their own (at a local address)
    own = "this seat's own seat relay"
    for x, seat, other in (("D", 3, e_wan), ("E", 4, d_wan)):
        ways = links_to_b(x, seat)
        assert ways and all(w.endswith((f"seat {other}:47630", own)) for w in ways), logs[x]
        assert all(w.startswith("seat 127.0.0.1:") for w in ways if w.endswith(own)), ways
    for text in logs.values():
        assert "carries no host key" not in text, text
