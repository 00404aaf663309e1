"""The ``?`` help of a table: the variant's rules in short (docs/RULES.md has them in full) and
the keys of the line interface and of the full-screen table."""

from __future__ import annotations

SHORT_RULES = {
    "dernier": (
        "Dernier (54 cards): match the top card's suit or rank; otherwise draw 1 and play it or "
        "pass.",
        "A: the next player draws 2 unless they answer with an A. 7: the previous player draws 2.",
        "J: wild, name a suit. Q: skip the next player. K: reverse the direction.",
        "Jolly: wild, name a suit; the next player draws 4 unless they answer with a Jolly.",
        "Under a pending chain only the same kind of card answers; taking the cards ends the turn.",
        "Down to one card: declare DERNIER (! with the play, or ! alone) before the next "
        "player moves, or draw 2.",
        "The hand ends when the draw pile runs out. Going out scores 50 + the cards left in "
        "the others' hands; most points win.",
    ),
    "originale": (
        "Originale (108 cards, 4 Matte): match suit or value; otherwise draw 1, then play it or "
        "pass (PASSO).",
        "A: the next player draws 3 unless they answer with an A; a 2 of the A's suit cancels "
        "the chain. 7: the previous player draws 1.",
        "J: may name a new suit. Q: skip. K: reverse. Matta: wild, names the suit, next draws 5 "
        "unless answered with a Matta.",
        "Anticipo: a card identical to the top card may be played at once, out of turn.",
        "A wrong card is taken back and costs 2 cards. Declare DERNIER with the second-last "
        "card (add ! to the card number).",
        "The first to win three hands wins the match.",
    ),
    "moderno": (
        "Moderno (112 cards): match colour, number or symbol; black cards go on anything.",
        "Skip, Reverse; +2: the next takes 2 or stacks a +2. Wild: name the colour. Wild+4: "
        "name the colour, the next takes 4 or stacks a Wild+4.",
        "Swap: swap hands with a player you choose. Rotate: every hand passes to the next "
        "player; you name the colour.",
        "Jump in at any moment with a card exactly equal to the top card.",
        "SOLO: declare with the second-last card (add !), or draw 2.",
        "The others count their cards as penalty points: the fewest penalty points win the "
        "match.",
    ),
    "standard": (
        "Standard (108 cards): match number, colour or symbol; Wild and Wild+4 at any time.",
        "Skip, Reverse; +2: the next draws 2 and misses the turn; Wild+4: name the colour, the "
        "next draws 4 and misses the turn. No stacking.",
        "No match: draw 1, play it if it fits or keep it (pass).",
        "Down to one card: declare (!) before the next player moves; until then anyone may "
        "catch you (c) and you draw 2.",
        "The winner of a hand scores the cards left in the others' hands; first to 500 wins.",
    ),
}

PLAIN_KEYS = (
    "Keys: a card number plays it (add ! to declare with it: 3!), d draws or takes the pending "
    "cards, p passes after drawing, ! declares, c catches a player who did not declare, "
    "y/r/g/b names a suit, Enter lets an out-of-turn offer go, /words says words to the "
    "table, hint says what the strong bot would play here and why, ? shows this help, q "
    "leaves (you resign and rank last; you are asked first).",
)

SCREEN_KEYS = (
    "Keys: 1-9 and 0 (10th), then letters a-z for cards beyond, play a card (! first to declare "
    "with it); d draw, p pass, ! declare, c catch, y/r/g/b name a suit, Enter let an offer "
    "go or go on after a hand, h hint (what the strong bot would play here and why), / chat, "
    "? help, Esc close, q leave.",
    "PgUp/PgDn (and the arrows, the mouse wheel) scroll the log back and forth; the host's "
    "Ctrl+Y copies the invite code (the terminal must allow it: OSC 52).",
)


def help_lines(variant: str, screen: bool = False) -> list[str]:
    """The help shown by ``?``: the variant's short rules, then the keys."""
    rules = SHORT_RULES.get(variant, ("(no short rules for this variant)",))
    return [*rules, *(SCREEN_KEYS if screen else PLAIN_KEYS)]
