"""The clocks of waits and drops (PROTOCOL.md 7.5, 18, 18.2; liveness/waits.py).

A wait on a seat starts when it becomes awaited; it restarts on the seat's progress records (not
on its chats or acks), on a ``timeout`` of it, and once per wait when it comes back; its limit
is ``turn_ms + unit_ms * (backlog + answer + catch-up)``, the backlog counted from the head the
seat last echoed.
"""

from __future__ import annotations

import pytest

from dernier_p2p.protocol.liveness.budgets import Budgets, record_units
from dernier_p2p.protocol.liveness.waits import Drops, Waits
from tests.protocol.liveness import PLAIN as P
from tests.protocol.liveness import Bed, units

TURN = 1_000
SHUFFLE = units("checking a record: `shuffle`", N=54)
TK3 = units("checking a record: `tokens` carrying `k` tokens", k=3)
M = units("answering: anything else (an accept, a coin message, a key commitment, a secret, "
          "a move)")  # a move or an accept owed
TABLE = {"type": "table"}
ACCEPT = {"type": "accept", "table": b"t"}
SHUF = {"type": "shuffle", "deck": [b"c"] * 54}
TOKENS3 = {"type": "tokens", "tokens": [{}, {}, {}]}
MOVE = {"type": "move", "move": "draw"}
CHAT = {"type": "chat", "text": "hello"}
ACK = {"type": "ack"}


def waits(unit: int = 2) -> Waits:
    return Waits(Budgets(TURN, 500, 4_000, unit_ms=unit), 54)


def move_owed(*seats: int) -> dict[int, list[str]]:
    return {s: ["move"] for s in seats}


def started(unit: int = 2) -> Waits:
    """Records 0 table, 1 accept of seat 1 (echoing 0), 2 shuffle of seat 0 (echoing 1),
    3 tokens of seat 2 (echoing 2), after which the table waits on seat 1's move (at 1 000)."""
    w = waits(unit)
    w.on_record(0, 0, TABLE, -1, [], {}, 0)
    w.on_record(1, 1, ACCEPT, 0, [], {}, 10)
    w.on_record(2, 0, SHUF, 1, [], {}, 20)
    w.on_record(3, 2, TOKENS3, 2, [1], move_owed(1), 1_000)
    return w


# ---------------------------------------------------------------------- start and limit
def test_a_wait_starts_when_the_seat_becomes_awaited():
    w = started()
    assert w.awaited == [1]
    assert w.started(1) == 1_000
    assert w.total_units() == P + P + SHUFFLE + TK3
    # backlog: records 1 .. 3 (seat 1 echoed record 0); answer: a move
    assert w.backlog(1) == P + SHUFFLE + TK3
    assert w.limit(1) == TURN + 2 * (P + SHUFFLE + TK3 + M)
    end = 1_000 + TURN + 2 * (P + SHUFFLE + TK3 + M)
    assert w.ends(1) == end
    assert not w.late(1, end - 1)
    assert w.late(1, end)
    assert w.late(1, end + 1)
    assert w.ends(1, 500) == end + 500
    assert not w.late(1, end + 499, 500)
    assert w.late(1, end + 500, 500)


def test_the_unit_multiplies_the_work_only():
    w = started(unit=3)
    assert w.limit(1) == TURN + 3 * (P + SHUFFLE + TK3 + M)


def test_a_seat_not_awaited_has_no_limit():
    w = started()
    for seat in (0, 2, 7):
        assert w.limit(seat) is None
        assert w.ends(seat) is None
        assert w.started(seat) is None
        assert w.backlog(seat) == 0
        assert not w.late(seat, 10**9)


def test_a_seat_that_never_echoed_owes_the_whole_backlog():
    w = waits()
    w.on_record(0, 0, TABLE, -1, [], {}, 0)
    w.on_record(1, 0, SHUF, 0, [2], move_owed(2), 5)
    assert w.backlog(2) == P + SHUFFLE  # records 0 and 1
    assert w.limit(2) == TURN + 2 * (P + SHUFFLE + M)


def test_the_backlog_runs_to_the_record_that_began_the_wait_only():
    w = started()
    w.on_record(4, 0, SHUF, 3, [1], move_owed(1), 1_100)  # not seat 1's: no restart
    assert w.started(1) == 1_000
    assert w.backlog(1) == P + SHUFFLE + TK3  # record 4 is not counted


