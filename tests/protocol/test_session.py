"""Sessions playing whole matches in memory: agreement, private views, cheats caught and
attributed, time-outs, races, determinism."""

from __future__ import annotations

import copy
import dataclasses
import random

import pytest

from dernier_p2p.bots import HeuristicBot, RandomBot
from dernier_p2p.deck import group as g
from dernier_p2p.protocol.bridge import card_face
from dernier_p2p.protocol.envelope import make_record, record_hash, sign_envelope
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.local import (
    DEFAULT_TIMERS,
    LocalTable,
    identity_for,
    play_round,
    run_local_match,
)
from dernier_p2p.protocol.messages import move_to_body
from dernier_p2p.protocol.session import Session, SessionEvent, hand_seed
from dernier_p2p.protocol.verify import check_records
from dernier_p2p.rules import (
    Catch,
    Cut,
    Declare,
    Draw,
    Flip,
    Flipped,
    Forfeited,
    HandOver,
    IllegalMove,
    Leave,
    Phase,
    Play,
    Rank,
    SeatOut,
    Timeout,
    apply,
    to_act,
)
from dernier_p2p.rules.cards import deck_cards
from dernier_p2p.wire.canonical import encode
from dernier_p2p.wire.hashing import digest


def seeds(n: int, base: int = 1) -> list[bytes]:
    return [bytes([base + k]) * 32 for k in range(n)]


def bots(n: int) -> list:
    return [HeuristicBot(k) if k % 2 else RandomBot(100 + k, prefer_play=True) for k in range(n)]


GIVING = ("deal", "transfer", "peek")


def check_views(table: LocalTable, seen: list) -> None:
    """Each seat reads its own cards (and the cut card it peeked); of the rest of the deck only
    the open cards and those the deck gave it (dealt, passed to it, peeked)."""
    for s in table.sessions:
        st, k = s.state, s.seat
        own = set(st.hands[k])
        extra = set()
        if st.phase is Phase.CUT and to_act(st) == k:
            extra = {st.pile[-1]}
        view = s.view
        assert set(view) <= own | extra
        if s.settled:
            assert own <= set(view)
        if s.mine is None:
            continue
        given = {
            e["position"] for e in s.pub.log if e.get("op") in GIVING and e.get("to") == k
        }
        for p, slot in enumerate(s.pub.slots):
            if p not in given and not slot.opened:
                assert s.mine.card(p) is None, f"seat {k} reads position {p}"
        seen.extend((st.hand_number, p, c) for p, c in view.items())


def play(variant: str, n: int, hands: int, order_seed: int = 0, base: int = 1) -> LocalTable:
    table = LocalTable(variant, seeds(n, base), {"match": ["hands", hands]})
    table.deliver()
    rng = random.Random(order_seed)
    pols = bots(n)
    seen: list = []
    rounds = 0
    while not table.sessions[0].finished:
        play_round(table, pols, rng)
        check_views(table, seen)
        rounds += 1
        assert rounds < 5000
    # every face a seat saw is the card the end-of-hand audit decrypted at that position
    cards = table.sessions[0].hand_cards
    deck = table.sessions[0].rules.deck
    assert all(card_face(deck, cards[h][p]) == c for h, p, c in seen)
    return table


def check_agreement(table: LocalTable, hands: int) -> None:
    s0 = table.sessions[0]
    assert s0.finished and s0.result is not None
    for s in table.sessions:
        assert s.fault is None
        assert s.state == s0.state
        assert s.result == s0.result
        assert sorted(s.hand_cards) == list(range(1, hands + 1))
        assert s.hand_cards == s0.hand_cards
    # the last hand's cards: each seat's view is exactly its hand, with the revealed faces
    st = s0.state
    for s in table.sessions:
        assert s.view == {p: st.shown[p] for p in st.hands[s.seat]}
    # an observer fed the records reaches the same state
    obs = Session(None, None, table.records[0])
    for rec in table.records[1:]:
        assert obs.receive(rec, rec["t"]) == []
    assert obs.state == s0.state and obs.view == {}
    # every peer took the same decisions (races, audits) in the same order
    assert all(session_events(s) == session_events(obs) for s in table.sessions)
    audits = [e for e in session_events(obs) if e.kind == "audit-ok"]
    assert audits == [SessionEvent("audit-ok", None, f"hand {h}") for h in range(1, hands + 1)]


def session_events(s: Session) -> list[SessionEvent]:
    return [e for e in s.events if isinstance(e, SessionEvent)]


