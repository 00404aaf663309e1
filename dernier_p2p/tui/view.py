"""The full-screen table's panels as Rich text, computed from a seat's session, the pacer and
the link (pure functions of what they are given, so the screen is redrawn from scratch)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.text import Text

from dernier_p2p.cli.render import COLOURS, card_label, phrase_lines, suit_text
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


LONG_TURN_S = 600.0
"""A turn limit this long or longer shows no clock until its last :data:`LAST_S` (``dernier
play`` gives a person an hour against the bots: no limit worth a countdown)."""
LAST_S = 300.0


def turn_clock(left: float | None, limit: float) -> float | None:
    """The countdown to show for a turn with ``left`` seconds of ``limit`` (None: none shown)."""
    if left is None or (limit >= LONG_TURN_S and left > LAST_S):
        return None
    return left


def flow(chips: Sequence[Text], width: int, sep: str = "  ") -> Text:
    """``chips`` laid in lines of at most ``width`` columns, broken only between chips."""
    out = Text()
    used = 0
    for chip in chips:
        size = chip.cell_len
        if used and used + len(sep) + size > width:
            out.append("\n")
            used = 0
        elif used:
            out.append(sep)
            used += len(sep)
        out.append_text(chip)
        used += size
    return out


def rows(text: Text) -> int:
    """How many lines ``text`` takes (it is laid out in lines that fit, see :func:`flow`)."""
    return text.plain.count("\n") + 1


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


def _shorten(name: str, over: int) -> str:
    """``name`` made ``over`` columns shorter (an ellipsis ends it), keeping six at least."""
    if over <= 0:
        return name
    keep = max(6, cell_len(name) - over - 1)
    return name if keep >= cell_len(name) else name[:keep] + "…"


def player_chip(
    state: State, names: Sequence[str], seat: int, me: int | None, left: float | None,
    width: int, pad: bool = True,
) -> Text:
    """One player on one line: turn mark, name, cards held, score and, for the seat to move,
    its countdown (``left``); the name is shortened rather than the line broken (``pad``:
    room for the turn mark before a name without it)."""
    mark = "▶ " if seat == state.turn else "  " if pad else ""
    you = " (you)" if seat == me else ""
    size = len(state.hands[seat])
    score = state.scores[seat]
    rest = f"{you} · {size} card{'' if size == 1 else 's'} · {score} pt{'' if score == 1 else 's'}"
    tick = "" if left is None else f"  ⏱ {clock(left)}"
    name = _shorten(names[seat], cell_len(mark + names[seat] + rest + tick) - width)
    chip = Text(f"{mark}{name}{rest}", style="bold" if seat == state.turn else "")
    if tick:
        chip.append(tick, style="bold yellow" if left is not None and left < 10 else "")
    return chip


def players_text(
    state: State, names: Sequence[str], me: int | None, turn_left: float | None,
    mover: int | None = None, width: int = 76, packed: bool = False,
) -> Text:
    """One line per player (``packed``: as many to a line as fit ``width``), each with its
    countdown for the seat to move (``mover``, by default the seat at turn)."""
    mover = state.turn if mover is None else mover
    chips = [player_chip(state, names, s, me, turn_left if s == mover else None, width,
                         not packed) for s in range(state.players)]
    if packed:
        return flow(chips, width, sep="   ")
    return Text("\n").join(chips)


def players_width(state: State, names: Sequence[str], me: int | None) -> int:
    """The columns the players' lines take with a countdown beside any of them (m:ss)."""
    return max(player_chip(state, names, s, me, 600.0, 999).cell_len
               for s in range(state.players))


def table_phrases(state: State, names: Sequence[str], header: str) -> list[str]:
    """The table's phrases: variant, hand, pile, dealer, direction."""
    arrow = "→ clockwise" if state.direction == 1 else "← counter-clockwise"
    return [header, f"hand {state.hand_number}", f"pile {state.pile_size}",
            f"dealer {names[state.dealer]}", arrow]


def table_title(state: State, names: Sequence[str], header: str, width: int) -> str:
    """The table's phrases on one line of at most ``width`` columns: the direction as an arrow
    alone, then the dealer left out, when the whole does not fit."""
    phrases = table_phrases(state, names, header)
    for cut in (phrases, [*phrases[:4], phrases[4][0]], [*phrases[:3], phrases[4][0]],
                phrases[:3]):
        line = " · ".join(cut)
        if cell_len(line) <= width:
            return line
    return phrases[0]


def top_chips(state: State) -> list[Text]:
    """The top card, the named suit and pending draws."""
    rules = state.rules
    chips = [Text("Top card: ").append_text(
        card_rich(state.top, rules) if state.top is not None else Text("—"))]
    if state.named_suit is not None:
        chips.append(Text("suit named: ").append(
            suit_text(state.named_suit, rules, False), style=f"bold {COLOURS[state.named_suit]}"))
    if state.pending_draw:
        chips.append(Text(f"pending draw: {state.pending_draw}", style="bold red"))
    return chips


