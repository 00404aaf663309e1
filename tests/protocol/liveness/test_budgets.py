"""Durations and work budgets (PROTOCOL.md 18, 18.2; liveness/budgets.py)."""

from __future__ import annotations

import pytest

from dernier_p2p.protocol.liveness import budgets as bm
from dernier_p2p.protocol.liveness.budgets import Budgets, answer_units, record_units
from tests.protocol.liveness import Bed, stuck_formula, stuck_of, units, units_table


def make(turn: int = 30_000, grace: int = 60_000, **kw: int) -> Budgets:
    return Budgets(turn, 1_000, grace, **kw)


def test_the_protocol_constants():
    assert (bm.CENSOR_MS, bm.UNIT_MS, bm.BEAT_MS, bm.SILENCE_MS) == (10_000, 2, 2_000, 15_000)
    assert (bm.GONE_CAP_MS, bm.SETTLE_MS, bm.PROBE_MS) == (3_000, 1_000, 5_000)
    assert (bm.URGE_MS, bm.RETRY_MS, bm.PROBE_EVERY_MS) == (1_000, 250, 1_000)
    assert bm.REVOTE_MS == bm.BEAT_MS == 2_000
    b = make()
    assert (b.censor_ms, b.unit_ms, b.beat_ms, b.silence_ms, b.gone_cap_ms) == (
        10_000, 2, 2_000, 15_000, 3_000)
    assert (b.settle_ms, b.probe_ms, b.urge_ms, b.retry_ms, b.probe_every_ms) == (
        1_000, 5_000, 1_000, 250, 1_000)
    assert b.revote_ms == 2_000


def test_of_table_reads_the_timers_and_takes_overrides():
    b = Budgets.of_table({"turn_ms": 7, "declare_ms": 8, "grace_ms": 9, "other": 1})
    assert (b.turn_ms, b.declare_ms, b.grace_ms, b.censor_ms) == (7, 8, 9, 10_000)
    b = Budgets.of_table({"turn_ms": 7, "declare_ms": 8, "grace_ms": 9}, censor_ms=5, unit_ms=3)
    assert (b.censor_ms, b.unit_ms) == (5, 3)


def test_of_table_keeps_the_tables_timers_and_leaves_out_other_settings():
    """The timers are record 0's, the same at every peer: a setting named as one does not
    change them; a peer's settings hold constants of other parts too (``ack_ms``), left out."""
    timers = {"turn_ms": 7, "declare_ms": 8, "grace_ms": 9}
    b = Budgets.of_table(timers, turn_ms=1, declare_ms=2, grace_ms=3, ack_ms=4, unit_ms=5)
    assert b == Budgets(7, 8, 9, unit_ms=5)


@pytest.mark.parametrize(("grace", "gone"), [
    (0, 0), (1, 1), (2_999, 2_999), (3_000, 3_000), (3_001, 3_000), (60_000, 3_000)])
def test_gone_ms_is_the_grace_capped_at_three_seconds(grace, gone):
    b = make(grace=grace)
    assert b.gone_ms == gone
    assert b.try_ms == 2 * gone


def test_gone_cap_is_a_constant_of_the_budgets():
    assert make(grace=5_000, gone_cap_ms=4_000).gone_ms == 4_000
    assert make(grace=3_500, gone_cap_ms=4_000).gone_ms == 3_500
    assert make(grace=5_000, gone_cap_ms=4_000).try_ms == 8_000


@pytest.mark.parametrize(("turn", "censor", "silence", "probe", "grace", "stuck"), [
    (30_000, 10_000, 15_000, 5_000, 2_000, 30_000 + 15_000 + 5_000 + 4_000),  # the turn
    (4_000, 10_000, 15_000, 5_000, 2_000, 10_000 + 15_000 + 5_000 + 4_000),  # the censor time
    (10_000, 10_000, 15_000, 5_000, 1, 10_000 + 20_000 + 2),
    (10_001, 10_000, 15_000, 5_000, 0, 10_001 + 20_000),
    (1_000, 7, 3, 2, 5, 1_000 + 3 + 2 + 10),  # every term counts, the constants too
    (7, 1_000, 0, 0, 0, 1_000),
])
def test_stuck_ms(turn, censor, silence, probe, grace, stuck):
    b = make(turn=turn, grace=grace, censor_ms=censor, silence_ms=silence, probe_ms=probe)
    assert b.stuck_ms == stuck
    assert stuck_of(turn_ms=turn, censor_ms=censor, SILENCE_MS=silence, PROBE_MS=probe,
                    grace_ms=grace) == stuck  # PROTOCOL.md 18's formula, as written


def test_stuck_ms_is_the_formula_of_protocol_18():
    assert " ".join(stuck_formula().split()) == \
        "max(turn_ms, censor_ms) + SILENCE_MS + PROBE_MS + 2 * grace_ms"
    for turn, grace in ((30_000, 60_000), (120_000, 60_000), (2_000, 15_000), (1, 1)):
        b = make(turn=turn, grace=grace)  # the protocol's constants
        assert b.stuck_ms == stuck_of(turn_ms=turn, censor_ms=bm.CENSOR_MS,
                                      SILENCE_MS=bm.SILENCE_MS, PROBE_MS=bm.PROBE_MS,
                                      grace_ms=grace)
    # ``dernier host``'s defaults: 120 s to think, a minute's grace
    assert make(turn=120_000, grace=60_000).stuck_ms == 120_000 + 15_000 + 5_000 + 120_000


