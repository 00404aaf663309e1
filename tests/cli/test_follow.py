"""What a player reads about drops, returns and a new host (cli/follow.py)."""

from __future__ import annotations

import random

import trio
import trio.testing

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.cli.follow import (
    Narrator,
    countdown_line,
    notice_line,
    presence_line,
    session_notice,
)
from dernier_p2p.net.seat import LocalSeat, Notice, Presence
from dernier_p2p.protocol.envelope import genesis_hash, sign_envelope
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.local import LocalTable, play_round
from dernier_p2p.protocol.node.own import OwnSeat
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.protocol.session import SessionEvent
from dernier_p2p.wire.hashing import digest
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.version import PROTOCOL_VERSION

NAMES = ["Ann", "Bea", "Cid"]


def test_a_drop_and_a_return_of_another_seat() -> None:
    drop = Presence(1, "dropped", 60_000, 100.0)
    assert presence_line(drop, NAMES, 0) == "Bea lost connection — waiting 60 s (reconnecting…)"
    assert presence_line(Presence(1, "back", 0, 130.0), NAMES, 0) == "Bea is back."


def test_this_seat_losing_the_host_is_told_in_the_second_person() -> None:
    drop = Presence(2, "dropped", 15_000, 0.0)
    assert presence_line(drop, NAMES, 2) == (
        "Connection to the host lost — reconnecting (up to 15 s)…"
    )
    assert presence_line(Presence(2, "back", 0, 3.0), NAMES, 2) == "Reconnected to the table."


def test_what_the_liveness_core_tells_is_worded_for_the_player() -> None:
    """Every notice of a host lost and replaced, in the words a player reads (Bea's screen,
    seat 1; Ann, seat 0, was the host)."""

    def line(kind: str, seat: int | None, ms: int = 0, detail: str = "") -> str | None:
        return notice_line(Notice(kind, seat, ms, 0.0, detail), NAMES, 1, 0)

    assert line("host-lost", 0, 3_000) == (
        "Connection to the host (Ann) lost — reconnecting (up to 3 s)…")
    assert line("reconnected", 0) == "Reconnected to the table."
    # a failover says what this seat knows, by its rule: not that the host is gone for all
    assert line("failover", 2, 6_000, "gone") == (
        "No connection to the host (Ann): voting for Cid to host (up to 6 s)…")
    assert line("failover", 1, 6_000, "gone") == (
        "No connection to the host (Ann): this seat hosts if most seats vote for it (up to 6 s)…")
    assert line("failover", 2, 6_000, "censored") == (
        "The host (Ann) holds back a message it was given: voting for Cid to host (up to 6 s)…")
    assert line("failover", 2, 6_000, "host-late") == (
        "The host (Ann) is past its own time limit: voting for Cid to host (up to 6 s)…")
    assert line("host-kept", 0, 0, "failover") == (
        "The host (Ann) moves the table on again: staying with it.")
    assert line("trying", 2, 6_000) == "Trying Cid as the new host (up to 6 s)…"
    assert line("trying", 0, 6_000) == "Trying the host (Ann) again (up to 6 s)…"
    assert line("new-host", 2) == "Reconnected to Cid, the new host."
    assert line("taking-over", 1) == "Taking over as host: the other seats are coming here…"
    assert line("step-back", 1) == "Not enough seats came to host here: trying the next seat…"
    assert line("looking", None, 90_000) == (
        "Looking for the seat that hosts the table now (up to 90 s)…")
    assert line("ended", None, 0, "no seat took over as host") == (
        "The match ends here for this seat: no seat took over as host.")
    assert line("hosting", 1) is None  # the host change's own line says it
    assert line("showing-proof", None, 240_000, "FORK (seat 0): two records for index 87") == (
        "The match is stopped: FORK (seat 0): two records for index 87. This seat keeps "
        "answering the other seats for up to 240 s, so that those it could not reach see the "
        "proof when they ask (Ctrl-C leaves now).")


def test_the_countdown_counts_down_and_stops_at_zero() -> None:
    drop = Presence(1, "dropped", 60_000, 100.0)
    assert countdown_line(drop, NAMES, 115.0) == "Bea: 45 s left to reconnect…"
    assert countdown_line(drop, NAMES, 160.0) is None


