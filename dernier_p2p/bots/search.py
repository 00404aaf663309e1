"""A player that searches: Monte Carlo search over the worlds its own view allows.

:class:`SearchBot` decides each move by playing the hand on many times with the real rules
engine. Each time, the cards it cannot see are dealt at random among the hidden slots
(:class:`~dernier_p2p.bots.belief.Belief`: the deck less its own hand, every public card and
what it remembers), in keeping with what it has inferred of the others' hands from their moves
(:class:`~dernier_p2p.bots.tracker.Tracker`: a player who drew rather than play held nothing
that fitted; with ``plays``, one who sheds by rank held no fitting card worth more than the one
it played), so every play-out is a world consistent with what the seat has seen. Past its own
choice, the hand is played to its end by a fast default policy close to the heuristic
bot's habits (answer chains, keep wild cards, shed attacks and costly cards, name the suit held
most, always declare, jump in), each seat seeing only its own hand. A world's result is 1 for
the seat that wins the hand (the one going out, or with a blocked or exhausted pile the fewest
points left in hand) and 0 for the others.

Two searches over those worlds (``method``):

- ``flat`` (the default): every choice is played out in the same worlds, with the same random
  choices after it (common random numbers, so that choices are compared on equal luck), and
  the weaker half of the choices is dropped after each round (sequential halving, Karnin,
  Koren and Somekh 2013). The choice with the best share of wins is the move.
- ``tree``: single-observer information-set Monte Carlo tree search (ISMCTS, Cowling, Powley
  and Whitehouse 2012): one tree shared by all the worlds, whose nodes are sequences of moves
  as the seat sees them (a card by its face, not its slot); each seat's choice at a node goes
  to the move best for that seat by UCB1, and a move is scored only against the worlds where
  it was possible (its availability). At the same budget it won fewer hands against the
  heuristic bot than ``flat`` in the short arenas run while it was built (too few hands to
  record; ``benchmarks/bench_bots.py`` measures it): with a few hundred worlds a move, the tree's
  deeper nodes see too few visits, and the exploration of weak moves there drags down the
  estimates of the choices that lead to many options.

Some choices are never searched: declaring DERNIER/SOLO and catching a player who did not are
always made at once, a play that may declare always declares, and a single legal move is made
without a thought.

:func:`dernier_p2p.bots.hint.hint` gives a person the bot's choice and its reasons in words.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dernier_p2p.bots.belief import Belief, BeliefError
from dernier_p2p.bots.heuristic import HeuristicBot, attacks
from dernier_p2p.bots.tracker import Tracker
from dernier_p2p.bots.view import own_faces, seat_moves
from dernier_p2p.rules import (
    Card,
    Catch,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    Flip,
    IllegalMove,
    Move,
    NameSuit,
    Pass,
    Play,
    Rules,
    Shuffle,
    State,
    apply,
    legal_moves,
    to_act,
)
from dernier_p2p.rules.state import (
    HAND_SIZE_PHASE,
    MATCH_OVER_PHASE,
    NAME_SUIT_PHASE,
    PLAY_PHASE,
    REVEAL_PHASE,
)

DEFAULT_ITERATIONS = 500
"""Play-outs per decision at the default level."""
EXPLORE = 0.7
"""The UCB exploration constant (results lie in [0, 1])."""
ROLLOUT_LIMIT = 500
"""Moves a play-out may run before it is judged by the cards left in hand."""
SOFT = 0.6
"""A play-out cut short gives each seat in play a share of the win proportional to
exp(-SOFT x its cards)."""
GREEDY = 0.7
"""How often a default-policy seat plays its best-ranked card rather than any fitting one."""
ANY = -1.0
"""With ``model``: the default policy of a seat seen not to shed by rank: any play at all."""
CONFIDENCE = 1.0
"""How many standard errors a choice must lead the default policy's own choice by, in the
same worlds, to be made instead of it (``flat``)."""
CLOSE = 1.0
"""With ``close``: how many times its budget more play-outs a search may give a close call
(a challenger ahead of the default policy's choice, but not clearly) in a duel of the two."""
METHODS = ("flat", "tree")
"""``flat``: every choice in the same worlds, with sequential halving; ``tree``: ISMCTS."""


# --------------------------------------------------------------------------- the default policy
class _Tables:
    """Per rule set: a rank's worth as a card to shed first (higher first) and its flags."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        wild = rules.wild_ranks
        self.worth = {}
        for rank in rules._info["flags"]:
            self.worth[rank] = (
                (0 if rank in wild else 1000)
                + (100 if attacks(rules, rank) else 0)
                + rules.card_points(rank)
            )
        self.wild = frozenset(wild)
        self.points = rules._info["points"]
        self.jump_in = rules.jump_in


_TABLES: dict[int, tuple[Rules, _Tables]] = {}


def _tables(rules: Rules) -> _Tables:
    entry = _TABLES.get(id(rules))
    if entry is None or entry[0] is not rules:
        if len(_TABLES) > 64:
            _TABLES.clear()
        entry = _TABLES[id(rules)] = (rules, _Tables(rules))
    return entry[1]


def _best_suit(hand: Sequence[int], faces: Mapping[int, Card], skip: int = -1) -> int:
    """The suit held most among ``hand``'s faces (but slot ``skip``); lowest on a tie."""
    count = [0, 0, 0, 0]
    for x in hand:
        if x != skip:
            suit = faces[x].suit
            if suit is not None:
                count[suit] += 1
    best = 0
    for s in (1, 2, 3):
        if count[s] > count[best]:
            best = s
    return best


def _fewest(state: State, seat: int) -> int:
    """The other seat in play holding the fewest cards (lowest on a tie)."""
    hands = state.hands
    out = state.out
    best, size = -1, 1 << 30
    for t in range(state.players):
        if t != seat and t not in out and len(hands[t]) < size:
            best, size = t, len(hands[t])
    return best


def _options_of(moves: Sequence[Move], slot: int, state: State, faces: Mapping[int, Card]) -> Move:
    """Among the plays of ``slot``: declaring, naming the suit held most, swapping with the
    seat holding fewest cards."""
    first = None
    suit = target = None
    for m in moves:
        if m.__class__ is not Play or m.slot != slot:
            continue
        if first is None:
            first = m
        if suit is None and m.suit is not None:
            suit = _best_suit(state.hands[m.seat], faces, slot)
        if target is None and m.target is not None:
            target = _fewest(state, m.seat)
    best = first
    for m in moves:
        if m.__class__ is not Play or m.slot != slot:
            continue
        if (suit is None or m.suit == suit) and (target is None or m.target == target):
            best = m
            if m.declare:
                break
    assert best is not None
    return best


def default_move(
    state: State, seat: int, faces: Mapping[int, Card], rng: random.Random, tab: _Tables,
    greedy: float = GREEDY,
) -> Move:
    """The default policy's move for ``seat`` to act, seeing every face in ``faces``: its
    best-ranked fitting card ``greedy`` of the time, else any; with ``greedy`` below 0
    (:data:`ANY`), any play at all, as a random player chooses."""
    moves = legal_moves(state, seat, faces)
    phase = state.phase
    if phase is not PLAY_PHASE:
        if phase is NAME_SUIT_PHASE:
            suit = _best_suit(state.hands[seat], faces)
            for m in moves:
                if m.suit == suit:
                    return m
        if phase is HAND_SIZE_PHASE:
            return moves[int(rng.random() * len(moves))]
        return moves[0]
    if greedy < 0:
        n = 0
        for m in moves:
            if m.__class__ is not Play:
                break
            n += 1
        if n:
            return moves[int(rng.random() * n)]
    worth = tab.worth
    best_slot, best_worth, n = -1, -1.0, 0
    by_rank = rng.random() < greedy
    for m in moves:
        if m.__class__ is not Play:
            break
        n += 1
        w = worth[m.card.rank] + (rng.random() * (1.0 if by_rank else 2000.0))
        if w > best_worth:
            best_slot, best_worth = m.slot, w
    if n == 0:
        for m in moves:
            if m.__class__ is Draw or m.__class__ is Pass:
                return m
        return moves[0]
    if n == 1:
        return moves[0]
    return _options_of(moves, best_slot, state, faces)


def _answer(state: State, faces: dict[int, Card], rng: random.Random) -> State:
    """Answer the chance request of ``state`` from the world ``faces`` (new slots get faces)."""
    req = state.chance
    if req.kind == "shuffle" and req.source is not None:
        slots = tuple(range(req.first_slot, req.first_slot + req.count))
        cards = [faces[x] for x in req.source]
        rng.shuffle(cards)
        for x, c in zip(slots, cards, strict=True):
            faces[x] = c
        return apply(state, Shuffle(slots))[0]
    if req.kind == "flip":
        return apply(state, Flip(faces[req.slots[0]]))[0]
    raise BeliefError(f"a search cannot answer a {req.kind} request")


def _jump_in(state: State, faces: Mapping[int, Card], rng: random.Random, tab: _Tables) -> State:
    """Jump-ins after a play: the first seat (from the next to act) holding a card identical
    to the top jumps in with it, and so on while one does."""
    while True:
        top = state.top
        if top is None or state.chance is not None or state.phase is not PLAY_PHASE:
            return state
        n = state.players
        actor = state.turn
        jumped = False
        for k in range(1, n):
            seat = (actor + k) % n
            hand = state.hands[seat]
            for x in hand:
                c = faces[x]
                if c.rank is top.rank and c.suit is top.suit:
                    break
            else:
                continue
            moves = legal_moves(state, seat, faces)
            slot = next((m.slot for m in moves if m.__class__ is Play), -1)
            if slot < 0:
                continue
            move = _options_of(moves, slot, state, faces)
            state = apply(state, move)[0]
            jumped = True
            break
        if not jumped:
            return state


def _settle(
    state: State, faces: dict[int, Card], rng: random.Random, tab: _Tables, played: bool
) -> State:
    """Everything the table does before the next seat decision: chance requests answered from
    the world, owed declarations made, jump-ins after a play (``played``)."""
    while True:
        if played and tab.jump_in:
            state = _jump_in(state, faces, rng, tab)
            played = False
        phase = state.phase
        if phase is REVEAL_PHASE or phase is MATCH_OVER_PHASE:
            return state
        if state.chance is not None:
            state = _answer(state, faces, rng)
            continue
        owes = state.owes
        if owes:
            try:
                state = apply(state, Declare(owes[0]))[0]
            except IllegalMove:
                return state
            continue
        return state


def _result(state: State, faces: Mapping[int, Card], tab: _Tables) -> list[float]:
    """Each seat's share of the win of a finished (or cut short) play-out."""
    n = state.players
    out = [0.0] * n
    if state.phase is MATCH_OVER_PHASE and state.winner is not None:
        out[state.winner] = 1.0
        return out
    winner = state.hand_winner
    if winner is not None:
        out[winner] = 1.0
        return out
    finished = state.phase is REVEAL_PHASE
    if not finished:  # cut short: the fewer cards a seat holds, the likelier it goes out
        weights = [0.0 if seat in state.out else math.exp(-SOFT * len(state.hands[seat]))
                   for seat in range(n)]
        total = sum(weights)
        return [w / total for w in weights]
    points = tab.points
    best: list[int] = []
    low = 1 << 30
    for seat in range(n):
        if seat in state.out:
            continue
        hand = state.hands[seat]
        value = sum(points.get(faces[x].rank, 0) for x in hand)
        if value < low:
            best, low = [seat], value
        elif value == low:
            best.append(seat)
    for seat in best:
        out[seat] = 1.0 / len(best)
    return out


def playout(
    state: State, faces: dict[int, Card], rng: random.Random, tab: _Tables,
    limit: int = ROLLOUT_LIMIT, greedy: Sequence[float] | None = None,
) -> list[float]:
    """Play the hand on from ``state`` (settled) by the default policy (``greedy``: each
    seat's, else :data:`GREEDY` for all); each seat's result."""
    moves = 0
    jump_in = tab.jump_in
    while True:
        phase = state.phase
        if phase is REVEAL_PHASE or phase is MATCH_OVER_PHASE or moves >= limit:
            return _result(state, faces, tab)
        if state.chance is not None or state.owes:
            settled = _settle(state, faces, rng, tab, False)
            if settled is not state:
                state = settled
                moves += 1
                continue
        actor = to_act(state)
        move = default_move(state, actor, faces, rng, tab,
                            GREEDY if greedy is None else greedy[actor])
        state = apply(state, move)[0]
        moves += 1
        if jump_in and move.__class__ is Play:
            state = _jump_in(state, faces, rng, tab)


# --------------------------------------------------------------------------- the tree
def move_key(move: Move) -> tuple:
    """A move as a seat sees it: its card by face, not by slot."""
    cls = move.__class__
    if cls is Play:
        return (move.seat, move.card, move.suit, move.target)
    if cls is NameSuit:
        return (move.seat, "suit", move.suit)
    if cls is ChooseHandSize:
        return (move.seat, "size", move.size)
    if cls is Cut:
        return (move.seat, "cut", move.keep)
    return (move.seat, cls.__name__)


def choices(moves: Sequence[Move]) -> list[Move]:
    """The moves worth telling apart: one per key, a play that may declare declaring."""
    out: dict[tuple, Move] = {}
    for m in moves:
        key = move_key(m)
        have = out.get(key)
        if have is None or (m.__class__ is Play and m.declare and not have.declare):
            out[key] = m
    return list(out.values())


class _Node:
    """A node of the tree: the move that led here (as seen), by whom, and its statistics."""

    __slots__ = ("who", "visits", "avail", "total", "children")

    def __init__(self, who: int) -> None:
        self.who = who
        self.visits = 0
        self.avail = 0
        self.total = 0.0
        self.children: dict[tuple, _Node] = {}


@dataclass(frozen=True)
class Option:
    """One choice at the root and what the search made of it."""

    move: Move | None  # None: let the table go on (out of turn)
    visits: int  # worlds it was played out in
    wins: float  # its mean result for the searching seat: the share of those worlds won


@dataclass(frozen=True)
class Decision:
    """The search's answer: the move chosen (None: no move out of turn), every option it
    weighed, and how many worlds it played."""

    move: Move | None
    options: tuple[Option, ...]
    iterations: int
    seconds: float
    searched: bool  # False: the move needed no search (a single choice, a declaration...)


def _select(node: _Node, keys: list[tuple], rng: random.Random) -> tuple | None:
    """UCB1 over the children available now; None when one is still untried (then the caller
    expands one of them)."""
    children = node.children
    best, best_value = None, -1.0
    untried = False
    for key in keys:
        child = children.get(key)
        if child is None:
            untried = True
            continue
        child.avail += 1
        if untried:
            continue
        value = child.total / child.visits + EXPLORE * math.sqrt(
            math.log(child.avail) / child.visits
        )
        if value > best_value:
            best, best_value = key, value
    return None if untried else best


def _search(
    state: State,
    seat: int,
    belief: Belief,
    options: list[Move | None],
    rng: random.Random,
    iterations: int | None,
    seconds: float | None,
) -> tuple[list[_Node], int]:
    """Run the search; the root's children (one per option) and the worlds played."""
    tab = _tables(state.rules)
    roots = [_Node(seat) for _ in options]
    deadline = None if seconds is None else time.perf_counter() + seconds
    done = 0
    cap = iterations if iterations is not None else 1 << 62
    total_root = 0
    while done < cap:
        if deadline is not None and done % 8 == 0 and done and time.perf_counter() >= deadline:
            break
        faces = belief.deal(rng)
        # the root: every option is available in every world
        total_root += 1
        pick = -1
        best_value = -1.0
        log_n = math.log(total_root)
        for i, node in enumerate(roots):
            if node.visits == 0:
                pick = i
                break
            value = node.total / node.visits + EXPLORE * math.sqrt(log_n / node.visits)
            if value > best_value:
                pick, best_value = i, value
        path = [roots[pick]]
        move = options[pick]
        st = state
        if move is not None:
            st = apply(st, move)[0]
        st = _settle(st, faces, rng, tab, move.__class__ is Play)
        node = roots[pick]
        expanded = node.visits == 0
        while not expanded:
            phase = st.phase
            if phase is REVEAL_PHASE or phase is MATCH_OVER_PHASE:
                break
            actor = to_act(st)
            cands = choices(legal_moves(st, actor, faces))
            keys = [move_key(m) for m in cands]
            key = _select(node, keys, rng)
            if key is None:  # expand an untried move
                untried = [k for k in keys if k not in node.children]
                key = untried[int(rng.random() * len(untried))]
                child = node.children[key] = _Node(actor)
                child.avail = 1
                expanded = True
            else:
                child = node.children[key]
            chosen = cands[keys.index(key)]
            st = apply(st, chosen)[0]
            st = _settle(st, faces, rng, tab, chosen.__class__ is Play)
            path.append(child)
            node = child
        result = playout(st, faces, rng, tab)
        for n in path:
            n.visits += 1
            n.total += result[n.who]
        done += 1
    return roots, done


def _flat_search(
    state: State,
    seat: int,
    belief: Belief,
    options: list[Move | None],
    rng: random.Random,
    iterations: int | None,
    seconds: float | None,
    horizon: int = ROLLOUT_LIMIT,
    base: int = 0,
    close: float = 0.0,
    greedy: Sequence[float] | None = None,
) -> tuple[list[tuple[int, float]], int, int]:
    """Every option played out in the same worlds (common random numbers: the same deal of
    the hidden cards and the same random choices after the move), the weaker half dropped
    after each round (sequential halving; the ``base`` option, the default policy's own
    choice, is never dropped). Returns (visits, total) per option, the play-outs made and the
    option chosen: the one whose lead over ``base`` in the same worlds is largest, if that lead
    stands :data:`CONFIDENCE` standard errors above nothing, else ``base``.

    ``close``: when the budget is spent and the best challenger leads ``base`` but not by
    enough to be chosen, up to ``close`` times the budget more play-outs go to those two alone
    (the challenger and ``base``, in new shared worlds) before the choice is made."""
    tab = _tables(state.rules)
    k = len(options)
    visits = [0] * k
    totals = [0.0] * k
    lead = [0.0] * k  # sum over shared worlds of (option's result - base's result)
    lead_sq = [0.0] * k
    alive = list(range(k))
    deadline = None if seconds is None else time.perf_counter() + seconds
    done = 0
    rounds = max(1, math.ceil(math.log2(k)))
    budget = iterations if iterations is not None else 1 << 62
    per_round = budget // rounds if iterations is not None else 1 << 62
    got = [0.0] * k

    def play(worlds: int) -> None:
        nonlocal done
        for _ in range(worlds):
            if deadline is not None and done and time.perf_counter() >= deadline:
                break
            faces = belief.deal(rng)
            seed = rng.getrandbits(64)
            for i in alive:
                world = dict(faces)
                local = random.Random(seed)
                move = options[i]
                st = state if move is None else apply(state, move)[0]
                st = _settle(st, world, local, tab, move.__class__ is Play)
                got[i] = result = playout(st, world, local, tab, horizon, greedy)[seat]
                totals[i] += result
                visits[i] += 1
                done += 1
            at_base = got[base]
            for i in alive:
                d = got[i] - at_base
                lead[i] += d
                lead_sq[i] += d * d

    def choose() -> tuple[int, int, float]:
        """The option chosen now (the challenger with the best score, if above nothing, else
        ``base``), and the challenger with the best mean lead and that lead."""
        best, best_score = base, 0.0
        top, top_mean = -1, 0.0
        for i in range(k):
            n = visits[i]
            if i == base or n < 2:
                continue
            mean = lead[i] / n
            var = max(0.0, lead_sq[i] / n - mean * mean)
            score = mean - CONFIDENCE * math.sqrt(var / (n - 1))
            if top < 0 or mean > top_mean:
                top, top_mean = i, mean
            if score > best_score:
                best, best_score = i, score
        return best, top, top_mean

    for r in range(rounds):
        worlds = max(1, per_round // len(alive))
        if r == rounds - 1 and iterations is not None:
            worlds = max(1, (budget - done) // len(alive))
        play(worlds)
        if deadline is not None and time.perf_counter() >= deadline:
            break
        if len(alive) > 2 and r < rounds - 1:
            alive.sort(key=lambda i: -lead[i] / max(1, visits[i]))
            keep = alive[: max(1, math.ceil(len(alive) / 2))]
            if base not in keep:
                keep.append(base)
            alive = keep
    best, top, top_mean = choose()
    if close > 0 and iterations is not None and best == base and top >= 0 and top_mean > 0:
        alive = [base, top]
        play(max(1, int(close * budget) // 2))
        best, top, top_mean = choose()
    return [(visits[i], totals[i]) for i in range(k)], done, best


def baseline(state: State, seat: int, faces: Mapping[int, Card], options: Sequence[Move | None]
             ) -> int:
    """The index in ``options`` of the default policy's own choice (its best-ranked card,
    without chance), which a search keeps unless another choice beats it clearly."""
    tab = _tables(state.rules)
    moves = legal_moves(state, seat, faces)
    choice: Move | None = None
    plays = [m for m in moves if m.__class__ is Play]
    if state.phase is PLAY_PHASE and plays:
        worth = tab.worth
        slot = max(plays, key=lambda m: worth[m.card.rank]).slot
        choice = _options_of(moves, slot, state, faces)
    elif state.phase is PLAY_PHASE and to_act(state) == seat:
        choice = next((m for m in moves if m.__class__ is Draw or m.__class__ is Pass), None)
    elif state.phase is NAME_SUIT_PHASE:
        suit = _best_suit(state.hands[seat], faces)
        choice = next((m for m in moves if m.suit == suit), None)
    elif state.phase is HAND_SIZE_PHASE and moves:
        choice = min(moves, key=lambda m: m.size)
    keys = [None if m is None else move_key(m) for m in options]
    key = None if choice is None else move_key(choice)
    return keys.index(key) if key in keys else 0


# --------------------------------------------------------------------------- the bot
def root_options(state: State, seat: int, view: Mapping[int, Card]) -> tuple[list[Move | None],
                                                                          bool]:
    """The choices a search weighs for ``seat`` now, and whether it is the seat's turn.

    Empty when the seat has nothing to do; a single move when no search is needed (a
    declaration, a catch, one legal move). Out of turn, None (let the table go on) comes first.
    """
    moves, in_turn = seat_moves(state, seat, view)
    if not moves:
        return [], in_turn
    declares = [m for m in moves if m.__class__ is Declare]
    if declares:
        return [declares[0]], in_turn
    catches = [m for m in moves if m.__class__ is Catch]
    if catches:
        return [min(catches, key=lambda m: m.target)], in_turn
    found: list[Move | None] = list(choices(moves))
    if not in_turn:
        found = [None, *found]
    return found, in_turn


class SearchBot:
    """A policy that searches (see the module docstring); usable with ``play_match``.

    ``iterations``: play-outs per decision (a hand played on to its end in one world after one
    choice); ``seconds``: a time limit per decision (the first reached ends the search; neither
    given: :data:`DEFAULT_ITERATIONS`). ``method``: ``flat`` or ``tree`` (module docstring).
    ``close`` (``flat``, with an iteration budget): up to that many times the budget more
    play-outs for a close call, a challenger ahead of the default policy's choice but not by
    enough to be chosen, played against it alone.
    ``infer``: use what the tracker inferred of the others' hands; ``plays``: the tracker also
    reads the cards others play in turn as a player who sheds by rank would have chosen them,
    for each player until it is seen not to (:class:`~.tracker.Tracker`); ``model`` (with
    ``plays``): a player seen not to shed by rank is played in the play-outs as a random
    player, any fitting card (:data:`ANY`). ``seed`` makes its choices
    reproducible: with an iteration budget the same view, after the same public states seen
    before it in the hand, gives the same move. Within a hand it remembers the faces it has
    held (a card given away in a swap is still known where it went) and what it inferred.
    ``last`` holds the last :class:`Decision`.
    """

    slow = True  # a live table runs it off the network's thread

    def __init__(
        self, seed: int = 0, *, iterations: int | None = None, seconds: float | None = None,
        method: str = "flat", infer: bool = True, horizon: int = ROLLOUT_LIMIT,
        close: float = 0.0, plays: bool = True, model: bool = True,
    ) -> None:
        self.model = model
        self.horizon = horizon
        if not close >= 0:
            raise ValueError(f"close must be zero or more, not {close!r}")
        self.close = close
        if method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
        self.method = method
        self.infer = infer
        if iterations is not None and (type(iterations) is not int or iterations < 1):
            raise ValueError(f"iterations must be a positive integer, not {iterations!r}")
        if seconds is not None and not seconds > 0:
            raise ValueError(f"seconds must be positive, not {seconds!r}")
        if iterations is None and seconds is None:
            iterations = DEFAULT_ITERATIONS
        self.seed = seed
        self.rng = random.Random(seed)
        self.iterations = iterations
        self.seconds = seconds
        self.last: Decision | None = None
        self._memory: dict[int, Card] = {}
        self._memory_hand = (-1, -1)
        self._memory_clock = -1
        self._fallback = HeuristicBot(seed)
        self.tracker = Tracker(plays=plays)

    def __call__(self, state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
        return self.decide(state, seat, view).move

    def _remember(self, state: State, seat: int, view: Mapping[int, Card]) -> dict[int, Card]:
        key = (state.hand_number, seat)
        if key != self._memory_hand or state.clock < self._memory_clock:  # (clock: a new match)
            self._memory, self._memory_hand = {}, key
        self._memory_clock = state.clock
        self._memory.update(own_faces(state, seat, view))
        return self._memory

    def decide(self, state: State, seat: int, view: Mapping[int, Card]) -> Decision:
        """The move for ``seat`` and how it was found."""
        start = time.perf_counter()
        memory = self._remember(state, seat, view)
        voids = self.tracker.observe(state, seat)
        options, _ = root_options(state, seat, view)
        if len(options) <= 1:
            move = options[0] if options else None
            self.tracker.moved(state, move)
            self.last = Decision(move, (), 0, time.perf_counter() - start, False)
            return self.last
        try:
            belief = Belief(state, seat, view, memory, voids if self.infer else None,
                            self.tracker.named if self.infer else None)
        except BeliefError:
            move = self._fallback(state, seat, view)
            self.tracker.moved(state, move)
            self.last = Decision(move, (), 0, time.perf_counter() - start, False)
            return self.last
        if self.method == "flat":
            base = baseline(state, seat, own_faces(state, seat, view), options)
            greedy = None
            if self.model and self.tracker.unranked:
                greedy = tuple(ANY if t in self.tracker.unranked else GREEDY
                               for t in range(state.players))
            found, done, best = _flat_search(state, seat, belief, options, self.rng,
                                             self.iterations, self.seconds, self.horizon, base,
                                             self.close, greedy)
        else:
            roots, done = _search(state, seat, belief, options, self.rng, self.iterations,
                                  self.seconds)
            found = [(n.visits, n.total) for n in roots]
            best = max(range(len(found)), key=lambda i: (found[i][0], found[i][1], -i))
        stats = tuple(
            Option(m, n, total / n if n else 0.0)
            for m, (n, total) in zip(options, found, strict=True)
        )
        self.tracker.moved(state, options[best])
        self.last = Decision(options[best], stats, done, time.perf_counter() - start, True)
        return self.last
