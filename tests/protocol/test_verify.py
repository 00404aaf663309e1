"""The offline audit: a whole honest match checks; each kind of tampering or cheating is found
at its record and names the seat at fault."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.protocol.envelope import sign_envelope
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.local import LocalTable, play_round, run_local_match
from dernier_p2p.protocol.session import Session
from dernier_p2p.protocol.verify import (
    EMPTY,
    INCOMPLETE,
    UNCHECKABLE,
    UNREADABLE,
    check_records,
    verify_file,
)
from dernier_p2p.rules import to_act
from dernier_p2p.wire.transcript import HEADER, TranscriptWriter
from dernier_p2p.wire.version import PROTOCOL_VERSION

SEEDS = [bytes([k + 1]) * 32 for k in range(3)]
ONE_HAND = {"match": ["hands", 1]}


@pytest.fixture(scope="module")
def match() -> list[dict]:
    result = run_local_match(
        "dernier", 2, SEEDS[:2], [HeuristicBot(0), HeuristicBot(1)], options=ONE_HAND
    )
    return result.records


def test_an_honest_match_checks_with_its_summary(match: list[dict]) -> None:
    """... and ``on_record`` sees each record, in order, with the observer and the events that
    record added."""
    calls: list[tuple] = []

    def on_record(i: int, rec: dict, session: Session, new: list) -> None:
        calls.append((i, rec, session, list(new), len(session.events)))

    verdict = check_records(match, on_record)
    assert verdict.ok, verdict
    assert [c[0] for c in calls] == list(range(len(match)))
    assert all(rec is match[i] for i, rec, *_ in calls)
    observer = calls[-1][2]
    assert isinstance(observer, Session) and all(c[2] is observer for c in calls)
    assert observer.finished and observer.seat is None
    before = 0
    for _, _, _, new, count in calls:
        assert new == observer.events[before:count]
        before = count
    assert before == len(observer.events) > 0
    s = verdict.summary
    assert (s.variant, s.players, s.records, s.hands, s.finished) == (
        "dernier", 2, len(match), 1, True
    )
    assert s.winner in (0, 1) and s.standings[0] == s.winner and sorted(s.standings) == [0, 1]
    assert max(s.scores) > 0 and len(s.match_points) == 2 and s.no_contest is False


def _flip(value: bytes, at: int = 5) -> bytes:
    return value[:at] + bytes([value[at] ^ 1]) + value[at + 1 :]


def test_a_flipped_host_signature_names_the_host(match: list[dict]) -> None:
    records = copy.deepcopy(match)
    records[10]["hsig"] = _flip(records[10]["hsig"])
    verdict = check_records(records)
    assert (verdict.ok, verdict.code, verdict.seat, verdict.index) == (
        False, "BAD_SIGNATURE", 0, 10
    )


def test_a_flipped_author_signature_is_the_host_s_fault(match: list[dict]) -> None:
    # The host must check every envelope before sequencing it.
    records = copy.deepcopy(match)
    i = next(k for k, r in enumerate(records) if k > 3 and r["env"]["seat"] == 1)
    records[i]["env"]["sig"] = _flip(records[i]["env"]["sig"])
    verdict = check_records(records)
    assert (verdict.code, verdict.seat, verdict.index) == ("BAD_SIGNATURE", 0, i)


def test_a_dropped_record_breaks_the_chain(match: list[dict]) -> None:
    records = match[:7] + match[8:]
    verdict = check_records(records)
    assert (verdict.ok, verdict.code, verdict.seat, verdict.index) == (False, "BAD_CHAIN", 0, 7)
    assert "index" in verdict.detail  # the session's own words
    s = verdict.summary  # what was checked up to the fault
    assert (s.records, s.names, s.variant) == (len(records), ["seat 0", "seat 1"], "dernier")
    assert (s.match_points, s.finished) == ((0, 0), False)


def test_a_transcript_ending_with_a_second_record_for_an_index_names_its_signer(
    match: list[dict],
) -> None:
    """The evidence a seat keeps when the host signed two records for one index (PROTOCOL.md
    4.6, 21): its own records, then the other one."""
    from dernier_p2p.protocol.envelope import make_record

    r = match[5]
    other = make_record(identity_for_seat(0), r["env"], r["h"], r["i"], r["prev"], r["t"] + 1)
    verdict = check_records(match[:9] + [other])
    assert (verdict.ok, verdict.code, verdict.seat, verdict.index) == (False, "FORK", 0, 9)
    assert "index 5" in verdict.detail
    # the very record again proves nothing: a transcript with a repeat is broken, not proof
    verdict = check_records(match[:9] + [r])
    assert (verdict.code, verdict.seat, verdict.index) == ("BAD_CHAIN", 0, 9)


def test_a_transcript_cut_short_is_incomplete(match: list[dict]) -> None:
    """... blaming nobody (PROTOCOL.md 22: nobody is at fault for an unfinished transcript) and
    listing the seats the table waits on."""
    verdict = check_records(match[:-3])  # the next record is seat 0's
    assert (verdict.ok, verdict.code, verdict.seat, verdict.index) == (
        False, INCOMPLETE, None, None)
    assert verdict.waiting == (0,)
    assert verdict.detail == (
        "the transcript ends before the match is over (the table waits on seat 0)")
    s = verdict.summary
    assert not s.finished and s.winner is None and s.standings == () and s.no_contest is False
    assert s.match_points == (0, 0)
    verdict = check_records(match[:3])  # both seats owe a coin commitment
    assert (verdict.ok, verdict.code, verdict.seat, verdict.index) == (
        False, INCOMPLETE, None, None)
    assert verdict.waiting == (0, 1)
    assert verdict.detail.endswith("(the table waits on seat 0, seat 1)")
    assert check_records(match).waiting == ()  # only an incomplete transcript waits


def test_no_records_and_a_broken_first_record(match: list[dict]) -> None:
    verdict = check_records([])
    assert (verdict.ok, verdict.code, verdict.seat, verdict.index) == (False, EMPTY, None, None)
    assert verdict.detail == "the transcript holds no record" and verdict.summary.records == 0
    verdict = check_records([{"not": "a record"}])
    assert (verdict.ok, verdict.code, verdict.seat, verdict.index) == (False, "MALFORMED", None, 0)
    assert "keys" in verdict.detail and verdict.summary.records == 1
    verdict = check_records([dict(match[0], i=1)])  # the host's signature no longer covers it
    assert (verdict.ok, verdict.code, verdict.seat, verdict.index) == (
        False, "BAD_SIGNATURE", 0, 0)
    assert verdict.summary.names == ["seat 0", "seat 1"] and verdict.summary.variant == "dernier"


def _table() -> LocalTable:
    table = LocalTable("dernier", SEEDS[:3], ONE_HAND)
    return table


def test_a_forged_shuffle_is_a_deck_fault_of_its_author() -> None:
    table = _table()
    forged: list[int] = []

    def cheat(env: dict) -> dict:
        if env["seat"] == 1 and env["body"]["type"] == "shuffle" and not forged:
            body = dict(env["body"])
            deck = list(body["deck"])
            deck[0], deck[1] = deck[1], deck[0]
            body["deck"] = deck
            forged.append(1)
            ident = table.identities[1]
            return sign_envelope(ident, table.game, 1, env["n"], env["head"], body)
        return env

    table.tamper = cheat
    with pytest.raises(ProtocolError) as caught:
        table.deliver()
    assert caught.value.seat == 1
    verdict = check_records(table.records)
    assert (verdict.code, verdict.seat) == ("DECK_FAULT", 1)
    assert verdict.index == len(table.records) - 1


def test_a_move_out_of_turn_is_an_illegal_move_of_its_author() -> None:
    table = _table()
    table.deliver()  # set-up, shuffles, the deal and the first card
    session = table.sessions[0]
    actor = to_act(session.state)
    cheat = next(s for s in range(3) if s != actor)
    body = {"type": "move", "hand": session.state.hand_number, "move": "draw"}
    env = sign_envelope(
        table.identities[cheat], table.game, cheat,
        session.chain.next_counter(cheat), session.head, body,
    )
    table.send(env)
    with pytest.raises(ProtocolError):
        table.deliver()
    verdict = check_records(table.records)
    assert (verdict.code, verdict.seat, verdict.index) == (
        "ILLEGAL_MOVE", cheat, len(table.records) - 1
    )


def test_files_unreadable_or_read(tmp_path: Path, match: list[dict]) -> None:
    assert verify_file(tmp_path / "missing").code == UNREADABLE
    assert verify_file(tmp_path).code == UNREADABLE
    junk = tmp_path / "junk"
    junk.write_bytes(b"hello, world\n")
    assert verify_file(junk).code == UNREADABLE
    torn = tmp_path / "torn"  # a crash while record 0 was written: no record to check
    torn.write_bytes(HEADER + (100).to_bytes(4, "big") + b"\x81")
    verdict = verify_file(torn)
    assert (verdict.code, verdict.summary.records) == ("EMPTY", 0) and verdict.readable
    assert (verdict.torn.offset, verdict.torn.index, verdict.torn.size) == (len(HEADER), 0, 5)
    torn.write_bytes(HEADER + (0).to_bytes(4, "big") + b"\x01")  # damage, not a crash
    assert verify_file(torn).code == UNREADABLE
    good = tmp_path / "good"
    with TranscriptWriter(good) as w:
        for rec in match:
            w.append(rec)
    assert verify_file(good).ok


def _with_bad_proof(env: dict) -> dict:
    """``env`` (a tokens envelope) with its first proof's ``e`` changed, signed again."""
    from dernier_p2p.protocol.local import identity_for

    body = copy.deepcopy(env["body"])
    e = body["tokens"][0]["proof"]["e"]
    body["tokens"][0]["proof"]["e"] = bytes([e[0] ^ 1]) + e[1:]
    return sign_envelope(identity_for(SEEDS[env["seat"]]), env["game"], env["seat"], env["n"],
                         env["head"], body)


