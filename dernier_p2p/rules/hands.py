"""Chance moves and the course of a hand: dealer, shuffle, deal, first card, reveal, scoring."""

from __future__ import annotations

from dernier_p2p.rules import scoring
from dernier_p2p.rules.cards import Card, Rank
from dernier_p2p.rules.errors import IllegalMove
from dernier_p2p.rules.events import (
    DealerChosen,
    Dealt,
    DirectionChanged,
    Flipped,
    HandScored,
    HandStarted,
    Reshuffled,
    Revealed,
    Shuffled,
)
from dernier_p2p.rules.flow import (
    NAMING,
    PLAY,
    Events,
    apply_effects,
    finish_match,
    settle,
    step,
)
from dernier_p2p.rules.moves import (
    ChooseDealer,
    Flip,
    Reveal,
    Shuffle,
)
from dernier_p2p.rules.state import (
    CHANCE,
    CUT_KEPT,
    CUT_PHASE,
    DEAL_PHASE,
    DEALER,
    DIRECTION,
    DISCARD,
    DRAWN,
    FINAL_SIZES,
    FLIP_PHASE,
    HAND_END,
    HAND_NUMBER,
    HAND_SIZE_PHASE,
    HAND_WINNER,
    HANDS,
    HANDS_WON,
    LAST_DRAW,
    NAME_SUIT_PHASE,
    NAMED_SUIT,
    NAMER,
    NEXT_SLOT,
    OUT,
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
    TOP,
    TURN,
    ChanceRequest,
    State,
)
from dernier_p2p.rules.variants import (
    NAMES,
    REVERSE,
    Rules,
)


def start_hand(s: list, ev: Events) -> None:
    rules: Rules = s[0]
    n = len(s[HANDS])
    s[HAND_NUMBER] += 1
    s[PHASE] = DEAL_PHASE
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


def deal(s: list, size: int, ev: Events) -> None:
    n = len(s[HANDS])
    dealer = s[DEALER]
    out = s[OUT]
    order = [x for x in ((dealer + 1 + i) % n for i in range(n)) if x not in out]
    pile = s[PILE]
    kept = s[CUT_KEPT]
    if kept < 0:  # round by round: seat at position k gets every n-th card from k
        m = len(order)
        k = m * size
        dealt = {seat: pile[i:k:m] for i, seat in enumerate(order)}
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
    s[PHASE] = FLIP_PHASE
    s[CHANCE] = ChanceRequest("flip", count=1, slots=(s[PILE][0],))


def on_shuffle(st: State, s: list, mv: Shuffle, ev: Events) -> None:
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
            s[PHASE] = CUT_PHASE
        elif rules.hand_size_range is not None:
            s[PHASE] = HAND_SIZE_PHASE
        else:
            deal(s, rules.hand_size, ev)
        return
    ev.append(Reshuffled(len(slots)))
    if st.phase is FLIP_PHASE:  # standard: a first wild draw-four went back into the deck
        s[PILE] = slots
        s[DISCARD] = ()
        s[TOP] = None
        s[CHANCE] = ChanceRequest("flip", count=1, slots=(slots[0],))
        return
    s[PILE] = st.pile + slots
    # the reshuffled slots are the oldest discards; cards played since the request stay
    s[DISCARD] = st.discard[len(req.source) :]
    settle(s, ev)


def on_flip(st: State, s: list, mv: Flip, ev: Events) -> None:
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
    first = step(dealer, 1, n, st.out)
    if rules.first_card == "standard":
        if card.rank == Rank.WILD4:
            source = (slot, *s[PILE])
            s[CHANCE] = ChanceRequest(
                "shuffle", count=len(source), first_slot=st.next_slot, source=source
            )
            return
        if f & NAMES:
            s[PHASE] = NAME_SUIT_PHASE
            s[NAMER] = first
            return
        s[PHASE] = PLAY
        if f & REVERSE:
            s[DIRECTION] = -1
            ev.append(DirectionChanged(-1))
            # the common rule: the dealer starts, the other way round, at any number of
            # seats in play (with two, the reverse acts on the first player, who does not
            # start: docs/RULES.md `standard`); readings 3: with two seats in play a reverse
            # changes nothing else unless it skips (reverse_skips_with_two), the first starts
            if rules.readings >= 4 or n - len(st.out) > 2 or rules.reverse_skips_with_two:
                s[TURN] = dealer
            else:
                s[TURN] = first
        else:
            apply_effects(s, dealer, card, None, None, ev)
        settle(s, ev)
        return
    if f & NAMING:
        s[PHASE] = NAME_SUIT_PHASE
        s[NAMER] = dealer
        return
    s[PHASE] = PLAY
    apply_effects(s, dealer, card, None, None, ev, hand_moves=rules.first_swap_acts)
    settle(s, ev)


def on_reveal(st: State, s: list, mv: Reveal, ev: Events) -> None:
    req = st.chance
    if req.kind != "reveal":
        raise IllegalMove("wrong-chance", f"expected a {req.kind} input, got a reveal")
    rules = st.rules
    cards = rules._info["cards"]
    try:
        given = dict(mv.faces)
    except (TypeError, ValueError):
        raise IllegalMove("bad-reveal", "faces must be (slot, card) pairs") from None
    if (
        len(given) != len(mv.faces)
        or set(given) != set(req.slots)
        or any(x.__class__ is not int for x in given)
    ):
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
    deltas = scoring.hand_deltas(rules, points, winner, st.out)
    scores = tuple(a + b for a, b in zip(st.scores, deltas, strict=True))
    s[SCORES] = scores
    if winner is not None:
        won = list(st.hands_won)
        won[winner] += 1
        s[HANDS_WON] = tuple(won)
    s[FINAL_SIZES] = tuple(len(h) for h in st.hands)
    s[CHANCE] = None
    ev.append(HandScored(deltas, scores))
    # a void hand (one per seat out) does not count toward a number of hands
    if scoring.match_ended(rules, scores, s[HANDS_WON], st.hand_number - len(st.out)):
        order = scoring.standings(
            rules, scores, s[HANDS_WON], s[FINAL_SIZES], st.last_draw, tuple(reversed(st.out))
        )
        finish_match(s, order, ev)
        return
    s[DEALER] = step(st.dealer, 1, st.players, st.out)
    start_hand(s, ev)


def on_choose_dealer(st: State, s: list, mv: ChooseDealer, ev: Events) -> None:
    req = st.chance
    if req.kind != "dealer":
        raise IllegalMove("wrong-chance", f"expected a {req.kind} input, got a dealer choice")
    if type(mv.dealer) is not int or not 0 <= mv.dealer < st.players:
        raise IllegalMove("bad-dealer", f"no seat {mv.dealer!r} to deal")
    s[DEALER] = mv.dealer
    s[CHANCE] = None
    ev.append(DealerChosen(mv.dealer))
    start_hand(s, ev)
