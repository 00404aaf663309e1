"""The offline auditor, and the known-answer vectors (cards and one full hand, byte for byte)."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dernier_p2p.deck import audit as audit_mod
from dernier_p2p.deck import group as g
from dernier_p2p.deck import table as table_mod
from dernier_p2p.deck.audit import audit, audit_table
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.errors import (
    BadCommitment,
    BadElement,
    BadProof,
    DeckError,
    MissingMessage,
)
from dernier_p2p.deck.keys import transfer_private_key
from dernier_p2p.deck.table import DeckTable, TransferDispute, apply_all, start_all
from dernier_p2p.deck.transfer import BadTransfer, Transfer, open_box
from dernier_p2p.deck.vectors import (
    basics_vectors,
    card_vectors,
    hand_vector,
    primitive_vectors,
)
from dernier_p2p.wire.canonical import decode

VECTORS = Path(__file__).parents[2] / "vectors"  # shipped with PROTOCOL.md
GAME, HAND, N, DECK = b"game-audit", 1, 3, "dernier-54"


_CACHE: list[list[dict]] = []


@pytest.fixture(scope="module")
def honest_log() -> list[dict]:
    if not _CACHE:
        _CACHE.append(_play_honest())
    return _CACHE[0]


def _six_dealt(seed: int) -> list[DeckTable]:
    """The seats (their randomness drawn from ``seed``) and an observer, last, after key setup,
    the shuffles and positions 0 to 5 dealt round the table."""
    tables = [DeckTable(GAME, HAND, N, DECK, s, Drbg(bytes([s + seed]) * 32)) for s in range(N)]
    everyone = tables + [DeckTable(GAME, HAND, N, DECK)]
    start_all(everyone)
    for p in range(6):
        apply_all(everyone, {"op": "deal", "position": p, "to": p % N})
    return everyone


def _play_honest() -> list[dict]:
    everyone = _six_dealt(40)
    obs = everyone[-1]
    apply_all(everyone, {"op": "transfer", "position": 2, "to": 0})
    apply_all(everyone, {"op": "open", "position": 2})
    apply_all(everyone, {"op": "end"})
    return obs.log


def index_of(log: list[dict], kind: str, seat: int) -> int:
    return next(i for i, e in enumerate(log) if e.get("type") == kind and e["seat"] == seat)


def test_honest_hand_passes(honest_log: list[dict]) -> None:
    report = audit(GAME, HAND, N, DECK, honest_log)
    assert report.ok
    assert sorted(report.cards) == list(range(54))
    assert list(report.opened) == [2] and report.opened[2] == report.cards[2]


def test_audit_names_a_tampered_shuffle(honest_log: list[dict]) -> None:
    log = copy.deepcopy(honest_log)
    i = index_of(log, "shuffle", 2)
    log[i]["deck"][0], log[i]["deck"][1] = log[i]["deck"][1], log[i]["deck"][0]
    report = audit(GAME, HAND, N, DECK, log)
    assert isinstance(report.faults[0], BadProof) and report.faults[0].seat == 2
    with pytest.raises(BadProof):
        report.raise_first()


def test_audit_names_a_wrong_token(honest_log: list[dict]) -> None:
    log = copy.deepcopy(honest_log)
    i = index_of(log, "tokens", 1)
    log[i]["tokens"][0]["token"] = g.add(log[i]["tokens"][0]["token"], g.GENERATOR)
    report = audit(GAME, HAND, N, DECK, log)
    assert isinstance(report.faults[0], BadProof) and report.faults[0].seat == 1


def test_audit_names_a_bad_secret_and_a_missing_one(honest_log: list[dict]) -> None:
    log = copy.deepcopy(honest_log)
    i = index_of(log, "secret", 0)
    log[i]["secret"] = g.encode_scalar(99)
    report = audit(GAME, HAND, N, DECK, log)
    assert isinstance(report.faults[0], BadCommitment) and report.faults[0].seat == 0
    del log[i]
    report = audit(GAME, HAND, N, DECK, log)
    assert isinstance(report.faults[0], MissingMessage) and report.faults[0].seat == 0
    assert report.cards is None


def test_audit_names_a_malformed_element(honest_log: list[dict]) -> None:
    log = copy.deepcopy(honest_log)
    i = index_of(log, "key_reveal", 2)
    log[i]["share"] = (2**255 - 19 + 3).to_bytes(32, "little")  # not canonical
    report = audit(GAME, HAND, N, DECK, log)
    assert isinstance(report.faults[0], BadElement) and report.faults[0].seat == 2


def test_audit_of_an_unfinished_hand_names_who_owes(honest_log: list[dict]) -> None:
    cut = index_of(honest_log, "shuffle", 1)
    report = audit(GAME, HAND, N, DECK, honest_log[:cut])
    assert isinstance(report.faults[0], MissingMessage) and report.faults[0].seat == 1


def test_card_vectors_match() -> None:
    stored = json.loads((VECTORS / "cards.json").read_text())
    assert stored == card_vectors()
    assert len(stored["decks"]["moderno-112"]) == 112


def test_basics_vectors_match() -> None:
    """The neutral element's encoding, every deck's faces and the Drbg (PROTOCOL.md A.6)."""
    stored = json.loads((VECTORS / "basics.json").read_text())
    assert stored == json.loads(json.dumps(basics_vectors()))
    assert stored["identity_element"] == "01" + "00" * 31
    # the number pairs of the coloured decks come twice in a row (8.2)
    assert stored["decks"]["moderno-112"]["first_20"][:4] == [["1", 0], ["1", 0], ["2", 0],
                                                               ["2", 0]]
    assert stored["decks"]["standard-108"]["first_20"][:3] == [["0", 0], ["1", 0], ["1", 0]]


def test_primitive_vectors_match() -> None:
    stored = json.loads((VECTORS / "primitives.json").read_text())
    assert stored == primitive_vectors()
    assert 0 <= stored["coin"]["result"] < 6


def test_hand_vector_matches_byte_for_byte() -> None:
    stored = json.loads((VECTORS / "hand.json").read_text())
    fresh = hand_vector()
    assert fresh["log"] == stored["log"]
    assert fresh == stored
    # the stored record audits on its own, from the bytes alone
    log = [decode(bytes.fromhex(h)) for h in stored["log"]]
    report = audit(bytes.fromhex(stored["game"]), stored["hand"], stored["seats"],
                   stored["deck"], log)
    assert report.ok and report.cards == stored["cards"]


def test_audit_of_garbage_entries_names_no_one_and_does_not_crash(honest_log: list[dict]) -> None:
    for junk in (None, 5, "op", {"op": "fly"}, {"type": "tokens"}):
        report = audit(GAME, HAND, N, DECK, honest_log[:4] + [junk])
        assert not report.ok


def _leaves(obj: object, path: tuple = ()) -> list[tuple]:
    """Paths to every value inside a message (map values and list items, at any depth)."""
    out = [path] if path else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _leaves(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _leaves(v, path + (i,))
    return out


JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.binary(max_size=40),
    st.binary(min_size=32, max_size=32),
    st.text(max_size=4),
    st.lists(st.binary(min_size=32, max_size=32), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.data())
def test_any_mutated_message_is_a_named_error_never_a_crash(data: st.DataObject) -> None:
    if not _CACHE:
        _CACHE.append(_play_honest())
    honest_log = _CACHE[0]
    msgs = [i for i, e in enumerate(honest_log) if "type" in e]
    i = data.draw(st.sampled_from(msgs))
    log = copy.deepcopy(honest_log)
    paths = _leaves(log[i])
    path = data.draw(st.sampled_from(paths))
    target = log[i]
    for key in path[:-1]:
        target = target[key]
    if data.draw(st.booleans()) and isinstance(target, dict):
        del target[path[-1]]
    else:
        target[path[-1]] = data.draw(JUNK)
    report = audit(GAME, HAND, N, DECK, log)  # must not raise
    if not report.ok:
        assert all(isinstance(f, DeckError) for f in report.faults)


# --------------------------------------------------------------------- reshuffle by positions
_POS_CACHE: list[list[dict]] = []


def positions_log() -> list[dict]:
    """Six cards dealt, the next turned up and sent back with the whole pile by positions,
    three cards dealt from the new epoch and one turned up."""
    if not _POS_CACHE:
        everyone = _six_dealt(60)
        obs = everyone[-1]
        apply_all(everyone, {"op": "open", "position": 6})
        apply_all(everyone, {"op": "reshuffle", "positions": list(range(6, 54))})
        for p in range(54, 57):
            apply_all(everyone, {"op": "deal", "position": p, "to": p % N})
        apply_all(everyone, {"op": "open", "position": 57})
        apply_all(everyone, {"op": "end"})
        _POS_CACHE.append(obs.log)
    return _POS_CACHE[0]


def test_reshuffle_by_positions_audits_with_the_positions_cards() -> None:
    log = positions_log()
    report = audit(GAME, HAND, N, DECK, log)
    assert report.ok, report.faults
    cards = report.cards
    assert len(cards) == 54 + 48 and sorted(cards[:54]) == list(range(54))
    assert sorted(cards[54:]) == sorted(cards[6:54])
    assert report.opened == {6: cards[6], 57: cards[57]}
    # the epoch check compares the new epoch with the decrypted cards of the listed positions:
    # swap one card of the new epoch with a dealt card and both epochs are reported
    obs = DeckTable(GAME, HAND, N, DECK)
    obs.start()
    for entry in log:
        (obs.apply if "op" in entry else obs.receive)(entry)
    assert audit_mod._epoch_inputs(obs, cards)[1] == cards[6:54]
    obs.slots[0].ct, obs.slots[60].ct = obs.slots[60].ct, obs.slots[0].ct
    tampered = audit_mod.AuditReport()
    audit_mod._check_deal(obs, tampered)
    assert [str(f) for f in tampered.faults[:2]] == [
        "shuffle epoch 0 does not hold its cards",
        "shuffle epoch 1 does not hold its cards",
    ]  # (the tokens published for the two positions no longer match them either)


def test_audit_names_a_tampered_shuffle_after_a_positions_reshuffle() -> None:
    log = copy.deepcopy(positions_log())
    i = next(i for i, e in enumerate(log)
             if e.get("type") == "shuffle" and e["seat"] == 2 and e["epoch"] == 1)
    log[i]["deck"][3], log[i]["deck"][4] = log[i]["deck"][4], log[i]["deck"][3]
    report = audit(GAME, HAND, N, DECK, log)
    assert isinstance(report.faults[0], BadProof) and report.faults[0].seat == 2
    assert report.cards is None


def test_audit_names_an_operation_on_a_retired_position() -> None:
    log = copy.deepcopy(positions_log())
    i = next(i for i, e in enumerate(log) if e.get("op") == "deal" and e["position"] == 54)
    log[i]["position"] = 20  # retired by the reshuffle
    report = audit(GAME, HAND, N, DECK, log)
    assert not report.ok and report.cards is None
    assert "reshuffled into a later epoch" in str(report.faults[0])


# --------------------------------------------------------------------- a live observer's audit
def _live(log: list[dict]) -> DeckTable:
    """An observer fed ``log`` live, as a peer's public table is."""
    obs = DeckTable(GAME, HAND, N, DECK)
    obs.start()
    for entry in log:
        (obs.apply if "op" in entry else obs.receive)(entry)
    return obs


