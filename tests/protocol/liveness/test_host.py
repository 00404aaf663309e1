"""The host's liveness machine (PROTOCOL.md 7.5, 7.6; liveness/host.py), each rule at its
boundary: drops and graces, silence, the host's own votes, the tally, no contest at two seats,
abandon, the lost table, and gathering after a take-over."""

from __future__ import annotations

from dernier_p2p.protocol.envelope import sign_envelope
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.liveness import host as host_module
from dernier_p2p.protocol.liveness.host import status_frame
from dernier_p2p.protocol.local import identity_for
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.protocol.votes import Tally, vote_frame
from tests.protocol.liveness import (
    ANSWER,
    CARDS,
    GONE,
    GRACE,
    PLAIN,
    SETTLE,
    SILENCE,
    STUCK,
    TRY,
    TURN,
    Bed,
    budgets,
    said,
    units,
)

LIMIT = TURN + 2 * (3 * PLAIN + ANSWER)  # the wait on the last seat to accept (3 records)


def hosting(accepted=(0, 2), listen=(True, True, True), now: int = 0, **kw):
    """The host (seat 0) of a table at the accepts, ``accepted`` in, every seat connected."""
    bed = Bed.opened(listen)
    bed.accept(*accepted)
    hw = bed.host_watch(now, **kw)
    up(hw, *range(1, len(listen)), now=now)
    return bed, hw


def votes_about(hw, kind: str, target: int | None) -> list[int]:
    """The voters of the fresh votes the host holds about ``target``."""
    since = hw.chain.vote_since(kind, target)
    return [v["seat"] for v in hw.tally.fresh(kind, target, since, hw.chain.next_index)]


def frame(bed: Bed, voter: int, kind: str, target: int | None) -> dict:
    return vote_frame(kind, target, bed.sessions[voter].vote(kind, target))


def up(hw, *seats: int, now: int = 0) -> None:
    for seat in seats:
        hw.seat_up(seat, now)


def hear(hw, *seats: int, now: int) -> None:
    """A frame (a beat) from each of ``seats`` at ``now``: their connections are not silent
    (``stuck_ms`` outlasts ``SILENCE_MS``)."""
    for seat in seats:
        hw.heard(seat, now)


def envelope_of(bed: Bed, seat: int, body: dict) -> dict:
    """An envelope of ``seat`` with counter 0 (before its queued ``accept``), at the head."""
    return sign_envelope(identity_for(bed.t.seeds[seat]), bed.t.game, seat, 0,
                         bed.sessions[seat].head, body)


def dealing() -> Bed:
    """A five-seat table (q = 3) past its dealer coin, the host's key commitment in: seats 1 to
    4 owe theirs (a deck message: a time-out there is a stall, 7.5, and the match goes on
    without the seat, 7.9)."""
    bed = Bed.opened((True,) * 5)
    bed.accept(0, 1, 2, 3, 4)
    while bed.t.queue and bed.t.queue[0]["body"]["type"].startswith("coin_"):
        bed.put(bed.t.queue.popleft())
    bed.put(bed.take(0, "key_commit"))
    return bed


# ---------------------------------------------------------------------- built mid-match
def test_a_host_built_from_records_keeps_the_heads_they_echoed():
    """(18.2) A seat's backlog starts after the head it last echoed in a record, also one
    applied before the host's clocks existed (a restored or new host)."""
    bed = Bed.opened()
    bed.accept(0, 1, 2)
    bed.put(bed.take(0, "coin_commit"))
    bed.put(bed.take(1, "coin_commit"))  # records 4 and 5, echoing record 3
    hw = bed.host_watch(100)
    assert hw.waits.awaited == [2]
    rec = bed.put(bed.take(2, "coin_commit"))  # record 6: every seat owes its reveal
    hw.record(rec, 200)
    assert hw.waits.awaited == [0, 1, 2]
    assert [hw.waits.backlog(s) for s in (0, 1, 2)] == [3 * PLAIN] * 3  # records 4 .. 6


def test_a_host_built_while_a_seat_owes_its_shuffle_gives_it_the_shuffles_budget():
    bed = Bed.opened()
    bed.accept(0, 1, 2)
    while bed.t.queue[0]["body"]["type"] != "shuffle":
        bed.put(bed.t.queue.popleft())
    bed.put(bed.take(0, "shuffle"))  # seat 1's turn to shuffle
    b = budgets()
    hw = bed.host_watch(100, b)
    assert hw.waits.awaited == [1]
    answer = hw.waits.limit(1) - TURN - b.work_ms(hw.waits.backlog(1))
    assert answer == b.work_ms(units("answering: its `shuffle`", N=CARDS))
    assert hw.deadline() == 100 + hw.waits.limit(1)


# ---------------------------------------------------------------------- drops
def test_dropped_and_back_are_broadcast_with_the_grace_left():
    bed, hw = hosting()
    up(hw, 1, 2)
    assert hw.advance(0) == []
    hw.seat_down(1, 500)
    out = hw.advance(500)
    assert said(out) == [("Broadcast", "dropped", "dropped", 1, GRACE)]
    assert out[0].frame == status_frame(1, "dropped", GRACE) == {
        "k": "status", "seat": 1, "state": "dropped", "grace_ms": GRACE}
    hw.seat_down(1, 800)  # already dropped: no second report, the first time stands
    assert hw.advance(800) == []
    assert hw.drops.since(1) == 500
    assert hw.grace_left(1, 500 + GRACE - 1) == 1
    assert hw.grace_left(1, 500 + GRACE) == 0
    assert hw.grace_left(1, 500 + GRACE + 1) == 0
    assert hw.grace_left(2, 900) == 0  # not dropped
    hw.seat_up(1, 1_500)
    out = hw.advance(1_500)
    assert said(out) == [("Broadcast", "back", "back", 1, 0)]
    assert out[0].frame == status_frame(1, "back", 0)
    assert hw.drops.seats == []
    hw.seat_up(1, 1_600)  # up again: not a return from a drop
    assert hw.advance(1_600) == []


