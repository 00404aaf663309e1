"""The table's timers as a host sets them and record 0 carries them."""

from __future__ import annotations

import pytest

from dernier_p2p.net.timers import MAX_MS, TimerError, Timers


def test_timers_body_round_trip_and_refusals() -> None:
    t = Timers(turn_ms=500, declare_ms=50, grace_ms=300)
    assert Timers.from_body(t.to_body()) == t
    for bad in ({"turn_ms": 1}, {**t.to_body(), "x": 1}, [1, 2, 3]):
        with pytest.raises(TimerError):
            Timers.from_body(bad)
    for value in (0, -5, True, 1.5, MAX_MS + 1):
        with pytest.raises(TimerError):
            Timers(turn_ms=value)  # type: ignore[arg-type]
    assert Timers(turn_ms=MAX_MS).turn_ms == MAX_MS and Timers(turn_ms=1).turn_ms == 1
