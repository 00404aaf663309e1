"""Offline play: an all-seeing ``Dealer`` that answers chance requests, and ``play_match``.

The Dealer stands in for the deck layer in tests, bots and benchmarks: it assigns faces to
slots when it answers a Shuffle, so it knows every face. ``Dealer.stacked`` fixes the faces
drawn first, for scenario tests.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from dernier_p2p.rules.cards import Card, Suit, deck_cards, parse_card, parse_cards
from dernier_p2p.rules.engine import apply, chance_needed, legal_moves, new_match, to_act
from dernier_p2p.rules.moves import ChooseDealer, Draw, Flip, Move, Pass, Play, Reveal, Shuffle
from dernier_p2p.rules.state import CUT_PHASE, PLAY_PHASE, ChanceRequest, State
from dernier_p2p.rules.variants import Rules

Policy = Callable[[State, int, dict[int, Card]], Move | None]


class Dealer:
    """A seeded oracle that deals, knows every slot's face and gives each seat its view.

    ``stack``: faces for the first draws of each new hand's deck, in draw order (a list per
    hand, or one list for the first hand); the rest of the deck follows in seeded random order.
    ``dealer``: the first dealer (else seeded). ``reshuffles``: faces in draw order for
    successive reshuffles (each list must be a sub-multiset of the cards reshuffled).
    """

    def __init__(
        self,
        rules: Rules,
        seed: int | bytes | str = 0,
        *,
        stack: Sequence[Card] | Sequence[Sequence[Card]] | None = None,
        dealer: int | None = None,
        reshuffles: Iterable[Sequence[Card]] = (),
        bottom: Card | None = None,
    ) -> None:
        self.rules = rules
        self._bottom = bottom
        self._rng = random.Random(seed)
        self._deck = deck_cards(rules.deck)
        if stack and isinstance(stack[0], Card):
            stack = [stack]  # type: ignore[list-item]
        self._stacks = [list(s) for s in (stack or [])]
        self._first_dealer = dealer
        self._reshuffles = [list(r) for r in reshuffles]
        self._faces: dict[int, dict[int, Card]] = {}

    @classmethod
    def for_hands(
        cls,
        rules: Rules,
        hands: Sequence[Sequence[Card]],
        first: Card,
        then: Sequence[Card] = (),
        dealer: int = 0,
        seed: int = 0,
        bottom: Card | None = None,
        reshuffles: Iterable[Sequence[Card]] = (),
    ) -> Dealer:
        """A dealer that deals ``hands`` (per seat), turns up ``first``, then draws ``then``.

        ``bottom``: the deck's bottom card (originale's cut); a cutter who keeps it gets a
        dealt hand one shorter, so give that seat's hand without it.
        """
        return cls(
            rules,
            seed,
            stack=[deal_order(hands, dealer, first, then)],
            dealer=dealer,
            reshuffles=reshuffles,
            bottom=bottom,
        )

    @classmethod
    def stacked(
        cls,
        rules: Rules,
        faces_in_draw_order: Sequence[Card],
        dealer: int = 0,
        seed: int = 0,
        reshuffles: Iterable[Sequence[Card]] = (),
    ) -> Dealer:
        """A dealer whose first hand draws ``faces_in_draw_order`` first (deal, then flip…)."""
        return cls(
            rules, seed, stack=[list(faces_in_draw_order)], dealer=dealer, reshuffles=reshuffles
        )

    def face(self, state: State, slot: int) -> Card:
        """The face of ``slot`` in the current hand of ``state``."""
        return self._faces[state.hand_number][slot]

    def view(self, state: State, seat: int) -> dict[int, Card]:
        """The private view of ``seat``: the faces of its hand's slots (and a cut card)."""
        faces = self._faces.get(state.hand_number)
        if faces is None:
            return {}
        out = {}
        for x in state.hands[seat]:  # a plain loop: cheaper than a comprehension's own frame
            out[x] = faces[x]
        if state.phase is CUT_PHASE and state.pile and seat == to_act(state):
            out[state.pile[-1]] = faces[state.pile[-1]]
        return out

    def chance_move(self, state: State, request: ChanceRequest | None = None) -> Move:
        """The chance move answering ``request`` (default: the state's own request)."""
        req = request if request is not None else chance_needed(state)
        if req is None:
            raise ValueError("no chance move is needed")
        if req.kind == "dealer":
            if self._first_dealer is not None:
                return ChooseDealer(self._first_dealer % state.players)
            return ChooseDealer(self._rng.randrange(state.players))
        if req.kind == "shuffle":
            return self._shuffle(state, req)
        faces = self._faces[state.hand_number]
        if req.kind == "flip":
            return Flip(faces[req.slots[0]])
        if req.kind == "reveal":
            return Reveal(tuple((x, faces[x]) for x in req.slots))
        raise ValueError(f"unknown chance request {req.kind!r}")

    def _shuffle(self, state: State, req: ChanceRequest) -> Shuffle:
        slots = tuple(range(req.first_slot, req.first_slot + req.count))
        if req.source is None:
            faces_list = list(self._deck)
            front = self._stacks.pop(0) if self._stacks else []
            back = [self._bottom] if self._bottom is not None else []
            self._bottom = None
            self._faces[state.hand_number] = self._assign(slots, faces_list, front, back)
            self._faces.pop(state.hand_number - 1, None)
        else:
            old = self._faces[state.hand_number]
            faces_list = [old[x] for x in req.source]
            front = self._reshuffles.pop(0) if self._reshuffles else []
            old.update(self._assign(slots, faces_list, front))
        return Shuffle(slots)

    def _assign(
        self,
        slots: tuple[int, ...],
        faces_list: list[Card],
        front: Sequence[Card],
        back: Sequence[Card] = (),
    ) -> dict[int, Card]:
        if not front and not back:
            return dict(zip(slots, self._permuted(faces_list), strict=True))
        rest = Counter(faces_list)
        rest.subtract(Counter(front))
        rest.subtract(Counter(back))
        if any(v < 0 for v in rest.values()) or len(front) + len(back) > len(faces_list):
            raise ValueError("the stacked faces are not all in the cards being shuffled")
        tail = []
        for c in faces_list:
            if rest[c] > 0:
                tail.append(c)
                rest[c] -= 1
        return dict(zip(slots, [*front, *self._permuted(tail), *back], strict=True))

    def _permuted(self, items: list[Card]) -> list[Card]:
        """A seeded random permutation: Fisher-Yates drawing each index by rejection from
        ``getrandbits`` (the very draws random.shuffle makes, inline, so faster)."""
        out = list(items)
        getrandbits = self._rng.getrandbits
        for i in range(len(out) - 1, 0, -1):
            n = i + 1
            k = n.bit_length()
            j = getrandbits(k)
            while j >= n:
                j = getrandbits(k)
            out[i], out[j] = out[j], out[i]
        return out