def test_audit_table_of_a_live_observer_checks_no_proof_again(
    honest_log: list[dict], monkeypatch
) -> None:
    obs = _live(honest_log)
    calls = []
    for mod, name in ((table_mod, "verify_shuffle"), (table_mod, "verify_token"),
                      (table_mod, "check_secret"), (audit_mod, "check_transfer_token")):
        real = getattr(mod, name)
        monkeypatch.setattr(mod, name, lambda *a, _n=name, _r=real, **k: (calls.append(_n),
                                                                             _r(*a, **k))[1])
    report = audit_table(obs)
    assert calls == ["check_transfer_token"]  # the one box: only the receiver could open it
    # a receiver that opened that box live does not open it again
    assert audit_table(obs, opened={0}).cards == report.cards and len(calls) == 1
    assert report.ok, report.faults
    assert report.cards == audit(GAME, HAND, N, DECK, honest_log).cards
    assert report.opened == {2: report.cards[2]}
    with pytest.raises(ValueError):
        audit_table(DeckTable(GAME, HAND, N, DECK, 0, Drbg(b"s" * 32)))


def test_audit_table_of_an_unfinished_hand_names_who_owes(honest_log: list[dict]) -> None:
    cut = index_of(honest_log, "secret", 1)
    report = audit_table(_live(honest_log[:cut]))
    assert isinstance(report.faults[0], MissingMessage) and report.faults[0].seat == 1
    assert report.cards is None


