"""Work budgets (PROTOCOL.md 18.2) against the measured cost of the work, with the real group.

The liveness rules give a seat time for the work it must do before it can answer, counted in
units (``protocol.liveness.budgets``: ``record_units`` for checking a record, ``answer_units``
for computing what the seat owes), each unit budgeted ``UNIT_MS`` = 2 ms and meant as one group
multiplication. This benchmark measures that work on this machine and prints, for each kind,
its units, the measured milliseconds, the milliseconds per unit and the margin ``UNIT_MS /
(ms per unit)``: the model is an upper bound where every margin is above 1.

How. Whole one-hand matches are played in memory (:class:`~dernier_p2p.protocol.local.LocalTable`
through ``run_local_match``, bots in every seat, the real group). Their records are then fed
again, ``--repeat`` times, to fresh sessions: an observer session (no seat), whose
``Session.receive`` of a record is the work of *checking* it (chain, signatures, schema, deck
proofs and tokens, the rules; for the secret that completes a hand's secrets, the deck audit
and the replay of the hand), and a few seat sessions, fed the same records as on a resume,
whose *answers* are timed: the time spent in the seat's own deck table (its shuffle and proof,
its tokens, key reveal, boxes, secret) and in signing the envelopes its ``receive`` returns.
Each figure is CPU time (``time.process_time_ns``); per record (or answer) the minimum and the
median over the repeats are kept, since the machine may be shared.

Columns: ``n`` instances of the kind (records, or answers of the timed seats), ``units`` (from
budgets.py), ``ms min`` the fastest instance, ``ms med`` the median instance (median over the
repeats), ``ms max`` the slowest instance (best of the repeats), ``ms/unit`` the worst instance's
milliseconds per unit, ``x mul`` that as a multiple of one group multiplication measured in the
same run, ``margin`` = UNIT_MS / ms per unit. A kind whose cost per unit is far above one
multiplication, or whose margin is below 1, is named at the end.

The reference seat sends one ``tokens`` message for a run of deals (one token per message
before 77a3da1); a message of ``k`` tokens is also timed at the deck level (an observer deck
table checking it, a seat's deck table making them; no record signatures), for a few ``k``.

Run: ``python benchmarks/bench_budgets.py [--quick] [--repeat N]`` (default 3 repeats; the full
run takes a few minutes, most of it the ten-seat table).
"""

from __future__ import annotations

import copy
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.deck import group as g
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.table import DeckTable
from dernier_p2p.protocol.envelope import Author
from dernier_p2p.protocol.liveness.budgets import UNIT_MS, answer_units, record_units
from dernier_p2p.protocol.local import identity_for, run_local_match
from dernier_p2p.protocol.session import Session
from dernier_p2p.rules.cards import deck_cards
from dernier_p2p.wire.hashing import digest

ONE_HAND = {"match": ["hands", 1]}
# (variant, seats, seed): 54 and 108 cards, boxes (moderno's swaps and rotations), a peek
# (originale's cut), and ten seats for the heaviest audit
CASES = [
    ("dernier", 3, 1),
    ("standard", 4, 1),
    ("moderno", 4, 1),
    ("originale", 4, 1),
    ("standard", 10, 1),
]
QUICK = [("dernier", 3, 1), ("moderno", 4, 1)]
TOKEN_COUNTS = (1, 8, 32)
TOKEN_SPANS = ((1, 1), (2, 4), (5, 16), (17, 64), (65, 1000))  # answers grouped by positions
FAR = 3.0  # a kind costing more than this many multiplications per unit is named


def seeds_of(n: int, seed: int) -> list[bytes]:
    return [bytes([seed * 16 + k]) * 32 for k in range(n)]


def mul_ms(reps: int = 500) -> tuple[float, float]:
    """CPU milliseconds of one ``g.mul`` and one ``g.base_mul`` (best of 5 runs)."""
    d = Drbg(b"budgets" * 5)
    ks = [d.scalar() for _ in range(reps)]
    ps = [g.base_mul(k) for k in ks]

    def per(fn: Callable[[int], object]) -> float:
        best = float("inf")
        for _ in range(5):
            t = time.process_time_ns()
            for i in range(reps):
                fn(i)
            best = min(best, (time.process_time_ns() - t) / reps / 1e6)
        return best

    return per(lambda i: g.mul(ks[i], ps[i - 1])), per(lambda i: g.base_mul(ks[i]))


