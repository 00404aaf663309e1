"""Running the ``dernier`` command as a real process, with its data folder in a temporary one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from dernier_p2p.wire.transcript import HEADER, LENGTH_SIZE


def env_for(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["HOME"] = str(home)
    env["XDG_DATA_HOME"] = str(home / "data")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def dernier(
    home: Path, *args: str, stdin: str = "", timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m dernier_p2p ARGS`` to the end."""
    return subprocess.run(
        [sys.executable, "-m", "dernier_p2p", *args],
        input=stdin, capture_output=True, text=True, timeout=timeout, env=env_for(home),
    )


def _interruptible() -> None:
    """In the child: Ctrl-C (SIGINT) as a terminal gives it, even when the tests run in the
    background of a shell, which starts them with SIGINT ignored (and a child inherits that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spawn(home: Path, out: Path, *args: str) -> subprocess.Popen[bytes]:
    """Start ``python -m dernier_p2p ARGS`` with stdout and stderr to the file ``out`` (stdin
    closed), interruptible by SIGINT as from a terminal."""
    with open(out, "wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "dernier_p2p", *args],
            stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, env=env_for(home),
            preexec_fn=_interruptible,
        )


def frames(data: bytes) -> list[tuple[int, bytes]]:
    """(offset, body) of every record of a transcript's bytes."""
    out, at = [], len(HEADER)
    while at < len(data):
        length = int.from_bytes(data[at : at + LENGTH_SIZE], "big")
        out.append((at, data[at + LENGTH_SIZE : at + LENGTH_SIZE + length]))
        at += LENGTH_SIZE + length
    return out
