"""The per-hand deck state machine: honest hands of every size, and each cheat attributed."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dernier_p2p.deck import group as g
from dernier_p2p.deck.audit import audit
from dernier_p2p.deck.cards import card_element, card_index, deck_size, initial_deck
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.elgamal import encrypt
from dernier_p2p.deck.errors import (
    BadCommitment,
    BadElement,
    BadProof,
    DeckError,
    MissingMessage,
)
from dernier_p2p.deck.proofs import Proof
from dernier_p2p.deck.shuffle import shuffle
from dernier_p2p.deck.table import (
    DeckTable,
    StateError,
    TransferDispute,
    UnexpectedMessage,
    apply_all,
    deliver,
    start_all,
)
from dernier_p2p.deck.tokens import Token, make_token
from dernier_p2p.deck.transfer import BadTransfer, open_box, seal_transfer
from dernier_p2p.wire.canonical import decode, encode

GAME, HAND = b"game-table", 5


def new_tables(n: int, deck: str, seed: int = 0) -> list[DeckTable]:
    return [DeckTable(GAME, HAND, n, deck, i, Drbg(bytes([seed, i]) * 16)) for i in range(n)]


def honest_hand(n: int, deck: str, per_seat: int) -> None:
    tables = new_tables(n, deck)
    obs = DeckTable(GAME, HAND, n, deck)
    everyone = tables + [obs]
    start_all(everyone)
    size = deck_size(deck)
    assert all(t.ready and len(t.slots) == size for t in everyone)
    dealt = {s: [] for s in range(n)}
    for r in range(per_seat):
        for s in range(n):
            p = r * n + s
            apply_all(everyone, {"op": "deal", "position": p, "to": s})
            dealt[s].append(p)
    first_open = n * per_seat
    apply_all(everyone, {"op": "open", "position": first_open})  # turn up the first discard
    for t in tables:
        assert t.hand_positions() == dealt[t.seat]
        readable = {p for p in range(size) if t.card(p) is not None}
        assert readable == set(dealt[t.seat]) | {first_open}
    assert {p for p in range(size) if obs.card(p) is not None} == {first_open}
    apply_all(everyone, {"op": "end"})
    report = audit(GAME, HAND, n, deck, obs.log)
    assert report.ok, report.faults
    assert sorted(report.cards) == list(range(size))  # every card exactly once
    for t in tables:
        for p in dealt[t.seat]:
            assert t.card(p) == report.cards[p]
    assert report.opened == {first_open: report.cards[first_open]}
    # every seat's own record audits the same way
    assert audit(GAME, HAND, n, deck, tables[-1].log).cards == report.cards


@pytest.mark.parametrize(
    ("n", "deck", "per_seat"),
    [(2, "dernier-54", 7), (3, "originale-108", 5), (4, "moderno-112", 7), (6, "dernier-54", 5)],
)
def test_honest_hand(n: int, deck: str, per_seat: int) -> None:
    honest_hand(n, deck, per_seat)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n", "deck", "per_seat"),
    [(2, "moderno-112", 7), (10, "dernier-54", 5), (6, "standard-108", 7), (10, "moderno-112", 7)],
)
def test_honest_hand_large(n: int, deck: str, per_seat: int) -> None:
    honest_hand(n, deck, per_seat)


def test_a_run_of_operations_answered_at_once() -> None:
    """Deals and an open applied with ``answer=False`` are answered by :meth:`answer`: one
    ``tokens`` message per seat with every token it owes, positions ascending, that every other
    table accepts. The tokens are those of one message per operation, proof for proof (the
    nonces are drawn in position order either way), and every seat reads the same cards."""
    n, deck = 3, "dernier-54"
    ops = [{"op": "deal", "position": p, "to": p % n} for p in range(6)]
    ops.append({"op": "open", "position": 6})
    batched = new_tables(n, deck) + [DeckTable(GAME, HAND, n, deck)]
    each = new_tables(n, deck) + [DeckTable(GAME, HAND, n, deck)]
    start_all(batched)
    start_all(each)
    out = []
    for t in batched:
        assert all(t.apply(op, answer=False) == [] for op in ops)
        out += t.answer()
    assert [(m["type"], m["seat"]) for m in out] == [("tokens", s) for s in range(n)]
    for m in out:  # its token for the 4 cards dealt to the others, and for the open card
        positions = [x["position"] for x in m["tokens"]]
        assert positions == sorted(positions) and len(positions) == 5
    deliver(batched, out)
    singles = []
    for op in ops:
        singles += [m for m in apply_all(each, op) if m["type"] == "tokens"]
    assert len(singles) == 6 * (n - 1) + n  # one per seat that owes a token, per operation
    for s in range(n):
        assert out[s]["tokens"] == [x for m in singles if m["seat"] == s for x in m["tokens"]]
    for a, b in zip(batched, each, strict=True):
        assert a.pending() == b.pending() == []
        assert [a.card(p) for p in range(7)] == [b.card(p) for p in range(7)]
        assert a.answer() == []  # nothing left to answer
    assert batched[-1].card(6) is not None  # the open card, read by the observer too


# --------------------------------------------------------------------- a shared 3-seat start
_BASE: dict[str, list[DeckTable]] = {}


def started(n: int = 3) -> list[DeckTable]:
    """Three seats and an observer after key setup and shuffles (copied for each test)."""
    if n not in _BASE:
        everyone = new_tables(n, "dernier-54", seed=9) + [DeckTable(GAME, HAND, n, "dernier-54")]
        start_all(everyone)
        _BASE[n] = everyone
    return copy.deepcopy(_BASE[n])


def others(everyone: list[DeckTable], seat: int) -> list[DeckTable]:
    return [t for t in everyone if t.seat != seat]


def test_the_full_cycle_with_transfers_peek_and_reshuffle() -> None:
    everyone = started()
    s0, s1, s2, obs = everyone
    for p in range(6):
        apply_all(everyone, {"op": "deal", "position": p, "to": p % 3})
    card1 = s1.card(1)
    apply_all(everyone, {"op": "transfer", "position": 1, "to": 2})
    assert s2.card(1) == card1 and s0.card(1) is None and obs.card(1) is None
    assert s2.hand_positions() == [1, 2, 5]
    apply_all(everyone, {"op": "transfer", "position": 1, "to": 0})  # passed on again
    assert s0.card(1) == card1
    apply_all(everyone, {"op": "open", "position": 1})  # opened with the forwarded token
    assert {t.card(1) for t in everyone} == {card1}
    apply_all(everyone, {"op": "peek", "position": 53, "to": 2})
    assert s2.card(53) is not None and s0.card(53) is None and obs.card(53) is None
    apply_all(everyone, {"op": "open", "position": 0})
    apply_all(everyone, {"op": "reshuffle", "cards": [s0.card(0), card1]})
    assert len(obs.slots) == 56 and obs.ready
    apply_all(everyone, {"op": "deal", "position": 55, "to": 1})
    assert s1.card(55) in {s0.card(0), card1}
    with pytest.raises(StateError):
        s0.apply({"op": "reshuffle", "cards": [s0.card(0)]})  # no longer a discard
    apply_all(everyone, {"op": "end"})
    report = audit(GAME, HAND, 3, "dernier-54", obs.log)
    assert report.ok, report.faults
    assert report.cards[55] == s1.card(55) and report.cards[53] == s2.card(53)


def test_operations_out_of_place_are_refused() -> None:
    everyone = started()
    s0 = everyone[0]
    apply_all(everyone, {"op": "deal", "position": 0, "to": 1})
    for op in (
        {"op": "deal", "position": 0, "to": 2},
        {"op": "deal", "position": 99, "to": 2},
        {"op": "deal", "position": 1, "to": 3},
        {"op": "transfer", "position": 2, "to": 1},
        {"op": "transfer", "position": 0, "to": 1},
        {"op": "peek", "position": 0, "to": 2},
        {"op": "reshuffle", "cards": [5]},
        {"op": "shuffle"},
        "deal",
    ):
        with pytest.raises(StateError):
            s0.apply(op)
    fresh = new_tables(2, "dernier-54")[0]
    fresh.start()
    with pytest.raises(StateError):
        fresh.deal(0, 1)


# --------------------------------------------------------------------- cheats, one each
def intercept(everyone: list[DeckTable], op: dict, author: int) -> tuple[list[dict], dict]:
    """Apply ``op`` everywhere; return the other messages and the one ``author`` sent."""
    msgs = []
    for t in everyone:
        msgs.extend(t.apply(op))
    mine = [m for m in msgs if m["seat"] == author]
    assert len(mine) == 1
    return [m for m in msgs if m["seat"] != author], mine[0]


def expect_blame(tables: list[DeckTable], msg: dict, exc: type, seat: int) -> None:
    for t in tables:
        if t.seat == msg["seat"]:
            continue
        with pytest.raises(exc) as err:
            t.receive(msg)
        assert err.value.seat == seat, err.value


def shuffle_round(n: int = 3) -> list[DeckTable]:
    """Tables after key setup, with seat 0's shuffle delivered; seat 1's is next."""
    everyone = new_tables(n, "dernier-54", seed=7) + [DeckTable(GAME, HAND, n, "dernier-54")]
    out = []
    for t in everyone:
        out.extend(t.start())
    # deliver commits and reveals but hold back seat 1's shuffle
    queue, held = list(out), []
    while queue:
        m = queue.pop(0)
        if m["type"] == "shuffle" and m["seat"] == 1:
            held.append(m)
            continue
        for t in everyone:
            if t.seat != m["seat"]:
                queue.extend(t.receive(m))
    assert len(held) == 1
    everyone[1].held = held[0]  # type: ignore[attr-defined]
    return everyone


@pytest.fixture(scope="module")
def at_shuffle() -> list[DeckTable]:
    return shuffle_round()


def honest_shuffle_msg(tables: list[DeckTable]) -> dict:
    return copy.deepcopy(tables[1].held)  # type: ignore[attr-defined]


def receivers(at: list[DeckTable]) -> list[DeckTable]:
    return [copy.deepcopy(t) for t in at if t.seat != 1]


def test_honest_shuffle_message_is_accepted(at_shuffle: list[DeckTable]) -> None:
    msg = honest_shuffle_msg(at_shuffle)
    for t in receivers(at_shuffle):
        assert msg not in t.log
        t.receive(msg)
        assert msg in t.log  # accepted: recorded in the table's log


def test_shuffle_that_drops_a_card(at_shuffle: list[DeckTable]) -> None:
    msg = honest_shuffle_msg(at_shuffle)
    msg["deck"] = msg["deck"][:-1]
    expect_blame(receivers(at_shuffle), msg, BadElement, 1)


def test_shuffle_that_duplicates_a_card(at_shuffle: list[DeckTable]) -> None:
    msg = honest_shuffle_msg(at_shuffle)
    msg["deck"][3] = list(msg["deck"][7])
    expect_blame(receivers(at_shuffle), msg, BadProof, 1)


def test_shuffle_that_substitutes_a_card_with_a_valid_looking_proof(
    at_shuffle: list[DeckTable],
) -> None:
    """Seat 1 swaps in card 0's element for another card, then shuffles and proves honestly
    from that doctored input: the proof does not hold for the real input."""
    s1 = at_shuffle[1]
    deck_in = list(at_shuffle[0].pile)
    Y = s1.joint_key
    deck_in[0] = encrypt(Y, card_element("dernier-54", 1), 12345)
    ctx = {"game": GAME, "hand": HAND, "step": "shuffle", "seat": 1}
    out, proof = shuffle(Y, deck_in, Drbg(b"c" * 32), ctx)
    msg = honest_shuffle_msg(at_shuffle)
    msg["deck"] = [list(c) for c in out]
    msg["proof"] = proof.to_wire()
    expect_blame(receivers(at_shuffle), msg, BadProof, 1)


@pytest.mark.parametrize("field", ["hand", "step", "seat"])
def test_shuffle_proof_replayed_from_another_context(
    at_shuffle: list[DeckTable], field: str
) -> None:
    s1 = at_shuffle[1]
    ctx = {"game": GAME, "hand": HAND, "step": "shuffle", "seat": 1}
    ctx[field] = {"hand": HAND + 1, "step": "reshuffle/1", "seat": 2}[field]
    out, proof = shuffle(s1.joint_key, at_shuffle[0].pile, Drbg(b"r" * 32), ctx)
    msg = honest_shuffle_msg(at_shuffle)
    msg["deck"] = [list(c) for c in out]
    msg["proof"] = proof.to_wire()
    expect_blame(receivers(at_shuffle), msg, BadProof, 1)


def test_shuffle_with_invalid_or_non_canonical_elements(at_shuffle: list[DeckTable]) -> None:
    p = 2**255 - 19
    non_canonical = (p + 1).to_bytes(32, "little")  # y = p + 1 encodes y = 1 non-canonically
    small_order = (p - 1).to_bytes(32, "little")  # y = -1: a point of order 2
    base = honest_shuffle_msg(at_shuffle)
    for bad in (non_canonical, small_order, g.IDENTITY, b"\x00" * 31, "x"):
        msg = copy.deepcopy(base)
        msg["deck"][5][0] = bad
        expect_blame(receivers(at_shuffle), msg, BadElement, 1)
        msg = copy.deepcopy(base)
        msg["proof"]["c"][0] = bad
        expect_blame(receivers(at_shuffle), msg, BadElement, 1)


def test_shuffle_out_of_turn(at_shuffle: list[DeckTable]) -> None:
    msg = honest_shuffle_msg(at_shuffle)
    msg["seat"] = 2
    t0 = copy.deepcopy(at_shuffle[0])
    with pytest.raises(UnexpectedMessage) as err:
        t0.receive(msg)
    assert err.value.seat == 2


def test_wrong_reveal_token_is_blamed_on_its_maker() -> None:
    everyone = started()
    rest, msg = intercept(everyone, {"op": "deal", "position": 4, "to": 0}, author=2)
    assert not rest[0]["seat"] == 2
    bad = copy.deepcopy(msg)
    bad["tokens"][0]["token"] = g.add(bad["tokens"][0]["token"], g.GENERATOR)
    expect_blame(everyone, bad, BadProof, 2)
    # a token of another seat (copied from a public one) is refused as well
    stolen = copy.deepcopy(msg)
    stolen["tokens"][0]["owner"] = 1
    expect_blame(everyone, stolen, UnexpectedMessage, 2)
    # a token proof made for another hand
    slot = everyone[2].slots[4]
    t = make_token(GAME, HAND + 1, 2, everyone[2].secret.x, 4, slot.ct, Drbg(b"q" * 32))
    replay = copy.deepcopy(msg)
    replay["tokens"][0] = t.to_wire()
    expect_blame(everyone, replay, BadProof, 2)
    # the honest message still goes through
    for t in everyone:
        if t.seat != 2:
            t.receive(msg)


def test_token_not_due_is_refused() -> None:
    everyone = started()
    _, msg = intercept(everyone, {"op": "deal", "position": 4, "to": 0}, author=2)
    msg["tokens"][0]["position"] = 7
    expect_blame(everyone, msg, UnexpectedMessage, 2)


def test_forged_transfer_is_attributed_to_the_giver() -> None:
    everyone = started()
    s0, s1, s2, obs = everyone
    apply_all(everyone, {"op": "deal", "position": 0, "to": 0})
    _, msg = intercept(everyone, {"op": "transfer", "position": 0, "to": 1}, author=0)
    # seat 0 swaps in a box holding a forged token (its own key, a wrong value)
    real = s0._own_token(0)
    forged = Token(0, 0, g.add(real.value, g.GENERATOR), real.proof)
    t, _ = seal_transfer(GAME, HAND, 0, 1, s1.keys.reveals[1].xpub, forged, Drbg(b"f" * 32))
    bad = {"type": "transfer", "seat": 0, **t.to_wire()}
    s0.log[-1] = bad  # what seat 0 actually sent
    replies = s1.receive(bad)
    assert [m["type"] for m in replies] == ["complaint"]
    s2.receive(bad)
    obs.receive(bad)
    for table in (s2, obs):  # the cheat's own table recorded the honest box it did not send
        with pytest.raises(BadTransfer) as err:
            table.receive(replies[0])
        assert err.value.seat == 0
    apply_all(everyone, {"op": "end"})
    report = audit(GAME, HAND, 3, "dernier-54", obs.log)
    assert [f.seat for f in report.faults] == [0]


def _transfer_with_altered_box(everyone: list) -> tuple[dict, dict]:
    """Seat 0 deals itself position 0 and hands it to seat 1: the transfer as made, and the
    same with the box's last byte flipped."""
    apply_all(everyone, {"op": "deal", "position": 0, "to": 0})
    _, msg = intercept(everyone, {"op": "transfer", "position": 0, "to": 1}, author=0)
    return msg, dict(msg, box=msg["box"][:-1] + bytes([msg["box"][-1] ^ 1]))