def test_an_ack_during_the_wait_neither_restarts_nor_shortens_it():
    """(PROTOCOL.md 18.2: the seat spent the time checking what it echoes; a slow seat that
    acks the head once it has checked a long backlog must still have its answer's budget.)"""
    w = started()
    before = w.limit(1)
    w.on_record(4, 1, ACK, 3, [1], move_owed(1), 1_500)
    assert w.started(1) == 1_000
    assert w.backlog(1) == P + SHUFFLE + TK3 and w.limit(1) == before
    w.on_record(5, 1, CHAT, 1, [1], move_owed(1), 1_600)
    assert w.backlog(1) == P + SHUFFLE + TK3
    assert w.started(1) == 1_000


def test_an_echo_before_the_wait_counts_and_one_short_of_the_start_leaves_that_record():
    w = waits()
    w.on_record(0, 0, TABLE, -1, [], {}, 0)
    w.on_record(1, 1, ACCEPT, 0, [], {}, 10)
    w.on_record(2, 0, SHUF, 1, [], {}, 20)
    w.on_record(3, 1, ACK, 1, [], {}, 30)  # seat 1 echoes record 1, before its wait
    w.on_record(4, 2, TOKENS3, 3, [1], move_owed(1), 1_000)
    assert w.backlog(1) == SHUFFLE + 3 + TK3  # records 2 .. 4 (an ack checks as 3 units)


def test_the_answer_follows_what_the_seat_owes_now():
    w = waits()
    w.on_record(0, 0, TABLE, -1, [1], {1: ["shuffle epoch 0"]}, 0)
    assert w.limit(1) == TURN + 2 * (P + units("answering: its `shuffle`", N=54))
    w.on_record(1, 0, MOVE, 0, [1], {1: ["token for position 1", "token for position 2"]}, 9)
    assert w.started(1) == 0  # another seat's record
    assert w.limit(1) == TURN + 2 * (P + units("answering: `tokens` for `p` positions", p=2))
    w.on_record(2, 0, MOVE, 1, [1], {1: [], 0: ["move"]}, 9)
    assert w.limit(1) == TURN + 2 * P


def test_all_late_once_every_awaited_seat_is_past_its_limit():
    """(PROTOCOL.md 7.5, abandon: a table is stuck only once no awaited seat is still within
    its limit, a long budget of work included.)"""
    w = waits()
    w.on_record(0, 0, TABLE, -1, [1, 2], {1: ["move"], 2: ["shuffle epoch 0"]}, 100)
    end1, end2 = w.ends(1), w.ends(2)
    assert (end1, end2) == (100 + TURN + 2 * (P + M),
                            100 + TURN + 2 * (P + units("answering: its `shuffle`", N=54)))
    assert not w.all_late(end1 - 1)
    assert not w.all_late(end1)  # seat 2 still works on its shuffle
    assert not w.all_late(end2 - 1)
    assert w.all_late(end2)
    assert waits().all_late(0)  # (no wait: nothing holds the table)


# ---------------------------------------------------------------------- restarts
def test_progress_of_the_seat_while_still_awaited_restarts_its_wait():
    w = waits()
    w.on_record(0, 0, TABLE, -1, [1], {1: ["token for position 1", "token for position 2"]}, 0)
    w.on_record(1, 1, TOKENS3, 0, [1], {1: ["token for position 2"]}, 700)
    assert w.started(1) == 700
    assert w.backlog(1) == TK3  # it echoed record 0; the wait began at record 1, its own
    w.on_record(2, 1, TOKENS3, 0, [1], {1: ["token for position 2"]}, 800)
    assert w.started(1) == 800
    assert w.backlog(1) == TK3 + TK3  # records 1 and 2 after the head it echoed


@pytest.mark.parametrize("body", [CHAT, ACK])
def test_chat_and_ack_of_the_seat_do_not_restart_it(body):
    w = started()
    w.on_record(4, 1, body, 3, [1], move_owed(1), 5_000)
    assert w.started(1) == 1_000


def test_a_timeout_of_the_seat_restarts_its_wait():
    w = started()
    timeout = {"type": "timeout", "seat": 1, "votes": []}
    w.on_record(4, 0, timeout, 3, [1], move_owed(1), 40_000)
    assert w.started(1) == 40_000
    assert w.ends(1) == 40_000 + w.limit(1)


