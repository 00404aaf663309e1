"""A match from a seed: its table (:class:`~.table.Setup`) and its fault schedule.

:func:`draw` turns one integer into a :class:`Case`, reproducibly (its own
``random.Random(seed)``, nothing else). The mix, with its probabilities, is documented in
docs/LIVENESS.md ("The fault mix"); the constants below are its source.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from dernier_p2p.sim.faults import (
    INF,
    NAMES,
    Fault,
    Freeze,
    Hostile,
    Kill,
    Latency,
    OneWay,
    Partition,
    Reset,
    SlowCpu,
    Stall,
)
from dernier_p2p.sim.table import Setup

PLAYERS = {2: 14, 3: 32, 4: 22, 5: 11, 6: 7, 7: 5, 8: 4, 9: 3, 10: 2}
VARIANTS = {"dernier": 70, "originale": 10, "moderno": 10, "standard": 10}
HAND_SIZE = {"dernier": 5, "originale": 7, "moderno": 8, "standard": 7}
FAULT_COUNT = {0: 25, 1: 30, 2: 25, 3: 12, 4: 8}
FAULTS = {"latency": 10, "stall": 12, "one-way": 8, "partition": 12, "reset": 8, "kill": 18,
          "freeze": 5, "slow-cpu": 5, "hostile": 15}
HOST_STRATEGIES = {"forge": 15, "equivocate": 15, "censor": 25, "stall": 20, "mute": 25}
SEAT_STRATEGIES = {"withhold": 30, "flood": 20, "leave": 15, "resign": 10, "false-votes": 25}


@dataclass
class Case:
    """One simulated match: the seed of its world (network jitter, bots' thinking), its table
    and its faults. Its ``repr`` is a Python literal (see :func:`parse`)."""

    seed: int
    setup: Setup
    faults: list[Fault] = field(default_factory=list)


def parse(text: str) -> Case:
    """The :class:`Case` a ``repr`` printed (a regression test's literal)."""
    names: dict[str, Any] = dict(NAMES)
    names.update(Case=Case, Setup=Setup)
    return eval(text, {"__builtins__": {}}, names)  # noqa: S307 - our own literals


def _pick(rng: random.Random, weights: dict[Any, int]) -> Any:
    keys = list(weights)
    return rng.choices(keys, weights=[weights[k] for k in keys])[0]


def draw_setup(rng: random.Random) -> Setup:
    players = _pick(rng, PLAYERS)
    variants = dict(VARIANTS)
    if players > 8:
        variants.pop("dernier")
    variant = _pick(rng, variants)
    options: dict[str, Any] = {"match": ["hands", 1 if rng.random() < 0.85 else 2]}
    big = players >= 6  # (big tables play small hands: they cost the most)
    if variant == "originale":
        lo = rng.randint(2, 3 if big else 4)
        options["hand_size_range"] = [lo, lo + rng.randint(0, 1 if big else 2)]
    elif big or rng.random() < 0.8:
        options["hand_size"] = rng.randint(2, 3 if big else HAND_SIZE[variant])
    timers = {"turn_ms": rng.randint(2_000, 20_000), "declare_ms": rng.randint(200, 1_000),
              "grace_ms": rng.randint(2_000, 15_000)}
    listens = [rng.random() < 0.85 for _ in range(players)]
    speeds = None
    r = rng.random()
    if r < 0.05:
        speeds = [1.0] * players
        speeds[rng.randrange(players)] = round(rng.uniform(0.02, 0.2), 3)
    elif r < 0.25:
        speeds = [round(rng.uniform(0.5, 2.0), 2) for _ in range(players)]
    clocks = []
    wide = rng.random() < 0.3
    for _ in range(players):
        rate = rng.randint(-10_000, 10_000) if wide else rng.randint(-200, 200)
        offset = rng.randint(0, 10**9)
        wall = 1_700_000_000_000 + rng.randint(-120_000, 120_000) - offset
        clocks.append((rate, offset, wall))
    return Setup(players=players, variant=variant, options=options, timers=timers,
                 listens=listens, speeds=speeds, clocks=clocks)


def _span(rng: random.Random) -> int:
    """A fault's duration: mostly short, some long, a few for good."""
    r = rng.random()
    if r < 0.05:
        return INF
    if r < 0.2:
        return rng.randint(20_000, 90_000)
    return rng.randint(200, 20_000)


def _until(at: int, span: int) -> int:
    return INF if span >= INF else at + span


def draw_faults(rng: random.Random, setup: Setup) -> list[Fault]:
    n = setup.players
    horizon = 3_000 + 2_500 * n  # about how long a short match runs
    faults: list[Fault] = []
    hostile: set[int] = set()
    for _ in range(_pick(rng, FAULT_COUNT)):
        kind = _pick(rng, FAULTS)
        at = rng.randint(0, horizon)
        a = rng.randrange(n)
        b = rng.choice([p for p in range(n) if p != a])
        if kind == "latency":
            faults.append(Latency(at=at, a=a, b=b, latency_ms=rng.randint(10, 400),
                                  jitter_ms=rng.randint(0, 200),
                                  until=_until(at, _span(rng))))
        elif kind == "stall":
            faults.append(Stall(at=at, src=a, dst=b, until=_until(at, _span(rng))))
        elif kind == "one-way":
            faults.append(OneWay(at=at, src=a, dst=b, until=_until(at, _span(rng))))
        elif kind == "partition":
            size = rng.randint(1, max(1, n - 1))
            group = tuple(sorted(rng.sample(range(n), size)))
            faults.append(Partition(at=at, group=group, until=_until(at, _span(rng))))
        elif kind == "reset":
            faults.append(Reset(at=at, a=a, b=b))
        elif kind == "kill":
            r = rng.random()
            victims = [0] if r < 0.4 else [min(1, n - 1)] if r < 0.65 else \
                [0, 1] if r < 0.8 else [a]
            for pid in victims:
                back = INF if rng.random() < 0.2 else at + rng.randint(500, 20_000)
                faults.append(Kill(at=at + rng.randint(0, 300) * (pid != victims[0]), pid=pid,
                                   until=back, clean=rng.random() < 0.8))
        elif kind == "freeze":
            faults.append(Freeze(at=at, pid=a, until=at + rng.randint(500, 25_000)))
        elif kind == "slow-cpu":
            faults.append(SlowCpu(at=at, pid=a, speed=round(rng.uniform(0.01, 0.5), 3),
                                  until=_until(at, _span(rng))))
        elif kind == "hostile":
            faults.extend(_hostile(rng, setup, at, hostile))
    return faults


def _hostile(rng: random.Random, setup: Setup, at: int, hostile: set[int]) -> list[Fault]:
    n = setup.players
    room = max(1, (n - 1) // 2) - len(hostile)  # cheaters stay a minority
    if room <= 0:
        return []
    if rng.random() < 0.5 and 0 not in hostile:
        kind = _pick(rng, HOST_STRATEGIES)
        target = rng.randrange(1, n)
        hostile.add(0)
        return [Hostile(at=at, pid=0, kind=kind, target=target)]
    kind = _pick(rng, SEAT_STRATEGIES)
    free = [p for p in range(n) if p not in hostile]
    if kind == "false-votes":
        size = rng.randint(1, room)
        pids = sorted(rng.sample(free, min(size, len(free))))
        honest = [p for p in range(n) if p not in hostile and p not in pids]
        target = rng.choice(honest) if honest else None
    else:
        pick = 1 if 1 in free and rng.random() < 0.5 else rng.choice(free)
        pids, target = [pick], None
    hostile.update(pids)
    return [Hostile(at=at, pid=p, kind=kind, target=target) for p in pids]


def draw(seed: int) -> Case:
    """The match of ``seed``: its table and fault schedule."""
    rng = random.Random(seed)
    setup = draw_setup(rng)
    return Case(seed=seed, setup=setup, faults=draw_faults(rng, setup))


def draw_small(seed: int) -> Case:
    """A cheap match of ``seed`` for the test suite's sample with the real group: two to four
    seats, one hand of two or three cards, mostly the 54-card ``dernier`` deck; the timers,
    processes and faults drawn as by :func:`draw`."""
    rng = random.Random(seed)
    setup = draw_setup(rng)
    players = rng.choice([2, 2, 3, 3, 3, 4])
    variant = "dernier" if rng.random() < 0.9 else rng.choice(["originale", "moderno",
                                                                "standard"])
    size = 2 if rng.random() < 0.7 else 3
    options: dict[str, Any] = {"match": ["hands", 1]}
    if variant == "originale":
        options["hand_size_range"] = [size, size]
    else:
        options["hand_size"] = size
    setup.players, setup.variant, setup.options = players, variant, options
    for name in ("listens", "speeds", "clocks"):
        value = getattr(setup, name)
        if value is not None:
            value = (value * players)[:players]
            setattr(setup, name, value)
    return Case(seed=seed, setup=setup, faults=draw_faults(rng, setup))