# ---------------------------------------------------------------------- timing a seat's answers
class OwnWork:
    """Counts the CPU time a seat session spends in its own deck table (``seat`` not None) and
    in signing envelopes, while installed."""

    def __init__(self) -> None:
        self.ns = 0
        self._depth = 0
        self._saved: dict[tuple[type, str], Callable] = {}

    def _wrap(self, fn: Callable, own: Callable[[object], bool]) -> Callable:
        work = self

        def timed(obj, *args, **kwargs):
            if work._depth or not own(obj):
                return fn(obj, *args, **kwargs)
            work._depth += 1
            t = time.process_time_ns()
            try:
                return fn(obj, *args, **kwargs)
            finally:
                work.ns += time.process_time_ns() - t
                work._depth -= 1

        return timed

    def __enter__(self) -> OwnWork:
        for cls, name, own in (
            (DeckTable, "start", lambda t: t.seat is not None),
            (DeckTable, "receive", lambda t: t.seat is not None),
            (DeckTable, "apply", lambda t: t.seat is not None),
            (Author, "envelope", lambda a: True),
        ):
            fn = getattr(cls, name)
            self._saved[(cls, name)] = fn
            setattr(cls, name, self._wrap(fn, own))
        return self

    def __exit__(self, *exc: object) -> None:
        for (cls, name), fn in self._saved.items():
            setattr(cls, name, fn)


# ---------------------------------------------------------------------- kinds and units
@dataclass
class Kind:
    """The samples of one kind of work: per instance its units and its times over repeats."""

    units: list[int] = field(default_factory=list)
    times: list[list[float]] = field(default_factory=list)  # ms, one list per instance


def check_label(body: dict, cards: int, last_secret: bool, first_shuffle: bool, n: int) -> str:
    kind = body["type"]
    if kind == "shuffle":
        return f"shuffle, {len(body['deck'])} cards" + (" (the first)" if first_shuffle else "")
    if kind == "tokens":
        k = len(body["tokens"])
        return f"tokens, {k} token" + ("s" if k > 1 else "")
    if kind == "secret":
        return f"secret, the last: audit + replay ({n} seats, {cards} cards)" if last_secret \
            else "secret"
    if kind in ("key_reveal", "transfer", "peek", "move"):
        return kind
    return "other (accept, coin, key_commit)"


def answer_of(bodies: list[dict], cards: int, first: bool) -> tuple[str, int]:
    """The label and the units (``answer_units``) of what a seat answered."""
    owed: list[str] = []
    parts: list[str] = []
    for body in bodies:
        kind = body["type"]
        if kind == "shuffle":
            owed.append(f"shuffle epoch {body['epoch']}")
            parts.append(f"shuffle, {len(body['deck'])} cards" + (" (the first)" if first else ""))
        elif kind == "tokens":
            owed += [f"token for position {t['position']}" for t in body["tokens"]]
            parts.append("tokens")
        elif kind in ("transfer", "peek"):
            owed.append(f"{kind} of position {body['position']}")
            parts.append("box (transfer, peek)")
        else:
            owed.append(kind)
            parts.append(kind if kind in ("key_reveal", "secret", "move") else
                         "other (accept, coin, key_commit)")
    tokens = sum(len(b["tokens"]) for b in bodies if b["type"] == "tokens")
    label = " + ".join(sorted(set(parts)))
    if tokens:
        span = next(f"{lo}-{hi}" for lo, hi in TOKEN_SPANS if tokens <= hi)
        label = label.replace("tokens", "tokens for 1 position" if tokens == 1 else
                              f"tokens for {span} positions")
    return label, answer_units(owed, cards)


