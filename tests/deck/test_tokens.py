"""Reveal tokens: dealing to one seat, opening to all, wrong tokens named, non-cards refused."""

import pytest

from dernier_p2p.deck import group as g
from dernier_p2p.deck.cards import NotACard, card_element
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.elgamal import encrypt
from dernier_p2p.deck.errors import BadElement, BadProof
from dernier_p2p.deck.proofs import make_context, prove_dleq
from dernier_p2p.deck.tokens import (
    Token,
    decrypt_card,
    make_token,
    own_token_value,
    verify_token,
)

GAME, HAND, DECK = b"game-tok", 2, "dernier-54"


def setup(n: int = 3):
    d = Drbg(b"k" * 32)
    xs = [d.scalar() for _ in range(n)]
    Y = g.base_mul(sum(xs))
    ct = encrypt(Y, card_element(DECK, 17), d.scalar())
    return d, xs, ct


def test_deal_to_one_seat_then_open() -> None:
    d, xs, ct = setup()
    # deal position 5 to seat 1: seats 0 and 2 publish tokens
    public = [make_token(GAME, HAND, j, xs[j], 5, ct, d) for j in (0, 2)]
    for t in public:
        t = Token.from_wire(t.to_wire(), seat=t.owner)
        verify_token(GAME, HAND, g.base_mul(xs[t.owner]), ct, t, 5)
    values = [t.value for t in public]
    assert decrypt_card(DECK, ct, values + [own_token_value(xs[1], ct)]) == 17
    with pytest.raises(NotACard):  # the others alone cannot finish
        decrypt_card(DECK, ct, values)
    opened = make_token(GAME, HAND, 1, xs[1], 5, ct, d)
    verify_token(GAME, HAND, g.base_mul(xs[1]), ct, opened, 5)
    assert decrypt_card(DECK, ct, values + [opened.value]) == 17


def test_wrong_token_is_blamed_on_its_maker() -> None:
    d, xs, ct = setup()
    good = make_token(GAME, HAND, 2, xs[2], 5, ct, d)
    forged = Token(2, 5, g.add(good.value, g.GENERATOR), good.proof)
    with pytest.raises(BadProof) as err:
        verify_token(GAME, HAND, g.base_mul(xs[2]), ct, forged, 5)
    assert err.value.seat == 2
    # a token made with another secret, proven with it, fails against the real share
    other = make_token(GAME, HAND, 2, xs[2] + 1, 5, ct, d)
    with pytest.raises(BadProof):
        verify_token(GAME, HAND, g.base_mul(xs[2]), ct, other, 5)
    # a valid token for another position (replay) fails
    with pytest.raises(BadProof):
        verify_token(GAME, HAND, g.base_mul(xs[2]), ct, good, 6)
    # a proof from another hand fails
    stale = make_token(GAME, HAND + 1, 2, xs[2], 5, ct, d)
    with pytest.raises(BadProof):
        verify_token(GAME, HAND, g.base_mul(xs[2]), ct, stale, 5)


def test_malformed_token_names_the_sender() -> None:
    d, xs, ct = setup()
    wire = make_token(GAME, HAND, 0, xs[0], 1, ct, d).to_wire()
    for bad in ({**wire, "token": g.IDENTITY}, {**wire, "token": b"\x02" * 31},
                {**wire, "position": -1}, {**wire, "owner": "0"}, {"token": wire["token"]}):
        with pytest.raises(BadElement) as err:
            Token.from_wire(bad, seat=0)
        assert err.value.seat == 0


def test_token_proof_made_for_another_step_or_seat_is_refused() -> None:
    d, xs, ct = setup()
    X, T = g.base_mul(xs[1]), g.mul(xs[1], ct[0])
    for ctx in (make_context(GAME, HAND, "key", 1), make_context(GAME, HAND, "token", 0)):
        proof = prove_dleq(xs[1], X, ct[0], T, ctx, d, bind=5)
        with pytest.raises(BadProof) as err:
            verify_token(GAME, HAND, X, ct, Token(1, 5, T, proof), 5)
        assert err.value.seat == 1


def test_token_from_wire_refuses_lists_booleans_and_other_types() -> None:
    d, xs, ct = setup()
    wire = make_token(GAME, HAND, 0, xs[0], 1, ct, d).to_wire()
    assert Token.from_wire(wire, seat=3).position == 1
    bad_values = [
        [wire["position"], wire["owner"], wire["token"], wire["proof"]],  # a list, not a map
        list(wire.items()),
        None,
        {**wire, "position": True},
        {**wire, "owner": True},
        {**wire, "position": False},
        {**wire, "owner": 1.0},
        {**wire, "position": None},
        {**wire, "token": None},
        {**wire, "token": "x" * 32},
        {**wire, "proof": None},
        {**wire, "proof": [wire["proof"]["e"], wire["proof"]["s"]]},
        {**wire, "extra": 1},
    ]
    for bad in bad_values:
        with pytest.raises(BadElement) as err:
            Token.from_wire(bad, seat=3)
        assert err.value.seat == 3, bad


def test_verify_token_blames_the_owner_unless_told_otherwise() -> None:
    d, xs, ct = setup()
    good = make_token(GAME, HAND, 2, xs[2], 5, ct, d)
    forged = Token(2, 5, g.add(good.value, g.GENERATOR), good.proof)
    share = g.base_mul(xs[2])
    for token, position in ((forged, 5), (good, 6)):  # a bad proof; another position
        with pytest.raises(BadProof) as err:
            verify_token(GAME, HAND, share, ct, token, position)
        assert err.value.seat == 2
        with pytest.raises(BadProof) as err:
            verify_token(GAME, HAND, share, ct, token, position, blame=0)
        assert err.value.seat == 0
    verify_token(GAME, HAND, share, ct, good, 5, blame=0)


def test_a_decryption_that_is_no_card_names_the_seat_given() -> None:
    d, xs, ct = setup()
    values = [own_token_value(x, ct) for x in xs]
    assert decrypt_card(DECK, ct, values, seat=4) == 17
    with pytest.raises(NotACard) as err:
        decrypt_card(DECK, ct, values[:2] + [g.GENERATOR], seat=4)
    assert err.value.seat == 4
