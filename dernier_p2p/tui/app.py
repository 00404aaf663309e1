"""The full-screen live table: a Textual app redrawn ten times a second from the seat's session.

Panels: the players (cards held, scores, whose turn with its countdown), the centre (top card,
named suit, pending draws, direction), a scrolling log in plain words, your hand with a key per
card and the playable ones marked, and the open prompt or out-of-turn offer with its countdown.
Keys become lines for the human agent (see :mod:`.link`), so the screen and ``--plain`` share
one interpretation of input. ``?`` shows the variant's rules and the keys; ``h``, when a move of
the seat's is asked, puts in the log what the strong bot would play and why (thought out in a
worker thread, as ``hint`` in ``--plain``: the table goes on meanwhile). ``/`` opens a line to
talk to the table: every key then goes into it until Enter sends it (Esc drops it); the line
comes back in every seat's log ("Bea: hello") once the host has sequenced it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import RichLog, Static

from dernier_p2p.cli.follow import names_of
from dernier_p2p.cli.help import help_lines
from dernier_p2p.cli.human import LEAVE_ASK, THINKING, leave_warning
from dernier_p2p.protocol.messages import MAX_CHAT
from dernier_p2p.rules import to_act
from dernier_p2p.tui.link import COPY_KEY, ScreenLink
from dernier_p2p.tui.view import (
    HAND_KEYS,
    HAND_TITLE,
    TurnClock,
    centre_text,
    flow,
    hand_text,
    offer_keys,
    offer_text,
    players_text,
    players_width,
    rows,
    table_title,
    top_chips,
    turn_clock,
)

WATCHING = "Watching: you have no seat. Each hand shows in the log once revealed."
KEYS = ("? help", "h hint", "Enter: go on", "/ chat", "q leave")
WATCH_KEYS = ("? help", "q stop watching")
COMMAND_KEYS = {"d", "p", "c", "y", "r", "g", "b", "k", "l", "n", "q"}
HINT_KEY = "h"
NO_HINT = "A hint is for a move of yours: press h when it is your turn or you may jump in."
STOP_WARNING = ("Stop here? The bots' match and its transcript stay unfinished. "
                "y = stop, anything else = stay > ")
LOG_TITLE = "Log · PgUp/PgDn scroll"
MIN_LOG = 5  # rows of the log that every layout keeps
MIN_CENTRE = 28  # columns the centre panel needs beside the players ("suit named: …")


def keys_line(keys: tuple[str, ...], width: int) -> str:
    """The keys that fit ``width`` columns, whole, in their order; the first and the last are
    always kept, then the copy key, then the others in order."""
    chosen = [keys[0], keys[-1]]
    for key in sorted(keys[1:-1], key=lambda k: COPY_KEY not in k):
        if len(" · ".join([*chosen, key])) <= width:
            chosen.append(key)
    return " · ".join(k for k in keys if k in chosen)


@dataclass(frozen=True)
class Shape:
    """How the panels share the screen: ``side``, the players and the table's centre side by
    side (else one panel: the players, then the top card, the rest in its title); ``packed``,
    several players to a line; ``keys_row``, the keys on a row of their own (else in the hand
    panel's lower border)."""

    side: bool
    packed: bool
    keys_row: bool


def choose_shape(
    height: int, side_ok: bool, top_side: int, top_lines: int, top_packed: int, rest: int,
) -> Shape:
    """The first layout, most spacious first, that leaves the log :data:`MIN_LOG` rows
    (``top_*``: the top panel's content rows in each shape; ``rest``: the rows of everything
    below the log but the keys row); the tightest one if none does."""
    choices = [(Shape(False, False, True), top_lines), (Shape(False, False, False), top_lines),
               (Shape(False, True, False), top_packed)]
    if side_ok:
        choices.insert(0, (Shape(True, False, True), top_side))
    for shape, top in choices:
        if height - (top + 2) - rest - shape.keys_row - 2 >= MIN_LOG:
            return shape
    return choices[-1][0]


class HelpScreen(ModalScreen[None]):
    """The variant's short rules and the keys; the arrows and PgUp/PgDn scroll it, any other
    key closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    #help-box { width: 90%; height: auto; max-height: 100%; border: round $accent;
                background: $panel; }
    #help { height: auto; padding: 0 1; }
    """
    SCROLL_KEYS = {"up": "scroll_up", "down": "scroll_down", "pageup": "scroll_page_up",
                   "pagedown": "scroll_page_down", "home": "scroll_home", "end": "scroll_end"}

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static("\n".join(["Help (↑↓ PgUp/PgDn scroll, any other key closes)", "",
                                    *self.lines]), id="help", markup=False)

    def on_key(self, event: events.Key) -> None:
        event.stop()
        action = self.SCROLL_KEYS.get(event.key)
        if action is not None:
            getattr(self.query_one("#help-box", VerticalScroll), f"action_{action}")()
            return
        self.dismiss()


class TableApp(App[None]):
    """The table as one seat sees it, live, laid out for the terminal's size (see
    :func:`choose_shape`)."""

    CSS = """
    #top { height: auto; }
    #players { width: 1fr; height: auto; border: round $primary; padding: 0 1; }
    #centre { width: 1fr; height: auto; border: round $primary; padding: 0 1; }
    #log { height: 1fr; border: round $secondary; padding: 0 1; scrollbar-gutter: stable; }
    #hand { height: auto; border: round $success; padding: 0 1; }
    #offer { height: auto; padding: 0 1; }
    #offers { height: auto; border: round $warning; padding: 0 1; }
    #keys { height: 1; color: $text-muted; padding: 0 1; }
    #say { height: 1; padding: 0 1; display: none; }
    """

    # Ctrl-C, the key a person presses to get out, asks to leave as "q" does (a second one,
    # while asked, leaves), instead of Textual's note to press Ctrl-Q; Ctrl-Y copies the
    # invite code (the terminal puts it on the clipboard: OSC 52)
    BINDINGS = [Binding("ctrl+c", "leave_asked", show=False, priority=True),
                Binding("ctrl+y", "copy_invite", show=False, priority=True)]

    def __init__(self, link: ScreenLink, header: str = "dernier") -> None:
        super().__init__()
        self.link = link
        self.header = header
        self.typed = ""
        self.turn_clock = TurnClock()
        self._logged = 0
        self._log_width = 0  # the log's width when its lines were wrapped
        self.leave: Callable[[], None] = self.exit  # how to end the run (no seat to resign)
        self.confirming = False
        self.saying: str | None = None  # the chat line being typed after "/", if any
        self.shape: tuple[Shape, int] | None = None  # the panels' shape now, see _arrange
        self._titles: dict[tuple[str, bool], str | None] = {}

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
            yield Static(id="keys", markup=False)

    def on_mount(self) -> None:
        self.query_one("#log", RichLog).border_title = Text(LOG_TITLE)
        self.query_one("#offers", Static).border_title = Text("Out of turn")
        self.set_interval(0.1, self.refresh_table)
        self.refresh_table()

    # ------------------------------------------------------------------ drawing
    def _set(self, wid: str, content: Text | str) -> Static:
        widget = self.query_one(wid, Static)
        widget.update(content)
        return widget

    def _title(self, wid: str, title: str | None, lower: bool = False) -> None:
        """A panel's title (``lower``: its lower border's), set only when it changes."""
        if self._titles.get((wid, lower), "") == title:
            return
        self._titles[(wid, lower)] = title
        widget = self.query_one(wid)
        if lower:
            widget.border_subtitle = None if title is None else Text(title)
        else:
            widget.border_title = None if title is None else Text(title)

    def _arrange(self, shape: Shape, players_width: int) -> None:
        """Show the panels as ``shape`` says (the players' panel ``players_width`` columns
        inside when beside the centre)."""
        if (shape, players_width) == self.shape:
            return
        self.shape = (shape, players_width)
        players = self.query_one("#players", Static)
        players.styles.width = players_width + 4 if shape.side else "1fr"
        self.query_one("#centre", Static).display = shape.side
        self.query_one("#keys", Static).display = shape.keys_row

    def refresh_table(self) -> None:
        """Redraw every panel from the seat's session, the pacer and the link."""
        link = self.link
        if link.finished:
            self.exit()
            return
        log = self.query_one("#log", RichLog)
        wraps_at = log.scrollable_content_region.width
        if wraps_at and wraps_at != self._log_width:  # resized: the log wrapped anew
            if self._log_width:
                log.clear()
                self._logged = 0
            self._log_width = wraps_at
        for line in link.log[self._logged :]:
            log.write(Text(line))
        self._logged = len(link.log)
        width, height = self.size.width or 80, self.size.height or 24
        inner = max(20, width - 4)  # inside a full-width panel (border and padding)
        seat = link.seat
        pacer = link.pacer
        offer_left = pacer.offer_left() if pacer is not None and link.prompt else 0.0
        held = bool(pacer is not None and pacer.hand_held)
        prompt = self._confirm_text() if self.confirming else link.prompt
        offers = self.query_one("#offers", Static)
        keys = WATCH_KEYS if link.watching else KEYS
        if link.invite:
            keys = (*keys[:-1], f"{COPY_KEY} copy the invite", keys[-1])
        shown_keys = keys_line(keys, width - 2)
        self._set("#keys", shown_keys)
        if seat is None or seat.session.state is None:
            offers.display = False
            self._set("#offer", offer_text(prompt, offer_left, held, self.typed,
                                           width=width - 2))
            self._set("#players", Text("Waiting for the table to fill…"))
            self._title("#players", None)
            self._title("#hand", None if link.watching else HAND_TITLE)
            self._arrange(Shape(False, False, True), 0)
            return
        session = seat.session
        state = session.state
        names = names_of(seat)
        try:
            moves = session.legal()
        except Exception:  # noqa: BLE001 - the screen never fails on a passing state
            moves = []
        chips = Text()
        my_turn = to_act(state) == seat.seat
        if link.prompt and not self.confirming and seat.seat is not None:
            chips = offer_keys(state, seat.seat, session.view, moves, names, offer_left, inner,
                               my_turn)
        offers.display = bool(chips.plain)
        offers.update(chips)
        if chips.plain and not my_turn:
            prompt = "Out of turn: a key above · Enter lets it go > "
        now = time.monotonic()
        turn_s = session.table_body.get("timers", {}).get("turn_ms", 0) / 1000
        self.turn_clock.update(seat.records, session.waiting_on(), now)
        mover = to_act(state)
        left = None
        if turn_s and mover is not None:
            left = turn_clock(self.turn_clock.left(mover, turn_s, now), turn_s)
        mine = left if mover == seat.seat and seat.seat is not None else None
        offer = offer_text(prompt, offer_left, held, self.typed, mine, width - 2)
        self._set("#offer", offer)
        hand = (Text(WATCHING) if seat.seat is None
                else hand_text(state, seat.seat, session.view, moves, inner))
        self._set("#hand", hand)
        self._title("#hand", None if seat.seat is None else HAND_TITLE)

        # the shape that leaves the log its rows
        need = players_width(state, names, seat.seat)
        centre_w = width - (need + 4) - 4
        centre = centre_text(state, names, state.rules.name, max(MIN_CENTRE, centre_w))
        lines = players_text(state, names, seat.seat, left, mover, inner)
        packed = players_text(state, names, seat.seat, left, mover, inner, packed=True)
        top = flow(top_chips(state), inner, sep=" · ")
        rest = (rows(hand) + 2 + (rows(chips) + 2 if chips.plain else 0) + rows(offer)
                + (self.saying is not None))
        shape = choose_shape(height, centre_w >= MIN_CENTRE, max(state.players, rows(centre)),
                             state.players + rows(top), rows(packed) + rows(top), rest)
        self._arrange(shape, need)
        if shape.side:
            self._set("#players", players_text(state, names, seat.seat, left, mover, need))
            self._set("#centre", centre)
            self._title("#players", None)
        else:
            self._set("#players", Text("\n").join([packed if shape.packed else lines, top]))
            self._title("#players", table_title(state, names, state.rules.name, width - 8))
        self._title("#hand", None if shape.keys_row else keys_line(keys, width - 8), lower=True)

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

    def _hint_asked(self) -> None:
        """``h``: a hint when a move of this seat's is asked (its turn, or an out-of-turn offer
        it may take), else a word in the log saying when to ask."""
        link = self.link
        seat = link.seat
        if link.watching:
            link.log.append("A watcher has no seat: there is no move to hint at.")
            return
        if seat is None or seat.seat is None or not link.prompt:
            if not link.notices or link.notices[-1] != THINKING:  # not while one is thought out
                link.log.append(NO_HINT)
            return
        state = seat.session.state
        held = bool(link.pacer is not None and link.pacer.hand_held)
        try:
            moves = seat.session.legal() if state is not None else []
        except Exception:  # noqa: BLE001 - a passing state: no hint now
            moves = []
        if held or not moves or link.prompt.startswith(LEAVE_ASK):
            link.log.append(NO_HINT)
            return
        self._send("hint")

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

    def action_copy_invite(self) -> None:
        """Ctrl-Y: the host's join command to the clipboard, by the terminal (OSC 52)."""
        if not self.link.invite:
            self.link.log.append("Nothing to copy: the host's screen copies its invite code.")
        else:
            self.copy_to_clipboard(self.link.invite)
            self.link.log.append(
                f"Copied: {self.link.invite[:24]}… (if your terminal does not take it, copy the "
                "lines of the code above: their pieces join, and `dernier join` alone asks for "
                "them)")
        self.refresh_table()

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
        elif key == HINT_KEY:
            self._hint_asked()
        elif key and key in HAND_KEYS:
            number = HAND_KEYS.index(key) + 1
            self._send(f"{number}!" if self.typed == "!" else str(number))
        elif key in COMMAND_KEYS:
            self._send(key)
        else:
            return
        event.stop()
        self.refresh_table()
