"""What one seat knows of the cards, and deals of the hidden cards consistent with it.

A seat knows the faces of its own hand (its view), every public face (played, turned up, shown)
and what it remembers from its own earlier views (the cards it gave away in a swap or a
rotation, the bottom card it saw while cutting). Every other slot in a hand or in the draw pile
is hidden; the cards they hold are the deck less every card the seat can place. A
:class:`Belief` deals those unseen cards to the hidden slots at random, so that a search can
play the hand on with the real rules engine as if every face were known.

It may also hold what the seat has inferred of the others' hands (``voids``): a slot that
could not be played when its holder drew instead is dealt, when the unseen cards allow it, a
card that would not have fitted then. And suits named as the suit held most (``named``: slots
and a suit). A deal is made again, up to :data:`TRIES` times, while it breaks a void (the
slots dealt first took every card another could hold) or a named suit is not the lowest of
the suits held most among those slots' cards, and the deal that breaks fewest is kept.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from dernier_p2p.bots.view import own_faces
from dernier_p2p.rules import Card, State, deck_cards

TRIES = 8
"""Deals tried, at most, for one that keeps every void and every named suit."""


class BeliefError(ValueError):
    """The seat's view does not fit the public state (more cards placed than the deck holds)."""


class Belief:
    """The known faces and the hidden slots of ``state`` as seen by ``seat``.

    ``known``: every slot whose face the seat knows (public faces, its own hand, ``memory``
    entries for slots still in play). ``hidden``: the slots in hands or in the pile whose faces
    it does not know, in a fixed order. ``unseen``: the cards those slots hold between them (a
    multiset as a list, in deck order). ``voids``: slot -> cards that slot is believed not to
    hold (see the module docstring).
    """

    def __init__(
        self,
        state: State,
        seat: int,
        view: Mapping[int, Card],
        memory: Mapping[int, Card] | None = None,
        voids: Mapping[int, frozenset[Card]] | None = None,
        named: list[tuple[tuple[int, ...], int]] | None = None,
    ) -> None:
        public = state.faces
        known: dict[int, Card] = dict(public)
        known.update(own_faces(state, seat, view))
        live = [x for hand in state.hands for x in hand]
        live.extend(state.pile)
        if memory:
            for x in live:
                if x not in known and x in memory:
                    known[x] = memory[x]
        placed: dict[Card, int] = {}
        for x in state.discard:
            card = public.get(x)
            if card is None:
                raise BeliefError(f"discard slot {x} has no public face")
            placed[card] = placed.get(card, 0) + 1
        hidden: list[int] = []
        for x in live:
            card = known.get(x)
            if card is None:
                hidden.append(x)
            else:
                placed[card] = placed.get(card, 0) + 1
        unseen: list[Card] = []
        for card in deck_cards(state.rules.deck):
            n = placed.get(card, 0)
            if n:
                placed[card] = n - 1
            else:
                unseen.append(card)
        if any(placed.values()) or len(unseen) != len(hidden):
            raise BeliefError(
                f"{len(hidden)} hidden slots but {len(unseen)} unseen cards: the view does not "
                "fit the table"
            )
        self.known = known
        self.hidden = tuple(hidden)
        self.unseen = tuple(unseen)
        self.voids: dict[int, frozenset[Card]] = {
            x: v for x, v in (voids or {}).items() if x in set(hidden)
        }
        # slots with a belief first: each takes a fitting card while any is left (cards are
        # the deck's canonical objects: compared by id, which hashes fast)
        self._void_ids = {x: frozenset(map(id, v)) for x, v in self.voids.items()}
        self._constrained = tuple(x for x in hidden if x in self.voids)
        self._free = tuple(x for x in hidden if x not in self.voids)
        hidden_set = set(hidden)
        # (readings whose slots are all known already tell the deal nothing)
        self.named = [(slots, suit) for slots, suit in (named or ())
                      if any(x in hidden_set for x in slots)]

    def deal(self, rng: random.Random) -> dict[int, Card]:
        """Every face: the known ones and a random deal of the unseen cards to the hidden slots
        (a new dict, the caller's to change). A deal that breaks a void (the cards left
        could not honour it) or a named suit is made again, up to :data:`TRIES` times, and
        the one that breaks fewest is kept."""
        best, broken = None, 1 << 30
        for _ in range(TRIES):
            faces, wrong = self._deal(rng)
            for slots, suit in self.named:
                wrong += not _held_most(faces, slots, suit)
            if wrong < broken:
                best, broken = faces, wrong
                if not wrong:
                    break
        assert best is not None
        return best

    def _deal(self, rng: random.Random) -> tuple[dict[int, Card], int]:
        """One deal, and how many voids it could not honour."""
        faces = dict(self.known)
        cards = list(self.unseen)
        n = len(cards)
        getrandbits = rng.getrandbits
        i = 0
        missed = 0
        for x in self._constrained:  # a random fitting card from those left, if any
            void = self._void_ids[x]
            fits = [k for k in range(i, n) if id(cards[k]) not in void]
            if fits:
                j = fits[_below(getrandbits, len(fits))]
            else:
                j = i + _below(getrandbits, n - i)
                missed += 1
            cards[i], cards[j] = cards[j], cards[i]
            faces[x] = cards[i]
            i += 1
        for x in self._free:  # Fisher-Yates, one step per slot
            j = i + _below(getrandbits, n - i)
            cards[i], cards[j] = cards[j], cards[i]
            faces[x] = cards[i]
            i += 1
        return faces, missed


def _held_most(faces: Mapping[int, Card], slots: tuple[int, ...], suit: int) -> bool:
    """Whether ``suit`` is the lowest of the suits held most among ``slots``' faces (the
    first suit when none is held)."""
    count = [0, 0, 0, 0]
    for x in slots:
        card = faces.get(x)
        if card is not None and card.suit is not None:
            count[card.suit] += 1
    top = max(count)
    return count[suit] == top and all(count[s] < top for s in range(suit))


def _below(getrandbits, n: int) -> int:  # noqa: ANN001 - rng.getrandbits
    """A uniform integer in [0, n) drawn by rejection (as random.randrange does, inline)."""
    k = n.bit_length()
    j = getrandbits(k)
    while j >= n:
        j = getrandbits(k)
    return j


def fitting(state: State, cards: Iterable[Card], suits: frozenset[int] | None = None
            ) -> frozenset[Card]:
    """Of ``cards``, those that could be played in turn on ``state``'s discard with no chain
    pending: wild cards, the suit to follow, the top card's rank. ``suits``: the suits that
    may have been named (the state's own is one of them, not known to be the one): only the
    cards that fit whichever it was, wild cards and the top card's rank."""
    top = state.top
    if top is None:
        return frozenset()
    wild = state.rules.wild_ranks
    if suits is not None and len(suits) > 1:
        return frozenset(c for c in cards if c.rank in wild or c.rank is top.rank)
    suit = state.effective_suit
    return frozenset(c for c in cards if c.rank in wild or c.rank is top.rank or c.suit is suit)