def test_a_host_change_restarts_every_wait():
    """(7.5, 7.6) The seats spent the wait failing over, and the new host's clocks start at its
    take-over: every wait starts again at the ``host_change`` (seed 1707517: a new host timed out
    a seat that had been a candidate itself and resumed 0.3 s before, on a wait begun under the
    old host)."""
    w = started()
    change = {"type": "host_change", "old": 0, "new": 2, "votes": []}
    w.on_record(4, 2, change, 3, [1], move_owed(1), 30_000)
    assert w.started(1) == 30_000
    assert w.ends(1) == 30_000 + w.limit(1)


def test_a_timeout_or_left_of_another_seat_does_not():
    w = started()
    w.on_record(4, 0, {"type": "timeout", "seat": 2, "votes": []}, 3, [1], move_owed(1), 9)
    w.on_record(5, 0, {"type": "left", "seat": 1, "votes": []}, 3, [1], move_owed(1), 10)
    assert w.started(1) == 1_000


def test_another_seats_progress_does_not_restart_it():
    w = started()
    w.on_record(4, 2, MOVE, 3, [1], move_owed(1), 2_000)
    assert w.started(1) == 1_000


def test_a_wait_ends_when_the_seat_is_no_longer_awaited_and_starts_afresh():
    w = started()
    w.on_record(4, 1, MOVE, 3, [2], move_owed(2), 2_000)
    assert w.awaited == [2]
    assert w.started(1) is None
    w.on_record(5, 2, MOVE, 4, [1], move_owed(1), 3_000)
    assert w.started(1) == 3_000
    assert w.backlog(1) == P + P  # records 4 (its own) and 5 after the head 3 it echoed


def test_awaited_is_in_seat_order():
    w = waits()
    w.on_record(0, 0, TABLE, -1, [2, 0, 1], {}, 0)
    assert w.awaited == [0, 1, 2]


# ---------------------------------------------------------------------- coming back
def test_back_restarts_the_wait_once_with_the_catch_up_budget():
    w = started()
    total = w.total_units()
    before = w.limit(1)
    w.on_back(1, 3_000)
    assert w.started(1) == 3_000
    assert w.limit(1) == before + 2 * total
    w.on_back(1, 4_000)  # a second return within the same wait
    assert w.started(1) == 3_000
    assert w.limit(1) == before + 2 * total


def test_the_catch_up_is_the_work_of_every_record_at_the_return():
    w = started()
    w.on_record(4, 0, SHUF, 3, [1], move_owed(1), 1_100)
    w.on_back(1, 2_000)
    assert w.limit(1) == TURN + 2 * ((P + SHUFFLE + TK3) + M + (2 * P + 2 * SHUFFLE + TK3))


def test_a_new_wait_may_be_restarted_by_a_back_again():
    w = started()
    w.on_back(1, 3_000)
    w.on_record(4, 1, TOKENS3, 3, [1], move_owed(1), 3_500)  # progress: a new wait
    assert w.started(1) == 3_500
    assert w.limit(1) == TURN + 2 * (TK3 + M)
    w.on_back(1, 3_600)
    assert w.started(1) == 3_600
    assert w.limit(1) == TURN + 2 * (TK3 + M + w.total_units())


def test_a_timeout_gives_a_new_wait_that_a_back_restarts():
    w = started()
    w.on_back(1, 3_000)
    w.on_record(4, 0, {"type": "timeout", "seat": 1, "votes": []}, 3, [1], move_owed(1), 40_000)
    assert w.limit(1) == TURN + 2 * (P + SHUFFLE + TK3 + P + M)
    w.on_back(1, 41_000)
    assert w.started(1) == 41_000


