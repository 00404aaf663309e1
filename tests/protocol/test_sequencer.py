import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dernier_p2p.protocol.chain import ChainChecker
from dernier_p2p.protocol.envelope import (
    Author,
    genesis_hash,
    record_hash,
    sign_envelope,
    verify_record,
)
from dernier_p2p.protocol.errors import CODES, ProtocolError
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.wire.transcript import TranscriptWriter, read_transcript
from tests.protocol import GAME, Game, identities, table_body

ACK = {"type": "ack"}


def refused(seq: Sequencer, env, from_seat: int, code: str, seat: int | None = None):
    before = (seq.records, seq.head)
    with pytest.raises(ProtocolError) as info:
        seq.submit(env, from_seat, 10**6)
    want = from_seat if seat is None else seat
    assert (info.value.code, info.value.seat) == (code, want), info.value
    assert (seq.records, seq.head) == before
    return info.value


# ---------------------------------------------------------------------- the table comes first
def test_table_first_and_records_signed_by_the_host():
    g = Game(3)
    recs = g.seq.records
    assert [r["i"] for r in recs] == [0, 1, 2]
    assert recs[0]["prev"] == genesis_hash(GAME)
    assert all(r["h"] == 0 for r in recs)
    for r in recs:
        verify_record(r, g.keys[0], 0)
    assert recs[1]["prev"] == record_hash(recs[0])


def test_start_refusals_leave_the_sequencer_empty():
    ids = identities(3)
    keys = [k.public_bytes() for k in ids]
    seq = Sequencer(ids[0], GAME, 0)
    genesis = genesis_hash(GAME)
    table = table_body(keys)
    refused(seq, sign_envelope(ids[1], GAME, 1, 0, genesis, table), 1, "WRONG_SEAT")
    refused(seq, sign_envelope(ids[0], GAME, 0, 0, genesis, ACK), 0, "BAD_CHAIN")
    refused(seq, sign_envelope(ids[0], GAME, 0, 0, genesis, {**table, "players": []}), 0,
            "MALFORMED")
    swapped = table_body([keys[1], keys[0], keys[2]])
    refused(seq, sign_envelope(ids[0], GAME, 0, 0, genesis, swapped), 0, "TABLE_MISMATCH")
    refused(seq, sign_envelope(ids[0], GAME, 0, 1, genesis, table), 0, "OUT_OF_ORDER")
    refused(seq, sign_envelope(ids[0], GAME, 0, 0, bytes(32), table), 0, "FORK")
    refused(seq, sign_envelope(ids[1], GAME, 0, 0, genesis, table), 0, "BAD_SIGNATURE")
    refused(seq, "table", 0, "MALFORMED")
    assert seq.records == [] and seq.head is None and seq.chain is None
    seq.submit(sign_envelope(ids[0], GAME, 0, 0, genesis, table), 0, 5)
    assert len(seq.records) == 1


def test_player_keys_given_must_match_the_table():
    ids = identities(2)
    keys = [k.public_bytes() for k in ids]
    seq = Sequencer(ids[0], GAME, 0, player_keys=[keys[0], identities(3)[2].public_bytes()])
    env = sign_envelope(ids[0], GAME, 0, 0, genesis_hash(GAME), table_body(keys))
    refused(seq, env, 0, "TABLE_MISMATCH")
    assert Sequencer(ids[0], GAME, 0, player_keys=keys).submit(env, 0, 1)["i"] == 0


