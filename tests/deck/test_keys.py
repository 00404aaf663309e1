"""Per-hand key setup: commit, reveal with proof, joint key, and the typed failures."""

import dataclasses

import pytest

from dernier_p2p.deck import group as g
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.errors import BadCommitment, BadElement, BadProof, DeckError, MissingMessage
from dernier_p2p.deck.keys import (
    KeyReveal,
    KeySecret,
    KeySetup,
    check_secret,
    key_commitment,
    transfer_private_key,
    x25519_public,
)
from dernier_p2p.deck.proofs import Proof, make_context, prove_schnorr

GAME, HAND = b"game-keys", 3


def secrets(n: int) -> list[KeySecret]:
    return [KeySecret.generate(GAME, HAND, i, Drbg(bytes([i]) * 32)) for i in range(n)]


def run_setup(n: int) -> tuple[KeySetup, list[KeySecret]]:
    ks = secrets(n)
    setup = KeySetup(GAME, HAND, n)
    for k in ks:
        setup.add_commitment(k.seat, k.commitment())
    for k in ks:
        setup.add_reveal(KeyReveal.from_wire(k.seat, k.reveal(Drbg(b"p" * 32)).to_wire()))
    return setup, ks


@pytest.mark.parametrize("n", [2, 3, 10])
def test_honest_setup_gives_the_joint_key(n: int) -> None:
    setup, ks = run_setup(n)
    assert setup.joint_key() == g.base_mul(sum(k.x for k in ks))
    for k in ks:
        check_secret(GAME, HAND, setup.reveals[k.seat], k.x)
        assert setup.reveals[k.seat].xpub == x25519_public(
            transfer_private_key(GAME, HAND, k.seat, k.x)
        )


def test_reveal_before_all_commitments_is_refused() -> None:
    ks = secrets(3)
    setup = KeySetup(GAME, HAND, 3)
    setup.add_commitment(0, ks[0].commitment())
    setup.add_commitment(1, ks[1].commitment())
    with pytest.raises(DeckError) as err:
        setup.add_reveal(ks[0].reveal(Drbg(b"p" * 32)))
    assert err.value.seat == 0
    assert setup.missing() == [2]


def test_reveal_not_matching_commitment_names_the_seat() -> None:
    ks = secrets(3)
    setup = KeySetup(GAME, HAND, 3)
    for k in ks:
        setup.add_commitment(k.seat, k.commitment())
    other = KeySecret(GAME, HAND, 1, ks[1].x + 1, ks[1].nonce)
    with pytest.raises(BadCommitment) as err:
        setup.add_reveal(other.reveal(Drbg(b"p" * 32)))
    assert err.value.seat == 1


def test_rogue_key_share_is_refused() -> None:
    """Seat 2 tries Y' = its choice by publishing X_2 = Z - X_0 - X_1: it cannot prove
    knowledge of log X_2, so its reveal fails even with a matching commitment."""
    ks = secrets(3)
    target = g.base_mul(424242)
    rogue = g.sub(g.sub(target, ks[0].share), ks[1].share)
    fake = KeyReveal(2, rogue, ks[2].xpub, ks[2].nonce, Proof(1, 1))
    setup = KeySetup(GAME, HAND, 3)
    setup.add_commitment(0, ks[0].commitment())
    setup.add_commitment(1, ks[1].commitment())
    setup.add_commitment(2, key_commitment(GAME, HAND, 2, rogue, ks[2].xpub, ks[2].nonce))
    setup.add_reveal(ks[0].reveal(Drbg(b"p" * 32)))
    with pytest.raises(BadProof) as err:
        setup.add_reveal(fake)
    assert err.value.seat == 2


def test_proof_from_another_hand_is_refused() -> None:
    k = secrets(2)[1]
    ctx = make_context(GAME, HAND + 1, "key", 1)
    proof = prove_schnorr(k.x, k.share, ctx, Drbg(b"p" * 32), bind=k.xpub)
    replay = KeyReveal(1, k.share, k.xpub, k.nonce, proof)
    setup = KeySetup(GAME, HAND, 2)
    setup.add_commitment(0, secrets(2)[0].commitment())
    setup.add_commitment(1, k.commitment())
    with pytest.raises(BadProof) as err:
        setup.add_reveal(replay)
    assert err.value.seat == 1


def test_invalid_share_encoding_names_the_seat() -> None:
    k = secrets(1)[0]
    wire = k.reveal(Drbg(b"p" * 32)).to_wire()
    small_order = (2**255 - 20).to_bytes(32, "little")  # y = -1, a point of order 2
    for bad in (g.IDENTITY, b"\xff" * 32, small_order, b"\x01"):
        with pytest.raises(BadElement) as err:
            KeyReveal.from_wire(5, {**wire, "share": bad})
        assert err.value.seat == 5
    with pytest.raises(BadElement):
        KeyReveal.from_wire(5, {**wire, "nonce": b"short"})


