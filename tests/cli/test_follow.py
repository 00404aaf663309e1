"""What a player reads about drops, returns and a new host (cli/follow.py)."""

from __future__ import annotations

from dernier_p2p.cli.follow import countdown_line, presence_line, session_notice
from dernier_p2p.net.seat import Presence
from dernier_p2p.protocol.session import SessionEvent

NAMES = ["Ann", "Bea", "Cid"]


def test_a_drop_and_a_return_of_another_seat() -> None:
    drop = Presence(1, "dropped", 60_000, 100.0)
    assert presence_line(drop, NAMES, 0) == "Bea lost connection — waiting 60 s (reconnecting…)"
    assert presence_line(Presence(1, "back", 0, 130.0), NAMES, 0) == "Bea is back."


def test_this_seat_losing_the_host_is_told_in_the_second_person() -> None:
    drop = Presence(2, "dropped", 15_000, 0.0)
    assert presence_line(drop, NAMES, 2) == (
        "Connection to the host lost — reconnecting (up to 15 s)…"
    )
    assert presence_line(Presence(2, "back", 0, 3.0), NAMES, 2) == "Reconnected to the table."


def test_the_countdown_counts_down_and_stops_at_zero() -> None:
    drop = Presence(1, "dropped", 60_000, 100.0)
    assert countdown_line(drop, NAMES, 115.0) == "Bea: 45 s left to reconnect…"
    assert countdown_line(drop, NAMES, 160.0) is None


def test_a_new_host_is_worded_for_everyone_and_for_itself() -> None:
    event = SessionEvent("host-change", 0, "from seat 2")
    assert session_notice(event, NAMES, 1) == "Ann hosts the table from now on."
    assert session_notice(event, NAMES, 0) == "You host the table from now on."
