"""Transcript files: byte format, appends across reopen, torn tails after a crash, bad files."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from dernier_p2p.wire import transcript
from dernier_p2p.wire.canonical import EncodingError, encode
from dernier_p2p.wire.transcript import (
    HEADER,
    TornTail,
    TranscriptError,
    TranscriptWriter,
    iter_transcript,
    read_transcript,
)

VALUES: list[Any] = [
    None,
    True,
    0,
    -(2**63),
    2**64 - 1,
    b"",
    b"\x00" * 300,
    "h\u00e9llo",
    [],
    {"type": "play", "seat": 3, "sig": b"\x07" * 64, "prev": b"\x01" * 32},
    [[1, [2, [3]]], {"z": None, "a": [b"x"]}],
]


def write(path: Path, values: list[Any]) -> None:
    with TranscriptWriter(path) as w:
        for v in values:
            w.append(v)


def record(value: Any) -> bytes:
    body = encode(value)
    return len(body).to_bytes(4, "big") + body


def test_header_bytes() -> None:
    assert HEADER == b"DERNIER-TRANSCRIPT\n\x05"


def test_exact_file_bytes(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write(path, [{"a": 1}, b"xy"])
    assert path.read_bytes() == HEADER + b"\0\0\0\x04\x81\xa1a\x01" + b"\0\0\0\x04\xc4\x02xy"


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write(path, VALUES)
    assert read_transcript(path) == VALUES
    assert read_transcript(path).torn is None
    assert list(iter_transcript(path)) == VALUES


def test_new_file_mode(tmp_path: Path) -> None:
    write(tmp_path / "t", [])
    assert stat.S_IMODE(os.stat(tmp_path / "t").st_mode) == 0o600
    assert (tmp_path / "t").read_bytes() == HEADER


def test_append_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write(path, VALUES[:4])
    with TranscriptWriter(path) as w:
        assert w.count == 4 and w.dropped is None
        assert w.size == path.stat().st_size
        assert w.append("five") == 4
        assert w.append("six") == 5
        assert w.size == path.stat().st_size
    assert read_transcript(path) == VALUES[:4] + ["five", "six"]


def test_each_append_is_on_disk_before_close(tmp_path: Path) -> None:
    path = tmp_path / "t"
    with TranscriptWriter(path) as w:
        for n, v in enumerate(VALUES):
            w.append(v)
            assert read_transcript(path) == VALUES[: n + 1]


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "t"
    with TranscriptWriter(path) as w:
        w.append(1)
        with pytest.raises(TranscriptError, match="already open"):
            TranscriptWriter(path)
    with TranscriptWriter(path) as w:
        w.append(2)
    assert read_transcript(path) == [1, 2]


def test_closed_writer(tmp_path: Path) -> None:
    w = TranscriptWriter(tmp_path / "t")
    w.close()
    w.close()
    with pytest.raises(ValueError, match="closed"):
        w.append(1)


def test_unencodable_value_leaves_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "t"
    with TranscriptWriter(path) as w:
        w.append(1)
        with pytest.raises(EncodingError):
            w.append([1, 2.5])
        w.append(3)
    assert read_transcript(path) == [1, 3]


def test_failed_write_is_rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t"
    real = transcript._write_all

    def half_then_fail(fd: int, data: bytes) -> None:
        real(fd, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    with TranscriptWriter(path) as w:
        w.append("first")
        monkeypatch.setattr(transcript, "_write_all", half_then_fail)
        with pytest.raises(OSError):
            w.append("second " * 10)
        monkeypatch.setattr(transcript, "_write_all", real)
        assert path.stat().st_size == w.size
        w.append("third")
    assert read_transcript(path) == ["first", "third"]


def test_max_record_boundary(tmp_path: Path) -> None:
    path = tmp_path / "t"
    exact = b"x" * 97  # bin8: 2 bytes of header + 97 = 99
    too_big = b"x" * 98
    with TranscriptWriter(path, max_record=99) as w:
        w.append(exact)
        with pytest.raises(TranscriptError, match="exceeds") as err:
            w.append(too_big)
        assert err.value.offset == len(HEADER) + 4 + 99
        assert err.value.index == 1
    assert read_transcript(path, max_record=99) == [exact]
    with pytest.raises(TranscriptError, match="exceeds"):
        read_transcript(path, max_record=98)


def crash_file(tmp_path: Path) -> tuple[Path, bytes, int]:
    """A transcript of VALUES[:5] plus one more record; returns its bytes and the last start."""
    path = tmp_path / "t"
    write(path, VALUES[:5] + [{"last": b"\xee" * 40, "n": 300}])
    data = path.read_bytes()
    start = len(data) - len(record({"last": b"\xee" * 40, "n": 300}))
    return path, data, start


def test_crash_in_last_record_at_every_byte(tmp_path: Path) -> None:
    path, data, start = crash_file(tmp_path)
    path.write_bytes(data[:start])
    assert read_transcript(path) == VALUES[:5]
    for cut in range(start + 1, len(data)):
        path.write_bytes(data[:cut])
        got = read_transcript(path, allow_torn_tail=True)
        assert got == VALUES[:5]
        assert got.torn == TornTail(start, 5, cut - start)
        assert list(iter_transcript(path, allow_torn_tail=True)) == VALUES[:5]
        with pytest.raises(TranscriptError, match="ends inside a record") as err:
            read_transcript(path)
        assert (err.value.offset, err.value.index) == (start, 5)
        with pytest.raises(TranscriptError):
            list(iter_transcript(path))


def test_resume_after_crash_at_every_byte(tmp_path: Path) -> None:
    path, data, start = crash_file(tmp_path)
    for cut in range(start + 1, len(data)):
        path.write_bytes(data[:cut])
        with TranscriptWriter(path) as w:
            assert w.dropped == TornTail(start, 5, cut - start)
            assert w.count == 5 and w.size == start
            assert w.append("resumed") == 5
        assert read_transcript(path) == VALUES[:5] + ["resumed"]


def test_crash_in_header(tmp_path: Path) -> None:
    path = tmp_path / "t"
    for cut in range(len(HEADER)):
        path.write_bytes(HEADER[:cut])
        got = read_transcript(path, allow_torn_tail=True)
        assert got == [] and got.torn == TornTail(0, None, cut)
        with pytest.raises(TranscriptError, match="header") as err:
            read_transcript(path)
        assert err.value.offset == 0
        with TranscriptWriter(path) as w:
            assert w.count == 0 and w.dropped == TornTail(0, None, cut)
            w.append(cut)
        assert read_transcript(path) == [cut]


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "t"
    path.write_bytes(b"")
    with pytest.raises(TranscriptError):
        read_transcript(path)
    assert read_transcript(path, allow_torn_tail=True).torn == TornTail(0, None, 0)
    with TranscriptWriter(path) as w:
        w.append("x")
    assert path.read_bytes() == HEADER + record("x")


def test_header_only(tmp_path: Path) -> None:
    path = tmp_path / "t"
    path.write_bytes(HEADER)
    got = read_transcript(path)
    assert got == [] and got.torn is None


@pytest.mark.parametrize("zeros", [1, 3, 4, 5, 100, 70000])
def test_zero_filled_tail(tmp_path: Path, zeros: int) -> None:
    path = tmp_path / "t"
    write(path, VALUES[:3])
    end = path.stat().st_size
    with open(path, "ab") as f:
        f.write(bytes(zeros))
    got = read_transcript(path, allow_torn_tail=True)
    assert got == VALUES[:3] and got.torn == TornTail(end, 3, zeros)
    with pytest.raises(TranscriptError) as err:
        read_transcript(path)
    assert (err.value.offset, err.value.index) == (end, 3)
    with TranscriptWriter(path) as w:
        w.append("next")
    assert read_transcript(path) == VALUES[:3] + ["next"]


def test_zero_filled_header(tmp_path: Path) -> None:
    path = tmp_path / "t"
    path.write_bytes(bytes(50))
    assert read_transcript(path, allow_torn_tail=True).torn == TornTail(0, None, 50)
    with TranscriptWriter(path) as w:
        w.append(1)
    assert read_transcript(path) == [1]


def test_zero_length_record_before_data(tmp_path: Path) -> None:
    path = tmp_path / "t"
    path.write_bytes(HEADER + record(1) + bytes(4) + record(2))
    for torn in (False, True):
        with pytest.raises(TranscriptError, match="length 0") as err:
            read_transcript(path, allow_torn_tail=torn)
        assert (err.value.offset, err.value.index) == (len(HEADER) + 5, 1)


@pytest.mark.parametrize(
    "body",
    [
        b"\xcc\x01",  # 1 as uint8: not the shortest form
        b"\xc1",  # never used in msgpack
        b"\xcb" + bytes(8),  # a float
        b"\x01\x02",  # two values in one record
        b"\x92\x01",  # an array missing an element
        b"\x82\xa1b\x01\xa1a\x02",  # map keys out of order
        b"\xa2\xff\xfe",  # invalid UTF-8
    ],
)
def test_garbage_record(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "t"
    path.write_bytes(HEADER + record("ok") + len(body).to_bytes(4, "big") + body + record(2))
    for torn in (False, True):
        with pytest.raises(TranscriptError, match="canonical") as err:
            read_transcript(path, allow_torn_tail=torn)
        assert (err.value.offset, err.value.index) == (len(HEADER) + 7, 1)
    before = path.read_bytes()
    with pytest.raises(TranscriptError):
        TranscriptWriter(path)
    assert path.read_bytes() == before


def test_garbage_last_record_is_not_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "t"
    path.write_bytes(HEADER + record("ok") + b"\0\0\0\x02\xcc\x01")
    with pytest.raises(TranscriptError, match="canonical"):
        read_transcript(path, allow_torn_tail=True)


@pytest.mark.parametrize("tail", [b"", b"\x00" * 10, b"\x01" * 10])
def test_oversized_length(tmp_path: Path, tail: bytes) -> None:
    path = tmp_path / "t"
    path.write_bytes(HEADER + record(1) + (1000).to_bytes(4, "big") + tail)
    for torn in (False, True):
        with pytest.raises(TranscriptError, match="exceeds the maximum 999") as err:
            read_transcript(path, allow_torn_tail=torn, max_record=999)
        assert (err.value.offset, err.value.index) == (len(HEADER) + 5, 1)
    path.write_bytes(HEADER + b"\xff\xff\xff\xff")
    with pytest.raises(TranscriptError, match="exceeds"):
        read_transcript(path, allow_torn_tail=True)


@pytest.mark.parametrize(
    "data, offset",
    [
        (b"DERNIER-TRANSCRIPX\n\x01", 0),
        (b"hello world, this is not a transcript", 0),
        (b"\x00" * 10 + b"x", 0),
        (b"DERNIER-TRANSCRIPT\n\x01" + record(1), 19),
        (b"DERNIER-TRANSCRIPT\n\x06" + record(1), 19),
        (b"DERNIER-TRANSCRIPT\n\x00", 19),
    ],
)
def test_wrong_magic_or_version(tmp_path: Path, data: bytes, offset: int) -> None:
    path = tmp_path / "t"
    path.write_bytes(data)
    for torn in (False, True):
        with pytest.raises(TranscriptError) as err:
            read_transcript(path, allow_torn_tail=torn)
        assert err.value.offset == offset and err.value.index is None
    with pytest.raises(TranscriptError):
        TranscriptWriter(path)
    assert path.read_bytes() == data


def test_an_old_transcript_is_refused_naming_its_version(tmp_path: Path) -> None:
    path = tmp_path / "t"
    path.write_bytes(b"DERNIER-TRANSCRIPT\n\x01" + record(1))
    old = r"protocol version 1; this client speaks 5 and verifies versions 2, 3, 4 and 5 \(.*0\.1"
    with pytest.raises(TranscriptError, match=old):
        read_transcript(path)


@pytest.mark.parametrize("old", [2, 3, 4])
def test_an_older_transcript_is_read_and_says_so(tmp_path: Path, old: int) -> None:
    """A reader takes the headers of versions 2, 3 and 4 too (PROTOCOL.md 21) and tells which
    it met; a live reader (``versions=(5,)``) and a writer do not."""
    path = tmp_path / "t"
    data = transcript.MAGIC + bytes([old]) + record({"a": 1}) + record(2)
    path.write_bytes(data)
    got = read_transcript(path)
    assert got == [{"a": 1}, 2] and got.version == old and got.torn is None
    assert list(iter_transcript(path)) == [{"a": 1}, 2]
    with pytest.raises(TranscriptError,
                       match=f"version {old}; this client speaks 5: every player"):
        read_transcript(path, versions=(5,))
    with pytest.raises(TranscriptError, match=f"version {old}; this client speaks 5"):
        TranscriptWriter(path)
    assert path.read_bytes() == data
    new = tmp_path / "new"
    write(new, [1])
    assert new.read_bytes()[: len(HEADER)] == transcript.MAGIC + b"\x05"
    assert read_transcript(new).version == 5
    torn = tmp_path / "torn"
    torn.write_bytes(HEADER[:7])
    assert read_transcript(torn, allow_torn_tail=True).version is None


def test_error_message_names_the_place(tmp_path: Path) -> None:
    path = tmp_path / "t"
    path.write_bytes(HEADER + record(1) + b"\0\0")
    with pytest.raises(TranscriptError, match=r"record 1, byte offset 25"):
        read_transcript(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_transcript(tmp_path / "absent")


def test_the_writer_never_writes_through_a_link_or_into_a_non_file(tmp_path) -> None:
    import os

    from dernier_p2p.wire.transcript import TranscriptError, TranscriptWriter

    target = tmp_path / "target"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(target)
    with pytest.raises(TranscriptError, match="symbolic link"):
        TranscriptWriter(dangling)
    assert not target.exists()
    target.write_bytes(b"keep")
    with pytest.raises(TranscriptError, match="symbolic link"):
        TranscriptWriter(dangling)
    assert target.read_bytes() == b"keep"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(TranscriptError, match="not a regular file"):
        TranscriptWriter(fifo)


def test_only_zero_bytes_make_a_torn_tail(tmp_path: Path) -> None:
    """A tail is torn (a crash's preallocated zeros) only if every byte after the last record
    is zero: an oversized length written as text, or a zero length followed by text, is a
    malformed record, not a torn tail."""
    path = tmp_path / "t"
    for tail, why in ((b"XXXX" + bytes(20), "exceeds"), (bytes(4) + b"XX" + bytes(8), "length 0"),
                      (bytes(8) + b"X" + bytes(4), "length 0")):
        path.write_bytes(HEADER + record(1) + tail)
        with pytest.raises(TranscriptError, match=why) as err:
            read_transcript(path, allow_torn_tail=True)
        assert (err.value.offset, err.value.index) == (len(HEADER) + 5, 1)


def test_a_writer_reopening_a_file_applies_its_record_bound(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write(path, ["x" * 100])
    with pytest.raises(TranscriptError, match="exceeds the maximum 50"):
        TranscriptWriter(path, max_record=50)
    with TranscriptWriter(path, max_record=200) as w:
        assert w.count == 1
