"""What a seat knows of the cards: the unseen cards are exactly the ones the hidden slots hold,
a deal of them keeps every known face, and remembered and inferred knowledge is used."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from dernier_p2p.bots import HeuristicBot, SearchBot
from dernier_p2p.bots.belief import Belief, BeliefError, _held_most, fitting
from dernier_p2p.rules import (
    Card,
    MatchFormat,
    Suit,
    deck_cards,
    get_variant,
    parse_card,
    parse_cards,
)
from dernier_p2p.rules.simulate import Dealer, Table, play_match


def _checking(dealer: Dealer, checked: list[int]):
    """A heuristic bot that, at each of its decisions, checks its seat's Belief against the
    dealer's true faces."""

    def policy(state, seat, view):
        belief = Belief(state, seat, view)
        truth = [dealer.face(state, x) for x in belief.hidden]
        assert Counter(truth) == Counter(belief.unseen)  # the real world is a possible one
        for x, card in view.items():
            assert belief.known[x] == card
        faces = belief.deal(random.Random(len(checked)))
        live = [x for h in state.hands for x in h] + list(state.pile)
        assert all(x in faces for x in live)
        on_table = [faces[x] for x in live] + [state.faces[x] for x in state.discard]
        assert Counter(on_table) == Counter(deck_cards(state.rules.deck))
        checked.append(1)
        return HeuristicBot(seat)(state, seat, view)

    return policy


@pytest.mark.parametrize("variant", ["dernier", "originale", "moderno", "standard"])
@pytest.mark.parametrize("players", [2, 4])
def test_unseen_cards_fit_the_hidden_slots_all_through_a_match(variant: str, players: int) -> None:
    rules = get_variant(variant, match=MatchFormat("hands", 2))
    checked: list[int] = []
    dealer = Dealer(rules, 11)
    policies = [_checking(dealer, checked) for _ in range(players)]
    state, _ = play_match(rules, players, policies, dealer=dealer, max_moves=20_000)
    assert state.match_over and len(checked) > 20


def test_a_card_given_away_in_a_swap_is_remembered() -> None:
    rules = get_variant("moderno")
    table = Table(rules, ["SWAPR 3R 4G 5G 6G 7G 8G 9G", "1Y 2Y 3Y 4Y 5Y 6Y 7Y 8Y"], first="9R",
                  dealer=1)
    before = dict(table.dealer.view(table.state, 0))
    table.play(0, "SWAPR", target=1)
    view = table.dealer.view(table.state, 0)
    assert set(view) & set(before) == set()  # seat 0 now holds seat 1's old hand
    plain = Belief(table.state, 0, view)
    remembered = Belief(table.state, 0, view, memory=before)
    given = [x for x in table.state.hands[1]]
    assert all(x in plain.hidden for x in given)
    assert all(remembered.known[x] == before[x] for x in given)
    assert len(remembered.hidden) == len(plain.hidden) - len(given)


def test_a_deal_keeps_to_what_a_slot_is_believed_not_to_hold() -> None:
    rules = get_variant("dernier")
    table = Table(rules, ["JY 3B 5B 9B 2R", "4Y 6Y 8R 9G QG"], first="4B", dealer=1)
    state = table.state
    no_blue = fitting(state, set(deck_cards(rules.deck)))
    assert parse_card("7B") in no_blue and parse_card("4R") in no_blue  # the suit, the rank
    assert parse_card("JR") in no_blue and parse_card("5R") not in no_blue  # wild; neither
    voids = {x: no_blue for x in state.hands[1]}
    belief = Belief(state, 0, table.dealer.view(state, 0), voids=voids)
    rng = random.Random(1)
    for _ in range(200):
        faces = belief.deal(rng)
        assert all(faces[x] not in no_blue for x in state.hands[1])
    # when the unseen cards cannot honour every belief, the deal still gives every slot a card
    everything = frozenset(deck_cards(rules.deck))
    belief = Belief(state, 0, table.dealer.view(state, 0), voids={state.pile[0]: everything})
    faces = belief.deal(rng)
    assert state.pile[0] in faces


