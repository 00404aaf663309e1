"""Schnorr and Chaum-Pedersen proofs: completeness, soundness checks, context binding, wire."""

import pytest

from dernier_p2p.deck import group as g
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.errors import BadElement, BadProof
from dernier_p2p.deck.proofs import (
    Proof,
    make_context,
    prove_dleq,
    prove_schnorr,
    verify_dleq,
    verify_schnorr,
)

GAME = b"game-0001"


def ctx(step: str = "key", seat: int = 2, hand: int = 7) -> dict:
    return make_context(GAME, hand, step, seat)


def test_schnorr_roundtrip_and_binding() -> None:
    d = Drbg(b"s" * 32)
    x = d.scalar()
    X = g.base_mul(x)
    p = prove_schnorr(x, X, ctx(), d, bind=b"pub")
    verify_schnorr(X, p, ctx(), bind=b"pub")
    for other in (ctx(hand=8), ctx(step="coin"), ctx(seat=3)):
        with pytest.raises(BadProof) as err:
            verify_schnorr(X, p, other, bind=b"pub")
        assert err.value.seat == other["seat"]
    with pytest.raises(BadProof):
        verify_schnorr(X, p, ctx(), bind=b"other")
    with pytest.raises(BadProof):
        verify_schnorr(g.base_mul(x + 1), p, ctx(), bind=b"pub")
    with pytest.raises(BadProof):
        verify_schnorr(X, Proof(p.e, p.s + 1), ctx(), bind=b"pub")


def test_schnorr_needs_the_secret() -> None:
    d = Drbg(b"t" * 32)
    X = g.base_mul(d.scalar())
    forged = prove_schnorr(d.scalar(), X, ctx(), d)
    with pytest.raises(BadProof):
        verify_schnorr(X, forged, ctx())


def test_chaum_pedersen_roundtrip_and_soundness() -> None:
    d = Drbg(b"c" * 32)
    x = d.scalar()
    X, H = g.base_mul(x), g.base_mul(d.scalar())
    T = g.mul(x, H)
    p = prove_dleq(x, X, H, T, ctx("token"), d, bind=4)
    verify_dleq(X, H, T, p, ctx("token"), bind=4)
    with pytest.raises(BadProof):
        verify_dleq(X, H, T, p, ctx("token"), bind=5)
    with pytest.raises(BadProof):
        verify_dleq(X, H, g.add(T, g.GENERATOR), p, ctx("token"), bind=4)
    wrong = g.mul(x + 1, H)  # a token with a different exponent cannot be proven
    with pytest.raises(BadProof) as err:
        verify_dleq(X, H, wrong, prove_dleq(x, X, H, wrong, ctx("token"), d), ctx("token"))
    assert err.value.seat == 2


def test_wire_roundtrip_and_validation() -> None:
    d = Drbg(b"w" * 32)
    x = d.scalar()
    p = prove_schnorr(x, g.base_mul(x), ctx(), d)
    assert Proof.from_wire(p.to_wire()) == p
    bad_scalar = g.ORDER.to_bytes(32, "little")
    for bad in (None, [], {"e": p.to_wire()["e"]}, {"e": bad_scalar, "s": bad_scalar},
                {"e": b"\x00", "s": b"\x00"}, {**p.to_wire(), "x": b""}):
        with pytest.raises(BadElement) as err:
            Proof.from_wire(bad, seat=4)
        assert err.value.seat == 4


def test_context_validation() -> None:
    for args in ((b"", 0, "k", 0), (GAME, -1, "k", 0), (GAME, 0, "", 0), (GAME, 0, "k", 10),
                 ("g", 0, "k", 0), (GAME, True, "k", 0)):
        with pytest.raises(ValueError):
            make_context(*args)


def test_context_bounds_and_types() -> None:
    for game in (b"g", b"g" * 64):
        assert make_context(game, 0, "k", 0)["game"] == game
    assert make_context(GAME, 2**32 - 1, "k", 9) == {
        "game": GAME, "hand": 2**32 - 1, "step": "k", "seat": 9}
    bad = [
        (b"g" * 65, 0, "k", 0), (bytearray(b"g"), 0, "k", 0), (None, 0, "k", 0),
        (GAME, 2**32, "k", 0), (GAME, -1, "k", 0), (GAME, 1.0, "k", 0), (GAME, "1", "k", 0),
        (GAME, False, "k", 0), (GAME, 0, b"k", 0), (GAME, 0, None, 0), (GAME, 0, "k", -1),
        (GAME, 0, "k", 10), (GAME, 0, "k", True), (GAME, 0, "k", 1.0), (GAME, 0, "k", None),
    ]
    for args in bad:
        with pytest.raises(ValueError):
            make_context(*args)


def test_a_failed_proof_names_the_seat_given_else_the_context_seat() -> None:
    d = Drbg(b"u" * 32)
    x = d.scalar()
    X, H = g.base_mul(x), g.base_mul(d.scalar())
    schnorr = prove_schnorr(x, X, ctx(seat=2), d)
    dleq = prove_dleq(x, X, H, g.mul(x, H), ctx(seat=2), d)
    for blame, want in ((None, 3), (7, 7)):
        with pytest.raises(BadProof) as err:
            verify_schnorr(X, schnorr, ctx(seat=3), seat=blame)
        assert err.value.seat == want
        with pytest.raises(BadProof) as err:
            verify_dleq(X, H, g.mul(x, H), dleq, ctx(seat=3), seat=blame)
        assert err.value.seat == want


def test_the_recomputed_commitment_is_s_times_the_base_minus_e_times_the_point() -> None:
    """Whichever arithmetic runs (a multi-scalar multiplication on the compiled one)."""
    from dernier_p2p.deck.proofs import commitment

    d = Drbg(b"c" * 32)
    H = g.base_mul(d.scalar())
    for _ in range(20):
        s, e, x = d.scalar(), d.scalar(), d.scalar()
        X = g.base_mul(x)
        assert commitment(s, g.GENERATOR, e, X) == g.sub(g.base_mul(s), g.mul(e, X))
        assert commitment(s, H, e, X) == g.sub(g.mul(s, H), g.mul(e, X))
    assert commitment(0, H, 0, X) == g.IDENTITY
    assert commitment(x, g.GENERATOR, 1, X) == g.IDENTITY
