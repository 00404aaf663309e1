"""A peer node's records from links and its proofs (PROTOCOL.md 4.6; protocol/node/peer.py).

Records lent over a link, or shown as the proof of a fault of the host, are checked as the
host's only when they are the next record or a second record for an index the seat holds,
signed by the seat that signs that index; anything else is ignored, and nobody is blamed. A
seat that stops on a record of the host that proves the fault keeps it, shows a proof and
lends it at once to the other seats it can reach. The tables are real (three seats at the
accepts and the dealer coin, :mod:`tests.protocol.liveness`); time is an integer.
"""

from __future__ import annotations

from typing import Any

import pytest

from dernier_p2p.protocol.envelope import make_record, record_hash
from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.local import identity_for
from dernier_p2p.protocol.node import effects as fx
from dernier_p2p.protocol.node import peer
from dernier_p2p.protocol.node.peer import PeerNode
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.protocol.votes import vote_frame
from dernier_p2p.wire.hashing import digest
from tests.protocol.liveness import TRY, Bed

HOST = 0


@pytest.fixture(scope="module")
def table() -> Bed:
    """Records 0 (the table), 1, 2, 3 (the accepts of seats 0, 2, 1), 4, 5, 6 (the coin
    commitments of seats 0, 1, 2)."""
    bed = Bed.opened()
    bed.accept(0, 2, 1)
    for seat in (0, 1, 2):
        bed.put(bed.take(seat, "coin_commit"))
    return bed


def node_of(bed: Bed, seat: int, upto: int, now: int = 0) -> PeerNode:
    """Seat ``seat``'s node holding records ``0 .. upto - 1``, connected to the host."""
    t = bed.t
    seed = digest("dernier-p2p/local-seed", t.seeds[seat])
    node = PeerNode.seated(t.identities[seat], seed, bed.records[:upto], now, connected=True)
    node.take()
    return node


def run(node: PeerNode, now: int = 0) -> list[Any]:
    while node.has_work():
        node.work(now)
    return node.take()


def second(bed: Bed, i: int, signer: int = HOST, **changes: Any) -> dict:
    """Another record for index ``i``, signed by ``signer`` (the host: two records for one
    index), ``changes`` applied (by default a later time)."""
    r = bed.records[i]
    fields = {"env": r["env"], "h": r["h"], "i": r["i"], "prev": r["prev"], "t": r["t"] + 1}
    fields.update(changes)
    return make_record(bed.t.identities[signer], fields["env"], fields["h"], fields["i"],
                       fields["prev"], fields["t"])


def forged(bed: Bed, i: int) -> dict:
    """Record ``i`` with an envelope its author did not sign, signed by the host."""
    r = bed.records[i]
    env = dict(r["env"], sig=bytes([r["env"]["sig"][0] ^ 1]) + r["env"]["sig"][1:])
    return make_record(bed.t.identities[HOST], env, r["h"], r["i"], r["prev"], r["t"])


def unsigned(rec: dict) -> dict:
    return dict(rec, hsig=bytes([rec["hsig"][0] ^ 1]) + rec["hsig"][1:])


def persisted(effects: list[Any]) -> list[dict]:
    return [e.record for e in effects if isinstance(e, fx.Persist)]


def stops(effects: list[Any]) -> list[tuple[str, int | None]]:
    return [(e.fault.code, e.fault.seat) for e in effects if isinstance(e, fx.Stopped)]


def lends(effects: list[Any]) -> list[tuple[int, list[dict]]]:
    return [(e.seat, e.records) for e in effects if isinstance(e, act.Lend)]


# ---------------------------------------------------------------------- lent records
def test_a_lent_next_record_is_applied_as_the_hosts_and_a_held_one_skipped(table: Bed):
    recs = table.records
    node = node_of(table, 2, 3)
    node.from_link(1, recs[3], 10)
    out = run(node, 10)
    assert persisted(out) == [recs[3]] and node.own.last == 3
    assert node.watch.waits.counted == 4  # the seat's clocks count it
    node.from_link(1, recs[2], 20)  # held: nothing to do
    node.from_link(1, recs[3], 20)
    assert not node.has_work() and not node.queue


def test_a_lent_batch_is_applied_in_order_and_a_repeat_in_it_dropped(table: Bed):
    recs = table.records
    node = node_of(table, 2, 3)
    for rec in (recs[3], recs[4], recs[4], recs[5]):
        node.from_link(1, rec, 10)
    assert len(node.queue) == 3
    assert persisted(run(node, 10)) == recs[3:6]
    assert node.from_links == {}  # nothing of seat 1 queued now


@pytest.mark.parametrize("bad", ["another prev", "bad signature", "not the host", "beyond",
                                 "junk"])
def test_a_lent_record_that_is_not_the_hosts_next_is_ignored_blaming_nobody(
    table: Bed, bad: str
) -> None:
    recs = table.records
    node = node_of(table, 2, 3)
    rec: Any = {
        "another prev": second(table, 3, prev=recs[1]["prev"]),
        "bad signature": unsigned(recs[3]),
        "not the host": second(table, 3, signer=1, h=1),
        "beyond": recs[5],
        "junk": {"i": 3, "hsig": b"x"},
    }[bad]
    node.from_link(1, rec, 10)
    out = run(node, 10)
    assert stops(out) == [] and persisted(out) == [] and node.stopped is None
    assert node.own.last == 2
    node.from_link(1, recs[3], 20)
    if bad in ("bad signature", "junk"):  # a seat that lent an unsigned record: not heard again
        assert persisted(run(node, 20)) == [] and node.bad_lenders == {1}
        node.from_host({"k": "rec", "rec": recs[3]}, 30)
        assert persisted(run(node, 30)) == [recs[3]]
    else:  # the right one is still taken
        assert persisted(run(node, 20)) == [recs[3]] and node.bad_lenders == set()


def test_lent_records_come_in_order_within_a_bound_and_are_verified_last(table: Bed):
    """A gap, a repeat or more than MAX_FROM_LINK waiting are ignored before any signature
    is checked (no seat can make this one verify without end)."""
    recs = table.records
    node = node_of(table, 2, 3)
    node.from_link(1, unsigned(recs[5]), 10)  # a gap: not even verified
    assert node.bad_lenders == set() and not node.queue
    node.from_link(1, recs[3], 10)
    node.from_link(1, unsigned(recs[3]), 10)  # a repeat of what it lent: not verified
    assert node.bad_lenders == set() and len(node.queue) == 1
    node.from_links[1] = (3, peer.MAX_FROM_LINK)  # as if that many were waiting
    node.from_link(1, recs[4], 10)
    assert len(node.queue) == 1