def test_stuck_ms_outlasts_a_silent_cut_and_the_other_waits():
    """PROTOCOL.md 7.5 (abandon): a seat cut off without a close is found silent after
    SILENCE_MS and voted ``left`` a grace and a probe later, all before the table is stuck; a
    censoring host is deposed first (``censor_ms``), and so is one that does not time out its
    own seat (``turn_ms + grace_ms``)."""
    for turn, grace in ((2_000, 2_000), (20_000, 15_000), (30_000, 60_000)):
        b = make(turn=turn, grace=grace)
        assert b.silence_ms + b.grace_ms + b.probe_ms < b.stuck_ms
        assert b.censor_ms < b.stuck_ms and b.turn_ms + b.grace_ms < b.stuck_ms
    # (the former max(turn_ms, censor_ms) + 2 * grace_ms came first at short timers)
    b = make(turn=2_000, grace=2_000)
    assert max(b.turn_ms, b.censor_ms) + 2 * b.grace_ms < b.silence_ms + b.grace_ms + b.probe_ms


@pytest.mark.parametrize(("turn", "censor", "grace", "first"), [
    (30_000, 10_000, 2_000, 30_000 + 10_000 + 4_000),
    (30_000, 10_000, 60_000, 30_000 + 10_000 + 6_000),
    (1_000, 7, 5, 1_000 + 7 + 10),
])
def test_first_try_after_a_fault(turn, censor, grace, first):
    assert make(turn=turn, grace=grace, censor_ms=censor).first_try_after_fault_ms == first


def test_work_ms_is_units_times_the_unit():
    assert make().work_ms(0) == 0
    assert make().work_ms(1) == 2
    assert make().work_ms(7) == 14
    assert make(unit_ms=3).work_ms(7) == 21


# ---------------------------------------------------------------------- the table of 18.2
SHUFFLE = "checking a record: `shuffle`"
TOKENS = "checking a record: `tokens` carrying `k` tokens"
REVEALS = "checking a record: `key_reveal`, `transfer`, `peek`"
SECRET = "checking a record: `secret`"
OTHER = "checking any other record"
ANSWER_SHUFFLE = "answering: its `shuffle`"
ANSWER_TOKENS = "answering: `tokens` for `p` positions"
ANSWER_REVEAL = "answering: `key_reveal`"
ANSWER_BOX = "answering: a box (`transfer`, `peek`)"
ANSWER_ELSE = ("answering: anything else (an accept, a coin message, a key commitment, a secret, "
               "a move)")
OTHER_BODIES = [
    {"type": "move", "move": "draw"}, {"type": "accept"}, {"type": "chat", "text": "hi"},
    {"type": "ack"}, {"type": "table"}, {"type": "timeout", "seat": 1, "votes": []},
    {"type": "coin_commit"}, {"type": "coin_reveal"}, {"type": "key_commit"},
    {"type": "complaint"}, {"type": "host_change"}, {"type": "no_contest"}, {"type": "resign"},
    {"type": "left"},
]


def test_every_row_of_the_table_is_checked_here():
    assert set(units_table()) == {SHUFFLE, TOKENS, REVEALS, SECRET, OTHER, ANSWER_SHUFFLE,
                                  ANSWER_TOKENS, ANSWER_REVEAL, ANSWER_BOX, ANSWER_ELSE}


def test_the_figures_of_the_table():
    """(The figures the other tests rely on, as PROTOCOL.md gives them now.)"""
    assert units(SHUFFLE, N=54) == 660 and units(TOKENS, k=3) == 13
    assert (units(REVEALS), units(SECRET, N=54), units(OTHER)) == (5, 109, 3)
    assert (units(ANSWER_SHUFFLE, N=54), units(ANSWER_TOKENS, p=2)) == (440, 7)
    assert (units(ANSWER_REVEAL), units(ANSWER_BOX), units(ANSWER_ELSE)) == (4, 12, 1)


# ---------------------------------------------------------------------- record_units
@pytest.mark.parametrize("n", [0, 1, 10, 54, 108, 112])
def test_record_units_of_a_shuffle_of_its_own_deck(n):
    assert record_units({"type": "shuffle", "deck": [b"x"] * n}, 54) == units(SHUFFLE, N=n)


@pytest.mark.parametrize("deck", [None, "not a list", 7, {"a": 1}])
def test_record_units_of_a_shuffle_without_a_deck_list_counts_the_hands_deck(deck):
    assert record_units({"type": "shuffle", "deck": deck}, 20) == units(SHUFFLE, N=20)
    assert record_units({"type": "shuffle"}, 30) == units(SHUFFLE, N=30)


