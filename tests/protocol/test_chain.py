import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dernier_p2p.protocol.chain import ChainChecker
from dernier_p2p.protocol.envelope import (
    Author,
    genesis_hash,
    make_record,
    record_hash,
    sign_envelope,
)
from dernier_p2p.protocol.errors import CODES, ProtocolError
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.protocol.votes import sign_vote
from dernier_p2p.wire.canonical import decode, encode
from tests.protocol import GAME, Game, identities, table_body

ACK = {"type": "ack"}


def checker(g: Game, **kw) -> ChainChecker:
    return ChainChecker(GAME, g.keys, g.keys, **kw)


def fed(g: Game, upto: int | None = None) -> ChainChecker:
    c = checker(g)
    for r in g.seq.records[:upto]:
        c.feed(r)
    return c


def snapshot(c: ChainChecker):
    return (c.hashes, c.host, c.at_table, c.last_t, [c.next_counter(s) for s in range(c.n)])


def refused(c: ChainChecker, rec, code: str, seat: int | None) -> ProtocolError:
    before = snapshot(c)
    with pytest.raises(ProtocolError) as info:
        c.feed(rec)
    assert (info.value.code, info.value.seat) == (code, seat), info.value
    assert snapshot(c) == before
    return info.value


def resign(g: Game, rec: dict, signer: int = 0, **changes) -> dict:
    """``rec`` with ``changes`` applied and signed again by ``signer``'s key."""
    fields = {"env": rec["env"], "h": rec["h"], "i": rec["i"], "prev": rec["prev"], "t": rec["t"]}
    fields.update(changes)
    return make_record(g.ids[signer], fields["env"], fields["h"], fields["i"], fields["prev"],
                       fields["t"])


def game_with_acks(n: int = 3, rounds: int = 2) -> Game:
    g = Game(n)
    for _ in range(rounds):
        for s in range(n):
            g.submit(s, ACK)
    return g


# ---------------------------------------------------------------------- honest chain
def test_honest_chain_is_accepted_and_agrees_with_the_host():
    g = game_with_acks()
    c = checker(g)
    for r in g.seq.records:
        assert c.feed(decode(encode(r))) == record_hash(r)
    assert c.head == g.seq.head
    assert c.hashes == [record_hash(r) for r in g.seq.records]
    assert c.next_index == len(g.seq.records) == 9
    assert [c.next_counter(s) for s in range(3)] == [3, 3, 3]
    assert c.index_of(genesis_hash(GAME)) == -1 and c.index_of(c.head) == 8
    assert c.host == 0 and c.at_table == {0, 1, 2}


def test_first_host_taken_from_record_zero_or_given():
    g = Game(2)
    c = checker(g)
    assert c.host is None and c.head == genesis_hash(GAME)
    c.feed(g.seq.records[0])
    assert c.host == 0
    other = checker(g, host=1)
    refused(other, g.seq.records[0], "BAD_CHAIN", 0)  # signed by seat 0, not the host


def test_bad_constructor_arguments():
    keys = Game(2, accept=False).keys
    with pytest.raises(ValueError):
        ChainChecker(GAME, keys, keys[:1])
    with pytest.raises(ValueError):
        ChainChecker(GAME, {5: keys[0]}, keys)
    with pytest.raises(ValueError):
        ChainChecker(GAME, keys, [keys[0], bytes(32)])
    with pytest.raises(ValueError):
        ChainChecker(b"short", keys, keys)
    with pytest.raises(ValueError):
        ChainChecker(GAME, {1: keys[1]}, keys, host=0)


# ---------------------------------------------------------------------- record tampering
@pytest.fixture
def g():
    return game_with_acks(rounds=1)


def test_flipped_host_signature(g):
    c = fed(g, 4)
    r = dict(g.seq.records[4])
    r["hsig"] = bytes([r["hsig"][0] ^ 1]) + r["hsig"][1:]
    refused(c, r, "BAD_SIGNATURE", 0)
    c.feed(g.seq.records[4])  # the genuine record still goes in


@pytest.mark.parametrize("field", ["i", "prev", "t", "env", "h"])
def test_unsigned_changes_break_the_host_signature(g, field):
    c = fed(g, 4)
    r = dict(g.seq.records[4])
    r[field] = {
        "i": 5, "prev": bytes(32), "t": r["t"] + 1, "env": g.seq.records[3]["env"], "h": 2
    }[field]
    code_seat = ("BAD_SIGNATURE", 0)
    refused(c, r, *code_seat)


def test_wrong_index_prev_and_time_even_when_signed(g):
    c = fed(g, 4)
    r = g.seq.records[4]
    refused(c, resign(g, r, i=5), "BAD_CHAIN", 0)
    refused(c, resign(g, r, i=3), "BAD_CHAIN", 0)
    refused(c, resign(g, r, prev=g.seq.records[2]["prev"]), "BAD_CHAIN", 0)
    refused(c, resign(g, r, t=g.seq.records[3]["t"] - 1), "BAD_CHAIN", 0)
    c.feed(resign(g, r, t=g.seq.records[3]["t"]))  # equal time is allowed


def test_duplicate_record_refused(g):
    c = fed(g, 5)
    refused(c, g.seq.records[4], "BAD_CHAIN", 0)


def test_record_signed_by_a_seat_that_is_not_host(g):
    c = fed(g, 4)
    r = g.seq.records[4]
    refused(c, resign(g, r, signer=1, h=1), "BAD_CHAIN", 1)
    # claims seat 1 as host but carries the host's own signature: the relay is at fault
    refused(c, resign(g, r, signer=0, h=1), "BAD_SIGNATURE", 0)


def test_malformed_record_names_the_host(g):
    c = fed(g, 4)
    for bad in (None, [], {**g.seq.records[4], "x": 1}, {**g.seq.records[4], "t": -5}):
        refused(c, bad, "MALFORMED", 0)


