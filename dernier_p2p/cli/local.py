"""A table on this machine played through the rules core: the user (or a bot) against bots.

The same loop serves ``dernier play --auto`` (all bots, for demos and CI). Each move is
validated by the rules core exactly as a remote move would be.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dernier_p2p.bots.heuristic import HeuristicBot
from dernier_p2p.cli.narrate import narrate
from dernier_p2p.rules import (
    Leave,
    Move,
    Phase,
    Rules,
    State,
    apply,
    chance_needed,
    legal_moves,
    new_match,
    to_act,
)
from dernier_p2p.rules.simulate import Dealer

Policy = Callable[..., Move | None]


@dataclass
class Outcome:
    """How a local match ended."""

    state: State
    moves: int
    left: bool


def run_match(
    rules: Rules,
    players: int,
    policies: Sequence[Policy],
    names: Sequence[str],
    seed: int,
    echo: Callable[[str], None],
    log: list[str],
    colour: bool = True,
    max_moves: int = 200_000,
) -> Outcome:
    """Play a whole match, narrating every event through ``echo`` and into ``log``."""
    dealer = Dealer(rules, seed)
    state = new_match(rules, players)
    moves = 0
    offer = False

    def step(move: Move) -> None:
        nonlocal state
        state, events = apply(state, move)
        for event in events:
            line = narrate(event, names, rules, colour)
            if line:
                log.append(line)
                echo(line)

    while not state.match_over and moves < max_moves:
        request = chance_needed(state)
        if request is not None:
            step(dealer.chance_move(state, request))
            offer = False
            continue
        actor = to_act(state)
        assert actor is not None
        if offer and state.phase is Phase.PLAY:
            offer = False
            moved = False
            for k in range(1, players):
                seat = (actor + k) % players
                view = dealer.view(state, seat)
                if not legal_moves(state, seat, view):
                    continue
                move = policies[seat](state, seat, view)
                if move is not None:
                    step(move)
                    moves += 1
                    offer = not isinstance(move, Leave)
                    moved = True
                    break
            if moved:
                continue
        move = policies[actor](state, actor, dealer.view(state, actor))
        if move is None:
            raise RuntimeError(f"seat {actor} has no move")
        step(move)
        moves += 1
        offer = True
        if isinstance(move, Leave):
            return Outcome(state, moves, left=True)
    return Outcome(state, moves, left=False)


def bot_policies(players: int, seed: int, human: Policy | None) -> list[Policy]:
    """Heuristic bots in every seat, seat 0 taken by ``human`` when given."""
    bots: list[Policy] = [HeuristicBot(seed * 31 + s) for s in range(players)]
    if human is not None:
        bots[0] = human
    return bots
