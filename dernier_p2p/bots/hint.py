"""A hint for a person: what the search bot would do in their seat, and why, in plain words.

:func:`hint` runs the search bot from the seat's own view (so it knows no more than the person
does) and says its move, what the move does at the table, and how it fared in the search
against the next best choice: "Play Q♠: it makes Bot 1 miss a turn, and it sheds a card worth 10
points. In 600 play-outs to the end of the hand, with the cards you cannot see dealt at random,
it won 61 % of the 300 it was played in; the next best choice, to draw a card, won 44 %."
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dernier_p2p.bots.heuristic import most_held_suit
from dernier_p2p.bots.search import Decision, SearchBot
from dernier_p2p.bots.tracker import Tracker
from dernier_p2p.bots.view import own_faces
from dernier_p2p.cli.render import card_label, suit_text
from dernier_p2p.rules import (
    Card,
    Catch,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    Move,
    NameSuit,
    Pass,
    Play,
    State,
    legal_moves,
    to_act,
)
from dernier_p2p.rules.flow import step
from dernier_p2p.rules.variants import CHAIN, FORCED, PREVIOUS, REVERSE, ROTATE, SKIP, SWAP, WILD

HINT_ITERATIONS = 600
"""Worlds a hint plays out (a little more than the strong bot, for steadier figures)."""


def hint(
    state: State,
    seat: int,
    view: Mapping[int, Card],
    names: Sequence[str] | None = None,
    *,
    iterations: int = HINT_ITERATIONS,
    seed: int = 0,
    tracker: Tracker | None = None,
) -> str:
    """What the search bot would do for ``seat`` now and why, in a few plain sentences
    (``names``: the players' names, else "seat N"; ``tracker``: what the seat has read of the
    others' moves this hand, as the strong bot in its place would have, used on a copy)."""
    bot = SearchBot(seed, iterations=iterations)
    if tracker is not None:
        bot.tracker = tracker.copy()
    decision = bot.decide(state, seat, view)
    return explain(state, seat, view, decision, names)


def explain(
    state: State,
    seat: int,
    view: Mapping[int, Card],
    decision: Decision,
    names: Sequence[str] | None = None,
) -> str:
    """The words for ``decision``, a search's answer for ``seat`` in ``state``."""
    who = list(names) if names else [f"seat {k}" for k in range(state.players)]
    move = decision.move
    if move is None and not decision.options:
        return "Nothing to do now: the move is another player's."
    head = _sentence(move_words(state, seat, move, who))
    reasons = _reasons(state, seat, view, move, who)
    text = head[:-1] + (": " + ", and ".join(reasons) + "." if reasons else ".")
    if decision.searched and decision.options:
        ranked = sorted(decision.options, key=lambda o: (-o.visits, -o.wins))
        best = next(o for o in ranked if o.move == move)
        text += (
            f" In {decision.iterations} play-outs to the end of the hand, with the cards you "
            f"cannot see dealt at random, it won {_pct(best.wins)} of the {best.visits} it was "
            "played in"
        )
        others = [o for o in ranked if o.move != move]
        if others:
            nxt = others[0]  # the choice that went furthest in the search
            words = move_words(state, seat, nxt.move, who)
            if _pct(nxt.wins) != _pct(best.wins) and nxt.wins > best.wins:
                text += (f"; to {words} won {_pct(nxt.wins)}, a lead too small to be sure of, "
                         "so the usual choice stands")
            else:
                text += f"; the next best choice, to {words}, won {_pct(nxt.wins)}"
        text += "."
    elif not decision.searched and move is not None:
        text += " Nothing else is worth weighing here."
    return text


def _pct(share: float) -> str:
    return f"{round(100 * share)} %"


def _sentence(words: str) -> str:
    return words[:1].upper() + words[1:] + "."


def _say(state: State) -> str:
    return "SOLO" if state.rules.name == "moderno" else "DERNIER"


def move_words(state: State, seat: int, move: Move | None, who: Sequence[str]) -> str:
    """A move in a few words, as advice: "play 7♥, naming Picche ♠", "draw a card"."""
    rules = state.rules
    if move is None:
        return "let play go on"
    if isinstance(move, Play):
        verb = "play" if to_act(state) == seat else "jump in with"
        words = f"{verb} {card_label(move.card, rules)}"
        if move.suit is not None:
            words += f", naming {suit_text(move.suit, rules, colour=False, short=True)}"
        if move.target is not None:
            words += f", swapping hands with {who[move.target]}"
        if move.declare:
            words += f", saying {_say(state)}!"
        return words
    if isinstance(move, Draw):
        if state.pending_draw:
            return f"take the {state.pending_draw} pending cards"
        return "draw a card"
    if isinstance(move, Pass):
        return "pass, keeping the card you drew"
    if isinstance(move, Declare):
        return f"declare {_say(state)}! now"
    if isinstance(move, Catch):
        return f"catch {who[move.target]}"
    if isinstance(move, NameSuit):
        return f"name {suit_text(move.suit, rules, colour=False, short=True)}"
    if isinstance(move, ChooseHandSize):
        return f"deal {move.size} cards each"
    if isinstance(move, Cut):
        return "keep the cut card" if move.keep else "leave the cut card at the bottom"
    return str(move)


def _reasons(
    state: State, seat: int, view: Mapping[int, Card], move: Move | None, who: Sequence[str]
) -> list[str]:
    """What the move does at the table, in short clauses."""
    rules = state.rules
    if move is None:
        return ["jumping in is not worth it here"]
    if isinstance(move, Declare):
        return [f"a player down to one card who has not said {_say(state)} draws "
                f"{rules.declaration_penalty} cards"]
    if isinstance(move, Catch):
        return [f"{who[move.target]} holds one card and did not declare: they draw "
                f"{rules.declaration_penalty}"]
    faces = own_faces(state, seat, view)
    if isinstance(move, Draw):
        if state.pending_draw:
            return ["nothing in your hand answers the chain"]
        if not _fitting_slots(state, seat, faces):
            return ["nothing in your hand fits"]
        return ["keeping your cards is worth more here than any card you could play"]
    if isinstance(move, Pass):
        return ["the card you drew does not fit" if state.drawn not in _fitting_slots(
            state, seat, faces) else "the card you drew is worth keeping"]
    if isinstance(move, NameSuit):
        held = most_held_suit(faces.values())
        if move.suit == held:
            return ["you hold most of that suit"]
        return []
    if isinstance(move, ChooseHandSize):
        return []
    if isinstance(move, Cut):
        return ["a special card in hand is worth one card fewer" if move.keep else
                "only a special card may be kept"]
    assert isinstance(move, Play)
    return _play_reasons(state, seat, faces, move, who)


def _fitting_slots(state: State, seat: int, faces: Mapping[int, Card]) -> set[int]:
    """The slots ``seat`` could play now."""
    return {m.slot for m in legal_moves(state, seat, faces) if isinstance(m, Play)}


def _play_reasons(
    state: State, seat: int, faces: Mapping[int, Card], move: Play, who: Sequence[str]
) -> list[str]:
    rules = state.rules
    rank = move.card.rank
    flags = rules._info["flags"][rank]
    amount = rules._info["amount"].get(rank, 0)
    out: list[str] = []
    hand = state.hands[seat]
    d = state.direction
    n = state.players
    if len(hand) == 1:
        out.append("it is your last card: you go out")
    if to_act(state) != seat:
        out.append("it is identical to the top card, so it may be played out of turn")
    if state.pending_draw and to_act(state) == seat:
        if rank == rules.cancel_rank and rules.cancel_chain == state.pending_kind:
            out.append(f"it cancels the {state.pending_draw} pending cards")
        else:
            out.append(f"it passes the chain on instead of taking {state.pending_draw} cards")
    after = d * (-1 if flags & REVERSE else 1)
    nxt = step(seat, after, n, state.out)
    if flags & CHAIN and not state.pending_draw:
        out.append(f"{who[nxt]} must take {amount} cards or answer")
    if flags & SKIP:
        out.append(f"it makes {who[nxt]} miss a turn")
    if flags & FORCED:
        out.append(f"{who[nxt]} draws {amount} and misses a turn")
    if flags & PREVIOUS:
        prev = step(seat, -after, n, state.out)
        out.append(f"{who[prev]} draws {amount}")
    if flags & REVERSE and n - len(state.out) > 2:
        out.append("it turns the play round")
    if flags & SWAP and move.target is not None:
        out.append(f"you take {who[move.target]}'s {len(state.hands[move.target])} cards for "
                   f"your {len(hand) - 1}")
    if flags & ROTATE:
        out.append("every hand passes on to the next player")
    if flags & WILD and state.drawn < 0 and to_act(state) == seat:
        others = [x for x in _fitting_slots(state, seat, faces)
                  if rules._info["flags"][faces[x].rank] & WILD == 0]
        if not others:
            out.append("nothing else in your hand fits")
    if move.suit is not None:
        rest = [c for x, c in faces.items() if x != move.slot]
        if rest and most_held_suit(rest) == move.suit:
            out.append("you hold most of the suit it names")
    points = rules.card_points(rank)
    if points >= 10 and len(hand) > 1 and rules.scoring != "wins":
        out.append(f"it sheds a card worth {points} points")
    return out