def test_audit_table_names_what_only_the_secrets_show(honest_log: list[dict]) -> None:
    # a box seat 1 cannot open: live, public data cannot settle it; the audit names the giver
    log = copy.deepcopy(honest_log)
    i = index_of(log, "transfer", 2)
    box = log[i]["box"]
    log[i]["box"] = box[:-1] + bytes([box[-1] ^ 1])
    obs = DeckTable(GAME, HAND, N, DECK)
    obs.start()
    for entry in log[: i + 1]:
        (obs.apply if "op" in entry else obs.receive)(entry)
    with pytest.raises(TransferDispute):
        obs.receive({"type": "complaint", "seat": 0, "ref": 0, "plaintext": None})
    for entry in log[i + 1:]:  # the hand stops: no open, straight to the end and the secrets
        if entry.get("op") != "open" and entry.get("type") != "tokens":
            (obs.apply if "op" in entry else obs.receive)(entry)
    report = audit_table(obs)
    assert [f.seat for f in report.faults] == [2], report.faults
    # a box complained of is opened whatever the caller says
    assert [f.seat for f in audit_table(obs, opened={0}).faults] == [2]


def test_audit_table_names_each_fault_the_secrets_show(honest_log: list[dict]) -> None:
    """After the secrets: a published token that is not ``x_j*c1`` names its seat, a card opened
    as another card and a position that decrypts to no card are faults."""
    live = _live(honest_log)
    assert audit_table(live, opened={0}).ok
    obs = copy.deepcopy(live)
    obs.slots[2].public[1] = g.add(obs.slots[2].public[1], g.GENERATOR)
    faults = audit_table(obs, opened={0}).faults
    assert [(type(f), f.seat, f.reason) for f in faults] == [
        (DeckError, 1, "token for position 2 is wrong")]
    obs = copy.deepcopy(live)
    obs.slots[2].card = (obs.slots[2].card + 1) % 54
    faults = audit_table(obs, opened={0}).faults
    assert [(type(f), f.seat, f.reason) for f in faults] == [
        (DeckError, None, "position 2 was opened as the wrong card")]
    obs = copy.deepcopy(live)
    c1, c2 = obs.slots[5].ct
    obs.slots[5].ct = (c1, g.add(c2, g.GENERATOR))
    report = audit_table(obs, opened={0})
    assert report.cards is None and len(report.faults) == 1
    assert type(report.faults[0]) is DeckError and report.faults[0].seat is None
    assert report.faults[0].reason.startswith("a position decrypts to no card")


