"""Domain-separated hashes and challenges against SHA-512 of the msgpack bytes, computed here."""

import hashlib

import pytest

from dernier_p2p.wire.hashing import challenge, digest, hash512

# canonical([label, value]) for these simple values is plain msgpack, written out by hand
LABEL = "dernier-p2p/test"
PACKED = {
    1: b"\x92\xb0" + LABEL.encode() + b"\x01",
    b"ab": b"\x92\xb0" + LABEL.encode() + b"\xc4\x02ab",
}


@pytest.mark.parametrize("value", list(PACKED))
def test_hash_digest_and_challenge_known_answers(value) -> None:
    h = hashlib.sha512(PACKED[value]).digest()
    assert hash512(LABEL, value) == h
    assert digest(LABEL, value) == h[:32]
    order = 2**252 + 27742317777372353535851937790883648493
    assert challenge(LABEL, value, order) == int.from_bytes(h, "little") % order
    assert challenge(LABEL, value, 2**521) == int.from_bytes(h, "little")  # not big-endian


def test_labels_outside_the_prefix_are_refused() -> None:
    for label in ("dernier-p2p", "other/x", ""):
        with pytest.raises(ValueError):
            digest(label, 1)
