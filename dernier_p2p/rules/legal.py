"""Legal moves: every move a seat may make now, from its own view and the public state."""

from __future__ import annotations

from collections.abc import Mapping

from dernier_p2p.rules.cards import Card
from dernier_p2p.rules.flow import PLAY, SUITS, can_draw, rotated, to_act
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
    NAMES,
    NAMES_OPT,
    REVERSE,
    ROTATE,
    SWAP,
    WILD,
)


def legal_moves(state: State, seat: int, known: Mapping[int, Card] | None = None) -> list[Move]:
    """Every legal move of ``seat`` now, in turn or out of turn.

    Plays are listed for slots whose face is known (``known``: the seat's private view, or the
    public faces). Timeout and Leave come from the clock and the network and are not listed;
    nor are originale's penalised wrong plays (apply accepts them with their penalty).
    Order: the plays (hand order), then the seat's Draw or Pass when it is at turn, then a
    Declare, then Catches.
    """
    if state.chance is not None or not 0 <= seat < state.players or seat in state.out:
        return []
    phase = state.phase
    if phase is PLAY:
        return _legal_play(state, seat, known)
    if to_act(state) != seat:
        return []
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


_MOVE_CACHE: dict[tuple, Play] = {}
# (seat, slot, id(card), its flags, two cards in hand) -> the plays of a card with options
# (a suit to name, a declaration; not a swap or rotate, whose plays depend on the other hands)
_GROUPS: dict[tuple, tuple[Play, ...]] = {}
_PLAIN_CACHE: dict[tuple, Play] = {}


def _mk_play(seat: int, slot: int, card: Card, suit, target, declare: bool) -> Play:
    # keyed by the card's id (cheap to hash); a hit must hold that very card object
    key = (seat, slot, id(card), suit, target, declare)
    mv = _MOVE_CACHE.get(key)
    if mv is None or mv.card is not card:
        if len(_MOVE_CACHE) > 200_000:
            _MOVE_CACHE.clear()
        mv = _MOVE_CACHE[key] = Play(seat, slot, card, suit, target, declare)
    return mv


_DRAWS = [Draw(i) for i in range(16)]
_PASSES = [Pass(i) for i in range(16)]
_OPTIONS = NAMES | NAMES_OPT | SWAP | ROTATE
_BOTH = (False, True)  # a play that leaves one card may say DERNIER with it, or not
_NO_DECLARE = (False,)


def _legal_play(st: State, seat: int, known: Mapping[int, Card] | None) -> list[Move]:
    rules = st.rules
    info = rules._info
    flags = info["flags"]
    shown = st.shown
    hand = st.hands[seat]
    size = len(hand)
    out: list[Move] = []
    top = st.top
    known_get = known.get if known else shown.get
    plain = _PLAIN_CACHE
    if seat == st.turn:
        drawn = st.drawn
        slots = hand if drawn < 0 else (drawn,)
        pending = st.pending_draw
        if pending:
            answers = info["answers"][st.pending_kind]
            cancel = rules.cancel_rank if st.pending_kind == rules.cancel_chain else None
        else:
            eff = st.named_suit if st.named_suit is not None else top.suit
            top_rank = top.rank
        for slot in slots:
            card = known_get(slot)
            if card is None:
                if not shown or (card := shown.get(slot)) is None:
                    continue
            rank = card.rank
            f = flags[rank]
            if pending:
                if not (
                    rank in answers
                    or (
                        rank is cancel
                        and (not rules.cancel_same_suit or card.suit is top.suit)
                    )
                ):
                    continue
            elif not (f & WILD or rank is top_rank or (eff is not None and card.suit is eff)):
                continue
            if f & _OPTIONS or size == 2:
                if f & (SWAP | ROTATE):  # its plays depend on the other hands' sizes
                    _add_plays(out, st, seat, slot, card, f, size)
                    continue
                # a suit to name and/or a declaration: the same group each time
                gkey = (seat, slot, id(card), f, size == 2)
                group = _GROUPS.get(gkey)
                if group is None or group[0].card is not card:
                    group = []
                    _add_plays(group, st, seat, slot, card, f, size)
                    if len(_GROUPS) > 100_000:
                        _GROUPS.clear()
                    _GROUPS[gkey] = group = tuple(group)
                out.extend(group)
            else:
                key = (seat, slot, id(card))
                mv = plain.get(key)
                if mv is None or mv.card is not card:
                    if len(plain) > 200_000:
                        plain.clear()
                    mv = plain[key] = Play(seat, slot, card)
                out.append(mv)
        if drawn >= 0:
            out.append(_PASSES[seat] if seat < 16 else Pass(seat))
        elif pending or st.pile or can_draw(st):
            out.append(_DRAWS[seat] if seat < 16 else Draw(seat))
        else:
            out.append(_PASSES[seat] if seat < 16 else Pass(seat))
    elif rules.jump_in and top is not None:
        for slot in hand:
            card = known_get(slot)
            if card is None:
                if not shown or (card := shown.get(slot)) is None:
                    continue
            if card.rank is top.rank and card.suit is top.suit:
                _add_plays(out, st, seat, slot, card, flags[card.rank], size)
    if st.owes:
        if seat in st.owes:
            out.append(Declare(seat))
        if rules.declaration == "catch":
            for t in st.owes:
                if t != seat and len(st.hands[t]) == 1:
                    out.append(Catch(seat, t))
    return out


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
        targets: tuple = tuple(t for t in range(st.players) if t != seat and t not in st.out)
    else:
        targets = (None,)
    for target in targets:
        after = _kept(st, seat, f, size, target)
        early = size == 2 and f & (SWAP | ROTATE) and st.rules.declare_before_exchange
        declares = _BOTH if after == 1 or early else _NO_DECLARE
        for suit in suits:
            for declare in declares:
                out.append(_mk_play(seat, slot, card, suit, target, declare))


def _kept(st: State, seat: int, f: int, size: int, target: int | None) -> int:
    """The cards ``seat`` holds once its play of a card with flags ``f`` from ``size`` cards
    is done: a swap hands it the target's hand, then a rotate passes every hand on in the
    direction after the play (a last card goes out before any exchange)."""
    if size <= 1 or not f & (SWAP | ROTATE):
        return size - 1
    sizes = [len(h) for h in st.hands]
    sizes[seat] = size - 1
    if target is not None:  # a swap's
        sizes[seat], sizes[target] = sizes[target], sizes[seat]
    if f & ROTATE:
        sizes = rotated(sizes, -st.direction if f & REVERSE else st.direction, st.out)
    return sizes[seat]