# ---------------------------------------------------------------------- envelope faults in records
def _seq_raw(g: Game, env: dict, c: ChainChecker) -> dict:
    """A record of ``env`` the host signs without checking it (a faulty or hostile host)."""
    return make_record(g.ids[0], env, 0, c.next_index, c.head, g.t + 1)


def test_envelope_faults_the_host_should_have_refused(g):
    c = fed(g)
    a1 = g.authors[1]
    good = sign_envelope(g.ids[1], GAME, 1, a1.next_n, c.head, ACK)
    cases = [
        ({**good, "body": {"type": "accept", "table": bytes(32)}}, "BAD_SIGNATURE"),
        ({**good, "seat": 2}, "BAD_SIGNATURE"),
        (sign_envelope(g.ids[0], GAME, 1, a1.next_n, c.head, ACK), "BAD_SIGNATURE"),
        (sign_envelope(g.ids[1], bytes(16), 1, a1.next_n, c.head, ACK), "WRONG_GAME"),
        (sign_envelope(g.ids[1], GAME, 1, a1.next_n - 1, c.head, ACK), "DUPLICATE"),
        (sign_envelope(g.ids[1], GAME, 1, a1.next_n + 1, c.head, ACK), "OUT_OF_ORDER"),
        (sign_envelope(g.ids[1], GAME, 1, a1.next_n, bytes(32), ACK), "FORK"),
        (sign_envelope(g.ids[1], GAME, 1, a1.next_n, c.head, {"type": "ack", "x": 1}),
         "MALFORMED"),
        (sign_envelope(g.ids[1], GAME, 1, a1.next_n, c.head, {"type": "emote"}),
         "UNKNOWN_MESSAGE"),
        (sign_envelope(g.ids[1], GAME, 1, a1.next_n, c.head,
                       {"type": "left", "seat": 2, "votes": g.votes("left", 2, [0, 1])}),
         "WRONG_SEAT"),
        (sign_envelope(g.ids[1], GAME, 1, a1.next_n, c.head, table_body(g.keys)), "WRONG_SEAT"),
        (sign_envelope(g.ids[0], GAME, 0, g.authors[0].next_n, c.head, table_body(g.keys)),
         "BAD_CHAIN"),
    ]
    for env, code in cases:
        err = refused(c, _seq_raw(g, env, c), code, 0)
        assert "seat" in err.detail
    c.feed(_seq_raw(g, good, c))


def test_signed_by_is_a_well_formed_envelope_of_this_game_signed_by_its_author(g):
    """(21.1) What the side file may keep: signed by the seat it names, for this game, in
    shape; any counter, head or body (a refused move or a counter ahead still proves what its
    author signed). Never raises."""
    c = fed(g)
    a1 = g.authors[1]
    good = sign_envelope(g.ids[1], GAME, 1, a1.next_n, c.head, ACK)
    assert c.signed_by(good, 1)
    assert c.signed_by(sign_envelope(g.ids[1], GAME, 1, a1.next_n + 9, bytes(32),
                                     {"type": "emote"}), 1)  # counter, head, body: any
    assert not c.signed_by(good, 2)  # not the seat it names
    assert not c.signed_by({**good, "seat": 2}, 2)  # signed by another
    assert not c.signed_by(sign_envelope(g.ids[0], GAME, 1, a1.next_n, c.head, ACK), 1)
    assert not c.signed_by(sign_envelope(g.ids[1], bytes(16), 1, a1.next_n, c.head, ACK), 1)
    assert not c.signed_by({**good, "sig": bytes(64)}, 1)
    assert not c.signed_by({**good, "extra": 1}, 1)
    assert not c.signed_by({**good, "seat": 9}, 1)
    assert not c.signed_by("junk", 1)


def test_news_for_and_echo_of_follow_the_records():
    """(4.9) Records 0 (the table, seat 0), 1 and 2 (the accepts of seats 1 and 2), then an
    ack of seats 0, 1 and 2 (3, 4, 5), each echoing the record before it."""
    c = fed(game_with_acks(3, rounds=1))
    assert [c.echo_of(s) for s in range(3)] == [2, 3, 4]
    assert c.news_for(1, 0, 2)  # seat 2's accept
    assert not c.news_for(1, 2, 5)  # acks only
    assert not c.news_for(1, 0, 1)  # its own accept
    assert c.news_for(2, -1, 0) and c.news_for(0, 0, 99)  # (clipped to the chain)
    assert not c.news_for(0, 5, 9) and not c.news_for(0, 3, 2)


def test_replayed_envelope_in_a_new_record_is_a_duplicate(g):
    c = fed(g)
    refused(c, _seq_raw(g, g.seq.records[-1]["env"], c), "DUPLICATE", 0)


def test_head_echo_may_be_any_earlier_record(g):
    c = fed(g)
    old = c.hashes[1]
    env = g.authors[2].envelope(ACK, old)
    c.feed(_seq_raw(g, env, c))


def test_record_zero_must_be_the_agreed_table():
    g = Game(3, accept=False)
    genesis = genesis_hash(GAME)
    ack = sign_envelope(g.ids[0], GAME, 0, 0, genesis, ACK)
    refused(checker(g), make_record(g.ids[0], ack, 0, 0, genesis, 5), "BAD_CHAIN", 0)
    other = identities(4)[3].public_bytes()
    forged = table_body([g.keys[0], g.keys[1], other])
    env = sign_envelope(g.ids[0], GAME, 0, 0, genesis, forged)
    refused(checker(g), make_record(g.ids[0], env, 0, 0, genesis, 5), "TABLE_MISMATCH", 0)
    env = sign_envelope(g.ids[1], GAME, 1, 0, genesis, table_body(g.keys))
    refused(checker(g), make_record(g.ids[0], env, 0, 0, genesis, 5), "WRONG_SEAT", 0)
    stranger = identities(5)[4]
    env = sign_envelope(stranger, GAME, 0, 0, genesis, table_body(g.keys))
    refused(checker(g, host=0), make_record(stranger, env, 0, 0, genesis, 5), "BAD_SIGNATURE", 0)