# ---------------------------------------------------------------------- envelope refusals
def test_envelope_refusals_name_the_connection():
    g = Game(3)
    seq, a1 = g.seq, g.authors[1]
    head, n1 = seq.head, a1.next_n
    good = sign_envelope(g.ids[1], GAME, 1, n1, head, ACK)
    refused(seq, good, 2, "WRONG_SEAT")  # arrived on seat 2's connection
    refused(seq, {**good, "body": {"type": "accept", "table": bytes(32)}}, 1, "BAD_SIGNATURE")
    refused(seq, sign_envelope(g.ids[2], GAME, 1, n1, head, ACK), 1, "BAD_SIGNATURE")
    refused(seq, sign_envelope(g.ids[1], bytes(16), 1, n1, head, ACK), 1, "WRONG_GAME")
    refused(seq, sign_envelope(g.ids[1], GAME, 1, n1 - 1, head, ACK), 1, "DUPLICATE")
    refused(seq, sign_envelope(g.ids[1], GAME, 1, n1 + 1, head, ACK), 1, "OUT_OF_ORDER")
    refused(seq, sign_envelope(g.ids[1], GAME, 1, n1, bytes(32), ACK), 1, "FORK")
    refused(seq, sign_envelope(g.ids[1], GAME, 1, n1, head, {"type": "emote"}), 1,
            "UNKNOWN_MESSAGE")
    refused(seq, sign_envelope(g.ids[1], GAME, 1, n1, head, {"type": "ack", "x": 0}), 1,
            "MALFORMED")
    timeout = {"type": "timeout", "seat": 2, "votes": g.votes("timeout", 2, [0, 1])}
    refused(seq, sign_envelope(g.ids[1], GAME, 1, n1, head, timeout), 1, "WRONG_SEAT")
    refused(seq, sign_envelope(g.ids[1], GAME, 1, n1, head,
                               {"type": "host_change", "old": 0, "new": 1,
                                "votes": g.votes("depose", 0, [1, 2])}), 1, "WRONG_SEAT")
    refused(seq, sign_envelope(g.ids[1], GAME, 1, n1, head, table_body(g.keys)), 1,
            "WRONG_SEAT")
    refused(seq, {**good, "sig": good["sig"][:63]}, 1, "MALFORMED")
    refused(seq, None, 1, "MALFORMED")
    rec = seq.submit(good, 1, 10**6)
    assert rec["env"] == good and rec["i"] == 3
    refused(seq, good, 1, "DUPLICATE")  # a replay


def test_host_table_again_refused():
    g = Game(2)
    env = g.envelope(0, table_body(g.keys))
    refused(g.seq, env, 0, "BAD_CHAIN")


def test_time_never_goes_back():
    g = Game(2)
    t0 = g.seq.records[-1]["t"]
    rec = g.seq.submit(g.envelope(1, ACK), 1, 5)
    assert rec["t"] == t0
    assert g.seq.submit(g.envelope(0, ACK), 0, t0 + 50)["t"] == t0 + 50
    for bad in (-1, 1.5, None, True):
        with pytest.raises(ValueError):
            g.seq.submit(g.envelope(0, ACK), 0, bad)


# ---------------------------------------------------------------------- queries and resumes
def test_records_since():
    g = Game(3)
    assert g.seq.records_since(0) == g.seq.records
    assert g.seq.records_since(2) == g.seq.records[2:]
    assert g.seq.records_since(3) == []
    for bad in (4, -1, "1", None):
        with pytest.raises(ProtocolError) as info:
            g.seq.records_since(bad, 2)
        assert (info.value.code, info.value.seat) == ("BAD_CHAIN", 2)


def test_records_is_a_copy():
    g = Game(2)
    g.seq.records.clear()
    assert len(g.seq.records) == 2


def test_resumed_sequencer_continues_identically():
    g = Game(3)
    for s in range(3):
        g.submit(s, ACK)
    resumed = Sequencer(g.ids[0], GAME, 0, records=g.seq.records)
    assert resumed.head == g.seq.head and resumed.records == g.seq.records
    env = g.envelope(2, ACK)
    assert resumed.submit(env, 2, g.t + 1) == g.seq.submit(env, 2, g.t + 1)


def test_resume_checks_records_and_identity():
    g = Game(3)
    with pytest.raises(ValueError):
        Sequencer(g.ids[1], GAME, 0, records=g.seq.records)
    broken = copy.deepcopy(g.seq.records)
    broken[2]["t"] += 1
    with pytest.raises(ProtocolError):
        Sequencer(g.ids[0], GAME, 0, records=broken)


def test_a_seat_that_does_not_host_yet_sequences_only_its_host_change():
    g = Game(3)
    seq1 = Sequencer(g.ids[1], GAME, 1, records=g.seq.records)
    n2 = g.authors[2].next_n
    refused(seq1, sign_envelope(g.ids[2], GAME, 2, n2, seq1.head, ACK), 2, "BAD_CHAIN")
    change = {"type": "host_change", "old": 0, "new": 1, "votes": g.votes("depose", 0, [1, 2])}
    seq1.submit(g.envelope(1, change), 1, g.t + 1)
    assert seq1.chain.host == 1
    seq1.submit(g.envelope(2, ACK, seq1.head), 2, g.t + 2)


def test_records_survive_a_transcript_file(tmp_path):
    g = Game(3)
    for s in (2, 1, 0, 1):
        g.submit(s, ACK)
    with TranscriptWriter(tmp_path / "game.dpt") as w:
        for r in g.seq.records:
            w.append(r)
    back = read_transcript(tmp_path / "game.dpt")
    assert list(back) == g.seq.records
    c = ChainChecker(GAME, g.keys, g.keys)
    for r in back:
        c.feed(r)
    assert c.head == g.seq.head


