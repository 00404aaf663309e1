"""The out-of-turn window one seat keeps (trio's virtual clock): it ends when every other seat
is ready for the record that opened it, or when its time is up, counted from when the table
settled on that record; after a hand, a seat waiting for its player's key withholds its
``ready`` and the others wait for it, boundedly. Which moves out of turn wait for whose
window."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from dernier_p2p.net.pacing import HAND_FACTOR, Pace, owed_windows
from dernier_p2p.rules import (
    Card,
    Catch,
    Declare,
    Draw,
    Phase,
    Play,
    Rank,
    Suit,
    apply,
    chance_needed,
    get_variant,
    new_match,
    to_act,
)
from dernier_p2p.rules.simulate import Dealer


def _run(fn) -> None:
    trio.run(fn, clock=trio.testing.MockClock(autojump_threshold=0))


def _window_at_10() -> Pace:
    """Seat 0's pace, a 3 s window opened by record 10 (inside ``trio.run``)."""
    pace = Pace(0, window_s=3.0)
    pace.opened(10, scored=False)
    return pace


async def _held(pace: Pace, others: list[int]) -> float:
    """The virtual seconds ``pace.wait`` holds this seat's move, ``others`` at the table."""
    start = trio.current_time()
    await pace.wait(lambda: others)
    return trio.current_time() - start


def test_the_window_runs_its_time_when_a_seat_is_not_ready() -> None:
    async def main() -> None:
        pace = _window_at_10()
        pace.heard(1, 10)  # seat 2 says nothing
        assert await _held(pace, [1, 2]) == 3.0

    _run(main)


def test_the_window_ends_as_soon_as_every_other_seat_is_ready() -> None:
    async def main() -> None:
        pace = _window_at_10()
        pace.heard(1, 12)  # a ready for a later record covers this window
        pace.heard(2, 9)  # an older one does not

        async def late() -> None:
            await trio.sleep(0.5)
            pace.heard(2, 10)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(late)
            assert await _held(pace, [1, 2]) == 0.5

    _run(main)


def test_after_a_hand_a_key_is_awaited_up_to_its_bound_and_withholds_ready() -> None:
    async def main() -> None:
        sent: list[int] = []
        me = Pace(1, window_s=2.0)
        me.sign, me.send = (lambda at: {"at": at}), (lambda frame: sent.append(frame["at"]))
        me.wants_key = True
        me.opened(20, scored=True)
        me.say_ready(20)
        me.opened(25, scored=False)
        me.say_ready(25)
        assert sent == []  # nothing while the player has not pressed the key
        me.key_pressed(26)
        assert sent == [26]
        me.say_ready(26)
        assert sent == [26]  # once per record

        other = Pace(0, window_s=2.0)
        other.opened(20, scored=True)
        await trio.sleep(1.0)
        other.opened(25, scored=False)
        # seat 1 never says ready: the hand's bound
        assert await _held(other, [1]) == HAND_FACTOR * 2.0 - 1.0

    _run(main)


def test_the_window_counts_from_when_the_table_settled_on_its_record() -> None:
    async def main() -> None:
        pace = _window_at_10()
        await trio.sleep(0.4)  # the deck work after the record (a draw's cards)
        pace.settled()
        await trio.sleep(0.2)
        pace.settled()  # asked again in the same window: it still counts from the first
        assert await _held(pace, [1]) == pytest.approx(3.0 - 0.2)
        pace.opened(11, scored=False)  # a new window without settling: from its record
        assert await _held(pace, [1]) == pytest.approx(3.0)

    _run(main)


def test_a_catch_or_a_jump_in_waits_for_the_window_of_the_seat_it_would_cost() -> None:
    rules = get_variant("standard", hand_size=2)
    hands = [[Card(Rank.N7, Suit.RED), Card(Rank.N5, Suit.BLUE)],
             [Card(Rank.N3, Suit.GREEN), Card(Rank.N8, Suit.YELLOW)],
             [Card(Rank.N2, Suit.GREEN), Card(Rank.N9, Suit.YELLOW)]]
    deck = Dealer.for_hands(rules, hands, first=Card(Rank.N4, Suit.RED), dealer=2)
    state = new_match(rules, 3)
    while (req := chance_needed(state)) is not None or state.phase is not Phase.PLAY:
        assert req is not None
        state, _ = apply(state, deck.chance_move(state, req))
    state, _ = apply(state, Play(0, state.hands[0][0], hands[0][0], declare=False))
    assert state.owes == (0,) and to_act(state) == 1
    assert owed_windows(state, 2, Catch(2, 0)) == (0,)  # out of turn: seat 0's window
    assert owed_windows(state, 1, Catch(1, 0)) == ()  # in turn: every seat's window already
    assert owed_windows(state, 0, Declare(0)) == ()
    jump = Play(2, state.hands[2][0], hands[2][0])  # (standard has none; the rule is general)
    assert owed_windows(state, 2, jump) == (0,)
    assert owed_windows(state, 2, Draw(2)) == ()