def test_missing_reveal_is_named_and_bad_secret_refused() -> None:
    ks = secrets(3)
    setup = KeySetup(GAME, HAND, 3)
    for k in ks:
        setup.add_commitment(k.seat, k.commitment())
    setup.add_reveal(ks[0].reveal(Drbg(b"p" * 32)))
    with pytest.raises(MissingMessage) as err:
        setup.joint_key()
    assert err.value.seat == 1
    with pytest.raises(BadCommitment) as err2:
        check_secret(GAME, HAND, setup.reveals[0], ks[0].x + 1)
    assert err2.value.seat == 0


P25519 = 2**255 - 19
SMALL_ORDER_XPUBS = [  # u-coordinates of small order (the blocklist libsodium uses)
    u.to_bytes(32, "little")
    for u in (
        0,
        1,
        325606250916557431795983626356110631294008115727848805560023387167927233504,
        39382357235489614581723060781553021112529911719440698176882885853963445705823,
        P25519 - 1,
    )
]


def test_small_order_and_non_canonical_transfer_keys_are_refused_naming_the_seat() -> None:
    k = secrets(1)[0]
    wire = k.reveal(Drbg(b"p" * 32)).to_wire()
    for bad in [*SMALL_ORDER_XPUBS, P25519.to_bytes(32, "little"), b"\xff" * 32, b"\x09", None,
                bytearray(k.xpub)]:
        with pytest.raises(BadElement) as err:
            KeyReveal.from_wire(4, {**wire, "xpub": bad})
        assert err.value.seat == 4
    assert KeyReveal.from_wire(4, wire).xpub == k.xpub


def test_a_committed_and_proven_small_order_key_is_refused_at_its_reveal() -> None:
    """The reviewed attack: a seat commits to and proves an all-zero transfer key; it is
    refused at its reveal, before anyone boxes a card to it."""
    ks = secrets(2)
    setup = KeySetup(GAME, HAND, 2)
    zero = bytes(32)
    cheat = ks[1]
    ctx = make_context(GAME, HAND, "key", 1)
    proof = prove_schnorr(cheat.x, cheat.share, ctx, Drbg(b"q" * 32), bind=zero)
    setup.add_commitment(0, ks[0].commitment())
    setup.add_commitment(1, key_commitment(GAME, HAND, 1, cheat.share, zero, cheat.nonce))
    wire = {"share": cheat.share, "xpub": zero, "nonce": cheat.nonce, "proof": proof.to_wire()}
    with pytest.raises(BadElement) as err:
        setup.add_reveal(KeyReveal.from_wire(1, wire))
    assert err.value.seat == 1


def test_sealing_to_an_unusable_key_is_the_receivers_fault_not_a_crash() -> None:
    from dernier_p2p.deck.transfer import box_plaintext

    with pytest.raises(BadElement) as err:
        box_plaintext(GAME, HAND, 0, 3, bytes(32), 5, b"plain", b"e" * 32)
    assert err.value.seat == 3


def test_a_malformed_reveal_proof_names_the_seat() -> None:
    wire = secrets(1)[0].reveal(Drbg(b"p" * 32)).to_wire()
    for proof in (None, {"e": b"x"}, {**wire["proof"], "s": b"\xff" * 32}):
        with pytest.raises(BadElement) as err:
            KeyReveal.from_wire(6, {**wire, "proof": proof})
        assert err.value.seat == 6


def test_the_transfer_key_depends_on_game_hand_seat_and_secret() -> None:
    base = (GAME, HAND, 1, 12345)
    keys = {transfer_private_key(*base)}
    for k, other in enumerate((b"game-other", HAND + 1, 2, 12346)):
        keys.add(transfer_private_key(*base[:k], other, *base[k + 1:]))
    assert len(keys) == 5 and all(len(x) == 32 for x in keys)


def test_each_malformed_or_repeated_key_message_names_its_seat() -> None:
    ks = secrets(2)
    wire = ks[1].reveal(Drbg(b"p" * 32)).to_wire()
    for bad in ({k: v for k, v in wire.items() if k != "share"}, {**wire, "nonce": b"short"},
                {**wire, "nonce": None}):
        with pytest.raises(BadElement) as err:
            KeyReveal.from_wire(1, bad)
        assert err.value.seat == 1
    setup = KeySetup(GAME, HAND, 2)
    for bad_commit in (None, b"c" * 31, bytearray(32)):
        with pytest.raises(BadElement) as err:
            setup.add_commitment(1, bad_commit)
        assert err.value.seat == 1
    for k in ks:
        setup.add_commitment(k.seat, k.commitment())
    with pytest.raises(DeckError) as err:
        setup.add_commitment(1, ks[1].commitment())
    assert err.value.seat == 1 and "second" in str(err.value)
    setup.add_reveal(KeyReveal.from_wire(1, wire))
    with pytest.raises(DeckError) as err:
        setup.add_reveal(KeyReveal.from_wire(1, wire))
    assert err.value.seat == 1 and "second" in str(err.value)
    # a secret that matches the share but not the transfer key the reveal carried
    other = dataclasses.replace(setup.reveals[1], xpub=ks[0].xpub)
    with pytest.raises(BadCommitment) as err2:
        check_secret(GAME, HAND, other, ks[1].x)
    assert err2.value.seat == 1 and "transfer key" in str(err2.value)
    for n in (1, 11):
        with pytest.raises(ValueError):
            KeySetup(GAME, HAND, n)
