"""OwnSeat (protocol/node/own.py): the seat's own envelopes across a take-over."""

from __future__ import annotations

from dernier_p2p.protocol.local import LocalTable, identity_for
from dernier_p2p.protocol.node.own import OwnSeat
from dernier_p2p.rules import to_act
from dernier_p2p.wire.hashing import digest
from tests.protocol.liveness import Bed


def _own(bed: Bed, seat: int) -> OwnSeat:
    seed = digest("dernier-p2p/local-seed", bed.t.seeds[seat])
    return OwnSeat.from_records(identity_for(bed.t.seeds[seat]), seed, bed.records)


def _ack_then_move() -> tuple[Bed, OwnSeat, dict, dict]:
    """A dealt table and the seat to move, which has sent an ack and then a move (neither
    sequenced yet)."""
    bed = Bed.dealt()
    own = _own(bed, to_act(bed.sessions[0].state))
    ack = own.session.ack()
    move = own.session.intend(own.session.legal()[0])
    own.sent(ack)
    own.sent(move)
    return bed, own, ack, move


def test_a_take_over_signs_a_pending_move_again_only_if_still_legal():
    """Seat ``mover`` sent a move the old host never sequenced; the table timed it out since,
    so the move is no longer legal: taking over, the seat signs its host change and drops the
    move (its player is asked again) instead of signing an illegal move at the new head (seed
    500594: an honest seat stopped on its own ILLEGAL_MOVE)."""
    bed = Bed.dealt()
    mover = to_act(bed.sessions[0].state)
    assert mover not in (None, 0)
    own = _own(bed, mover)
    env = own.session.intend(own.session.legal()[0])
    own.sent(env)
    own.in_flight = True
    others = [s for s in range(3) if s != mover]
    rec = bed.put(bed.absent("timeout", mover, others))
    own.apply(rec, 0)
    votes = [bed.sessions[v].vote("depose", 0) for v in (mover, *[s for s in others if s])]
    out = own.take_over(0, votes)
    assert [e["body"]["type"] for e in out] == ["host_change"]
    assert not own.in_flight and list(own.unsequenced.values()) == out


def test_a_take_over_keeps_a_pending_move_still_legal():
    bed = Bed.dealt()
    mover = to_act(bed.sessions[0].state)
    own = _own(bed, mover)
    env = own.session.intend(own.session.legal()[0])
    own.sent(env)
    own.in_flight = True
    votes = [bed.sessions[v].vote("depose", 0) for v in range(1, 3)]
    out = own.take_over(0, votes)
    assert [e["body"] for e in out][1:] == [env["body"]] and own.in_flight


def test_a_refused_ack_is_dropped_and_the_envelopes_after_it_signed_again():
    """(4.9) The host may refuse an ack that echoes nothing new: as for a refused chat line,
    the seat drops it and signs its later envelopes again from its counter (its move goes on
    at the ack's counter), rather than leave every later envelope out of order for good."""
    _, own, ack, move = _ack_then_move()
    own.in_flight = True
    again = own.refused("UNEXPECTED", "ack with nothing new")
    assert [e["body"] for e in again] == [move["body"]] and again[0]["n"] == ack["n"]
    assert list(own.unsequenced.values()) == again and own.refusals == 0
    assert own.refused("OUT_OF_ORDER", "the move sent before") == []  # (its stale error)


def test_a_record_of_the_envelope_taken_for_refused_has_what_followed_it_signed_again():
    """(4.3) An error frame about another frame (a forwarded record the host did not expect)
    is taken for the refusal of the seat's lowest envelope, its ack: the move is signed again
    at the ack's counter. The host had sequenced the ack: when its record comes, the move is
    signed again after it and sent, still in flight (seed 2502720: the record took the move's
    place in the seat's books, and the seat waited on a move that was never to come, until
    the others timed it out)."""
    bed, own, ack, move = _ack_then_move()
    own.in_flight = True
    again = own.refused("UNEXPECTED", "unexpected frame 'rec'")
    assert again[0]["n"] == ack["n"] and again[0]["body"] == move["body"]
    rec = bed.t.sequence(ack)
    out = own.apply(rec, rec["t"])
    moves = [e for e in out if e["body"] == move["body"]]
    assert [e["n"] for e in moves] == [ack["n"] + 1] and moves[0]["head"] != move["head"]
    assert own.unsequenced == {ack["n"] + 1: moves[0]} and own.in_flight


