"""Cards and the four physical decks."""

from collections import Counter

import pytest

from dernier_p2p.rules import BLACK_RANKS, Card, Rank, Suit, deck_cards, parse_card, parse_cards


def test_dernier_deck_is_54_in_canonical_order():
    deck = deck_cards("dernier-54")
    assert len(deck) == 54
    ranks = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
    for s in Suit:
        assert [c.rank.value for c in deck[13 * s : 13 * s + 13]] == ranks
        assert {c.suit for c in deck[13 * s : 13 * s + 13]} == {s}
    assert deck[52:] == (Card(Rank.JOKER, None),) * 2


def test_originale_deck_is_two_french_decks_and_four_matte():
    deck = deck_cards("originale-108")
    assert len(deck) == 108
    assert deck[:52] == deck[52:104] == deck_cards("dernier-54")[:52]
    assert deck[104:] == (Card(Rank.JOKER, None),) * 4
    assert max(Counter(deck[:104]).values()) == 2


def test_moderno_deck_is_112():
    deck = deck_cards("moderno-112")
    assert len(deck) == 112
    counts = Counter(deck)
    for s in Suit:
        for n in range(1, 10):
            assert counts[Card(Rank(str(n)), s)] == 2
        assert counts[Card(Rank.SKIP, s)] == counts[Card(Rank.REVERSE, s)] == 2
        assert counts[Card(Rank.DRAW2, s)] == 2
        assert counts[Card(Rank.SWAP, s)] == 1
    for r in (Rank.WILD, Rank.WILD4, Rank.ROTATE):
        assert counts[Card(r, None)] == 4
    # canonical order: first colour block starts 1,1,2,2
    assert [str(c) for c in deck[:4]] == ["1Y", "1Y", "2Y", "2Y"]
    assert [str(c) for c in deck[18:25]] == ["SKIPY", "SKIPY", "REVERSEY", "REVERSEY",
                                             "DRAW2Y", "DRAW2Y", "SWAPY"]


def test_standard_deck_is_108():
    deck = deck_cards("standard-108")
    assert len(deck) == 108
    counts = Counter(deck)
    for s in Suit:
        assert counts[Card(Rank.N0, s)] == 1
        assert counts[Card(Rank.N9, s)] == 2
        assert counts[Card(Rank.DRAW2, s)] == 2
    assert counts[Card(Rank.WILD, None)] == counts[Card(Rank.WILD4, None)] == 4
    assert str(deck[0]) == "0Y"


def test_unknown_deck_and_bad_cards_raise_value_error():
    with pytest.raises(ValueError, match="unknown deck"):
        deck_cards("tarot-78")
    with pytest.raises(ValueError):
        Card(Rank.JOKER, Suit.RED)
    with pytest.raises(ValueError):
        Card(Rank.ACE, None)
    with pytest.raises(ValueError):
        parse_card("XZ")


def test_parse_cards_round_trip():
    cards = parse_cards("7R AB 10G JOKER WILD4 SKIPY")
    assert cards[0] == Card(Rank.N7, Suit.RED)
    assert cards[2] == Card(Rank.N10, Suit.GREEN)
    assert [str(c) for c in cards] == ["7R", "AB", "10G", "JOKER", "WILD4", "SKIPY"]
    assert all((c.suit is None) == (c.rank in BLACK_RANKS) for c in cards)
