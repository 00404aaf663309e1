"""A real ``dernier`` process in a pseudo-terminal, and a small model of the terminal's screen:
the escape sequences a full-screen program writes (cursor moves, erasing, the alternate
screen; colours and styles are ignored) applied to a grid of cells, so a test reads the screen
as a person does, panel by panel. OSC 52 (a program setting the clipboard) is kept."""

from __future__ import annotations

import base64
import codecs
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.cells import cell_len

from tests.cli.helpers import env_for

SEQUENCE = re.compile(
    r"\x1b\[([0-?]*)([ -/]*)([@-~])"  # CSI: parameters, intermediates, final
    r"|\x1b\]([^\x07\x1b]*)(?:\x07|\x1b\\)"  # OSC, ended by BEL or ST
    r"|\x1bP[^\x1b]*\x1b\\"  # DCS
    r"|\x1b[()*+].|\x1b[^\[\]P()*+]"  # character sets; other two-byte escapes
    r"|[\x00-\x1a\x1c-\x1f\x7f]"  # control characters (an escape alone waits for more)
)


class Grid:
    """The cells of one screen (main or alternate) and its cursor."""

    def __init__(self, cols: int, rows: int) -> None:
        self.cols, self.rows = cols, rows
        self.cells = [[" "] * cols for _ in range(rows)]
        self.x = self.y = 0

    def line(self, y: int) -> str:
        return "".join(self.cells[y])

    def scroll(self) -> None:
        self.cells.pop(0)
        self.cells.append([" "] * self.cols)

    def erase(self, y: int, start: int, end: int) -> None:
        row = self.cells[y]
        row[max(0, start) : min(self.cols, end)] = [" "] * (min(self.cols, end) - max(0, start))