@pytest.mark.parametrize("junk", [None, 7, "rec", [], {}, {"i": -1}])
def test_anything_but_a_record_from_a_link_is_ignored(table: Bed, junk: Any) -> None:
    node = node_of(table, 2, 3)
    node.from_link(1, junk, 10)
    node.probe_answer(1, (2, [], junk), 10)
    assert stops(run(node, 10)) == [] and node.stopped is None


def test_a_lent_record_of_the_host_that_chains_and_fails_is_the_hosts_fault(table: Bed):
    node = node_of(table, 2, 3)
    bad = forged(table, 3)
    node.from_link(1, bad, 10)
    out = run(node, 10)
    assert stops(out) == [("BAD_SIGNATURE", HOST)]  # the host signed it, whoever carried it
    assert persisted(out) == [bad]  # kept: the evidence
    assert node.proof is bad
    assert lends(out) == [(1, [bad])]  # lent at once to the seats it reaches (not the host)


def test_records_from_links_outlive_the_host_connection(table: Bed):
    node = node_of(table, 2, 3)
    node.from_link(1, table.records[3], 10)
    node.from_host({"k": "rec", "rec": table.records[3]}, 10)
    node.closed(11)
    assert len(node.queue) == 1
    assert persisted(run(node, 12)) == [table.records[3]]


# ---------------------------------------------------------------------- proofs shown
def test_a_proof_of_two_records_for_one_index_stops_the_seat_naming_the_host(table: Bed):
    node = node_of(table, 2, 6)
    other = second(table, 3)
    node.probe_answer(1, (2, [], other), 50)
    out = run(node, 50)
    assert stops(out) == [("FORK", HOST)]
    assert persisted(out) == [other]  # after its own records: the evidence
    assert node.proof is other  # the one the others are not expected to hold
    # both records of the fork: seat 1 showed ``other`` and holds it; ours stops it too
    assert lends(out) == [(1, [other, table.records[3]])]
    assert node.present() == (5, [], other, None)


def test_a_lent_second_record_for_a_held_index_stops_the_seat_and_both_are_lent_back(
    table: Bed,
) -> None:
    """Seat 1 was shown another record 3 than this seat's: lent, it is the evidence of a
    fork; this seat lends seat 1 its own record 3, which seat 1 lacks, with seat 1's."""
    node = node_of(table, 2, 5)
    other = second(table, 3)
    node.from_link(1, other, 50)
    out = run(node, 50)
    assert stops(out) == [("FORK", HOST)] and persisted(out) == [other]
    assert lends(out) == [(1, [other, table.records[3]])]


def test_a_proof_lent_ahead_of_a_lagging_seat_stops_it_once_it_reaches_that_index(
    table: Bed,
) -> None:
    """Seed 1001488: the host equivocated at index 5 and the seats it showed both records
    lent them at once (4.6); this seat, slower to hear its host, held only up to 3 and could
    not check them then. It keeps the host's records lent ahead (a few per lender) and takes
    them again once it reaches their index: its host's record 5 comes, the other one is a
    second record for a held index, and it stops on the fork naming the host."""
    node = node_of(table, 2, 4)
    other = second(table, 5)
    node.from_link(1, other, 50)
    node.from_link(1, other, 50)  # (the same again: kept once)
    assert stops(run(node, 50)) == [] and node.ahead == {1: [other]}
    node.from_host({"k": "rec", "rec": table.records[4]}, 60)
    node.from_host({"k": "rec", "rec": table.records[5]}, 60)
    out = run(node, 60)
    assert stops(out) == [("FORK", HOST)] and node.own.last == 5 and not node.ahead


def test_records_lent_ahead_are_kept_within_a_bound_and_only_the_hosts(table: Bed) -> None:
    node = node_of(table, 2, 3)
    ahead = [second(table, i) for i in (5, 6)] + [second(table, 6, t=10**6 + k)
                                                  for k in range(4)]
    for rec in ahead:
        node.from_link(1, rec, 50)
    node.from_link(1, second(table, 5, signer=1), 50)  # not the host's: not kept
    assert node.ahead == {1: ahead[:peer.MAX_AHEAD]}


@pytest.mark.parametrize("bad", ["bad signature", "another prev", "the same hash", "not the "
                                 "signer of that index", "beyond"])
def test_a_proof_that_proves_nothing_is_ignored(table: Bed, bad: str) -> None:
    recs = table.records
    node = node_of(table, 2, 5)
    proof = {
        "bad signature": unsigned(second(table, 3)),
        "another prev": second(table, 3, prev=recs[1]["prev"]),
        "the same hash": recs[3],
        "not the signer of that index": second(table, 3, signer=1, h=1),
        "beyond": second(table, 6),
    }[bad]
    node.probe_answer(1, (4, [], proof), 50)
    out = run(node, 50)
    assert stops(out) == [] and persisted(out) == [] and node.proof is None


def test_a_proof_that_is_the_next_record_is_checked_and_applied_as_the_hosts(table: Bed):
    node = node_of(table, 2, 3)
    node.probe_answer(1, (3, [], table.records[3]), 50)
    assert persisted(run(node, 50)) == [table.records[3]]
    node = node_of(table, 2, 3)
    bad = forged(table, 3)
    node.probe_answer(1, (2, [], bad), 50)
    out = run(node, 50)
    assert stops(out) == [("BAD_SIGNATURE", HOST)] and persisted(out) == [bad]


def test_an_equivocation_applied_from_a_proof_is_a_fork_when_the_host_sends_its_other(
    table: Bed,
) -> None:
    """A seat one record behind takes the victim's record as its next; the host's own comes
    after: two records for one index, the host's the one it refused."""
    node = node_of(table, 2, 3)
    other = second(table, 3)
    node.probe_answer(1, (3, [], other), 50)
    assert persisted(run(node, 50)) == [other]
    node.from_host({"k": "rec", "rec": table.records[3]}, 60)
    out = run(node, 60)
    assert stops(out) == [("FORK", HOST)] and persisted(out) == [table.records[3]]
    assert node.proof is other  # its own record there: the host sends the others the other


