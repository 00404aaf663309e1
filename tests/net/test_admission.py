"""Admission control: caps on pending connections evict the oldest, never the newcomer."""

from __future__ import annotations

import resource

import pytest
import trio

from dernier_p2p.net.admission import Admission, Limits, raise_nofile_limit


async def test_per_address_cap_evicts_the_oldest_of_that_address() -> None:
    gate = Admission(Limits(max_pending=10, per_address=2, handshake_s=5))
    a1, a2, b1 = gate.enter("a"), gate.enter("a"), gate.enter("b")
    a3 = gate.enter("a")
    assert a1.evicted and a1.scope.cancel_called
    assert not (a2.evicted or a3.evicted or b1.evicted)
    assert gate.pending == 3 and gate.evictions == 1


async def test_total_cap_evicts_from_the_busiest_address() -> None:
    gate = Admission(Limits(max_pending=4, per_address=4, handshake_s=5))
    b = gate.enter("b")
    flood = [gate.enter("f") for _ in range(3)]
    newcomer = gate.enter("c")  # total cap: the oldest of "f" goes, not "b"
    assert flood[0].evicted and not b.evicted and not newcomer.evicted
    assert gate.pending == 4


async def test_release_frees_the_slot_once() -> None:
    gate = Admission(Limits(max_pending=2, per_address=2, handshake_s=5))
    with gate.enter("a") as t:
        assert gate.pending == 1
    t.release()  # twice is harmless
    assert gate.pending == 0
    gate.enter("a"), gate.enter("a")
    assert gate.pending == 2


async def test_a_pending_slot_has_the_handshake_deadline() -> None:
    gate = Admission(Limits(handshake_s=0.05))
    ticket = gate.enter("a")
    with ticket.scope:
        await trio.sleep(10)
    assert ticket.scope.cancelled_caught and not ticket.evicted


def test_limits_are_checked() -> None:
    for bad in ((0, 0, 1.0), (2, 3, 1.0), (2, 1, 0)):
        with pytest.raises(ValueError):
            Limits(*bad)


def test_raise_nofile_limit_reaches_the_hard_limit() -> None:
    soft, hard = raise_nofile_limit()
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == soft
    assert soft == min(hard, 65536) or hard == resource.RLIM_INFINITY
