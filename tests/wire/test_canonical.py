"""Canonical msgpack: one encoding per value, and strict decoding."""

import tracemalloc

import msgpack
import pytest

from dernier_p2p.wire.canonical import (
    MAX_DEPTH,
    MAX_ITEMS,
    EncodingError,
    OversizedError,
    check_shape,
    decode,
    encode,
)
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


def test_lists_of_byte_strings_encode_as_any_list_does() -> None:
    """Lists and tuples of byte strings (decks, proofs) and of text encode as arrays of bin and
    str, whatever the container; subclasses of bytes and str encode as their values; a value
    that cannot be encoded is refused inside such a list as anywhere."""

    class Tag(str):
        pass

    class Blob(bytes):
        pass

    deck = [[bytes([k]) * 32, bytes([k + 1]) * 32] for k in range(3)]
    expected = msgpack.packb({"d": deck, "s": ["x", "y"]}, use_bin_type=True)
    assert encode({"s": ("x", "y"), "d": tuple(tuple(ct) for ct in deck)}) == expected
    assert encode({"s": [Tag("x"), "y"], "d": [[Blob(a), b] for a, b in deck]}) == expected
    assert decode(expected) == {"d": deck, "s": ["x", "y"]}
    for bad in ([b"x", 1.5], [b"x", [b"y", {2: 3}]], [b"x", 2**64], ["a", "\udcff"]):
        with pytest.raises(EncodingError):
            encode(bad)


def test_text_with_a_lone_surrogate_is_an_encoding_error() -> None:
    """A str Python made from undecodable bytes (surrogateescape: command-line arguments,
    file names) has no UTF-8 encoding: an EncodingError, as a key or as a value."""
    for value in ("a\udcff", ["x", "\ud800"], {"\udcff": 1}, {"a": {"b": "\udfff"}}):
        with pytest.raises(EncodingError) as err:
            encode(value)
        assert err.value.code == "MALFORMED"


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


def _nested(depth: int, leaf: bytes = b"\xc0") -> bytes:
    return b"\x91" * depth + leaf  # ``depth`` one-element arrays around ``leaf``


def test_deep_nesting_is_oversized_not_a_recursion_error() -> None:
    from dernier_p2p.wire.canonical import MAX_DEPTH, OversizedError

    assert decode(_nested(MAX_DEPTH)) is not None  # exactly at the limit
    for depth in (MAX_DEPTH + 1, 600, 5000, 100_000):  # the reviewed frame was ~600 deep
        with pytest.raises(OversizedError) as err:
            decode(_nested(depth))
        assert err.value.code == "OVERSIZED"
    with pytest.raises(OversizedError):  # a map chain too
        decode(b"\x81\xa1a" * 600 + b"\xc0")


def test_container_and_string_headers_are_refused_before_allocation() -> None:
    from dernier_p2p.wire.canonical import MAX_ARRAY, MAX_BIN, MAX_MAP, MAX_STR, OversizedError

    huge = [
        b"\xdd\xff\xff\xff\xff",  # array of 2^32-1 items announced in 5 bytes
        b"\xdf\xff\xff\xff\xff",  # map of 2^32-1 entries
        b"\xdb\x7f\xff\xff\xff",  # str of 2^31-1 bytes
        b"\xc6\x7f\xff\xff\xff",  # bin of 2^31-1 bytes
        msgpack.packb([0] * (MAX_ARRAY + 1)),
        msgpack.packb({f"k{i:04}": 0 for i in range(MAX_MAP + 1)}),
        msgpack.packb("x" * (MAX_STR + 1)),
        msgpack.packb(b"x" * (MAX_BIN + 1), use_bin_type=True),
    ]
    for data in huge:
        with pytest.raises(EncodingError) as err:
            decode(data)
        assert err.value.code in ("OVERSIZED", "MALFORMED")
    for data in huge[4:]:
        with pytest.raises(OversizedError):
            decode(data)
    assert len(decode(msgpack.packb([0] * MAX_ARRAY))) == MAX_ARRAY


def test_total_items_are_capped() -> None:
    from dernier_p2p.wire.canonical import MAX_ARRAY, MAX_ITEMS, OversizedError

    rows = MAX_ITEMS // MAX_ARRAY + 1
    data = encode([[0] * MAX_ARRAY for _ in range(rows)])
    with pytest.raises(OversizedError):
        decode(data)


