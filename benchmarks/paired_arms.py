"""Two arms of the bot arena compared deal by deal.

Run: python benchmarks/paired_arms.py A.jsonl B.jsonl

Each file is what ``bench_bots.py --results FILE`` wrote for one arm (say ``--bots
search,heuristic`` and ``--bots search-blind,heuristic``, with the same ``--seed``, variant and
table size). The same seed deals the same cards in the same order to the same seats, and seeds
every bot alike, so the two arms' results differ only where their first bots chose differently:
the hands both arms played (matched by variant, table size, kind, deal seed and rotation) are
compared one by one. Printed: each arm's share of those hands, the difference in points with
its 95 % interval (normal, from the per-hand differences' spread) and the number of hands
whose result differed. Paired so, a gain shows in fewer hands than with two separate shares.
"""

from __future__ import annotations

import json
import math
import sys

Z95 = 1.959963984540054


def load(path: str) -> dict[tuple, int]:
    """The hands of one arm's results file: (variant, players, kind, seed, rotation) -> won."""
    out: dict[tuple, int] = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                row = json.loads(line)
                key = (row["variant"], row["players"], row["kind"], row["seed"],
                       row["rotation"])
                won = row["won"]
            except (ValueError, KeyError, TypeError):
                raise SystemExit(f"{path}:{n}: not a line of bench_bots.py --results") from None
            if won not in (0, 1):
                raise SystemExit(f"{path}:{n}: won must be 0 or 1")
            out[key] = won
    return out


def compare(a: dict[tuple, int], b: dict[tuple, int]) -> str:
    """The paired comparison of arms ``a`` and ``b``, as a line of text."""
    keys = sorted(set(a) & set(b))
    n = len(keys)
    if n < 2:
        return f"{n} hands in common: nothing to compare"
    diffs = [a[k] - b[k] for k in keys]
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    half = Z95 * math.sqrt(var / n)
    share_a = sum(a[k] for k in keys) / n
    share_b = sum(b[k] for k in keys) / n
    differed = sum(1 for d in diffs if d)
    return (f"{n} hands in common: A {100 * share_a:.1f} %, B {100 * share_b:.1f} %; "
            f"A - B {100 * mean:+.1f} points, 95 % interval [{100 * (mean - half):+.1f}, "
            f"{100 * (mean + half):+.1f}]; {differed} hands differed")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        arms = [load(p) for p in args]
    except OSError as exc:
        print(f"cannot read {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    print(compare(*arms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
