"""Sans-IO table timers: deadlines per awaited seat, grace after a drop, the declaration window."""

from __future__ import annotations

import pytest

from dernier_p2p.net.timers import Deadlines, Grace, TimerError, Timers, Window


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
