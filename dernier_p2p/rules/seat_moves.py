"""Seat moves: play (with originale's penalised errors), draw, pass, declare, catch, name a
suit, choose the hand size, cut, time out, leave.
"""

from __future__ import annotations

from dernier_p2p.rules import scoring
from dernier_p2p.rules.cards import Card, Suit, canonical_card
from dernier_p2p.rules.errors import IllegalMove
from dernier_p2p.rules.events import (
    Caught,
    CutKept,
    Declared,
    Drew,
    Forfeited,
    HandSizeChosen,
    JumpedIn,
    Passed,
    Penalty,
    Played,
    SeatOut,
    SuitNamed,
    TakenBack,
)
from dernier_p2p.rules.flow import (
    NAMING,
    PLAY,
    Events,
    apply_effects,
    can_draw,
    check_seat,
    close_windows,
    declarations_after_play,
    finish_match,
    leave_ends_match,
    need_phase,
    need_turn,
    next_seat,
    queue_draw,
    set_hand,
    settle,
    step,
)
from dernier_p2p.rules.hands import deal, start_hand
from dernier_p2p.rules.moves import (
    Catch,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    Leave,
    NameSuit,
    Pass,
    Play,
    Timeout,
)
from dernier_p2p.rules.state import (
    CHANCE,
    CLOCK,
    CUT_KEPT,
    CUT_PHASE,
    DEALER,
    DIRECTION,
    DISCARD,
    DRAWN,
    FINAL_SIZES,
    HAND_END,
    HAND_SIZE_PHASE,
    HAND_WINNER,
    HANDS,
    LAST_DRAW,
    MATCH_POINTS,
    NAME_SUIT_PHASE,
    NAMED_SUIT,
    NAMER,
    OUT,
    OWED,
    OWES,
    PENDING_DRAW,
    PENDING_KIND,
    PHASE,
    PILE,
    PLAYED,
    SHOWN,
    STALLS,
    TOP,
    TURN,
    State,
)
from dernier_p2p.rules.variants import (
    FLAG_BITS,
    NAMES,
    SWAP,
    WILD,
)


def in_turn_error(st: State, card: Card) -> tuple[str, str] | None:
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


# Events are immutable: the frequent ones are built once and shared.
_PLAYED: dict[int, Played] = {}
_DREW: dict[int, Drew] = {}
_PASSED = tuple(Passed(i) for i in range(128))
# cards whose play is wrong without options: a suit to name, a seat to swap with
_NEEDS_OPTIONS = NAMES | SWAP


def on_play(st: State, s: list, mv: Play, ev: Events) -> None:
    rules = st.rules
    if st.phase is not PLAY:
        need_phase(st, PLAY, "playing a card")
    seat = mv.seat
    if type(seat) is not int or not 0 <= seat < st.players:
        check_seat(st, seat)
    slot = mv.slot
    declare = mv.declare
    if slot.__class__ is not int or (declare is not False and declare is not True):
        malformed_play(mv)
    hand = st.hands[seat]
    try:
        i = hand.index(slot)
    except ValueError:
        raise IllegalMove("card-not-held", f"seat {seat} holds no slot {slot!r}") from None
    card = mv.card
    info = rules._info
    code = info["card_code"].get(id(card))
    if code is None:  # not a canonical card object: an equal card of the deck, or no card at all
        if card.__class__ is not Card or card not in info["cards"]:
            raise IllegalMove("unknown-card", f"{card!r} is not a card of the {rules.deck} deck")
        card = canonical_card(card.rank, card.suit)
        code = info["card_code"][id(card)]
    f = code & FLAG_BITS
    known = st.shown.get(slot) if st.shown else None
    if known is not None and known != card:
        raise IllegalMove("face-mismatch", f"slot {slot} is known to be {known}, not {card}")
    suit = mv.suit
    target = mv.target
    if f & _NEEDS_OPTIONS or suit is not None or target is not None:
        check_play_options(st, seat, card, f, suit, target, len(hand) == 1)
    top = st.top
    jump = seat != st.turn
    if not jump:
        if st.drawn >= 0 and slot != st.drawn:
            raise IllegalMove("only-drawn-card", "after drawing only the drawn card may be played")
        eff = st.named_suit if st.named_suit is not None else top.suit
        if st.pending_draw or not (
            f & WILD or card.rank is top.rank or (eff is not None and card.suit is eff)
        ):
            err = in_turn_error(st, card)
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
            wrong_play(st, s, seat, slot, card, err, not jump, ev)
            return
        raise IllegalMove(*err)

    if s[OWES]:
        close_windows(s, ev, seat)
        if s[HAND_END] is not None:
            settle(s, ev)
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
    # seats are fewer than 128 (no deck holds more cards), card indexes fit in 7 bits too;
    # an index means another card in another deck: check the card
    key = (slot << 7 | seat) << 7 | code >> 11
    e = _PLAYED.get(key)
    if e is None or e.card is not card:
        if len(_PLAYED) > 200_000:
            _PLAYED.clear()
        e = _PLAYED[key] = Played(seat, slot, card)
    ev.append(e)
    if not new_hand:
        before = s[OWED]
        apply_effects(s, seat, card, suit, None, ev, hand_moves=False)
        s[HAND_WINNER] = seat
        if s[PENDING_DRAW]:
            queue_draw(s, s[TURN], s[PENDING_DRAW], s[0]._info["reason"][s[PENDING_KIND]])
            s[PENDING_DRAW] = 0
            s[PENDING_KIND] = None
        if not rules.last_card_draws:
            s[OWED] = before
        s[OWES] = ()
        settle(s, ev)
        return
    if f:
        changed = apply_effects(s, seat, card, suit, target, ev)
    else:  # a plain card: no action
        s[NAMED_SUIT] = None
        s[TURN] = step(seat, s[DIRECTION], st.players, st.out)
        changed = ()
    if changed or len(new_hand) == 1 or s[OWES]:
        declarations_after_play(s, seat, declare, changed, ev, len(new_hand))
    if s[OWED]:
        settle(s, ev)


