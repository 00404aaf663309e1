"""The table as text: counts in the singular, playable cards marked, no card broken by wrap;
prompts broken between phrases."""

import re
import socket
from pathlib import Path

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


def test_a_long_line_is_broken_between_words_indented_and_a_command_stays_whole() -> None:
    from dernier_p2p.cli.render import fit_lines

    line = ("  no router mapping (UPnP: no UPnP router answered; NAT-PMP: Connection refused)")
    rows = fit_lines(line, 40).split("\n")
    assert all(cell_len(row) <= 40 for row in rows) and len(rows) > 1, rows
    assert all(row.startswith("  ") and row[2] != " " for row in rows), rows
    assert " ".join(row.strip() for row in rows) == line.strip()
    command = "  dernier join dn1-ag3k6uourb446sfivqaajqaaaibluwicar7qaaabxk4fywvo"
    assert fit_lines(command, 40) == command  # copied whole, as the terminal folds it
    assert fit_lines("short\n  also short", 40) == "short\n  also short"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rows(printed: list[str]) -> list[str]:
    """The lines a program wrote (before any fold of the terminal's)."""
    return click.unstyle("".join(printed)).replace("\r", "").split("\n")


def test_the_line_interface_breaks_the_hosts_and_joiners_lines_between_words_at_60_columns(
    tmp_path: Path,
) -> None:
    """``dernier host --bot`` and ``dernier join --bot`` (the line interface) at 60-column
    terminals: what they say of the code, the path the joiner got, for whom it can take over,
    the match and its result comes in rows of the terminal's width, broken between words, not
    where the terminal would cut a word; a row is longer only when it is one word or the
    command to copy."""
    from tests.tui.terminal import Terminal

    dead = _free_port()
    host = Terminal(tmp_path, 60, 24, "host", "--bot", "--players", "2", "--hands", "1",
                    "--bind", "127.0.0.1", "--port", "0", "--no-announce", "--relay",
                    f"127.0.0.1:{dead}", "--key", str(tmp_path / "k0.pem"), "--transcript",
                    str(tmp_path / "t0"), "--no-colour")
    joiner = None
    try:
        code = host.wait_for(lambda s: re.search(r"dernier join (dn1-[a-z2-7]+)",
                                                 "".join(s.printed)), "the code").group(1)
        joiner = Terminal(tmp_path, 60, 24, "join", code, "--bot", "--key",
                          str(tmp_path / "k1.pem"), "--transcript", str(tmp_path / "t1"),
                          "--no-colour", "--no-map",  # (a port of its own: the default
                          "--listen", f"127.0.0.1:{_free_port()}")  # may be another test's)
        for term in (host, joiner):
            term.wait_for(lambda s, t=term: t.closed, "the end", limit=120)
            assert term.proc.wait(timeout=30) == 0, "".join(term.screen.printed)
    finally:
        for term in (host, joiner):
            if term is not None:
                term.close()
    said = {}
    for who, term in (("host", host), ("joiner", joiner)):
        rows = _rows(term.screen.printed)
        said[who] = " ".join(row.strip() for row in rows)
        long = [row for row in rows if cell_len(row) >= 60
                and len(row.split()) > 1 and not row.lstrip().startswith("dernier ")]
        assert not long, "\n".join(rows)
    for sentence in ("No route from outside this machine: only players on this machine can "
                     "join.", "The deck of hand 1 is audited: every shuffle and card checks."):
        assert sentence in said["host"], said["host"]
    assert re.search(r"Seated at seat 1, connected directly at 127\.0\.0\.1:\d+; waiting for "
                     r"the table to fill\.", said["joiner"]), said["joiner"]
    assert re.search(r"If the host goes away, this seat can take over as host only for players "
                     r"on this (machine|network) \(", said["joiner"]), said["joiner"]