# ---------------------------------------------------------------------- fuzzing
FUZZ_GAME = Game(3)
FUZZ_BASE = [
    FUZZ_GAME.envelope(1, {"type": "coin_commit", "step": "dealer", "commit": bytes(32)}),
    FUZZ_GAME.envelope(2, {"type": "move", "hand": 0, "move": "catch", "target": 1}),
]
_values = st.one_of(
    st.none(), st.booleans(), st.integers(), st.binary(max_size=70),
    st.text(max_size=6), st.lists(st.integers(0, 3), max_size=3),
    st.dictionaries(st.sampled_from(["type", "seat", "n", "x"]), st.integers(0, 3), max_size=3),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_envelopes_raise_only_protocol_errors_and_change_nothing(data):
    seq = Sequencer(FUZZ_GAME.ids[0], GAME, 0, records=FUZZ_GAME.seq.records)
    env = copy.deepcopy(data.draw(st.sampled_from(FUZZ_BASE)))
    target = env["body"] if data.draw(st.booleans()) else env
    key = data.draw(st.sampled_from(sorted(target) + ["extra"]))
    if data.draw(st.booleans()) and key in target:
        del target[key]
    else:
        target[key] = data.draw(_values)
    from_seat = data.draw(st.sampled_from([env.get("seat"), 0, 1, 2]))
    from_seat = from_seat if isinstance(from_seat, int) and not isinstance(from_seat, bool) else 1
    before = seq.records
    try:
        seq.submit(env, from_seat, 10**7)
    except ProtocolError as exc:
        assert exc.seat == from_seat and exc.code in CODES
        assert seq.records == before
    else:  # only a mutation that changed nothing signed can pass
        assert len(seq.records) == len(before) + 1


def test_author_helper_with_sequencer():
    g = Game(2, accept=False)
    a = Author(g.ids[1], GAME, 1)
    for _ in range(3):
        g.seq.submit(a.envelope(ACK, g.seq.head), 1, 1)
    assert [r["env"]["n"] for r in g.seq.records[1:]] == [0, 1, 2]


def test_sequencer_bounds_and_resuming_from_broken_records():
    """The host seat is 0..9; 2 to 10 players; resuming from records that are no table is a
    protocol error (MALFORMED, naming the host for a table body it signed), not a crash; a
    table's envelope signed by another seat on the host's own connection is WRONG_SEAT; a host
    seat past the table's end is TABLE_MISMATCH; time may start at 0 and never goes back."""
    ids = identities(11)
    keys = [k.public_bytes() for k in ids]
    genesis = genesis_hash(GAME)
    for bad in (10, -1, True, None):
        with pytest.raises(ValueError):
            Sequencer(ids[0], GAME, bad)
    Sequencer(ids[9], GAME, 9)
    for records in ([5], [{"env": 5}], [{"env": {"body": 5}}]):
        with pytest.raises(ProtocolError) as info:
            Sequencer(ids[0], GAME, 0, records=records)
        assert info.value.code == "MALFORMED"
    broken = {**table_body(keys[:2]), "timers": None}
    with pytest.raises(ProtocolError) as info:
        Sequencer(ids[1], GAME, 1, records=[{"env": {"body": broken}}])
    assert (info.value.code, info.value.seat) == ("MALFORMED", 1)
    seq = Sequencer(ids[0], GAME, 0)
    refused(seq, sign_envelope(ids[1], GAME, 1, 0, genesis, table_body(keys[:2])), 0,
            "WRONG_SEAT")
    refused(seq, sign_envelope(ids[0], GAME, 0, 0, genesis, table_body(keys)), 0, "MALFORMED")
    ten = sign_envelope(ids[0], GAME, 0, 0, genesis, table_body(keys[:10]))
    assert Sequencer(ids[0], GAME, 0).submit(ten, 0, 5)["i"] == 0
    past = Sequencer(ids[2], GAME, 2)
    refused(past, sign_envelope(ids[2], GAME, 2, 0, genesis, table_body(keys[:2])), 2,
            "TABLE_MISMATCH")
    rec = seq.submit(sign_envelope(ids[0], GAME, 0, 0, genesis, table_body(keys[:2])), 0, 0)
    assert rec["t"] == 0
    nxt = sign_envelope(ids[1], GAME, 1, 0, seq.head, {"type": "accept",
                                                      "table": record_hash(rec)})
    assert seq.submit(nxt, 1, 0)["t"] == 0
