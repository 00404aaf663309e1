"""Plain words for the engine's ids: draw reasons, refusals with the engine's reason, counts."""

from dernier_p2p.cli.words import count, draw_reason, play_refusal
from dernier_p2p.rules import NameSuit, Suit, get_variant, parse_card
from dernier_p2p.rules.simulate import Table

R = get_variant("dernier")
H0 = "2Y 3Y 4Y 5Y 6Y"
H1 = "5B 8B JOKER 7B QB"
H2 = "9R 9G KB 10G 8R"


def test_counts_are_singular_for_one() -> None:
    assert count(1, "card") == "1 card"
    assert count(2, "card") == "2 cards"
    assert count(0, "point") == "0 points"


def test_draw_reasons_never_show_an_internal_id() -> None:
    assert draw_reason("draw", R) is None
    assert draw_reason("penalty-JOKER", R) == "from the Jolly"
    assert draw_reason("penalty-A", R) == "from the A"
    assert draw_reason("penalty-7", R) == "from the 7"
    assert draw_reason("penalty-declaration", R) == "missed declaration"
    assert draw_reason("timeout-draw", get_variant("moderno")) == "out of time"
    assert draw_reason("penalty-WILD4", get_variant("moderno")) == "from the Wild+4"


def test_a_jolly_under_an_ace_chain_is_refused_with_the_chain_as_reason() -> None:
    t = Table(R, [H0, H1, H2], first="AY")
    slot = t.slot(1, "JOKER")
    why = play_refusal(t.state, 1, slot, parse_card("JOKER"))
    assert why == "2 cards pending (A chain): answer with A or take them (d)"


def test_after_drawing_only_the_drawn_card_may_be_played() -> None:
    t = Table(R, [H0, H1, H2], first="3R", then="9Y")
    t.draw(1)
    slot = t.slot(1, "5B")
    why = play_refusal(t.state, 1, slot, parse_card("5B"))
    assert why.startswith("after drawing, only the card you drew may be played")


def test_a_card_off_suit_names_the_top_card_or_the_named_suit() -> None:
    t = Table(R, [H0, H1, H2], first="3R")
    assert play_refusal(t.state, 1, t.slot(1, "5B"), parse_card("5B")) == (
        "it matches neither the suit nor the rank of 3♥"
    )
    t = Table(R, [H0, H1, H2], first="JR")
    t.move(NameSuit(0, Suit.GREEN))  # the dealer names the first J's suit
    why = play_refusal(t.state, 1, t.slot(1, "8B"), parse_card("8B"))
    assert why == "the suit named is Fiori ♣ (green) (top card J♥)"


def test_out_of_turn_without_jump_in() -> None:
    t = Table(R, [H0, H1, H2], first="3R")
    assert play_refusal(t.state, 2, t.slot(2, "9R"), parse_card("9R")) == "it is not your turn"