def test_a_drop_reported_later_has_less_grace_left():
    bed, hw = hosting()
    hw.seat_down(2, 0)
    assert hw.grace_left(2, 1_000) == GRACE - 1_000


def test_the_deadline_counts_from_the_last_report():
    """The driver may ask for the deadline right after a report, before :meth:`advance`."""
    bed, hw = hosting()
    hw.seat_down(1, 500)
    assert hw.deadline() == 500 + GRACE
    rec = bed.put(bed.take(1, "accept"))  # seat 1 shows itself: its drop ends
    hw.record(rec, 600)
    assert hw.deadline() == min(hw.waits.ends(s) for s in hw.waits.awaited) > 600 + GRACE


def test_no_drop_of_itself_of_a_seat_out_or_after_the_end():
    bed, hw = hosting()
    hw.seat_down(0, 10)
    assert hw.advance(10) == [] and hw.drops.seats == []
    bed = Bed.dealt()
    bed.put(bed.sessions[2].resign())  # seat 2 is out of the table
    hw = bed.host_watch()
    hw.seat_down(2, 10)
    assert hw.advance(10) == [] and hw.drops.seats == []


def test_back_restarts_the_wait_with_the_catch_up():
    bed, hw = hosting(listen=(True, False, True))
    hw.seat_down(1, 100)
    hw.seat_up(1, 1_000)
    assert hw.waits.started(1) == 1_000
    assert hw.waits.ends(1) == 1_000 + LIMIT + 2 * 3 * PLAIN  # the catch-up: 3 records


# ---------------------------------------------------------------------- silence, beats
def test_silence_closes_a_seat_and_reports_it_dropped():
    bed, hw = hosting(b=budgets(silence_ms=15_000, beat_ms=2_000))
    up(hw, 1, 2)
    hw.heard(1, 3_000)
    hw.heard(1, 2_000)  # an older time does not move the clock back
    assert hw.deadline() == 15_000  # seat 2 went quiet at 0: no beats to wake for
    hw.heard(2, 14_000)
    assert hw.deadline() == 18_000
    for t in (2_000, 4_000, 17_999):
        assert hw.advance(t) == []  # beats are the network code's
    out = hw.advance(18_000)
    assert said(out) == [("CloseSeat", "silent", 1), ("Broadcast", "dropped", "dropped", 1, GRACE)]
    assert hw.up[1] is False and hw.drops.since(1) == 18_000
    assert hw.advance(28_999) == []
    assert said(hw.advance(29_000)) == [("CloseSeat", "silent", 2),
                                        ("Broadcast", "dropped", "dropped", 2, GRACE)]


# ---------------------------------------------------------------------- own votes
def test_own_timeout_vote_at_the_limit():
    bed, hw = hosting()
    assert hw.deadline() == LIMIT
    assert hw.advance(LIMIT - 1) == []
    assert votes_about(hw, "timeout", 1) == []
    assert hw.advance(LIMIT) == []  # one vote of the two q(3) needs
    assert votes_about(hw, "timeout", 1) == [0]


def test_no_own_timeout_vote_while_it_holds_an_envelope_of_the_seat():
    bed, hw = hosting(holding=lambda seat: seat == 1)
    hw.advance(LIMIT + 10_000)
    assert votes_about(hw, "timeout", 1) == []


def test_no_own_timeout_vote_while_the_seat_is_dropped():
    bed, hw = hosting(b=budgets(grace_ms=10**6))
    hw.seat_down(1, 0)
    hw.advance(LIMIT + 10_000)
    assert votes_about(hw, "timeout", 1) == []
    assert votes_about(hw, "left", 1) == []


def test_own_timeout_vote_again_after_a_return_spent_the_votes():
    bed, hw = hosting(b=budgets(grace_ms=10**6))
    hw.advance(LIMIT)
    assert votes_about(hw, "timeout", 1) == [0]
    hw.seat_down(1, LIMIT + 100)
    hw.seat_up(1, LIMIT + 200)  # its wait restarts: the votes are spent
    assert votes_about(hw, "timeout", 1) == []
    end = hw.waits.ends(1)
    hw.advance(end - 1)
    assert votes_about(hw, "timeout", 1) == []
    hw.advance(end)
    assert votes_about(hw, "timeout", 1) == [0]


def test_own_left_vote_at_grace():
    bed, hw = hosting()
    up(hw, 1, 2)
    hw.seat_down(1, 100)
    hw.advance(100)
    hw.advance(100 + GRACE - 1)
    assert votes_about(hw, "left", 1) == []
    assert hw.deadline() == 100 + GRACE
    hw.advance(100 + GRACE)
    assert votes_about(hw, "left", 1) == [0]
    assert hw.vote(2, frame(bed, 2, "left", 1)) is None
    out = hw.advance(100 + GRACE + 1)
    assert said(out) == [("Sequence", "tally", "left", 1)]
    assert [v["seat"] for v in out[0].body["votes"]] == [0, 2]


