"""Proposed changes to the liveness rules, to try in the simulator only (docs/LIVENESS.md,
"Design gaps").

``with proposed_rules(): ...`` runs a block with every proposal of :data:`PROPOSALS` in force,
so that a failing match can be told apart: one that passes under them fails by a known gap of
the rules, one that still fails is a bug to look into (``python -m dernier_p2p.sim`` reports the
first as ``GAP``). A proposal is a context manager that patches the liveness machines for the
block; it is removed from here once the rules adopt it.

The first three, tried here, are now the rules (511b486, 023af12): D1, ``stuck_ms`` counting a
silent connection's discovery and a probe, and the stuck clock waiting for every awaited seat's
limit; D2, a seat in failover after a lost connection trying its old host too; D3, a seat in
failover trying every candidate. So is G9's: a candidate keeping its connection to the old host
until its ``host_change`` is sequenced, and playing on through it when it steps back. None is
pending.

Simulation only; process-wide while the block runs; not thread-safe.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

PROPOSALS: tuple[Callable[[], AbstractContextManager[None]], ...] = ()
"""The proposed rule changes pending (none)."""


@contextmanager
def proposed_rules() -> Iterator[None]:
    """Run the block with every pending proposal in force (see the module docstring)."""
    with contextlib.ExitStack() as stack:
        for proposal in PROPOSALS:
            stack.enter_context(proposal())
        yield
