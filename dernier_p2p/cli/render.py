"""Text rendering of cards, the table and the move log for the terminal (ANSI colours), and
prompts laid out in lines broken between their phrases (:func:`phrase_lines`), and lines
echoed to a terminal broken between words (:func:`echo_fitted`).

The seeds pair each suit with a colour: Quadri/diamonds yellow, Cuori/hearts red, Fiori/clubs
green, Picche/spades blue. Black cards (Jolly/Matta, wild, wild draw-four, rotate) show in bold.
"""

from __future__ import annotations

import re
import shutil
import sys
import textwrap
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import click
from rich.cells import cell_len

from dernier_p2p.rules import Card, Rank, Rules, State, Suit

COLOURS = {Suit.YELLOW: "yellow", Suit.RED: "red", Suit.GREEN: "green", Suit.BLUE: "blue"}
FRENCH_SYMBOLS = {Suit.YELLOW: "♦", Suit.RED: "♥", Suit.GREEN: "♣", Suit.BLUE: "♠"}
COLOUR_NAMES = {Suit.YELLOW: "yellow", Suit.RED: "red", Suit.GREEN: "green", Suit.BLUE: "blue"}
FRENCH_NAMES = {
    Suit.YELLOW: "Quadri ♦ (yellow)",
    Suit.RED: "Cuori ♥ (red)",
    Suit.GREEN: "Fiori ♣ (green)",
    Suit.BLUE: "Picche ♠ (blue)",
}
ACTION_LABELS = {
    Rank.SKIP: "Skip",
    Rank.REVERSE: "Reverse",
    Rank.DRAW2: "+2",
    Rank.SWAP: "Swap",
    Rank.WILD: "Wild",
    Rank.WILD4: "Wild+4",
    Rank.ROTATE: "Rotate",
}


def is_french(rules: Rules) -> bool:
    """True for the decks with French suits (dernier, originale)."""
    return rules.deck.startswith(("dernier", "originale"))


def card_label(card: Card, rules: Rules) -> str:
    """A plain label: "7♥", "Jolly", "Matta", "blue Skip", "Wild+4"."""
    if card.rank is Rank.JOKER:
        return "Matta" if rules.deck.startswith("originale") else "Jolly"
    if card.suit is None:
        return ACTION_LABELS[card.rank]
    if is_french(rules):
        return f"{card.rank.value}{FRENCH_SYMBOLS[card.suit]}"
    label = ACTION_LABELS.get(card.rank, card.rank.value)
    return f"{COLOUR_NAMES[card.suit]} {label}"


def card_text(card: Card, rules: Rules, colour: bool = True) -> str:
    """The label in the card's colour."""
    label = card_label(card, rules)
    if not colour:
        return label
    if card.suit is None:
        return click.style(label, bold=True, fg="magenta")
    return click.style(label, fg=COLOURS[card.suit], bold=True)


def suit_text(suit: Suit, rules: Rules, colour: bool = True, short: bool = False) -> str:
    """The name of a suit (French decks) or colour; ``short`` leaves out a French suit's
    colour word ("Quadri ♦"), for prompts that must fit 80 columns."""
    label = FRENCH_NAMES[suit] if is_french(rules) else COLOUR_NAMES[suit]
    if short:
        label = label.split(" (")[0]
    return click.style(label, fg=COLOURS[suit], bold=True) if colour else label


def wrap_items(
    items: Sequence[str], width: int, lead: str, indent: str, sep: str = "  "
) -> list[str]:
    """``items`` joined by ``sep`` into lines of at most ``width`` visible columns (colour codes
    do not count), breaking only between items; the first line starts with ``lead``."""
    lines: list[str] = []
    line, size = lead, len(click.unstyle(lead))
    fresh = True
    for item in items:
        w = len(click.unstyle(item))
        gap = 0 if fresh else len(sep)
        if not fresh and size + gap + w > width:
            lines.append(line)
            line, size, gap = indent, len(indent), 0
        line += ("" if gap == 0 else sep) + item
        size += gap + w
        fresh = False
    lines.append(line)
    return lines


def width_of(text: str) -> int:
    """The columns ``text`` takes on a terminal (colour codes take none)."""
    return cell_len(click.unstyle(text))


NBSP = "\u00a0"
_KEYED = re.compile(r"(?<![\w!?/])([a-z0-9!?/]) (?=\S)")  # "y Quadri ♦", "! with the play"
_SYMBOL = re.compile(r" (?=[^\w\s(](?:[\s,.;)]|$))")  # "Picche ♠", "stay >"
_SAID = re.compile(r" = [^,.;()>·]{1,24}(?=$|[,.;()>·])")  # "d = take the pending cards"