def test_no_left_vote_after_a_record_of_the_seat():
    """A seat whose connection is gone may still author a record (another seat passed its
    envelope on): its drop ends there, as every seat's does (7.5, ``left``)."""
    bed, hw = hosting()
    up(hw, 1, 2)
    hw.seat_down(1, 100)
    hw.advance(100)
    rec = bed.put(bed.take(1, "accept"))
    hw.record(rec, 2_000)
    assert hw.drops.seats == []
    hw.advance(100 + GRACE + 10_000)
    assert votes_about(hw, "left", 1) == []
    # its connection is still gone, but it plays: at its limit the host votes timeout
    end = hw.waits.ends(1)
    hw.advance(end - 1)
    assert votes_about(hw, "timeout", 1) == []
    hw.advance(end)
    assert votes_about(hw, "timeout", 1) == [0]


def test_own_left_vote_again_after_the_seat_showed_itself():
    """A record of the seat (an ``ack`` too, 7.5) ends its drop and makes the ``left`` votes
    about it stale: dropped again, past its grace, it gets a fresh vote."""
    bed, hw = hosting()
    hw.seat_down(1, 100)
    hw.advance(100 + GRACE)
    assert votes_about(hw, "left", 1) == [0]
    hw.record(bed.put(envelope_of(bed, 1, {"type": "ack"})), 6_000)
    assert hw.drops.seats == []
    assert votes_about(hw, "left", 1) == []  # stale
    hw.seat_down(1, 7_000)
    hw.advance(7_000 + GRACE - 1)
    assert votes_about(hw, "left", 1) == []
    hw.advance(7_000 + GRACE)
    assert votes_about(hw, "left", 1) == [0]


# ---------------------------------------------------------------------- the tally
def test_tally_sequences_a_timeout_once_a_quorum_is_in():
    bed, hw = hosting()
    assert hw.vote(2, frame(bed, 2, "timeout", 1)) is None
    assert hw.advance(LIMIT - 1) == []  # seat 2's vote alone
    out = hw.advance(LIMIT)  # the host's own makes two
    assert said(out) == [("Sequence", "tally", "timeout", 1)]
    body = out[0].body
    assert body["type"] == "timeout" and body["seat"] == 1
    assert [v["seat"] for v in body["votes"]] == [0, 2]
    assert hw.advance(LIMIT + 1) == []  # once per after
    assert hw.vote(2, frame(bed, 2, "timeout", 1)) is None  # the same vote again
    assert hw.advance(LIMIT + 2) == []
    rec = bed.put(bed.sessions[0].announce(body))  # every seat takes it
    hw.record(rec, LIMIT + 3)
    assert hw.advance(LIMIT + 4) == []  # those votes are used


def test_a_vote_outlives_records_of_other_seats():
    bed, hw = hosting(accepted=(0,))
    assert hw.vote(2, frame(bed, 2, "timeout", 1)) is None
    hw.record(bed.put(bed.take(2, "accept")), 10)  # not seat 1's: the vote stands
    out = hw.advance(hw.waits.ends(1))
    assert said(out) == [("Sequence", "tally", "timeout", 1)]
    assert [v["seat"] for v in out[0].body["votes"]] == [0, 2]


def test_one_vote_short_of_the_quorum_is_not_sequenced():
    bed = Bed.opened((True, True, True, True))
    bed.accept(0, 1, 2)
    hw = bed.host_watch()
    up(hw, 1, 2, 3)
    limit = TURN + 2 * (4 * PLAIN + ANSWER)
    assert hw.vote(3, frame(bed, 3, "timeout", 2)) is None  # (about another seat: one vote)
    assert hw.vote(1, frame(bed, 1, "timeout", 3)) is None
    assert hw.vote(2, frame(bed, 2, "timeout", 3)) is None
    assert hw.advance(limit - 1) == []  # two of q(4) = 3
    out = hw.advance(limit)
    assert said(out) == [("Sequence", "tally", "timeout", 3)]
    assert [v["seat"] for v in out[0].body["votes"]] == [0, 1, 2]


def test_a_vote_sent_again_counts_once_and_is_not_checked_again(monkeypatch):
    """Seats send a vote again while it holds (7.5): the tally keeps one vote per voter, so a
    repeat never makes a quorum, and the same frame again costs no signature check."""
    bed = Bed.opened((True, True, True, True))
    bed.accept(0, 1, 2)
    hw = bed.host_watch()
    up(hw, 1, 2, 3)
    limit = TURN + 2 * (4 * PLAIN + ANSWER)
    again = frame(bed, 1, "timeout", 3)
    assert hw.vote(1, again) is None
    checks: list[int] = []
    real = host_module.vote_ok
    monkeypatch.setattr(host_module, "vote_ok", lambda *a, **k: checks.append(1) or real(*a, **k))
    for _ in range(3):
        assert hw.vote(1, again) is None
    assert checks == []
    assert hw.advance(limit) == []  # seat 1 (four times) and the host: two of q(4) = 3
    assert hw.vote(2, frame(bed, 2, "timeout", 3)) is None
    assert checks == [1]
    out = hw.advance(limit + 1)
    assert said(out) == [("Sequence", "tally", "timeout", 3)]
    assert [v["seat"] for v in out[0].body["votes"]] == [0, 1, 2]


def test_a_vote_cast_before_the_seat_played_is_stale():
    bed, hw = hosting()
    old = frame(bed, 2, "timeout", 1)  # after -1
    rec = bed.put(bed.take(1, "accept"))  # seat 1 shows itself: the coin is next
    hw.record(rec, 10)
    assert hw.vote(2, old) is None  # taken, but not fresh
    end = hw.waits.ends(1)
    assert end == 10 + TURN + 2 * (3 * PLAIN + ANSWER)  # records 1 .. 3, a coin commit
    assert hw.advance(end) == []
    assert votes_about(hw, "timeout", 1) == [0]
    assert hw.vote(2, frame(bed, 2, "timeout", 1)) is None
    out = hw.advance(end + 1)
    assert said(out) == [("Sequence", "tally", "timeout", 1)]
    assert [v["after"] for v in out[0].body["votes"]] == [3, 3]


