"""Joint coin flips: agreement, range, commitment checks and naming of silent seats."""

from collections import Counter

import pytest

from dernier_p2p.deck.coin import CoinFlip, MissingReveals, coin_commitment, coin_value
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.errors import BadCommitment, BadElement, DeckError
from dernier_p2p.wire.hashing import hash512

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


def test_the_result_is_the_documented_reduction_and_every_fault_names_its_seat() -> None:
    """The module docstring's formula, written out; bounds of n, m and seats; each malformed,
    repeated or late message names its seat; before any reveal, the missing commitments."""
    vals = [bytes([i]) * 32 for i in range(3)]
    f = CoinFlip(GAME, 2, "tie", 3, 2**64 - 1)
    with pytest.raises(MissingReveals, match="commitment") as miss:
        f.result()
    assert miss.value.seats == [0, 1, 2]
    for bad in (None, b"c" * 31):
        with pytest.raises(BadElement) as err:
            f.add_commitment(1, bad)
        assert err.value.seat == 1
    for i, v in enumerate(vals):
        assert f.missing() == list(range(i, 3))  # the commitments still due
        f.add_commitment(i, coin_commitment(GAME, 2, "tie", i, v))
    assert f.missing() == [0, 1, 2]  # now the reveals
    with pytest.raises(DeckError) as err:
        f.add_commitment(2, coin_commitment(GAME, 2, "tie", 2, vals[2]))
    assert err.value.seat == 2 and "second" in str(err.value)
    for seat in (3, -1, "0"):
        with pytest.raises(DeckError) as err:
            f.add_reveal(seat, vals[0])
        assert err.value.seat is None
    for bad in (None, b"v" * 33):
        with pytest.raises(BadElement) as err:
            f.add_reveal(1, bad)
        assert err.value.seat == 1
    f.add_reveal(0, vals[0])
    with pytest.raises(DeckError) as err:
        f.add_reveal(0, vals[0])
    assert err.value.seat == 0 and "second" in str(err.value)
    with pytest.raises(DeckError) as err:  # commitments are closed once reveals begin
        f.add_commitment(0, coin_commitment(GAME, 2, "tie", 0, vals[0]))
    assert err.value.seat == 0
    with pytest.raises(MissingReveals, match="reveal"):
        f.result()
    f.add_reveal(1, vals[1])
    f.add_reveal(2, vals[2])
    h = hash512("dernier-p2p/coin", [GAME, 2, "tie", 2**64 - 1, vals])
    assert f.result() == int.from_bytes(h, "little") % (2**64 - 1)
    for n, m in ((1, 2), (11, 2), (10, 2**64), (2, True), (2, 0)):
        with pytest.raises((ValueError, DeckError)):
            CoinFlip(GAME, 2, "tie", n, m)
    assert CoinFlip(GAME, 2, "tie", 10, 1).n == 10
