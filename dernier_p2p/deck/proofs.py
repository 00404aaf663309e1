"""Sigma proofs made non-interactive by Fiat-Shamir: Schnorr and Chaum-Pedersen.

Every challenge is ``wire.hashing.challenge(label, [context, statement..., commitments..., bind],
ORDER)`` where ``context`` is ``{"game": bytes, "hand": int, "step": str, "seat": int}`` (the
prover's seat) and ``bind`` is any extra canonical value the caller ties to the proof. A proof
is sent as ``{"e": scalar, "s": scalar}`` (32-byte little-endian scalars); the verifier
recomputes the commitments from ``(e, s)`` and checks the challenge. On the compiled group
arithmetic (``group.FAST``) each recomputed commitment is one multi-scalar multiplication with
the proof's public scalars (:func:`commitment`); a proof in this ``(e, s)`` form cannot join a
batch, since its challenge hashes the commitments themselves.

* Schnorr (label ``dernier-p2p/schnorr``): knowledge of ``x`` with ``X = x*G``.
  ``R = k*G``, ``e = H(ctx, G, X, R, bind)``, ``s = k + e*x``; check ``R = s*G - e*X``.
* Chaum-Pedersen (label ``dernier-p2p/chaum-pedersen``): ``log_G X == log_H T``.
  ``A = k*G``, ``B = k*H``, ``e = H(ctx, G, X, H, T, A, B, bind)``, ``s = k + e*x``;
  check ``A = s*G - e*X`` and ``B = s*H - e*T``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dernier_p2p.deck import group as g
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.errors import BadElement, BadProof
from dernier_p2p.wire.hashing import challenge

SCHNORR_LABEL = "dernier-p2p/schnorr"
CP_LABEL = "dernier-p2p/chaum-pedersen"
MAX_SEATS = 10


def make_context(game: bytes, hand: int, step: str, seat: int) -> dict[str, Any]:
    """A validated proof context ``{"game", "hand", "step", "seat"}``."""
    if not isinstance(game, bytes) or not 1 <= len(game) <= 64:
        raise ValueError("game id must be 1..64 bytes")
    if not isinstance(hand, int) or isinstance(hand, bool) or not 0 <= hand < 2**32:
        raise ValueError("hand number must be an integer in [0, 2**32)")
    if not isinstance(step, str) or not step:
        raise ValueError("step must be a non-empty string")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < MAX_SEATS:
        raise ValueError("seat must be an integer in [0, 10)")
    return {"game": game, "hand": hand, "step": step, "seat": seat}


@dataclass(frozen=True)
class Proof:
    """A Fiat-Shamir sigma proof ``(e, s)`` (Schnorr or Chaum-Pedersen)."""

    e: int
    s: int

    def to_wire(self) -> dict[str, bytes]:
        """``{"e": 32 bytes, "s": 32 bytes}``."""
        return {"e": g.encode_scalar(self.e), "s": g.encode_scalar(self.s)}

    @classmethod
    def from_wire(cls, obj: object, seat: int | None = None) -> Proof:
        """Validate a received proof; :class:`BadElement` naming ``seat`` if malformed."""
        if not isinstance(obj, dict) or set(obj) != {"e", "s"}:
            raise BadElement("a proof is a map with exactly the keys e and s", seat)
        try:
            return cls(g.decode_scalar(obj["e"]), g.decode_scalar(obj["s"]))
        except g.InvalidScalar as exc:
            raise BadElement(f"bad proof scalar: {exc}", seat) from None


def _seat(context: dict[str, Any], seat: int | None) -> int | None:
    return context.get("seat") if seat is None else seat


def prove_schnorr(x: int, X: bytes, context: dict, drbg: Drbg, bind: Any = None) -> Proof:
    """Prove knowledge of ``x`` with ``X = x*G``."""
    k = drbg.scalar()
    R = g.base_mul(k)
    e = challenge(SCHNORR_LABEL, [context, g.GENERATOR, X, R, bind], g.ORDER)
    return Proof(e, (k + e * x) % g.ORDER)


def commitment(s: int, base: bytes, e: int, point: bytes) -> bytes:
    """``s*base - e*point``, the commitment a verifier recomputes (public scalars only)."""
    if g.FAST:
        return g.public_multi_mul([s, g.ORDER - e], [base, point])
    first = g.base_mul(s) if base == g.GENERATOR else g.mul(s, base)
    return g.sub(first, g.mul(e, point))


def verify_schnorr(
    X: bytes, proof: Proof, context: dict, bind: Any = None, seat: int | None = None
) -> None:
    """Check a Schnorr proof; :class:`BadProof` naming the prover's seat if it fails."""
    R = commitment(proof.s, g.GENERATOR, proof.e, X)
    e = challenge(SCHNORR_LABEL, [context, g.GENERATOR, X, R, bind], g.ORDER)
    if e != proof.e:
        raise BadProof("Schnorr proof of knowledge does not verify", _seat(context, seat))


def prove_dleq(
    x: int, X: bytes, H: bytes, T: bytes, context: dict, drbg: Drbg, bind: Any = None
) -> Proof:
    """Prove ``log_G X == log_H T`` (both equal to ``x``)."""
    k = drbg.scalar()
    A = g.base_mul(k)
    B = g.mul(k, H)
    e = challenge(CP_LABEL, [context, g.GENERATOR, X, H, T, A, B, bind], g.ORDER)
    return Proof(e, (k + e * x) % g.ORDER)


def verify_dleq(
    X: bytes,
    H: bytes,
    T: bytes,
    proof: Proof,
    context: dict,
    bind: Any = None,
    seat: int | None = None,
) -> None:
    """Check a Chaum-Pedersen proof; :class:`BadProof` naming the prover's seat if it fails."""
    A = commitment(proof.s, g.GENERATOR, proof.e, X)
    B = commitment(proof.s, H, proof.e, T)
    e = challenge(CP_LABEL, [context, g.GENERATOR, X, H, T, A, B, bind], g.ORDER)
    if e != proof.e:
        raise BadProof("Chaum-Pedersen proof does not verify", _seat(context, seat))
