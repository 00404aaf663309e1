"""Every duration the liveness rules use, and the budgets of work (PROTOCOL.md 18, 18.2).

A :class:`Budgets` holds the table's three timers and the protocol's constants (a test may
shorten a constant; a table never carries them) and derives the others: ``gone_ms``,
``try_ms``, ``stuck_ms``. Work is counted in *units*, one scalar multiplication of the group
each (the operation that dominates every check and proof): :func:`record_units` is the work of
checking a record, :func:`answer_units` the work of what a seat owes; a unit is budgeted
``unit_ms`` (2 ms, about twenty times its cost on the reference machine;
``benchmarks/bench_budgets.py`` prints the measured costs beside the units).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

CENSOR_MS = 10_000
"""An envelope delivered to the host and passed over this long is evidence (7.5)."""
UNIT_MS = 2
"""The budgeted time of one unit of work (one group multiplication) on a slow machine."""
BEAT_MS = 2_000
"""A side of a host connection that has sent nothing this long sends a ``beat`` (4.3)."""
SILENCE_MS = 15_000
"""A host connection that brought nothing this long is broken (4.3)."""
GONE_CAP_MS = 3_000
"""``gone_ms = min(GONE_CAP_MS, grace_ms)``: how long seats try to resume with a lost host."""
SETTLE_MS = 1_000
"""How long a new host holding its quorum waits for the other seats' resumes (7.6)."""
PROBE_MS = 5_000
"""How long a probe may take before the seat counts as not answering (7.5)."""
URGE_MS = 1_000
"""How often a seat in failover sends its ``depose`` vote to the candidate it tries (7.6)."""
RETRY_MS = 250
"""The longest pause between two resume attempts (7.5, ``reconnect``)."""
PROBE_EVERY_MS = 1_000
"""No seat is probed twice within this (and a seat answers one seat's probes at most this
often, 4.6)."""
REVOTE_MS = 2_000
"""A vote sent to the host whose rule still holds, and that no record has used yet, goes again
this long after it last went (7.5): a host that stalled may have dropped it. As often as a beat,
so a seat sends at most one frame per vote per ``BEAT_MS``."""


@dataclass(frozen=True)
class Budgets:
    """The durations of one table, in milliseconds (see the module docstring)."""

    turn_ms: int
    declare_ms: int
    grace_ms: int
    censor_ms: int = CENSOR_MS
    unit_ms: int = UNIT_MS
    beat_ms: int = BEAT_MS
    silence_ms: int = SILENCE_MS
    gone_cap_ms: int = GONE_CAP_MS
    settle_ms: int = SETTLE_MS
    probe_ms: int = PROBE_MS
    urge_ms: int = URGE_MS
    retry_ms: int = RETRY_MS
    probe_every_ms: int = PROBE_EVERY_MS
    revote_ms: int = REVOTE_MS

    @classmethod
    def of_table(cls, timers: Mapping[str, int], **constants: int) -> Budgets:
        """The budgets of a table whose record 0 carries ``timers``; ``constants`` override
        the protocol's (tests only). A constant these budgets do not hold (a peer's settings
        hold others, e.g. ``ack_ms``) is left out, and so is one named as a timer: the table's
        timers stand."""
        known = {f.name for f in fields(cls)} - {"turn_ms", "declare_ms", "grace_ms"}
        mine = {k: v for k, v in constants.items() if k in known}
        return cls(timers["turn_ms"], timers["declare_ms"], timers["grace_ms"], **mine)

    @property
    def gone_ms(self) -> int:
        """How long a seat tries to resume with a lost host before it votes ``depose``."""
        return min(self.gone_cap_ms, self.grace_ms)

    @property
    def try_ms(self) -> int:
        """How long a seat in failover tries one candidate."""
        return 2 * self.gone_ms

    @property
    def stuck_ms(self) -> int:
        """A table with no progress record this long is stuck: its seats vote ``abandon``
        (longer than any other wait: a time-out or censorship seen, a silent connection found
        and its seat probed, two graces for a drop and a host change)."""
        return max(self.turn_ms, self.censor_ms) + self.silence_ms + self.probe_ms + \
            2 * self.grace_ms

    @property
    def first_try_after_fault_ms(self) -> int:
        """How long the first candidate is tried after a ``censored`` or ``host-late`` vote:
        the others see such a host's fault only by their own clocks."""
        return self.turn_ms + self.censor_ms + self.try_ms

    def work_ms(self, units: int) -> int:
        """The budget of ``units`` units of work."""
        return self.unit_ms * units


def record_units(body: Mapping[str, Any], cards: int) -> int:
    """The work of checking a record whose body is ``body``, at a hand of ``cards`` cards
    (PROTOCOL.md 18.2). Any body (even a malformed one) gets a figure."""
    kind = body.get("type")
    if kind == "shuffle":
        deck = body.get("deck")
        return 12 * (len(deck) if isinstance(deck, list) else cards) + 12
    if kind == "tokens":
        tokens = body.get("tokens")
        return 4 * (len(tokens) if isinstance(tokens, list) else 0) + 1
    if kind in ("key_reveal", "transfer", "peek"):
        return 5
    if kind == "secret":
        return 2 * cards + 1
    return 3  # two signatures, the chain and the schema: about 0.3 ms here


def answer_units(owed: Iterable[str], cards: int) -> int:
    """The work of answering what a seat owes (``owed``: the session's ``pending`` texts of
    that seat, e.g. "shuffle epoch 0", "token for position 7", "move")."""
    total = 0
    tokens = 0
    for what in owed:
        if what.startswith("shuffle"):
            total += 8 * cards + 8
        elif what.startswith("token"):
            tokens += 1
        elif what == "key_reveal":
            total += 4
        elif what.startswith(("transfer", "peek")):
            total += 12  # X25519 and an AEAD, not group operations: about 3 units each
        else:
            total += 1
    if tokens:
        total += 3 * tokens + 1
    return total
