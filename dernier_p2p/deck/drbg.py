"""Deterministic randomness: a seeded byte stream, so the deck code takes randomness as an input.

``Drbg(seed)`` yields SHAKE-256(b"dernier-p2p/drbg/v1" || seed || counter) blocks. A live client
seeds it from the operating system; tests and known-answer vectors seed it with fixed bytes.
"""

from __future__ import annotations

import hashlib

from dernier_p2p.deck import group as g


class Drbg:
    """A deterministic random byte generator seeded with at least 32 bytes."""

    _BLOCK = 1024

    def __init__(self, seed: bytes) -> None:
        if len(seed) < 32:
            raise ValueError("seed must be at least 32 bytes")
        self._seed = bytes(seed)
        self._counter = 0
        self._buf = b""

    def read(self, n: int) -> bytes:
        """The next ``n`` bytes of the stream."""
        while len(self._buf) < n:
            block = hashlib.shake_256(
                b"dernier-p2p/drbg/v1" + self._seed + self._counter.to_bytes(8, "little")
            ).digest(self._BLOCK)
            self._counter += 1
            self._buf += block
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def scalar(self) -> int:
        """A uniform nonzero scalar mod the group order (64 bytes reduced)."""
        k = int.from_bytes(self.read(64), "little") % g.ORDER
        return k or 1

    def below(self, n: int) -> int:
        """A uniform integer in [0, n) by rejection sampling."""
        if n <= 0:
            raise ValueError("n must be positive")
        nbytes = (n.bit_length() + 7) // 8 + 1
        limit = (256**nbytes // n) * n
        while True:
            x = int.from_bytes(self.read(nbytes), "little")
            if x < limit:
                return x % n

    def permutation(self, n: int) -> list[int]:
        """A uniform permutation of range(n) (Fisher-Yates)."""
        perm = list(range(n))
        for i in range(n - 1, 0, -1):
            j = self.below(i + 1)
            perm[i], perm[j] = perm[j], perm[i]
        return perm
