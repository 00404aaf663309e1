"""Evidence of censorship (PROTOCOL.md 7.5): only envelopes this peer delivered to the host.

:class:`Delivered` remembers each envelope the peer itself handed the host (its own, or one a
probe showed it and it passed on) until a record carries its author's counter, with when it
last sent it and how many envelopes of other seats the host sequenced since that echo a newer
head (a host serving in arrival order would have sequenced it before those). An envelope is
evidence once it has waited ``censor_ms``, still passes the host's checks at this peer's chain
(the ``judge`` callback), is no chat, and the host passes over it: idle while the table
waits on its author, or busy with ``2 * m`` newer envelopes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

NOT_EVIDENCE = frozenset({"chat"})
"""Bodies whose pace is the host's policy (7.10: it may refuse a chat that comes too soon, and
silently when it was passed on): never evidence. An ``ack`` is evidence like a move: the host
takes a seat's envelopes in counter order, so an ack it passes over holds up every later
envelope of that seat."""


@dataclass
class Delivery:
    env: dict[str, Any]
    at: int  # when this peer last sent it to the host (ms)
    head: int  # the index of the record it echoes (-1: genesis or unknown)
    newer: int = 0  # envelopes of other seats sequenced since, echoing a newer head


class Delivered:
    """Envelopes this peer delivered to the host and has not seen in a record."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[int, int], Delivery] = {}

    def sent(self, env: dict[str, Any], head: int | None, now: int) -> None:
        """``env`` (echoing record ``head``) was sent to the host at ``now`` (again, after a
        resume: its clock starts over, since the new connection's host may not have had it)."""
        key = (env["seat"], env["n"])
        old = self._by_key.get(key)
        if old is not None and old.env != env:
            return  # another envelope with the same counter: the first one is the one followed
        self._by_key[key] = Delivery(env, now, -1 if head is None else head)

    def holds(self, env: dict[str, Any]) -> bool:
        """Whether ``env`` itself is delivered and still unsequenced."""
        d = self._by_key.get((env.get("seat"), env.get("n")))
        return d is not None and d.env == env

    def passed(self, me: int) -> list[dict[str, Any]]:
        """The envelopes of other seats delivered (passed on) and still unsequenced."""
        return [d.env for (s, _), d in sorted(self._by_key.items()) if s != me]

    def resent(self, now: int) -> None:
        """Every envelope was sent again on a new connection at ``now``."""
        for d in self._by_key.values():
            d.at, d.newer = now, 0

    def on_record(self, author: int, head: int | None, next_counter: Callable[[int], int]) -> None:
        """A record of ``author`` echoing ``head`` was applied: envelopes it sequenced (their
        author's counter is past them) are forgotten; the others count it if it is newer."""
        for key, d in list(self._by_key.items()):
            seat, n = key
            if next_counter(seat) > n:
                del self._by_key[key]
            elif seat != author and head is not None and head > d.head:
                d.newer += 1

    def forget(self, seats: Iterable[int]) -> None:
        """Drop what these seats (out of the table) wrote."""
        gone = set(seats)
        for key in [k for k in self._by_key if k[0] in gone]:
            del self._by_key[key]

    def clear(self) -> None:
        self._by_key.clear()

    def pending_of(self, seat: int) -> list[dict[str, Any]]:
        """``seat``'s delivered envelopes still unsequenced, oldest counter first."""
        return [d.env for (s, _), d in sorted(self._by_key.items()) if s == seat]

    def evidence(
        self,
        now: int,
        censor_ms: int,
        seats_at_table: int,
        waiting: Iterable[int],
        quiet_since: int,
        judge: Callable[[dict[str, Any]], bool],
        heard: int | None = None,
        beat_ms: int = 0,
    ) -> dict[str, Any] | None:
        """The first delivered envelope that is evidence of censorship at ``now`` (see the
        module docstring), or None. ``quiet_since``: when the last progress record came;
        ``judge(env)``: whether the host's checks (5.4) pass it at this peer's chain;
        ``heard``: when a frame last came from the host, which must be ``beat_ms`` after the
        delivery at least (a connection that brings nothing is broken, not censoring)."""
        awaited = set(waiting)
        for d in sorted(self._by_key.values(), key=lambda d: d.at):
            body = d.env.get("body")
            if not isinstance(body, dict) or body.get("type") in NOT_EVIDENCE:
                continue
            if now - d.at < censor_ms:
                continue
            if heard is not None and heard < d.at + beat_ms:
                continue  # nothing from the host since: a stalled connection, not a censor
            idle = d.env["seat"] in awaited and now - quiet_since >= censor_ms
            if not idle and d.newer < 2 * seats_at_table:
                continue
            if judge(d.env):
                return d.env
        return None

    def next_due(
        self, now: int, censor_ms: int, seats_at_table: int, waiting: Iterable[int],
        quiet_since: int,
    ) -> int | None:
        """The earliest time after ``now`` at which an envelope could become evidence by time
        alone (the rest happens on records), or None."""
        awaited = set(waiting)
        times = []
        for d in self._by_key.values():
            body = d.env.get("body")
            if not isinstance(body, dict) or body.get("type") in NOT_EVIDENCE:
                continue
            due = d.at + censor_ms
            if d.newer < 2 * seats_at_table:
                if d.env["seat"] not in awaited:
                    continue  # only records can make it evidence
                due = max(due, quiet_since + censor_ms)
            if due > now:
                times.append(due)
        return min(times) if times else None

    def __len__(self) -> int:
        return len(self._by_key)
