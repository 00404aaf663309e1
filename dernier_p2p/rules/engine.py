"""The rules engine: ``new_match``, ``apply``, ``legal_moves``, ``chance_needed``, ``to_act``.

Pure and deterministic. It sees only public information: hands are tuples of slot ids, and a
card's face enters the state when it is opened (played, turned up, shown, revealed). Which slot
is drawn next (Shuffle), the faces of the first discard (Flip) and of the hands at the end
(Reveal) are chance moves supplied from outside. See docs/RULES.md for the model.
"""

from __future__ import annotations

from collections.abc import Mapping

from dernier_p2p.rules import scoring
from dernier_p2p.rules.cards import Card, Rank, Suit
from dernier_p2p.rules.errors import IllegalMove
from dernier_p2p.rules.events import (
    Caught,
    ChainCancelled,
    ChainGrew,
    CutKept,
    DealerChosen,
    Dealt,
    Declared,
    DirectionChanged,
    Drew,
    Flipped,
    Forfeited,
    HandOver,
    HandScored,
    HandSizeChosen,
    HandsRotated,
    HandsSwapped,
    HandStarted,
    JumpedIn,
    MatchOver,
    Passed,
    Penalty,
    Played,
    Reshuffled,
    Revealed,
    Shuffled,
    Skipped,
    SuitNamed,
    TakenBack,
)
from dernier_p2p.rules.moves import (
    Catch,
    ChooseDealer,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    Flip,
    Leave,
    Move,
    NameSuit,
    Pass,
    Play,
    Reveal,
    Shuffle,
    Timeout,
)
from dernier_p2p.rules.state import (
    CHANCE,
    CLOCK,
    CUT_KEPT,
    DEALER,
    DIRECTION,
    DISCARD,
    DRAWN,
    FINAL_SIZES,
    HAND_END,
    HAND_NUMBER,
    HAND_WINNER,
    HANDS,
    HANDS_WON,
    LAST_DRAW,
    MATCH_POINTS,
    NAMED_SUIT,
    NAMER,
    NEXT_SLOT,
    OWED,
    OWES,
    PENDING_DRAW,
    PENDING_KIND,
    PHASE,
    PILE,
    PLAYED,
    SCORES,
    SHOWN,
    STALLS,
    STANDINGS,
    TOP,
    TURN,
    WINNER,
    ChanceRequest,
    Phase,
    State,
)
from dernier_p2p.rules.variants import (
    CHAIN,
    FORCED,
    NAMES,
    NAMES_OPT,
    PREVIOUS,
    REVERSE,
    ROTATE,
    SKIP,
    SWAP,
    WILD,
    Rules,
)

PLAY = Phase.PLAY
_new_state = tuple.__new__
_SUITS = tuple(Suit)
_NAMING = NAMES | NAMES_OPT

Events = list  # the list of events being built by one apply


# ---------------------------------------------------------------------------------------------
# Public functions


def new_match(rules: Rules, players: int) -> State:
    """A new match of ``players`` seats; the first input needed is ChooseDealer."""
    if not isinstance(rules, Rules):
        raise ValueError("rules must be a Rules rule set")
    if not isinstance(players, int) or not rules.min_players <= players <= rules.max_players:
        raise ValueError(
            f"{rules.name} is played by {rules.min_players} to {rules.max_players} players,"
            f" not {players!r}"
        )
    zeros = (0,) * players
    return State(
        rules=rules,
        players=players,
        phase=Phase.DEALER,
        hand_number=0,
        dealer=-1,
        turn=-1,
        direction=1,
        hands=((),) * players,
        pile=(),
        discard=(),
        top=None,
        named_suit=None,
        pending_draw=0,
        pending_kind=None,
        drawn=-1,
        owes=(),
        owed=(),
        chance=ChanceRequest("dealer", count=players),
        shown={},
        next_slot=0,
        scores=zeros,
        hands_won=zeros,
        match_points=zeros,
        winner=None,
        standings=(),
        hand_winner=None,
        hand_end=None,
        cut_kept=-1,
        namer=-1,
        last_draw=(-1,) * players,
        clock=0,
        final_sizes=zeros,
        played=None,
        stalls=0,
    )


def chance_needed(state: State) -> ChanceRequest | None:
    """The chance input needed next, or None when a seat is to move."""
    return state.chance


def to_act(state: State) -> int | None:
    """The seat expected to move next (None while chance is needed or the match is over)."""
    if state.chance is not None:
        return None
    phase = state.phase
    if phase is PLAY:
        return state.turn
    if phase is Phase.NAME_SUIT:
        return state.namer
    if phase is Phase.HAND_SIZE:
        return state.dealer
    if phase is Phase.CUT:
        return (state.dealer - 1) % state.players
    return None