# ---------------------------------------------------------------------- stops and proofs
def test_a_host_record_that_does_not_follow_stops_the_seat_with_its_own_as_proof(table: Bed):
    """The host equivocated: this seat holds its record 3; the host's next follows another."""
    node = node_of(table, 2, 3)
    mine = second(table, 3)
    node.from_host({"k": "rec", "rec": mine}, 10)
    node.from_host({"k": "rec", "rec": table.records[4]}, 10)
    out = run(node, 10)
    assert stops(out) == [("BAD_CHAIN", HOST)]
    assert persisted(out) == [mine, table.records[4]]  # the refused one kept too
    assert node.proof is mine
    assert lends(out) == [(1, [mine])]


def test_a_second_host_record_for_a_held_index_shows_the_seats_own(table: Bed):
    node = node_of(table, 2, 5)
    other = second(table, 3)
    node.from_host({"k": "rec", "rec": other}, 10)
    out = run(node, 10)
    assert stops(out) == [("FORK", HOST)] and persisted(out) == [other]
    assert node.proof is table.records[3]
    assert lends(out) == [(1, [table.records[3], other])]


# ---------------------------------------------------------------------- a head refused
def test_a_head_the_host_says_it_does_not_hold_is_shown_to_the_other_seats(table: Bed):
    """The host refuses this seat's envelope as echoing a head it does not hold (FORK), a
    record it signed: it may have sent this seat another record than the others there. The
    seat lends that record to the seats it reaches (not the host), once."""
    node = node_of(table, 2, 3)
    node.send_own(node.own.session.ack(), 10)  # echoes record 2, signed by the host
    node.take()
    error = {"k": "error", "code": "FORK", "detail": "seat 2 echoes a head this chain does "
             "not hold"}
    node.from_host(error, 20)
    out = node.take()
    assert lends(out) == [(1, [table.records[2]])] and stops(out) == []
    node.from_host(error, 30)  # once per record
    assert lends(node.take()) == []


def test_another_refusal_shows_nothing(table: Bed):
    node = node_of(table, 2, 3)
    node.send_own(node.own.session.ack(), 10)
    node.take()
    node.from_host({"k": "error", "code": "DUPLICATE", "detail": "counter reused"}, 20)
    assert lends(node.take()) == []


def _forked_then_refused(bed: Bed) -> tuple[dict, PeerNode, list[tuple[int, list[dict]]]]:
    """Seat 2, holding records 0 to 2, gets from the host another record 3 than the table's,
    acks it, and has the host refuse that ack's head (FORK): the other record 3, seat 2's
    node, and what it lent then."""
    other = second(bed, 3)
    two = node_of(bed, 2, 3)
    two.from_host({"k": "rec", "rec": other}, 10)
    run(two, 10)
    two.send_own(two.own.session.ack(), 11)
    two.take()
    two.from_host({"k": "error", "code": "FORK", "detail": "a head it does not hold"}, 20)
    return other, two, lends(two.take())


def test_a_fork_shown_by_the_head_refused_stops_every_seat_naming_the_host(table: Bed):
    """The host sent seat 2 another record 3 than seat 1: seat 2 shows it when the host
    refuses its head; seat 1 stops on the fork and lends both back; seat 2 stops too."""
    other, two, shown = _forked_then_refused(table)
    assert shown == [(1, [other])]
    one = node_of(table, 1, 5)
    for rec in shown[0][1]:
        one.from_link(2, rec, 30)
    out = run(one, 30)
    assert stops(out) == [("FORK", HOST)]
    back = lends(out)
    assert back == [(2, [other, table.records[3]])]
    for rec in back[0][1]:
        two.from_link(1, rec, 40)
    assert stops(run(two, 40)) == [("FORK", HOST)]


# ---------------------------------------------------------------------- a new host's chain
@pytest.mark.parametrize("last", [4, 5])
def test_a_new_hosts_first_record_that_does_not_follow_is_a_divergence_not_a_fault(
    table: Bed, last: int
) -> None:
    """Seat 2 resumes with seat 1, a host change it has not seen, at its own index or past
    it: a first record whose ``prev`` is not this seat's head means the chains differ since
    the host change (4.4): it rebuilds from the new host's records, blaming nobody."""
    node = node_of(table, 2, 5)  # records 0 .. 4
    node.welcomed(1, 2, last, 10)
    node.take()
    node.from_host({"k": "rec", "rec": second(table, 5, prev=table.records[3]["prev"])}, 20)
    out = run(node, 20)
    assert stops(out) == [] and node.stopped is None
    assert any(isinstance(e, fx.Close) and e.why == "rebuilding" for e in out)


@pytest.mark.parametrize("how", ["gap", "bad signature"])
def test_a_host_fault_no_record_proves_stops_the_seat_without_a_proof(table: Bed, how: str):
    node = node_of(table, 2, 3)
    rec = table.records[4] if how == "gap" else unsigned(table.records[3])
    node.from_host({"k": "rec", "rec": rec}, 10)
    out = run(node, 10)
    assert stops(out) == [("BAD_CHAIN" if how == "gap" else "BAD_SIGNATURE", HOST)]
    assert persisted(out) == [] and lends(out) == [] and node.proof is None
    assert not node.lingering(10)


def test_a_proof_goes_to_the_seats_with_an_address_only():
    bed = Bed.opened(listen=(True, False, True))
    bed.accept(0, 1, 2)
    node = node_of(bed, 2, 2)
    node.from_host({"k": "rec", "rec": forged(bed, 2)}, 10)
    out = run(node, 10)
    assert stops(out) == [("BAD_SIGNATURE", HOST)] and lends(out) == []  # seat 1: no address


