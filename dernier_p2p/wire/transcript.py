"""Append-only transcript files: one canonical msgpack record per message, durable on return.

Byte format::

    file   = header record*
    header = b"DERNIER-TRANSCRIPT\\n" version        (19 bytes of magic, then 1 byte, 0x05)
    record = length body                            (length: 4 bytes, unsigned big-endian)
    body   = canonical msgpack of one value         (1 <= length <= max_record)

What a record holds is the protocol's business; here it is any canonical value. A writer writes
the version this client speaks; a reader also takes the older versions whose transcripts still
verify (:data:`~dernier_p2p.wire.version.READABLE_VERSIONS`, PROTOCOL.md 20) and tells which it
met (:attr:`Transcript.version`). A writer appends only to a file of its own version.

A crash while appending can leave a *torn tail*: the end of the file is a strict prefix of a
record (or of the header), or is all zero bytes (some file systems extend a file before its
data reaches the disk). A length prefix, once complete, is trusted: an oversized or zero length
followed by anything but zeros is corruption, never a torn tail. Strict reading refuses a torn
tail; ``allow_torn_tail=True`` returns the intact records and reports the tail, and
:class:`TranscriptWriter` cuts a torn tail off before appending, so a session resumes after a
crash. Each :meth:`TranscriptWriter.append` writes one record with one ``write`` and fsyncs before
returning.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from dernier_p2p.wire.canonical import EncodingError, decode, encode
from dernier_p2p.wire.version import PROTOCOL_VERSION, READABLE_VERSIONS, version_mismatch

MAGIC = b"DERNIER-TRANSCRIPT\n"
VERSION = PROTOCOL_VERSION
READABLE = READABLE_VERSIONS
HEADER = MAGIC + bytes([VERSION])  # what a writer writes
LENGTH_SIZE = 4
MAX_RECORD = 1 << 24
_CHUNK = 1 << 16


class TranscriptError(ValueError):
    """A transcript file is malformed; ``offset`` and ``index`` say where (None for the header
    or when not applicable)."""

    def __init__(self, message: str, offset: int | None = None, index: int | None = None):
        where = []
        if index is not None:
            where.append(f"record {index}")
        if offset is not None:
            where.append(f"byte offset {offset}")
        super().__init__(f"{message} ({', '.join(where)})" if where else message)
        self.offset = offset
        self.index = index


@dataclass(frozen=True)
class TornTail:
    """An incomplete last record (number ``index``) starting at byte ``offset``, with ``size``
    bytes from there to the end of the file; ``offset`` is also the length of the intact part.
    A torn header has ``offset == 0`` and ``index is None``."""

    offset: int
    index: int | None
    size: int


class Transcript(list[Any]):
    """The records of a transcript, with ``torn`` set when a torn tail was tolerated and
    ``version`` the header's protocol version (None when the header itself is torn)."""

    torn: TornTail | None = None
    version: int | None = None


def _rest_is_zero(f: BinaryIO, start: bytes) -> bool:
    if start.strip(b"\0"):
        return False
    while chunk := f.read(_CHUNK):
        if chunk.strip(b"\0"):
            return False
    return True


def _records(
    f: BinaryIO, *, allow_torn_tail: bool, max_record: int, versions: tuple[int, ...]
) -> Generator[Any, None, TornTail | None]:
    """Yield the header's version (None for a torn header, when allowed), then the records of
    the transcript read from ``f``; return the torn tail, if any."""
    head = f.read(len(HEADER))
    if len(head) == len(HEADER) and head.startswith(MAGIC) and head[-1] in versions:
        yield head[-1]
    else:
        if (len(head) < len(HEADER) and MAGIC.startswith(head)) or _rest_is_zero(f, head):
            if allow_torn_tail:
                yield None
                return TornTail(0, None, f.seek(0, os.SEEK_END))
            raise TranscriptError("file ends inside the header", 0)
        if not head.startswith(MAGIC):
            raise TranscriptError("not a transcript file (wrong magic)", 0)
        refusal = version_mismatch("this transcript", head[len(MAGIC)], versions)
        raise TranscriptError(refusal, len(MAGIC))
    offset, index = len(HEADER), 0
    while prefix := f.read(LENGTH_SIZE):
        length = int.from_bytes(prefix, "big") if len(prefix) == LENGTH_SIZE else None
        if length is not None and 0 < length <= max_record:
            body = f.read(length)
            if len(body) == length:
                try:
                    value = decode(body)
                except EncodingError as exc:
                    raise TranscriptError(
                        f"record is not canonical msgpack: {exc}", offset, index
                    ) from None
                yield value
                offset += LENGTH_SIZE + length
                index += 1
                continue
        elif length is not None and not _rest_is_zero(f, prefix):
            why = f"record length {length} exceeds the maximum {max_record}"
            raise TranscriptError("record of length 0" if length == 0 else why, offset, index)
        if allow_torn_tail:
            return TornTail(offset, index, f.seek(0, os.SEEK_END) - offset)
        raise TranscriptError("file ends inside a record", offset, index)
    return None