def apply(state: State, move: Move) -> tuple[State, tuple]:
    """Apply ``move``; return the new state and the events. Raises IllegalMove; pure."""
    entry = _DISPATCH.get(move.__class__)
    if entry is None:
        raise IllegalMove("not-a-move", f"{move!r} is not a move")
    handler, is_chance = entry
    if state.phase is Phase.MATCH_OVER:
        raise IllegalMove("match-over", "the match is over")
    chance = state.chance
    if is_chance:
        if chance is None:
            raise IllegalMove("no-pending-chance", f"no chance move is expected, got {move!r}")
    elif chance is not None and handler is not _leave:
        raise IllegalMove(
            "chance-pending", f"waiting for a {chance.kind} input before any seat moves"
        )
    s = list(state)
    ev: Events = []
    handler(state, s, move, ev)
    s[CLOCK] += 1
    return _new_state(State, s), tuple(ev)


def legal_moves(state: State, seat: int, known: Mapping[int, Card] | None = None) -> list[Move]:
    """Every legal move of ``seat`` now, in turn or out of turn.

    Plays are listed for slots whose face is known (``known``: the seat's private view, or the
    public faces). Timeout and Leave come from the clock and the network and are not listed;
    nor are originale's penalised wrong plays (apply accepts them with their penalty).
    """
    if state.chance is not None or not 0 <= seat < state.players:
        return []
    phase = state.phase
    if phase is PLAY:
        return _legal_play(state, seat, known)
    if to_act(state) != seat:
        return []
    if phase is Phase.NAME_SUIT:
        return [NameSuit(seat, s) for s in _SUITS]
    if phase is Phase.HAND_SIZE:
        lo, hi = state.rules.hand_size_range or (state.rules.hand_size, state.rules.hand_size)
        return [ChooseHandSize(seat, k) for k in range(lo, hi + 1)]
    if phase is Phase.CUT:
        bottom = state.pile[-1]
        face = (known or {}).get(bottom) or state.shown.get(bottom)
        if face is not None and face.rank in state.rules._info["special"]:
            return [Cut(seat, True, face)]
        return [Cut(seat, False, face)]
    return []


# ---------------------------------------------------------------------------------------------
# Legal moves in play


_MOVE_CACHE: dict[tuple, Play] = {}
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
_OPTIONS = NAMES | NAMES_OPT | SWAP


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
                _add_plays(out, st, seat, slot, card, f, size)
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
        elif pending or st.pile:
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
        suits: tuple = _SUITS
    elif f & NAMES_OPT:
        suits = (None, *_SUITS)
    else:
        suits = (None,)
    if f & SWAP and size > 1:
        targets: tuple = tuple(t for t in range(st.players) if t != seat)
    else:
        targets = (None,)
    for target in targets:
        after = size - 1 if target is None else len(st.hands[target])
        declares = (False, True) if after == 1 else (False,)
        for suit in suits:
            for declare in declares:
                out.append(_mk_play(seat, slot, card, suit, target, declare))


# ---------------------------------------------------------------------------------------------
# Small helpers on the list being built


def _next(s: list, seat: int) -> int:
    return (seat + s[DIRECTION]) % len(s[HANDS])


def _set_hand(s: list, seat: int, hand: tuple[int, ...]) -> None:
    hands = list(s[HANDS])
    hands[seat] = hand
    s[HANDS] = tuple(hands)


def _queue(s: list, seat: int, n: int, reason: str) -> None:
    if n > 0:
        s[OWED] = s[OWED] + ((seat, n, reason),)


def _reshuffle_request(s: list) -> ChanceRequest:
    source = s[DISCARD][:-1]
    return ChanceRequest("shuffle", count=len(source), first_slot=s[NEXT_SLOT], source=source)


def _take(s: list, seat: int, n: int, reason: str, ev: Events) -> int:
    """Move up to n cards from the pile to ``seat``; returns how many are still owed."""
    pile = s[PILE]
    k = n if n <= len(pile) else len(pile)
    if k:
        got = pile[:k]
        s[PILE] = pile[k:]
        _set_hand(s, seat, s[HANDS][seat] + got)
        last = list(s[LAST_DRAW])
        last[seat] = s[CLOCK]
        s[LAST_DRAW] = tuple(last)
        ev.append(Drew(seat, got, reason))
        if reason == "draw":
            s[DRAWN] = got[0]
    rest = n - k
    if not s[PILE]:
        rules: Rules = s[0]
        if rules.pile_empty == "end":
            if s[HAND_END] is None:
                s[HAND_END] = "pile-empty"
            return 0
        if len(s[DISCARD]) > 1:
            s[CHANCE] = _reshuffle_request(s)
            return rest
        return 0  # nothing left to reshuffle: the draw is short
    return rest


def _run_owed(s: list, ev: Events) -> None:
    owed = list(s[OWED])
    while owed and s[CHANCE] is None:
        seat, n, reason = owed[0]
        rest = _take(s, seat, n, reason, ev)
        if rest:
            owed[0] = (seat, rest, reason)
        else:
            owed.pop(0)
        if s[HAND_END] is not None:
            owed = []
    s[OWED] = tuple(owed)


def _settle(s: list, ev: Events) -> None:
    """Run the owed draws; end the hand when it is over and nothing waits on chance."""
    if s[OWED]:
        _run_owed(s, ev)
    if s[CHANCE] is None and not s[OWED] and (s[HAND_WINNER] is not None or s[HAND_END]):
        _end_hand(s, ev)


