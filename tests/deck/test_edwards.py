"""The compiled arithmetic on public elements agrees with libsodium: random cases of every kind,
RFC 8032's points, the edge cases; DERNIER_PURE_GROUP=1 runs the deck on PyNaCl alone."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys

import pytest
from nacl import bindings as na

from dernier_p2p.deck import agreement, edwards
from dernier_p2p.deck import group as g

needs_compiled = pytest.mark.skipif(not edwards.AVAILABLE, reason=edwards.PATH)

# RFC 8032, 7.1: TEST 1, 2 and 3 (secret key, public key)
RFC8032 = [
    ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"),
    ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"),
    ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025"),
]
RFC8032_BASE = "5866666666666666666666666666666666666666666666666666666666666666"


@needs_compiled
def test_ten_thousand_random_cases_of_every_kind_agree_with_libsodium() -> None:
    counts = agreement.agree(10_000, seed=2026)
    assert sum(counts.values()) == 10_000 and counts["mismatch"] == 0
    assert all(counts[kind] > 0 for kind in agreement.KINDS)


@needs_compiled
@pytest.mark.parametrize(("secret", "public"), RFC8032)
def test_rfc8032_public_keys(secret: str, public: str) -> None:
    """The public key is the clamped secret scalar times the base point (a scalar above l, which
    the multiplication reduces); both decoders accept it."""
    h = bytearray(hashlib.sha512(bytes.fromhex(secret)).digest()[:32])
    h[0] &= 248
    h[31] &= 127
    h[31] |= 64
    a = int.from_bytes(h, "little")
    assert a >= g.ORDER
    A = bytes.fromhex(public)
    assert bytes.fromhex(RFC8032_BASE) == g.GENERATOR
    assert edwards.msm([a], [g.GENERATOR]) == A
    assert edwards._ext.decode(A)[0] == -1 and na.crypto_core_ed25519_is_valid_point(A)
    assert g.decode_many([A, g.GENERATOR]) == (A, g.GENERATOR)


@needs_compiled
def test_every_edge_encoding_is_decided_as_libsodium_and_the_reference_decide() -> None:
    edges = agreement.edge_encodings()
    assert len(edges) > 130
    for s in edges:
        theirs = na.crypto_core_ed25519_is_valid_point(s)
        assert (edwards._ext.decode(s)[0] == -1) == theirs == agreement.ref_valid(s), s.hex()
    # none of the torsion points, nor any non-canonical y, is an element
    assert not any(edwards._ext.decode(t)[0] == -1 for t in agreement.torsion_points())


@needs_compiled
def test_the_subgroup_test_by_halving_decides_as_l_times_p_and_libsodium() -> None:
    """10,000 cases: random elements (all accepted), random elements plus each torsion point
    other than the identity, the torsion points alone, the identity, non-canonical encodings
    (all refused); the test by halving, ``l*P = O`` and libsodium agree on each."""
    counts, accepted = agreement.subgroup_agree(10_000, seed=27)
    assert counts["mismatch"] == 0 and sum(counts.values()) == 10_000
    assert all(counts[kind] > 0 for kind in agreement.SUBGROUP_KINDS)
    assert accepted["element"] == counts["element"]
    assert all(accepted[kind] == 0 for kind in agreement.SUBGROUP_KINDS if kind != "element")


@needs_compiled
def test_no_torsion_component_passes_the_test_by_halving() -> None:
    """A fixed element plus each of the 8 torsion points: only the element itself passes, alone
    and in a batch, and the two tests give the same coordinates."""
    element = g.base_mul(271828)
    p = agreement.ref_decompress(element)
    shifted = [agreement.ref_compress(agreement.ref_add(p, t))
               for t in (agreement.ref_decompress(t) for t in agreement.torsion_points())]
    assert shifted[0] == element
    for k, s in enumerate(shifted):
        assert (edwards._ext.decode(s)[0] == -1) == (k == 0), k
        assert (edwards._ext.decode(s, True)[0] == -1) == (k == 0), k
        assert edwards._ext.decode(element + s + element)[0] == (-1 if k == 0 else 1), k
    good = b"".join(g.base_mul(k + 1) for k in range(20))
    assert edwards._ext.decode(good) == edwards._ext.decode(good, True)
    assert edwards._ext.decode(good)[0] == -1


def test_the_constants_of_the_test_by_halving() -> None:
    """S has order 4 on the isogenous curve with 2S = (A + 2, 0), and the pairing with S is 1 on
    the kernel of the dual isogeny (what makes its kernel exactly the preimage of 8E); the
    Python reference of the test decides as the multiplication by l on a few points."""
    P = agreement.P
    a = agreement.MONT_A
    assert agreement.ref_sqrt(a * a - 4) is None  # one rational point of order 2: E is cyclic
    c0, xs, ys, lams = agreement.halving_constants()
    assert c0 * c0 % P == (-(a + 2)) % P
    assert (ys * ys - xs * (xs - a - 2) * (xs - a + 2)) % P == 0 and ys != 0
    assert (lams * lams + 2 * a - 2 * xs) % P == a + 2  # x(2S) = lambda^2 - a2 - 2 x(S)
    assert agreement.tate4_of_kernel() == 1
    p = agreement.ref_decompress(g.base_mul(314159))
    for k, t in enumerate(agreement.torsion_points()):
        q = agreement.ref_add(p, agreement.ref_decompress(t))
        assert agreement.ref_halvable3(q) == (k == 0) == (agreement.ref_mul(agreement.L, q)
                                                           == (0, 1)), k


@needs_compiled
def test_the_batch_decoder_names_the_first_refused_element() -> None:
    good = [g.base_mul(k) for k in range(1, 6)]
    torsion = agreement.torsion_points()[3]
    for at in range(5):
        encs = list(good)
        encs[at] = torsion
        edwards.clear_cache()
        assert edwards.check(encs) == at
        assert edwards._ext.decode(b"".join(encs))[0] == at
    edwards.clear_cache()
    assert edwards.check(good) == -1
    assert edwards.check(good + [g.IDENTITY]) == 5  # the identity is refused even when cached
    assert edwards.check(good) == -1  # now from the cache


@needs_compiled
def test_scalars_are_reduced_as_libsodium_multiplication_reduces_them() -> None:
    P = g.base_mul(987654321)
    for k in (0, 1, g.ORDER - 1, g.ORDER, g.ORDER + 1, 2**255 + 7, 2**256 - 1, 2**300, -1,
              -g.ORDER):
        assert g.public_multi_mul([k], [P]) == g.mul(k, P), k


@needs_compiled
def test_straus_and_pippenger_agree_at_every_size_around_the_switch() -> None:
    points = [g.base_mul(3 * k + 1) for k in range(200)]
    scalars = [int.from_bytes(hashlib.sha256(bytes([k])).digest(), "little") for k in range(200)]
    for n in (1, 2, 3, 64, 189, 190, 191, 200):
        straus = edwards.msm(scalars[:n], points[:n], 1)
        assert straus == edwards.msm(scalars[:n], points[:n], 2)
        assert straus == edwards.msm(scalars[:n], points[:n])
    assert straus == g.multi_mul(scalars, points)


@needs_compiled
def test_a_full_cache_starting_afresh_never_loses_a_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache may start afresh in the middle of a multiplication's decoding: every point
    still enters with its own coordinates."""
    monkeypatch.setattr(edwards, "CACHE_LIMIT", 3)
    edwards.clear_cache()
    points = [g.base_mul(11 * k + 5) for k in range(10)]
    scalars = list(range(1, 11))
    assert edwards.msm(scalars, points) == g.multi_mul(scalars, points)
    assert edwards.msm(scalars, points, 2) == g.multi_mul(scalars, points)
    assert g.decode_many(points) == tuple(points)


