"""Judging a scenario's events: the expectations met in order, the forbidden events absent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from interop.drive.events import Event
from interop.drive.model import Expect, Forbid, Scenario


@dataclass(frozen=True)
class Verdict:
    """A scenario's result: ``missing`` names the behaviour not seen (empty when it passed)."""

    passed: bool
    missing: str = ""
    seconds: float = 0.0


def _value(value: Any, seat_of: Callable[[str], int | None]) -> Any:
    if isinstance(value, str) and value.startswith("@"):
        return seat_of(value[1:])
    return value


def _fits(ev: Event, event: str, where: str | None, match: dict[str, Any],
          seat_of: Callable[[str], int | None], previous: Event | None) -> bool:
    if ev.event != event or (where is not None and ev.where != where):
        return False
    for key, want in match.items():
        if key == "same":
            if previous is None or ev.data.get("raw") != previous.data.get("raw"):
                return False
        elif ev.data.get(key) != _value(want, seat_of):
            return False
    return True


def met(sc: Scenario, events: list[Event],
        seat_of: Callable[[str], int | None]) -> list[int]:
    """The index in ``events`` of each expectation met, in order (as many as are met)."""
    found: list[int] = []
    at = 0
    previous: Event | None = None
    for exp in sc.expect:
        hit = _first(exp, events, at, seat_of, previous)
        if hit is None:
            break
        found.append(hit)
        previous, at = events[hit], hit + 1
    return found


def _first(exp: Expect, events: list[Event], at: int,
           seat_of: Callable[[str], int | None], previous: Event | None) -> int | None:
    for k in range(at, len(events)):
        ev = events[k]
        if previous is not None and ev.t - previous.t < exp.gap:
            continue
        if _fits(ev, exp.event, exp.where, exp.match, seat_of, previous):
            return k
    return None


def broken(sc: Scenario, events: list[Event], found: list[int],
           seat_of: Callable[[str], int | None]) -> Forbid | None:
    """The first forbidden event's rule, or None."""
    for rule in sc.forbid:
        if rule.since is not None and rule.since >= len(found):
            continue
        start = 0 if rule.since is None else found[rule.since] + 1
        end = len(events)
        if rule.until is not None and rule.until < len(found):
            end = found[rule.until]
        for ev in events[start:end]:
            if _fits(ev, rule.event, rule.where, rule.match, seat_of, None):
                return rule
    return None


def judge(sc: Scenario, events: list[Event], seat_of: Callable[[str], int | None],
          seconds: float, ended: str = "") -> Verdict:
    """The verdict once the run is over (``ended``: why it stopped early, if it did)."""
    found = met(sc, events, seat_of)
    rule = broken(sc, events, found, seat_of)
    if rule is not None:
        return Verdict(False, f"it must not: {rule.missing}", seconds)
    if len(found) < len(sc.expect):
        exp = sc.expect[len(found)]
        where = f" (at {exp.where})" if exp.where else ""
        why = f"; {ended}" if ended else ""
        return Verdict(False, f"expected {exp.missing}{where}{why}", seconds)
    return Verdict(True, "", seconds)


def early_end(sc: Scenario, events: list[Event]) -> str:
    """Why the run cannot go on (the client never joined, or ended while events are still
    expected of it), or an empty string."""
    for ev in events:
        if ev.event == "join-failed":
            return f"{ev.data.get('who')} did not join the table"
        if ev.event == "exit" and not any(e.event == "exit" for e in sc.expect):
            return f"the client ended with status {ev.data.get('code')}"
    return ""
