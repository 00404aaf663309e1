"""The simulation Dealer: seeded deals that stay the same from one version to the next."""

import random

from dernier_p2p.rules import ChooseDealer, apply, deck_cards, get_variant, new_match
from dernier_p2p.rules.simulate import Dealer


def test_the_dealers_permutation_is_random_shuffles():
    # the Dealer inlines the draws of random.shuffle: seeded matches must not change
    for seed in (0, 1, 12345, "table"):
        rules = get_variant("standard")
        dealer = Dealer(rules, seed)
        state, _ = apply(new_match(rules, 4), ChooseDealer(0))
        shuffle = dealer.chance_move(state)
        faces = [dealer.face(state, x) for x in shuffle.slots]
        want = list(deck_cards(rules.deck))
        random.Random(seed).shuffle(want)
        assert faces == want