def _close_windows(s: list, ev: Events) -> None:
    """A Play/Draw/Pass/Timeout closes every open declaration window (penalties first)."""
    owes = s[OWES]
    if not owes:
        return
    s[OWES] = ()
    rules: Rules = s[0]
    if rules.declaration == "catch":
        return
    for seat in owes:
        if len(s[HANDS][seat]) != 1:
            continue  # the obligation lapsed
        ev.append(Penalty(seat, rules.declaration_penalty, "declaration"))
        rest = _take(s, seat, rules.declaration_penalty, "penalty-declaration", ev)
        if s[HAND_END] is not None:
            return
        _queue(s, seat, rest, "penalty-declaration")


def _check_seat(st: State, seat: object) -> int:
    if type(seat) is not int or not 0 <= seat < st.players:
        raise IllegalMove("bad-seat", f"no seat {seat!r} at a table of {st.players}")
    return seat


def _need_phase(st: State, phase: Phase, what: str) -> None:
    if st.phase is not phase:
        raise IllegalMove("wrong-phase", f"{what} is not possible in phase {st.phase.value}")


def _need_turn(st: State, seat: int, what: str) -> None:
    actor = to_act(st)
    if seat != actor:
        raise IllegalMove("not-your-turn", f"seat {seat} cannot {what}: seat {actor} is to act")


# ---------------------------------------------------------------------------------------------
# Card effects


def _effects(
    s: list,
    seat: int,
    card: Card,
    suit: Suit | None,
    target: int | None,
    ev: Events,
    hand_moves: bool = True,
) -> tuple[int, ...]:
    """Apply the action of ``card`` played by ``seat``; set the turn. Returns changed seats."""
    rules: Rules = s[0]
    info = rules._info
    rank = card.rank
    f = info["flags"][rank]
    n = len(s[HANDS])
    if f & _NAMING:
        s[NAMED_SUIT] = suit
        if suit is not None:
            ev.append(SuitNamed(seat, suit))
    else:
        s[NAMED_SUIT] = None
    d = s[DIRECTION]
    if f & REVERSE:
        d = -d
        s[DIRECTION] = d
        ev.append(DirectionChanged(d))
    nxt = (seat + d) % n
    if f & REVERSE and n == 2 and rules.reverse_skips_with_two:
        ev.append(Skipped(nxt))
        nxt = seat
    if f & CHAIN:
        s[PENDING_DRAW] += info["amount"][rank]
        s[PENDING_KIND] = rank
        ev.append(ChainGrew(nxt, s[PENDING_DRAW]))
    elif s[PENDING_DRAW] and rank == rules.cancel_rank:
        s[PENDING_DRAW] = 0
        s[PENDING_KIND] = None
        ev.append(ChainCancelled(seat))
    if f & SKIP:
        ev.append(Skipped(nxt))
        if rules.skipped_one_card_declares and nxt != seat and len(s[HANDS][nxt]) == 1:
            s[OWES] = tuple(x for x in s[OWES] if x != nxt) + (nxt,)
        nxt = (nxt + d) % n
    if f & FORCED:
        _queue(s, nxt, info["amount"][rank], f"penalty-{rank.value}")
        ev.append(Skipped(nxt))
        nxt = (nxt + d) % n
    if f & PREVIOUS:
        _queue(s, (seat - d) % n, info["amount"][rank], f"penalty-{rank.value}")
    changed: tuple[int, ...] = ()
    if hand_moves and f & SWAP and target is not None:
        hands = list(s[HANDS])
        hands[seat], hands[target] = hands[target], hands[seat]
        s[HANDS] = tuple(hands)
        ev.append(HandsSwapped(seat, target))
        changed = (seat, target)
    if hand_moves and f & ROTATE:
        old = s[HANDS]
        s[HANDS] = tuple(old[(i - d) % n] for i in range(n))
        ev.append(HandsRotated(d))
        changed = tuple(range(n))
    s[TURN] = nxt
    return changed


def _declarations(
    s: list, seat: int, declare: bool, changed: tuple[int, ...], ev: Events
) -> None:
    """After a play: the mover's DERNIER, and seats a swap/rotate left at one card."""
    rules: Rules = s[0]
    hands = s[HANDS]
    owes = [x for x in s[OWES] if x != seat]
    if len(hands[seat]) == 1:
        if declare:
            ev.append(Declared(seat))
        elif rules.declaration == "with_play" and seat not in changed:
            ev.append(Penalty(seat, rules.declaration_penalty, "declaration"))
            _queue(s, seat, rules.declaration_penalty, "penalty-declaration")
        else:
            owes.append(seat)
    for x in changed:
        if x != seat and len(hands[x]) == 1 and x not in owes:
            owes.append(x)
    s[OWES] = tuple(owes)


# ---------------------------------------------------------------------------------------------
# Seat moves