def test_a_proof_a_seat_without_an_address_could_not_be_lent_is_shown_until_it_probes():
    """Seat 1 gives no address, so the proof is lent to nobody: seat 2 answers links beyond
    ``stuck_ms``, up to ``2 * stuck_ms`` after it stopped, until seat 1 has probed it once
    (its ``present`` carried the proof); then for ``stuck_ms`` after that probe."""
    bed = Bed.opened(listen=(True, False, True))
    bed.accept(0, 1, 2)
    node = node_of(bed, 2, 2)
    node.from_host({"k": "rec", "rec": forged(bed, 2)}, 1_000)
    run(node, 1_000)
    stuck = node._budgets().stuck_ms
    assert node.unshown == {1}
    assert node.lingering(1_000 + stuck) and node.lingering(1_000 + 2 * stuck - 1)
    assert not node.lingering(1_000 + 2 * stuck)
    assert node.linger_deadline(1_000 + stuck) == 1_000 + 2 * stuck
    node.probed(1_000 + stuck + 5, 0)  # (not a seat it waits for: the host)
    assert node.unshown == {1}
    node.probed(1_000 + stuck + 10, 1)
    assert node.unshown == set()
    end = 1_000 + 2 * stuck + 10
    assert node.lingering(end - 1) and not node.lingering(end)
    assert node.linger_deadline(end - 1) == end and node.linger_deadline(end) is None


def test_a_stopped_seat_no_link_reaches_waits_for_no_probe():
    """Seat 2 gives no address itself: no seat can probe it, so it waits for none."""
    bed = Bed.opened(listen=(True, False, False))
    bed.accept(0, 1, 2)
    node = node_of(bed, 2, 2)
    node.from_host({"k": "rec", "rec": forged(bed, 2)}, 1_000)
    run(node, 1_000)
    stuck = node._budgets().stuck_ms
    assert node.proof is not None and node.unshown == set()
    node.lend_failed(1)
    assert node.unshown == set() and not node.lingering(1_000 + stuck)


def test_a_failed_lend_of_the_proof_waits_for_that_seats_probe(table: Bed):
    node = node_of(table, 2, 3)
    node.lend_failed(1)  # (not stopped: nothing to wait for)
    assert node.unshown == set()
    node.from_link(1, forged(table, 3), 1_000)
    run(node, 1_000)
    stuck = node._budgets().stuck_ms
    assert node.unshown == set() and not node.lingering(1_000 + stuck)
    node.lend_failed(7)  # (no such seat)
    node.lend_failed(HOST)
    assert node.unshown == set()
    node.lend_failed(1)
    assert node.unshown == {1} and node.lingering(1_000 + stuck)


def test_present_shows_the_highest_head_the_host_refused_while_no_proof_of_its_own(
    table: Bed,
) -> None:
    """A seat with no proof whose host refused heads it signed (FORK) shows the record at the
    highest of them in its ``present``: a prober with no address, never lent it, finds a fork
    there. A proof of its own comes first."""
    node = node_of(table, 2, 3)
    node.send_own(node.own.session.ack(), 10)  # echoes record 2
    node.take()
    error = {"k": "error", "code": "FORK", "detail": "a head it does not hold"}
    node.from_host(error, 20)
    assert node.present()[2] is table.records[2]
    node.from_host({"k": "rec", "rec": table.records[3]}, 30)
    run(node, 30)
    node.send_own(node.own.session.ack(), 31)  # echoes record 3 (record 2's ack is pending)
    node.take()
    node.from_host(error, 40)
    node.from_host(error, 41)
    assert node.shown_heads == {2, 3} and node.present()[2] is node.own.records[3]
    node.from_host({"k": "rec", "rec": unsigned(table.records[4])}, 50)
    run(node, 50)
    assert node.stopped is not None and node.proof is None  # (a fault no record proves)
    assert node.present()[2] is node.own.records[3]


def test_a_fork_shown_in_present_stops_a_prober_with_no_address():
    """The host sent seat 2 another record 2 than seat 1, which gives no address: seat 2's
    head refused cannot be lent to it, but seat 1's probe finds it in seat 2's ``present``
    and stops on the fork, naming the host."""
    bed = Bed.opened(listen=(True, False, True))
    bed.accept(0, 1, 2)
    bed.put(bed.take(0, "coin_commit"))
    _, two, shown = _forked_then_refused(bed)
    assert shown == []  # nobody to lend it to
    one = node_of(bed, 1, 4)
    one.probe_answer(2, two.present(), 30)
    assert stops(run(one, 30)) == [("FORK", HOST)]


def test_a_stopped_seat_takes_nothing_more_from_links_and_lends_nothing(table: Bed):
    node = node_of(table, 2, 3)
    node.from_link(1, forged(table, 3), 10)
    run(node, 10)
    node.from_link(1, table.records[3], 20)
    assert not node.queue
    end = node.watch.waits.ends(1)  # its clocks run on: a probe of seat 1 shows it short
    node.from_host({"k": "beat"}, end)
    node.advance(end)
    node.probe_answer(1, (1, [], None), end + 10)
    node.advance(end + 10)
    assert lends(node.take()) == []


def test_a_stopped_seat_with_a_proof_answers_links_for_stuck_ms_after_the_last_probe(
    table: Bed,
) -> None:
    node = node_of(table, 2, 3)
    node.from_link(1, forged(table, 3), 1_000)
    run(node, 1_000)
    stuck = node._budgets().stuck_ms
    assert node.lingering(1_000 + stuck - 1) and not node.lingering(1_000 + stuck)
    node.probed(5_000)
    assert node.lingering(5_000 + stuck - 1) and not node.lingering(5_000 + stuck)


def test_a_seat_restored_from_a_transcript_ending_on_its_proof_is_stopped_on_it(table: Bed):
    t = table.t
    bad = forged(table, 3)
    seed = digest("dernier-p2p/local-seed", t.seeds[2])
    node = PeerNode.seated(t.identities[2], seed, [*table.records[:3], bad], 0, connected=False)
    out = node.take()
    assert stops(out) == [("BAD_SIGNATURE", HOST)] and persisted(out) == []  # on disk already
    assert node.proof == bad and node.own.last == 2
    assert lends(out) == [(1, [bad])]
    assert not node.has_work() and node.lingering(0)