def deal_order(
    hands: Sequence[Sequence[Card]], dealer: int, first: Card, then: Sequence[Card] = ()
) -> list[Card]:
    """Faces in draw order that deal ``hands`` round by round from the dealer's next seat.

    A shorter hand (the originale cutter's) skips the last round.
    """
    n = len(hands)
    size = max(len(h) for h in hands)
    order = [(dealer + 1 + i) % n for i in range(n)]
    out: list[Card] = []
    for rnd in range(size):
        for seat in order:
            if rnd < len(hands[seat]):
                out.append(hands[seat][rnd])
    return [*out, first, *then]


def answer_chance(state: State, dealer: Dealer) -> tuple[State, list]:
    """Apply the dealer's chance moves until a seat must move; returns the state and events."""
    events: list = []
    while (req := chance_needed(state)) is not None:
        state, ev = apply(state, dealer.chance_move(state, req))
        events.extend(ev)
    return state, events


def _has_out_of_turn(state: State, seat: int) -> bool:
    if state.owes:
        return True
    return state.rules.jump_in


def play_match(
    rules: Rules,
    players: int,
    policies: Sequence[Policy],
    seed: int | bytes | str = 0,
    max_moves: int = 100_000,
    dealer: Dealer | None = None,
) -> tuple[State, list[Move]]:
    """Run a match with a Dealer; returns the final state and every move applied.

    The policy of ``to_act(state)`` decides each turn. After each applied move, the other
    seats that have out-of-turn moves (jump-in, catch, a declaration they owe) are asked in
    seat order; a policy may return None. Stops after ``max_moves`` moves (chance included).
    """
    if len(policies) != players:
        raise ValueError("one policy per seat is needed")
    deal = dealer if dealer is not None else Dealer(rules, seed)
    state = new_match(rules, players)
    moves: list[Move] = []
    offer_out_of_turn = False
    while not state.match_over and len(moves) < max_moves:
        req = chance_needed(state)
        if req is not None:
            move = deal.chance_move(state, req)
            state, _ = apply(state, move)
            moves.append(move)
            offer_out_of_turn = True
            continue
        actor = to_act(state)
        if offer_out_of_turn and state.phase is PLAY_PHASE:
            offer_out_of_turn = False
            asked = False
            for k in range(1, players):
                seat = (actor + k) % players
                if not _has_out_of_turn(state, seat):
                    continue
                view = deal.view(state, seat)
                if not legal_moves(state, seat, view):
                    continue
                move = policies[seat](state, seat, view)
                if move is not None:
                    state, _ = apply(state, move)
                    moves.append(move)
                    offer_out_of_turn = True
                    asked = True
                    break
            if asked:
                continue
        move = policies[actor](state, actor, deal.view(state, actor))
        if move is None:
            raise ValueError(f"the policy of seat {actor} returned no move in its turn")
        state, _ = apply(state, move)
        moves.append(move)
        offer_out_of_turn = True
    return state, moves


