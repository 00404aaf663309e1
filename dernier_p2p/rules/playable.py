"""Which faces may be played now: per-face tables, built once per rule set and situation.

A table has one entry per face code (``Card.code``): 0 if a card of that face cannot be
played, else its rank's flags with ``PLAYABLE`` set. There is one table per (top card, named
suit) with nothing pending, and one per (chain kind, top card) with a draw pending. Both
``legal_moves`` and ``apply`` read them, so listing and checking a play agree by construction.
"""

from __future__ import annotations

from dernier_p2p.rules.cards import FACE_CODES, Card, Rank, Suit
from dernier_p2p.rules.variants import WILD

PLAYABLE = 1 << 12


def table_key(top: Card, named: Suit | None) -> int:
    """The key of the in-turn table for ``top`` and the named suit (None: none named)."""
    return top.code << 3 | (7 if named is None else named)


def match_table(info: dict, top: Card, named: Suit | None) -> tuple[int, ...]:
    """The in-turn table with no pending draw: a wild, the top's rank, or the suit to follow."""
    eff = top.suit if named is None else named
    flags = info["flags"]
    table = [0] * FACE_CODES
    for card in info["cards"]:
        f = flags[card.rank]
        if f & WILD or card.rank is top.rank or (eff is not None and card.suit is eff):
            table[card.code] = f | PLAYABLE
    out = tuple(table)
    info["match_tables"][table_key(top, named)] = out
    return out


def answer_table(info: dict, kind: Rank, top: Card) -> tuple[int, ...]:
    """The in-turn table with a draw pending on a ``kind`` chain: its answers, or the card
    that cancels it (of the top card's suit where the rules say so)."""
    key = (kind, top.code)
    out = info["answer_tables"].get(key)
    if out is not None:
        return out
    rules = info["rules"]
    answers = info["answers"][kind]
    cancel = rules.cancel_rank if kind == rules.cancel_chain else None
    flags = info["flags"]
    table = [0] * FACE_CODES
    for card in info["cards"]:
        rank = card.rank
        if rank in answers or (
            rank is cancel and (not rules.cancel_same_suit or card.suit is top.suit)
        ):
            table[card.code] = flags[rank] | PLAYABLE
    out = info["answer_tables"][key] = tuple(table)
    return out