def test_a_record_of_the_envelope_held_for_its_counter_signs_nothing_again():
    bed, own, ack, move = _ack_then_move()
    rec = bed.t.sequence(ack)
    out = own.apply(rec, rec["t"])
    assert all(e["body"] != move["body"] for e in out)
    assert own.unsequenced == {move["n"]: move}


def test_a_record_of_the_same_body_signed_at_another_head_signs_nothing_again():
    """(4.4) A restarted seat signs what it owed again, at its head then: the host may hold
    the first signing, whose record carries the same body at an older head for that counter.
    That is the same message sequenced, not another: nothing is signed again (seed 2702409:
    the seat's key reveal went again, and every seat stopped on its second reveal)."""
    bed = Bed.dealt()
    mover = to_act(bed.sessions[0].state)
    other = (mover + 1) % len(bed.sessions)
    own = _own(bed, mover)
    first = own.session.ack()  # signed before the restart, at the head then
    rec = bed.t.sequence(bed.sessions[other].ack())
    own.apply(rec, rec["t"])  # the head moves on
    again = own.session.sign_again([first["body"]])[0]  # after the restart, at the new head
    assert again["n"] == first["n"] and again["head"] != first["head"]
    own.sent(again)
    rec = bed.t.sequence(first)
    out = own.apply(rec, rec["t"])
    assert out == [] and own.unsequenced == {}


def test_a_duplicate_refusal_changes_nothing_in_flight():
    """(4.3) DUPLICATE is the host refusing an envelope it holds already (another seat passed
    it on, then the seat sent it again after a resume): the seat's ack and move in flight stay
    as they are (seed 1400198: the ack was dropped, the next envelope was signed at the ack's
    counter, which the host had sequenced meanwhile, and the seat's deck message was lost)."""
    _, own, ack, move = _ack_then_move()
    own.in_flight = True
    assert own.refused("DUPLICATE", f"seat {own.seat} counter {ack['n'] - 1} reused") == []
    assert own.unsequenced == {ack["n"]: ack, move["n"]: move} and own.in_flight
    assert own.refusals == 0


def test_a_leave_that_ends_the_match_is_final_among_the_seats_before_it() -> None:
    """(7.11, 7.9) In `dernier` a `left` ends the match at three seats; it also takes a seat
    off, leaving two. Its finality counts among the three seats before it (q(3) = 2): the host
    alone does not make it final, a second seat's ack does (seed 1706517: a minority host
    ended the match by a leave, counted itself final at two seats and reported a result while
    the others finished another)."""
    seeds = [bytes([90 + k]) * 32 for k in range(3)]
    table = LocalTable("dernier", seeds, {"match": ["hands", 1]})
    table.deliver()
    table.absent("left", 1, [0, 2])
    table.deliver()
    assert table.sessions[0].finished and len(table.sessions[0].chain.at_table) == 2
    own = OwnSeat.from_records(identity_for(seeds[0]),
                               digest("dernier-p2p/local-seed", seeds[0]), table.records)
    assert own.end_holders == {0} and own.m_at(own.end_at) == 3
    assert not own.final
    table.send(table.sessions[2].ack())
    table.deliver()
    own.apply(table.records[-1], 0)
    assert own.end_holders == {0, 2} and own.final


def test_a_seat_rebuilt_from_records_of_an_earlier_client_answers_as_they_did() -> None:
    """Records in which each seat answered every deal operation with its own ``tokens``
    message (clients before one message answered a run, PROTOCOL.md 15) rebuild the seat as
    well as records of this client do: its own records are not refused on the way, nothing is
    owed again, and it answers the rest of the match as its records did."""
    seeds = [bytes([110 + k]) * 32 for k in range(3)]
    for batch in (True, False):
        table = LocalTable("dernier", seeds, {"match": ["hands", 1]}, batch_answers=batch)
        table.deliver()  # the deal: every seat's tokens are in
        own_tokens = [r for r in table.records
                      if r["env"]["seat"] == 1 and r["env"]["body"]["type"] == "tokens"]
        assert (len(own_tokens) == 1) is batch
        own = OwnSeat.from_records(identity_for(seeds[1]),
                                   digest("dernier-p2p/local-seed", seeds[1]), table.records)
        assert own.session.batch_answers is batch
        assert own.stopped is None and own.replaying == []
        live = table.sessions[1]
        assert own.session.state == live.state and own.session.view == live.view
