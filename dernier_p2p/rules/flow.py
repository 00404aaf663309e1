"""Steps shared by the move handlers: turn order, drawing with reshuffles, declaration
windows, card effects, the end of a hand and of a match.

Handlers work on ``s``, the list of the new state's fields (see state.py for the indices),
and append events to ``ev``; nothing here touches a State that already exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dernier_p2p.rules.cards import Card, Suit
from dernier_p2p.rules.errors import IllegalMove
from dernier_p2p.rules.events import (
    ChainCancelled,
    ChainGrew,
    Declared,
    DirectionChanged,
    Drew,
    HandOver,
    HandsRotated,
    HandsSwapped,
    MatchOver,
    Penalty,
    Skipped,
    SuitNamed,
)
from dernier_p2p.rules.state import (
    CHANCE,
    CLOCK,
    CUT_PHASE,
    DEALER_PHASE,
    DIRECTION,
    DISCARD,
    DRAWN,
    HAND_END,
    HAND_SIZE_PHASE,
    HAND_WINNER,
    HANDS,
    LAST_DRAW,
    MATCH_OVER_PHASE,
    NAME_SUIT_PHASE,
    NAMED_SUIT,
    NEXT_SLOT,
    OUT,
    OWED,
    OWES,
    PENDING_DRAW,
    PENDING_KIND,
    PHASE,
    PILE,
    PLAY_PHASE,
    REVEAL_PHASE,
    STANDINGS,
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
    Rules,
)

PLAY = PLAY_PHASE
SUITS = tuple(Suit)
NAMING = NAMES | NAMES_OPT

Events = list  # the list of events being built by one apply


def to_act(state: State) -> int | None:
    """The seat expected to move next (None while chance is needed or the match is over)."""
    if state.chance is not None:
        return None
    phase = state.phase
    if phase is PLAY:
        return state.turn
    if phase is NAME_SUIT_PHASE:
        return state.namer
    if phase is HAND_SIZE_PHASE:
        return state.dealer
    if phase is CUT_PHASE:
        return step(state.dealer, -1, state.players, state.out)
    return None


def can_draw(st: State) -> bool:
    """Whether a Draw takes something: a pending chain, a card on the pile, or (reshuffling
    variants) discards below the top card that a reshuffle turns into a new pile."""
    return bool(
        st.pending_draw
        or st.pile
        or (st.rules.pile_empty == "reshuffle" and len(st.discard) > 1)
    )


def leave_ends_match(state: State) -> bool:
    """Whether a ``Leave`` now ends the match (the leaver forfeits) rather than putting the seat
    out while the others play on: always under option leave "end" (``dernier``, seed 000/001;
    not under readings 3, which have no such option); else with two seats in play or fewer, or
    before the first dealer is chosen."""
    rules = state.rules
    return (
        (rules.leave == "end" and rules.readings >= 4)
        or state.players - len(state.out) <= 2
        or state.phase is DEALER_PHASE
    )


def next_seat(s: list, seat: int) -> int:
    return step(seat, s[DIRECTION], len(s[HANDS]), s[OUT])


def set_hand(s: list, seat: int, hand: tuple[int, ...]) -> None:
    hands = list(s[HANDS])
    hands[seat] = hand
    s[HANDS] = tuple(hands)


def queue_draw(s: list, seat: int, n: int, reason: str) -> None:
    if n > 0:
        s[OWED] = s[OWED] + ((seat, n, reason),)


def reshuffle_request(s: list) -> ChanceRequest:
    source = s[DISCARD][:-1]
    return ChanceRequest("shuffle", count=len(source), first_slot=s[NEXT_SLOT], source=source)


def take(s: list, seat: int, n: int, reason: str, ev: Events) -> int:
    """Move up to n cards from the pile to ``seat``; returns how many are still owed."""
    pile = s[PILE]
    k = n if n <= len(pile) else len(pile)
    if k:
        got = pile[:k]
        s[PILE] = pile[k:]
        set_hand(s, seat, s[HANDS][seat] + got)
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
            s[CHANCE] = reshuffle_request(s)
            return rest
        return 0  # nothing left to reshuffle: the draw is short
    return rest


def run_owed(s: list, ev: Events) -> None:
    owed = list(s[OWED])
    while owed and s[CHANCE] is None:
        seat, n, reason = owed[0]
        rest = take(s, seat, n, reason, ev)
        if rest:
            owed[0] = (seat, rest, reason)
        else:
            owed.pop(0)
        if s[HAND_END] is not None:
            owed = []
    s[OWED] = tuple(owed)


def settle(s: list, ev: Events) -> None:
    """Run the owed draws; end the hand when it is over and nothing waits on chance."""
    if s[OWED]:
        run_owed(s, ev)
        if s[OWES]:  # an obligation lapses when its seat no longer holds one card
            hands = s[HANDS]
            s[OWES] = tuple(x for x in s[OWES] if len(hands[x]) == 1)
    if s[CHANCE] is None and not s[OWED] and (s[HAND_WINNER] is not None or s[HAND_END]):
        end_hand(s, ev)


def close_windows(s: list, ev: Events, mover: int, draws: bool = False) -> None:
    """A Play/Draw/Pass/Timeout closes the open declaration windows (penalties first) of every
    seat but ``mover``: a seat's own moves leave its window open (it closes when another seat
    moves), except, under declaration "window", a move by which ``mover`` ``draws`` (a Draw,
    a time-out's draw) while it still holds its one card: its own window closes too, in the
    order the windows opened (seed 000/001: whoever forgets DERNIER at one card draws two; not
    under readings 3, where the mover's window stays open and lapses at two cards)."""
    owes = s[OWES]
    if not owes:
        return
    rules: Rules = s[0]
    own = (draws and rules.declaration == "window" and rules.readings >= 4
           and len(s[HANDS][mover]) == 1)
    s[OWES] = (mover,) if mover in owes and not own else ()
    if rules.declaration == "catch":
        return
    for seat in owes:
        if (seat == mover and not own) or len(s[HANDS][seat]) != 1:
            continue  # the mover's window stays open; or the obligation lapsed
        ev.append(Penalty(seat, rules.declaration_penalty, "declaration"))
        rest = take(s, seat, rules.declaration_penalty, "penalty-declaration", ev)
        if s[HAND_END] is not None:
            return
        queue_draw(s, seat, rest, "penalty-declaration")


def check_seat(st: State, seat: object) -> int:
    if type(seat) is not int or not 0 <= seat < st.players:
        raise IllegalMove("bad-seat", f"no seat {seat!r} at a table of {st.players}")
    if seat in st.out:
        raise IllegalMove("seat-out", f"seat {seat} is out of the match")
    return seat


def step(seat: int, d: int, n: int, out: tuple[int, ...]) -> int:
    """The next seat after ``seat`` in direction ``d`` that is still in play."""
    nxt = (seat + d) % n
    while out and nxt in out:
        nxt = (nxt + d) % n
    return nxt


def rotated(hands: Sequence[Any], d: int, out: Sequence[int] = ()) -> list[Any]:
    """``hands`` passed on in direction ``d`` among the seats in play: each seat in play gets
    the hand of the one ``d`` before it (seats out of play are skipped and keep theirs)."""
    live = [i for i in range(len(hands)) if i not in out]
    new = list(hands)
    for k, i in enumerate(live):
        new[i] = hands[live[(k - d) % len(live)]]
    return new


def need_phase(st: State, phase: Phase, what: str) -> None:
    if st.phase is not phase:
        raise IllegalMove("wrong-phase", f"{what} is not possible in phase {st.phase.value}")


def need_turn(st: State, seat: int, what: str) -> None:
    actor = to_act(st)
    if seat != actor:
        raise IllegalMove("not-your-turn", f"seat {seat} cannot {what}: seat {actor} is to act")


def apply_effects(
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
    out = s[OUT]
    if f & NAMING:
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
    nxt = step(seat, d, n, out)
    if f & REVERSE and n - len(out) == 2 and rules.reverse_skips_with_two:
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
        nxt = step(nxt, d, n, out)
    if f & FORCED:
        queue_draw(s, nxt, info["amount"][rank], info["reason"][rank])
        ev.append(Skipped(nxt))
        nxt = step(nxt, d, n, out)
    if f & PREVIOUS:
        queue_draw(s, step(seat, -d, n, out), info["amount"][rank], info["reason"][rank])
    changed: tuple[int, ...] = ()
    if hand_moves and f & SWAP and target is not None:
        hands = list(s[HANDS])
        hands[seat], hands[target] = hands[target], hands[seat]
        s[HANDS] = tuple(hands)
        ev.append(HandsSwapped(seat, target))
        changed = (seat, target)
    if hand_moves and f & ROTATE:
        s[HANDS] = tuple(rotated(s[HANDS], d, out))
        changed = tuple(i for i in range(n) if i not in out)
        ev.append(HandsRotated(d))
    s[TURN] = nxt
    return changed


def declarations_after_play(
    s: list, seat: int, declare: bool, changed: tuple[int, ...], ev: Events, left: int = -1
) -> None:
    """After a play: the mover's DERNIER, and seats a swap/rotate left at one card. ``left`` is
    the number of cards the mover kept before any exchange: with ``declare_before_exchange`` a
    swap/rotate played as the second-last card is judged on that one card, as any play is."""
    rules: Rules = s[0]
    hands = s[HANDS]
    owes = [x for x in s[OWES] if x != seat]
    early = left == 1 and bool(changed) and rules.declare_before_exchange
    if early or len(hands[seat]) == 1:
        if declare:
            ev.append(Declared(seat))
        elif rules.declaration == "with_play" and (early or seat not in changed):
            ev.append(Penalty(seat, rules.declaration_penalty, "declaration"))
            queue_draw(s, seat, rules.declaration_penalty, "penalty-declaration")
        elif len(hands[seat]) == 1:
            owes.append(seat)
    for x in changed:
        if x != seat and len(hands[x]) == 1 and x not in owes:
            owes.append(x)
    s[OWES] = tuple(owes)


def end_hand(s: list, ev: Events) -> None:
    winner = s[HAND_WINNER]
    reason = "out" if winner is not None else (s[HAND_END] or "pile-empty")
    s[PHASE] = REVEAL_PHASE
    s[PENDING_DRAW] = 0
    s[PENDING_KIND] = None
    s[OWES] = ()
    s[DRAWN] = -1
    ev.append(HandOver(winner, reason))
    slots = tuple(x for hand in s[HANDS] for x in hand)
    s[CHANCE] = ChanceRequest("reveal", count=len(slots), slots=slots)


def finish_match(s: list, order: tuple[int, ...], ev: Events) -> None:
    s[PHASE] = MATCH_OVER_PHASE
    s[CHANCE] = None
    s[STANDINGS] = order
    s[WINNER] = order[0]
    ev.append(MatchOver(order[0], order))