def test_altered_transfer_box_is_settled_by_the_end_of_hand_reveal() -> None:
    everyone = started()
    s0, s1, s2, obs = everyone
    msg, bad = _transfer_with_altered_box(everyone)
    s0.log[-1] = bad
    replies = s1.receive(bad)
    assert replies[0]["plaintext"] is None
    for table in (s2, obs):
        table.receive(bad)
        with pytest.raises(TransferDispute):
            table.receive(replies[0])
    apply_all(everyone, {"op": "end"})
    report = audit(GAME, HAND, 3, "dernier-54", obs.log)
    assert [f.seat for f in report.faults] == [0]


def handed_to_seat_1(everyone: list[DeckTable]) -> list[dict]:
    """Seat 0 is dealt position 0 and hands it to seat 1, every table hearing every message:
    the messages the tables made."""
    apply_all(everyone, {"op": "deal", "position": 0, "to": 0})
    msgs = []
    for t in everyone:
        msgs.extend(t.apply({"op": "transfer", "position": 0, "to": 1}))
    deliver(everyone, msgs)
    return msgs


def test_false_complaint_is_attributed_to_the_complainer() -> None:
    everyone = started()
    s0, s1, s2, obs = everyone
    handed_to_seat_1(everyone)
    assert s1.card(0) is not None
    lie = {"type": "complaint", "seat": 1, "ref": 0, "plaintext": None}
    s1.log.append(lie)
    for table in (s0, s2, obs):
        with pytest.raises(TransferDispute):
            table.receive(lie)
    apply_all(everyone, {"op": "end"})
    report = audit(GAME, HAND, 3, "dernier-54", obs.log)
    assert [f.seat for f in report.faults] == [1]