def test_a_back_while_not_awaited_is_granted_on_the_next_wait():
    w = started()
    assert not w.on_back(2, 1_500)  # seat 2 is not awaited: no wait restarted now
    assert w.started(2) is None
    w.on_record(4, 1, MOVE, 3, [2], move_owed(2), 2_000)
    assert w.started(2) == 2_000
    total = w.total_units()
    # backlog: seat 2 echoed record 2: records 3 and 4; answer 1; catch-up: everything
    assert w.limit(2) == TURN + 2 * (TK3 + P + M + total)
    assert not w.on_back(2, 2_500)  # the catch-up of this wait is used
    assert w.started(2) == 2_000
    # and only the next wait: after seat 2's progress no catch-up
    w.on_record(5, 2, MOVE, 4, [1], move_owed(1), 3_000)
    w.on_record(6, 1, MOVE, 5, [2], move_owed(2), 4_000)
    assert w.limit(2) == TURN + 2 * (P + P + M)  # records 5 and 6, a move


def test_one_back_while_not_awaited_is_granted_to_one_wait_only():
    """(7.5, ``back``: the catch-up comes once per wait when the seat comes back; a later wait
    on it, here the one a timeout of it starts, has none without another return, and a return
    then restarts it.)"""
    w = started()
    w.on_back(2, 1_500)
    w.on_record(4, 0, MOVE, 3, [2], move_owed(2), 2_000)  # the wait the return is granted to
    w.on_record(5, 0, {"type": "timeout", "seat": 2, "votes": []}, 4, [2], move_owed(2), 40_000)
    assert w.started(2) == 40_000
    assert w.limit(2) == TURN + 2 * (TK3 + P + P + M)  # records 3 .. 5, a move; no catch-up
    assert w.on_back(2, 41_000)
    assert w.limit(2) == TURN + 2 * (TK3 + P + P + M + w.total_units())


# ---------------------------------------------------------------------- lending
def test_began_is_the_record_that_began_the_wait():
    w = started()
    assert w.began(1) == 3
    assert w.began(0) is None and w.began(2) is None
    w.on_record(4, 0, CHAT, 3, [1], move_owed(1), 1_200)  # not the seat's: the same wait
    assert w.began(1) == 3
    w.on_record(5, 1, TOKENS3, 4, [1], move_owed(1), 1_300)  # its progress: a new wait
    assert w.began(1) == 5


def test_a_lend_restarts_the_wait_once_with_the_catch_up_budget():
    w = started()
    total = w.total_units()
    before = w.limit(1)
    assert not w.lent(1)
    assert w.on_lend(1, 3_000)
    assert w.lent(1) and w.started(1) == 3_000
    assert w.limit(1) == before + 2 * total
    assert not w.on_lend(1, 4_000)  # once per wait
    assert w.started(1) == 3_000 and w.limit(1) == before + 2 * total
    assert not w.on_lend(2, 4_000)  # not awaited: nothing to restart
    assert w.started(2) is None


def test_a_lend_that_never_reached_the_seat_is_given_once_more():
    """A seat lent to while it could take nothing over a link (gathering as a candidate, say)
    shows the same ``have`` and no ``lent`` at the next probe: one more lend and restart, and
    no third; a lend it took, or a ``have`` that moved, uses up the wait's lend."""
    w = started()
    assert w.on_lend(1, 3_000, have=2, took=False)
    end = w.ends(1)
    assert not w.on_lend(1, end - 1, have=2, took=False)  # the lend may be on its way
    assert not w.on_lend(1, end, have=2, took=True)  # it took records over a link
    assert not w.on_lend(1, end, have=3, took=False)  # it moved on: the lend reached it
    assert not w.on_lend(1, end)  # nothing known of its answer
    assert w.on_lend(1, end, have=2, took=False)  # never reached it: once more
    assert w.started(1) == end
    assert not w.on_lend(1, w.ends(1), have=2, took=False)  # a seat feigning it: no third
    assert w.started(1) == end


def test_a_lend_and_a_back_restart_one_wait_once_each():
    w = started()
    assert w.on_lend(1, 3_000)
    assert w.on_back(1, 4_000)  # a back's restart is its own
    assert w.started(1) == 4_000
    assert not w.on_back(1, 5_000) and not w.on_lend(1, 5_000)
    assert w.started(1) == 4_000


def test_a_new_wait_may_be_lent_to_again():
    w = started()
    assert w.on_lend(1, 3_000)
    w.on_record(4, 1, TOKENS3, 3, [1], move_owed(1), 3_500)  # progress: a new wait
    assert not w.lent(1)
    assert w.limit(1) == TURN + 2 * (TK3 + M)
    assert w.on_lend(1, 3_600)
    assert w.started(1) == 3_600


