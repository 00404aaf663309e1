"""The host's declaration window and a seat's chat pace (times in milliseconds)."""

from __future__ import annotations

from dernier_p2p.protocol.node.pacing import ChatPace, Window


def test_window_closes_after_declare_ms() -> None:
    w = Window(50)
    assert not w.is_open(0)
    w.open(10)
    assert w.is_open(59) and not w.is_open(60)
    w.open(100)
    w.close()
    assert not w.is_open(101)


def test_chat_pace_allows_a_burst_then_one_line_per_freed_slot() -> None:
    pace = ChatPace(burst=3, window_ms=10_000)
    for t in (0, 1_000, 2_000):
        assert pace.delay(t) == 0
        pace.note(t)
    assert pace.delay(5_000) == 5_000  # the line of t=0 leaves the window at t=10 s
    assert pace.delay(9_999) == 1
    assert pace.delay(10_000) == 0
    pace.note(10_000)
    assert pace.delay(10_500) == 500  # then the one of t=1 s
