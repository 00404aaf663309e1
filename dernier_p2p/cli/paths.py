"""Where the command keeps its files: the per-user data folder, transcripts and identity key.

- data folder: ``$XDG_DATA_HOME/dernier`` (default ``~/.local/share/dernier``) on Linux and
  other POSIX systems, ``~/Library/Application Support/dernier`` on macOS, ``%APPDATA%\\dernier``
  on Windows;
- transcripts: ``<data folder>/transcripts/<date>-<time>-<variant>-<id>.transcript``;
- identity key: ``<data folder>/identity.pem`` (PKCS#8 PEM, mode 0600), created on first use;
- ``-v``'s log while the full-screen table runs: ``<data folder>/verbose.log`` (appended).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from dernier_p2p.wire.identity import IdentityKey

TRANSCRIPT_SUFFIX = ".transcript"


def data_dir() -> Path:
    """The per-user data folder (not created here)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "dernier"
    if sys.platform == "win32":
        base = os.environ.get("APPDATA")
        return Path(base) / "dernier" if base else Path.home() / "dernier"
    base = os.environ.get("XDG_DATA_HOME")
    if base and os.path.isabs(base):
        return Path(base) / "dernier"
    return Path.home() / ".local" / "share" / "dernier"


def transcripts_dir() -> Path:
    return data_dir() / "transcripts"


def new_transcript_path(variant: str) -> Path:
    """A fresh file name in the transcripts folder (the folder is created, mode 0700)."""
    folder = transcripts_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    tag = os.urandom(3).hex()
    return folder / f"{stamp}-{variant}-{tag}{TRANSCRIPT_SUFFIX}"


def default_key_path() -> Path:
    return data_dir() / "identity.pem"


def verbose_log_path() -> Path:
    """Where ``-v``'s log goes while the full-screen table holds the terminal (the folder is
    created, mode 0700)."""
    folder = data_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder / "verbose.log"


def load_or_create_identity(path: Path | None) -> tuple[IdentityKey, bool]:
    """The identity key at ``path`` (default :func:`default_key_path`), created with a fresh
    random key if the file does not exist; returns the key and whether it was created.

    Raises :class:`~dernier_p2p.wire.identity.KeyFileError` for an unusable file and
    ``OSError`` when it cannot be read or written, or when the folder of a ``path`` given
    does not exist (only the default key's folder is created: a mistyped folder is refused, not
    made)."""
    key_path = path if path is not None else default_key_path()
    if key_path.exists():
        return IdentityKey.load(key_path), False
    if path is not None and not key_path.parent.is_dir():
        raise FileNotFoundError(f"no folder {key_path.parent} for the key file: create it first")
    key_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = IdentityKey.generate(os.urandom(32))
    key.save(key_path)
    return key, True
