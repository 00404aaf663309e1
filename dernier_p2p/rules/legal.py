"""Legal moves: every move a seat may make now, from its own view and the public state."""

from __future__ import annotations

from collections.abc import Mapping

from dernier_p2p.rules.cards import Card
from dernier_p2p.rules.flow import PLAY, SUITS, can_draw, to_act
from dernier_p2p.rules.moves import (
    Catch,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    Move,
    NameSuit,
    Pass,
    Play,
)
from dernier_p2p.rules.playable import answer_table, match_table
from dernier_p2p.rules.state import (
    CHANCE,
    CUT_PHASE,
    DRAWN,
    HAND_SIZE_PHASE,
    HANDS,
    NAME_SUIT_PHASE,
    NAMED_SUIT,
    OWES,
    PENDING_DRAW,
    PENDING_KIND,
    PHASE,
    PILE,
    PLAYERS,
    RULES,
    SHOWN,
    TOP,
    TURN,
    State,
)
from dernier_p2p.rules.variants import (
    FLAG_BITS,
    NAMES,
    NAMES_OPT,
    SWAP,
)


def legal_moves(state: State, seat: int, known: Mapping[int, Card] | None = None) -> list[Move]:
    """Every legal move of ``seat`` now, in turn or out of turn.

    Plays are listed for slots whose face is known (``known``: the seat's private view, or the
    public faces). Timeout and Leave come from the clock and the network and are not listed;
    nor are originale's penalised wrong plays (apply accepts them with their penalty).
    Order: the plays (hand order), then the seat's Draw or Pass when it is at turn, then a
    Declare, then Catches.
    """
    if state[CHANCE] is not None or not 0 <= seat < state[PLAYERS]:
        return []
    if state[PHASE] is not PLAY:
        return _legal_setup(state, seat, known)
    # The play phase, on every move: kept in one function (see docs/PERFORMANCE.md).
    rules = state[RULES]
    info = rules._info
    hand = state[HANDS][seat]
    shown = state[SHOWN]
    known_get = known.get if known else shown.get
    top = state[TOP]
    out: list[Move] = []
    if seat == state[TURN]:
        drawn = state[DRAWN]
        pending = state[PENDING_DRAW]
        if pending:
            table = answer_table(info, state[PENDING_KIND], top)
        else:
            named = state[NAMED_SUIT]
            tables = info["match_tables"]
            table = tables.get(top.code << 3 | (7 if named is None else named))
            if table is None:
                table = match_table(info, top, named)
        size = len(hand)
        plain = _PLAIN
        for slot in hand if drawn < 0 else (drawn,):
            card = known_get(slot)
            if card is None:
                if not shown or (card := shown.get(slot)) is None:
                    continue
            code = card.code
            f = table[code]
            if not f:  # not playable now
                continue
            if f & _OPTIONS or size == 2:
                _add_grouped(out, state, seat, slot, card, f & FLAG_BITS, size)
                continue
            key = (slot << 7 | seat) << 7 | code
            mv = plain.get(key)
            if mv is None:
                if len(plain) > 100_000:
                    plain.clear()
                mv = plain[key] = Play(seat, slot, info["by_code"][code] or card)
            out.append(mv)
        if drawn >= 0:
            out.append(_PASSES[seat])
        elif pending or state[PILE] or can_draw(state):
            out.append(_DRAWS[seat])
        else:
            out.append(_PASSES[seat])
    elif rules.jump_in and top is not None:
        flags = info["flags"]
        size = len(hand)
        for slot in hand:
            card = known_get(slot)
            if card is None:
                if not shown or (card := shown.get(slot)) is None:
                    continue
            if card.rank is top.rank and card.suit is top.suit:
                _add_plays(out, state, seat, slot, card, flags[card.rank], size)
    owes = state[OWES]
    if owes:
        if seat in owes:
            out.append(Declare(seat))
        if rules.declaration == "catch":
            for t in owes:
                if t != seat and len(state[HANDS][t]) == 1:
                    out.append(Catch(seat, t))
    return out


def _legal_setup(state: State, seat: int, known: Mapping[int, Card] | None) -> list[Move]:
    """The moves of the phases before play: naming a first suit, the hand size, the cut."""
    if to_act(state) != seat:
        return []
    phase = state.phase
    if phase is NAME_SUIT_PHASE:
        return [NameSuit(seat, s) for s in SUITS]
    if phase is HAND_SIZE_PHASE:
        lo, hi = state.rules.hand_size_range or (state.rules.hand_size, state.rules.hand_size)
        return [ChooseHandSize(seat, k) for k in range(lo, hi + 1)]
    if phase is CUT_PHASE:
        bottom = state.pile[-1]
        face = (known or {}).get(bottom) or state.shown.get(bottom)
        if face is not None and face.rank in state.rules._info["special"]:
            return [Cut(seat, True, face)]
        return [Cut(seat, False, face)]
    return []


# Moves are values: the same play is the same object, from hand to hand. Keys hold the seat,
# the slot and the face code (Card.code); seats and face codes are below 128.
# (slot, seat, face code) -> the plain Play (no options)
_PLAIN: dict[int, Play] = {}
# (seat, slot, face code, suit, target, declare) -> a Play with options
_MOVE_CACHE: dict[tuple, Play] = {}
# (seat, slot, face code, its flags, two cards in hand) -> the plays of a card with options
# (a suit to name, a declaration; not a swap, whose plays depend on the other hands)
_GROUPS: dict[tuple, tuple[Play, ...]] = {}


def _mk_play(seat: int, slot: int, card: Card, suit, target, declare: bool) -> Play:
    key = (seat, slot, card.code, suit, target, declare)
    mv = _MOVE_CACHE.get(key)
    if mv is None:
        if len(_MOVE_CACHE) > 200_000:
            _MOVE_CACHE.clear()
        mv = _MOVE_CACHE[key] = Play(seat, slot, card, suit, target, declare)
    return mv


_DRAWS = [Draw(i) for i in range(128)]
_PASSES = [Pass(i) for i in range(128)]
_OPTIONS = NAMES | NAMES_OPT | SWAP
_BOTH = (False, True)  # a play that leaves one card may say DERNIER with it, or not
_NO_DECLARE = (False,)


def _add_grouped(
    out: list, st: State, seat: int, slot: int, card: Card, f: int, size: int
) -> None:
    """The plays of a card with options (a suit, a swap target) or a declaration to make."""
    if f & SWAP:  # its plays depend on the other hands' sizes
        _add_plays(out, st, seat, slot, card, f, size)
        return
    # a suit to name and/or a declaration: the same group each time
    gkey = (seat, slot, card.code, f, size == 2)
    group = _GROUPS.get(gkey)
    if group is None:
        plays: list = []
        _add_plays(plays, st, seat, slot, card, f, size)
        if len(_GROUPS) > 100_000:
            _GROUPS.clear()
        _GROUPS[gkey] = group = tuple(plays)
    out.extend(group)


def _add_plays(
    out: list, st: State, seat: int, slot: int, card: Card, f: int, size: int
) -> None:
    if f & NAMES:
        suits: tuple = SUITS
    elif f & NAMES_OPT:
        suits = (None, *SUITS)
    else:
        suits = (None,)
    if f & SWAP and size > 1:
        targets: tuple = tuple(t for t in range(st.players) if t != seat)
    else:
        targets = (None,)
    for target in targets:
        after = size - 1 if target is None else len(st.hands[target])
        declares = _BOTH if after == 1 else _NO_DECLARE
        for suit in suits:
            for declare in declares:
                out.append(_mk_play(seat, slot, card, suit, target, declare))
