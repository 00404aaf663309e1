"""Rule sets: the four variants and their named options."""

import dataclasses

import pytest

from dernier_p2p.rules import VARIANTS, MatchFormat, Rank, Rules, get_variant, new_match
from dernier_p2p.rules.variants import SKIP


def test_four_variants_with_their_decks_and_formats():
    assert list(VARIANTS) == ["dernier", "originale", "moderno", "standard"]
    assert get_variant() is VARIANTS["dernier"]
    expect = {
        "dernier": ("dernier-54", 5, 2, 8, "target"),
        "originale": ("originale-108", 7, 2, 10, "wins"),
        "moderno": ("moderno-112", 8, 2, 10, "penalty_limit"),
        "standard": ("standard-108", 7, 2, 10, "first_to"),
    }
    for name, (deck, size, lo, hi, kind) in expect.items():
        r = VARIANTS[name]
        assert (r.deck, r.hand_size, r.min_players, r.max_players, r.match.kind) == (
            deck, size, lo, hi, kind)
    assert VARIANTS["originale"].hand_size_range == (5, 9)
    assert VARIANTS["originale"].match.value == 3
    assert VARIANTS["moderno"].match.value == 300
    assert VARIANTS["standard"].match.value == 500


def test_rules_are_frozen_and_hashable():
    r = get_variant("standard")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.hand_size = 3  # type: ignore[misc]
    assert hash(r) == hash(get_variant("standard"))


def test_overrides_make_a_new_rule_set():
    r = get_variant("dernier", match=MatchFormat("hands", 3), taking_ends_turn=False)
    assert r.match == MatchFormat("hands", 3)
    assert not r.taking_ends_turn
    assert VARIANTS["dernier"].taking_ends_turn
    assert isinstance(r, Rules)


def test_unknown_variant_or_option_is_a_clear_value_error():
    with pytest.raises(ValueError, match="unknown variant"):
        get_variant("uno")
    with pytest.raises(ValueError, match="unknown rule option"):
        get_variant("dernier", stacking=True)
    with pytest.raises(ValueError, match="declaration"):
        get_variant("dernier", declaration="shout")
    with pytest.raises(ValueError, match="match kind"):
        MatchFormat("sudden", 1)


def test_player_counts():
    for name, r in VARIANTS.items():
        new_match(r, r.min_players)
        new_match(r, r.max_players)
        with pytest.raises(ValueError, match=name):
            new_match(r, r.max_players + 1)
        with pytest.raises(ValueError):
            new_match(r, 1)


def test_card_points():
    d, m, s = VARIANTS["dernier"], VARIANTS["moderno"], VARIANTS["standard"]
    assert [d.card_points(x) for x in (Rank.JOKER, Rank.ACE, Rank.KING, Rank.N7)] == [15, 11, 10, 7]
    assert [m.card_points(x) for x in (Rank.REVERSE, Rank.SKIP, Rank.DRAW2, Rank.SWAP)] == [
        10, 20, 30, 30]
    assert [m.card_points(x) for x in (Rank.ROTATE, Rank.WILD, Rank.WILD4, Rank.N9)] == [
        40, 40, 50, 9]
    assert [s.card_points(x) for x in (Rank.SKIP, Rank.WILD, Rank.WILD4, Rank.N0)] == [
        20, 50, 50, 0]


def test_readings_are_options_with_our_defaults():
    d, o, m = VARIANTS["dernier"], VARIANTS["originale"], VARIANTS["moderno"]
    assert d.taking_ends_turn and not o.taking_ends_turn
    assert not d.reverse_skips_with_two
    assert d.others_score
    assert d.timeout == "forfeit"
    assert d.leave == "end"  # seed 000/001: a leave ends the match
    assert [VARIANTS[v].leave for v in ("originale", "moderno", "standard")] == ["play_on"] * 3
    assert get_variant("dernier", leave="play_on").leave == "play_on"
    assert [VARIANTS[v].readings for v in VARIANTS] == [4] * 4  # version 4's readings
    assert get_variant("standard", readings=3).readings == 3
    assert o.cancel_same_suit
    assert dict(m.chain_draws)[Rank.WILD4] == 4  # wild draw-4 stacks (reading)
    assert m.pile_empty == "reshuffle"
    assert Rank.ROTATE in m.naming_ranks


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("skip_ranks", "JOKER"),  # a string is not a tuple of ranks (no substring matching)
        ("skip_ranks", ("JOKR",)),
        ("skip_ranks", (1,)),
        ("hand_size", "5"),
        ("hand_size", True),
        ("hand_size", 5.0),
        ("hand_size", 0),
        ("points", 5),
        ("points", ((Rank.ACE, -1),)),
        ("points", ((Rank.ACE,),)),
        ("chain_draws", ((Rank.ACE, 0),)),
        ("chain_draws", ((Rank.ACE, "2"),)),
        ("forced_draws", ((Rank.N7, 2),)),  # 7 is already a previous_draws rank in dernier
        ("chain_joins", ((Rank.JOKER, Rank.KING),)),  # K is not a chain
        ("chain_joins", ((Rank.JOKER, Rank.ACE), ("JOKER", "A"))),  # one pair twice
        ("skip_ranks", (Rank.QUEEN, "Q")),  # a rank twice, once by its value
        ("wild_ranks", (Rank.JOKER, Rank.JACK, Rank.JOKER)),
        ("chain_draws", ((Rank.ACE, 2), (Rank.JOKER, 4), (Rank.ACE, 3))),  # which amount?
        ("points", ((Rank.ACE, 11), ("A", 11))),
        ("cancel_chain", Rank.KING),
        ("cancel_rank", 2),
        ("jump_in", 1),
        ("others_score", "yes"),
        ("declaration", 3),
        ("timeout", "never"),
        ("leave", "continue"),
        ("leave", True),
        ("readings", 2),
        ("readings", 5),
        ("readings", "4"),
        ("readings", True),
        ("hand_size_range", (6, 5)),
        ("hand_size_range", (5,)),
        ("hand_size_range", 5),
        ("min_players", 1),
        ("max_players", 9.0),
        ("declaration_penalty", -1),
        ("out_bonus", None),
        ("deck", 54),
        ("deck", "uno"),
        ("match", ("hands", 1)),
    ],
)
def test_option_values_are_checked(option, value):
    with pytest.raises(ValueError, match=option.split("_")[0]):
        get_variant("dernier", **{option: value})


def test_a_match_value_is_a_real_int():
    with pytest.raises(ValueError, match="positive integer"):
        MatchFormat("hands", True)
    with pytest.raises(ValueError, match="positive integer"):
        MatchFormat("hands", 2.0)


def test_rank_options_accept_rank_values_and_lists():
    # a table body carries ranks as their values and sequences as lists
    r = get_variant(
        "originale",
        skip_ranks=["Q", "K"],
        chain_draws=[["A", 2], ["JOKER", 4]],
        hand_size_range=[5, 6],
        cancel_rank="2",
    )
    assert r.skip_ranks == (Rank.QUEEN, Rank.KING)
    assert all(type(x) is Rank for x in r.skip_ranks)
    assert r.chain_draws == ((Rank.ACE, 2), (Rank.JOKER, 4))
    assert r.hand_size_range == (5, 6) and r.cancel_rank is Rank.N2
    assert r.flags[Rank.KING] & SKIP and r.flags[Rank.QUEEN] & SKIP
    assert hash(r) == hash(get_variant(
        "originale", skip_ranks=(Rank.QUEEN, Rank.KING),
        chain_draws=((Rank.ACE, 2), (Rank.JOKER, 4)), hand_size_range=(5, 6)))
