"""legal_moves against a brute force: every move ``apply`` accepts is listed, and only those.

Random matches of every variant (and the other readings of the options that change what is
legal) are played by seeded random seats. At sampled states, for every seat, every candidate
move is put to ``apply``: each card of the seat's hand with every suit (or none), every target
(or none) and both declarations; Draw, Pass, Declare, a Catch of every seat, NameSuit of every
suit, ChooseHandSize 0..15 and both cuts. Faces are those the seat knows (its view, as
legal_moves is given it; a face the engine cannot see is checked by the audit, docs/RULES.md).
The moves apply accepts (originale's wrong plays, taken back with a penalty, aside) must be
the moves legal_moves lists for that seat, each listed once (see check_state).
"""

from __future__ import annotations

import random

import pytest

from dernier_p2p.rules import (
    Catch,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    IllegalMove,
    Leave,
    MatchFormat,
    NameSuit,
    Pass,
    Phase,
    Play,
    Rank,
    Shuffle,
    Suit,
    apply,
    chance_needed,
    get_variant,
    legal_moves,
    new_match,
    to_act,
)
from dernier_p2p.rules.cards import parse_card, parse_cards
from dernier_p2p.rules.events import TakenBack
from dernier_p2p.rules.simulate import Dealer, Table, answer_chance, deal_order

SUITS_OR_NONE = (None, *Suit)


def outcome(state, move):
    """``apply``'s state and events for a legal move; None if it refuses the move or takes it
    as a penalised wrong play."""
    try:
        after, events = apply(state, move)
    except IllegalMove:
        return None
    if any(isinstance(e, TakenBack) for e in events):
        return None
    return tuple(after), after.shown, events


def candidates(state, seat: int, view: dict) -> list:
    """Every move ``seat`` could try now (Timeout and Leave come from the clock and network)."""
    n = state.players
    out: list = [Draw(seat), Pass(seat), Declare(seat)]
    out += [Catch(seat, t) for t in range(n)]
    out += [NameSuit(seat, s) for s in Suit]
    out += [ChooseHandSize(seat, k) for k in range(16)]
    bottom = view.get(state.pile[-1]) if state.pile else None  # the cutter's peek
    out += [Cut(seat, keep, bottom) for keep in (False, True)]
    for slot in state.hands[seat]:
        card = view[slot]
        for suit in SUITS_OR_NONE:
            for target in (None, *range(n)):
                for declare in (False, True):
                    out.append(Play(seat, slot, card, suit, target, declare))
    return out


def check_state(state, dealer: Dealer) -> int:
    """Compare the lists of every seat with the brute force; return the moves compared.

    Each listed move is accepted, with an outcome (state and events) no other listed move has;
    each accepted candidate is listed, or has the outcome of a listed play of the same card
    (apply ignores the field: a DERNIER said with a play that leaves more than one card, or a
    target named for a swap that is the last card and ends the hand before any exchange)."""
    compared = 0
    for seat in range(state.players):
        view = dealer.view(state, seat)
        listed = legal_moves(state, seat, view)
        outcomes: dict = {}
        for move in listed:
            result = outcome(state, move)
            assert result is not None, f"seat {seat}: {move!r} listed but refused; {state!r}"
            same = [m for m, r in outcomes.items() if r == result]
            assert not same, f"seat {seat}: {move!r} and {same} listed, one outcome; {state!r}"
            outcomes[move] = result
        for move in candidates(state, seat, view):
            if move in outcomes:
                continue
            result = outcome(state, move)
            if result is None:
                continue
            twins = [m for m, r in outcomes.items() if r == result and isinstance(move, Play)
                     and isinstance(m, Play) and (m.slot, m.card) == (move.slot, move.card)]
            assert twins, f"seat {seat}: {move!r} accepted but not listed; {state!r}"
        if state.phase is Phase.PLAY:  # a partial view lists the plays of the faces it holds
            partial = {x: c for i, (x, c) in enumerate(view.items()) if i % 2}
            want = [m for m in listed if not isinstance(m, Play) or m.slot in partial
                    or m.slot in state.shown]
            assert legal_moves(state, seat, partial) == want
        compared += len(listed)
    return compared


