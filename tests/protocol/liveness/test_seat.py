"""A seat's liveness machine (PROTOCOL.md 7.5, 7.6; liveness/seat.py), each rule at its
boundary: one millisecond before, no action; at the limit, the action.

The tables are real (:mod:`tests.protocol.liveness`): at the accepts, after the table record
and two accepts, the table waits on the third seat, and the limit of that wait is
``turn_ms + 2 ms * (3 records + 1 accept owed)``.
"""

from __future__ import annotations

from dernier_p2p.protocol.envelope import record_hash, sign_envelope
from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.liveness.seat import ENDED, FAILOVER, HOSTING, LOOKING, PLAY, SeatWatch
from dernier_p2p.protocol.local import identity_for
from dernier_p2p.protocol.sequencer import Sequencer
from tests.protocol.liveness import (
    ANSWER,
    BEAT,
    BIG,
    CARDS,
    CENSOR,
    FIRST_TRY,
    GONE,
    GRACE,
    PLAIN,
    PROBE,
    PROBE_EVERY,
    REVOTE,
    SILENCE,
    STUCK,
    TRY,
    TURN,
    URGE,
    Bed,
    budgets,
    said,
    units,
    vote_of,
)

ALL = (True, True, True)
LIMIT = TURN + 2 * (3 * PLAIN + ANSWER)  # the wait on the last seat to accept, from 0
CATCH_UP = 2 * 3 * PLAIN  # the catch-up budget at three records


def accepting(watcher: int = 2, accepted: tuple[int, ...] = (0, 2), listen=ALL, now: int = 0,
              **kw):
    """A three-seat table at the accepts (``accepted`` in), and ``watcher``'s machine."""
    bed = Bed.opened(listen)
    bed.accept(*accepted)
    return bed, bed.seat_watch(watcher, now, **kw)


def vote(kind: str, target: int | None, rule: str | None = None) -> tuple:
    return ("ToHost", rule or kind, kind, target)


def probe(seat: int) -> tuple:
    return ("Probe", "probe", seat)


def failover_start(why: str, target: int, ms: int, have: int, *, me: int = 2,
                   dial: int | None = None) -> list[tuple]:
    """What a seat that deposes its host for ``why`` (connected) does at once: it votes
    ``depose`` on the connection, which it keeps (no ``CloseHost``), notes the failover, dials
    the first seat of its cycle (``dial``: the target, unless that is itself) and urges the
    target (unless that is itself)."""
    out = [vote("depose", 0, why), ("Note", why, "failover", target, ms),
           ("Dial", "failover", target if dial is None else dial, have)]
    if target != me:
        out.append(("Urge", "urge", target))
    return out


def no_close(actions) -> bool:
    return not any(isinstance(a, act.CloseHost) for a in actions)


# ---------------------------------------------------------------------- beats and silence
def test_the_machine_sends_no_beats():
    """Beats are the network code's (they go while the node checks a long shuffle)."""
    bed, w = accepting(b=budgets(beat_ms=2_000, silence_ms=15_000))
    assert w.deadline() == 15_000  # silence; no beat to wake for
    for t in (1_999, 2_000, 4_000, 14_999):
        assert said(w.advance(t)) == []


def test_silence_closes_the_host_connection():
    b = budgets(beat_ms=10**8, silence_ms=15_000)
    bed, w = accepting(b=b)
    w.heard(5_000)
    w.heard(4_000)  # an older time does not move the clock back
    assert w.deadline() == 20_000
    assert said(w.advance(19_999)) == []
    assert said(w.advance(20_000)) == [("CloseHost", "silent"),
                                       ("Note", "reconnect", "host-lost", 0, GONE)]
    assert not w.host_up
    assert said(w.advance(20_000)) == [("Dial", "reconnect", 0, 2)]


# ---------------------------------------------------------------------- reconnect
def test_reconnect_dials_and_backs_off_to_retry_ms():
    bed, w = accepting(connected=False)
    assert said(w.advance(0)) == [("Dial", "reconnect", 0, 2)]  # have: its last record
    assert said(w.advance(1)) == []  # a dial is under way
    t = 10
    for pause in (50, 100, 200, 250, 250, 250):
        w.dial_failed(0, t)
        assert w.deadline() == t + pause
        assert said(w.advance(t + pause - 1)) == []
        assert said(w.advance(t + pause)) == [("Dial", "reconnect", 0, 2)]
        t += pause
    w.connected(0, t)
    assert said(w.advance(t)) == [("Note", "reconnect", "reconnected", 0, 0)]
    assert w.host_up and w.down_since is None
    w.disconnected(t + 100, "reset")
    assert said(w.advance(t + 100)) == [("Note", "reconnect", "host-lost", 0, GONE),
                                        ("Dial", "reconnect", 0, 2)]
    w.dial_failed(0, t + 120)
    assert w.deadline() == t + 170  # the pause starts again at 50 after a resume


def test_retry_ms_caps_the_pause():
    bed, w = accepting(connected=False, b=budgets(retry_ms=80))
    w.advance(0)
    t = 0
    for pause in (50, 80, 80):
        w.dial_failed(0, t)
        assert w.deadline() == t + pause
        t += pause


def test_a_second_disconnect_changes_nothing():
    bed, w = accepting()
    w.disconnected(100)
    w.advance(100)
    w.disconnected(900)
    assert w.down_since == 100
    assert said(w.advance(900)) == []


# ---------------------------------------------------------------------- gone, two seats
def test_gone_votes_depose_and_fails_over_in_rounds():
    bed, w = accepting()
    w.disconnected(1_000)
    assert said(w.advance(1_000)) == [("Note", "reconnect", "host-lost", 0, GONE),
                                      ("Dial", "reconnect", 0, 2)]
    assert w.deadline() == 1_000 + GONE
    assert said(w.advance(1_000 + GONE - 1)) == []
    t0 = 1_000 + GONE
    out = w.advance(t0)
    assert said(out) == [("Note", "gone", "failover", 1, TRY), ("Dial", "failover", 1, 2),
                         ("Urge", "urge", 1)]
    assert w.phase == FAILOVER and w.deposing == 0
    assert w.round == [1, 2, 0]  # the candidates, then the old host
    vote_of(bed.sessions[2], out[2].frame, "depose", 0, 2)
    assert out[2].frame["vote"]["after"] == 2  # the last record the host signed
    # urged every urge_ms; a failed dial retried after 50 ms
    assert w.deadline() == t0 + URGE
    assert said(w.advance(t0 + URGE - 1)) == []
    assert said(w.advance(t0 + URGE)) == [("Urge", "urge", 1)]
    w.dial_failed(1, t0 + URGE + 10)
    assert w.deadline() == t0 + URGE + 60
    assert said(w.advance(t0 + URGE + 59)) == []
    # the next seat of the dial cycle: the old host (its connection was lost)
    assert said(w.advance(t0 + URGE + 60)) == [("Dial", "failover", 0, 2)]
    # the next candidate is this seat itself: it waits for the others' votes (no urge) and
    # dials on (the cycle's position runs on from turn to turn: seat 1 is next)
    assert said(w.advance(t0 + TRY - 1)) == [("Urge", "urge", 1)]
    assert said(w.advance(t0 + TRY)) == [("Dial", "failover", 1, 2)]
    assert w.round[w.k] == 2
    assert w.deadline() == t0 + 2 * TRY  # (a dial under way, no urge)
    w.dial_failed(1, t0 + TRY + 10)  # (a seat that does not host refuses at once)
    assert said(w.advance(t0 + TRY + 60)) == [("Dial", "failover", 0, 2)]
    # then the old host, once (no urge: it is the one deposed), dialed first in its turn
    assert said(w.advance(t0 + 2 * TRY)) == [("Note", "failover", "trying", 0, TRY),
                                             ("Dial", "failover", 0, 2)]
    w.dial_failed(0, t0 + 2 * TRY + 10)
    assert said(w.advance(t0 + 2 * TRY + 60)) == [("Dial", "failover", 1, 2)]
    assert said(w.advance(t0 + 3 * TRY - 1)) == []
    # and round again
    assert said(w.advance(t0 + 3 * TRY)) == [("Note", "failover", "trying", 1, TRY),
                                             ("Dial", "failover", 1, 2), ("Urge", "urge", 1)]


def test_gone_at_the_first_candidate_itself():
    bed, w = accepting(watcher=1, accepted=(0, 1))
    w.disconnected(0)
    w.advance(0)
    # no urge (the others' votes decide), but it dials the others: seat 2, then the old host
    assert said(w.advance(GONE)) == [("Note", "gone", "failover", 1, TRY),
                                     ("Dial", "failover", 2, 2)]
    assert w.deadline() == GONE + TRY  # (a dial under way)
    w.dial_failed(2, GONE + 20)
    assert said(w.advance(GONE + 69)) == []
    assert said(w.advance(GONE + 70)) == [("Dial", "failover", 0, 2)]
    assert said(w.advance(GONE + TRY - 1)) == []
    assert said(w.advance(GONE + TRY)) == [("Note", "failover", "trying", 2, TRY),
                                           ("Dial", "failover", 2, 2), ("Urge", "urge", 2)]


def test_failover_ends_stuck_after_stuck_ms():
    bed, w = accepting()
    w.disconnected(0)
    w.advance(0)
    w.advance(GONE)
    t = GONE
    while t + URGE < GONE + STUCK:
        t += URGE
        assert not any(isinstance(a, act.End) for a in w.advance(t))
    # (each try lasted 7 * URGE here: the old host's turn now, no urge, a dial under way)
    assert w.round[w.k] == 0 and w.dialing
    assert said(w.advance(GONE + STUCK - 1)) == []
    assert said(w.advance(GONE + STUCK)) == [("End", "stuck")]
    assert w.phase == ENDED and w.ended
    assert w.advance(GONE + STUCK + 1) == [] and w.deadline() is None


def test_a_resume_within_gone_ms_keeps_the_host():
    bed, w = accepting()
    w.disconnected(1_000)
    w.advance(1_000)
    w.connected(0, 1_000 + GONE - 1)
    assert said(w.advance(1_000 + GONE)) == [("Note", "reconnect", "reconnected", 0, 0)]
    assert w.phase == PLAY


def test_two_seats_end_after_two_graces():
    bed = Bed.opened((True, True))
    bed.accept(0)
    w = bed.seat_watch(1)
    w.disconnected(1_000)
    assert said(w.advance(1_000)) == [("Note", "reconnect", "host-lost", 0, 2 * GRACE),
                                      ("Dial", "reconnect", 0, 1)]
    assert said(w.advance(1_000 + GONE)) == []  # no deposing at two seats
    assert w.deadline() == 1_000 + 2 * GRACE
    assert said(w.advance(1_000 + 2 * GRACE - 1)) == []
    assert said(w.advance(1_000 + 2 * GRACE)) == [("End", "two-seats")]
    assert w.phase == ENDED and w.ended
    assert w.advance(10**7) == [] and w.deadline() is None


def test_no_candidate_ends_like_two_seats():
    bed, w = accepting(listen=(True, False, False))
    assert bed.sessions[2].chain.candidates() == []
    w.disconnected(0)
    w.advance(0)
    assert said(w.advance(GONE)) == []
    assert said(w.advance(2 * GRACE - 1)) == []
    assert said(w.advance(2 * GRACE)) == [("End", "two-seats")]
    assert w.phase == ENDED and w.ended


# ---------------------------------------------------------------------- the dial cycle
def four_seats(watcher: int = 2):
    """A four-seat table at the accepts (seats 0, 1, 2 in, every seat listening: candidates
    1, 2, 3), and ``watcher``'s machine."""
    bed = Bed.opened((True,) * 4)
    bed.accept(0, 1, 2)
    return bed, bed.seat_watch(watcher)


def test_failover_dials_every_seat_in_turn_backing_off_to_retry_ms():
    """PROTOCOL.md 7.6: while it urges one candidate, a seat dials every candidate and (its
    connection lost) the old host, one attempt at a time (``_next_dial``: the target, and
    again after each attempt at one of the others, which go in the round's order, never
    itself, their position running on from turn to turn); after each failure it waits 50 ms,
    doubling up to retry_ms."""
    bed, w = four_seats()
    w.disconnected(0)
    w.advance(0)
    assert said(w.advance(GONE)) == [("Note", "gone", "failover", 1, TRY),
                                     ("Dial", "failover", 1, 3), ("Urge", "urge", 1)]
    assert w.round == [1, 2, 3, 0]
    assert said(w.advance(GONE + 100)) == []  # one attempt at a time
    t = GONE
    for failed, pause, then in ((1, 50, 3), (3, 100, 1), (1, 200, 0), (0, 250, 1),
                                (1, 250, 3)):
        t += 5
        w.dial_failed(failed, t)
        assert w.deadline() == t + pause
        assert said(w.advance(t + pause - 1)) == []
        t += pause
        assert said(w.advance(t)) == [("Dial", "failover", then, 3)]
    assert t < GONE + URGE
    assert said(w.advance(GONE + URGE)) == [("Urge", "urge", 1)]  # (a dial under way)
    # this seat's own turn: no urge; it dials the others only, on from seat 3: the old host
    assert said(w.advance(GONE + TRY)) == [("Dial", "failover", 0, 3)]
    w.dial_failed(0, GONE + TRY + 1)
    assert said(w.advance(GONE + TRY + 51)) == [("Dial", "failover", 1, 3)]  # (50 ms again)
    # seat 3's turn: urged and dialed first, then again after each of the others (0, 1)
    assert said(w.advance(GONE + 2 * TRY)) == [("Note", "failover", "trying", 3, TRY),
                                               ("Dial", "failover", 3, 3), ("Urge", "urge", 3)]
    w.dial_failed(3, GONE + 2 * TRY + 1)
    assert said(w.advance(GONE + 2 * TRY + 51)) == [("Dial", "failover", 0, 3)]
    w.dial_failed(0, GONE + 2 * TRY + 52)
    assert said(w.advance(GONE + 2 * TRY + 152)) == [("Dial", "failover", 3, 3)]
    # the old host's turn: dialed first, not urged; then the others on from seat 0: seat 1
    assert said(w.advance(GONE + 3 * TRY)) == [("Note", "failover", "trying", 0, TRY),
                                               ("Dial", "failover", 0, 3)]
    w.dial_failed(0, GONE + 3 * TRY + 1)
    assert said(w.advance(GONE + 3 * TRY + 51)) == [("Dial", "failover", 1, 3)]


def test_a_candidate_taking_over_after_refusing_is_dialled_again_past_an_unreachable_seat():
    """An attempt at a seat out of reach lasts the driver's connect timeout, about as long as
    ``try_ms``: the candidate whose turn it is (refusing the window's first attempt, made
    before the urges reached it) is dialled again right after that attempt, not after a whole
    cycle through the unreachable seats, so the seats trying it resume before it steps back
    (seed 904913)."""
    bed, w = four_seats()
    w.disconnected(0)
    w.advance(0)
    assert said(w.advance(GONE)) == [("Note", "gone", "failover", 1, TRY),
                                     ("Dial", "failover", 1, 3), ("Urge", "urge", 1)]
    w.dial_failed(1, GONE + 5)  # (not hosting yet)
    assert said(w.advance(GONE + 55)) == [("Dial", "failover", 3, 3)]
    w.dial_failed(3, GONE + 5_000)  # out of reach: the connect timeout
    assert said(w.advance(GONE + 5_100)) == [("Dial", "failover", 1, 3), ("Urge", "urge", 1)]
    w.connected(1, GONE + 5_110)
    assert w.phase == PLAY and w.host_up


