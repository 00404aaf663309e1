"""Host pacing, sans-IO (times in milliseconds, given by the caller): the declaration window
that holds turn moves (PROTOCOL.md 18) and a seat's chat pace (7.10)."""

from __future__ import annotations

from collections import deque

CHAT_BURST = 5
CHAT_WINDOW_MS = 10_000


class Window:
    """The declaration window: open for ``declare_ms`` after the record that opened it."""

    def __init__(self, declare_ms: int) -> None:
        self.declare_ms = declare_ms
        self.until: int | None = None

    def open(self, now: int) -> None:
        self.until = now + self.declare_ms

    def close(self) -> None:
        self.until = None

    def is_open(self, now: int) -> bool:
        if self.until is not None and now >= self.until:
            self.until = None
        return self.until is not None


class ChatPace:
    """At most ``burst`` chat lines in any ``window_ms``: the host refuses a seat's line beyond
    it, a client waits before sending one."""

    def __init__(self, burst: int = CHAT_BURST, window_ms: int = CHAT_WINDOW_MS) -> None:
        self.burst = burst
        self.window_ms = window_ms
        self._times: deque[int] = deque()

    def delay(self, now: int) -> int:
        """Milliseconds to wait before a line may go at ``now`` (0: at once)."""
        while self._times and now - self._times[0] >= self.window_ms:
            self._times.popleft()
        if len(self._times) < self.burst:
            return 0
        return self._times[0] + self.window_ms - now

    def note(self, now: int) -> None:
        """A line went at ``now``."""
        self._times.append(now)
