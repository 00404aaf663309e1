"""Sans-IO table timers: deadlines per awaited seat, grace after a drop, the declaration window."""

from __future__ import annotations

import pytest

from dernier_p2p.net.timers import (
    ChatPace,
    Deadlines,
    Grace,
    TimerError,
    Timers,
    Window,
    acting_author,
)


def test_timers_body_round_trip_and_refusals() -> None:
    t = Timers(turn_ms=500, declare_ms=50, grace_ms=300)
    assert Timers.from_body(t.to_body()) == t
    for bad in ({"turn_ms": 1}, {**t.to_body(), "x": 1}, [1, 2, 3]):
        with pytest.raises(TimerError):
            Timers.from_body(bad)
    for value in (0, -5, True, 1.5):
        with pytest.raises(TimerError):
            Timers(turn_ms=value)  # type: ignore[arg-type]


def test_deadline_starts_when_awaited_and_restarts_on_progress() -> None:
    d = Deadlines(100)
    assert d.next_deadline() is None
    d.update([1], 0)
    d.update([1, 2], 50)  # seat 1 still awaited since 0; seat 2 from 50
    assert d.next_deadline() == 100
    assert d.expired(99) == []
    assert d.expired(100) == [1]
    assert d.expired(120) == []  # restarted at 100
    d.update([1, 2], 130, author=2)  # seat 2 made progress
    assert d.expired(190) == []
    assert d.expired(200) == [1]
    assert d.expired(230) == [2]
    d.update([], 240)
    assert d.next_deadline() is None and d.expired(10_000) == []


def test_grace_forgets_a_seat_that_is_back() -> None:
    g = Grace(300)
    g.dropped(2, 0)
    g.dropped(3, 100)
    g.dropped(2, 200)  # a second drop keeps the first time
    assert g.next_deadline() == 300
    g.back(3)
    assert not g.is_dropped(3) and g.is_dropped(2)
    assert g.expired(299) == []
    assert g.expired(300) == [2]
    assert g.expired(1000) == [] and g.next_deadline() is None


def test_window_closes_after_declare_ms() -> None:
    w = Window(50)
    assert not w.is_open(0)
    w.open(10)
    assert w.is_open(59) and not w.is_open(60)
    w.open(100)
    w.close()
    assert not w.is_open(101)


def test_chat_pace_allows_a_burst_then_one_line_per_freed_slot() -> None:
    pace = ChatPace(burst=3, window_s=10.0)
    for t in (0.0, 1.0, 2.0):
        assert pace.delay(t) == 0.0
        pace.note(t)
    assert pace.delay(5.0) == 5.0  # the line of t=0 leaves the window at t=10
    assert pace.delay(10.0) == 0.0
    pace.note(10.0)
    assert pace.delay(10.5) == 0.5  # then the one of t=1


@pytest.mark.parametrize("body", [{"type": "chat", "text": "hi"}, {"type": "ack"}])
def test_a_chat_or_an_ack_restarts_no_clock(body: dict) -> None:
    idle = {"env": {"seat": 2, "body": body}}
    move = {"env": {"seat": 2, "body": {"type": "move", "hand": 1, "move": "draw"}}}
    assert acting_author(idle) is None and acting_author(move) == 2
    clocks = Deadlines(1_000)
    clocks.update([2], 0)
    clocks.update([2], 900, acting_author(idle))
    assert clocks.expired(1_000) == [2]  # talking or echoing the head did not buy time