# ---------------------------------------------------------------------- relay misbehaviour
def two_peers(g: Game) -> tuple[ChainChecker, ChainChecker]:
    return fed(g, 4), fed(g, 4)


def test_relay_drops_a_record_for_one_peer(g):
    for s in range(3):
        g.submit(s, ACK)
    a, b = two_peers(g)
    rest = g.seq.records[4:]
    for r in rest:
        a.feed(r)
    refused(b, rest[1], "BAD_CHAIN", 0)  # rest[0] was dropped for b


def test_relay_reorders_two_records_for_one_peer(g):
    g.submit(1, ACK)
    g.submit(2, ACK)
    _, b = two_peers(g)
    r5 = g.seq.records[5]
    refused(b, r5, "BAD_CHAIN", 0)
    # Re-signed in the other order the links hold, but seat 2 echoed record 4, which b lacks.
    x = make_record(g.ids[0], r5["env"], 0, 4, b.head, r5["t"])
    refused(b, x, "FORK", 0)


def test_reordered_envelopes_of_one_author(g):
    c = fed(g)
    e1, e2 = (g.authors[1].envelope(ACK, c.head) for _ in range(2))
    refused(c, _seq_raw(g, e2, c), "OUT_OF_ORDER", 0)
    c.feed(_seq_raw(g, e1, c))
    refused(c, _seq_raw(g, e1, c), "DUPLICATE", 0)
    c.feed(_seq_raw(g, e2, c))


def test_host_forging_an_envelope_is_caught(g):
    c = fed(g)
    forged = sign_envelope(g.ids[0], GAME, 2, g.authors[2].next_n, c.head, ACK)
    refused(c, _seq_raw(g, forged, c), "BAD_SIGNATURE", 0)


def test_equivocating_host_is_exposed_by_the_next_head_echo(g):
    """The host shows peer 1 and peer 2 different records at the same index; each chain is
    valid alone, and the first envelope of peer 2 relayed to peer 1 reveals the fork."""
    peer1, peer2 = fed(g), fed(g)
    i, head = peer1.next_index, peer1.head
    n0 = g.authors[0].next_n
    for_1 = make_record(g.ids[0], g.authors[0].envelope(ACK, head), 0, i, head, g.t + 1)
    other = sign_envelope(g.ids[0], GAME, 0, n0, head, {"type": "accept", "table": head})
    for_2 = make_record(g.ids[0], other, 0, i, head, g.t + 1)
    peer1.feed(for_1)
    peer2.feed(for_2)
    assert peer1.head != peer2.head
    echo = g.authors[2].envelope(ACK, peer2.head)  # peer 2 acks what it saw
    to_1 = make_record(g.ids[0], echo, 0, i + 1, peer1.head, g.t + 2)
    err = refused(peer1, to_1, "FORK", 0)
    assert "seat 2" in err.detail
    # an honest host refuses that echo too, naming its author
    with pytest.raises(ProtocolError) as info:
        Sequencer(g.ids[0], GAME, 0, records=[*g.seq.records, for_1]).submit(echo, 2, g.t + 2)
    assert (info.value.code, info.value.seat) == ("FORK", 2)


def test_checkers_fed_the_same_records_agree():
    g = game_with_acks(4, rounds=3)
    heads = {fed(g).head for _ in range(3)}
    assert heads == {g.seq.head}


# ---------------------------------------------------------------------- vote freshness
def test_vote_since_counts_for_each_kind_what_shows_a_seat_present():
    """``left`` counts a seat's records but its chats, ``timeout`` neither its chats nor its
    acks, ``abandon`` the last record that is neither; a vote-carrying record is a use of its
    kind for its target; a ``resign`` leaves the table (7.5)."""
    g = Game(3)
    accepted = g.seq.records[1]["i"]  # seat 1's accept: its last move so far
    c = fed(g)
    play = c.vote_since("abandon", None)
    ack = g.submit(1, ACK)["i"]
    g.submit(1, {"type": "chat", "text": "still here"})
    c = fed(g)
    assert c.vote_since("left", 1) == ack
    assert c.vote_since("timeout", 1) == accepted
    assert c.vote_since("abandon", None) == play == len(g.seq.records) - 3
    used = g.submit(0, {"type": "left", "seat": 2, "votes": g.votes("left", 2, [0, 1])})["i"]
    c = fed(g)
    assert c.vote_since("left", 2) == used > c.vote_since("timeout", 2)
    assert c.vote_since("timeout", 0) == c.vote_since("abandon", None) == used
    g.submit(1, {"type": "resign"})
    c = fed(g)
    assert c.at_table == {0}


def _host_body(g: Game, c: ChainChecker, body: dict, author: int = 0) -> dict:
    """``body`` signed by ``author`` as the next envelope of the chain ``c``."""
    return sign_envelope(g.ids[author], GAME, author, c.next_counter(author), c.head, body)


def _refused_envelope(c: ChainChecker, env: dict, code: str, fault: int = 0) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        c.check_envelope(env, fault)
    assert (info.value.code, info.value.seat) == (code, fault), info.value
    return info.value


