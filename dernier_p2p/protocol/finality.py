"""Finality of records: which seats a chain shows holding a record (PROTOCOL.md 7.11).

A record is *final* in a chain once the chain shows ``q(m)`` seats holding it: the host that
signed it or any later record of the chain, and the author of every later envelope whose head
echo is that record or a later one. Any quorum that deposes a host shares a seat with such a
quorum, and a new host gathers the records of the seats whose votes it uses (7.6), so no
``host_change`` replaces a final record. Two histories that split at index ``j`` are judged
here: a seat on a history whose records from ``j`` on are not final, shown another whose
records from ``j`` on are, goes over to it. Pure functions of record lists; no keys are
checked here (the records are checked as any others when applied).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dernier_p2p.protocol.envelope import record_hash
from dernier_p2p.protocol.votes import quorum


def holders(records: Sequence[dict[str, Any]], j: int) -> set[int]:
    """The seats ``records`` show holding record ``j``: the signer of every record at ``j``
    or later, and the author of every envelope after ``j`` whose head is a record at ``j``
    or later. Malformed entries show nothing."""
    if not 0 <= j < len(records):
        return set()
    late: set[bytes] = set()
    seats: set[int] = set()
    for rec in records[j:]:
        try:
            h, env = rec["h"], rec["env"]
            late.add(record_hash(rec))
        except (KeyError, TypeError, ValueError):
            return seats
        if isinstance(h, int):
            seats.add(h)
        if rec is records[j]:
            continue
        head = env.get("head") if isinstance(env, dict) else None
        if isinstance(head, bytes) and head in late and isinstance(env.get("seat"), int):
            seats.add(env["seat"])
    return seats


def is_final(records: Sequence[dict[str, Any]], j: int, m: int) -> bool:
    """Whether record ``j`` of ``records`` is final at a table of ``m`` seats (``q(m)``
    holders). At ``m <= 2`` no quorum deposes a host, so every record is final."""
    if m <= 2:
        return 0 <= j < len(records)
    return len(holders(records, j)) >= quorum(m)


def split(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]]) -> int | None:
    """The first index at which ``a`` and ``b`` hold different records (by their host
    signatures), or None where one is a prefix of the other."""
    for i in range(min(len(a), len(b))):
        ra, rb = a[i], b[i]
        if not isinstance(ra, dict) or not isinstance(rb, dict) or ra.get("hsig") != rb.get("hsig"):
            return i
    return None


def goes_over(own: Sequence[dict[str, Any]], other: Sequence[dict[str, Any]], m: int) -> bool:
    """Whether a seat holding ``own`` goes over to ``other``: they split at some index ``j``,
    ``other`` shows record ``j`` final and ``own`` does not (a seat never leaves a final
    record, and never goes over to a history that is not proven)."""
    j = split(own, other)
    if j is None or j == 0:
        return False
    return is_final(other, j, m) and not is_final(own, j, m)
