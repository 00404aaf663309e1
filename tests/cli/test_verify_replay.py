"""`dernier verify` and `dernier replay` on a real transcript and on tampered copies of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from dernier_p2p.cli.main import main
from dernier_p2p.wire.canonical import decode
from dernier_p2p.wire.transcript import HEADER, LENGTH_SIZE
from tests.cli.helpers import dernier, frames


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    path = home / "match.transcript"
    proc = dernier(
        home, "play", "--auto", "--players", "3", "--hands", "1", "--seed", "5", "--no-colour",
        "--transcript", str(path),
    )
    assert proc.returncode == 0, proc.stderr
    return path


def _rewrite(path: Path, out: Path, keep: list[bytes]) -> Path:
    out.write_bytes(HEADER + b"".join(len(b).to_bytes(LENGTH_SIZE, "big") + b for b in keep))
    return out


def test_verify_accepts_the_match(transcript: Path, tmp_path: Path) -> None:
    proc = dernier(tmp_path, "verify", str(transcript))
    assert proc.returncode == 0
    assert proc.stdout.startswith("OK")
    assert "Table: dernier, 3 players (0: Bot 0, 1: Bot 1, 2: Bot 2)" in proc.stdout
    assert "hands scored: 1" in proc.stdout and "Winner: Bot " in proc.stdout


@pytest.mark.parametrize("field", ["hsig", "sig"])
def test_a_flipped_signature_byte_names_the_host(
    transcript: Path, tmp_path: Path, field: str
) -> None:
    data = bytearray(transcript.read_bytes())
    index = 12
    offset, body = frames(bytes(data))[index]
    record = decode(body)
    sig = record["hsig"] if field == "hsig" else record["env"]["sig"]
    at = offset + LENGTH_SIZE + body.index(sig) + 10
    data[at] ^= 0x40
    bad = tmp_path / "flipped"
    bad.write_bytes(bytes(data))
    proc = dernier(tmp_path, "verify", str(bad))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    damaged = "the file was altered or damaged, or seat 0 (Bot 0)"
    assert f"FAULT at record {index}: BAD_SIGNATURE: {damaged}" in proc.stdout
    assert "the file is the likelier culprit" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_a_dropped_record_names_the_host(transcript: Path, tmp_path: Path) -> None:
    bodies = [b for _, b in frames(transcript.read_bytes())]
    bad = _rewrite(transcript, tmp_path / "dropped", bodies[:20] + bodies[21:])
    proc = dernier(tmp_path, "verify", str(bad))
    assert proc.returncode == 1
    damaged = "the file was altered or damaged, or seat 0 (Bot 0)"
    assert f"FAULT at record 20: BAD_CHAIN: {damaged}" in proc.stdout


def test_a_transcript_cut_after_a_record_is_incomplete(transcript: Path, tmp_path: Path) -> None:
    bodies = [b for _, b in frames(transcript.read_bytes())]
    bad = _rewrite(transcript, tmp_path / "short", bodies[:30])
    proc = dernier(tmp_path, "verify", str(bad))
    assert proc.returncode == 1
    assert "INCOMPLETE" in proc.stdout and "Records: 30" in proc.stdout
    assert "FAULT" not in proc.stdout and not re.search(r"\) is at fault", proc.stdout)
    seat = r"seat \d \(Bot \d\)"
    assert re.fullmatch(
        r"INCOMPLETE: the transcript ends before the match is over \(the table waits on "
        rf"{seat}(, {seat})*\); nobody is at fault for an unfinished transcript",
        proc.stdout.splitlines()[0]), proc.stdout


def test_a_transcript_cut_off_by_a_crash_is_checked_up_to_the_cut(
    transcript: Path, tmp_path: Path
) -> None:
    """A crash while record 40 was written: the 40 records before it are checked, and the
    verdict is INCOMPLETE (nobody at fault), saying where the file ends; replay plays them."""
    data = transcript.read_bytes()
    offset, body = frames(data)[40]
    torn = tmp_path / "torn"
    torn.write_bytes(data[: offset + LENGTH_SIZE + len(body) // 2])
    proc = dernier(tmp_path, "verify", str(torn))  # as a real process
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc
    lines = proc.stdout.splitlines()
    assert lines[0] == (
        f"The file ends inside record 40 (byte {offset}, {LENGTH_SIZE + len(body) // 2} bytes "
        "of it): it was cut off by a crash while that record was written; the 40 records "
        "before it are the ones checked.")
    assert lines[1].startswith("INCOMPLETE: the transcript ends before the match is over")
    assert "Records: 40" in proc.stdout and "FAULT" not in proc.stdout
    result = CliRunner().invoke(main, ["replay", str(torn)])
    assert result.exit_code == 1 and result.output.startswith("The file ends inside record 40")
    assert "Replay stops: INCOMPLETE" in result.output


def test_an_unreadable_side_file_is_named_as_such(transcript: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["verify", str(transcript), "--envelopes", str(tmp_path / "none")])
    assert result.exit_code == 2
    assert result.output.startswith(f"Cannot read the envelope side file {tmp_path / 'none'}: ")


def test_unreadable_files_exit_2(transcript: Path, tmp_path: Path) -> None:
    data = transcript.read_bytes()
    offset, _ = frames(data)[40]
    damaged = tmp_path / "damaged"  # a record of length 0 in the middle: not a crash's cut
    damaged.write_bytes(data[:offset] + bytes(LENGTH_SIZE) + data[offset:])
    junk = tmp_path / "junk"
    junk.write_bytes(b"PK\x03\x04 not a transcript")
    cases = [
        (damaged, "record of length 0"),
        (junk, "not a transcript file"),
        (tmp_path / "missing", "No such file"),
        (tmp_path, "is a directory"),
    ]
    proc = dernier(tmp_path, "verify", str(damaged))  # one as a real process
    assert proc.returncode == 2 and "Cannot read the transcript " in proc.stderr
    assert "record of length 0" in proc.stderr and "Traceback" not in proc.stderr
    for path, message in cases:
        for command in ("verify", "replay"):
            result = CliRunner().invoke(main, [command, str(path)])
            assert result.exit_code == 2, (command, path, result.output)
            assert message in result.output
            assert result.exception is None or isinstance(result.exception, SystemExit)


V2_MATCH = Path(__file__).parents[1] / "data" / "v2" / "match-dernier-3p.dtr"


def test_verify_reports_the_protocol_version(transcript: Path, tmp_path: Path) -> None:
    """A version-5 transcript, and a version-2 one written by the version-2 code (PROTOCOL.md
    20: it still verifies), each with the version it met."""
    assert "\nProtocol version 5\n" in dernier(tmp_path, "verify", str(transcript)).stdout
    proc = dernier(tmp_path, "verify", str(V2_MATCH))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("OK: the transcript checks")
    assert "\nProtocol version 2\n" in proc.stdout and "Records: 109;" in proc.stdout
    result = CliRunner().invoke(main, ["replay", "--no-colour", str(V2_MATCH)])
    assert result.exit_code == 0, result.output
    last = result.output.splitlines()[-1]
    assert last == "The transcript checks from the first record to the last."


@pytest.mark.parametrize("byte", [1, 6])
def test_verify_refuses_another_version_naming_both(
    transcript: Path, tmp_path: Path, byte: int
) -> None:
    data = transcript.read_bytes()
    other = tmp_path / f"v{byte}"
    other.write_bytes(data[: len(HEADER) - 1] + bytes([byte]) + data[len(HEADER):])
    proc = dernier(tmp_path, "verify", str(other))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"this transcript speaks protocol version {byte}; this client speaks 5" in lines[0]


def test_verify_usage_error(tmp_path: Path) -> None:
    proc = dernier(tmp_path, "verify")
    assert proc.returncode == 2 and "Missing argument" in proc.stderr


def test_replay_prints_every_play_and_the_revealed_hands(
    transcript: Path, tmp_path: Path
) -> None:
    proc = dernier(tmp_path, "replay", "--no-colour", str(transcript))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    plays = [line for line in out if " plays " in line]
    assert plays
    names = ["Bot 0", "Bot 1", "Bot 2"]
    for name in names:
        assert any(line.startswith(f"  {name} was dealt: ") for line in out)
        assert any(line.startswith(f"  {name} ended with: ") for line in out)
    assert "── Hand 1 revealed ──" in out
    assert out[-1] == "The transcript checks from the first record to the last."
    # Every card dealt or drawn and not held at the end was played (the first card turned up
    # aside): the revealed hands agree with the plays.
    dealt = [line.split(": ", 1)[1].split() for line in out if " was dealt: " in line]
    final = [line.split(": ", 1)[1].split() for line in out if " ended with: " in line]
    played = [line.split(" plays ", 1)[1].rstrip(".") for line in plays]
    drew = [
        part.split(" (")[0]
        for line in out if " drew: " in line
        for part in line.split(": ", 1)[1].split(", ")
    ]
    held = sorted(c for hand in dealt for c in hand) + drew
    gone = [c for hand in final for c in hand if c != "(none)"] + played
    assert sorted(held) == sorted(gone)


def test_replay_of_a_tampered_file_stops_at_the_fault(transcript: Path, tmp_path: Path) -> None:
    bodies = [b for _, b in frames(transcript.read_bytes())]
    bad = _rewrite(transcript, tmp_path / "dropped", bodies[:20] + bodies[21:])
    proc = dernier(tmp_path, "replay", "--no-colour", str(bad))
    assert proc.returncode == 1
    assert "Replay stops at record 20: BAD_CHAIN (seat 0)" in proc.stdout


def test_hostile_records_exit_2_without_a_traceback(transcript: Path, tmp_path: Path) -> None:
    """A transcript holding the reviewed 600-deep record, a huge container or an extension
    type: `verify` and `replay` say the file cannot be read (exit 2), never a traceback."""
    bodies = [body for _, body in frames(transcript.read_bytes())]
    cases = {
        "deep": b"\x91" * 600 + b"\xc0",
        "huge": b"\xdd\xff\xff\xff\xff",
        "ext": b"\xd4\x01\x00",
    }
    for name, evil in cases.items():
        path = _rewrite(transcript, tmp_path / name, [*bodies[:5], evil, *bodies[5:]])
        for command in ("verify", "replay"):
            result = CliRunner().invoke(main, [command, str(path)])
            assert result.exit_code == 2, (name, command, result.output)
            assert "Cannot read the transcript" in result.output and "record 5" in result.output
            assert result.exception is None or isinstance(result.exception, SystemExit)
    proc = dernier(tmp_path, "verify", str(tmp_path / "deep"))  # one as a real process
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "OVERSIZED" in proc.stderr or "nested deeper" in proc.stderr


def _two_seat_records(end: str) -> list:
    """A dealt 2-seat match ended by the host: ``no_contest`` (valid) or a ``timeout`` carrying
    only its own vote (no quorum)."""
    from dernier_p2p.protocol.local import LocalTable

    table = LocalTable("dernier", [bytes([60]) * 32, bytes([61]) * 32], {"match": ["hands", 1]})
    table.deliver()
    host = table.sessions[0]
    if end == "no_contest":
        body = {"type": "no_contest", "seat": 1, "votes": []}
    else:
        body = {"type": "timeout", "seat": 1, "votes": [host.vote("timeout", 1)]}
    from dernier_p2p.protocol.envelope import make_record, record_hash, sign_envelope

    env = sign_envelope(table.identities[0], table.game, 0, host.chain.next_counter(0), host.head,
                        body)
    recs = table.records
    return [*recs, make_record(table.identities[0], env, 0, len(recs), record_hash(recs[-1]),
                               recs[-1]["t"] + 1)]


@pytest.mark.parametrize("end", ["no_contest", "timeout"])
def test_verify_shows_no_contest_and_refuses_a_lone_vote(tmp_path: Path, end: str) -> None:
    from dernier_p2p.wire.transcript import TranscriptWriter

    path = tmp_path / f"{end}.transcript"
    with TranscriptWriter(path) as w:
        for rec in _two_seat_records(end):
            w.append(rec)
    proc = CliRunner().invoke(main, ["verify", str(path)])
    if end == "no_contest":
        assert proc.exit_code == 0, proc.output
        assert proc.output.startswith("OK")
        assert "Result: no contest (nobody ranked" in proc.output
        assert "Winner" not in proc.output
    else:
        assert proc.exit_code == 1, proc.output
        assert "FAULT at record" in proc.output and "NO_QUORUM: seat 0" in proc.output