def test_vote_bodies_are_checked_as_the_next_record():
    """7.5: a no contest without votes only at two seats, naming the other seat at the table
    (NO_QUORUM); a no contest by abandon votes names no seat (MALFORMED); a time-out or a
    departure of a seat no longer at the table is WRONG_SEAT; each fault names the seat the
    checker is told to blame."""
    g = game_with_acks(3, rounds=1)
    c = fed(g)
    no_votes = {"type": "no_contest", "seat": 1, "votes": []}
    _refused_envelope(c, _host_body(g, c, no_votes), "NO_QUORUM", fault=2)  # three seats
    abandon = g.votes("abandon", None, [0, 1])
    named = {"type": "no_contest", "seat": 1, "votes": abandon}
    assert "names no seat" in _refused_envelope(c, _host_body(g, c, named), "MALFORMED").detail
    ok = _host_body(g, c, {"type": "no_contest", "seat": None, "votes": abandon})
    assert c.check_envelope(ok, 0) is ok
    g.submit(0, {"type": "left", "seat": 2, "votes": g.votes("left", 2, [0, 1])})
    c = fed(g)
    assert c.at_table == {0, 1}
    gone = {"type": "timeout", "seat": 2, "votes": g.votes("timeout", 2, [0, 1])}
    detail = _refused_envelope(c, _host_body(g, c, gone), "WRONG_SEAT", fault=1).detail
    assert detail == "timeout of seat 2, not at the table"
    # two seats left at the table: no contest without votes, naming the other seat only
    other = _host_body(g, c, no_votes)
    assert c.check_envelope(other, 0) is other
    for seat in (0, 2, None):  # the author itself, a seat gone, nobody
        env = _host_body(g, c, {**no_votes, "seat": seat})
        _refused_envelope(c, env, "NO_QUORUM", fault=1)


def test_vote_freshness_counts_from_what_each_kind_counts():
    """``timeout`` votes count from the target's last record other than an ack (not from the
    table's last play); ``depose`` votes from the host's last signed record, not its last
    authored one; before a seat has authored anything, votes stating record 0 are fresh."""
    g = Game(3, accept=False)  # record 0 only
    c = fed(g)
    for kind in ("left", "timeout"):
        env = _host_body(g, c, {"type": kind, "seat": 2, "votes": g.votes(kind, 2, [0, 1], 0)})
        assert c.check_envelope(env, 0) is env
    g = game_with_acks(3, rounds=1)  # 1, 2: accepts; 3, 4, 5: acks of seats 0, 1, 2
    g.submit(1, {"type": "coin_commit", "step": "x", "commit": bytes(32)})  # 6: seat 1 plays
    c = fed(g)
    fresh = {"type": "timeout", "seat": 2, "votes": g.votes("timeout", 2, [0, 1], 3)}
    env = _host_body(g, c, fresh)
    assert c.check_envelope(env, 0) is env  # seat 2 has only acked since its accept (2)
    stale = {**fresh, "votes": g.votes("timeout", 2, [0, 1], 1)}
    _refused_envelope(c, _host_body(g, c, stale), "STALE_VOTE")
    change = {"type": "host_change", "old": 0, "new": 1, "votes": g.votes("depose", 0, [1, 2], 4)}
    env = _host_body(g, c, change, author=1)  # host 0 authored record 3 but signed 6
    _refused_envelope(c, env, "STALE_VOTE", fault=1)
    change["votes"] = g.votes("depose", 0, [1, 2], 6)
    env = _host_body(g, c, change, author=1)
    assert c.check_envelope(env, 1) is env


def test_an_unsequenced_envelope_takes_its_counter():
    """``count_unsequenced``: an envelope judged outside the chain (21.1) uses its counter,
    so the same envelope again is a duplicate and the next counter is expected."""
    g = game_with_acks(2, rounds=1)
    c = fed(g)
    env = _host_body(g, c, ACK, author=1)
    assert c.check_envelope(env, 0) is env
    c.count_unsequenced(env)
    assert c.next_counter(1) == env["n"] + 1 and c.next_counter(0) == g.authors[0].next_n
    _refused_envelope(c, env, "DUPLICATE")


def test_a_host_given_before_record_zero_lists_every_other_seat_as_candidate():
    g = Game(3)
    c = checker(g, host=1)
    assert c.candidates() == [2, 0] and c.next_host() == 2  # no listen addresses known yet


# ---------------------------------------------------------------------- departures and host changes
def test_left_seat_may_not_send(g):
    g.submit(0, {"type": "left", "seat": 2, "votes": g.votes("left", 2, [0, 1])})
    c = fed(g)
    assert c.at_table == {0, 1}
    env = g.authors[2].envelope(ACK, c.head)
    refused(c, _seq_raw(g, env, c), "WRONG_SEAT", 0)


def test_next_host_takes_over_with_its_own_record(g):
    c = fed(g)
    assert c.next_host() == 1
    seq1 = Sequencer(g.ids[1], GAME, 1, records=g.seq.records)
    change = {"type": "host_change", "old": 0, "new": 1, "votes": g.votes("depose", 0, [1, 2])}
    rec = seq1.submit(g.envelope(1, change), 1, g.t + 5)
    assert rec["h"] == 1
    c.feed(rec)
    # the old host stays at the table as an ordinary seat
    assert c.host == 1 and c.at_table == {0, 1, 2} and c.next_host() == 2
    c.feed(seq1.submit(g.authors[2].envelope(ACK, c.head), 2, g.t + 6))
    # the old host goes on signing: refused, naming it
    stale = make_record(g.ids[0], g.authors[2].envelope(ACK, c.head), 0, c.next_index, c.head,
                        g.t + 7)
    refused(c, stale, "BAD_CHAIN", 0)
    # its envelopes, sequenced by the new host, are accepted again (it resumed as a seat)
    c.feed(seq1.submit(g.authors[0].envelope(ACK, c.head), 0, g.t + 8))
    assert c.host == 1 and 0 in c.at_table


def test_host_change_sequenced_by_the_old_host(g):
    c = fed(g)
    change = {"type": "host_change", "old": 0, "new": 1, "votes": g.votes("depose", 0, [1, 2])}
    env = g.authors[1].envelope(change, c.head)
    c.feed(_seq_raw(g, env, c))
    assert c.host == 1
    after = make_record(g.ids[0], g.authors[2].envelope(ACK, c.head), 0, c.next_index, c.head,
                        g.t + 9)
    refused(c, after, "BAD_CHAIN", 0)