def _in_turn_error(st: State, card: Card) -> tuple[str, str] | None:
    rules = st.rules
    info = rules._info
    rank = card.rank
    top = st.top
    if st.pending_draw:
        kind = st.pending_kind
        if rank in info["answers"][kind]:
            return None
        if (
            rank == rules.cancel_rank
            and kind == rules.cancel_chain
            and (not rules.cancel_same_suit or card.suit == top.suit)
        ):
            return None
        return (
            "must-answer-chain",
            f"{st.pending_draw} cards are pending on a {kind.value} chain: answer it or draw",
        )
    if info["flags"][rank] & WILD:
        return None
    eff = st.named_suit if st.named_suit is not None else top.suit
    if card.suit is not None and card.suit == eff:
        return None
    if rank == top.rank:
        return None
    return ("must-match", f"{card} matches neither the suit nor the rank of {top}")


def _play(st: State, s: list, mv: Play, ev: Events) -> None:
    rules = st.rules
    if st.phase is not PLAY:
        _need_phase(st, PLAY, "playing a card")
    seat = mv.seat
    if type(seat) is not int or not 0 <= seat < st.players:
        _check_seat(st, seat)
    slot = mv.slot
    hand = st.hands[seat]
    try:
        i = hand.index(slot)
    except ValueError:
        raise IllegalMove("card-not-held", f"seat {seat} holds no slot {slot!r}") from None
    card = mv.card
    info = rules._info
    if id(card) not in info["card_ids"] and (
        card.__class__ is not Card or card not in info["cards"]
    ):
        raise IllegalMove("unknown-card", f"{card!r} is not a card of the {rules.deck} deck")
    known = st.shown.get(slot) if st.shown else None
    if known is not None and known != card:
        raise IllegalMove("face-mismatch", f"slot {slot} is known to be {known}, not {card}")
    f = info["flags"][card.rank]
    suit = mv.suit
    target = mv.target
    if f or suit is not None or target is not None:
        _check_play_options(st, seat, card, f, suit, target, len(hand) == 1)
    top = st.top
    jump = seat != st.turn
    if not jump:
        if st.drawn >= 0 and slot != st.drawn:
            raise IllegalMove("only-drawn-card", "after drawing only the drawn card may be played")
        eff = st.named_suit if st.named_suit is not None else top.suit
        if st.pending_draw or not (
            f & WILD or card.rank is top.rank or (eff is not None and card.suit is eff)
        ):
            err = _in_turn_error(st, card)
        else:
            err = None
    elif not rules.jump_in:
        err = ("not-your-turn", f"seat {seat} cannot play: it is seat {st.turn}'s turn")
    elif top is None or card.rank is not top.rank or card.suit is not top.suit:
        err = ("not-identical", f"a jump-in needs a card identical to {top}, not {card}")
    else:
        err = None
    if err is not None:
        if rules.errors_penalised:
            _wrong_play(st, s, seat, slot, card, err, not jump, ev)
            return
        raise IllegalMove(*err)

    if s[OWES]:
        _close_windows(s, ev)
        if s[HAND_END] is not None:
            _settle(s, ev)
            return
        hand = s[HANDS][seat]
        i = hand.index(slot)
    new_hand = hand[:i] + hand[i + 1 :]
    hands = list(s[HANDS])
    hands[seat] = new_hand
    s[HANDS] = tuple(hands)
    s[PLAYED] = (slot, card, s[PLAYED])
    if known is not None:
        shown = dict(s[SHOWN])
        del shown[slot]
        s[SHOWN] = shown
    s[DISCARD] = s[DISCARD] + (slot,)
    s[TOP] = card
    s[DRAWN] = -1
    if s[STALLS]:
        s[STALLS] = 0
    if jump:
        ev.append(JumpedIn(seat))
    ev.append(Played(seat, slot, card))
    if not new_hand:
        before = s[OWED]
        _effects(s, seat, card, suit, None, ev, hand_moves=False)
        s[HAND_WINNER] = seat
        if s[PENDING_DRAW]:
            _queue(s, s[TURN], s[PENDING_DRAW], f"penalty-{s[PENDING_KIND].value}")
            s[PENDING_DRAW] = 0
            s[PENDING_KIND] = None
        if not rules.last_card_draws:
            s[OWED] = before
        s[OWES] = ()
        _settle(s, ev)
        return
    if f:
        changed = _effects(s, seat, card, suit, target, ev)
    else:  # a plain card: no action
        s[NAMED_SUIT] = None
        s[TURN] = (seat + s[DIRECTION]) % st.players
        changed = ()
    if changed or len(new_hand) == 1 or s[OWES]:
        _declarations(s, seat, mv.declare, changed, ev)
    if s[OWED]:
        _settle(s, ev)


def _check_play_options(
    st: State, seat: int, card: Card, f: int, suit: object, target: object, last: bool
) -> None:
    """The named suit and the swap target of a play fit its card."""
    if suit is not None:
        if not f & _NAMING:
            raise IllegalMove("cannot-name-suit", f"{card} does not name a suit")
        if not isinstance(suit, Suit):
            raise IllegalMove("bad-suit", f"{suit!r} is not a suit")
    elif f & NAMES:
        raise IllegalMove("must-name-suit", f"{card} must name a suit")
    if f & SWAP:
        if target is None and not last:
            raise IllegalMove("must-choose-target", f"{card} needs a seat to swap hands with")
        if target is not None and (
            type(target) is not int or not 0 <= target < st.players or target == seat
        ):
            raise IllegalMove("bad-target", f"cannot swap hands with seat {target!r}")
    elif target is not None:
        raise IllegalMove("cannot-target", f"{card} does not swap hands")


