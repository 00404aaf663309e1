"""Replay: every record is a step; each hand's cards are shown once revealed and agree with the
plays, draws and deals of the hand."""

from __future__ import annotations

from collections import Counter

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.protocol.local import run_local_match
from dernier_p2p.protocol.replay import replay_records
from dernier_p2p.rules import events as ev
from dernier_p2p.rules import get_variant


def test_replay_of_a_two_hand_match_shows_every_hand() -> None:
    seeds = [bytes([k + 1]) * 32 for k in range(2)]
    result = run_local_match(
        "moderno", 2, seeds, [HeuristicBot(k) for k in range(2)],
        options={"match": ["hands", 2]},
    )
    rp = replay_records(result.records)
    assert rp.verdict.ok
    assert [s.index for s in rp.steps] == list(range(len(result.records)))
    assert [(s.author, s.kind) for s in rp.steps] == [
        (r["env"]["seat"], r["env"]["body"]["type"]) for r in result.records]
    assert (rp.names, rp.variant) == (["seat 0", "seat 1"], "moderno")
    revealed = [s.revealed for s in rp.steps if s.revealed is not None]
    assert [h.hand for h in revealed] == [1, 2]
    # What each seat held, drew and played adds up: dealt + drawn + received = played + final
    # (swaps and rotations move whole hands, so check the table's totals per hand).
    hand = 0
    played: dict[int, Counter] = {}
    for step in rp.steps:
        for e in step.events:
            if isinstance(e, ev.HandStarted):
                hand = e.hand_number
            if isinstance(e, ev.Played):
                played.setdefault(hand, Counter())[e.card] += 1
    for h in revealed:
        came = Counter(c for seat in h.dealt for c in seat)
        came.update(c for seat in h.drawn for c, _ in seat)
        left = Counter(c for seat in h.final for c in seat) + played[h.hand]
        assert came == left
        size = get_variant("moderno").hand_size
        assert [len(seat) for seat in h.dealt] == [size, size]
        assert all(why != "deal" for seat in h.drawn for _, why in seat)
        assert sum(1 for seat in h.final if not seat) >= 1  # someone went out


def test_replay_stops_at_a_fault() -> None:
    seeds = [bytes([k + 1]) * 32 for k in range(2)]
    result = run_local_match(
        "dernier", 2, seeds, [HeuristicBot(0), HeuristicBot(1)], options={"match": ["hands", 1]}
    )
    records = result.records[:5] + result.records[6:]
    rp = replay_records(records)
    assert not rp.verdict.ok and rp.verdict.index == 5
    assert len(rp.steps) == 5
