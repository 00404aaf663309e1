"""What a seat can tell of the others' hands from the moves it sees.

A player who draws instead of playing usually holds nothing that fits; one who takes a draw
chain holds nothing that answers it; one who keeps the card just drawn could not play it. A
:class:`Tracker` follows the public states one seat is shown (a bot is shown the table only
when it may act), finds the moves the others made in between by replaying them with the rules
engine (the cards played are public, draws come off the front of the pile), and notes for each
slot of the drawer's hand the cards it is believed not to hold (``voids``). Only public
information is used; when the moves in between cannot be told (a refused move, a reshuffle
ordered otherwise, too many possibilities), nothing is inferred. A suit named and covered by a
later card before the seat looks is known only as far as that card could follow it
(:func:`named_suits`); where it is not, what is read in between holds whichever it was.

With ``plays``, a card played in turn says more of a player who sheds as the heuristic bot
does (its most valuable fitting card first: not wild, then attacks, then points): that its
other cards then held no fitting card worth more (``ranked``); and where the variant lets
players jump in, a move made in turn says that no other player who jumps in whenever it can
held a card identical to the top one (every seat is offered the out-of-turn moves first).
Those readings are dropped for good for a player once one is seen to be false: when it plays
a card from a slot it held then that would have fitted and was worth more, or that was
identical to a top card it did not jump in on (a random player, or a person, soon shows it), and
stays dropped in the match's later hands. Such a
player also names the suit it holds most of when it plays a wild card: each suit named so is
kept with the slots the player then held (``named``), for a deal of the hidden cards to favour
(:class:`~dernier_p2p.bots.belief.Belief`).
"""

from __future__ import annotations

from collections.abc import Sequence

from dernier_p2p.bots.belief import fitting
from dernier_p2p.bots.heuristic import attacks
from dernier_p2p.rules import (
    Card,
    Catch,
    Declare,
    Draw,
    IllegalMove,
    Move,
    NameSuit,
    Pass,
    Play,
    Shuffle,
    State,
    Suit,
    apply,
    deck_cards,
    legal_moves,
    to_act,
)
from dernier_p2p.rules.state import PLAY_PHASE

MAX_STEPS = 4000
"""States a replay may try before it gives up."""


def _played(state: State) -> list[tuple[int, Card]]:
    """The cards played or turned up this hand, oldest first."""
    out = []
    node = state.played
    while node is not None:
        out.append((node[0], node[1]))
        node = node[2]
    out.reverse()
    return out


def _same(a: State, b: State) -> bool:
    return (
        a.clock == b.clock and a.hands == b.hands and a.pile == b.pile
        and a.discard == b.discard and a.turn == b.turn and a.phase is b.phase
        and a.named_suit == b.named_suit and a.pending_draw == b.pending_draw
    )


def replay(start: State, end: State) -> list[tuple[State, Move]] | None:
    """The moves that lead from ``start`` to ``end`` (same hand), each with the state it was
    made in; None when none is found within :data:`MAX_STEPS`."""
    if start.hand_number != end.hand_number or start.clock > end.clock:
        return None
    plays = _played(end)
    budget = [MAX_STEPS]
    path: list[tuple[State, Move]] = []

    def seek(x: State, played: int) -> bool:
        if x.clock == end.clock:
            return _same(x, end)
        budget[0] -= 1
        if budget[0] <= 0:
            return False
        for move in _candidates(x, plays, played):
            try:
                y = apply(x, move)[0]
            except IllegalMove:
                continue
            path.append((x, move))
            if seek(y, played + (move.__class__ is Play)):
                return True
            path.pop()
        return False

    if seek(start, len(_played(start))):
        return path
    return None


def _candidates(x: State, plays: Sequence[tuple[int, Card]], played: int) -> list[Move]:
    """The public moves that could come next in ``x`` on the way to the recorded plays."""
    req = x.chance
    if req is not None:
        if req.kind == "shuffle" and req.source is not None:
            return [Shuffle(tuple(range(req.first_slot, req.first_slot + req.count)))]
        return []
    out: list[Move] = []
    if played < len(plays):
        slot, card = plays[played]
        for seat, hand in enumerate(x.hands):
            if slot in hand:
                ms = legal_moves(x, seat, {slot: card})
                found = [m for m in ms if m.__class__ is Play and m.slot == slot]
                found.sort(key=lambda m: not m.declare)
                out.extend(found)
                break
    for seat in x.owes:
        out.append(Declare(seat))
        if x.rules.declaration == "catch" and len(x.hands[seat]) == 1:
            out.extend(Catch(s, seat) for s in range(x.players) if s != seat)
    actor = to_act(x)
    if actor is not None and x.phase is PLAY_PHASE:
        if x.drawn < 0:
            out.append(Draw(actor))
        out.append(Pass(actor))  # after a draw, or with nothing left to draw
    return out


