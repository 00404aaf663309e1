"""Rule sets: each variant is a frozen ``Rules`` built from named options.

Every reading of the rules digest is an option whose default is our reading; docs/RULES.md
states each option, its default and what the alternative means.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from dernier_p2p.rules.cards import NUMBER_RANKS, Rank, deck_cards

R = Rank

MATCH_KINDS = ("hands", "target", "wins", "penalty_limit", "first_to")
# the values of ``Rules.readings``: the readings of protocol version 3 (also read for version 2)
# and of version 4
READINGS = (3, 4)


@dataclass(frozen=True)
class MatchFormat:
    """How a match ends: ``kind`` in MATCH_KINDS and its ``value``."""

    kind: str
    value: int

    def __post_init__(self) -> None:
        if self.kind not in MATCH_KINDS:
            raise ValueError(f"unknown match kind {self.kind!r}; known: {', '.join(MATCH_KINDS)}")
        if type(self.value) is not int or self.value < 1:
            raise ValueError(f"match value must be a positive integer, not {self.value!r}")


# Per-rank flags computed once per rule set (bit masks read on the hot path).
WILD = 1  # playable on any card
NAMES = 2  # the player must name a suit
NAMES_OPT = 4  # the player may name a suit
SKIP = 8
REVERSE = 16
SWAP = 32
ROTATE = 64
CHAIN = 128  # starts/continues an answerable draw chain on the next player
FORCED = 256  # next player draws at once and is skipped
PREVIOUS = 512  # previous player draws at once
CANCEL = 1024  # cancels a pending chain of ``cancel_chain``
FLAG_BITS = 2047


@dataclass(frozen=True)
class Rules:
    """A complete rule set. Options marked (reading) in docs/RULES.md default to our reading."""

    name: str
    deck: str
    min_players: int
    max_players: int
    match: MatchFormat
    hand_size: int
    # originale: the dealer chooses the hand size in this inclusive range (None: fixed hand_size)
    hand_size_range: tuple[int, int] | None = None
    cut: bool = False  # originale cut: dealer's previous player may keep a special bottom card
    special_ranks: tuple[Rank, ...] = ()  # what the cut may keep
    wild_ranks: tuple[Rank, ...] = ()
    naming_ranks: tuple[Rank, ...] = ()  # must name a suit
    optional_naming_ranks: tuple[Rank, ...] = ()  # may name a suit (originale J)
    skip_ranks: tuple[Rank, ...] = ()
    reverse_ranks: tuple[Rank, ...] = ()
    swap_ranks: tuple[Rank, ...] = ()
    rotate_ranks: tuple[Rank, ...] = ()
    # answerable chains: (rank, cards each adds); the victim answers with the same rank
    chain_draws: tuple[tuple[Rank, int], ...] = ()
    # (answer, chain kind): answer may also join a chain of that kind, which becomes its kind
    chain_joins: tuple[tuple[Rank, Rank], ...] = ()
    cancel_rank: Rank | None = None  # originale: a 2 cancels a pending chain of cancel_chain
    cancel_chain: Rank | None = None
    cancel_same_suit: bool = True  # (reading) the 2 must be of the top A's suit
    forced_draws: tuple[tuple[Rank, int], ...] = ()  # next draws at once and is skipped
    previous_draws: tuple[tuple[Rank, int], ...] = ()  # previous player draws at once
    taking_ends_turn: bool = True  # (reading, dernier) taking a chain ends the victim's turn
    reverse_skips_with_two: bool = False  # (reading) with 2 players a reverse changes nothing else
    first_card: str = "dealer"  # "dealer": as if played by the dealer; "standard": seed 004
    first_swap_acts: bool = False  # (reading, moderno) a first SWAP does nothing
    first_rotate_acts: bool = True  # (reading, moderno) a first ROTATE rotates the hands
    # (seed 003) a swap/rotate played as the second-last card needs the declaration with the
    # play, judged on the one card left before the exchange; False: judged on the hand the
    # exchange leaves (a player who receives several cards owes nothing)
    declare_before_exchange: bool = True
    declaration: str = "window"  # "window" | "with_play" | "catch"
    declaration_penalty: int = 2
    skipped_one_card_declares: bool = False  # dernier: a one-card player skipped by a Q
    pile_empty: str = "end"  # "end" (dernier) | "reshuffle"
    last_card_draws: bool = True  # the last card's draw still happens
    jump_in: bool = False
    errors_penalised: bool = False  # originale: wrong plays are taken back and cost a draw
    error_penalty: int = 2
    timeout: str = "forfeit"  # "forfeit" | "penalty" (draw error_penalty, pass) | "draw_pass"
    # a Leave at three or more seats in play: "end" the match (seed 000/001, the leaver
    # forfeits) or "play_on" (the seat goes out, the others play a new hand)
    leave: str = "play_on"
    scoring: str = "dernier"  # "dernier" | "wins" | "penalty" | "winner_takes"
    out_bonus: int = 50
    others_score: bool = True  # (reading, dernier) others score the other players' cards
    points: tuple[tuple[Rank, int], ...] = ()  # card points; number ranks not listed: face value
    # Which readings of three points the engine follows (docs/RULES.md "Readings by protocol
    # version"): 4, the seeds' (a dernier leave ends the match as option leave says; a seat at
    # one card that draws on its own extra turn pays its declaration penalty first; a first
    # reverse at two seats lets the dealer start); 3, the earlier ones, which transcripts of
    # protocol versions 2 and 3 are read with (option leave does not exist: a seat that leaves
    # three or more in play goes out; the own draw lets the obligation lapse; the dealer's next
    # seat starts after a first reverse at two seats unless reverse_skips_with_two; a forfeit
    # gives +1 to the seats out too). Not a table option: a session takes it from the version.
    readings: int = 4
    _info: dict = field(default=None, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        _check_options(self)
        checks = (
            (self.declaration in ("window", "with_play", "catch"), "declaration"),
            (self.pile_empty in ("end", "reshuffle"), "pile_empty"),
            (self.timeout in ("forfeit", "penalty", "draw_pass"), "timeout"),
            (self.leave in ("end", "play_on"), "leave"),
            (self.scoring in ("dernier", "wins", "penalty", "winner_takes"), "scoring"),
            (self.first_card in ("dealer", "standard"), "first_card"),
            (2 <= self.min_players <= self.max_players, "min_players/max_players"),
            (isinstance(self.match, MatchFormat), "match"),
        )
        for ok, name in checks:
            if not ok:
                raise ValueError(f"rule option {name} has a bad value in variant {self.name!r}")
        cards = deck_cards(self.deck)
        lo, hi = self.hand_size_range or (self.hand_size, self.hand_size)
        if not 1 <= lo <= hi or hi * self.max_players + 1 > len(cards):
            raise ValueError(f"hand size and player count do not fit the deck of {self.name!r}")
        info: dict[Rank, int] = {}
        amount: dict[Rank, int] = {}
        for rank in Rank:
            f = 0
            f |= WILD if rank in self.wild_ranks else 0
            f |= NAMES if rank in self.naming_ranks else 0
            f |= NAMES_OPT if rank in self.optional_naming_ranks else 0
            f |= SKIP if rank in self.skip_ranks else 0
            f |= REVERSE if rank in self.reverse_ranks else 0
            f |= SWAP if rank in self.swap_ranks else 0
            f |= ROTATE if rank in self.rotate_ranks else 0
            f |= CANCEL if rank == self.cancel_rank else 0
            info[rank] = f
        for flag, table in (
            (CHAIN, self.chain_draws),
            (FORCED, self.forced_draws),
            (PREVIOUS, self.previous_draws),
        ):
            for rank, n in table:
                info[rank] |= flag
                amount[rank] = n
        answers: dict[Rank, frozenset[Rank]] = {}
        for rank, _ in self.chain_draws:
            extra = {a for a, kind in self.chain_joins if kind == rank}
            answers[rank] = frozenset({rank, *extra})
        pts = {r: int(r.value) for r in NUMBER_RANKS}
        pts.update(dict(self.points))
        derived = {
            "flags": info,
            "amount": amount,
            "answers": answers,
            "points": pts,
            "cards": frozenset(cards),
            # a canonical card's id -> its index (1, 2, ...) << 11 | its rank's flags: one
            # lookup says it is a card of the deck, gives its flags and a small key for caches
            "card_code": {
                id(c): i << 11 | info[c.rank] for i, c in enumerate(dict.fromkeys(cards), 1)
            },
            "reason": {rank: f"penalty-{rank.value}" for rank in Rank},  # Drew reasons
            "deck_size": len(cards),
            "special": frozenset(self.special_ranks),
        }
        object.__setattr__(self, "_info", derived)

    @property
    def flags(self) -> dict[Rank, int]:
        """Per-rank bit flags (WILD, NAMES, ...), precomputed."""
        return self._info["flags"]

    def card_points(self, rank: Rank) -> int:
        """Points (or penalty points) of a card of ``rank`` left in a hand."""
        return self._info["points"].get(rank, 0)


_CHOICES = {
    "first_card": ("dealer", "standard"),
    "declaration": ("window", "with_play", "catch"),
    "pile_empty": ("end", "reshuffle"),
    "timeout": ("forfeit", "penalty", "draw_pass"),
    "leave": ("end", "play_on"),
    "scoring": ("dernier", "wins", "penalty", "winner_takes"),
}
# int options and their smallest value
_INTS = {
    "min_players": 2,
    "max_players": 2,
    "hand_size": 1,
    "declaration_penalty": 0,
    "error_penalty": 0,
    "out_bonus": 0,
}
_BOOLS = (
    "cut",
    "cancel_same_suit",
    "taking_ends_turn",
    "reverse_skips_with_two",
    "first_swap_acts",
    "first_rotate_acts",
    "declare_before_exchange",
    "skipped_one_card_declares",
    "last_card_draws",
    "jump_in",
    "errors_penalised",
    "others_score",
)
_RANK_SETS = (
    "special_ranks",
    "wild_ranks",
    "naming_ranks",
    "optional_naming_ranks",
    "skip_ranks",
    "reverse_ranks",
    "swap_ranks",
    "rotate_ranks",
)
# (rank, int) tables and the smallest int they take
_RANK_AMOUNTS = {"chain_draws": 1, "forced_draws": 1, "previous_draws": 1, "points": 0}


def _bad(rules: Rules, option: str, want: str) -> ValueError:
    value = getattr(rules, option)
    return ValueError(f"rule option {option} of {rules.name!r} must be {want}, not {value!r}")


def _as_rank(rules: Rules, option: str, value: object) -> Rank:
    """A Rank, or the value of one ("Q", "JOKER": as the options travel in a table body)."""
    if isinstance(value, Rank):
        return value
    if isinstance(value, str):
        try:
            return Rank(value)
        except ValueError:
            pass
    raise _bad(rules, option, "made of ranks (Rank members or their values)")


def _as_seq(rules: Rules, option: str, want: str) -> tuple:
    value = getattr(rules, option)
    if not isinstance(value, (tuple, list)):
        raise _bad(rules, option, want)
    return tuple(value)


def _as_int(rules: Rules, option: str, value: object, low: int, want: str) -> int:
    if type(value) is not int or value < low:
        raise _bad(rules, option, want)
    return value


def _check_options(rules: Rules) -> None:
    """Check every option's type and range (ValueError naming the option); normalise rank
    values given as strings to Rank and lists to tuples."""
    put = object.__setattr__
    if type(rules.readings) is not int or rules.readings not in READINGS:
        raise _bad(rules, "readings", "one of " + ", ".join(map(str, READINGS)))
    if not isinstance(rules.name, str):
        raise ValueError(f"a rule set's name is a string, not {rules.name!r}")
    if not isinstance(rules.deck, str):
        raise _bad(rules, "deck", "a deck name")
    if not isinstance(rules.match, MatchFormat):
        raise _bad(rules, "match", "a MatchFormat")
    for option, low in _INTS.items():
        _as_int(rules, option, getattr(rules, option), low, f"an int of at least {low}")
    for option in _BOOLS:
        if not isinstance(getattr(rules, option), bool):
            raise _bad(rules, option, "True or False")
    for option, choices in _CHOICES.items():
        if not isinstance(getattr(rules, option), str) or getattr(rules, option) not in choices:
            raise _bad(rules, option, "one of " + ", ".join(choices))
    if rules.hand_size_range is not None:
        want = "None or a (smallest, largest) pair of ints, 1 <= smallest <= largest"
        pair = _as_seq(rules, "hand_size_range", want)
        if len(pair) != 2:
            raise _bad(rules, "hand_size_range", want)
        lo = _as_int(rules, "hand_size_range", pair[0], 1, want)
        hi = _as_int(rules, "hand_size_range", pair[1], lo, want)
        put(rules, "hand_size_range", (lo, hi))
    for option in _RANK_SETS:
        given = _as_seq(rules, option, "a tuple of ranks")
        ranks = tuple(_as_rank(rules, option, r) for r in given)
        if len(set(ranks)) != len(ranks):
            raise _bad(rules, option, "a tuple of distinct ranks")
        put(rules, option, ranks)
    for option, low in _RANK_AMOUNTS.items():
        want = f"a tuple of (rank, int of at least {low}) pairs"
        table = []
        for pair in _as_seq(rules, option, want):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise _bad(rules, option, want)
            rank = _as_rank(rules, option, pair[0])
            table.append((rank, _as_int(rules, option, pair[1], low, want)))
        if len({r for r, _ in table}) != len(table):
            raise _bad(rules, option, want + ", each rank at most once")
        put(rules, option, tuple(table))
    want = "a tuple of (answer rank, chain rank) pairs"
    joins = []
    for pair in _as_seq(rules, "chain_joins", want):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise _bad(rules, "chain_joins", want)
        answer, kind = (_as_rank(rules, "chain_joins", r) for r in pair)
        joins.append((answer, kind))
    if len(set(joins)) != len(joins):
        raise _bad(rules, "chain_joins", "distinct (answer rank, chain rank) pairs")
    put(rules, "chain_joins", tuple(joins))
    for option in ("cancel_rank", "cancel_chain"):
        if getattr(rules, option) is not None:
            put(rules, option, _as_rank(rules, option, getattr(rules, option)))
    chains = {r for r, _ in rules.chain_draws}
    if any(kind not in chains for _, kind in rules.chain_joins):
        raise _bad(rules, "chain_joins", "pairs whose chain rank is one of chain_draws")
    if rules.cancel_chain is not None and rules.cancel_chain not in chains:
        raise _bad(rules, "cancel_chain", "None or a rank of chain_draws")
    tables = [{r for r, _ in getattr(rules, o)} for o in _RANK_AMOUNTS if o != "points"]
    if tables[0] & tables[1] or tables[0] & tables[2] or tables[1] & tables[2]:
        raise ValueError(
            f"a rank of {rules.name!r} is in more than one of chain_draws, forced_draws and"
            " previous_draws"
        )


_DERNIER_POINTS = ((R.JOKER, 15), (R.ACE, 11), (R.KING, 10), (R.QUEEN, 10), (R.JACK, 10))

DERNIER = Rules(
    name="dernier",
    deck="dernier-54",
    min_players=2,
    max_players=8,
    match=MatchFormat("target", 500),
    hand_size=5,
    wild_ranks=(R.JACK, R.JOKER),
    naming_ranks=(R.JACK, R.JOKER),
    skip_ranks=(R.QUEEN,),
    reverse_ranks=(R.KING,),
    chain_draws=((R.ACE, 2), (R.JOKER, 4)),
    previous_draws=((R.N7, 2),),
    taking_ends_turn=True,
    declaration="window",
    skipped_one_card_declares=True,
    pile_empty="end",
    timeout="forfeit",
    leave="end",
    scoring="dernier",
    points=_DERNIER_POINTS,
)

ORIGINALE = Rules(
    name="originale",
    deck="originale-108",
    min_players=2,
    max_players=10,
    match=MatchFormat("wins", 3),
    hand_size=7,
    hand_size_range=(5, 9),
    cut=True,
    special_ranks=(R.ACE, R.N2, R.N7, R.JACK, R.QUEEN, R.KING, R.JOKER),
    wild_ranks=(R.JOKER,),
    naming_ranks=(R.JOKER,),
    optional_naming_ranks=(R.JACK,),
    skip_ranks=(R.QUEEN,),
    reverse_ranks=(R.KING,),
    chain_draws=((R.ACE, 3), (R.JOKER, 5)),
    chain_joins=((R.JOKER, R.ACE),),
    cancel_rank=R.N2,
    cancel_chain=R.ACE,
    cancel_same_suit=True,
    previous_draws=((R.N7, 1),),
    taking_ends_turn=False,
    declaration="with_play",
    pile_empty="reshuffle",
    jump_in=True,
    errors_penalised=True,
    timeout="penalty",
    scoring="wins",
    points=_DERNIER_POINTS,
)

MODERNO = Rules(
    name="moderno",
    deck="moderno-112",
    min_players=2,
    max_players=10,
    match=MatchFormat("penalty_limit", 300),
    hand_size=8,
    wild_ranks=(R.WILD, R.WILD4, R.ROTATE),
    naming_ranks=(R.WILD, R.WILD4, R.ROTATE),
    skip_ranks=(R.SKIP,),
    reverse_ranks=(R.REVERSE,),
    swap_ranks=(R.SWAP,),
    rotate_ranks=(R.ROTATE,),
    chain_draws=((R.DRAW2, 2), (R.WILD4, 4)),
    taking_ends_turn=True,
    declaration="with_play",
    pile_empty="reshuffle",
    jump_in=True,
    timeout="draw_pass",
    scoring="penalty",
    points=(
        (R.REVERSE, 10),
        (R.SKIP, 20),
        (R.DRAW2, 30),
        (R.SWAP, 30),
        (R.ROTATE, 40),
        (R.WILD, 40),
        (R.WILD4, 50),
    ),
)

STANDARD = Rules(
    name="standard",
    deck="standard-108",
    min_players=2,
    max_players=10,
    match=MatchFormat("first_to", 500),
    hand_size=7,
    wild_ranks=(R.WILD, R.WILD4),
    naming_ranks=(R.WILD, R.WILD4),
    skip_ranks=(R.SKIP,),
    reverse_ranks=(R.REVERSE,),
    forced_draws=((R.DRAW2, 2), (R.WILD4, 4)),
    first_card="standard",
    declaration="catch",
    pile_empty="reshuffle",
    timeout="draw_pass",
    scoring="winner_takes",
    points=((R.SKIP, 20), (R.REVERSE, 20), (R.DRAW2, 20), (R.WILD, 50), (R.WILD4, 50)),
)

VARIANTS: dict[str, Rules] = {
    "dernier": DERNIER,
    "originale": ORIGINALE,
    "moderno": MODERNO,
    "standard": STANDARD,
}

_OPTIONS = frozenset(f.name for f in dataclasses.fields(Rules) if f.init)


def get_variant(name: str = "dernier", **overrides: object) -> Rules:
    """The rule set ``name`` with some options changed; ValueError on unknown names."""
    try:
        base = VARIANTS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown variant {name!r}; known: {', '.join(VARIANTS)}") from None
    unknown = sorted(set(overrides) - _OPTIONS)
    if unknown:
        raise ValueError(f"unknown rule option(s) {', '.join(unknown)} for variant {name!r}")
    if not overrides:
        return base
    return dataclasses.replace(base, **overrides)
