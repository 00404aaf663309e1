"""Session benchmark: whole hands played in memory through the full protocol.

Every seat runs a Session (its own deck table, the public observer table, the end-of-hand
audit and replay); the host sequences every envelope; bots choose the moves. For each case it
prints the CPU seconds for the whole table (every session plus the host) and per seat of

* the set-up: from the table record to the moment the first seat can move (accepts, dealer
  coin, key setup, every shuffle with its proof checked, the deal);
* one whole hand (set-up, play, the end-of-hand reveal and audit);

then the number of records of the hand and the records per second. Figures are the best of
``--repeat N`` runs (default 3): the machine may be shared, so the least disturbed run counts.

Run: ``python benchmarks/bench_session.py [--quick] [--repeat N]``. CPU time is
``time.process_time``.
"""

from __future__ import annotations

import sys
import time

from dernier_p2p.bots import HeuristicBot, RandomBot
from dernier_p2p.protocol.local import LocalTable, run_local_match

CASES = [("dernier", 2), ("dernier", 4), ("moderno", 4), ("standard", 4), ("originale", 4)]
QUICK = [("dernier", 4)]
OPTIONS = {"match": ["hands", 1]}


def _seeds(n: int, seed: int) -> list[bytes]:
    return [bytes([seed + k]) * 32 for k in range(n)]


def set_up(variant: str, n: int, seed: int = 1) -> float:
    """CPU seconds from the table record until the first seat can move."""
    t = time.process_time()
    table = LocalTable(variant, _seeds(n, seed), OPTIONS)
    table.deliver()
    cpu = time.process_time() - t
    assert any(s.legal() for s in table.sessions), "no seat can move after the set-up"
    return cpu


def one_hand(variant: str, n: int, seed: int = 1) -> tuple[float, int]:
    """CPU seconds of one whole hand, and its number of records."""
    pols = [HeuristicBot(k) if k % 2 else RandomBot(100 + k) for k in range(n)]
    t = time.process_time()
    res = run_local_match(variant, n, _seeds(n, seed), pols, options=OPTIONS)
    return time.process_time() - t, len(res.records)


def main() -> None:
    cases = QUICK if "--quick" in sys.argv else CASES
    repeat = 3
    if "--repeat" in sys.argv:
        repeat = int(sys.argv[sys.argv.index("--repeat") + 1])
    print(f"best of {repeat} runs, CPU seconds")
    print(f"{'variant':<10} {'seats':>5} {'set-up':>7} {'per seat':>9} {'hand':>7} "
          f"{'per seat':>9} {'records':>8} {'rec/s':>7}")
    for variant, n in cases:
        setup = min(set_up(variant, n) for _ in range(repeat))
        runs = [one_hand(variant, n) for _ in range(repeat)]
        cpu, records = min(runs)
        print(f"{variant:<10} {n:>5} {setup:>7.2f} {setup / n:>9.3f} {cpu:>7.2f} "
              f"{cpu / n:>9.3f} {records:>8} {records / cpu:>7.0f}")


if __name__ == "__main__":
    main()
