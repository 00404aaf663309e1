"""What a run records: the events the client causes, in order."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Event:
    """Something the client did (or that happened to it), at ``t`` (monotonic seconds)."""

    t: float
    event: str
    where: str
    data: dict[str, Any]


@dataclass
class Events:
    """The events of one run, in order; appended from the trio thread and from the worker
    threads where long records are applied (a list append is atomic)."""

    items: list[Event] = field(default_factory=list)

    def add(self, event: str, where: str, /, **data: Any) -> None:
        self.items.append(Event(time.monotonic(), event, where, data))