def malformed_play(mv: Play) -> None:
    """Raise the error for a Play whose slot is not an int or whose declare is not a bool."""
    if mv.slot.__class__ is not int:
        raise IllegalMove("malformed-move", f"a slot is an int, not {mv.slot!r}")
    raise IllegalMove("malformed-move", f"declare is True or False, not {mv.declare!r}")


def check_play_options(
    st: State, seat: int, card: Card, f: int, suit: object, target: object, last: bool
) -> None:
    """The named suit and the swap target of a play fit its card."""
    if suit is not None:
        if not f & NAMING:
            raise IllegalMove("cannot-name-suit", f"{card} does not name a suit")
        if not isinstance(suit, Suit):
            raise IllegalMove("bad-suit", f"{suit!r} is not a suit")
    elif f & NAMES:
        raise IllegalMove("must-name-suit", f"{card} must name a suit")
    if f & SWAP:
        if target is None and not last:
            raise IllegalMove("must-choose-target", f"{card} needs a seat to swap hands with")
        if target is not None and (
            type(target) is not int
            or not 0 <= target < st.players
            or target == seat
            or target in st.out
        ):
            raise IllegalMove("bad-target", f"cannot swap hands with seat {target!r}")
    elif target is not None:
        raise IllegalMove("cannot-target", f"{card} does not swap hands")