def test_audit_table_of_a_stopped_hand_keeps_the_verdicts_public_data_gave(
    honest_log: list[dict],
) -> None:
    """A complaint the plaintext settles (here a false one: the box was sound) is a verdict the
    live table raised; when the hand stops there, the audit reports it, naming the complainer."""
    i = index_of(honest_log, "transfer", 2)
    x0 = g.decode_scalar(honest_log[index_of(honest_log, "secret", 0)]["secret"])
    box = Transfer.from_wire(2, honest_log[i])
    plain = open_box(GAME, HAND, box, transfer_private_key(GAME, HAND, box.receiver, x0))
    obs = _live(honest_log[: i + 1])
    with pytest.raises(BadTransfer) as verdict:
        obs.receive({"type": "complaint", "seat": 0, "ref": 0, "plaintext": plain})
    assert verdict.value.seat == 0
    faults = audit_table(obs).faults
    assert [(type(f), f.seat, f.reason) for f in faults] == [
        (BadTransfer, 0, "false complaint about box 0")]


def test_audit_table_opens_every_box_after_one_opened_live(honest_log: list[dict]) -> None:
    """The receiver's own sound box is not opened again, but every box after it still is, and
    after a bad one too (two more boxes here: copies of the first with a byte flipped, each
    naming the giver)."""
    obs = _live(honest_log)
    box = obs.boxes[0]
    for k in (1, 2):
        flipped = box.transfer.box[:-1] + bytes([box.transfer.box[-1] ^ k])
        obs.boxes.append(dataclasses.replace(box, transfer=dataclasses.replace(box.transfer,
                                                                               box=flipped)))
    faults = audit_table(obs, opened={0}).faults
    assert [(type(f), f.seat, f.reason[:7]) for f in faults] == [
        (BadTransfer, 2, "box 1: "), (BadTransfer, 2, "box 2: ")]