def test_an_unsequenced_envelope_of_a_side_file_proves_its_fault(match: list[dict]) -> None:
    k = next(i for i, r in enumerate(match) if r["env"]["body"]["type"] == "tokens")
    env = match[k]["env"]
    bad = _with_bad_proof(env)
    verdict = check_records(match[:k], envelopes=[bad])
    assert (verdict.ok, verdict.code, verdict.seat, verdict.index) == (
        False, "DECK_FAULT", env["seat"], None)
    assert (verdict.summary.records, verdict.summary.names) == (k, ["seat 0", "seat 1"])
    assert "BadProof" in verdict.detail and "never sequenced" in verdict.detail
    # a sound envelope proves nothing; an envelope a record already carries, or one that could
    # not have been the next record (a counter skipped), is passed over
    assert check_records(match[:k], envelopes=[env]).code == INCOMPLETE
    assert check_records(match[: k + 1], envelopes=[bad]).code == INCOMPLETE
    skipped = sign_envelope(identity_for_seat(env["seat"]), env["game"], env["seat"],
                            env["n"] + 1, env["head"], bad["body"])
    junk = [{"not": "an envelope"}, 5, None, "x", [1], {**env, "seat": "a"}, {**env, "body": 0}]
    assert check_records(match[:k], envelopes=[skipped, *junk]).code == INCOMPLETE
    # a sound envelope is applied and takes its counter: a second one with that counter is
    # passed over (only the first of two envelopes signed with one counter can count)
    assert check_records(match[:k], envelopes=[env, bad]).code == INCOMPLETE


