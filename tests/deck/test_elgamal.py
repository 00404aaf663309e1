"""ElGamal: encryption and re-masking decrypt to the card; a received ciphertext is checked."""

import pytest

from dernier_p2p.deck import group as g
from dernier_p2p.deck.elgamal import decode_ciphertext, encrypt, reencrypt
from dernier_p2p.deck.errors import BadElement

X = 0x1234567890ABCDEF1234567890ABCDEF  # the joint secret key
PK = g.base_mul(X)
M = g.base_mul(42)  # a card's element


def decrypt(ct) -> bytes:
    return g.sub(ct[1], g.mul(X, ct[0]))


def test_encrypt_is_r_g_and_m_plus_r_y() -> None:
    assert encrypt(PK, M, 0) == (g.IDENTITY, M)
    assert encrypt(PK, M, 1) == (g.GENERATOR, g.add(M, PK))
    r = 987654321987654321
    ct = encrypt(PK, M, r)
    assert ct[0] == g.base_mul(r) and decrypt(ct) == M
    assert ct[1] == g.base_mul(42 + X * r)


def test_reencrypt_adds_an_encryption_of_the_identity() -> None:
    r, s = 1111, 2222
    ct = reencrypt(PK, encrypt(PK, M, r), s)
    assert ct == encrypt(PK, M, r + s)
    assert decrypt(ct) == M
    assert reencrypt(PK, (g.IDENTITY, M), 1) == (g.GENERATOR, g.add(M, PK))


def test_a_received_ciphertext_is_a_pair_of_group_elements() -> None:
    a, b = g.base_mul(5), g.base_mul(6)
    assert decode_ciphertext([a, b], 3) == (a, b)
    got = decode_ciphertext((bytearray(a), bytearray(b)))
    assert got == (a, b) and all(type(x) is bytes for x in got)
    bad = [
        None, 7, a + b, "ab", {"c1": a, "c2": b}, {0: a, 1: b}, [a], [a, b, a], [],
        [a, b[:31]], [a[:31], b], [g.IDENTITY, b], [a, g.IDENTITY], [a, None], [7, b],
        [a, b"\xff" * 32],
    ]
    for obj in bad:
        for seat in (None, 0, 4):
            with pytest.raises(BadElement) as err:
                decode_ciphertext(obj, seat)
            assert err.value.seat == seat, obj


def test_a_received_deck_is_decoded_in_one_batch_with_the_first_error_of_one_by_one() -> None:
    from dernier_p2p.deck.elgamal import decode_ciphertexts

    cts = [(g.base_mul(k), g.base_mul(k + 100)) for k in range(1, 6)]
    assert decode_ciphertexts([list(ct) for ct in cts], 2) == cts
    torsion = b"\x00" * 32  # a point of order 4
    spoilers = [None, [cts[0][0]], [cts[0][0], torsion], [g.IDENTITY, cts[0][1]],
                [cts[0][0], b"\xff" * 32], [cts[0][0], 7]]
    for i, first in enumerate(spoilers):
        for j, second in enumerate(spoilers):
            deck = [list(ct) for ct in cts]
            deck[1], deck[3] = first, second
            with pytest.raises(BadElement) as one:
                for obj in deck:
                    decode_ciphertext(obj, 4)
            with pytest.raises(BadElement) as many:
                decode_ciphertexts(deck, 4)
            assert str(many.value) == str(one.value) and many.value.seat == 4, (i, j)
