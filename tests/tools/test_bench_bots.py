"""The bot arena (benchmarks/bench_bots.py) with a tiny budget: every cell printed with its
share, confidence interval and think times; the interval is Wilson's."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_bots", ROOT / "benchmarks" /
                                                  "bench_bots.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_bots"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_wilson_interval_and_percentiles() -> None:
    bench = _bench()
    lo, hi = bench.wilson(60, 100)
    assert round(lo, 3) == 0.502 and round(hi, 3) == 0.691
    assert bench.wilson(0, 10)[0] == 0.0 and round(bench.wilson(10, 10)[1], 9) == 1.0
    assert bench.percentile([3.0, 1.0, 2.0, 4.0], 0.5) == 2.0
    assert bench.percentile([float(k) for k in range(1, 101)], 0.95) == 95.0


def test_a_small_arena_runs_every_cell(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    csv = tmp_path / "cells.csv"
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_bots.py"), "--bots",
         "search@5,heuristic", "--variants", "dernier,standard", "--players", "2,3",
         "--hands", "3", "--matches", "1", "--quiet", "--csv", str(csv)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    lines = [line for line in run.stdout.splitlines() if not line.startswith("#")]
    assert len(lines) == 8  # 2 variants x 2 table sizes x (hands, matches)
    assert all("fair" in line and "think" in line for line in lines)
    assert "search@5 vs heuristic vs heuristic" in run.stdout
    assert "decisions/s; think time median" in run.stdout
    rows = csv.read_text().splitlines()
    assert rows[0].startswith("lineup,variant,players") and len(rows) == 9
    assert all(len(row.split(",")) == 13 for row in rows)
    bad = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_bots.py"), "--bots", "search,nobot"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert bad.returncode == 2 and "unknown bot 'nobot'" in bad.stderr


def _arm(tmp_path: Path, bots: str, out: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_bots.py"), "--bots", bots,
         "--variants", "dernier", "--players", "2", "--hands", "6", "--quiet", "--seed", "4",
         "--results", str(out)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_two_arms_with_the_same_seed_are_compared_deal_by_deal(tmp_path: Path) -> None:
    import json

    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    _arm(tmp_path, "search@20,heuristic", a)
    _arm(tmp_path, "search@20,heuristic", b)
    _arm(tmp_path, "random,heuristic", c)
    rows = [json.loads(line) for line in a.read_text().splitlines()]
    assert len(rows) == 6 and {r["rotation"] for r in rows} == {0, 1}
    assert a.read_text() == b.read_text()  # the same seed: the same hands, the same results
    paired = ROOT / "benchmarks" / "paired_arms.py"
    same = subprocess.run([sys.executable, str(paired), str(a), str(b)], capture_output=True,
                          text=True, timeout=60)
    assert same.returncode == 0 and "6 hands in common" in same.stdout, same.stdout
    assert "A - B +0.0 points" in same.stdout and "0 hands differed" in same.stdout
    wins_a = sum(r["won"] for r in rows)
    wins_c = sum(json.loads(line)["won"] for line in c.read_text().splitlines())
    other = subprocess.run([sys.executable, str(paired), str(a), str(c)], capture_output=True,
                           text=True, timeout=60)
    assert f"A - B {100 * (wins_a - wins_c) / 6:+.1f} points" in other.stdout, other.stdout
    c.write_text("not json\n")
    bad = subprocess.run([sys.executable, str(paired), str(a), str(c)], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 1 and "c.jsonl:1: not a line of bench_bots.py --results" in (
        bad.stderr), bad.stderr


def test_an_open_search_is_shown_every_other_hand_and_nothing_more() -> None:
    """``open:search`` (a measure of what the hidden cards cost) knows the other seats'
    faces from the arena's dealer, not the pile's; a plain search knows neither; only a
    search can be opened."""
    import pytest

    from dernier_p2p.rules import MatchFormat, get_variant, new_match
    from dernier_p2p.rules.simulate import Dealer, answer_chance

    bench = _bench()
    rules = get_variant("dernier", match=MatchFormat("hands", 1))
    dealer = Dealer(rules, 3)
    state = new_match(rules, 3)
    while state.chance is not None or not state.hands[0]:
        state, _ = answer_chance(state, dealer)
    view = dealer.view(state, 0)
    seen = bench.make("open:search@5", 1, dealer)._remember(state, 0, view)
    plain = bench.make("search@5", 1, dealer)._remember(state, 0, view)
    others = {x for seat in (1, 2) for x in state.hands[seat]}
    assert others and others <= set(seen) and not others & set(plain)
    assert not set(state.pile) & set(seen)  # the pile stays hidden
    assert all(seen[x] == dealer.view(state, seat)[x] for seat in (1, 2)
               for x in state.hands[seat])
    with pytest.raises(ValueError, match="only a search can be shown"):
        bench.make("open:heuristic", 1, dealer)


def test_an_open_arm_pairs_with_the_plain_one(tmp_path: Path) -> None:
    import json

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _arm(tmp_path, "open:search@20,heuristic", a)
    _arm(tmp_path, "search@20,heuristic", b)
    keys = [[(r["seed"], r["rotation"]) for r in map(json.loads, f.read_text().splitlines())]
            for f in (a, b)]
    assert keys[0] == keys[1] and len(keys[0]) == 6  # the same deals, in the same order
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    bad = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_bots.py"), "--bots",
         "open:random,heuristic"], capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2 and "only a search can be shown" in bad.stderr, bad.stderr