def walk(
    variant: str,
    players: int,
    seed: int,
    samples: int,
    hoard: bool = False,
    rate: float = 0.25,
    **options,
) -> dict:
    """Play a seeded random match, checking ``samples`` states spread along it (and every
    state with a chain pending, a declaration owed or an empty pile; others at ``rate``).
    ``hoard``: the seats draw rather than play, to run the pile dry."""
    rules = get_variant(variant, match=MatchFormat("hands", 2), **options)
    dealer = Dealer(rules, seed)
    rng = random.Random(seed)
    state = new_match(rules, players)
    seen = {"states": 0, "moves": 0, "phases": set(), "dry": 0, "chance": 0, "chance_in_play": 0}
    for _ in range(4000):
        if state.match_over or seen["states"] >= samples:
            break
        request = chance_needed(state)
        if request is not None:  # no seat moves until chance is answered
            assert not any(legal_moves(state, x, dealer.view(state, x)) for x in range(players))
            seen["chance"] += 1
            seen["chance_in_play"] += state.phase is Phase.PLAY  # a reshuffle
            state, _ = apply(state, dealer.chance_move(state, request))
            continue
        dry = state.phase is Phase.PLAY and not state.pile
        rare = state.phase is not Phase.PLAY or state.pending_draw or state.owes or dry
        if rare or rng.random() < rate:
            seen["moves"] += check_state(state, dealer)
            seen["states"] += 1
            seen["dry"] += dry
            seen["phases"].add(state.phase)
        actor = to_act(state)
        move = None
        if rng.random() < 0.3:  # someone else may move out of turn first
            other = rng.randrange(players)
            extra = legal_moves(state, other, dealer.view(state, other)) if other != actor else []
            move = rng.choice(extra) if extra else None
        if move is None:
            legal = legal_moves(state, actor, dealer.view(state, actor))
            plays = [m for m in legal if isinstance(m, Play)]
            draws = [m for m in legal if isinstance(m, (Draw, Pass))]
            if hoard and draws and rng.random() < 0.9:
                move = draws[0]
            elif plays and rng.random() < 0.9:
                move = rng.choice(plays)
            else:
                move = rng.choice(legal)
        state, _ = apply(state, move)
    return seen


READINGS = [
    ("dernier", {}),
    ("dernier", {"jump_in": True, "taking_ends_turn": False}),
    ("originale", {}),
    ("originale", {"cancel_same_suit": False}),
    ("moderno", {}),
    ("moderno", {"hand_size": 4}),  # swaps and rotates played from few cards
    # a table whose rank sets make SWAP rotate too and ROTATE reverse too
    ("moderno", {"hand_size": 4, "rotate_ranks": (Rank.ROTATE, Rank.SWAP),
                 "reverse_ranks": (Rank.REVERSE, Rank.ROTATE)}),
    ("standard", {}),
]


@pytest.mark.parametrize(("variant", "options"), READINGS)
def test_legal_moves_are_exactly_the_moves_apply_accepts(variant: str, options: dict) -> None:
    seen_phases: set = set()
    total = 0
    for players, seed in ((2, 11), (3, 12), (4, 13), (6, 14)):
        seen = walk(variant, players, seed, samples=40, **options)
        assert seen["states"] >= 10
        total += seen["moves"]
        seen_phases |= seen["phases"]
    assert total > 0 and Phase.PLAY in seen_phases


@pytest.mark.parametrize("variant", ["standard", "moderno"])
def test_an_empty_pile_with_discards_to_reshuffle_still_offers_a_draw(variant: str) -> None:
    seen = walk(variant, 2, 21, samples=10, hoard=True, rate=0.0)
    assert seen["dry"] >= 5  # the brute force met states with the pile run dry
    assert seen["chance_in_play"] >= 1  # and a reshuffle, during which nobody moves


def test_an_undeclared_last_card_its_catch_and_the_obligation_lapsing_on_a_draw() -> None:
    """standard, two seats: seat 1 plays a skip down to one card without declaring; seat 0 may
    catch it. Seat 1 moves again and draws: with two cards its obligation lapses."""
    rules = get_variant("standard", hand_size=3)
    t = Table(rules, ["1Y 2Y 3Y", "7G SKIPG 9B"], first="4G", then="8Y 6R 5R")
    t.play(1, "7G")
    t.draw(0)
    t.pass_(0)
    t.play(1, "SKIPG")
    assert t.state.owes == (1,) and t.state.turn == 1
    check_state(t.state, t.dealer)
    assert Catch(0, 1) in t.legal(0)
    t.draw(1)  # two cards: the obligation lapses
    assert t.state.owes == () and t.state.hand_sizes[1] == 2
    check_state(t.state, t.dealer)
    assert Declare(1) not in t.legal(1) and Catch(0, 1) not in t.legal(0)