@pytest.mark.parametrize("k", [0, 1, 3, 11])
def test_record_units_of_tokens(k):
    assert record_units({"type": "tokens", "tokens": [{}] * k}, 54) == units(TOKENS, k=k)


@pytest.mark.parametrize("tokens", [None, "abc", 7, {"position": 1}])
def test_record_units_of_tokens_without_a_list(tokens):
    assert record_units({"type": "tokens", "tokens": tokens}, 54) == units(TOKENS, k=0)
    assert record_units({"type": "tokens"}, 54) == units(TOKENS, k=0)


@pytest.mark.parametrize("kind", ["key_reveal", "transfer", "peek"])
def test_record_units_of_a_reveal_or_a_box(kind):
    assert record_units({"type": kind}, 54) == units(REVEALS)
    assert record_units({"type": kind}, 2) == units(REVEALS)


@pytest.mark.parametrize("cards", [0, 54, 108])
def test_record_units_of_a_secret(cards):
    assert record_units({"type": "secret", "secret": b"x"}, cards) == units(SECRET, N=cards)


@pytest.mark.parametrize("body", OTHER_BODIES)
def test_record_units_of_any_other_record(body):
    assert record_units(body, 54) == units(OTHER)


@pytest.mark.parametrize("body", [
    {}, {"type": None}, {"type": 5}, {"type": ["shuffle"]}, {"type": b"shuffle"},
    {"deck": [1, 2, 3]}, {"type": "Shuffle", "deck": [1]},
])
def test_record_units_of_a_malformed_body_is_a_plain_records(body):
    assert record_units(body, 54) == units(OTHER)


def test_record_units_of_the_records_of_a_real_deal():
    bed = Bed.dealt()
    kinds = set()
    for rec in bed.records:
        body = rec["env"]["body"]
        kinds.add(body["type"])
        got = record_units(body, 54)
        if body["type"] == "shuffle":
            assert got == units(SHUFFLE, N=54)
        elif body["type"] == "tokens":
            assert got == units(TOKENS, k=len(body["tokens"]))
        elif body["type"] == "key_reveal":
            assert got == units(REVEALS)
        else:
            assert got == units(OTHER)
    assert {"table", "accept", "coin_commit", "key_commit", "key_reveal", "shuffle",
            "tokens"} <= kinds


# ---------------------------------------------------------------------- answer_units
ELSE = ["accept", "coin_commit", "coin_reveal", "key_commit", "secret", "move",
        "declare (optional)", "something new", "key_reveal_later"]


@pytest.mark.parametrize("cards", [10, 54, 108])
def test_answer_units_of_a_shuffle(cards):
    assert answer_units(["shuffle epoch 0"], cards) == units(ANSWER_SHUFFLE, N=cards)
    assert answer_units(["shuffle epoch 3"], cards) == units(ANSWER_SHUFFLE, N=cards)


@pytest.mark.parametrize("p", [1, 2, 5])
def test_answer_units_of_tokens_for_p_positions(p):
    owed = [f"token for position {k}" for k in range(p)]
    assert answer_units(owed, 54) == units(ANSWER_TOKENS, p=p)


def test_answer_units_of_a_key_reveal_and_of_boxes():
    assert answer_units(["key_reveal"], 54) == units(ANSWER_REVEAL)
    assert answer_units(["transfer of position 4 to seat 2"], 54) == units(ANSWER_BOX)
    assert answer_units(["peek of position 4 to seat 1"], 54) == units(ANSWER_BOX)


@pytest.mark.parametrize("what", ELSE)
def test_answer_units_of_anything_else(what):
    assert answer_units([what], 54) == units(ANSWER_ELSE)


def test_answer_units_of_nothing_and_of_several():
    assert answer_units([], 54) == 0
    owed = ["shuffle epoch 0", "token for position 1", "token for position 2", "key_reveal",
            "transfer of position 1 to seat 0", "move"]
    want = (units(ANSWER_SHUFFLE, N=20) + units(ANSWER_TOKENS, p=2) + units(ANSWER_REVEAL)
            + units(ANSWER_BOX) + units(ANSWER_ELSE))
    assert answer_units(owed, 20) == want
    assert answer_units(iter(owed), 20) == want  # any iterable
    assert answer_units(owed[::-1], 20) == want  # in any order (the shuffle after the rest)


def test_answer_units_of_what_real_sessions_owe():
    bed = Bed.opened()
    s = bed.sessions[0]
    assert s.pending == [(0, "accept"), (1, "accept"), (2, "accept")]
    assert answer_units([w for _, w in s.pending], 54) == 3 * units(ANSWER_ELSE)
    bed = Bed.dealt()
    s = bed.sessions[0]
    assert s.pending == [(1, "move")]
    assert answer_units([w for _, w in s.pending], 54) == units(ANSWER_ELSE)
    bed.put(bed.move(1))  # a play: its card opens with its owner's token
    owed = [w for seat, w in bed.sessions[0].pending if seat == 1]
    assert owed and all(w.startswith("token for position") for w in owed)
    assert answer_units(owed, 54) == units(ANSWER_TOKENS, p=len(owed))
