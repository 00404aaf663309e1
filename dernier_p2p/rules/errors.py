"""The typed error of the rules engine."""

from __future__ import annotations


class IllegalMove(ValueError):
    """A move the rules do not allow now. ``rule`` is a short stable id such as "must-match"."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"[{rule}] {message}")
        self.rule = rule
        self.message = message
