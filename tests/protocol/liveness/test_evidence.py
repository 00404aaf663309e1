"""Evidence of censorship (PROTOCOL.md 7.5; liveness/evidence.py): only envelopes this peer
delivered, passed over by an idle host for ``censor_ms`` while their author is awaited, or
while the host sequenced ``2 * m`` newer envelopes of other seats, on a connection that has
brought a frame ``BEAT_MS`` after the delivery or later."""

from __future__ import annotations

from typing import Any

import pytest

from dernier_p2p.protocol.envelope import sign_envelope
from dernier_p2p.protocol.liveness.evidence import (
    NOT_EVIDENCE,
    ChatTimes,
    Delivered,
    judged_all,
    paced,
    passable,
)
from dernier_p2p.protocol.local import identity_for
from tests.protocol.liveness import Bed

CENSOR = 10_000
BEAT = 2_000
M = 3


def always(env: dict) -> bool:
    return True


def never(env: dict) -> bool:
    return False


def counters(**n: int):
    """A ``next_counter``: seat ``s`` is at ``n["s<seat>"]`` (0 if not given)."""
    return lambda seat: n.get(f"s{seat}", 0)


@pytest.fixture(scope="module")
def envs() -> dict[str, dict]:
    """Real envelopes of a three-seat table at record 0: the accepts of seats 1 and 2, then a
    chat and an ack of seat 1, and another envelope of seat 1 with its accept's counter."""
    bed = Bed.opened()
    out = {"e1": bed.take(1, "accept"), "e2": bed.take(2, "accept")}
    out["chat"] = bed.sessions[1].chat("hello")
    out["ack"] = bed.sessions[1].ack()
    out["twin"] = sign_envelope(identity_for(bed.t.seeds[1]), bed.t.game, 1, 0,
                                bed.sessions[1].head, {"type": "resign"})
    return out


@pytest.fixture(scope="module")
def behind(envs) -> list[dict]:
    """Seat 1's ack (counter 0) and chat (1), then an accept (2) behind them."""
    bed = Bed.opened()
    key = identity_for(bed.t.seeds[1])
    first = envs["e1"]
    return [sign_envelope(key, bed.t.game, 1, n, first["head"], body) for n, body in
            enumerate([{"type": "ack"}, {"type": "chat", "text": "hi"}, first["body"]])]


def evidence(d: Delivered, now: int, waiting=(1,), quiet: int = 0, judge=always, m: int = M,
             heard: int | None = None):
    """``heard``: when the host's last frame came (None: not asked, as before the rule)."""
    if heard is None:
        return d.evidence(now, CENSOR, m, waiting, quiet, judge)
    return d.evidence(now, CENSOR, m, waiting, quiet, judge, heard, BEAT)


def due(d: Delivered, now: int, waiting=(1,), quiet: int = 0, m: int = M):
    return d.next_due(now, CENSOR, m, waiting, quiet)


def test_the_bodies_never_evidence():
    assert frozenset({"chat", "ack"}) == NOT_EVIDENCE


# ---------------------------------------------------------------------- the idle host
def test_idle_host_evidence_exactly_at_censor_ms(envs):
    d = Delivered()
    d.sent(envs["e1"], 0, 100)
    assert evidence(d, 100 + CENSOR - 1) is None
    assert evidence(d, 100 + CENSOR) is envs["e1"]
    assert evidence(d, 100 + CENSOR + 5_000) is envs["e1"]
    assert due(d, 0) == 100 + CENSOR
    assert due(d, 100 + CENSOR) is None  # due already: nothing later


def test_idle_counts_from_the_last_progress_record(envs):
    d = Delivered()
    d.sent(envs["e1"], 0, 100)
    assert evidence(d, 500 + CENSOR - 1, quiet=500) is None
    assert evidence(d, 500 + CENSOR, quiet=500) is envs["e1"]
    assert due(d, 0, quiet=500) == 500 + CENSOR
    # a record before the delivery: the delivery's clock decides
    assert evidence(d, 100 + CENSOR - 1, quiet=50) is None
    assert evidence(d, 100 + CENSOR, quiet=50) is envs["e1"]