def test_the_first_seat_of_the_cycle_to_welcome_it_is_its_host():
    """A seat it does not urge may be the one hosting now (a candidate that took over while
    this seat tried another): it resumes there."""
    bed, w = four_seats()
    w.disconnected(0)
    w.advance(0)
    w.advance(GONE)
    w.dial_failed(1, GONE + 5)
    assert said(w.advance(GONE + 55)) == [("Dial", "failover", 3, 3)]
    w.connected(3, GONE + 80)
    out = w.advance(GONE + 80)
    assert said(out) == [("Note", "failover", "new-host", 3, 0), vote("depose", 0, "failover")]
    vote_of(bed.sessions[2], out[1].frame, "depose", 0, 2)
    assert w.phase == PLAY and w.deposing == 0 and w.host_up
    assert said(w.advance(GONE + URGE)) == []  # no more urges or dials


def test_a_late_welcome_from_the_deposed_host_ends_the_depose():
    """At a candidate still gathering, a resume with the old host begun before (the host was
    frozen) is answered and replaces that connection: the seat plays with the old host again
    as with any host, judging it afresh; a later loss of it is a lost host, not the next
    candidate's turn (seed 1502175: four seats kept deposing a host they played with, and
    never judged its censorship)."""
    bed, w = four_seats()
    w.disconnected(0)
    w.advance(0)
    w.advance(GONE)
    w.connected(1, GONE + 80)
    w.advance(GONE + 80)
    assert w.phase == PLAY and w.deposing == 0
    w.connected(0, GONE + 200)
    assert said(w.advance(GONE + 200)) == [("Note", "reconnect", "reconnected", 0, 0)]
    assert w.phase == PLAY and w.deposing is None and w.round == []
    w.disconnected(GONE + 300)
    assert said(w.advance(GONE + 300)) == [("Note", "reconnect", "host-lost", 0, GONE),
                                           ("Dial", "reconnect", 0, 3)]
    assert w.phase == PLAY


def test_a_seat_keeping_its_host_dials_the_old_host_only_once_the_connection_is_lost():
    """After ``censored`` the seat is still connected to the host it deposes: its cycle is the
    candidates but itself; once that connection is lost (here: silent), the old host too."""
    b = budgets(silence_ms=60_000)
    bed, w = accepting(accepted=(0, 1), b=b)
    w.sent_env(bed.take(2, "accept"), 100)
    w.heard(100 + BEAT)
    assert said(w.advance(100 + CENSOR)) == failover_start("censored", 1, FIRST_TRY, 2)
    t = 100 + CENSOR
    for pause in (50, 100, 200, 250):
        w.dial_failed(1, t + 1)
        t += 1 + pause
        assert said(w.advance(t - 1)) == []
        assert said(w.advance(t)) == [("Dial", "failover", 1, 2)]  # seat 1 alone, again
    assert w.host_up and w.phase == FAILOVER
    w.dial_failed(1, t + 1)  # (the next attempt in 250 ms)
    # nothing from the host for silence_ms: the connection goes, the failover goes on
    end = 100 + BEAT + 60_000  # (the last frame was the beat)
    # (seat 1's turn is over: this seat's own now, no urge; its cycle still seat 1 alone)
    assert said(w.advance(end - 1)) == [("Dial", "failover", 1, 2)]
    assert w.host_up and w.round[w.k] == 2
    # (the others now seat 1 and the old host, on from seat 1: the old host)
    assert said(w.advance(end)) == [("CloseHost", "silent"), ("Dial", "failover", 0, 2)]
    assert not w.host_up and w.phase == FAILOVER and w.deposing == 0
    w.dial_failed(0, end + 1)
    assert said(w.advance(end + 51)) == [("Dial", "failover", 1, 2)]
    w.dial_failed(1, end + 52)
    assert said(w.advance(end + 152)) == [("Dial", "failover", 0, 2)]


# ---------------------------------------------------------------------- timeout and probes
def test_timeout_votes_at_the_limit_after_a_probe_that_shows_nothing():
    bed, w = accepting()
    assert w.waits.ends(1) == LIMIT
    assert w.deadline() == LIMIT
    assert said(w.advance(LIMIT - 1)) == []
    assert said(w.advance(LIMIT)) == [probe(1)]
    assert said(w.advance(LIMIT + 10)) == []  # the probe is under way
    w.probe_answer(1, (2, []), LIMIT + 30)
    out = w.advance(LIMIT + 30)
    assert said(out) == [vote("timeout", 1)]
    v = vote_of(bed.sessions[2], out[0].frame, "timeout", 1, 2)
    assert v["after"] == bed.sessions[2].chain.vote_since("timeout", 1) == -1
    # once per ``after``, and the same frame again every ``revote_ms`` while it holds
    assert said(w.advance(LIMIT + 30 + REVOTE - 1)) == []
    again = w.advance(LIMIT + 30 + REVOTE)
    assert said(again) == [vote("timeout", 1)]
    assert again[0].frame == out[0].frame


def test_a_probe_answer_before_the_limit_does_not_count():
    bed, w = accepting()
    w.probe_answer(1, (2, []), LIMIT - 1)
    assert said(w.advance(LIMIT)) == [probe(1)]
    w.probe_answer(1, (2, []), LIMIT)
    assert said(w.advance(LIMIT)) == [vote("timeout", 1)]


def test_no_answer_counts_as_showing_nothing():
    bed, w = accepting()
    w.advance(LIMIT)
    w.probe_answer(1, None, LIMIT + 5_000)
    assert said(w.advance(LIMIT + 5_000)) == [vote("timeout", 1)]


def test_a_seat_is_probed_at_most_every_probe_every_ms():
    bed, w = accepting()
    assert said(w.advance(LIMIT)) == [probe(1)]
    w.probe_answer(1, (2, []), LIMIT - 1)  # (an answer stamped before the limit: no count)
    assert said(w.advance(LIMIT + PROBE_EVERY - 1)) == []
    assert w.deadline() == LIMIT + PROBE_EVERY
    assert said(w.advance(LIMIT + PROBE_EVERY)) == [probe(1)]


def test_without_an_address_the_vote_needs_no_probe():
    bed, w = accepting(listen=(True, False, True))
    assert said(w.advance(LIMIT - 1)) == []
    assert said(w.advance(LIMIT)) == [vote("timeout", 1)]


def test_never_a_timeout_of_a_seat_reported_dropped():
    bed, w = accepting(listen=(True, False, True), b=budgets(censor_ms=10**6))  # never stuck
    w.status(1, "dropped", 100)
    assert said(w.advance(100 + GRACE - 1)) == []
    assert said(w.advance(100 + GRACE)) == [vote("left", 1)]  # no address: no probe
    assert said(w.advance(LIMIT)) == [vote("left", 1)]  # (the left vote again: it holds)
    assert said(w.advance(LIMIT + 10_000)) == [vote("left", 1)]
    # it comes back: its wait restarts with the catch-up budget (3 records)
    w.status(1, "back", LIMIT + 20_000)
    assert w.waits.ends(1) == LIMIT + 20_000 + LIMIT + CATCH_UP
    assert said(w.advance(LIMIT + 20_000 + LIMIT + CATCH_UP - 1)) == []
    assert said(w.advance(LIMIT + 20_000 + LIMIT + CATCH_UP)) == [vote("timeout", 1)]


def test_a_back_restarts_the_wait_once_per_wait():
    bed, w = accepting(listen=(True, False, True))
    w.status(1, "dropped", 100)
    w.status(1, "back", 200)
    assert w.waits.started(1) == 200
    w.status(1, "dropped", 300)
    w.status(1, "back", 400)  # the same wait: no second restart
    assert w.waits.started(1) == 200
    assert said(w.advance(200 + LIMIT + CATCH_UP - 1)) == []
    assert said(w.advance(200 + LIMIT + CATCH_UP)) == [vote("timeout", 1)]


def test_a_seat_whose_wait_restarts_on_its_return_is_voted_timeout_again_at_the_new_limit():
    """The host spends the timeout votes about a seat whose wait restarts on its return (7.5):
    this seat votes again at the new limit, though no record of that seat came (the same
    ``after``); before, it had voted once for that ``after`` and never again."""
    bed, w = accepting(listen=(True, False, True))
    assert said(w.advance(LIMIT)) == [vote("timeout", 1)]
    w.status(1, "dropped", LIMIT + 100)
    w.status(1, "back", LIMIT + 200)
    end = LIMIT + 200 + LIMIT + CATCH_UP
    assert said(w.advance(end - 1)) == []
    assert said(w.advance(end)) == [vote("timeout", 1)]
    w.status(1, "dropped", end + 100)
    w.status(1, "back", end + 200)  # the same wait: no restart; the vote stands
    assert w.waits.started(1) == LIMIT + 200
    assert said(w.advance(end + REVOTE - 1)) == []
    again = w.advance(end + REVOTE)  # (sent again, as any vote whose rule holds)
    assert said(again) == [vote("timeout", 1)]
    assert vote_of(bed.sessions[2], again[0].frame, "timeout", 1, 2)["after"] == -1


def test_a_back_of_a_seat_not_reported_dropped_is_nothing():
    bed, w = accepting()
    w.status(1, "back", 500)
    assert w.waits.started(1) == 0


def test_reports_about_itself_or_no_seat_are_ignored():
    bed, w = accepting()
    w.status(2, "dropped", 10)
    w.status(3, "dropped", 10)
    w.status(-1, "dropped", 10)
    assert w.drops.seats == []


def test_a_probe_showing_a_valid_envelope_passes_it_on_and_votes_nothing():
    bed, w = accepting()
    env = bed.take(1, "accept")
    assert said(w.advance(LIMIT)) == [probe(1)]
    other = bed.sessions[2].chat("mine")  # another seat's envelope in the answer: not its
    w.probe_answer(1, (2, [other, env]), LIMIT + 40)
    out = w.advance(LIMIT + 40)
    assert said(out) == [("ToHost", "pass-on", "pass", None)]
    assert out[0].frame == {"k": "pass", "env": env}
    assert w.delivered.pending_of(1) == [env]
    assert said(w.advance(LIMIT + 5_000)) == []  # delivered and not sequenced: no vote
    # the host sequences it: forgotten; the table waits on the coin now
    rec = bed.put(env)
    w.record(rec, LIMIT + 6_000)
    assert len(w.delivered) == 0
    assert w.waits.started(1) == LIMIT + 6_000


def test_a_probe_showing_an_envelope_the_host_would_refuse_is_showing_nothing():
    bed, w = accepting()
    env = bed.take(1, "accept")
    bad = dict(env, sig=bytes(64))
    w.advance(LIMIT)
    w.probe_answer(1, (2, [bad]), LIMIT + 40)
    assert said(w.advance(LIMIT + 40)) == [vote("timeout", 1)]
    assert len(w.delivered) == 0


def test_a_shown_envelope_is_judged_by_the_judge():
    bed, w = accepting(judge=lambda env: False)
    env = bed.take(1, "accept")
    w.advance(LIMIT)
    w.probe_answer(1, (2, [env]), LIMIT + 40)
    assert said(w.advance(LIMIT + 40)) == [vote("timeout", 1)]


def test_no_timeout_while_its_own_delivery_of_that_seat_is_unsequenced():
    bed, w = accepting(b=budgets(censor_ms=10**6))  # (no censorship in sight either)
    env = bed.take(1, "accept")
    w.probe_answer(1, (2, [env]), 1_000)  # shown early (a drop's probe, say)
    assert said(w.advance(1_000)) == [("ToHost", "pass-on", "pass", None)]
    assert said(w.advance(LIMIT)) == []
    assert said(w.advance(LIMIT + 5_000)) == []


# ---------------------------------------------------------------------- lend
def lends(actions) -> list[tuple[int, int]]:
    """The lends among ``actions``: (seat, the have the records follow)."""
    return [(a.seat, a.after) for a in actions if isinstance(a, act.Lend)]


def test_a_have_at_the_record_that_began_the_wait_allows_the_timeout_vote():
    bed, w = accepting()
    assert w.waits.began(1) == 2  # seat 1 became awaited with record 2
    w.advance(LIMIT)
    w.probe_answer(1, (2, []), LIMIT + 30)
    assert said(w.advance(LIMIT + 30)) == [vote("timeout", 1)]


def test_a_have_past_it_allows_the_timeout_vote_too():
    bed, w = accepting()
    w.advance(LIMIT)
    w.probe_answer(1, (7, []), LIMIT + 30)  # (a seat ahead of this one: nothing to lend)
    assert said(w.advance(LIMIT + 30)) == [vote("timeout", 1)]


def test_a_have_one_short_lends_the_records_after_it_and_restarts_the_wait_at_most_twice():
    """A lend restarts the wait once; a seat that shows the same ``have`` and nothing lent at
    the next limit (the lend never reached it) is lent to once more, and never a third time."""
    bed, w = accepting()
    assert said(w.advance(LIMIT)) == [probe(1)]
    w.probe_answer(1, (1, []), LIMIT + 30)
    out = w.advance(LIMIT + 30)
    assert said(out) == [("Lend", "lend")]  # no timeout vote
    assert lends(out) == [(1, 1)]  # the records after its record 1: record 2 (the node's)
    assert w.waits.started(1) == LIMIT + 30  # restarted, with the catch-up budget
    end = LIMIT + 30 + LIMIT + CATCH_UP
    assert w.waits.ends(1) == end
    assert said(w.advance(end - 1)) == []
    assert said(w.advance(end)) == [probe(1)]
    w.probe_answer(1, (1, []), end + 30, lent=1)  # short, having taken the lend: no more
    out = w.advance(end + 30)
    assert lends(out) == [] and said(out) == [vote("timeout", 1)]
    assert w.waits.ends(1) == end  # no second restart
    bed, w = accepting()
    w.advance(LIMIT)
    w.probe_answer(1, (1, []), LIMIT + 30)
    assert lends(w.advance(LIMIT + 30)) == [(1, 1)]
    end = w.waits.ends(1)
    w.advance(end)
    w.probe_answer(1, (1, []), end + 30)  # the same have, nothing lent: it never arrived
    out = w.advance(end + 30)
    assert lends(out) == [(1, 1)] and vote("timeout", 1) not in said(out)
    second = w.waits.ends(1)
    assert second == end + 30 + LIMIT + CATCH_UP
    w.advance(second)
    w.probe_answer(1, (1, []), second + 30)  # and again: no third lend
    out = w.advance(second + 30)
    assert lends(out) == [] and said(out) == [vote("timeout", 1)]


def test_after_a_lend_a_seat_that_caught_up_and_shows_nothing_is_voted_timeout():
    bed, w = accepting()
    w.advance(LIMIT)
    w.probe_answer(1, (-1, []), LIMIT + 30)  # it holds nothing at all
    assert lends(w.advance(LIMIT + 30)) == [(1, -1)]  # every record
    end = w.waits.ends(1)
    w.advance(end)
    w.probe_answer(1, (2, []), end + 30)
    assert said(w.advance(end + 30)) == [vote("timeout", 1)]


def test_after_a_lend_a_seat_that_shows_its_envelope_has_it_passed_on():
    bed, w = accepting()
    w.advance(LIMIT)
    w.probe_answer(1, (1, []), LIMIT + 30)
    w.advance(LIMIT + 30)
    env = bed.take(1, "accept")  # it got the records and accepted
    end = w.waits.ends(1)
    w.advance(end)
    w.probe_answer(1, (2, [env]), end + 30)
    assert said(w.advance(end + 30)) == [("ToHost", "pass-on", "pass", None)]