def test_audit_table_names_a_false_complaint_the_secrets_settle(honest_log: list[dict]) -> None:
    """Seat 0 complains of its sound box without a plaintext: live, public data cannot settle
    it; after the secrets the box opens soundly and the audit names the complainer."""
    i = index_of(honest_log, "transfer", 2)
    obs = _live(honest_log[: i + 1])
    with pytest.raises(TransferDispute):
        obs.receive({"type": "complaint", "seat": 0, "ref": 0, "plaintext": None})
    for entry in honest_log[i + 1:]:  # the hand stops: straight to the end and the secrets
        if entry.get("op") != "open" and entry.get("type") != "tokens":
            (obs.apply if "op" in entry else obs.receive)(entry)
    for opened in ((), {0}):  # a box complained of is opened whatever the caller says
        faults = audit_table(obs, opened=opened).faults
        assert [(type(f), f.seat, f.reason) for f in faults] == [
            (BadTransfer, 0, "false complaint about box 0")]


def test_the_offline_audit_replays_past_a_complaint(honest_log: list[dict]) -> None:
    """A complaint stops no replay: the offline audit goes on to the secrets and then names
    the complainer of a sound box. Stopped at the complaint, the audit keeps the verdict that
    public data gives (a plaintext showing a sound box) and names no one for a complaint only
    the secrets can settle."""
    i = index_of(honest_log, "transfer", 2)
    x0 = g.decode_scalar(honest_log[index_of(honest_log, "secret", 0)]["secret"])
    box = Transfer.from_wire(2, honest_log[i])
    plain = open_box(GAME, HAND, box, transfer_private_key(GAME, HAND, box.receiver, x0))
    rest = [e for e in honest_log[i + 1:] if e.get("op") != "open" and e.get("type") != "tokens"]

    def complaint(text: bytes | None) -> dict:
        return {"type": "complaint", "seat": 0, "ref": 0, "plaintext": text}

    false = [(BadTransfer, 0, "false complaint about box 0")]
    report = audit(GAME, HAND, N, DECK, [*honest_log[: i + 1], complaint(None), *rest])
    assert [(type(f), f.seat, f.reason) for f in report.faults] == false
    assert sorted(report.cards) == list(range(54))
    report = audit(GAME, HAND, N, DECK, [*honest_log[: i + 1], complaint(plain)])
    assert [(type(f), f.seat, f.reason) for f in report.faults] == false
    report = audit(GAME, HAND, N, DECK, [*honest_log[: i + 1], complaint(None)])
    assert report.faults == [] and report.cards is None


def test_a_position_opened_without_its_tokens_is_no_opened_card(honest_log: list[dict]) -> None:
    k = next(i for i, e in enumerate(honest_log) if e.get("op") == "open")
    report = audit_table(_live(honest_log[: k + 1]))
    assert report.opened == {} and report.cards is None
    assert [type(f) for f in report.faults] == [MissingMessage]
    assert report.faults[0].reason.startswith("still owed: ")


def test_the_tokens_checked_at_once_hold_and_every_wrong_one_is_still_named(
    honest_log: list[dict],
) -> None:
    """The batch check of the published tokens holds for an honest hand and fails for a wrong
    token (then each wrong token is named, as one by one)."""
    from dernier_p2p.deck.audit import _tokens_hold

    live = _live(honest_log)
    assert _tokens_hold(live)
    obs = copy.deepcopy(live)
    obs.slots[2].public[1] = g.add(obs.slots[2].public[1], g.GENERATOR)
    at = next(p for p, slot in enumerate(obs.slots) if p > 2 and slot.public)
    seat, tok = next(iter(obs.slots[at].public.items()))
    obs.slots[at].public[seat] = g.sub(tok, g.GENERATOR)
    assert not _tokens_hold(obs)
    faults = audit_table(obs, opened={0}).faults
    assert [(f.seat, f.reason) for f in faults] == [
        (1, "token for position 2 is wrong"), (seat, f"token for position {at} is wrong")]
