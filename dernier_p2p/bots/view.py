"""What a bot may know: the public state plus the faces of its own hand, nothing else.

A bot is a policy ``policy(state, seat, view) -> Move | None``. ``view`` is the seat's private
knowledge (slot -> Card); the helpers here keep only the entries for slots the seat may know (its
hand, and in ``originale`` the bottom card it has seen while cutting), so a view that carries
more (a careless caller, a leaked face) can never change a decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dernier_p2p.rules import Card, Move, Phase, State, legal_moves, to_act

Policy = Callable[[State, int, Mapping[int, Card]], Move | None]


def known_slots(state: State, seat: int) -> tuple[int, ...]:
    """The slots whose faces ``seat`` may know privately: its hand, and the card it cuts."""
    slots = state.hands[seat]
    if state.phase is Phase.CUT and state.pile and to_act(state) == seat:
        slots = (*slots, state.pile[-1])
    return slots


def own_faces(state: State, seat: int, view: Mapping[int, Card]) -> dict[int, Card]:
    """The faces of ``known_slots`` taken from ``view``; entries for any other slot dropped."""
    return {slot: view[slot] for slot in known_slots(state, seat) if slot in view}


def seat_moves(state: State, seat: int, view: Mapping[int, Card]) -> tuple[list[Move], bool]:
    """The legal moves of ``seat`` from its own view, and whether it is the seat to act."""
    return legal_moves(state, seat, own_faces(state, seat, view)), to_act(state) == seat
