"""The human at the terminal as a seat's agent: shows the table, reads a choice, returns a move.

:func:`interpret` turns one typed line into a move (or a :class:`Choice` still to make: a suit
to name, a player to swap hands with), refusing anything not legal with a short
:class:`Refused` message. :class:`HumanAgent` is the network agent (see
:mod:`dernier_p2p.net.agent`): asked while the seat may act, it shows the table and prompts;
wrong input is refused and changes nothing. Out of turn (a jump-in, a late declaration, a
catch) it shows a one-line offer; a line typed then is taken as the move, and the offer is
dropped as soon as the table moves on. A late declaration open while the seat is in turn (after
a card that gave it the turn back) is offered the same way beside the turn's prompt. Lines
come from a :class:`LineReader` (a thread reading standard input), so the prompt never blocks
the table's networking.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import click
import trio

from dernier_p2p.bots.tracker import Tracker
from dernier_p2p.cli.help import help_lines
from dernier_p2p.cli.pacing import Pacer
from dernier_p2p.cli.render import card_text, phrase_lines, render_table, suit_text
from dernier_p2p.cli.words import RULE_WORDS, play_refusal, rule_words
from dernier_p2p.net.agent import Resign
from dernier_p2p.protocol.messages import clean_chat
from dernier_p2p.rules import (
    Card,
    Catch,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    Move,
    NameSuit,
    Pass,
    Play,
    State,
    Suit,
    leave_ends_match,
    legal_moves,
    to_act,
)

SUIT_KEYS = "yrgb"
HELP_WORDS = ("?", "h", "help")
HINT_WORDS = ("hint",)
THINKING = "Thinking…"
"""What a seat's log shows while a hint is thought out."""
WARN_S = 10.0  # a warning this long before the turn's time runs out
LEAVE_ASK = "Leave the table?"
"""How the question to leave begins (see :func:`leave_warning`)."""


def leave_warning(state: State | None, bots: bool = False) -> str:
    """The question before leaving, saying what the resignation does at this table: where the
    rules end the match on a leave (``dernier`` at any number of seats, as its seed says; every
    variant at two players in play or before the first dealer is chosen) the match ends; else
    the others play on (``bots``: the other seats are bots in this process, which finish the
    match)."""
    if state is None or leave_ends_match(state):
        what = "You resign: the match ends here and you rank last."
    elif bots:
        what = "You resign and rank last; the bots finish the match without you."
    else:
        what = "You resign and rank last; the others play on without you."
    return f"{LEAVE_ASK} {what} y = leave, anything else = stay > "


class QuitGame(Resign):
    """The human asked to leave the table (``q``, or the end of input): asked for a move, the
    seat resigns first."""


class Refused(ValueError):
    """A line that is not a legal move now; the message says why."""


@dataclass(frozen=True)
class Choice:
    """A play that needs one more answer: ``prompt`` and the move for each accepted answer."""

    prompt: str
    answers: Mapping[str, Move]
    error: str


def options(state: State, moves: Sequence[Move], in_turn: bool) -> str:
    """The prompt listing what may be typed now."""
    parts: list[str] = []
    if any(isinstance(m, Play) for m in moves):
        verb = "card number to play" if in_turn else "card number to jump in"
        parts.append(f"{verb} (add ! to declare)")
    for kind, text in (
        (Draw, "d = take the pending cards" if state.pending_draw else "d = draw"),
        (Pass, "p = pass"),
        (Declare, "! = declare DERNIER/SOLO"),
        (Catch, "c = catch a player who did not declare"),
    ):
        if any(isinstance(m, kind) for m in moves):
            parts.append(text)
    if any(isinstance(m, NameSuit) for m in moves):
        parts.append("name the suit: y/r/g/b")
    sizes = sorted(m.size for m in moves if isinstance(m, ChooseHandSize))
    if sizes:
        parts.append(f"cards each: {sizes[0]}-{sizes[-1]}")
    if any(isinstance(m, Cut) for m in moves):
        parts.append("k = keep the cut card, l = leave it")
    if not in_turn:
        parts.append("Enter = let play go on")
    parts.append("q = leave")
    return " · ".join(parts) + " > "


