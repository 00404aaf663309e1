"""The mutators: seeded, and they change what they are given."""

import random

from dernier_p2p.fuzz.mutate import mutate_bytes, mutate_value, nested

SEED = {"k": "env", "env": {"body": {"type": "ack"}, "n": 3, "sig": b"s" * 64}}


def test_same_seed_same_mutation_and_the_input_is_untouched() -> None:
    a = mutate_value(SEED, random.Random("x:1"))
    b = mutate_value(SEED, random.Random("x:1"))
    assert a == b
    assert SEED == {"k": "env", "env": {"body": {"type": "ack"}, "n": 3, "sig": b"s" * 64}}


def test_mutations_change_values_and_bytes() -> None:
    changed = sum(mutate_value(SEED, random.Random(i)) != SEED for i in range(200))
    assert changed > 150
    data = b"\x82\xa1k\xa3env"
    assert sum(mutate_bytes(data, random.Random(i)) != data for i in range(200)) > 190


def test_nested() -> None:
    assert nested(3, 1) == [[[1]]]


def test_mutated_values_stay_small() -> None:
    """Only small nodes are repeated: a big subtree repeated 1024 times, then again, once
    blew a fuzz run up to 12 GB."""
    import msgpack

    big = {"a": [b"x" * 200] * 20, "b": {"c": list(range(100))}}
    limit = len(msgpack.packb(big)) + 3 * 70 * 1025
    sized = 0
    for i in range(1500):
        value = mutate_value(big, random.Random(i))
        try:
            size = len(msgpack.packb(value, use_bin_type=True))
        except OverflowError:  # an integer out of msgpack's range: small anyway
            continue
        assert size < limit
        sized += 1
    assert sized > 1000
