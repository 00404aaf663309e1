"""The verifiable shuffle: honest shuffles verify; every cheat and malformed proof is caught."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nacl import bindings as na

from dernier_p2p.deck import group as g
from dernier_p2p.deck import shuffle as sh
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.elgamal import encrypt, reencrypt
from dernier_p2p.deck.errors import BadElement, BadProof
from dernier_p2p.deck.shuffle import ShuffleProof, shuffle, shuffle_op_count, verify_shuffle
from dernier_p2p.wire import canonical

CTX = {"game": b"\x07" * 16, "hand": 3, "step": "shuffle", "seat": 2}
SECRET = 0x1234567890ABCDEF1234567890ABCDEF1234567890ABCDEF
PK = g.base_mul(SECRET)


def seed(tag: str) -> bytes:
    return hashlib.sha256(tag.encode()).digest()


def card(k: int) -> bytes:
    return g.hash_to_element(b"dernier-p2p/test/card", k.to_bytes(2, "little"))


def fresh_deck(n: int) -> list[tuple[bytes, bytes]]:
    """The very first deck: each card in the clear, (O, M_k)."""
    return [(g.IDENTITY, card(k)) for k in range(n)]


def masked_deck(n: int) -> list[tuple[bytes, bytes]]:
    d = Drbg(seed(f"masked-{n}"))
    return [encrypt(PK, card(k), d.scalar()) for k in range(n)]


def decrypt(ct: tuple[bytes, bytes]) -> bytes:
    return g.sub(ct[1], g.mul(SECRET, ct[0]))


def honest(n: int, tag: str = "honest", ctx: dict = CTX):
    deck = masked_deck(n)
    out, proof = shuffle(PK, deck, Drbg(seed(f"{tag}-{n}")), ctx)
    return deck, out, proof


def cheat_prove(deck, out, tag: str, ctx: dict = CTX) -> ShuffleProof:
    """Run the honest prover's equations over a doctored output deck, claiming the permutation
    and re-masking scalars the honest shuffle would have used."""
    d = Drbg(seed(tag))
    psi = d.permutation(len(deck))
    rho = [d.scalar() for _ in deck]
    return sh._prove(PK, deck, out, psi, rho, d, ctx)


def expect_bad_proof(deck, out, proof, ctx=CTX, pk=PK) -> None:
    """Refused with the same error whether checked one equation at a time or in a batch first,
    and the batch check alone refuses it too (when the shapes pass)."""
    errors = []
    for batch in (False, True):
        with pytest.raises(BadProof) as info:
            verify_shuffle(pk, deck, out, proof, ctx, seat=5, batch=batch)
        assert info.value.seat == 5
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    try:
        sh._check_shapes(deck, out, proof, 5)
    except BadProof:
        return
    assert not sh.batch_holds(pk, deck, out, proof, ctx)


@pytest.mark.parametrize("n", [1, 2, 10, 54, 108])
def test_honest_shuffles_verify_and_keep_the_cards(n: int) -> None:
    deck = fresh_deck(n)
    out1, proof1 = shuffle(PK, deck, Drbg(seed(f"first-{n}")), CTX)
    verify_shuffle(PK, deck, out1, proof1, CTX)
    out2, proof2 = shuffle(PK, out1, Drbg(seed(f"second-{n}")), CTX)
    verify_shuffle(PK, out1, out2, proof2, CTX)
    faces = Counter(m for _, m in deck)
    assert Counter(map(decrypt, out1)) == faces
    assert Counter(map(decrypt, out2)) == faces
    for ct in out1 + out2:
        assert g.IDENTITY not in ct
    # every card is re-masked: no output ciphertext equals an input one
    assert not set(out1) & set(deck)
    assert not set(out2) & set(out1)


def test_empty_deck_is_refused() -> None:
    with pytest.raises(ValueError):
        shuffle(PK, [], Drbg(seed("empty")), CTX)
    with pytest.raises(BadProof):
        verify_shuffle(PK, [], [], honest(1, "empty")[2], CTX)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(min_value=1, max_value=6), tag=st.binary(min_size=1, max_size=8))
def test_any_seed_and_size_verifies(n: int, tag: bytes) -> None:
    deck = masked_deck(n)
    out, proof = shuffle(PK, deck, Drbg(hashlib.sha256(tag).digest()), CTX)
    verify_shuffle(PK, deck, out, ShuffleProof.from_wire(proof.to_wire(), n), CTX)
    assert Counter(map(decrypt, out)) == Counter(map(decrypt, deck))


def test_large_shuffle_permutes() -> None:
    deck = fresh_deck(54)
    out, _ = shuffle(PK, deck, Drbg(seed("permutes")), CTX)
    order = [decrypt(ct) for ct in out]
    assert order != [m for _, m in deck]
    # and two seeds give two different orders
    out2, _ = shuffle(PK, deck, Drbg(seed("permutes-2")), CTX)
    assert [decrypt(ct) for ct in out2] != order


def test_wire_round_trip() -> None:
    deck, out, proof = honest(6)
    wire = canonical.decode(canonical.encode(proof.to_wire()))
    again = ShuffleProof.from_wire(wire, 6, seat=1)
    assert again == proof
    verify_shuffle(PK, deck, out, again, CTX)


def test_known_answer() -> None:
    """A 4-card shuffle from a fixed seed gives byte-identical output (an interop vector)."""
    deck = fresh_deck(4)
    out, proof = shuffle(PK, deck, Drbg(b"\x00" * 32), CTX)
    out_b, proof_b = shuffle(PK, deck, Drbg(b"\x00" * 32), CTX)
    assert (out, proof) == (out_b, proof_b)
    verify_shuffle(PK, deck, out, proof, CTX)
    deck_digest = hashlib.sha256(canonical.encode([list(ct) for ct in out])).hexdigest()
    proof_digest = hashlib.sha256(canonical.encode(proof.to_wire())).hexdigest()
    assert deck_digest == "f07478b6c512a83707b97bff9cf3159e2f6c2e45a5555272171f83a7da5be7ae"
    assert proof_digest == "6ac96ecd4628b86245a0d3a96882a001315298b33a044bede975d8845917e0ae"


def test_duplicated_card_is_rejected() -> None:
    deck, out, proof = honest(8, "dup")
    # the shuffler drops output card 3 and puts a re-encryption of output card 5 in its place
    doctored = list(out)
    doctored[3] = reencrypt(PK, out[5], 12345)
    expect_bad_proof(deck, doctored, proof)
    expect_bad_proof(deck, doctored, cheat_prove(deck, doctored, "dup-8"))
    assert Counter(map(decrypt, doctored)) != Counter(m for m in map(decrypt, deck))


def test_substituted_card_is_rejected() -> None:
    deck, out, proof = honest(8, "sub")
    doctored = list(out)
    doctored[0] = encrypt(PK, card(99), 777)
    expect_bad_proof(deck, doctored, proof)
    expect_bad_proof(deck, doctored, cheat_prove(deck, doctored, "sub-8"))


def test_changed_mask_half_is_rejected() -> None:
    """Only c1 of one card changes (it would decrypt to another face); the proof is re-made."""
    deck, out, proof = honest(6, "mask")
    doctored = list(out)
    doctored[2] = (g.add(out[2][0], g.GENERATOR), out[2][1])
    expect_bad_proof(deck, doctored, proof)
    expect_bad_proof(deck, doctored, cheat_prove(deck, doctored, "mask-6"))


def test_unmasked_output_card_is_rejected() -> None:
    """A first-deck card 're-masked' with zero stays in the clear: the proof holds, yet the output
    deck holds the identity and is refused."""
    deck = fresh_deck(4)
    d = Drbg(seed("zero"))
    psi = d.permutation(4)
    rho = [0] + [d.scalar() for _ in range(3)]
    out = [reencrypt(PK, deck[j], rho[j]) for j in psi]
    proof = sh._prove(PK, deck, out, psi, rho, d, CTX)
    assert (g.IDENTITY, card(0)) in out
    expect_bad_proof(deck, out, proof)


def test_reorder_after_proving_is_rejected() -> None:
    deck, out, proof = honest(8, "reorder")
    doctored = list(out)
    doctored[1], doctored[6] = doctored[6], doctored[1]
    expect_bad_proof(deck, doctored, proof)


def test_tampered_input_deck_is_rejected() -> None:
    deck, out, proof = honest(5, "input")
    doctored = list(deck)
    doctored[2] = reencrypt(PK, deck[2], 5)
    expect_bad_proof(doctored, out, proof)


@pytest.mark.parametrize(
    "change", [{"game": b"\x08" * 16}, {"hand": 4}, {"step": "reshuffle"}, {"seat": 3}]
)
def test_replay_in_another_context_is_rejected(change: dict) -> None:
    deck, out, proof = honest(5, "replay")
    verify_shuffle(PK, deck, out, proof, CTX)
    expect_bad_proof(deck, out, proof, ctx={**CTX, **change})


def test_other_public_key_is_rejected() -> None:
    deck, out, proof = honest(5, "pk")
    expect_bad_proof(deck, out, proof, pk=g.base_mul(SECRET + 1))


def test_every_tampered_proof_component_is_rejected() -> None:
    deck, out, proof = honest(3, "tamper")
    verify_shuffle(PK, deck, out, proof, CTX)
    other = g.base_mul(424242)
    cases = 0
    for field in ("t", "t_hat", "c", "c_hat"):
        values = getattr(proof, field)
        for i in range(len(values)):
            bad = list(values)
            bad[i] = other
            expect_bad_proof(deck, out, _replace(proof, field, tuple(bad)))
            cases += 1
    for field in ("s", "s_hat", "s_prime"):
        values = getattr(proof, field)
        for i in range(len(values)):
            bad = list(values)
            bad[i] = (bad[i] + 1) % g.ORDER
            expect_bad_proof(deck, out, _replace(proof, field, tuple(bad)))
            cases += 1
    assert cases == 5 + 4 + 5 * 3


def _replace(proof: ShuffleProof, field: str, value: tuple) -> ShuffleProof:
    fields = {k: getattr(proof, k) for k in proof.__dataclass_fields__}
    fields[field] = value
    return ShuffleProof(**fields)


@pytest.mark.parametrize("n", [1, 2, 54])
def test_the_batch_check_holds_for_honest_shuffles(n: int) -> None:
    deck, out, proof = honest(n, "batch")
    assert sh.batch_holds(PK, deck, out, proof, CTX)
    verify_shuffle(PK, deck, out, proof, CTX, batch=True)
    first = fresh_deck(n)  # input c1 the identity
    out, proof = shuffle(PK, first, Drbg(seed(f"batch-first-{n}")), CTX)
    assert sh.batch_holds(PK, first, out, proof, CTX)


def test_a_torsion_point_slipped_past_decoding_is_an_invalid_element_either_way() -> None:
    """verify_shuffle takes validated elements; handed a point with a torsion component anyway,
    both ways refuse it with the same error."""
    deck, out, proof = honest(3, "torsion")
    shifted = na.crypto_core_ed25519_add(proof.c[1], b"\x00" * 32)  # plus a point of order 4
    assert not na.crypto_core_ed25519_is_valid_point(shifted)
    bad = _replace(proof, "c", (proof.c[0], shifted, proof.c[2]))
    messages = []
    for batch in (False, True):
        with pytest.raises(g.InvalidElement) as info:
            verify_shuffle(PK, deck, out, bad, CTX, seat=1, batch=batch)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_size_mismatches_are_rejected() -> None:
    deck, out, proof = honest(4, "size")
    expect_bad_proof(deck, out[:3], proof)
    expect_bad_proof(deck[:3], out[:3], proof)
    deck5, out5, _ = honest(5, "size")
    expect_bad_proof(deck5, out5, proof)


def test_bad_context_is_a_value_error() -> None:
    deck, out, proof = honest(2, "ctx")
    for bad in (
        {**CTX, "seat": True},
        {**CTX, "hand": -1},
        {**CTX, "game": "text"},
        {"game": b"x", "hand": 1, "step": "s"},
        {**CTX, "x": 1},
        None,
    ):
        with pytest.raises(ValueError):
            verify_shuffle(PK, deck, out, proof, bad)
        with pytest.raises(ValueError):
            shuffle(PK, deck, Drbg(seed("ctx")), bad)


# --- from_wire -----------------------------------------------------------------------------

N = 3
_P = g.base_mul(99)
NON_CANONICAL = [
    b"\xff" * 32,  # y above the field prime
    (2**255 - 19).to_bytes(32, "little"),  # y = p, a non-reduced 0
    b"\x01" + b"\x00" * 30 + b"\x80",  # the identity with the sign bit set
]
OUTSIDE_SUBGROUP = [
    g.IDENTITY,
    b"\x00" * 32,  # a point of order 4
    na.crypto_core_ed25519_add(_P, b"\x00" * 32),  # a point with a torsion component
    _P[:31],
    _P + b"\x00",
]
BAD_SCALARS = [
    g.ORDER.to_bytes(32, "little"),
    (2**256 - 1).to_bytes(32, "little"),
    b"\x01" * 31,
    b"\x01" * 33,
]


@pytest.fixture(scope="module")
def wire() -> dict:
    _, _, proof = honest(N, "wire")
    return proof.to_wire()


def _bad_from_wire(obj: object, n: int = N) -> None:
    with pytest.raises(BadElement) as info:
        ShuffleProof.from_wire(obj, n, seat=4)
    assert info.value.seat == 4
    assert "seat 4" in str(info.value)


def test_from_wire_rejects_wrong_lengths(wire: dict) -> None:
    _bad_from_wire(wire, n=N + 1)
    _bad_from_wire(wire, n=N - 1)
    _bad_from_wire({k: [] for k in wire}, n=0)
    for key, value in wire.items():
        _bad_from_wire({**wire, key: value[:-1]})
        _bad_from_wire({**wire, key: value + value[:1]})


def test_from_wire_rejects_bad_elements(wire: dict) -> None:
    for key in ("c", "c_hat", "t", "t_hat"):
        for bad in NON_CANONICAL + OUTSIDE_SUBGROUP:
            value = list(wire[key])
            value[-1] = bad
            _bad_from_wire({**wire, key: value})


def test_from_wire_rejects_bad_scalars(wire: dict) -> None:
    for key in ("s", "s_hat", "s_prime"):
        for bad in BAD_SCALARS:
            value = list(wire[key])
            value[0] = bad
            _bad_from_wire({**wire, key: value})


def test_from_wire_rejects_wrong_types(wire: dict) -> None:
    for obj in (None, [], b"", list(wire.values())):
        _bad_from_wire(obj)
    extra = {**wire, "x": []}
    missing = {k: v for k, v in wire.items() if k != "t"}
    _bad_from_wire(extra)
    _bad_from_wire(missing)
    for key in wire:
        _bad_from_wire({**wire, key: b"".join(wire[key])})
        _bad_from_wire({**wire, key: tuple(wire[key])})
        value = list(wire[key])
        value[0] = 1
        _bad_from_wire({**wire, key: value})
        value[0] = "x" * 32
        _bad_from_wire({**wire, key: value})


# --- operation counts ------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 3, 7])
def test_op_count_is_exact(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    deck = masked_deck(n)
    sh.generators(n)  # generators are computed once per deck size and cached
    counts: Counter[str] = Counter()

    def counting(name: str, fn):
        def wrapper(*args):
            counts[name] += 1
            return fn(*args)

        return wrapper

    for name in ("base_mul", "mul", "add", "sub", "neg", "multi_mul", "sum_elements",
                 "public_multi_mul"):
        monkeypatch.setattr(g, name, counting(name, getattr(g, name)))
    out, proof = shuffle(PK, deck, Drbg(seed("count")), CTX)
    prove_counts = dict(counts)
    counts.clear()
    verify_shuffle(PK, deck, out, proof, CTX, batch=False)
    verify_counts = dict(counts)
    expected = shuffle_op_count(n)
    assert prove_counts == {
        "base_mul": expected["shuffle_base_mul"],
        "mul": expected["shuffle_mul"],
        "add": expected["shuffle_add"],
    }
    assert verify_counts == {
        "base_mul": expected["verify_base_mul"],
        "mul": expected["verify_mul"],
        "add": expected["verify_add"],
    }


def test_malformed_proof_objects_are_bad_proofs_when_called_directly() -> None:
    """verify_shuffle is also called with proofs built in memory: any shape that is not a proof
    for N cards is BadProof naming the seat, never an IndexError or ValueError."""
    deck, out, proof = honest(3, "direct")
    empty = ShuffleProof((), (), (), (), (), (), ())
    expect_bad_proof(deck, out, empty)
    for field, n in (("t", 5), ("t_hat", 3), ("s", 4), ("s_hat", 3), ("s_prime", 3),
                     ("c", 3), ("c_hat", 3)):
        values = getattr(proof, field)
        expect_bad_proof(deck, out, _replace(proof, field, values[: n - 1]))
        expect_bad_proof(deck, out, _replace(proof, field, values + values[:1]))
        expect_bad_proof(deck, out, _replace(proof, field, ()))
    for not_a_proof in (None, proof.to_wire(), (proof.t, proof.s)):
        expect_bad_proof(deck, out, not_a_proof)


@pytest.mark.parametrize("key", ["hand", "seat"])
def test_context_integers_span_zero_to_two_to_the_64(key: str) -> None:
    for ok in (0, 2**64 - 1):
        ctx = {**CTX, key: ok}
        deck, out, proof = honest(2, f"range-{key}-{ok}", ctx)
        verify_shuffle(PK, deck, out, proof, ctx)
        expect_bad_proof(deck, out, proof, ctx={**CTX, key: ok ^ 1})  # bound to the context
    deck, out, proof = honest(2, "range")
    for bad in (-1, 2**64, 2**70):
        with pytest.raises(ValueError):
            verify_shuffle(PK, deck, out, proof, {**CTX, key: bad})
        with pytest.raises(ValueError):
            shuffle(PK, deck, Drbg(seed("range")), {**CTX, key: bad})