# ---------------------------------------------------------------------- lends of the watch
def test_a_lend_carries_the_records_after_the_have_shown(table: Bed):
    node = node_of(table, 2, 3)  # the table waits on seat 1's accept since record 2
    end = node.watch.waits.ends(1)
    node.from_host({"k": "beat"}, end)  # (the host connection lives)
    node.advance(end)
    assert [a.seat for a in node.take() if isinstance(a, act.Probe)] == [1]
    node.probe_answer(1, (1, [], None), end + 10)
    node.advance(end + 10)
    assert lends(node.take()) == [(1, [table.records[2]])]
    node.probe_answer(1, (1, [], None), end + 20)  # once per wait
    node.advance(end + 20)
    assert lends(node.take()) == []


def test_present_says_the_last_record_the_pending_envelopes_and_the_proof(table: Bed):
    node = node_of(table, 2, 3)
    assert node.present() == (2, [], None, None)


def test_present_says_the_first_record_lent_since_the_hosts_last(table: Bed):
    node = node_of(table, 2, 3)
    node.from_link(1, table.records[3], 10)
    node.from_link(1, table.records[4], 10)
    run(node, 10)
    assert node.present()[0] == 4 and node.present()[3] == 3
    node.from_host({"k": "rec", "rec": table.records[3]}, 20)  # the host sends one of them
    run(node, 20)
    assert node.present()[3] == 4
    node.from_host({"k": "rec", "rec": table.records[4]}, 30)
    run(node, 30)
    assert node.present()[3] is None
    node.from_link(1, table.records[5], 40)
    node.from_host({"k": "rec", "rec": table.records[6]}, 40)
    run(node, 40)
    assert node.present() == (6, [], None, None)  # the host's record came after it


def test_a_seat_that_got_the_waits_first_record_over_a_link_is_lent_a_fresh_budget(
    table: Bed,
) -> None:
    """Seat 1 holds the record its wait began with, but another seat lent it: it is short,
    as if it lacked it (a host may be muting it): a fresh budget, no records, no timeout."""
    node = node_of(table, 2, 3)
    end = node.watch.waits.ends(1)
    node.from_host({"k": "beat"}, end)
    node.advance(end)
    node.take()
    node.probe_answer(1, (2, [], None, 2), end + 10)
    node.advance(end + 10)
    out = node.take()
    assert lends(out) == [] and node.watch.waits.lent(1)
    assert node.watch.waits.ends(1) > end + 10
    assert not [a for a in out if isinstance(a, fx.Send) and a.frame.get("k") == "vote"]


@pytest.mark.parametrize(("have", "lent", "short"), [(2, 1, True), (3, 3, False), (3, None, False)])
def test_only_a_wait_first_record_not_from_the_host_makes_a_seat_short(
    table: Bed, have: int, lent: int | None, short: bool
) -> None:
    """The wait on seat 1 began at record 2: lent since 1, the host did not send it record 2;
    lent since 3 (or never), it did."""
    node = node_of(table, 2, 3)
    end = node.watch.waits.ends(1)
    node.from_host({"k": "beat"}, end)
    node.advance(end)
    node.take()
    node.probe_answer(1, (have, [], None, lent), end + 10)
    node.advance(end + 10)
    assert node.watch.waits.lent(1) is short


def test_a_status_is_taken_after_the_records_that_came_before_it(table: Bed):
    """The host sequenced seat 1's record, then reported seat 1 dropped: the record, applied
    after the report came, does not end the drop."""
    node = node_of(table, 2, 3)
    author = table.records[3]["env"]["seat"]
    node.from_host({"k": "rec", "rec": table.records[3]}, 10)
    node.from_host({"k": "status", "seat": author, "state": "dropped", "grace_ms": 5_000}, 10)
    assert not node.watch.drops.is_dropped(author)  # (not yet: the record comes first)
    run(node, 11)
    assert node.watch.drops.is_dropped(author) and node.own.last == 3


def test_frames_of_a_closed_host_connection_are_ignored_not_a_gap_to_blame(table: Bed):
    """Seed 902349: the seat held records 0..3 and its connection to the host closed with
    records 4 and 5 queued (dropped: the next welcome sends them again); record 6, read from
    that connection before the close, came after it. It is of no host connection: ignored,
    not a gap (index 6, expected 4) that names the host. The resume's welcome brings 4..6."""
    node = node_of(table, 2, 4)
    node.from_host({"k": "rec", "rec": table.records[4]}, 10)
    node.from_host({"k": "rec", "rec": table.records[5]}, 10)
    node.closed(11)
    node.from_host({"k": "rec", "rec": table.records[6]}, 12)
    node.from_host({"k": "status", "seat": 1, "state": "dropped", "grace_ms": 5_000}, 12)
    out = run(node, 12)
    assert stops(out) == [] and node.stopped is None and node.own.last == 3
    assert not node.watch.drops.is_dropped(1)
    node.welcomed(HOST, 2, 6, 20)
    for i in (4, 5, 6):
        node.from_host({"k": "rec", "rec": table.records[i]}, 20)
    out = run(node, 21)
    assert stops(out) == [] and node.own.last == 6 and node.caught_up


@pytest.mark.parametrize("have", [4, None])
def test_a_new_host_is_forwarded_the_records_up_to_the_resumes_have(table: Bed, have):
    """Seat 2 resumed with seat 1, a candidate, naming record 4, and took records 5 and 6 from
    its old host meanwhile: seat 1's welcome (last 2) gets records 3 and 4 forwarded, what it
    expects (4.4), not 5 and 6, which it would refuse with error frames (seed 2502720: the
    seat took them for refusals of its own envelopes). Without a ``have``, all it holds."""
    node = node_of(table, 2, 7)
    node.closed(5)
    node.take()
    node.welcomed(1, 2, 2, 10, have)
    sent = [e.frame["rec"]["i"] for e in node.take()
            if isinstance(e, fx.Send) and e.frame.get("k") == "rec"]
    assert sent == ([3, 4] if have is not None else [3, 4, 5, 6])


def test_a_stopped_seat_votes_probes_and_acks_no_more(table: Bed):
    """Its rules would probe seat 1 at its limit (and vote on it after); stopped on a forged
    record, the seat does nothing more: its votes could be counted against a seat by a host
    that caused the stop."""
    node = node_of(table, 2, 3)
    end = node.watch.waits.ends(1)
    node.from_host({"k": "rec", "rec": forged(table, 3)}, 10)
    assert stops(run(node, 10)) == [("BAD_SIGNATURE", HOST)]
    assert node.deadline() is None
    node.from_host({"k": "beat"}, end)
    node.advance(end)
    node.advance(end + 60_000)
    assert not [a for a in node.take() if isinstance(a, act.Probe | fx.Send)]


