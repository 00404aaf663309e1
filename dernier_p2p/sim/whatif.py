"""Proposed changes to the liveness rules, to try in the simulator only (docs/LIVENESS.md,
"Design gaps"). Each one answers a gap the simulator found in the rules of PROTOCOL.md 7.5 as
they stand; ``with proposed_rules(): ...`` runs a block with all of them, so that a failing
match can be told apart: one that passes under them fails by a known gap of the rules, one that
still fails is a bug to look into.

* D1, ``stuck``: ``stuck_ms = max(turn_ms, censor_ms) + SILENCE_MS + PROBE_MS + 2 * grace_ms``,
  and the stuck clock runs only once every wait on an awaited seat has reached its limit plus
  ``PROBE_MS`` (or ``3 * stuck_ms`` have passed). As the rules stand, a seat cut off without
  a close is seen dropped only after ``SILENCE_MS``, and voted ``left`` ``grace_ms`` and a
  probe later, which a short grace puts after ``stuck_ms``; a seat back from a drop has the
  catch-up budget added to its limit, which a long match puts after ``stuck_ms`` too; and a
  censored seat that deposes its host closes its connection, so the others wait for its grace
  before they probe it and pass its envelope on, then ``censor_ms`` more. Each time the table
  is abandoned while the vote that would end the wait is still due.
* D2, ``old host too``: a seat in failover after ``gone`` keeps trying to resume with the old
  host (every second) while it tries a candidate, and goes back to it if it answers. As the
  rules stand, a seat whose own link was the trouble (cut off from everyone,
  then healed) tries every candidate for ``try_ms`` before its host; meanwhile it answers
  probes, so it is neither timed out (it is reported dropped) nor voted ``left`` (it answers;
  or, without a listen address, it is voted ``left`` after a short grace), and with many
  candidates the table is abandoned first.

* D3, ``every candidate``: a seat in failover also tries, every second, to resume with each
  other candidate (a candidate that does not host refuses at once), while it urges the one it
  tries. As the rules stand, a seat that is trying another candidate when one takes over
  reaches it only when its round comes to it; the new host reports it dropped from its
  ``host_change`` on, and a short grace runs out first (a seat without a listen address is
  then voted ``left`` without a probe).

Simulation only; process-wide while the block runs; not thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.liveness import host as _host
from dernier_p2p.protocol.liveness import seat as _seat
from dernier_p2p.protocol.liveness.budgets import Budgets


def _stuck_ms(self: Budgets) -> int:
    return max(self.turn_ms, self.censor_ms) + self.silence_ms + self.probe_ms + \
        2 * self.grace_ms


def _waits_over(watch: Any, now: int) -> bool:
    if now - watch.last_progress >= 3 * watch.b.stuck_ms:
        return True  # (a wait that keeps starting again does not hold the table for ever)
    for seat in watch.waits.awaited:
        end = watch.waits.ends(seat)
        if end is not None and now < end + watch.b.probe_ms:
            return False
    return True


@contextmanager
def proposed_rules() -> Iterator[None]:
    """Run the block with D1, D2 and D3 (see the module docstring)."""
    saved_stuck = Budgets.stuck_ms
    seat_stuck = _seat.SeatWatch._stuck
    host_abandon = _host.HostWatch._abandon
    failover = _seat.SeatWatch._failover
    start = _seat.SeatWatch._start_failover
    deadline = _seat.SeatWatch.deadline

    def stuck(self: Any, now: int) -> None:
        if _waits_over(self, now):
            seat_stuck(self, now)

    def abandon(self: Any, now: int) -> None:
        if _waits_over(self, now):
            host_abandon(self, now)

    def start_failover(self: Any, why: str, now: int) -> None:
        self._why = why
        start(self, why, now)

    def try_old_host(self: Any, now: int) -> None:
        failover(self, now)
        old = self.deposing
        if self.phase != _seat.FAILOVER or old is None or not self.round:
            return
        if now < getattr(self, "_old_next", 0):
            return
        self._old_next = now + 1_000
        target = self.round[self.k]
        others = [c for c in self.chain.candidates() if c not in (self.me, target, old)]
        if getattr(self, "_why", None) == "gone" and target != old:
            others.append(old)  # (a host that censors or is late is not tried again early)
        for seat in others:
            self._emit(act.Dial("failover", seat, self.s.count - 1))

    def wake(self: Any) -> int | None:
        out = deadline(self)
        nxt = getattr(self, "_old_next", None)
        if self.phase == _seat.FAILOVER and nxt is not None and nxt > self._now:
            out = nxt if out is None else min(out, nxt)
        return out

    Budgets.stuck_ms = property(_stuck_ms)  # type: ignore[assignment,method-assign]
    _seat.SeatWatch._stuck = stuck  # type: ignore[method-assign]
    _host.HostWatch._abandon = abandon  # type: ignore[method-assign]
    _seat.SeatWatch._failover = try_old_host  # type: ignore[method-assign]
    _seat.SeatWatch._start_failover = start_failover  # type: ignore[method-assign]
    _seat.SeatWatch.deadline = wake  # type: ignore[method-assign]
    try:
        yield
    finally:
        Budgets.stuck_ms = saved_stuck  # type: ignore[method-assign]
        _seat.SeatWatch._stuck = seat_stuck  # type: ignore[method-assign]
        _host.HostWatch._abandon = host_abandon  # type: ignore[method-assign]
        _seat.SeatWatch._failover = failover  # type: ignore[method-assign]
        _seat.SeatWatch._start_failover = start  # type: ignore[method-assign]
        _seat.SeatWatch.deadline = deadline  # type: ignore[method-assign]
