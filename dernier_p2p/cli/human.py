"""The human at the terminal as a seat's agent: shows the table, reads a choice, returns a move.

:func:`interpret` turns one typed line into a move (or a :class:`Choice` still to make: a suit
to name, a player to swap hands with), refusing anything not legal with a short
:class:`Refused` message. :class:`HumanAgent` is the network agent (see
:mod:`dernier_p2p.net.agent`): asked while the seat may act, it shows the table and prompts;
wrong input is refused and changes nothing. Out of turn (a jump-in, a late declaration, a
catch) it shows a one-line offer; a line typed then is taken as the move, and the offer is
dropped as soon as the table moves on. Lines come from a :class:`LineReader` (a thread reading
standard input), so the prompt never blocks the table's networking.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import click
import trio

from dernier_p2p.cli.render import card_text, render_table, suit_text
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
    legal_moves,
    to_act,
)

SUIT_KEYS = "yrgb"


class QuitGame(Exception):
    """The human asked to leave the table (``q``, or the end of input)."""


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
        raise Refused("type a card number or one of the letters shown")
    hand = state.hands[seat]
    index = int(number) - 1
    if not 0 <= index < len(hand):
        raise Refused(f"pick a card from 1 to {len(hand)}" if hand else "you hold no card")
    slot = hand[index]
    plays = [m for m in moves if isinstance(m, Play) and m.slot == slot]
    if not plays:
        face = view.get(slot)
        what = "that card" if face is None else card_text(face, rules, colour)
        raise Refused(f"{what} cannot be played now")
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
                shown.append(f"{SUIT_KEYS[m.suit]} = {suit_text(m.suit, rules, colour)}")
        extra = " (Enter keeps the suit)" if "" in answers else ""
        return Choice(f"Name a suit: {', '.join(shown)}{extra} > ", answers,
                      "no such suit; the card stays in your hand")
    targets = sorted({m.target for m in plays if m.target is not None})
    if len(targets) > 1:
        answers = {str(t + 1): next(m for m in plays if m.target == t) for t in targets}
        shown = [f"{t + 1} = {names[t]}" for t in targets]
        return Choice(f"Swap hands with: {', '.join(shown)} > ", answers,
                      "no such player; the card stays in your hand")
    return plays[0]


class LineReader:
    """Lines of standard input, read by a daemon thread into a trio channel (None at the end).

    Start it inside ``trio.run``; lines typed while nobody asks wait for the next prompt."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream
        self._send, self._receive = trio.open_memory_channel[str | None](1000)
        self._started = False
        self.ended = False

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
    ) -> None:
        self.flush = flush or (lambda: None)
        self.names = list(names)
        self.log = log
        self.lines = lines
        self.current = current
        self.echo = echo
        self.colour = colour
        self._last_offer: str | None = None

    async def _ask(self, prompt: str, state: State) -> str:
        if prompt:
            self.echo(prompt, nl=False)
        try:
            line = await self.lines.receive(lambda: self.current() is not state)
        except Stale:
            if prompt:
                self.echo("")
            raise
        if line is None:
            self.echo("")
            raise QuitGame
        if self.lines.stream is not None or not sys.stdin.isatty():
            self.echo(line)  # show scripted input in the transcript of the session
        return line

    def refused(self, code: str, detail: str) -> None:
        """A move this seat chose was refused (by the session or by the host): say so; the
        prompt comes back when the seat is asked again."""
        self._last_offer = None  # show the offer again, if out of turn
        self.echo(f"  Your move was refused ({code}): {detail}")

    async def __call__(self, state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
        moves = legal_moves(state, seat, view)
        if not moves:
            return None
        in_turn = to_act(state) == seat
        if not in_turn and not any(isinstance(m, Play | Catch | Declare) for m in moves):
            return None
        self.flush()  # the log first, then the table
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
            # The offer is shown once; while it stands, a line typed is still taken.
            prompt = "" if offer == self._last_offer else f"  (out of turn) {offer}"
            self._last_offer = offer
        else:
            self._last_offer = None
            self.echo("")
            self.echo(render_table(state, seat, view, self.names, self.log, self.colour))
            prompt = options(state, moves, in_turn=True)
        while True:
            try:
                line = await self._ask(prompt, state)
            except Stale:
                return None  # asked again with the new state
            text = line.strip().lower()
            if text in ("q", "quit"):
                raise QuitGame
            if text == "" and not in_turn:
                return None
            try:
                move = interpret(text, state, seat, view, moves, self.names, self.colour)
                while isinstance(move, Choice):
                    answer = (await self._ask(move.prompt, state)).strip().lower()
                    if answer not in move.answers:
                        raise Refused(move.error)
                    move = move.answers[answer]
            except Refused as exc:
                self.echo(f"  {exc}")
                prompt = options(state, moves, in_turn)
                continue
            except Stale:
                return None
            return move
