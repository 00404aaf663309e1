"""Shared verification results: every process of a simulated table checks the same signatures
and proofs, so within one world each is checked once.

``with shared_checks(): ...`` wraps, for the whole Python process, the functions that check a
signature (an identity key's ``verify``), a shuffle proof (``verify_shuffle`` as the deck table
calls it), a Chaum-Pedersen proof (``verify_dleq`` as the reveal tokens call it) and a received
group element (the group's ``decode``), so that a check whose exact inputs passed once before
passes again at once. Only successes are kept, keyed by every input (the signed bytes
themselves, the proof and its context), so the wrapped functions answer exactly as the real ones
would: a failure is always computed, and no input that differs in any byte is taken for another.

The simulated network hands every process the very same record objects (nothing is encoded on
the way), so the chain's record hash and its checks of a record's and an envelope's signature
are also kept by object (the object held, so that its identity stays its own, and its signed
fields compared): a record relayed to ten seats is hashed and checked once. This relies on
signed data never being changed in place, which no code does (a strategy forging a record
builds a new one).

:func:`forget` empties the memory (each match starts afresh). Simulation only; not
thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dernier_p2p.deck import group as _group
from dernier_p2p.deck import table as _table
from dernier_p2p.deck import tokens as _tokens
from dernier_p2p.protocol import chain as _chain
from dernier_p2p.wire import identity as _identity

_passed: set[Any] = set()
_held: dict[Any, Any] = {}  # key -> (the object it is about, the result)
_MAX = 500_000


def forget() -> None:
    """Empty the memory of passed checks."""
    _passed.clear()
    _held.clear()


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


def _wrap_decode(real: Any) -> Any:
    def decode(data: bytes) -> bytes:
        k = ("el", data)
        if k in _passed:
            return bytes(data)
        out = real(data)
        _remember(k)
        return out

    return decode


def _rec_key(rec: Any) -> Any:
    return (id(rec), rec["hsig"], rec["i"], rec["t"], rec["prev"], rec["h"], id(rec["env"]))


def _wrap_record_hash(real: Any) -> Any:
    def record_hash(rec: dict) -> bytes:
        try:
            k = ("hash",) + _rec_key(rec)
        except (KeyError, TypeError):
            return real(rec)
        got = _held.get(k)
        if got is not None:
            return got[1]
        out = real(rec)
        if len(_held) >= _MAX:
            _held.clear()
        _held[k] = (rec, out)
        return out

    return record_hash


def _wrap_verify_record(real: Any) -> Any:
    def verify_record(rec: dict, host_public: bytes, fault: int | None,
                      verified: Any = None) -> None:
        k = ("rec", host_public) + _rec_key(rec)
        if k in _held:
            return
        real(rec, host_public, fault, verified)
        _held[k] = (rec, None)

    return verify_record


def _wrap_verify_envelope(real: Any) -> Any:
    def verify_envelope(env: dict, public: bytes, fault: int | None,
                        verified: Any = None) -> None:
        k = ("env", public, id(env), env["sig"], id(env["body"]), env["n"], env["head"])
        if k in _held:
            return
        real(env, public, fault, verified)
        _held[k] = (env, None)

    return verify_envelope


_WRAPPED = (
    (_identity, "_public_key", _wrap_public_key),
    (_table, "verify_shuffle", _wrap_shuffle),
    (_tokens, "verify_dleq", _wrap_dleq),
    (_group, "decode", _wrap_decode),
    (_chain, "record_hash", _wrap_record_hash),
    (_chain, "verify_record", _wrap_verify_record),
    (_chain, "verify_envelope", _wrap_verify_envelope),
)


@contextmanager
def shared_checks() -> Iterator[None]:
    """Run the block with the checks' successes shared (see the module docstring). Enter it
    inside the small group's block, if any (it wraps the group's ``decode`` of the moment)."""
    saved = [(module, name, getattr(module, name)) for module, name, _ in _WRAPPED]
    for (module, name, wrap), (_, _, real) in zip(_WRAPPED, saved, strict=True):
        setattr(module, name, wrap(real))
    try:
        yield
    finally:
        for module, name, real in saved:
            setattr(module, name, real)
        forget()
