"""Passing a held card to another seat without showing it to the rest (moderno swap, rotate).

The card at ``position`` is readable by whoever has the one token not yet public (the token of
its original holder, the *owner*). The giver ``a`` hands that token and its Chaum-Pedersen proof
to the receiver ``b`` inside an encrypted box, and publishes a salted commitment to the box's
plaintext:

* ``plaintext = canonical({"owner": o, "token": T_o, "proof": {e, s}, "salt": 32 bytes})``
* ``commit = digest("dernier-p2p/transfer-commit", [ctx_a, position, a, b, plaintext])`` with
  ``ctx_a = {"game", "hand", "step": "transfer", "seat": a}``
* ephemeral X25519 key ``epk``; ``k = HKDF-SHA256(X25519(e, P_b), salt=None,
  info=canonical(["dernier-p2p/transfer-aead", game, hand, epk, P_b]), 32 bytes)``
* ``box = ChaCha20-Poly1305(k).encrypt(nonce=12 zero bytes, plaintext,
  aad=canonical(["dernier-p2p/transfer", ctx_a, position, a, b, commit]))``

The salt keeps anyone from testing candidate tokens against ``commit``. The receiver checks the
box, the commitment and the proof. If anything fails it complains by publishing the plaintext
(or nothing, if the box does not open); once ``x_b`` is revealed at the end of the hand anyone
re-derives ``P_b``'s private key and opens the box, so a forged or altered transfer is always
attributed. The receiver later opens the card by publishing the forwarded token with the owner's
proof; it can also pass the card on with a new box.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.elgamal import Ciphertext
from dernier_p2p.deck.errors import BadElement, BadProof, DeckError
from dernier_p2p.deck.keys import x25519_public
from dernier_p2p.deck.proofs import make_context
from dernier_p2p.deck.tokens import Token, verify_token
from dernier_p2p.wire.canonical import EncodingError, decode, encode
from dernier_p2p.wire.hashing import digest

COMMIT_LABEL = "dernier-p2p/transfer-commit"
AEAD_INFO_LABEL = "dernier-p2p/transfer-aead"
AAD_LABEL = "dernier-p2p/transfer"
NONCE = bytes(12)
MAX_BOX = 512


class BadTransfer(DeckError):
    """A transfer does not open, does not match its commitment or carries a bad token."""


@dataclass(frozen=True)
class Transfer:
    """The public part of a transfer from ``giver`` to ``receiver``."""

    giver: int
    receiver: int
    position: int
    epk: bytes
    box: bytes
    commit: bytes

    def to_wire(self) -> dict:
        """The fields of a ``transfer`` message (``seat`` is the giver)."""
        return {
            "position": self.position,
            "to": self.receiver,
            "epk": self.epk,
            "box": self.box,
            "commit": self.commit,
        }

    @classmethod
    def from_wire(cls, giver: int, obj: dict) -> Transfer:
        """Validate the fields; :class:`BadElement` naming the giver if malformed."""
        pos, to = obj.get("position"), obj.get("to")
        for name, v in (("position", pos), ("to", to)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise BadElement(f"transfer {name} must be a non-negative integer", giver)
        epk, box, commit = obj.get("epk"), obj.get("box"), obj.get("commit")
        if not isinstance(epk, bytes) or len(epk) != 32:
            raise BadElement("transfer ephemeral key must be 32 bytes", giver)
        if not isinstance(box, bytes) or not 16 <= len(box) <= MAX_BOX:
            raise BadElement("transfer box has a bad size", giver)
        if not isinstance(commit, bytes) or len(commit) != 32:
            raise BadElement("transfer commitment must be 32 bytes", giver)
        return cls(giver, to, pos, epk, box, commit)


def _ctx(game: bytes, hand: int, giver: int) -> dict:
    return make_context(game, hand, "transfer", giver)


def transfer_commitment(
    game: bytes, hand: int, giver: int, receiver: int, position: int, plaintext: bytes
) -> bytes:
    """The salted commitment to a transfer's plaintext."""
    return digest(COMMIT_LABEL, [_ctx(game, hand, giver), position, giver, receiver, plaintext])


def _aead(shared: bytes, game: bytes, hand: int, epk: bytes, rpub: bytes) -> ChaCha20Poly1305:
    info = encode([AEAD_INFO_LABEL, game, hand, epk, rpub])
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(shared)
    return ChaCha20Poly1305(key)


def _aad(game: bytes, hand: int, t: Transfer) -> bytes:
    return encode(
        [AAD_LABEL, _ctx(game, hand, t.giver), t.position, t.giver, t.receiver, t.commit]
    )


def seal_transfer(
    game: bytes,
    hand: int,
    giver: int,
    receiver: int,
    receiver_xpub: bytes,
    token: Token,
    drbg: Drbg,
) -> tuple[Transfer, bytes]:
    """Box ``token`` (the owner's token for the card) for ``receiver``; return the transfer and
    its plaintext (kept by the giver, revealed only in a dispute)."""
    plaintext = encode(
        {
            "owner": token.owner,
            "token": token.value,
            "proof": token.proof.to_wire(),
            "salt": drbg.read(32),
        }
    )
    return box_plaintext(game, hand, giver, receiver, receiver_xpub, token.position, plaintext,
                         drbg.read(32)), plaintext