def test_a_restarted_seat_no_host_serves_signs_what_it_owed_once_the_lent_records_are_in(
    table: Bed,
) -> None:
    """Restarted from records 0..3 with no host connection (a host that mutes it), seat 2 is
    lent records 4 and 5: once they are in, the coin commitment its restart owed is signed and
    pending, shown to probes (seed 501401: it was signed only after a welcome that never came,
    and the seat was timed out)."""
    t = table.t
    seed = digest("dernier-p2p/local-seed", t.seeds[2])
    node = PeerNode.seated(t.identities[2], seed, table.records[:4], 0, connected=False)
    node.take()
    assert node.own.replaying and node.present()[1] == []
    node.from_link(1, table.records[4], 10)
    node.from_link(1, table.records[5], 10)
    node.work(10)
    assert node.own.replaying  # (record 5 still to come)
    node.work(10)
    assert node.own.replaying is None
    pending = node.present()[1]
    assert [e["body"]["type"] for e in pending] == ["coin_commit"] and node.present()[3] == 4


# ---------------------------------------------------------------------- a replaced host
def replaced() -> tuple[Bed, dict, dict]:
    """Records 0 .. 6 as :func:`table`, then seat 1's ``host_change`` (record 7, taking over
    from seat 0); and seat 0's own record 7, signed on its chain without the host change (it
    was frozen while the others deposed it)."""
    bed = Bed.opened()
    bed.accept(0, 2, 1)
    for seat in (0, 1, 2):
        bed.put(bed.take(seat, "coin_commit"))
    recs = bed.records
    s1 = bed.sessions[1]
    votes = [bed.sessions[v].vote("depose", 0) for v in (1, 2)]
    env = s1.sign_again([s1.votes_body("depose", 0, votes)])[0]
    seq = Sequencer(identity_for(bed.t.seeds[1]), bed.t.game, 1, records=recs)
    change = seq.submit(env, 1, recs[-1]["t"] + 10)
    stale = make_record(bed.t.identities[HOST], recs[6]["env"], HOST, 7,
                        record_hash(recs[6]), recs[-1]["t"] + 10)
    return bed, change, stale


def seat_after_host_change() -> PeerNode:
    """Seat 2, resumed with seat 1, holding and playing on with seat 1's host change."""
    bed, change, _ = replaced()
    node = node_of(bed, 2, 7)
    node.welcomed(1, 2, 6, 10)
    node.from_host({"k": "rec", "rec": change}, 10)
    run(node, 10)
    assert node.own.session.host == 1 and node.up
    return node


def closes_up(effects: list[Any]) -> bool:
    return any(isinstance(e, fx.Close) and e.conn == fx.UP for e in effects)


def test_a_late_welcome_from_the_replaced_host_is_closed_without_forwarding_to_it():
    """Seat 2 resumed with seat 1 and holds its host change; seat 0, which was frozen, answers
    its earlier dial now, with its last record below the host change's: not taken (7.6)."""
    node = seat_after_host_change()
    node.welcomed(HOST, 2, 6, 20)
    out = node.take()
    assert closes_up(out) and not node.up
    assert not [e for e in out if isinstance(e, fx.Send)]  # nothing forwarded to it
    node.closed(21)  # the driver's word that the connection is gone
    assert node.stopped is None
    dials = [e for e in (node.advance(30) or node.take()) if isinstance(e, act.Dial)]
    assert [d.seat for d in dials] == [1]  # it resumes with its host


def test_a_stale_record_of_the_replaced_host_on_its_connection_blames_nobody():
    """Seat 0 sequenced its own record 7 before a late welcome (its last is 7): the record is
    stale; seat 2 closes the connection and stops on nothing. A link brings it: ignored."""
    bed, change, stale = replaced()
    node = node_of(bed, 2, 7)
    node.welcomed(1, 2, 6, 10)
    node.from_host({"k": "rec", "rec": change}, 10)
    run(node, 10)
    node.welcomed(HOST, 2, 7, 20)
    assert not closes_up(node.take())
    node.from_host({"k": "rec", "rec": stale}, 20)
    out = run(node, 20)
    assert closes_up(out) and not node.up and node.stopped is None and not stops(out)
    assert node.own.last == 7 and node.own.records[7] is change
    node.from_link(1, stale, 30)
    assert not stops(run(node, 30)) and node.stopped is None


def old_hosts_next(bed: Bed) -> dict:
    """Seat 0's record 7 on the chain of :func:`replaced` without the host change (the next
    envelope queued, sequenced by seat 0 when it thawed)."""
    recs = bed.records
    seq = Sequencer(identity_for(bed.t.seeds[HOST]), bed.t.game, HOST, records=recs)
    env = bed.t.queue[0]
    return seq.submit(env, env["seat"], recs[-1]["t"] + 10)


@pytest.mark.parametrize("applied", [True, False])
def test_records_of_the_old_host_taken_after_resuming_with_the_new_one_mean_a_rebuild(
    applied: bool,
) -> None:
    """Seat 2 dialled seat 1 (``have`` 6) and the old host 0, which was frozen while a quorum
    deposed it; seat 0 welcomed it first on thawing and sent its own record 7, then seat 1's
    welcome (``last`` 6) replaced that connection and seat 1 sent its ``host_change`` for
    index 7: the chains differ since the host change, nobody's fault (4.4), and seat 2
    rebuilds. A record 7 of seat 0 still queued at seat 1's welcome is dropped: seat 2 then
    simply follows seat 1."""
    bed, change, _ = replaced()
    mine = old_hosts_next(bed)
    node = node_of(bed, 2, 7)
    node.welcomed(HOST, 2, 6, 10)
    node.from_host({"k": "rec", "rec": mine}, 10)
    if applied:
        run(node, 10)
        assert node.own.last == 7 and node.own.records[7] == mine
    node.welcomed(1, 2, 6, 20)
    sent = [e.frame for e in node.take() if isinstance(e, fx.Send)]
    assert [f["rec"]["i"] for f in sent if f["k"] == "rec"] == ([7] if applied else [])
    node.from_host({"k": "error", "code": "UNEXPECTED", "detail": "unexpected frame 'rec'"}, 30)
    node.from_host({"k": "rec", "rec": change}, 30)
    out = run(node, 30)
    assert not stops(out) and node.stopped is None
    if applied:
        assert any(isinstance(e, fx.Close) and e.why == "rebuilding" for e in out)
    else:
        assert node.own.last == 7 and node.own.records[7] == change
        assert node.own.session.host == 1