def test_a_chat_of_the_seat_leaves_the_votes_fresh():
    bed, hw = hosting()
    old = frame(bed, 2, "timeout", 1)
    accept = bed.take(1, "accept")
    chat = sign_envelope(identity_for(bed.t.seeds[1]), bed.t.game, 1, 0, accept["head"],
                         {"type": "chat", "text": "still here"})
    hw.record(bed.put(chat), 10)
    assert hw.vote(2, old) is None
    out = hw.advance(LIMIT)
    assert said(out) == [("Sequence", "tally", "timeout", 1)]


def test_an_ack_of_the_seat_leaves_the_timeout_votes_fresh():
    """(7.5) A seat that only acks is connected but not at play: ``timeout`` votes about it
    made before its ack still count."""
    bed, hw = hosting()
    assert hw.vote(2, frame(bed, 2, "timeout", 1)) is None
    hw.record(bed.put(envelope_of(bed, 1, {"type": "ack"})), 10)
    out = hw.advance(hw.waits.ends(1))
    assert said(out) == [("Sequence", "tally", "timeout", 1)]
    assert [v["seat"] for v in out[0].body["votes"]] == [0, 2]
    bed.put(bed.sessions[0].announce(out[0].body))  # a valid record


def test_a_vote_frame_with_a_bad_signature_or_of_another_seat_is_refused():
    bed, hw = hosting()
    good = frame(bed, 2, "timeout", 1)
    forged = vote_frame("timeout", 1, dict(good["vote"], sig=bytes(64)))
    err = hw.vote(2, forged)
    assert isinstance(err, ProtocolError) and err.code == "BAD_SIGNATURE" and err.seat == 2
    err = hw.vote(1, good)  # seat 2's vote on seat 1's connection
    assert isinstance(err, ProtocolError) and err.code == "BAD_SIGNATURE" and err.seat == 1
    moved = vote_frame("timeout", 0, good["vote"])  # signed about seat 1, sent about seat 0
    assert hw.vote(2, moved).code == "BAD_SIGNATURE"
    other = vote_frame("left", 1, good["vote"])  # signed as timeout, sent as left
    assert hw.vote(2, other).code == "BAD_SIGNATURE"
    err = hw.vote(2, {"k": "vote", "kind": "timeout", "target": 1})
    assert err.code == "MALFORMED"
    assert hw.tally.keys() == []
    assert said(hw.advance(LIMIT)) == []  # only the host's own vote is in


def test_a_vote_of_the_target_about_itself_is_not_counted():
    bed, hw = hosting()
    hw.vote(1, frame(bed, 1, "timeout", 1))  # (a seat voting itself out: never valid)
    assert hw.advance(LIMIT) == []
    assert hw.vote(2, frame(bed, 2, "timeout", 1)) is None
    out = hw.advance(LIMIT + 1)
    assert said(out) == [("Sequence", "tally", "timeout", 1)]
    assert [v["seat"] for v in out[0].body["votes"]] == [0, 2]
    bed.put(bed.sessions[0].announce(out[0].body))  # a valid record


def test_a_quorum_timing_out_the_hosts_own_seat_is_sequenced():
    bed, hw = hosting(accepted=(1, 2))  # the table waits on the host's own accept
    assert hw.vote(1, frame(bed, 1, "left", 0)) is None  # (never about the host: skipped)
    assert hw.vote(2, frame(bed, 2, "left", 0)) is None
    assert hw.vote(1, frame(bed, 1, "timeout", 0)) is None
    assert hw.advance(LIMIT) == []  # one timeout vote; the host votes nothing about itself
    assert hw.vote(2, frame(bed, 2, "timeout", 0)) is None
    out = hw.advance(LIMIT + 1)
    assert said(out) == [("Sequence", "tally", "timeout", 0)]
    assert [v["seat"] for v in out[0].body["votes"]] == [1, 2]
    bed.put(bed.sessions[0].sign_again([out[0].body])[0])  # a valid record (its accept owed)


def test_no_timeout_of_a_dropped_seat_its_grace_decides():
    """(7.5) A quorum of ``timeout`` votes about a seat reported dropped is not sequenced (a
    seat may vote before it hears of the drop): its grace decides, by ``left``. The tally
    goes on to the next seat."""
    bed = Bed.opened((True,) * 5)
    bed.accept(0, 1, 2)
    hw = bed.host_watch()
    up(hw, 1, 2, 3, 4)
    assert hw.vote(1, frame(bed, 1, "timeout", 3)) is None
    end = max(hw.waits.ends(3), hw.waits.ends(4))
    assert hw.advance(end) == []  # the host's own votes about seats 3 and 4
    hw.seat_down(3, end + 1)
    assert hw.vote(2, frame(bed, 2, "timeout", 3)) is None
    assert votes_about(hw, "timeout", 3) == [0, 1, 2]
    assert hw.vote(1, frame(bed, 1, "timeout", 4)) is None
    assert hw.vote(2, frame(bed, 2, "timeout", 4)) is None
    assert said(hw.advance(end + 2)) == [("Broadcast", "dropped", "dropped", 3, GRACE),
                                         ("Sequence", "tally", "timeout", 4)]


