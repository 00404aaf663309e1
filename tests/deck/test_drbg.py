"""The Drbg: the byte stream, scalar, below and permutation as PROTOCOL.md 8.3 defines them."""

import hashlib
import json
from pathlib import Path

import pytest

from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.group import ORDER

VECTORS = Path(__file__).parents[2] / "vectors" / "basics.json"  # Appendix A.6
SEED = bytes(range(32, 72))  # 40 bytes: a seed may be longer than 32


class Fixed(Drbg):
    """A Drbg whose reads return the given byte strings in turn (each of the length asked)."""

    def __init__(self, parts: list[bytes]) -> None:
        super().__init__(SEED)
        self.parts = parts

    def read(self, n: int) -> bytes:
        part = self.parts.pop(0)
        assert len(part) == n
        return part


def stream(seed: bytes, n: int) -> bytes:
    """The first ``n`` bytes of the stream, written out from PROTOCOL.md 8.3."""
    blocks = b""
    j = 0
    while len(blocks) < n:
        blocks += hashlib.shake_256(
            b"dernier-p2p/drbg/v1" + seed + j.to_bytes(8, "little")
        ).digest(1024)
        j += 1
    return blocks[:n]


def test_the_stream_is_shake_256_blocks_read_across_their_boundaries() -> None:
    d = Drbg(SEED)
    parts = [d.read(n) for n in (0, 1, 1000, 23, 0, 2048, 1, 5000)]
    assert b"".join(parts) == stream(SEED, 8073)
    assert [len(p) for p in parts] == [0, 1, 1000, 23, 0, 2048, 1, 5000]


def test_a_seed_is_at_least_32_bytes_and_is_copied() -> None:
    with pytest.raises(ValueError):
        Drbg(bytes(31))
    seed = bytearray(SEED[:32])
    d = Drbg(seed)
    seed[0] ^= 1
    assert d.read(64) == stream(SEED[:32], 64)


def test_scalar_reduces_64_little_endian_bytes_and_maps_zero_to_one() -> None:
    d = Drbg(SEED)
    want = [int.from_bytes(stream(SEED, 192)[i:i + 64], "little") % ORDER for i in (0, 64, 128)]
    assert [d.scalar() for _ in range(3)] == want

    d = Fixed([bytes(64), ORDER.to_bytes(64, "little"), (ORDER + 5).to_bytes(64, "little")])
    assert [d.scalar() for _ in range(3)] == [1, 1, 5]


def below_reference(seed: bytes, ms: list[int]) -> list[int]:
    """``below(m)`` for each m in turn, by the rejection rule of PROTOCOL.md 8.3."""
    data = stream(seed, 1 << 16)
    pos, out = 0, []
    for m in ms:
        b = -(-m.bit_length() // 8) + 1
        limit = 256**b // m * m
        while True:
            x = int.from_bytes(data[pos:pos + b], "little")
            pos += b
            if x < limit:
                out.append(x % m)
                break
    return out


def test_below_follows_the_rejection_rule() -> None:
    ms = [1, 2, 3, 7, 255, 256, 257, 1000, 65535, 65536, 2**40 + 1, 2**64 - 1, ORDER] * 20
    d = Drbg(SEED)
    got = [d.below(m) for m in ms]
    assert got == below_reference(SEED, ms)
    assert all(0 <= x < m for x, m in zip(got, ms, strict=True))
    for bad in (0, -1):
        with pytest.raises(ValueError):
            d.below(bad)


def test_below_rejects_draws_at_or_over_the_limit() -> None:
    """m = 129: b = 2 bytes, limit = 65532 (508 * 129); 65531 is kept, 65532 .. 65535 redrawn."""

    d = Fixed([x.to_bytes(2, "little") for x in (65535, 65532, 65531)])
    assert d.below(129) == 65531 % 129 and not d.parts
    d = Fixed([x.to_bytes(2, "little") for x in (65532, 130)])
    assert d.below(129) == 1 and not d.parts


def test_permutation_is_fisher_yates_from_the_top() -> None:
    for n in (0, 1, 2, 3, 10, 108):
        d, ref = Drbg(SEED), Drbg(SEED)
        perm = list(range(n))
        for i in range(n - 1, 0, -1):
            j = ref.below(i + 1)
            perm[i], perm[j] = perm[j], perm[i]
        assert d.permutation(n) == perm
        assert sorted(perm) == list(range(n))
        assert d.read(16) == ref.read(16)  # no draw more or less


def test_the_appendix_vectors() -> None:
    vec = json.loads(VECTORS.read_text())["drbg"]
    seed = bytes.fromhex(vec["seed"])
    d = Drbg(seed)
    data = d.read(2048)
    assert data[:32].hex() == vec["block0_first_32"]
    assert data[1024:1056].hex() == vec["block1_first_32"]
    d = Drbg(seed)
    assert [[m, d.below(m)] for m, _ in vec["then_below_m"]] == vec["then_below_m"]
    assert d.permutation(10) == vec["then_permutation_10"]
    assert d.scalar().to_bytes(32, "little").hex() == vec["then_scalar"]
