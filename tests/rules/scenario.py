"""Helpers shared by the scenario tests: a state snapshot, an illegal-move check, a play."""

import pytest

from dernier_p2p.rules import IllegalMove, Play, parse_card
from dernier_p2p.rules.simulate import Table


def snap(t: Table) -> tuple:
    """(whose turn, top card, named suit, pending draw, hand sizes)."""
    s = t.state
    return (s.turn, str(s.top), s.named_suit, s.pending_draw, s.hand_sizes)


def illegal(t: Table, move: object, rule: str) -> IllegalMove:
    """``move`` raises IllegalMove naming ``rule``; the state and its faces stay as they were."""
    before = t.state
    faces = dict(before.faces)
    with pytest.raises(IllegalMove) as info:
        t.move(move)
    assert info.value.rule == rule
    assert t.state is before and dict(before.faces) == faces
    return info.value


def pm(t: Table, seat: int, card: str, **kw: object) -> Play:
    """The Play of ``card`` (short form) from ``seat``'s hand."""
    return Play(seat, t.slot(seat, card), parse_card(card), **kw)
