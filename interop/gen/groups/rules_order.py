"""Ambiguity cases of the rules (points 6, 9 and 17 of interop/README.md "Ambiguity cases"):
who gets which cards when one move causes several draws, and a time-out after a draw. Each case
is a stretch of a recorded match from the move to the records that carry the tokens of the
cards in question: a reading that deals those positions to other seats refuses a token there as
not due. The generator asserts that the stretch shows the situation it pins.

Point 18 (ties) is pinned by the whole matches ``*-3p-ties-*`` (their ``-match`` cases carry
the outcome); :func:`check_ties` asserts that their standings are decided by the keys named."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dernier_p2p.protocol.session import Session
from dernier_p2p.rules import to_act
from dernier_p2p.rules.events import Drew, Penalty
from dernier_p2p.wire.version import READABLE_VERSIONS
from interop.gen.forge import add
from interop.gen.scenarios import Base, tie_keys

FILE = ("ambiguity", "Ambiguity cases: the normative reading where another one is natural")


def build(bases: dict[str, Base]) -> None:
    if "originale-2p-cancel" in bases:
        seven_then_penalty_case(bases["originale-2p-cancel"])
    if "dernier-2p" in bases:
        window_then_draw_case(bases["dernier-2p"])
    if "standard-5p-timeout" in bases:
        timeout_after_draw_case(bases["standard-5p-timeout"])
    if "dernier-3p-two-penalties" in bases:
        two_penalties_case(bases["dernier-3p-two-penalties"])
    if "moderno-2p-first-rotate" in bases:
        first_rotate_case(bases["moderno-2p-first-rotate"])
    check_ties(bases)


def _find(b: Base, hit: Callable[[Session, dict, list[Any]], Any]) -> tuple[Session, int, Any]:
    """Replay ``b`` with an observer; the first record ``k`` where ``hit(observer before the
    record, record, the record's events)`` is not None, the observer after it, and that value."""
    obs = Session(None, None, b.records[0], versions=READABLE_VERSIONS)
    for k in range(1, len(b.records)):
        n0 = len(obs.events)
        state, rec = obs.state, b.records[k]
        obs.receive(rec)
        got = hit(state, rec, obs.events[n0:])
        if got is not None:
            return obs, k, got
    raise AssertionError(f"{b.name}: the situation of the case does not occur")


def _until_tokens(b: Base, obs: Session, k: int, positions: set[int]) -> int:
    """The first index after ``k`` from which every token of ``positions`` is public (the
    observer ``obs`` is after record ``k``)."""
    end = k + 1
    while positions & set(obs.pub.expect_tokens) or not positions <= _dealt(obs):
        assert end < len(b.records), f"{b.name}: the tokens of {positions} never come"
        obs.receive(b.records[end])
        end += 1
    return end


def _dealt(obs: Session) -> set[int]:
    return {p for p, slot in enumerate(obs.pub.slots) if slot.holder is not None or slot.opened}


def _stretch(b: Base, k: int, end: int) -> list[dict]:
    return list(b.records[k:end])


def seven_then_penalty_case(b: Base) -> None:
    """Point 6: a 7 played as the second-last card without DERNIER (originale, ``with_play``):
    the previous seat's draw (the 7's effect) takes the first card of the pile, the player's
    two penalty cards the next two."""

    def hit(_st: Any, _rec: dict, events: list[Any]) -> Any:
        drew = [e for e in events if isinstance(e, Drew)]
        for a, c in zip(drew, drew[1:], strict=False):
            if (a.reason == "penalty-7" and c.reason == "penalty-declaration"
                    and a.seat != c.seat):
                return a, c
        return None

    obs, k, (seven, pen) = _find(b, hit)
    assert min(pen.slots) > max(seven.slots), "the penalty is not drawn after the 7's draw"
    end = _until_tokens(b, obs, k, {*seven.slots, *pen.slots})
    add("ambiguity-penalty-after-seven", "17", "originale: a 7 played as the second-last card "
        "without DERNIER: the previous seat draws first (the 7), then the player draws two "
        "(the forgotten declaration); the tokens of those three cards follow",
        ["Ambiguity", "Rules", "Declaration", "DrawOrder"], b, k, _stretch(b, k, end), None)


def window_then_draw_case(b: Base) -> None:
    """Point 6, windows: a move that closes another seat's declaration window (dernier,
    ``window``) charges that seat's penalty before the move's own draw: the penalty takes the
    first two cards of the pile, the mover the next."""

    def hit(_st: Any, _rec: dict, events: list[Any]) -> Any:
        drew = [e for e in events if isinstance(e, Drew)]
        if (len(drew) == 2 and drew[0].reason == "penalty-declaration"
                and drew[1].reason == "draw" and drew[1].seat != drew[0].seat):
            return drew
        return None

    obs, k, (pen, own) = _find(b, hit)
    assert max(pen.slots) < min(own.slots)
    end = _until_tokens(b, obs, k, {*pen.slots, *own.slots})
    add("ambiguity-penalty-before-draw", "17", "dernier: a draw closes another seat's "
        "declaration window: that seat's two penalty cards come first, then the drawer's card; "
        "the tokens of those cards follow", ["Ambiguity", "Rules", "Declaration", "DrawOrder"],
        b, k, _stretch(b, k, end), None)


def timeout_after_draw_case(b: Base) -> None:
    """Point 9: a time-out of the seat to act that has already drawn this turn (moderno,
    standard) draws nothing: the turn passes. The next card of the pile goes to a later draw
    of another seat, whose tokens follow (a reading that gives it to the timed-out seat
    refuses the timed-out seat's token for it)."""

    def hit(st: Any, rec: dict, events: list[Any]) -> Any:
        body = rec["env"]["body"]
        if (body["type"] == "timeout" and st is not None and to_act(st) == body["seat"]
                and st.drawn >= 0):
            assert not any(isinstance(e, Drew) for e in events), "the time-out drew a card"
            return body["seat"], st.pile[0]
        return None

    obs, k, (seat, nxt) = _find(b, hit)
    end = _until_tokens(b, obs, k, {nxt})
    assert not obs.state.out, "deck seats are table seats only with nobody out"
    assert obs.pub.slots[nxt].holder != seat, "the next card went to the timed-out seat"
    add("ambiguity-timeout-after-draw", "17", "standard: a seat draws, then lets its clock run "
        "out: the turn passes with no second draw; the next card of the pile goes to a later "
        "draw, whose tokens follow", ["Ambiguity", "Rules", "Timeout", "DrawOrder"], b, k,
        _stretch(b, k, end), None)


def two_penalties_case(b: Base) -> None:
    """Point 17: one move closes two declaration windows (dernier): the skipped seat's window
    opened first, so it draws its two cards first, then the skip's player, then the mover."""

    def hit(_st: Any, _rec: dict, events: list[Any]) -> Any:
        pens = [e for e in events if isinstance(e, Penalty) and e.rule == "declaration"]
        if len({p.seat for p in pens}) < 2:
            return None
        return [e for e in events if isinstance(e, Drew)]

    obs, k, drew = _find(b, hit)
    first, second = drew[0], drew[1]
    assert first.reason == second.reason == "penalty-declaration" and first.seat != second.seat
    assert max(first.slots) < min(second.slots)
    end = _until_tokens(b, obs, k, {s for d in drew for s in d.slots})
    add("ambiguity-two-penalties-one-move", "17", "dernier: a skip played undeclared as the "
        "second-last card skips a seat holding one card; the next seat's move charges the "
        "skipped seat first (its window opened first), then the skip's player; the tokens of "
        "their cards follow", ["Ambiguity", "Rules", "Declaration", "DrawOrder"], b, k,
        _stretch(b, k, end), None)


def first_rotate_case(b: Base) -> None:
    """Point 15: a first card that is a rotate (moderno, option ``first_rotate_acts``, on by
    default) rotates the hands once the dealer names the colour; the boxes of the transfers
    follow (a reading where it only names the colour refuses them as not called for)."""

    def hit(_st: Any, _rec: dict, events: list[Any]) -> Any:
        if any(type(e).__name__ == "HandsRotated" for e in events):
            return True
        return None

    obs, k, _ = _find(b, hit)
    names = [type(e).__name__ for e in obs.events]
    at = names.index("HandsRotated")
    cards = [n for n in names[:at] if n in ("Flipped", "Played")]
    assert cards[-1] == "Flipped", "the first rotation of the match is not a first card's"
    end = k + 1
    while (obs.pub.expect_boxes or obs.pub.expect_tokens) and end < len(b.records):
        obs.receive(b.records[end])
        end += 1
    add("ambiguity-first-rotate", "17", "moderno: the first card is a rotate; once the dealer "
        "names the colour the hands rotate, and the boxes of the transfers follow",
        ["Ambiguity", "Rules", "FirstCard", "Rotate"], b, k, _stretch(b, k, end), None)


def check_ties(bases: dict[str, Base]) -> None:
    """Point 18: each ``*-3p-ties-KEY`` match ends with its two losers ranked by KEY."""
    for name, b in bases.items():
        if "-ties-" not in name:
            continue
        obs = Session(None, None, b.records[0], versions=READABLE_VERSIONS)
        for rec in b.records[1:]:
            obs.receive(rec)
        key = name.rsplit("-ties-", 1)[1]
        assert f"Tie:{key}" in tie_keys(obs.state), f"{name}: no tie decided by {key}"
