"""Evidence of censorship (PROTOCOL.md 7.5): only envelopes this peer delivered to the host.

:class:`Delivered` remembers each envelope the peer itself handed the host (its own, or one a
probe showed it and it passed on) until a record carries its author's counter, with when it
last sent it and how many envelopes of other seats the host sequenced since that echo a newer
head (a host serving in arrival order would have sequenced it before those). An envelope is
evidence once it has waited ``censor_ms``, still passes the host's checks at this peer's chain
(the ``judge`` callback), is no chat or ack, and the host passes over it: idle while the table
waits on its author, or busy with ``2 * m`` newer envelopes. An envelope behind chats and acks
of its author that this peer delivered too is judged after them (:func:`lead_of`): the host
must sequence them first, and they change nothing but their author's counter. A chat among
them is judged against the host's chat pace pessimistically (:func:`paced`), so a move withheld
behind more chat lines than the host takes is never evidence.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from dernier_p2p.protocol.node.pacing import CHAT_BURST, CHAT_WINDOW_MS

NOT_EVIDENCE = frozenset({"chat", "ack"})
"""Bodies whose pace is the host's policy (7.10): never evidence."""

Judge = Callable[..., bool]
"""``judge(env, lead=0, before=None)``: whether the host's checks (5.4) and its pace of acks
(4.9) pass ``env`` at this peer's chain now, after ``lead`` chats and acks of its author
before it (``before``: those envelopes)."""


class ChatTimes:
    """The host times (records' ``t``) of each author's chat records in the last chat window
    (7.10): what a seat knows of the host's chat pace."""

    def __init__(self, burst: int = CHAT_BURST, window_ms: int = CHAT_WINDOW_MS) -> None:
        self.burst = burst
        self.window_ms = window_ms
        self.last: int | None = None  # the latest record time: the host's clock is no earlier
        self._times: dict[int, deque[int]] = {}

    def record(self, rec: dict[str, Any]) -> None:
        """A record applied (any kind: each moves the host's clock on)."""
        t = rec.get("t")
        if not isinstance(t, int):
            return
        self.last = t if self.last is None else max(self.last, t)
        env = rec.get("env")
        body = env.get("body") if isinstance(env, dict) else None
        if isinstance(body, dict) and body.get("type") == "chat":
            self._times.setdefault(env["seat"], deque()).append(t)
        for times in self._times.values():
            while times and times[0] <= self.last - self.window_ms:
                times.popleft()

    def recent(self, author: int) -> int:
        """``author``'s chat records within a window before the latest record time: at least
        as many as the host counts when the next line comes (its clock is no earlier)."""
        return len(self._times.get(author, ()))


def paced(judge: Judge, chats: ChatTimes) -> Judge:
    """``judge``, with the host's chat pace (7.10) judged pessimistically: a chat passes only if
    its author's chat records of the last window (:meth:`ChatTimes.recent`) and the chats ahead
    of it (``before``; every one of ``lead`` when they are not given) leave room for it. A
    seat's line the host may refuse as "chat too often" leaves its counter untaken and the
    envelopes behind it unsequenced: the author's own doing, never the host's censorship. A
    client pacing its lines as 7.10 asks is never blamed for it: a chat judged so is only not
    passed on, nor anything behind it taken for evidence."""

    def check(env: dict[str, Any], lead: int = 0,
              before: list[dict[str, Any]] | None = None) -> bool:
        if _is_chat(env):
            ahead = lead if before is None else sum(1 for e in before if _is_chat(e))
            if chats.recent(env.get("seat")) + ahead >= chats.burst:  # type: ignore[arg-type]
                return False
        return judge(env, lead, before) if lead or before else judge(env)

    return check


def _is_chat(env: Any) -> bool:
    body = env.get("body") if isinstance(env, dict) else None
    return isinstance(body, dict) and body.get("type") == "chat"


def _quiet(env: dict[str, Any]) -> bool:
    """A chat or an ack: it changes nothing but its author's counter."""
    body = env.get("body")
    return isinstance(body, dict) and body.get("type") in NOT_EVIDENCE


def judged(judge: Judge, env: dict[str, Any], before: list[dict[str, Any]]) -> bool:
    """``judge`` on ``env`` after the chats and acks ``before`` of its author (plain, at
    none)."""
    return judge(env, len(before), before) if before else judge(env)


def judged_all(judge: Judge, lead: list[dict[str, Any]], env: dict[str, Any]) -> bool:
    """Whether every chat and ack of ``lead`` passes in turn, and ``env`` after them: one
    the host refuses (an ack with nothing new, 4.9) leaves its counter untaken, and the
    envelopes after it can never be sequenced, the author's own doing."""
    return all(judged(judge, e, lead[:k]) for k, e in enumerate(lead)) and \
        judged(judge, env, lead)


def passable(envs: Iterable[Any], seat: int, judge: Judge,
             ack_owed: bool = False) -> list[dict[str, Any]]:
    """What a seat passes on of ``seat``'s unsequenced envelopes ``envs`` (oldest first, as a
    ``present`` lists them, 4.6): the first that is no chat or ack and passes the host's checks
    after the chats and acks of ``seat`` that pass just before it (the host sequences them
    first), those chats and acks first; nothing if there is no such envelope (a chat or an ack
    alone holds nothing up). ``ack_owed``: the table waits on an ``ack`` of ``seat`` (the
    match is over and its end not yet final, 7.11), so an ack is what it owes, not quiet."""
    before: list[dict[str, Any]] = []
    for env in envs:
        if not isinstance(env, dict) or env.get("seat") != seat:
            continue
        if not judged(judge, env, before):
            continue
        if _quiet(env) and not (ack_owed and env["body"].get("type") == "ack"):
            before.append(env)
            continue
        return [*before, env]
    return []


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

    def lead_of(self, key: tuple[int, int]) -> list[dict[str, Any]] | None:
        """The chats and acks of its author this peer delivered with the counters just
        before envelope ``key`` (every envelope of that author it delivered with a lower
        counter, none missing between them), oldest first, or None if one of those is another
        body (that one is judged first)."""
        seat, n = key
        lower = sorted(k for k in self._by_key if k[0] == seat and k[1] < n)
        if not lower:
            return []
        if lower[0][1] != n - len(lower) or not all(
                _quiet(self._by_key[k].env) for k in lower):
            return None
        return [self._by_key[k].env for k in lower]

    def evidence(
        self,
        now: int,
        censor_ms: int,
        seats_at_table: int,
        waiting: Iterable[int],
        quiet_since: int,
        judge: Judge,
        heard: int | None = None,
        beat_ms: int = 0,
    ) -> dict[str, Any] | None:
        """The first delivered envelope that is evidence of censorship at ``now`` (see the
        module docstring), or None. ``quiet_since``: when the last progress record came;
        ``judge(env, lead)``: whether the host's checks (5.4) pass it at this peer's chain,
        after the chats and acks of its author delivered just before it (:meth:`lead_of`);
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
            lead = self.lead_of((d.env["seat"], d.env["n"]))
            if lead is not None and judged_all(judge, lead, d.env):
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