def test_a_left_about_a_seat_out_of_play_takes_it_off_the_table():
    """(7.5) A stall puts a seat out of play but leaves it at the table, where it still counts
    in ``m``: a quorum of ``left`` votes about it is sequenced as any other (the rules ignore
    it, the chain takes the seat off the table; a host that held it back would leave its
    voters' votes unserved, and they would depose it, ``host-late``). The tally goes on to the
    next seat."""
    bed = dealing()
    hw = bed.host_watch()
    up(hw, 1, 2, 3, 4)
    hw.record(bed.put(bed.absent("timeout", 3, [0, 1, 2])), 100)  # seat 3 owed a key
    s0 = bed.sessions[0]
    assert s0.state.out == (3,) and 3 in hw.chain.at_table and not s0.finished
    hw.seat_down(3, 200)
    assert hw.vote(1, frame(bed, 1, "left", 3)) is None
    assert hw.vote(2, frame(bed, 2, "left", 3)) is None
    assert hw.vote(1, frame(bed, 1, "timeout", 4)) is None
    assert hw.vote(2, frame(bed, 2, "timeout", 4)) is None
    end = hw.waits.ends(4)
    assert end > 200 + GRACE
    out = hw.advance(end)
    assert said(out) == [("Broadcast", "dropped", "dropped", 3, GRACE),
                         ("Sequence", "tally", "left", 3),
                         ("Sequence", "tally", "timeout", 4)]


def test_votes_about_a_seat_gone_from_the_table_are_passed_over():
    bed = dealing()
    hw = bed.host_watch()
    up(hw, 1, 2, 3, 4)
    late = frame(bed, 1, "left", 3)
    hw.record(bed.put(bed.absent("left", 3, [0, 1, 2])), 100)
    assert sorted(hw.chain.at_table) == [0, 1, 2, 4] and hw.tally.keys() == []
    assert hw.vote(1, late) is None  # sent before seat 1 saw the record
    assert hw.vote(1, frame(bed, 1, "timeout", 4)) is None
    assert hw.vote(2, frame(bed, 2, "timeout", 4)) is None
    out = hw.advance(hw.waits.ends(4))
    assert said(out) == [("Sequence", "tally", "timeout", 4)]


# ---------------------------------------------------------------------- two seats
def two_seats(**kw):
    bed = Bed.opened((True, True))
    bed.accept(0)
    hw = bed.host_watch(**kw)
    hw.seat_up(1, 0)
    return bed, hw


def test_at_two_seats_absence_is_no_contest_without_votes():
    bed, hw = two_seats()
    limit = TURN + 2 * (2 * PLAIN + ANSWER)
    assert hw.deadline() == limit
    assert hw.advance(limit - 1) == []
    out = hw.advance(limit)
    assert said(out) == [("Sequence", "no-contest-2", "no_contest", 1)]
    assert out[0].body == {"type": "no_contest", "seat": 1, "votes": []}
    assert hw.advance(limit + 1) == []  # once at this record
    assert hw.tally.keys() == []  # no votes at two seats
    rec = bed.put(bed.sessions[0].announce(out[0].body))
    hw.record(rec, limit + 2)
    assert bed.sessions[0].finished
    assert hw.advance(limit + 3) == [] and hw.deadline() is None


def test_at_two_seats_a_drop_gives_one_no_contest_at_grace():
    bed, hw = two_seats()
    hw.seat_up(1, 0)
    hw.seat_down(1, 100)
    hw.advance(100)
    assert hw.advance(100 + GRACE - 1) == []
    assert said(hw.advance(100 + GRACE)) == [("Sequence", "no-contest-2", "no_contest", 1)]
    assert hw.advance(LIMIT + 100) == []


def test_at_two_seats_nothing_while_holding_the_seats_envelope():
    bed, hw = two_seats(holding=lambda seat: True)
    assert hw.advance(LIMIT + 1_000) == []


def test_no_deadline_once_every_clock_has_run_out():
    bed, hw = two_seats(holding=lambda seat: True)
    hw.seat_down(1, 0)
    hw.advance(STUCK)  # past the waits, the grace (a no contest asked) and stuck_ms
    assert hw.deadline() is None


# ---------------------------------------------------------------------- abandon
def test_abandon_at_stuck_ms():
    bed, hw = hosting(accepted=(0, 1), holding=lambda seat: True)  # no time-outs
    chat = bed.put(bed.sessions[1].chat("hello?"))
    hw.record(chat, 20_000)  # no progress
    assert hw.advance(LIMIT) == []  # (seat 2's wait ran out; the host holds its envelope)
    hear(hw, 1, 2, now=100_000)  # (the seats beat: stuck_ms outlasts SILENCE_MS)
    assert hw.deadline() == STUCK
    assert hw.advance(STUCK - 1) == []
    assert votes_about(hw, "abandon", None) == []
    assert hw.advance(STUCK) == []
    assert votes_about(hw, "abandon", None) == [0]
    assert hw.vote(1, frame(bed, 1, "abandon", None)) is None
    hw.record(bed.put(bed.sessions[1].chat("anyone?")), STUCK)  # a chat ends no abandon vote
    out = hw.advance(STUCK + 1)
    assert said(out) == [("Sequence", "tally", "no_contest", None)]
    assert out[0].body["type"] == "no_contest" and out[0].body["seat"] is None
    assert [v["seat"] for v in out[0].body["votes"]] == [0, 1]


