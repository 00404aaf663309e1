"""The human at the terminal as a player: shows the table, reads a choice, returns a move.

Wrong input gets a short message and changes nothing; the prompt is asked again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import click

from dernier_p2p.cli.render import card_text, render_table, suit_text
from dernier_p2p.rules import (
    Card,
    Catch,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    Leave,
    Move,
    NameSuit,
    Pass,
    Play,
    State,
    Suit,
    legal_moves,
    to_act,
)

Ask = Callable[[str], str | None]


class QuitGame(Exception):
    """The human asked to leave the table."""


class HumanPlayer:
    """A policy driven by terminal input; ``ask(prompt)`` gives a line, or None at end of input."""

    def __init__(
        self,
        names: Sequence[str],
        log: list[str],
        ask: Ask | None = None,
        echo: Callable[[str], None] = click.echo,
        colour: bool = True,
    ) -> None:
        self.names = names
        self.log = log
        self.ask = ask or _ask_stdin
        self.echo = echo
        self.colour = colour

    def __call__(self, state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
        moves = legal_moves(state, seat, view)
        if not moves:
            return None
        in_turn = to_act(state) == seat
        if not in_turn and not any(isinstance(m, Play | Catch | Declare) for m in moves):
            return None
        self.echo("")
        self.echo(render_table(state, seat, view, self.names, self.log, self.colour))
        while True:
            prompt, options = self._options(state, moves, in_turn)
            line = self.ask(prompt)
            if line is None:
                raise QuitGame
            line = line.strip().lower()
            if line in ("q", "quit"):
                return Leave(seat)
            if not in_turn and line == "":
                return None
            try:
                move = self._parse(line, state, seat, view, moves, options)
            except ValueError as exc:
                self.echo(f"  {exc}")
                continue
            if move is not None:
                return move

    def _options(self, state: State, moves: list[Move], in_turn: bool) -> tuple[str, set[str]]:
        opts: set[str] = set()
        parts: list[str] = []
        if any(isinstance(m, Play) for m in moves):
            verb = "card number to play" if in_turn else "card number to jump in"
            parts.append(f"{verb} (add ! to declare)")
            opts.add("play")
        for kind, key, text in (
            (Draw, "d", "d = take the pending cards" if state.pending_draw else "d = draw"),
            (Pass, "p", "p = pass"),
            (Declare, "!", "! = declare DERNIER/SOLO"),
            (Catch, "c", "c = catch a player who did not declare"),
        ):
            if any(isinstance(m, kind) for m in moves):
                parts.append(text)
                opts.add(key)
        if any(isinstance(m, NameSuit) for m in moves):
            parts.append("the first card lets you name the suit: y/r/g/b")
            opts.add("suit")
        if any(isinstance(m, ChooseHandSize) for m in moves):
            sizes = sorted(m.size for m in moves if isinstance(m, ChooseHandSize))
            parts.append(f"cards each: {sizes[0]}-{sizes[-1]}")
            opts.add("size")
        if any(isinstance(m, Cut) for m in moves):
            parts.append("k = keep the cut card, l = leave it")
            opts.add("cut")
        if not in_turn:
            parts.append("Enter = let play go on")
        parts.append("q = leave")
        return " · ".join(parts) + " > ", opts

    def _parse(
        self,
        line: str,
        state: State,
        seat: int,
        view: Mapping[int, Card],
        moves: list[Move],
        options: set[str],
    ) -> Move | None:
        rules = state.rules
        if "suit" in options and line[:1] in "yrgb" and line:
            suit = Suit("yrgb".index(line[0]))
            return _pick(moves, NameSuit, lambda m: m.suit == suit)
        if "size" in options and line.isdigit():
            size = int(line)
            return _pick(moves, ChooseHandSize, lambda m: m.size == size, "not a size you may pick")
        if "cut" in options and line in ("k", "l"):
            keep = line == "k"
            return _pick(moves, Cut, lambda m: m.keep == keep, "you may not keep that card")
        if line in ("d", "draw"):
            return _pick(moves, Draw, lambda m: True, "you cannot draw now")
        if line in ("p", "pass"):
            return _pick(moves, Pass, lambda m: True, "you cannot pass now (draw first)")
        if line == "!":
            return _pick(moves, Declare, lambda m: True, "nothing to declare now")
        if line in ("c", "catch"):
            catches = [m for m in moves if isinstance(m, Catch)]
            if not catches:
                raise ValueError("nobody to catch")
            return catches[0]
        declare = line.endswith("!")
        number = line.rstrip("!").strip()
        if not number.isdigit():
            raise ValueError("type a card number or one of the letters shown")
        index = int(number) - 1
        hand = state.hands[seat]
        if not 0 <= index < len(hand):
            raise ValueError(f"pick a card from 1 to {len(hand)}")
        slot = hand[index]
        plays = [m for m in moves if isinstance(m, Play) and m.slot == slot]
        if not plays:
            raise ValueError(f"{card_text(view[slot], rules, self.colour)} cannot be played now")
        if any(m.declare == declare for m in plays):
            plays = [m for m in plays if m.declare == declare]
        suits = sorted({m.suit for m in plays if m.suit is not None})
        if suits and len({m.suit for m in plays}) > 1:
            shown = ", ".join(f"{'yrgb'[s]} = {suit_text(s, rules, self.colour)}" for s in suits)
            keep = any(m.suit is None for m in plays)
            extra = " (Enter keeps the suit)" if keep else ""
            answer = (self.ask(f"Name a suit: {shown}{extra} > ") or "").strip().lower()
            if answer == "" and keep:
                plays = [m for m in plays if m.suit is None]
            elif answer[:1] in ("y", "r", "g", "b") and answer:
                chosen = Suit("yrgb".index(answer[0]))
                plays = [m for m in plays if m.suit == chosen]
            else:
                raise ValueError("no such suit; the card stays in your hand")
        targets = sorted({m.target for m in plays if m.target is not None})
        if len(targets) > 1:
            shown = ", ".join(f"{t + 1} = {self.names[t]}" for t in targets)
            answer = (self.ask(f"Swap hands with: {shown} > ") or "").strip()
            if not answer.isdigit() or int(answer) - 1 not in targets:
                raise ValueError("no such player; the card stays in your hand")
            plays = [m for m in plays if m.target == int(answer) - 1]
        if not plays:
            raise ValueError("that choice is not allowed")
        return plays[0]


def _pick(moves: list[Move], kind: type, test: Callable[..., bool], error: str = "") -> Move:
    for m in moves:
        if isinstance(m, kind) and test(m):
            return m
    raise ValueError(error or "that is not allowed now")


def _ask_stdin(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None
