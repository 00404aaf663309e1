"""Replay: every record is a step; each hand's cards are shown once revealed and agree with the
plays, draws and deals of the hand."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.protocol.local import run_local_match
from dernier_p2p.protocol.replay import HandCards, replay_file, replay_records
from dernier_p2p.rules import events as ev
from dernier_p2p.rules import get_variant
from dernier_p2p.wire.transcript import TranscriptWriter


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


def _adds_up(hand: HandCards, played: Counter) -> bool:
    """Dealt and drawn cards equal the cards played and the final hands."""
    came = Counter(c for seat in hand.dealt for c in seat)
    came.update(c for seat in hand.drawn for c, _ in seat)
    return came == Counter(c for seat in hand.final for c in seat) + played


def test_an_originale_cut_card_kept_is_shown_in_the_cutter_s_dealt_hand(tmp_path: Path) -> None:
    """originale: the cutter keeps the special bottom card (these seeds make it so) as one of
    the cards of the hand size chosen; the replay shows it among that seat's dealt cards, and
    the hand still adds up."""
    seeds = [bytes([4, k + 1]) * 16 for k in range(2)]
    result = run_local_match(
        "originale", 2, seeds, [HeuristicBot(k) for k in range(2)],
        options={"match": ["hands", 1]},
    )
    rp = replay_records(result.records)
    assert rp.verdict.ok
    events = [e for step in rp.steps for e in step.events]
    (kept,) = [e for e in events if isinstance(e, ev.CutKept)]
    (hand,) = [s.revealed for s in rp.steps if s.revealed is not None]
    (size,) = [e.size for e in events if isinstance(e, ev.HandSizeChosen)]
    assert [len(seat) for seat in hand.dealt] == [size, size]  # the kept card counts
    # the cutter's cards in the order they came: the kept cut card (a special one) first
    assert hand.dealt[kept.seat][0].rank in get_variant("originale").special_ranks
    played = Counter(e.card for e in events if isinstance(e, ev.Played))
    assert _adds_up(hand, played)
    # the same from the transcript file; a file that is no transcript gives no step
    path = tmp_path / "match.dtr"
    with TranscriptWriter(path) as w:
        for rec in result.records:
            w.append(rec)
    from_file = replay_file(path)
    assert from_file.verdict.ok and from_file.names == rp.names and from_file.variant == "originale"
    assert [(s.index, s.kind, s.revealed) for s in from_file.steps] == [
        (s.index, s.kind, s.revealed) for s in rp.steps]
    path.write_bytes(b"not a transcript")
    broken = replay_file(path)
    assert broken.steps == [] and broken.names == [] and broken.variant is None
    assert (broken.verdict.ok, broken.verdict.code) == (False, "UNREADABLE")
