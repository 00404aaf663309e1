"""The full-screen table's panels as Rich text, computed from a seat's session, the pacer and
the link (pure functions of what they are given, so the screen is redrawn from scratch)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from dernier_p2p.cli.render import COLOURS, card_label, suit_text
from dernier_p2p.rules import Card, Play, Rules, State

HAND_KEYS = "1234567890aefijmostuvwxz"  # a key per card: digits, then letters no command uses


def card_key(index: int) -> str:
    """The key that plays the ``index``-th card of the hand (0-based); "" beyond the keys."""
    return HAND_KEYS[index] if index < len(HAND_KEYS) else ""


def card_rich(card: Card | None, rules: Rules) -> Text:
    """A card as coloured text ("?" for a face not known yet)."""
    if card is None:
        return Text("?")
    style = "bold magenta" if card.suit is None else f"bold {COLOURS[card.suit]}"
    return Text(card_label(card, rules), style=style)


def clock(seconds: float) -> str:
    """A countdown as m:ss (or s.s under ten seconds)."""
    if seconds < 10:
        return f"{max(0.0, seconds):.1f} s"
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


@dataclass
class TurnClock:
    """When the seat at turn began to be awaited (reset when the turn passes)."""

    key: tuple[int, int] | None = None
    since: float = 0.0

    def left(self, state: State, turn_s: float, now: float) -> float:
        key = (state.hand_number, state.turn)
        if key != self.key:
            self.key, self.since = key, now
        return turn_s - (now - self.since)


def players_text(
    state: State, names: Sequence[str], me: int | None, turn_left: float | None
) -> Text:
    """One line per player: turn mark, name, cards held, score; the turn's countdown."""
    out = Text()
    for s in range(state.players):
        at_turn = s == state.turn
        mark = "▶ " if at_turn else "  "
        you = " (you)" if s == me else ""
        size = len(state.hands[s])
        line = f"{mark}{names[s]}{you}: {size} card{'' if size == 1 else 's'} · score " \
               f"{state.scores[s]}"
        out.append(line, style="bold" if at_turn else "")
        if at_turn and turn_left is not None:
            out.append(f"  ⏱ {clock(turn_left)}", style="bold yellow" if turn_left < 10 else "")
        out.append("\n")
    return out


def centre_text(state: State, names: Sequence[str], header: str) -> Text:
    """Variant, hand, direction and pile; the top card, the named suit and pending draws."""
    rules = state.rules
    arrow = "→ clockwise" if state.direction == 1 else "← counter-clockwise"
    out = Text(f"{header} · hand {state.hand_number} · dealer {names[state.dealer]} · "
               f"direction {arrow} · pile {state.pile_size}\n")
    out.append("Top card: ")
    out.append_text(card_rich(state.top, rules) if state.top is not None else Text("—"))
    if state.named_suit is not None:
        out.append(f"   suit named: {suit_text(state.named_suit, rules, False)}",
                   style=f"bold {COLOURS[state.named_suit]}")
    if state.pending_draw:
        out.append(f"   pending draw: {state.pending_draw}", style="bold red")
    return out


def hand_text(
    state: State, me: int, view: Mapping[int, Card], moves: Sequence[Any], width: int = 76
) -> Text:
    """Your hand, each card with its key; playable cards marked ▲ and bright, others dim;
    lines of at most ``width`` columns broken only between cards."""
    playable = {m.slot for m in moves if isinstance(m, Play)}
    out = Text("Your hand (▲ playable now):\n", no_wrap=True)
    used = 0
    for i, slot in enumerate(state.hands[me]):
        ok = slot in playable
        item = Text(f" [{card_key(i) or '·'}]", style="bold" if ok else "dim")
        label = card_rich(view.get(slot), state.rules)
        if not ok:
            label.stylize("dim")
        item.append_text(label)
        item.append("▲" if ok else " ", style="bold green")
        if used and used + len(item.plain) > width:
            out.append("\n")
            used = 0
        out.append_text(item)
        used += len(item.plain)
    if not state.hands[me]:
        out.append(" (empty)")
    return out


def offer_text(prompt: str, offer_left: float, hand_held: bool, typed: str) -> Text:
    """The open prompt or offer, with the offer's countdown and what has been typed."""
    out = Text()
    if prompt:
        out.append(prompt.rstrip("> ").rstrip(), style="bold")
        if offer_left > 0:
            out.append(f"   ⏱ {clock(offer_left)}", style="bold yellow")
        out.append(f"  > {typed}", style="bold")
    elif hand_held:
        out.append("The hand is over: every hand is in the log. Enter = next hand", style="bold")
    else:
        out.append("Waiting for the table…", style="dim")
    return out
