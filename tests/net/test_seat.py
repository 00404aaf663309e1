"""The local seat's presence notices (``status`` frames, PROTOCOL.md 4.4); its moves out of turn
wait for the window of the seat they would cost a late declaration (PROTOCOL.md 18.1)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net.host import Host
from dernier_p2p.net.seat import MAX_PRESENCE, LocalSeat
from dernier_p2p.net.timers import Timers
from dernier_p2p.protocol.local import LocalTable
from dernier_p2p.protocol.node.own import OwnSeat
from dernier_p2p.rules import (
    Card,
    Catch,
    Declare,
    Draw,
    Move,
    Pass,
    Play,
    State,
    legal_moves,
    to_act,
)
from tests.net.helpers import Table, play


async def test_a_host_sending_status_frames_without_end_fills_no_memory() -> None:
    """Drops and returns are kept in order, up to MAX_PRESENCE notices; a host that keeps
    sending them has the rest ignored (the seat's memory and screen stay bounded)."""
    t = LocalTable("dernier", [bytes([90 + k]) * 32 for k in range(3)])
    me = LocalSeat(OwnSeat(t.identities[1], 1, t.records[0], bytes(32)), None)
    me.note_status(2, "dropped", 500)
    me.note_status(2, "back", 0)
    assert [(p.seat, p.state) for p in me.presence] == [(2, "dropped"), (2, "back")]
    assert me.away() == {}
    for k in range(MAX_PRESENCE + 1000):
        me.note_status(2, ("dropped", "back")[k % 2], 500)
    assert len(me.presence) == MAX_PRESENCE
    me.close()


# ---------------------------------------------------------------- the out-of-turn window
class Forgetful:
    """A person's seat as the table sees it (its turn moves wait for no window) who never
    declares: in turn it plays as the heuristic bot would, but undeclared, and with two cards a
    card that gives the turn back first; owing a declaration it thinks longer than the window
    (in turn it then plays on; out of turn it lets the offer go). ``caught_in_turn``: how often
    it was caught while in turn."""

    waits_for_offers = False

    def __init__(self, think_s: float) -> None:
        self.bot = HeuristicBot(0)
        self.think_s = think_s
        self.host: Host | None = None  # whose own seat this is (set before the match)
        self.seat: LocalSeat | None = None
        self.caught_in_turn = 0

    async def __call__(self, state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
        if self.seat is None:
            assert self.host is not None
            self.seat = await self.host.local_seat()
        moves = legal_moves(state, seat, view)
        in_turn = to_act(state) == seat
        if Declare(seat) in moves:
            with trio.move_on_after(self.think_s):
                while self.seat.session.state is state:
                    await trio.sleep(0.01)
            now = self.seat.session.state
            if now is not state:
                self.caught_in_turn += in_turn and seat not in now.owes
                return None  # caught meanwhile: asked again
        if not in_turn:
            return None
        plays = [m for m in moves if isinstance(m, Play) and not m.declare]
        back = [m for m in plays if _gives_the_turn_back(state, m)]
        if len(state.hands[seat]) == 2 and back:
            return back[0]
        move = self.bot(state, seat, view)
        if isinstance(move, Play) and move.declare:
            return replace(move, declare=False)
        if isinstance(move, Declare | Catch):
            return plays[0] if plays else next(m for m in moves if isinstance(m, Draw | Pass))
        return move


def _gives_the_turn_back(state: State, play: Play) -> bool:
    """At two seats: a skip, a forced draw, or a reverse that skips."""
    rules, rank = state.rules, play.card.rank
    return (rank in rules.skip_ranks or any(rank == r for r, _ in rules.forced_draws)
            or (rank in rules.reverse_ranks and rules.reverse_skips_with_two))


def _catch_gaps(records: list[dict[str, Any]], target: int) -> list[int]:
    """For each catch of ``target``: the milliseconds, on the host's clock, from ``target``'s
    last move before it (the undeclared play) to the catch."""
    gaps = []
    last: dict[str, Any] | None = None
    for rec in records:
        env, body = rec["env"], rec["env"]["body"]
        if body.get("type") != "move":
            continue
        if env["seat"] == target:
            last = rec
        elif body["move"] == "catch" and body["target"] == target:
            assert last is not None
            gaps.append(rec["t"] - last["t"])
    return gaps


async def _forgetful_table(tmp_path: Path, players: int, options: dict[str, Any],
                           enough: Callable[[Forgetful, list[int]], bool]) -> tuple[Forgetful,
                                                                                   list[int]]:
    """Seat 0 (the host) forgetful, the others heuristic bots in peers of their own, a
    one-second window; played until ``enough(ann, gaps)`` (then the table is stopped) or the
    match ends. The catches' gaps (see :func:`_catch_gaps`)."""
    ann = Forgetful(think_s=2.0)
    timers = Timers(turn_ms=20_000, declare_ms=WINDOW_MS, grace_ms=5_000)
    found: list[int] = []

    def start(table: Table) -> None:
        ann.host = table.host

    async def watch(table: Table) -> None:
        seat = await table.host.local_seat()
        while True:
            found[:] = _catch_gaps(seat.records, 0)
            if enough(ann, found) or seat.finished:
                for scope in table.scopes.values():
                    scope.cancel()
                return
            await trio.sleep(0.05)

    await play(tmp_path, players, agents={0: ann}, timers=timers, options=options,
               host_options={"variant": "standard"}, on_start=start, watch=watch, limit=120)
    return ann, found


WINDOW_MS = 1_000


async def test_a_remote_bot_catches_a_person_in_turn_again_only_after_the_window(
        tmp_path: Path) -> None:
    """Two seats of ``standard``: the person plays a card that gives the turn back (a skip, a
    draw card, a reverse that skips) as the second-last without declaring, and is in turn
    again. The bot, in a peer of its own, may catch at once by the rules; it waits for the
    person's window (``declare_ms``) as the person's screen shows it."""
    options = {"match": ["hands", 12], "hand_size": 2, "reverse_skips_with_two": True}
    ann, gaps = await _forgetful_table(tmp_path, 2, options,
                                       lambda ann, gaps: ann.caught_in_turn > 0)
    assert ann.caught_in_turn > 0 and gaps, "the person was never caught in turn again"
    assert min(gaps) >= WINDOW_MS, f"caught {min(gaps)} ms into a {WINDOW_MS} ms window"


async def test_a_remote_bot_not_at_turn_catches_only_after_the_window(tmp_path: Path) -> None:
    """Three seats of ``standard``: the person plays the second-last card without declaring;
    the bot at turn waited for the window already, the other bot (out of turn) now waits as
    well before it catches."""
    options = {"match": ["hands", 12], "hand_size": 2}
    _, gaps = await _forgetful_table(tmp_path, 3, options, lambda ann, gaps: len(gaps) >= 2)
    assert gaps, "the person was never caught"
    assert min(gaps) >= WINDOW_MS, f"caught {min(gaps)} ms into a {WINDOW_MS} ms window"