def named_suits(path: Sequence[tuple[State, Move]]) -> tuple[list[frozenset[int] | None],
                                                             list[bool]]:
    """For each step of a replayed path: the suits that may be named in force in its state
    when the replay cannot tell which (None: its state's own), and whether the suit the step
    names, if it names one, is the one named.

    The end state shows the suit named last while no card covers it, and a card played on it
    shows it as far as the rules let that card follow only some suits (a plain card follows the
    named suit; a wild card follows any): every suit under which the covering card was legal
    stays possible, and the replay took the first of them. A card that may name a suit but
    need not (``originale``'s jack) may also have named none (-1 among the suits: the card's
    own suit is to follow)."""
    n = len(path)
    force: list[frozenset[int] | None] = [None] * n
    sure = [True] * n
    for i, (x, move) in enumerate(path):
        if move.__class__ is Play:
            rank = move.card.rank
            rules = x.rules
            if rank not in rules.naming_ranks and rank not in rules.optional_naming_ranks:
                continue
            options: tuple[Suit | None, ...] = tuple(Suit)
            if rank in rules.optional_naming_ranks:
                options = (None, *options)
        elif move.__class__ is NameSuit:
            options = tuple(Suit)
        else:
            continue
        j = next((k for k in range(i + 1, n) if path[k][1].__class__ is Play), None)
        if j is None:
            continue  # (the end state shows it)
        at, cover = path[j]
        possible = frozenset(-1 if s is None else int(s) for s in options
                             if _legal_under(at, cover, s))
        if len(possible) > 1:
            sure[i] = False
            for k in range(i + 1, j + 1):
                force[k] = possible
    return force, sure


def _legal_under(x: State, play: Play, suit: Suit | None) -> bool:
    """Whether ``play``'s card was legal in ``x`` had ``suit`` been named (None: none)."""
    try:
        moves = legal_moves(x._replace(named_suit=suit), play.seat, {play.slot: play.card})
    except (IllegalMove, ValueError):
        return False
    return any(m.__class__ is Play and m.slot == play.slot for m in moves)


def shed_order(rules: object, card: Card) -> tuple[bool, bool, int]:
    """How a player who sheds as the heuristic bot does ranks ``card`` (higher first)."""
    rank = card.rank
    return (rank not in rules.wild_ranks, attacks(rules, rank), rules.card_points(rank))