@dataclass
class Screen:
    """What a terminal of ``cols`` x ``rows`` shows after the bytes fed to it."""

    cols: int
    rows: int
    clipboard: list[str] = field(default_factory=list)  # texts set by OSC 52, in order
    printed: list[str] = field(default_factory=list)  # text written on the main screen

    def __post_init__(self) -> None:
        self.main = Grid(self.cols, self.rows)
        self.alt: Grid | None = None
        self._rest = ""
        self.drawing = False  # inside a synchronized update: the frame is not whole yet
        self.replies: list[str] = []  # answers owed to the program's queries

    @property
    def grid(self) -> Grid:
        return self.alt if self.alt is not None else self.main

    def lines(self) -> list[str]:
        """The rows as shown, trailing spaces kept."""
        return [self.grid.line(y) for y in range(self.rows)]

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.lines())

    def feed(self, data: str) -> None:
        data = self._rest + data
        self._rest = ""
        at = 0
        for match in SEQUENCE.finditer(data):
            self._print(data[at : match.start()])
            at = match.end()
            self._sequence(match)
        tail = data[at:]
        cut = tail.find("\x1b")  # a sequence not whole yet: kept for the next bytes
        if cut >= 0 and len(tail) - cut < 4096:
            self._rest, tail = tail[cut:], tail[:cut]
        self._print(tail)

    def _print(self, text: str) -> None:
        if not text:
            return
        grid = self.grid
        if self.alt is None:
            self.printed.append(text)
        for ch in text:
            width = cell_len(ch)
            if width == 0:
                continue
            if grid.x + width > grid.cols:  # the pending wrap
                grid.x = 0
                self._line_feed()
            grid.cells[grid.y][grid.x] = ch
            if width == 2 and grid.x + 1 < grid.cols:
                grid.cells[grid.y][grid.x + 1] = ""
            grid.x += width

    def _line_feed(self) -> None:
        grid = self.grid
        if grid.y == grid.rows - 1:
            grid.scroll()
        else:
            grid.y += 1

    def _sequence(self, match: re.Match[str]) -> None:
        text = match.group(0)
        grid = self.grid
        if match.group(3) is not None:
            self._csi(match.group(1), match.group(2), match.group(3))
        elif match.group(4) is not None:
            osc = match.group(4)
            if osc.startswith("52;"):
                payload = osc.split(";", 2)[2]
                self.clipboard.append(base64.b64decode(payload).decode("utf-8"))
        elif text == "\r":
            grid.x = 0
        elif text == "\n":
            self._line_feed()
            if self.alt is None:
                self.printed.append("\n")
        elif text == "\x1b7":
            self._saved = (grid.x, grid.y)
        elif text == "\x1b8":
            grid.x, grid.y = getattr(self, "_saved", (0, 0))
        elif text == "\b":
            grid.x = max(0, grid.x - 1)
        elif text == "\t":
            grid.x = min(grid.cols - 1, (grid.x // 8 + 1) * 8)

    def _csi(self, params: str, middle: str, final: str) -> None:
        grid = self.grid
        private = params.startswith(("?", ">", "<", "="))
        numbers = [int(p) if p.isdigit() else 0 for p in params.lstrip("?><=").split(";")]
        first = numbers[0] if numbers else 0
        if private:
            if final in "hl" and 1049 in numbers:
                self.alt = Grid(self.cols, self.rows) if final == "h" else None
            if final in "hl" and 2026 in numbers:  # synchronized output: a frame begins, ends
                self.drawing = final == "h"
            if middle == "$" and final == "p" and first == 2026:  # asked: we draw whole frames
                self.replies.append("\x1b[?2026;2$y")
            return
        if final in "Hf":
            row = numbers[0] if numbers and numbers[0] else 1
            col = numbers[1] if len(numbers) > 1 and numbers[1] else 1
            grid.y, grid.x = min(row, grid.rows) - 1, min(col, grid.cols) - 1
        elif final == "A":
            grid.y = max(0, grid.y - max(1, first))
        elif final == "B":
            grid.y = min(grid.rows - 1, grid.y + max(1, first))
        elif final == "C":
            grid.x = min(grid.cols - 1, grid.x + max(1, first))
        elif final == "D":
            grid.x = max(0, grid.x - max(1, first))
        elif final == "G":
            grid.x = min(grid.cols, max(1, first)) - 1
        elif final == "d":
            grid.y = min(grid.rows, max(1, first)) - 1
        elif final == "K":
            start, end = {0: (grid.x, grid.cols), 1: (0, grid.x + 1)}.get(first, (0, grid.cols))
            grid.erase(grid.y, start, end)
        elif final == "J":
            if first in (2, 3):
                for y in range(grid.rows):
                    grid.erase(y, 0, grid.cols)
            elif first == 0:
                grid.erase(grid.y, grid.x, grid.cols)
                for y in range(grid.y + 1, grid.rows):
                    grid.erase(y, 0, grid.cols)
            else:
                grid.erase(grid.y, 0, grid.x + 1)
                for y in range(grid.y):
                    grid.erase(y, 0, grid.cols)
        elif final == "X":
            grid.erase(grid.y, grid.x, grid.x + max(1, first))


@dataclass
class Box:
    """A panel drawn with a rounded border: its title, lower title and the rows inside."""

    title: str
    subtitle: str
    top: int
    left: int
    right: int
    rows: list[str]

    def text(self) -> str:
        return "\n".join(row.strip() for row in self.rows)


def _title(border: str) -> str:
    return border.strip("╭╮╰╯").strip("─").strip()


def boxes(lines: list[str]) -> list[Box]:
    """Every rounded panel on the screen, top to bottom, left to right."""
    found = []
    for y, line in enumerate(lines):
        for x, ch in enumerate(line):
            if ch != "╭":
                continue
            right = line.find("╮", x + 1)
            if right < 0:
                continue
            bottom = y + 1
            while bottom < len(lines) and lines[bottom][x : x + 1] == "│":
                bottom += 1
            if bottom >= len(lines) or lines[bottom][x : x + 1] != "╰":
                continue
            inside = [lines[k][x + 1 : right] for k in range(y + 1, bottom)]
            found.append(Box(_title(line[x : right + 1]), _title(lines[bottom][x : right + 1]),
                             y, x, right, inside))
    return found


def _child_setup() -> None:
    """In the child: a session of its own with the pseudo-terminal as its terminal."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Terminal:
    """``python -m dernier_p2p ARGS`` in a pseudo-terminal of ``cols`` x ``rows``; ``prefix``:
    the command that runs it (``ip netns exec NS`` in the network lab); ``env``: more of its
    environment."""

    def __init__(self, home: Path, cols: int, rows: int, *args: str,
                 prefix: Sequence[str] = (), env: dict[str, str] | None = None) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        environ = env_for(home)
        environ.update(TERM="xterm-256color", COLUMNS=str(cols), LINES=str(rows), **(env or {}))
        environ.pop("NO_COLOR", None)
        self.proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", "dernier_p2p", *args], stdin=slave, stdout=slave,
            stderr=slave, env=environ, preexec_fn=_child_setup, close_fds=True,
        )
        os.close(slave)
        self.fd = master
        self.screen = Screen(cols, rows)
        self.raw: list[bytes] = []
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.closed = False

    def read(self, seconds: float) -> bool:
        """Take what the program writes for up to ``seconds``; whether anything came."""
        got = False
        deadline = time.monotonic() + seconds
        while not self.closed:
            wait = deadline - time.monotonic()
            if wait <= 0:
                break
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                break
            try:
                data = os.read(self.fd, 65536)
            except OSError:  # the program has ended and closed the terminal
                data = b""
            if not data:
                self.closed = True
                break
            got = True
            self.raw.append(data)
            self.screen.feed(self._decoder.decode(data))
            while self.screen.replies:
                self.send(self.screen.replies.pop(0))
        return got

    def settle(self, quiet: float = 0.05, limit: float = 0.5) -> None:
        """Read until the screen has been still for ``quiet`` seconds (or ``limit`` passed),
        and a frame being drawn is whole."""
        deadline = time.monotonic() + limit
        while (self.read(quiet) and time.monotonic() < deadline) or (
                self.screen.drawing and not self.closed and time.monotonic() < deadline + 5):
            pass

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def wait_for(self, test, what: str, limit: float = 90.0):  # noqa: ANN001, ANN201
        """Read until ``test(screen)`` is true (returns it); fail naming ``what``."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            self.settle()
            value = test(self.screen)
            if value:
                return value
            if self.closed:
                break
        raise AssertionError(f"never saw {what}; screen:\n{self.screen.text()}\nprinted:\n"
                             + "".join(self.screen.printed)[-3000:])

    def close(self) -> None:
        """Kill the program if it still runs; the terminal goes (again: nothing more)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.fd >= 0:
            self.read(0.1)
            os.close(self.fd)
            self.fd, self.closed = -1, True