def test_a_seat_not_awaited_or_the_host_is_lent_nothing():
    bed, w = accepting(accepted=(0, 1))  # only this seat is awaited
    w.probe_answer(1, (-1, []), 1_000)
    w.probe_answer(0, (-1, []), 1_000)
    assert lends(w.advance(1_000)) == []


def test_a_dropped_seat_probed_at_its_grace_is_lent_to_and_not_voted_left():
    bed, w = accepting()
    w.status(1, "dropped", 100)
    assert said(w.advance(100 + GRACE)) == [probe(1)]
    w.probe_answer(1, (0, []), 100 + GRACE + 20)
    out = w.advance(100 + GRACE + 20)
    assert said(out) == [("Lend", "lend")] and lends(out) == [(1, 0)]
    assert w.waits.started(1) == 100 + GRACE + 20


def test_a_seat_lent_to_is_fed_every_record_after_to_the_end_of_the_match():
    bed, w = accepting()
    w.advance(LIMIT)
    w.probe_answer(1, (1, []), LIMIT + 30)
    assert lends(w.advance(LIMIT + 30)) == [(1, 1)]
    w.probe_answer(1, (2, []), LIMIT + 900, lent=2)  # a later answer: its have now
    assert lends(w.advance(LIMIT + 900)) == []
    rec = bed.put(bed.take(1, "accept"))
    w.record(rec, LIMIT + 1_000)
    assert lends(w.advance(LIMIT + 1_000)) == [(1, 2)]  # fed: its host may not send it
    rec = bed.put(bed.take(0, "coin_commit"))
    bed.sessions[2].no_contest = True  # (any end of the match)
    w.record(rec, LIMIT + 2_000)
    assert lends(w.advance(LIMIT + 2_000)) == [(1, rec["i"] - 1)]
    assert lends(w.advance(LIMIT + 3_000)) == []  # once


def test_the_feed_stops_once_the_host_sends_the_seat_records_again():
    bed, w = accepting()
    w.advance(LIMIT)
    w.probe_answer(1, (1, []), LIMIT + 30)
    assert lends(w.advance(LIMIT + 30)) == [(1, 1)]
    w.probe_answer(1, (2, []), LIMIT + 900, lent=None)  # the host sent it a record since
    w.advance(LIMIT + 900)
    w.record(bed.put(bed.take(1, "accept")), LIMIT + 1_000)
    assert lends(w.advance(LIMIT + 1_000)) == []


# ---------------------------------------------------------------------- left
def test_left_after_grace_with_a_probe_that_got_no_answer():
    bed, w = accepting()
    w.status(1, "dropped", 1_000)
    w.status(1, "dropped", 2_000)  # the first report counts
    assert w.deadline() == 1_000 + GRACE
    assert said(w.advance(1_000 + GRACE - 1)) == []
    assert said(w.advance(1_000 + GRACE)) == [probe(1)]
    w.probe_answer(1, None, 1_000 + GRACE + 5_000)
    out = w.advance(1_000 + GRACE + 5_000)
    assert said(out) == [vote("left", 1)]
    vote_of(bed.sessions[2], out[0].frame, "left", 1, 2)
    # once per after, and the same frame again every revote_ms while it holds
    assert said(w.advance(1_000 + GRACE + 5_000 + REVOTE - 1)) == []
    again = w.advance(1_000 + GRACE + 5_000 + REVOTE)
    assert said(again) == [vote("left", 1)] and again[0].frame == out[0].frame
    rec = bed.put(bed.take(1, "accept"))  # a record of seat 1: its vote is used up
    w.record(rec, 1_000 + GRACE + 6_000)
    assert said(w.advance(1_000 + GRACE + 5_000 + 3 * REVOTE)) == []


def test_a_missed_answer_before_the_grace_ends_does_not_count():
    bed, w = accepting()
    w.status(1, "dropped", 1_000)
    w.probe_answer(1, None, 1_000 + GRACE - 1)
    assert said(w.advance(1_000 + GRACE)) == [probe(1)]
    w.probe_answer(1, None, 1_000 + GRACE)
    assert said(w.advance(1_000 + GRACE)) == [vote("left", 1)]


def test_a_probe_answered_restarts_the_grace():
    bed, w = accepting()
    w.status(1, "dropped", 1_000)
    w.advance(1_000 + GRACE)
    w.probe_answer(1, (2, []), 1_000 + GRACE + 100)
    t = 1_000 + GRACE + 100
    w.advance(t + PROBE_EVERY)
    assert w.deadline() == t + GRACE  # the grace counts from the answer
    assert said(w.advance(t + GRACE - 1)) == []
    assert said(w.advance(t + GRACE)) == [probe(1)]
    w.probe_answer(1, None, t + GRACE)
    assert said(w.advance(t + GRACE)) == [vote("left", 1)]


def test_a_record_of_the_seat_ends_its_drop():
    bed, w = accepting()
    w.status(1, "dropped", 1_000)
    rec = bed.put(bed.take(1, "accept"))
    w.record(rec, 2_000)
    assert w.drops.seats == []
    assert said(w.advance(1_000 + GRACE)) == []


def test_no_left_about_the_host_or_itself():
    bed, w = accepting(listen=(False, False, True))
    w.status(0, "dropped", 0)
    assert said(w.advance(GRACE)) == []


# ---------------------------------------------------------------------- the host's own seat
def test_the_host_is_voted_timeout_at_its_limit_without_a_probe_then_deposed():
    bed, w = accepting(accepted=(1, 2), b=budgets(revote_ms=BIG))  # the table waits on the
    # host's accept (its vote going again is
    # test_a_vote_goes_again_every_revote_ms_while_its_rule_holds_and_no_record_used_it's)
    assert w.waits.awaited == [0]
    assert said(w.advance(LIMIT - 1)) == []
    out = w.advance(LIMIT)
    assert said(out) == [vote("timeout", 0)]
    vote_of(bed.sessions[2], out[0].frame, "timeout", 0, 2)
    assert w.deadline() == LIMIT + GRACE
    assert said(w.advance(LIMIT + GRACE - 1)) == []
    out = w.advance(LIMIT + GRACE)
    assert said(out) == failover_start("host-late", 1, FIRST_TRY, 2)
    vote_of(bed.sessions[2], out[0].frame, "depose", 0, 2)
    assert w.host_up and w.phase == FAILOVER  # it keeps the connection (plays on)
    assert w.target_for == FIRST_TRY


def test_after_host_late_the_first_candidate_is_tried_longer():
    b = budgets(grace_ms=30_000, revote_ms=BIG)  # stuck_ms above the first try
    bed, w = accepting(accepted=(1, 2), b=b)
    t0 = LIMIT + 30_000
    w.advance(LIMIT)
    assert said(w.advance(t0)) == failover_start("host-late", 1, FIRST_TRY, 2)
    t = t0
    while t + URGE < t0 + FIRST_TRY:
        t += URGE
        assert said(w.advance(t)) == [("Urge", "urge", 1)]  # (its dial of seat 1 under way)
    assert t0 + FIRST_TRY - 1 - t < URGE
    assert said(w.advance(t0 + FIRST_TRY - 1)) == []
    # the next is this seat itself: no urge; it dials seat 1 again (the old host, still
    # connected, is no seat to dial)
    assert said(w.advance(t0 + FIRST_TRY)) == [("Dial", "failover", 1, 2)]
    assert w.round[w.k] == 2 and w.target_for == TRY


def test_at_two_seats_the_host_seat_is_never_voted_or_deposed():
    bed = Bed.opened((True, True))
    bed.accept(1)
    w = bed.seat_watch(1)
    assert w.waits.awaited == [0]
    assert said(w.advance(LIMIT + GRACE + 10)) == []


def test_a_host_without_candidates_is_voted_but_not_deposed():
    bed, w = accepting(accepted=(1, 2), listen=(True, False, False))
    assert said(w.advance(LIMIT)) == [vote("timeout", 0)]
    assert said(w.advance(LIMIT + GRACE)) == []
    assert w.phase == PLAY and w.host_up


# ---------------------------------------------------------------------- censored
def test_censored_when_the_host_idles_on_its_own_envelope():
    bed, w = accepting(accepted=(0, 1))  # the table waits on this seat's accept
    env = bed.take(2, "accept")
    w.sent_env(env, 100)
    chat = bed.put(bed.sessions[0].chat("busy?"))  # a chat: the host is not busy
    w.record(chat, 1_000)
    w.heard(1_000)
    w.heard(100 + BEAT)  # a beat: the host's connection still brings frames
    assert w.deadline() == 100 + CENSOR
    assert said(w.advance(100 + CENSOR - 1)) == []
    out = w.advance(100 + CENSOR)
    assert said(out) == failover_start("censored", 1, FIRST_TRY, 3)
    vote_of(bed.sessions[2], out[0].frame, "depose", 0, 2)
    assert w.host_up and w.phase == FAILOVER and w.deposing == 0


def test_no_censorship_without_a_frame_from_the_host_beat_ms_after_the_delivery():
    """PROTOCOL.md 7.5: a connection that brings nothing is broken, not censoring (``silent``
    deals with it): the evidence needs a frame from the host at ``d + BEAT_MS`` or later."""
    bed, w = accepting(accepted=(0, 1))
    w.sent_env(bed.take(2, "accept"), 100)
    w.heard(100 + BEAT - 1)
    assert w.deadline() == 100 + CENSOR
    assert said(w.advance(100 + CENSOR)) == []
    assert said(w.advance(100 + CENSOR + 5_000)) == []
    w.heard(100 + CENSOR + 6_000)  # a beat: the connection brings frames, and it passes over E
    assert said(w.advance(100 + CENSOR + 6_000)) == failover_start("censored", 1, FIRST_TRY, 2)


def test_no_censorship_of_an_envelope_the_host_would_refuse():
    bed, w = accepting(accepted=(0, 1), judge=lambda env: False)
    w.sent_env(bed.take(2, "accept"), 100)
    assert said(w.advance(30_000)) == []


def test_a_resume_sends_again_and_restarts_the_clock():
    bed, w = accepting(accepted=(0, 1))
    w.sent_env(bed.take(2, "accept"), 100)
    w.heard(2_000)
    w.disconnected(3_000)
    w.connected(0, 3_100)  # (the welcome is a frame at the resend, not beat_ms after it)
    assert said(w.advance(3_100)) == [("Note", "reconnect", "host-lost", 0, GONE),
                                      ("Note", "reconnect", "reconnected", 0, 0)]
    w.heard(3_100 + BEAT)
    assert said(w.advance(3_100 + CENSOR - 1)) == []
    assert said(w.advance(3_100 + CENSOR)) == failover_start("censored", 1, FIRST_TRY, 2)


def test_no_censorship_at_two_seats():
    bed = Bed.opened((True, True))
    bed.accept(0)
    w = bed.seat_watch(1)
    w.sent_env(bed.take(1, "accept"), 0)
    assert said(w.advance(30_000)) == []


def test_censored_when_the_host_sequences_two_m_newer_envelopes():
    bed = Bed.dealt()
    w = bed.seat_watch(2)
    assert w.waits.awaited == [1]  # not this seat
    resign = bed.sessions[2].resign()
    w.sent_env(resign, 0)
    t = 1_000
    for seat in (0, 1, 0, 1, 0, 1):  # the first echoes the resign's head: not newer
        w.record(bed.put(bed.sessions[seat].ack()), t)
        w.heard(t)
        t += 1_000
    assert said(w.advance(10_000)) == []  # five newer
    last = bed.put(bed.sessions[0].ack())
    w.record(last, 10_000)
    assert said(w.advance(10_000)) == failover_start("censored", 1, FIRST_TRY, last["i"])


# ---------------------------------------------------------------------- a failover keeping its host
def censored_at(watcher: int = 2, accepted: tuple[int, ...] = (0,), at: int = 100):
    """``watcher`` delivers its accept at ``at``; the idle host passes over it (a beat
    ``BEAT`` later): ``censored`` at ``at + CENSOR``. Returns the bed, the machine, that time
    (the failover begun) and the accept."""
    bed, w = accepting(watcher=watcher, accepted=accepted)
    env = bed.take(watcher, "accept")
    w.sent_env(env, at)
    w.heard(at + BEAT)
    assert said(w.advance(at + CENSOR - 1)) == []
    out = w.advance(at + CENSOR)
    assert said(out)[:2] == [vote("depose", 0, "censored"),
                             ("Note", "censored", "failover", 1, FIRST_TRY)]
    assert no_close(out)
    return bed, w, at + CENSOR, env


def test_censored_keeps_the_connection_and_votes_on():
    """PROTOCOL.md 7.5, censored: the seat keeps its host connection and plays on (its votes,
    probes and the records it applies) until a candidate welcomes it."""
    bed, w, t0, _ = censored_at()  # the table waits on seats 1 and 2
    assert w.host_up and w.phase == FAILOVER and w.deposing == 0
    end = w.waits.ends(1)
    assert t0 < end < t0 + FIRST_TRY
    assert said(w.advance(end - 1)) == [("Urge", "urge", 1)]  # (its dial of 1 under way)
    assert said(w.advance(end)) == [probe(1)]
    w.probe_answer(1, None, end + 40)
    out = w.advance(end + 40)
    assert said(out) == [vote("timeout", 1)]  # on the connection it keeps
    vote_of(bed.sessions[2], out[0].frame, "timeout", 1, 2)
    rec = bed.put(bed.sessions[0].chat("hm"))  # a chat: no progress, the evidence stands
    w.record(rec, end + 100)
    w.heard(end + 100)
    out = w.advance(end + 100)
    assert said(out) == [vote("depose", 0, "failover")]  # (votes again at the host's record)
    assert vote_of(bed.sessions[2], out[0].frame, "depose", 0, 2)["after"] == rec["i"]
    assert w.phase == FAILOVER and w.host_up and w.waits.awaited == [1, 2]
    assert said(w.advance(end + URGE + 100)) == [("Urge", "urge", 1)]


def test_host_kept_when_the_evidence_goes():
    """The host sequences the envelope after all: the seat stays with it (``host-kept``), at
    the record that takes the evidence away, and neither urges nor dials any more."""
    bed, w, t0, env = censored_at()
    t = t0 + 2_000
    assert said(w.advance(t - 1)) == [("Urge", "urge", 1)]
    assert w.phase == FAILOVER
    rec = bed.put(env)
    w.record(rec, t)
    w.heard(t)
    out = w.advance(t)
    assert said(out) == [vote("depose", 0, "failover"), ("Note", "failover", "host-kept", 0, 0)]
    assert w.phase == PLAY and w.host_up and w.deposing is None
    assert w.round == []
    assert len(w.delivered) == 0
    assert said(w.advance(t + URGE)) == []
    assert w.deadline() == w.waits.ends(1)  # plain play: the wait on seat 1


def test_host_kept_when_progress_ends_the_idle_hosts_evidence():
    """Evidence of an idle host holds while no progress record comes: one does (another seat's
    accept), and the envelope is no evidence any more: ``host-kept``; it is again
    ``censor_ms`` after that record if the host still passes over it."""
    bed, w, t0, _ = censored_at()
    t = t0 + 1_000
    rec = bed.put(bed.take(1, "accept"))
    w.record(rec, t)
    w.heard(t)
    assert said(w.advance(t)) == [vote("depose", 0, "failover"),
                                  ("Note", "failover", "host-kept", 0, 0)]
    assert w.phase == PLAY and w.deposing is None
    assert w.deadline() == t + CENSOR
    assert said(w.advance(t + CENSOR - 1)) == []
    # (its depose vote at this record went already: not again)
    assert said(w.advance(t + CENSOR)) == failover_start("censored", 1, FIRST_TRY, 2)[1:]