def test_a_timeout_quorum_is_sequenced_before_an_abandon_quorum_held_with_it():
    """PROTOCOL.md 7.5, tally: the seats reach an awaited seat's limit together and may vote
    timeout and abandon at once; a host holding both quorums sequences the timeout (a
    verdict, a ranking) and not the no contest (seed 1605816)."""
    bed, hw = hosting(accepted=(0, 1), holding=lambda seat: False)  # it waits on seat 2
    hear(hw, 1, 2, now=STUCK - 1)
    hw.record(bed.put(bed.sessions[1].chat("still there?")), 1_000)  # (no progress)
    hw.advance(LIMIT)
    assert votes_about(hw, "timeout", 2) == [0]  # the host's own, at seat 2's limit
    assert hw.vote(1, frame(bed, 1, "abandon", None)) is None  # seat 1's both come at once
    assert hw.vote(1, frame(bed, 1, "timeout", 2)) is None
    out = hw.advance(STUCK)
    assert sorted(votes_about(hw, "abandon", None)) == [0, 1]  # a quorum of abandon too
    assert said(out) == [("Sequence", "tally", "timeout", 2)]


def test_progress_restarts_the_abandon_clock():
    bed, hw = hosting(accepted=(0, 1), holding=lambda seat: True)
    rec = bed.put(bed.take(2, "accept"))
    hw.record(rec, 1_000)
    hear(hw, 1, 2, now=100_000)
    assert hw.advance(STUCK) == []
    assert votes_about(hw, "abandon", None) == []
    assert hw.deadline() == 1_000 + STUCK
    assert hw.advance(1_000 + STUCK - 1) == []
    assert votes_about(hw, "abandon", None) == []
    assert hw.advance(1_000 + STUCK) == []
    assert votes_about(hw, "abandon", None) == [0]


def test_abandon_waits_for_every_awaited_seat_past_its_limit():
    """(PROTOCOL.md 7.5, abandon: a seat still within its budget of work, here a slow unit,
    does not make the table stuck.)"""
    b = budgets(unit_ms=25_000)
    bed, hw = hosting(accepted=(0, 1), holding=lambda seat: True, b=b)
    end = hw.waits.ends(2)
    assert end == TURN + 25_000 * (3 * PLAIN + ANSWER) > STUCK == b.stuck_ms
    hear(hw, 1, 2, now=end - SILENCE + 1)
    assert hw.advance(STUCK) == []
    assert votes_about(hw, "abandon", None) == []
    assert hw.deadline() == end
    assert hw.advance(end - 1) == []
    assert votes_about(hw, "abandon", None) == []
    assert hw.advance(end) == []
    assert votes_about(hw, "abandon", None) == [0]


# ---------------------------------------------------------------------- lost table
def test_lost_table_after_gone_ms_without_a_quorum_connected():
    bed, hw = hosting()
    up(hw, 1, 2)
    hw.seat_down(2, 50)
    assert said(hw.advance(50)) == [("Broadcast", "dropped", "dropped", 2, GRACE)]
    assert hw.lost_since is None  # itself and seat 1: q(3)
    hw.seat_down(1, 100)
    hw.advance(100)
    assert hw.lost_since == 100
    assert hw.deadline() == 100 + GONE
    assert hw.advance(100 + GONE - 1) == []
    out = hw.advance(100 + GONE)
    assert said(out) == [("LookForHost", "lost-table")]
    assert isinstance(out[0], act.LookForHost)
    assert hw.advance(100 + GONE + 1) == []  # once
    hw.seat_up(1, 5_000)
    hw.advance(5_000)
    assert hw.lost_since is None and not hw.looked


def test_a_table_regained_in_time_is_not_lost():
    bed, hw = hosting()
    up(hw, 1, 2)
    hw.seat_down(1, 0)
    hw.seat_down(2, 0)
    hw.advance(0)
    hw.seat_up(2, GONE - 1)
    hw.advance(GONE - 1)
    assert said(hw.advance(GONE)) == []


def test_a_table_lost_before_any_look():
    bed, hw = hosting()
    hw.seat_down(1, 0)
    hw.seat_down(2, 0)
    hw.advance(0)
    assert said(hw.advance(GONE)) == [("LookForHost", "lost-table")]


def test_a_table_of_four_is_lost_with_one_seat_connected():
    """The host and one seat are two of the q(4) = 3 a table needs connected."""
    bed, hw = hosting(listen=(True, True, True, True))
    hw.seat_down(2, 0)
    hw.seat_down(3, 0)
    hw.advance(0)
    assert hw.lost_since == 0
    assert said(hw.advance(GONE)) == [("LookForHost", "lost-table")]


def test_a_drop_outlives_other_seats_records():
    bed, hw = hosting(accepted=(0,))
    hw.seat_down(1, 100)
    rec = bed.put(bed.take(2, "accept"))
    hw.record(rec, 200)
    assert hw.drops.seats == [1]


def test_a_seat_that_left_is_dropped_no_more():
    """A ``left`` takes the seat off the table: its drop ends there, and nothing more is
    asked about it (here the match goes on at two seats, where an absence is no contest)."""
    bed = Bed.dealt()
    hw = bed.host_watch()
    up(hw, 1, 2)
    hw.seat_down(1, 100)
    hw.advance(100 + GRACE)
    assert hw.vote(2, frame(bed, 2, "left", 1)) is None
    out = hw.advance(100 + GRACE + 1)
    assert said(out) == [("Sequence", "tally", "left", 1)]
    hw.record(bed.put(bed.sessions[0].announce(out[0].body)), 100 + GRACE + 2)
    assert sorted(hw.chain.at_table) == [0, 2] and not bed.sessions[0].finished
    assert hw.drops.seats == [] and hw.tally.keys() == []
    assert hw.advance(100 + GRACE + 3) == []


def test_no_lost_table_at_two_seats_or_without_candidates():
    bed, hw = two_seats()
    hw.seat_down(1, 0)
    assert not any(isinstance(a, act.LookForHost) for a in hw.advance(GONE))
    bed, hw = hosting(listen=(True, False, False))
    hw.seat_down(1, 0)
    hw.seat_down(2, 0)
    hw.advance(0)
    assert hw.advance(GONE) == []


