"""Building cases: a :class:`Spec` per case (collected in :data:`SPECS` by :func:`add`), and
records changed from a recorded match and signed again by their author and their host, so that
only the intended fault is present."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dernier_p2p.protocol.envelope import envelope_signature, record_hash, record_signature
from dernier_p2p.protocol.local import LocalTable
from dernier_p2p.wire.canonical import encode
from interop.gen.scenarios import Base


def resign_env(base: Base | LocalTable, env: dict, signer: int | None = None) -> dict:
    """``env`` signed again by its seat (or by ``signer``), with the identities of ``base``."""
    env = dict(env)
    seat = env["seat"] if signer is None else signer
    env["sig"] = envelope_signature(base.identities[seat], env)
    return env


def seal(base: Base, rec: dict, signer: int | None = None) -> dict:
    """Sign ``rec`` as its host ``h`` (or as ``signer``)."""
    rec = dict(rec)
    rec["hsig"] = record_signature(base.identities[rec["h"] if signer is None else signer], rec)
    return rec


def with_body(base: Base, k: int, body: dict, **env_over: Any) -> dict:
    """Record ``k`` with its envelope's body (and fields) replaced, signed again by both."""
    rec = base.records[k]
    env = {**rec["env"], "body": body, **env_over}
    return seal(base, {**rec, "env": resign_env(base, env)})


def as_record(base: Base, k: int, env: dict) -> dict:
    """``env`` sequenced as record ``k`` (the original record's host, time and prev)."""
    rec = base.records[k]
    return seal(base, {**rec, "env": env})


def head_now(base: Base, k: int) -> bytes:
    return record_hash(base.records[k - 1])


@dataclass
class Spec:
    id: str
    section: str
    comment: str
    flags: list[str]
    base: str | None
    k: int | None
    next: list[Any]  # records (dict) or raw bytes
    code: str | None  # None: valid
    seat: Any = "any"  # intended seat at fault ("any": not checked)
    frame: bytes | None = None
    nonce: bytes | None = None  # a handshake case: the challenge's nonce
    file: str | None = None  # the case file (None: decided by the section)


SPECS: list[Spec] = []


def add(id_: str, section: str, comment: str, flags: list[str], base: Base | None,
        k: int | None, nxt: list[Any], code: str | None, seat: Any = "any") -> None:
    SPECS.append(Spec(id_, section, comment, flags, None if base is None else base.name, k,
                      nxt, code, seat))


def frame_case(id_: str, comment: str, flags: list[str], data: bytes, code: str | None) -> None:
    SPECS.append(Spec(id_, "4.1", comment, flags, None, None, [], code, None, data))


def flip(b: bytes, at: int = 0) -> bytes:
    return b[:at] + bytes([b[at] ^ 1]) + b[at + 1 :]


def counter_at(base: Base, k: int, seat: int) -> int:
    """The counter ``n`` the next envelope of ``seat`` must carry at record ``k``."""
    return sum(1 for r in base.records[:k] if r["env"]["seat"] == seat)


def new_env(base: Base, k: int, seat: int, body: dict, **over: Any) -> dict:
    """A fresh envelope of ``seat`` that the host sequences as record ``k``."""
    env = {"body": body, "game": base.game, "head": head_now(base, k),
           "n": counter_at(base, k, seat), "seat": seat, "sig": bytes(64), **over}
    return resign_env(base, env, signer=seat if seat < len(base.identities) else 0)


def map_bytes(d: dict, order: list[str] | None = None, over: dict[str, bytes] | None = None,
              header: bytes | None = None) -> bytes:
    """A msgpack map written by hand: keys in ``order`` (default canonical), some values given
    as raw bytes."""
    keys = order if order is not None else sorted(d, key=lambda s: s.encode())
    over = over or {}
    out = header if header is not None else bytes([0x80 | len(keys)])
    for key in keys:
        out += encode(key) + (over[key] if key in over else encode(d[key]))
    return out