def _wrong_play(
    st: State,
    s: list,
    seat: int,
    slot: int,
    card: Card,
    err: tuple[str, str],
    in_turn: bool,
    ev: Events,
) -> None:
    """originale: a wrong card is shown, taken back, and costs a draw (and the turn, in turn)."""
    rules = st.rules
    _close_windows(s, ev)
    if s[HAND_END] is not None:
        _settle(s, ev)
        return
    shown = dict(s[SHOWN])
    shown[slot] = card
    s[SHOWN] = shown
    ev.append(TakenBack(seat, slot, card))
    ev.append(Penalty(seat, rules.error_penalty, err[0]))
    _queue(s, seat, rules.error_penalty, "penalty-error")
    if in_turn:
        if s[PENDING_DRAW]:
            _queue(s, seat, s[PENDING_DRAW], f"penalty-{s[PENDING_KIND].value}")
            s[PENDING_DRAW] = 0
            s[PENDING_KIND] = None
        s[TURN] = _next(s, seat)
        s[DRAWN] = -1
    _settle(s, ev)


def _draw(st: State, s: list, mv: Draw, ev: Events) -> None:
    seat = mv.seat
    if st.phase is not PLAY or seat != st.turn:
        _need_phase(st, PLAY, "drawing")
        _check_seat(st, seat)
        _need_turn(st, seat, "draw")
    if st.drawn >= 0:
        raise IllegalMove("already-drawn", "only one card may be drawn a turn: play it or pass")
    pending = st.pending_draw
    if not pending and not st.pile:
        raise IllegalMove("pile-empty", "the draw pile is empty and nothing can be reshuffled")
    if s[OWES]:
        _close_windows(s, ev)
        if s[HAND_END] is not None:
            _settle(s, ev)
            return
    if s[STALLS]:
        s[STALLS] = 0
    if pending:
        _queue(s, seat, pending, f"penalty-{st.pending_kind.value}")
        s[PENDING_DRAW] = 0
        s[PENDING_KIND] = None
        if st.rules.taking_ends_turn:
            s[TURN] = _next(s, seat)
    elif len(s[PILE]) > 1 and not s[OWED] and s[CHANCE] is None:  # the common case, inline
        pile = s[PILE]
        slot = pile[0]
        s[PILE] = pile[1:]
        hands = list(s[HANDS])
        hands[seat] = hands[seat] + (slot,)
        s[HANDS] = tuple(hands)
        last = list(s[LAST_DRAW])
        last[seat] = s[CLOCK]
        s[LAST_DRAW] = tuple(last)
        s[DRAWN] = slot
        ev.append(Drew(seat, (slot,), "draw"))
        return
    else:
        _queue(s, seat, 1, "draw")
    _settle(s, ev)


def _pass(st: State, s: list, mv: Pass, ev: Events) -> None:
    seat = mv.seat
    if st.phase is not PLAY or seat != st.turn:
        _need_phase(st, PLAY, "passing")
        _check_seat(st, seat)
        _need_turn(st, seat, "pass")
    if st.drawn < 0 and (st.pending_draw or st.pile):
        raise IllegalMove("pass-before-draw", "a player may pass only after drawing a card")
    if s[OWES]:
        _close_windows(s, ev)
        if s[HAND_END] is not None:
            _settle(s, ev)
            return
    ev.append(Passed(seat))
    s[TURN] = (seat + s[DIRECTION]) % st.players
    s[DRAWN] = -1
    if st.drawn < 0:  # nothing could be drawn: a full round of such passes blocks the hand
        s[STALLS] += 1
        if s[STALLS] >= st.players:
            s[HAND_END] = "blocked"
    if s[OWED] or s[HAND_END]:
        _settle(s, ev)


def _declare(st: State, s: list, mv: Declare, ev: Events) -> None:
    _need_phase(st, PLAY, "declaring")
    seat = _check_seat(st, mv.seat)
    if seat not in st.owes:
        raise IllegalMove("not-owed", f"seat {seat} has no declaration to make now")
    s[OWES] = tuple(x for x in st.owes if x != seat)
    ev.append(Declared(seat))


def _catch(st: State, s: list, mv: Catch, ev: Events) -> None:
    _need_phase(st, PLAY, "catching")
    seat = _check_seat(st, mv.seat)
    rules = st.rules
    if rules.declaration != "catch":
        raise IllegalMove("no-catch", f"{rules.name} has no catching of a missed declaration")
    target = mv.target
    if (
        type(target) is not int
        or target == seat
        or target not in st.owes
        or len(st.hands[target]) != 1
    ):
        raise IllegalMove("nothing-to-catch", f"seat {target!r} cannot be caught now")
    s[OWES] = tuple(x for x in st.owes if x != target)
    ev.append(Caught(seat, target))
    ev.append(Penalty(target, rules.declaration_penalty, "declaration"))
    _queue(s, target, rules.declaration_penalty, "penalty-declaration")
    _settle(s, ev)


