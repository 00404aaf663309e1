"""The screen's turn clock keeps the table's rule (PROTOCOL.md 18); the offer's keys."""

from __future__ import annotations

from rich.cells import cell_len

from dernier_p2p.rules import (
    Card,
    Catch,
    ChooseDealer,
    Declare,
    Draw,
    Play,
    Rank,
    Suit,
    apply,
    get_variant,
    new_match,
)
from dernier_p2p.tui.app import keys_line
from dernier_p2p.tui.view import (
    TurnClock,
    clock,
    offer_keys,
    offer_text,
    players_text,
    table_title,
    turn_clock,
)


def _recs(*authors: int, kind: str = "move") -> list[dict]:
    return [{"env": {"seat": s, "body": {"type": kind}}} for s in authors]


def test_the_clock_restarts_per_turn_and_after_the_seats_own_record() -> None:
    tc = TurnClock()
    tc.update(_recs(0, 0), [], 100.0)  # shuffling: nobody's clock runs
    assert tc.left(1, 20.0, 130.0) is None
    tc.update(_recs(0, 0, 0), [1], 130.0)  # the table now waits on seat 1
    assert tc.left(1, 20.0, 138.0) == 12.0
    tc.update(_recs(0, 0, 0, 0), [1], 139.0)  # another seat's record: seat 1's clock runs on
    assert tc.left(1, 20.0, 139.0) == 11.0
    tc.update(_recs(0, 0, 0, 0) + _recs(1, kind="chat"), [1], 139.5)  # a chat line: runs on
    assert tc.left(1, 20.0, 139.5) == 10.5
    tc.update(_recs(0, 0, 0, 0, 1, 1), [1], 140.0)  # seat 1 drew and may play the drawn card
    assert tc.left(1, 20.0, 141.0) == 19.0
    tc.update(_recs(0, 0, 0, 0, 1, 1, 1), [0], 142.0)  # seat 1 played: seat 0's turn
    assert tc.left(1, 20.0, 142.0) is None and tc.left(0, 20.0, 143.0) == 19.0


def test_a_countdown_reads_in_seconds_then_minutes() -> None:
    assert clock(9.94) == "9.9 s"
    assert clock(-1) == "0.0 s"
    assert clock(75) == "1:15"


def test_a_held_hand_warns_when_the_next_hand_already_waits_on_this_seat() -> None:
    held = offer_text("", 0.0, True, "").plain
    assert "Enter = next hand" in held and "your turn" not in held
    warned = offer_text("", 0.0, True, "", 95.0).plain
    assert "Enter = next hand" in warned
    assert "The next hand has begun with your turn: its clock runs ⏱ 1:35" in warned
    # with a prompt open, the prompt is shown (the turn's own clock is beside the seat)
    assert "begun" not in offer_text("Your turn > ", 0.0, True, "", 95.0).plain


def test_a_late_declaration_in_turn_has_its_key_and_countdown_without_the_turns_cards() -> None:
    state = new_match(get_variant("standard"), 2)._replace(hands=((7,), (8, 9)))
    card = Card(Rank.N5, Suit.RED)
    moves = [Play(0, 7, card), Draw(0), Declare(0), Catch(0, 1)]
    names = ["Ann", "Bot 1"]
    keys = offer_keys(state, 0, {7: card}, moves, names, 2.5, in_turn=True).plain
    assert keys == "[!]+Enter declare DERNIER! ⏱ 2.5 s   [c] catch Bot 1 ⏱ 2.5 s"
    assert offer_keys(state, 0, {7: card}, moves, names, 0.0, in_turn=True).plain == ""
    out_of_turn = offer_keys(state, 0, {7: card}, moves, names, 2.5).plain
    assert "jump in with" in out_of_turn and out_of_turn.endswith("[Enter] let it go")


def test_an_hour_long_turn_shows_no_clock_until_its_last_minutes() -> None:
    assert turn_clock(3599.0, 3600.0) is None  # `dernier play`: an hour against the bots
    assert turn_clock(301.0, 3600.0) is None
    assert turn_clock(299.5, 3600.0) == 299.5  # its last five minutes count down
    assert turn_clock(119.0, 120.0) == 119.0  # a host's two minutes: always shown
    assert turn_clock(None, 120.0) is None


def test_each_player_keeps_one_line_with_the_clock_whatever_the_name() -> None:
    state, _ = apply(new_match(get_variant("moderno"), 4), ChooseDealer(0))
    names = ["A" * 32, "Bea", "B" * 32, "Cy"]
    for width in (56, 76):
        for mover in range(4):
            text = players_text(state, names, 0, 59.0, mover, width).plain
            lines = text.split("\n")
            assert len(lines) == 4 and all(cell_len(x) <= width for x in lines), lines
            assert "⏱ 0:59" in lines[mover] and "(you)" in lines[0]
        short = ["Ann", "Bea", "Cy", "Dan"]  # packed: several to a line, each whole
        packed = players_text(state, short, 0, 59.0, 0, width, packed=True).plain.split("\n")
        assert len(packed) < 4 and all(cell_len(x) <= width for x in packed), packed
        assert "Ann (you) · 0 cards · 0 pts  ⏱ 0:59" in packed[0]
    title = table_title(state, names, "moderno", 40)
    assert cell_len(title) <= 40 and title.startswith("moderno · hand")


def test_the_keys_line_keeps_whole_keys_that_fit() -> None:
    keys = ("? help", "Enter: let an offer go / next hand", "/ chat", "q leave")
    assert keys_line(keys, 80) == " · ".join(keys)
    assert keys_line(keys, 56) == "? help · Enter: let an offer go / next hand · q leave"
    assert keys_line(keys, 20) == "? help · q leave"
    copy = (*keys[:-1], "Ctrl+Y copy the invite", keys[-1])
    assert keys_line(copy, 78) == "? help · Enter: let an offer go / next hand · Ctrl+Y copy the " \
        "invite · q leave"
