"""Scoring of a hand, the end of a match and its standings with the tie-breaks."""

from __future__ import annotations

from collections.abc import Sequence

from dernier_p2p.rules.variants import Rules


def hand_deltas(
    rules: Rules, points: Sequence[int], winner: int | None, out: Sequence[int] = ()
) -> tuple[int, ...]:
    """Score changes of one hand from each seat's card points left in hand. A seat in ``out``
    (out of play, docs/RULES.md "A seat out") holds no cards and scores nothing: its score
    stays as it was."""
    total = sum(points)
    n = len(points)
    kind = rules.scoring
    if kind == "dernier":
        deltas = []
        for s in range(n):
            others = total - points[s]
            if s in out:
                deltas.append(0)
            elif s == winner:
                deltas.append(rules.out_bonus + others)
            else:
                deltas.append(others if rules.others_score else 0)
        return tuple(deltas)
    if kind == "wins":
        return tuple(int(s == winner) for s in range(n))
    if kind == "penalty":
        return tuple(0 if s == winner else points[s] for s in range(n))
    # winner_takes
    return tuple(total if s == winner else 0 for s in range(n))


def match_ended(rules: Rules, scores: Sequence[int], hands_won: Sequence[int], hands: int) -> bool:
    """Whether the match format is met after ``hands`` hands."""
    kind, value = rules.match.kind, rules.match.value
    if kind == "hands":
        return hands >= value
    if kind == "wins":
        return max(hands_won) >= value
    if kind == "first_to":
        return max(scores) >= value
    return max(scores) > value  # "target" (passed), "penalty_limit" (passed)


def standings(
    rules: Rules,
    scores: Sequence[int],
    hands_won: Sequence[int],
    final_sizes: Sequence[int],
    last_draw: Sequence[int],
    last: Sequence[int] = (),
) -> tuple[int, ...]:
    """Seats best first. Ties: see docs/RULES.md (hands won, fewest cards, drew last loses).

    Under penalty scoring (moderno) the fewest points rank first whatever the match format;
    otherwise the most points do. ``last_draw`` holds each seat's clock at its last draw of the
    last hand (-1: none), so an earlier last draw ranks better. Seats in ``last``
    (forfeits) come last in that order.
    """
    kind, value = rules.match.kind, rules.match.value

    sign = 1 if kind == "penalty_limit" or rules.scoring == "penalty" else -1

    def key(s: int) -> tuple[int, ...]:
        if kind == "wins":
            return (-hands_won[s], final_sizes[s], last_draw[s], s)
        if kind == "hands" and value == 1:
            return (sign * scores[s], final_sizes[s], last_draw[s], s)
        return (sign * scores[s], -hands_won[s], final_sizes[s], last_draw[s], s)

    ranked = sorted((s for s in range(len(scores)) if s not in last), key=key)
    return tuple(ranked) + tuple(last)
