"""Session benchmark: whole hands played in memory through the full protocol.

Every seat runs a Session (its own deck table, the public observer table, the end-of-hand
audit and replay); the host sequences every envelope; bots choose the moves. For each case it
prints the CPU seconds of one hand for the whole table (every session plus the host), per
seat, the number of records, and the records per second.

Run: ``python benchmarks/bench_session.py [--quick]``. CPU time is ``time.process_time``.
"""

from __future__ import annotations

import sys
import time

from dernier_p2p.bots import HeuristicBot, RandomBot
from dernier_p2p.protocol.local import run_local_match

CASES = [("dernier", 2), ("dernier", 4), ("moderno", 4), ("standard", 4), ("originale", 4)]
QUICK = [("dernier", 4)]


def one_hand(variant: str, n: int, seed: int = 1) -> tuple[float, int]:
    pols = [HeuristicBot(k) if k % 2 else RandomBot(100 + k) for k in range(n)]
    seeds = [bytes([seed + k]) * 32 for k in range(n)]
    t = time.process_time()
    res = run_local_match(variant, n, seeds, pols, options={"match": ["hands", 1]})
    return time.process_time() - t, len(res.records)


def main() -> None:
    cases = QUICK if "--quick" in sys.argv else CASES
    print(f"{'variant':<10} {'seats':>5} {'cpu s/hand':>10} {'per seat':>9} {'records':>8} "
          f"{'rec/s':>7}")
    for variant, n in cases:
        cpu, records = one_hand(variant, n)
        print(f"{variant:<10} {n:>5} {cpu:>10.2f} {cpu / n:>9.2f} {records:>8} "
              f"{records / cpu:>7.0f}")


if __name__ == "__main__":
    main()