def test_a_deal_favours_the_suit_a_player_named_as_the_one_it_held_most() -> None:
    rules = get_variant("dernier")
    table = Table(rules, ["JY 3B 5B 9B 2R", "4Y 6Y 8R 9G QG"], first="4B", dealer=1)
    state = table.state
    hand = state.hands[1]
    view = table.dealer.view(state, 0)

    def share(named, slots=hand, suit=Suit.GREEN) -> float:
        belief = Belief(state, 0, view, named=named)
        rng = random.Random(3)
        return sum(_held_most(belief.deal(rng), slots, suit) for _ in range(400)) / 400

    alone = share(None)
    assert alone < 0.4  # (green is the lowest suit held most in few deals of 5 unseen cards)
    assert share([(hand, int(Suit.GREEN))]) > 1 - (1 - alone) ** 8 - 0.05  # 8 tries
    # a reading whose slots are all known tells nothing: no deal is made again for it
    known = tuple(x for x in state.hands[0])
    belief = Belief(state, 0, view, named=[(known, int(Suit.GREEN))])
    assert belief.named == []
    # a suit no deal can make the one held most costs the tries, and a deal is still made
    impossible = Belief(state, 0, view, named=[(hand[:1], 0), (hand[:1], 1)])
    assert all(x in impossible.deal(random.Random(0)) for x in hand)


def test_held_most_is_the_lowest_of_the_suits_held_most() -> None:
    faces = {1: parse_card("3R"), 2: parse_card("4G"), 3: parse_card("JOKER")}
    assert _held_most(faces, (1, 2, 3), int(Suit.RED))  # red and green tie: red is lower
    assert not _held_most(faces, (1, 2, 3), int(Suit.GREEN))
    assert _held_most(faces, (3,), int(Suit.YELLOW))  # no suit held: the first one
    assert not _held_most(faces, (3,), int(Suit.RED))


def test_a_view_that_does_not_fit_the_table_is_refused() -> None:
    rules = get_variant("dernier")
    table = Table(rules, ["JY 3B 5B 9B 2R", "4Y 6Y 8R 9G QG"], first="4B", dealer=1)
    view = dict(table.dealer.view(table.state, 0))
    view[table.state.hands[0][0]] = parse_card("4B")  # the card on the table, a second time
    with pytest.raises(BeliefError, match="does not fit"):
        Belief(table.state, 0, view)
    assert parse_cards("4B") == [Card(parse_card("4B").rank, parse_card("4B").suit)]


@pytest.mark.parametrize("variant", ["dernier", "originale", "moderno", "standard"])
def test_the_search_bots_worlds_keep_every_public_fact_through_a_match(variant: str) -> None:
    """At each decision of a search bot, what it holds (the faces it remembers, the voids
    its tracker inferred) is true of the real deal, and every world dealt from it keeps every
    public fact: the public faces, its own hand and remembered cards where they are, the
    deck's cards once each, and no hidden slot dealt a card its holder showed it did not hold
    (the real deal is one such world)."""
    rules = get_variant(variant, match=MatchFormat("hands", 3))
    dealer = Dealer(rules, 5)
    counts: Counter[str] = Counter()
    bot = SearchBot(3, iterations=6)

    def policy(state, seat, view):
        move = bot(state, seat, view)
        memory, voids = bot._memory, bot.tracker.voids
        try:
            belief = Belief(state, seat, view, memory, voids)
        except BeliefError:
            return move
        live = [x for h in state.hands for x in h] + list(state.pile)
        for x, card in memory.items():
            if x in live:
                assert dealer.face(state, x) == card  # remembered where it went
                counts["remembered"] += x not in state.hands[seat]
        for x, void in belief.voids.items():
            assert dealer.face(state, x) not in void
            counts["voids"] += 1
        rng = random.Random(len(counts))
        for _ in range(20):
            faces = belief.deal(rng)
            for x, card in state.faces.items():
                assert faces[x] == card
            for x in state.hands[seat]:
                assert faces[x] == view[x]
            for x, card in memory.items():
                if x in live:
                    assert faces[x] == card
            for x, void in belief.voids.items():
                assert faces[x] not in void, (x, faces[x])
            on_table = [faces[x] for x in live] + [state.faces[x] for x in state.discard]
            assert Counter(on_table) == Counter(deck_cards(rules.deck))
        counts["decisions"] += 1
        return move

    players = 3
    policies = [policy] + [HeuristicBot(k) for k in range(1, players)]
    state, _ = play_match(rules, players, policies, dealer=dealer, max_moves=20_000)
    assert state.match_over and counts["decisions"] >= 20 and counts["voids"] > 10, counts
