"""What the host would say to a shown envelope, judged without changing anything
(PROTOCOL.md 4.6, 5.4, 7.5; protocol/judge.py): a seat passes on only what passes, so only the
host's passing over it can be evidence of censorship."""

from __future__ import annotations

import copy

import pytest

from dernier_p2p.protocol.envelope import sign_envelope
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.judge import HOST_BODIES, would_sequence
from dernier_p2p.protocol.local import identity_for
from dernier_p2p.protocol.session import Session
from tests.protocol.liveness import Bed


def signed(bed: Bed, env: dict, **changes) -> dict:
    """``env`` with ``changes`` (``n``, ``head``, ``body``, ``game``), signed again by its
    author."""
    e = dict(env, **changes)
    return sign_envelope(identity_for(bed.t.seeds[e["seat"]]), e["game"], e["seat"], e["n"],
                         e["head"], e["body"])


def code(session: Session, env: dict) -> str | None:
    err = would_sequence(session, env)
    assert err is None or isinstance(err, ProtocolError)
    return None if err is None else err.code


def snapshot(s: Session) -> tuple:
    """What a session's state is made of, comparably."""
    return (s.count, s.head, [s.chain.next_counter(k) for k in range(s.n)],
            sorted(s.chain.at_table), s.pending, s.waiting_on(), repr(s.state), s.view,
            sorted(s.accepted), len(s.events), s.fault, s.finished)


def twins(s: Session) -> tuple[Session, Session]:
    """Two copies of ``s``, out of the table: one to judge with, one never asked."""
    return copy.deepcopy(s), copy.deepcopy(s)


def same_after(judged: Session, control: Session, records: list[dict]) -> None:
    """``judged`` (that ``would_sequence`` looked at) and ``control`` (that it did not) apply
    ``records`` alike, answering the same envelopes and ending in the same state."""
    assert records
    assert snapshot(judged) == snapshot(control)
    for rec in records:
        assert judged.receive(rec, rec["t"]) == control.receive(rec, rec["t"])
        assert snapshot(judged) == snapshot(control)


# ---------------------------------------------------------------------- moves
@pytest.fixture
def bed() -> Bed:
    """Three seats dealt, seat 1 to move; seat 2's session judges."""
    return Bed.dealt()


def test_a_valid_next_envelope_passes(bed):
    judged, control = twins(bed.sessions[2])
    s1 = bed.sessions[1]
    # (every envelope signed by a copy: the sessions' own counters stay)
    moves = [copy.deepcopy(s1).intend(mv) for mv in s1.legal()]
    assert len(moves) > 1
    for env in moves:
        assert code(judged, env) is None
    for seat in (0, 1, 2):
        assert code(judged, copy.deepcopy(bed.sessions[seat]).chat("hi")) is None
        assert code(judged, copy.deepcopy(bed.sessions[seat]).ack()) is None
    records = [bed.put(moves[0]), *bed.flush()]
    same_after(judged, control, records)


def test_a_resign_passes(bed):
    assert code(bed.sessions[2], bed.sessions[0].resign()) is None
    assert code(bed.sessions[2], bed.sessions[1].resign()) is None


def test_a_bad_signature(bed):
    env = bed.move(1)
    sig = bytes([env["sig"][0] ^ 1]) + env["sig"][1:]
    assert code(bed.sessions[2], dict(env, sig=sig)) == "BAD_SIGNATURE"
    moved = dict(env, body=dict(env["body"], declare=not env["body"]["declare"]))
    assert code(bed.sessions[2], moved) == "BAD_SIGNATURE"  # the body changed, not the sig


def test_a_wrong_counter(bed):
    env = bed.move(1)
    s2 = bed.sessions[2]
    assert env["n"] == s2.chain.next_counter(1)
    assert code(s2, signed(bed, env, n=env["n"] + 1)) == "OUT_OF_ORDER"
    assert code(s2, signed(bed, env, n=env["n"] - 1)) == "DUPLICATE"
    assert code(s2, signed(bed, env, n=env["n"])) is None


def test_an_unknown_head(bed):
    env = bed.move(1)
    assert code(bed.sessions[2], signed(bed, env, head=bytes(32))) == "FORK"