def test_host_kept_when_the_hosts_seat_is_no_longer_late():
    bed, w = accepting(accepted=(1, 2), b=budgets(revote_ms=BIG))  # the table waits on the
    # host's own accept
    assert said(w.advance(LIMIT)) == [vote("timeout", 0)]
    out = w.advance(LIMIT + GRACE)
    assert said(out) == failover_start("host-late", 1, FIRST_TRY, 2)
    assert no_close(out) and w.host_up
    t = LIMIT + GRACE + 3_000
    assert said(w.advance(t - 1)) == [("Urge", "urge", 1)]
    assert w.phase == FAILOVER
    rec = bed.put(bed.take(0, "accept"))  # the host's seat plays: no longer late
    w.record(rec, t)
    w.heard(t)
    assert said(w.advance(t)) == [vote("depose", 0, "failover"),
                                  ("Note", "failover", "host-kept", 0, 0)]
    assert w.phase == PLAY and w.host_up and w.deposing is None
    assert said(w.advance(t + URGE)) == []


def test_a_timeout_vote_the_host_leaves_standing_for_censor_ms_deposes_it():
    """A host holding a quorum of fresh timeout votes MUST sequence the time-out (7.5): a vote
    of this seat still standing censor_ms + grace_ms after it first went on this connection is
    the host late with a verdict (``host-late``; seed 902570: a stalling host dropped the vote
    about a seat nobody could probe). Not before."""
    bed, w = accepting(listen=(True, False, True))
    assert said(w.advance(LIMIT)) == [vote("timeout", 1)]  # (no address: no probe)
    assert w.deadline() == LIMIT + REVOTE
    t = LIMIT + CENSOR + GRACE
    while w.deadline() < t:
        w.heard(w.deadline())
        assert said(w.advance(w.deadline())) == [vote("timeout", 1)]  # it goes again
    assert w.deadline() == t
    out = w.advance(t)
    # (seat 1 gives no address: this seat is the only candidate, its own target)
    assert said(out) == failover_start("host-late", 2, FIRST_TRY, 2)[:2]
    assert no_close(out) and w.host_up and w.phase == FAILOVER


def test_a_host_closing_the_connection_does_not_put_back_the_clock_of_a_standing_vote():
    """The clock of a standing ``timeout`` vote runs from its first sending to this host, over
    every connection to it (seed 1209207: a stalling host that closed the seat's connection as
    silent every 15 s, with censor_ms + grace_ms longer than that, was never late); after a
    resume the vote goes again at once and the host has ``revote_ms`` on that connection."""
    bed, w = accepting(listen=(True, False, True))
    assert said(w.advance(LIMIT)) == [vote("timeout", 1)]
    t = LIMIT + CENSOR + GRACE
    drop = t - REVOTE // 2  # the host closes the connection just before the vote is late
    w.disconnected(drop)
    w.connected(0, drop + 10)
    assert vote("timeout", 1) in said(w.advance(drop + 10))  # again, at once
    back = drop + 10 + REVOTE
    assert w.deadline() == back  # not t: revote_ms on this connection first
    w.heard(back)
    out = w.advance(back)  # (its revote falls due too)
    assert said(out) == [vote("timeout", 1), *failover_start("host-late", 2, FIRST_TRY, 2)[:2]]
    bed, w = accepting(listen=(True, False, True))  # another host: its clock starts again
    w.advance(LIMIT)
    w.disconnected(t - 1)
    w.connected(2, t)
    w.advance(t)
    w.heard(t + REVOTE)
    assert vote("depose", 0, "host-late") not in said(w.advance(t + REVOTE))


def test_a_timeout_vote_whose_ground_went_deposes_nobody():
    bed, w = accepting(listen=(True, False, True))
    assert said(w.advance(LIMIT)) == [vote("timeout", 1)]
    w.status(1, "dropped", LIMIT + 1)  # reported dropped: no timeout vote stands any more
    w.heard(LIMIT + CENSOR + GRACE)
    assert vote("depose", 0, "host-late") not in said(w.advance(LIMIT + CENSOR + GRACE))
    assert w.phase == PLAY and w.deposing is None


def test_while_attached_a_drop_is_voted_left_at_its_grace():
    """The first candidate deposing for censorship is its own target (no urge) with a dial of
    seat 2 under way: its deadline is still the end of a drop's grace (the rules it plays on
    by), not only its failover's."""
    bed, w, t0, _ = censored_at(watcher=1, accepted=(0, 2))
    assert w.round[w.k] == 1 and w.dialing
    w.status(2, "dropped", t0 + 100)
    assert w.deadline() == t0 + 100 + GRACE
    assert said(w.advance(t0 + 100 + GRACE - 1)) == []
    assert said(w.advance(t0 + 100 + GRACE)) == [probe(2)]
    assert w.deadline() == t0 + 100 + GRACE + PROBE_EVERY
    w.probe_answer(2, None, t0 + 100 + GRACE + 5_000)
    assert said(w.advance(t0 + 100 + GRACE + 5_000)) == [vote("left", 2)]


def test_while_attached_the_failover_ends_stuck_ms_after_the_last_progress():
    """A seat keeping its host counts the failover's ``stuck_ms`` from the last progress record
    as well: a table still playing is not stuck."""
    bed, w = accepting(accepted=(2,), b=budgets(revote_ms=BIG))  # the table waits on seats 0
    # (the host) and 1
    end = w.waits.ends(0)
    assert end == w.waits.ends(1)
    assert said(w.advance(end)) == [vote("timeout", 0), probe(1)]
    w.probe_answer(1, None, end + 10)
    assert said(w.advance(end + 10)) == [vote("timeout", 1)]
    t0 = end + GRACE
    assert said(w.advance(t0)) == failover_start("host-late", 1, FIRST_TRY, 1)
    t1 = t0 + 20_000
    rec = bed.put(bed.take(1, "accept"))  # progress; the host's seat still late
    w.record(rec, t1)
    w.heard(t1)
    assert said(w.advance(t1)) == [vote("depose", 0, "failover"), ("Urge", "urge", 1)]
    assert w.phase == FAILOVER and w.last_progress == t1
    w.heard(t1 + 100_000)  # (the host beats: no silence)
    assert ("End", "stuck") not in said(w.advance(t0 + STUCK))  # from the failover: not yet
    assert w.phase == FAILOVER
    assert ("End", "stuck") not in said(w.advance(t1 + STUCK - 1))
    # the table stuck too: its abandon vote, then the end
    assert said(w.advance(t1 + STUCK)) == [vote("abandon", None), ("End", "stuck")]
    assert w.phase == ENDED


def host_late():
    """Seat 2 waits on the host's own accept; the host is late past its limit and a grace,
    seat 1 unanswering: at ``t0`` seat 2 deposes it (host-late)."""
    bed, w = accepting(accepted=(2,))
    end = w.waits.ends(0)
    w.advance(end)
    w.probe_answer(1, None, end + 10)
    w.advance(end + 10)
    w.heard(end + GRACE)
    return bed, w, end + GRACE


def test_a_detached_failover_ends_stuck_ms_after_it_began():
    """(Without the host's connection, the failover's own clock alone counts.)"""
    bed, w, t0 = host_late()
    assert said(w.advance(t0))[0] == vote("depose", 0, "host-late")
    w.record(bed.put(bed.take(1, "accept")), t0 + 1_000)
    w.heard(t0 + 1_000)
    w.advance(t0 + 1_000)
    assert w.last_progress == t0 + 1_000
    w.disconnected(t0 + 2_000)
    stuck = t0 + w.b.stuck_ms
    assert ("End", "stuck") not in said(w.advance(stuck - 1))
    assert said(w.advance(stuck)) == [("End", "stuck")]


def test_a_detached_failover_counts_stuck_ms_from_a_record_lent_to_it():
    """Records lent over a link while it has no host connection (7.5, ``lend``): the table
    goes on, the failover is not stuck."""
    bed, w, t0 = host_late()
    assert said(w.advance(t0))[0] == vote("depose", 0, "host-late")
    w.disconnected(t0 + 1_000)
    rec = bed.put(bed.take(1, "accept"))
    w.record(rec, t0 + 2_000)  # lent: progress away from the host
    assert w.progress_away == t0 + 2_000
    assert ("End", "stuck") not in said(w.advance(t0 + w.b.stuck_ms))
    stuck = t0 + 2_000 + w.b.stuck_ms
    assert w.deadline() <= stuck
    assert ("End", "stuck") not in said(w.advance(stuck - 1))
    # fed over a link: it asks the table first (a probe of each seat with an address)
    assert said(w.advance(stuck)) == [probe(1)]
    w.probe_answer(1, None, stuck + 100)  # nobody answers
    assert w.deadline() <= stuck + PROBE
    assert ("End", "stuck") not in said(w.advance(stuck + PROBE - 1))  # (answers are due)
    assert ("End", "stuck") in said(w.advance(stuck + PROBE))


def fed_in_failover():
    """A seat in failover without its host connection, lent a progress record at ``t``."""
    bed, w, t0 = host_late()
    w.advance(t0)
    w.disconnected(t0 + 1_000)
    w.record(bed.put(bed.take(1, "accept")), t0 + 2_000)
    return bed, w, t0 + 2_000


def test_a_fed_failover_waits_on_while_a_seat_of_the_table_answers_up_to_twice_stuck_ms():
    """A muted seat lent the table's records does not see another seat's return restart the
    table's wait; while a seat answers its probes it waits on, at most ``2 * stuck_ms`` after
    the last record lent (seed 2201144: it ended as stuck 7 s before the table moved on and
    was voted ``left``, ranked below the cheating host)."""
    bed, w, t = fed_in_failover()
    stuck = t + w.b.stuck_ms
    assert said(w.advance(stuck)) == [probe(1)]
    w.probe_answer(1, (3, []), stuck + 30)  # seat 1 answers: the table is there
    now = stuck + PROBE
    while now < t + 2 * w.b.stuck_ms:
        out = said(w.advance(now))
        assert ("End", "stuck") not in out
        if probe(1) in out:
            w.probe_answer(1, (3, []), now + 30)
        now = min(w.deadline(), t + 2 * w.b.stuck_ms)
    assert said(w.advance(t + 2 * w.b.stuck_ms)) == [("End", "stuck")]


def test_a_fed_failover_ends_once_its_probes_go_unanswered():
    bed, w, t = fed_in_failover()
    stuck = t + w.b.stuck_ms
    w.advance(stuck)
    w.probe_answer(1, (3, []), stuck + 30)
    assert ("End", "stuck") not in said(w.advance(stuck + PROBE))
    w.probe_answer(1, None, stuck + PROBE + 10)  # the next probe goes unanswered
    assert ("End", "stuck") in said(w.advance(stuck + PROBE + 10))


# ---------------------------------------------------------------------- abandon and stuck
def test_abandon_at_stuck_ms_then_stuck_grace_later():
    bed, w = accepting(accepted=(0, 1))  # only this seat is awaited
    chat = bed.put(bed.sessions[1].chat("anyone?"))
    w.record(chat, 20_000)  # a chat is no progress
    assert said(w.advance(LIMIT)) == []  # (its own wait ran out: nothing to do)
    w.heard(100_000)  # (the host beats: stuck_ms outlasts SILENCE_MS)
    assert w.deadline() == STUCK
    assert said(w.advance(STUCK - 1)) == []
    out = w.advance(STUCK)
    assert said(out) == [vote("abandon", None)]
    v = vote_of(bed.sessions[2], out[0].frame, "abandon", None, 2)
    assert v["after"] == 2  # the last record but the chat
    assert w.deadline() == STUCK + REVOTE  # the vote again while no record comes
    again = w.advance(STUCK + REVOTE)
    assert said(again) == [vote("abandon", None)] and again[0].frame == out[0].frame
    assert said(w.advance(STUCK + GRACE - 1)) == [vote("abandon", None)]  # (past 2 REVOTE)
    assert w.deadline() == STUCK + GRACE
    assert said(w.advance(STUCK + GRACE)) == [("End", "stuck")]
    assert w.phase == ENDED and w.deadline() is None


def test_progress_restarts_the_stuck_clock():
    bed, w = accepting(accepted=(0, 1))
    rec = bed.put(bed.take(2, "accept"))
    w.record(rec, 30_000)
    w.heard(100_000)
    out = said(w.advance(STUCK))
    assert vote("abandon", None) not in out and w.host_up
    assert w.last_progress == 30_000


def test_progress_after_the_abandon_vote_cancels_the_end():
    bed, w = accepting(accepted=(0, 1))
    w.heard(100_000)
    assert said(w.advance(STUCK)) == [vote("abandon", None)]
    rec = bed.put(bed.take(2, "accept"))
    w.record(rec, STUCK + 100)
    assert w.abandon_at is None
    assert ("End", "stuck") not in said(w.advance(STUCK + GRACE))


def test_no_abandon_while_an_awaited_seat_is_within_its_limit():
    """PROTOCOL.md 7.5, abandon: every awaited seat past its limit (a slow unit of work gives
    this seat's own wait a limit beyond stuck_ms)."""
    b = budgets(unit_ms=25_000)
    bed, w = accepting(accepted=(0, 1), b=b)
    end = w.waits.ends(2)
    assert end == TURN + 25_000 * (3 * PLAIN + ANSWER) > STUCK == b.stuck_ms
    w.heard(end - SILENCE + 1)
    assert said(w.advance(STUCK)) == []
    assert w.deadline() == end
    assert said(w.advance(end - 1)) == []
    assert said(w.advance(end)) == [vote("abandon", None)]


def back_late(**budget: int):
    """The table waits on seat 1 (its accept, ``env``, not yet sent); seat 1 drops and comes
    ``back`` 5 s before ``stuck_ms - turn_ms``: its wait restarts with the catch-up budget and
    ends at ``end``."""
    bed, w = accepting(b=budgets(**budget))
    env = bed.take(1, "accept")
    back = STUCK - TURN - 5_000
    w.status(1, "dropped", back - 100)
    w.status(1, "back", back)
    return bed, w, env, back, w.waits.ends(1)


def test_no_abandon_while_an_envelope_passed_on_runs_its_censor_clock():
    """PROTOCOL.md 7.5, abandon: not while an envelope this seat delivered to the host runs its
    censor clock, or is evidence and the seat deposed the host for it less than ``try_ms``
    ago; the host owes it and is deposed (``censored``). A return
    restarted the wait on seat 1 with the catch-up budget, so its limit and the pass of what
    the probe there shows come too late for ``stuck_ms`` to cover ``censor_ms`` after them
    (seed 902905: a stalling host woke to a quorum of abandon votes)."""
    bed, w, env, back, end = back_late()
    assert end < STUCK < end + 40 + CENSOR
    w.heard(end)
    assert said(w.advance(end)) == [probe(1)]
    w.probe_answer(1, (2, [env]), end + 40)
    assert said(w.advance(end + 40)) == [("ToHost", "pass-on", "pass", None)]
    w.heard(STUCK)
    assert said(w.advance(STUCK)) == []  # the table is not stuck: its host holds seat 1 up
    w.heard(end + 40 + CENSOR)
    out = said(w.advance(end + 40 + CENSOR))  # passed over: the host is deposed, not abandoned
    assert out == failover_start("censored", 1, FIRST_TRY, 2)
    assert REVOTE < TRY
    assert vote("abandon", None) not in said(w.advance(end + 40 + CENSOR + REVOTE))
    # the first candidate has FIRST_TRY, the second try_ms: a split may be abandoned after
    # (seed 2303088: the first candidate had left for good, and the table was abandoned
    # before the second was tried)
    tried = end + 40 + CENSOR + FIRST_TRY + TRY
    for t in (end + 40 + CENSOR + TRY, tried - 1):
        w.heard(t)
        assert vote("abandon", None) not in said(w.advance(t))
    w.heard(tried)
    assert vote("abandon", None) in said(w.advance(tried))