def test_not_idle_unless_the_author_is_awaited(envs):
    d = Delivered()
    d.sent(envs["e1"], 0, 100)
    for waiting in ((), (0,), (2,), (0, 2)):
        assert evidence(d, 10**9, waiting=waiting) is None
        assert due(d, 0, waiting=waiting) is None  # only records can make it evidence
    assert evidence(d, 10**9, waiting=(0, 1, 2)) is envs["e1"]


# ---------------------------------------------------------------------- the busy host
def newer(d: Delivered, k: int, head: int = 5, author: int = 0) -> None:
    for _ in range(k):
        d.on_record(author, head, counters())


def test_two_m_newer_envelopes_of_other_seats(envs):
    d = Delivered()
    d.sent(envs["e1"], 3, 100)
    newer(d, 2 * M - 1)
    assert evidence(d, 10**9, waiting=()) is None
    assert due(d, 0, waiting=()) is None
    newer(d, 1, author=2)
    assert evidence(d, 100 + CENSOR - 1, waiting=()) is None
    assert evidence(d, 100 + CENSOR, waiting=()) is envs["e1"]
    assert due(d, 0, waiting=()) == 100 + CENSOR
    # the count is of m: at four seats the same six records are not enough
    assert evidence(d, 10**9, waiting=(), m=4) is None


def test_only_newer_heads_of_other_seats_count(envs):
    d = Delivered()
    d.sent(envs["e1"], 3, 100)
    for _ in range(2 * M):
        d.on_record(0, 3, counters())  # the same head: not newer
        d.on_record(2, None, counters())  # a head this peer does not hold
        d.on_record(1, 9, counters())  # its own author's records
    assert evidence(d, 10**9, waiting=()) is None
    for _ in range(2 * M):
        d.on_record(2, 4, counters())
    assert evidence(d, 10**9, waiting=()) is envs["e1"]


def test_an_unknown_head_of_the_envelope_counts_as_the_oldest(envs):
    d = Delivered()
    d.sent(envs["e1"], None, 100)
    newer(d, 2 * M, head=0)
    assert evidence(d, 100 + CENSOR, waiting=()) is envs["e1"]


def test_the_idle_rule_needs_no_newer_records(envs):
    d = Delivered()
    d.sent(envs["e1"], 3, 100)
    newer(d, 2 * M - 1)
    assert evidence(d, 100 + CENSOR, waiting=(1,)) is envs["e1"]


# ------------------------------------------------------- a connection that brings frames
def test_evidence_needs_a_frame_from_the_host_beat_ms_after_the_delivery(envs):
    d = Delivered()
    d.sent(envs["e1"], 0, 100)
    assert evidence(d, 10**9, heard=100 + BEAT - 1) is None
    assert evidence(d, 100 + CENSOR, heard=100 + BEAT) is envs["e1"]
    assert evidence(d, 100 + CENSOR - 1, heard=100 + BEAT) is None  # (and censor_ms still)
    assert evidence(d, 100 + CENSOR, heard=100 + CENSOR + 7) is envs["e1"]
    # the default: no frame asked for (a peer that does not say when it heard the host)
    assert d.evidence(100 + CENSOR, CENSOR, M, (1,), 0, always) is envs["e1"]
    assert d.evidence(100 + CENSOR, CENSOR, M, (1,), 0, always, 100) is envs["e1"]  # beat 0
    assert d.evidence(100 + CENSOR, CENSOR, M, (1,), 0, always, 99) is None


