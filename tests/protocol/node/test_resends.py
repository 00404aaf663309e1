"""The host's budget of records sent again on a resume (PROTOCOL.md 4.9), without a network."""

from __future__ import annotations

from dernier_p2p.protocol.node.resends import BURST, SLACK, ResendBudget


def test_a_seat_that_drops_and_returns_is_never_refused() -> None:
    budget = ResendBudget()
    now = 0
    for _ in range(1000):  # a resume every 2 s for half an hour, 20 records missed each time
        now += 2_000
        assert budget.take(20, 5_000, now)


def test_a_rebuild_from_minus_one_fits_even_after_drops() -> None:
    budget = ResendBudget()
    assert budget.take(30, 2_000, 1_000)
    assert budget.take(2_000, 2_000, 2_000)  # the whole transcript (have -1)


def test_resuming_from_minus_one_again_and_again_is_bounded() -> None:
    budget = ResendBudget()
    length, sent, now = 2_000, 0, 0
    for _ in range(3_000):  # a resume every 10 ms for 30 s, each asking for everything
        now += 10
        if budget.take(length, length, now):
            sent += length
    # at most the burst and what a minute's rate gives back in 30 s, not 3,000 transcripts
    assert sent <= BURST * length + SLACK + (length + SLACK) * 30 / 60
    assert sent >= BURST * length


def test_a_refused_resume_takes_nothing_and_the_budget_comes_back() -> None:
    budget = ResendBudget()
    assert budget.take(200, 100, 0) and not budget.take(100, 100, 0)
    assert budget.wait_s(100, 100) > 0
    assert budget.take(100, 100, int(budget.wait_s(100, 100) * 1000) + 1)
