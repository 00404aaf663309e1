"""One line of plain English per rules event, for the table's log and the replay; the
replay of a transcript as lines (:func:`replay_lines`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from dernier_p2p.cli.render import card_text, suit_text
from dernier_p2p.cli.words import HAND_END, count, draw_reason, rule_words
from dernier_p2p.protocol.replay import HandCards, Replay
from dernier_p2p.protocol.session import SessionEvent
from dernier_p2p.rules import Card, Rules, get_variant
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
            words = draw_reason(reason, rules)
            why = "" if words is None else f" ({words})"
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
            return f"{n[s]} pays a penalty of {count(c, 'card')} ({rule_words(r)})."
        case ev.HandsSwapped(a=a, b=b):
            return f"{n[a]} and {n[b]} swap hands."
        case ev.HandsRotated():
            return "Every hand passes to the next player."
        case ev.HandOver(winner=w, reason=r):
            if w is None:
                return f"The hand is over: {HAND_END.get(r, r.replace('-', ' '))}."
            return f"{n[w]} goes out and wins the hand."
        case ev.HandScored(deltas=d, scores=sc):
            parts = ", ".join(f"{n[i]} {d[i]:+d} → {sc[i]}" for i in range(len(d)))
            return f"Scores: {parts}"
        case ev.Forfeited(seat=s, reason=r):
            return f"{n[s]} forfeits ({rule_words(r)})."
        case ev.SeatOut(seat=s, voided=h):
            return (
                f"{n[s]} has left the match and ranks last. Hand {h} does not count; "
                "the others play on with a new deal."
            )
        case ev.MatchOver(winner=w):
            return "The match is over." if w is None else f"{n[w]} wins the match!"
    return None


def session_notice(event: SessionEvent, names: list[str], me: int | None) -> str | None:
    """A line for a session event, or None."""
    who = "someone" if event.seat is None else names[event.seat]
    if event.seat is not None and event.seat == me:
        who = "you"
    match event.kind:
        case "race-lost":
            return f"({who}: a move came too late and was ignored: {event.detail})"
        case "timeout-ignored":
            return None
        case "stall":
            return f"{who} kept the deck waiting too long and leaves the table."
        case "audit-ok":
            return f"The deck of {event.detail} is audited: every shuffle and card checks."
        case "host-change":
            if event.seat is not None and event.seat == me:
                return "You host the table from now on."
            return f"{who} hosts the table from now on."
        case "no-contest":
            return "No contest: the match ends without a loser; nobody is ranked."
        case "chat":
            name = "someone" if event.seat is None else names[event.seat]
            return f"» {name}: {event.detail}"  # marked: a chat never reads as the table's
    return None


def reveal_lines(
    faces: Mapping[int, Card],
    hands: Sequence[Sequence[int]],
    names: Sequence[str],
    rules: Rules,
    colour: bool = True,
) -> list[str]:
    """Every seat's last cards at the end of a hand (``hands``: the slots each held) and
    their points, once the deck has revealed them (``faces``: every slot's face known)."""
    out = ["── Every hand, revealed ──"]
    for s, name in enumerate(names):
        cards = [faces[p] for p in (hands[s] if s < len(hands) else ()) if p in faces]
        points = sum(rules.card_points(c.rank) for c in cards)
        what = _cards(cards, rules, colour)
        out.append(f"  {name}: {what} ({count(points, 'point')})")
    return out


def _why(reason: str, rules: Rules) -> str:
    words = draw_reason(reason, rules)
    return "" if words is None else f" ({words})"


def _cards(cards: Sequence[Card], rules: Rules, colour: bool) -> str:
    return " ".join(card_text(c, rules, colour) for c in cards) if cards else "(none)"


def hand_lines(hc: HandCards, names: Sequence[str], rules: Rules, colour: bool) -> list[str]:
    """Every seat's dealt cards, draws and final hand, once the hand is revealed."""
    out = [f"── Hand {hc.hand} revealed ──"]
    for s, name in enumerate(names):
        out.append(f"  {name} was dealt: {_cards(hc.dealt[s], rules, colour)}")
        if s < len(hc.drawn) and hc.drawn[s]:
            drew = ", ".join(
                card_text(c, rules, colour) + _why(why, rules) for c, why in hc.drawn[s]
            )
            out.append(f"  {name} drew: {drew}")
        final = hc.final[s] if s < len(hc.final) else []
        out.append(f"  {name} ended with: {_cards(final, rules, colour)}")
    return out


def replay_lines(rp: Replay, colour: bool = True) -> Iterator[str]:
    """The replay of a transcript as lines: each record's events as they happened (plays with
    their faces), every hand's cards once revealed, and the session's notices."""
    names = rp.names
    rules: Rules | None = None
    if rp.variant is not None:
        try:
            rules = get_variant(rp.variant)
        except ValueError:
            rules = None
    if rules is not None and names:
        yield f"{rp.variant}: " + ", ".join(f"seat {k} {n}" for k, n in enumerate(names))
    for step in rp.steps:
        assert rules is not None
        if step.kind == "timeout":
            yield f"[record {step.index}] the host records that a seat ran out of time."
        elif step.kind == "left":
            yield f"[record {step.index}] the host records that a seat left the table."
        elif step.kind == "no_contest":
            yield f"[record {step.index}] no contest: the match ends without a loser."
        if step.revealed is not None:  # the faces first: this record also scores the hand
            yield from hand_lines(step.revealed, names, rules, colour)
        for event in step.events:
            if isinstance(event, SessionEvent):
                line = session_notice(event, names, None)
                if line:
                    yield f"  {line}"
                continue
            line = narrate(event, names, rules, colour)
            if line:
                yield line
    if rp.verdict.ok:
        yield "The transcript checks from the first record to the last."