def test_a_later_seat_takes_over_only_with_a_quorum_and_the_old_host_votes_never():
    """The next host is gone (killed with the host, say): seat 2 takes over. With the votes of
    the seats still there (seat 1, alive but not hosting, among them) it is valid; with too few
    votes it is not (so no minority can make a later seat host)."""
    g = game_with_acks(4, rounds=1)
    c = fed(g)
    assert c.candidates() == [1, 2, 3] and c.next_host() == 1
    change = {"type": "host_change", "old": 0, "new": 2, "votes": g.votes("depose", 0, [2, 3])}
    env = g.authors[2].envelope(change, c.head)
    hijack = make_record(g.ids[2], env, 2, c.next_index, c.head, g.t + 1)
    refused(c, hijack, "NO_QUORUM", 2)
    change["votes"] = g.votes("depose", 0, [2, 3, 1])
    env = sign_envelope(g.ids[2], GAME, 2, env["n"], c.head, change)
    c.feed(make_record(g.ids[2], env, 2, c.next_index, c.head, g.t + 1))
    assert c.host == 2 and c.at_table == {0, 1, 2, 3}
    assert c.candidates() == [3, 1]  # seat 0 gave no listen address: it cannot host


def test_once_seats_have_left_the_next_still_there_is_next():
    g = game_with_acks(4, rounds=1)
    g.submit(0, {"type": "left", "seat": 1, "votes": g.votes("left", 1, [0, 2, 3])})
    c = fed(g)
    assert c.next_host() == 2 and c.candidates() == [2, 3]
    change = {"type": "host_change", "old": 0, "new": 1, "votes": g.votes("depose", 0, [1, 2, 3])}
    env = g.authors[1].envelope(change, c.head)
    refused(c, make_record(g.ids[1], env, 1, c.next_index, c.head, g.t + 1), "BAD_CHAIN", 1)


def test_a_host_that_resigned_is_deposed_by_a_quorum_of_the_seats_still_at_the_table():
    """7.6: a host whose seat left the table (its ``resign``) hosts on; a ``depose`` vote's
    target is the host, at the table or not, and the quorum counts the seats at the table (two
    of the three left), while a ``timeout`` of it stays WRONG_SEAT."""
    g = game_with_acks(4, rounds=1)
    g.submit(0, {"type": "resign"})
    c = fed(g)
    assert c.at_table == {1, 2, 3} and c.host == 0
    gone = {"type": "timeout", "seat": 0, "votes": g.votes("timeout", 0, [1, 2])}
    _refused_envelope(c, _host_body(g, c, gone, author=1), "WRONG_SEAT", fault=1)
    change = {"type": "host_change", "old": 0, "new": 1, "votes": g.votes("depose", 0, [1])}
    refused(c, _seq_raw(g, _host_body(g, c, change, author=1), c), "NO_QUORUM", 0)
    change["votes"] = g.votes("depose", 0, [1, 2])
    c.feed(_seq_raw(g, _host_body(g, c, change, author=1), c))
    assert c.host == 1 and c.at_table == {1, 2, 3}


def test_host_change_naming_another_old_host(g):
    c = fed(g)
    change = {"type": "host_change", "old": 2, "new": 1, "votes": g.votes("depose", 2, [0, 1])}
    env = g.authors[1].envelope(change, c.head)
    refused(c, make_record(g.ids[1], env, 1, c.next_index, c.head, g.t + 1), "BAD_CHAIN", 1)


def test_author_counters_are_per_seat():
    g = Game(2, accept=False)
    a = Author(g.ids[1], GAME, 1)
    c = fed(g)
    c.feed(g.seq.submit(a.envelope(ACK, c.head), 1, 1))
    c.feed(g.seq.submit(a.envelope(ACK, c.head), 1, 1))
    assert c.next_counter(1) == 2 and c.next_counter(0) == 1


def test_relay_drops_a_record_and_relinks_the_rest():
    """The host leaves seat 1's envelope out of peer 2's chain and re-signs the later records
    so that they link: the author's next counter, or peer 2's next head echo, gives it away."""
    g = game_with_acks(rounds=1)
    peer1, peer2 = fed(g), fed(g)
    dropped = g.authors[1].envelope(ACK, peer1.head)
    peer1.feed(_seq_raw(g, dropped, peer1))
    n0 = g.authors[0].next_n
    later = sign_envelope(g.ids[0], GAME, 0, n0, peer1.head, ACK)  # echoes the dropped record
    refused(peer2, _seq_raw(g, later, peer2), "FORK", 0)
    # seat 2 writes on the relinked branch; peer 1 sees an echo it does not hold
    other = g.authors[0].envelope(ACK, peer2.head)
    peer2.feed(_seq_raw(g, other, peer2))
    echo = g.authors[2].envelope(ACK, peer2.head)
    refused(peer1, _seq_raw(g, echo, peer1), "FORK", 0)
    # and seat 1's next envelope, relayed to peer 2, skips the dropped counter
    nxt = g.authors[1].envelope(ACK, genesis_hash(GAME))
    refused(peer2, _seq_raw(g, nxt, peer2), "OUT_OF_ORDER", 0)


_FUZZ = game_with_acks(rounds=1)
_FUZZ.submit(2, {"type": "move", "hand": 0, "move": "play", "slot": 3, "suit": 1, "target": None,
                 "declare": False})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_records_raise_only_protocol_errors_and_change_nothing(data):
    c = fed(_FUZZ, -1)
    rec = copy.deepcopy(_FUZZ.seq.records[-1])
    target = data.draw(st.sampled_from([rec, rec["env"], rec["env"]["body"]]))
    key = data.draw(st.sampled_from(sorted(target) + ["extra"]))
    if data.draw(st.booleans()) and key in target:
        del target[key]
    else:
        target[key] = data.draw(
            st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1),
                      st.binary(max_size=70), st.text(max_size=5),
                      st.lists(st.integers(), max_size=2))
        )
    before = snapshot(c)
    try:
        c.feed(rec)
    except ProtocolError as exc:
        assert exc.code in CODES and exc.seat in (0, None)
        assert snapshot(c) == before
    else:
        assert rec == _FUZZ.seq.records[-1]  # only an unchanged record goes in


