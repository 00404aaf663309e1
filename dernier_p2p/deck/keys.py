"""Per-hand key setup: commit to every key share before any is revealed, then reveal with a
Schnorr proof of knowledge; the joint ElGamal key is the sum of the shares.

Seat ``i`` draws a per-hand secret scalar ``x_i`` and a 32-byte nonce from its Drbg and derives

* its key share ``X_i = x_i*G``;
* its per-hand X25519 key pair (for card transfers):
  ``d_i = digest("dernier-p2p/transfer-key", [game, hand, i, x_i])`` (32 bytes, the X25519 private
  key), ``P_i = X25519(d_i, 9)``;
* its commitment ``digest("dernier-p2p/key-commit", [ctx_i, X_i, P_i, nonce])`` where
  ``ctx_i = {"game", "hand", "step": "key", "seat": i}``.

The reveal is ``(X_i, P_i, nonce, proof)`` with a Schnorr proof of knowledge of ``x_i`` under
``ctx_i`` binding ``P_i``. Commit-before-reveal plus the proof stop rogue-key attacks: no seat can
choose its share as a function of the others'. At the end of the hand seat ``i`` reveals ``x_i``,
so anyone can re-derive ``d_i`` and open every transfer sent to ``i``.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from dernier_p2p.deck import group as g
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.errors import BadCommitment, BadElement, DeckError, MissingMessage
from dernier_p2p.deck.proofs import Proof, make_context, prove_schnorr, verify_schnorr
from dernier_p2p.wire.hashing import digest

COMMIT_LABEL = "dernier-p2p/key-commit"
TRANSFER_KEY_LABEL = "dernier-p2p/transfer-key"


def transfer_private_key(game: bytes, hand: int, seat: int, x: int) -> bytes:
    """The per-hand X25519 private key of ``seat``, derived from its per-hand secret ``x``."""
    return digest(TRANSFER_KEY_LABEL, [game, hand, seat, g.encode_scalar(x)])


def x25519_public(private: bytes) -> bytes:
    """The X25519 public key of a 32-byte private key."""
    key = X25519PrivateKey.from_private_bytes(private)
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


_P25519 = 2**255 - 19
_PROBE = X25519PrivateKey.from_private_bytes(bytes(range(1, 33)))


def check_xpub(xpub: object, seat: int) -> bytes:
    """``xpub`` if it is a usable X25519 public key: 32 bytes, a canonical coordinate (below
    2^255 - 19) and not of small order (an exchange with it gives a non-zero secret);
    :class:`BadElement` naming ``seat`` otherwise. Every key a seat boxes a card to passes
    this when it is revealed, so sealing to it cannot fail later."""
    if not isinstance(xpub, bytes) or len(xpub) != 32:
        raise BadElement("transfer key must be 32 bytes", seat)
    if int.from_bytes(xpub, "little") >= _P25519:
        raise BadElement("transfer key is not a canonical X25519 coordinate", seat)
    try:
        _PROBE.exchange(X25519PublicKey.from_public_bytes(xpub))
    except ValueError:  # the all-zero shared secret of a small-order point
        raise BadElement("transfer key is of small order (unusable)", seat) from None
    return xpub


def key_commitment(game: bytes, hand: int, seat: int, X: bytes, xpub: bytes, nonce: bytes) -> bytes:
    """The 32-byte commitment to a key share and transfer key."""
    return digest(COMMIT_LABEL, [make_context(game, hand, "key", seat), X, xpub, nonce])


@dataclass(frozen=True)
class KeyReveal:
    """The public half of a seat's per-hand key: share, X25519 key, nonce and proof."""

    seat: int
    share: bytes
    xpub: bytes
    nonce: bytes
    proof: Proof

    def to_wire(self) -> dict:
        """The fields of a ``key_reveal`` message (without type and seat)."""
        return {
            "share": self.share,
            "xpub": self.xpub,
            "nonce": self.nonce,
            "proof": self.proof.to_wire(),
        }

    @classmethod
    def from_wire(cls, seat: int, obj: dict) -> KeyReveal:
        """Decode and validate; :class:`BadElement` naming ``seat`` if malformed."""
        try:
            share = g.decode(obj["share"])
        except g.InvalidElement as exc:
            raise BadElement(f"key share: {exc}", seat) from None
        except (KeyError, TypeError):
            raise BadElement("key reveal lacks a share", seat) from None
        xpub, nonce = obj.get("xpub"), obj.get("nonce")
        check_xpub(xpub, seat)
        if not isinstance(nonce, bytes) or len(nonce) != 32:
            raise BadElement("key nonce must be 32 bytes", seat)
        return cls(seat, share, xpub, nonce, Proof.from_wire(obj.get("proof"), seat))


