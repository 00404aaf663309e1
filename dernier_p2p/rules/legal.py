"""Legal moves: every move a seat may make now, from its own view and the public state."""

from __future__ import annotations

from collections.abc import Mapping

from dernier_p2p.rules.cards import FACE_CODES, Card, Rank, Suit
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
from dernier_p2p.rules.state import (
    CUT_PHASE,
    HAND_SIZE_PHASE,
    NAME_SUIT_PHASE,
    State,
)
from dernier_p2p.rules.variants import (
    FLAG_BITS,
    NAMES,
    NAMES_OPT,
    SWAP,
    WILD,
)


def legal_moves(state: State, seat: int, known: Mapping[int, Card] | None = None) -> list[Move]:
    """Every legal move of ``seat`` now, in turn or out of turn.

    Plays are listed for slots whose face is known (``known``: the seat's private view, or the
    public faces). Timeout and Leave come from the clock and the network and are not listed;
    nor are originale's penalised wrong plays (apply accepts them with their penalty).
    """
    if state.chance is not None or not 0 <= seat < state.players:
        return []
    if state.phase is not PLAY:
        return _legal_setup(state, seat, known)
    # The play phase, on every move: kept in one function (see docs/PERFORMANCE.md).
    rules = state.rules
    info = rules._info
    hand = state.hands[seat]
    shown = state.shown
    known_get = known.get if known else shown.get
    top = state.top
    out: list[Move] = []
    if seat == state.turn:
        drawn = state.drawn
        pending = state.pending_draw
        if pending:
            table = answer_table(info, state.pending_kind, top)
        else:
            named = state.named_suit
            tables = info["match_tables"]
            table = tables.get(top.code << 3 | (7 if named is None else named))
            if table is None:
                table = match_table(info, top, named)
        size = len(hand)
        row = _PLAIN[seat]
        for slot in hand if drawn < 0 else (drawn,):
            card = known_get(slot)
            if card is None:
                if not shown or (card := shown.get(slot)) is None:
                    continue
            f = table[card.code]
            if not f:  # not playable now
                continue
            if f & _OPTIONS or size == 2:
                _add_grouped(out, state, seat, slot, card, f & FLAG_BITS, size)
                continue
            mv = row.get(slot)
            if mv is None or mv.card is not card:
                if len(row) > 10_000:
                    row.clear()
                mv = row[slot] = Play(seat, slot, card)
            out.append(mv)
        if drawn >= 0:
            out.append(_PASSES[seat])
        elif pending or state.pile or can_draw(state):
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
    owes = state.owes
    if owes:
        if seat in owes:
            out.append(Declare(seat))
        if rules.declaration == "catch":
            for t in owes:
                if t != seat and len(state.hands[t]) == 1:
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


# A table says, for each face code, 0 if a card of that face cannot be played now, else its
# rank's flags with PLAYABLE set. One table per (top card, named suit), and per pending chain.
PLAYABLE = 1 << 12


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
    info["match_tables"][top.code << 3 | (7 if named is None else named)] = out
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


# seat -> slot -> its plain Play (no options), reused while the slot shows the same card
_PLAIN: list[dict[int, Play]] = [{} for _ in range(128)]
_MOVE_CACHE: dict[tuple, Play] = {}
# (seat, slot, id(card), its flags, two cards in hand) -> the plays of a card with options
# (a suit to name, a declaration; not a swap, whose plays depend on the other hands)
_GROUPS: dict[tuple, tuple[Play, ...]] = {}


def _mk_play(seat: int, slot: int, card: Card, suit, target, declare: bool) -> Play:
    # keyed by the card's id (cheap to hash); a hit must hold that very card object
    key = (seat, slot, id(card), suit, target, declare)
    mv = _MOVE_CACHE.get(key)
    if mv is None or mv.card is not card:
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
    gkey = (seat, slot, id(card), f, size == 2)
    group = _GROUPS.get(gkey)
    if group is None or group[0].card is not card:
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
