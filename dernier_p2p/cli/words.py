"""Plain words for the engine's internal ids: why a seat drew, why a hand ended, why a play is
refused, and counted nouns ("1 card", "2 cards"). The narration, the table and the prompts use
these so that no id such as ``penalty-JOKER`` or ``pile-empty`` reaches a player."""

from __future__ import annotations

from dernier_p2p.cli.render import ACTION_LABELS, card_label, suit_text
from dernier_p2p.rules import Card, Rank, Rules, State
from dernier_p2p.rules.seat_moves import in_turn_error


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, singular for one: "1 card", "3 cards"."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def rank_words(rank: Rank, rules: Rules) -> str:
    """A rank as a player names it: "A", "7", "Jolly", "Wild+4"."""
    if rank is Rank.JOKER:
        return "Matta" if rules.deck.startswith("originale") else "Jolly"
    return ACTION_LABELS.get(rank, rank.value)


def draw_reason(reason: str, rules: Rules) -> str | None:
    """Why a seat drew, in words (None for an ordinary draw)."""
    if reason in ("draw", "deal"):
        return None
    if reason == "timeout-draw":
        return "out of time"
    if reason.startswith("penalty-"):
        what = reason[len("penalty-"):]
        fixed = {
            "declaration": "missed declaration",
            "error": "wrong play",
            "timeout": "out of time",
        }
        if what in fixed:
            return fixed[what]
        try:
            return f"from the {rank_words(Rank(what), rules)}"
        except ValueError:
            return None
    return None


HAND_END = {
    "out": "a player went out",
    "pile-empty": "the draw pile ran out",
    "blocked": "nobody can play or draw",
}

RULE_WORDS = {
    "must-match": "it matches neither the suit nor the rank of the top card",
    "must-answer-chain": "a draw chain is pending: answer it or take the cards",
    "only-drawn-card": "after drawing, only the card you drew may be played",
    "not-your-turn": "it is not your turn and this variant has no jumping in",
    "not-identical": "jumping in needs a card identical to the top card",
    "declaration": "missed declaration",
    "timeout": "out of time",
    "left": "left the table",
    "stall": "kept the table waiting",
}


def rule_words(rule: str) -> str:
    """An engine rule id in words (the id itself if it has no words yet)."""
    return RULE_WORDS.get(rule, rule.replace("-", " "))


def play_refusal(state: State, seat: int, slot: int, card: Card) -> str:
    """Why ``card`` (held by ``seat`` in ``slot``) cannot be played now, in a few words, from
    the engine's own checks (the same rule ids as its IllegalMove)."""
    rules = state.rules
    top = None if state.top is None else card_label(state.top, rules)
    if state.turn != seat:
        if not rules.jump_in:
            return "it is not your turn"
        return f"jumping in needs a card identical to the top card ({top})"
    if state.drawn >= 0 and slot != state.drawn:
        return "after drawing, only the card you drew may be played (or pass: p)"
    err = in_turn_error(state, card) if state.top is not None else None
    if err is None:
        return "the rules do not allow it here"
    rule = err[0]
    if rule == "must-answer-chain" and state.pending_kind is not None:
        answers = rules._info["answers"][state.pending_kind]
        names = " or ".join(sorted(rank_words(r, rules) for r in answers))
        if rules.cancel_rank is not None and rules.cancel_chain == state.pending_kind:
            names += f" (or a {rank_words(rules.cancel_rank, rules)} of the top card's suit)"
        return (
            f"{count(state.pending_draw, 'card')} pending ({rank_words(state.pending_kind, rules)}"
            f" chain): answer with {names} or take them (d)"
        )
    if rule == "must-match" and state.named_suit is not None:
        return f"the suit named is {suit_text(state.named_suit, rules, False)} (top card {top})"
    if rule == "must-match":
        return f"it matches neither the suit nor the rank of {top}"
    return rule_words(rule)