# ---------------------------------------------------------------------- gathering
def gathering(voters=(2, 3), now: int = 1_000, **kw):
    """Seat 1 of a five-seat table (q = 3) takes over from host 0 at ``now``, holding the
    ``depose`` votes ``voters`` sent it over links."""
    bed = Bed.opened((True,) * 5)
    tally = Tally()
    for v in voters:
        tally.add("depose", 0, bed.sessions[v].vote("depose", 0))
    return bed, bed.host_watch(now, seat=1, old=0, tally=tally, **kw)


def took_over(bed: Bed, seat: int, body: dict) -> dict:
    """``seat``'s ``host_change`` (``body``) sequenced by itself, every session applying it."""
    env = bed.sessions[seat].sign_again([body])[0]
    seq = Sequencer(identity_for(bed.t.seeds[seat]), bed.t.game, seat, records=bed.records)
    rec = seq.submit(env, seat, 5)
    for s in bed.sessions:
        s.receive(rec, rec["t"])
    return rec


def test_gather_after_settle_ms_with_a_quorum_connected():
    bed, hw = gathering()
    assert hw.gathering
    up(hw, 2, 3, now=1_000)
    assert hw.advance(1_000) == []  # seat 4 has not resumed yet
    assert hw.quorum_at == 1_000
    assert hw.deadline() == 1_000 + SETTLE
    assert hw.advance(1_000 + SETTLE - 1) == []
    out = hw.advance(1_000 + SETTLE)
    assert said(out) == [("Sequence", "gather", "host_change", 0)]
    body = out[0].body
    assert body["type"] == "host_change" and body["old"] == 0 and body["new"] == 1
    assert [v["seat"] for v in body["votes"]] == [1, 2, 3]  # its own first
    assert hw.advance(1_000 + SETTLE + 1) == []  # once
    hw.record(took_over(bed, 1, body), 1_000 + SETTLE + 2)  # sequenced: it hosts
    assert not hw.gathering and hw.old is None
    assert bed.sessions[1].host == 1


def test_gather_at_once_when_every_seat_has_resumed():
    bed, hw = gathering()
    up(hw, 2, 3, 4, now=1_000)
    assert said(hw.advance(1_000)) == [("Sequence", "gather", "host_change", 0)]


def test_no_gather_without_the_votes_of_q_connected_seats():
    bed, hw = gathering()
    up(hw, 2, 4, now=1_000)  # seat 3 voted but has not resumed
    assert hw.advance(1_000 + SETTLE) == []
    assert hw.advance(1_000 + TRY - 1) == []
    hw.seat_up(3, 1_000 + TRY - 1)
    assert said(hw.advance(1_000 + TRY - 1)) == [("Sequence", "gather", "host_change", 0)]


def test_no_gather_with_one_vote_fewer():
    bed, hw = gathering(voters=(2,))
    up(hw, 2, 3, 4, now=1_000)
    assert hw.advance(1_000 + SETTLE) == []
    assert hw.quorum_at is None
    hw.vote(3, frame(bed, 3, "depose", 0))
    assert said(hw.advance(1_100 + SETTLE)) == [("Sequence", "gather", "host_change", 0)]


def test_no_gather_while_a_seat_forwards_records():
    bed, hw = gathering()
    up(hw, 2, 3, 4, now=1_000)
    hw.forwarding_from(4, True)  # even one whose vote it does not use
    assert hw.advance(1_000 + SETTLE) == []
    hw.forwarding_from(4, False)
    assert said(hw.advance(1_000 + SETTLE)) == [("Sequence", "gather", "host_change", 0)]


def test_a_forwarding_seat_that_drops_stops_forwarding():
    bed, hw = gathering(voters=(2, 3, 4))
    up(hw, 2, 3, 4, now=1_000)
    hw.forwarding_from(4, True)
    hw.seat_down(4, 1_100)
    assert said(hw.advance(1_100)) == [("Broadcast", "dropped", "dropped", 4, GRACE)]
    assert said(hw.advance(1_100 + SETTLE)) == [("Sequence", "gather", "host_change", 0)]


def test_stale_votes_and_the_old_hosts_do_not_gather():
    bed = Bed.opened((True,) * 5)
    tally = Tally()
    tally.add("depose", 0, bed.sessions[2].vote("depose", 0))
    tally.add("depose", 0, bed.sessions[0].vote("depose", 0))  # the old host never votes
    bed.accept(0)  # a record the old host signed after seat 2's vote
    tally.add("depose", 0, bed.sessions[3].vote("depose", 0))
    hw = bed.host_watch(1_000, seat=1, old=0, tally=tally)
    up(hw, 2, 3, 4, now=1_000)
    assert hw.advance(1_000 + SETTLE) == []
    hw.vote(2, frame(bed, 2, "depose", 0))  # seat 2 votes again at this chain
    out = hw.advance(1_000 + SETTLE)
    assert [v["seat"] for v in out[0].body["votes"]] == [1, 2, 3]


