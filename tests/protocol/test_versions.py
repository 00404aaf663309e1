"""Protocol versions (PROTOCOL.md 20): a live table runs version 5 alone, while a verifier still
checks transcripts of versions 2, 3 and 4 (4 read exactly as 5), with the same checks and the
rules as their version read them (a ``dernier`` seat that leaves at three or more seats goes
out and the others play on), and says which version it met. An older table naming version 4's
option ``leave`` is refused.

The version-2 transcripts are fixtures written by the version-2 code (tests/data/v2/README.md)."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.protocol.envelope import genesis_hash, sign_envelope
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.local import LocalTable, identity_for, play_round, run_local_match
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.protocol.session import Session
from dernier_p2p.protocol.verify import INCOMPLETE, UNREADABLE, check_records, verify_file
from dernier_p2p.rules import Forfeited, SeatOut, to_act
from dernier_p2p.wire.canonical import encode
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
    assert PROTOCOL_VERSION == 5 and READABLE_VERSIONS == (2, 3, 4, 5)
    assert HEADER == MAGIC + b"\x05"


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
    """A tampered or cut version-2 transcript is judged exactly as a version-5 one would be."""
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


@pytest.mark.parametrize("old", [2, 3, 4])
def test_a_live_session_refuses_an_older_table_naming_both_versions(v3_match: Path,
                                                                   v4_match: Path,
                                                                   old: int) -> None:
    """A seat (or an observer of a live table) takes a table of version 5 only (PROTOCOL.md 20);
    a verifier reads it, with the readings of its version (3 for 2 and 3, 4 for 4)."""
    rec0 = read_transcript({2: MATCH_3P, 3: v3_match, 4: v4_match}[old])[0]
    seed = bytes([0x20 if old == 2 else 0x30]) * 32
    want = (f"the table speaks protocol version {old}; this client speaks 5: every player at a "
            "table needs a release that speaks the same version: compare `dernier --version` on "
            "both machines and install the same release")
    for seat, identity in ((None, None), (0, identity_for(seed))):
        with pytest.raises(ProtocolError) as info:
            Session(identity, seat, rec0, bytes(32))
        assert (info.value.code, info.value.seat, info.value.detail) == ("VERSION", 0, want)
    observer = Session(None, None, rec0, versions=READABLE_VERSIONS)
    assert observer.table_body["version"] == old
    assert observer.rules.readings == (4 if old == 4 else 3)


def test_a_host_does_not_sequence_a_version_2_table() -> None:
    seeds = [bytes([0x20 + k]) * 32 for k in range(2)]
    ids = [identity_for(s) for s in seeds]
    game = bytes(16)
    body = read_transcript(INTEROP_2P)[0]["env"]["body"]
    body = {**body, "players": [{**p, "key": k.public_bytes()}
                                for p, k in zip(body["players"], ids, strict=True)]}
    host = Sequencer(ids[0], game, 0)
    for old in (2, 3, 4):
        with pytest.raises(ProtocolError) as info:
            host.submit(sign_envelope(ids[0], game, 0, 0, genesis_hash(game),
                                      {**body, "version": old}), 0, 0)
        assert info.value.code == "VERSION" and f"version {old}" in info.value.detail
    rec = host.submit(sign_envelope(ids[0], game, 0, 0, genesis_hash(game),
                                    {**body, "version": 5}), 0, 0)
    assert rec["i"] == 0


def _write(path: Path, records: list[dict], version: int) -> Path:
    """A transcript file as a client of ``version`` wrote it (its header byte)."""
    data = MAGIC + bytes([version])
    for rec in records:
        raw = encode(rec)
        data += len(raw).to_bytes(4, "big") + raw
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def v3_match(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whole one-hand match of a version-3 table, in a version-3 file."""
    seeds = [bytes([0x30 + k]) * 32 for k in range(2)]
    result = run_local_match("dernier", 2, seeds, [HeuristicBot(0), HeuristicBot(1)],
                             options={"match": ["hands", 1]}, version=3)
    return _write(tmp_path_factory.mktemp("v3") / "match.dtr", result.records, 3)