def identity_for_seat(seat: int):
    from dernier_p2p.protocol.local import identity_for

    return identity_for(SEEDS[seat])


def test_a_file_that_cannot_be_read_is_unreadable_naming_no_seat(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.write_bytes(b"not a transcript at all")
    for path, why in ((tmp_path / "missing", "No such file"), (tmp_path, "is a directory"),
                      (bad, "transcript")):
        verdict = verify_file(path)
        assert (verdict.ok, verdict.code, verdict.seat) == (False, UNREADABLE, None)
        assert verdict.detail.startswith(f"the transcript {path}: ") and why in verdict.detail
    # the system's words alone, not Python's rendering of the exception
    missing = tmp_path / "missing"
    assert verify_file(missing).detail == f"the transcript {missing}: No such file or directory"


def test_a_side_file_of_envelopes_is_read_and_judged_past_malformed_entries(
    match: list[dict], tmp_path: Path
) -> None:
    """``verify_file`` with a side file: an entry that is no envelope is passed over, the bad
    envelope after it is judged, named by its place, seat and counter; ``on_record`` sees each
    record; an unreadable side file is UNREADABLE."""
    k = next(i for i, r in enumerate(match) if r["env"]["body"]["type"] == "tokens")
    env = match[k]["env"]
    cut, side = tmp_path / "cut", tmp_path / "side"
    for path, items in ((cut, match[:k]), (side, [{"not": "an envelope"}, _with_bad_proof(env)])):
        with TranscriptWriter(path) as w:
            for item in items:
                w.append(item)
    seen: list[int] = []
    verdict = verify_file(cut, lambda i, *_: seen.append(i), envelopes=side)
    assert (verdict.code, verdict.seat) == ("DECK_FAULT", env["seat"]) and seen == list(range(k))
    where = f"envelope 1 of the side file (seat {env['seat']}, counter {env['n']})"
    assert f"[{where}, never sequenced]" in verdict.detail
    assert verify_file(cut, envelopes=tmp_path / "none").code == UNREADABLE


class _Unforeseen(dict):
    """A record as a map whose keys cannot be listed: no check foresees this failure."""

    def keys(self):  # type: ignore[override]
        raise RuntimeError("keys unavailable")

    def __iter__(self):  # type: ignore[override]
        raise RuntimeError("keys unavailable")


def test_a_record_no_check_foresaw_is_uncheckable_naming_no_seat(match: list[dict]) -> None:
    """A record that makes the observer fail other than with a protocol error gives the
    ``UNCHECKABLE`` verdict at its index, blaming no seat, with the summary so far: no
    traceback, whatever the record."""
    for at in (0, 5):
        records = list(match)
        records[at] = _Unforeseen(match[at])
        verdict = check_records(records)
        assert (verdict.ok, verdict.code, verdict.seat, verdict.index) == (
            False, UNCHECKABLE, None, at)
        assert verdict.detail == f"record {at} cannot be checked: RuntimeError: keys unavailable"
        s = verdict.summary
        assert (s.records, s.names, s.variant) == (len(match), ["seat 0", "seat 1"], "dernier")
        assert s.match_points == ((0, 0) if at else ())  # the observer's state, once it exists


def test_the_summary_says_how_many_seats_hold_the_end() -> None:
    """PROTOCOL.md 7.11: a finished match's end is final once a quorum is shown holding it;
    the seats' acks after the end show them."""
    table = LocalTable("dernier", SEEDS, ONE_HAND)
    table.deliver()
    rng = random.Random(0)
    bots = [HeuristicBot(k) for k in range(3)]
    while not table.sessions[0].finished:
        assert play_round(table, bots, rng) > 0
    end = check_records(table.records).summary
    assert end.finished and end.end_quorum == 2  # q(3)
    assert end.end_holders == 1  # its host alone
    table.send(table.sessions[1].ack())
    table.deliver()
    acked = check_records(table.records)
    assert acked.ok and acked.summary.end_holders == 2
    assert check_records(table.records[:-1]).summary.end_holders == 1


def test_a_header_naming_another_version_than_the_table_is_refused(
    tmp_path: Path, match: list[dict]
) -> None:
    """The header's version byte is not signed; record 0's is. A file whose header names a
    readable version other than its table's was not written by a client of that table."""
    good = tmp_path / "good"
    with TranscriptWriter(good) as w:
        for rec in match:
            w.append(rec)
    data = good.read_bytes()
    assert data[len(HEADER) - 1] == PROTOCOL_VERSION
    other = tmp_path / "other"
    other.write_bytes(HEADER[:-1] + bytes([3]) + data[len(HEADER):])
    verdict = verify_file(other)
    assert verdict.code == UNREADABLE and not verdict.ok
    assert "header names protocol version 3" in verdict.detail
    assert f"record 0) is of version {PROTOCOL_VERSION}" in verdict.detail