def wrong_play(
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
    close_windows(s, ev, seat)
    if s[HAND_END] is not None:
        settle(s, ev)
        return
    shown = dict(s[SHOWN])
    shown[slot] = card
    s[SHOWN] = shown
    ev.append(TakenBack(seat, slot, card))
    ev.append(Penalty(seat, rules.error_penalty, err[0]))
    queue_draw(s, seat, rules.error_penalty, "penalty-error")
    if in_turn:
        if s[PENDING_DRAW]:
            queue_draw(s, seat, s[PENDING_DRAW], s[0]._info["reason"][s[PENDING_KIND]])
            s[PENDING_DRAW] = 0
            s[PENDING_KIND] = None
        s[TURN] = next_seat(s, seat)
        s[DRAWN] = -1
    settle(s, ev)


def on_draw(st: State, s: list, mv: Draw, ev: Events) -> None:
    seat = mv.seat
    if st.phase is not PLAY or seat.__class__ is not int or seat != st.turn:
        need_phase(st, PLAY, "drawing")
        check_seat(st, seat)
        need_turn(st, seat, "draw")
    if st.drawn >= 0:
        raise IllegalMove("already-drawn", "only one card may be drawn a turn: play it or pass")
    pending = st.pending_draw
    if not pending and not st.pile and not can_draw(st):
        raise IllegalMove("pile-empty", "the draw pile is empty and nothing can be reshuffled")
    if s[OWES]:
        close_windows(s, ev, seat, draws=True)
        if s[HAND_END] is not None:
            settle(s, ev)
            return
    if s[STALLS]:
        s[STALLS] = 0
    if pending:
        queue_draw(s, seat, pending, st.rules._info["reason"][st.pending_kind])
        s[PENDING_DRAW] = 0
        s[PENDING_KIND] = None
        if st.rules.taking_ends_turn:
            s[TURN] = next_seat(s, seat)
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
        key = slot << 7 | seat
        e = _DREW.get(key)
        if e is None:
            if len(_DREW) > 100_000:
                _DREW.clear()
            e = _DREW[key] = Drew(seat, (slot,), "draw")
        ev.append(e)
        if s[OWES]:  # only the mover's own window can be open (not under declaration
            s[OWES] = ()  # "window": its draw closed it): at two cards it lapses
        return
    else:
        queue_draw(s, seat, 1, "draw")
    settle(s, ev)


def on_pass(st: State, s: list, mv: Pass, ev: Events) -> None:
    seat = mv.seat
    if st.phase is not PLAY or seat.__class__ is not int or seat != st.turn:
        need_phase(st, PLAY, "passing")
        check_seat(st, seat)
        need_turn(st, seat, "pass")
    if st.drawn < 0 and can_draw(st):
        raise IllegalMove("pass-before-draw", "a player may pass only after drawing a card")
    if s[OWES]:
        close_windows(s, ev, seat)
        if s[HAND_END] is not None:
            settle(s, ev)
            return
    ev.append(_PASSED[seat])
    s[TURN] = step(seat, s[DIRECTION], st.players, st.out)
    s[DRAWN] = -1
    if st.drawn < 0:  # nothing could be drawn: a full round of such passes blocks the hand
        s[STALLS] += 1
        if s[STALLS] >= st.players - len(st.out):
            s[HAND_END] = "blocked"
    if s[OWED] or s[HAND_END]:
        settle(s, ev)


def on_declare(st: State, s: list, mv: Declare, ev: Events) -> None:
    need_phase(st, PLAY, "declaring")
    seat = check_seat(st, mv.seat)
    if seat not in st.owes:
        raise IllegalMove("not-owed", f"seat {seat} has no declaration to make now")
    s[OWES] = tuple(x for x in st.owes if x != seat)
    ev.append(Declared(seat))


def on_catch(st: State, s: list, mv: Catch, ev: Events) -> None:
    need_phase(st, PLAY, "catching")
    seat = check_seat(st, mv.seat)
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
    queue_draw(s, target, rules.declaration_penalty, "penalty-declaration")
    settle(s, ev)


def on_name_suit(st: State, s: list, mv: NameSuit, ev: Events) -> None:
    need_phase(st, NAME_SUIT_PHASE, "naming a suit")
    seat = check_seat(st, mv.seat)
    need_turn(st, seat, "name the suit")
    if not isinstance(mv.suit, Suit):
        raise IllegalMove("bad-suit", f"{mv.suit!r} is not a suit")
    s[PHASE] = PLAY
    s[NAMER] = -1
    if st.rules.first_card == "standard":
        s[NAMED_SUIT] = mv.suit
        ev.append(SuitNamed(seat, mv.suit))
        s[TURN] = seat
    else:
        apply_effects(s, st.dealer, st.top, mv.suit, None, ev,
                      hand_moves=st.rules.first_rotate_acts)
    settle(s, ev)


def on_choose_hand_size(st: State, s: list, mv: ChooseHandSize, ev: Events) -> None:
    need_phase(st, HAND_SIZE_PHASE, "choosing the hand size")
    seat = check_seat(st, mv.seat)
    need_turn(st, seat, "choose the hand size")
    lo, hi = st.rules.hand_size_range or (st.rules.hand_size, st.rules.hand_size)
    if type(mv.size) is not int or not lo <= mv.size <= hi:
        raise IllegalMove("bad-hand-size", f"the hand size must be {lo} to {hi}, not {mv.size!r}")
    ev.append(HandSizeChosen(seat, mv.size))
    deal(s, mv.size, ev)


def on_cut(st: State, s: list, mv: Cut, ev: Events) -> None:
    need_phase(st, CUT_PHASE, "cutting")
    seat = check_seat(st, mv.seat)
    need_turn(st, seat, "cut")
    rules = st.rules
    if mv.keep is not True and mv.keep is not False:
        raise IllegalMove("malformed-move", f"keep is True or False, not {mv.keep!r}")
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
        set_hand(s, seat, (bottom,))
        s[CUT_KEPT] = seat
        if card is not None:
            shown = dict(s[SHOWN])
            shown[bottom] = card
            s[SHOWN] = shown
        ev.append(CutKept(seat, bottom))
    if rules.hand_size_range is not None:
        s[PHASE] = HAND_SIZE_PHASE
    else:
        deal(s, rules.hand_size, ev)


def on_timeout(st: State, s: list, mv: Timeout, ev: Events) -> None:
    seat = check_seat(st, mv.seat)
    need_turn(st, seat, "time out")
    rules = st.rules
    if rules.timeout == "forfeit":
        forfeit(st, s, seat, "timeout", ev)
        return
    phase = st.phase
    if phase is CUT_PHASE:
        on_cut(st, s, Cut(seat, False), ev)
        return
    if phase is HAND_SIZE_PHASE:
        lo = (rules.hand_size_range or (rules.hand_size,))[0]
        on_choose_hand_size(st, s, ChooseHandSize(seat, lo), ev)
        return
    if phase is NAME_SUIT_PHASE:
        suit = st.top.suit if st.top is not None and st.top.suit is not None else Suit.YELLOW
        on_name_suit(st, s, NameSuit(seat, suit), ev)
        return
    draws = rules.timeout == "penalty" or bool(st.pending_draw) or st.drawn < 0
    close_windows(s, ev, seat, draws)
    if s[HAND_END] is not None:
        settle(s, ev)
        return
    if rules.timeout == "penalty":
        ev.append(Penalty(seat, rules.error_penalty, "timeout"))
        queue_draw(s, seat, rules.error_penalty, "penalty-timeout")
    if s[PENDING_DRAW]:
        queue_draw(s, seat, s[PENDING_DRAW], s[0]._info["reason"][s[PENDING_KIND]])
        s[PENDING_DRAW] = 0
        s[PENDING_KIND] = None
    elif rules.timeout == "draw_pass" and st.drawn < 0:
        queue_draw(s, seat, 1, "timeout-draw")
    s[TURN] = next_seat(s, seat)
    s[DRAWN] = -1
    settle(s, ev)


def on_leave(st: State, s: list, mv: Leave, ev: Events) -> None:
    """With option leave "play_on", at a table of three or more seats in play (once the first
    dealer is chosen), the seat goes out: the hand is void and dealt again among the others.
    Otherwise (``leave_ends_match``) the match ends, the leaver ranked last."""
    seat = check_seat(st, mv.seat)
    if leave_ends_match(st):
        forfeit(st, s, seat, "left", ev)
        return
    out = st.out + (seat,)
    s[OUT] = out
    if st.rules.timeout == "forfeit":  # dernier: -1 match point to the leaver, +1 to each in play
        s[MATCH_POINTS] = tuple(
            p + (-1 if i == seat else 0 if i in st.out else 1)
            for i, p in enumerate(st.match_points)
        )
    ev.append(SeatOut(seat, "left", st.hand_number))
    s[DEALER] = step(st.dealer, 1, st.players, out)
    start_hand(s, ev)


def forfeit(st: State, s: list, seat: int, reason: str, ev: Events) -> None:
    """The match ends, ``seat`` ranked last (then the seats out, the first out last); with
    timeout "forfeit", -1 match point to ``seat`` and +1 to each other seat in play (readings
    3: to each other seat, in play or out)."""
    n = st.players
    if st.rules.timeout == "forfeit":  # a seat already out keeps its match points (readings 4)
        out = st.out if st.rules.readings >= 4 else ()
        s[MATCH_POINTS] = tuple(
            p + (-1 if i == seat else 0 if i in out else 1)
            for i, p in enumerate(st.match_points)
        )
    ev.append(Forfeited(seat, reason, s[MATCH_POINTS]))
    sizes = tuple(len(h) for h in st.hands) if st.phase is PLAY else st.final_sizes
    order = scoring.standings(
        st.rules, st.scores, st.hands_won, sizes, st.last_draw, (seat, *reversed(st.out))
    )
    s[FINAL_SIZES] = sizes if len(sizes) == n else (0,) * n
    finish_match(s, order, ev)