def test_a_swap_card_played_as_the_last_card() -> None:
    """moderno: a swap that is the last card in hand goes out before any exchange: listed once,
    with no target (apply accepts a target and ignores it)."""
    rules = get_variant("moderno", hand_size=2)
    t = Table(rules, ["1Y 2Y", "5G SWAPG"], first="4G", then="8Y 6R 5R")
    t.play(1, "5G", declare=True)
    t.draw(0)
    t.pass_(0)
    assert t.state.turn == 1 and t.state.hand_sizes[1] == 1
    check_state(t.state, t.dealer)
    plays = [m for m in t.legal(1) if isinstance(m, Play)]
    assert [(str(m.card), m.target) for m in plays] == [("SWAPG", None)]


def test_a_swap_toward_a_one_card_hand_may_declare() -> None:
    """moderno: a swap that hands seat 1 the one card of seat 0 may carry a DERNIER, whatever
    seat 1's own hand size."""
    rules = get_variant("moderno", hand_size=3)
    t = Table(rules, ["5G 6G 7G", "SWAPG 9B 8B"], first="4G", then="1R 2R 3R 4R")
    t.draw(1)
    t.pass_(1)
    t.play(0, "5G")
    t.draw(1)
    t.pass_(1)
    t.play(0, "6G", declare=True)
    assert t.state.turn == 1 and t.state.hand_sizes == (1, 5)
    check_state(t.state, t.dealer)
    swaps = {(m.target, m.declare) for m in t.legal(1) if isinstance(m, Play)
             and str(m.card) == "SWAPG"}
    assert swaps == {(0, False), (0, True)}


def test_the_same_wild_card_listed_at_four_three_and_two_cards() -> None:
    """standard: the plays of one wild card, listed again as the hand shrinks, gain the
    DERNIER choice at two cards (the lists are not reused across hand sizes)."""
    rules = get_variant("standard", hand_size=4)
    t = Table(rules, ["1Y 2Y 3Y 4Y", "WILD 5G 6G 9B"], first="4G", then="8Y 8R 7R 7B")
    for size in (4, 3, 2):
        assert t.state.turn == 1 and t.state.hand_sizes[1] == size
        check_state(t.state, t.dealer)
        wild = [m for m in t.legal(1) if isinstance(m, Play) and str(m.card) == "WILD"]
        assert len(wild) == (8 if size == 2 else 4)
        if size > 2:
            t.play(1, "5G" if size == 4 else "6G")
            t.draw(0)
            t.pass_(0)


def test_a_face_made_public_is_listed_from_the_public_faces() -> None:
    """originale: a wrong card taken back stays face up; a view that lacks it still lists it."""
    rules = get_variant("originale")
    hands = ["2Y 3Y 4Y 5Y 6Y", "5B 8B AB 7B QB", "9R 9G KB 10G 8R"]
    t = Table(rules, hands, first="3G", then="6R 6Y 9B", bottom="10B")
    t.move(Cut(2, False, t.dealer.face(t.state, t.state.pile[-1])))
    t.move(ChooseHandSize(0, 5))
    five = t.slot(1, "5B")
    t.move(Play(1, five, t.dealer.face(t.state, five)))  # wrong: taken back, face up
    assert five in t.state.shown
    t.play(2, "9G")
    t.draw(0)
    t.play(0, "9B")
    assert t.state.turn == 1 and str(t.state.top) == "9B"
    check_state(t.state, t.dealer)
    partial = {x: c for x, c in t.dealer.view(t.state, 1).items() if x != five}
    assert five in {m.slot for m in legal_moves(t.state, 1, partial) if isinstance(m, Play)}
    public = legal_moves(t.state, 1)  # no view: the public faces only
    assert {m.slot for m in public if isinstance(m, Play)} == {five} and Draw(1) in public