class Tracker:
    """Follows one seat's observations through a hand and keeps the inferred ``voids``;
    ``plays``: read cards played in turn too (module docstring)."""

    def __init__(self, plays: bool = False) -> None:
        self.plays = plays
        self.hand = -1
        self.seat = -1
        self.last: State | None = None
        self.voids: dict[int, frozenset[Card]] = {}
        self.ranked: dict[int, dict[int, frozenset[Card]]] = {}  # seat -> slot -> cards
        self.suits: dict[int, list[tuple[tuple[int, ...], int]]] = {}  # seat -> (slots, suit)
        self.unranked: set[int] = set()  # seats seen not to shed by rank (this match)

    def observe(self, state: State, seat: int) -> dict[int, frozenset[Card]]:
        """Take in the state ``seat`` is shown now; the voids known so far (the readings of
        plays included)."""
        again = self.last is not None and state.clock < self.last.clock  # a new match
        if state.hand_number != self.hand or seat != self.seat or again:
            if seat != self.seat or state.hand_number < self.hand or again:  # (a new match)
                self.unranked = set()
            self.hand, self.seat, self.last, self.voids = state.hand_number, seat, None, {}
            self.ranked, self.suits = {}, {}
        last = self.last
        if last is not None and last.clock < state.clock:
            path = replay(last, state)
            if path is not None:
                force, sure = named_suits(path)
                for (x, move), suits, known in zip(path, force, sure, strict=True):
                    self._infer(x, move, seat, known, suits)
                    if self.plays:
                        self._read_no_jump(x, getattr(move, "seat", None), seat)
        if self.plays and to_act(state) == seat:  # its turn: the others let it come
            self._read_no_jump(state, seat, seat)
        self.last = state
        if not self.ranked:
            return self.voids
        out = dict(self.voids)
        for slots in self.ranked.values():
            for slot, void in slots.items():
                have = out.get(slot)
                out[slot] = void if have is None else have | void
        return out

    def moved(self, state: State, move: Move | None) -> None:
        """The seat chose ``move`` in ``state``: replays start after it."""
        if move is None or self.last is not state:
            return
        try:
            after = apply(state, move)[0]
        except IllegalMove:
            return
        self.last = after

    def _infer(self, x: State, move: Move, me: int, suit_known: bool = True,
               suits: frozenset[int] | None = None) -> None:
        """Read ``move``, made in ``x``; ``suit_known``: the suit it names (if any) is known;
        ``suits``: the suits that may be in force in ``x`` if not only its own
        (:func:`named_suits`)."""
        actor = getattr(move, "seat", None)
        if actor is None or actor == me or x.phase is not PLAY_PHASE:
            return
        cards = _faces(x)
        if move.__class__ is Play and self.plays:
            self._read_play(x, move, actor, cards, suit_known, suits)
        if move.__class__ is Draw:
            if x.pending_draw:
                answers = x.rules._info["answers"].get(x.pending_kind, frozenset())
                void = frozenset(c for c in cards if c.rank in answers)
                if x.rules.cancel_rank is not None and x.pending_kind == x.rules.cancel_chain:
                    void |= frozenset(c for c in cards if c.rank == x.rules.cancel_rank
                                      and (not x.rules.cancel_same_suit
                                           or c.suit is x.top.suit))
            else:
                void = fitting(x, cards, suits)
            for slot in x.hands[actor]:
                self._add(slot, void)
        elif move.__class__ is Pass and x.drawn >= 0:
            self._add(x.drawn, fitting(x, cards, suits))

    def copy(self) -> Tracker:
        """A tracker that knows what this one knows and goes on alone (a hint's search moves
        its own tracker on; the seat's stays where it is)."""
        other = Tracker(self.plays)
        other.hand, other.seat, other.last = self.hand, self.seat, self.last
        other.voids = dict(self.voids)
        other.ranked = {seat: dict(slots) for seat, slots in self.ranked.items()}
        other.suits = {seat: list(found) for seat, found in self.suits.items()}
        other.unranked = set(self.unranked)
        return other

    @property
    def named(self) -> list[tuple[tuple[int, ...], int]]:
        """The suits named by players who shed by rank, each with the slots its namer then
        held but the card played: that suit was the one it held most of among them (the
        lowest of the suits held most, as the heuristic bot names one)."""
        return [reading for seat, found in self.suits.items() if seat not in self.unranked
                for reading in found]

    def _read_play(self, x: State, move: Play, actor: int, cards: frozenset[Card],
                   suit_known: bool, suits: frozenset[int] | None = None) -> None:
        """A card played: first, does it show the actor's earlier plays were not by rank?
        Then the suit it named, if ``suit_known`` (the replay can tell it: :func:`named_suits`),
        and, played in turn by choice (no chain, not a drawn card), what it says of the actor's
        other cards (``suits``: the suits that may be in force, if not only ``x``'s own)."""
        if actor in self.unranked:
            return
        mine = self.ranked.get(actor)
        if mine is not None and move.card in mine.get(move.slot, ()):
            self.unranked.add(actor)
            del self.ranked[actor]
            self.suits.pop(actor, None)
            return
        if move.suit is not None and suit_known:
            held = tuple(slot for slot in x.hands[actor] if slot != move.slot)
            self.suits.setdefault(actor, []).append((held, int(move.suit)))
        if to_act(x) != actor or x.pending_draw or x.drawn >= 0:
            return
        rules = x.rules
        worth = shed_order(rules, move.card)
        void = frozenset(c for c in fitting(x, cards, suits) if shed_order(rules, c) > worth)
        if not void:
            return
        mine = self.ranked.setdefault(actor, {})
        for slot in x.hands[actor]:
            if slot != move.slot:
                have = mine.get(slot)
                mine[slot] = void if have is None else have | void

    def _read_no_jump(self, x: State, mover: int | None, me: int) -> None:
        """Seat ``mover`` moved (or, ``me``, is asked to move) in ``x``: if that is in turn,
        every other seat had been offered the out-of-turn moves first and took none, so a
        player who jumps in whenever it can (the heuristic bot's habit) held no card identical
        to the top one. Kept with the readings of plays (``ranked``), so a player later seen
        playing such a card from a slot it held then is seen not to play by these habits and
        all of them are dropped for it."""
        rules = x.rules
        top = x.top
        if not rules.jump_in or x.phase is not PLAY_PHASE or top is None:
            return
        actor = to_act(x)
        if mover != actor:
            return
        void = frozenset((top,))
        for seat, hand in enumerate(x.hands):
            if seat == actor or seat == me or seat in self.unranked or not hand:
                continue
            mine = self.ranked.setdefault(seat, {})
            for slot in hand:
                have = mine.get(slot)
                mine[slot] = void if have is None else have | void

    def _add(self, slot: int, void: frozenset[Card]) -> None:
        if void:
            have = self.voids.get(slot)
            self.voids[slot] = void if have is None else have | void


_FACES: dict[str, frozenset[Card]] = {}


def _faces(x: State) -> frozenset[Card]:
    """The distinct faces of ``x``'s deck."""
    deck = x.rules.deck
    found = _FACES.get(deck)
    if found is None:
        found = _FACES[deck] = frozenset(deck_cards(deck))
    return found