def test_check_then_feed_and_changed_record_is_checked_again(g):
    c = fed(g, 4)
    r = copy.deepcopy(g.seq.records[4])
    assert c.check(r) is r
    assert c.next_index == 4  # check alone changes nothing
    r["t"] += 1  # altered after the check: feed must not trust the earlier verdict
    refused(c, r, "BAD_SIGNATURE", 0)
    good = g.seq.records[4]
    c.check(good)
    assert c.feed(good) == record_hash(good)
    refused(c, good, "BAD_CHAIN", 0)  # the verdict does not carry over to the next index


def test_commit_applies_the_checked_record_with_each_signature_verified_once(monkeypatch):
    import dernier_p2p.protocol.chain as chain_mod

    g = game_with_acks(3, 2)
    c = fed(g, 4)
    other = fed(g, 4)
    calls = []
    for name in ("verify_record", "verify_envelope", "record_hash"):
        real = getattr(chain_mod, name)
        monkeypatch.setattr(chain_mod, name, lambda *a, _n=name, _r=real: (calls.append(_n),
                                                                            _r(*a))[1])
    rec = g.seq.records[4]
    assert c.check(rec) is rec
    assert c.commit(rec) == other.feed(copy.deepcopy(rec)) == record_hash(rec)
    assert sorted(calls) == sorted(["verify_record", "verify_envelope", "record_hash"] * 2)
    assert snapshot(c) == snapshot(other)
    # another object: the same bytes are known by their hash, other bytes are checked in full
    calls.clear()
    c.check(g.seq.records[5])
    same = copy.deepcopy(g.seq.records[5])
    assert c.commit(same) == record_hash(same)
    assert sorted(calls) == sorted(["verify_record", "verify_envelope"] + ["record_hash"] * 2)
    c.check(g.seq.records[6])
    changed = copy.deepcopy(g.seq.records[6])
    changed["t"] += 1
    with pytest.raises(ProtocolError) as info:
        c.commit(changed)
    assert info.value.code == "BAD_SIGNATURE" and c.next_index == 6


# ---------------------------------------------------------------------- host turn and host keys
def test_no_host_change_to_a_seat_without_a_listen_address(g):
    """Seat 0 (the first host) gave no listen address in the table: after seat 1 took over,
    a host change back to seat 0 is refused (BAD_CHAIN), whoever signs it; seat 2 may."""
    c = fed(g)
    assert c.next_host() == 1
    env = g.authors[1].envelope(_change(g, 1), c.head)
    c.feed(_seq_raw(g, env, c))
    assert c.host == 1 and c.candidates() == [2]
    back = {"type": "host_change", "old": 1, "new": 0,
            "votes": [sign_vote(g.ids[v], GAME, "depose", 1, v, c.next_index - 1)
                      for v in (0, 2)]}
    env0 = sign_envelope(g.ids[0], GAME, 0, c.next_counter(0), c.head, back)
    refused(c, make_record(g.ids[0], env0, 0, c.next_index, c.head, g.t + 2), "BAD_CHAIN", 0)
    refused(c, make_record(g.ids[1], env0, 1, c.next_index, c.head, g.t + 2), "BAD_CHAIN", 1)


def _change(g: Game, new: int) -> dict:
    """Seat ``new``'s host change from seat 0, with the depose votes of the two other seats."""
    return {"type": "host_change", "old": 0, "new": new,
            "votes": g.votes("depose", 0, [new, 3 - new])}


def _keyless_seat_one() -> tuple[Game, ChainChecker]:
    """A 3-seat game whose seat 1 has no host key."""
    g = game_with_acks(rounds=1)
    c = ChainChecker(GAME, {0: g.keys[0], 2: g.keys[2]}, g.keys)
    for r in g.seq.records:
        c.feed(r)
    return g, c


def test_next_host_skips_a_seat_without_a_host_key():
    g, c = _keyless_seat_one()
    assert c.next_host() == 2
    # seat 1 may not take over, even sequenced by the host
    env = g.authors[1].envelope(_change(g, 1), c.head)
    refused(c, _seq_raw(g, env, c), "BAD_CHAIN", 0)
    # seat 2 may, signing its own record
    env = g.authors[2].envelope(_change(g, 2), c.head)
    c.feed(make_record(g.ids[2], env, 2, c.next_index, c.head, g.t + 1))
    assert c.host == 2 and c.at_table == {0, 1, 2}  # the old host stays a seat
    # seat 1 is still at the table but may never host; seat 0 gave no listen address
    assert c.candidates() == [] and c.next_host() is None


def test_record_signed_as_a_seat_without_a_host_key_is_a_protocol_error():
    g, c = _keyless_seat_one()
    # seat 1 signs its own host change with its identity key: no host key, BAD_CHAIN
    env = g.authors[1].envelope(_change(g, 1), c.head)
    rec = make_record(g.ids[1], env, 1, c.next_index, c.head, g.t + 1)
    refused(c, rec, "BAD_CHAIN", 0)
    ack = make_record(g.ids[1], g.authors[1].envelope(ACK, c.head), 1, c.next_index, c.head,
                      g.t + 1)
    refused(c, ack, "BAD_CHAIN", 0)
    # the same before record 0, with no host given
    fresh = ChainChecker(GAME, {0: g.keys[0], 2: g.keys[2]}, g.keys)
    first = make_record(g.ids[1], g.seq.records[0]["env"], 1, 0, genesis_hash(GAME),
                        g.seq.records[0]["t"])
    refused(fresh, first, "BAD_CHAIN", None)