def test_key_reveal_cheats_are_named() -> None:
    tables = new_tables(3, "dernier-54", seed=3)
    out = []
    for t in tables:
        out.extend(t.start())
    commits = [m for m in out if m["type"] == "key_commit"]
    reveals = [m for m in out if m["type"] == "key_reveal"]
    assert len(commits) == 3 and not reveals
    r0 = tables[0].receive(commits[1])
    assert r0 == []
    r0 = tables[0].receive(commits[2])
    assert [m["type"] for m in r0] == ["key_reveal"]
    reveal1 = tables[1].receive(commits[0]) + tables[1].receive(commits[2])
    msg = reveal1[0]
    # a reveal that does not match its commitment
    other_share = dict(msg, share=g.base_mul(777))
    with pytest.raises(BadCommitment) as err:
        copy.deepcopy(tables[0]).receive(other_share)
    assert err.value.seat == 1
    # a bad proof of knowledge
    bad_proof = dict(msg, proof=Proof(1, 2).to_wire())
    with pytest.raises(BadProof) as err2:
        copy.deepcopy(tables[0]).receive(bad_proof)
    assert err2.value.seat == 1
    # a share that is not a group element
    with pytest.raises(BadElement) as err3:
        copy.deepcopy(tables[0]).receive(dict(msg, share=b"\xee" * 32))
    assert err3.value.seat == 1
    # a reveal sent before every seat committed
    early = new_tables(3, "dernier-54", seed=3)[2]
    early.start()
    with pytest.raises(DeckError) as err4:
        early.receive(msg)
    assert err4.value.seat == 1
    tables[0].receive(msg)


def test_secret_not_matching_its_share_is_named() -> None:
    everyone = started()
    s0, s1, s2, obs = everyone
    msgs = []
    for t in everyone:
        msgs.extend(t.apply({"op": "end"}))
    bad = dict(msgs[2], secret=g.encode_scalar(5))
    assert bad["seat"] == 2
    expect_blame([s0, s1, obs], bad, BadCommitment, 2)


def test_missing_messages_are_named() -> None:
    everyone = started()
    s0, s1, s2, obs = everyone
    msgs = []
    for t in everyone:
        msgs.extend(t.apply({"op": "deal", "position": 3, "to": 1}))
    deliver(everyone, [m for m in msgs if m["seat"] != 2])
    assert obs.pending() == [(2, "token for position 3")]
    with pytest.raises(MissingMessage) as err:
        obs.require_complete()
    assert err.value.seat == 2
    apply_all(everyone, {"op": "end"})
    assert obs.pending() == [(2, "token for position 3")]
    report = audit(GAME, HAND, 3, "dernier-54", obs.log)
    assert [f.seat for f in report.faults] == [2]


def test_malformed_messages_never_crash() -> None:
    everyone = started()
    obs = everyone[-1]
    for bad, seat in (
        (None, None),
        ({"type": "tokens", "seat": 9, "tokens": []}, None),
        ({"type": "nonsense", "seat": 1}, 1),
        ({"type": "tokens", "seat": 1}, 1),
        ({"type": "tokens", "seat": 1, "tokens": "x"}, 1),
        ({"type": "tokens", "seat": 1, "tokens": [{}]}, 1),
        ({"type": "tokens", "seat": 1, "tokens": [], "extra": 1}, 1),
        ({"type": "complaint", "seat": 1, "ref": 3, "plaintext": None}, 1),
        ({"type": "secret", "seat": 1, "secret": b"x"}, 1),
        ({"type": "shuffle", "seat": 1, "epoch": 0, "deck": [], "proof": {}}, 1),
        ({"type": "key_commit", "seat": 1, "commit": b"x" * 32}, 1),
        ({"type": "transfer", "seat": 1, "position": 0, "to": 2, "epk": b"", "box": b"",
          "commit": b""}, 1),
    ):
        with pytest.raises(DeckError) as err:
            obs.receive(bad)
        assert err.value.seat == seat
    with pytest.raises(BadElement) as err:
        obs.receive({"type": "tokens", "seat": 1, "tokens": []}, sender=2)
    assert err.value.seat == 2


def test_initial_deck_is_the_first_shuffle_input() -> None:
    everyone = shuffle_round(2)
    s0 = everyone[0]
    # after seat 0's shuffle, the pile of every table is seat 0's output of the initial deck
    assert len(s0.pile) == 54 and s0.pile != initial_deck("dernier-54")


