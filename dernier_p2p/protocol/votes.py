"""Votes on absence and on the host (PROTOCOL.md 7.5, 7.6): signing, and the offline check of
the votes a ``timeout``, ``left``, ``no_contest`` or ``host_change`` record carries.

A vote is ``{"seat": voter, "after": i, "sig": 64 bytes}`` with
``sig = sign("dernier-p2p/vote", {"after", "game", "kind", "seat", "target"})``. ``kind`` is
``timeout``, ``left``, ``depose`` or ``abandon``; ``target`` the absent seat (the replaced host
for ``depose``, nil for ``abandon``). A record at index ``r`` carrying votes is valid only if
each vote verifies (``BAD_SIGNATURE``), comes from a distinct seat at the table that is not the
target (``WRONG_SEAT``), and is fresh: ``since <= after < r``, where ``since`` is the last index
at which the target showed itself (authored a record other than a ``chat``, and for
``timeout`` other than an ``ack``; for ``depose``, signed one) or a record of the same kind for
the same target was used, and for ``abandon`` the last record other than a ``chat`` or an
``ack`` (``STALE_VOTE``). It needs ``q(m) = m // 2 + 1`` such
votes, ``m`` the seats at the table (``NO_QUORUM``). Every fault names the record's signer.

Pure and deterministic: nothing here knows about time; the client's policy (when to vote) is
the network layer's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.frames import FRAME_FIELDS
from dernier_p2p.wire.identity import BadSignature, IdentityKey, Verified, verify

VOTE_LABEL = "dernier-p2p/vote"
VOTE_KEYS = frozenset({"seat", "after", "sig"})
VOTE_KINDS = ("timeout", "left", "depose", "abandon")
RECORD_KIND = {"timeout": "timeout", "left": "left", "host_change": "depose",
               "no_contest": "abandon"}
"""The vote kind each vote-carrying body needs."""
CENSOR_MS = 10_000
"""An envelope the host has not sequenced for this long is evidence of censorship (7.5)."""


def stuck_ms(timers: Mapping[str, int], censor_ms: int = CENSOR_MS) -> int:
    """How long a seat waits without any record before it votes ``abandon`` (7.5): longer
    than any wait of a table that follows the protocol takes to end (a time-out or censorship
    seen, then up to two grace periods for the votes and a host change)."""
    return max(timers["turn_ms"], censor_ms) + 2 * timers["grace_ms"]


def quorum(m: int) -> int:
    """Votes needed at a table of ``m`` seats: a strict majority, ``floor(m / 2) + 1``."""
    return m // 2 + 1


def statement(game: bytes, kind: str, target: int | None, seat: int, after: int) -> dict:
    """The map a vote signs."""
    return {"after": after, "game": game, "kind": kind, "seat": seat, "target": target}


def sign_vote(
    identity: IdentityKey, game: bytes, kind: str, target: int | None, seat: int, after: int
) -> dict[str, Any]:
    """Seat ``seat``'s vote that ``target`` is absent (``kind``), having seen nothing of it
    since record ``after``."""
    if kind not in VOTE_KINDS:
        raise ValueError(f"no vote kind {kind!r}")
    sig = identity.sign(VOTE_LABEL, statement(game, kind, target, seat, after))
    return {"seat": seat, "after": after, "sig": sig}


def vote_ok(
    vote: Mapping[str, Any], key: bytes, game: bytes, kind: str, target: int | None,
    verified: Verified | None = None,
) -> bool:
    """Whether a (well-formed) vote's signature verifies under ``key``."""
    try:
        verify(key, VOTE_LABEL, statement(game, kind, target, vote["seat"], vote["after"]),
               vote["sig"], verified)
    except BadSignature:
        return False
    return True


