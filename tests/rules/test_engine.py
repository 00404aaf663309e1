"""Engine-wide behaviour: chance moves, typed errors, immutability, listed moves are legal."""

import random

import pytest

from dernier_p2p.rules import (
    VARIANTS,
    ChanceRequest,
    ChooseDealer,
    Draw,
    Flip,
    IllegalMove,
    MatchFormat,
    Phase,
    Play,
    Reveal,
    Shuffle,
    Suit,
    apply,
    chance_needed,
    deck_cards,
    get_variant,
    legal_moves,
    new_match,
    parse_card,
    to_act,
)
from dernier_p2p.rules.simulate import Dealer, Table


def rule_of(state, move):
    with pytest.raises(IllegalMove) as info:
        apply(state, move)
    return info.value.rule


def test_a_new_match_asks_for_the_dealer_first():
    s = new_match(get_variant(), 3)
    assert chance_needed(s) == ChanceRequest("dealer", count=3)
    assert to_act(s) is None and s.phase is Phase.DEALER
    assert rule_of(s, Draw(0)) == "chance-pending"
    assert rule_of(s, ChooseDealer(3)) == "bad-dealer"
    assert rule_of(s, Shuffle(tuple(range(54)))) == "wrong-chance"
    assert rule_of(s, "draw") == "not-a-move"
    s, ev = apply(s, ChooseDealer(2))
    assert s.dealer == 2 and s.hand_number == 1
    assert chance_needed(s) == ChanceRequest("shuffle", count=54, first_slot=0)


def test_shuffle_must_order_exactly_the_requested_slots():
    s, _ = apply(new_match(get_variant(), 2), ChooseDealer(0))
    assert rule_of(s, Shuffle(tuple(range(53)))) == "bad-shuffle"
    assert rule_of(s, Shuffle((0,) * 54)) == "bad-shuffle"
    assert rule_of(s, Shuffle(list(range(54)))) == "bad-shuffle"
    s2, _ = apply(s, Shuffle(tuple(reversed(range(54)))))
    # draw order is the given order: seat 1 gets 53, 51, ...
    assert s2.hands[1] == (53, 51, 49, 47, 45) and s2.hands[0] == (52, 50, 48, 46, 44)
    assert chance_needed(s2) == ChanceRequest("flip", count=1, slots=(43,))
    assert rule_of(s2, Flip(parse_card("WILD"))) == "unknown-card"
    assert rule_of(s2, Reveal(())) == "wrong-chance"


def test_no_chance_move_when_none_is_needed():
    t = Table(get_variant(), ["2Y 3Y 4Y 5Y 6Y", "5B 8B AB 7B QB"], first="3B")
    assert rule_of(t.state, Flip(parse_card("3B"))) == "no-pending-chance"


def test_reveal_must_give_every_slot_in_a_hand_and_agree_with_known_faces():
    rules = get_variant("dernier", hand_size=2, match=MatchFormat("hands", 1))
    t = Table(rules, ["3Y 4Y", "5B 8B"], first="5Y", then="2G")
    t.play(1, "5B", declare=True)
    t.draw(0)
    t.pass_(0)
    s, _ = apply(t.state, Play(1, t.slot(1, "8B"), parse_card("8B")))
    req = chance_needed(s)
    assert req.kind == "reveal" and set(req.slots) == set(s.hands[0])
    good = t.dealer.chance_move(s, req)
    assert rule_of(s, Reveal(good.faces[:-1])) == "bad-reveal"
    assert rule_of(s, Reveal(good.faces + good.faces[:1])) == "bad-reveal"
    s2, ev = apply(s, good)
    assert s2.match_over


def test_face_of_a_known_slot_cannot_change():
    rules = get_variant("originale")
    t = Table(rules, ["2Y 3Y 4Y 5Y 6Y", "5B 8B AB 7B QB", "9R 9G KB 10G 8R"], first="3G",
              bottom="4G")
    from dernier_p2p.rules import ChooseHandSize, Cut

    t.move(Cut(2, False, parse_card("4G")))
    t.move(ChooseHandSize(0, 5))
    slot = t.slot(1, "5B")
    t.move(Play(1, slot, parse_card("5B")))  # wrong card: shown and taken back
    assert t.state.faces[slot] == parse_card("5B")
    t.draw(2)
    t.pass_(2)
    t.draw(0)
    t.pass_(0)
    assert rule_of(t.state, Play(1, slot, parse_card("3G"))) == "face-mismatch"


