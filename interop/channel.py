"""The adapter channel and the case-file formats, with no dependency on any implementation.

Channel: every message, both ways, is a 4-byte unsigned big-endian length followed by that many
bytes of msgpack (a map). The runner writes one case at a time to the adapter's stdin and reads
one answer from its stdout (see ``interop/README.md``).

Transcript files (``cases/transcripts/*.dtr``) use the transcript file format of PROTOCOL.md:
the 20-byte header, the magic ``b"DERNIER-TRANSCRIPT\\n"`` and one byte, the protocol version
of the match (3 or 4: that of its record 0's table), then records, each a 4-byte big-endian
length and the record's canonical msgpack. The runner hands records to the adapter as those
bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

import msgpack

LENGTH_SIZE = 4
MAX_MESSAGE = 1 << 28
TRANSCRIPT_MAGIC = b"DERNIER-TRANSCRIPT\n"
TRANSCRIPT_VERSION = 5  # the protocol version the cases are for
# the versions of the recorded matches (3 and 4) and of a live client's (5): a client of
# version 5 verifies them all, reading 4 as 5 (PROTOCOL.md 20)
TRANSCRIPT_VERSIONS = (3, 4, 5)
TRANSCRIPT_HEADER = TRANSCRIPT_MAGIC + bytes([TRANSCRIPT_VERSION])


class ChannelError(Exception):
    """The other side closed the channel or sent something that is not a message."""


def pack(message: dict[str, Any]) -> bytes:
    """One channel message: length prefix and msgpack body."""
    body = msgpack.packb(message, use_bin_type=True)
    return len(body).to_bytes(LENGTH_SIZE, "big") + body


def _read_exact(stream: BinaryIO, size: int) -> bytes:
    out = bytearray()
    while len(out) < size:
        chunk = stream.read(size - len(out))
        if not chunk:
            raise ChannelError(f"channel closed after {len(out)} of {size} bytes")
        out += chunk
    return bytes(out)


def read_message(stream: BinaryIO) -> dict[str, Any] | None:
    """The next message from ``stream``; None at a clean end of stream."""
    first = stream.read(LENGTH_SIZE)
    if not first:
        return None
    prefix = first + (_read_exact(stream, LENGTH_SIZE - len(first)) if len(first) < 4 else b"")
    size = int.from_bytes(prefix, "big")
    if size > MAX_MESSAGE:
        raise ChannelError(f"message of {size} bytes is too large")
    try:
        message = msgpack.unpackb(_read_exact(stream, size), raw=False, strict_map_key=False)
    except (ValueError, msgpack.UnpackException) as exc:
        raise ChannelError(f"message is not msgpack: {exc}") from None
    if not isinstance(message, dict):
        raise ChannelError("a channel message is a map")
    return message


def write_message(stream: BinaryIO, message: dict[str, Any]) -> None:
    """Write one message and flush."""
    stream.write(pack(message))
    stream.flush()


def read_transcript_records(path: str | Path) -> list[bytes]:
    """The records of a transcript file, each as its raw canonical msgpack bytes."""
    return read_transcript_file(path)[1]


def table_version(record0: bytes) -> Any:
    """The ``version`` of the table that record 0 (raw bytes) carries, or None where the
    record is not a record holding a table (its judge says why)."""
    try:
        body = msgpack.unpackb(record0, raw=False, strict_map_key=False)["env"]["body"]
        return body["version"] if body.get("type") == "table" else None
    except (ValueError, TypeError, KeyError, AttributeError, msgpack.UnpackException):
        return None


def read_transcript_file(path: str | Path) -> tuple[int, list[bytes]]:
    """The protocol version a transcript file's header names, and its records, each as its
    raw canonical msgpack bytes."""
    data = Path(path).read_bytes()
    if not data.startswith(TRANSCRIPT_MAGIC) or len(data) <= len(TRANSCRIPT_MAGIC):
        raise ValueError(f"{path}: not a transcript file")
    version = data[len(TRANSCRIPT_MAGIC)]
    if version not in TRANSCRIPT_VERSIONS:
        raise ValueError(f"{path}: a transcript of protocol version {version}; these cases hold "
                         f"matches of versions "
                         f"{', '.join(map(str, TRANSCRIPT_VERSIONS[:-1]))} and "
                         f"{TRANSCRIPT_VERSIONS[-1]}")
    out, at = [], len(TRANSCRIPT_HEADER)
    while at < len(data):
        if at + LENGTH_SIZE > len(data):
            raise ValueError(f"{path}: torn length at byte {at}")
        size = int.from_bytes(data[at : at + LENGTH_SIZE], "big")
        at += LENGTH_SIZE
        if size == 0 or at + size > len(data):
            raise ValueError(f"{path}: bad record length at byte {at - LENGTH_SIZE}")
        out.append(data[at : at + size])
        at += size
    return version, out


def write_transcript_records(
    path: str | Path, records: list[bytes], version: int = TRANSCRIPT_VERSION
) -> None:
    """Write raw record bytes as a transcript file of protocol ``version`` (record 0's)."""
    parts = [TRANSCRIPT_MAGIC + bytes([version])]
    for rec in records:
        parts.append(len(rec).to_bytes(LENGTH_SIZE, "big") + rec)
    Path(path).write_bytes(b"".join(parts))