@pytest.mark.parametrize("body", [CHAT, ACK, MOVE])
def test_a_back_not_awaited_lapses_once_the_seat_authors_a_record(body):
    w = started()
    w.on_back(2, 1_500)
    w.on_record(4, 2, body, 3, [1], move_owed(1), 1_600)
    w.on_record(5, 1, MOVE, 4, [2], move_owed(2), 2_000)
    assert w.limit(2) == TURN + 2 * (P + P + M)  # records 4 and 5, a move; no catch-up


def test_a_back_not_awaited_is_kept_through_others_records():
    w = started()
    w.on_back(2, 1_500)
    w.on_record(4, 0, MOVE, 3, [1], move_owed(1), 1_600)
    w.on_record(5, 1, MOVE, 4, [2], move_owed(2), 2_000)
    assert w.limit(2) == TURN + 2 * (TK3 + P + P + M + w.total_units())


# ---------------------------------------------------------------------- clocks built later
def test_begin_after_count_waits_from_now_on_the_last_record():
    w = waits()
    for body in (TABLE, ACCEPT, SHUF):
        w.count(body)
    assert w.total_units() == 2 * P + SHUFFLE
    w.begin([2, 1], {1: ["move"], 2: ["key_reveal"]}, 5_000)
    assert w.awaited == [1, 2]
    assert w.started(1) == w.started(2) == 5_000
    # no echo is known: the backlog is every record
    assert w.limit(1) == TURN + 2 * (2 * P + SHUFFLE + M)
    assert w.limit(2) == TURN + 2 * (2 * P + SHUFFLE + units("answering: `key_reveal`"))
    w.on_record(3, 1, ACK, 2, [1, 2], {1: ["move"], 2: ["key_reveal"]}, 5_100)
    assert w.started(1) == 5_000
    assert w.backlog(1) == 2 * P + SHUFFLE  # (its ack does not shorten the wait)


def test_begin_after_one_record():
    w = waits()
    w.count(TABLE)
    w.begin([1], {1: ["accept"]}, 0)
    assert w.backlog(1) == P
    assert w.limit(1) == TURN + 2 * (P + M)


def test_an_echo_of_the_genesis_leaves_record_0_in_the_backlog():
    w = waits()
    w.on_record(0, 0, TABLE, -1, [], {}, 0)  # the host's table echoes the genesis
    w.on_record(1, 1, MOVE, 0, [0], move_owed(0), 10)
    assert w.backlog(0) == P + P  # records 0 and 1


def test_a_back_before_any_record_grants_nothing():
    w = waits()
    w.begin([0], {0: ["accept"]}, 0)
    w.on_back(0, 50)
    assert w.started(0) == 50
    assert w.limit(0) == TURN + 2 * M


def test_begin_on_a_seat_that_owes_nothing_listed():
    w = waits()
    w.count(TABLE)
    w.begin([1, 2], {1: ["accept"]}, 0)
    assert w.limit(1) == TURN + 2 * (P + M)
    assert w.limit(2) == TURN + 2 * P  # the backlog only


def test_counted_records_give_their_echoes_to_the_waits_after_them():
    """A restored seat's clocks count the records before them with the heads their authors
    echoed: a wait begun on a later record has the backlog after the seat's echo (18.2)."""
    w = waits()
    w.count(TABLE, 0, -1)  # 0: the host's table echoes the genesis
    w.count(ACCEPT, 1, 0)  # 1: seat 1 had applied record 0
    w.count(ACCEPT, 2, None)  # 2: a head this peer does not hold: no echo
    w.begin([], {}, 5_000)
    w.on_record(3, 0, SHUF, 2, [1, 2], move_owed(1, 2), 6_000)
    assert w.backlog(1) == P + P + SHUFFLE  # records 1 .. 3
    assert w.backlog(2) == P + P + P + SHUFFLE  # every record: it echoed none