def test_another_game(bed):
    env = bed.move(1)
    assert code(bed.sessions[2], signed(bed, env, game=bytes(16))) == "WRONG_GAME"


def test_a_move_illegal_at_its_head(bed):
    s2 = bed.sessions[2]
    draw = {"type": "move", "hand": 1, "move": "draw"}
    env = bed.sessions[2].sign(draw)  # seat 2 is not to act
    assert code(s2, env) == "ILLEGAL_MOVE"
    # seat 1's move, echoing a record after which the table was not settled
    play = bed.move(1)
    first_tokens = next(r["i"] for r in bed.records if r["env"]["body"]["type"] == "tokens")
    during_deal = s2.chain.hashes[first_tokens]  # other seats' tokens still owed after it
    assert code(s2, signed(bed, play, head=during_deal)) == "ILLEGAL_MOVE"
    assert code(s2, play) is None


def test_a_play_of_a_slot_not_held(bed):
    s2 = bed.sessions[2]
    play = bed.move(1)
    assert play["body"]["move"] == "play"
    theirs = s2.state.hands[2][0]
    err = would_sequence(s2, signed(bed, play, body=dict(play["body"], slot=theirs)))
    assert err.code == "NOT_HELD" and err.seat == 1


def test_a_host_body_from_a_seat(bed):
    s2 = bed.sessions[2]
    body = {"type": "timeout", "seat": 2, "votes": [bed.sessions[0].vote("timeout", 2)]}
    err = would_sequence(s2, bed.sessions[1].sign(body))
    assert err.code == "WRONG_SEAT"
    assert "timeout" in HOST_BODIES and "move" not in HOST_BODIES


def test_a_host_change_shown_by_a_candidate_is_no_envelope_to_pass(bed):
    """A valid ``host_change`` comes as the new host's record, never through the old host."""
    s2 = bed.sessions[2]
    s1 = bed.sessions[1]
    votes = [bed.sessions[v].vote("depose", 0) for v in (1, 2)]
    env = copy.deepcopy(s1).sign(s1.votes_body("depose", 0, votes))
    err = would_sequence(s2, env)
    assert err.code == "WRONG_SEAT" and err.seat == 1


def test_a_session_at_fault_or_finished_sequences_nothing(bed):
    s2 = bed.sessions[2]
    env = bed.move(1)
    s2.fault = ProtocolError("DECK_FAULT", 0, "a test")
    assert would_sequence(s2, env) is s2.fault
    s2.fault = None
    s2.no_contest = True
    assert code(s2, env) == "UNEXPECTED"


# ---------------------------------------------------------------------- deck messages
def test_a_deck_message_due_passes_and_changes_nothing(bed):
    bed.put(bed.move(1))  # a play: its owner's token opens the card
    judged, control = twins(bed.sessions[2])
    tokens = bed.take(1, "tokens")
    assert code(judged, tokens) is None
    assert code(judged, tokens) is None  # judged twice: still due (nothing was taken)
    same_after(judged, control, [bed.put(tokens), *bed.flush()])


def test_a_deck_message_with_a_bad_proof(bed):
    bed.put(bed.move(1))
    judged, control = twins(bed.sessions[2])
    tokens = bed.take(1, "tokens")
    body = copy.deepcopy(tokens["body"])
    proof = body["tokens"][0]["proof"]
    proof["s"] = bytes([proof["s"][0] ^ 1]) + proof["s"][1:]
    err = would_sequence(judged, signed(bed, tokens, body=body))
    assert err.code == "DECK_FAULT" and err.seat == 1 and "BadProof" in err.detail
    body = copy.deepcopy(tokens["body"])
    body["tokens"][0]["token"] = body["tokens"][0]["token"][::-1]
    assert code(judged, signed(bed, tokens, body=body)) in ("DECK_FAULT", "MALFORMED")
    assert judged.fault is None
    same_after(judged, control, [bed.put(tokens), *bed.flush()])


