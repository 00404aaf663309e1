"""The simulation's cost model (sim/costs.py): a work item costs the units of the record it
checks (PROTOCOL.md 18.2) at the process's speed; a copy of a record the seat holds already
costs one unit, as the node only compares its hash."""

from __future__ import annotations

from dernier_p2p.protocol.liveness.budgets import record_units
from dernier_p2p.protocol.node.peer import PeerNode
from dernier_p2p.sim.costs import Costs
from dernier_p2p.wire.hashing import digest
from tests.protocol.liveness import Bed


def _bed() -> Bed:
    """Records 0 (the table), 1, 2, 3 (accepts), 4, 5, 6 (coin commitments)."""
    bed = Bed.opened()
    bed.accept(0, 2, 1)
    for seat in (0, 1, 2):
        bed.put(bed.take(seat, "coin_commit"))
    return bed


def test_a_lent_copy_of_a_held_record_costs_one_unit() -> None:
    bed = _bed()
    t = bed.t
    node = PeerNode.seated(t.identities[2], digest("dernier-p2p/local-seed", t.seeds[2]),
                           bed.records[:4], 0, connected=True)
    node.take()
    for lender in (1, 0):  # two seats lend the same two records
        for rec in bed.records[4:6]:
            node.from_link(lender, rec, 10)
    assert len(node.queue) == 4
    costs = Costs(unit_ms=10.0)
    units = [record_units(r["env"]["body"], 54) for r in bed.records[4:6]]
    assert min(units) > 1
    seen = []
    while node.has_work():
        seen.append(costs.work_ms(node, 0.5))
        node.work(10)
    # the first copies are checked (units at 10 ms, at half speed); the second ones are held
    assert seen == [units[0] * 20, units[1] * 20, 20, 20]
    assert node.own.last == 5