def box_plaintext(
    game: bytes,
    hand: int,
    giver: int,
    receiver: int,
    receiver_xpub: bytes,
    position: int,
    plaintext: bytes,
    eph: bytes,
) -> Transfer:
    """The transfer of ``plaintext`` (any bytes) from ``giver`` to ``receiver``: its commitment,
    and its box sealed with the ephemeral X25519 private key ``eph``."""
    commit = transfer_commitment(game, hand, giver, receiver, position, plaintext)
    epk = x25519_public(eph)
    try:  # keys are checked when revealed (keys.check_xpub); this is the last line of defence
        shared = X25519PrivateKey.from_private_bytes(eph).exchange(
            X25519PublicKey.from_public_bytes(receiver_xpub)
        )
    except ValueError:
        raise BadElement("the receiver's transfer key is unusable", receiver) from None
    head = Transfer(giver, receiver, position, epk, b"", commit)
    box = _aead(shared, game, hand, epk, receiver_xpub).encrypt(
        NONCE, plaintext, _aad(game, hand, head)
    )
    return Transfer(giver, receiver, position, epk, box, commit)


def open_box(game: bytes, hand: int, t: Transfer, receiver_private: bytes) -> bytes:
    """Decrypt the box with the receiver's X25519 private key; :class:`BadTransfer` naming the
    giver if it does not open."""
    rpub = x25519_public(receiver_private)
    try:
        shared = X25519PrivateKey.from_private_bytes(receiver_private).exchange(
            X25519PublicKey.from_public_bytes(t.epk)
        )
        return _aead(shared, game, hand, t.epk, rpub).decrypt(NONCE, t.box, _aad(game, hand, t))
    except (InvalidTag, ValueError):
        raise BadTransfer("transfer box does not open", t.giver) from None


def parse_plaintext(game: bytes, hand: int, t: Transfer, plaintext: bytes) -> Token:
    """Check ``plaintext`` against the commitment and decode the token inside (unverified).

    A mismatch raises :class:`BadTransfer` with no seat: the giver sealed something other than
    it committed to, or the one presenting the plaintext lies; only the box decides.
    """
    if transfer_commitment(game, hand, t.giver, t.receiver, t.position, plaintext) != t.commit:
        raise BadTransfer("plaintext does not match the transfer commitment", None)
    try:
        obj = decode(plaintext, max_size=MAX_BOX)
    except EncodingError:
        raise BadTransfer("transfer plaintext is not canonical", t.giver) from None
    if not isinstance(obj, dict) or set(obj) != {"owner", "token", "proof", "salt"}:
        raise BadTransfer("transfer plaintext has the wrong fields", t.giver)
    salt = obj["salt"]
    if not isinstance(salt, bytes) or len(salt) != 32:
        raise BadTransfer("transfer salt must be 32 bytes", t.giver)
    wire = {"position": t.position, "owner": obj["owner"], "token": obj["token"]}
    wire["proof"] = obj["proof"]
    try:
        return Token.from_wire(wire, t.giver)
    except BadElement as exc:
        raise BadTransfer(f"transfer token: {exc.reason}", t.giver) from None


def check_transfer_token(
    game: bytes, hand: int, t: Transfer, token: Token, owner: int, owner_share: bytes,
    ct: Ciphertext,
) -> None:
    """The boxed token must be ``owner``'s valid token for the card; else the giver is named."""
    if token.owner != owner:
        raise BadTransfer("transfer carries the token of the wrong seat", t.giver)
    try:
        verify_token(game, hand, owner_share, ct, token, t.position, blame=t.giver)
    except BadProof as exc:
        raise BadTransfer(f"transfer token: {exc.reason}", t.giver) from None


def receive_transfer(
    game: bytes,
    hand: int,
    t: Transfer,
    receiver_private: bytes,
    owner: int,
    owner_share: bytes,
    ct: Ciphertext,
) -> tuple[Token, bytes]:
    """Everything the receiver checks; returns the token and plaintext, or raises
    :class:`BadTransfer` (naming the giver, or no seat for a commitment mismatch)."""
    plaintext = open_box(game, hand, t, receiver_private)
    try:
        token = parse_plaintext(game, hand, t, plaintext)
    except BadTransfer as exc:
        raise BadTransfer(exc.reason, t.giver) from None  # the receiver knows the box is genuine
    check_transfer_token(game, hand, t, token, owner, owner_share, ct)
    return token, plaintext


def judge_complaint(
    game: bytes,
    hand: int,
    t: Transfer,
    plaintext: bytes | None,
    owner: int,
    owner_share: bytes,
    ct: Ciphertext,
) -> int | None:
    """The seat at fault for a receiver's complaint, judged from public data only, or ``None``
    when only the box (opened after the end-of-hand reveal) can decide."""
    if plaintext is None:
        return None
    try:
        token = parse_plaintext(game, hand, t, plaintext)
    except BadTransfer as exc:
        return exc.seat  # the giver for a committed but malformed plaintext; None if unmatched
    try:
        check_transfer_token(game, hand, t, token, owner, owner_share, ct)
    except BadTransfer:
        return t.giver
    return t.receiver  # the committed plaintext is sound: the complaint is false