# --------------------------------------------------------------------- random sequences


def true_card(everyone: list[DeckTable], p: int, deck: str = "dernier-54") -> int:
    x = sum(t.secret.x for t in everyone if t.secret is not None)
    ct = everyone[-1].slots[p].ct
    return card_index(deck, g.sub(ct[1], g.mul(x, ct[0])))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_operation_sequences_keep_every_view_right(data: st.DataObject) -> None:
    everyone = started()
    obs = everyone[-1]
    seats = everyone[:-1]
    for _ in range(data.draw(st.integers(3, 12))):
        free = [p for p, s in enumerate(obs.slots)
                if s.holder is None and not s.opened and not s.retired]
        held = [p for p, s in enumerate(obs.slots) if s.holder is not None
                and p not in obs.expect_tokens]
        kind = data.draw(st.sampled_from(
            ["deal", "deal", "open", "transfer", "peek", "reshuffle", "reshuffle_positions"]
        ))
        if kind == "reshuffle_positions":
            movable = [p for p in range(len(obs.slots)) if obs.reshufflable(p)]
            positions = data.draw(st.lists(st.sampled_from(movable), min_size=1, max_size=8,
                                           unique=True))
            before = len(obs.slots)
            apply_all(everyone, {"op": "reshuffle", "positions": positions})
            assert obs.ready and len(obs.slots) == before + len(positions)
            assert all(obs.slots[p].retired for p in positions)
            continue
        if kind == "reshuffle":
            if not obs.discards:
                continue
            cards = data.draw(st.lists(st.sampled_from(obs.discards), min_size=1, unique=True))
            apply_all(everyone, {"op": "reshuffle", "cards": cards})
            assert obs.ready and len(obs.slots) == len({s.ct for s in obs.slots})
            continue
        if kind in ("deal", "peek") or not held:
            p = data.draw(st.sampled_from(free))
            op = {"op": "deal" if kind != "peek" else "peek", "position": p,
                  "to": data.draw(st.integers(0, 2))}
        else:
            p = data.draw(st.sampled_from(held))
            if kind == "open":
                op = {"op": "open", "position": p}
            else:
                to = data.draw(st.sampled_from([s for s in range(3) if s != obs.holder(p)]))
                op = {"op": "transfer", "position": p, "to": to}
        if op["op"] == "peek" and any(k[1] == p for k in obs.expect_boxes):
            continue
        apply_all(everyone, op)
        for t in seats:
            for q in t.hand_positions():
                assert t.card(q) == true_card(everyone, q)
        for q, s in enumerate(obs.slots):
            if s.opened:
                assert {t.card(q) for t in everyone} == {true_card(everyone, q)}
            else:
                assert obs.card(q) is None
    assert obs.pending() == []
    apply_all(everyone, {"op": "end"})
    report = audit(GAME, HAND, 3, "dernier-54", obs.log)
    assert report.ok, report.faults


def test_forged_peek_box_is_attributed_to_its_giver() -> None:
    everyone = started()
    s0, s1, s2, obs = everyone
    msgs = []
    for t in everyone:
        msgs.extend(t.apply({"op": "peek", "position": 50, "to": 2}))
    assert sorted(m["seat"] for m in msgs) == [0, 1] and {m["type"] for m in msgs} == {"peek"}
    honest0 = next(m for m in msgs if m["seat"] == 0)
    honest1 = next(m for m in msgs if m["seat"] == 1)
    real = s1._own_token(50)
    forged = Token(1, 50, g.add(real.value, g.GENERATOR), real.proof)
    t, _ = seal_transfer(GAME, HAND, 1, 2, s2.keys.reveals[2].xpub, forged, Drbg(b"k" * 32))
    bad1 = {"type": "peek", "seat": 1, **t.to_wire()}
    for table in (s0, s1, s2, obs):  # seat 0's box goes round the relay, back to seat 0 too
        assert table.receive(honest0) == []
    assert s0.receive(bad1) == [] and obs.receive(bad1) == []
    s2_honest = copy.deepcopy(s2)
    replies = s2.receive(bad1)
    assert [m["type"] for m in replies] == ["complaint"] and s2.card(50) is None
    for table in (s0, obs):
        with pytest.raises(BadTransfer) as err:
            table.receive(replies[0])
        assert err.value.seat == 1
    # with the honest box instead, seat 2 reads the card and nobody else does
    assert s2_honest.receive(honest1) == []
    assert s2_honest.card(50) is not None and obs.card(50) is None and s0.card(50) is None


# --------------------------------------------------------------------- reshuffle by positions
def first_card_back(everyone: list[DeckTable], per_seat: int) -> tuple[list[int], list[int]]:
    """Deal ``per_seat`` cards to each seat, turn up the next card, then reshuffle it with the
    rest of the pile by positions (the wild-draw-four start). Returns (dealt, reshuffled)."""
    obs = everyone[-1]
    n = len(everyone) - 1
    dealt = list(range(n * per_seat))
    for p in dealt:
        apply_all(everyone, {"op": "deal", "position": p, "to": p % n})
    first = len(dealt)
    apply_all(everyone, {"op": "open", "position": first})
    assert obs.discards == [obs.card(first)]
    source = list(range(first, len(obs.slots)))
    apply_all(everyone, {"op": "reshuffle", "positions": source})
    return dealt, source


def test_reshuffle_by_positions_of_the_first_card_and_the_pile() -> None:
    deck, n = "standard-108", 3
    everyone = new_tables(n, deck, seed=3) + [DeckTable(GAME, HAND, n, deck)]
    start_all(everyone)
    obs, seats = everyone[-1], everyone[:-1]
    dealt, source = first_card_back(everyone, 7)
    first_card = obs.card(source[0])
    size = deck_size(deck)
    assert len(source) == size - 21
    assert all(t.ready and len(t.slots) == size + len(source) for t in everyone)
    assert all(t.discards == [] for t in everyone)  # the opened card left the discards
    for t in everyone:
        assert [p for p, s in enumerate(t.slots) if s.retired] == source
        assert {s.epoch for s in t.slots[size:]} == {1}
    # deal from the new epoch, then turn up a card from it
    new = list(range(size, size + 2 * n))
    for p in new:
        apply_all(everyone, {"op": "deal", "position": p, "to": p % n})
    turn = size + 2 * n
    apply_all(everyone, {"op": "open", "position": turn})
    for t in seats:
        assert t.hand_positions() == [p for p in dealt + new if p % n == t.seat]
        for p in t.hand_positions():
            assert t.card(p) == true_card(everyone, p, deck)
        readable = {p for p in range(len(t.slots)) if t.card(p) is not None}
        assert readable == set(t.hand_positions()) | {source[0], turn}
    assert {t.card(turn) for t in everyone} == {true_card(everyone, turn, deck)}
    assert {p for p in range(len(obs.slots)) if obs.card(p) is not None} == {source[0], turn}
    assert obs.discards == [obs.card(turn)]
    apply_all(everyone, {"op": "end"})
    report = audit(GAME, HAND, n, deck, obs.log)
    assert report.ok, report.faults
    cards = report.cards
    assert sorted(cards[:size]) == list(range(size))
    # the new epoch holds exactly the cards of the reshuffled positions, the first card among them
    assert sorted(cards[size:]) == sorted(cards[p] for p in source)
    assert first_card in cards[size:] and cards[source[0]] == first_card
    assert not set(cards[size:]) & {cards[p] for p in dealt}
    for t in seats:
        for p in t.hand_positions():
            assert t.card(p) == cards[p]
    assert audit(GAME, HAND, n, deck, seats[1].log).cards == cards


