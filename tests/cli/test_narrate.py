"""Narration in plain words: no internal id reaches a player."""

from dernier_p2p.cli.narrate import narrate, reveal_lines, session_notice
from dernier_p2p.protocol.session import SessionEvent
from dernier_p2p.rules import Card, Rank, Suit, get_variant
from dernier_p2p.rules import events as ev

NAMES = ["Ann", "Bob"]
R = get_variant("dernier")


def test_penalties_draws_and_hand_ends_in_words() -> None:
    assert narrate(ev.Penalty(0, 1, "declaration"), NAMES, R, False) == (
        "Ann pays a penalty of 1 card (missed declaration)."
    )
    assert narrate(ev.Drew(1, (3, 4, 5, 6), "penalty-JOKER"), NAMES, R, False) == (
        "Bob draws 4 cards (from the Jolly)."
    )
    assert narrate(ev.Drew(1, (3, 4), "penalty-7"), NAMES, R, False) == (
        "Bob draws 2 cards (from the 7)."
    )
    assert narrate(ev.HandOver(None, "pile-empty"), NAMES, R, False) == (
        "The hand is over: the draw pile ran out."
    )
    assert narrate(ev.Forfeited(0, "timeout", (0, 0)), NAMES, R, False) == (
        "Ann forfeits (out of time)."
    )


def test_every_hand_revealed_with_its_points() -> None:
    faces = {1: Card(Rank.ACE, Suit.RED), 2: Card(Rank.N7, Suit.BLUE), 3: Card(Rank.JOKER, None)}
    lines = reveal_lines(faces, [(1, 2), (3,)], NAMES, R, colour=False)
    assert lines[1:] == ["  Ann: A♥ 7♠ (18 points)", "  Bob: Jolly (15 points)"]


def test_a_chat_line_names_its_author_and_is_marked_as_talk() -> None:
    names = ["Ann", "Bea"]
    line = session_notice(SessionEvent("chat", 1, "DERNIER!"), names, 1)
    assert line == "» Bea: DERNIER!"  # never the table's own "Bea: DERNIER!"
    assert session_notice(SessionEvent("chat", 0, "hi"), names, None) == "» Ann: hi"
