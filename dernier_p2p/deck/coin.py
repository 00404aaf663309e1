"""Joint coin flips by commit-reveal (dealer choice, random tie-breaks).

Each seat ``i`` draws 32 random bytes ``r_i`` and publishes
``digest("dernier-p2p/coin-commit", [ctx_i, r_i])`` with ``ctx_i = {"game", "hand", "step",
"seat": i}``; once every commitment is in, each reveals ``r_i``. The result for a range ``m``
(``1 <= m < 2**64``) is

    int.from_bytes(hash512("dernier-p2p/coin", [game, hand, step, m, [r_0, ..., r_{n-1}]]),
                   "little") % m

a 512-bit wide reduction, so the bias is below ``m / 2**512 < 2**-448``. It is uniform as long
as one seat is honest: its ``r_i`` is unknown when every other value is fixed. A seat that does
not reveal is named (:class:`MissingMessage`); it can abort the flip but not bias it unseen.
"""

from __future__ import annotations

from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.errors import BadCommitment, BadElement, DeckError, MissingMessage
from dernier_p2p.deck.proofs import make_context
from dernier_p2p.wire.hashing import digest, hash512

COMMIT_LABEL = "dernier-p2p/coin-commit"
RESULT_LABEL = "dernier-p2p/coin"


class MissingReveals(MissingMessage):
    """Seats that did not reveal (``seats``; ``seat`` is the first of them)."""

    def __init__(self, message: str, seats: list[int]) -> None:
        super().__init__(message, seats[0])
        self.seats = list(seats)


def coin_commitment(game: bytes, hand: int, step: str, seat: int, value: bytes) -> bytes:
    """The commitment of ``seat`` to its 32-byte coin value."""
    return digest(COMMIT_LABEL, [make_context(game, hand, step, seat), value])


def coin_value(drbg: Drbg) -> bytes:
    """A seat's secret coin contribution."""
    return drbg.read(32)


class CoinFlip:
    """One joint flip among ``n`` seats, producing an integer uniform in ``[0, m)``."""

    def __init__(self, game: bytes, hand: int, step: str, n: int, m: int) -> None:
        if not 2 <= n <= 10:
            raise ValueError("a table has 2 to 10 seats")
        if not isinstance(m, int) or isinstance(m, bool) or not 1 <= m < 2**64:
            raise ValueError("the range must be 1 .. 2**64 - 1")
        make_context(game, hand, step, 0)
        self.game, self.hand, self.step, self.n, self.m = game, hand, step, n, m
        self.commitments: dict[int, bytes] = {}
        self.values: dict[int, bytes] = {}

    def _check_seat(self, seat: int) -> None:
        if not isinstance(seat, int) or not 0 <= seat < self.n:
            raise DeckError("no such seat", None)

    def add_commitment(self, seat: int, commitment: object) -> None:
        self._check_seat(seat)
        if self.values:
            raise DeckError("coin commitment after reveals began", seat)
        if seat in self.commitments:
            raise DeckError("second coin commitment", seat)
        if not isinstance(commitment, bytes) or len(commitment) != 32:
            raise BadElement("coin commitment must be 32 bytes", seat)
        self.commitments[seat] = commitment

    @property
    def committed(self) -> bool:
        return len(self.commitments) == self.n

    def add_reveal(self, seat: int, value: object) -> None:
        self._check_seat(seat)
        if not self.committed:
            raise DeckError("coin revealed before every seat committed", seat)
        if seat in self.values:
            raise DeckError("second coin reveal", seat)
        if not isinstance(value, bytes) or len(value) != 32:
            raise BadElement("coin value must be 32 bytes", seat)
        if coin_commitment(self.game, self.hand, self.step, seat, value) != self.commitments[seat]:
            raise BadCommitment("coin reveal does not match its commitment", seat)
        self.values[seat] = value

    def missing(self) -> list[int]:
        """Seats whose commitment (first phase) or reveal (second phase) is still due."""
        have = self.values if self.committed else self.commitments
        return [s for s in range(self.n) if s not in have]

    def result(self) -> int:
        """The flip; :class:`MissingReveals` naming every seat that has not revealed."""
        miss = self.missing()
        if miss:
            phase = "reveal" if self.committed else "commitment"
            raise MissingReveals(f"coin {phase} missing from seats {miss}", miss)
        vals = [self.values[s] for s in range(self.n)]
        h = hash512(RESULT_LABEL, [self.game, self.hand, self.step, self.m, vals])
        return int.from_bytes(h, "little") % self.m
