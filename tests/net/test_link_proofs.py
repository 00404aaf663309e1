"""Seat links against a hostile host, over loopback TCP (PROTOCOL.md 4.6, 7.5 ``lend``): a host
that sends one seat nothing cannot get it timed out (the others lend it the records over links
and its moves reach the host), and a host that shows one seat a record the others never get
cannot either (the seat's proof, lent over links, stops every seat naming the host)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from dernier_p2p.net.host import Host
from dernier_p2p.net.peer import Peer
from dernier_p2p.net.timers import Timers
from dernier_p2p.protocol.liveness.budgets import BEAT_MS
from dernier_p2p.protocol.node.hosting import Hosting
from dernier_p2p.protocol.node.peer import PeerNode
from dernier_p2p.rules import Phase

from .helpers import play, same_result, transcripts, verify, wait_for

MUTED = 2
MUTE_MS = 9_000
"""The longest mute: below the 15 s after which a seat closes a silent host connection (the
host sends no beat either), so what is tested is the lend, not a resume."""
MOVES_MUTED = 2
"""The mute ends once this many moves of the muted seat are sequenced during it."""


class MuteToSeat2Hosting(Hosting):
    """From the first move in play, sends seat 2 nothing (no record, status, ready, error) until
    ``MOVES_MUTED`` of its moves are sequenced (or ``MUTE_MS`` pass); then, like a connection
    that was only slow, the records from the first one it held back on, in order."""

    cut: int | None = None  # the first record held back
    muted_at: int | None = None
    unmuted: int | None = None  # the index of the first record sent after the mute
    moves: int = 0  # moves of seat 2 sequenced during the mute

    def _send(self, conn: int, frame: dict[str, Any]) -> None:
        rec = frame.get("rec") if frame.get("k") == "rec" else None
        if rec is not None and self.cut is None and rec["env"]["body"]["type"] == "move":
            assert self.own is not None and self.own.session.state.phase is Phase.PLAY
            self.cut, self.muted_at = rec["i"], self._now
        if conn != MUTED or self.cut is None or self.unmuted is not None:
            super()._send(conn, frame)
            return
        if self.moves < MOVES_MUTED and self._now - (self.muted_at or 0) < MUTE_MS:
            return  # held back, never to be sent
        self.unmuted = rec["i"] if rec is not None else len(self.records)
        for held in self.records[self.cut:]:
            super()._send(conn, {"k": "rec", "rec": held})
        super()._send(conn, frame)

    def _publish(self, rec: dict[str, Any], out: list[dict[str, Any]] | None, now: int) -> None:
        env = rec["env"]
        if self.cut is not None and self.unmuted is None and env["seat"] == MUTED and \
                env["body"]["type"] == "move":
            self.moves += 1
        super()._publish(rec, out, now)


class MuteToSeat2(Host):
    hosting_cls = MuteToSeat2Hosting


class TellsWhatTheHostSent(PeerNode):
    """Notes, at the first record at or past the mute's ``cut`` that comes from the host, what
    this seat held already (its last index, and its moves after the cut)."""

    cut: int | None = None
    first_from_host: tuple[int, int] | None = None

    def from_host(self, msg: dict[str, Any], now: int) -> None:
        rec = msg.get("rec") if msg.get("k") == "rec" else None
        cut = type(self).cut
        if rec is not None and cut is not None and rec.get("i", -1) >= cut and \
                self.first_from_host is None and self.own is not None:
            mine = [r for r in self.own.records[cut:] if r["env"]["seat"] == self.own.seat
                    and r["env"]["body"]["type"] == "move"]
            self.first_from_host = (self.own.last, len(mine))
        super().from_host(msg, now)


class Told(Peer):
    node_cls = TellsWhatTheHostSent


async def test_a_seat_its_host_mutes_is_lent_the_records_and_plays_on(tmp_path: Path) -> None:
    """Four seats, every one listening. From the first move in play the host sends seat 2 no
    frame at all (no record, no beat) until two of its moves are sequenced: the others probe
    it at its limits, find it short of the record that began the wait, lend it the records
    over links and feed it on; it plays (its moves reach the host) before the host sends it
    anything again. Nobody votes it out, and the match ends, the same for every seat."""
    TellsWhatTheHostSent.cut = None
    beats: list[float | None] = []

    async def mute_beats_too(table: Any) -> None:
        hosting = table.host.hosting
        await wait_for(lambda: hosting.cut is not None, 30)
        TellsWhatTheHostSent.cut = hosting.cut
        conn = table.host.driver.seat_conns[MUTED]
        beats.append(conn.beat_s)
        conn.beat_s = None  # (a beat already timed may still go: its sender waits on it)
        await wait_for(lambda: hosting.unmuted is not None or table.host.stopped, 30)
        conn.beat_s = BEAT_MS / 1000

    timers = Timers(turn_ms=1_000, declare_ms=30, grace_ms=1_000)
    table = await play(tmp_path, 4, host_cls=MuteToSeat2, peer_cls={MUTED: Told}, listen=True,
                       timers=timers, watch=mute_beats_too, limit=60)
    assert not table.errors, table.errors
    hosting = table.host.hosting
    assert hosting.cut is not None and hosting.unmuted is not None
    assert hosting.moves >= 1, "seat 2's moves reached the host while it was muted"
    node = table.peers[MUTED].driver.node
    assert node.first_from_host is not None
    held, moved = node.first_from_host
    assert held > hosting.cut and moved >= 1  # over links: the host had sent nothing since
    assert table.peers[MUTED].resumes == 0  # its host connection stayed up, silent
    got = transcripts(tmp_path, range(4))
    assert got[0] == got[1] == got[2] == got[3]
    bodies = [r["env"]["body"] for r in got[0]]
    kinds = [b["type"] for b in bodies]
    assert not {"timeout", "left", "no_contest", "host_change"} & set(kinds), kinds
    late = [r for r in got[0][hosting.cut:] if r["env"]["seat"] == MUTED
            and r["env"]["body"]["type"] == "move"]
    assert late
    audit = verify(got[0])
    assert not audit.summary.no_contest
    for seat in range(4):
        assert same_result(table.results[seat], audit)
