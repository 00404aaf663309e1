"""Shared fixtures of the protocol tests: fixed identities, a table body, a small game."""

from __future__ import annotations

from dernier_p2p.protocol.envelope import Author, genesis_hash, record_hash
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.protocol.votes import sign_vote
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.version import PROTOCOL_VERSION

GAME = bytes(range(16))


def identities(n: int) -> list[IdentityKey]:
    """Fixed identity keys: seat s has the seed 32 bytes of ``s + 1``."""
    return [IdentityKey.generate(bytes([s + 1]) * 32) for s in range(n)]


def table_body(keys: list[bytes]) -> dict:
    return {
        "type": "table",
        "version": PROTOCOL_VERSION,
        "variant": "dernier",
        "options": {"match": "hands"},
        "players": [
            {"name": f"player {s}", "key": k, "listen": ["127.0.0.1", 7000 + s] if s else None}
            for s, k in enumerate(keys)
        ],
        "timers": {"turn_ms": 30000, "declare_ms": 3000, "grace_ms": 1000},
    }


class Game:
    """A host sequencer at seat 0 and an author per seat, started with the table and accepts."""

    def __init__(self, n: int = 3, accept: bool = True) -> None:
        self.n = n
        self.ids = identities(n)
        self.keys = [k.public_bytes() for k in self.ids]
        self.authors = [Author(k, GAME, s) for s, k in enumerate(self.ids)]
        self.seq = Sequencer(self.ids[0], GAME, 0)
        self.t = 1000
        self.submit(0, table_body(self.keys), genesis_hash(GAME))
        if accept:
            table = record_hash(self.seq.records[0])
            for s in range(1, n):
                self.submit(s, {"type": "accept", "table": table})

    def envelope(self, seat: int, body: dict, head: bytes | None = None) -> dict:
        """A signed envelope of ``seat`` echoing ``head`` (default: the host's head)."""
        return self.authors[seat].envelope(body, self.seq.head if head is None else head)

    def submit(self, seat: int, body: dict, head: bytes | None = None) -> dict:
        self.t += 10
        return self.seq.submit(self.envelope(seat, body, head), seat, self.t)

    def votes(self, kind: str, target: int | None, voters: list[int], after: int | None = None
              ) -> list[dict]:
        """Votes of ``voters`` about ``target``, each stating record ``after`` (default: the
        host's last record)."""
        at = len(self.seq.records) - 1 if after is None else after
        return [sign_vote(self.ids[v], GAME, kind, target, v, at) for v in voters]
