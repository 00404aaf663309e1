"""What native code writes to standard error while a table runs stays off the terminal: a real
``perror`` (the C library's, as miniupnpc calls it) in a process whose standard error is a
pseudo-terminal."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = r"""
import ctypes, errno, logging, sys
from dernier_p2p.cli.native import native_stderr_aside

logger = logging.getLogger("dernier_p2p")
handler = logging.StreamHandler()  # as -v: the network's notices to standard error
handler.setFormatter(logging.Formatter("LOG %(name)s: %(message)s"))
logger.addHandler(handler)
logger.setLevel(logging.INFO)
logger.propagate = False
libc = ctypes.CDLL(None, use_errno=True)

def perror():
    ctypes.set_errno(errno.ECONNREFUSED)
    libc.perror(b"connect")

with native_stderr_aside():
    perror()
    print("python's own standard error", file=sys.stderr)
    logging.getLogger("dernier_p2p.net.portmap").warning("a notice")
perror()
"""


def _run_in_pty(program: str) -> str:
    """``program`` run with its standard error on a pseudo-terminal: what the terminal got."""
    master, slave = os.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    got = b""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 4096)
                except OSError:  # the program ended and the terminal closed
                    break
                if not data:
                    break
                got += data
            elif proc.poll() is not None:
                break
        assert proc.wait(timeout=30) == 0, got
    finally:
        os.close(master)
    return got.decode().replace("\r\n", "\n")


def test_a_perror_during_a_table_goes_to_the_log_and_python_still_reaches_the_terminal(
) -> None:
    lines = _run_in_pty(PROGRAM).splitlines()
    assert "python's own standard error" in lines  # sys.stderr still reaches the terminal
    assert "LOG dernier_p2p.net.portmap: a notice" in lines  # and so does the -v log
    # the C library's line comes through the log only (seen with -v), not written raw ...
    assert "LOG dernier_p2p.native: connect: Connection refused" in lines
    # ... until the table has ended: descriptor 2 is the terminal again
    assert lines.count("connect: Connection refused") == 1
    assert lines[-1] == "connect: Connection refused"


def test_nothing_changes_where_standard_error_is_no_terminal() -> None:
    proc = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines().count("connect: Connection refused") == 2  # a file's
    assert "LOG dernier_p2p.native" not in proc.stderr
