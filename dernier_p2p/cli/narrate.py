"""One line of plain English per rules event, for the table's log and the replay."""

from __future__ import annotations

from collections.abc import Sequence

from dernier_p2p.cli.render import card_text, suit_text
from dernier_p2p.rules import Rules
from dernier_p2p.rules import events as ev


def narrate(event: object, names: Sequence[str], rules: Rules, colour: bool = True) -> str | None:
    """A log line for ``event``, or None for events not worth a line (dealing, shuffling)."""
    n = names
    match event:
        case ev.DealerChosen(dealer=d):
            return f"{n[d]} is the first dealer."
        case ev.HandStarted(hand_number=h, dealer=d):
            return f"Hand {h} begins; {n[d]} deals."
        case ev.Reshuffled(count=c):
            return f"The discards are reshuffled into a new draw pile ({c} cards)."
        case ev.CutKept(seat=s):
            return f"{n[s]} cut a special card and keeps it."
        case ev.HandSizeChosen(seat=s, size=k):
            return f"{n[s]} deals {k} cards each."
        case ev.Flipped(card=c):
            return f"First card turned up: {card_text(c, rules, colour)}."
        case ev.Drew(seat=s, slots=slots, reason=reason):
            if reason == "deal":
                return None
            what = "a card" if len(slots) == 1 else f"{len(slots)} cards"
            why = "" if reason == "draw" else f" ({reason})"
            return f"{n[s]} draws {what}{why}."
        case ev.Played(seat=s, card=c):
            return f"{n[s]} plays {card_text(c, rules, colour)}."
        case ev.JumpedIn(seat=s):
            return f"{n[s]} jumps in: ANTICIPO!"
        case ev.TakenBack(seat=s, card=c):
            return f"{n[s]} takes back {card_text(c, rules, colour)}."
        case ev.SuitNamed(seat=s, suit=suit):
            return f"{n[s]} names {suit_text(suit, rules, colour)}."
        case ev.DirectionChanged():
            return "Direction of play reverses."
        case ev.Skipped(seat=s):
            return f"{n[s]} is skipped."
        case ev.ChainGrew(victim=v, total=t):
            return f"{n[v]} must draw {t} or answer."
        case ev.ChainCancelled(seat=s):
            return f"{n[s]} cancels the draw chain."
        case ev.Passed(seat=s):
            return f"{n[s]} passes."
        case ev.Declared(seat=s):
            word = "SOLO!" if rules.name == "moderno" else "DERNIER!"
            return f"{n[s]}: {word}"
        case ev.Caught(seat=s, target=t):
            return f"{n[s]} catches {n[t]} without a declaration."
        case ev.Penalty(seat=s, cards=c, rule=r):
            return f"{n[s]} pays a penalty of {c} cards ({r})."
        case ev.HandsSwapped(a=a, b=b):
            return f"{n[a]} and {n[b]} swap hands."
        case ev.HandsRotated():
            return "Every hand passes to the next player."
        case ev.HandOver(winner=w, reason=r):
            if w is None:
                return f"The hand is over ({r})."
            return f"{n[w]} goes out and wins the hand."
        case ev.HandScored(deltas=d, scores=sc):
            parts = ", ".join(f"{n[i]} {d[i]:+d} → {sc[i]}" for i in range(len(d)))
            return f"Scores: {parts}"
        case ev.Forfeited(seat=s, reason=r):
            return f"{n[s]} forfeits ({r})."
        case ev.MatchOver(winner=w):
            return "The match is over." if w is None else f"{n[w]} wins the match!"
    return None
