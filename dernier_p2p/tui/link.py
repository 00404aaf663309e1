"""What joins the screen to the table: keys become lines for the human agent, and the lines the
agent and the narrator would print become the screen's log and prompt."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import click
import trio

from dernier_p2p.cli.human import LineReader
from dernier_p2p.protocol.messages import clean_chat

COPY_KEY = "Ctrl+Y"
"""The key that copies the host's join command on the full-screen table."""


class KeyLines(LineReader):
    """A :class:`LineReader` fed by the screen's keys instead of standard input. A person is
    typing, so what was typed before a prompt is dropped when the prompt opens."""

    def __init__(self) -> None:
        super().__init__(stream=None)
        self.token: trio.lowlevel.TrioToken | None = None

    @property
    def interactive(self) -> bool:
        return True

    def _start(self) -> None:
        self.token = trio.lowlevel.current_trio_token()
        self._started = True

    def feed(self, line: str | None) -> None:
        """Hand a line (None: the end of input) to the table; callable from the screen."""
        def put() -> None:
            try:
                self._send.send_nowait(line)
            except (trio.WouldBlock, trio.ClosedResourceError):
                pass

        if self.token is None:
            put()  # the table has not asked yet: queue it (dropped as type-ahead later)
            return
        try:
            self.token.run_sync_soon(put)
        except trio.RunFinishedError:
            pass


class ScreenLink:
    """The screen's side of a seat: the log, the open prompt, the keys, the seat once known."""

    def __init__(self, log: list[str] | None = None) -> None:
        self.log: list[str] = [] if log is None else log
        self.lines = KeyLines()
        self.prompt = ""
        self.notices: list[str] = []  # the agent's own lines (refusals, warnings), newest last
        self.seat: Any = None
        self.watching = False  # a watcher's screen: no seat, nothing to play or say
        self.invite = ""  # the host's "dernier join CODE", copied by a key
        self.token: trio.lowlevel.TrioToken | None = None  # the table's trio run, once seated
        self.pacer: Any = None
        self.changed_at = time.monotonic()
        self.finished = False
        self.ask_leave: Callable[[], None] | None = None  # the table's leave (Seating's)
        self.bots = False  # the other seats are bots in this process: they finish the match
        self.left = False  # the seat was asked to leave (see :meth:`leave`)

    def narrate(self, text: str = "", nl: bool = True, **_: Any) -> None:
        """The narrator's echo: every line goes to the log (it also keeps ``log``)."""
        text = click.unstyle(text).strip("\n")
        if text and (not self.log or self.log[-1] != text):
            self.log.append(text)
        self.changed_at = time.monotonic()

    def agent_echo(self, text: str = "", nl: bool = True, **_: Any) -> None:
        """The human agent's echo: a text without a newline is the prompt, others are notices."""
        text = click.unstyle(text)
        if not nl:
            self.prompt = text.strip()
        elif text.strip():
            self.notices.append(text.strip())
            self.log.append(text.strip())
        else:
            self.prompt = ""  # the prompt was overtaken by the table
        self.changed_at = time.monotonic()

    def leave(self) -> bool:
        """Ask the table to let this seat leave (it resigns; callable from the screen); False
        when there is no seat to resign (not seated yet, or asked already)."""
        if self.left or self.watching or self.seat is None or self.token is None or \
                self.ask_leave is None:
            return False
        try:
            self.token.run_sync_soon(self.ask_leave)
        except trio.RunFinishedError:
            return False
        self.left = True
        return True

    def say(self, text: str) -> str | None:
        """Send a chat line to the table (callable from the screen); None once it is on its way
        (it shows in the log when its record comes back), else why it is not sent."""
        line = clean_chat(text)
        if not line:
            return "Nothing to say."
        if self.watching:
            return "A watcher has no seat: only the players talk to the table."
        if self.seat is None or self.token is None:
            return "The table has not started: nothing can be said yet."
        try:
            self.token.run_sync_soon(self.seat.say, line)
        except trio.RunFinishedError:
            return "The table is closed."
        return None
