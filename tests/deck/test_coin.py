"""Joint coin flips: agreement, range, commitment checks and naming of silent seats."""

from collections import Counter

import pytest

from dernier_p2p.deck.coin import CoinFlip, MissingReveals, coin_commitment, coin_value
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.errors import BadCommitment, DeckError

GAME = b"game-coin"


def flip(n: int, m: int, seed: bytes, step: str = "dealer") -> int:
    vals = [coin_value(Drbg(seed + bytes([i]) * 31)) for i in range(n)]
    f = CoinFlip(GAME, 1, step, n, m)
    for i, v in enumerate(vals):
        f.add_commitment(i, coin_commitment(GAME, 1, step, i, v))
    for i, v in enumerate(vals):
        f.add_reveal(i, v)
    return f.result()


def test_result_in_range_and_reproducible() -> None:
    r = flip(4, 6, b"a")
    assert 0 <= r < 6
    assert flip(4, 6, b"a") == r
    assert flip(2, 1, b"a") == 0


def test_results_spread_over_the_range() -> None:
    counts = Counter(flip(3, 4, bytes([s])) for s in range(200))
    assert set(counts) == {0, 1, 2, 3}
    assert min(counts.values()) > 25  # 50 expected each; far from any plausible fluke


def test_each_seat_changes_the_result() -> None:
    base = [coin_value(Drbg(bytes([i]) * 32)) for i in range(3)]
    outs = set()
    for tweak in range(8):
        vals = list(base)
        vals[2] = bytes([tweak]) * 32
        f = CoinFlip(GAME, 1, "tie", 3, 2**32)
        for i, v in enumerate(vals):
            f.add_commitment(i, coin_commitment(GAME, 1, "tie", i, v))
        for i, v in enumerate(vals):
            f.add_reveal(i, v)
        outs.add(f.result())
    assert len(outs) == 8


def test_silent_seats_are_named() -> None:
    vals = [bytes([i]) * 32 for i in range(4)]
    f = CoinFlip(GAME, 1, "dealer", 4, 4)
    for i, v in enumerate(vals):
        f.add_commitment(i, coin_commitment(GAME, 1, "dealer", i, v))
    f.add_reveal(0, vals[0])
    f.add_reveal(2, vals[2])
    with pytest.raises(MissingReveals) as err:
        f.result()
    assert err.value.seats == [1, 3] and err.value.seat == 1


def test_wrong_reveal_and_early_reveal_are_refused() -> None:
    f = CoinFlip(GAME, 1, "dealer", 2, 4)
    f.add_commitment(0, coin_commitment(GAME, 1, "dealer", 0, b"a" * 32))
    with pytest.raises(DeckError) as early:
        f.add_reveal(0, b"a" * 32)
    assert early.value.seat == 0
    f.add_commitment(1, coin_commitment(GAME, 1, "dealer", 1, b"b" * 32))
    with pytest.raises(BadCommitment) as err:
        f.add_reveal(1, b"c" * 32)
    assert err.value.seat == 1
    # a commitment copied from another seat does not open for the copier
    g = CoinFlip(GAME, 1, "dealer", 2, 4)
    c0 = coin_commitment(GAME, 1, "dealer", 0, b"a" * 32)
    g.add_commitment(0, c0)
    g.add_commitment(1, c0)
    g.add_reveal(0, b"a" * 32)
    with pytest.raises(BadCommitment):
        g.add_reveal(1, b"a" * 32)