def test_constructor_bounds_on_seats_and_table_size():
    keys = [k.public_bytes() for k in identities(11)]
    assert ChainChecker(GAME, keys[:10], keys[:10]).n == 10
    assert ChainChecker(GAME, keys[:2], keys[:2]).n == 2
    for players in (keys[:11], keys[:1], {0: keys[0], 2: keys[2]}):
        with pytest.raises(ValueError):
            ChainChecker(GAME, keys[:1], players)
    for host_keys in ({True: keys[1]}, {-1: keys[0]}, {0.0: keys[0]}, {"0": keys[0]}):
        with pytest.raises(ValueError):
            ChainChecker(GAME, host_keys, keys[:3])
    assert ChainChecker(GAME, {2: keys[2]}, keys[:3], host=2).host == 2


def test_seats_beyond_the_table_are_malformed_not_just_absent(g):
    """At a 3-seat table, seat 3..9 in an envelope or as a record's host is MALFORMED (the
    structure check knows the table size), not a seat that merely left or has no host key."""
    c = fed(g)
    for seat in (3, 9):
        env = sign_envelope(g.ids[1], GAME, seat, 0, c.head, ACK)
        refused(c, _seq_raw(g, env, c), "MALFORMED", 0)
        rec = make_record(g.ids[0], g.authors[1].envelope(ACK, c.head), seat, c.next_index,
                          c.head, g.t + 1)
        refused(c, rec, "MALFORMED", 0)
        with pytest.raises(ProtocolError) as info:  # the host vetting an envelope it received
            c.check_envelope(env, 1)
        assert (info.value.code, info.value.seat) == ("MALFORMED", 1)


def test_a_record_signed_by_one_seat_carrying_another_seats_host_change(g):
    c = fed(g)
    # seat 2 signs seat 1's (in turn) host change: only the new host may sign its own
    env = g.authors[1].envelope(_change(g, 1), c.head)
    refused(c, make_record(g.ids[2], env, 2, c.next_index, c.head, g.t + 1), "BAD_CHAIN", 2)
    # the next host signs a host change it authored naming another seat
    bad = sign_envelope(g.ids[1], GAME, 1, env["n"], c.head, _change(g, 2))
    refused(c, make_record(g.ids[1], bad, 1, c.next_index, c.head, g.t + 1), "BAD_CHAIN", 1)
    # the next host signs something else than a host change
    ack = sign_envelope(g.ids[1], GAME, 1, env["n"], c.head, ACK)
    refused(c, make_record(g.ids[1], ack, 1, c.next_index, c.head, g.t + 1), "BAD_CHAIN", 1)
    c.feed(make_record(g.ids[1], env, 1, c.next_index, c.head, g.t + 1))
    assert c.host == 1


# ---------------------------------------------------------------------- two records, one index
def test_a_second_record_for_a_held_index_after_the_same_record_is_a_fork_of_its_signer(g):
    c = fed(g, 6)
    r = g.seq.records[4]
    err = refused(c, resign(g, r, t=r["t"] + 1), "FORK", 0)  # validly signed, another hash
    assert "index 4" in err.detail
    assert c.signer_of(4) == 0 and c.signer_of(6) is None and c.signer_of(-1) is None
    # one that follows another record, or is not its signer's, or the same one: no proof
    refused(c, resign(g, r, prev=g.seq.records[2]["prev"]), "BAD_CHAIN", 0)
    refused(c, r, "BAD_CHAIN", 0)
    refused(c, resign(g, r, signer=1, h=1, t=r["t"] + 1), "BAD_CHAIN", 1)
    forged = dict(resign(g, r, t=r["t"] + 1))
    forged["hsig"] = bytes(64)
    refused(c, forged, "BAD_SIGNATURE", 0)


def test_a_second_record_for_record_zero_follows_the_genesis(g):
    c = fed(g, 2)
    r = g.seq.records[0]
    refused(c, resign(g, r, t=r["t"] + 1), "FORK", 0)


def test_a_second_record_at_a_host_change_is_the_new_hosts_fork_only(g):
    c = fed(g)
    seq1 = Sequencer(g.ids[1], GAME, 1, records=g.seq.records)
    change = {"type": "host_change", "old": 0, "new": 1, "votes": g.votes("depose", 0, [1, 2])}
    rec = seq1.submit(g.envelope(1, change), 1, g.t + 5)
    c.feed(rec)
    c.feed(seq1.submit(g.authors[2].envelope(ACK, c.head), 2, g.t + 6))
    i = rec["i"]
    old = make_record(g.ids[0], g.authors[2].envelope(ACK, rec["prev"]), 0, i, rec["prev"],
                      g.t + 5)  # the old host's record there: stale, not the signer's fault
    assert c.stale(old) and not c.from_link(old)
    refused(c, old, "BAD_CHAIN", 1)  # (from the host: not the next record, the host's)
    refused(c, resign(g, rec, signer=1, t=rec["t"] + 1), "FORK", 1)


def test_records_a_frozen_old_host_signs_before_it_learns_of_its_replacement_are_stale(g):
    """The old host, frozen while a quorum deposed it, thaws and sequences on its own chain:
    its records at and after the host change's index that do not follow it are stale (no fault
    of its, PROTOCOL.md 7.6); one that follows the host change is its fault."""
    c = fed(g)
    j = c.next_index
    before = c.head
    seq0 = Sequencer(g.ids[0], GAME, 0, records=g.seq.records)  # the old host's own chain
    seq1 = Sequencer(g.ids[1], GAME, 1, records=g.seq.records)
    change = {"type": "host_change", "old": 0, "new": 1, "votes": g.votes("depose", 0, [1, 2])}
    c.feed(seq1.submit(g.envelope(1, change), 1, g.t + 5))
    c.feed(seq1.submit(Author(g.ids[2], GAME, 2, g.authors[2].next_n).envelope(ACK, c.head),
                       2, g.t + 6))
    assert c.replaced_at(0, j) == j and c.replaced_at(0, j + 5) == j
    assert c.replaced_at(1, j) is None and c.replaced_at(0, j - 1) is None
    n2 = g.authors[2].next_n
    first = seq0.submit(Author(g.ids[2], GAME, 2, n2).envelope(ACK, before), 2, g.t + 5)
    second = seq0.submit(Author(g.ids[2], GAME, 2, n2 + 1).envelope(ACK, before), 2, g.t + 6)
    third = seq0.submit(Author(g.ids[2], GAME, 2, n2 + 2).envelope(ACK, before), 2, g.t + 7)
    assert (first["i"], second["i"], third["i"]) == (j, j + 1, j + 2)
    for rec in (first, second, third):  # at a held index, at the next one, beyond
        assert c.stale(rec) and not c.from_link(rec)
        refused(c, rec, "BAD_CHAIN", 1)
    # one that follows the host change: the old host saw it and signed on, its fault
    after = make_record(g.ids[0], g.authors[2].envelope(ACK, c.head), 0, c.next_index, c.head,
                        g.t + 8)
    assert not c.stale(after)
    refused(c, after, "BAD_CHAIN", 0)
    assert not c.stale(None) and not c.stale({})