def test_extension_types_and_floats_are_malformed() -> None:
    for data in (b"\xd4\x01\x00", msgpack.packb(1.5), msgpack.packb({"a": [1.5]})):
        with pytest.raises(EncodingError) as err:
            decode(data)
        assert err.value.code == "MALFORMED"


def test_encoding_a_value_nested_too_deep_is_an_encoding_error() -> None:
    value: list = []
    for _ in range(5000):
        value = [value]
    with pytest.raises(EncodingError):
        encode(value)


def test_item_count_is_exact_at_the_limit_with_lists_and_maps() -> None:
    """Every container, key and scalar counts once: MAX_ITEMS values decode, one more do not."""
    lists = [[0] * 1023 for _ in range(63)] + [[0] * 1022]  # 1 + 64 + 65471 values
    assert decode(encode(lists)) == lists
    lists[-1].append(0)
    with pytest.raises(OversizedError):
        decode(encode(lists))
    full = {f"k{i}": 0 for i in range(256)}
    maps = [full] * 127 + [{f"k{i}": 0 for i in range(191)}, 0]  # 1 + 127*513 + 383 + 1
    assert decode(encode(maps)) == maps
    with pytest.raises(OversizedError):
        decode(encode(maps + [0]))


@pytest.mark.parametrize("empty", [b"\x80", b"\x90"], ids=["maps", "lists"])
def test_a_frame_of_a_million_empty_containers_stops_before_it_is_built(empty: bytes) -> None:
    """1 MiB of one-byte containers would be a million objects (about 70 MiB): the decoder
    stops once MAX_ITEMS values are built, so it never holds more than a few MiB."""
    import tracemalloc

    inner = b"\xdc" + (1000).to_bytes(2, "big") + empty * 1000
    data = b"\xdc" + (1000).to_bytes(2, "big") + inner * 1000
    tracemalloc.start()
    try:
        with pytest.raises(OversizedError, match=f"more than {MAX_ITEMS} values"):
            decode(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, f"{peak / 2**20:.1f} MiB"


@pytest.mark.parametrize("wrap", [lambda v: [v], lambda v: {"a": v}], ids=["list", "map"])
def test_nesting_is_exact_at_the_depth_limit(wrap) -> None:
    value: object = 0
    for _ in range(MAX_DEPTH):
        value = wrap(value)
    assert decode(encode(value)) == value  # MAX_DEPTH containers
    with pytest.raises(OversizedError):
        check_shape(wrap(value))


def test_max_size_is_inclusive() -> None:
    data = encode({"a": [1, 2, 3]})
    assert decode(data, max_size=len(data)) == {"a": [1, 2, 3]}
    with pytest.raises(OversizedError):
        decode(data, max_size=len(data) - 1)


def test_integer_range_and_byte_strings_as_bin() -> None:
    for ok in (-(2**63), 2**64 - 1):
        assert decode(encode(ok)) == ok
    for bad in (-(2**63) - 1, 2**64):
        with pytest.raises(EncodingError):
            encode(bad)
    assert encode(b"\x01") == b"\xc4\x01\x01"  # bin 8, never a raw str
    assert encode("\x01") == b"\xa1\x01"


def test_invalid_utf8_and_keys_that_are_not_str_are_malformed() -> None:
    bad = [
        b"\xa1\xff",  # a str that is not UTF-8
        b"\xa3\xed\xa0\x80",  # a surrogate written as UTF-8
        b"\x81\x01\x00",  # {1: 0}
        b"\x81\xc4\x01a\x00",  # {b"a": 0}
        b"\x81\xc0\x00",  # {None: 0}
        b"\x81\x90\x00",  # {[]: 0}
        b"\x81\xa1a\x00\xa1a",  # truncated after a duplicate key's start
        b"\x82\xa1a\x00\xa1a\x01",  # a duplicate key
    ]
    for data in bad:
        with pytest.raises(EncodingError) as err:
            decode(data)
        assert err.value.code == "MALFORMED", data


def test_maps_held_in_maps_are_counted_while_they_are_built() -> None:
    """The empty maps held in maps, which only the map hook counts (in arrays the array hook
    counts them, test_a_frame_of_a_million_empty_containers_...): 1024 maps of
    256 empty maps each (1.5 MB, 263,169 values) stop at the value limit while msgpack builds
    them, not after (building them all takes about 15 times the input's length)."""
    inner = b"\xde\x01\x00" + b"".join(encode(f"k{i:03}") + b"\x80" for i in range(256))
    data = b"\xdc\x04\x00" + inner * 1024
    tracemalloc.start()
    try:
        with pytest.raises(OversizedError):
            decode(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(data)
