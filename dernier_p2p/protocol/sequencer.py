"""Host-side sequencing (sans-IO): envelopes in, host-signed records out.

:meth:`Sequencer.submit` takes an envelope that arrived on the connection of ``from_seat``,
checks it as every peer will check it in its record (author == ``from_seat``, game id, author
signature, counter, head echo, body schema; see :mod:`.chain`), and on success appends and returns
the next record. On a fault it raises :class:`ProtocolError` naming ``from_seat`` and the chain is
unchanged. The first envelope must be the host's own ``table``; the player keys come from it.

A host that takes over after a host failure builds its sequencer from the records it holds
(``records=``) and submits its own ``host_change`` envelope first. A host sequences a table of
this protocol's version alone; ``versions`` widens that for tests and the conformance suite's
generator, which record matches of older versions (PROTOCOL.md 20).
"""

from __future__ import annotations

from collections.abc import Sequence

from dernier_p2p.protocol.chain import ChainChecker
from dernier_p2p.protocol.envelope import check_envelope, make_record
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.messages import validate_body
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.version import PROTOCOL_VERSION


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class Sequencer:
    """Orders, timestamps and signs the records of one game as host ``host_seat``."""

    def __init__(
        self,
        host_identity: IdentityKey,
        game: bytes,
        host_seat: int,
        *,
        records: Sequence[dict] = (),
        player_keys: Sequence[bytes] | None = None,
        versions: tuple[int, ...] = (PROTOCOL_VERSION,),
    ) -> None:
        if not _is_int(host_seat) or not 0 <= host_seat < 10:
            raise ValueError("the host seat is a seat number")
        self.identity, self.game, self.host_seat = host_identity, game, host_seat
        self.public = host_identity.public_bytes()
        self.player_keys = None if player_keys is None else list(player_keys)
        self.versions = tuple(versions)
        self._records: list[dict] = []
        self.chain: ChainChecker | None = None
        for rec in records:
            if self.chain is None:
                env = rec.get("env") if isinstance(rec, dict) else None
                keys = self._table_keys(env.get("body") if isinstance(env, dict) else None, None)
                self.chain = ChainChecker(game, keys, keys, versions=self.versions)
            self.chain.feed(rec)
            self._records.append(rec)
        if self.chain is not None and self.chain.player_keys.get(host_seat) != self.public:
            raise ValueError("the host identity is not the key of the host seat")

    # ------------------------------------------------------------------ queries
    @property
    def records(self) -> list[dict]:
        """Every record sequenced (or resumed) so far, in order (a copy of the list)."""
        return list(self._records)

    def records_since(self, i: int, seat: int | None = None) -> list[dict]:
        """Records ``i`` onwards, for a peer resuming with ``i`` records; asking beyond the end
        is ``BAD_CHAIN`` naming ``seat``."""
        if not _is_int(i) or not 0 <= i <= len(self._records):
            raise ProtocolError("BAD_CHAIN", seat, f"asks for records from {i!r}")
        return self._records[i:]

    @property
    def head(self) -> bytes | None:
        """Hash of the last record (None before the table)."""
        return None if self.chain is None else self.chain.head

    # ------------------------------------------------------------------ sequencing
    def _table_keys(self, body: object, fault: int | None) -> list[bytes]:
        players = body.get("players") if isinstance(body, dict) else None
        if not isinstance(players, list) or not 2 <= len(players) <= 10:
            raise ProtocolError("MALFORMED", fault, "the first record is a table of 2 to 10 seats")
        validate_body(body, self.host_seat if fault is None else fault, len(players),
                      versions=self.versions)
        keys = [p["key"] for p in players]
        if self.player_keys is not None and keys != self.player_keys:
            raise ProtocolError("TABLE_MISMATCH", fault, "the table lists other player keys")
        return keys

    def _start(self, env: object, from_seat: int) -> None:
        env = check_envelope(env, from_seat)
        if from_seat != self.host_seat or env["seat"] != from_seat:
            raise ProtocolError("WRONG_SEAT", from_seat, "the host's table comes first")
        body = env["body"]
        if body.get("type") != "table":
            raise ProtocolError("BAD_CHAIN", from_seat, "record 0 is the table")
        keys = self._table_keys(body, from_seat)
        if self.host_seat >= len(keys) or keys[self.host_seat] != self.public:
            raise ProtocolError("TABLE_MISMATCH", from_seat, "the table lists another host key")
        self.chain = ChainChecker(self.game, keys, keys, host=self.host_seat,
                                  versions=self.versions)

    def submit(self, envelope: object, from_seat: int, now_ms: int) -> dict:
        """Sequence ``envelope`` received from seat ``from_seat``'s connection at ``now_ms``."""
        if not _is_int(now_ms) or now_ms < 0:
            raise ValueError("now_ms is a non-negative integer")
        fresh = self.chain is None
        if fresh:
            self._start(envelope, from_seat)
        chain = self.chain
        assert chain is not None
        try:
            env = chain.check_envelope(envelope, from_seat)
            if env["seat"] != from_seat:
                raise ProtocolError(
                    "WRONG_SEAT", from_seat, f"envelope of seat {env['seat']} on this connection"
                )
            kind = env["body"]["type"]
            if kind == "host_change" and from_seat != self.host_seat:
                raise ProtocolError("WRONG_SEAT", from_seat, "a host change from another seat")
            if chain.host != self.host_seat and kind != "host_change":
                raise ProtocolError("BAD_CHAIN", from_seat, "this seat does not host yet")
            last = chain.last_t or 0
            rec = make_record(
                self.identity, env, self.host_seat, chain.next_index, chain.head, max(now_ms, last)
            )
            chain.feed(rec)
        except ProtocolError:
            if fresh:
                self.chain = None
            raise
        self._records.append(rec)
        return rec
