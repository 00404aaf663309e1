"""The finality fuzz target (PROTOCOL.md 7.11): two histories of a real three-seat match with a
host change, the second one's records from a random index on mutated, dropped, repeated or
shuffled, and a table size that may be anything.

:mod:`dernier_p2p.protocol.finality` reads records a peer was sent and has not yet checked (a
new host's rebuild, a replaced host's stale records): its functions must answer for any
input, never raise (any exception is a crash here, a documented error included), and agree
with themselves: no two histories each go over to the other, a history never goes over to
itself, and a record is final only if it has holders.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from dernier_p2p.fuzz.mutate import mutate_value
from dernier_p2p.protocol.finality import goes_over, holders, is_final, split


def make(records: list[dict[str, Any]], rng: random.Random) -> tuple[list[Any], list[Any], Any]:
    """``(own, other, m)``: ``own`` a prefix of ``records``, ``other`` a copy of it (or of a
    longer prefix) changed from a random index on."""
    n = len(records)
    own = [copy.deepcopy(r) for r in records[: rng.randrange(2, n + 1)]]
    other = [copy.deepcopy(r) for r in records[: rng.randrange(2, n + 1)]]
    j = rng.randrange(1, len(other))
    for _ in range(rng.choice((1, 1, 2, 4))):
        k = rng.randrange(j, len(other))
        how = rng.random()
        if how < 0.55:
            try:
                other[k] = mutate_value(other[k], rng)
            except (OverflowError, ValueError, TypeError):  # (mutated before: no msgpack copy)
                pass
        elif how < 0.7:
            del other[k]
            if len(other) <= j:
                break
        elif how < 0.8:
            other.insert(k, copy.deepcopy(other[rng.randrange(len(other))]))
        elif how < 0.9:
            tail = other[j:]
            rng.shuffle(tail)
            other[j:] = tail
        else:
            other[k] = rng.choice([None, 7, b"x", [], {}, {"h": 0}, {"env": None, "h": 1}])
    m = rng.choice([2, 3, 3, 3, 4, 7, 10, 0, -1, 11, True, None, "3"])
    return own, other, m


def run(case: tuple[list[Any], list[Any], Any]) -> None:
    own, other, m = case
    try:
        _check(own, other, m)
    except AssertionError:
        raise
    except BaseException as exc:  # noqa: BLE001 - every exception here is a crash
        raise RuntimeError(f"finality raised {type(exc).__name__}: {exc}") from exc


def _check(own: list[Any], other: list[Any], m: Any) -> None:
    j = split(own, other)
    assert j == split(other, own), "split is not symmetric"
    assert not goes_over(own, own, m) if isinstance(m, int) else True
    if isinstance(m, int) and not isinstance(m, bool) and m >= 2:
        a, b = goes_over(own, other, m), goes_over(other, own, m)
        assert not (a and b), "two histories each go over to the other"
        for recs in (own, other):
            for i in {0, len(recs) - 1, j or 0}:
                held = holders(recs, i)
                assert all(isinstance(s, int) for s in held)
                if m > 2 and is_final(recs, i, m):
                    assert held, "final without holders"
    else:
        for recs in (own, other):
            holders(recs, len(recs) - 1)
