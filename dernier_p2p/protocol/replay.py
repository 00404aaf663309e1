"""A transcript replayed move by move, with every hand shown once its cards are revealed.

:func:`replay_records` runs the same observer as :mod:`.verify` and collects, per record, the
events it caused (rules events and session events, in order). When a hand's secrets are in and
its audit passes, every position of that hand is known: the step that revealed it carries a
:class:`HandCards` with each seat's dealt hand, the cards each seat drew (in order) and each
seat's hand when the hand ended, all as card faces. Nothing here prints; the command line
narrates the steps.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dernier_p2p.protocol.bridge import card_face
from dernier_p2p.protocol.session import Session
from dernier_p2p.protocol.verify import Verdict, check_records, read_records
from dernier_p2p.rules import Card, State
from dernier_p2p.rules import events as ev


@dataclass
class HandCards:
    """The faces of one hand, known after its reveal: per seat, the dealt cards, the cards
    drawn (with the reason of each draw) and the cards held at the end."""

    hand: int
    dealt: list[list[Card]]
    drawn: list[list[tuple[Card, str]]]
    final: list[list[Card]]


@dataclass
class Step:
    """One record: its index, author, body type, the events it caused, and the hand revealed
    by it (if any)."""

    index: int
    author: int
    kind: str
    events: list[Any]
    revealed: HandCards | None = None


@dataclass
class Replay:
    """Every step up to the end (or the first fault) and the audit verdict."""

    steps: list[Step]
    verdict: Verdict
    names: list[str] = field(default_factory=list)
    variant: str | None = None


class _HandTracker:
    """Follows Dealt/Drew/CutKept events per hand and the hands before each record."""

    def __init__(self, players: int) -> None:
        self.n = players
        self.hand = 0
        self.dealt: list[list[int]] = [[] for _ in range(players)]
        self.drawn: list[list[tuple[int, str]]] = [[] for _ in range(players)]
        self.before: State | None = None
        self.revealed: set[int] = set()

    def start(self, hand: int) -> None:
        self.hand = hand
        self.dealt = [[] for _ in range(self.n)]
        self.drawn = [[] for _ in range(self.n)]

    def track(self, events: Sequence[Any]) -> None:
        for e in events:
            if isinstance(e, ev.HandStarted):
                self.start(e.hand_number)
            elif isinstance(e, ev.Dealt):
                self.dealt[e.seat].extend(e.slots)
            elif isinstance(e, ev.CutKept):
                self.dealt[e.seat].append(e.slot)
            elif isinstance(e, ev.Drew):
                if e.reason == "deal":
                    self.dealt[e.seat].extend(e.slots)
                else:
                    self.drawn[e.seat].extend((p, e.reason) for p in e.slots)

    def reveal(self, session: Session) -> HandCards | None:
        """The faces of the hand just audited, if this record revealed one."""
        new = [h for h in session.hand_cards if h not in self.revealed]
        if not new or self.before is None:
            return None
        hand = new[0]
        self.revealed.add(hand)
        cards = session.hand_cards[hand]
        deck = session.rules.deck

        def face(p: int) -> Card:
            return card_face(deck, cards[p])

        final = self.before.hands if self.before.hand_number == hand else ()
        return HandCards(
            hand,
            [[face(p) for p in seat] for seat in self.dealt],
            [[(face(p), why) for p, why in seat] for seat in self.drawn],
            [[face(p) for p in seat] for seat in final],
        )


def replay_records(records: Sequence[Any]) -> Replay:
    """Replay ``records`` (see the module docstring); stops at the first fault."""
    steps: list[Step] = []
    tracker: _HandTracker | None = None

    def on_record(i: int, rec: dict, session: Session, new: list[Any]) -> None:
        nonlocal tracker
        if tracker is None:
            tracker = _HandTracker(session.n)
        env = rec["env"]
        revealed = tracker.reveal(session)  # before tracking: the record may start a new hand
        tracker.track(new)
        steps.append(Step(i, env["seat"], env["body"]["type"], list(new), revealed))
        tracker.before = session.state

    verdict = check_records(records, on_record)
    return Replay(steps, verdict, verdict.summary.names, verdict.summary.variant)


def replay_file(path: str | os.PathLike[str]) -> Replay:
    """Read and replay the transcript at ``path`` up to a torn tail (the verdict's ``torn``);
    an unreadable file gives no steps and an ``UNREADABLE`` verdict."""
    records = read_records(path)
    if isinstance(records, Verdict):
        return Replay([], records)
    replay = replay_records(records)
    replay.verdict.torn = records.torn
    return replay
