"""The table's three timers (PROTOCOL.md 18), as a host sets them and record 0 carries them.

- ``turn_ms``: how long a player may think (the limit of a wait adds the work budget, 18.2);
- ``declare_ms``: the out-of-turn window after a record that opens one (18.1);
- ``grace_ms``: how long a dropped connection may take to resume before the seats vote
  ``left`` about it.

What the timers decide (who is late, who has left) is the liveness core's
(:mod:`dernier_p2p.protocol.liveness`); this module only holds and checks the values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