REFUSED_AHEAD = "resume beyond this host's last record: resume with have -1"


def test_a_new_host_short_of_the_seats_records_means_a_rebuild():
    """Seat 2 (records 0 .. 6, host 0) dials seat 1, which refuses its ``have`` as beyond its
    last record: seat 1 took over on a shorter chain, so the two differ after its host change
    (4.4) and seat 2 rebuilds from it."""
    bed, _, _ = replaced()
    node = node_of(bed, 2, 7)
    node.dial_failed(1, 10, "UNEXPECTED", REFUSED_AHEAD)
    out = node.take()
    assert any(isinstance(e, fx.Close) and e.why == "rebuilding" for e in out)
    assert node.watch.rebuild_from


def test_the_replaced_host_short_of_the_seats_records_is_a_failed_dial_not_a_rebuild():
    """Seed 2902314: seat 2 holds seat 1's host change (record 7, replacing seat 0) and plays
    on with seat 1; in a failover it dials seat 0, the replaced host, which still hosts its old
    chain (frozen, cut off or stalling meanwhile: it never saw the change) and refuses the
    ``have`` as beyond its last record. That is no new host's chain to rebuild from: seat 0 is
    not the host (7.6). Taken for a divergence, the seat rebuilt from the old chain and sat at
    a host that sequenced nothing until it ended the match as stuck, while the table went on
    without it."""
    node = seat_after_host_change()
    node.dial_failed(HOST, 20, "UNEXPECTED", REFUSED_AHEAD)
    out = node.take()
    assert not closes_up(out) and node.up and not node.watch.rebuild_from
    assert not any(isinstance(e, fx.Log) and "differ" in e.text for e in out)
    assert node.own.last == 7 and node.own.session.host == 1 and node.stopped is None


def test_a_stale_record_relayed_by_the_seats_own_host_is_that_hosts_fault():
    bed, change, stale = replaced()
    node = node_of(bed, 2, 7)
    node.welcomed(1, 2, 6, 10)
    node.from_host({"k": "rec", "rec": change}, 10)
    node.from_host({"k": "rec", "rec": stale}, 10)
    assert stops(run(node, 10)) == [("BAD_CHAIN", 1)]


def test_a_malformed_beat_or_error_from_the_host_is_ignored_and_logged(table: Bed):
    """(4.1) A beat carries nothing and an error frame only tells: one with fields other than
    its own is ignored (logged), neither stopping the seat nor mending its envelopes; the
    well-formed ones are taken."""
    node = node_of(table, 2, 4)
    node.from_host({"k": "beat", "x": 1}, 10)
    node.from_host({"k": "error", "code": "UNEXPECTED", "detail": "d", "x": 1}, 10)
    node.from_host({"k": "error", "code": "UNEXPECTED"}, 10)
    out = run(node, 11)
    logs = [e.text for e in out if isinstance(e, fx.Log)]
    assert logs.count("malformed error frame from the host ignored") == 2
    assert "malformed beat frame from the host ignored" in logs
    assert stops(out) == [] and node.stopped is None
    node.from_host({"k": "beat"}, 12)
    node.from_host({"k": "error", "code": "UNEXPECTED", "detail": "d"}, 12)
    out = run(node, 13)
    logs = [e.text for e in out if isinstance(e, fx.Log)]
    assert "host refused a message: UNEXPECTED: d" in logs and not any("malformed" in t
                                                                      for t in logs)


def test_a_host_change_lent_while_playing_on_with_the_replaced_host_resumes_with_the_new():
    """Seed 1000145: a seat playing on with host 0 (not deposing it) is lent seat 1's
    ``host_change`` over a link. Host 0, deposed, may send it nothing more (a stalling host
    sends nothing at all, so no stale record of it ever shows the change): the seat closes
    that connection and resumes with the new host (7.6), instead of staying with a host its
    chain replaced until the new host's table times it out."""
    bed = Bed.opened()
    bed.accept(0, 2, 1)
    node = node_of(bed, 2, len(bed.records))
    s1 = bed.sessions[1]
    votes = [bed.sessions[v].vote("depose", 0) for v in (1, 2)]
    env = s1.sign_again([s1.votes_body("depose", 0, votes)])[0]
    rec = Sequencer(identity_for(bed.t.seeds[1]), bed.t.game, 1,
                    records=list(bed.records)).submit(env, 1, 10)
    node.from_link(1, rec, 10)
    out = run(node, 10)
    assert persisted(out) == [rec] and node.own.session.host == 1
    assert not node.up and [e.conn for e in out if isinstance(e, fx.Close)] == [fx.UP]
    dials = []
    for t in range(10, 2_000, 50):
        node.advance(t)
        dials += [e.seat for e in node.take() if isinstance(e, act.Dial)]
    assert dials and set(dials) == {1}


def test_a_stopped_seat_sends_no_envelope_of_its_own(table: Bed):
    """(4.3) A seat that refused a record stops: a move or chat its player chose just before
    is not sent after the refusal (interop.drive, chat-over-limit)."""
    node = node_of(table, 2, 3)
    node.from_host({"k": "rec", "rec": second(table, 3)}, 10)
    node.from_host({"k": "rec", "rec": table.records[4]}, 10)
    assert stops(run(node, 10)) == [("BAD_CHAIN", HOST)]
    node.send_own(node.own.session.chat("still here"), 20)
    sent = [e.frame for e in node.take() if isinstance(e, fx.Send)]
    assert not any(f.get("k") == "env" for f in sent)


