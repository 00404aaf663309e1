"""Votes on absence (PROTOCOL.md 7.5, 7.6): the host cannot choose the loser.

In memory (:class:`LocalTable`), at 2, 3 and 5 seats: a host that announces ``left`` or
``timeout`` for a present seat without a quorum of votes is refused by every honest seat and by
the offline audit; a host that censors a seat (holds its envelope) cannot time it out and, where
a majority exists, is deposed by ``host_change`` with votes, after which the held move is
sequenced; at two seats the host can only end the match as no contest, never make the victim
lose. Forged, reused and stale votes are refused with their codes.
"""

from __future__ import annotations

import copy
import random

import pytest

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.protocol.envelope import make_record, record_hash, sign_envelope
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.local import LocalTable, play_round
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.protocol.verify import INCOMPLETE, check_records
from dernier_p2p.protocol.votes import (
    CENSOR_MS,
    Tally,
    check_vote_frame,
    check_votes,
    quorum,
    sign_vote,
    stuck_ms,
    vote_frame,
)
from dernier_p2p.rules import Forfeited, to_act
from dernier_p2p.wire.identity import IdentityKey, verify


def seeds(n: int) -> list[bytes]:
    return [bytes([40 + k]) * 32 for k in range(n)]


def dealt(n: int) -> LocalTable:
    """A table of ``n`` seats (host 0) waiting on a move of a seat other than the host."""
    listen = [("127.0.0.1", 7000 + k) for k in range(n)]
    table = LocalTable("dernier", seeds(n), {"match": ["hands", 1]}, listen=listen)
    table.deliver()
    bots = [HeuristicBot(k) for k in range(n)]
    rng = random.Random(3)
    while to_act(table.sessions[0].state) in (None, table.host_seat):
        play_round(table, bots, rng)
    return table


def forged(table: LocalTable, body: dict) -> dict:
    """The host signs ``body`` as the next record, past its own sequencer's checks."""
    h = table.host_seat
    s = table.sessions[h]
    env = sign_envelope(table.identities[h], table.game, h, s.chain.next_counter(h), s.head, body)
    table.clock += 1
    return make_record(table.identities[h], env, h, len(table.records),
                       record_hash(table.records[-1]), table.clock)


def refused_by_all(table: LocalTable, rec: dict, code: str, honest: list[int]) -> None:
    """Every honest seat refuses ``rec`` with ``code`` naming the host, and stays as it was;
    the offline audit refuses it at that index too."""
    for k in honest:
        s = table.sessions[k]
        count, finished = s.count, s.finished
        with pytest.raises(ProtocolError) as info:
            s.receive(rec, rec["t"])
        assert (info.value.code, info.value.seat) == (code, table.host_seat), info.value
        assert s.count == count and s.fault is None and s.finished == finished
    verdict = check_records([*table.records, rec])
    assert (verdict.code, verdict.seat, verdict.index) == (code, table.host_seat, rec["i"])


