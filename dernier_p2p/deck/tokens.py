"""Reveal tokens: partial decryptions with Chaum-Pedersen proofs.

For a card ``(c1, c2)`` at deck position ``p``, seat ``j``'s token is ``T_j = x_j*c1`` with a
Chaum-Pedersen proof that ``log_G X_j == log_c1 T_j`` under the context
``{"game", "hand", "step": "token", "seat": j}`` binding ``p``. With the tokens of all seats,
``M = c2 - sum_j T_j`` is the card element. Dealing a card to seat ``s``: every other seat
publishes its token, ``s`` adds its own privately. Opening: the holder publishes its token.
"""

from __future__ import annotations

from dataclasses import dataclass

from dernier_p2p.deck import group as g
from dernier_p2p.deck.cards import card_index
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.elgamal import Ciphertext
from dernier_p2p.deck.errors import BadElement, BadProof
from dernier_p2p.deck.proofs import Proof, make_context, prove_dleq, verify_dleq

TOKEN_STEP = "token"


def token_context(game: bytes, hand: int, owner: int) -> dict:
    """The proof context of a token made by seat ``owner``."""
    return make_context(game, hand, TOKEN_STEP, owner)


@dataclass(frozen=True)
class Token:
    """Seat ``owner``'s reveal token for the card at ``position``, with its proof."""

    owner: int
    position: int
    value: bytes
    proof: Proof

    def to_wire(self) -> dict:
        """``{"position", "owner", "token", "proof"}``."""
        return {
            "position": self.position,
            "owner": self.owner,
            "token": self.value,
            "proof": self.proof.to_wire(),
        }

    @classmethod
    def from_wire(cls, obj: object, seat: int | None = None) -> Token:
        """Decode and validate; :class:`BadElement` naming ``seat`` (the sender) if malformed."""
        if not isinstance(obj, dict) or set(obj) != {"position", "owner", "token", "proof"}:
            raise BadElement("a token is a map of position, owner, token and proof", seat)
        pos, owner = obj["position"], obj["owner"]
        for name, v in (("position", pos), ("owner", owner)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise BadElement(f"token {name} must be a non-negative integer", seat)
        try:
            value = g.decode(obj["token"])
        except g.InvalidElement as exc:
            raise BadElement(f"reveal token: {exc}", seat) from None
        return cls(owner, pos, value, Proof.from_wire(obj["proof"], seat))


def make_token(
    game: bytes, hand: int, owner: int, x: int, position: int, ct: Ciphertext, drbg: Drbg
) -> Token:
    """Seat ``owner``'s token ``x*c1`` for the card at ``position``, with its proof."""
    X = g.base_mul(x)
    T = g.mul(x, ct[0])
    proof = prove_dleq(x, X, ct[0], T, token_context(game, hand, owner), drbg, bind=position)
    return Token(owner, position, T, proof)


def verify_token(
    game: bytes,
    hand: int,
    share: bytes,
    ct: Ciphertext,
    token: Token,
    position: int,
    blame: int | None = None,
) -> None:
    """Check ``token`` for the card ``ct`` at ``position`` against its owner's key ``share``.

    A failure raises :class:`BadProof` naming ``blame`` (default: the token's owner).
    """
    seat = token.owner if blame is None else blame
    if token.position != position:
        raise BadProof("token is for another position", seat)
    ctx = token_context(game, hand, token.owner)
    verify_dleq(share, ct[0], token.value, token.proof, ctx, bind=position, seat=seat)


def own_token_value(x: int, ct: Ciphertext) -> bytes:
    """``x*c1`` without a proof (a holder finishing its own decryption)."""
    return g.mul(x, ct[0])


def unmask(ct: Ciphertext, token_values: list[bytes]) -> bytes:
    """``c2 - sum(tokens)``: the card element once every seat's token is included."""
    return g.sub(ct[1], g.sum_elements(token_values))


def decrypt_card(
    deck: str, ct: Ciphertext, token_values: list[bytes], seat: int | None = None
) -> int:
    """The card index of ``ct`` given all n tokens; :class:`NotACard` if it is none."""
    return card_index(deck, unmask(ct, token_values), seat)