# ---------------------------------------------------------------------- one case
def measure_case(variant: str, n: int, seed: int, repeat: int, checks: dict[str, Kind],
                 answers: dict[str, Kind]) -> tuple[int, float]:
    """Play the case once, replay it ``repeat`` times; add its samples. Returns the number of
    records and the CPU seconds of one replay by the observer alone."""
    seeds = seeds_of(n, seed)
    res = run_local_match(variant, n, seeds, [HeuristicBot(seed * 10 + k) for k in range(n)],
                          options=ONE_HAND, order_seed=seed)
    records = res.records
    cards = len(deck_cards(res.sessions[0].rules.deck))
    bodies = [r["env"]["body"] for r in records]
    last_secret = max(i for i, b in enumerate(bodies) if b["type"] == "secret")
    first_shuffle = min(i for i, b in enumerate(bodies) if b["type"] == "shuffle")
    timed_seats = sorted({0, 1, n - 1})
    obs_ms: list[list[float]] = [[] for _ in records]
    own_ms: dict[tuple[int, int], list[float]] = defaultdict(list)
    own_out: dict[tuple[int, int], list[dict]] = {}
    observer_s = float("inf")
    for _ in range(repeat):
        obs = Session(None, None, records[0])
        t0 = time.process_time_ns()
        for i in range(1, len(records)):
            t = time.process_time_ns()
            obs.receive(records[i])
            obs_ms[i].append((time.process_time_ns() - t) / 1e6)
        observer_s = min(observer_s, (time.process_time_ns() - t0) / 1e9)
        for s in timed_seats:
            session = Session(identity_for(seeds[s]), s, records[0],
                              digest("dernier-p2p/local-seed", seeds[s]))
            with OwnWork() as work:
                for i in range(1, len(records)):
                    work.ns = 0
                    out = session.receive(records[i])
                    deck_out = [e["body"] for e in out]
                    if deck_out:
                        own_ms[(s, i)].append(work.ns / 1e6)
                        own_out[(s, i)] = deck_out
    for i in range(1, len(records)):
        label = check_label(bodies[i], cards, i == last_secret, i == first_shuffle, n)
        kind = checks.setdefault(label, Kind())
        kind.units.append(record_units(bodies[i], cards))
        kind.times.append(obs_ms[i])
    for (s, i), times in own_ms.items():
        first = any(b["type"] == "shuffle" for b in own_out[(s, i)]) and i < first_shuffle
        label, units = answer_of(own_out[(s, i)], cards, first)
        kind = answers.setdefault(label, Kind())
        kind.units.append(units)
        kind.times.append(times)
    return len(records), observer_s


# ---------------------------------------------------------------------- tokens of k positions
def deck_tokens(k: int, repeat: int) -> tuple[float, float]:
    """CPU ms (best of ``repeat``) for an observer deck table to check one ``tokens`` message
    of ``k`` tokens, and for a seat's deck table to make them (``k`` deal operations)."""
    game, hand, deck = b"bench-budgets", 1, "standard-108"
    seats = [DeckTable(game, hand, 2, deck, s, Drbg(bytes([s + 1]) * 32)) for s in range(2)]
    obs = DeckTable(game, hand, 2, deck)
    obs.start()
    queue = [m for t in seats for m in t.start()]
    while queue:
        msg = queue.pop(0)
        obs.receive(msg, msg["seat"])
        for t in seats:
            queue += t.receive(msg, msg["seat"])
    ops = [{"op": "deal", "position": p, "to": 1} for p in range(k)]
    maker = copy.deepcopy(seats[0])
    made = [m for op in ops for m in maker.apply(op)]
    for op in ops:
        obs.apply(op)
    merged = {"type": "tokens", "seat": 0, "tokens": [t for m in made for t in m["tokens"]]}
    check = make = float("inf")
    for _ in range(repeat):
        table = copy.deepcopy(obs)
        t = time.process_time_ns()
        table.receive(merged, 0)
        check = min(check, (time.process_time_ns() - t) / 1e6)
        table = copy.deepcopy(seats[0])
        t = time.process_time_ns()
        for op in ops:
            table.apply(op)
        make = min(make, (time.process_time_ns() - t) / 1e6)
    return check, make