def test_a_busy_hosts_evidence_needs_the_frame_too(envs):
    d = Delivered()
    d.sent(envs["e1"], 3, 100)
    newer(d, 2 * M)
    assert evidence(d, 10**9, waiting=(), heard=100 + BEAT - 1) is None
    assert evidence(d, 100 + CENSOR, waiting=(), heard=100 + BEAT) is envs["e1"]


def test_the_frame_counts_from_each_envelopes_own_delivery(envs):
    d = Delivered()
    d.sent(envs["e2"], 0, 50)
    d.sent(envs["e1"], 0, 100)
    waiting = (1, 2)
    assert evidence(d, 10**9, waiting, heard=50 + BEAT) is envs["e2"]
    assert evidence(d, 10**9, waiting, heard=50 + BEAT,
                    judge=lambda e: e["seat"] == 1) is None  # e1 needs 100 + BEAT
    assert evidence(d, 10**9, waiting, heard=100 + BEAT,
                    judge=lambda e: e["seat"] == 1) is envs["e1"]
    d.resent(7_000)  # sent again on a new connection: frames after that count
    assert evidence(d, 10**9, waiting, heard=7_000 + BEAT - 1) is None
    assert evidence(d, 10**9, waiting, heard=7_000 + BEAT) is envs["e2"]


# ---------------------------------------------------------------------- never evidence
@pytest.mark.parametrize("which", ["chat", "ack"])
def test_chat_and_ack_are_never_evidence(envs, which):
    d = Delivered()
    d.sent(envs[which], 0, 100)
    newer(d, 10 * M)
    assert evidence(d, 10**9) is None
    assert due(d, 0) is None
    assert d.pending_of(1) == [envs[which]]  # still followed: they block a timeout vote


def test_a_body_that_is_not_a_map_is_never_evidence(envs):
    d = Delivered()
    env = dict(envs["e1"], body="accept")
    d.sent(env, 0, 100)
    assert evidence(d, 10**9) is None
    assert due(d, 0) is None


def test_an_envelope_the_host_would_refuse_is_no_evidence(envs):
    d = Delivered()
    d.sent(envs["e1"], 0, 100)
    seen = []

    def judge(env):
        seen.append(env)
        return False

    assert evidence(d, 10**9, judge=judge) is None
    assert seen == [envs["e1"]]
    assert evidence(d, 99 + CENSOR, judge=lambda env: pytest.fail("judged early")) is None


def test_the_first_delivered_that_passes_is_the_evidence(envs):
    d = Delivered()
    d.sent(envs["e2"], 0, 50)
    d.sent(envs["e1"], 0, 100)
    waiting = (1, 2)
    assert evidence(d, 100 + CENSOR, waiting) is envs["e2"]
    assert evidence(d, 100 + CENSOR, waiting, judge=lambda e: e["seat"] == 1) is envs["e1"]
    assert evidence(d, 50 + CENSOR, waiting, judge=lambda e: e["seat"] == 1) is None
    assert due(d, 0, waiting) == 50 + CENSOR
    assert due(d, 50 + CENSOR, waiting) == 100 + CENSOR


# ---------------------------------------------------------------------- sending again
def test_a_resend_restarts_its_clock(envs):
    d = Delivered()
    d.sent(envs["e1"], 0, 100)
    newer(d, 2 * M)
    d.sent(envs["e1"], 0, 5_000)
    assert evidence(d, 5_000 + CENSOR - 1) is None
    assert evidence(d, 5_000 + CENSOR - 1, waiting=()) is None  # the count restarted too
    assert evidence(d, 5_000 + CENSOR) is envs["e1"]


def test_resent_restarts_every_clock(envs):
    d = Delivered()
    d.sent(envs["e1"], 0, 100)
    d.sent(envs["e2"], 0, 200)
    newer(d, 2 * M)
    d.resent(7_000)
    assert evidence(d, 7_000 + CENSOR - 1, waiting=(1, 2)) is None
    assert evidence(d, 10**9, waiting=()) is None
    assert evidence(d, 7_000 + CENSOR, waiting=(2,)) is envs["e2"]
    assert due(d, 0, waiting=(1, 2)) == 7_000 + CENSOR
    newer(d, 2 * M - 1)  # counted from the resend on
    assert evidence(d, 10**9, waiting=()) is None
    newer(d, 1)
    assert evidence(d, 10**9, waiting=()) is envs["e1"]


