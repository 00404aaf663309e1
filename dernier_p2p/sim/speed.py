"""Shared verification results: every process of a simulated table checks the same signatures
and proofs, so within one world each is checked once.

``with shared_checks(): ...`` wraps, for the whole Python process, the functions that check a
signature (an identity key's ``verify``), a shuffle proof (``verify_shuffle`` as the deck table
calls it) and a Chaum-Pedersen proof (``verify_dleq`` as the reveal tokens call it), so that a
check whose exact inputs passed once before passes again at once. Only successes are kept, keyed
by every input (the signed bytes themselves, the proof and its context), so the wrapped
functions answer exactly as the real ones would: a failure is always computed, and no input
that differs in any byte is taken for another. :func:`forget` empties the memory (each match
starts afresh). Simulation only; not thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dernier_p2p.deck import table as _table
from dernier_p2p.deck import tokens as _tokens
from dernier_p2p.wire import identity as _identity

_passed: set[Any] = set()
_MAX = 500_000


def forget() -> None:
    """Empty the memory of passed checks."""
    _passed.clear()


def _remember(key: Any) -> None:
    if len(_passed) >= _MAX:
        _passed.clear()
    _passed.add(key)


class _Key:
    """An identity public key whose successful verifications are remembered."""

    def __init__(self, public: bytes, key: Any) -> None:
        self.public = public
        self.key = key

    def verify(self, signature: bytes, message: bytes) -> None:
        k = ("sig", self.public, signature, message)
        if k in _passed:
            return
        self.key.verify(signature, message)
        _remember(k)


def _wrap_public_key(real: Any) -> Any:
    keys: dict[bytes, _Key] = {}

    def public_key(public: bytes) -> Any:
        key = keys.get(public) if isinstance(public, bytes) else None
        if key is None:
            key = _Key(public, real(public))
            keys[public] = key
        return key

    return public_key


def _wrap_shuffle(real: Any) -> Any:
    def verify_shuffle(pk: bytes, deck_in: list[Any], deck_out: list[Any], proof: Any,
                       context: dict, seat: int | None = None) -> None:
        k = ("shuffle", pk, tuple(deck_in), tuple(deck_out), proof, repr(context), seat)
        if k in _passed:
            return
        real(pk, deck_in, deck_out, proof, context, seat)
        _remember(k)

    return verify_shuffle


def _wrap_dleq(real: Any) -> Any:
    def verify_dleq(X: bytes, H: bytes, T: bytes, proof: Any, context: dict, bind: Any = None,
                    seat: int | None = None) -> None:
        k = ("dleq", X, H, T, proof, repr(context), repr(bind), seat)
        if k in _passed:
            return
        real(X, H, T, proof, context, bind, seat)
        _remember(k)

    return verify_dleq


@contextmanager
def shared_checks() -> Iterator[None]:
    """Run the block with the checks' successes shared (see the module docstring)."""
    saved = (_identity._public_key, _table.verify_shuffle, _tokens.verify_dleq)
    _identity._public_key = _wrap_public_key(saved[0])
    _table.verify_shuffle = _wrap_shuffle(saved[1])
    _tokens.verify_dleq = _wrap_dleq(saved[2])
    try:
        yield
    finally:
        _identity._public_key, _table.verify_shuffle, _tokens.verify_dleq = saved
        forget()