def check_votes(
    votes: Sequence[Mapping[str, Any]],
    *,
    kind: str,
    target: int | None,
    index: int,
    since: int,
    at_table: frozenset[int] | set[int],
    keys: Mapping[int, bytes],
    game: bytes,
    fault: int | None,
    verified: Verified | None = None,
) -> None:
    """Check the votes of a record at ``index`` (see the module docstring); raises
    ProtocolError naming ``fault``. ``since``: the last index where ``target`` showed itself or
    a record of this kind for it was used (-1 if none)."""
    seen: set[int] = set()
    for vote in votes:
        voter = vote["seat"]
        if voter not in keys or not vote_ok(vote, keys[voter], game, kind, target, verified):
            raise ProtocolError("BAD_SIGNATURE", fault, f"the {kind} vote of seat {voter}")
        if voter not in at_table or voter == target:
            raise ProtocolError("WRONG_SEAT", fault, f"seat {voter} may not vote {kind} here")
        if voter in seen:
            raise ProtocolError("WRONG_SEAT", fault, f"seat {voter} votes twice")
        seen.add(voter)
        after = vote["after"]
        if not since <= after < index:
            detail = (f"the {kind} vote of seat {voter} is after record {after}; "
                      f"it must be at least {since} and before {index}")
            raise ProtocolError("STALE_VOTE", fault, detail)
    need = quorum(len(at_table))
    if len(seen) < need:
        detail = f"{kind}: {len(seen)} votes, {need} needed of {len(at_table)} seats"
        raise ProtocolError("NO_QUORUM", fault, detail)


class Tally:
    """Votes collected by the seat that will sequence a record (the host, or the next host for
    ``depose``): the newest vote of each voter for each ``(kind, target)``."""

    def __init__(self) -> None:
        self._votes: dict[tuple[str, int | None], dict[int, dict[str, Any]]] = {}

    def add(self, kind: str, target: int | None, vote: dict[str, Any]) -> None:
        self._votes.setdefault((kind, target), {})[vote["seat"]] = vote

    def holds(self, kind: str, target: int | None, vote: dict[str, Any]) -> bool:
        """Whether ``vote`` is the one held for its voter (a vote sent again: checked, and
        counted, once)."""
        return self._votes.get((kind, target), {}).get(vote["seat"]) == vote

    def fresh(self, kind: str, target: int | None, since: int, index: int) -> list[dict]:
        """The votes for ``(kind, target)`` still valid for a record at ``index``, by seat."""
        got = self._votes.get((kind, target), {})
        return [v for s, v in sorted(got.items()) if since <= v["after"] < index]

    def keys(self) -> list[tuple[str, int | None]]:
        """The ``(kind, target)`` pairs with votes."""
        return list(self._votes)

    def drop(self, kind: str, target: int | None) -> None:
        self._votes.pop((kind, target), None)


def vote_frame(kind: str, target: int | None, vote: dict[str, Any]) -> dict[str, Any]:
    """The ``vote`` frame carrying ``vote`` to the host or the next host (4.1)."""
    return {"k": "vote", "kind": kind, "target": target, "vote": vote}


def check_vote_frame(msg: Mapping[str, Any], n: int) -> tuple[str, int | None, dict[str, Any]]:
    """``(kind, target, vote)`` of a well-formed ``vote`` frame at a table of ``n`` seats;
    ProtocolError MALFORMED (no seat named) otherwise. The signature is not checked here."""

    def seat(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < n

    kind, target, vote = msg.get("kind"), msg.get("target"), msg.get("vote")
    ok = (
        set(msg) == FRAME_FIELDS["vote"]
        and kind in VOTE_KINDS
        and (target is None if kind == "abandon" else seat(target))
        and isinstance(vote, dict)
        and set(vote) == VOTE_KEYS
        and seat(vote["seat"])
        and isinstance(vote["after"], int)
        and not isinstance(vote["after"], bool)
        and -1 <= vote["after"] < 2**63
        and isinstance(vote["sig"], bytes)
        and len(vote["sig"]) == 64
    )
    if not ok:
        raise ProtocolError("MALFORMED", None, "a vote frame is {kind, target, vote} (4.1, 7.5)")
    return kind, target, dict(vote)