def test_the_first_waits_of_clocks_built_mid_match_start_from_the_heads_echoed():
    """Clocks built mid-match (a restored seat, a new host) begin their first waits with the
    heads the records before them echoed, as every later wait does: a seat's backlog is the
    work after the head it echoed, not the whole chain (18.2), so such a peer times it out when
    the others do."""
    w = waits()
    w.count(TABLE, 0, -1)
    w.count(ACCEPT, 1, 0)
    w.count(ACCEPT, 2, 1)  # seat 2 had applied records 0 and 1
    w.count(SHUF, 0, 2)
    w.begin([1, 2], {}, 5_000)
    assert w.backlog(2) == P + SHUFFLE  # records 2 and 3
    assert w.backlog(1) == P + P + SHUFFLE  # records 1 to 3
    assert w.limit(2) == w.budgets.turn_ms + w.budgets.work_ms(P + SHUFFLE)


@pytest.mark.parametrize("fed", ["count", "on_record"])
def test_an_older_head_echoed_later_does_not_lengthen_the_backlog(fed):
    """(PROTOCOL.md 18.2: a seat that lies about its progress gains nothing, its limit never
    exceeds an honest seat's at the same point: the newest head it echoed counts, not a later
    envelope's older one.)"""
    w = waits()
    records = [(0, TABLE, -1), (1, ACCEPT, 0), (2, ACCEPT, 1),
               (1, ACK, 2),  # seat 1 shows it holds record 2
               (1, CHAT, 0)]  # then echoes record 0 again
    for i, (author, body, head) in enumerate(records):
        if fed == "count":
            w.count(body, author, head)
        else:
            w.on_record(i, author, body, head, [], {}, 10 * i)
    w.on_record(5, 0, SHUF, 4, [1], move_owed(1), 1_000)
    assert w.backlog(1) == P + P + SHUFFLE  # records 3 .. 5


def test_the_hands_cards_count_in_a_secret_record_and_a_shuffle_owed():
    """(PROTOCOL.md 18.2: checking a ``secret`` is ``2 * N + 1`` units, answering a shuffle
    ``8 * N + 8``, ``N`` the cards of the hand's deck: the clocks' ``cards``.)"""
    secret = {"type": "secret", "secret": b"x"}
    w = Waits(Budgets(TURN, 500, 4_000), 20)
    w.count(TABLE)
    w.count(secret)
    assert w.total_units() == P + units("checking a record: `secret`", N=20)
    w.begin([1], {1: ["shuffle epoch 1"]}, 0)
    assert w.limit(1) == TURN + 2 * (w.total_units() + units("answering: its `shuffle`", N=20))
    w.on_record(2, 0, secret, 1, [], {}, 10)
    assert w.total_units() == P + 2 * units("checking a record: `secret`", N=20)


def test_begin_without_records():
    w = waits()
    w.begin([0], {0: ["accept"]}, 7)
    assert w.backlog(0) == 0
    assert w.limit(0) == TURN + 2 * M
    assert w.total_units() == 0


def test_real_records_of_a_deal_give_the_real_limit():
    """The records of a real three-seat deal, fed as they come: the wait on the seat to move
    begins at the last token record, its backlog runs from the head it last echoed."""
    bed = Bed.dealt()
    s = bed.sessions[0]
    recs = bed.records
    w = waits()
    echo: dict[int, int] = {}
    for t, rec in enumerate(recs):
        env = rec["env"]
        head = s.chain.index_of(env["head"])
        echo[env["seat"]] = head
        waiting = [1] if rec is recs[-1] else []
        w.on_record(rec["i"], env["seat"], env["body"], head, waiting, move_owed(1), 10 * t)
    last = len(recs) - 1
    backlog = sum(record_units(r["env"]["body"], 54) for r in recs[echo[1] + 1:])
    assert w.started(1) == 10 * last
    assert w.backlog(1) == backlog > 0
    assert w.limit(1) == TURN + 2 * (backlog + M)


# ---------------------------------------------------------------------- drops
def test_drops():
    d = Drops()
    assert d.seats == [] and not d.is_dropped(1) and d.since(1) is None
    d.dropped(2, 100)
    d.dropped(1, 150)
    d.dropped(2, 900)  # reported again: the first report's time stands
    assert d.seats == [1, 2]
    assert d.since(2) == 100 and d.since(1) == 150
    assert d.is_dropped(2)
    assert d.back(2) is True
    assert d.back(2) is False
    assert not d.is_dropped(2) and d.since(2) is None
    d.dropped(2, 1_000)
    assert d.since(2) == 1_000
    d.clear()
    assert d.seats == [] and not d.is_dropped(1)
