"""Seat links against a hostile host, over loopback TCP (PROTOCOL.md 4.6, 7.5 ``lend``): a host
that sends one seat nothing cannot get it timed out (the others lend it the records over links
and its moves reach the host), and a host that shows one seat a record the others never get
cannot either (the seat's proof, lent over links, stops every seat naming the host)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio

from dernier_p2p.net.host import Host
from dernier_p2p.net.peer import Peer
from dernier_p2p.net.timers import Timers
from dernier_p2p.protocol.envelope import make_record
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.liveness.budgets import BEAT_MS
from dernier_p2p.protocol.node.hosting import Hosting
from dernier_p2p.protocol.node.peer import PeerNode
from dernier_p2p.protocol.verify import check_records
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
    this seat held already (its last index, and its moves after the cut); and every frame that
    came from the host while it held records past the cut before that one (lent: the host was
    meant to be mute then)."""

    cut: int | None = None
    first_from_host: tuple[int, int] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.while_lent: list[str] = []

    def from_host(self, msg: dict[str, Any], now: int) -> None:
        rec = msg.get("rec") if msg.get("k") == "rec" else None
        cut = type(self).cut
        if cut is not None and self.first_from_host is None and self.own is not None:
            if rec is not None and rec.get("i", -1) >= cut:
                mine = [r for r in self.own.records[cut:] if r["env"]["seat"] == self.own.seat
                        and r["env"]["body"]["type"] == "move"]
                self.first_from_host = (self.own.last, len(mine))
            elif self.own.last >= cut:
                self.while_lent.append(msg["k"])
        super().from_host(msg, now)


class Told(Peer):
    node_cls = TellsWhatTheHostSent


async def test_a_seat_its_host_mutes_is_lent_the_records_and_plays_on(tmp_path: Path) -> None:
    """Four seats, every one listening. From the first move in play the host sends seat 2 no
    frame at all (no record, status or beat) until two of its moves are sequenced: the others
    probe it at its limits, find it short of the record that began the wait, lend it the
    records over links and feed it on; it plays (its moves reach the host) before the host
    sends it anything again. Nobody votes it out, and the match ends, the same for every
    seat."""
    TellsWhatTheHostSent.cut = None

    async def no_beats_to_seat_2(table: Any) -> None:
        # (from the start: the records the host sends it before the mute reset its sender's
        # wait, so no beat is already timed when the mute begins)
        host = table.host
        conn = host.driver.seat_conns[MUTED]
        conn.beat_s = None
        await wait_for(lambda: host.hosting.cut is not None, 30)
        TellsWhatTheHostSent.cut = host.hosting.cut
        await wait_for(lambda: host.hosting.unmuted is not None or host.stopped, 30)
        conn.beat_s = BEAT_MS / 1000

    timers = Timers(turn_ms=1_000, declare_ms=30, grace_ms=1_000)
    table = await play(tmp_path, 4, host_cls=MuteToSeat2, peer_cls={MUTED: Told}, listen=True,
                       timers=timers, watch=no_beats_to_seat_2, limit=60)
    assert not table.errors, table.errors
    hosting = table.host.hosting
    assert hosting.cut is not None and hosting.unmuted is not None
    assert hosting.moves >= 1, "seat 2's moves reached the host while it was muted"
    node = table.peers[MUTED].driver.node
    assert node.first_from_host is not None
    held, moved = node.first_from_host
    assert held > hosting.cut and moved >= 1  # over links: the host had sent nothing since
    assert node.while_lent == []
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


VICTIM = 1


class ShowsSeat1AnotherRecordHosting(Hosting):
    """At the first move in play of a seat other than seat 1, sends seat 1 (only) another
    record for that index, signed by the host: ``forged``, the envelope with a signature its
    author never made; ``second``, the same envelope at another time (an equivocation). It
    hosts honestly otherwise (seat 1 gets every later record as the others do)."""

    how = "forged"
    shown: dict[str, Any] | None = None

    def relay_to(self, seat: int, rec: dict[str, Any]) -> dict[str, Any] | None:
        env = rec["env"]
        if seat != VICTIM or self.shown is not None or env["body"]["type"] != "move" or \
                env["seat"] == VICTIM:
            return rec
        t = rec["t"]
        if self.how == "forged":
            env = dict(env, sig=bytes([env["sig"][0] ^ 1]) + env["sig"][1:])
        else:
            t += 1
        self.shown = make_record(self.identity, env, rec["h"], rec["i"], rec["prev"], t)
        return self.shown