def test_a_seat_that_deposed_early_waits_for_the_others_to_see_the_evidence_before_abandon():
    """PROTOCOL.md 7.5, abandon: a seat that an awaited seat urged probed it early, passed its
    envelope on and deposed the host for censoring it; the others probe that seat only at its
    limit and hold the evidence ``censor_ms`` later, and a depose needs their votes, so this
    seat does not vote ``abandon`` before ``limit + censor_ms + grace_ms`` (seed 2104760: it
    ended the match as stuck 6 s before the others deposed)."""
    bed, w, env, back, end = back_late(unit_ms=2_000)  # (a long catch-up budget)
    w.link_vote(1, bed.sessions[1].vote("depose", 0), back + 10)  # seat 1 urges this seat
    w.heard(back + 10)
    assert probe(1) in said(w.advance(back + 10))  # probed at once, not at its limit
    w.probe_answer(1, (2, [env]), back + 50)
    assert said(w.advance(back + 50)) == [("ToHost", "pass-on", "pass", None)]
    w.heard(back + 50 + CENSOR)
    assert said(w.advance(back + 50 + CENSOR))[0] == vote("depose", 0, "censored")
    # stuck, and a second candidate had try_ms
    late = max(STUCK, back + 50 + CENSOR + FIRST_TRY + TRY)
    due = end + CENSOR + GRACE
    assert late < due and w.deadline() <= due
    w.heard(late)
    assert vote("abandon", None) not in said(w.advance(late))
    w.heard(due - 1)
    assert vote("abandon", None) not in said(w.advance(due - 1))
    w.heard(due)
    assert vote("abandon", None) in said(w.advance(due))


def test_no_abandon_while_the_host_connection_is_down():
    bed, w = accepting(accepted=(0, 1), listen=(True, False, False))
    w.disconnected(STUCK - 10)
    assert vote("abandon", None) not in said(w.advance(STUCK))


# ---------------------------------------------------------------------- take-over
def candidate(vote_at: int | None, down_at: int = 4_000):
    """Seat 1 (the first candidate); seat 2's depose vote comes over a link at ``vote_at``;
    seat 1 loses the host at ``down_at`` and votes itself ``GONE`` later."""
    bed, w = accepting(watcher=1, accepted=(0, 1))
    if vote_at is not None:
        w.link_vote(2, bed.sessions[2].vote("depose", 0), vote_at)
    w.disconnected(down_at)
    w.advance(down_at)
    return bed, w


def test_take_over_with_its_own_vote_and_one_within_try_ms():
    bed, w = candidate(vote_at=4_000 + GONE - TRY)
    out = w.advance(4_000 + GONE)
    assert said(out) == [("Note", "gone", "failover", 1, TRY), ("Dial", "failover", 2, 2),
                         ("TakeOver", "take-over", 0)]
    assert w.phase == HOSTING
    assert w.advance(4_000 + GONE + 1) == [] and w.deadline() is None


def test_no_take_over_with_a_vote_older_than_try_ms():
    bed, w = candidate(vote_at=4_000 + GONE - TRY - 1)
    assert said(w.advance(4_000 + GONE)) == [("Note", "gone", "failover", 1, TRY),
                                             ("Dial", "failover", 2, 2)]
    assert w.phase == FAILOVER


def test_no_take_over_before_it_voted_itself():
    bed, w = candidate(vote_at=None, down_at=10**6)
    w.link_vote(2, bed.sessions[2].vote("depose", 0), 100)
    assert said(w.advance(100)) == []  # one vote: q(3) is 2
    bed, w = candidate(vote_at=None)
    assert said(w.advance(4_000 + GONE)) == [("Note", "gone", "failover", 1, TRY),
                                             ("Dial", "failover", 2, 2)]
    w.link_vote(2, bed.sessions[2].vote("depose", 0), 4_000 + GONE + 500)
    assert said(w.advance(4_000 + GONE + 500)) == [("TakeOver", "take-over", 0)]


def test_the_hosts_own_link_vote_does_not_count():
    bed, w = candidate(vote_at=None)
    w.link_vote(0, bed.sessions[0].vote("depose", 0), 4_000 + GONE)
    assert said(w.advance(4_000 + GONE)) == [("Note", "gone", "failover", 1, TRY),
                                             ("Dial", "failover", 2, 2)]


def test_a_seat_that_is_no_candidate_never_takes_over():
    bed, w = accepting(watcher=2, accepted=(0, 2), listen=(True, True, False))
    w.link_vote(1, bed.sessions[1].vote("depose", 0), 0)
    w.disconnected(0)
    w.advance(0)
    assert said(w.advance(GONE)) == [("Note", "gone", "failover", 1, TRY),
                                     ("Dial", "failover", 1, 2), ("Urge", "urge", 1)]


def test_at_four_seats_one_vote_short_is_no_take_over():
    bed = Bed.opened((True, True, True, True))
    bed.accept(0, 1)
    w = bed.seat_watch(1)
    w.disconnected(0)
    w.advance(0)
    w.link_vote(2, bed.sessions[2].vote("depose", 0), 100)
    assert said(w.advance(GONE)) == [("Note", "gone", "failover", 1, TRY),  # 2 of q(4) = 3
                                     ("Dial", "failover", 2, 2)]
    w.link_vote(3, bed.sessions[3].vote("depose", 0), GONE + 10)
    assert said(w.advance(GONE + 10)) == [("TakeOver", "take-over", 0)]


def _taken_over_on_urges() -> tuple[Bed, SeatWatch]:
    """Five seats: seat 1, playing with host 0 and deposing nobody, takes over at 1 000 on the
    depose votes of seats 2, 3 and 4 (q(5) = 3)."""
    bed = Bed.opened((True,) * 5)
    bed.accept(0, 1, 2, 3, 4)
    w = bed.seat_watch(1, 0)
    for seat in (2, 3, 4):
        w.link_vote(seat, bed.sessions[seat].vote("depose", 0), 1_000)
    assert said(w.advance(1_000)) == [("TakeOver", "take-over", 0)]
    return bed, w


def test_a_candidate_that_took_over_on_urges_alone_fails_over_after_stepping_back():
    """Five seats: seat 1, still playing with its host, takes over on the depose votes of
    seats 2, 3 and 4 (q(5) = 3) without deposing itself, then steps back: it goes on with
    their failover, deposing the host, past itself to the next candidate (seed 500978: its
    failover had nobody to depose, an AssertionError)."""
    bed, w = _taken_over_on_urges()
    assert w.deposing is None
    started = {seat: w.waits.started(seat) for seat in w.waits.awaited}
    w.stepped_back(1_000 + TRY, records=bed.records)  # (no record came while it gathered)
    assert {seat: w.waits.started(seat) for seat in w.waits.awaited} == started
    assert w.phase == FAILOVER and w.deposing == 0
    out = said(w.advance(1_000 + TRY))
    assert ("Note", "failover", "trying", 2, TRY) in out and ("Urge", "urge", 2) in out
    # their failover is its own now: its vote counts with two fresh urges (q(5) = 3)
    for seat in (3, 4):
        w.link_vote(seat, bed.sessions[seat].vote("depose", 0), 1_000 + TRY + 100)
    assert ("TakeOver", "take-over", 0) in said(w.advance(1_000 + TRY + 100))


def test_a_candidate_that_took_over_on_urges_alone_and_kept_its_host_plays_on_after_stepping_back():
    """G9 (seed 2910715): five seats; seat 1, playing with host 0 and deposing nobody, takes
    over on the depose votes of seats 2, 3 and 4, two of them perhaps a minority's, keeping
    its connection to host 0 (7.6). Stepping back, it plays on with host 0 through it: no
    failover of its own, nothing dialled or urged, and the votes it took over on spent."""
    bed, w = _taken_over_on_urges()
    w.heard(1_000 + BEAT)  # (the host's frames go on coming while it gathers)
    w.stepped_back(1_000 + TRY, records=bed.records, connected=True)
    assert w.phase == PLAY and w.deposing is None and w.host_up
    out = said(w.advance(1_000 + TRY))
    assert out == [("Note", "step-back", "step-back", 1, 0)]
    assert said(w.advance(1_000 + TRY + 2 * URGE)) == []
    # an urge now is one seat trying it: no take-over (q(5) = 3)
    w.link_vote(2, bed.sessions[2].vote("depose", 0), 1_000 + TRY + 100)
    assert ("TakeOver", "take-over", 0) not in said(w.advance(1_000 + TRY + 100))


def test_a_candidate_deposing_its_host_that_kept_the_connection_goes_on_attached():
    """Seat 1 deposes host 0 (``host-late``), keeping its connection, and takes over with seat
    2's urge (q(3) = 2), keeping the connection while it gathers (7.6). Stepping back, its
    failover goes on at seat 2, still playing through the old host's connection: it never
    dials the host it is connected to."""
    bed, w = accepting(watcher=1, accepted=(1, 2), b=budgets(revote_ms=BIG))
    w.advance(LIMIT)
    t = LIMIT + GRACE
    out = said(w.advance(t))
    assert out[:2] == [vote("depose", 0, "host-late"), ("Note", "host-late", "failover", 1,
                                                         FIRST_TRY)]
    w.link_vote(2, bed.sessions[2].vote("depose", 0), t + 100)
    assert ("TakeOver", "take-over", 0) in said(w.advance(t + 100))
    w.heard(t + 100 + BEAT)
    w.stepped_back(t + 100 + TRY, records=bed.records, connected=True)
    assert w.phase == FAILOVER and w.deposing == 0 and w.host_up
    out = said(w.advance(t + 100 + TRY))
    assert ("Note", "failover", "trying", 2, TRY) in out and ("Urge", "urge", 2) in out
    dials = [a[2] for a in out if a[0] == "Dial"]
    now = t + 100 + TRY
    for _ in range(6):
        w.dial_failed(dials[-1], now + 1)
        now += 300
        dials += [a[2] for a in said(w.advance(now)) if a[0] == "Dial"]
    assert dials and set(dials) == {2}


def test_step_back_goes_on_with_the_next_candidate():
    bed, w = candidate(vote_at=None)
    w.advance(4_000 + GONE)
    t = 4_000 + GONE + 500
    w.link_vote(2, bed.sessions[2].vote("depose", 0), t)
    assert said(w.advance(t)) == [("TakeOver", "take-over", 0)]
    w.stepped_back(t + TRY)  # the host machine steps back try_ms after taking over
    assert w.phase == FAILOVER
    out = w.advance(t + TRY)
    # (seat 2's turn: dialled first)
    assert said(out) == [("Note", "failover", "trying", 2, TRY), ("Note", "step-back",
                                                                    "step-back", 1, 0),
                         ("Dial", "failover", 2, 2), ("Urge", "urge", 2)]
    vote_of(bed.sessions[1], out[3].frame, "depose", 0, 1)
    # its host connection is gone: the old host is in its dial cycle again
    w.dial_failed(2, t + TRY + 10)
    assert said(w.advance(t + TRY + 60)) == [("Dial", "failover", 0, 2)]
    # a seat still trying it urges again: that is a new quorum trying it now
    w.link_vote(2, bed.sessions[2].vote("depose", 0), t + TRY + 100)
    assert said(w.advance(t + TRY + 100)) == [("TakeOver", "take-over", 0)]


# ---------------------------------------------------------------------- look, connected
def test_look_dials_the_candidates_with_have_minus_one():
    bed, w = accepting()
    w.look(1_000)
    assert w.phase == LOOKING
    assert said(w.advance(1_000)) == [("Note", "lost-table", "looking", None, STUCK),
                                      ("Dial", "failover", 1, -1)]
    assert said(w.advance(1_000 + TRY - 1)) == []
    assert said(w.advance(1_000 + TRY)) == [("Note", "failover", "trying", 1, TRY),
                                            ("Dial", "failover", 1, -1)]
    w.connected(1, 1_000 + TRY + 10)
    assert w.phase == PLAY and not w.rebuild_from
    assert said(w.advance(1_000 + TRY + 10)) == [("Note", "lost-table", "new-host", 1, 0)]


