"""Keeping what native libraries write to standard error off the player's terminal.

miniupnpc, the UPnP client (a C library), reports a router that refuses a connection with
``perror``: "connect: Connection refused", written straight to file descriptor 2 at each
renewal of the port mapping the router does not take. On the full-screen table that text lands
over the top panel's border; in the line interface it cuts into the open prompt. While a table
runs, :func:`native_stderr_aside` points descriptor 2 at a pipe whose lines go to the
``dernier_p2p.native`` log (shown with ``-v``), and gives Python's own standard error a
descriptor of its own on the terminal: the program's messages, its ``-v`` log and the
full-screen table (Textual writes to ``sys.__stderr__``) reach the terminal as before.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

log = logging.getLogger("dernier_p2p.native")


def _forward(fd: int) -> None:
    """Log each line read from ``fd`` until its write side is closed."""
    with open(fd, "rb") as pipe:
        for raw in pipe:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                log.info("%s", line)


def _streams_on_fd2() -> list[TextIO]:
    return [s for s in {id(sys.stderr): sys.stderr, id(sys.__stderr__): sys.__stderr__}.values()
            if s is not None and _fileno(s) == 2]


def _fileno(stream: TextIO) -> int:
    try:
        return stream.fileno()
    except (OSError, ValueError, AttributeError):  # a captured or closed stream
        return -1


@contextmanager
def native_stderr_aside() -> Iterator[None]:
    """While the block runs, what is written to file descriptor 2 goes to the
    ``dernier_p2p.native`` log, and ``sys.stderr`` (``sys.__stderr__`` too, and the log
    handlers writing to them) to the terminal through a descriptor of its own. Nothing changes
    where descriptor 2 is not a terminal's or the platform has no ``os.pipe`` to spare."""
    olds = _streams_on_fd2()
    if os.name != "posix" or not olds or not os.isatty(2):
        yield
        return
    for old in olds:
        old.flush()
    keep = os.dup(2)
    read, write = os.pipe()
    first = olds[0]
    stream = open(keep, "w", encoding=first.encoding, errors=first.errors,  # noqa: SIM115
                  buffering=1)
    handlers = [(h, h.stream) for h in _stream_handlers() if h.stream in olds]
    saved = (sys.stderr, sys.__stderr__)
    for handler, _ in handlers:
        handler.setStream(stream)
    if sys.stderr in olds:
        sys.stderr = stream
    if sys.__stderr__ in olds:
        sys.__stderr__ = stream
    os.dup2(write, 2)
    os.close(write)
    reader = threading.Thread(target=_forward, args=(read,), name="native-stderr", daemon=True)
    reader.start()
    try:
        yield
    finally:
        stream.flush()
        os.dup2(stream.fileno(), 2)  # the pipe's last write side closes: the reader ends
        reader.join(timeout=1.0)
        sys.stderr, sys.__stderr__ = saved
        for handler, was in handlers:
            handler.setStream(was)
        stream.close()


def _stream_handlers() -> list[logging.StreamHandler]:  # type: ignore[type-arg]
    """Every stream handler of the loggers made so far (and the root's)."""
    loggers = [logging.getLogger()] + [
        lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)]
    return [h for lg in loggers for h in lg.handlers if isinstance(h, logging.StreamHandler)
            and not isinstance(h, logging.FileHandler)]