def test_operations_on_retired_positions_are_refused() -> None:
    everyone = started()
    s0, s1, s2, obs = everyone
    apply_all(everyone, {"op": "deal", "position": 0, "to": 1})
    apply_all(everyone, {"op": "open", "position": 1})
    apply_all(everyone, {"op": "reshuffle", "positions": [1, 2, 3]})
    assert len(obs.slots) == 57 and obs.discards == []
    for p in (1, 2, 3):
        assert not obs.reshufflable(p)
        for op in (
            {"op": "deal", "position": p, "to": 0},
            {"op": "peek", "position": p, "to": 0},
            {"op": "open", "position": p},
            {"op": "transfer", "position": p, "to": 0},
            {"op": "reshuffle", "positions": [p]},
            {"op": "reshuffle", "positions": [p, 4]},
        ):
            for t in everyone:
                log_len = len(t.log)
                with pytest.raises(StateError):
                    t.apply(op)
                assert len(t.log) == log_len
    with pytest.raises(StateError):
        s0.apply({"op": "reshuffle", "cards": [s0.card(1)]})  # left the discards
    # a token for a retired position is never due
    tok = make_token(GAME, HAND, 2, s2.secret.x, 2, obs.slots[2].ct, Drbg(b"t" * 32))
    with pytest.raises(UnexpectedMessage) as err:
        obs.receive({"type": "tokens", "seat": 2, "tokens": [tok.to_wire()]})
    assert err.value.seat == 2
    # the new positions are dealt as any other
    apply_all(everyone, {"op": "deal", "position": 55, "to": 2})
    assert s2.card(55) == true_card(everyone, 55)
    assert true_card(everyone, 55) in {true_card(everyone, p) for p in (1, 2, 3)}
    apply_all(everyone, {"op": "end"})
    assert audit(GAME, HAND, 3, "dernier-54", obs.log).ok


def test_reshuffle_by_positions_refuses_bad_lists() -> None:
    everyone = started()
    s0, s1, s2, obs = everyone
    apply_all(everyone, {"op": "deal", "position": 0, "to": 1})  # held
    apply_all(everyone, {"op": "deal", "position": 1, "to": 2})
    apply_all(everyone, {"op": "open", "position": 1})  # opened after a deal: allowed
    apply_all(everyone, {"op": "peek", "position": 2, "to": 0})  # peeked, not opened
    apply_all(everyone, {"op": "peek", "position": 3, "to": 0})
    apply_all(everyone, {"op": "open", "position": 3})  # peeked then opened: allowed
    opening = []
    for t in everyone:  # position 4 opened, tokens not yet delivered
        opening.extend(t.apply({"op": "open", "position": 4}))
    for bad in (
        [0], [2], [4], [5, 5], [1, 1], [54], [-1], [True], ["5"], [5.0], [], None, 7, [[5]],
    ):
        for t in everyone:
            with pytest.raises(StateError):
                t.apply({"op": "reshuffle", "positions": bad})
    for t in everyone:
        with pytest.raises(StateError):
            t.apply({"op": "reshuffle", "positions": [5], "cards": [t.card(1)]})
        with pytest.raises(StateError):
            t.apply({"op": "reshuffle"})
        assert [t.reshufflable(p) for p in range(6)] == [False, True, False, True, False, True]
        assert not t.reshufflable(54) and not t.reshufflable(-1)
    deliver(everyone, opening)
    assert all(t.reshufflable(4) for t in everyone)
    card3 = obs.card(3)
    apply_all(everyone, {"op": "reshuffle", "positions": [5, 3, 1]})
    assert obs.discards == [obs.card(4)] and len(obs.slots) == 57
    # a discard reshuffled by card retires its position too: it cannot come back by position
    apply_all(everyone, {"op": "reshuffle", "cards": [obs.card(4)]})
    assert obs.slots[4].retired and obs.discards == []
    for t in everyone:
        with pytest.raises(StateError):
            t.apply({"op": "reshuffle", "positions": [4]})
    apply_all(everyone, {"op": "open", "position": 57})
    apply_all(everyone, {"op": "deal", "position": 54, "to": 0})
    apply_all(everyone, {"op": "end"})
    report = audit(GAME, HAND, 3, "dernier-54", obs.log)
    assert report.ok, report.faults
    assert sorted(report.cards[54:57]) == sorted(report.cards[p] for p in (5, 3, 1))
    assert card3 in report.cards[54:57] and report.cards[57] == report.cards[4]


def test_cheating_shuffle_in_a_positions_epoch_is_named() -> None:
    everyone = started()
    s0, s1, s2, obs = everyone
    for p in range(6):
        apply_all(everyone, {"op": "deal", "position": p, "to": p % 3})
    apply_all(everyone, {"op": "open", "position": 6})
    source = list(range(6, 54))
    op = {"op": "reshuffle", "positions": source}
    first = []
    for t in everyone:
        first.extend(t.apply(op))
    assert [m["seat"] for m in first] == [0]
    # deliver seat 0's shuffle everywhere but seat 1's reply, which is held back
    held = []
    for t in everyone:
        if t.seat != 0:
            held.extend(t.receive(first[0]))
    assert [(m["type"], m["seat"], m["epoch"]) for m in held] == [("shuffle", 1, 1)]
    honest = held[0]
    ctx = {"game": GAME, "hand": HAND, "step": "reshuffle/1", "seat": 1}
    # the input is the reshuffled positions' ciphertexts as seat 0 re-masked them
    pile = list(obs.pile)
    assert len(pile) == len(source)
    # seat 1 swaps a hidden card for the turned-up one (known to all) and proves from that input
    doctored = list(pile)
    doctored[5] = encrypt(s1.joint_key, card_element("dernier-54", obs.card(6)), 777)
    out, proof = shuffle(s1.joint_key, doctored, Drbg(b"d" * 32), ctx)
    swapped = {**copy.deepcopy(honest), "deck": [list(c) for c in out], "proof": proof.to_wire()}
    # and plain tampering with the honest output
    reordered = copy.deepcopy(honest)
    reordered["deck"][0], reordered["deck"][1] = reordered["deck"][1], reordered["deck"][0]
    # a proof made for the first epoch's step
    out0, proof0 = shuffle(s1.joint_key, pile, Drbg(b"e" * 32), {**ctx, "step": "shuffle"})
    replayed = {**copy.deepcopy(honest), "deck": [list(c) for c in out0],
                "proof": proof0.to_wire()}
    for bad in (swapped, reordered, replayed):
        expect_blame([copy.deepcopy(t) for t in everyone], bad, BadProof, 1)
        report = audit(GAME, HAND, 3, "dernier-54", obs.log + [bad])
        assert isinstance(report.faults[0], BadProof) and report.faults[0].seat == 1
    deliver(everyone, held)
    assert obs.ready and len(obs.slots) == 54 + len(source)


def test_opened_position_with_a_peek_box_still_owed_waits() -> None:
    everyone = started()
    obs = everyone[-1]
    boxes, tokens = [], []
    for t in everyone:
        boxes.extend(t.apply({"op": "peek", "position": 7, "to": 0}))
    for t in everyone:
        tokens.extend(t.apply({"op": "open", "position": 7}))
    assert {m["type"] for m in boxes} == {"peek"} and {m["type"] for m in tokens} == {"tokens"}
    deliver(everyone, tokens)  # every token of the open is in, the peek boxes are still owed
    assert obs.slots[7].opened and 7 not in obs.expect_tokens and not obs.reshufflable(7)
    with pytest.raises(StateError):
        obs.apply({"op": "reshuffle", "positions": [7]})
    deliver(everyone, boxes)
    assert obs.pending() == [] and all(t.reshufflable(7) for t in everyone)
    apply_all(everyone, {"op": "reshuffle", "positions": [7, 8]})
    assert obs.slots[7].retired and obs.discards == []