def test_another_envelope_with_the_same_counter_is_not_followed(envs):
    d = Delivered()
    d.sent(envs["e1"], 0, 100)
    d.sent(envs["twin"], 0, 900)
    assert d.pending_of(1) == [envs["e1"]]
    assert evidence(d, 100 + CENSOR) is envs["e1"]  # its clock did not move either


# ---------------------------------------------------------------------- sequenced
def test_sequencing_forgets_it(envs):
    d = Delivered()
    d.sent(envs["e1"], 0, 100)  # counter 0
    d.on_record(1, 0, counters(s1=0))
    assert len(d) == 1
    d.on_record(0, 0, counters(s1=1))  # seat 1's counter passed it (whoever's record)
    assert len(d) == 0
    assert evidence(d, 10**9) is None
    assert due(d, 0) is None
    assert d.pending_of(1) == []


def test_pending_of_forget_and_clear(envs):
    d = Delivered()
    d.sent(envs["ack"], 0, 10)  # seat 1, counter 2
    d.sent(envs["e1"], 0, 20)  # seat 1, counter 0
    d.sent(envs["e2"], 0, 30)
    assert d.pending_of(1) == [envs["e1"], envs["ack"]]
    assert d.pending_of(2) == [envs["e2"]]
    assert d.pending_of(0) == []
    assert len(d) == 3
    d.forget([1])
    assert d.pending_of(1) == [] and len(d) == 1
    d.forget([])
    assert len(d) == 1
    d.clear()
    assert len(d) == 0


# ---------------------------------------------------------------------- behind acks and chats
def test_an_envelope_behind_its_authors_chats_and_acks_is_judged_after_them(envs):
    """The host sequences an author's envelopes in counter order: one behind that author's
    chats and acks this peer delivered is judged as their follower (``lead``), and is
    evidence when the host passes over them all."""
    bed = Bed.opened()
    first = envs["e1"]
    key = identity_for(bed.t.seeds[1])

    def signed(n: int, body: dict) -> dict:
        return sign_envelope(key, bed.t.game, 1, n, first["head"], body)

    ack, chat = signed(0, {"type": "ack"}), signed(1, {"type": "chat", "text": "hi"})
    late = signed(2, first["body"])
    d = Delivered()
    for env in (ack, chat, late):
        d.sent(env, 0, 100)
    assert [d.lead_of((1, n)) for n in (0, 1, 2)] == [[], [ack], [ack, chat]]
    leads = []

    def judge(env: dict, lead: int = 0, before: Any = None) -> bool:
        leads.append((env["n"], lead))
        return lead == env["n"]

    assert evidence(d, 100 + CENSOR, judge=judge) is late
    # (the chat and the ack are never evidence themselves, but each is judged first: one the
    # host refuses, an ack with nothing new, leaves its counter untaken, 4.9)
    assert leads == [(0, 0), (1, 1), (2, 2)]
    # seed 1004340: a seat withholding its move behind an ack with nothing new, shown and
    # passed on; the host refuses the ack, so the move can never be sequenced: no evidence
    assert evidence(d, 100 + CENSOR, judge=lambda env, lead=0, before=None:
                    env["n"] != 0) is None
    # a gap, or another body before it: not judged as a follower
    d = Delivered()
    d.sent(ack, 0, 100)
    d.sent(late, 0, 100)
    assert d.lead_of((1, 2)) is None
    d = Delivered()
    d.sent(ack, 0, 100)
    d.sent(signed(1, first["body"]), 0, 100)
    d.sent(late, 0, 100)
    assert d.lead_of((1, 2)) is None


