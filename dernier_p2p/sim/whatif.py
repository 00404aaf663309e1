"""Proposed changes to the liveness rules, to try in the simulator only (docs/LIVENESS.md,
"Design gaps"). Each one answers a gap the simulator found in the rules of PROTOCOL.md 7.5 as
they stand; ``with proposed_rules(): ...`` runs a block with all of them, so that a failing
match can be told apart: one that passes under them fails by a known gap of the rules, one that
still fails is a bug to look into.

* D1, ``stuck``: ``stuck_ms = max(turn_ms, censor_ms) + SILENCE_MS + PROBE_MS + 2 * grace_ms``,
  and the stuck clock runs only once every wait on an awaited seat has reached its limit plus
  ``PROBE_MS``. As the rules stand, a seat cut off without a close is seen dropped only after
  ``SILENCE_MS``, voted ``left`` ``grace_ms`` and a probe later, which a short grace puts after
  ``stuck_ms``; and a seat back from a drop has the catch-up budget added to its limit, which a
  long match puts after ``stuck_ms`` too. Either way the table is abandoned while the vote that
  would end the wait is still due.
* D2, ``old host early``: a seat in failover tries the old host after each candidate, not only
  after all of them. As the rules stand, a seat whose own link was the trouble (cut off from
  everyone, then healed) tries every candidate for ``try_ms`` before its host; meanwhile it
  answers probes, so it is neither timed out (it is reported dropped) nor voted ``left`` (it
  answers), and with many candidates the table is abandoned first.

Simulation only; process-wide while the block runs; not thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dernier_p2p.protocol.liveness import host as _host
from dernier_p2p.protocol.liveness import seat as _seat
from dernier_p2p.protocol.liveness.budgets import Budgets


def _stuck_ms(self: Budgets) -> int:
    return max(self.turn_ms, self.censor_ms) + self.silence_ms + self.probe_ms + \
        2 * self.grace_ms


def _waits_over(watch: Any, now: int) -> bool:
    for seat in watch.waits.awaited:
        end = watch.waits.ends(seat)
        if end is not None and now < end + watch.b.probe_ms:
            return False
    return True


@contextmanager
def proposed_rules() -> Iterator[None]:
    """Run the block with D1 and D2 (see the module docstring)."""
    saved_stuck = Budgets.stuck_ms
    seat_stuck = _seat.SeatWatch._stuck
    host_abandon = _host.HostWatch._abandon
    start = _seat.SeatWatch._start_failover

    def stuck(self: Any, now: int) -> None:
        if _waits_over(self, now):
            seat_stuck(self, now)

    def abandon(self: Any, now: int) -> None:
        if _waits_over(self, now):
            host_abandon(self, now)

    def start_failover(self: Any, why: str, now: int) -> None:
        start(self, why, now)
        host = self.deposing
        others = [c for c in self.round if c != host]
        self.round = [x for c in others for x in (c, host)] or [host]

    Budgets.stuck_ms = property(_stuck_ms)  # type: ignore[assignment,method-assign]
    _seat.SeatWatch._stuck = stuck  # type: ignore[method-assign]
    _host.HostWatch._abandon = abandon  # type: ignore[method-assign]
    _seat.SeatWatch._start_failover = start_failover  # type: ignore[method-assign]
    try:
        yield
    finally:
        Budgets.stuck_ms = saved_stuck  # type: ignore[method-assign]
        _seat.SeatWatch._stuck = seat_stuck  # type: ignore[method-assign]
        _host.HostWatch._abandon = host_abandon  # type: ignore[method-assign]
        _seat.SeatWatch._start_failover = start  # type: ignore[method-assign]
