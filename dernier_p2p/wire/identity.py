"""Ed25519 identity keys: every protocol message is signed by its author's long-term key.

A signature covers ``canonical([label, value])`` (the same framing as :mod:`.hashing`), with a
label starting ``"dernier-p2p/"``, so a signature made for one purpose is never valid for another.

Public keys must be canonical encodings of points in the prime-order subgroup. Plain Ed25519
verification (RFC 8032, as OpenSSL does it) accepts a small-order public key such as the neutral
element, and under such a key one signature verifies for *every* message; a seat could register
one and later disown what it signed. :func:`check_public_key` refuses those keys and
:func:`verify` applies it.

The key file is the unencrypted PKCS#8 PEM encoding of the private key (``-----BEGIN PRIVATE
KEY-----``, readable by ``openssl pkey``), created with mode 0600; loading refuses a file that
group or others may read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from nacl.bindings import crypto_core_ed25519_is_valid_point

from dernier_p2p.wire.canonical import encode
from dernier_p2p.wire.hashing import PREFIX

PUBLIC_KEY_SIZE = 32
SIGNATURE_SIZE = 64
SEED_SIZE = 32


class BadSignature(ValueError):
    """A signature does not verify, or the public key or signature is malformed."""


class BadPublicKey(BadSignature):
    """A public key that is not 32 bytes encoding a point of the prime-order subgroup."""


class KeyFileError(ValueError):
    """A key file cannot be read as an Ed25519 identity key, or is readable by others."""


def _message(label: str, value: Any) -> bytes:
    if not isinstance(label, str) or not label.startswith(PREFIX):
        raise ValueError(f"signature label must start with {PREFIX!r}")
    return encode([label, value])


def check_public_key(public: bytes) -> None:
    """Raise :class:`BadPublicKey` unless ``public`` is an acceptable identity public key."""
    if not isinstance(public, bytes) or len(public) != PUBLIC_KEY_SIZE:
        raise BadPublicKey(f"a public key is {PUBLIC_KEY_SIZE} bytes")
    if not crypto_core_ed25519_is_valid_point(public):
        raise BadPublicKey("public key is not a point of the prime-order subgroup")


_CHECKED: dict[bytes, Ed25519PublicKey] = {}
_CHECKED_MAX = 4096


def _public_key(public: bytes) -> Ed25519PublicKey:
    """The checked key object of ``public``, validated once and kept (a table has a few keys
    and each of them signs every record)."""
    key = _CHECKED.get(public) if isinstance(public, bytes) else None
    if key is None:
        check_public_key(public)
        key = Ed25519PublicKey.from_public_bytes(public)
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.clear()
        _CHECKED[public] = key
    return key


class IdentityKey:
    """A private Ed25519 identity key."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key

    @classmethod
    def generate(cls, seed32: bytes) -> IdentityKey:
        """The key whose RFC 8032 private seed is ``seed32`` (pass ``os.urandom(32)`` for a new
        identity; a fixed seed gives reproducible keys for tests and vectors)."""
        if not isinstance(seed32, bytes) or len(seed32) != SEED_SIZE:
            raise ValueError(f"an identity seed is {SEED_SIZE} bytes")
        return cls(Ed25519PrivateKey.from_private_bytes(seed32))

    def seed(self) -> bytes:
        """The 32-byte private seed."""
        return self._key.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )

    def public_bytes(self) -> bytes:
        """The 32-byte public key."""
        return self._key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    def sign(self, label: str, value: Any) -> bytes:
        """The 64-byte signature of ``canonical([label, value])``."""
        return self._key.sign(_message(label, value))

    def to_pem(self) -> bytes:
        """The key file contents: unencrypted PKCS#8 PEM."""
        return self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    @classmethod
    def from_pem(cls, data: bytes) -> IdentityKey:
        """Parse :meth:`to_pem` output; raise :class:`KeyFileError` for anything else."""
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
            raise KeyFileError(f"not an unencrypted PEM private key: {exc}") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise KeyFileError("key file does not hold an Ed25519 key")
        return cls(key)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write a new key file with mode 0600; an existing file raises ``FileExistsError``."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(self.to_pem())
            f.flush()
            os.fsync(f.fileno())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> IdentityKey:
        """Read a key file; raise :class:`KeyFileError` if it is malformed or (on POSIX) if
        group or others have any access to it."""
        p = Path(path)
        if os.name == "posix" and stat.S_IMODE(p.stat().st_mode) & 0o077:
            raise KeyFileError(f"{p}: key file must not be accessible by others (chmod 600)")
        return cls.from_pem(p.read_bytes())


class Verified:
    """The last ``size`` (public key, signature, message) triples that verified, so that one
    holder checking the same signed bytes again (the host checks an envelope before it
    sequences it, while sequencing, and when the record is fed back) does a look-up instead.
    Only successes are kept; each holder (a chain checker) has its own."""

    def __init__(self, size: int = 16) -> None:
        self._seen: dict[tuple[bytes, bytes, bytes], None] = {}
        self._size = size

    def __contains__(self, triple: tuple[bytes, bytes, bytes]) -> bool:
        return triple in self._seen

    def add(self, triple: tuple[bytes, bytes, bytes]) -> None:
        if triple not in self._seen and len(self._seen) >= self._size:
            del self._seen[next(iter(self._seen))]  # the oldest
        self._seen[triple] = None

    def __len__(self) -> int:
        return len(self._seen)


def verify(
    public: bytes, label: str, value: Any, signature: bytes, verified: Verified | None = None
) -> None:
    """Check that ``signature`` is ``public``'s signature of ``canonical([label, value])``.

    Raise :class:`BadSignature` (or its subclass :class:`BadPublicKey`) if it is not, including
    for malformed lengths; a label without the ``"dernier-p2p/"`` prefix is a ``ValueError``.
    ``verified``: remembered successes to consult first and to add to.
    """
    message = _message(label, value)
    key = _public_key(public)
    if not isinstance(signature, bytes) or len(signature) != SIGNATURE_SIZE:
        raise BadSignature(f"a signature is {SIGNATURE_SIZE} bytes")
    triple = (public, signature, message)
    if verified is not None and triple in verified:
        return
    try:
        key.verify(signature, message)
    except InvalidSignature:
        raise BadSignature("signature does not verify") from None
    if verified is not None:
        verified.add(triple)