# ------------------------------------------------------------ one skipped, the next counts
def test_a_chat_delivered_first_hides_no_later_envelope(envs):
    d = Delivered()
    d.sent(envs["chat"], 0, 100)  # never evidence: passed over, the next one still judged
    d.sent(envs["e2"], 0, 100)
    assert evidence(d, 100 + CENSOR, waiting=(1, 2)) is envs["e2"]
    assert due(d, 0, waiting=(1, 2)) == 100 + CENSOR


def test_an_envelope_of_a_seat_not_awaited_hides_no_later_due(envs):
    d = Delivered()
    d.sent(envs["e2"], 0, 100)  # seat 2 not awaited: only records can make it evidence
    d.sent(envs["e1"], 0, 200)
    assert due(d, 0, waiting=(1,)) == 200 + CENSOR


def test_records_echoing_the_genesis_are_newer_than_no_envelope(envs):
    """A record echoing the genesis shows no newer head than any envelope's, nor than one whose
    head this peer does not hold (ranked with the genesis, as the oldest)."""
    for head in (None, -1):
        d = Delivered()
        d.sent(envs["e1"], head, 100)
        newer(d, 2 * M, head=-1)
        assert evidence(d, 10**9, waiting=()) is None
        newer(d, 2 * M, head=0)
        assert evidence(d, 10**9, waiting=()) is envs["e1"]


# ---------------------------------------------------------------------- what is passed on
def test_holds_the_very_envelope_delivered_and_unsequenced(envs):
    d = Delivered()
    assert not d.holds(envs["e1"])
    d.sent(envs["e1"], 0, 100)
    assert d.holds(envs["e1"])
    assert not d.holds(envs["twin"])  # the same counter, another envelope
    assert not d.holds(envs["e2"])
    d.on_record(0, 0, counters(s1=1))  # sequenced
    assert not d.holds(envs["e1"])


def test_passed_is_what_the_other_seats_wrote(envs):
    d = Delivered()
    d.sent(envs["e2"], 0, 100)
    d.sent(envs["e1"], 0, 200)
    assert d.passed(1) == [envs["e2"]]
    assert d.passed(2) == [envs["e1"]]
    assert d.passed(0) == [envs["e1"], envs["e2"]]  # in seat order


def test_passable_is_the_first_that_passes_after_the_chats_and_acks_before_it(envs, behind):
    """(4.6, pass-on: of the seat's unsequenced envelopes a probe shows, the first that is no
    chat or ack and passes the host's checks after that seat's chats and acks passing just
    before it, those first; another seat's envelope, or anything but a map, is not the seat's.)"""
    leads = []

    def judge(env: dict, lead: int = 0, before: Any = None) -> bool:
        leads.append((env["n"], lead))
        return True

    assert passable(behind, 1, judge) == behind
    assert leads == [(0, 0), (1, 1), (2, 2)]
    def passes(env: dict, lead: int = 0, before: Any = None) -> bool:
        return True

    assert passable(["junk", envs["e2"], *behind], 1, passes) == behind
    assert passable(behind, 2, passes) == []
    assert passable(behind[:2], 1, passes) == []  # a chat or an ack alone holds nothing up
    assert passable(behind, 1, lambda env, lead=0, before=None: False) == []


def test_an_ack_the_table_waits_on_is_passed_on_alone(behind):
    """(7.11: after the end, until it is final, the table waits on the acks of the seats not
    shown holding it; such a seat's ack is what it owes, not a quiet envelope.)"""
    def passes(env: dict, lead: int = 0, before: Any = None) -> bool:
        return True

    ack = behind[:1]
    assert passable(ack, 1, passes) == []
    assert passable(ack, 1, passes, ack_owed=True) == ack
    assert passable(behind[1:2], 1, passes, ack_owed=True) == []  # a chat is still quiet
    assert passable(behind, 1, passes, ack_owed=True) == ack  # the first owed, first
    assert passable(ack, 1, lambda env, lead=0, before=None: False, ack_owed=True) == []


