"""The table's timers, sans-IO: times are plain milliseconds given by the caller.

- ``turn_ms``: how long a seat may keep the table waiting (its turn, or a deck message it owes)
  before the host sequences a ``timeout`` for it;
- ``declare_ms``: after a record that opens a declaration window, how long the host holds the
  next turn move so that a DERNIER declaration (or a catch) can still come first;
- ``grace_ms``: how long a dropped connection may take to resume before the host sequences a
  ``left`` for its seat (and how long peers wait for a dropped host before choosing the next).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dernier_p2p.protocol.messages import is_progress

_FIELDS = ("turn_ms", "declare_ms", "grace_ms")
MAX_MS = 24 * 3600 * 1000


class TimerError(ValueError):
    """A timers map with missing, extra or out-of-range fields."""


@dataclass(frozen=True)
class Timers:
    """The three table timers, in milliseconds."""

    turn_ms: int = 30_000
    declare_ms: int = 1_000
    grace_ms: int = 15_000

    def __post_init__(self) -> None:
        for name in _FIELDS:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= MAX_MS:
                raise TimerError(f"{name} must be an integer 1..{MAX_MS}")

    def to_body(self) -> dict[str, int]:
        """The ``timers`` map of the table record."""
        return {name: getattr(self, name) for name in _FIELDS}

    @classmethod
    def from_body(cls, body: Any) -> Timers:
        """Parse a ``timers`` map; :class:`TimerError` if malformed."""
        if not isinstance(body, dict) or set(body) != set(_FIELDS):
            raise TimerError(f"timers must be a map of exactly {list(_FIELDS)}")
        return cls(**body)


def acting_author(record: dict[str, Any]) -> int | None:
    """The seat whose clock a record restarts: its author, unless it only chats or acks (a
    ``chat`` or an ``ack`` is no progress and restarts no clock, PROTOCOL.md 18)."""
    env = record["env"]
    return env["seat"] if is_progress(env["body"]) else None


class Deadlines:
    """Per-seat deadlines that start when a seat becomes awaited.

    :meth:`update` is given the seats the table waits on after each record (and the author of
    that record); a seat's clock starts when it becomes awaited and restarts when it makes
    progress (authors a record) while still awaited. :meth:`expired` returns the late seats and
    restarts their clocks, so a seat is reported at most once per ``limit_ms``.
    """

    def __init__(self, limit_ms: int) -> None:
        self.limit_ms = limit_ms
        self._since: dict[int, int] = {}

    def update(self, waiting: Iterable[int], now_ms: int, author: int | None = None) -> None:
        """Record which seats are awaited now."""
        since = {}
        for seat in waiting:
            start = self._since.get(seat)
            since[seat] = now_ms if start is None or seat == author else start
        self._since = since

    def clear(self) -> None:
        """Wait for no one."""
        self._since = {}

    def expired(self, now_ms: int, skip: int | None = None) -> list[int]:
        """The seats whose time has run out (in seat order); their clocks restart at ``now_ms``.
        Seat ``skip`` is neither reported nor restarted (see :meth:`late`)."""
        late = sorted(s for s, t in self._since.items()
                      if s != skip and now_ms - t >= self.limit_ms)
        for seat in late:
            self._since[seat] = now_ms
        return late

    def late(self, seat: int, now_ms: int, extra_ms: int = 0) -> bool:
        """Whether ``seat``'s time (plus ``extra_ms``) has run out (its clock is left as it
        is)."""
        start = self._since.get(seat)
        return start is not None and now_ms - start >= self.limit_ms + extra_ms

    def next_deadline(self) -> int | None:
        """The earliest time at which a seat will be late, or None if no one is awaited."""
        if not self._since:
            return None
        return min(self._since.values()) + self.limit_ms


class Grace:
    """Dropped seats and when they dropped; a seat not back after ``grace_ms`` has left."""

    def __init__(self, grace_ms: int) -> None:
        self.grace_ms = grace_ms
        self._dropped: dict[int, int] = {}

    def dropped(self, seat: int, now_ms: int) -> None:
        """``seat``'s connection dropped at ``now_ms`` (a second drop keeps the first time)."""
        self._dropped.setdefault(seat, now_ms)

    def back(self, seat: int) -> None:
        """``seat`` resumed in time."""
        self._dropped.pop(seat, None)

    def is_dropped(self, seat: int) -> bool:
        return seat in self._dropped

    def left_ms(self, seat: int, now_ms: int) -> int:
        """The grace ``seat`` has left at ``now_ms`` (0 when not dropped or run out)."""
        since = self._dropped.get(seat)
        return 0 if since is None else max(0, since + self.grace_ms - now_ms)

    @property
    def dropped_seats(self) -> list[int]:
        """The seats dropped now, in seat order."""
        return sorted(self._dropped)

    def expired(self, now_ms: int) -> list[int]:
        """The seats whose grace has run out, in seat order; they are forgotten."""
        late = sorted(s for s, t in self._dropped.items() if now_ms - t >= self.grace_ms)
        for seat in late:
            del self._dropped[seat]
        return late

    def late(self, seat: int, now_ms: int) -> bool:
        """Whether ``seat``'s time has run out (its clock is left as it is)."""
        start = self._since.get(seat)
        return start is not None and now_ms - start >= self.limit_ms

    def next_deadline(self) -> int | None:
        if not self._dropped:
            return None
        return min(self._dropped.values()) + self.grace_ms


class Window:
    """The declaration window: open for ``declare_ms`` after a record that opened it."""

    def __init__(self, declare_ms: int) -> None:
        self.declare_ms = declare_ms
        self.until: int | None = None

    def open(self, now_ms: int) -> None:
        self.until = now_ms + self.declare_ms

    def close(self) -> None:
        self.until = None

    def is_open(self, now_ms: int) -> bool:
        if self.until is not None and now_ms >= self.until:
            self.until = None
        return self.until is not None


CHAT_BURST = 5
CHAT_WINDOW_S = 10.0


class ChatPace:
    """At most ``burst`` chat lines in any ``window_s`` seconds (times in seconds, given by the
    caller): the host refuses a seat's line beyond it, a client waits before sending one."""

    def __init__(self, burst: int = CHAT_BURST, window_s: float = CHAT_WINDOW_S) -> None:
        self.burst = burst
        self.window_s = window_s
        self._times: deque[float] = deque()

    def delay(self, now: float) -> float:
        """Seconds to wait before a line may go at ``now`` (0: at once)."""
        while self._times and now - self._times[0] >= self.window_s:
            self._times.popleft()
        if len(self._times) < self.burst:
            return 0.0
        return self._times[0] + self.window_s - now

    def note(self, now: float) -> None:
        """A line went at ``now``."""
        self._times.append(now)
