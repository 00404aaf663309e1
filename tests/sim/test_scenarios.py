"""Named scenarios of the simulator, built by hand rather than drawn from a seed: each plays a
real-group match (real cryptography) and must break no invariant."""

from __future__ import annotations

import re

import pytest

from dernier_p2p.sim.faults import Kill
from dernier_p2p.sim.run import run_case
from dernier_p2p.sim.scenario import Case
from dernier_p2p.sim.speed import shared_checks
from dernier_p2p.sim.table import Setup


@pytest.mark.parametrize("speed", [0.1, 0.5])
def test_a_slow_restarted_host_hosts_again_and_nobody_is_blamed(speed: float) -> None:
    """The slow honest host (the case of ``tests/cli/test_rejoin.py::
    test_a_restarted_host_is_a_candidate_again_and_hosts_after_the_next``, on an old laptop):
    three seats, seat 2 gives no listen address. The host (seat 0, its CPU ``speed`` times the
    reference: 0.1 is the slowest the work budgets cover) loses power and comes back 5 s later
    from its own files, rebuilding its whole match; seat 1 hosts meanwhile. Then seat 1 loses
    power: the old host is the only candidate and hosts again. No invariant may break: the slow
    seat is neither timed out, voted out nor ranked below anyone for its slowness, and the match
    ends with a ranking."""
    case = Case(
        seed=7,
        setup=Setup(players=3, listens=[True, True, False], speeds=[speed, 1.0, 1.0],
                    timers={"turn_ms": 20_000, "declare_ms": 1_000, "grace_ms": 10_000},
                    options={"match": ["hands", 2]}),
        faults=[Kill(at=15_000, pid=0, until=20_000, clean=False),
                Kill(at=35_000, pid=1, until=40_000, clean=False)],
    )
    takeovers: list[tuple[int, int]] = []

    def log(pid: int, level: str, text: str) -> None:
        found = re.fullmatch(r"seat (\d) takes over from host (\d) at record \d+", text)
        if found:
            takeovers.append((int(found.group(2)), int(found.group(1))))

    with shared_checks():
        out = run_case(case, log=log)
    assert out.violations == []
    assert out.result == "ranked"
    assert takeovers == [(0, 1), (1, 0)]  # the scenario happened: 0 -> 1, then 1 -> 0