def test_state_is_immutable_and_apply_is_pure():
    t = Table(get_variant(), ["2Y 3Y 4Y 5Y 6Y", "5B 8B AB 7B QB"], first="3B")
    s = t.state
    with pytest.raises(AttributeError):
        s.turn = 0  # type: ignore[misc]
    snapshot = (s, dict(s.faces))
    move = Play(1, t.slot(1, "5B"), parse_card("5B"))
    a, ev_a = apply(s, move)
    b, ev_b = apply(s, move)
    assert a == b and ev_a == ev_b
    assert (s, dict(s.faces)) == snapshot


def test_without_known_faces_only_draw_is_listed():
    t = Table(get_variant(), ["2Y 3Y 4Y 5Y 6Y", "5B 8B AB 7B QB"], first="3B")
    assert legal_moves(t.state, 1) == [Draw(1)]
    assert legal_moves(t.state, 0) == []
    assert legal_moves(t.state, 9) == []


def _check_conservation(s):
    """Every card of the deck is in exactly one place: a hand, the draw pile or the discards."""
    places = [x for h in s.hands for x in h] + list(s.pile) + list(s.discard)
    assert len(places) == len(set(places)) == len(deck_cards(s.rules.deck))


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_listed_move_is_accepted_and_matches_are_reproducible(name):
    rules = get_variant(name, match=MatchFormat("hands", 1))
    for seed in range(4):
        runs = []
        for _ in range(2):
            rng = random.Random(seed)
            dealer = Dealer(rules, seed)
            s = new_match(rules, 2 + seed)
            for _ in range(400):
                if s.match_over:
                    break
                req = chance_needed(s)
                if req is not None:
                    s, _ = apply(s, dealer.chance_move(s, req))
                    continue
                for seat in range(s.players):
                    for m in legal_moves(s, seat, dealer.view(s, seat)):
                        apply(s, m)  # must not raise
                _check_conservation(s)
                seat = to_act(s)
                moves = legal_moves(s, seat, dealer.view(s, seat))
                plays = [m for m in moves if isinstance(m, Play)]
                s, _ = apply(s, rng.choice(plays or moves))
            runs.append(s)
        assert runs[0] == runs[1]


def test_malformed_moves_get_typed_errors():
    from dernier_p2p.rules import Catch, ChooseHandSize, Cut, Declare, NameSuit, Suit

    t = Table(get_variant("moderno"), ["1Y 2Y 3Y 4Y 6Y 8Y 9Y 1B",
                                       "5G 7G SKIPG DRAW2R WILD WILD4 9B SWAPG",
                                       "1R 2R 3R 4R SKIPB REVERSEB 8B ROTATE"], first="5G")
    s = t.state
    slot = t.slot(1, "5G")
    cases = [
        (Play(1, slot, None), "unknown-card"),
        (Play(1, [slot], parse_card("5G")), "malformed-move"),
        (Play(1, float(slot), parse_card("5G")), "malformed-move"),
        (Play(1, slot, parse_card("5G"), declare=1), "malformed-move"),
        (Play(1, slot + 1000, parse_card("5G")), "card-not-held"),
        (Play("1", slot, parse_card("5G")), "bad-seat"),
        (Play(1, slot, parse_card("5G"), suit=2), "cannot-name-suit"),
        (Play(1, t.slot(1, "WILD"), parse_card("WILD"), suit=2), "bad-suit"),
        (Play(1, t.slot(1, "SWAPG"), parse_card("SWAPG"), target=True), "bad-target"),
        (Play(1, slot, parse_card("5G"), target=0), "cannot-target"),
        (Draw(None), "bad-seat"),
        (Declare(7), "bad-seat"),
        (Catch(0, "x"), "no-catch"),
        (NameSuit(1, Suit.RED), "wrong-phase"),
        (ChooseHandSize(0, "5"), "wrong-phase"),
        (Cut(2, False), "wrong-phase"),
        (Reveal(((0, None),)), "no-pending-chance"),
    ]
    for move, rule in cases:
        assert rule_of(s, move) == rule, move


