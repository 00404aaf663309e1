"""What the liveness machines ask their driver to do (plain, comparable values).

Every action names the rule of the table (:mod:`.table`) that produced it, so a log, a test or
the simulator can say why it happened. Frames are maps as PROTOCOL.md 4.1 gives them; the
driver encodes and sends them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Action:
    """Base of every action: ``rule`` is the name of the rule that asked for it."""

    rule: str


@dataclass(frozen=True)
class ToHost(Action):
    """Send ``frame`` on this seat's connection to the host (a vote, a ``pass``, a beat)."""

    frame: dict[str, Any] = field(default_factory=dict, compare=False)
    kind: str = ""


@dataclass(frozen=True)
class CloseHost(Action):
    """Close this seat's connection to the host (broken, or the host is being deposed)."""

    why: str = ""


@dataclass(frozen=True)
class Dial(Action):
    """Open a connection to seat ``seat`` as the host and resume there (4.4): ``have`` is the
    index to resume from (-1: rebuild from every record)."""

    seat: int = -1
    have: int = -1


@dataclass(frozen=True)
class Probe(Action):
    """Probe seat ``seat`` over a link (4.6); the answer comes back as ``probe_answer``."""

    seat: int = -1


@dataclass(frozen=True)
class Lend(Action):
    """Send seat ``seat`` records over a link as ``rec`` frames (4.6): those after ``after``
    (the ``have`` its probe showed), which the node fills in as ``records``; a seat that
    stopped with a proof sends that record alone."""

    seat: int = -1
    after: int = -1
    records: list[dict[str, Any]] = field(default_factory=list, compare=False)


@dataclass(frozen=True)
class Urge(Action):
    """Send this seat's ``depose`` vote ``frame`` to candidate ``seat`` over a link (7.6)."""

    seat: int = -1
    frame: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class TakeOver(Action):
    """Become the host in place of ``old``: gather (7.6)."""

    old: int = -1


@dataclass(frozen=True)
class StepBack(Action):
    """Stop hosting (nothing was sequenced) and go on with failover."""


@dataclass(frozen=True)
class LookForHost(Action):
    """This host has lost its table: look for the candidate that hosts now (7.5)."""


@dataclass(frozen=True)
class End(Action):
    """End the match for this seat: incomplete, nobody ranked (``why`` for the player)."""

    why: str = ""


@dataclass(frozen=True)
class Note(Action):
    """Something a player should be told: ``kind`` (see :mod:`.notes`), about ``seat``, with
    ``ms`` (a duration: the grace left, the wait) when it has one."""

    kind: str = ""
    seat: int | None = None
    ms: int = 0
    detail: str = ""


@dataclass(frozen=True)
class ToSeat(Action):
    """Host: send ``frame`` on seat ``seat``'s connection (a beat, a status)."""

    seat: int = -1
    frame: dict[str, Any] = field(default_factory=dict, compare=False)
    kind: str = ""


@dataclass(frozen=True)
class Broadcast(Action):
    """Host: send ``frame`` to every connection but ``skip``'s, watchers included."""

    frame: dict[str, Any] = field(default_factory=dict, compare=False)
    skip: int | None = None
    kind: str = ""


@dataclass(frozen=True)
class CloseSeat(Action):
    """Host: close seat ``seat``'s connection (silent: broken)."""

    seat: int = -1
    why: str = ""


@dataclass(frozen=True)
class Sequence(Action):
    """Host: sequence this host body (``timeout``, ``left``, ``no_contest``, ``host_change``)
    as its own next envelope."""

    body: dict[str, Any] = field(default_factory=dict, compare=False)
    kind: str = ""
