"""The simulator's judgement of who stayed connected to a majority (sim/invariants.py)."""

from __future__ import annotations

from dernier_p2p.sim.faults import Partition
from dernier_p2p.sim.invariants import Judge
from dernier_p2p.sim.scenario import parse
from tests.sim.test_regressions import CASES

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


# Seed 801386: five seats, cheater 1 flooding votes; (0,1,2)/(3,4), then (1,2,4)/(0,3). Host 0
# with seat 3 and the cheater's votes, and seat 2 taking over with seat 4 and the cheater's,
# each made a quorum of three: two histories, each valid (PROTOCOL.md 22).
SPLIT = CASES["a-cheater-on-both-sides-of-a-split"][1]


def test_cheaters_fork_a_split_only_with_two_quorums_sharing_no_honest_seat():
    # two quorums of q(n) share 2 * q(n) - n seats: one at an odd n, two at an even n
    five = Partition(at=0, group=(1, 2, 4), until=9)
    assert five.forks_among(5, frozenset({1}))  # {2, 4} + 1 and {0, 3} + 1: three each
    assert not five.forks_among(5, frozenset())  # no quorum without a seat voting twice
    assert not Partition(at=0, group=(0, 1, 2), until=9).forks_among(5, frozenset({4}))
    four = Partition(at=0, group=(0, 1), until=9)
    assert not four.forks_among(4, frozenset({0}))  # {1} + 1 = 2 < q(4) = 3
    assert four.forks_among(4, frozenset({0, 2}))
    assert Partition(at=0, group=(1, 2), until=9).forks_among(3, frozenset({1}))
    assert not Partition(at=0, group=(1,), until=9).forks_among(3, frozenset({1}))


def _rec(sig: bytes, signer: int) -> dict:
    return {"hsig": sig, "h": signer, "env": {"seat": signer, "body": {"type": "ack"}}}


def test_histories_may_split_only_within_a_split_the_cheaters_can_fork():
    case = parse(SPLIT)
    judge = Judge(case.setup, case.faults)
    assert judge.forks and judge.forks[0][0] == 14887
    base, a, b = _rec(b"r0", 0), _rec(b"a1", 0), _rec(b"b1", 2)
    judge.first_seen = {b"r0": 1_000, b"a1": 21_675, b"b1": 33_128}
    assert judge._diverge([base, a], [base, b]) is None  # within the cuts
    judge.first_seen = {b"r0": 1_000, b"a1": 5_000, b"b1": 5_100}
    assert judge._diverge([base, a], [base, b]) is not None  # before them
    honest = Judge(case.setup, [f for f in case.faults if isinstance(f, Partition)])
    assert not honest.forks  # without the cheater no side has a quorum of its own


def test_overlapping_partitions_are_judged_together():
    """Seed 900217: seven seats, the host's side (0, 3, 5, 6) of one partition lost seat 6 to a
    second one: no group held a majority, so the host was not connected to one."""
    setup = parse(CASE).setup
    seven = type(setup)(**{**setup.__dict__, "players": 7, "listens": None, "speeds": None,
                           "clocks": None})
    big = Partition(at=6_232, group=(0, 3, 5, 6), until=23_325)
    alone = Partition(at=6_985, group=(6,), until=24_742)
    assert 0 not in big.touches(7) and 0 not in alone.touches(7)  # each alone: the majority
    judge = Judge(seven, [big, alone])
    assert judge.connected(0, 6_500)  # before the second cut
    assert not judge.connected(0, 7_000) and not judge.connected(1, 7_000)
    assert judge.connected(1, 24_742 + judge.settle_ms + 1)
    assert Judge(seven, [big]).connected(0, 7_000)


def test_only_verdicts_up_to_the_end_record_can_have_ranked_a_seat():
    from dernier_p2p.sim.invariants import ranking_verdicts

    def rec(i, body):
        return {"i": i, "env": {"body": body}}

    records = [
        rec(5, {"type": "move"}),
        rec(6, {"type": "timeout", "seat": 2}),
        rec(7, {"type": "left", "seat": 1}),  # the end (a `dernier` leave ends the match)
        rec(8, {"type": "ack"}),
        rec(9, {"type": "left", "seat": 2}),  # after the end: it ranks nobody
        rec(10, {"type": "host_change", "old": 0, "new": 3}),
    ]
    assert ranking_verdicts(records, 7) == {2: 1, 1: 1}
    assert ranking_verdicts(records, 6) == {2: 1}
    assert ranking_verdicts(records, None) == {2: 2, 1: 1, 0: 1}