def test_a_record_the_old_host_signed_makes_the_votes_before_it_stale():
    """(7.6) A ``depose`` vote is fresh after the last record the old host signed, whoever
    wrote it (here a chat of seat 4, forwarded while gathering): the host votes again, and
    gathers once the seats have."""
    bed, hw = gathering()
    up(hw, 2, 3, now=1_000)
    assert hw.advance(1_000) == []  # seat 4 has not resumed yet
    assert hw.quorum_at == 1_000
    hw.record(bed.put(envelope_of(bed, 4, {"type": "chat", "text": "here"})), 1_100)
    assert hw.advance(1_000 + SETTLE) == []  # seats 2 and 3 voted before it
    assert hw.quorum_at is None
    assert votes_about(hw, "depose", 0) == [1]
    hw.vote(2, frame(bed, 2, "depose", 0))
    hw.vote(3, frame(bed, 3, "depose", 0))
    assert hw.advance(1_000 + SETTLE + 1) == []  # a quorum again, settle_ms from now
    assert hw.quorum_at == 1_000 + SETTLE + 1
    out = hw.advance(1_000 + 2 * SETTLE + 1)
    assert said(out) == [("Sequence", "gather", "host_change", 0)]
    assert [v["seat"] for v in out[0].body["votes"]] == [1, 2, 3]


def test_the_old_hosts_vote_never_counts():
    bed = Bed.opened((True,) * 5)
    bed.accept(0)
    tally = Tally()
    for v in (0, 3):  # the old host's own vote, fresh
        tally.add("depose", 0, bed.sessions[v].vote("depose", 0))
    hw = bed.host_watch(1_000, seat=1, old=0, tally=tally)
    up(hw, 0, 2, 3, 4, now=1_000)  # the old host resumed here as a seat
    assert hw.advance(1_000 + SETTLE) == []


def test_another_seats_host_change_does_not_end_the_gathering():
    bed, hw = gathering(voters=(1, 3, 4))
    s2 = bed.sessions[2]
    votes = [bed.sessions[v].vote("depose", 0) for v in (2, 3, 4)]
    hw.record(took_over(bed, 2, s2.votes_body("depose", 0, votes)), 1_100)
    assert bed.sessions[1].host == 2
    assert hw.gathering


def test_a_host_that_gathered_tallies_as_any_host():
    """Once its ``host_change`` is in, the new host counts ``timeout`` votes; the ``depose``
    votes it gathered with are no business of the tally."""
    bed, hw = gathering()
    up(hw, 2, 3, 4, now=1_000)
    out = hw.advance(1_000)
    assert said(out) == [("Sequence", "gather", "host_change", 0)]
    hw.record(took_over(bed, 1, out[0].body), 1_000)
    assert not hw.gathering
    assert hw.vote(2, frame(bed, 2, "timeout", 4)) is None
    assert hw.vote(3, frame(bed, 3, "timeout", 4)) is None
    assert hw.tally.keys()[0] == ("depose", 0)
    out = hw.advance(hw.waits.ends(4))
    assert said(out) == [("Sequence", "tally", "timeout", 4)]


def test_step_back_try_ms_after_taking_over():
    bed, hw = gathering(voters=())
    assert hw.deadline() == 1_000 + TRY
    assert hw.advance(1_000 + TRY - 1) == []
    out = hw.advance(1_000 + TRY)
    assert said(out) == [("StepBack", "step-back")]
    assert hw.stepped_back
    assert hw.advance(1_000 + TRY + 1) == [] and hw.deadline() is None


def test_gathering_takes_no_tally_and_no_absence():
    bed, hw = gathering(voters=())
    hw.vote(2, frame(bed, 2, "abandon", None))
    hw.vote(3, frame(bed, 3, "abandon", None))
    hw.vote(4, frame(bed, 4, "abandon", None))
    assert hw.advance(1_000 + TRY - 1) == []


# ---------------------------------------------------------------------- an end never final
def host_over_unfinal():
    """Host 0 of a table whose match seat 3's resign ended at four seats; the end is not
    final and seat 1 (no address) owes its ack (7.11); seats 1 and 2 connected."""
    bed = Bed.over((True, False, True, True))
    session = bed.sessions[0]
    session.unfinal, session.end_owed = True, (1,)
    hw = bed.host_watch(0)
    up(hw, 1, 2)
    return bed, hw


def test_after_an_unfinal_end_the_host_neither_votes_nor_tallies_abandon():
    """7.11, 7.5.5 ``stuck-end``: a ``no_contest`` after the end would change nothing and
    restart every stuck clock, so the host takes no part in ``abandon`` there."""
    bed, hw = host_over_unfinal()
    hear(hw, 1, 2, now=150_000)
    assert said(hw.advance(STUCK)) == []
    assert votes_about(hw, "abandon", None) == []
    for voter in (1, 2):  # (seats of an older release still vote)
        assert hw.vote(voter, frame(bed, voter, "abandon", None)) is None
    assert votes_about(hw, "abandon", None) == [1, 2]
    assert said(hw.advance(STUCK + 1)) == []  # a quorum held, no no_contest


def test_after_an_unfinal_end_the_host_ends_stuck_a_grace_after_the_seats():
    bed, hw = host_over_unfinal()
    hear(hw, 1, 2, now=150_000)
    hw.advance(STUCK)
    assert hw.deadline() == STUCK + GRACE
    assert said(hw.advance(STUCK + GRACE - 1)) == []
    assert said(hw.advance(STUCK + GRACE)) == [("End", "stuck-end")]
    assert hw.deadline() is None and said(hw.advance(STUCK + 2 * GRACE)) == []


def test_after_an_unfinal_end_a_host_left_alone_ends_at_stuck_ms():
    """Once every other seat has ended for itself and closed, nobody is left to host for."""
    bed, hw = host_over_unfinal()
    hw.seat_down(1, 150_000)
    hw.seat_down(2, 150_000)
    before = said(hw.advance(STUCK - 1))  # (their drops ran their graces: left votes)
    assert ("End", "stuck-end") not in before and hw.deadline() == STUCK
    assert said(hw.advance(STUCK)) == [("End", "stuck-end")]
