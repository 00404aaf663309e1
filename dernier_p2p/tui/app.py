"""The full-screen live table: a Textual app redrawn ten times a second from the seat's session.

Panels: the players (cards held, scores, whose turn with its countdown), the centre (top card,
named suit, pending draws, direction), a scrolling log in plain words, your hand with a key per
card and the playable ones marked, and the open prompt or out-of-turn offer with its countdown.
Keys become lines for the human agent (see :mod:`.link`), so the screen and ``--plain`` share
one interpretation of input. ``?`` shows the variant's rules and the keys. ``/`` opens a line to
talk to the table: every key then goes into it until Enter sends it (Esc drops it); the line
comes back in every seat's log ("Bea: hello") once the host has sequenced it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import RichLog, Static

from dernier_p2p.cli.follow import names_of
from dernier_p2p.cli.help import help_lines
from dernier_p2p.cli.human import LEAVE_ASK, leave_warning
from dernier_p2p.protocol.messages import MAX_CHAT
from dernier_p2p.rules import to_act
from dernier_p2p.tui.link import ScreenLink
from dernier_p2p.tui.view import (
    HAND_KEYS,
    TurnClock,
    centre_text,
    hand_text,
    offer_keys,
    offer_text,
    players_text,
)

WATCHING = "Watching: you have no seat. Each hand shows in the log once revealed."
WATCH_KEYS = "? help · q stop watching"
COMMAND_KEYS = {"d", "p", "c", "y", "r", "g", "b", "k", "l", "n", "q"}
STOP_WARNING = ("Stop here? The bots' match and its transcript stay unfinished. "
                "y = stop, anything else = stay > ")


class HelpScreen(ModalScreen[None]):
    """The variant's short rules and the keys; any key closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    #help { width: 90%; height: auto; border: round $accent; padding: 1 2; background: $panel; }
    """

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines

    def compose(self) -> ComposeResult:
        yield Static("\n".join(["Help (any key closes)", "", *self.lines]), id="help")

    def on_key(self, event: events.Key) -> None:
        event.stop()
        self.dismiss()


class TableApp(App[None]):
    """The table as one seat sees it, live."""

    CSS = """
    #top { height: auto; }
    #players { width: 44; height: auto; border: round $primary; padding: 0 1; }
    #centre { width: 1fr; height: auto; border: round $primary; padding: 0 1; }
    #log { height: 1fr; border: round $secondary; padding: 0 1; scrollbar-gutter: stable; }
    #hand { height: auto; border: round $success; padding: 0 1; }
    #offer { height: auto; padding: 0 1; }
    #offers { height: auto; border: round $warning; padding: 0 1; }
    #keys { height: 1; color: $text-muted; padding: 0 1; }
    #say { height: 1; padding: 0 1; display: none; }
    """

    # Ctrl-C, the key a person presses to get out, asks to leave as "q" does (a second one,
    # while asked, leaves), instead of Textual's note to press Ctrl-Q
    BINDINGS = [Binding("ctrl+c", "leave_asked", show=False, priority=True)]

    def __init__(self, link: ScreenLink, header: str = "dernier") -> None:
        super().__init__()
        self.link = link
        self.header = header
        self.typed = ""
        self.turn_clock = TurnClock()
        self._logged = 0
        self.leave: Callable[[], None] = self.exit  # how to end the run (no seat to resign)
        self.confirming = False
        self.saying: str | None = None  # the chat line being typed after "/", if any

    def compose(self) -> ComposeResult:
        with Vertical():
            with Horizontal(id="top"):
                yield Static(id="players")
                yield Static(id="centre")
            yield RichLog(id="log", wrap=True, markup=False, min_width=20)  # wrap to the panel
            yield Static(id="say", markup=False)
            yield Static(id="hand")
            yield Static(id="offers")
            yield Static(id="offer")
            yield Static("? help · Enter: let an offer go / next hand · q leave", id="keys")

    def on_mount(self) -> None:
        self.set_interval(0.1, self.refresh_table)
        self.refresh_table()

    # ------------------------------------------------------------------ drawing
    def refresh_table(self) -> None:
        """Redraw every panel from the seat's session, the pacer and the link."""
        link = self.link
        if link.finished:
            self.exit()
            return
        log = self.query_one("#log", RichLog)
        for line in link.log[self._logged :]:
            log.write(Text(line))
        self._logged = len(link.log)
        seat = link.seat
        pacer = link.pacer
        offer_left = pacer.offer_left() if pacer is not None and link.prompt else 0.0
        held = bool(pacer is not None and pacer.hand_held)
        prompt = self._confirm_text() if self.confirming else link.prompt
        offers = self.query_one("#offers", Static)
        if seat is None or seat.session.state is None:
            offers.display = False
            self.query_one("#offer", Static).update(offer_text(prompt, offer_left, held,
                                                               self.typed))
            self.query_one("#centre", Static).update(Text("Waiting for the table to fill…"))
            return
        session = seat.session
        state = session.state
        names = names_of(seat)
        try:
            moves = session.legal()
        except Exception:  # noqa: BLE001 - the screen never fails on a passing state
            moves = []
        keys = Text()
        my_turn = to_act(state) == seat.seat
        if link.prompt and not self.confirming and seat.seat is not None:
            keys = offer_keys(state, seat.seat, session.view, moves, names, offer_left, my_turn)
        offers.display = bool(keys.plain)
        offers.update(keys)
        if keys.plain and not my_turn:
            prompt = "Out of turn: press a key above, or Enter to let it go > "
        now = time.monotonic()
        turn_s = session.table_body.get("timers", {}).get("turn_ms", 0) / 1000
        self.turn_clock.update(seat.records, session.waiting_on(), now)
        mover = to_act(state)
        left = None
        if turn_s and mover is not None:
            left = self.turn_clock.left(mover, turn_s, now)
        mine = left if mover == seat.seat and seat.seat is not None else None
        self.query_one("#offer", Static).update(offer_text(prompt, offer_left, held,
                                                           self.typed, mine))
        self.query_one("#players", Static).update(
            players_text(state, names, seat.seat, left, mover))
        self.query_one("#centre", Static).update(centre_text(state, names, state.rules.name))
        hand = self.query_one("#hand", Static)
        if seat.seat is None:  # a watcher
            hand.update(Text(WATCHING))
            self.query_one("#keys", Static).update(WATCH_KEYS)
            return
        width = max(20, hand.size.width - 2) if hand.size.width else 76
        hand.update(hand_text(state, seat.seat, session.view, moves, width))

    def _show_say(self) -> None:
        say = self.query_one("#say", Static)
        say.display = self.saying is not None
        shown = "" if self.saying is None else f"Say: {self.saying}▏  (Enter sends, Esc drops)"
        say.update(Text(shown))

    def screen_text(self) -> str:
        """Every panel's text as shown (for tests and captures), brought up to date first."""
        self.refresh_table()
        parts = []
        for wid in ("#players", "#centre", "#hand", "#offers", "#offer", "#say"):
            widget = self.query_one(wid, Static)
            content: Any = widget.render()
            parts.append(content.plain if isinstance(content, Text) else str(content))
        log = self.query_one("#log", RichLog)
        parts.append("\n".join(strip.text for strip in log.lines))
        return "\n".join(parts)

    # ------------------------------------------------------------------ keys
    def _send(self, line: str) -> None:
        self.typed = ""
        self.link.prompt = ""
        self.link.lines.feed(line)
        self.refresh_table()

    def _say_key(self, event: events.Key) -> None:
        """A key while the chat line is open."""
        assert self.saying is not None
        if event.key == "enter":
            text, self.saying = self.saying, None
            why = self.link.say(text)
            if why is not None:
                self.link.notices.append(why)
                self.link.log.append(why)
        elif event.key == "escape":
            self.saying = None
        elif event.key == "backspace":
            self.saying = self.saying[:-1]
        elif event.character and event.character.isprintable():
            self.saying = (self.saying + event.character)[:MAX_CHAT]
        self._show_say()

    def _confirm_text(self) -> str:
        """The question "q" asks when no prompt is open."""
        if self.link.left:
            return STOP_WARNING
        seat = self.link.seat
        return leave_warning(None if seat is None else seat.session.state, self.link.bots)

    def _leave_table(self) -> None:
        """Leave once confirmed: the seat resigns (see :meth:`ScreenLink.leave`); with no seat
        to resign (not seated yet, or left already) the run ends."""
        if not self.link.leave():
            self.leave()

    def action_leave_asked(self) -> None:
        """Ctrl-C: leave as "q" does; once asked, a second Ctrl-C leaves."""
        self.saying = None
        self._show_say()
        if self.link.watching:
            self.leave()
        elif self.confirming:
            self.confirming = False
            self._leave_table()
        elif self.link.prompt:
            self._send("y" if self.link.prompt.startswith(LEAVE_ASK) else "q")
        else:
            self.confirming = True
        self.refresh_table()

    def on_key(self, event: events.Key) -> None:
        key = event.character or ""
        if self.saying is not None:  # every key goes into the chat line
            self._say_key(event)
            event.stop()
            return
        if key == "/" and not self.confirming:
            self.saying = ""
            self._show_say()
            event.stop()
            return
        if self.confirming:  # "q" with no prompt open: the screen asks itself
            self.confirming = False
            if key == "y":
                self._leave_table()
        elif key == "q" and self.link.watching:
            self.leave()  # a watcher gives up nothing
        elif key == "q" and not self.link.prompt:
            self.confirming = True
        elif event.key == "enter":
            self._send(self.typed)
        elif event.key == "escape":
            self.typed = ""
        elif key == "?":
            seat = self.link.seat
            variant = self.header if seat is None else seat.session.rules.name
            self.push_screen(HelpScreen(help_lines(variant, screen=True)))
        elif key == "!":
            self.typed = "!"  # then a card key plays it with the declaration; Enter declares
        elif key and key in HAND_KEYS:
            number = HAND_KEYS.index(key) + 1
            self._send(f"{number}!" if self.typed == "!" else str(number))
        elif key in COMMAND_KEYS:
            self._send(key)
        else:
            return
        event.stop()
        self.refresh_table()