# --------------------------------------------------------------------- relay order, verified
def test_boxes_are_numbered_in_relay_order_with_two_givers_outstanding() -> None:
    everyone = started()
    s0, s1, s2, obs = everyone
    apply_all(everyone, {"op": "deal", "position": 0, "to": 0})
    apply_all(everyone, {"op": "deal", "position": 1, "to": 1})
    msgs = []
    for op in ({"op": "transfer", "position": 0, "to": 1}, {"op": "transfer", "position": 1,
                                                              "to": 0}):
        for t in everyone:
            msgs.extend(t.apply(op))
    box_a = next(m for m in msgs if m["seat"] == 0)  # seat 0 made its box first ...
    box_b = next(m for m in msgs if m["seat"] == 1)
    bad_b = dict(box_b, box=box_b["box"][:-1] + bytes([box_b["box"][-1] ^ 1]))
    replies = []
    for m in (bad_b, box_a):  # ... but the relay delivers seat 1's (altered) box first
        for t in everyone:
            replies.extend(t.receive(m))
    assert [(m["seat"], m["type"], m["ref"]) for m in replies] == [(0, "complaint", 0)]
    for t in everyone:  # every table numbers the boxes alike, seat 1 as the relay delivered
        assert [b.transfer for b in t.boxes] == [b.transfer for b in obs.boxes]
    assert obs.boxes[0].transfer.giver == 1
    for t in (s1, s2, obs):  # the complaint names the box seat 0 could not open
        with pytest.raises(TransferDispute):
            t.receive(replies[0])
    assert s0.receive(replies[0]) == []  # its own complaint back from the relay
    # the complainer recorded its complaint as every other table did: box 0, seat 0, its text
    assert s0.complaints == obs.complaints == [(0, 0, replies[0]["plaintext"])]
    apply_all(everyone, {"op": "end"})
    report = audit(GAME, HAND, 3, "dernier-54", obs.log)
    assert [f.seat for f in report.faults] == [1]
    assert [m for m in s0.log if "type" in m] == [m for m in obs.log if "type" in m]


def test_own_messages_take_their_place_in_relay_order_as_delivered() -> None:
    """A seat's own message, logged when made, moves to where the relay delivered it; if the
    relay delivered other content (only possible with the seat's key), the log and the box
    numbering take what every peer saw."""
    everyone = new_tables(2, "dernier-54", seed=3) + [DeckTable(GAME, HAND, 2, "dernier-54")]
    s0, s1, obs = everyone
    first, second = s0.start(), s1.start()
    obs.start()
    deliver(everyone, second + first)  # seat 1's commitment first, made second
    assert [m for m in s0.log if "type" in m] == [m for m in obs.log if "type" in m]
    everyone = started()
    s0, s1, s2, obs = everyone
    msg, bad = _transfer_with_altered_box(everyone)
    for t in (s0, s2, obs):
        t.receive(bad)  # seat 0's own box comes back altered
    assert s0.log[-1] == bad and [m for m in s0.log if "type" in m] == [
        m for m in obs.log if "type" in m]
    assert [b.transfer for b in s0.boxes] == [b.transfer for b in obs.boxes]


def test_a_message_seat_past_the_table_is_refused_naming_the_sender() -> None:
    obs = started()[3]
    for seat, sender in ((3, None), (3, 2), (-1, None)):
        with pytest.raises(BadElement) as err:
            obs.receive({"type": "secret", "seat": seat, "secret": bytes(32)}, sender)
        assert err.value.seat == sender
    with pytest.raises(BadElement) as err:
        obs.receive(["secret", 2], 2)  # no map at all
    assert err.value.seat == 2


def test_own_message_not_made_is_refused() -> None:
    everyone = started()
    s0 = everyone[0]
    with pytest.raises(UnexpectedMessage) as err:
        s0.receive({"type": "secret", "seat": 0, "secret": bytes(32)})
    assert err.value.seat == 0


def test_holder_without_a_forwarded_token_stays_owed() -> None:
    everyone = started()
    s0, s1, s2, obs = everyone
    msg, bad = _transfer_with_altered_box(everyone)
    s0.receive(msg)  # seat 0's box back from the relay (as it made it)
    replies = s1.receive(bad)
    assert [m["type"] for m in replies] == ["complaint"] and s1.card(0) is None
    for t in (s2, obs):
        t.receive(bad)
    # seat 1 holds position 0 without seat 0's token: passing it on waits, it does not raise
    assert s1.apply({"op": "transfer", "position": 0, "to": 2}) == []
    for t in (s0, s2, obs):
        assert t.apply({"op": "transfer", "position": 0, "to": 2}) == []
    for t in (s1, obs):
        assert (1, "transfer of position 0 to seat 2") in t.pending()


def test_verified_messages_skip_the_checks_but_not_the_state(monkeypatch) -> None:
    import dernier_p2p.deck.table as table_mod

    n, deck = 3, "dernier-54"
    tables = new_tables(n, deck, seed=4)
    obs = DeckTable(GAME, HAND, n, deck)
    everyone = tables + [obs]
    s1 = tables[1]
    calls: list[str] = []  # checks made by seat 1's table
    others_made: list[str] = []  # checks made by the other tables
    busy = [False]  # True while seat 1's table takes a verified message
    for name in ("verify_shuffle", "verify_token", "check_secret"):
        real = getattr(table_mod, name)

        def spy(*args, _n=name, _real=real, **kw):
            (calls if busy[0] else others_made).append(_n)
            return _real(*args, **kw)

        monkeypatch.setattr(table_mod, name, spy)
    queue = [m for t in everyone for m in t.start()]
    shuffles = []
    while queue:
        m = queue.pop(0)
        shuffles += [m] if m["type"] == "shuffle" else []
        for t in everyone:
            busy[0] = t is s1 and m["seat"] != 1
            queue.extend(t.receive(m, verified=busy[0]))
            busy[0] = False
    assert calls == [] and len(shuffles) == n
    # the observer checks every shuffle, seats 0 and 2 every other seat's
    assert others_made.count("verify_shuffle") == n + (n - 1) * (n - 1)
    assert [s.ct for s in s1.slots] == [s.ct for s in obs.slots]
    # the state checks still run: a shuffle out of turn is refused, verified or not
    with pytest.raises(UnexpectedMessage):
        s1.receive(shuffles[0], verified=True)
    apply_all(everyone, {"op": "deal", "position": 0, "to": 1})
    apply_all(everyone, {"op": "end"})
    assert s1.card(0) is not None and audit(GAME, HAND, n, deck, obs.log).ok


def test_a_complaint_is_checked_then_judged_from_its_plaintext() -> None:
    """A complaint about no box, with a plaintext that is not bytes, or about a box sent to
    another seat names its author; one whose plaintext shows a sound box is a false complaint
    naming the complainer, judged at once."""
    everyone = started()
    s0, s1, s2, obs = everyone
    msgs = handed_to_seat_1(everyone)
    bad = [({"type": "complaint", "seat": 1, "ref": 1, "plaintext": None}, BadElement),
           ({"type": "complaint", "seat": 1, "ref": -1, "plaintext": None}, BadElement),
           ({"type": "complaint", "seat": 1, "ref": True, "plaintext": None}, BadElement),
           ({"type": "complaint", "seat": 1, "ref": 0, "plaintext": "text"}, BadElement),
           ({"type": "complaint", "seat": 2, "ref": 0, "plaintext": None}, UnexpectedMessage)]
    for msg, exc in bad:
        with pytest.raises(exc) as err:
            copy.deepcopy(obs).receive(msg)
        assert err.value.seat == msg["seat"], msg
    sent = next(m for m in msgs if m["type"] == "transfer")
    with pytest.raises(BadElement) as err:  # a box for a position the deck does not have
        copy.deepcopy(obs).receive({**sent, "position": 10**6})
    assert err.value.seat == sent["seat"]
    with pytest.raises(UnexpectedMessage) as err:  # the same box again: not due
        copy.deepcopy(obs).receive(sent)
    assert err.value.seat == sent["seat"]
    assert started()[3].reshufflable(0)  # never dealt, opened or peeked
    assert not obs.reshufflable(0)  # here seat 1 holds it
    plain = open_box(GAME, HAND, obs.boxes[0].transfer, s1.secret.transfer_private)
    with pytest.raises(BadTransfer) as err:
        obs.receive({"type": "complaint", "seat": 1, "ref": 0, "plaintext": plain})
    assert (err.value.seat, err.value.reason) == (1, "false complaint about box 0")