def _pick(moves: Sequence[Move], kind: type, test: Callable[[Any], bool], error: str) -> Move:
    for m in moves:
        if isinstance(m, kind) and test(m):
            return m
    raise Refused(error)


def interpret(
    line: str,
    state: State,
    seat: int,
    view: Mapping[int, Card],
    moves: Sequence[Move],
    names: Sequence[str],
    colour: bool = False,
) -> Move | Choice:
    """The move a typed ``line`` means (``moves``: the seat's legal moves now); raises
    :class:`Refused` with a short reason for anything else. ``q`` is not handled here."""
    rules = state.rules
    line = line.strip().lower()
    kinds = {type(m) for m in moves}
    if NameSuit in kinds and line[:1] in tuple(SUIT_KEYS) and len(line) == 1:
        suit = Suit(SUIT_KEYS.index(line))
        return _pick(moves, NameSuit, lambda m: m.suit == suit, "not a suit you may name")
    if ChooseHandSize in kinds and line.isdigit():
        size = int(line)
        return _pick(moves, ChooseHandSize, lambda m: m.size == size, "not a size you may pick")
    if Cut in kinds and line in ("k", "l"):
        keep = line == "k"
        return _pick(moves, Cut, lambda m: m.keep == keep, "you may not keep that card")
    if line in ("d", "draw"):
        return _pick(moves, Draw, lambda m: True, "you cannot draw now")
    if line in ("p", "pass"):
        return _pick(moves, Pass, lambda m: True, "you cannot pass now (draw first)")
    if line == "!":
        return _pick(moves, Declare, lambda m: True, "nothing to declare now")
    if line in ("c", "catch"):
        return _pick(moves, Catch, lambda m: True, "nobody to catch")
    if NameSuit in kinds:
        raise Refused("name the suit first: y/r/g/b")
    if Cut in kinds:
        raise Refused("keep (k) or leave (l) the cut card first")
    declare = line.endswith("!")
    number = line.rstrip("!").strip()
    if not number.isdigit():
        raise Refused("type a card number or one of the letters shown (? = help)")
    hand = state.hands[seat]
    index = int(number) - 1
    if not 0 <= index < len(hand):
        raise Refused(f"pick a card from 1 to {len(hand)}" if hand else "you hold no card")
    slot = hand[index]
    plays = [m for m in moves if isinstance(m, Play) and m.slot == slot]
    if not plays:
        face = view.get(slot)
        if face is None:
            raise Refused("that card cannot be played now")
        why = play_refusal(state, seat, slot, face)
        raise Refused(f"{card_text(face, rules, colour)} cannot be played now: {why}")
    if any(m.declare == declare for m in plays):
        plays = [m for m in plays if m.declare == declare]
    suits = {m.suit for m in plays}
    if len(suits) > 1:
        answers: dict[str, Move] = {}
        shown = []
        for m in plays:
            if m.suit is None:
                answers.setdefault("", m)
            elif SUIT_KEYS[m.suit] not in answers:
                answers[SUIT_KEYS[m.suit]] = m
                shown.append(f"{SUIT_KEYS[m.suit]} {suit_text(m.suit, rules, colour, True)}")
        extra = " (Enter: same suit)" if "" in answers else ""
        return Choice(f"Name a suit: {', '.join(shown)}{extra} > ", answers,
                      f"no such suit: type one of {', '.join(sorted(a for a in answers if a))}")
    targets = sorted({m.target for m in plays if m.target is not None})
    if len(targets) > 1:
        answers = {str(t + 1): next(m for m in plays if m.target == t) for t in targets}
        shown = [f"{t + 1} = {names[t]}" for t in targets]
        return Choice(f"Swap hands with: {', '.join(shown)} > ", answers,
                      f"no such player: type one of {', '.join(answers)}")
    return plays[0]