@dataclass(frozen=True)
class KeySecret:
    """One seat's private per-hand key material."""

    game: bytes
    hand: int
    seat: int
    x: int
    nonce: bytes

    @classmethod
    def generate(cls, game: bytes, hand: int, seat: int, drbg: Drbg) -> KeySecret:
        """Draw ``x`` then the nonce from ``drbg``."""
        make_context(game, hand, "key", seat)
        return cls(game, hand, seat, drbg.scalar(), drbg.read(32))

    @property
    def share(self) -> bytes:
        return g.base_mul(self.x)

    @property
    def transfer_private(self) -> bytes:
        return transfer_private_key(self.game, self.hand, self.seat, self.x)

    @property
    def xpub(self) -> bytes:
        return x25519_public(self.transfer_private)

    def commitment(self) -> bytes:
        return key_commitment(self.game, self.hand, self.seat, self.share, self.xpub, self.nonce)

    def reveal(self, drbg: Drbg) -> KeyReveal:
        """The reveal with its proof of knowledge (nonce of the proof drawn from ``drbg``)."""
        ctx = make_context(self.game, self.hand, "key", self.seat)
        X, xpub = self.share, self.xpub
        proof = prove_schnorr(self.x, X, ctx, drbg, bind=xpub)
        return KeyReveal(self.seat, X, xpub, self.nonce, proof)


def verify_reveal(game: bytes, hand: int, commitment: bytes, reveal: KeyReveal) -> None:
    """Check a reveal against its commitment and its proof; errors name the revealing seat."""
    seat = reveal.seat
    c = key_commitment(game, hand, seat, reveal.share, reveal.xpub, reveal.nonce)
    if c != commitment:
        raise BadCommitment("key reveal does not match its commitment", seat)
    ctx = make_context(game, hand, "key", seat)
    verify_schnorr(reveal.share, reveal.proof, ctx, bind=reveal.xpub, seat=seat)


def check_secret(game: bytes, hand: int, reveal: KeyReveal, x: int) -> None:
    """Check an end-of-hand secret against the seat's share and transfer key."""
    if g.base_mul(x) != reveal.share:
        raise BadCommitment("revealed secret does not match the key share", reveal.seat)
    if x25519_public(transfer_private_key(game, hand, reveal.seat, x)) != reveal.xpub:
        raise BadCommitment("revealed secret does not derive the transfer key", reveal.seat)


class KeySetup:
    """Collects the n seats' commitments, then their reveals, and yields the joint key."""

    def __init__(self, game: bytes, hand: int, n: int) -> None:
        if not 2 <= n <= 10:
            raise ValueError("a table has 2 to 10 seats")
        make_context(game, hand, "key", 0)
        self.game, self.hand, self.n = game, hand, n
        self.commitments: dict[int, bytes] = {}
        self.reveals: dict[int, KeyReveal] = {}

    def add_commitment(self, seat: int, commitment: object) -> None:
        if seat in self.commitments:
            raise DeckError("second key commitment", seat)
        if not isinstance(commitment, bytes) or len(commitment) != 32:
            raise BadElement("key commitment must be 32 bytes", seat)
        self.commitments[seat] = commitment

    @property
    def committed(self) -> bool:
        return len(self.commitments) == self.n

    def add_reveal(self, reveal: KeyReveal) -> None:
        """Accept a reveal; only once every seat has committed."""
        if not self.committed:
            raise DeckError("key revealed before every seat committed", reveal.seat)
        if reveal.seat in self.reveals:
            raise DeckError("second key reveal", reveal.seat)
        verify_reveal(self.game, self.hand, self.commitments[reveal.seat], reveal)
        self.reveals[reveal.seat] = reveal

    @property
    def complete(self) -> bool:
        return len(self.reveals) == self.n

    def missing(self) -> list[int]:
        """Seats whose commitment (first phase) or reveal (second phase) is still due."""
        have = self.reveals if self.committed else self.commitments
        return [s for s in range(self.n) if s not in have]

    def joint_key(self) -> bytes:
        """``Y = X_0 + ... + X_{n-1}``; :class:`MissingMessage` naming the first absent seat."""
        if not self.complete:
            miss = self.missing()
            raise MissingMessage(f"key reveals missing from seats {miss}", miss[0])
        Y = g.sum_elements([self.reveals[s].share for s in range(self.n)])
        if Y == g.IDENTITY:  # only possible if shares cancel, which commit-reveal prevents
            raise DeckError("joint key is the identity")
        return Y