# --------------------------------------------------------------------- handlers, each check
def test_each_refused_secret_names_its_author() -> None:
    """A second secret, a secret of a seat that never revealed its key, and one that is no
    scalar are refused naming their author; the state keeps only the first sound secret."""
    everyone = started()
    s0, s1, s2, obs = everyone
    msgs = [m for t in everyone for m in t.apply({"op": "end"})]
    secret2 = next(m for m in msgs if m["seat"] == 2)
    for bad in (b"\x01" * 31, 7, None, (g.ORDER).to_bytes(32, "little")):
        with pytest.raises(BadElement) as err:
            obs.receive(dict(secret2, secret=bad))
        assert err.value.seat == 2
    assert obs.receive(secret2) == [] and obs.secrets == {2: s2.secret.x}
    with pytest.raises(MissingMessage) as err:  # seats 0 and 1 still owe their secrets
        obs.all_cards()
    assert err.value.seat == 0 and obs.pending() == [(0, "secret"), (1, "secret")]
    with pytest.raises(UnexpectedMessage) as err:
        obs.receive(secret2)
    assert err.value.seat == 2 and obs.secrets == {2: s2.secret.x}
    # key setup cut short: seat 1's commitment is in, its reveal never came
    tables = new_tables(3, "dernier-54", seed=3)
    late = DeckTable(GAME, HAND, 3, "dernier-54")
    commits = [m for t in tables for m in t.start()]
    late.start()
    reveals = [m for c in commits for m in tables[0].receive(c) if c["seat"] != 0]
    assert deliver([late], commits + reveals) == commits + reveals  # an observer adds none
    assert sorted(late.keys.reveals) == [0] and not late.ready
    late.apply({"op": "end"})
    assert tables[1].apply({"op": "end"}) == []  # no reveal of its own: no secret to show
    assert [m["type"] for m in tables[0].apply({"op": "end"})] == ["secret"]
    assert tables[0].secrets == {0: tables[0].secret.x} and tables[1].secrets == {}
    secret1 = {"type": "secret", "seat": 1, "secret": g.encode_scalar(tables[1].secret.x)}
    with pytest.raises(UnexpectedMessage) as err:
        late.receive(secret1)
    assert err.value.seat == 1 and late.secrets == {}


def test_each_refused_key_message_names_its_author() -> None:
    """A second start, a commitment after all were in, a reveal (checked or taken as verified)
    before every commitment or a second time: each refused, naming the author, state kept."""
    tables = new_tables(3, "dernier-54", seed=3)
    commits = [m for t in tables for m in t.start()]
    assert tables[0].pending() == [(1, "key_commit"), (2, "key_commit")]  # its own is in
    with pytest.raises(StateError):
        tables[0].start()
    assert DeckTable(GAME, HAND, 3, "dernier-54").start() == []  # an observer says nothing
    reveal1 = [m for c in commits if c["seat"] != 1 for m in tables[1].receive(c)][0]
    t0 = tables[0]
    t0.receive(commits[1])  # seat 2's commitment still due
    for verified in (False, True):
        with pytest.raises(DeckError) as err:
            t0.receive(reveal1, verified=verified)
        assert err.value.seat == 1 and 1 not in t0.keys.reveals
    out = t0.receive(commits[2])
    assert [m["type"] for m in out] == ["key_reveal"]
    assert t0.pending() == [(1, "key_reveal"), (2, "key_reveal")]
    with pytest.raises(UnexpectedMessage) as err:
        t0.receive(commits[2])  # every commitment is in
    assert err.value.seat == 2
    for verified in (False, True):
        t = copy.deepcopy(t0)
        t.receive(reveal1, verified=verified)
        assert t.keys.reveals[1].share == reveal1["share"]
        for again in (False, True):
            with pytest.raises(DeckError) as err:
                t.receive(reveal1, verified=again)
            assert err.value.seat == 1


def test_each_refused_shuffle_names_its_author(at_shuffle: list[DeckTable]) -> None:
    """A shuffle for another epoch, or whose deck is no list of the pile's length (checked or
    taken as verified), is refused naming its author and changes nothing."""
    base = honest_shuffle_msg(at_shuffle)
    t = receivers(at_shuffle)[0]
    assert t.pending() == [(1, "shuffle epoch 0")]
    for bad, exc in ((dict(base, epoch=1), UnexpectedMessage),
                     (dict(base, epoch=-1), UnexpectedMessage),
                     (dict(base, deck=tuple(base["deck"])), BadElement),
                     (dict(base, deck={0: base["deck"][0]}), BadElement),
                     (dict(base, deck=base["deck"] + base["deck"][:1]), BadElement)):
        for verified in (False, True):
            with pytest.raises(exc) as err:
                t.receive(bad, verified=verified)
            assert err.value.seat == 1 and t.turn == 1 and t.slots == []
    t.receive(base)
    assert t.turn == 2 and t.pile == [tuple(ct) for ct in base["deck"]]


def test_each_refused_tokens_message_names_its_author() -> None:
    """Two tokens for one position, a token for a position the deck lacks, and (taken as
    verified too) tokens not due or of the wrong owner are refused naming the author; none of
    the message's tokens is taken."""
    everyone = started()
    obs = everyone[-1]
    msgs = [m for t in everyone for m in t.apply({"op": "open", "position": 4})]
    msgs += [m for t in everyone for m in t.apply({"op": "open", "position": 9})]
    assert obs.pending() == sorted((s, f"token for position {p}") for p in (4, 9) for s in range(3))
    two = [m for m in msgs if m["seat"] == 2]
    pair = dict(two[0], tokens=two[0]["tokens"] + two[1]["tokens"])
    twice = dict(two[0], tokens=two[0]["tokens"] * 2)
    far = copy.deepcopy(two[0])
    far["tokens"][0]["position"] = len(obs.slots)
    wrong_owner = copy.deepcopy(pair)
    wrong_owner["tokens"][1]["owner"] = 1
    for bad, exc, verified in ((twice, BadElement, False), (twice, BadElement, True),
                               (far, BadElement, False), (wrong_owner, UnexpectedMessage, True),
                               (dict(pair, seat=1), UnexpectedMessage, True)):
        t = copy.deepcopy(obs)
        with pytest.raises(exc) as err:
            t.receive(bad, verified=verified)
        assert err.value.seat == bad["seat"]
        assert t.expect_tokens == obs.expect_tokens and t.slots[4].public == {}
    for tokens in (7, True, 2.5, b"\x01", {"position": 4}):  # no list: refused, never iterated
        for verified in (False, True):
            with pytest.raises(BadElement) as err:
                copy.deepcopy(obs).receive(dict(pair, tokens=tokens), verified=verified)
            assert err.value.seat == 2
    for verified in (False, True):
        t = copy.deepcopy(obs)
        assert t.receive(pair, verified=verified) == []
        assert all(set(t.expect_tokens[p]) == {0, 1} for p in (4, 9))
        assert [t.slots[p].public for p in (4, 9)] == [{2: o["token"]} for o in pair["tokens"]]


