"""The simulator's judgement of who stayed connected to a majority (sim/invariants.py)."""

from __future__ import annotations

from dernier_p2p.sim.faults import Partition
from dernier_p2p.sim.invariants import Judge
from dernier_p2p.sim.scenario import parse

# Seed 800663: three seats; seat 1 floods (a cheater) and is cut off with honest seat 2 from
# the host for 7.7 s. Seat 2 was on the side with two of three seats, but one of them the
# cheater: the host's timeout vote, honest from where it stood, and the cheater's made a quorum.
CASE = (
    "Case(seed=800663, setup=Setup(players=3, variant='dernier', options={'match': ['hands', 2],"
    " 'hand_size': 4}, timers={'turn_ms': 2795, 'declare_ms': 670, 'grace_ms': 7393}, "
    "listens=[False, True, True], speeds=None, clocks=[(7218, 649615751, 1699350373759), "
    "(2836, 123973887, 1699876011005), (-717, 383308056, 1699616576867)], constants={}), "
    "faults=[Hostile(at=1325, pid=1, kind='flood', target=None, until=1442), "
    "Partition(at=1008, group=(1, 2), until=8711)])"
)


def test_a_partition_touches_the_side_without_a_majority():
    assert Partition(at=0, group=(1, 2), until=9).touches(3) == {0}
    assert Partition(at=0, group=(0, 1), until=9).touches(4) == {0, 1, 2, 3}  # neither side
    assert Partition(at=0, group=(0, 1, 2), until=9).touches(5) == {3, 4}


def test_with_cheaters_a_side_needs_a_majority_of_honest_seats():
    split = Partition(at=0, group=(1, 2), until=9)
    assert split.touches_among(3, frozenset({1})) == {0, 1, 2}
    assert split.touches_among(3, frozenset({0})) == {0}  # the cheater on the minority side
    five = Partition(at=0, group=(0, 1, 2), until=9)
    assert five.touches_among(5, frozenset({1})) == {0, 1, 2, 3, 4}
    assert five.touches_among(5, frozenset({4})) == {3, 4}
    assert five.touches_among(5, frozenset()) == five.touches(5)


def test_an_honest_seat_cut_off_with_a_cheater_is_not_protected():
    case = parse(CASE)
    judge = Judge(case.setup, case.faults)
    assert judge.cheaters == {1} and judge.honest == {0, 2}
    assert not judge.connected(2, 5_000)  # during the partition
    assert 2 not in judge.protected
    without = [f for f in case.faults if isinstance(f, Partition)]
    assert Judge(case.setup, without).connected(2, 5_000)  # no cheater: the majority side
