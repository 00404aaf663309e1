"""A move refused (by the seat's own session, or by the host's error frame) is told to the
agent, which is asked again; the seat's counters are mended and the match goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net.host import Host
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.node.hosting import Hosting
from dernier_p2p.rules import Card, Play, Rank, Suit

from .helpers import play, same_result, transcripts, verify


class Told:
    """A bot agent with a ``refused`` hook; its first answer in turn may be a bad play."""

    def __init__(self, seat: int, bad_first: bool) -> None:
        self.bot = HeuristicBot(seat)
        self.bad_first = bad_first
        self.refusals: list[tuple[str, str]] = []
        self.asked_after: list[int] = []  # asks that came after a refusal

    async def __call__(self, state: Any, seat: int, view: Any) -> Any:
        if self.refusals and len(self.asked_after) < len(self.refusals):
            self.asked_after.append(len(self.refusals))
        move = self.bot(state, seat, view)
        if self.bad_first and isinstance(move, Play):
            self.bad_first = False
            wrong = next(c for c in (Card(Rank.N4, Suit(0)), Card(Rank.N5, Suit(0)))
                         if c != view.get(move.slot))
            return Play(move.seat, move.slot, wrong)  # a face this slot does not hold
        return move

    def refused(self, code: str, detail: str) -> None:
        self.refusals.append((code, detail))


async def test_a_move_the_session_refuses_is_told_and_asked_again(tmp_path: Path) -> None:
    agent = Told(1, bad_first=True)
    table = await play(tmp_path, 2, agents={1: agent})
    assert not table.errors
    assert [code for code, _ in agent.refusals] == ["face-mismatch"]
    assert agent.asked_after == [1]  # asked again after the refusal
    got = transcripts(tmp_path, range(2))
    assert got[0] == got[1]
    assert same_result(table.results[1], verify(got[0]))


class RefusesOnceHosting(Hosting):
    """Refuses seat 1's first move envelope with ILLEGAL_MOVE, as if it had lost a check."""

    def vet(self, seat: int, env: Any) -> None:
        body = env.get("body") if isinstance(env, dict) else None
        if seat == 1 and not RefusesOnce.refused_once and isinstance(body, dict):
            if body.get("type") == "move":
                RefusesOnce.refused_once = True
                raise ProtocolError("ILLEGAL_MOVE", seat, "refused for the test")
        super().vet(seat, env)


class RefusesOnce(Host):
    hosting_cls = RefusesOnceHosting
    refused_once = False


async def test_a_move_the_host_refuses_is_told_and_the_counters_are_mended(
    tmp_path: Path,
) -> None:
    RefusesOnce.refused_once = False
    agent = Told(1, bad_first=False)
    table = await play(tmp_path, 2, host_cls=RefusesOnce, agents={1: agent})
    assert not table.errors
    assert RefusesOnce.refused_once
    assert agent.refusals == [("ILLEGAL_MOVE", "refused for the test")]
    assert agent.asked_after == [1]
    assert [(s, c) for s, c, _ in table.host.faults] == [(1, "ILLEGAL_MOVE")]
    got = transcripts(tmp_path, range(2))
    assert got[0] == got[1]
    assert same_result(table.results[1], verify(got[0]))