def test_operation_shorthands_apply_the_operation_they_name() -> None:
    """``deal``, ``peek``, ``open``, ``transfer``, ``reshuffle``, ``reshuffle_positions`` and
    ``end`` are ``apply`` of the operation map they name: same messages, same log."""
    everyone = started()
    apply_all(everyone, {"op": "deal", "position": 0, "to": 0})
    apply_all(everyone, {"op": "open", "position": 9})
    a, b = copy.deepcopy(everyone[0]), copy.deepcopy(everyone[0])
    card, kinds = a.card(9), []
    for name, args, op in (
        ("transfer", (0, 1), {"op": "transfer", "position": 0, "to": 1}),
        ("deal", (1, 2), {"op": "deal", "position": 1, "to": 2}),
        ("peek", (5, 2), {"op": "peek", "position": 5, "to": 2}),
        ("open", (6,), {"op": "open", "position": 6}),
        ("reshuffle", ((card,),), {"op": "reshuffle", "cards": [card]}),
        ("end", (), {"op": "end"}),
    ):
        made = getattr(a, name)(*args)
        assert made == b.apply(op) and a.log == b.log, name
        assert a.log[-len(made) - 1] == op, name
        kinds += [m["type"] for m in made]
    assert kinds == ["transfer", "tokens", "peek", "tokens", "shuffle", "secret"]
    a, b = copy.deepcopy(everyone[0]), copy.deepcopy(everyone[0])
    made = a.reshuffle_positions((7, 8))
    assert made == b.apply({"op": "reshuffle", "positions": [7, 8]}) and a.log == b.log
    assert a.log[-2] == {"op": "reshuffle", "positions": [7, 8]} and a.slots[8].retired


def test_made_and_returning_tell_own_messages_not_yet_back() -> None:
    s0 = started()[0]
    (msg,) = s0.apply({"op": "end"})
    other = dict(msg, secret=bytes(32))
    assert s0.made(msg) and s0.returning(msg)
    assert not s0.made(other) and s0.returning(other)  # same type: it takes msg's place
    assert not s0.made(dict(msg, type="tokens")) and not s0.returning(dict(msg, type="tokens"))
    assert not s0.made([msg]) and not s0.returning(None)
    s0.receive(msg)
    assert not s0.made(msg) and not s0.returning(msg)
    s0 = started()[0]
    (first,) = s0.apply({"op": "open", "position": 4})
    (second,) = s0.apply({"op": "open", "position": 9})
    assert s0.made(second) and s0.made(first)  # each found exactly, not just by its type
    assert s0.receive(second) == [] and s0.made(first) and not s0.made(second)
    # field for field as canonical msgpack sees them: tuples for lists, nothing else
    (token,) = first["tokens"]
    assert s0.made(dict(first, tokens=(dict(token),)))
    assert s0.made(decode(encode(first)))  # as the relay delivers it: equal, not the same objects
    for tokens in ([], [token, token], [dict(token, position=9)], [dict(token, position=True)],
                   [dict(token, token=bytearray(token["token"]))], [[token]], token,
                   [dict(token, extra=1)], [{k: v for k, v in token.items() if k != "proof"}]):
        assert not s0.made(dict(first, tokens=tokens)) and s0.returning(dict(first, tokens=tokens))


def test_operations_name_a_seat_of_the_table_and_none_follows_the_end() -> None:
    obs = started()[3]
    for to in (3, -1, True, "1", None, 1.0):
        for kind in ("deal", "peek"):
            with pytest.raises(StateError):
                obs.apply({"op": kind, "position": 0, "to": to})
    for p in (54, -1, True, "0", None):
        with pytest.raises(StateError):
            obs.apply({"op": "open", "position": p})
    for cards in (5, True, [], "ab", None):
        with pytest.raises(StateError):
            obs.apply({"op": "reshuffle", "cards": cards})
    assert obs.log == [m for m in obs.log if "op" not in m]  # nothing refused was logged
    obs.apply({"op": "deal", "position": 0, "to": 1})
    obs.apply({"op": "end"})
    assert obs.ended and not obs.ready
    for op in ({"op": "deal", "position": 1, "to": 0}, {"op": "peek", "position": 1, "to": 0},
               {"op": "open", "position": 1}, {"op": "transfer", "position": 0, "to": 2},
               {"op": "reshuffle", "positions": [1]}, {"op": "end"}):
        with pytest.raises(StateError):
            obs.apply(op)
    assert [m for m in obs.log if "op" in m] == [{"op": "deal", "position": 0, "to": 1},
                                                 {"op": "end"}]


def test_a_bad_forwarded_token_is_blamed_on_the_holder_who_sent_it() -> None:
    """At an open, the holder publishes the owner's token it got in a box: a bad one names the
    holder (its author), not the owner whose token it claims to be."""
    everyone = started()
    apply_all(everyone, {"op": "deal", "position": 0, "to": 0})
    apply_all(everyone, {"op": "transfer", "position": 0, "to": 1})
    _, msg = intercept(everyone, {"op": "open", "position": 0}, author=1)
    assert [o["owner"] for o in msg["tokens"]] == [0]  # seat 0's token, forwarded by seat 1
    bad = copy.deepcopy(msg)
    bad["tokens"][0]["token"] = g.add(bad["tokens"][0]["token"], g.GENERATOR)
    expect_blame(everyone, bad, BadProof, 1)


def test_a_position_with_a_box_outstanding_is_not_transferred_again() -> None:
    everyone = started()
    apply_all(everyone, {"op": "deal", "position": 4, "to": 1})
    obs = everyone[-1]
    assert obs.apply({"op": "transfer", "position": 4, "to": 2}) == []  # seat 1's box not in
    for to in (0, 2):
        with pytest.raises(StateError):
            obs.apply({"op": "transfer", "position": 4, "to": to})
    assert obs.expect_boxes == {("transfer", 4, 1): 2}


def test_a_token_late_after_the_secrets_lets_the_observer_read_the_card() -> None:
    everyone = started()
    obs = everyone[-1]
    msgs = [m for t in everyone for m in t.apply({"op": "deal", "position": 3, "to": 1})]
    late = [m for m in msgs if m["seat"] == 2]
    deliver(everyone, [m for m in msgs if m["seat"] != 2])
    apply_all(everyone, {"op": "end"})
    assert sorted(obs.secrets) == [0, 1, 2] and obs.card(3) is None
    deliver(everyone, late)  # seat 2's token, owed since the deal
    assert obs.card(3) == true_card(everyone, 3) == everyone[1].card(3)
    assert obs.all_cards()[3] == obs.card(3) and obs.pending() == []


def test_a_table_is_built_for_a_known_deck_and_a_seat_of_the_table() -> None:
    for seat in (3, -1, True, "0", 1.0):
        with pytest.raises(ValueError, match="seat outside the table"):
            DeckTable(GAME, HAND, 3, "dernier-54", seat, Drbg(bytes(32)))
    for seat, drbg in ((0, None), (None, Drbg(bytes(32)))):
        with pytest.raises(ValueError, match="Drbg"):
            DeckTable(GAME, HAND, 3, "dernier-54", seat, drbg)
    with pytest.raises(ValueError, match="unknown deck"):
        DeckTable(GAME, HAND, 3, "no-such-deck")
    assert DeckTable(GAME, HAND, 3, "dernier-54", 2, Drbg(bytes(32))).seat == 2