def test_a_new_host_is_worded_for_everyone_and_for_itself() -> None:
    event = SessionEvent("host-change", 0, "from seat 2")
    assert session_notice(event, NAMES, 1) == "Ann hosts the table from now on."
    assert session_notice(event, NAMES, 0) == "You host the table from now on."


def _seat_of_ann() -> LocalSeat:
    """Ann's seat (seat 0, the host) at a real table of Ann, Bea and Cid (record 0 only)."""
    game = bytes(range(16))
    ids = [IdentityKey.generate(bytes([70 + k]) * 32) for k in range(3)]
    body = {"type": "table", "version": PROTOCOL_VERSION, "variant": "dernier",
            "options": {"match": ["hands", 1]},
            "players": [{"name": name, "key": ids[k].public_bytes(), "listen": None}
                        for k, name in enumerate(NAMES)],
            "timers": {"turn_ms": 30_000, "declare_ms": 3_000, "grace_ms": 60_000}}
    env = sign_envelope(ids[0], game, 0, 0, genesis_hash(game), body)
    rec0 = Sequencer(ids[0], game, 0).submit(env, 0, 1000)
    return LocalSeat(OwnSeat(ids[0], 0, rec0, bytes(32)), None)


async def test_the_countdown_loop_ticks_while_a_seat_is_away_then_tells_its_return(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The running countdown (Narrator.countdown, on a mock clock): Bea drops with 60 s, a line
    every 15 s; Cid drops with 20 s: his lines stop once his grace is out; Bea comes back."""
    lines: list[str] = []
    seat = _seat_of_ann()
    narrator = Narrator(lines.append, [], colour=False, progress=False)
    narrator.seat = seat

    async def away_and_back() -> None:
        seat.note_status(1, "dropped", 60_000)
        narrator.flush()  # the table's follow task prints notices as they come
        await trio.sleep(31)
        seat.note_status(2, "dropped", 20_000)
        narrator.flush()
        await trio.sleep(29)  # Cid's grace runs out at 51 s
        seat.note_status(1, "back", 0)
        narrator.flush()
        await trio.sleep(40)  # nobody away: nothing more is told

    async with trio.open_nursery() as nursery:
        nursery.start_soon(narrator.countdown, seat)
        await away_and_back()
        nursery.cancel_scope.cancel()
    assert lines == [
        "Bea lost connection — waiting 60 s (reconnecting…)",
        "Bea: 45 s left to reconnect…",
        "Bea: 30 s left to reconnect…",
        "Cid lost connection — waiting 20 s (reconnecting…)",
        "Bea: 14 s left to reconnect…",
        "Cid: 5 s left to reconnect…",
        "Bea is back.",
    ]


async def test_a_drop_is_told_at_once_though_no_record_follows(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Nobody moves while Bea is away (it may be her turn): her drop and her return are told
    as they happen, by the countdown task alone, not 15 s later or with the next record."""
    lines: list[str] = []
    seat = _seat_of_ann()
    narrator = Narrator(lines.append, [], colour=False, progress=False)
    narrator.seat = seat
    async with trio.open_nursery() as nursery:
        nursery.start_soon(narrator.countdown, seat)
        await trio.sleep(1)
        seat.note_status(1, "dropped", 60_000)
        await trio.sleep(1)
        assert lines == ["Bea lost connection — waiting 60 s (reconnecting…)"]
        seat.note_status(1, "back", 0)
        await trio.sleep(1)
        assert lines[1:] == ["Bea is back."]
        nursery.cancel_scope.cancel()


async def test_a_seat_stopped_on_a_proof_tells_why_it_keeps_answering_until_it_closes(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The seat stopped on the host's fault and keeps answering links (4.6): the narrator goes
    on past the last record, tells that notice as it comes, and ends when the seat closes."""
    lines: list[str] = []
    seat = _seat_of_ann()
    seat.own.stopped = ProtocolError("FORK", 2, "two records for index 3")
    narrator = Narrator(lines.append, [], colour=False, progress=False)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(narrator.follow, seat)
        await trio.sleep(1)
        seat.note("showing-proof", None, 60_000, str(seat.stopped))
        await trio.sleep(1)
        assert lines == [
            f"The match is stopped: {seat.stopped}. This seat keeps answering the other seats "
            "for up to 60 s, so that those it could not reach see the proof when they ask "
            "(Ctrl-C leaves now)."]
        seat.close()
        with trio.fail_after(1):
            while nursery.child_tasks:
                await trio.sleep(0.1)


def test_a_seat_rebuilt_from_a_new_hosts_records_is_told_from_where_the_chains_part() -> None:
    """Ann's chain told Bea's take-over, then her own; the new host's chain has Bea's, then
    Cid's, then Ann's again: after the rebuild, Cid's take-over and what follows it are told,
    though the new chain is no longer than what was told."""
    lines: list[str] = []
    seat = _seat_of_ann()
    narrator = Narrator(lines.append, [], colour=False, progress=False)
    narrator.seat = seat
    bea, cid, ann = (SessionEvent("host-change", k, "") for k in (1, 2, 0))
    seat.own.session.events.extend([bea, ann])
    narrator.flush()
    assert lines == ["Bea hosts the table from now on.", "You host the table from now on."]
    rebuilt = _seat_of_ann().own
    rebuilt.session.events.extend([bea, cid, ann])
    seat.rebind(rebuilt)
    narrator.flush()
    assert lines[2:] == ["Cid hosts the table from now on.", "You host the table from now on."]
    narrator.flush()
    assert len(lines) == 4


def test_the_end_is_told_waiting_for_the_table_then_confirmed() -> None:
    """PROTOCOL.md 7.11: at three seats the match's last record is the table's once a quorum
    (two) holds it. Until a second seat's ack shows it holding that record, the player reads
    that the table has still to confirm the result; then that it has, each once."""
    seeds = [bytes([30 + k]) * 32 for k in range(3)]
    table = LocalTable("dernier", seeds, {"match": ["hands", 1]})
    table.deliver()
    policies = [HeuristicBot(k) for k in range(3)]
    rng = random.Random(3)
    while not table.sessions[0].finished:
        play_round(table, policies, rng)
    own = OwnSeat.from_records(table.identities[0],
                               digest("dernier-p2p/local-seed", seeds[0]), table.records)
    assert own.session.finished and not own.final
    lines: list[str] = []
    narrator = Narrator(lines.append, [], colour=False, progress=False)
    narrator.seat = LocalSeat(own, None)
    narrator.flush()
    assert lines[-1] == "Waiting for the table to confirm the result (1 of 2 seats so far)…"
    told = len(lines)
    narrator.flush()
    assert len(lines) == told
    table.send(table.sessions[1].ack())
    table.deliver()
    own.apply(table.records[-1], 0)
    assert own.final
    narrator.flush()
    narrator.flush()
    assert lines[told:] == ["The table has confirmed the result."]


def test_the_quorum_awaited_after_a_resignation_counts_the_seat_that_left() -> None:
    """A resignation ends a four-seat ``dernier`` match (7.9); its record is final once three
    seats, a quorum of the four at the table before it, hold it (7.11), not two, a quorum of
    the three left. The waiting line says so, is told again as more seats hold the end (not
    when a rebuilt chain shows fewer), and the table is said to confirm it at the third."""
    seeds = [bytes([40 + k]) * 32 for k in range(4)]
    table = LocalTable("dernier", seeds, {"match": ["hands", 1]})
    table.deliver()
    table.send(table.sessions[3].resign())
    table.deliver()
    key = digest("dernier-p2p/local-seed", seeds[1])
    at_end = list(table.records)
    own = OwnSeat.from_records(table.identities[1], key, at_end)
    assert own.session.finished and not own.final
    lines: list[str] = []
    narrator = Narrator(lines.append, [], colour=False, progress=False)
    seat = LocalSeat(own, None)
    narrator.seat = seat
    narrator.flush()
    assert lines[-1:] == ["Waiting for the table to confirm the result (1 of 3 seats so far)…"]
    told = len(lines)
    table.send(table.sessions[2].ack())
    table.deliver()
    own.apply(table.records[-1], 0)
    narrator.flush()
    narrator.flush()
    assert lines[told:] == ["Waiting for the table to confirm the result (2 of 3 seats so far)…"]
    seat.rebind(OwnSeat.from_records(table.identities[1], key, at_end))  # shows one holder
    narrator.flush()
    assert len(lines) == told + 1
    table.send(table.sessions[1].ack())
    table.deliver()
    seat.rebind(OwnSeat.from_records(table.identities[1], key, table.records))
    narrator.flush()
    assert seat.own.final and lines[told + 1 :] == ["The table has confirmed the result."]