@pytest.mark.parametrize("n", [2, 3, 5])
def test_host_cannot_choose_the_loser(n):
    """Forged ``left``, forged ``timeout`` and silent censorship, one table per size."""
    table = dealt(n)
    host = table.host_seat
    victim = to_act(table.sessions[0].state)
    colluders = [s for s in range(n) if s not in (host, victim)][: (n - 1) // 2 - 1]
    coalition = [host, *colluders]  # a minority (at 2 and 3 seats the host alone)
    assert len(coalition) < quorum(n)
    honest = [s for s in range(n) if s not in coalition]
    for kind in ("left", "timeout"):
        votes = table.collect(kind, victim, coalition)
        refused_by_all(table, forged(table, {"type": kind, "seat": victim, "votes": votes}),
                       "NO_QUORUM", honest)

    # censorship: the victim moves; the host holds the envelope and relays nothing of it
    victim_s = table.sessions[victim]
    held = victim_s.intend(victim_s.legal()[0])
    for k in honest:  # what a probe shows every honest seat: a valid, unsequenced envelope
        table.sessions[k].chain.check_envelope(held, victim)
    # so no honest seat votes timeout; the coalition alone has no quorum
    votes = table.collect("timeout", victim, coalition)
    refused_by_all(table, forged(table, {"type": "timeout", "seat": victim, "votes": votes}),
                   "NO_QUORUM", honest)

    if n == 2:  # no majority can exist: the host can only end the match as no contest
        rec = table.sequence(table.sessions[host].announce(
            {"type": "no_contest", "seat": victim, "votes": []}))
        for s in table.sessions:
            s.receive(rec, rec["t"])
            assert s.finished and s.result == {"no_contest": True}
            assert not any(isinstance(e, Forfeited) for e in s.events)
        verdict = check_records(table.records)
        assert verdict.ok and verdict.summary.no_contest and verdict.summary.winner is None
        assert verdict.summary.standings == ()
        return

    # the honest seats (the victim among them) depose the host; the next seat takes over
    new = table.sessions[victim].chain.next_host()
    voters = [new, *[s for s in honest if s != new]][: quorum(n)]
    assert host not in voters
    take_over(table, voters)
    assert {s.host for s in table.sessions} == {new}
    # the held move goes through the new host, signed again after the host change
    again = victim_s.sign_again([held["body"]])
    table.send(again[0])
    table.deliver()
    change = next(i for i, r in enumerate(table.records)
                  if r["env"]["body"]["type"] == "host_change")
    assert any(r["env"]["seat"] == victim and r["env"]["body"] == held["body"]
               for r in table.records[change:])
    for s in table.sessions:
        assert s.fault is None and not any(isinstance(e, Forfeited) for e in s.events)
    verdict = check_records(table.records)
    assert verdict.code == INCOMPLETE  # the match goes on, and every record checks


def take_over(table: LocalTable, voters: list[int]) -> dict:
    """The next host sequences its ``host_change`` with the ``depose`` votes of ``voters``."""
    old = table.host_seat
    new = table.sessions[old].chain.next_host()
    votes = [table.sessions[v].vote("depose", old) for v in voters]
    body = table.sessions[new].votes_body("depose", old, votes)
    table.host = Sequencer(table.identities[new], table.game, new, records=table.records)
    table.host_seat = new
    table.send(table.sessions[new].sign_again([body])[0])
    table.deliver()
    return body


@pytest.fixture(scope="module")
def _three_dealt() -> LocalTable:
    return dealt(3)


@pytest.fixture
def three(_three_dealt: LocalTable) -> LocalTable:
    """A fresh copy of a dealt three-seat table for each test (the tests send on it)."""
    return copy.deepcopy(_three_dealt)


def test_no_contest_needs_two_seats_or_a_quorum_of_abandon_votes(three):
    table = three
    honest = [1, 2]
    refused_by_all(table, forged(table, {"type": "no_contest", "seat": 1, "votes": []}),
                   "NO_QUORUM", honest)
    refused_by_all(table, forged(table, {"type": "no_contest", "seat": None,
                                         "votes": table.collect("abandon", None, [0])}),
                   "NO_QUORUM", honest)
    two = dealt(2)
    refused_by_all(two, forged(two, {"type": "no_contest", "seat": 0, "votes": []}),
                   "NO_QUORUM", [1])  # the host names itself absent


def apply(table: LocalTable, env: dict) -> None:
    """Sequence ``env`` and give the record to every seat."""
    rec = table.sequence(env)
    for s in table.sessions:
        s.receive(rec, rec["t"])


def test_abandon_votes_hold_only_while_the_table_is_stuck():
    """Abandon votes state the table stuck at the last record other than a chat or an ack
    (7.5): after a chat or an ack they still end the match as no contest; after any other
    record (an accept) they are stale."""
    for between, code in (("chat", None), ("ack", None), ("accept", "STALE_VOTE")):
        table = LocalTable("dernier", seeds(3), {"match": ["hands", 1]})
        apply(table, next(e for e in table.queue if e["seat"] == 1))  # seat 1 accepts: rec 1
        votes = table.collect("abandon", None, [0, 2])  # each: stuck after record 1
        assert {v["after"] for v in votes} == {1}
        seat1 = table.sessions[1]
        if between == "chat":
            env = seat1.chat("still here?")
        elif between == "ack":
            env = seat1.ack()
        else:
            env = next(e for e in table.queue if e["seat"] == 2)
        apply(table, env)
        rec = forged(table, {"type": "no_contest", "seat": None, "votes": votes})
        if code is not None:
            refused_by_all(table, rec, code, [1, 2])
            continue
        for s in table.sessions:
            s.receive(rec, rec["t"])
            assert s.finished and s.result == {"no_contest": True}
        verdict = check_records([*table.records, rec])
        assert verdict.ok and verdict.summary.no_contest


def test_forged_votes_are_refused(three):
    table = three
    victim = to_act(table.sessions[0].state)
    other = ({1, 2} - {victim}).pop()
    honest = [victim, other]

    def attempt(votes, code):
        refused_by_all(table, forged(table, {"type": "timeout", "seat": victim, "votes": votes}),
                       code, honest)

    good = table.collect("timeout", victim, [0, other])
    bad_sig = {**good[1], "sig": bytes([good[1]["sig"][0] ^ 1]) + good[1]["sig"][1:]}
    attempt([good[0], bad_sig], "BAD_SIGNATURE")
    attempt([good[0], table.sessions[other].vote("left", victim)], "BAD_SIGNATURE")  # kind
    attempt([good[0], table.sessions[victim].vote("timeout", victim)], "WRONG_SEAT")
    attempt([good[0], good[0]], "WRONG_SEAT")
    # a vote signed with another key than the seat's
    stranger = IdentityKey.generate(bytes(32))
    fake = sign_vote(stranger, table.game, "timeout", victim, other, good[1]["after"])
    attempt([good[0], fake], "BAD_SIGNATURE")
    # a vote from the future
    ahead = sign_vote(table.identities[other], table.game, "timeout", victim, other,
                      len(table.records))
    attempt([good[0], ahead], "STALE_VOTE")
    # the victim's ack shows it connected, not at play (7.5): a `left` vote from before is
    # stale, the `timeout` votes from before still hold (the ack restarted no clock)
    gone = table.collect("left", victim, [0, other])
    table.send(table.sessions[victim].ack())
    table.deliver()
    refused_by_all(table, forged(table, {"type": "left", "seat": victim, "votes": gone}),
                   "STALE_VOTE", honest)
    assert table.sessions[0].chain.vote_since("left", victim) == len(table.records) - 1
    # fresh votes pass; the same votes used a second time are stale
    fresh = table.collect("timeout", victim, [0, other])
    assert fresh[1]["after"] == good[1]["after"] < len(table.records) - 1
    rec = table.sequence(table.sessions[0].announce(
        {"type": "timeout", "seat": victim, "votes": fresh}))  # the host's sequencer agrees
    for s in table.sessions:
        s.receive(rec, rec["t"])
    assert all(s.finished for s in table.sessions)  # dernier: a time-out forfeits
    attempt(fresh, "STALE_VOTE")


def test_a_move_makes_older_timeout_votes_stale_and_an_ack_does_not():
    """A seat that only acks (or chats) while the table waits on it cannot put off its
    time-out: votes cast before the acks still hold; votes cast before a move it made do not."""
    table = dealt(3)
    victim = to_act(table.sessions[0].state)
    other = ({0, 1, 2} - {victim, table.host_seat}).pop()
    votes = table.collect("timeout", victim, [table.host_seat, other])
    for _ in range(3):  # a stalling seat echoing the head again and again
        apply(table, table.sessions[victim].ack())
    apply(table, table.sessions[victim].chat("thinking"))
    assert table.sessions[0].chain.vote_since("timeout", victim) == votes[0]["after"]
    s = table.sessions[victim]
    apply(table, s.intend(HeuristicBot(victim)(s.state, victim, s.view)))  # it plays
    refused_by_all(table, forged(table, {"type": "timeout", "seat": victim, "votes": votes}),
                   "STALE_VOTE", [k for k in range(3) if k != table.host_seat])


def test_deposing_valid_and_invalid():
    table = dealt(3)
    old = table.host_seat
    new = table.sessions[old].chain.next_host()
    third = ({0, 1, 2} - {old, new}).pop()
    seq = Sequencer(table.identities[new], table.game, new, records=table.records)

    def change(votes):
        body = {"type": "host_change", "old": old, "new": new, "votes": votes}
        env = sign_envelope(table.identities[new], table.game, new,
                            table.sessions[new].chain.next_counter(new), table.sessions[new].head,
                            body)
        return make_record(table.identities[new], env, new, len(table.records),
                           record_hash(table.records[-1]), table.clock + 1)

    def refused(votes, code):
        rec = change(votes)
        for k in (old, third):
            with pytest.raises(ProtocolError) as info:
                table.sessions[k].receive(rec, rec["t"])
            assert (info.value.code, info.value.seat) == (code, new)
        with pytest.raises(ProtocolError):
            seq.submit(rec["env"], new, rec["t"])  # the new host's own sequencer refuses it
        assert check_records([*table.records, rec]).code == code

    mine = table.sessions[new].vote("depose", old)
    refused([mine], "NO_QUORUM")
    refused([mine, table.sessions[old].vote("depose", old)], "WRONG_SEAT")  # the old host
    older = sign_vote(table.identities[third], table.game, "depose", old, third,
                      len(table.records) - 2)  # a record signed by the old host since
    refused([mine, older], "STALE_VOTE")
    refused([mine, table.sessions[third].vote("timeout", old)], "BAD_SIGNATURE")
    # a quorum of fresh votes: every seat follows the new host
    rec = change([mine, table.sessions[third].vote("depose", old)])
    for s in table.sessions:
        s.receive(rec, rec["t"])
        assert s.host == new and s.chain.at_table == {0, 1, 2}
    assert check_records([*table.records, rec]).code == INCOMPLETE


def test_quorum_and_tally():
    assert [quorum(m) for m in range(1, 11)] == [1, 2, 2, 3, 3, 4, 4, 5, 5, 6]
    assert CENSOR_MS == 10_000
    ids = [IdentityKey.generate(bytes([k + 7]) * 32) for k in range(3)]
    keys = {k: i.public_bytes() for k, i in enumerate(ids)}
    game = bytes(16)
    tally = Tally()
    for k in (0, 2):
        tally.add("left", 1, sign_vote(ids[k], game, "left", 1, k, 4))
    tally.add("left", 1, sign_vote(ids[2], game, "left", 1, 2, 6))  # a newer vote replaces
    assert [v["after"] for v in tally.fresh("left", 1, 4, 7)] == [4, 6]
    assert [v["after"] for v in tally.fresh("left", 1, 5, 7)] == [6]
    check_votes(tally.fresh("left", 1, 4, 7), kind="left", target=1, index=7, since=4,
                at_table={0, 1, 2}, keys=keys, game=game, fault=0)
    with pytest.raises(ProtocolError) as info:
        check_votes(tally.fresh("left", 1, 5, 7), kind="left", target=1, index=7, since=5,
                    at_table={0, 1, 2}, keys=keys, game=game, fault=0)
    assert (info.value.code, info.value.seat) == ("NO_QUORUM", 0)
    assert info.value.detail == "left: 1 votes, 2 needed of 3 seats"
    with pytest.raises(ProtocolError) as info:  # seat 0's vote of after 4 before since 5
        check_votes([tally.fresh("left", 1, 4, 7)[0]], kind="left", target=1, index=7, since=5,
                    at_table={0, 1, 2}, keys=keys, game=game, fault=2)
    assert (info.value.code, info.value.seat) == ("STALE_VOTE", 2)
    assert info.value.detail == (
        "the left vote of seat 0 is after record 4; it must be at least 5 and before 7")
    assert [v["after"] for v in tally.fresh("left", 1, 4, 6)] == [4]  # before the record
    tally.add("abandon", None, sign_vote(ids[0], game, "abandon", None, 0, 6))
    assert tally.keys() == [("left", 1), ("abandon", None)]
    tally.drop("left", 1)
    assert tally.keys() == [("abandon", None)]
    assert tally.fresh("left", 1, -1, 9) == []
    tally.drop("left", 1)  # nothing to drop


def test_a_vote_signs_the_statement_protocol_md_defines():
    """7.5: ``sig = sign("dernier-p2p/vote", {"after", "game", "kind", "seat", "target"})``."""
    ident = IdentityKey.generate(bytes([9]) * 32)
    game = bytes(range(16))
    for kind, target in (("timeout", 2), ("depose", 0), ("abandon", None)):
        vote = sign_vote(ident, game, kind, target, 1, 17)
        assert vote.keys() == {"seat", "after", "sig"} and (vote["seat"], vote["after"]) == (1, 17)
        signed = {"after": 17, "game": game, "kind": kind, "seat": 1, "target": target}
        verify(ident.public_bytes(), "dernier-p2p/vote", signed, vote["sig"])


def test_stuck_ms_is_the_longest_wait_plus_two_grace_periods():
    """7.5: ``stuck_ms = max(turn_ms, censor_ms) + 2 * grace_ms``."""
    assert stuck_ms({"turn_ms": 30_000, "grace_ms": 5_000}) == 40_000
    assert stuck_ms({"turn_ms": 4_000, "grace_ms": 1_500}) == CENSOR_MS + 3_000
    assert stuck_ms({"turn_ms": 4_000, "grace_ms": 1_500}, censor_ms=6_000) == 9_000
    assert stuck_ms({"turn_ms": 4_000, "grace_ms": 1_500}, 3_000) == 7_000


def test_a_vote_frame_is_checked_field_by_field():
    """4.1, 7.5: ``{k, kind, target, vote}`` at a table of 3 seats; anything else is MALFORMED
    naming no seat (the signature is checked later, against the record's index)."""
    vote = {"seat": 2, "after": -1, "sig": bytes(64)}
    assert vote_frame("timeout", 0, vote) == {  # 4.1: the frame as the table writes it
        "k": "vote", "kind": "timeout", "target": 0, "vote": vote}
    good = [vote_frame("timeout", 0, vote), vote_frame("left", 2, {**vote, "seat": 0}),
            vote_frame("depose", 1, {**vote, "after": 2**63 - 1}),
            vote_frame("abandon", None, vote)]
    for frame in good:
        kind, target, got = check_vote_frame(frame, 3)
        assert (kind, target, got) == (frame["kind"], frame["target"], frame["vote"])
        assert got is not frame["vote"]
    frame = good[0]
    bad = [
        {**frame, "extra": 1}, {k: v for k, v in frame.items() if k != "target"},
        {**frame, "kind": "resign"}, {**frame, "kind": None},
        {**frame, "kind": "abandon"},  # abandon names no target
        {**good[3], "kind": "timeout"},  # the others name one
        {**frame, "target": 3}, {**frame, "target": -1}, {**frame, "target": True},
        {**frame, "target": "0"}, {**frame, "vote": [2, -1, bytes(64)]}, {**frame, "vote": None},
        {**frame, "vote": {**vote, "extra": 1}}, {**frame, "vote": {"seat": 2, "after": -1}},
        {**frame, "vote": {**vote, "seat": 3}}, {**frame, "vote": {**vote, "seat": -1}},
        {**frame, "vote": {**vote, "seat": False}}, {**frame, "vote": {**vote, "after": -2}},
        {**frame, "vote": {**vote, "after": 2**63}}, {**frame, "vote": {**vote, "after": True}},
        {**frame, "vote": {**vote, "after": "1"}}, {**frame, "vote": {**vote, "sig": bytes(63)}},
        {**frame, "vote": {**vote, "sig": bytes(65)}},
        {**frame, "vote": {**vote, "sig": bytearray(64)}},
    ]
    for frame in bad:
        with pytest.raises(ProtocolError) as info:
            check_vote_frame(frame, 3)
        assert (info.value.code, info.value.seat) == ("MALFORMED", None), frame


def test_a_timeout_of_the_hosts_own_seat_needs_the_others_quorum():
    """The host times out its own seat (PROTOCOL.md 7.5) only with a quorum of the other
    seats' ``timeout`` votes about it: with one vote every honest seat and the audit refuse it
    (``NO_QUORUM``); with both it is a valid record, applied as that variant's time-out (in
    ``standard`` the host's seat draws and the turn passes) and the host still hosts."""
    listen = [("127.0.0.1", 7000 + k) for k in range(3)]
    table = LocalTable("standard", seeds(3), {"match": ["hands", 1]}, listen=listen)
    table.deliver()
    bots = [HeuristicBot(k) for k in range(3)]
    rng = random.Random(3)
    while to_act(table.sessions[0].state) != table.host_seat:
        play_round(table, bots, rng)
    host = table.host_seat
    refused_by_all(table, forged(table, {"type": "timeout", "seat": host,
                                         "votes": table.collect("timeout", host, [1])}),
                   "NO_QUORUM", [1, 2])
    hand = len(table.sessions[1].state.hands[host])
    at = len(table.records)
    table.absent("timeout", host)  # the votes of seats 1 and 2
    table.deliver()
    rec = table.records[at]["env"]
    assert rec["seat"] == host and rec["body"]["type"] == "timeout"
    assert rec["body"]["seat"] == host
    assert sorted(v["seat"] for v in rec["body"]["votes"]) == [1, 2]
    for s in table.sessions:
        assert s.fault is None and s.host == host
        assert to_act(s.state) != host and len(s.state.hands[host]) == hand + 1
    assert check_records(table.records).code == INCOMPLETE  # valid, and the match goes on
