"""What the node asks its driver to do, besides the liveness actions it passes on.

Connections are named by plain values: a seat number for a seat's connection to the host (at
the host), a negative number for a watcher, and :data:`UP` for a seat's own connection to its
host. Frames are maps (PROTOCOL.md 4.1); the driver encodes them (a frame sent to several
connections is one object, so it may encode it once).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

UP = "up"
"""A seat's connection to its host."""

Conn = int | str


@dataclass(frozen=True)
class Send:
    """Send ``frame`` on connection ``conn``."""

    conn: Conn
    frame: dict[str, Any] = field(compare=False)


@dataclass(frozen=True)
class Close:
    """Close connection ``conn`` (after what is queued on it, unless ``now``)."""

    conn: Conn
    why: str = ""
    now: bool = False


@dataclass(frozen=True)
class Persist:
    """Append ``record`` to this seat's transcript."""

    record: dict[str, Any] = field(compare=False)


@dataclass(frozen=True)
class Restart:
    """Start this seat's transcript afresh with ``records`` (a rebuild from a new host's
    records: the old file is kept beside, ``suffix`` appended to its name)."""

    records: list[dict[str, Any]] = field(compare=False)
    suffix: str = ".replaced"


@dataclass(frozen=True)
class Keep:
    """Append ``env`` to the envelope side file (PROTOCOL.md 21.1)."""

    env: Any = field(compare=False)


@dataclass(frozen=True)
class Log:
    """A line for the log: ``level`` is "info", "warning" or "error"."""

    level: str
    text: str


@dataclass(frozen=True)
class Ready:
    """A checked ``ready`` of ``seat`` for records up to ``at`` (the seat's pacing)."""

    seat: int
    at: int


@dataclass(frozen=True)
class Status:
    """The host reports ``seat`` ``state`` ("dropped" with ``grace_ms`` left, or "back")."""

    seat: int
    state: str
    grace_ms: int


@dataclass(frozen=True)
class Refused:
    """The host refused this seat's move or chat: tell the player (``code``, ``detail``)."""

    code: str
    detail: str


@dataclass(frozen=True)
class Stopped:
    """The match stopped on a fault (``fault``, a ProtocolError; with evidence when the record
    proving it is kept)."""

    fault: Any = field(compare=False)


@dataclass(frozen=True)
class Hosting:
    """This node hosts from now on (``listening``: accept resumes on the seat's listen
    address instead of links) or stops hosting."""

    listening: bool


@dataclass(frozen=True)
class Rebuilt:
    """This seat was rebuilt from its host's records (its session object changed)."""
