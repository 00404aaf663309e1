"""The group backend: arithmetic laws, canonical decoding and hashing to the group."""

import pytest

from dernier_p2p.deck import group as g


def test_generator_has_prime_order() -> None:
    assert g.mul(g.ORDER - 1, g.GENERATOR) == g.neg(g.GENERATOR)
    assert g.base_mul(g.ORDER) == g.IDENTITY


def test_distributive_and_inverse_laws() -> None:
    a, b = 12345678901234567890, 98765432109876543210
    assert g.add(g.base_mul(a), g.base_mul(b)) == g.base_mul(a + b)
    assert g.mul(b, g.base_mul(a)) == g.base_mul(a * b)
    assert g.sub(g.base_mul(a), g.base_mul(a)) == g.IDENTITY
    assert g.mul(0, g.GENERATOR) == g.IDENTITY
    assert g.mul(5, g.IDENTITY) == g.IDENTITY
    assert g.multi_mul([a, b], [g.GENERATOR, g.GENERATOR]) == g.base_mul(a + b)


def test_decode_accepts_valid_and_rejects_bad_elements() -> None:
    p = g.base_mul(7)
    assert g.decode(p) == p
    for bad in (g.IDENTITY, b"\xff" * 32, p[:31], b"", p + b"\x00"):
        with pytest.raises(g.InvalidElement):
            g.decode(bad)
    # a point of small order (order 2: y = -1)
    small = (g.ORDER * 0 + (2**255 - 19 - 1)).to_bytes(32, "little")
    with pytest.raises(g.InvalidElement):
        g.decode(small)
    # the generator plus a torsion point is on the curve but outside the subgroup
    with pytest.raises(g.InvalidElement):
        g.decode(g.add(p, small))


def test_scalar_decoding_is_strict() -> None:
    assert g.decode_scalar(g.encode_scalar(5)) == 5
    with pytest.raises(g.InvalidScalar):
        g.decode_scalar(g.ORDER.to_bytes(32, "little"))
    with pytest.raises(g.InvalidScalar):
        g.decode_scalar(b"\x01")


def test_hash_to_element_is_deterministic_and_separated() -> None:
    a = g.hash_to_element(b"label", b"x")
    assert a == g.hash_to_element(b"label", b"x")
    assert g.decode(a) == a
    assert a != g.hash_to_element(b"label", b"y")
    assert a != g.hash_to_element(b"labe", b"lx")


def test_mul_refuses_an_invalid_point_instead_of_returning_identity() -> None:
    small = (2**255 - 19 - 1).to_bytes(32, "little")  # order 2
    with pytest.raises(g.InvalidElement):
        g.mul(3, small)


def _double_and_add(k: int, p: bytes) -> bytes:
    """k * p the schoolbook way (k >= 0): a reference built from ``add`` alone."""
    acc = g.IDENTITY
    for bit in bin(k)[2:]:
        acc = g.add(acc, acc)
        if bit == "1":
            acc = g.add(acc, p)
    return acc


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4, 255, g.ORDER - 2, g.ORDER - 1])
def test_mul_known_answers_against_double_and_add(k: int) -> None:
    """Attacker-chosen proof responses reach ``mul``: small and edge scalars are exact."""
    for p in (g.GENERATOR, g.base_mul(0xC0FFEE), g.hash_to_element(b"kat", b"p")):
        want = _double_and_add(k, p)
        assert g.mul(k, p) == want
        assert g.mul(k + g.ORDER, p) == want  # reduced mod l
        if p == g.GENERATOR:
            assert g.base_mul(k) == want


def test_mul_edge_scalars_by_name() -> None:
    p = g.base_mul(31337)
    assert g.mul(1, p) == p
    assert g.mul(2, p) == g.add(p, p) != p
    assert g.mul(g.ORDER - 1, p) == g.neg(p)
    assert g.mul(g.ORDER, p) == g.mul(0, p) == g.IDENTITY
    assert g.mul(-1, p) == g.neg(p)
    assert g.mul(g.ORDER + 1, p) == p
    assert g.mul(2, g.IDENTITY) == g.IDENTITY


def test_multi_mul_needs_one_scalar_per_point() -> None:
    with pytest.raises(ValueError):
        g.multi_mul([1, 2], [g.GENERATOR])
    with pytest.raises(ValueError):
        g.multi_mul([1], [g.GENERATOR, g.GENERATOR])
    assert g.multi_mul([], []) == g.IDENTITY


def test_hash_to_element_labels_up_to_255_bytes() -> None:
    longest = g.hash_to_element(b"l" * 255, b"x")
    assert g.decode(longest) == longest != g.hash_to_element(b"l" * 254, b"x")
    with pytest.raises(ValueError):
        g.hash_to_element(b"l" * 256, b"x")