@pytest.fixture(scope="module")
def v4_match(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whole one-hand match of a version-4 table, in a version-4 file (version 5 changed relay
    frames only: its records read as version 4's)."""
    seeds = [bytes([0x30 + k]) * 32 for k in range(2)]
    result = run_local_match("dernier", 2, seeds, [HeuristicBot(0), HeuristicBot(1)],
                             options={"match": ["hands", 1]}, version=4)
    return _write(tmp_path_factory.mktemp("v4") / "match.dtr", result.records, 4)


@pytest.fixture(scope="module")
def v5_match(tmp_path_factory: pytest.TempPathFactory) -> Path:
    seeds = [bytes([0x30 + k]) * 32 for k in range(2)]
    result = run_local_match("dernier", 2, seeds, [HeuristicBot(0), HeuristicBot(1)],
                             options={"match": ["hands", 1]})
    path = tmp_path_factory.mktemp("v5") / "match.dtr"
    with TranscriptWriter(path) as writer:
        for rec in result.records:
            writer.append(rec)
    return path


@pytest.mark.parametrize("version", [3, 4, 5])
def test_a_transcript_verifies_and_reports_its_version(v3_match: Path, v4_match: Path,
                                                       v5_match: Path, version: int) -> None:
    path = {3: v3_match, 4: v4_match, 5: v5_match}[version]
    assert path.read_bytes()[: len(HEADER)] == MAGIC + bytes([version])
    read = read_transcript(path)
    assert read.version == version and read[0]["env"]["body"]["version"] == version
    verdict = verify_file(path)
    assert verdict.ok and verdict.summary.version == version and verdict.summary.finished


@pytest.mark.parametrize("byte", [0, 1, 6, 255])
def test_another_header_version_is_unreadable_naming_it(v5_match: Path, tmp_path: Path,
                                                         byte: int) -> None:
    path = tmp_path / "other.dtr"
    path.write_bytes(MAGIC + bytes([byte]) + v5_match.read_bytes()[len(HEADER):])
    verdict = verify_file(path)
    assert (verdict.ok, verdict.code, verdict.seat) == (False, UNREADABLE, None)
    assert f"this transcript speaks protocol version {byte}; this client speaks 5 and " \
        "verifies versions 2, 3, 4 and 5" in verdict.detail
    if byte == 1:
        assert "dernier_p2p 0.1" in verdict.detail
    else:
        assert f"verify it with a release that speaks version {byte}" in verdict.detail
    with pytest.raises(TranscriptError):  # a live reader would refuse it too
        read_transcript(path, versions=(PROTOCOL_VERSION,))


@pytest.mark.parametrize("version", [1, 6, "5", True])
def test_a_table_of_a_version_no_verifier_reads_is_refused(v5_match: Path,
                                                          version: object) -> None:
    """Record 0 signed again with another version (as a cheating host would; an honest one
    refuses such a table): a verifier refuses any but 2, 3, 4 and 5."""
    records = list(read_transcript(v5_match))
    rec0 = _forged_record0(records[0], {**records[0]["env"]["body"], "version": version})
    verdict = check_records([rec0])
    expected = "MALFORMED" if isinstance(version, bool | str) else "VERSION"
    assert (verdict.code, verdict.seat, verdict.index) == (expected, 0, 0)
    if expected == "VERSION":
        assert verdict.detail == version_mismatch("the table", version, READABLE_VERSIONS)
        assert f"version {version}" in verdict.detail and "verifies versions 2, 3, 4 and 5" in \
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
    with pytest.raises(TranscriptError, match="protocol version 2; this client speaks 5"):
        TranscriptWriter(path)
    assert path.read_bytes() == MATCH_3P.read_bytes()


def _leave_at_three(version: int, options: dict) -> LocalTable:
    """A three-seat ``dernier`` table of ``version``: once the first hand is dealt, a quorum
    votes seat ``gone`` (neither the host nor the seat to act) off with a ``left``; then every
    seat still in play plays with a bot until the match is over."""
    table = LocalTable("dernier", [bytes([0x40 + k]) * 32 for k in range(3)], options,
                       version=version)
    table.deliver()
    actor = to_act(table.sessions[0].state)
    gone = next(k for k in range(3) if k not in (actor, table.host_seat))
    table.absent("left", gone)
    table.deliver()
    rng, bots, rounds = random.Random(4), [HeuristicBot(k) for k in range(3)], 0
    while not table.sessions[0].finished and rounds < 400:
        play_round(table, bots, rng)
        rounds += 1
    return table


def test_a_version_3_dernier_transcript_where_a_seat_leaves_at_three_seats_verifies() -> None:
    """Version 3's reading (PROTOCOL.md 20): a ``dernier`` seat that leaves at three seats goes
    out, the hand is void and the other two play a new hand to the end; the transcript of that
    match still verifies as version 3. A version-4 table (option ``leave`` ``end``, its
    default) ends the match at the leave instead."""
    old = _leave_at_three(3, {"match": ["hands", 1]})
    verdict = check_records(old.records)
    assert verdict.ok and verdict.summary.version == 3, verdict
    host = old.sessions[old.host_seat]
    out = [e.seat for e in host.events if isinstance(e, SeatOut)]
    assert len(out) == 1 and host.state.out == tuple(out) and host.state.hand_number == 2
    assert host.rules.readings == 3 and host.rules.leave == "end"  # (the option is not read)
    assert not any(isinstance(e, Forfeited) for e in host.events)
    new = _leave_at_three(4, {"match": ["hands", 1]})
    verdict = check_records(new.records)
    assert verdict.ok and verdict.summary.version == 4
    ended = new.sessions[new.host_seat]
    assert ended.state.out == () and ended.result["standings"][-1] == out[0]
    assert any(isinstance(e, Forfeited) and e.seat == out[0] for e in ended.events)
    played_on = _leave_at_three(4, {"match": ["hands", 1], "leave": "play_on"})
    assert played_on.sessions[0].state.out == tuple(out)  # version 4 plays on by option
    assert check_records(played_on.records).ok


@pytest.mark.parametrize("old", [2, 3])
def test_an_older_table_naming_option_leave_is_refused(v4_match: Path, old: int) -> None:
    """``leave`` is an option of version 4: a table of version 2 or 3 that names it is
    TABLE_MISMATCH (its version knows no such option), where a version-4 table takes it."""
    rec0 = read_transcript(v4_match)[0]
    body = rec0["env"]["body"]
    options = {**body["options"], "leave": "play_on"}
    for version in (old, 4):
        forged = _forged_record0(rec0, {**body, "version": version, "options": options})
        verdict = check_records([forged])
        if version == 4:
            assert verdict.code == INCOMPLETE
            continue
        assert (verdict.code, verdict.seat, verdict.index) == ("TABLE_MISMATCH", 0, 0)
        assert verdict.detail == (f"table: option leave is an option of protocol version 4; a "
                                  f"table of version {old} has none")