def _name_suit(st: State, s: list, mv: NameSuit, ev: Events) -> None:
    _need_phase(st, Phase.NAME_SUIT, "naming a suit")
    seat = _check_seat(st, mv.seat)
    _need_turn(st, seat, "name the suit")
    if not isinstance(mv.suit, Suit):
        raise IllegalMove("bad-suit", f"{mv.suit!r} is not a suit")
    s[PHASE] = PLAY
    s[NAMER] = -1
    if st.rules.first_card == "standard":
        s[NAMED_SUIT] = mv.suit
        ev.append(SuitNamed(seat, mv.suit))
        s[TURN] = seat
    else:
        _effects(s, st.dealer, st.top, mv.suit, None, ev)
    _settle(s, ev)


def _choose_hand_size(st: State, s: list, mv: ChooseHandSize, ev: Events) -> None:
    _need_phase(st, Phase.HAND_SIZE, "choosing the hand size")
    seat = _check_seat(st, mv.seat)
    _need_turn(st, seat, "choose the hand size")
    lo, hi = st.rules.hand_size_range or (st.rules.hand_size, st.rules.hand_size)
    if type(mv.size) is not int or not lo <= mv.size <= hi:
        raise IllegalMove("bad-hand-size", f"the hand size must be {lo} to {hi}, not {mv.size!r}")
    ev.append(HandSizeChosen(seat, mv.size))
    _deal(s, mv.size, ev)


def _cut(st: State, s: list, mv: Cut, ev: Events) -> None:
    _need_phase(st, Phase.CUT, "cutting")
    seat = _check_seat(st, mv.seat)
    _need_turn(st, seat, "cut")
    rules = st.rules
    card = mv.card
    if card is not None and (not isinstance(card, Card) or card not in rules._info["cards"]):
        raise IllegalMove("unknown-card", f"{card!r} is not a card of the {rules.deck} deck")
    special = card is not None and card.rank in rules._info["special"]
    if mv.keep and card is not None and not special:
        raise IllegalMove("cut-not-special", f"only a special card may be kept, not {card}")
    if not mv.keep and special:
        raise IllegalMove("cut-must-keep", f"the cutter must keep the special card {card}")
    bottom = st.pile[-1]
    if mv.keep:
        s[PILE] = st.pile[:-1]
        _set_hand(s, seat, (bottom,))
        s[CUT_KEPT] = seat
        if card is not None:
            shown = dict(s[SHOWN])
            shown[bottom] = card
            s[SHOWN] = shown
        ev.append(CutKept(seat, bottom))
    if rules.hand_size_range is not None:
        s[PHASE] = Phase.HAND_SIZE
    else:
        _deal(s, rules.hand_size, ev)


def _timeout(st: State, s: list, mv: Timeout, ev: Events) -> None:
    seat = _check_seat(st, mv.seat)
    _need_turn(st, seat, "time out")
    rules = st.rules
    if rules.timeout == "forfeit":
        _forfeit(st, s, seat, "timeout", ev)
        return
    phase = st.phase
    if phase is Phase.CUT:
        _cut(st, s, Cut(seat, False), ev)
        return
    if phase is Phase.HAND_SIZE:
        lo = (rules.hand_size_range or (rules.hand_size,))[0]
        _choose_hand_size(st, s, ChooseHandSize(seat, lo), ev)
        return
    if phase is Phase.NAME_SUIT:
        suit = st.top.suit if st.top is not None and st.top.suit is not None else Suit.YELLOW
        _name_suit(st, s, NameSuit(seat, suit), ev)
        return
    _close_windows(s, ev)
    if s[HAND_END] is not None:
        _settle(s, ev)
        return
    if rules.timeout == "penalty":
        ev.append(Penalty(seat, rules.error_penalty, "timeout"))
        _queue(s, seat, rules.error_penalty, "penalty-timeout")
    if s[PENDING_DRAW]:
        _queue(s, seat, s[PENDING_DRAW], f"penalty-{s[PENDING_KIND].value}")
        s[PENDING_DRAW] = 0
        s[PENDING_KIND] = None
    elif rules.timeout == "draw_pass" and st.drawn < 0:
        _queue(s, seat, 1, "timeout-draw")
    s[TURN] = _next(s, seat)
    s[DRAWN] = -1
    _settle(s, ev)


def _leave(st: State, s: list, mv: Leave, ev: Events) -> None:
    seat = _check_seat(st, mv.seat)
    _forfeit(st, s, seat, "left", ev)


def _forfeit(st: State, s: list, seat: int, reason: str, ev: Events) -> None:
    """The match ends; with timeout "forfeit", -1 match point to ``seat``, +1 to each other."""
    n = st.players
    if st.rules.timeout == "forfeit":
        s[MATCH_POINTS] = tuple(
            p + (-1 if i == seat else 1) for i, p in enumerate(st.match_points)
        )
    ev.append(Forfeited(seat, reason, s[MATCH_POINTS]))
    sizes = tuple(len(h) for h in st.hands) if st.phase is PLAY else st.final_sizes
    order = scoring.standings(st.rules, st.scores, st.hands_won, sizes, st.last_draw, (seat,))
    s[FINAL_SIZES] = sizes if len(sizes) == n else (0,) * n
    _finish_match(s, order, ev)


