"""Rules-engine throughput: random complete hands per variant, and RLCard's UNO side by side.

Run: python benchmarks/bench_rules.py [--seconds S] [--variants dernier,standard,...]

A *move* is one seat decision applied: legal-move generation for the seat to act, a seeded
random choice among those moves (a play is preferred to a draw, as RLCard's UNO does by only
offering "draw" when nothing can be played) and the application of the move. Chance moves
(dealer choice, shuffles, flips, reveals) are answered by the simulation dealer; they are not
counted as moves but their time is included. A *hand* runs from the deal until the hand is
scored. RLCard (optional, ``pip install .[bench]``) plays 4-player UNO games with uniformly random
legal actions; one ``step`` is one move there. Single process, one core, timed in CPU seconds of
the process. Each figure is the best of ``--repeat`` rounds, our standard variant and RLCard
taking turns, so a busy machine skews the ratio less. A line says which build of the engine ran
(``rules.BUILD``: compiled, or pure Python; ``DERNIER_PURE_PYTHON=1`` forces the pure one).
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from dataclasses import dataclass

from dernier_p2p import rules
from dernier_p2p.rules import simulate

# Throughput is measured in CPU time of this process, so other work on a shared machine
# (which only delays us) does not count; the parts of --breakdown are timed with perf_counter.
cpu_clock = time.process_time

VARIANT_PLAYERS = {"dernier": 4, "standard": 4, "moderno": 4, "originale": 4}


@dataclass
class Figures:
    """Throughput of one run."""

    label: str
    hands: int
    moves: int
    seconds: float
    turns: int = 0  # moves less the play or pass that follows a seat's own draw

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.seconds

    @property
    def hands_per_s(self) -> float:
        return self.hands / self.seconds

    @property
    def moves_per_s(self) -> float:
        return self.moves / self.seconds

    def line(self) -> str:
        return (
            f"{self.label:<28} {self.hands_per_s:>10.0f} hands/s {self.moves_per_s:>10.0f} moves/s"
            f"   ({self.hands} hands, {self.moves} moves, {self.moves / self.hands:.1f} moves/hand,"
            f" {self.seconds:.1f} s)"
        )


_DRAW_OR_PASS = (rules.Draw, rules.Pass)


def _pick(rng: random.Random, items: list, n: int) -> object:
    """One of the first ``n`` items, uniformly (both engines' random players use this)."""
    return items[int(rng.random() * n)]


def _random_seat_move(rng: random.Random, moves: list) -> object:
    """A uniformly random play if one is legal, else a random other move.

    ``legal_moves`` lists a seat's plays first, then its draw or pass, then any declaration
    or catch; in the common case (nothing after the draw or pass) the plays are all but the
    last move."""
    n = len(moves) - 1
    if moves[n].__class__ in _DRAW_OR_PASS:
        return _pick(rng, moves, n) if n else moves[n]
    plays = [m for m in moves if m.__class__ is rules.Play]
    return _pick(rng, plays, len(plays)) if plays else _pick(rng, moves, len(moves))


def bench_variant(name: str, players: int, seconds: float, seed: int = 1) -> Figures:
    """Play random hands of `name` for about `seconds`; each hand is a fresh one-hand match."""
    rule_set = rules.get_variant(name, match=rules.MatchFormat("hands", 1))
    rng = random.Random(seed)
    apply, legal_moves, chance_needed, to_act = (
        rules.apply,
        rules.legal_moves,
        rules.chance_needed,
        rules.to_act,
    )
    hands = moves = turns = 0
    start = cpu_clock()
    deadline = start + seconds
    while True:
        dealer = simulate.Dealer(rule_set, rng.getrandbits(64))
        state = rules.new_match(rule_set, players)
        while not state.match_over:
            request = chance_needed(state)
            if request is not None:
                state, _ = apply(state, dealer.chance_move(state, request))
                continue
            seat = to_act(state)
            choice = _random_seat_move(rng, legal_moves(state, seat, dealer.view(state, seat)))
            if state.drawn < 0:  # not the play or pass of a card just drawn: a new turn
                turns += 1
            state, _ = apply(state, choice)
            moves += 1
        hands += 1
        if cpu_clock() >= deadline:
            break
    return Figures(f"{name} ({players} players)", hands, moves, cpu_clock() - start, turns)


def bench_rlcard(seconds: float, seed: int = 1) -> Figures | None:
    """RLCard's UNO engine, 4 players, uniformly random legal actions; None if not installed."""
    try:
        from rlcard.games.uno.game import UnoGame
    except ImportError:
        return None
    rng = random.Random(seed)
    game = UnoGame(num_players=4)
    game.np_random.seed(seed)
    games = moves = 0
    start = cpu_clock()
    deadline = start + seconds
    while True:
        state, _ = game.init_game()
        while not game.is_over():
            legal = state["legal_actions"]
            state, _ = game.step(_pick(rng, legal, len(legal)))
            moves += 1
        games += 1
        if cpu_clock() >= deadline:
            break
    # a step is a whole turn: a draw plays or keeps the drawn card in the same step
    return Figures("RLCard UNO (4 players)", games, moves, cpu_clock() - start, moves)


def breakdown_ours(name: str, players: int, hands: int, seed: int = 1) -> dict[str, float]:
    """Microseconds per counted move spent in each part of the loop (timed inline)."""
    rule_set = rules.get_variant(name, match=rules.MatchFormat("hands", 1))
    rng = random.Random(seed)
    clock = time.perf_counter
    parts = dict.fromkeys(("chance", "view", "legal_moves", "choice", "apply"), 0.0)
    by_kind: dict[str, list[float]] = {}
    moves = 0
    for _ in range(hands):
        dealer = simulate.Dealer(rule_set, rng.getrandbits(64))
        state = rules.new_match(rule_set, players)
        while not state.match_over:
            t0 = clock()
            request = rules.chance_needed(state)
            if request is not None:
                state, _ = rules.apply(state, dealer.chance_move(state, request))
                parts["chance"] += clock() - t0
                continue
            seat = rules.to_act(state)
            view = dealer.view(state, seat)
            t1 = clock()
            legal = rules.legal_moves(state, seat, view)
            t2 = clock()
            choice = _random_seat_move(rng, legal)
            t3 = clock()
            state, _ = rules.apply(state, choice)
            t4 = clock()
            parts["view"] += t1 - t0
            parts["legal_moves"] += t2 - t1
            parts["choice"] += t3 - t2
            parts["apply"] += t4 - t3
            entry = by_kind.setdefault(f"apply {type(choice).__name__}", [0.0, 0])
            entry[0] += t4 - t3
            entry[1] += 1
            moves += 1
    out = {k: v * 1e6 / moves for k, v in parts.items()}
    for kind, (spent, count) in sorted(by_kind.items()):
        out[f"  {kind}: {count / moves:.0%} of moves, us each"] = spent * 1e6 / count
    return out


def breakdown_rlcard(games: int, seed: int = 1) -> dict[str, float] | None:
    """RLCard's step split into its rules update and its observation (with legal actions)."""
    try:
        from rlcard.games.uno.game import UnoGame
    except ImportError:
        return None
    rng = random.Random(seed)
    game = UnoGame(num_players=4)
    game.np_random.seed(seed)
    clock = time.perf_counter
    parts = dict.fromkeys(("deal", "proceed_round", "get_state (legal actions)", "choice"), 0.0)
    moves = 0
    for _ in range(games):
        t0 = clock()
        state, _ = game.init_game()
        parts["deal"] += clock() - t0
        while not game.is_over():
            t0 = clock()
            legal = state["legal_actions"]
            action = _pick(rng, legal, len(legal))
            t1 = clock()
            game.round.proceed_round(game.players, action)
            t2 = clock()
            state = game.get_state(game.round.current_player)
            t3 = clock()
            parts["choice"] += t1 - t0
            parts["proceed_round"] += t2 - t1
            parts["get_state (legal actions)"] += t3 - t2
            moves += 1
    return {k: v * 1e6 / moves for k, v in parts.items()}


def print_breakdown(hands: int, seed: int, seconds: float) -> None:
    """Each part's share of a move (timed inline with perf_counter), scaled to the CPU time per
    move of the same loop run without the inline timers for ``seconds``."""
    print(
        f"Time per counted move: share timed inline over {hands} hands, and microseconds of CPU"
        f" time (the share of an uninstrumented {seconds:g} s run):"
    )
    for name, figures, plain in (
        (
            "standard, 4 players",
            breakdown_ours("standard", 4, hands, seed),
            lambda: bench_variant("standard", 4, seconds, seed),
        ),
        (
            "RLCard UNO, 4 players",
            breakdown_rlcard(hands, seed),
            lambda: bench_rlcard(seconds, seed),
        ),
    ):
        if figures is None:
            print(f"  {name}: not installed")
            continue
        inline = sum(v for k, v in figures.items() if not k.startswith(" "))
        cpu = 1e6 / plain().moves_per_s
        scale = cpu / inline
        print(f"  {name}: {cpu:.2f} us of CPU time a move")
        for part, us in figures.items():
            if part.startswith(" "):
                print(f"    {part:<50} {us * scale:6.2f}")
            else:
                print(f"    {part:<42} {us / inline:5.0%} {us * scale:6.2f}")


def best(runs: list[Figures]) -> Figures:
    """The fastest round (the one least disturbed by other work on the machine)."""
    return max(runs, key=lambda f: f.moves_per_s)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per round")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per figure (best kept)")
    parser.add_argument("--variants", default=",".join(VARIANT_PLAYERS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--breakdown", type=int, metavar="HANDS", default=0,
        help="instead, time each part of a move over HANDS hands of standard and of RLCard",
    )
    args = parser.parse_args(argv)
    if args.breakdown:
        print(f"rules engine: {rules.BUILD}")
        print_breakdown(args.breakdown, args.seed, args.seconds)
        return 0
    names = args.variants.split(",")
    unknown = [n for n in names if n not in VARIANT_PLAYERS]
    if unknown:
        known = ", ".join(VARIANT_PLAYERS)
        parser.error(f"unknown variant(s) {', '.join(unknown)}; known: {known}")

    print(f"Python {platform.python_version()} on {platform.machine()}, one process")
    print(f"rules engine: {rules.BUILD}")
    for name in names:
        if name == "standard":
            continue
        runs = [
            bench_variant(name, VARIANT_PLAYERS[name], args.seconds, args.seed + r)
            for r in range(args.repeat)
        ]
        print(best(runs).line(), flush=True)

    ours: list[Figures] = []
    theirs: list[Figures] = []
    for r in range(args.repeat):
        ours.append(bench_variant("standard", 4, args.seconds, args.seed + r))
        reference = bench_rlcard(args.seconds, args.seed + r)
        if reference is not None:
            theirs.append(reference)
    print(best(ours).line())
    if not theirs:
        print("RLCard is not installed (pip install '.[bench]'): comparison skipped")
        return 0
    mine, ref = best(ours), best(theirs)
    print(ref.line())
    print(
        f"standard / RLCard: moves/s ratio {mine.moves_per_s / ref.moves_per_s:.2f},"
        f" turns/s ratio {mine.turns_per_s / ref.turns_per_s:.2f}"
        f" ({mine.turns / mine.hands:.1f} turns a hand against {ref.turns / ref.hands:.1f}),"
        f" hands/s ratio {mine.hands_per_s / ref.hands_per_s:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