def test_a_seat_restored_from_record_0_alone_sends_its_accept_again(table: Bed):
    """A seat that crashed after record 0, its accept sent to a host that died with it (seed
    1606617): restored from its transcript (record 0 alone, not connected) it owes the accept
    again, and sends it once a host welcomes it; a joiner (connected) sends its accept at
    :meth:`PeerNode.start`, as before."""
    t = table.t
    seed = digest("dernier-p2p/local-seed", t.seeds[1])
    node = PeerNode.seated(t.identities[1], seed, table.records[:1], 0, connected=False)
    node.take()
    assert [b["type"] for b in node.own.replaying] == ["accept"]
    node.welcomed(HOST, 1, 0, 10)
    sent = [e.frame["env"] for e in node.take()
            if isinstance(e, fx.Send) and e.frame.get("k") == "env"]
    assert [(e["seat"], e["n"], e["body"]["type"]) for e in sent] == [(1, 0, "accept")]
    joiner = PeerNode.seated(t.identities[1], seed, table.records[:1], 0, connected=True)
    assert joiner.own.replaying is None


# ---------------------------------------------------------------------- a take-over (7.6)
def taking_over() -> tuple[Bed, PeerNode]:
    """Five seats at their coin commitments; seat 1's node, playing with host 0, takes over
    at 1 000 on the depose votes of seats 2, 3 and 4 (q(5) = 3), deposing nobody itself."""
    bed = Bed.opened((True,) * 5)
    bed.accept(0, 1, 2, 3, 4)
    node = node_of(bed, 1, len(bed.records))
    for seat in (2, 3, 4):
        node.link_vote(seat, vote_frame("depose", HOST, bed.sessions[seat].vote("depose", HOST)),
                       1_000)
    node.advance(1_000)
    out = node.take()
    assert fx.Hosting(listening=True) in out and node.hosting_now
    assert not closes_up(out) and node.up  # (7.6: kept until its host_change is sequenced)
    return bed, node


def test_a_candidate_that_steps_back_plays_on_through_the_old_hosts_connection_it_kept():
    """G9 (seed 2910715): a candidate that took over on votes two cheaters completed closed
    its connection to the old host, which then voted it ``left`` with the cheaters. Now the
    connection stays open while it gathers: what the host sends waits, and stepping back the
    seat applies it and sends the host its own envelope signed meanwhile, never dropped."""
    bed, node = taking_over()
    rec = bed.put(bed.take(HOST, "coin_commit"))
    node.from_host({"k": "rec", "rec": rec}, 1_500)
    mine = bed.take(1, "coin_commit")
    node.send_own(mine, 1_600)  # (its host keeps it while it gathers)
    assert not run(node, 1_600) and node.own.last == rec["i"] - 1
    node.advance(1_000 + TRY)  # no quorum resumed: it steps back
    out = node.take()
    assert fx.Hosting(listening=False) in out and not node.hosting_now
    assert not closes_up(out) and node.up and node.watch.phase == "play"
    assert [e.frame for e in out if isinstance(e, fx.Send) and e.conn == fx.UP] == \
        [{"k": "env", "env": mine}]
    assert persisted(run(node, 1_000 + TRY)) == [rec]
    node.advance(1_000 + TRY + 1_000)  # no failover of its own: nothing dialled or urged
    assert not [e for e in node.take() if isinstance(e, (act.Dial, act.Urge))]


def test_a_candidate_closes_the_old_hosts_connection_once_its_host_change_is_sequenced():
    """Seats 2, 3 and 4 resume with the candidate and send their depose votes over their
    connections (q(5) = 3 fresh ones: it deposes nobody itself). Until its ``host_change`` is
    sequenced (``settle_ms`` after, every seat but the old host having resumed or not) the
    old host's connection stays open; then it closes."""
    bed, node = taking_over()
    last = len(bed.records) - 1
    for seat in (2, 3, 4):
        key = bed.t.identities[seat].public_bytes()
        got, known = node.host.admit("resume", key, have=last, now=1_100)
        node.host.joined(got, known, 1_100)
        node.host_frame(seat, vote_frame("depose", HOST, bed.sessions[seat].vote("depose",
                                                                                  HOST)), 1_100)
    node.advance(1_100)
    assert not closes_up(node.take()) and node.up
    out: list[Any] = []
    for t in (1_200, 3_000):  # (settle_ms after the quorum came, at the latest)
        node.advance(t)
        out += run(node, t)
        node.advance(t)
        out += node.take()
    assert node.own.session.host == 1 and not node.up
    assert [e.why for e in out if isinstance(e, fx.Close) and e.conn == fx.UP] == \
        ["this seat hosts from now on"]


def test_a_candidate_stepping_back_does_not_send_again_what_the_old_host_sequenced_meanwhile():
    """Its envelope signed while it gathered was shown to a prober and passed on (4.6): the old
    host sent its record meanwhile. Stepping back, the seat sends it no more (the host would
    refuse the counter as reused) and applies the record."""
    bed, node = taking_over()
    mine = bed.take(1, "coin_commit")
    node.send_own(mine, 1_600)
    rec = bed.put(mine)
    node.from_host({"k": "rec", "rec": rec}, 1_700)
    node.advance(1_000 + TRY)
    out = node.take()
    assert not [e for e in out if isinstance(e, fx.Send) and e.conn == fx.UP]
    assert persisted(run(node, 1_000 + TRY)) == [rec] and not node.own.unsequenced


def test_a_candidate_closes_the_old_hosts_connection_when_it_sends_more_than_it_holds():
    """What the old host sends while a candidate gathers waits unapplied, so unchecked: past
    ``MAX_GATHER_QUEUE`` frames the candidate closes that connection (as it did at once
    before it kept it) and forgets them; stepping back it goes on with its own failover."""
    bed, node = taking_over()
    rec = bed.put(bed.take(HOST, "coin_commit"))
    for k in range(peer.MAX_GATHER_QUEUE):
        node.from_host({"k": "rec", "rec": rec}, 1_100 + k)
    assert node.up and not closes_up(node.take())  # (a repeat is judged when applied)
    node.from_host({"k": "rec", "rec": rec}, 1_200)
    out = node.take()
    assert [e.why for e in out if isinstance(e, fx.Close) and e.conn == fx.UP] == \
        ["this seat hosts from now on"]
    assert not node.up and not node.queue
    node.from_host({"k": "rec", "rec": rec}, 1_300)  # (read before the close: ignored)
    assert not node.queue
    node.advance(1_000 + TRY)  # no quorum: it steps back into a failover of its own
    out = node.take()
    assert fx.Hosting(listening=False) in out and node.watch.phase == "failover"