def _finish_match(s: list, order: tuple[int, ...], ev: Events) -> None:
    s[PHASE] = Phase.MATCH_OVER
    s[CHANCE] = None
    s[STANDINGS] = order
    s[WINNER] = order[0]
    ev.append(MatchOver(order[0], order))


# ---------------------------------------------------------------------------------------------
# Hands: start, deal, first card, end


def _start_hand(s: list, ev: Events) -> None:
    rules: Rules = s[0]
    n = len(s[HANDS])
    s[HAND_NUMBER] += 1
    s[PHASE] = Phase.DEAL
    s[TURN] = s[DEALER]
    s[DIRECTION] = 1
    s[HANDS] = ((),) * n
    s[PILE] = ()
    s[DISCARD] = ()
    s[TOP] = None
    s[NAMED_SUIT] = None
    s[PENDING_DRAW] = 0
    s[PENDING_KIND] = None
    s[DRAWN] = -1
    s[OWES] = ()
    s[OWED] = ()
    s[SHOWN] = {}
    s[PLAYED] = None
    s[STALLS] = 0
    s[NEXT_SLOT] = 0
    s[HAND_WINNER] = None
    s[HAND_END] = None
    s[CUT_KEPT] = -1
    s[NAMER] = -1
    s[LAST_DRAW] = (-1,) * n
    s[CHANCE] = ChanceRequest("shuffle", count=rules._info["deck_size"], first_slot=0)
    ev.append(HandStarted(s[HAND_NUMBER], s[DEALER]))


def _deal(s: list, size: int, ev: Events) -> None:
    n = len(s[HANDS])
    dealer = s[DEALER]
    order = [(dealer + 1 + i) % n for i in range(n)]
    pile = s[PILE]
    kept = s[CUT_KEPT]
    if kept < 0:  # round by round: seat at position k gets every n-th card from k
        k = n * size
        dealt = {seat: pile[i:k:n] for i, seat in enumerate(order)}
    else:
        lists: dict[int, list[int]] = {seat: [] for seat in order}
        k = 0
        for rnd in range(size):
            for seat in order:
                if seat == kept and rnd == size - 1:
                    continue
                lists[seat].append(pile[k])
                k += 1
        dealt = {seat: tuple(x) for seat, x in lists.items()}
    s[PILE] = pile[k:]
    hands = list(s[HANDS])
    for seat in order:
        hands[seat] = hands[seat] + dealt[seat]
        ev.append(Dealt(seat, dealt[seat]))
    s[HANDS] = tuple(hands)
    s[PHASE] = Phase.FLIP
    s[CHANCE] = ChanceRequest("flip", count=1, slots=(s[PILE][0],))


def _shuffle(st: State, s: list, mv: Shuffle, ev: Events) -> None:
    req = st.chance
    if req.kind != "shuffle":
        raise IllegalMove("wrong-chance", f"expected a {req.kind} input, got a shuffle")
    slots = mv.slots
    want = range(req.first_slot, req.first_slot + req.count)
    if (
        not isinstance(slots, tuple)
        or len(slots) != req.count
        or (slots and set(map(type, slots)) != {int})
        or set(slots) != set(want)
    ):
        raise IllegalMove(
            "bad-shuffle",
            f"a shuffle must order the slots {req.first_slot}..{req.first_slot + req.count - 1}",
        )
    s[CHANCE] = None
    s[NEXT_SLOT] = req.first_slot + req.count
    rules = st.rules
    if req.source is None:
        s[PILE] = slots
        ev.append(Shuffled(len(slots)))
        if rules.cut:
            s[PHASE] = Phase.CUT
        elif rules.hand_size_range is not None:
            s[PHASE] = Phase.HAND_SIZE
        else:
            _deal(s, rules.hand_size, ev)
        return
    ev.append(Reshuffled(len(slots)))
    if st.phase is Phase.FLIP:  # standard: a first wild draw-four went back into the deck
        s[PILE] = slots
        s[DISCARD] = ()
        s[TOP] = None
        s[CHANCE] = ChanceRequest("flip", count=1, slots=(slots[0],))
        return
    s[PILE] = st.pile + slots
    # the reshuffled slots are the oldest discards; cards played since the request stay
    s[DISCARD] = st.discard[len(req.source) :]
    _settle(s, ev)