def iter_transcript(
    path: str | os.PathLike[str],
    *,
    allow_torn_tail: bool = False,
    max_record: int = MAX_RECORD,
    versions: tuple[int, ...] = READABLE,
) -> Iterator[Any]:
    """Yield the records of the transcript at ``path`` (see :func:`read_transcript`)."""
    with open(path, "rb") as f:
        records = _records(
            f, allow_torn_tail=allow_torn_tail, max_record=max_record, versions=versions
        )
        next(records)  # the header's version
        yield from records


def read_transcript(
    path: str | os.PathLike[str],
    *,
    allow_torn_tail: bool = False,
    max_record: int = MAX_RECORD,
    versions: tuple[int, ...] = READABLE,
) -> Transcript:
    """All records of the transcript at ``path``; its header names one of ``versions`` (by
    default every version whose transcripts still verify), kept in the result's ``version``.

    Raise :class:`TranscriptError` for a malformed file or another version; with
    ``allow_torn_tail`` a torn tail is not an error but is reported in the result's ``torn``
    attribute.
    """
    out = Transcript()
    with open(path, "rb") as f:
        records = _records(
            f, allow_torn_tail=allow_torn_tail, max_record=max_record, versions=versions
        )
        out.version = next(records)
        while True:
            try:
                out.append(next(records))
            except StopIteration as stop:
                out.torn = stop.value
                return out


def _lock(fd: int) -> None:
    if sys.platform != "win32":
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TranscriptError("transcript is already open for writing") from None


def _fsync_dir(path: str | os.PathLike[str]) -> None:
    if sys.platform != "win32":
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class TranscriptWriter:
    """Append records to the transcript at ``path``, creating it if needed.

    An existing file is checked first (a malformed one, or one of another protocol version,
    raises :class:`TranscriptError`); a torn tail is cut off and described by :attr:`dropped`.
    One writer at a time may hold a file. The path is opened with ``O_NOFOLLOW``: a symbolic
    link (even a dangling one) or anything but a regular file is refused
    (:class:`TranscriptError`), never written through.
    """

    def __init__(self, path: str | os.PathLike[str], *, max_record: int = MAX_RECORD) -> None:
        self.max_record = max_record
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            self._fd: int | None = os.open(path, flags, 0o600)
        except OSError as exc:
            if os.path.islink(path):  # O_NOFOLLOW: ELOOP on Linux, EMLINK on some BSDs
                raise TranscriptError(f"{os.fspath(path)} is a symbolic link") from None
            raise exc
        try:
            if not stat.S_ISREG(os.fstat(self._fd).st_mode):
                raise TranscriptError(f"{os.fspath(path)} is not a regular file")
            _lock(self._fd)
            records = read_transcript(
                path, allow_torn_tail=True, max_record=max_record, versions=(VERSION,)
            )
            self.count = len(records)
            self.dropped = records.torn
            self.size = records.torn.offset if records.torn else os.fstat(self._fd).st_size
            if self.size == 0:
                os.ftruncate(self._fd, 0)
                _write_all(self._fd, HEADER)
                os.fsync(self._fd)
                _fsync_dir(path)
                self.size = len(HEADER)
            elif records.torn:
                os.ftruncate(self._fd, self.size)
                os.fsync(self._fd)
            os.lseek(self._fd, self.size, os.SEEK_SET)
        except BaseException:
            self.close()
            raise

    def append(self, value: Any) -> int:
        """Write ``value`` as the next record and fsync; return its index."""
        if self._fd is None:
            raise ValueError("transcript writer is closed")
        body = encode(value)
        if len(body) > self.max_record:
            raise TranscriptError(
                f"record of {len(body)} bytes exceeds the maximum {self.max_record}",
                self.size,
                self.count,
            )
        try:
            _write_all(self._fd, len(body).to_bytes(LENGTH_SIZE, "big") + body)
            os.fsync(self._fd)
        except BaseException:
            try:  # leave no partial record behind for the next append to follow
                os.ftruncate(self._fd, self.size)
                os.lseek(self._fd, self.size, os.SEEK_SET)
            except OSError:
                self.close()
            raise
        self.size += LENGTH_SIZE + len(body)
        self.count += 1
        return self.count - 1

    def close(self) -> None:
        """Release the file (idempotent)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