VARIANTS = ["dernier", "originale", "moderno", "standard"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_two_seat_match(variant):
    hands = 2 if variant == "dernier" else 1  # two hands: the next hand's deck and dealer
    table = play(variant, 2, hands=hands)
    check_agreement(table, hands)
    if variant == "moderno":  # jump-ins raced the seat to play and lost
        lost = [e for e in session_events(table.sessions[0]) if e.kind == "race-lost"]
        assert {e.seat for e in lost} == {0, 1}


@pytest.mark.parametrize(
    "variant",
    ["dernier"] + [pytest.param(v, marks=pytest.mark.slow) for v in VARIANTS[1:]],
)
def test_four_seat_match(variant):
    table = play(variant, 4, hands=1, order_seed=3)
    check_agreement(table, 1)


def test_same_seeds_same_record_stream():
    def stream() -> list[bytes]:
        res = run_local_match("dernier", 2, seeds(2), bots(2), options={"match": ["hands", 1]})
        return [encode(r) for r in res.records]

    a = stream()
    assert len(a) > 50 and stream() == a
    # other seeds: another game from the first record on
    other = LocalTable("dernier", seeds(2, base=9), {"match": ["hands", 1]})
    other.deliver()
    assert all(encode(r) != x for r, x in zip(other.records, a, strict=False))


def _silent(state, seat, view):
    return None


def test_timeout_forfeits_in_dernier_with_the_votes_of_a_quorum():
    res = run_local_match(
        "dernier", 3, seeds(3), [HeuristicBot(1), _silent, HeuristicBot(2)],
        options={"match": ["hands", 3]}
    )
    for s in res.sessions:
        assert s.finished
        assert s.state.match_points[1] == -1
        assert any(isinstance(e, Forfeited) and e.seat == 1 for e in s.events)
    body = res.records[-1]["env"]["body"]
    assert body["type"] == "timeout" and body["seat"] == 1
    assert [v["seat"] for v in body["votes"]] == [0, 2]  # q(3) = 2: the host and seat 2


def test_absence_at_two_seats_is_no_contest():
    res = run_local_match(
        "dernier", 2, seeds(2), [HeuristicBot(1), _silent], options={"match": ["hands", 3]}
    )
    for s in res.sessions:
        assert s.finished and s.no_contest
        assert s.result == {"no_contest": True}
        assert s.state.match_points == (0, 0)
        assert not any(isinstance(e, Forfeited) for e in s.events)
        ended = [e for e in session_events(s) if e.kind == "no-contest"]
        assert ended == [SessionEvent("no-contest", 1, "absent at two seats")]
    assert res.records[-1]["env"]["body"] == {"type": "no_contest", "seat": 1, "votes": []}


def test_abandon_votes_end_the_match_as_no_contest_naming_no_seat():
    """The body each kind of vote calls for; a quorum of abandon votes (7.5) ends the match as
    no contest for every seat, the event naming no seat and saying why."""
    table = table_at_play("dernier", 3)
    host = table.sessions[table.host_seat]
    votes = table.collect("abandon", None)
    assert host.votes_body("timeout", 2, votes) == {"type": "timeout", "seat": 2, "votes": votes}
    assert host.votes_body("left", 2, votes) == {"type": "left", "seat": 2, "votes": votes}
    assert host.votes_body("depose", 1, votes) == {
        "type": "host_change", "old": 1, "new": host.seat, "votes": votes}
    body = host.votes_body("abandon", None, votes)
    assert body == {"type": "no_contest", "seat": None, "votes": votes}
    for other in (table.sessions[1], Session(None, None, table.records[0])):  # not the host
        with pytest.raises(ValueError, match="only the host"):
            other.announce(body)
    table.send(host.announce(body))
    table.deliver()
    for s in table.sessions:
        assert s.finished and s.no_contest and s.result == {"no_contest": True}
        assert s.pending == [] and not s.quiescent
        ended = [e for e in session_events(s) if e.kind == "no-contest"]
        assert ended == [SessionEvent("no-contest", None, "abandoned by a quorum")]


def _never_declaring(bot):
    """``bot``, but it never declares nor catches (a play declares nothing)."""
    def policy(state, seat, view):
        mv = bot(state, seat, view)
        if isinstance(mv, (Declare, Catch)):
            return None
        return dataclasses.replace(mv, declare=False) if isinstance(mv, Play) else mv
    return policy


def test_an_open_declaration_is_not_waited_on_and_its_timeout_is_no_stall():
    """A seat down to one card that has not declared (a declaration is optional) is listed in
    ``pending`` but the table does not wait on it, and a ``timeout`` of it is no stall (it owes
    no message): the rules refuse it, logged as ``timeout-ignored``, and it stays in play."""
    table = table_at_play("dernier", 3)
    rng, pols = random.Random(0), [_never_declaring(b) for b in bots(3)]
    s0 = table.sessions[0]
    for _ in range(100):
        if s0.state.owes and s0.quiescent:
            break
        play_round(table, pols, rng)
        assert not s0.finished
    (owing,), actor = s0.state.owes, to_act(s0.state)
    assert owing != actor
    assert s0.pending == [(actor, "move"), (owing, "declare (optional)")]
    assert s0.waiting_on() == [actor]
    table.timeout(owing)
    table.deliver()
    for s in table.sessions:
        ignored = [e for e in session_events(s) if e.kind in ("timeout-ignored", "stall")]
        assert [(e.kind, e.seat) for e in ignored] == [("timeout-ignored", owing)]
        assert s.state.out == () and s.waiting_on() == [actor]


@pytest.mark.parametrize(
    "variant,n,gone", [("standard", 3, 2), ("standard", 3, 1), ("moderno", 4, 2)]
)
def test_stall_owing_a_deck_message_puts_the_seat_out(variant: str, n: int, gone: int) -> None:
    table = LocalTable(variant, seeds(n), {"match": ["hands", 2]})
    # deliver until the seat owes its shuffle, holding back its envelopes
    held = []
    while table.queue:
        env = table.queue.popleft()
        if env["seat"] == gone and (held or env["body"]["type"] == "shuffle"):
            held.append(env)
            continue
        rec = table.sequence(env)
        for s in table.sessions:
            table.queue.extend(s.receive(rec, rec["t"]))
    assert held and table.sessions[1 - (gone == 1)].waiting_on() == [gone]
    table.timeout(gone)
    table.deliver()
    for s in table.sessions:  # three seats or more: the hand is void and the others play on
        assert not s.finished and s.state.out == (gone,) and s.state.hand_number == 2
        assert SessionEvent("stall", gone, "timed out owing a message") in s.events
        assert SeatOut(gone, "left", 1) in s.events
    # the shuffle it owed, sequenced late, is for the void hand: every peer passes it over
    rec = table.sequence(held[0])
    for s in table.sessions:
        before = s.state
        assert s.receive(rec, rec["t"]) == [] and s.fault is None and s.state is before
    play_out(table, n)
    results = {repr(s.result) for s in table.sessions}
    assert len(results) == 1
    for s in table.sessions:
        assert s.finished and s.state.standings[-1] == gone  # the leaver is last
        assert s.state.hands[gone] == () and 2 in s.hand_cards  # hand 2 dealt without it
        assert 1 not in s.hand_cards  # the void hand is never revealed


def test_hand_seed_is_the_digest_protocol_md_gives():
    """PROTOCOL.md 8.3: a seat's Drbg of a hand is seeded with
    ``digest("dernier-p2p/hand-seed", [seed, game, hand])`` (the test vectors depend on it)."""
    seed, game = bytes(range(32)), bytes(range(16))
    for hand in (0, 1, 7):
        assert hand_seed(seed, game, hand) == digest("dernier-p2p/hand-seed", [seed, game, hand])


def _record0(table: LocalTable, change=None, sig: bytes | None = None, **body) -> dict:
    """Record 0 of ``table`` with its table body's fields replaced (or ``change(body)``),
    signed again by its host (``sig``: the record signature instead)."""
    rec = table.records[0]
    h, env = rec["h"], rec["env"]
    new = dict(env["body"], **body)
    if change is not None:
        new = change(new)
    env = sign_envelope(table.identities[h], env["game"], h, 0, env["head"], new)
    rec = make_record(table.identities[h], env, h, 0, rec["prev"], rec["t"])
    return rec if sig is None else dict(rec, hsig=sig)


def test_record_zero_is_checked_naming_the_host():
    """Record 0 comes from the host: a body that is no table, a table of 1 or 11 players, a
    malformed table, rules the variant refuses or a bad record signature are refused with
    their code naming the host; an honest one starts every seat at its first counter."""
    table = LocalTable("dernier", seeds(3), {"match": ["hands", 1]}, host=1)
    rec0 = table.records[0]
    players = rec0["env"]["body"]["players"]
    eleven = players + [dict(players[0], key=identity_for(bytes([50 + k]) * 32).public_bytes())
                        for k in range(8)]
    bad = {
        "no table": (_record0(table, lambda b: {"type": "ack"}), "BAD_CHAIN"),
        "one player": (_record0(table, players=players[:1]), "MALFORMED"),
        "eleven players": (_record0(table, players=eleven), "MALFORMED"),
        "players not a list": (_record0(table, players={"0": players[0]}), "MALFORMED"),
        "a timer below 0": (_record0(table, timers=dict(DEFAULT_TIMERS, turn_ms=-1)),
                            "MALFORMED"),
        "an unknown variant": (_record0(table, variant="nope"), "TABLE_MISMATCH"),
        "a bad match option": (_record0(table, options={"match": ["hands"]}), "TABLE_MISMATCH"),
        "ten at dernier": (_record0(table, players=eleven[:10]), "TABLE_MISMATCH"),
        "a bad signature": (_record0(table, sig=bytes(64)), "BAD_SIGNATURE"),
    }
    for what, (rec, code) in bad.items():
        with pytest.raises(ProtocolError) as info:
            Session(None, None, rec)
        assert (info.value.code, info.value.seat) == (code, 1), what
    ten = _record0(table, players=eleven[:10], variant="standard")
    assert Session(None, None, ten).n == 10
    seed = bytes(32)
    for seat in range(3):
        s = Session(table.identities[seat], seat, rec0, seed)
        assert (s.n, s.seat, s.host, s.count) == (3, seat, 1, 1)
        assert s.table_hash == s.head == record_hash(rec0) and s.waiting_since == rec0["t"]
        assert s.table_body == rec0["env"]["body"]  # the timers and options peers read
        assert s.ack()["n"] == (1 if seat == 1 else 0)  # the host signed record 0 with n 0
    for ident, seat, seed_ in ((table.identities[0], 3, seed), (table.identities[0], -1, seed),
                               (table.identities[0], 1, seed), (None, 0, seed),
                               (table.identities[0], 0, bytes(31))):
        with pytest.raises(ValueError):
            Session(ident, seat, rec0, seed_)


# ---------------------------------------------------------------------------------- cheats
# ---------------------------------------------------------------------------------- cheats
def play_out(table: LocalTable, n: int) -> None:
    """Deliver what is queued, then let bots play the match to its end (seeded)."""
    rng = random.Random(0)
    pols = bots(n)
    table.deliver()
    for _ in range(5000):  # a match that no longer moves fails rather than hangs
        if table.sessions[0].finished:
            return
        play_round(table, pols, rng)
    pytest.fail("the match did not end")


def table_at_play(variant: str = "dernier", n: int = 2) -> LocalTable:
    table = LocalTable(variant, seeds(n), {"match": ["hands", 1]})
    table.deliver()
    return table


def forge(table: LocalTable, seat: int, body: dict) -> dict:
    """An envelope of ``body`` signed by ``seat`` with its next counter, skipping every check."""
    s = table.sessions[seat]
    return s._author.envelope(body, s.head)


def feed_all(table: LocalTable, env: dict) -> list[ProtocolError]:
    rec = table.sequence(env)
    errors = []
    for s in table.sessions:
        with pytest.raises(ProtocolError) as info:
            s.receive(rec, rec["t"])
        errors.append(info.value)
    return errors


def test_play_of_a_card_not_held_is_attributed():
    table = table_at_play()
    st = table.sessions[0].state
    cheat = 1
    other = table.sessions[0].state.hands[0][0]
    body = {"type": "move", "hand": st.hand_number, "move": "play", "slot": other,
            "suit": None, "target": None, "declare": False}
    before = [(s.count, s.state, s.head) for s in table.sessions]
    errors = feed_all(table, forge(table, cheat, body))
    assert {(e.code, e.seat) for e in errors} == {("NOT_HELD", cheat)}
    # judged before it was applied: every session is as it was
    assert [(s.count, s.state, s.head) for s in table.sessions] == before
    assert all(s.fault is None for s in table.sessions)


def test_illegal_play_is_attributed_once_the_card_opens():
    for base in range(1, 40):
        table = LocalTable("dernier", seeds(2, base), {"match": ["hands", 1]})
        table.deliver()
        s0 = table.sessions[0]
        actor = to_act(s0.state)
        mover = table.sessions[actor]
        legal = {m.slot for m in mover.legal() if isinstance(m, Play)}
        bad = [p for p in mover.view if p not in legal]
        if bad:
            break
    else:
        pytest.fail("no deal with an unplayable card")
    body = {"type": "move", "hand": s0.state.hand_number, "move": "play", "slot": bad[0],
            "suit": None, "target": None, "declare": False}
    table.send(forge(table, actor, body))
    with pytest.raises(ProtocolError) as info:
        table.deliver()
    assert (info.value.code, info.value.seat) == ("ILLEGAL_MOVE", actor)
    rec = table.records[-1]
    for s in table.sessions[1:]:  # the host's delivery stopped at the first session's fault
        with pytest.raises(ProtocolError):
            s.receive(rec, rec["t"])
    # a stopped session lists no move and raises its fault again, though the table looks
    # settled (the fault was found running the play, with nothing left waiting)
    assert mover.fault is not None and mover.settled
    assert mover.legal() == []
    with pytest.raises(ProtocolError) as again:
        mover.intend(Draw(actor))
    assert again.value is mover.fault


def resign(table: LocalTable, env: dict, body: dict) -> dict:
    seat = env["seat"]
    return sign_envelope(table.identities[seat], env["game"], seat, env["n"], env["head"], body)


def tamper_first(kind: str, seat: int, change):
    state = {"done": False, "table": None}

    def tamper(env: dict) -> dict:
        if state["done"] or env["seat"] != seat or env["body"]["type"] != kind:
            return env
        state["done"] = True
        return resign(state["table"], env, change(dict(env["body"])))

    return tamper, state


def run_tampered(variant: str, n: int, kind: str, seat: int, change) -> tuple:
    tamper, flag = tamper_first(kind, seat, change)
    table = LocalTable(variant, seeds(n), {"match": ["hands", 1]}, tamper=tamper)
    flag["table"] = table
    with pytest.raises(ProtocolError) as info:
        play_out(table, n)
    return table, info.value


def test_wrong_token_is_attributed_and_changes_nothing():
    def change(body):
        toks = [dict(t) for t in body["tokens"]]
        toks[0]["token"] = g.encode(g.GENERATOR) if isinstance(g.GENERATOR, int) else g.GENERATOR
        body["tokens"] = toks
        return body

    table, err = run_tampered("dernier", 3, "tokens", 2, change)
    assert (err.code, err.seat) == ("DECK_FAULT", 2)
    s0 = table.sessions[0]
    # the refused record left the session as it was: same head, no fault latched
    assert s0.fault is None and s0.count == len(table.records) - 1


def test_shuffle_for_another_hand_is_attributed():
    def change(body):
        body["hand"] += 1
        return body

    table, err = run_tampered("dernier", 3, "shuffle", 1, change)
    assert (err.code, err.seat) == ("DECK_FAULT", 1)
    assert table.sessions[0].fault is None


def test_cut_that_drops_a_special_card_is_caught_by_the_replay():
    # every rank special: the cutter must keep the bottom card; its envelope is altered to
    # drop it, which nobody can see until the end-of-hand reveal shows the card
    options = {"match": ["hands", 1], "special_ranks": [r.value for r in Rank]}
    cutters = []

    def tamper(env):
        body = env["body"]
        if body.get("move") == "cut":
            assert body["keep"]
            cutters.append(env["seat"])
            return resign(table, env, dict(body, keep=False))
        return env

    table = LocalTable("originale", seeds(2), options, tamper=tamper)
    with pytest.raises(ProtocolError) as info:
        play_out(table, 2)
    assert len(cutters) == 1
    assert (info.value.code, info.value.seat) == ("ILLEGAL_MOVE", cutters[0])
    assert "cut-must-keep" in info.value.detail
    # the hand was played to its end before the replay caught it
    assert any(isinstance(e, HandOver) for e in table.sessions[0].events)


def test_bad_record_signature_changes_nothing():
    table = table_at_play()
    s0 = table.sessions[0]
    env = table.sessions[to_act(s0.state)].intend(Draw(to_act(s0.state)))
    rec = table.sequence(env)
    bad = dict(rec, hsig=bytes(64))
    before = (s0.count, s0.state, s0.head)
    with pytest.raises(ProtocolError) as info:
        s0.receive(bad, 0)
    assert info.value.code == "BAD_SIGNATURE" and info.value.seat == table.host_seat
    assert (s0.count, s0.state, s0.head) == before and s0.fault is None
    for s in table.sessions:
        s.receive(rec, rec["t"])
    assert s0.count == before[0] + 1


# ---------------------------------------------------------------------------------- races
def test_lost_race_is_ignored_not_punished():
    table = table_at_play("dernier", 2)
    s0 = table.sessions[0]
    actor = to_act(s0.state)
    mover = table.sessions[actor]
    first = mover.intend(Draw(actor))
    # a second move built against the same head: legal then, illegal once the draw is in
    second = mover.intend(Draw(actor))
    table.send(first)
    table.send(second)
    table.deliver()
    for s in table.sessions:
        assert s.fault is None
        lost = [e for e in s.events if isinstance(e, SessionEvent) and e.kind == "race-lost"]
        assert [e.seat for e in lost] == [actor]
        assert s.state == s0.state


def test_a_slot_played_twice_from_one_head_loses_the_race_the_second_time():
    """A slot that left the hand after the head a play echoes, but was held then, is a lost
    race (7.4), not NOT_HELD."""
    table = table_at_play("dernier", 2)
    s0 = table.sessions[0]
    actor = to_act(s0.state)
    mover = table.sessions[actor]
    play = next(m for m in mover.legal() if isinstance(m, Play))
    first = mover.intend(play)
    table.send(first)
    table.send(forge(table, actor, first["body"]))  # the same play, echoing the same head
    table.deliver()
    for s in table.sessions:
        assert s.fault is None
        lost = [e for e in session_events(s) if e.kind == "race-lost"]
        assert [(e.seat, e.detail) for e in lost] == [(actor, f"slot {play.slot} left the hand")]
    assert not s0.legal_at(s0.count - 1, actor, {"type": "ack"})  # only a move is legal


def test_a_play_that_loses_its_race_once_its_card_opens_is_logged_not_punished():
    """Moderno: the seat to act sends two plays from one head. The second, no longer its turn,
    could still be a jump-in for some face, so its card opens; the face is not identical to
    the card just played, so the rules refuse it, and as it was legal at its head every peer
    logs a lost race naming the seat and the rule (7.4)."""
    for base in range(1, 10):
        table = LocalTable("moderno", seeds(2, base), {"match": ["hands", 1]})
        table.deliver()
        actor = to_act(table.sessions[0].state)
        mover = table.sessions[actor]
        plain = [m for m in mover.legal() if isinstance(m, Play) and m == Play(actor, m.slot,
                                                                                m.card)]
        pairs = [(a, b) for a in plain for b in plain if a.card != b.card]
        if pairs:
            break
    else:
        pytest.fail("no deal with two different plain plays")
    first, second = pairs[0]
    table.send(mover.intend(first))
    table.send(mover.intend(second))
    table.deliver()
    for s in table.sessions:
        assert s.fault is None and s.pub.slots[second.slot].opened
        (lost,) = session_events(s)
        assert (lost.kind, lost.seat) == ("race-lost", actor)
        assert lost.detail.startswith("[not-identical] ")


def test_a_vote_states_the_last_record_its_kind_counts_for_its_target():
    """After seat 1's ack: a ``timeout`` vote still counts from seat 1's last move, a ``left``
    vote from the ack, a ``depose`` vote of the host from the last record (it signs every
    record)."""
    table = table_at_play("dernier", 2)
    s0, s1 = table.sessions
    moved = s0.vote("timeout", 1)["after"]
    table.send(s1.ack())
    table.deliver()
    ack = s0.count - 1
    assert table.records[ack]["env"]["body"] == {"type": "ack"} and moved < ack
    assert s0.vote("timeout", 1)["after"] == moved
    assert s0.vote("left", 1)["after"] == ack
    assert s1.vote("depose", table.host_seat)["after"] == ack


def test_move_not_legal_at_its_head_is_a_fault():
    table = table_at_play("dernier", 2)
    s0 = table.sessions[0]
    actor = to_act(s0.state)
    idle = 1 - actor
    body = {"type": "move", "hand": s0.state.hand_number, "move": "draw"}
    errors = feed_all(table, forge(table, idle, body))
    assert {(e.code, e.seat) for e in errors} == {("ILLEGAL_MOVE", idle)}
    assert all(s.fault is None and s.count == len(table.records) - 1 for s in table.sessions)


def test_intend_refuses_illegal_and_foreign_moves():
    table = table_at_play("dernier", 2)
    s0 = table.sessions[0]
    actor = to_act(s0.state)
    idle = table.sessions[1 - actor]
    from dernier_p2p.rules import IllegalMove

    with pytest.raises(IllegalMove):
        idle.intend(Draw(1 - actor))
    with pytest.raises(IllegalMove):
        idle.intend(Draw(actor))


def test_intend_names_the_rule_a_local_move_breaks():
    """``intend`` refuses with a stable rule id: any move before the table is settled
    (``busy``), a move of another seat or the host's Timeout/Leave (``bad-seat``), a cut or a
    play naming a card the seat does not hold there (``face-mismatch``); an observer makes no
    moves. A legal move is signed as its move body, echoing the head."""
    table = LocalTable("originale", seeds(2), {"match": ["hands", 1]})
    s0 = table.sessions[0]

    def refused(session, move) -> str:
        with pytest.raises(IllegalMove) as info:
            session.intend(move)
        return info.value.rule

    assert refused(s0, Draw(0)) == "busy"  # the accepts are not in yet
    table.deliver()
    cutter = to_act(s0.state)
    mover = table.sessions[cutter]
    (cut,) = mover.legal()
    other = next(c for c in deck_cards(mover.rules.deck) if c != cut.card)
    assert refused(mover, Cut(cutter, True, other)) == "face-mismatch"
    for move in (Timeout(cutter), Leave(cutter), Cut(1 - cutter, True, cut.card),
                 Flip(cut.card)):  # the host's bodies, another seat's move, chance's input
        assert refused(mover, move) == "bad-seat"
    with pytest.raises(ValueError, match="observer"):
        Session(None, None, table.records[0]).intend(cut)
    env = mover.intend(cut)
    assert (env["seat"], env["head"]) == (cutter, mover.head)
    assert env["body"] == {"type": "move", "hand": s0.state.hand_number, "move": "cut",
                           "keep": cut.keep}
    table.send(env)
    table.deliver()
    chooser = table.sessions[to_act(s0.state)]
    table.send(chooser.intend(chooser.legal()[0]))  # the hand size, then the deal
    table.deliver()
    actor = to_act(s0.state)
    mover = table.sessions[actor]
    slot, card = next(iter(mover.view.items()))
    wrong = next(c for c in deck_cards(mover.rules.deck) if c != card)
    assert refused(mover, Play(actor, slot, wrong)) == "face-mismatch"


def test_a_first_wild_draw_four_is_reshuffled_by_position_before_play():
    """The set-up part of the slow test below: the first card, a wild draw-four, goes back with
    the unopened stock, reshuffled by position into a new epoch whose slots follow the old
    ones; the engine gets exactly the new epoch's slots, so the next card flipped is its first."""
    table = LocalTable("standard", seeds(2, 18), {"match": ["hands", 1]})
    table.deliver()
    s0 = table.sessions[0]
    flips = [e for e in s0.events if isinstance(e, Flipped)]
    assert flips[0].card.rank is Rank.WILD4 and flips[1].slot == 108
    assert s0.settled and to_act(s0.state) is not None
    assert all(s.state == s0.state for s in table.sessions)


@pytest.mark.slow
def test_first_wild_draw_four_goes_back_into_the_deck_by_position():
    # seeds chosen so that standard's first card is a wild draw-four (asserted below): the
    # card and the unopened stock are reshuffled by position, then a new first card is flipped
    table = play("standard", 2, hands=1, base=18)
    flips = [e for e in table.sessions[0].events if isinstance(e, Flipped)]
    assert flips[0].card.rank is Rank.WILD4
    assert flips[1].slot == 108  # the first position of the reshuffled epoch
    log = table.sessions[0].pub.log
    assert any(e.get("op") == "reshuffle" and "positions" in e for e in log)
    check_agreement(table, 1)


def test_resumed_session_recomputes_its_own_messages():
    res = run_local_match("dernier", 2, seeds(2), bots(2), options={"match": ["hands", 1]})
    table_rec = res.records[0]
    for seat in range(2):
        fresh = Session(
            identity_for(seeds(2)[seat]), seat, table_rec, digest("dernier-p2p/local-seed",
                                                                  seeds(2)[seat])
        )
        made = fresh.start()
        for rec in res.records[1:]:
            made += fresh.receive(rec, rec["t"])
        sent = [r["env"] for r in res.records if r["env"]["seat"] == seat]
        sent = [e for e in sent if e["body"]["type"] not in ("move", "table")]
        assert made == sent  # byte for byte: same bodies, counters, heads and signatures
        assert fresh.state == res.state


def test_waiting_on_names_the_seat_to_act_and_when_the_wait_began():
    table = table_at_play("dernier", 2)
    s0 = table.sessions[0]
    actor = to_act(s0.state)
    assert s0.waiting_on() == [actor]
    began = s0.waiting_since
    assert began == table.records[-1]["t"]
    table.send(table.sessions[actor].intend(Draw(actor)))
    table.deliver()
    assert s0.waiting_on() == [to_act(s0.state)]
    assert s0.waiting_since > began


def test_legal_at_and_sign_again():
    table = table_at_play("dernier", 2)
    s0 = table.sessions[0]
    actor = to_act(s0.state)
    head = s0.count - 1
    draw = {"type": "move", "hand": s0.state.hand_number, "move": "draw"}
    assert s0.legal_at(head, actor, draw)
    assert not s0.legal_at(head, 1 - actor, draw)
    mover = table.sessions[actor]
    lost = mover.intend(Draw(actor))  # never sequenced, e.g. the host went away
    again = mover.sign_again([lost["body"]])
    assert again[0]["n"] == lost["n"] and again[0]["body"] == lost["body"]
    with pytest.raises(ProtocolError) as err:  # a seat past the table: checked as peers do
        mover.sign_again([{"type": "timeout", "seat": 5, "votes": []}])
    assert (err.value.code, err.value.seat) == ("MALFORMED", actor)
    table.send(again[0])
    table.deliver()
    assert s0.state.drawn >= 0


def test_undecidable_complaint_stops_the_hand_and_the_audit_names_the_giver():
    cheats = []

    def tamper(env):
        body = env["body"]
        if body["type"] == "transfer" and not cheats:
            cheats.append((env["seat"], body["to"]))
            box = bytearray(body["box"])
            box[0] ^= 1  # the receiver cannot open it, and cannot prove it
            return resign(table, env, dict(body, box=bytes(box)))
        return env

    table = LocalTable("moderno", seeds(2), {"match": ["hands", 1]}, tamper=tamper)
    with pytest.raises(ProtocolError) as info:
        play_out(table, 2)
    giver, receiver = cheats[0]
    for s in table.sessions:
        disputes = [e for e in session_events(s) if e.kind == "dispute"]
        assert [e.seat for e in disputes] == [receiver]
        assert f"seat {receiver} disputes box 0" in disputes[0].detail
        # each seat's own table took the complaint too (the complainer's as the relay
        # returned it), in the same place of its log as the public table
        assert s.mine.complaints == s.pub.complaints and len(s.pub.complaints) == 1
        logs = [[m for m in t.log if "type" in m] for t in (s.mine, s.pub)]
        upto = [[m["type"] for m in log].index("complaint") + 1 for log in logs]
        assert logs[0][: upto[0]] == logs[1][: upto[1]]
    assert (info.value.code, info.value.seat) == ("DECK_FAULT", giver)
    assert "audit" in info.value.detail


def test_a_bad_box_nobody_complains_of_is_named_by_the_end_of_hand_audit():
    """The cutter keeps quiet about a peek box that does not open (its complaint replaced by an
    ack, as a colluding seat would): the hand is played out, and the audit at its end, with
    every secret in, names the giver of the box; the session stops on that fault."""
    cheats = []

    def tamper(env):
        body = env["body"]
        if body["type"] == "peek" and not cheats:
            cheats.append(env["seat"])
            box = bytearray(body["box"])
            box[0] ^= 1
            return resign(table, env, dict(body, box=bytes(box)))
        if body["type"] == "complaint":
            return resign(table, env, {"type": "ack"})
        return env

    table = LocalTable("originale", seeds(2), {"match": ["hands", 1]}, tamper=tamper)
    with pytest.raises(ProtocolError) as info:
        play_out(table, 2)
    (giver,) = cheats
    assert (info.value.code, info.value.seat) == ("DECK_FAULT", giver)
    detail = info.value.detail
    assert detail.startswith("audit of hand 1: ") and "does not open" in detail
    s0 = table.sessions[0]
    assert s0.fault is info.value and s0.state.phase is Phase.REVEAL
    assert not [e for e in session_events(s0) if e.kind in ("dispute", "audit-ok")]


def test_false_complaint_is_named_by_the_audit():
    table = LocalTable("moderno", seeds(2), {"match": ["hands", 1]})
    table.deliver()
    rng = random.Random(0)
    pols = bots(2)
    s0 = table.sessions[0]
    while not s0.pub.boxes:
        play_round(table, pols, rng)
        assert not s0.finished
    receiver = s0.pub.boxes[0].transfer.receiver
    body = {"type": "complaint", "hand": s0.pub.hand, "ref": 0, "plaintext": None}
    table.send(forge(table, receiver, body))
    with pytest.raises(ProtocolError) as info:
        table.deliver()
    assert (info.value.code, info.value.seat) == ("DECK_FAULT", receiver)
    assert "false complaint" in info.value.detail


def test_every_proof_token_and_secret_is_checked_once_per_peer(monkeypatch):
    import dernier_p2p.deck.keys as keys_mod
    import dernier_p2p.deck.table as table_mod

    calls = {"verify_shuffle": 0, "verify_token": 0, "check_secret": 0, "verify_reveal": 0}
    for mod, name in ((table_mod, "verify_shuffle"), (table_mod, "verify_token"),
                      (table_mod, "check_secret"), (keys_mod, "verify_reveal")):
        real = getattr(mod, name)

        def spy(*args, _n=name, _real=real, **kw):
            calls[_n] += 1
            return _real(*args, **kw)

        monkeypatch.setattr(mod, name, spy)
    n = 3
    res = run_local_match("dernier", n, seeds(n, 7), bots(n), options={"match": ["hands", 1]})
    assert res.state.match_over
    bodies = [r["env"] for r in res.records]
    by = {k: [e["seat"] for e in bodies if e["body"]["type"] == k]
          for k in ("shuffle", "key_reveal", "secret")}
    tokens = [e["seat"] for e in bodies if e["body"]["type"] == "tokens"
              for _ in e["body"]["tokens"]]
    # each session checks every other seat's message once (its own it made) and the
    # end-of-hand audit checks none of them again
    assert calls["verify_shuffle"] == (n - 1) * len(by["shuffle"])
    assert calls["verify_reveal"] == (n - 1) * len(by["key_reveal"])
    assert calls["check_secret"] == (n - 1) * len(by["secret"])
    assert calls["verify_token"] == (n - 1) * len(tokens)
    assert len(by["shuffle"]) == n and len(by["secret"]) == n


def test_every_box_is_opened_once_per_peer(monkeypatch):
    import dernier_p2p.deck.transfer as transfer_mod

    calls = []
    real = transfer_mod.verify_token
    monkeypatch.setattr(transfer_mod, "verify_token",
                        lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    n = 3
    res = run_local_match("originale", n, seeds(n, 7), bots(n), options={"match": ["hands", 1]})
    assert res.state.match_over
    boxes = [r for r in res.records if r["env"]["body"]["type"] in ("transfer", "peek")]
    assert boxes  # the cutter's peek
    # the receiver opens each box live, every other peer in the end-of-hand audit
    assert len(calls) == n * len(boxes)


def test_an_ack_echoes_the_head_with_the_next_counter_and_is_sequenced():
    table = table_at_play("standard", 3)
    s = table.sessions[1]
    first, second = s.ack(), s.ack()
    assert first["seat"] == second["seat"] == 1 and first["body"] == {"type": "ack"}
    assert first["head"] == s.head and second["n"] == first["n"] + 1
    records = len(table.records)
    table.send(first)
    table.send(second)
    table.deliver()
    assert len(table.records) == records + 2
    assert all(x.head == table.sessions[0].head for x in table.sessions)


def test_an_observer_sends_no_ack():
    table = table_at_play("dernier", 2)
    observer = Session(None, None, table.records[0])
    with pytest.raises(ValueError):
        observer.ack()
    for rec in table.records[1:]:
        observer.receive(rec, rec["t"])
    assert observer.settled and observer.legal() == []  # an observer has no moves


def test_resign_is_a_signed_resign_body_and_the_seat_leaves_ranked_last():
    """A seat's ``resign``: its next counter, echoing its head; every peer applies it (at two
    seats the match ends, the resigner last); an observer has nothing to resign."""
    table = table_at_play("dernier", 2)
    s1 = table.sessions[1]
    n = s1.chain.next_counter(1)
    env = s1.resign()
    assert (env["seat"], env["n"], env["head"]) == (1, n, s1.head)
    assert env["body"] == {"type": "resign"}
    table.send(env)
    table.deliver()
    for s in table.sessions:
        assert s.fault is None and s.finished and s.state.standings[-1] == 1
    with pytest.raises(ValueError, match="resign"):
        Session(None, None, table.records[0]).resign()


def test_sign_makes_an_unchecked_envelope_that_every_peer_refuses_when_illegal():
    table = table_at_play("dernier", 2)
    s = table.sessions[1]
    env = s.sign({"type": "move", "hand": 99, "move": "draw"})  # no check: a cheat's envelope
    assert env["seat"] == 1 and env["head"] == s.head
    assert s.ack()["n"] == env["n"] + 1
    table.send(env)
    with pytest.raises(ProtocolError) as info:
        table.deliver()
    assert info.value.code == "ILLEGAL_MOVE" and info.value.seat == 1
    with pytest.raises(ValueError):
        Session(None, None, table.records[0]).sign({"type": "ack"})


@pytest.mark.parametrize("kind", ["tokens", "transfer"])
def test_a_deck_message_naming_a_seat_out_is_the_authors_deck_fault(kind: str) -> None:
    """Once seat 1 is out, a tokens message naming it as owner, or a box to it, is refused as
    the author's DECK_FAULT (never a Python error)."""
    table = LocalTable("standard", seeds(3), {"match": ["hands", 2]})
    held = []
    while table.queue:
        env = table.queue.popleft()
        if env["seat"] == 1 and (held or env["body"]["type"] == "shuffle"):
            held.append(env)
            continue
        rec = table.sequence(env)
        for s in table.sessions:
            table.queue.extend(s.receive(rec, rec["t"]))
    table.timeout(1)
    table.deliver()
    s0 = table.sessions[0]
    assert s0.state.out == (1,) and s0.pub is not None
    proof = {"e": bytes(32), "s": bytes(32)}
    bodies = {
        "tokens": {"tokens": [{"position": 0, "owner": 1, "token": bytes(32), "proof": proof}]},
        "transfer": {"position": 0, "to": 1, "epk": bytes(32), "box": bytes(16),
                     "commit": bytes(32)},
    }
    body = {"type": kind, "hand": s0.pub.hand, **bodies[kind]}
    errors = feed_all(table, forge(table, 2, body))
    assert all(e.code == "DECK_FAULT" and e.seat == 2 for e in errors), errors


def test_chat_is_recorded_for_every_peer_and_changes_nothing_else():
    """A chat before the accepts and during play (the host's too): every peer (an observer too)
    logs it with its author; rules, deck, clocks' author and vote freshness ignore it; a
    control character is refused by the session that would sign it; verify accepts the
    records; after the match's end a chat record has no effect."""
    table = LocalTable("dernier", seeds(2), {"match": ["hands", 1]})
    early = table.sessions[1].chat("hello before we start")
    table.send(early)
    table.deliver()
    s0 = table.sessions[0]
    st, pending = s0.state, s0.pending
    since = s0.chain.vote_since("timeout", 1)
    table.send(table.sessions[1].chat("Bea: good luck ♥"))
    table.deliver()
    assert s0.state is st and s0.pending == pending
    assert s0.chain.vote_since("timeout", 1) == since  # talking is not playing
    with pytest.raises(ValueError, match="chat"):
        table.sessions[1].chat("red \x1b[31mtext")
    with pytest.raises(ValueError):
        table.sessions[1].chat("x" * 201)
    rng, pols = random.Random(3), bots(2)
    said_between = False
    while not s0.finished:
        if not said_between:
            table.send(table.sessions[0].chat("your turn!"))
            said_between = True
        play_round(table, pols, rng)
    assert said_between
    expected = [(1, "hello before we start"), (1, "Bea: good luck ♥"), (0, "your turn!")]
    for s in table.sessions:
        chats = [(e.seat, e.detail) for e in session_events(s) if e.kind == "chat"]
        assert chats == expected
    assert check_records(table.records).ok
    obs = Session(None, None, table.records[0])
    for rec in table.records[1:]:
        obs.receive(rec, rec["t"])
    assert [(e.seat, e.detail) for e in session_events(obs) if e.kind == "chat"] == expected
    with pytest.raises(ValueError):
        obs.chat("an observer says nothing")
    late = forge(table, 1, {"type": "chat", "text": "after the end"})
    rec = table.sequence(late)
    events = len(s0.events)
    s0.receive(rec, rec["t"])
    assert len(s0.events) == events and s0.fault is None


# ------------------------------------------------------------- envelopes of a side file
@pytest.fixture(scope="module")
def judged() -> tuple[LocalTable, Session, dict[str, tuple]]:
    """A three-seat table at play whose seats listen (so a seat may take over as host), an
    observer fed its records, and for each body type the index of its first record, a copy
    of the observer from just before it and (for ``tokens``) copies of the seats' sessions.
    Its rules option ``leave`` is ``play_on``: a seat going out leaves the others playing (7.9),
    where ``dernier``'s default ends the match."""
    table = LocalTable("dernier", seeds(3), {"match": ["hands", 1], "leave": "play_on"},
                       listen=[("127.0.0.1", 7000 + k) for k in range(3)])
    obs = Session(None, None, table.records[0])
    before: dict[str, tuple] = {}
    while table.queue:
        env = table.queue.popleft()
        kind = env["body"]["type"]
        if kind not in before:
            seats = copy.deepcopy(table.sessions) if kind == "tokens" else None
            before[kind] = (len(table.records), copy.deepcopy(obs), seats)
        rec = table.sequence(env)
        obs.receive(rec, rec["t"])
        for s in table.sessions:
            table.queue.extend(s.receive(rec, rec["t"]))
    return table, obs, before


def unsequenced(table: LocalTable, s: Session, seat: int, body: dict, head: bytes | None = None):
    """An envelope of ``seat`` with the counter that could follow ``s``'s last record,
    echoing ``head`` (default: ``s``'s head)."""
    n = s.chain.next_counter(seat)
    return sign_envelope(table.identities[seat], table.game, seat, n,
                         s.head if head is None else head, body)


def test_an_unsequenced_host_body_proves_nothing_and_changes_nothing(judged) -> None:
    """A ``timeout``, ``left`` or ``host_change`` of a side file with a quorum of sound votes
    could be the next record, but proves nothing without the host's record (PROTOCOL.md
    21.1): passed over, nothing applied, its counter not taken."""
    table, base, _ = judged
    s = copy.deepcopy(base)
    host, actor = table.host_seat, to_act(s.state)
    bodies = [
        (host, table.sessions[host].votes_body(kind, actor, table.collect(kind, actor)))
        for kind in ("timeout", "left")
    ]
    new = s.chain.candidates()[0]
    votes = table.collect("depose", host)
    bodies.append((new, table.sessions[new].votes_body("depose", host, votes)))
    before = (s.state, list(s.events), [s.chain.next_counter(k) for k in range(3)], s.head)
    for seat, body in bodies:
        env = unsequenced(table, s, seat, body)
        s.chain.check_envelope(env, None)  # sound as the next envelope: raises nothing
        assert s.judge_unsequenced(env) is None
        assert (s.state, s.events, [s.chain.next_counter(k) for k in range(3)], s.head) == before
    assert s.fault is None


def test_an_unsequenced_envelope_not_due_proves_nothing_a_refused_complaint_does(judged):
    """Envelopes refused only as not due (a second accept, a coin commitment after the flip,
    a secret before the hand ends) are passed over without taking a counter; a complaint is
    judged as it comes, so one about no box is its author's DECK_FAULT, and nothing after
    that first fault is judged."""
    table, base, _ = judged
    s = copy.deepcopy(base)
    hand = s.pub.hand
    not_due = [
        (2, {"type": "accept", "table": s.table_hash}),
        (1, {"type": "coin_commit", "step": "dealer", "commit": bytes(32)}),
        (2, {"type": "secret", "hand": hand, "secret": bytes(32)}),
    ]
    for seat, body in not_due:
        env = unsequenced(table, s, seat, body)
        s.chain.check_envelope(env, None)
        assert s.judge_unsequenced(env) is None
        assert s.fault is None and s.chain.next_counter(seat) == base.chain.next_counter(seat)
    complaint = {"type": "complaint", "hand": hand, "ref": 0, "plaintext": None}
    fault = s.judge_unsequenced(unsequenced(table, s, 1, complaint))
    assert (fault.code, fault.seat) == ("DECK_FAULT", 1) and s.fault is fault
    assert s.judge_unsequenced(unsequenced(table, s, 2, complaint)) is None
    assert s.fault is fault


def test_an_unsequenced_move_is_judged_at_its_head_and_takes_its_counter(judged) -> None:
    """Judged by a seat's session: a sound draw is applied as if sequenced (its counter
    taken, the seat's own deck messages made); the same draw again, echoing the head where it
    was legal, lost a race (logged, counter taken); a draw not legal at its head proves
    nothing and takes no counter."""
    table, base, _ = judged
    actor = to_act(base.state)
    idle = (actor + 1) % 3
    s = copy.deepcopy(table.sessions[idle])
    assert s.head == base.head
    head, n, m = s.head, s.chain.next_counter(actor), s.chain.next_counter(idle)
    draw = {"type": "move", "hand": s.state.hand_number, "move": "draw"}
    assert s.judge_unsequenced(unsequenced(table, s, actor, draw)) is None
    assert s.state.drawn >= 0 and s.chain.next_counter(actor) == n + 1
    assert s.judge_unsequenced(unsequenced(table, s, actor, draw, head)) is None
    lost = [e.seat for e in session_events(s) if e.kind == "race-lost"]
    assert lost == [actor] and s.chain.next_counter(actor) == n + 2
    assert s.judge_unsequenced(unsequenced(table, s, idle, draw)) is None
    assert s.chain.next_counter(idle) == m and s.fault is None


def test_an_unsequenced_proof_that_fails_proves_its_authors_fault(judged) -> None:
    """A tokens envelope whose proof fails is its author's DECK_FAULT (BadProof); the sound
    envelope is applied and takes its counter, so the bad one signed with the same counter
    after it is passed over."""
    table, _, before = judged
    k, before, _ = before["tokens"]
    env = table.records[k]["env"]
    body = copy.deepcopy(env["body"])
    e = body["tokens"][0]["proof"]["e"]
    body["tokens"][0]["proof"]["e"] = bytes([e[0] ^ 1]) + e[1:]
    seat = env["seat"]
    bad = sign_envelope(table.identities[seat], env["game"], seat, env["n"], env["head"], body)
    s = copy.deepcopy(before)
    fault = s.judge_unsequenced(bad)
    assert (fault.code, fault.seat) == ("DECK_FAULT", seat) and "BadProof" in fault.detail
    assert s.fault is fault
    s = copy.deepcopy(before)
    assert s.judge_unsequenced(env) is None and s.chain.next_counter(seat) == env["n"] + 1
    assert s.judge_unsequenced(bad) is None and s.fault is None


# ------------------------------------------------------------- records the body checks refuse
def as_record(table: LocalTable, s: Session, env: dict) -> dict:
    """``env`` sequenced by the host as the record after ``s``'s last one (signed here, so
    that a copy of a session can be fed without the table's host)."""
    host = s.host
    return make_record(table.identities[host], env, host, s.count, s.head, s.chain.last_t)


def refused_bodies(s: Session, actor: int) -> list[tuple[int, dict, str]]:
    """(author, body, code) of bodies that pass the chain's checks but not the session's, at
    play (``actor`` to move)."""
    hand, idle = s.state.hand_number, (actor + 1) % s.n
    return [
        (2, {"type": "accept", "table": bytes(32)}, "TABLE_MISMATCH"),
        (2, {"type": "accept", "table": s.table_hash}, "DUPLICATE"),
        (1, {"type": "coin_commit", "step": "dealer", "commit": bytes(32)}, "DECK_FAULT"),
        (1, {"type": "coin_reveal", "step": "cut", "value": bytes(32)}, "DECK_FAULT"),
        (2, {"type": "secret", "hand": hand, "secret": bytes(32)}, "DECK_FAULT"),
        (2, {"type": "secret", "hand": hand + 1, "secret": bytes(32)}, "DECK_FAULT"),
        (idle, {"type": "move", "hand": hand, "move": "draw"}, "ILLEGAL_MOVE"),
    ]


def test_a_record_the_body_checks_refuse_names_its_author_and_changes_nothing(judged) -> None:
    """Each record whose body the session refuses (another table accepted, a second accept, a
    coin message after the flip or of another step, a deck message not due or for another
    hand, a move not legal at its head) is the author's fault, its record the evidence, and
    leaves the session as it was; an observer and a seat judge alike."""
    table, base, _ = judged
    actor = to_act(base.state)
    for author, body, code in refused_bodies(base, actor):
        for judge in (base, table.sessions[actor]):
            s = copy.deepcopy(judge)
            before = (s.count, s.head, s.state, len(s.events), s.pending)
            rec = as_record(table, s, unsequenced(table, s, author, body))
            with pytest.raises(ProtocolError) as info:
                s.receive(rec, rec["t"])
            assert (info.value.code, info.value.seat, info.value.evidence) == (
                code, author, rec["i"]), body
            assert (s.count, s.head, s.state, len(s.events), s.pending) == before
            assert s.fault is None
            s.receive(as_record(table, s, unsequenced(table, s, author, {"type": "ack"})), 0)
            assert s.count == before[0] + 1  # the session goes on


def test_a_refused_complaint_stops_the_session_with_its_authors_fault(judged) -> None:
    """A complaint is recorded before its verdict: one about no box is its author's
    DECK_FAULT, which every later record raises again."""
    table, base, _ = judged
    s = copy.deepcopy(base)
    body = {"type": "complaint", "hand": s.pub.hand, "ref": 0, "plaintext": None}
    rec = as_record(table, s, unsequenced(table, s, 1, body))
    with pytest.raises(ProtocolError) as info:
        s.receive(rec, rec["t"])
    err = info.value
    assert (err.code, err.seat, err.evidence) == ("DECK_FAULT", 1, rec["i"]) and s.fault is err
    with pytest.raises(ProtocolError) as again:
        s.receive(as_record(table, s, unsequenced(table, s, 2, {"type": "ack"})), 0)
    assert again.value is err


def test_set_up_records_out_of_turn_are_their_authors_fault(judged) -> None:
    """Before every seat accepted, a coin commitment or a deck message (no hand runs yet) is
    the author's DECK_FAULT; during the commitments, a coin message of another step or a
    reveal is too. The sound record at each point is taken."""
    table, _, before = judged
    commit = {"type": "coin_commit", "step": "dealer", "commit": bytes(32)}
    cases = [
        ("accept", commit, "DECK_FAULT"),
        ("accept", {"type": "key_commit", "hand": 1, "commit": bytes(32)}, "DECK_FAULT"),
        ("coin_commit", {**commit, "step": "cut"}, "DECK_FAULT"),
        ("coin_commit", {"type": "coin_reveal", "step": "dealer", "value": bytes(32)},
         "DECK_FAULT"),
    ]
    for stage, body, code in cases:
        s = copy.deepcopy(before[stage][1])
        rec = as_record(table, s, unsequenced(table, s, 1, body))
        with pytest.raises(ProtocolError) as info:
            s.receive(rec, rec["t"])
        assert (info.value.code, info.value.seat) == (code, 1), (stage, body)
        assert s.fault is None
    for stage, body in (("accept", {"type": "accept", "table": None}), ("coin_commit", commit)):
        s = copy.deepcopy(before[stage][1])
        n = s.chain.next_counter(1)
        body = {**body, "table": s.table_hash} if stage == "accept" else body
        s.receive(as_record(table, s, unsequenced(table, s, 1, body)), 0)
        assert s.fault is None and s.chain.next_counter(1) == n + 1


# ------------------------------------------------------------- moves judged at their head
def play_body(hand: int, slot: int, suit: int | None = None) -> dict:
    return {"type": "move", "hand": hand, "move": "play", "slot": slot, "suit": suit,
            "target": None, "declare": False}


def test_held_at_and_legal_at_answer_for_the_state_after_the_head(judged) -> None:
    """What the host asks before sequencing a move: whether the slot was held now or after
    the head, and whether the move was legal there (a play: for some face), that state being
    quiescent and of the move's hand; a move is the only body that can be legal."""
    table, base, before = judged
    t = copy.deepcopy(table)
    s = t.sessions[0]
    actor = to_act(s.state)
    mover, idle = t.sessions[actor], (actor + 1) % 3
    plays = {m.slot: m for m in mover.legal() if isinstance(m, Play)}
    slot = max(plays)
    hand, head = s.state.hand_number, s.count - 1
    body = move_to_body(plays[slot], hand)
    dealing = before["tokens"][0]  # the state after this record waits for tokens
    assert s.held_at(head, actor, slot) and not s.held_at(head, idle, slot)
    assert s.held_at(10**6, actor, slot)  # an index the session never saw: now only
    assert s.legal_at(head, actor, body) and not s.legal_at(10**6, actor, body)
    assert not s.legal_at(dealing, actor, {**body, "hand": s._history[dealing][0].hand_number})
    assert not s.legal_at(head, actor, {**body, "hand": hand + 1})
    assert not s.legal_at(head, idle, {"type": "move", "hand": hand, "move": "draw"})
    assert not s.legal_at(head, actor, {"type": "chat", "text": "draw"})
    rec = t.sequence(mover.intend(plays[slot]))
    for x in t.sessions:
        t.queue.extend(x.receive(rec, rec["t"]))
    # the play waits for its card: the rules state is as before, but not quiescent
    draw = {"type": "move", "hand": hand, "move": "draw"}
    assert s.state is s._history[head][0] and s.legal_at(head, actor, draw)
    assert not s.legal_at(rec["i"], actor, draw)
    # the next seat draws early, echoing that head: queued, it runs once the play is in, when
    # it is legal (a move is judged when it runs; its head only decides a lost race)
    nxt = to_act(apply(s.state, plays[slot])[0])
    t.queue.appendleft(forge(t, nxt, draw))
    t.deliver()
    assert all(x.fault is None and to_act(x.state) == nxt for x in t.sessions)
    assert s.state.drawn >= 0 and s.count == len(t.records)
    now = s.count - 1
    assert s.held_at(head, actor, slot) and not s.held_at(now, actor, slot)
    assert not s.held_at(10**6, actor, slot)
    assert not s.legal_at(now, actor, body)


def test_a_play_no_face_makes_legal_is_refused_without_opening_the_card(judged) -> None:
    """A seat plays out of turn: no face would make it legal at its head, so it is its
    ILLEGAL_MOVE at once and the card stays hidden; a play only its face makes illegal is
    opened, then is the player's ILLEGAL_MOVE."""
    table, _, _ = judged
    t = copy.deepcopy(table)
    s = t.sessions[0]
    actor = to_act(s.state)
    idle = (actor + 1) % 3
    hand = s.state.hand_number
    slot = t.sessions[idle].state.hands[idle][0]
    errors = feed_all(t, forge(t, idle, play_body(hand, slot)))
    assert {(e.code, e.seat) for e in errors} == {("ILLEGAL_MOVE", idle)}
    assert all(not x.pub.slots[slot].opened and x.fault is None for x in t.sessions)
    t = copy.deepcopy(table)  # the host sequenced the refused record: start again
    s, mover = t.sessions[0], t.sessions[actor]
    legal = {m.slot for m in mover.legal() if isinstance(m, Play)}
    bad = next(p for p in mover.view if p not in legal)
    t.send(forge(t, actor, play_body(hand, bad)))
    with pytest.raises(ProtocolError) as info:
        t.deliver()
    assert (info.value.code, info.value.seat) == ("ILLEGAL_MOVE", actor)
    assert info.value.evidence == t.records[-1]["i"]  # the record whose token opened it
    assert s.pub.slots[bad].opened and s.fault is info.value


def test_an_unsequenced_token_that_opens_an_illegal_play_proves_the_players_fault(judged):
    """The host sequences a play and never the tokens that open its card: judged from the side
    file, the token that opens it shows the play illegal, the player's ILLEGAL_MOVE, which
    the session keeps."""
    table, base, _ = judged
    t, obs = copy.deepcopy(table), copy.deepcopy(base)
    actor = to_act(obs.state)
    mover = t.sessions[actor]
    legal = {m.slot for m in mover.legal() if isinstance(m, Play)}
    bad = next(p for p in mover.view if p not in legal)
    rec = t.sequence(forge(t, actor, play_body(obs.state.hand_number, bad)))
    for s in t.sessions:
        t.queue.extend(s.receive(rec, rec["t"]))
    obs.receive(rec, rec["t"])
    side = list(t.queue)
    assert {e["body"]["type"] for e in side} == {"tokens"}
    verdicts = [obs.judge_unsequenced(e) for e in side]
    found = [v for v in verdicts if v is not None]
    assert len(found) == 1 and verdicts[-1] is found[0]
    assert (found[0].code, found[0].seat) == ("ILLEGAL_MOVE", actor) and obs.fault is found[0]
    assert obs.pub.slots[bad].opened


# ------------------------------------------------------------- host bodies and leaving
def test_a_host_change_record_names_the_new_host(judged) -> None:
    """A host change by depose votes, signed by the next host: every peer logs it, naming the
    new host and the old, and takes the new host's records from then on."""
    table, base, _ = judged
    s = copy.deepcopy(base)
    old, new = s.host, s.chain.candidates()[0]
    body = table.sessions[new].votes_body("depose", old, table.collect("depose", old))
    env = unsequenced(table, s, new, body)
    s.receive(make_record(table.identities[new], env, new, s.count, s.head, s.chain.last_t), 0)
    assert session_events(s)[-1] == SessionEvent("host-change", new, f"from seat {old}")
    assert s.host == new and s.fault is None and s.state == base.state


def test_a_timeout_of_a_seat_not_to_act_is_ignored(judged) -> None:
    """A timeout with sound votes of a seat that owes nothing and is not to act: the rules
    refuse it when it runs, so it is logged as ``timeout-ignored`` and changes nothing."""
    table, base, _ = judged
    t = copy.deepcopy(table)
    s = t.sessions[0]
    idle = next(k for k in range(3) if k != to_act(s.state) and k != t.host_seat)
    state = s.state
    t.timeout(idle)
    t.deliver()
    for x in t.sessions:
        ignored = [e for e in session_events(x) if e.kind == "timeout-ignored"]
        assert [e.seat for e in ignored] == [idle] and x.state == state and x.fault is None


def test_a_resign_at_three_seats_voids_the_hand_and_the_others_play_on(judged) -> None:
    """A seat's ``resign``: waiting work is dropped, the hand is void and the next is dealt to
    the two seats left (the seat out has no deck table). A draw of the seat to act, echoing
    the head before the resign, runs in the next hand: a move for another hand that was legal
    at its head lost a race."""
    table, _, _ = judged
    t = copy.deepcopy(table)
    gone = 2
    actor = to_act(t.sessions[0].state)
    draw = t.sessions[actor].intend(Draw(actor))
    rec = t.sequence(t.sessions[gone].resign())
    for x in t.sessions:
        t.queue.extend(x.receive(rec, rec["t"]))
        assert x.state.out == (gone,) and SeatOut(gone, "left", 1) in x.events
        assert x.state.hand_number == 2 and x._parts == (0, 1) and x.fault is None
        assert x.state.hands[gone] == () and x.pub.hand == 2
    assert t.sessions[gone].mine is None
    t.queue.appendleft(draw)  # sequenced right after the resign
    t.deliver()
    for x in t.sessions:
        lost = [(e.seat, e.detail) for e in session_events(x) if e.kind == "race-lost"]
        assert lost == [(actor, "a move for another hand")] and x.fault is None
        assert x.state.hand_number == 2 and x.settled


def test_a_seat_out_after_a_stall_takes_no_part_in_the_next_hand(judged) -> None:
    """A seat timed out while it owes the token of the card it played is out (a stall): the
    hand is void and the two others play the next, their deck messages renumbered for its
    deck. The stalled seat's late tokens for the void hand are passed over; a deck message of
    it for the new hand is its DECK_FAULT."""
    table, _, _ = judged
    t = copy.deepcopy(table)
    s = t.sessions[0]
    actor = to_act(s.state)
    mover = t.sessions[actor]
    play = next(m for m in mover.legal() if isinstance(m, Play))
    rec = t.sequence(mover.intend(play))
    for x in t.sessions:
        t.queue.extend(x.receive(rec, rec["t"]))
    gone = actor  # it owes the token that opens its card
    assert s.waiting_on() == [gone] and gone != t.host_seat
    rest = tuple(k for k in range(3) if k != gone)
    held = [e for e in t.queue if e["seat"] == gone]
    t.queue = type(t.queue)(e for e in t.queue if e["seat"] != gone)
    t.timeout(gone)
    t.deliver()
    for x in t.sessions:
        assert SessionEvent("stall", gone, "timed out owing a message") in x.events
        assert x.state.out == (gone,) and x._parts == rest and x.fault is None
        assert x.state.hand_number == 2 and x.waiting_on() == [to_act(x.state)]
    # the wire names table seats: hand 2's tokens name their owners as seats of the table
    owners = {tok["owner"] for r in t.records if r["env"]["body"]["type"] == "tokens"
              and r["env"]["body"]["hand"] == 2 for tok in r["env"]["body"]["tokens"]}
    assert owners == set(rest)
    for env in held:  # for the void hand: passed over
        rec = t.sequence(env)
        for x in t.sessions:
            assert x.receive(rec, rec["t"]) == []
    assert all(x.fault is None for x in t.sessions)
    late = forge(t, gone, {"type": "secret", "hand": 2, "secret": bytes(32)})
    errors = feed_all(t, late)
    assert {(e.code, e.seat) for e in errors} == {("DECK_FAULT", gone)}
    assert all("takes no part" in e.detail for e in errors)


def test_a_seats_own_message_its_table_did_not_make_is_checked_like_any_other(judged):
    """A record carrying a tokens message signed with a seat's key that its own table did not
    make (a proof changed): that seat's session checks it as every peer does, its DECK_FAULT
    (BadProof), and changes nothing; the message its table made is taken as is."""
    table, _, before = judged
    k, _, seats = before["tokens"]
    env = table.records[k]["env"]
    seat = env["seat"]
    body = copy.deepcopy(env["body"])
    e = body["tokens"][0]["proof"]["e"]
    body["tokens"][0]["proof"]["e"] = bytes([e[0] ^ 1]) + e[1:]
    s = copy.deepcopy(seats[seat])
    bad = as_record(table, s, sign_envelope(table.identities[seat], env["game"], seat, env["n"],
                                            env["head"], body))
    with pytest.raises(ProtocolError) as info:
        s.receive(bad, bad["t"])
    assert (info.value.code, info.value.seat) == ("DECK_FAULT", seat)
    assert "BadProof" in info.value.detail and s.count == k and s.fault is None
    s.receive(table.records[k], table.records[k]["t"])
    assert s.count == k + 1 and s.fault is None


def test_a_seats_own_complaint_is_judged_from_public_data_like_anyone_elses() -> None:
    """The cutter's peek box carries a token whose proof fails: the cutter's table complains
    with the box's plaintext, which settles it, so every session, the complainer's own
    included, names the giver at the complaint's record (never a dispute)."""
    from dernier_p2p.deck.drbg import Drbg
    from dernier_p2p.deck.proofs import Proof
    from dernier_p2p.deck.tokens import Token
    from dernier_p2p.deck.transfer import seal_transfer

    cheat: list[tuple[int, int]] = []

    def tamper(env: dict) -> dict:
        body = env["body"]
        if body["type"] != "peek" or cheat:
            return env
        giver, to, p = env["seat"], body["to"], body["position"]
        cheat.append((giver, to))
        mine = table.sessions[giver].mine
        tok = mine._own_token(p)
        bad = Token(tok.owner, p, tok.value, Proof(tok.proof.e ^ 1, tok.proof.s))
        xpub = mine.keys.reveals[to].xpub
        t, _ = seal_transfer(table.game, body["hand"], giver, to, xpub, bad, Drbg(bytes(32)))
        return resign(table, env, {"type": "peek", "hand": body["hand"], **t.to_wire()})

    table = LocalTable("originale", seeds(2), {"match": ["hands", 1]}, tamper=tamper)
    with pytest.raises(ProtocolError):
        table.deliver()
    (giver, cutter), = cheat
    rec = table.records[-1]
    assert rec["env"]["seat"] == cutter and rec["env"]["body"]["type"] == "complaint"
    assert rec["env"]["body"]["plaintext"] is not None
    for s in table.sessions:
        if s.fault is None:
            with pytest.raises(ProtocolError):
                s.receive(rec, rec["t"])
        assert (s.fault.code, s.fault.seat, s.fault.evidence) == ("DECK_FAULT", giver, rec["i"])
        assert "bad token" in s.fault.detail
        assert not [e for e in session_events(s) if e.kind == "dispute"]


def test_a_head_whose_state_is_no_longer_kept_is_judged_without_it(judged) -> None:
    """Only the last 4096 states are kept (PROTOCOL.md 7.4): a move echoing an older head (its
    state dropped here directly, as a long match drops it) is judged without it: a play of a
    slot not held now is NOT_HELD, never a Python error, and nothing was legal there."""
    table, base, _ = judged
    s = copy.deepcopy(base)
    actor = to_act(s.state)
    idle = (actor + 1) % 3
    head = s.count - 1
    del s._history[head]
    slot = s.state.hands[idle][0]
    assert not s.legal_at(head, actor, {"type": "move", "hand": s.state.hand_number,
                                        "move": "draw"})
    assert not s.held_at(head, actor, slot) and s.held_at(head, idle, slot)
    rec = as_record(table, s, unsequenced(table, s, actor, play_body(s.state.hand_number, slot)))
    with pytest.raises(ProtocolError) as info:
        s.receive(rec, rec["t"])
    assert (info.value.code, info.value.seat) == ("NOT_HELD", actor) and s.fault is None


def test_a_play_legal_at_its_head_that_no_face_makes_legal_now_lost_a_race(judged) -> None:
    """The seat to act draws, and a play it made at the same head is sequenced after the draw:
    no face makes it legal now (only the drawn card may be played), but some face did at its
    head, so it lost a race; its card stays hidden."""
    table, base, _ = judged
    s = copy.deepcopy(base)
    actor = to_act(s.state)
    hand, head = s.state.hand_number, s.head
    slot = max(m.slot for m in table.sessions[actor].legal() if isinstance(m, Play))
    draw = {"type": "move", "hand": hand, "move": "draw"}
    s.receive(as_record(table, s, unsequenced(table, s, actor, draw)), 0)
    s.receive(as_record(table, s, unsequenced(table, s, actor, play_body(hand, slot), head)), 0)
    lost = [(e.seat, e.detail) for e in session_events(s) if e.kind == "race-lost"]
    assert lost == [(actor, "no card makes this play legal")] and s.fault is None
    assert not s.pub.slots[slot].opened and slot in s.state.hands[actor]


def test_a_left_record_puts_the_seat_out(judged) -> None:
    """The host's ``left`` with a quorum of votes: the seat is out at once (7.5), the hand is
    void and the next is dealt to the two seats left."""
    table, base, _ = judged
    s = copy.deepcopy(base)
    host, gone = table.host_seat, 2
    body = table.sessions[host].votes_body("left", gone, table.collect("left", gone))
    s.receive(as_record(table, s, unsequenced(table, s, host, body)), 0)
    assert s.state.out == (gone,) and SeatOut(gone, "left", 1) in s.events
    assert s.state.hand_number == 2 and s._parts == (0, 1) and s.fault is None


def test_a_left_is_applied_at_once_even_while_a_play_waits_for_its_card(judged) -> None:
    """The seat to act plays and its card waits for its token; meanwhile the host's ``left``
    for another seat comes: that seat is out at once (the hand is void, the waiting play
    dropped), not queued behind the play."""
    table, _, _ = judged
    t = copy.deepcopy(table)
    s = t.sessions[0]
    actor = to_act(s.state)
    mover = t.sessions[actor]
    rec = t.sequence(mover.intend(next(m for m in mover.legal() if isinstance(m, Play))))
    for x in t.sessions:
        x.receive(rec, rec["t"])
    gone = next(k for k in range(3) if k not in (actor, t.host_seat))
    host = t.sessions[t.host_seat]
    rec = t.sequence(host.announce(host.votes_body("left", gone, t.collect("left", gone))))
    for x in t.sessions:
        x.receive(rec, rec["t"])
        assert x.state.out == (gone,) and x.state.hand_number == 2 and x.fault is None


def test_a_dernier_leave_at_three_seats_ends_the_match_unrevealed() -> None:
    """``dernier``'s default (option ``leave`` ``end``, seed 000/001): a ``left``, a
    ``resign`` or a stall at three seats ends the match as a time-out does (7.9): every peer
    finishes with the leaver ranked last, -1 match point to it and +1 to each other, and the
    hand in progress is never revealed (no ``secret`` is sent for it)."""
    table = LocalTable("dernier", seeds(3, base=46), {"match": ["hands", 1]})
    while table.queue:
        env = table.queue.popleft()
        rec = table.sequence(env)
        for s in table.sessions:
            table.queue.extend(s.receive(rec, rec["t"]))
    assert not table.sessions[0].finished
    actor = to_act(table.sessions[0].state)
    gone = next(k for k in range(3) if k not in (actor, table.host_seat))
    assert actor != table.host_seat  # (its stall drops only its own token)
    for how in ("left", "resign", "stall"):
        t = copy.deepcopy(table)
        if how == "left":
            t.absent("left", gone)
        elif how == "resign":
            t.send(t.sessions[gone].resign())
        else:
            mover = t.sessions[actor]
            rec = t.sequence(mover.intend(next(m for m in mover.legal() if isinstance(m, Play))))
            for x in t.sessions:
                t.queue.extend(x.receive(rec, rec["t"]))
            t.queue = type(t.queue)(e for e in t.queue if e["seat"] != actor)  # its token
            t.timeout(actor)
        t.deliver()
        out = actor if how == "stall" else gone
        obs = Session(None, None, t.records[0])
        for rec in t.records[1:]:
            obs.receive(rec, rec["t"])
        for x in [*t.sessions, obs]:
            assert x.finished and x.fault is None and x.state.out == (), how
            assert x.result["standings"][-1] == out and x.result["winner"] != out
            assert x.result["match_points"] == tuple(-1 if k == out else 1 for k in range(3))
            assert not any(isinstance(e, SeatOut) for e in x.events)
            assert any(isinstance(e, Forfeited) and e.seat == out for e in x.events)
        assert not any(r["env"]["body"]["type"] == "secret" for r in t.records), how


def test_boxes_of_a_hand_with_a_seat_out_name_table_seats() -> None:
    """Originale at three seats, seat 0 leaves at the cut: the next hand is dealt to seats 1
    and 2, numbered 0 and 1 in its deck; the cut's peek boxes name the cutter by its table
    seat on the wire and reach it (it reads the bottom card), with no fault anywhere."""
    table = LocalTable("originale", seeds(3), {"match": ["hands", 2]}, host=2)
    table.deliver()
    host = table.sessions[2]
    table.send(host.announce(host.votes_body("left", 0, table.collect("left", 0))))
    table.deliver()
    s = table.sessions[1]
    assert s.state.hand_number == 2 and s._parts == (1, 2) and s.state.phase is Phase.CUT
    cutter = to_act(s.state)
    peeks = [r["env"] for r in table.records
             if r["env"]["body"]["type"] == "peek" and r["env"]["body"]["hand"] == 2]
    assert peeks and all(e["body"]["to"] == cutter and e["seat"] != cutter for e in peeks)
    assert s.state.pile[-1] in table.sessions[cutter].view
    assert all(x.fault is None for x in table.sessions)


# ------------------------------------------------------- a card open in its holder's hand
@pytest.fixture(scope="module")
def taken_back() -> tuple[LocalTable, int, int, bytes]:
    """Originale at three seats, at play: the seat to act played a card that does not fit,
    which was opened and taken back with the penalty, so it is now open in that seat's hand.
    Returns the table, the seat, the slot and the head at which the seat was to act."""
    table = LocalTable("originale", seeds(3, 2), {"match": ["hands", 1]})
    table.deliver()
    s = table.sessions[0]
    while s.state.phase is not Phase.PLAY:
        a = to_act(s.state)
        table.send(table.sessions[a].intend(table.sessions[a].legal()[0]))
        table.deliver()
    seat = to_act(s.state)
    legal = {m.slot for m in table.sessions[seat].legal() if isinstance(m, Play)}
    slot = next(p for p in s.state.hands[seat] if p not in legal)
    head = s.head
    table.send(forge(table, seat, play_body(s.state.hand_number, slot)))
    table.deliver()
    assert all(x.fault is None for x in table.sessions)
    assert slot in s.state.hands[seat] and s._face(slot) is not None  # open, held again
    assert to_act(s.state) != seat
    return table, seat, slot, head


def test_an_illegal_play_of_a_card_open_in_the_hand_is_judged_by_its_face(taken_back) -> None:
    """The card is open: its play naming a suit, which a number card cannot name (originale
    penalises a wrong play, not that), echoing the head before the card was shown, is the
    player's ILLEGAL_MOVE at once: judged at that head by its face, not by whether some face
    (a J may name a suit) could have been played so there."""
    table, seat, slot, head = taken_back
    t = copy.deepcopy(table)
    s = t.sessions[0]
    body = play_body(s.state.hand_number, slot, suit=1)
    then = next(i for i, r in enumerate(t.records) if record_hash(r) == head)
    assert s._face(slot).rank.value.isdigit() and s._some_face_legal(s._history[then][0], seat,
                                                                      body)
    before = [(x.count, x.state) for x in t.sessions]
    errors = feed_all(t, t.sessions[seat]._author.envelope(body, head))
    assert {(e.code, e.seat) for e in errors} == {("ILLEGAL_MOVE", seat)}
    assert [(x.count, x.state) for x in t.sessions] == before  # judged before it was applied


def test_a_stale_play_of_an_open_card_legal_at_its_head_lost_a_race(taken_back) -> None:
    """The holder's turn comes round and the open card fits; it draws instead, and then its
    play of that card, echoing the head where it was legal, arrives: a lost race, ignored."""
    table, seat, slot, _ = taken_back
    t = copy.deepcopy(table)
    s = t.sessions[0]
    for _ in range(60):
        a = to_act(s.state)
        moves = t.sessions[a].legal()
        if a == seat and any(isinstance(m, Play) and m.slot == slot for m in moves):
            break
        t.send(t.sessions[a].intend(next(m for m in moves if getattr(m, "slot", None) != slot)))
        t.deliver()
    else:
        pytest.fail("the open card never fitted on its holder's turn")
    hand, head, head_i = s.state.hand_number, s.head, s.count - 1
    assert s.legal_at(head_i, seat, play_body(hand, slot))
    t.send(t.sessions[seat].intend(Draw(seat)))
    t.deliver()
    with pytest.raises(IllegalMove):  # now only the drawn card may be played
        apply(s.state, Play(seat, slot, s._face(slot), None, None, False))
    count = s.count
    t.send(t.sessions[seat]._author.envelope(play_body(hand, slot), head))
    t.deliver()
    assert all(x.fault is None and x.count == count + 1 for x in t.sessions)
    assert all(slot in x.state.hands[seat] for x in t.sessions)  # the play changed nothing


@pytest.mark.parametrize("kind", ["left", "timeout"])
def test_a_host_body_about_a_seat_already_out_changes_nothing(kind: str) -> None:
    """PROTOCOL.md 6.2: a stall puts a seat out of play but not off the table (the chain counts
    it), so a quorum may still vote ``left`` or ``timeout`` about it; every peer ignores such a
    body: no exception escapes, nobody is blamed, the table plays on."""
    n, gone = 3, 2
    table = LocalTable("standard", seeds(n), {"match": ["hands", 2]})
    while table.queue:  # deliver until the seat owes its shuffle, holding back its envelopes
        env = table.queue.popleft()
        if env["seat"] == gone and env["body"]["type"] == "shuffle":
            break
        rec = table.sequence(env)
        for s in table.sessions:
            table.queue.extend(s.receive(rec, rec["t"]))
    table.queue.clear()
    table.timeout(gone)
    table.deliver()
    assert all(s.state.out == (gone,) for s in table.sessions)
    assert gone in table.sessions[0].chain.at_table
    before = [(s.state, s.waiting_on()) for s in table.sessions]
    table.absent(kind, gone)
    table.deliver()
    for s, (state, waiting) in zip(table.sessions, before, strict=True):
        assert s.fault is None and not s.finished
        assert s.state == state and s.waiting_on() == waiting
        ignored = [e for e in session_events(s) if e.kind == f"{kind}-ignored"]
        assert ignored == [SessionEvent(f"{kind}-ignored", gone, "already out")]


def test_after_the_end_the_table_waits_on_the_acks_it_lacks_until_the_end_is_final():
    """7.11: over by the rules, the end not yet final, the seats at the table not shown
    holding the end owe an ``ack`` (probed, lent to, their acks passed on); final, nobody."""
    from tests.protocol.liveness import Bed

    bed = Bed.dealt()
    for seat in (1, 0):  # (the bed's tables play on when a seat leaves: two must go)
        bed.put(copy.deepcopy(bed.sessions[seat]).resign())
        bed.flush()
    s = bed.sessions[2]
    assert s.finished and s.pending == [] and s.waiting_on() == []
    s.unfinal, s.end_owed = True, (2,)
    assert s.pending == [(2, "ack")] and s.waiting_on() == [2]
    s.unfinal = False
    assert s.pending == []


def test_a_seat_answers_a_run_of_deals_with_one_tokens_message():
    """Each seat sends the tokens it owes for the deal and the first card turned up in one
    ``tokens`` message; sessions answering each operation alone (``batch_answers=False``, as
    matches were recorded before) play the same match card for card, in more records."""
    tables = {}
    for batch in (True, False):
        table = LocalTable("originale", seeds(3), {"match": ["hands", 1]}, batch_answers=batch)
        table.deliver()
        rng, pols = random.Random(0), bots(3)
        rounds = 0
        while not table.sessions[0].finished:
            play_round(table, pols, rng)
            rounds += 1
            assert rounds < 5000
        tables[batch] = table
    batched, each = tables[True], tables[False]
    check_agreement(batched, 1)
    check_agreement(each, 1)
    assert batched.sessions[0].hand_cards == each.sessions[0].hand_cards
    assert batched.sessions[0].result == each.sessions[0].result
    assert len(batched.records) < len(each.records)

    def deal_tokens(table: LocalTable) -> list[int]:
        """The authors of the tokens records between the cut (and the hand size said after
        it) and the first play or draw."""
        bodies = [r["env"]["body"] for r in table.records]
        first = next(i for i, b in enumerate(bodies) if b["type"] == "move"
                     and b["move"] not in ("cut", "hand_size"))
        return [table.records[i]["env"]["seat"] for i in range(first)
                if bodies[i]["type"] == "tokens"]

    assert sorted(deal_tokens(batched)) == [0, 1, 2]
    assert len(deal_tokens(each)) > 3
