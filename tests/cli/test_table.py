"""A line that comes at any moment of a match, not from it (the router, the relay):
``Seating.tell`` in the line interface, with a prompt open and without, and on the full-screen
table's log."""

from __future__ import annotations

import io
from typing import Any

from dernier_p2p.cli.human import LineReader
from dernier_p2p.cli.internet import renewal_line
from dernier_p2p.cli.table import Seating
from dernier_p2p.tui.link import ScreenLink

PROMPT = "card number to play (add ! to declare) · d = draw · q = leave > "
LINE = renewal_line(False, "port mapping", "203.0.113.7:47630")


def _seating() -> tuple[Seating, list[tuple[str, bool]]]:
    said: list[tuple[str, bool]] = []

    def echo(text: Any = "", nl: bool = True, **_: Any) -> None:
        said.append((str(text), nl))

    return Seating(bot=False, colour=False, echo=echo, lines=LineReader(io.StringIO())), said


def test_a_line_told_while_a_prompt_is_open_ends_its_line_and_opens_it_again() -> None:
    seating, said = _seating()
    assert seating.narrator is not None
    seating.narrator.open_prompt = lambda: PROMPT
    seating.tell(LINE)
    assert said == [("", True), (LINE, True), (PROMPT, False)]


def test_a_line_told_with_no_prompt_open_is_the_line_alone() -> None:
    seating, said = _seating()
    seating.tell(LINE)
    assert seating.narrator is not None
    seating.narrator.open_prompt = lambda: ""  # the seat's prompt, closed
    seating.tell(LINE)
    assert said == [(LINE, True), (LINE, True)]


def test_on_the_full_screen_table_a_told_line_goes_to_the_log() -> None:
    link = ScreenLink()
    seating = Seating(bot=False, colour=False, screen=link)
    link.prompt = PROMPT.strip()
    seating.tell(LINE)
    assert link.log == [LINE] and link.prompt == PROMPT.strip()