def test_int_fields_must_be_ints_not_bools_or_floats():
    # 3.0 == 3 and True == 1: without a type check they would find a slot by equality
    t = Table(get_variant("dernier", hand_size=2), ["2Y 3Y", "8B 5B", "9B 10G"], first="10B")
    slot = t.slot(1, "5B")
    assert rule_of(t.state, Play(1, float(slot), parse_card("5B"))) == "malformed-move"
    t1 = Table(get_variant("dernier", hand_size=2), ["2Y 3Y", "8B 5B", "9B 10G"], first="10B")
    zero = t1.slot(1, "8B")
    assert zero == 0
    assert rule_of(t1.state, Play(1, False, parse_card("8B"))) == "malformed-move"
    t1.move(Play(1, zero, parse_card("8B")))
    assert t1.state.discard[-1].__class__ is int


def test_cut_keep_and_reveal_slots_must_have_their_types():
    from dernier_p2p.rules import Cut

    rules = get_variant("originale")
    s = new_match(rules, 3)
    d = Dealer(rules, 5, dealer=0)
    while s.phase is not Phase.CUT:
        s, _ = apply(s, d.chance_move(s))
    assert rule_of(s, Cut(2, 0)) == "malformed-move"
    assert rule_of(s, Cut(2, "no")) == "malformed-move"

    rules = get_variant("dernier", match=MatchFormat("hands", 1))
    s = new_match(rules, 2)
    d = Dealer(rules, 3)
    while chance_needed(s) is None or chance_needed(s).kind != "reveal":
        req = chance_needed(s)
        if req is not None:
            s, _ = apply(s, d.chance_move(s, req))
            continue
        seat = to_act(s)
        moves = legal_moves(s, seat, d.view(s, seat))
        plays = [m for m in moves if isinstance(m, Play)]
        s, _ = apply(s, (plays or moves)[0])
    good = d.chance_move(s)
    bad = Reveal(tuple((float(x), c) for x, c in good.faces))
    assert rule_of(s, bad) == "bad-reveal"
    apply(s, good)


def test_events_carry_their_own_cards_across_variants_and_hands():
    # frequent events are built once and shared: the same slot and seat, and the first card
    # of each deck (the same index in each deck), but different cards
    seen = {}
    for name, hands, first in (
        ("dernier", ["2Y 3Y", "AY 8B", "9B 10G"], "5Y"),
        ("standard", ["2Y 3Y", "0Y 8B", "9B 1G"], "5Y"),
        ("moderno", ["2Y 3Y", "1Y 8B", "9B 1G"], "5Y"),
    ):
        assert str(deck_cards(get_variant(name).deck)[0]) == hands[1].split()[0]
        t = Table(get_variant(name, hand_size=2), hands, first=first)
        slot = t.slot(1, hands[1].split()[0])
        ev = t.play(1, hands[1].split()[0])
        played = [e for e in ev if type(e).__name__ == "Played"]
        assert [(e.seat, e.slot, str(e.card)) for e in played] == [
            (1, slot, hands[1].split()[0])
        ]
        seen[name] = played[0].card
    assert len({str(c) for c in seen.values()}) == 3


def test_listed_plays_follow_each_variants_own_options_for_the_same_card():
    # the J is one card object in both French decks: dernier must name a suit with it,
    # originale may; plays are listed per variant even when the same slot and seat recur
    for _ in range(2):
        for name, options in (("dernier", 4), ("originale", 5)):
            rules = get_variant(name, hand_size=3, hand_size_range=None, cut=False)
            t = Table(rules, ["2Y 3Y 4Y", "JB 8B 9B", "9R 10G 5R"], first="10B")
            jack = [m for m in t.legal(1) if isinstance(m, Play) and str(m.card) == "JB"]
            assert len(jack) == options
            assert ({m.suit for m in jack} == {None, *Suit}) == (name == "originale")
