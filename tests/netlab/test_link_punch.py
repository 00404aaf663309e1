"""Seat links (PROTOCOL.md 4.6) through the outside relay, with real processes: a link to a
seat whose router maps nothing goes to the relay under that seat's token (4.7 step 4), and is
hole punched there as a resume is (4.7 step 5), so the relay carries none of its frames."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from dernier_p2p.net.relay import read_record
from dernier_p2p.wire.canonical import decode

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

LINK_ONLY = {"link", "probe", "present"}  # frames only a seat link carries (4.6)


def test_a_link_to_a_seat_standing_by_at_the_relay_is_hole_punched(
    natlab: Callable[[dict[str, str]], NatLab], tmp_path: Path
) -> None:
    # Three port-restricted homes, no mapping (--no-map), a relay on the Internet side that
    # records what it forwards. The host (A) dies mid-hand; B (seat 1, the next host) and C
    # stand by at the relay under their seat tokens, their listen addresses private (no route
    # from another home). In the failover C urges B with its `depose` vote over a link (7.6),
    # which can only go through the relay under B's token: it is punched, and the relay
    # forwards at most B's link challenge on that pair, never C's `link` or what follows.
    lab = natlab({"A": "port-restricted", "B": "port-restricted", "C": "port-restricted"})
    relay_at = f"{lab.wan_ip}:47640"
    outs = [tmp_path / f"{n}.out" for n in ("relay", "host", "j1", "j2")]
    relay = _dernier(lab, lab.wan, tmp_path, outs[0], "-v", "relay", "--port", "47640",
                     "--record", str(tmp_path / "relay.rec"))
    _wait_for(outs[0], r"(Relay listening)", relay)
    # (--leave play_on: the dead host's `left` does not end the match, PROTOCOL.md 7.9)
    host = _dernier(lab, lab.rtr["A"].home_ns, tmp_path, outs[1], "-v", "host", "--players",
                    "3", "--leave", "play_on", "--hands", "1", "--port", "47630",
                    "--no-announce", "--no-map", "--relay", relay_at, "--grace-seconds", "2",
                    "--key", str(tmp_path / "k0"), "--transcript", str(tmp_path / "t0"),
                    *COMMON)
    code = _wait_for(outs[1], r"dernier join (dn1-[a-z2-7]+)", host)
    joins = _join_in_seat_order(lab, tmp_path, outs[2:], code,  # B: seat 1, the next host
                                [("B", ["--no-map"]), ("C", ["--no-map"])])
    for out in outs[2:]:  # both stand by at the relay (their routers map nothing)
        _wait_for(out, r"(registered with the relay)", joins[0])
    _kill_after_first_move(host, tmp_path / "t1")  # the host dies mid-match
    _finish(joins, outs[2:])
    relay.terminate()
    relay.wait(timeout=10)
    records = _verified([tmp_path / "t1", tmp_path / "t2"], hands=1)
    changes = [r["env"]["body"] for r in records if r["env"]["body"]["type"] == "host_change"]
    assert [(c["old"], c["new"]) for c in changes] == [(0, 1)]
    logs = {name: out.read_text() for name, out in zip(("B", "C"), outs[2:], strict=True)}

    # What the relay forwarded, pair by pair (0: to the standing-by seat, 1: to the dialer).
    pairs: dict[int, list[tuple[int, dict]]] = defaultdict(list)
    for call, way, frame in read_record((tmp_path / "relay.rec").read_bytes()):
        pairs[call].append((way, decode(frame)))
    # A pair is a link's when the seat that answered it sent a link's challenge (4.6: its
    # summary named "link"; a hosting seat's challenge is the host's, 4.2).
    link_pairs = {call: frames for call, frames in pairs.items()
                  if frames and frames[0][0] == 1 and frames[0][1].get("k") == "challenge"
                  and frames[0][1]["table"].get("name") == "link"}
    shown = {call: [(w, f["k"]) for w, f in frames] for call, frames in pairs.items()}
    assert link_pairs, shown  # C's urge (at least) reached B through the relay
    kinds = {f["k"] for frames in pairs.values() for _, f in frames}
    assert not kinds & LINK_ONLY, shown  # no link anywhere stayed on the relay
    for frames in link_pairs.values():
        # the link was punched: nothing but the challenge went over the relayed pair
        assert [f["k"] for _, f in frames] == ["challenge"], shown
        # the challenge names the seat linked to (the key the dialer checks, 4.2)
        assert len(frames[0][1]["table"].get("key", b"")) == 32, frames[0][1]
    # The dialers took punched connections (C's link and resume to B, across its router),
    # and no punched connection was refused for a challenge without a key (a link's, before).
    b_wan = lab.rtr["B"].wan_ip
    after = logs["C"].split("failover (seat 1", 1)
    assert len(after) == 2 and f"connected by the punched {b_wan}:" in after[1], logs["C"]
    for text in logs.values():
        assert "carries no host key" not in text, text