def showing(how: str) -> type[Host]:
    hosting = type(f"Shows{how.title()}Hosting", (ShowsSeat1AnotherRecordHosting,),
                   {"how": how})
    return type(f"Shows{how.title()}", (Host,), {"hosting_cls": hosting})


class LendLost(Peer):
    """An honest seat that no link reaches (its listener serves no link: a lend to it fails,
    and the lender knows): what another seat proves reaches it only as the ``proof`` of a
    ``present`` it asks for, from a seat that lingers because its lend failed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.driver.serve_links_on = lambda: None  # type: ignore[method-assign]


class NoAddress(Peer):
    """An honest seat that gives no address (no ``listen``): nothing is lent to it, so it sees
    another seat's proof only as the ``proof`` of a ``present`` it asks for, from a seat that
    lingers until the seats it could not lend to have probed it (4.6)."""

    def __init__(self, key: Any, address: Any, agent: Any, config: Any) -> None:
        super().__init__(key, address, agent, replace(config, listen=None))


@pytest.mark.parametrize("delivery", ["lent", "shown", "no-address"])
@pytest.mark.parametrize("how", ["forged", "second"])
async def test_a_record_the_host_shows_one_seat_only_stops_every_seat_naming_it(
    tmp_path: Path, how: str, delivery: str,
) -> None:
    """Four seats, every one listening, short timers. The host sends seat 1 alone a record for
    an index in play that no other seat gets (an envelope its author never signed, or a second
    record for the index): seat 1 stops on it naming the host and keeps the evidence; the
    other seats get it from seat 1, lent at once over a link (or, their lends lost, as the
    proof of its ``present`` when they probe it at its limit, as when they give no address and
    nothing can be lent to them), and stop on it naming the host too, with that record as their
    evidence. No record times seat 1 out or takes it off."""
    stops: dict[int, ProtocolError] = {}

    async def until_the_seats_stop(table: Any) -> None:
        def stopped() -> bool:
            return all(s in table.peers and table.peers[s].driver.stopped is not None
                       for s in (1, 2, 3))

        await wait_for(stopped, 40)
        stops.update({s: table.peers[s].driver.stopped for s in (1, 2, 3)})
        await trio.sleep(0.5)  # (each would show its proof for ``stuck_ms`` more)
        for scope in table.scopes.values():
            scope.cancel()

    peers = {"shown": {2: LendLost, 3: LendLost},
             "no-address": {2: NoAddress, 3: NoAddress}}.get(delivery)
    timers = Timers(turn_ms=1_000, declare_ms=30, grace_ms=1_000)
    table = await play(tmp_path, 4, host_cls=showing(how), peer_cls=peers, listen=True,
                       timers=timers, watch=until_the_seats_stop, limit=60)
    for seat, err in table.errors.items():  # (a seat whose lends all went out ends at once)
        assert seat in (1, 2, 3) and isinstance(err, ProtocolError) and err.seat == 0, err
    shown = table.host.hosting.shown
    assert shown is not None
    first = {"forged": "BAD_SIGNATURE", "second": "BAD_CHAIN"}[how]
    assert (stops[1].code, stops[1].seat) == (first, 0)
    others = ("FORK", "BAD_SIGNATURE") if how == "forged" else ("FORK",)
    for seat in (2, 3):
        assert stops[seat].code in others and stops[seat].seat == 0, stops[seat]
    for seat in (1, 2, 3):  # what each shows as its ``present``'s proof: the host's record
        assert table.peers[seat].driver.node.proof == shown
    got = transcripts(tmp_path, range(4))
    i = shown["i"]
    for seat in (1, 2, 3):
        assert got[seat][:i] == got[0][:i]
        assert shown in got[seat]  # kept: the evidence
        verdict = check_records(got[seat])
        assert not verdict.ok and verdict.seat == 0, (seat, verdict)
    assert got[2][-1] == got[3][-1] == shown
    # seat 1 tells its player that it keeps answering, and why, when it must wait for probes
    told = [n for n in table.peers[1].driver.me.notices if n.kind == "showing-proof"]
    assert len(told) == (0 if delivery == "lent" else 1), told
    assert all(str(stops[1]) == n.detail and n.ms > 0 for n in told)
    for seat in range(4):
        out = [r["env"]["body"] for r in got[seat] if r["env"]["body"]["type"] in
               ("timeout", "left")]
        assert all(b["seat"] != VICTIM for b in out), (seat, out)