def test_signed_says_whether_the_record_signature_is_its_signers(g):
    c = fed(g, 3)
    r = g.seq.records[4]
    assert c.signed(r) and c.signed(g.seq.records[0])  # wherever it goes
    assert c.signed(resign(g, r, i=40))
    assert not c.signed(resign(g, r, signer=1))  # claims seat 0
    assert c.signed(resign(g, r, signer=1, h=1))
    for bad in (None, 5, [], {}, {**r, "x": 1}, {**r, "h": 7}, {**r, "hsig": bytes(64)},
                {**r, "i": True}):
        assert not c.signed(bad)
    keyless = ChainChecker(GAME, {0: g.keys[0], 2: g.keys[2]}, g.keys)
    assert not keyless.signed(resign(g, r, signer=1, h=1))


def test_from_link_takes_the_next_record_and_a_fork_only(g):
    c = fed(g, 4)
    recs = g.seq.records
    assert c.from_link(recs[4])  # the next one, following the head
    assert not c.from_link(recs[3])  # held: nothing to do
    assert not c.from_link(recs[5])  # beyond the next
    assert c.from_link(resign(g, recs[2], t=recs[2]["t"] + 1))  # a fork: to be checked
    assert not c.from_link(resign(g, recs[2], prev=recs[0]["prev"]))  # proves nothing
    assert not c.from_link(resign(g, recs[4], prev=recs[2]["prev"]))  # does not follow
    assert not c.from_link(resign(g, recs[4], signer=1, h=1))  # not signed by the host
    assert not c.from_link(resign(g, recs[4], signer=1))  # not its signer's signature
    bad_sig = dict(recs[4])
    bad_sig["hsig"] = bytes(64)
    assert not c.from_link(bad_sig)
    for junk in (None, "rec", [recs[4]], {}, {**recs[4], "extra": 1}, {**recs[4], "h": 99}):
        assert not c.from_link(junk)
    assert c.next_index == 4  # nothing changed
    # a record taken from a link that then fails its checks is the signer's fault
    forged = sign_envelope(g.ids[0], GAME, 2, g.authors[2].next_n, c.head, ACK)
    raw = make_record(g.ids[0], forged, 0, c.next_index, c.head, recs[4]["t"])
    assert c.from_link(raw)
    refused(c, raw, "BAD_SIGNATURE", 0)


def test_the_next_host_taking_over_with_its_record_is_taken_from_a_link(g):
    c = fed(g)
    seq1 = Sequencer(g.ids[1], GAME, 1, records=g.seq.records)
    change = {"type": "host_change", "old": 0, "new": 1, "votes": g.votes("depose", 0, [1, 2])}
    rec = seq1.submit(g.envelope(1, change), 1, g.t + 5)
    assert c.from_link(rec)


def test_a_host_replaced_and_hosting_again_signs_its_own_indices():
    """Seat 1 takes over from seat 0, seat 2 from seat 1, then seat 1 from seat 2: seat 1's
    records of its second turn are its own (judged as any host's); a record seat 2 signs where
    seat 1 took over again is stale."""
    g = game_with_acks(4, rounds=1)
    c = fed(g)
    records = list(g.seq.records)

    def change(seq: Sequencer, old: int, new: int, voters: list[int]) -> None:
        body = {"type": "host_change", "old": old, "new": new,
                "votes": [sign_vote(g.ids[v], GAME, "depose", old, v, c.next_index - 1)
                          for v in voters]}
        rec = seq.submit(g.authors[new].envelope(body, c.head), new, g.t + c.next_index)
        c.feed(rec)
        rec = seq.submit(g.authors[3].envelope(ACK, c.head), 3, g.t + c.next_index)
        c.feed(rec)
        records.extend(seq.records[-2:])

    change(Sequencer(g.ids[1], GAME, 1, records=records), 0, 1, [1, 2, 3])
    j = c.next_index - 2
    change(seq2 := Sequencer(g.ids[2], GAME, 2, records=records), 1, 2, [0, 2, 3])
    k = c.next_index - 2
    change(seq1 := Sequencer(g.ids[1], GAME, 1, records=records), 2, 1, [0, 1, 3])
    m = c.next_index - 2
    assert c.host == 1
    assert c.replaced_at(0, j) == j and c.replaced_at(0, c.next_index) == j
    assert c.replaced_at(1, k) == k and c.replaced_at(1, m) is None
    assert c.replaced_at(1, c.next_index) is None and c.replaced_at(2, c.next_index) == m
    mine = seq1.records[-1]
    assert not c.stale(mine) and not c.stale(resign(g, mine, signer=1, t=mine["t"] + 1))
    refused(c, resign(g, mine, signer=1, t=mine["t"] + 1), "FORK", 1)
    head2 = seq2.head
    late = make_record(g.ids[2], Author(g.ids[3], GAME, 3, c.next_counter(3) - 1).envelope(
        ACK, head2), 2, m, head2, g.t + 99)  # seat 2's own record where seat 1 took over
    assert c.stale(late)
    refused(c, late, "BAD_CHAIN", 1)
