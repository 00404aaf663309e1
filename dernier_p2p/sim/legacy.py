"""Cases recorded before seats answered a run of deals, peeks and opens at once (PROTOCOL.md 15).

A shrunk case holds its faults at fixed times, so it fails again only on the records, and
the timings, it was found with. ``with answers_each(): ...`` makes every session created
meanwhile answer each operation alone, as the clients of those cases did (the regression
cases of ``tests/sim/test_regressions.py`` run so). Simulation only; not thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from dernier_p2p.protocol import session as _session


@contextmanager
def answers_each() -> Iterator[None]:
    """Sessions created inside answer one operation a ``tokens`` message."""
    before = _session.ANSWER_RUNS
    _session.ANSWER_RUNS = False
    try:
        yield
    finally:
        _session.ANSWER_RUNS = before
