"""The host's budget of records sent again on a resume (PROTOCOL.md 4.9).

A ``resume`` with ``have`` = -1, or any old index, makes the host send every record after it
again. One seat (whoever holds its key) resuming again and again would have the host send its
whole transcript each time, as fast as the resumes come. :class:`ResendBudget` is a token
bucket per seat (and per watcher source address) counted in records sent on a resume: at once,
up to :data:`BURST` whole transcripts plus :data:`SLACK` records; then :data:`PER_MINUTE`
whole transcripts (plus :data:`SLACK`) a minute. A seat that drops and comes back resumes with
the index of its last record and costs the records it missed, a restarted seat that rebuilds
from -1 one transcript: both well inside it.
"""

from __future__ import annotations

from dataclasses import dataclass

BURST = 2
"""Whole transcripts that may be sent again at once."""
PER_MINUTE = 1
"""Whole transcripts the budget regains in a minute."""
SLACK = 64
"""Records added to both (a short transcript is no reason to refuse)."""


@dataclass
class ResendBudget:
    """Records sent again to one seat (or one watcher address), as a token bucket."""

    spent: float = 0.0
    at: int | None = None  # ms of the last update

    def take(self, cost: int, length: int, now: int) -> bool:
        """Whether ``cost`` records may be sent now, the transcript ``length`` records long
        (taken from the budget if so; nothing taken if not)."""
        if self.at is not None:
            regained = max(0, now - self.at) * PER_MINUTE * (length + SLACK) / 60_000
            self.spent = max(0.0, self.spent - regained)
        self.at = now
        if cost <= 0:
            return True
        if self.spent + cost > BURST * length + SLACK:
            return False
        self.spent += cost
        return True

    def wait_s(self, cost: int, length: int) -> float:
        """Seconds until ``cost`` records fit (as of the last update)."""
        over = self.spent + cost - (BURST * length + SLACK)
        return max(0.0, over * 60 / (PER_MINUTE * (length + SLACK)))
