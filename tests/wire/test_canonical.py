"""Canonical msgpack: one encoding per value, and strict decoding."""

import msgpack
import pytest

from dernier_p2p.wire.canonical import EncodingError, decode, encode
from dernier_p2p.wire.hashing import challenge, digest


def test_map_keys_are_sorted_and_round_trip() -> None:
    a = encode({"b": 1, "a": [1, b"x", None, True, "s"]})
    b = encode({"a": [1, b"x", None, True, "s"], "b": 1})
    assert a == b
    assert decode(a) == {"a": [1, b"x", None, True, "s"], "b": 1}


def test_refuses_floats_and_non_string_keys() -> None:
    with pytest.raises(EncodingError):
        encode(1.5)
    with pytest.raises(EncodingError):
        encode({1: 2})


def test_decode_rejects_non_canonical_and_garbage() -> None:
    unsorted = msgpack.packb({"b": 1, "a": 2})
    with pytest.raises(EncodingError):
        decode(unsorted)
    long_int = b"\xcd\x00\x01"  # 1 written as uint16
    with pytest.raises(EncodingError):
        decode(long_int)
    with pytest.raises(EncodingError):
        decode(b"\xc1")
    with pytest.raises(EncodingError):
        decode(encode([1, 2]) + b"\x00")
    with pytest.raises(EncodingError):
        decode(encode(b"x" * 100), max_size=10)


def test_hash_labels_separate_domains() -> None:
    assert digest("dernier-p2p/a", 1) != digest("dernier-p2p/b", 1)
    assert len(digest("dernier-p2p/a", 1)) == 32
    assert 0 <= challenge("dernier-p2p/c", [1], 7) < 7
    with pytest.raises(ValueError):
        digest("other", 1)