def _flip(st: State, s: list, mv: Flip, ev: Events) -> None:
    req = st.chance
    if req.kind != "flip":
        raise IllegalMove("wrong-chance", f"expected a {req.kind} input, got a flip")
    rules = st.rules
    card = mv.card
    if not isinstance(card, Card) or card not in rules._info["cards"]:
        raise IllegalMove("unknown-card", f"{card!r} is not a card of the {rules.deck} deck")
    slot = st.pile[0]
    s[PILE] = st.pile[1:]
    s[DISCARD] = (slot,)
    s[TOP] = card
    s[PLAYED] = (slot, card, s[PLAYED])
    s[CHANCE] = None
    ev.append(Flipped(slot, card))
    dealer = st.dealer
    n = st.players
    f = rules._info["flags"][card.rank]
    first = (dealer + 1) % n
    if rules.first_card == "standard":
        if card.rank == Rank.WILD4:
            source = (slot, *s[PILE])
            s[CHANCE] = ChanceRequest(
                "shuffle", count=len(source), first_slot=st.next_slot, source=source
            )
            return
        if f & NAMES:
            s[PHASE] = Phase.NAME_SUIT
            s[NAMER] = first
            return
        s[PHASE] = PLAY
        if f & REVERSE:
            s[DIRECTION] = -1
            ev.append(DirectionChanged(-1))
            s[TURN] = dealer
        else:
            _effects(s, dealer, card, None, None, ev)
        _settle(s, ev)
        return
    if f & _NAMING:
        s[PHASE] = Phase.NAME_SUIT
        s[NAMER] = dealer
        return
    s[PHASE] = PLAY
    _effects(s, dealer, card, None, None, ev, hand_moves=rules.first_swap_acts)
    _settle(s, ev)


def _end_hand(s: list, ev: Events) -> None:
    winner = s[HAND_WINNER]
    reason = "out" if winner is not None else (s[HAND_END] or "pile-empty")
    s[PHASE] = Phase.REVEAL
    s[PENDING_DRAW] = 0
    s[PENDING_KIND] = None
    s[OWES] = ()
    s[DRAWN] = -1
    ev.append(HandOver(winner, reason))
    slots = tuple(x for hand in s[HANDS] for x in hand)
    s[CHANCE] = ChanceRequest("reveal", count=len(slots), slots=slots)


def _reveal(st: State, s: list, mv: Reveal, ev: Events) -> None:
    req = st.chance
    if req.kind != "reveal":
        raise IllegalMove("wrong-chance", f"expected a {req.kind} input, got a reveal")
    rules = st.rules
    cards = rules._info["cards"]
    try:
        given = dict(mv.faces)
    except (TypeError, ValueError):
        raise IllegalMove("bad-reveal", "faces must be (slot, card) pairs") from None
    if len(given) != len(mv.faces) or set(given) != set(req.slots):
        raise IllegalMove("bad-reveal", "a reveal must give each slot still in a hand once")
    for card in given.values():
        if card.__class__ is not Card or card not in cards:
            raise IllegalMove("unknown-card", f"{card!r} is not a card of the {rules.deck} deck")
    for slot, known in st.shown.items():
        if slot in given and known != given[slot]:
            raise IllegalMove(
                "face-mismatch", f"slot {slot} is known to be {known}, not {given[slot]}"
            )
    shown = dict(st.shown)
    shown.update(given)
    s[SHOWN] = shown
    ev.append(Revealed(tuple(mv.faces)))
    pts = rules._info["points"]
    points = [sum([pts.get(given[x].rank, 0) for x in hand]) for hand in st.hands]
    winner = st.hand_winner
    deltas = scoring.hand_deltas(rules, points, winner)
    scores = tuple(a + b for a, b in zip(st.scores, deltas, strict=True))
    s[SCORES] = scores
    if winner is not None:
        won = list(st.hands_won)
        won[winner] += 1
        s[HANDS_WON] = tuple(won)
    s[FINAL_SIZES] = tuple(len(h) for h in st.hands)
    s[CHANCE] = None
    ev.append(HandScored(deltas, scores))
    if scoring.match_ended(rules, scores, s[HANDS_WON], st.hand_number):
        order = scoring.standings(rules, scores, s[HANDS_WON], s[FINAL_SIZES], st.last_draw)
        _finish_match(s, order, ev)
        return
    s[DEALER] = (st.dealer + 1) % st.players
    _start_hand(s, ev)


def _choose_dealer(st: State, s: list, mv: ChooseDealer, ev: Events) -> None:
    req = st.chance
    if req.kind != "dealer":
        raise IllegalMove("wrong-chance", f"expected a {req.kind} input, got a dealer choice")
    if type(mv.dealer) is not int or not 0 <= mv.dealer < st.players:
        raise IllegalMove("bad-dealer", f"no seat {mv.dealer!r} to deal")
    s[DEALER] = mv.dealer
    s[CHANCE] = None
    ev.append(DealerChosen(mv.dealer))
    _start_hand(s, ev)


_HANDLERS = {
    Play: _play,
    Draw: _draw,
    Pass: _pass,
    Declare: _declare,
    Catch: _catch,
    NameSuit: _name_suit,
    ChooseHandSize: _choose_hand_size,
    Cut: _cut,
    Timeout: _timeout,
    Leave: _leave,
    ChooseDealer: _choose_dealer,
    Shuffle: _shuffle,
    Flip: _flip,
    Reveal: _reveal,
}
_CHANCE_HANDLERS = frozenset({_choose_dealer, _shuffle, _flip, _reveal})
_DISPATCH = {kind: (h, h in _CHANCE_HANDLERS) for kind, h in _HANDLERS.items()}
