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