def test_look_with_a_first_seat_and_its_end():
    bed, w = accepting(watcher=0, accepted=(1, 2))
    w.look(0, first=2)
    assert w.round == [2, 1]
    assert said(w.advance(0))[1] == ("Dial", "failover", 2, -1)
    assert w.deadline() == TRY
    # each turn: the target dialed first; refused at once, the other seat 50 ms later
    w.dial_failed(2, 10)
    assert said(w.advance(60)) == [("Dial", "failover", 1, -1)]
    t = 0
    while t + TRY < STUCK:
        t += TRY
        target = w.round[(t // TRY) % 2]
        other = w.round[(t // TRY + 1) % 2]
        assert said(w.advance(t)) == [("Note", "failover", "trying", target, TRY),
                                      ("Dial", "failover", target, -1)]
        w.dial_failed(target, t + 10)
        assert said(w.advance(t + 59)) == []
        assert said(w.advance(t + 60)) == [("Dial", "failover", other, -1)]
    assert w.deadline() == STUCK  # before the next target (a dial under way)
    assert said(w.advance(STUCK - 1)) == []
    assert said(w.advance(STUCK)) == [("End", "stuck")]
    assert w.phase == ENDED and w.ended


def test_a_resume_with_the_new_host_sends_the_depose_vote_there():
    bed, w = accepting()
    w.disconnected(0)
    w.advance(0)
    w.advance(GONE)
    w.connected(1, GONE + 100)
    out = w.advance(GONE + 100)
    assert said(out) == [("Note", "failover", "new-host", 1, 0), vote("depose", 0, "failover")]
    assert w.phase == PLAY and w.deposing == 0
    assert said(w.advance(GONE + 200)) == []  # once per after


def test_a_resume_with_the_old_host_ends_the_failover():
    bed, w = accepting()
    w.disconnected(0)
    w.advance(0)
    w.advance(GONE)
    w.connected(0, GONE + 100)
    assert said(w.advance(GONE + 100)) == [("Note", "reconnect", "reconnected", 0, 0)]
    assert w.phase == PLAY and w.deposing is None


# ---------------------------------------------------------------------- votes once per after
def test_a_vote_goes_again_every_revote_ms_while_its_rule_holds_and_no_record_used_it():
    """(Seed 600921: a stalling host dropped every seat's ``timeout`` vote about a seat without
    an address; once it served again it held its own vote alone, nobody voted again, once per
    ``after``, and the table was abandoned.) A vote whose rule still holds goes to the host
    again, the same frame, ``revote_ms`` after it last went: at most once per ``revote_ms``
    however often the machine runs; nothing while the host connection is down (the resume
    sends it at once); nothing more once a record of its target used it up."""
    bed, w = accepting(listen=(True, False, True))  # no address: no probe
    first = w.advance(LIMIT)
    assert said(first) == [vote("timeout", 1)]
    for t in range(LIMIT + 100, LIMIT + REVOTE, 100):
        assert said(w.advance(t)) == []
    assert w.deadline() == LIMIT + REVOTE
    again = w.advance(LIMIT + REVOTE)
    assert said(again) == [vote("timeout", 1)] and again[0].frame == first[0].frame
    t = LIMIT + REVOTE + 10
    w.disconnected(t)
    assert said(w.advance(t + REVOTE)) == [("Note", "reconnect", "host-lost", 0, GONE),
                                           ("Dial", "reconnect", 0, 2)]
    w.connected(0, t + REVOTE + 50)
    assert said(w.advance(t + REVOTE + 50)) == [("Note", "reconnect", "reconnected", 0, 0),
                                                vote("timeout", 1)]
    rec = bed.put(bed.take(1, "accept"))  # seat 1 plays: the vote is used up
    w.record(rec, t + REVOTE + 100)
    assert w.voted == {}
    assert said(w.advance(t + 4 * REVOTE)) == []


def test_an_abandon_vote_goes_again_until_its_seat_ends_the_match():
    """The host tallies ``abandon`` votes too: one it dropped goes again while the table stays
    stuck, within the ``grace_ms`` before this seat ends the match for itself (``stuck``)."""
    bed, w = accepting(accepted=(0, 1))  # only this seat is awaited
    w.heard(100_000)  # (the host beats: stuck_ms outlasts SILENCE_MS)
    first = w.advance(STUCK)
    assert said(first) == [vote("abandon", None)]
    again = w.advance(STUCK + REVOTE)
    assert said(again) == [vote("abandon", None)] and again[0].frame == first[0].frame
    rec = bed.put(bed.take(2, "accept"))  # progress: the table is not stuck
    w.record(rec, STUCK + REVOTE + 10)
    assert said(w.advance(STUCK + 3 * REVOTE)) == []


def test_timeout_votes_once_per_after_and_again_after_a_timeout_record():
    bed = Bed.dealt()
    w = bed.seat_watch(2, b=budgets(censor_ms=10**6))  # never stuck
    limit = w.waits.ends(1)
    assert said(w.advance(limit - 1)) == []
    assert said(w.advance(limit)) == [probe(1)]
    w.probe_answer(1, None, limit)
    out = w.advance(limit)
    assert said(out) == [vote("timeout", 1)]
    first = vote_of(bed.sessions[2], out[0].frame, "timeout", 1, 2)
    again = w.advance(limit + 100_000)  # no record used it: the same vote again
    assert said(again) == [vote("timeout", 1)] and again[0].frame == out[0].frame
    # the host sequences the time-out (seat 1 draws and passes); seat 2 plays; seat 1 again
    t = limit + 100_500
    timeout = bed.put(bed.absent("timeout", 1, [0, 2]))
    recs = [timeout, *bed.flush()]
    recs += [bed.put(bed.move(2)), *bed.flush()]
    for rec in recs:
        w.record(rec, t)
    assert w.waits.awaited == [1]
    limit = w.waits.ends(1)
    assert limit - t == TURN + 2 * (w.waits.backlog(1) + ANSWER)
    assert said(w.advance(limit - 1)) == []
    assert said(w.advance(limit)) == [probe(1)]
    w.probe_answer(1, (52, []), limit + 5)
    out = w.advance(limit + 5)
    assert said(out) == [vote("timeout", 1)]
    again = vote_of(bed.sessions[2], out[0].frame, "timeout", 1, 2)
    assert first["after"] < again["after"] == timeout["i"]
    assert said(w.advance(limit + 6)) == []


def test_deadline_is_none_once_the_match_is_over():
    bed = Bed.dealt()
    w = bed.seat_watch(2)
    bed.put(bed.absent("timeout", 1, [0, 2]))
    bed.sessions[2].no_contest = True  # (any end)
    assert w.deadline() is None
    assert w.advance(10**9) == []


def test_an_envelope_of_another_game_in_a_probe_answer_is_not_passed():
    bed, w = accepting()
    env = bed.take(1, "accept")
    forged = sign_envelope(identity_for(bed.t.seeds[1]), bytes(16), 1, 0, env["head"],
                           env["body"])
    w.advance(LIMIT)
    w.probe_answer(1, (2, [forged]), LIMIT + 1)
    assert said(w.advance(LIMIT + 1)) == [vote("timeout", 1)]


def test_the_host_change_record_ends_the_failover():
    bed, w = accepting()
    w.disconnected(0)
    w.advance(0)
    w.advance(GONE)
    w.connected(1, GONE + 100)  # resumed with the new host, gathering
    w.advance(GONE + 100)
    s1 = bed.sessions[1]
    votes = [bed.sessions[v].vote("depose", 0) for v in (1, 2)]
    env = s1.sign_again([s1.votes_body("depose", 0, votes)])[0]
    seq = Sequencer(identity_for(bed.t.seeds[1]), bed.t.game, 1, records=bed.records)
    rec = seq.submit(env, 1, 10)
    for s in bed.sessions:
        s.receive(rec, rec["t"])
    w.link_vote(1, votes[0], GONE + 150)  # a vote about the old host, late
    w.record(rec, GONE + 200)
    assert bed.sessions[2].host == 1
    assert w.deposing is None
    assert w.urged == {} and w.tally.keys() == []
    assert w.phase == PLAY
    assert said(w.advance(GONE + 300)) == []
    # the old host is a seat now: the table waits on it like any other
    assert w.waits.awaited == [1]


def test_a_host_change_lent_over_a_link_ends_the_failover_and_the_seat_dials_the_new_host():
    """(Seed 400250: the seat could not reach the candidate; the others lent it the records,
    the host change among them; it stayed in failover with nobody to depose and failed an
    assertion.)"""
    bed, w = accepting()
    w.disconnected(0)
    w.advance(0)
    w.advance(GONE)
    assert w.phase == FAILOVER and w.deposing == 0
    s1 = bed.sessions[1]
    votes = [bed.sessions[v].vote("depose", 0) for v in (1, 2)]
    env = s1.sign_again([s1.votes_body("depose", 0, votes)])[0]
    seq = Sequencer(identity_for(bed.t.seeds[1]), bed.t.game, 1, records=bed.records)
    rec = seq.submit(env, 1, 10)
    for s in bed.sessions:
        s.receive(rec, rec["t"])
    t = GONE + 5_000
    w.record(rec, t)  # lent: the seat is not connected to anyone
    assert w.phase == PLAY and w.deposing is None
    out = w.advance(t)
    assert [(a.seat, type(a).__name__) for a in out if isinstance(a, act.Dial)] == [(1, "Dial")]
    # its gone clock counts from then: no new failover before gone_ms without the new host
    assert not [a for a in w.advance(t + GONE - 1) if isinstance(a, act.Note)]


def test_forwarded_records_of_the_old_host_bring_a_new_depose_vote():
    bed, w = accepting()
    w.disconnected(0)
    w.advance(0)
    w.advance(GONE)
    w.connected(1, GONE + 100)
    first = w.advance(GONE + 100)[1]
    assert first.frame["vote"]["after"] == 2
    rec = bed.put(bed.take(1, "accept"))  # a record of the old host seat 2 lacked
    w.record(rec, GONE + 200)
    out = w.advance(GONE + 200)
    assert said(out) == [vote("depose", 0, "failover")]
    assert vote_of(bed.sessions[2], out[0].frame, "depose", 0, 2)["after"] == 3


def test_losing_the_new_host_before_its_host_change_goes_on_with_the_next():
    bed, w = accepting()
    w.disconnected(0)
    w.advance(0)
    w.advance(GONE)
    w.connected(1, GONE + 100)
    w.advance(GONE + 100)
    w.disconnected(GONE + 500)
    assert w.phase == FAILOVER and w.round[w.k] == 2  # itself: the others' votes decide
    # (no urge; it dials the others, seat 1 then the old host, in the round's order)
    assert said(w.advance(GONE + 500)) == [("Dial", "failover", 1, 2)]
    assert said(w.advance(GONE + 500 + TRY)) == [("Note", "failover", "trying", 0, TRY),
                                                 ("Dial", "failover", 0, 2)]


def test_a_drop_outlives_other_seats_records():
    bed, w = accepting(accepted=(0,))  # waits on seats 1 and 2
    w.status(1, "dropped", 1_000)
    rec = bed.put(bed.take(2, "accept"))
    w.record(rec, 2_000)
    assert w.drops.seats == [1]
    assert said(w.advance(1_000 + GRACE)) == [probe(1)]


def test_nothing_to_say_once_the_match_is_over():
    bed, w = accepting()
    bed.sessions[2].no_contest = True
    w.disconnected(100)
    assert w.advance(100) == []
    assert w.deadline() is None


def test_an_envelope_shown_while_the_host_is_away_is_no_timeout_and_passed_once_back():
    bed, w = accepting(b=budgets(censor_ms=10**6))
    env = bed.take(1, "accept")
    assert said(w.advance(LIMIT)) == [probe(1)]
    w.disconnected(LIMIT + 10)
    w.probe_answer(1, (2, [env]), LIMIT + 20)
    assert len(w.delivered) == 0  # not delivered: the host is away
    w.connected(0, LIMIT + 30)
    out = w.advance(LIMIT + 30)
    assert said(out) == [("Note", "reconnect", "host-lost", 0, GONE),
                         ("ToHost", "pass-on", "pass", None),
                         ("Note", "reconnect", "reconnected", 0, 0)]
    assert out[1].frame == {"k": "pass", "env": env}
    assert w.delivered.holds(env)  # delivered now: its clock runs from the reconnection
    assert said(w.advance(LIMIT + 5_000)) == []


def test_an_envelope_shown_while_the_host_is_away_and_sequenced_since_is_not_passed():
    bed, w = accepting(b=budgets(censor_ms=10**6))
    env = bed.take(1, "accept")
    w.advance(LIMIT)
    w.disconnected(LIMIT + 10)
    w.probe_answer(1, (2, [env]), LIMIT + 20)
    rec = bed.put(env)  # the host had it after all
    w.record(rec, LIMIT + 25)
    w.connected(0, LIMIT + 30)
    assert "pass" not in [a.kind for a in w.advance(LIMIT + 30) if hasattr(a, "kind")]


def test_look_while_connected_drops_the_connection_first():
    bed, w = accepting()
    assert w.host_up
    w.look(100)
    assert not w.host_up
    assert said(w.advance(100))[1] == ("Dial", "failover", 1, -1)


def test_look_without_candidates():
    bed, w = accepting(watcher=0, accepted=(1, 2), listen=(True, False, False))
    w.look(0)
    assert w.round == []
    assert said(w.advance(0)) == [("Note", "lost-table", "looking", None, STUCK)]
    w.look(10, first=1)
    assert w.round == [1]
    assert said(w.advance(10))[1] == ("Dial", "failover", 1, -1)


def test_a_report_about_another_seat_is_kept():
    bed, w = accepting()
    w.status(0, "dropped", 10)
    w.status(1, "dropped", 11)
    assert w.drops.seats == [0, 1]


def test_votes_go_again_after_a_resume():
    """A vote sent to a host may be lost with it: after every resume the votes go again."""
    bed, w = accepting(listen=(True, False, True), b=budgets(censor_ms=10**6))
    assert said(w.advance(LIMIT)) == [vote("timeout", 1)]
    w.disconnected(LIMIT + 10)
    w.connected(0, LIMIT + 20)
    assert said(w.advance(LIMIT + 20)) == [("Note", "reconnect", "host-lost", 0, GONE),
                                           ("Note", "reconnect", "reconnected", 0, 0),
                                           vote("timeout", 1)]
    assert said(w.advance(LIMIT + 30)) == []


# ---------------------------------------------------------------------- acks before an envelope
def ack_then(bed, env: dict) -> tuple[dict, dict]:
    """Seat ``env["seat"]``'s ack taking ``env``'s counter, and ``env`` signed again after it."""
    seat = env["seat"]
    key = identity_for(bed.t.seeds[seat])
    ack = sign_envelope(key, bed.t.game, seat, env["n"], env["head"], {"type": "ack"})
    return ack, sign_envelope(key, bed.t.game, seat, env["n"] + 1, env["head"], env["body"])


def test_a_probe_showing_acks_before_an_envelope_passes_them_on_in_order():
    """A host holding a seat's ack holds every envelope after it (counters go in order): the
    prober passes on the acks and the envelope behind them, judged after them."""
    bed, w = accepting()
    ack, env = ack_then(bed, bed.take(1, "accept"))
    assert said(w.advance(LIMIT)) == [probe(1)]
    w.probe_answer(1, (2, [ack, env]), LIMIT + 40)
    out = w.advance(LIMIT + 40)
    assert [a.frame for a in out] == [{"k": "pass", "env": ack}, {"k": "pass", "env": env}]
    assert w.answers[1].shown
    assert said(w.advance(LIMIT + 5_000)) == []  # delivered and not sequenced: no vote


def test_an_ack_alone_shows_nothing():
    bed, w = accepting()
    ack, _ = ack_then(bed, bed.take(1, "accept"))
    w.advance(LIMIT)
    w.probe_answer(1, (2, [ack]), LIMIT + 40)
    assert said(w.advance(LIMIT + 40)) == [vote("timeout", 1)]
    assert len(w.delivered) == 0


def test_an_envelope_held_behind_its_authors_ack_is_evidence_of_censorship():
    bed, w = accepting()
    ack, env = ack_then(bed, bed.take(1, "accept"))
    w.probe_answer(1, (2, [ack, env]), LIMIT + 40)
    w.advance(LIMIT + 40)
    w.heard(LIMIT + 40 + BEAT)
    assert said(w.advance(LIMIT + 40 + CENSOR - 1)) == []
    assert said(w.advance(LIMIT + 40 + CENSOR)) == failover_start("censored", 1, FIRST_TRY, 2)


# ---------------------------------------------------------------------- lends to urging seats
def test_a_seat_urged_by_one_short_of_the_hosts_records_lends_them():
    """A depose vote over a link whose ``after`` is before this seat's last record of the
    host: the voter lacks the rest (a host that mutes it; the match may be over): lent once
    per ``after``, and again after ``try_ms``."""
    bed, w = accepting(watcher=1, accepted=(0, 1))
    short = bed.fresh_session(2, 2).vote("depose", 0)  # (it holds records 0 and 1)
    assert short["after"] == 1 < w.chain.vote_since("depose", 0) == 2
    w.link_vote(2, short, 100)
    assert lends(w.advance(100)) == [(2, 1)]
    w.link_vote(2, short, 1_100)
    assert lends(w.advance(1_100)) == []
    w.link_vote(2, short, 100 + TRY)
    assert lends(w.advance(100 + TRY)) == [(2, 1)]
    w.link_vote(2, bed.sessions[2].vote("depose", 0), 200 + TRY)  # (it holds them all)
    assert lends(w.advance(200 + TRY)) == []


# ---------------------------------------------------------------------- urged by an awaited seat
def test_an_awaited_seat_that_urges_is_probed_lent_to_and_has_its_envelope_passed_on():
    """A seat a mute host sends nothing finds its connection silent and urges the candidates
    alone, while the others' waits on it may run long (its drop and return added the catch-up
    budget): a seat playing on with the host probes it on each urge, lends it the records and
    passes on what it shows (seeds 601183, 602892: it ended stuck before any probe)."""
    bed, w = accepting(watcher=1, accepted=(0, 1))  # seat 2 is awaited
    assert w.waits.began(2) == 2
    w.link_vote(2, bed.sessions[2].vote("depose", 0), 100)
    assert said(w.advance(100)) == [probe(2)]
    w.probe_answer(2, (0, []), 130)  # its host sent it nothing since record 0
    out = w.advance(130)
    assert said(out) == [("Lend", "lend")] and lends(out) == [(2, 0)]
    w.link_vote(2, bed.sessions[2].vote("depose", 0), 600)
    assert said(w.advance(600)) == []  # one probe a second
    env = bed.take(2, "accept")
    w.link_vote(2, bed.sessions[2].vote("depose", 0), 1_130)
    assert said(w.advance(1_130)) == [probe(2)]
    w.probe_answer(2, (2, [env]), 1_160)
    assert said(w.advance(1_160)) == [("ToHost", "pass-on", "pass", None)]
    assert vote("timeout", 2) not in said(w.advance(10**6))


def test_an_urge_is_no_probe_for_a_seat_not_awaited_or_a_seat_deposing_itself():
    bed, w = accepting(watcher=1, accepted=(0, 2))  # seat 1 itself is awaited, not seat 2
    w.link_vote(2, bed.sessions[2].vote("depose", 0), 100)
    assert said(w.advance(100)) == []
    bed, w = accepting(watcher=1, accepted=(0, 1), listen=(True, True, False))
    w.link_vote(2, bed.sessions[2].vote("depose", 0), 100)  # no address: no link to it
    assert said(w.advance(100)) == []
    bed, w = accepting(watcher=1, accepted=(0, 1))
    w.disconnected(0)  # this seat finds the host gone too: the urge counts towards a take-over
    w.advance(0)
    w.link_vote(2, bed.sessions[2].vote("depose", 0), 100)
    assert probe(2) not in said(w.advance(100))


# ---------------------------------------------------------------------- built without a connection
def test_a_machine_built_without_a_connection_dials_and_deposes_gone_ms_after_it_began():
    """A seat restarted without its host connection (the default): it dials at once, and its
    ``gone`` clock counts from its start (7.5)."""
    bed = Bed.opened()
    bed.accept(0, 2)
    session = bed.sessions[2]
    w = SeatWatch(session, budgets(), lambda env, lead=0, before=None: True, CARDS, 1_000,
                  records=bed.records)
    assert not w.host_up
    assert said(w.advance(1_000)) == [("Dial", "reconnect", 0, 2)]
    assert said(w.advance(1_000 + GONE - 1)) == []
    assert said(w.advance(1_000 + GONE)) == [("Note", "gone", "failover", 1, TRY),
                                             ("Dial", "failover", 1, 2), ("Urge", "urge", 1)]


# ---------------------------------------------------------------------- stepping back
def test_a_step_back_counts_the_records_forwarded_while_it_gathered():
    """The records a candidate took while it gathered (its host machine's) start the seat
    machine's waits afresh when it steps back: the wait on the seat now awaited counts the
    records after the newest head it echoed in them, and what it owes (18.2)."""
    bed, w = candidate(vote_at=None)
    w.advance(4_000 + GONE)
    t = 4_000 + GONE + 500
    w.link_vote(2, bed.sessions[2].vote("depose", 0), t)
    assert said(w.advance(t)) == [("TakeOver", "take-over", 0)]
    bed.put(bed.take(2, "accept"))  # forwarded to it while it gathered
    waiting = sorted(bed.sessions[1].waiting_on())
    assert waiting and waiting != [2]
    w.stepped_back(t + TRY, records=bed.records)
    assert w.waits.counted == len(bed.records) == 4
    assert w.waits.awaited == waiting
    index = {record_hash(r): i for i, r in enumerate(bed.records)}
    for seat in waiting:
        echo = max((index.get(r["env"]["head"], -1) for r in bed.records
                    if r["env"]["seat"] == seat), default=-1)
        assert w.waits.ends(seat) == t + TRY + TURN + 2 * ((3 - echo) * PLAIN + ANSWER)


def test_a_step_back_past_another_candidates_turn_goes_on_from_itself():
    """A candidate that took over while it tried another candidate (its own vote and a fresh
    urge make q(3)) steps back and goes on with the candidate after itself, not the one after
    the turn it was in."""
    bed, w = candidate(vote_at=None)
    t0 = 4_000 + GONE
    w.advance(t0)
    assert said(w.advance(t0 + TRY))[0] == ("Note", "failover", "trying", 2, TRY)
    w.link_vote(2, bed.sessions[2].vote("depose", 0), t0 + TRY + 100)
    assert said(w.advance(t0 + TRY + 100)) == [("TakeOver", "take-over", 0)]
    w.stepped_back(t0 + 2 * TRY + 100)
    out = said(w.advance(t0 + 2 * TRY + 100))
    assert out[0] == ("Note", "failover", "trying", 2, TRY)
    assert w.round[w.k] == 2


def host_change_to_1(bed) -> dict:
    """Seat 1's ``host_change`` deposing seat 0 (votes of seats 1 and 2), applied by every
    session: the record."""
    s1 = bed.sessions[1]
    votes = [bed.sessions[v].vote("depose", 0) for v in (1, 2)]
    env = s1.sign_again([s1.votes_body("depose", 0, votes)])[0]
    seq = Sequencer(identity_for(bed.t.seeds[1]), bed.t.game, 1, records=bed.records)
    rec = seq.submit(env, 1, 10)
    for s in bed.sessions:
        s.receive(rec, rec["t"])
    return rec


def test_a_host_change_lent_while_it_keeps_the_old_host_closes_that_connection():
    """A seat deposing for censorship keeps its host connection (7.5); a ``host_change`` lent
    over a link ends its failover: it closes the old host's connection and dials the new
    host."""
    bed, w, t0, _ = censored_at()
    assert w.host_up
    rec = host_change_to_1(bed)
    w.record(rec, t0 + 1_000)
    assert not w.host_up and w.phase == PLAY and w.deposing is None
    out = said(w.advance(t0 + 1_000))
    assert out[0] == ("CloseHost", "failover")
    assert [a for a in out if a[0] == "Dial"] == [("Dial", "reconnect", 1, rec["i"])]


def test_a_resume_sends_again_the_envelopes_it_passed_on():
    """An envelope of another seat passed on and not sequenced goes again on a resumed
    connection (the host there may not have had it), and its clock starts over."""
    bed, w = accepting(b=budgets(censor_ms=10**6))
    env = bed.take(1, "accept")
    w.advance(LIMIT)
    w.probe_answer(1, (2, [env]), LIMIT + 20)
    assert said(w.advance(LIMIT + 20)) == [("ToHost", "pass-on", "pass", None)]
    w.disconnected(LIMIT + 30)
    w.connected(0, LIMIT + 40)
    out = w.advance(LIMIT + 40)
    assert said(out) == [("Note", "reconnect", "host-lost", 0, GONE),
                         ("ToHost", "pass-on", "pass", None),
                         ("Note", "reconnect", "reconnected", 0, 0)]
    assert out[1].frame == {"k": "pass", "env": env}


def test_a_seat_out_of_the_table_has_its_drop_and_deliveries_forgotten():
    bed = Bed.dealt()
    w = bed.seat_watch(2, b=budgets(censor_ms=10**6))
    env = bed.move(1)
    w.probe_answer(1, (w.s.count - 1, [env]), 100)
    assert said(w.advance(100)) == [("ToHost", "pass-on", "pass", None)]
    w.status(1, "dropped", 200)
    rec = bed.put(bed.absent("left", 1, [0, 2]))
    w.record(rec, 300)
    assert 1 not in w.chain.at_table
    assert w.drops.seats == [] and w.delivered.pending_of(1) == []


def test_a_host_change_ends_the_feed_of_a_seat_lent_to():
    """A seat lent to is fed every record after, until the host changes: a new host serves
    every seat it welcomes."""
    bed, w = accepting()
    w.advance(LIMIT)
    w.probe_answer(1, (1, []), LIMIT + 30)
    assert lends(w.advance(LIMIT + 30)) == [(1, 1)]
    w.record(bed.put(bed.take(1, "accept")), LIMIT + 500)
    out = w.advance(LIMIT + 500)  # fed: the records after the have it showed
    assert said(out) == [("Lend", "lend")] and lends(out) == [(1, 1)]
    w.record(host_change_to_1(bed), LIMIT + 1_000)
    assert lends(w.advance(LIMIT + 1_000)) == []


def test_a_back_restarting_the_wait_sends_the_timeout_vote_again_at_once_at_the_new_limit():
    """The host spends the timeout votes about a seat whose wait restarts on its return (7.5):
    the vote goes again at the new limit, not only ``revote_ms`` after it last went."""
    bed, w = accepting(listen=(True, False, True), b=budgets(revote_ms=BIG))
    assert said(w.advance(LIMIT)) == [vote("timeout", 1)]
    w.status(1, "dropped", LIMIT + 100)
    w.status(1, "back", LIMIT + 200)
    end = LIMIT + 200 + LIMIT + CATCH_UP
    assert said(w.advance(end - 1)) == []
    assert said(w.advance(end)) == [vote("timeout", 1)]


# ---------------------------------------------------------------------- every seat in turn
def test_each_awaited_seat_and_each_drop_is_judged_on_its_own():
    """At four seats, a seat passed over (this seat itself, one dropped, one probed now, the
    host's drop, a drop within its grace) does not keep the rules from the seats after it."""
    bed = Bed.opened((True,) * 4)
    bed.accept(0)
    w = bed.seat_watch(1)  # the table waits on seats 1 (itself), 2 and 3
    assert w.waits.awaited == [1, 2, 3]
    end = w.waits.ends(2)
    assert said(w.advance(end)) == [probe(2), probe(3)]
    bed = Bed.opened((True,) * 4)
    bed.accept(0)
    w = bed.seat_watch(1)
    w.status(2, "dropped", end - 100)  # dropped: no timeout (left decides), seat 3 probed
    assert said(w.advance(end)) == [probe(3)]
    bed = Bed.opened((True,) * 4)
    bed.accept(0, 1, 3)
    w = bed.seat_watch(3)  # waits on seat 2 alone
    w.status(0, "dropped", 100)  # (a report about the host: never a left vote)
    w.status(1, "dropped", 200)
    w.status(2, "dropped", 100)
    assert said(w.advance(200 + GRACE - 1)) == [probe(2)]  # seat 1 within its grace
    assert said(w.advance(200 + GRACE)) == [probe(1)]
    bed = Bed.opened((True,) * 4)
    bed.accept(0, 1, 3)
    w = bed.seat_watch(3)
    w.status(1, "dropped", 100)
    w.status(2, "dropped", 100)
    assert said(w.advance(100 + GRACE)) == [probe(1), probe(2)]  # each drop probed


# ---------------------------------------------------------------------- abandon waits for probes
def test_no_abandon_before_the_probe_at_an_awaited_seats_limit_shows_it_with_nothing():
    """PROTOCOL.md 7.5: a seat with an address is probed at its limit, and what the probe shows
    is passed on (the table may not be stuck on it): abandon waits for an answer at or after
    that limit showing nothing, and then ``censor_ms + grace_ms`` after this seat's timeout vote
    (seed 1605816: every seat voted timeout and abandon at once, and the host sequenced the no
    contest first; seed 2104271: a stalling host holding the votes was abandoned before the
    voters' host-late clocks ran, ``censor_ms + grace_ms``); a dropped seat is the left rule's."""
    bed, w = accepting(b=budgets(revote_ms=BIG))  # the table waits on seat 1
    w.heard(STUCK - 1)
    assert said(w.advance(LIMIT - 1)) == []
    assert said(w.advance(STUCK)) == [probe(1)]  # no answer yet: no abandon
    w.probe_answer(1, (2, []), LIMIT - 1)  # (stamped before the limit: not counted)
    assert vote("abandon", None) not in said(w.advance(STUCK + 10))
    w.probe_answer(1, (2, []), STUCK + 20)
    # its timeout vote goes; the verdict it asks for is progress, and a host that holds it
    # unserved is deposed (host-late) rather than abandoned: abandon waits censor_ms + grace_ms
    assert said(w.advance(STUCK + 20)) == [vote("timeout", 1)]
    assert w.deadline() <= STUCK + 20 + CENSOR + GRACE
    assert said(w.advance(STUCK + 20 + CENSOR + GRACE - 1)) == []
    assert said(w.advance(STUCK + 20 + CENSOR + GRACE)) == [vote("abandon", None)]
    bed, w = accepting(b=budgets(revote_ms=BIG))
    w.heard(STUCK - 1)
    w.advance(LIMIT)
    w.probe_answer(1, (2, []), LIMIT)  # an answer at the limit itself counts
    assert said(w.advance(STUCK)) == [vote("timeout", 1)]
    assert said(w.advance(STUCK + CENSOR + GRACE)) == [vote("abandon", None)]
    bed, w = accepting(b=budgets(revote_ms=BIG))
    w.heard(STUCK - 1)
    w.status(1, "dropped", STUCK - 100)
    assert said(w.advance(STUCK)) == [vote("abandon", None)]


def test_at_two_seats_an_unsequenced_delivery_does_not_hold_off_abandon():
    """PROTOCOL.md 7.5, abandon: the delivery clause is for a seat at ``m >= 3`` with a
    candidate (one that can depose a censoring host); at two seats the table is stuck."""
    bed = Bed.opened((True, True))
    bed.accept(0)
    w = bed.seat_watch(1)  # the table waits on this seat's accept
    w.sent_env(bed.take(1, "accept"), STUCK - 1_000)
    w.heard(STUCK - 1)
    assert said(w.advance(STUCK)) == [vote("abandon", None)]


def test_a_seat_that_got_the_record_its_wait_began_with_only_over_a_link_is_lent_to():
    """A ``lent`` at the record that began the wait: the host did not send it that record
    (7.5, ``lend``): lent the records and given the catch-up budget, no timeout vote."""
    bed, w = accepting()
    assert w.waits.began(1) == 2
    w.advance(LIMIT)
    w.probe_answer(1, (2, []), LIMIT + 30, lent=2)
    out = w.advance(LIMIT + 30)
    assert said(out) == [("Lend", "lend")] and lends(out) == [(1, 2)]
    assert w.waits.started(1) == LIMIT + 30


# ---------------------------------------------------------------------- link votes
def test_link_votes_are_kept_for_the_host_it_may_become_and_lent_again_only_after_try_ms():
    """The depose votes that come over links are the ones a take-over gathers with (kept by
    kind and the host they depose); a voter short of the host's records is lent them once per
    ``after`` and again ``try_ms`` later, at any time of the match."""
    bed, w = accepting(watcher=1, accepted=(0, 1))
    short = bed.fresh_session(2, 2).vote("depose", 0)
    t = 50_000
    w.link_vote(2, short, t)
    assert w.tally.keys() == [("depose", 0)] and w.tally.holds("depose", 0, short)
    out = [a for a in w.advance(t) if isinstance(a, act.Lend)]  # (an awaited seat: probed)
    assert said(out) == [("Lend", "lend")] and lends(out) == [(2, 1)]
    w.link_vote(2, short, t + TRY - 1)
    assert lends(w.advance(t + TRY - 1)) == []
    w.link_vote(2, short, t + TRY)
    assert lends(w.advance(t + TRY)) == [(2, 1)]


def test_a_seat_resumed_with_a_new_host_does_not_count_itself_for_a_take_over():
    """PROTOCOL.md 7.6: a candidate counts itself among the seats trying it while it fails
    over; once it has resumed with another candidate it tries that one, so two urges at five
    seats (q(5) = 3) are no take-over."""
    bed = Bed.opened((True,) * 5)
    bed.accept(0, 1, 2, 3, 4)
    w = bed.seat_watch(2)
    w.disconnected(0)
    w.advance(0)
    w.advance(GONE)
    w.connected(1, GONE + 100)
    w.advance(GONE + 100)
    assert w.phase == PLAY and w.deposing == 0
    for seat in (3, 4):
        w.link_vote(seat, bed.sessions[seat].vote("depose", 0), GONE + 200)
    assert ("TakeOver", "take-over", 0) not in said(w.advance(GONE + 200))
    assert w.phase == PLAY


def test_a_seat_looking_without_candidates_wakes_at_stuck_ms():
    bed, w = accepting(watcher=0, accepted=(1, 2), listen=(True, False, False))
    w.look(0)
    w.advance(0)
    assert 0 < w.deadline() <= STUCK  # (its end, ``stuck``, at the latest)


def test_a_chat_does_not_send_a_timeout_vote_again():
    """Once per ``after``: a record that neither shows the seat nor uses votes about it (a
    chat) leaves the vote standing; it goes again only ``revote_ms`` later."""
    bed = Bed.dealt()
    w = bed.seat_watch(2, b=budgets(censor_ms=10**6))
    timeout = bed.put(bed.absent("timeout", 1, [0, 2]))
    t = 1_000
    for rec in [timeout, *bed.flush(), bed.put(bed.move(2)), *bed.flush()]:
        w.record(rec, t)
    limit = w.waits.ends(1)
    w.advance(limit)
    w.probe_answer(1, (w.s.count - 1, []), limit)
    assert said(w.advance(limit)) == [vote("timeout", 1)]
    w.record(bed.put(bed.sessions[0].chat("hm")), limit + 10)
    assert said(w.advance(limit + 10)) == []
    assert said(w.advance(limit + REVOTE)) == [vote("timeout", 1)]


# ---------------------------------------------------------------------- restored and live clocks
def test_a_machine_restored_from_its_records_sets_the_limits_of_one_that_applied_them_live():
    """PROTOCOL.md 18.2: a wait's backlog is the work of the records after the head its seat
    last echoed in a record. A machine built mid-match from the records (a restarted seat)
    and one that applied them one by one, the shuffles owed on the way included, set the same
    limit: seat 1, to move, last echoed record 18 (its tokens), so the 33 ``tokens`` records
    after it count, not the whole match."""
    bed = Bed.dealt()
    records = bed.records
    session = bed.fresh_session(0, 1)
    live = SeatWatch(session, budgets(), lambda env, lead=0, before=None: True, CARDS, 0,
                     connected=True, records=records[:1])
    for k, rec in enumerate(records[1:], 1):
        session.receive(rec, rec["t"])
        live.record(rec, 10 * k)
    restored = bed.seat_watch(0, 10 * len(records))
    assert live.waits.awaited == restored.waits.awaited == [1]
    index = {record_hash(r): i for i, r in enumerate(records)}
    echo = max(index[r["env"]["head"]] for r in records if r["env"]["seat"] == 1)
    assert echo == 18
    tokens = "checking a record: `tokens` carrying `k` tokens"
    backlog = sum(units(tokens, k=len(r["env"]["body"]["tokens"])) for r in records[echo + 1:])
    assert live.waits.limit(1) == restored.waits.limit(1) == TURN + 2 * (backlog + ANSWER)


def test_a_seats_own_record_echoes_its_head_for_its_next_wait():
    """A seat that moves shows the records up to the head it echoes: the wait that its move
    begins on it (its tokens) counts only the records after that head, its move (18.2)."""
    bed = Bed.dealt()
    w = bed.seat_watch(0)
    move = bed.put(bed.move(1))
    w.record(move, 1_000)
    assert w.waits.awaited == [1] and w.waits.began(1) == move["i"]
    assert w.waits.backlog(1) == PLAIN  # its move alone


def test_records_echoing_the_head_of_an_envelope_passed_on_are_not_newer():
    """PROTOCOL.md 7.5: an envelope passed on is evidence once the host has sequenced ``2 * m``
    envelopes of other seats echoing a newer head than its own (or idles on it): six chats
    echoing the head it echoes (record 0) are not newer, so the host, busy with progress a
    moment ago, is not censoring yet."""
    bed = Bed.opened()
    chats = [bed.sessions[s].chat(f"c{k}") for k, s in enumerate((0, 2, 0, 2, 0, 2))]
    bed.accept(0)
    w = bed.seat_watch(2)  # the table waits on seats 1 and 2 (itself)
    env = bed.take(1, "accept")
    end = w.waits.ends(1)
    assert said(w.advance(end)) == [probe(1)]
    w.probe_answer(1, (1, [env]), end)
    assert said(w.advance(end)) == [("ToHost", "pass-on", "pass", None)]
    w.record(bed.put(bed.take(2, "accept")), end + 1)  # progress: the host is busy, not idle
    for k, chat in enumerate(chats):
        w.record(bed.put(chat), end + 2 + k)
    w.heard(end + CENSOR)
    assert said(w.advance(end + CENSOR)) == []  # no newer record, not idle yet
    assert w.deadline() == end + 1 + CENSOR
    out = w.advance(end + 1 + CENSOR)  # idle on it since the progress: censored
    assert said(out) == failover_start("censored", 1, FIRST_TRY, 8)


def test_a_seat_urged_by_one_that_lacks_only_a_trailing_chat_lends_it():
    """The ``after`` of a depose vote is the last record of the host the voter holds, a chat
    included: one short of a trailing chat lacks that record and is lent it."""
    bed, w = accepting(watcher=1, accepted=(0, 1))
    chat = bed.put(bed.sessions[0].chat("hm"))
    w.record(chat, 50)
    short = bed.fresh_session(2, 3).vote("depose", 0)  # (records 0 to 2: not the chat)
    assert short["after"] == 2 < w.chain.vote_since("depose", 0) == chat["i"] == 3
    w.link_vote(2, short, 100)
    assert lends(w.advance(100)) == [(2, 2)]


def test_a_seat_deposing_for_host_late_does_not_abandon_a_host_that_owes_its_envelope():
    """``_host_owes`` (7.5): the host passes over this seat's own envelope (evidence) while
    this seat fails over for ``host-late`` on the connection it keeps: the host, not the table,
    holds the match up, so no abandon vote at ``stuck_ms``, however long the failover runs
    (only a depose for that evidence, ``censored``, leaves the table to abandon ``try_ms``
    after it began)."""
    bed = Bed.opened()
    w = bed.seat_watch(2, b=budgets(revote_ms=BIG))  # the table waits on every accept
    end = w.waits.ends(0)
    assert end == w.waits.ends(1) == w.waits.ends(2)
    env = bed.take(2, "accept")
    w.sent_env(env, end)
    assert said(w.advance(end)) == [vote("timeout", 0), probe(1)]
    w.probe_answer(1, None, end + 10)
    assert said(w.advance(end + 10)) == [vote("timeout", 1)]
    w.heard(end + GRACE)
    assert said(w.advance(end + GRACE))[:2] == [vote("depose", 0, "host-late"),
                                                ("Note", "host-late", "failover", 1, FIRST_TRY)]
    w.heard(end + CENSOR)
    w.advance(end + CENSOR)  # (its accept is evidence from now: the host idles on it)
    assert w.delivered.holds(env)
    w.heard(STUCK)
    assert vote("abandon", None) not in said(w.advance(STUCK))
    assert w.phase == FAILOVER and w.why == "host-late"


def test_a_seat_whose_shown_envelope_no_longer_passes_does_not_keep_the_rules_from_the_next():
    """At four seats: seat 2 showed an envelope while the host was away, which no longer
    passes the host's checks at the resume (not passed on, its answer stands); seat 3, probed
    and silent, is still voted out at its limit."""
    passing = [True]
    bed = Bed.opened((True,) * 4)
    bed.accept(0)
    w = bed.seat_watch(1, judge=lambda env, lead=0, before=None: passing[0])  # seats 1, 2, 3
    end = w.waits.ends(2)
    assert end == w.waits.ends(3)
    assert said(w.advance(end)) == [probe(2), probe(3)]
    w.disconnected(end + 10)
    w.probe_answer(2, (1, [bed.take(2, "accept")]), end + 20)
    w.probe_answer(3, None, end + 20)
    passing[0] = False
    w.connected(0, end + 30)
    out = said(w.advance(end + 30))
    assert ("ToHost", "pass-on", "pass", None) not in out
    assert vote("timeout", 2) not in out and vote("timeout", 3) in out


def test_a_left_vote_the_host_leaves_standing_for_censor_ms_deposes_it():
    """As a timeout vote: a host holding a quorum of fresh left votes MUST sequence the
    ``left`` (7.5); this seat's vote still standing ``censor_ms + grace_ms`` after it first went
    is the host late with a verdict (``host-late``). Not before."""
    bed, w = accepting(listen=(True, False, True))
    w.status(1, "dropped", 100)
    assert said(w.advance(100 + GRACE)) == [vote("left", 1)]  # (no address: no probe)
    t = 100 + GRACE + CENSOR + GRACE
    while w.deadline() < t:
        w.heard(w.deadline())
        assert said(w.advance(w.deadline())) == [vote("left", 1)]  # it goes again
    assert w.deadline() == t
    assert said(w.advance(t)) == failover_start("host-late", 2, FIRST_TRY, 2)[:2]


# ---------------------------------------------------------------------- deadlines without the host
def test_with_the_host_down_the_deadline_is_its_reconnect_clocks_not_the_waits():
    """Without the host the seat judges no wait (no vote can go): it wakes for ``gone`` (and its
    dials), not at the limit of the wait on seat 1 that falls before."""
    bed, w = accepting()
    w.disconnected(LIMIT - 1_000)
    assert said(w.advance(LIMIT - 1_000)) == [("Note", "reconnect", "host-lost", 0, GONE),
                                              ("Dial", "reconnect", 0, 2)]
    assert w.deadline() == LIMIT - 1_000 + GONE


def run_to_the_end(w: SeatWatch) -> tuple[int, list[int]]:
    """Drive ``w`` as the node does, from deadline to deadline (the host beating while it is
    connected, every dial under way until the end), until it ends ``stuck``: when, and every
    time it woke."""
    times = []
    while len(times) < 1_000:
        t = w.deadline()
        if w.host_up:
            w.heard(t)
        times.append(t)
        if ("End", "stuck") in said(w.advance(t)):
            return t, times
    raise AssertionError("no end")


def test_a_failover_keeping_its_host_wakes_to_end_stuck_ms_after_the_last_progress():
    """The failover's ``stuck_ms`` counts from the last progress record while it keeps its host
    connection: driven by its deadlines, the machine ends then, and does not wake for the
    end its start alone would give."""
    bed, w = accepting(accepted=(2,), b=budgets(revote_ms=BIG))  # waits on seats 0 and 1
    end = w.waits.ends(0)
    w.advance(end)
    w.probe_answer(1, None, end + 10)
    w.advance(end + 10)
    t0 = end + GRACE
    assert said(w.advance(t0))[0] == vote("depose", 0, "host-late")
    t1 = t0 + 20_000
    w.record(bed.put(bed.take(1, "accept")), t1)  # progress; the host's seat still late
    w.heard(t1)
    w.advance(t1)
    at, times = run_to_the_end(w)
    assert at == t1 + STUCK and t0 + STUCK not in times


def test_a_failover_without_its_host_wakes_to_end_stuck_ms_after_it_began():
    """Without the host connection, the failover's own clock alone counts: a progress record
    while the host was still up does not put its end off."""
    bed, w, t0 = host_late()
    assert said(w.advance(t0))[0] == vote("depose", 0, "host-late")
    w.record(bed.put(bed.take(1, "accept")), t0 + 1_000)
    w.heard(t0 + 1_000)
    w.advance(t0 + 1_000)
    w.disconnected(t0 + 2_000)
    w.advance(t0 + 2_000)
    assert run_to_the_end(w)[0] == t0 + STUCK


def test_the_host_is_kept_once_a_look_finds_no_standing_vote_a_chat_after_it_changes_nothing():
    """``host-late`` for a standing timeout vote lasts while the vote stands (its rule held at
    the last look): seat 1 reported dropped, the next look votes no timeout about it, and at
    the look after, a chat between them, the host is kept (the vote, still unused, is no
    ground)."""
    bed, w = accepting(listen=(True, False, True))
    assert said(w.advance(LIMIT)) == [vote("timeout", 1)]
    t = LIMIT + CENSOR + GRACE
    while w.deadline() < t:
        w.heard(w.deadline())
        w.advance(w.deadline())
    w.heard(t)
    assert said(w.advance(t))[0] == vote("depose", 0, "host-late")
    w.status(1, "dropped", t + 10)
    w.advance(t + 10)  # (the look that finds seat 1 dropped: no timeout vote stands)
    w.record(bed.put(bed.sessions[0].chat("hm")), t + 20)
    w.heard(t + 20)
    assert said(w.advance(t + 20)) == [vote("depose", 0, "failover"),  # (at the chat)
                                       ("Note", "failover", "host-kept", 0, 0)]
    assert w.phase == PLAY and w.deposing is None


def test_a_move_withheld_behind_a_sixth_chat_line_is_not_passed_on():
    """(7.10, 4.6; docs/LIVENESS.md) Seat 1 said four lines, then a probe shows two more and an
    envelope behind them: the host's pace would refuse the sixth line, so nothing after it can
    be sequenced; the prober passes nothing on (and so never holds it as evidence). With one
    line fewer it passes the lines and the envelope on."""
    for lines, shown_lines in ((4, 2), (3, 2)):
        bed = Bed.opened()
        bed.put(bed.take(1, "accept"))
        for k in range(lines):
            bed.put(bed.sessions[1].chat(f"line {k}"))
        pending = [bed.sessions[1].chat(f"more {k}") for k in range(shown_lines)]
        pending.append(bed.sessions[1].resign())
        w = bed.seat_watch(2, now=bed.records[-1]["t"])
        w.probe_answer(1, (len(bed.records) - 1, pending), bed.records[-1]["t"] + 10)
        passed = [a.frame["env"] for a in w.advance(bed.records[-1]["t"] + 10)
                  if isinstance(a, act.ToHost) and a.frame.get("k") == "pass"]
        assert passed == ([] if lines == 4 else pending), lines
        assert w.answers[1].shown is (lines != 4)


# ---------------------------------------------------------------------- an end never final
def over_unfinal(watcher: int = 2):
    """Seat 3's resign ended the match at four seats; the end is not final, and seat 1 (no
    address: nobody can probe it) owes its ack (7.11)."""
    bed = Bed.over((True, False, True, True))
    session = bed.sessions[watcher]
    session.unfinal, session.end_owed = True, (1,)
    w = bed.seat_watch(watcher, 0)
    w.heard(100_000)  # (the host beats: stuck_ms outlasts SILENCE_MS)
    w.heard(200_000)
    return bed, w


def test_an_end_that_stays_unfinal_ends_stuck_at_stuck_ms_without_an_abandon_vote():
    """7.11, 7.5.5 ``stuck-end``: after the end a ``no_contest`` changes nothing, so a seat
    that finds the table stuck ends the match for itself rather than vote ``abandon``."""
    bed, w = over_unfinal()
    assert w.waits.awaited == [1]  # the table waits on seat 1's ack
    limit = w.waits.ends(1)
    assert w.deadline() == limit < STUCK
    assert said(w.advance(limit)) == []  # (no timeout about a seat owing only its ack)
    assert w.deadline() == STUCK
    assert said(w.advance(STUCK - 1)) == []
    assert said(w.advance(STUCK)) == [("End", "stuck-end")]
    assert w.phase == ENDED and w.deadline() is None
    assert "too few seats" in w.ended


def test_an_ack_after_the_end_does_not_put_off_the_stuck_end():
    """An ``ack`` is no progress (7.5.1): a seat acking after the end does not keep a table
    whose end cannot become final going."""
    bed, w = over_unfinal()
    ack = bed.put(bed.sessions[2].ack())
    w.record(ack, STUCK - 10)
    assert said(w.advance(STUCK)) == [("End", "stuck-end")]