def centre_text(state: State, names: Sequence[str], header: str, width: int = 36) -> Text:
    """Variant, hand, pile, dealer and direction; the top card, the named suit and pending
    draws: lines of at most ``width`` columns, broken between phrases only (a long dealer's
    name is shortened)."""
    phrases = table_phrases(state, names, header)
    dealer = names[state.dealer]
    phrases[3] = f"dealer {_shorten(dealer, cell_len(phrases[3]) - width)}"
    return Text("\n").join([flow([Text(p) for p in phrases[:3]], width, " · "),
                            flow([Text(p) for p in phrases[3:]], width, " · "),
                            flow(top_chips(state), width, " · ")])


def hand_text(
    state: State, me: int, view: Mapping[int, Card], moves: Sequence[Any], width: int = 76
) -> Text:
    """Your hand, each card with its key; playable cards marked ▲ and bright, others dim;
    lines of at most ``width`` columns broken only between cards (the panel's title says what
    ▲ means: :data:`HAND_TITLE`)."""
    playable = {m.slot for m in moves if isinstance(m, Play)}
    items = []
    for i, slot in enumerate(state.hands[me]):
        ok = slot in playable
        item = Text(f" [{card_key(i) or '·'}]", style="bold" if ok else "dim")
        label = card_rich(view.get(slot), state.rules)
        if not ok:
            label.stylize("dim")
        item.append_text(label)
        item.append("▲" if ok else " ", style="bold green")
        items.append(item)
    out = flow(items, width, sep="")
    out.no_wrap = True
    return out if items else Text(" (empty)")


HAND_TITLE = "Your hand · ▲ playable now"


def offer_text(
    prompt: str, offer_left: float, hand_held: bool, typed: str,
    my_turn_left: float | None = None, width: int = 78,
) -> Text:
    """The open prompt or offer, with the offer's countdown and what has been typed, in lines
    of at most ``width`` columns broken between phrases; while the end of a hand is held for
    the key, a warning when the next hand already waits on this seat's turn (``my_turn_left``:
    the table's clock of that turn, which is running; None when it is not to be shown)."""
    tail = f"  > {typed}"
    if prompt:
        text = prompt.rstrip("> ").rstrip()
        if offer_left > 0:
            text += f" · ⏱ {clock(offer_left)}"
        lines = phrase_lines(text + tail, width)
        out = Text("\n".join(lines), style="bold")
        for at in (m.start() for m in re.finditer("⏱", out.plain)):
            out.stylize("bold yellow", at, at + len(f"⏱ {clock(offer_left)}"))
        return out
    if hand_held:
        out = Text("\n".join(phrase_lines(
            "The hand is over: every hand is in the log · Enter = next hand", width)),
            style="bold")
        if my_turn_left is not None:
            out.append("\n" + "\n".join(phrase_lines(
                f"The next hand has begun with your turn: its clock runs ⏱ "
                f"{clock(my_turn_left)}", width)), style="bold yellow")
        return out
    return Text("Waiting for the table…", style="dim")


def offer_keys(
    state: State, me: int, view: Mapping[int, Card], moves: Sequence[Move],
    names: Sequence[str], left: float, width: int = 76, in_turn: bool = False,
) -> Text:
    """An out-of-turn offer as keys, each with the window's countdown: a jump-in per card
    (its hand key), a late declaration (``!`` then Enter), a catch (``c``), Enter to let it
    go, laid in lines of at most ``width`` columns, never breaking one. In turn (a late
    declaration after a card that gave the turn back) only the declaration and catches: the
    cards are the turn's, and the prompt below stays the turn's. Empty when nothing is
    offered or the window is over."""
    if left <= 0:
        return Text()
    hand = list(state.hands[me])
    tick = f" ⏱ {clock(left)}"
    chips: list[Text] = []
    jumps = () if in_turn else {m.slot for m in moves if isinstance(m, Play)}
    for slot in sorted(jumps, key=hand.index):
        chip = Text(f"[{card_key(hand.index(slot)) or '·'}] jump in with ", style="bold")
        chip.append_text(card_rich(view.get(slot), state.rules))
        chips.append(chip)
    if any(isinstance(m, Declare) for m in moves):
        word = "SOLO!" if state.rules.name == "moderno" else "DERNIER!"
        chips.append(Text(f"[!]+Enter declare {word}", style="bold"))
    for target in sorted({m.target for m in moves if isinstance(m, Catch)}):
        chips.append(Text(f"[c] catch {names[target]}", style="bold"))
    if not chips:
        return Text()
    for chip in chips:
        chip.append(tick, style="bold yellow")
    if in_turn:  # no Enter to let it go: the turn goes on below
        return flow(chips, width, sep="   ")
    return flow([*chips, Text("[Enter] let it go", style="dim")], width, sep="   ")