def test_passable_passes_over_an_envelope_the_host_would_refuse(envs, behind):
    late = behind[2]
    refused = envs["e1"]  # (say, sequenced since the probe showed it)
    assert passable([refused, late], 1,
                    lambda env, lead=0, before=None: env is not refused) == [late]


# ---------------------------------------------------------------------- behind chat lines
@pytest.fixture(scope="module")
def chatty(envs) -> list[dict]:
    """Seat 1's six chat lines (counters 0 to 5), then its accept (6) behind them."""
    bed = Bed.opened()
    key = identity_for(bed.t.seeds[1])
    first = envs["e1"]
    return [sign_envelope(key, bed.t.game, 1, n, first["head"], body) for n, body in
            enumerate([{"type": "chat", "text": f"line {n}"} for n in range(6)] +
                      [first["body"]])]


def passes(env: dict, lead: int = 0, before: Any = None) -> bool:
    """The host's checks other than the pace (5.4): all pass."""
    return True


def _chat_record(seat: int, t: int, kind: str = "chat") -> dict:
    body = {"type": kind, "text": "x"} if kind == "chat" else {"type": kind}
    return {"t": t, "env": {"seat": seat, "body": body}}


def test_a_move_withheld_behind_more_chat_lines_than_the_host_takes_is_no_evidence(chatty):
    """(7.10, 4.6) A seat that withholds a move behind six chat lines, shown and passed on
    together: the host's pace refuses the sixth ("chat too often"), so the move can never be
    sequenced; judged with the pace, it is not evidence (judged as the host's other checks
    alone, it was)."""
    d = Delivered()
    for env in chatty:
        d.sent(env, 0, 100)
    judge = paced(passes, ChatTimes())
    assert evidence(d, 100 + CENSOR, judge=judge) is None
    assert evidence(d, 100 + CENSOR, judge=passes) is chatty[-1]  # the judge of before
    in_order = paced(lambda env, lead=0, before=None: env["n"] == lead, ChatTimes())
    assert passable(chatty, 1, in_order) == []  # nothing is passed on either (the counter
    # after a line the pace refuses stays untaken: the move's is out of order)
    assert passable(chatty[1:], 1, judge) == chatty[1:]  # five lines and the move: passed on
    d = Delivered()
    for env in chatty[1:]:
        d.sent(env, 0, 100)
    assert evidence(d, 100 + CENSOR, judge=judge) is chatty[-1]


def test_the_chat_pace_counts_the_authors_lines_of_the_last_window_pessimistically(chatty):
    """Lines of the author recorded within a window before the latest record time count (the
    host's clock is no earlier than that), with the lines ahead; older ones and another
    seat's do not."""
    chats = ChatTimes()
    for rec in (_chat_record(1, 0), _chat_record(1, 5_000), _chat_record(1, 9_000),
                _chat_record(2, 9_500), _chat_record(0, 10_000, "ack")):
        chats.record(rec)
    assert chats.recent(1) == 2 and chats.recent(2) == 1  # the line at 0 left the window
    judge = paced(passes, chats)
    assert judge(chatty[2], 2, chatty[:2])  # 2 recorded + 2 ahead: this is the fifth
    assert not judge(chatty[3], 3, chatty[:3])  # 2 + 3 ahead: a sixth line is refused
    assert not judged_all(judge, chatty[:4], chatty[-1])  # and the move behind it with it
    assert not judge(chatty[3], 3)  # a lead not given: every one of it counts as a line
    chats.record(_chat_record(0, 20_000, "ack"))  # the host's clock moved on: room again
    assert judge(chatty[5], 5, chatty[:5]) is False and judge(chatty[4], 4, chatty[:4])
