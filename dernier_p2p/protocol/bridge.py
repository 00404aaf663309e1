"""The bridge between the rules engine and the deck: engine events -> deck operations.

Every peer derives the same deck operations from the same engine events, in the same order:

* ``Dealt(seat, slots)`` and ``Drew(seat, slots, _)``: ``deal(slot, seat)`` for each slot, in
  the event's order (a slot id is the deck position of the card);
* ``CutKept(seat, slot)``: ``deal(slot, seat)``;
* ``HandsSwapped(a, b)``: ``transfer(slot, other seat)`` for every slot of the lower seat's hand
  as it was just before the swap, in hand order, then the same for the higher seat;
* ``HandsRotated(d)``: for each seat ``j`` in play in ascending order, ``transfer(slot, the
  d-th next seat in play)`` for every slot of ``j``'s hand just before the rotation, in hand
  order (seats out of play are skipped);
* a slot that is already open (its face is public) is never transferred: its holder does not
  matter to the deck any more.

Hands "just before" an event are tracked by replaying the events on a copy of the hands of the
state the move was applied to (deals append, plays remove), so the order is exact even when a
penalty draw and a swap happen in one move. :func:`ops_for_events` returns the operations and
the hands it reached, which must equal the engine's new hands.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from dernier_p2p.rules import (
    CutKept,
    Dealt,
    Drew,
    HandsRotated,
    HandsSwapped,
    MatchFormat,
    Played,
    Rules,
    get_variant,
)
from dernier_p2p.rules.cards import Card, deck_cards
from dernier_p2p.rules.flow import rotated
from dernier_p2p.wire.version import PROTOCOL_VERSION


def card_face(deck: str, index: int) -> Card:
    """The face of physical card ``index`` of deck ``deck`` (deck and rules share indices)."""
    return deck_cards(deck)[index]


def ops_for_events(
    hands: Sequence[Sequence[int]], events: Iterable[Any], out: Sequence[int] = ()
) -> tuple[list[dict], list[list[int]]]:
    """The deck operations caused by ``events``, starting from ``hands`` (the hands of the state
    the move was applied to; ``out``: the seats out of play, which a rotation skips); returns
    the operations and the hands after the events."""
    cur = [list(h) for h in hands]
    n = len(cur)
    live = [j for j in range(n) if j not in out]
    m = len(live)
    ops: list[dict] = []
    for ev in events:
        if isinstance(ev, (Dealt, Drew)):
            for slot in ev.slots:
                ops.append({"op": "deal", "position": slot, "to": ev.seat})
                cur[ev.seat].append(slot)
        elif isinstance(ev, CutKept):
            ops.append({"op": "deal", "position": ev.slot, "to": ev.seat})
            cur[ev.seat].append(ev.slot)
        elif isinstance(ev, Played):
            if ev.slot in cur[ev.seat]:
                cur[ev.seat].remove(ev.slot)
        elif isinstance(ev, HandsSwapped):
            a, b = sorted((ev.a, ev.b))
            for src, dst in ((a, b), (b, a)):
                ops += [{"op": "transfer", "position": p, "to": dst} for p in cur[src]]
            cur[a], cur[b] = cur[b], cur[a]
        elif isinstance(ev, HandsRotated):
            d = ev.direction
            for k, j in enumerate(live):
                dst = live[(k + d) % m]
                ops += [{"op": "transfer", "position": p, "to": dst} for p in cur[j]]
            cur = rotated(cur, d, out)
    return ops, cur


def reshuffle_op(source: Sequence[int], opened_cards: dict[int, int]) -> dict:
    """The reshuffle operation for an engine shuffle request with ``source`` slots.

    ``opened_cards`` maps each opened source slot to its card index. When every source slot is
    open the cards are re-encoded (``cards`` form, in source order); otherwise (unopened stock
    cards, e.g. ``standard``'s first wild draw-four going back into the deck) the current
    ciphertexts are reshuffled (``positions`` form)."""
    if all(p in opened_cards for p in source):
        return {"op": "reshuffle", "cards": [opened_cards[p] for p in source]}
    return {"op": "reshuffle", "positions": list(source)}


# options that a table of an older protocol version may not name: option -> its first version
OPTION_VERSIONS = {"leave": 4}


def readings_of(version: int) -> int:
    """The engine's ``Rules.readings`` for a table of protocol ``version`` (PROTOCOL.md 20): the
    seed-rule points of version 4 are read the earlier way in transcripts of versions 2 and 3."""
    return 4 if version >= 4 else 3


def rules_from_table(variant: str, options: dict, version: int = PROTOCOL_VERSION) -> Rules:
    """The rule set of a ``table`` body of protocol ``version``: ``variant`` with its option
    overrides, read with that version's readings (:func:`readings_of`).

    ``match`` travels as ``[kind, value]``; lists become tuples; anything the rules refuse is a
    ``ValueError``, as are ``name`` and ``deck`` (the deck is the variant's, PROTOCOL.md 17.1),
    ``readings`` (the version decides it) and an option newer than ``version``
    (:data:`OPTION_VERSIONS`)."""
    over: dict[str, Any] = {}
    for key, val in options.items():
        if key in ("name", "deck"):
            raise ValueError(f"{key} is not a table option: the variant decides it")
        if key == "readings":
            raise ValueError("readings is not a table option: the table's version decides it")
        if version < OPTION_VERSIONS.get(key, 0):
            raise ValueError(f"option {key} is an option of protocol version "
                             f"{OPTION_VERSIONS[key]}; a table of version {version} has none")
        if key == "match":
            if not isinstance(val, (list, tuple)) or len(val) != 2:
                raise ValueError("the match option is [kind, value]")
            over[key] = MatchFormat(val[0], val[1])
        elif isinstance(val, list):
            over[key] = tuple(val)
        else:
            over[key] = val
    return get_variant(variant, **over, readings=readings_of(version))