class Table:
    """A scenario driver for tests and examples: a state, its Dealer, cards named by text.

    ``Table(rules, ["7R AY", "5B 5G"], first="3R", then="9Y KB")`` deals those hands (seat
    order) with seat ``dealer`` dealing, turns up ``first`` and stacks ``then`` as the next
    draws; chance moves are answered at once. ``events`` holds the last move's events.
    """

    def __init__(
        self,
        rules: Rules,
        hands: Sequence[str],
        first: str,
        then: str = "",
        dealer: int = 0,
        bottom: str | None = None,
        reshuffles: Sequence[str] = (),
        seed: int = 0,
    ) -> None:
        cards = [parse_cards(h) for h in hands]
        if rules.hand_size_range is None and any(cards):
            keep = 1 if bottom else 0
            if sorted(len(h) for h in cards)[keep:] != [rules.hand_size] * (len(cards) - keep):
                raise ValueError(f"{rules.name} deals {rules.hand_size} cards to each hand")
        self.dealer = Dealer.for_hands(
            rules,
            cards,
            parse_card(first),
            parse_cards(then),
            dealer=dealer,
            seed=seed,
            bottom=parse_card(bottom) if bottom else None,
            reshuffles=[parse_cards(r) for r in reshuffles],
        )
        self.state = new_match(rules, len(hands))
        self.events: list = []
        self.all_events: list = []
        self._chance()

    def _chance(self) -> None:
        self.state, ev = answer_chance(self.state, self.dealer)
        self.events.extend(ev)
        self.all_events.extend(ev)

    def slot(self, seat: int, card: str) -> int:
        """A slot of ``seat``'s hand holding ``card`` (the first one)."""
        want = parse_card(card)
        for x in self.state.hands[seat]:
            if self.dealer.face(self.state, x) == want:
                return x
        raise LookupError(f"seat {seat} holds no {card}")

    def move(self, move: Move) -> list:
        """Apply ``move`` and any chance moves it calls for; returns the events."""
        self.state, ev = apply(self.state, move)
        self.events = list(ev)
        self.all_events.extend(ev)
        self._chance()
        return self.events

    def play(
        self,
        seat: int,
        card: str,
        suit: Suit | None = None,
        target: int | None = None,
        declare: bool = False,
    ) -> list:
        slot = self.slot(seat, card)
        return self.move(Play(seat, slot, parse_card(card), suit, target, declare))

    def draw(self, seat: int) -> list:
        return self.move(Draw(seat))

    def pass_(self, seat: int) -> list:
        return self.move(Pass(seat))

    def hand(self, seat: int) -> list[str]:
        """The faces of ``seat``'s hand as short forms, in slot order."""
        return [str(self.dealer.face(self.state, x)) for x in self.state.hands[seat]]

    def legal(self, seat: int) -> list[Move]:
        return legal_moves(self.state, seat, self.dealer.view(self.state, seat))