def _bind(phrase: str) -> str:
    """``phrase`` with the spaces that must not break made non-breaking: in "d = draw", after a
    one-key name ("y Quadri ♦"), before a lone symbol ("Picche ♠"), inside a short
    parenthesis ("(add ! to declare)")."""
    phrase = _SAID.sub(lambda m: m.group(0).replace(" ", NBSP), phrase)
    phrase = phrase.replace(" = ", f"{NBSP}={NBSP}")
    phrase = _KEYED.sub(lambda m: m.group(1) + NBSP, phrase)
    phrase = _SYMBOL.sub(NBSP, phrase)
    return re.sub(r"\([^()]{1,24}\)", lambda m: m.group(0).replace(" ", NBSP), phrase)


def phrase_lines(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` columns, broken between its phrases (" · ", the
    line then ending with "·") and, in a phrase longer than a line, between words, never inside
    "d = draw", "y Quadri ♦" or a short parenthesis."""
    width = max(12, width)
    phrases = text.split(" · ")
    lines: list[str] = []
    line = ""
    for k, phrase in enumerate(phrases):
        room = width if k == len(phrases) - 1 else width - 2  # room for a closing " ·"
        joined = f"{line} · {phrase}" if line else phrase
        if width_of(joined) <= room:
            line = joined
            continue
        if line:
            lines.append(line + " ·")
        if width_of(phrase) <= room:
            line = phrase
            continue
        parts = textwrap.wrap(_bind(phrase), width - 2, break_long_words=False,
                              break_on_hyphens=False) or [""]
        lines.extend(p.replace(NBSP, " ") for p in parts[:-1])
        line = parts[-1].replace(NBSP, " ")
    lines.append(line)
    return lines


def fit_lines(text: str, width: int) -> str:
    """``text`` with each line longer than ``width`` columns broken between its phrases and
    words (see :func:`phrase_lines`), the rows after the first indented as the line is; a
    command shown to be copied ("  dernier join dn1-...") stays whole."""
    out: list[str] = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        indent = line[: len(line) - len(body)]
        if width_of(line) <= width or body.startswith("dernier "):
            out.append(line)
            continue
        out.extend(indent + row for row in phrase_lines(body, width - len(indent)))
    return "\n".join(out)


def echo_fitted(text: Any = "", nl: bool = True, **kwargs: Any) -> None:
    """``click.echo``; at a terminal, a line longer than a row is broken between words
    (:func:`fit_lines`), not where the terminal would cut one. A pipe gets the lines whole."""
    if nl and text and sys.stdout.isatty():
        text = fit_lines(str(text), shutil.get_terminal_size((80, 24)).columns - 1)
    click.echo(text, nl=nl, **kwargs)


def render_table(
    state: State,
    seat: int,
    view: Mapping[int, Card],
    names: Sequence[str],
    log: Sequence[str],
    colour: bool = True,
    playable: Collection[int] = (),
    width: int = 80,
) -> str:
    """The table as ``seat`` sees it: others' card counts, top card, named suit, pending draw,
    whose turn, the recent log and this seat's hand numbered from 1 (the slots in ``playable``
    marked with ``*``), wrapped at ``width`` columns without breaking a card."""
    rules = state.rules
    lines = []
    arrow = "→" if state.direction == 1 else "←"
    lines.append(
        f"── {rules.name} · hand {state.hand_number} · dealer {names[state.dealer]} · "
        f"direction {arrow} · pile {state.pile_size} ──"
    )
    for s in range(state.players):
        mark = "▶" if s == state.turn else " "
        you = " (you)" if s == seat else ""
        score = state.scores[s]
        size = len(state.hands[s])
        lines.append(f" {mark} {names[s]}{you}: {size} card{'' if size == 1 else 's'}"
                     f" · score {score}")
    top = "—" if state.top is None else card_text(state.top, rules, colour)
    extra = ""
    if state.named_suit is not None:
        extra += f" · suit named: {suit_text(state.named_suit, rules, colour)}"
    if state.pending_draw:
        extra += f" · pending draw: {state.pending_draw}"
    lines.append(f" Top card: {top}{extra}")
    if log:
        lines.append(" Recent:")
        lines.extend(f"   {entry}" for entry in log[-6:])
    hand = state.hands[seat]
    cards = [  # a card passed on by another seat shows as "?" until its face has come
        f"{i + 1}:{'?' if view.get(x) is None else card_text(view[x], rules, colour)}"
        + ("*" if x in playable else "")
        for i, x in enumerate(hand)
    ]
    key = " (* = playable now)" if any(x in playable for x in hand) else ""
    lines.extend(wrap_items(cards or ["(empty)"], width, " Your hand: ", "   "))
    if key:
        lines[-1] += key if len(click.unstyle(lines[-1])) + len(key) <= width else ""
    return "\n".join(lines)