class LineReader:
    """Lines of standard input, read by a daemon thread into a trio channel (None at the end).

    Start it inside ``trio.run``; lines typed while nobody asks wait for the next prompt."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream
        self._send, self._receive = trio.open_memory_channel[str | None](1000)
        self._started = False
        self.ended = False

    @property
    def interactive(self) -> bool:
        """Whether a person types the lines (standard input is a terminal)."""
        return self.stream is None and sys.stdin.isatty()

    def drain(self) -> int:
        """Drop the lines typed before now (type-ahead); how many were dropped."""
        dropped = 0
        while True:
            try:
                line = self._receive.receive_nowait()
            except trio.WouldBlock:
                return dropped
            if line is None:
                self.ended = True
                return dropped
            dropped += 1

    def _start(self) -> None:
        token = trio.lowlevel.current_trio_token()
        stream = self.stream if self.stream is not None else sys.stdin

        def run() -> None:
            while True:
                try:
                    line = stream.readline()
                except (OSError, ValueError):
                    line = ""
                value = None if not line else line.rstrip("\r\n")
                try:
                    trio.from_thread.run_sync(self._send.send_nowait, value, trio_token=token)
                except (trio.RunFinishedError, trio.WouldBlock, trio.ClosedResourceError):
                    return
                if value is None:
                    return

        threading.Thread(target=run, name="dernier-stdin", daemon=True).start()
        self._started = True

    async def receive(self, stale: Callable[[], bool] | None = None) -> str | None:
        """The next line (None at the end of input). With ``stale``, give up and raise
        :class:`Stale` as soon as ``stale()`` is true (checked every 50 ms)."""
        if self.ended:
            return None
        if not self._started:
            self._start()
        while True:
            with trio.move_on_after(0.05 if stale is not None else float("inf")):
                line = await self._receive.receive()
                if line is None:
                    self.ended = True
                return line
            if stale is not None and stale():
                raise Stale


class Stale(Exception):
    """The table moved on while a prompt was open."""


def fit_terminal(prompt: str) -> str:
    """``prompt`` broken into lines that fit the terminal, between its phrases (see
    :func:`~.render.phrase_lines`), not where the terminal would cut a word."""
    width = shutil.get_terminal_size((80, 24)).columns - 1
    fitted = "\n".join(phrase_lines(prompt, width))
    return fitted + " " if prompt.endswith(" ") and not fitted.endswith(" ") else fitted


class HumanAgent:
    """The network agent of a human seat (see the module docstring).

    ``current()`` gives the seat's latest state as the session holds it, so an open prompt can
    tell when the table has moved on; ``names`` are the players' names; ``flush()`` prints the
    log lines not shown yet (called before the table is shown)."""

    def __init__(
        self,
        names: Sequence[str],
        log: Sequence[str],
        lines: LineReader,
        current: Callable[[], State | None],
        echo: Callable[..., None] = click.echo,
        colour: bool = True,
        flush: Callable[[], None] | None = None,
        pacer: Pacer | None = None,
    ) -> None:
        self.flush = flush or (lambda: None)
        self.pacer = pacer
        self.open_prompt = ""  # the prompt waiting for a line at the terminal
        self.turn_s: float | None = None  # the table's turn time (warned 10 s before its end)
        self._turn: tuple[object, ...] = ()
        self._turn_start = 0.0
        self.show_table = True
        self.names = list(names)
        self.log = log
        self.lines = lines
        self.current = current
        self.echo = echo
        self.colour = colour
        self._last_offer: str | None = None
        self.say: Callable[[str], None] | None = None  # sends a chat line (once seated)
        self.bots = False  # the other seats are bots in this process (``dernier play``)
        self.gone = False  # the seat has left: no prompt opens again
        self.fit: Callable[[str], str] = lambda prompt: prompt  # a prompt laid out to show
        self.tracker = Tracker(plays=True)  # what the seat saw the others do, for hints

    def chat(self, line: str) -> None:
        """A ``/text`` line typed at a prompt: ``text`` goes to the table as a chat line (shown
        in the log when its record comes back); the prompt stays open."""
        text = clean_chat(line.strip()[1:])
        if not text:
            self.echo("  Type / and your words to talk to the table, e.g. /good luck")
        elif self.say is None:
            self.echo("  The table has not started: nothing can be said yet.")
        else:
            self.say(text)

    async def _ask(self, prompt: str, state: State, until: float | None = None) -> str:
        if self.lines.interactive:
            self.lines.drain()  # what was typed before this prompt is not an answer to it
        if prompt:
            prompt = self.fit(prompt)
            self.echo(prompt, nl=False)
            self.open_prompt = prompt
        pacer = self.pacer
        warn_at = None
        at_turn = bool(self._turn) and self._turn[:3] == (state.hand_number, state.turn,
                                                          state.turn)
        if self.turn_s is not None and until is None and at_turn:
            warn_at = self._turn_start + self.turn_s - WARN_S

        def stale() -> bool:
            nonlocal warn_at
            if self.gone:
                return True
            if self.current() is not state or (pacer is not None and pacer.hand_held):
                return True
            now = trio.current_time()
            if warn_at is not None and now >= warn_at:
                warn_at = None
                self.echo("")
                self.echo(f"  {WARN_S:.0f} seconds left to move, or the table times you out.")
                if self.open_prompt:
                    self.echo(self.open_prompt, nl=False)
            return until is not None and now >= until

        try:
            line = await self.lines.receive(stale)
        except Stale:
            if prompt:
                self.echo("")
            raise
        finally:
            self.open_prompt = ""
        if line is None:
            self.echo("")
            raise QuitGame
        if not self.lines.interactive:
            self.echo(line)  # show scripted input in the transcript of the session
        return line

    def refused(self, code: str, detail: str) -> None:
        """A move this seat chose was refused (by the session or by the host): say so; the
        prompt comes back when the seat is asked again."""
        self._last_offer = None  # show the offer again, if out of turn
        rule = detail[1:].split("]", 1)[0] if detail.startswith("[") and "]" in detail else ""
        if rule:  # the engine's rule id: say it in words
            detail = rule_words(rule)
        elif code in RULE_WORDS:  # the session's own: a move the table has moved past
            detail = RULE_WORDS[code]
        self.echo(f"  Your move was refused ({code}): {detail}")

    async def confirm_leave(self, state: State) -> None:
        """Ask before leaving; raise :class:`QuitGame` unless the answer keeps the seat (the end
        of input leaves)."""
        try:
            answer = await self._ask(leave_warning(state, self.bots), state)
        except Stale:
            answer = ""
        except QuitGame:
            raise
        if answer.strip().lower() in ("y", "yes", "q"):
            raise QuitGame

    async def hand_gate(self) -> None:
        """Run beside the table: after each hand (see :class:`~.pacing.Pacer`) wait for Enter
        before the bots play on; ``q`` leaves (after the warning)."""
        pacer = self.pacer
        assert pacer is not None
        while True:
            await pacer.hand_ended()
            self.flush()
            if self.lines.interactive:
                self.lines.drain()
            self.echo("  Press Enter for the next hand (? = help, q = leave) > ", nl=False)
            line = await self.lines.receive()
            if line is None:
                self.echo("")
                raise QuitGame
            if line.strip().startswith("/"):
                self.chat(line)
                continue
            text = line.strip().lower()
            state = self.current()
            if text in ("q", "quit") and state is not None:
                await self.confirm_leave(state)
                continue
            if text in HELP_WORDS and state is not None:
                self.show_help(state)
                continue
            pacer.release_hand()

    def show_help(self, state: State) -> None:
        """The variant's rules in short and the keys."""
        for line in help_lines(state.rules.name):
            self.echo(f"  {line}")

    async def show_hint(self, state: State, seat: int, view: Mapping[int, Card]) -> None:
        """What the search bot would do in this seat now, and why (it sees only this seat's
        view); thought out in a worker thread, so the table goes on meanwhile."""
        from dernier_p2p.bots.hint import hint

        self.echo(f"  {THINKING}")
        tracker = self.tracker.copy()  # (the thread reads its own)
        words = await trio.to_thread.run_sync(
            lambda: hint(state, seat, dict(view), self.names or None, tracker=tracker)
        )
        if not self.show_table:  # the full-screen table: one log line, wrapped at the log's width
            self.echo(f"  Hint: {words}")
            return
        width = max(40, shutil.get_terminal_size((80, 24)).columns) - 2
        for line in textwrap.wrap(f"Hint: {words}", width):
            self.echo(f"  {line}")

    async def __call__(self, state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
        if self.pacer is not None:
            await self.pacer.clear_hand()
        if self.gone:
            return None
        self.tracker.observe(state, seat)
        try:
            return await self._offer(state, seat, view)
        finally:
            if self.pacer is not None:
                self.pacer.close_offer()

    def _late_offer(self, state: State) -> None:
        """In turn with a late declaration open (a card that gave this seat the turn back): it
        is offered as out of turn, for the table's window, the other seats held meanwhile (the
        full-screen table shows it in its box with the countdown); the turn's prompt stays."""
        word = "SOLO!" if state.rules.name == "moderno" else "DERNIER!"
        line = f"  (late declaration) you have not declared: ! = declare {word}"
        if self.pacer is not None:
            self.pacer.open_offer(state)
            line = f"{line} ({self.pacer.offer_left():.0f} s)"
        if self.show_table:
            self.echo(line)

    async def _offer(self, state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
        moves = legal_moves(state, seat, view)
        if not moves:
            return None
        in_turn = to_act(state) == seat
        if not in_turn and not any(isinstance(m, Play | Catch | Declare) for m in moves):
            return None
        self.flush()  # the log first, then the table
        until = None
        if not in_turn:
            offer = options(state, moves, in_turn=False)
            hand = state.hands[seat]
            slots = sorted({m.slot for m in moves if isinstance(m, Play)}, key=hand.index)
            if slots:
                cards = ", ".join(
                    f"{hand.index(p) + 1} = {card_text(view[p], state.rules, self.colour)}"
                    for p in slots
                )
                offer = f"you may jump in with {cards} · {offer}"
            if self.pacer is not None:
                until = self.pacer.open_offer(state)
                if self.show_table:  # the full-screen table shows a live countdown instead
                    offer = f"{offer[:-2]}({self.pacer.offer_left():.0f} s) > "
            # The offer is shown once; while it stands, a line typed is still taken.
            prompt = "" if offer == self._last_offer else f"  (out of turn) {offer}"
            self._last_offer = offer
        else:
            self._last_offer = None
            # the table's clock restarts when the seat authors a record while awaited (a draw):
            # so does the warning's
            turn = (state.hand_number, state.turn, seat, state.drawn)
            if turn != self._turn:
                self._turn, self._turn_start = turn, trio.current_time()
            if self.show_table:  # the full-screen table shows it all the time instead
                self.echo("")
                playable = {m.slot for m in moves if isinstance(m, Play)}
                width = max(40, shutil.get_terminal_size((80, 24)).columns)
                self.echo(render_table(state, seat, view, self.names, self.log, self.colour,
                                       playable, width))
            prompt = options(state, moves, in_turn=True)
            if any(isinstance(m, Declare) for m in moves):
                self._late_offer(state)
        while True:
            try:
                line = await self._ask(prompt, state, until)
            except Stale:
                return None  # asked again with the new state
            if line.strip().startswith("/"):
                self.chat(line)
                prompt = options(state, moves, in_turn)
                continue
            text = line.strip().lower()
            if text in ("q", "quit"):
                try:
                    await self.confirm_leave(state)
                except Stale:
                    return None
                prompt = options(state, moves, in_turn)
                continue
            if text in HELP_WORDS:
                self.show_help(state)
                prompt = options(state, moves, in_turn)
                continue
            if text in HINT_WORDS:
                await self.show_hint(state, seat, view)
                if self.current() is not state:
                    return None  # the table moved on while it thought: asked again
                prompt = options(state, moves, in_turn)
                continue
            if text == "" and not in_turn:
                return None
            try:
                move = interpret(text, state, seat, view, moves, self.names, self.colour)
                while isinstance(move, Choice):
                    answer = (await self._ask(move.prompt, state, until)).strip().lower()
                    if answer in ("q", "quit"):
                        await self.confirm_leave(state)
                        continue
                    if answer in HINT_WORDS:  # the question stays open
                        await self.show_hint(state, seat, view)
                        if self.current() is not state:
                            return None
                        continue
                    if answer not in move.answers:
                        try:  # another move typed instead (a card number, d): take it
                            move = interpret(answer, state, seat, view, moves, self.names,
                                             self.colour)
                        except Refused:
                            self.echo(f"  {move.error}")  # ask again: the play still stands
                        continue
                    move = move.answers[answer]
            except Refused as exc:
                self.echo(f"  {exc}")
                prompt = options(state, moves, in_turn)
                continue
            except Stale:
                return None
            return move
