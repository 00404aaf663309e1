"""Card encodings: one distinct group element per physical card, and the reverse lookup."""

import pytest

from dernier_p2p.deck import group as g
from dernier_p2p.deck.cards import (
    DECK_SIZES,
    NotACard,
    card_element,
    card_elements,
    card_index,
    initial_deck,
)
from dernier_p2p.wire.canonical import encode


@pytest.mark.parametrize("name", sorted(DECK_SIZES))
def test_every_card_is_a_distinct_valid_element(name: str) -> None:
    elems = card_elements(name)
    assert len(elems) == DECK_SIZES[name]
    assert len(set(elems)) == len(elems)
    for k, m in enumerate(elems):
        assert g.decode(m) == m
        assert card_index(name, m) == k


def test_encoding_follows_the_documented_hash() -> None:
    m = g.hash_to_element(b"dernier-p2p/card", encode(["originale-108", 108, 5]))
    assert card_element("originale-108", 5) == m


def test_decks_are_domain_separated() -> None:
    assert card_element("originale-108", 0) != card_element("standard-108", 0)
    assert not set(card_elements("dernier-54")) & set(card_elements("moderno-112"))


def test_non_card_and_bad_index_are_refused() -> None:
    with pytest.raises(NotACard) as err:
        card_index("dernier-54", g.base_mul(12345), seat=3)
    assert err.value.seat == 3
    for bad in (-1, 54, True, "1"):
        with pytest.raises(ValueError):
            card_element("dernier-54", bad)
    with pytest.raises(ValueError):
        card_element("no-such-deck", 0)


def test_initial_deck_is_trivial_ciphertexts() -> None:
    deck = initial_deck("dernier-54")
    assert [c1 for c1, _ in deck] == [g.IDENTITY] * 54
    assert [c2 for _, c2 in deck] == card_elements("dernier-54")
    assert initial_deck("dernier-54", [3, 1]) == [deck[3], deck[1]]
    assert initial_deck("dernier-54", [0, 53]) == [deck[0], deck[53]]
    for bad in (54, -1, True, "1", None):  # a reshuffle's cards come from a peer's message
        with pytest.raises(ValueError):
            initial_deck("dernier-54", [bad])
