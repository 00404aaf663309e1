"""An arena of bots: seeded one-hand and whole matches, seats rotated, win shares with 95 %
confidence intervals, decisions per second and think times.

Run: python benchmarks/bench_bots.py --bots search,heuristic [--variants dernier,standard,...]
     [--players 2,4] [--hands 2000] [--matches 0] [--seed 0] [--csv FILE]

``--results FILE`` appends one JSON line per hand or match (the deal's seed, the rotation,
whether the first bot won): two arms run with the same ``--seed`` play the same deals with the
same bots' seeds, so ``benchmarks/paired_arms.py`` can compare them deal by deal.

``--bots A,B``: the lineup; seat k plays the k-th name, and when there are fewer names than
seats the last fills the rest (``search,heuristic`` at 4 seats is one search bot against three
heuristic bots). A name is a level (easy, normal, strong), a bot (random, heuristic, search)
or a search with its budget (``search@200`` worlds, ``search@0.25s`` seconds per decision).
``open:`` before a search's name (``open:search``) shows that search every other seat's hand
(not the pile) through the arena's dealer: no table can give a bot that, so it measures what
the hidden cards cost the search, deal by deal against the same search without it.

Each deal is played once with every rotation of the lineup round the table (the same seed, so
the same deal, with each bot in each seat): ``--hands N`` plays N one-hand matches per cell, in
rounds of one deal per rotation, and ``--matches M`` M whole matches of the variant's own
format. A hand's winner is the winner of its one-hand match (the seat that went out, else the
best score). The share printed is the first bot's: the hands it won over the hands played, with
its fair share (its seats over the table's); the 95 % interval is Wilson's, which treats the
hands as independent; rotations of one deal are if anything negatively correlated (a good deal
wins for whoever holds it), so the interval is on the wide side.

Think time is the wall-clock time (``time.perf_counter``) of each call of the first bot's
policy, in turn or out of turn, over every cell; the median and 95th percentile are printed over
the calls that chose among several moves (a search) and over all calls, with decisions per
second (all calls over their total time). Single process; nothing runs in parallel.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dernier_p2p.bots.levels import make_bot
from dernier_p2p.bots.search import SearchBot
from dernier_p2p.bots.view import Policy
from dernier_p2p.rules import BUILD, Card, MatchFormat, Move, State, get_variant
from dernier_p2p.rules.simulate import Dealer, play_match

VARIANTS = ("dernier", "standard", "moderno", "originale")
OPEN = "open:"
"""Before a search's name: that search sees every other seat's hand (the module docstring)."""
Z95 = 1.959963984540054


def wilson(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a share of ``wins`` in ``n`` (two-sided, ``z``)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, nearest rank; NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1))
    return ordered[k]


@dataclass
class Clock:
    """Think times of one bot: every call, and the calls that weighed several moves."""

    calls: list[float] = field(default_factory=list)
    searched: list[float] = field(default_factory=list)

    def timed(self, policy: Callable[[State, int, Mapping[int, Card]], Move | None]) -> Callable:
        def wrapped(state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
            start = time.perf_counter()
            move = policy(state, seat, view)
            spent = time.perf_counter() - start
            self.calls.append(spent)
            last = getattr(policy, "last", None)
            if last is None or getattr(last, "searched", False):
                self.searched.append(spent)
            return move

        return wrapped


@dataclass
class Cell:
    """One variant at one table size: what the first bot won."""

    variant: str
    players: int
    kind: str  # "hands" or "matches"
    played: int = 0
    wins: int = 0
    seconds: float = 0.0
    clock: Clock = field(default_factory=Clock)

    def line(self, names: list[str], fair: float) -> str:
        lo, hi = wilson(self.wins, self.played)
        share = self.wins / self.played if self.played else float("nan")
        lineup = " vs ".join(_lineup(names, self.players))
        think = self.clock.searched
        return (
            f"{self.variant:<10} {self.players:>2} seats {self.kind:<7} {self.played:>6}  "
            f"{100 * share:5.1f} %  [{100 * lo:4.1f}, {100 * hi:4.1f}]  fair {100 * fair:4.1f} %"
            f"  think {_median(think):.3f}/{percentile(think, 0.95):.3f} s"
            f"  {self.seconds:7.0f} s  {lineup}"
        )


def make(name: str, seed: int, dealer: Dealer | None = None) -> Policy:
    """The bot ``name`` names (a ValueError for a bad name); an ``open:`` search is shown
    the hands ``dealer`` dealt to every seat but its own (none yet without a dealer)."""
    if not name.startswith(OPEN):
        return make_bot(name, seed)
    bot = make_bot(name[len(OPEN):], seed)
    if not isinstance(bot, SearchBot):
        raise ValueError(f"{name!r}: only a search can be shown the other hands (open:search)")
    remember = bot._remember

    def seeing(state: State, seat: int, view: Mapping[int, Card]) -> dict[int, Card]:
        known = dict(remember(state, seat, view))
        if dealer is not None:
            for other in range(state.players):
                if other != seat:
                    known.update(dealer.view(state, other))
        return known

    bot._remember = seeing  # type: ignore[method-assign]
    return bot


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _lineup(names: list[str], players: int) -> list[str]:
    return [names[min(k, len(names) - 1)] for k in range(players)]


def run_cell(
    names: list[str], variant: str, players: int, kind: str, count: int, seed: int,
    progress: Callable[[str], None], results: Callable[[dict], None] | None = None,
) -> Cell:
    """Play ``count`` hands (one-hand matches) or whole matches, every rotation of each deal."""
    rules = get_variant(variant)
    if kind == "hands":
        rules = get_variant(variant, match=MatchFormat("hands", 1))
    cell = Cell(variant, players, kind)
    clock = cell.clock
    lineup = _lineup(names, players)
    start = time.perf_counter()
    deal = 0
    while cell.played < count:
        game_seed = seed * 1_000_003 + deal
        for rotation in range(players):
            if cell.played >= count:
                break
            policies = []
            first_seats = []
            dealer = Dealer(rules, game_seed)  # (as play_match would make it: the same deal)
            for seat in range(players):
                k = (seat - rotation) % players  # the lineup's k-th bot sits at this seat
                bot = make(lineup[k], game_seed * 16 + seat, dealer)
                if k == 0:
                    first_seats.append(seat)
                    policies.append(clock.timed(bot))
                else:
                    policies.append(bot)
            state, _ = play_match(rules, players, policies, seed=game_seed, dealer=dealer)
            if not state.match_over:
                raise RuntimeError(f"{variant} seed {game_seed} did not end")
            cell.played += 1
            cell.wins += state.winner in first_seats
            if results is not None:
                results({"variant": variant, "players": players, "kind": kind,
                         "seed": game_seed, "rotation": rotation,
                         "won": int(state.winner in first_seats)})
        deal += 1
        if deal % 10 == 0:
            progress(f"  {variant} {players} seats {kind}: {cell.played}/{count}, first bot "
                     f"{100 * cell.wins / cell.played:.1f} %")
    cell.seconds = time.perf_counter() - start
    return cell


CSV_HEADER = ("lineup,variant,players,kind,played,wins,ci_low,ci_high,seconds,"
              "think_median,think_p95,load,finished")


def _append_csv(path: str, bots: str, cell: Cell) -> None:
    """Append ``cell``'s figures to the CSV at ``path`` (with a header when it is new): the
    share's interval, the think time's median and p95 over the searched calls, the load
    average and the time (UTC) the cell finished."""
    lo, hi = wilson(cell.wins, cell.played)
    think = cell.clock.searched
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", encoding="utf-8") as f:
        if new:
            f.write(CSV_HEADER + "\n")
        f.write(f"{bots.replace(',', ' ')},{cell.variant},{cell.players},{cell.kind},"
                f"{cell.played},{cell.wins},{lo:.4f},{hi:.4f},{cell.seconds:.1f},"
                f"{_median(think):.4f},{percentile(think, 0.95):.4f},{load:.2f},"
                f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", default="search,heuristic",
                        help="the lineup, first bot first (default: search,heuristic)")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--players", default="2,4", help="table sizes (default 2,4)")
    parser.add_argument("--hands", type=int, default=200, help="one-hand matches per cell")
    parser.add_argument("--matches", type=int, default=0, help="whole matches per cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--csv", default=None,
                        help="also append each cell's figures here (a header when new)")
    parser.add_argument("--results", default=None,
                        help="also append one JSON line per hand or match played here (its "
                             "deal's seed, the rotation, whether the first bot won), for "
                             "benchmarks/paired_arms.py")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.bots.split(",") if n.strip()]
    try:
        for name in names:
            make(name, 0)
        variants = [v.strip() for v in args.variants.split(",") if v.strip()]
        for v in variants:
            get_variant(v)
        sizes = [int(p) for p in args.players.split(",")]
    except ValueError as exc:
        parser.error(str(exc))
    if len(names) < 2:
        parser.error("--bots needs at least two names")

    def progress(text: str) -> None:
        if not args.quiet:
            print(text, file=sys.stderr, flush=True)

    results = None
    if args.results:
        out = open(args.results, "a", encoding="utf-8")  # noqa: SIM115 - open for the run

        def results(row: dict) -> None:
            out.write(json.dumps({"bots": args.bots, **row}) + "\n")
            out.flush()

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# bench_bots: {' vs '.join(names)}; engine {BUILD}; Python "
          f"{platform.python_version()}; {os.cpu_count()} CPUs; load {load:.1f}; "
          f"seed {args.seed}; {time.strftime('%Y-%m-%d %H:%M')}")
    print("# variant  seats  kind   played  first bot  95 % CI       fair      think median/p95"
          "   wall  lineup")
    clock = Clock()
    cells: list[Cell] = []
    for variant in variants:
        rules = get_variant(variant)
        for players in sizes:
            if not rules.min_players <= players <= rules.max_players:
                continue
            lineup = _lineup(names, players)
            fair = 1 / players
            for kind, count in (("hands", args.hands), ("matches", args.matches)):
                if count <= 0:
                    continue
                cell = run_cell(names, variant, players, kind, count, args.seed, progress,
                                results)
                cells.append(cell)
                clock.calls += cell.clock.calls
                clock.searched += cell.clock.searched
                print(cell.line(lineup, fair), flush=True)
                if args.csv:
                    _append_csv(args.csv, args.bots, cell)
    calls, searched = clock.calls, clock.searched
    if calls:
        total = sum(calls)
        print(f"# {names[0]}: {len(calls)} calls, {len(calls) / total:.1f} decisions/s; "
              f"think time median {statistics.median(calls):.3f} s, p95 "
              f"{percentile(calls, 0.95):.3f} s, max {max(calls):.3f} s")
        if searched and len(searched) != len(calls):
            print(f"# {names[0]}, {len(searched)} calls that weighed several moves: median "
                  f"{statistics.median(searched):.3f} s, p95 {percentile(searched, 0.95):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