@needs_compiled
def test_fixed_base_tables_serve_the_generator_and_points_used_often() -> None:
    """``s*G - e*X``: the generator has a table at once, X at its third use; the sums are
    libsodium's whichever way they are computed."""
    edwards.clear_cache()
    X = g.base_mul(4242)
    for i in range(5):
        s, e = 10**70 + i, g.ORDER - 3 - i
        assert edwards.msm([s, g.ORDER - e], [g.GENERATOR, X]) == g.sub(g.base_mul(s), g.mul(e, X))
        assert (X in edwards._tables) == (i >= edwards.TABLE_AFTER - 1)
    assert g.GENERATOR in edwards._tables
    for k in (0, 1, 2, 7, g.ORDER - 1, g.ORDER + 5, 2**255, -9):
        assert edwards.msm([k], [g.GENERATOR], 3) == g.base_mul(k)
        assert edwards.msm([k, 3], [X, g.GENERATOR], 3) == g.add(g.mul(k, X), g.base_mul(3))


def test_public_multi_mul_and_decode_many_match_the_one_at_a_time_functions() -> None:
    points = [g.base_mul(k + 2) for k in range(6)] + [g.IDENTITY]
    scalars = [5, g.ORDER - 3, 0, 2**200, 1, g.ORDER + 9, 4]
    assert g.public_multi_mul(scalars, points) == g.multi_mul(scalars, points)
    assert g.decode_many(points[:6]) == tuple(points[:6])
    torsion = agreement.torsion_points()[1]
    cases = [
        [points[0], torsion, b"short"],
        [points[0], b"short", torsion],
        [points[1], g.IDENTITY],
        [points[2], bytes(32) + b"x"],
        [points[2], "text"],
    ]
    for items in cases:
        with pytest.raises(g.InvalidElement) as many:
            g.decode_many(items)
        with pytest.raises(g.InvalidElement) as one:
            for x in items:
                g.decode(x)
        assert str(many.value) == str(one.value)


