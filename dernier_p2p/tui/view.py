"""The full-screen table's panels as Rich text, computed from a seat's session, the pacer and
the link (pure functions of what they are given, so the screen is redrawn from scratch)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from dernier_p2p.cli.render import COLOURS, card_label, suit_text
from dernier_p2p.rules import Card, Catch, Declare, Move, Play, Rules, State

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
    """The turn clock as the table keeps it (PROTOCOL.md 18): a seat's clock starts when the
    table starts waiting on it and restarts whenever it authors a record while still awaited
    (a draw, then the drawn card may be played: a fresh clock), a ``chat`` excepted. Fed from
    the seat's records."""

    since: dict[int, float] = field(default_factory=dict)  # awaited seat -> its clock's start
    seen: int = 0  # records looked at so far

    def update(self, records: Sequence[Mapping[str, Any]], waiting: Sequence[int],
               now: float) -> None:
        """Take the records not seen yet and the seats the table waits on now."""
        authors = {r["env"]["seat"] for r in records[self.seen :]
                   if r["env"]["body"].get("type") != "chat"}  # a chat restarts no clock
        self.seen = len(records)
        self.since = {s: now if s not in self.since or s in authors else self.since[s]
                      for s in waiting}

    def left(self, seat: int, turn_s: float, now: float) -> float | None:
        """Seconds ``seat`` has left (None when the table is not waiting on it)."""
        start = self.since.get(seat)
        return None if start is None else turn_s - (now - start)


def players_text(
    state: State, names: Sequence[str], me: int | None, turn_left: float | None,
    mover: int | None = None,
) -> Text:
    """One line per player: turn mark, name, cards held, score; the countdown of the seat to
    move (``mover``, by default the seat at turn)."""
    mover = state.turn if mover is None else mover
    out = Text()
    for s in range(state.players):
        at_turn = s == state.turn
        mark = "▶ " if at_turn else "  "
        you = " (you)" if s == me else ""
        size = len(state.hands[s])
        line = f"{mark}{names[s]}{you} · {size} card{'' if size == 1 else 's'} · " \
               f"{state.scores[s]} pt{'' if state.scores[s] == 1 else 's'}"
        out.append(line, style="bold" if at_turn else "")
        if s == mover and turn_left is not None:
            out.append(f"  ⏱ {clock(turn_left)}", style="bold yellow" if turn_left < 10 else "")
        out.append("\n")
    out.right_crop(1)  # no empty row under the last player
    return out


def centre_text(state: State, names: Sequence[str], header: str) -> Text:
    """Variant, hand, pile, dealer and direction; the top card, the named suit and pending
    draws: short lines, so the narrow panel beside the players never breaks a phrase."""
    rules = state.rules
    arrow = "→ clockwise" if state.direction == 1 else "← counter-clockwise"
    out = Text(f"{header} · hand {state.hand_number} · pile {state.pile_size}\n"
               f"dealer {names[state.dealer]} · {arrow}\n")
    out.append("Top card: ")
    out.append_text(card_rich(state.top, rules) if state.top is not None else Text("—"))
    if state.named_suit is not None:
        out.append("\nsuit named: ")
        out.append(suit_text(state.named_suit, rules, False),
                   style=f"bold {COLOURS[state.named_suit]}")
    if state.pending_draw:
        out.append(f"\npending draw: {state.pending_draw}", style="bold red")
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


def offer_text(
    prompt: str, offer_left: float, hand_held: bool, typed: str,
    my_turn_left: float | None = None,
) -> Text:
    """The open prompt or offer, with the offer's countdown and what has been typed; while the
    end of a hand is held for the key, a warning when the next hand already waits on this
    seat's turn (``my_turn_left``: the table's clock of that turn, which is running)."""
    out = Text()
    if prompt:
        out.append(prompt.rstrip("> ").rstrip(), style="bold")
        if offer_left > 0:
            out.append(f"   ⏱ {clock(offer_left)}", style="bold yellow")
        out.append(f"  > {typed}", style="bold")
    elif hand_held:
        out.append("The hand is over: every hand is in the log. Enter = next hand", style="bold")
        if my_turn_left is not None:
            out.append(f"\nThe next hand has begun with your turn: its clock runs ⏱ "
                       f"{clock(my_turn_left)}", style="bold yellow")
    else:
        out.append("Waiting for the table…", style="dim")
    return out


def offer_keys(
    state: State, me: int, view: Mapping[int, Card], moves: Sequence[Move],
    names: Sequence[str], left: float, in_turn: bool = False,
) -> Text:
    """An out-of-turn offer as keys, each with the window's countdown: a jump-in per card
    (its hand key), a late declaration (``!`` then Enter), a catch (``c``), Enter to let it
    go. In turn (a late declaration after a card that gave the turn back) only the declaration
    and catches: the cards are the turn's, and the prompt below stays the turn's. Empty when
    nothing is offered or the window is over."""
    out = Text()
    if left <= 0:
        return out
    hand = list(state.hands[me])
    tick = f" ⏱ {clock(left)}"
    chips: list[Text] = []
    jumps = () if in_turn else {m.slot for m in moves if isinstance(m, Play)}
    for slot in sorted(jumps, key=hand.index):
        chip = Text(f" [{card_key(hand.index(slot)) or '·'}] jump in with ", style="bold")
        chip.append_text(card_rich(view.get(slot), state.rules))
        chips.append(chip)
    if any(isinstance(m, Declare) for m in moves):
        word = "SOLO!" if state.rules.name == "moderno" else "DERNIER!"
        chips.append(Text(f" [!]+Enter declare {word}", style="bold"))
    for target in sorted({m.target for m in moves if isinstance(m, Catch)}):
        chips.append(Text(f" [c] catch {names[target]}", style="bold"))
    if not chips:
        return out
    for chip in chips:
        chip.append(tick, style="bold yellow")
        out.append_text(chip)
        out.append("\n")
    if in_turn:
        out.right_crop(1)  # no Enter to let it go: the turn goes on below
    else:
        out.append(" [Enter] let it go", style="dim")
    return out
