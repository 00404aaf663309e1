"""The cost model of the simulation: how long a piece of work takes a simulated process.

Work is counted in the units of PROTOCOL.md 18.2 (one group multiplication each,
:mod:`dernier_p2p.protocol.liveness.budgets`); a unit costs ``unit_ms`` on a process of speed 1
(0.1 ms: what it measures on the reference machine, ``benchmarks/bench_budgets.py``), and
``unit_ms / speed`` on a slower one. Applying a record costs the work of checking it, plus, when
it makes this seat compute its own shuffle, the work of that shuffle; a record this seat holds
already (every lender lends the same records, 4.6) costs one unit, as the node only compares its
hash.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dernier_p2p.protocol.liveness.budgets import record_units
from dernier_p2p.protocol.node.peer import queued_record
from dernier_p2p.rules.cards import deck_cards


@dataclass(frozen=True)
class Costs:
    unit_ms: float = 0.1

    def work_ms(self, node: Any, speed: float) -> int:
        """The virtual time of ``node``'s next work item on a process of ``speed``."""
        units = 1
        item = None
        own = node.own
        if node.rebuild is not None:
            cards = _cards(own)
            units = sum(record_units(r["env"]["body"], cards) for r in node.rebuild
                        if isinstance(r, dict) and isinstance(r.get("env"), dict))
        elif node.hosting_now and node.host is not None:
            for kind, _, it, _ in node.host.inbox:
                if node.host.gathering and kind != "fwd":
                    continue
                item = it if kind == "fwd" else {"env": it}
                break
        elif node.queue:
            item = queued_record(node.queue[0])
        if item is not None and own is not None:
            env = item.get("env") if isinstance(item, dict) else None
            body = env.get("body") if isinstance(env, dict) else None
            i = item.get("i") if isinstance(item, dict) else None
            if isinstance(i, int) and not isinstance(i, bool) and 0 <= i <= own.last:
                pass  # held already (a second lender's copy, a raced resume): a hash compared
            elif isinstance(body, dict):
                cards = _cards(own)
                units = record_units(body, cards)
                if body.get("type") in ("shuffle", "key_reveal"):
                    units += 8 * cards + 8  # this seat's own shuffle may follow
        return max(1, int(units * self.unit_ms / max(speed, 1e-6)))


def _cards(own: Any) -> int:
    if own is None:
        return 54
    return len(deck_cards(own.session.rules.deck))
