"""Errors of the deck layer. Each names the seat at fault where one is known."""

from __future__ import annotations


class DeckError(Exception):
    """Something in the deck protocol does not check; ``seat`` is the seat at fault, if known."""

    def __init__(self, message: str, seat: int | None = None) -> None:
        super().__init__(message if seat is None else f"seat {seat}: {message}")
        self.seat = seat
        self.reason = message


class BadElement(DeckError):
    """A received group element or scalar is malformed, non-canonical or outside the group."""


class BadProof(DeckError):
    """A zero-knowledge proof (Schnorr, Chaum-Pedersen or shuffle) does not verify."""


class BadCommitment(DeckError):
    """A revealed value does not match its earlier commitment."""


class MissingMessage(DeckError):
    """A seat did not send a message the protocol requires of it (for example a reveal)."""