class SlotZeroLast(Dealer):
    """A dealer whose first shuffle draws slot 0 at position ``at`` (the engine takes any order
    of the slots): the faces keep their draw order, only the slot numbers move."""

    def __init__(self, *args, at: int, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._at = at

    def _shuffle(self, state, req):
        move = super()._shuffle(state, req)
        if req.source is not None:
            return move
        order = list(move.slots)
        x = order[self._at]
        order[0], order[self._at] = x, 0
        faces = self._faces[state.hand_number]
        faces[0], faces[x] = faces[x], faces[0]
        return Shuffle(tuple(order))


def test_a_drawn_card_in_slot_zero_is_the_only_card_offered() -> None:
    """standard, two seats: seat 1 draws a playable card that is slot 0 (the slots are dealt
    in shuffled order); only that card may be played, or a pass, though the hand holds another
    playable card."""
    rules = get_variant("standard", hand_size=3)
    faces = deal_order([parse_cards("1Y 2Y 3Y"), parse_cards("7R 5G 9B")], 0,
                       parse_card("4G"), parse_cards("6G 8R"))
    dealer = SlotZeroLast(rules, 0, stack=[faces], dealer=0, at=7)
    state, _ = answer_chance(new_match(rules, 2), dealer)
    assert state.turn == 1 and state.pile[0] == 0 and 0 not in state.hands[1]
    state, _ = apply(state, Draw(1))
    assert state.drawn == 0 and str(dealer.face(state, 0)) == "6G"
    check_state(state, dealer)
    listed = legal_moves(state, 1, dealer.view(state, 1))
    assert {(m.slot, str(m.card)) for m in listed if isinstance(m, Play)} == {(0, "6G")}
    assert Pass(1) in listed and Draw(1) not in listed


def test_a_jump_in_lists_a_public_face_the_view_lacks() -> None:
    """moderno (jump-in), three seats: a card identical to the top card whose face is public
    (shown) but not in the view given is still offered to seat 0 out of turn; a view lacking
    another face lists the same."""
    rules = get_variant("moderno")
    t = Table(rules, ["1Y 2Y 3Y 4Y 6Y 8Y 9Y 5G", "5G 7G SKIPG DRAW2R WILD WILD4 9B SWAPG",
                      "1R 2R 3R 4R SKIPB REVERSEB 8B ROTATE"], first="9G")
    t.play(1, "5G")
    assert t.state.turn == 2
    slot = t.slot(0, "5G")
    state = t.state._replace(shown={slot: t.dealer.face(t.state, slot)})  # a kept cut card
    partial = {x: c for x, c in t.dealer.view(state, 0).items() if x != slot}
    plays = [m for m in legal_moves(state, 0, partial) if isinstance(m, Play)]
    assert plays and {m.slot for m in plays} == {slot}
    other = t.slot(0, "2Y")
    lacking = {x: c for x, c in partial.items() if x != other}
    assert legal_moves(state, 0, lacking) == legal_moves(state, 0, partial)


def test_no_moves_for_a_seat_outside_the_table() -> None:
    rules = get_variant("standard", hand_size=3)
    t = Table(rules, ["1Y 2Y 3Y", "7G SKIPG 9B"], first="4G", then="8Y 6R 5R")
    assert t.state.phase is Phase.PLAY and t.legal(1)
    for seat in (-1, -2, 2, 3, 10):
        assert legal_moves(t.state, seat) == []


def test_seats_past_sixteen_draw_and_pass() -> None:
    """standard for 17 seats (the rules take any table size the deck can deal; seats 0..15 use
    pre-built moves): seat 16 plays first, draws, then passes; with no pile and nothing to
    reshuffle it may only pass."""
    rules = get_variant("standard", max_players=17, hand_size=1)
    hands = [f"{n}{c}" for c in "YG" for n in (1, 2, 3, 4, 6, 7, 8, 9)] + ["1B"]
    t = Table(rules, hands, first="5R", then="2B 3B", dealer=15)
    start = t.state
    assert start.turn == 16 and t.legal(16) == [Draw(16)]
    check_state(start, t.dealer)
    t.draw(16)
    assert t.legal(16) == [Pass(16)]
    check_state(t.state, t.dealer)
    dry = start._replace(pile=())  # every other card in a hand: nothing to draw
    assert legal_moves(dry, 16, t.dealer.view(start, 16)) == [Pass(16)]
    check_state(dry, t.dealer)


def _two_cards_swap_and_rotate(rules) -> Table:
    """moderno, three seats of three cards: seat 1 plays 5G, the others draw and pass, so seat 1
    is to act holding SWAPG and ROTATE (hand sizes 4, 2, 4); the lists checked by brute force."""
    t = Table(rules, ["1Y 2Y 3Y", "5G SWAPG ROTATE", "1R 2R 3R"], first="4G", then="8Y 6R 5R")
    t.play(1, "5G")
    for seat in (2, 0):
        t.draw(seat)
        t.pass_(seat)
    assert t.state.turn == 1 and t.state.hand_sizes == (4, 2, 4)
    check_state(t.state, t.dealer)
    return t


@pytest.mark.parametrize("before", [True, False], ids=["declare_before", "declare_after"])
def test_a_swap_and_a_rotate_as_the_second_last_card(before: bool) -> None:
    """moderno, three seats: seat 1 holds SWAPG and ROTATE. Either, played, leaves one card
    before the exchange and brings four: with declare_before_exchange it may carry a DERNIER,
    judged on the one card left, else not. The swap goes to either other seat."""
    rules = get_variant("moderno", hand_size=3, declare_before_exchange=before)
    t = _two_cards_swap_and_rotate(rules)
    plays = [m for m in t.legal(1) if isinstance(m, Play)]
    swaps = {(m.target, m.declare) for m in plays if str(m.card) == "SWAPG"}
    assert swaps == {(0, False), (2, False)} | ({(0, True), (2, True)} if before else set())
    rotates = {(m.suit, m.target, m.declare) for m in plays if str(m.card) == "ROTATE"}
    assert rotates == {(s, None, d) for s in Suit for d in ((False, True) if before else (False,))}


@pytest.mark.parametrize("before", [True, False], ids=["declare_before", "declare_after"])
def test_a_rotate_that_brings_a_one_card_hand_may_declare(before: bool) -> None:
    """moderno, three seats: seat 0 is down to one card; seat 1 plays a ROTATE from five cards
    and receives seat 0's hand (the seat before it): the play may carry a DERNIER (Declared) or
    not (then seat 1 owes it), whatever the reading."""
    rules = get_variant("moderno", hand_size=3, declare_before_exchange=before)
    t = Table(rules, ["5G 6G 7Y", "ROTATE 1R 2R", "1B 2B 3B"], first="4G", then="8Y 9Y 8B 9B")
    for _ in range(2):
        check_state(t.state, t.dealer)  # seat 1 lists its rotate as the other hands shrink
        for seat in (1, 2):
            t.draw(seat)
            t.pass_(seat)
        t.play(0, "5G" if t.state.hand_sizes[0] == 3 else "6G", declare=True)
    assert t.state.turn == 1 and t.state.hand_sizes == (1, 5, 5)
    check_state(t.state, t.dealer)
    rotates = {(m.suit, m.declare) for m in t.legal(1) if isinstance(m, Play)
               and str(m.card) == "ROTATE"}
    assert rotates == {(s, d) for s in Suit for d in (False, True)}
    t.play(1, "ROTATE", suit=Suit.RED)
    assert t.state.hand_sizes == (5, 1, 4) and 1 in t.state.owes


@pytest.mark.parametrize("options", [
    {},
    {"reverse_ranks": (Rank.REVERSE, Rank.ROTATE)},  # the hands then go the other way
    {"swap_ranks": (Rank.SWAP, Rank.ROTATE)},  # a swap, then a rotation of every hand
    {"rotate_ranks": (Rank.ROTATE, Rank.SWAP)},
], ids=["moderno", "rotate_reverses", "rotate_swaps", "swap_rotates"])
def test_exchanges_are_judged_on_the_hand_they_bring(options: dict) -> None:
    """moderno and tables whose rank sets give one card two exchanges: seat 2 is down to one
    card, seats 0 and 1 hold five; every play of seat 1's ROTATE and SWAPG is listed once for
    each outcome apply gives it (a DERNIER only when the mover ends with one card)."""
    rules = get_variant("moderno", hand_size=3, **options)
    t = Table(rules, ["7Y 8Y 9Y", "ROTATE SWAPG 1R", "5G 6G 3B"], first="4G",
              then="1Y 2Y 3Y 4Y 5Y 6Y")
    for _ in range(2):
        t.draw(1)
        t.pass_(1)
        t.play(2, "5G" if t.state.hand_sizes[2] == 3 else "6G", declare=True)
        t.draw(0)
        t.pass_(0)
    assert t.state.turn == 1 and t.state.hand_sizes == (5, 5, 1)
    check_state(t.state, t.dealer)


def test_a_card_that_swaps_then_rotates_can_bring_back_the_card_it_kept() -> None:
    """A table where ROTATE also swaps (declare_before_exchange off): seat 1 plays it from two
    cards. Swapped with seat 0, the seat before it, its one card comes back with the
    rotation (a DERNIER may go with the play); swapped with seat 2, it ends with seat 0's four."""
    rules = get_variant("moderno", hand_size=3, swap_ranks=(Rank.SWAP, Rank.ROTATE),
                        declare_before_exchange=False)
    t = _two_cards_swap_and_rotate(rules)
    rotates = {(m.suit, m.target, m.declare) for m in t.legal(1) if isinstance(m, Play)
               and str(m.card) == "ROTATE"}
    assert rotates == {(s, 0, d) for s in Suit for d in (False, True)} | {
        (s, 2, False) for s in Suit}


def test_a_rotate_as_the_last_card_goes_out_before_any_exchange() -> None:
    """moderno: seat 1 plays its last card, a ROTATE, while seat 0 (whose hand a rotation
    would bring it) holds one card: the hand is won, so no DERNIER is listed with it."""
    rules = get_variant("moderno", hand_size=2)
    t = Table(rules, ["5G 7Y", "6G ROTATE", "1B 2B"], first="4G", then="8Y 9Y")
    t.play(1, "6G", declare=True)
    t.draw(2)
    t.pass_(2)
    t.play(0, "5G", declare=True)
    assert t.state.turn == 1 and t.state.hand_sizes == (1, 1, 3)
    check_state(t.state, t.dealer)
    plays = {(m.suit, m.declare) for m in t.legal(1) if isinstance(m, Play)}
    assert plays == {(s, False) for s in Suit}


def test_a_rotation_skips_a_seat_out() -> None:
    """moderno, four seats, seat 2 left during the first hand (out: the hand is dealt again,
    seat 1 dealing). Seat 3 plays a ROTATE and receives the hand of seat 1, the seat in play
    before it, down to one card: the play may carry a DERNIER."""
    rules = get_variant("moderno", hand_size=3)
    hands = [parse_cards(h) for h in ("1B 2B 3B", "5G 6G 7Y", "", "ROTATE 1R 2R")]
    second = deal_order(hands, 1, parse_card("4G"), parse_cards("8Y 9Y 8B 9B 8R 9R"))
    t = Table.__new__(Table)
    t.dealer = Dealer(rules, 3, stack=[[], second], dealer=0)
    t.state, _ = answer_chance(new_match(rules, 4), t.dealer)
    t.state, _ = apply(t.state, Leave(2))
    t.events, t.all_events = [], []
    t._chance()
    assert t.state.out == (2,) and t.state.dealer == 1 and t.state.turn == 3
    for card in ("5G", "6G"):
        for seat in (3, 0):
            t.draw(seat)
            t.pass_(seat)
        t.play(1, card, declare=card == "6G")
    assert t.state.turn == 3 and t.state.hand_sizes == (5, 1, 0, 5)
    check_state(t.state, t.dealer)
    rotates = {(m.suit, m.declare) for m in t.legal(3) if isinstance(m, Play)
               and str(m.card) == "ROTATE"}
    assert rotates == {(s, d) for s in Suit for d in (False, True)}


def test_a_rotate_jumped_in_from_two_cards() -> None:
    """moderno: a ROTATE turned up (it does not act, first_rotate_acts off); the dealer holds
    another ROTATE and one card, and may jump in with it out of turn, naming any suit, with a
    DERNIER or without."""
    rules = get_variant("moderno", hand_size=2, first_rotate_acts=False)
    t = Table(rules, ["ROTATE 1Y", "5G 6G", "1R 2R"], first="ROTATE", then="8Y 6R")
    t.move(NameSuit(0, Suit.GREEN))
    assert t.state.turn == 1 and str(t.state.top) == "ROTATE"
    check_state(t.state, t.dealer)
    plays = {(str(m.card), m.suit, m.declare) for m in t.legal(0)}
    assert plays == {("ROTATE", s, d) for s in Suit for d in (False, True)}
