"""Properties of random games of every variant and 2-10 players (hypothesis).

Each game is played by seeded random seats that prefer playing a card to drawing (uniformly
random play lets ``originale`` hands grow without end), sometimes jumping in, declaring or
catching out of turn, and (``originale``) sometimes playing a wrong card, which the engine takes
back with a penalty. At every step:
- cards are conserved: hands, draw pile and discards hold each slot once and, with the faces
  the simulation dealer gave them, exactly the physical deck;
- when no chance input is needed, the seat to act has a legal move, every move listed is its
  own, and ``apply`` accepts a randomly chosen one of them (now and then all of them);
- ``apply`` leaves the state it is given unchanged;
- every hand score is recomputed here from the revealed faces with the variant's rule, written
  out below from the rules digest (not with the engine's scorer), and the match ends when its
  format says so;
- every game ends within a bound on the number of moves.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dernier_p2p.rules import (
    VARIANTS,
    Card,
    Catch,
    Declare,
    Draw,
    HandOver,
    HandScored,
    IllegalMove,
    JumpedIn,
    MatchFormat,
    MatchOver,
    Pass,
    Penalty,
    Phase,
    Play,
    Rank,
    Reshuffled,
    Reveal,
    Suit,
    apply,
    chance_needed,
    deck_cards,
    get_variant,
    legal_moves,
    new_match,
    to_act,
)
from dernier_p2p.rules.simulate import Dealer, Table

MAX_MOVES = 60_000  # whole match, chance moves included

# ---------------------------------------------------------------------------------------------
# Card points, written out from the rules digest


def _face(rank: Rank) -> int:
    return int(rank.value)


def dernier_points(card: Card) -> int:
    """dernier (and originale's French deck): Jolly 15, A 11, K/Q/J 10, 2-10 face value."""
    special = {Rank.JOKER: 15, Rank.ACE: 11, Rank.KING: 10, Rank.QUEEN: 10, Rank.JACK: 10}
    return special.get(card.rank) or _face(card.rank)


def moderno_points(card: Card) -> int:
    """moderno penalty: 1-9 face, reverse 10, skip 20, draw-2 30, swap 30, rotate 40, wild 40,
    wild draw-4 50."""
    table = {
        Rank.REVERSE: 10,
        Rank.SKIP: 20,
        Rank.DRAW2: 30,
        Rank.SWAP: 30,
        Rank.ROTATE: 40,
        Rank.WILD: 40,
        Rank.WILD4: 50,
    }
    return table[card.rank] if card.rank in table else _face(card.rank)


def standard_points(card: Card) -> int:
    """standard: numbers face value; skip, reverse, draw-two 20; wild and wild draw-four 50."""
    table = {Rank.SKIP: 20, Rank.REVERSE: 20, Rank.DRAW2: 20, Rank.WILD: 50, Rank.WILD4: 50}
    return table[card.rank] if card.rank in table else _face(card.rank)


def expected_deltas(
    variant: str, hand_points: list[int], winner: int | None, others_score: bool = True
) -> list[int]:
    """One hand's score changes per seat, from the cards left in each hand."""
    n = len(hand_points)
    if variant == "dernier":
        # The one who went out: 50 + the others' cards. Every other player: the cards of all
        # players other than themselves (reading; with others_score off, nothing). An empty
        # draw pile: no bonus, the same sums.
        out = []
        for seat in range(n):
            others = sum(hand_points[q] for q in range(n) if q != seat)
            if seat == winner:
                out.append(others + 50)
            else:
                out.append(others if others_score else 0)
        return out
    if variant == "originale":  # the match counts hands won
        return [int(seat == winner) for seat in range(n)]
    if variant == "moderno":  # everyone but the one who went out adds their own cards
        return [0 if seat == winner else hand_points[seat] for seat in range(n)]
    if variant == "standard":  # the one who went out scores everyone's cards
        return [sum(hand_points) if seat == winner else 0 for seat in range(n)]
    raise AssertionError(variant)


POINTS = {
    "dernier": dernier_points,
    "originale": dernier_points,
    "moderno": moderno_points,
    "standard": standard_points,
}


def match_should_end(fmt: MatchFormat, scores, hands_won, hands_played: int) -> bool:
    """The match formats, as the digest states them."""
    if fmt.kind == "hands":
        return hands_played >= fmt.value
    if fmt.kind == "wins":  # first to win `value` hands
        return max(hands_won) >= fmt.value
    if fmt.kind == "first_to":  # first to reach `value` points
        return max(scores) >= fmt.value
    if fmt.kind in ("target", "penalty_limit"):  # someone passes `value`
        return max(scores) > fmt.value
    raise AssertionError(fmt.kind)


# ---------------------------------------------------------------------------------------------
# The random table


def check_conservation(
    state, dealer: Dealer, deck: Counter, deck_size: int, public: bool = False
) -> None:
    """Every slot once, and their faces are the deck; with ``public``, the public faces too."""
    if state.phase in (Phase.DEALER, Phase.DEAL):
        return  # no slot exists before the hand's shuffle
    slots = [x for hand in state.hands for x in hand] + list(state.pile) + list(state.discard)
    assert len(slots) == deck_size, f"{len(slots)} slots for a deck of {deck_size}: {state!r}"
    assert len(set(slots)) == deck_size, f"a slot is in two places: {state!r}"
    faces = Counter(dealer.face(state, x) for x in slots)
    assert faces == deck, f"the faces in play are not the deck: {state!r}"
    if state.discard:
        assert dealer.face(state, state.discard[-1]) == state.top
    if public:
        live = set(slots)
        for slot, card in state.public_faces.items():
            if slot in live:
                assert dealer.face(state, slot) == card, f"slot {slot} is shown wrong"


def wrong_play(state, seat: int, view: dict[int, Card], legal: list) -> Play | None:
    """originale: a card of the hand that is not among the legal plays, if any (after a draw,
    only the drawn card may be tried)."""
    listed = {m.slot for m in legal if isinstance(m, Play)}
    for slot in state.hands[seat] if state.drawn < 0 else (state.drawn,):
        card = view[slot]
        if slot not in listed and card.suit is not None:
            return Play(seat, slot, card)
    return None


def play_random_match(
    variant: str, players: int, seed: int, fmt: MatchFormat | None, **options: object
) -> dict:
    """Play one checked match; returns counters of what happened."""
    if fmt is not None:
        options["match"] = fmt
    rules = get_variant(variant, **options)
    deck_list = deck_cards(rules.deck)
    deck = Counter(deck_list)
    dealer = Dealer(rules, seed)
    rng = random.Random(seed)
    state = new_match(rules, players)
    hand_winner: int | None = None
    hands_played = 0
    seen = Counter()
    for step in range(MAX_MOVES):
        check_conservation(state, dealer, deck, len(deck_list), public=step % 50 == 0)
        if state.match_over:
            break
        request = chance_needed(state)
        if request is not None:
            assert to_act(state) is None
            move = dealer.chance_move(state, request)
        else:
            actor = to_act(state)
            assert actor is not None, f"nobody to act and no chance needed: {state!r}"
            view = dealer.view(state, actor)
            legal = legal_moves(state, actor, view)
            assert legal, f"seat {actor} has no legal move: {state!r}"
            assert all(getattr(m, "seat", actor) == actor for m in legal)
            # the order the API promises: plays, then a draw or pass, then the rest
            kinds = [type(m) for m in legal]
            plays = kinds.count(Play)
            assert kinds[:plays] == [Play] * plays, kinds
            if state.phase is Phase.PLAY:
                assert kinds[plays] in (Draw, Pass), kinds
            for probe in legal if rng.random() < 0.05 else [rng.choice(legal)]:
                apply(state, probe)  # raises if a listed move is refused
            move = None
            if rng.random() < 0.3:  # someone else may move out of turn first
                other = rng.randrange(players)
                if other != actor:
                    extra = legal_moves(state, other, dealer.view(state, other))
                    if extra:
                        move = rng.choice(extra)
                        assert isinstance(move, (Play, Declare, Catch)), move
                        seen["out-of-turn"] += 1
            wrong_ok = rules.errors_penalised and state.phase is Phase.PLAY
            if move is None and wrong_ok and rng.random() < 0.02:
                move = wrong_play(state, actor, view, legal)
                seen["wrong"] += move is not None
            if move is None:
                plays = [m for m in legal if isinstance(m, Play)]
                move = rng.choice(plays) if plays and rng.random() < 0.95 else rng.choice(legal)
        before, before_fields, before_shown = state, tuple(state), dict(state.shown)
        state, events = apply(state, move)
        assert tuple(before) == before_fields and before.shown == before_shown  # unchanged
        seen[type(move).__name__] += 1
        for event in events:
            if isinstance(event, HandOver):
                hand_winner = event.winner
                seen[f"end-{event.reason}"] += 1
        if isinstance(move, Reveal):
            hands_played += 1
            check_scores(variant, before, move, hand_winner, events, rules.others_score)
            scored = next(e for e in events if isinstance(e, HandScored))
            ended = match_should_end(rules.match, scored.scores, state.hands_won, hands_played)
            assert ended == any(isinstance(e, MatchOver) for e in events)
            if ended:
                check_winner(rules, state)
    else:
        raise AssertionError(f"{variant} match with {players} players did not end: {state!r}")
    assert hands_played >= 1
    return seen


def check_scores(
    variant: str, before, reveal: Reveal, winner: int | None, events, others_score: bool
) -> None:
    faces = dict(before.public_faces)
    faces.update(dict(reveal.faces))
    points_of = POINTS[variant]
    hand_points = [sum(points_of(faces[x]) for x in hand) for hand in before.hands]
    if winner is not None:
        assert not before.hands[winner], "the hand's winner still holds cards"
    want = expected_deltas(variant, hand_points, winner, others_score)
    scored = [e for e in events if isinstance(e, HandScored)]
    assert len(scored) == 1
    assert list(scored[0].deltas) == want, (variant, hand_points, winner)
    assert list(scored[0].scores) == [a + b for a, b in zip(before.scores, want, strict=True)]


def check_winner(rules, state) -> None:
    """The match winner holds the best score the format counts (ties broken otherwise): the most
    hands won, else the fewest points under penalty scoring (moderno), else the most points."""
    fmt = rules.match
    if fmt.kind == "wins":
        assert state.hands_won[state.winner] == max(state.hands_won)
    elif fmt.kind == "penalty_limit" or rules.scoring == "penalty":
        assert state.scores[state.winner] == min(state.scores)
    else:
        assert state.scores[state.winner] == max(state.scores)


# ---------------------------------------------------------------------------------------------
# The properties


def games(variant: str, formats: st.SearchStrategy) -> st.SearchStrategy:
    rules = VARIANTS[variant]
    return st.tuples(
        st.integers(rules.min_players, rules.max_players),
        st.integers(0, 2**32 - 1),
        formats,
    )


SHORT = st.builds(MatchFormat, st.just("hands"), st.integers(1, 2))


def budget(examples: int) -> settings:
    """Derandomized, so a run of the suite is repeatable; no per-example deadline."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )


@pytest.mark.parametrize("variant", ["dernier", "standard", "moderno"])
@budget(120)
@given(data=st.data())
def test_short_matches_keep_every_property(variant: str, data) -> None:
    players, seed, fmt = data.draw(games(variant, SHORT))
    play_random_match(variant, players, seed, fmt)


@budget(50)
@given(game=games("originale", st.just(MatchFormat("hands", 1))))
def test_short_originale_matches_keep_every_property(game) -> None:
    players, seed, fmt = game
    play_random_match("originale", players, seed, fmt)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["dernier", "standard", "moderno", "originale"])
@budget(12)
@given(data=st.data())
def test_whole_matches_in_their_own_format(variant: str, data) -> None:
    players, seed, _ = data.draw(games(variant, st.none()))
    play_random_match(variant, players, seed, None)


# The other reading of each option (docs/RULES.md), a few at a time.
OTHER_READINGS = [
    ("dernier", {"taking_ends_turn": False, "others_score": False, "jump_in": True}),
    ("dernier", {"pile_empty": "reshuffle", "last_card_draws": False}),
    ("dernier", {"reverse_skips_with_two": True, "skipped_one_card_declares": False}),
    ("originale", {"cancel_same_suit": False, "taking_ends_turn": True}),
    ("originale", {"last_card_draws": False, "errors_penalised": False}),
    ("moderno", {"first_swap_acts": True, "pile_empty": "end"}),
    ("moderno", {"reverse_skips_with_two": True, "last_card_draws": False}),
    ("standard", {"reverse_skips_with_two": True, "last_card_draws": False}),
]


@pytest.mark.parametrize(("variant", "options"), OTHER_READINGS)
@budget(15)
@given(data=st.data())
def test_other_readings_keep_every_property(variant: str, options: dict, data) -> None:
    players, seed, fmt = data.draw(games(variant, SHORT))
    play_random_match(variant, players, seed, fmt, **options)


def test_the_random_tables_reach_the_interesting_cases() -> None:
    """The table above does exercise jump-ins, declarations, wrong plays and every hand end."""
    seen: Counter = Counter()
    for variant, players, seed in [
        ("dernier", 4, 1),
        ("dernier", 2, 2),
        ("standard", 3, 3),
        ("moderno", 5, 4),
        ("originale", 3, 5),
        ("originale", 6, 6),
    ]:
        seen += play_random_match(variant, players, seed, MatchFormat("hands", 2))
    assert seen["out-of-turn"] > 0 and seen["wrong"] > 0
    assert seen["Declare"] > 0 and seen["end-out"] > 0 and seen["end-pile-empty"] > 0


def test_a_bad_move_raises_a_typed_error() -> None:
    state = new_match(get_variant("dernier"), 3)
    with pytest.raises(IllegalMove):
        apply(state, Draw(0))
    with pytest.raises(IllegalMove):
        apply(state, Pass(1))


@pytest.mark.parametrize("kind", [Draw, Pass])
def test_a_seat_that_is_not_an_int_is_a_bad_seat_even_when_equal_to_the_turn(kind) -> None:
    rule_set = get_variant("standard")
    state = new_match(rule_set, 4)
    dealer = Dealer(rule_set, 1)
    while state.chance is not None:
        state, _ = apply(state, dealer.chance_move(state))
    turn = state.turn
    for seat in (float(turn), str(turn)) + ((True,) if turn == 1 else ()):
        with pytest.raises(IllegalMove) as info:
            apply(state, kind(seat))
        assert info.value.rule == "bad-seat", (seat, info.value)


def test_a_penalty_reshuffle_during_a_play_keeps_every_card() -> None:
    """moderno: a rotate leaves seat 1 at one card without declaring; seat 0 jumps in with a
    second rotate, which closes the window: the penalty draw takes the last card of the pile
    and needs a reshuffle, asked for before the jump-in card lands on the discards (found by
    the properties above; the previous top card used to be lost)."""
    rules = get_variant("moderno")
    table = Table(
        rules,
        ["ROTATE 5R 5G 1G 2G 3G 4G 6G", "5Y ROTATE 2Y 3Y 4Y 6Y 7Y 8Y"],
        first="9R",
        then="7Y",
        dealer=1,
    )
    table.play(0, "5R")
    table.play(1, "5Y")
    table.play(0, "5G")
    table.draw(1)
    table.pass_(1)
    # a shortcut to a reachable table: seat 1 has drawn all but one card of the pile, and
    # seat 0 holds only a rotate and the green 1
    s = table.state
    keep = (table.slot(0, "ROTATE"), table.slot(0, "1G"))
    rest = tuple(x for x in s.hands[0] if x not in keep)
    table.state = s._replace(hands=(keep, s.hands[1] + rest + s.pile[1:]), pile=s.pile[:1])
    assert _slot_count(table.state) == 112
    table.play(0, "ROTATE", suit=Suit.GREEN, declare=True)  # SOLO! on its second-last card
    assert table.state.owes == (1,) and table.state.hand_sizes == (105, 1)
    table.play(0, "ROTATE", suit=Suit.GREEN)  # seat 0 now holds seat 1's rotate: a jump-in
    kinds = [type(e) for e in table.events]
    assert Penalty in kinds and JumpedIn in kinds and Reshuffled in kinds
    assert _slot_count(table.state) == 112


def _slot_count(state) -> int:
    return sum(len(h) for h in state.hands) + len(state.pile) + len(state.discard)
