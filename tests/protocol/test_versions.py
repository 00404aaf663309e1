"""Protocol versions (PROTOCOL.md 20): a live table runs version 3 alone, while a verifier still
checks a version-2 transcript, with exactly the same checks, and says which version it met.

The version-2 transcripts are fixtures written by the version-2 code (tests/data/v2/README.md)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.protocol.envelope import genesis_hash, sign_envelope
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.local import identity_for, run_local_match
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.protocol.session import Session
from dernier_p2p.protocol.verify import INCOMPLETE, UNREADABLE, check_records, verify_file
from dernier_p2p.wire.transcript import (
    HEADER,
    MAGIC,
    TranscriptError,
    TranscriptWriter,
    read_transcript,
)
from dernier_p2p.wire.version import PROTOCOL_VERSION, READABLE_VERSIONS, version_mismatch

V2 = Path(__file__).parents[1] / "data" / "v2"
MATCH_3P = V2 / "match-dernier-3p.dtr"
INTEROP_2P = V2 / "interop-dernier-2p.dtr"


def test_the_versions() -> None:
    assert PROTOCOL_VERSION == 3 and READABLE_VERSIONS == (2, 3)
    assert HEADER == MAGIC + b"\x03"


@pytest.mark.parametrize(
    "path, players, records, scores, winner",
    [(MATCH_3P, 3, 109, (171, 46, 75), 0), (INTEROP_2P, 2, 188, (71, 29), 0)],
)
def test_a_version_2_transcript_verifies_and_reports_version_2(
    path: Path, players: int, records: int, scores: tuple, winner: int
) -> None:
    assert path.read_bytes()[: len(HEADER)] == MAGIC + b"\x02"
    read = read_transcript(path)
    assert read.version == 2 and read[0]["env"]["body"]["version"] == 2
    verdict = verify_file(path)
    assert verdict.ok, verdict
    s = verdict.summary
    assert (s.version, s.variant, s.players, s.records, s.hands, s.finished) == (
        2, "dernier", players, records, 1, True)
    assert (s.scores, s.winner) == (scores, winner)
    assert check_records(list(read)).summary == s


def test_a_version_2_transcript_gets_the_same_checks() -> None:
    """A tampered or cut version-2 transcript is judged exactly as a version-3 one would be."""
    records = list(read_transcript(MATCH_3P))
    flipped = copy.deepcopy(records)
    sig = flipped[10]["hsig"]
    flipped[10]["hsig"] = sig[:5] + bytes([sig[5] ^ 1]) + sig[6:]
    verdict = check_records(flipped)
    assert (verdict.ok, verdict.code, verdict.seat, verdict.index) == (
        False, "BAD_SIGNATURE", 0, 10)
    verdict = check_records(records[:7] + records[8:])
    assert (verdict.code, verdict.seat, verdict.index) == ("BAD_CHAIN", 0, 7)
    verdict = check_records(records[:50])
    assert (verdict.ok, verdict.code, verdict.seat) == (False, INCOMPLETE, None)
    assert verdict.waiting and verdict.summary.version == 2


def test_a_live_session_refuses_a_version_2_table_naming_both_versions() -> None:
    """A seat (or an observer of a live table) takes a table of version 3 only (PROTOCOL.md 20)."""
    rec0 = read_transcript(MATCH_3P)[0]
    seed = bytes([0x20]) * 32
    want = ("the table speaks protocol version 2; this client speaks 3: every player at a table "
            "needs a release that speaks the same version: compare `dernier --version` on both "
            "machines and install the same release")
    for seat, identity in ((None, None), (0, identity_for(seed))):
        with pytest.raises(ProtocolError) as info:
            Session(identity, seat, rec0, bytes(32))
        assert (info.value.code, info.value.seat, info.value.detail) == ("VERSION", 0, want)
    assert Session(None, None, rec0, versions=READABLE_VERSIONS).table_body["version"] == 2


def test_a_host_does_not_sequence_a_version_2_table() -> None:
    seeds = [bytes([0x20 + k]) * 32 for k in range(2)]
    ids = [identity_for(s) for s in seeds]
    game = bytes(16)
    body = read_transcript(INTEROP_2P)[0]["env"]["body"]
    body = {**body, "players": [{**p, "key": k.public_bytes()}
                                for p, k in zip(body["players"], ids, strict=True)]}
    host = Sequencer(ids[0], game, 0)
    with pytest.raises(ProtocolError) as info:
        host.submit(sign_envelope(ids[0], game, 0, 0, genesis_hash(game), body), 0, 0)
    assert info.value.code == "VERSION" and "version 2" in info.value.detail
    rec = host.submit(sign_envelope(ids[0], game, 0, 0, genesis_hash(game),
                                    {**body, "version": 3}), 0, 0)
    assert rec["i"] == 0


@pytest.fixture(scope="module")
def v3_match(tmp_path_factory: pytest.TempPathFactory) -> Path:
    seeds = [bytes([0x30 + k]) * 32 for k in range(2)]
    result = run_local_match("dernier", 2, seeds, [HeuristicBot(0), HeuristicBot(1)],
                             options={"match": ["hands", 1]})
    path = tmp_path_factory.mktemp("v3") / "match.dtr"
    with TranscriptWriter(path) as writer:
        for rec in result.records:
            writer.append(rec)
    return path


def test_a_version_3_transcript_verifies_and_reports_version_3(v3_match: Path) -> None:
    assert v3_match.read_bytes()[: len(HEADER)] == MAGIC + b"\x03"
    read = read_transcript(v3_match)
    assert read.version == 3 and read[0]["env"]["body"]["version"] == 3
    verdict = verify_file(v3_match)
    assert verdict.ok and verdict.summary.version == 3 and verdict.summary.finished


@pytest.mark.parametrize("byte", [0, 1, 4, 255])
def test_another_header_version_is_unreadable_naming_it(v3_match: Path, tmp_path: Path,
                                                         byte: int) -> None:
    path = tmp_path / "other.dtr"
    path.write_bytes(MAGIC + bytes([byte]) + v3_match.read_bytes()[len(HEADER):])
    verdict = verify_file(path)
    assert (verdict.ok, verdict.code, verdict.seat) == (False, UNREADABLE, None)
    assert f"this transcript speaks protocol version {byte}; this client speaks 3 and " \
        "verifies versions 2 and 3" in verdict.detail
    if byte == 1:
        assert "dernier_p2p 0.1" in verdict.detail
    else:
        assert f"verify it with a release that speaks version {byte}" in verdict.detail
    with pytest.raises(TranscriptError):  # a live reader would refuse it too
        read_transcript(path, versions=(PROTOCOL_VERSION,))


@pytest.mark.parametrize("version", [1, 4, "3", True])
def test_a_table_of_a_version_no_verifier_reads_is_refused(v3_match: Path,
                                                          version: object) -> None:
    """Record 0 signed again with another version (as a cheating host would; an honest one
    refuses such a table): a verifier refuses any but 2 and 3."""
    records = list(read_transcript(v3_match))
    rec0 = _forged_record0(records[0], {**records[0]["env"]["body"], "version": version})
    verdict = check_records([rec0])
    expected = "MALFORMED" if isinstance(version, bool | str) else "VERSION"
    assert (verdict.code, verdict.seat, verdict.index) == (expected, 0, 0)
    if expected == "VERSION":
        assert verdict.detail == version_mismatch("the table", version, READABLE_VERSIONS)
        assert f"version {version}" in verdict.detail and "verifies versions 2 and 3" in \
            verdict.detail


def _forged_record0(rec0: dict, body: dict) -> dict:
    from dernier_p2p.protocol.envelope import make_record

    ident = identity_for(bytes([0x30]) * 32)
    env = rec0["env"]
    new = sign_envelope(ident, env["game"], 0, 0, env["head"], body)
    return make_record(ident, new, 0, 0, genesis_hash(env["game"]), rec0["t"])


def test_a_writer_does_not_append_to_a_version_2_transcript(tmp_path: Path) -> None:
    path = tmp_path / "old.dtr"
    path.write_bytes(MATCH_3P.read_bytes())
    with pytest.raises(TranscriptError, match="protocol version 2; this client speaks 3"):
        TranscriptWriter(path)
    assert path.read_bytes() == MATCH_3P.read_bytes()