# ---------------------------------------------------------------------- report
def rows(kinds: dict[str, Kind], mul: float) -> list[tuple[str, float, float]]:
    """Print one line per kind; return (label, worst ms per unit, margin) for each."""
    out = []
    print(f"{'kind':<52} {'n':>4} {'units':>9} {'ms min':>8} {'ms med':>8} {'ms max':>8} "
          f"{'ms/unit':>8} {'x mul':>6} {'margin':>7}")
    for label in sorted(kinds, key=lambda lb: -statistics.median(kinds[lb].units)):
        kind = kinds[label]
        best = [min(ts) for ts in kind.times]
        med = [statistics.median(ts) for ts in kind.times]
        per_unit = max(b / u for b, u in zip(best, kind.units, strict=True))
        lo, hi = min(kind.units), max(kind.units)
        units = f"{lo}" if lo == hi else f"{lo}-{hi}"
        margin = UNIT_MS / per_unit
        flag = ""
        if margin < 1:
            flag = "  OVER BUDGET"
        elif per_unit > FAR * mul:
            flag = "  far above"
        print(f"{label:<52} {len(best):>4} {units:>9} {min(best):>8.3f} "
              f"{statistics.median(med):>8.3f} {max(best):>8.3f} {per_unit:>8.4f} "
              f"{per_unit / mul:>6.2f} {margin:>7.1f}{flag}")
        out.append((label, per_unit, margin))
    return out


def overall(kinds: dict[str, Kind]) -> float:
    """Total ms (best of the repeats) over total units."""
    ms = sum(min(ts) for k in kinds.values() for ts in k.times)
    units = sum(u for k in kinds.values() for u in k.units)
    return ms / units


def main() -> None:
    quick = "--quick" in sys.argv
    repeat = 3
    if "--repeat" in sys.argv:
        repeat = int(sys.argv[sys.argv.index("--repeat") + 1])
    cases = QUICK if quick else CASES
    mul, base = mul_ms()
    print(f"reference, this run (CPU): g.mul {mul * 1e3:.1f} us, g.base_mul {base * 1e3:.1f} us;"
          f" budget: UNIT_MS = {UNIT_MS} ms = {UNIT_MS / mul:.1f} x g.mul")
    print(f"repeats: {repeat}; CPU time per record (checks) or answer, best/median of repeats")
    checks: dict[str, Kind] = {}
    answers: dict[str, Kind] = {}
    for variant, n, seed in cases:
        t = time.process_time()
        count, observer = measure_case(variant, n, seed, repeat, checks, answers)
        print(f"  {variant}, {n} seats, seed {seed}: {count} records; one observer replay "
              f"{observer:.2f} s; case {time.process_time() - t:.1f} s CPU")
    print()
    print("checking a record (an observer session's receive)")
    flagged = rows(checks, mul)
    print()
    print("answering (a seat's own deck table and signatures, during its receive)")
    flagged += rows(answers, mul)
    print()
    print("a tokens message of k tokens at the deck level (no record signatures), best of "
          f"{max(repeat, 5)}:")
    print(f"{'k':>4} {'check ms':>9} {'units':>6} {'ms/unit':>8} {'margin':>7}   "
          f"{'make ms':>8} {'units':>6} {'ms/unit':>8} {'margin':>7}")
    for k in TOKEN_COUNTS:
        check, make = deck_tokens(k, max(repeat, 5))
        cu = record_units({"type": "tokens", "tokens": [None] * k}, 108)
        mu = answer_units(["token"] * k, 108)
        print(f"{k:>4} {check:>9.3f} {cu:>6} {check / cu:>8.4f} {UNIT_MS * cu / check:>7.1f}   "
              f"{make:>8.3f} {mu:>6} {make / mu:>8.4f} {UNIT_MS * mu / make:>7.1f}")
    print()
    c, a = overall(checks), overall(answers)
    both = {**{f"c {k}": v for k, v in checks.items()}, **{f"a {k}": v for k, v in answers.items()}}
    total = overall(both)
    print(f"all work of these matches, total ms / total units: checks {c:.4f} ms per unit, "
          f"answers {a:.4f}, both {total:.4f} ({total / mul:.2f} x g.mul; margin "
          f"{UNIT_MS / total:.1f})")
    low = min(m for _, _, m in flagged)
    far = [label for label, per_unit, m in flagged if per_unit > FAR * mul or m < 1]
    if low >= 1:
        print(f"the model is an upper bound for every kind measured: smallest margin {low:.1f}")
    else:
        over = [label for label, _, m in flagged if m < 1]
        print(f"the model is NOT an upper bound: margin below 1 for {'; '.join(over)}")
    if far:
        print(f"far above one multiplication per unit (> {FAR:g} x g.mul): {'; '.join(far)}")


if __name__ == "__main__":
    main()