def test_invalid_points_in_a_public_multi_mul_are_invalid_elements() -> None:
    with pytest.raises(g.InvalidElement):
        g.public_multi_mul([3, 4], [g.GENERATOR, agreement.torsion_points()[2]])


def _version(env: dict) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "dernier_p2p", "--version"], env={**os.environ, **env},
        capture_output=True, text=True, timeout=120, check=True,
    )
    return out.stdout


def test_dernier_version_names_the_group_arithmetic_and_the_switch_turns_it_off() -> None:
    pure = _version({edwards.PURE_ENV: "1"})
    assert pure.rstrip().endswith("group arithmetic PyNaCl (DERNIER_PURE_GROUP set)")
    default = _version({edwards.PURE_ENV: "0"})
    assert "DERNIER_PURE_GROUP" not in default
    if importlib.util.find_spec("dernier_p2p.deck._edwards") is not None:
        assert default.rstrip().endswith(
            "group arithmetic compiled (public values; secrets on libsodium)")
    code = ("from dernier_p2p.deck import group as g, shuffle as s; "
            "print(g.FAST, g.PATH)")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, edwards.PURE_ENV: "1"},
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.startswith("False PyNaCl")


def test_without_the_compiled_module_the_deck_runs_on_pynacl() -> None:
    """An install that did not build the extension (no compiler, no DERNIER_COMPILE)."""
    code = ("import sys; sys.modules['dernier_p2p.deck._edwards'] = None; "
            "from dernier_p2p.deck import group as g, shuffle as s; "
            "from dernier_p2p.deck.drbg import Drbg; "
            "ctx = {'game': b'g', 'hand': 1, 'step': 'shuffle', 'seat': 0}; "
            "deck = [(g.IDENTITY, g.base_mul(k + 1)) for k in range(3)]; "
            "out, proof = s.shuffle(g.GENERATOR, deck, Drbg(bytes(32)), ctx); "
            "s.verify_shuffle(g.GENERATOR, deck, out, proof, ctx); print(g.FAST, g.PATH)")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, edwards.PURE_ENV: ""},
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "False PyNaCl (the compiled group arithmetic is not built)"
