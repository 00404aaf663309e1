"""The table as text: counts in the singular, playable cards marked, no card broken by wrap;
prompts broken between phrases."""

import click
from rich.cells import cell_len

from dernier_p2p.cli.human import leave_warning
from dernier_p2p.cli.render import phrase_lines, render_table, wrap_items
from dernier_p2p.rules import Card, Rank, Suit
from tests.cli.test_human import _table

NAMES = ["Ann", "Bob", "Cy"]


def test_wrap_breaks_only_between_items() -> None:
    items = [f"{k}:Wild+4" for k in range(1, 15)]
    lines = wrap_items(items, 30, " Your hand: ", "   ")
    assert len(lines) > 1
    assert all(len(line) <= 30 for line in lines)
    assert " ".join(lines).split() == ["Your", "hand:", *items]


def test_a_moderno_hand_at_80_columns_keeps_every_card_whole() -> None:
    state, seat, view = _table("moderno")
    for slot in state.hands[seat]:
        view[slot] = Card(Rank.WILD4, None)
    first = state.hands[seat][0]
    view[first] = Card(Rank.DRAW2, Suit.YELLOW)
    text = render_table(state, seat, view, NAMES, [], colour=True, playable={first}, width=80)
    plain = click.unstyle(text)
    assert all(len(line) <= 80 for line in plain.splitlines())
    hand = plain.split("Your hand:", 1)[1]
    assert "Wild+\n" not in hand and "yellow +2*" in hand  # the playable card is marked
    assert hand.count("Wild+4") == len(state.hands[seat]) - 1


def test_one_card_is_singular() -> None:
    state, seat, view = _table("dernier")
    text = click.unstyle(render_table(state, seat, view, NAMES, [], colour=False))
    assert " 1 cards" not in text and "5 cards" in text


PROMPTS = [
    "card number to play (add ! to declare) · d = take the pending cards · "
    "! = declare DERNIER/SOLO · c = catch a player who did not declare · q = leave  > 12",
    leave_warning(None, bots=True) + " y",
    leave_warning(None) + " y",
    "Name a suit: y Quadri ♦, r Cuori ♥, g Fiori ♣, b Picche ♠ (Enter: same suit)  > ",
    "Swap hands with: 2 = Bot 1, 3 = Bot 2, 4 = Bot 3 > ",
]
PHRASES = ["(add ! to declare)", "d = take the pending cards", "! = declare DERNIER/SOLO",
           "q = leave", "y = leave", "else = stay", "y Quadri ♦", "b Picche ♠",
           "r Cuori ♥", "2 = Bot 1", "4 = Bot 3"]


def test_a_prompt_breaks_between_phrases_never_inside_one() -> None:
    for width in range(30, 201):
        for prompt in PROMPTS:
            lines = phrase_lines(prompt, width)
            assert all(cell_len(line) <= width for line in lines), (width, lines)
            assert " ".join(lines).replace(" · ·", " ·").split() == prompt.split()
            for phrase in PHRASES:
                if phrase in prompt:
                    assert any(phrase in line for line in lines), (width, phrase, lines)
