"""Identity keys: signatures over labelled canonical values, public-key checks, key files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from dernier_p2p.wire import identity
from dernier_p2p.wire.canonical import EncodingError, encode
from dernier_p2p.wire.identity import (
    BadPublicKey,
    BadSignature,
    IdentityKey,
    KeyFileError,
    Verified,
    check_public_key,
    verify,
)

LABEL = "dernier-p2p/test/message"
VALUE = {"seat": 2, "move": ["play", 17], "prev": b"\x01" * 32}
ORDER = 2**252 + 27742317777372353535851937790883648493  # Ed25519 group order L

# RFC 8032 section 7.1, TEST 1: private seed and its public key.
RFC_SEED = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
RFC_PUBLIC = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")


def key(n: int) -> IdentityKey:
    return IdentityKey.generate(bytes([n]) * 32)


def test_round_trip() -> None:
    k = key(1)
    sig = k.sign(LABEL, VALUE)
    assert len(sig) == 64
    verify(k.public_bytes(), LABEL, VALUE, sig)


def test_signature_is_ed25519_over_canonical_label_and_value() -> None:
    k = IdentityKey.generate(RFC_SEED)
    assert k.public_bytes() == RFC_PUBLIC
    assert k.seed() == RFC_SEED
    sig = k.sign(LABEL, VALUE)
    Ed25519PublicKey.from_public_bytes(RFC_PUBLIC).verify(sig, encode([LABEL, VALUE]))


def test_deterministic_from_seed() -> None:
    assert key(7).public_bytes() == key(7).public_bytes()
    assert key(7).sign(LABEL, VALUE) == key(7).sign(LABEL, VALUE)
    assert key(7).public_bytes() != key(8).public_bytes()


def test_map_order_does_not_matter() -> None:
    k = key(1)
    sig = k.sign(LABEL, {"a": 1, "b": 2})
    verify(k.public_bytes(), LABEL, {"b": 2, "a": 1}, sig)


@pytest.mark.parametrize(
    "label, value",
    [
        ("dernier-p2p/test/other", VALUE),
        (LABEL, {**VALUE, "seat": 3}),
        (LABEL, [LABEL, VALUE]),
        (LABEL, None),
    ],
)
def test_wrong_label_or_value_rejected(label: str, value: object) -> None:
    k = key(1)
    sig = k.sign(LABEL, VALUE)
    with pytest.raises(BadSignature):
        verify(k.public_bytes(), label, value, sig)


def test_wrong_key_rejected() -> None:
    sig = key(1).sign(LABEL, VALUE)
    with pytest.raises(BadSignature):
        verify(key(2).public_bytes(), LABEL, VALUE, sig)


@pytest.mark.parametrize("position", [0, 31, 32, 63])
def test_flipped_signature_bit_rejected(position: int) -> None:
    k = key(1)
    sig = bytearray(k.sign(LABEL, VALUE))
    sig[position] ^= 0x04
    with pytest.raises(BadSignature):
        verify(k.public_bytes(), LABEL, VALUE, bytes(sig))


def test_malleated_s_rejected() -> None:
    k = key(1)
    sig = k.sign(LABEL, VALUE)
    s = int.from_bytes(sig[32:], "little") + ORDER
    assert s < 2**256
    with pytest.raises(BadSignature):
        verify(k.public_bytes(), LABEL, VALUE, sig[:32] + s.to_bytes(32, "little"))


@pytest.mark.parametrize("size", [0, 31, 33, 64])
def test_bad_public_key_length(size: int) -> None:
    sig = key(1).sign(LABEL, VALUE)
    with pytest.raises(BadPublicKey):
        verify(bytes(size), LABEL, VALUE, sig)


@pytest.mark.parametrize("size", [0, 63, 65, 128])
def test_bad_signature_length(size: int) -> None:
    k = key(1)
    with pytest.raises(BadSignature):
        verify(k.public_bytes(), LABEL, VALUE, bytes(size))


def test_non_bytes_rejected() -> None:
    k = key(1)
    sig = k.sign(LABEL, VALUE)
    with pytest.raises(BadSignature):
        verify(k.public_bytes().hex(), LABEL, VALUE, sig)  # type: ignore[arg-type]
    with pytest.raises(BadSignature):
        verify(k.public_bytes(), LABEL, VALUE, bytearray(sig))  # type: ignore[arg-type]


def test_small_order_public_key_rejected() -> None:
    neutral = bytes([1]) + bytes(31)
    # R = neutral, S = 0 verifies for every message under the neutral key in plain Ed25519 ...
    forged = neutral + bytes(32)
    Ed25519PublicKey.from_public_bytes(neutral).verify(forged, encode([LABEL, VALUE]))
    # ... so such a key is refused.
    with pytest.raises(BadPublicKey):
        verify(neutral, LABEL, VALUE, forged)


@pytest.mark.parametrize(
    "public",
    [
        bytes(32),  # y = 0: a point of order 4
        (2**255 - 20).to_bytes(32, "little"),  # y = -1: order 2
        b"\xff" * 32,  # y >= p: not canonical
        bytes([2]) + bytes(31),  # y = 2: not on the curve
    ],
)
def test_check_public_key_refuses(public: bytes) -> None:
    with pytest.raises(BadPublicKey):
        check_public_key(public)


def test_check_public_key_accepts_generated() -> None:
    for n in range(20):
        check_public_key(key(n).public_bytes())


def test_label_prefix_required() -> None:
    k = key(1)
    with pytest.raises(ValueError, match="dernier-p2p/"):
        k.sign("other/label", VALUE)
    with pytest.raises(ValueError, match="dernier-p2p/"):
        verify(k.public_bytes(), "other/label", VALUE, k.sign(LABEL, VALUE))


def test_unencodable_value() -> None:
    with pytest.raises(EncodingError):
        key(1).sign(LABEL, 1.5)


@pytest.mark.parametrize("seed", [b"", bytes(31), bytes(33), "x" * 32])
def test_bad_seed(seed: object) -> None:
    with pytest.raises(ValueError):
        IdentityKey.generate(seed)  # type: ignore[arg-type]


def test_key_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "identity.pem"
    k = key(5)
    k.save(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----\n")
    again = IdentityKey.load(path)
    assert again.public_bytes() == k.public_bytes()
    verify(k.public_bytes(), LABEL, VALUE, again.sign(LABEL, VALUE))


def test_key_file_mode_ignores_permissive_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        key(5).save(tmp_path / "k.pem")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "k.pem").st_mode) == 0o600


def test_key_file_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "identity.pem"
    key(5).save(path)
    with pytest.raises(FileExistsError):
        key(6).save(path)
    assert IdentityKey.load(path).public_bytes() == key(5).public_bytes()


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_key_file_readable_by_others_refused(tmp_path: Path) -> None:
    path = tmp_path / "identity.pem"
    key(5).save(path)
    os.chmod(path, 0o640)
    with pytest.raises(KeyFileError, match="chmod 600"):
        IdentityKey.load(path)


def test_key_file_garbage(tmp_path: Path) -> None:
    for n, data in enumerate([b"", b"garbage\n", key(1).to_pem()[:-40]]):
        path = tmp_path / f"k{n}.pem"
        path.write_bytes(data)
        path.chmod(0o600)
        with pytest.raises(KeyFileError):
            IdentityKey.load(path)


def test_key_file_other_key_types() -> None:
    p256 = ec.generate_private_key(ec.SECP256R1())
    plain = p256.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    with pytest.raises(KeyFileError, match="Ed25519"):
        IdentityKey.from_pem(plain)
    encrypted = IdentityKey.generate(bytes(32))._key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"pw"),
    )
    with pytest.raises(KeyFileError):
        IdentityKey.from_pem(encrypted)


def test_remembered_successes_are_exact_triples() -> None:
    a, b = key(1), key(2)
    seen = Verified(size=2)
    sig = a.sign(LABEL, VALUE)
    verify(a.public_bytes(), LABEL, VALUE, sig, seen)
    assert len(seen) == 1
    verify(a.public_bytes(), LABEL, VALUE, sig, seen)  # the same bytes again: remembered
    assert len(seen) == 1
    # what was remembered vouches for nothing else: another key, value or signature
    with pytest.raises(BadSignature):
        verify(b.public_bytes(), LABEL, VALUE, sig, seen)
    with pytest.raises(BadSignature):
        verify(a.public_bytes(), LABEL, {**VALUE, "seat": 3}, sig, seen)
    flipped = bytes([sig[0] ^ 1]) + sig[1:]
    with pytest.raises(BadSignature):
        verify(a.public_bytes(), LABEL, VALUE, flipped, seen)
    assert len(seen) == 1  # failures are not kept


def test_remembered_successes_are_bounded_oldest_first() -> None:
    k = key(3)
    seen = Verified(size=2)
    triples = []
    for i in range(3):
        value = {"i": i}
        sig = k.sign(LABEL, value)
        verify(k.public_bytes(), LABEL, value, sig, seen)
        triples.append((k.public_bytes(), sig, encode([LABEL, value])))
    assert len(seen) == 2
    assert triples[0] not in seen and triples[1] in seen and triples[2] in seen


def test_public_keys_are_checked_once_and_kept_in_a_bounded_cache(monkeypatch) -> None:
    """A public key is checked the first time it is seen (a cold cache still refuses a bad
    key, whatever its type) and its parsed object kept; the cache is emptied when full."""
    monkeypatch.setattr(identity, "_CHECKED", {})
    monkeypatch.setattr(identity, "_CHECKED_MAX", 3)
    publics = [key(n).public_bytes() for n in range(1, 6)]
    first = identity._public_key(publics[0])
    assert isinstance(first, Ed25519PublicKey) and first.public_bytes_raw() == publics[0]
    assert identity._public_key(publics[0]) is first  # kept, not parsed again
    for bad in (bytes([1]) + bytes(31), bytearray(publics[1]), [publics[1]], None):
        with pytest.raises(BadPublicKey):
            identity._public_key(bad)  # type: ignore[arg-type]
    assert list(identity._CHECKED) == [publics[0]]  # a refused key is not kept
    sizes = []
    for public in publics[1:]:
        identity._public_key(public)
        sizes.append(len(identity._CHECKED))
    assert sizes == [2, 3, 1, 2]  # full at 3: emptied before the fourth key
    assert identity._public_key(publics[0]) is not first  # parsed again after the emptying
    sig = key(1).sign(LABEL, VALUE)
    verify(publics[0], LABEL, VALUE, sig)
