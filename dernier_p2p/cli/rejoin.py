"""Coming back to a match from the command line: the seat's Drbg seed, the transcript to
resume from, and the address a seat listens at to take over as host.

- :func:`seat_seed`: the seat's secret Drbg seed, derived from its identity key, so that the same
  command run again after a crash rebuilds the same deck secrets from the transcript (every
  hand's seed also mixes in the game id, so matches never share secrets);
- :func:`open_match`: whether a transcript holds a match this key sits in that is not over (a
  ``--transcript`` given again, or the newest such file in the transcripts folder after the host
  answered "this key has a seat: resume");
- :func:`parse_listen`: ``--listen HOST[:PORT]`` (the port defaults to the table's);
- :func:`listed_address`: the address a match's first record lists for the key's seat, where
  it listens again when it comes back.
"""

from __future__ import annotations

import os
from pathlib import Path

from dernier_p2p.cli.paths import TRANSCRIPT_SUFFIX, transcripts_dir
from dernier_p2p.net.address import is_loopback
from dernier_p2p.wire.hashing import digest
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.transcript import VERSION, TranscriptError, read_transcript

SEED_LABEL = "dernier-p2p/cli-seat-seed"


def seat_seed(identity: IdentityKey) -> bytes:
    """The Drbg seed of every seat this key plays from the command line (32 bytes)."""
    return digest(SEED_LABEL, [identity.seed()])


def open_match(path: Path, identity: IdentityKey) -> bool:
    """Whether the transcript at ``path`` seats ``identity`` in a match that is not over.

    A match is over when its last records end it; checking that needs the whole replay, so
    here a match counts as open when its file reads and seats the key, and the caller's
    resume tells the rest (the host refuses a seat that has left). A transcript of an older
    protocol version is never open: no table runs that version any more."""
    return _player(path, identity) is not None


def _player(path: Path, identity: IdentityKey) -> dict | None:
    """The entry of ``identity`` among the players of the match in the transcript at ``path``
    (its first record, of this protocol version), or None: no such seat, or a file that does
    not read."""
    try:
        records = read_transcript(path, allow_torn_tail=True, versions=(VERSION,))
        if not records:
            return None
        for player in records[0]["env"]["body"]["players"]:
            if player["key"] == identity.public_bytes():
                return player
    except (TranscriptError, OSError, KeyError, TypeError):
        return None
    return None


def latest_open_match(identity: IdentityKey, folder: Path | None = None) -> Path | None:
    """The newest transcript in the transcripts folder that seats ``identity`` (see
    :func:`open_match`), or None."""
    folder = folder if folder is not None else transcripts_dir()
    try:
        files = [f for f in folder.iterdir() if f.name.endswith(TRANSCRIPT_SUFFIX)]
    except OSError:
        return None
    for f in sorted(files, key=lambda f: f.stat().st_mtime, reverse=True):
        if f.stat().st_size > 0 and open_match(f, identity):
            return f
    return None


def parse_listen(value: str, default_port: int) -> tuple[str, int]:
    """``HOST[:PORT]`` (an IPv6 host in brackets when a port follows); raises ValueError."""
    text = value.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
        if rest and not rest.startswith(":"):
            raise ValueError(f"{value!r} is not HOST[:PORT]")
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    else:
        host, port_text = text, ""
    if not host or len(host) > 255 or not host.isprintable() or " " in host:
        raise ValueError(f"{value!r} is not HOST[:PORT]")
    if port_text == "":
        return host, default_port
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"{value!r}: the port must be 1 to 65535")
    return host, int(port_text)


def bind_for(host: str) -> str:
    """Where to open a listen address: a loopback host as given, anything else on every
    interface (the announced host may be a router's address that maps to this machine)."""
    return host if is_loopback(host) else ""


def exists_with_records(path: Path | None) -> bool:
    return path is not None and os.path.isfile(path) and path.stat().st_size > 0


def listed_address(path: Path, identity: IdentityKey) -> tuple[str, int] | None:
    """The ``listen`` address the match in the transcript at ``path`` lists for the seat of
    ``identity`` (its first record), or None: none listed, no such seat, or a file that does
    not read (the restore that follows says why)."""
    player = _player(path, identity)
    listen = None if player is None else player.get("listen")
    if not isinstance(listen, list) or len(listen) != 2:
        return None
    host, port = listen
    return (host, port) if isinstance(host, str) and type(port) is int else None