def test_a_deck_message_not_due(bed):
    s2 = bed.sessions[2]
    play = bed.move(1)
    ahead = copy.deepcopy(bed)
    ahead.put(play)
    tokens = ahead.take(1, "tokens")
    judged, control = twins(s2)
    # the token before the play: not owed yet
    early = signed(bed, tokens, n=s2.chain.next_counter(1), head=s2.head)
    err = would_sequence(judged, early)
    assert err.code == "DECK_FAULT" and err.seat == 1
    records = [bed.put(play), bed.put(tokens)]
    # after it was given: owed no more
    again = signed(bed, tokens, n=s2.chain.next_counter(1), head=s2.head)
    assert code(s2, again) == "DECK_FAULT"
    same_after(judged, control, records)


# ---------------------------------------------------------------------- accepts and coin
def test_accepts_judged_without_taking_them():
    bed = Bed.opened()
    judged, control = twins(bed.sessions[2])
    accept = bed.take(1, "accept")
    assert code(judged, accept) is None
    other = signed(bed, accept, body={"type": "accept", "table": bytes(32)})
    assert code(judged, other) == "TABLE_MISMATCH"
    assert judged.accepted == set()
    records = [bed.put(accept)]
    s2 = bed.sessions[2]
    assert s2.accepted == {1}
    again = signed(bed, accept, n=1, head=s2.head)
    assert code(s2, again) == "DUPLICATE"
    assert s2.accepted == {1}
    same_after(judged, control, records + bed.accept(0, 2))


def test_coin_messages_judged_on_a_copy_of_the_coin():
    bed = Bed.opened()
    bed.accept(0, 1, 2)  # the dealer coin starts: every seat owes its commitment
    s2 = bed.sessions[2]
    judged, control = twins(s2)
    commit = bed.take(1, "coin_commit")
    assert code(judged, commit) is None
    assert code(judged, commit) is None
    records = [bed.put(commit)]
    twice = signed(bed, commit, n=s2.chain.next_counter(1), head=s2.head)
    assert code(s2, twice) == "DECK_FAULT"
    records += [bed.put(bed.take(0, "coin_commit")), bed.put(bed.take(2, "coin_commit"))]
    same_after(judged, control, records)


# ---------------------------------------------------------------------- the pace of acks
def test_an_ack_with_nothing_new_is_refused_as_the_host_refuses_it(bed):
    """(4.9) An ack passes only after news: a record of another seat, not an ack, after the
    head its author's previous envelope echoed (its last record's, or the last of ``before``,
    its envelopes sequenced just before it). A seat judges it as the host does, so an
    envelope behind an ack the host refuses is no envelope to pass on, nor evidence."""
    judge = bed.sessions[2]
    first = bed.sessions[1].ack()
    assert code(judge, first) is None  # the deal came since seat 1 last echoed
    bed.put(first)
    assert code(judge, copy.deepcopy(bed.sessions[1]).ack()) == "UNEXPECTED"  # its own ack
    bed.put(bed.sessions[0].chat("hello"))
    c = copy.deepcopy(bed.sessions[1])
    a, b = c.ack(), c.ack()  # (the second echoes the same head as the first)
    assert code(judge, a) is None
    assert would_sequence(judge, b, 1) is None  # judged after its last record: a chat since
    err = would_sequence(judge, b, 1, [a])  # judged after the ack just before it
    assert err is not None and (err.code, err.seat) == ("UNEXPECTED", 1)
    assert would_sequence(judge, c.chat("x"), 2, [a, b]) is None  # a chat has no such rule


def test_after_the_end_only_an_ack_with_news_passes_until_the_end_is_final(bed):
    """Over by the rules, its end not yet final (7.11): the host still sequences the seats'
    acks of the end, so a shown ack is passed on; anything else, or any ack once the end is
    final, would not be sequenced."""
    for seat in (1, 0):  # (the bed's tables play on when a seat leaves: two must go)
        bed.put(copy.deepcopy(bed.sessions[seat]).resign())
        bed.flush()
    judged = bed.sessions[2]
    assert judged.finished
    ack = copy.deepcopy(judged).ack()
    chat = copy.deepcopy(judged).chat("gg")
    judged.unfinal = True
    assert code(judged, ack) is None
    assert code(judged, chat) == "UNEXPECTED"
    stale = signed(bed, ack, head=bed.records[-3]["env"]["head"])  # echoes nothing new
    assert code(judged, stale) == "UNEXPECTED"
    judged.unfinal = False
    assert code(judged, ack) == "UNEXPECTED"
