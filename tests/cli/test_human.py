"""The prompt's interpretation of typed lines: each legal choice reached, everything else
refused with a short reason."""

from __future__ import annotations

import pytest

from dernier_p2p.cli.human import Choice, Refused, interpret, options
from dernier_p2p.rules import (
    Card,
    Draw,
    Phase,
    Play,
    Rank,
    Suit,
    apply,
    chance_needed,
    get_variant,
    legal_moves,
    new_match,
    to_act,
)
from dernier_p2p.rules.simulate import Dealer

NAMES = ["Ann", "Bob", "Cy"]


def _table(variant: str, seed: int = 3):
    """A moderno/dernier state in play with seat ``to_act`` to move, and that seat's view."""
    rules = get_variant(variant)
    dealer = Dealer(rules, seed)
    state = new_match(rules, 3)
    while (req := chance_needed(state)) is not None or state.phase is not Phase.PLAY:
        if req is None:
            seat = to_act(state)
            state, _ = apply(state, legal_moves(state, seat, dealer.view(state, seat))[0])
        else:
            state, _ = apply(state, dealer.chance_move(state, req))
    seat = to_act(state)
    return state, seat, dict(dealer.view(state, seat))


def _with_face(variant: str, card: Card):
    state, seat, view = _table(variant)
    view[state.hands[seat][0]] = card  # the seat's first card is now ``card``
    return state, seat, view, legal_moves(state, seat, view)


def test_letters_and_refusals() -> None:
    state, seat, view = _table("dernier")
    moves = legal_moves(state, seat, view)
    assert interpret("d", state, seat, view, moves, NAMES) == next(
        m for m in moves if isinstance(m, Draw)
    )
    for line, reason in [
        ("xyz", "type a card number"),
        ("0", "pick a card from 1 to"),
        (str(len(state.hands[seat]) + 1), "pick a card from 1 to"),
        ("p", "you cannot pass now"),
        ("!", "nothing to declare now"),
        ("c", "nobody to catch"),
    ]:
        with pytest.raises(Refused, match=reason):
            interpret(line, state, seat, view, moves, NAMES)
    prompt = options(state, moves, in_turn=True)
    assert "d = draw" in prompt and prompt.endswith("q = leave > ")


def test_a_wild_card_asks_for_the_suit() -> None:
    state, seat, view, moves = _with_face("moderno", Card(Rank.WILD, None))
    choice = interpret("1", state, seat, view, moves, NAMES)
    assert isinstance(choice, Choice)
    assert set(choice.answers) == {"y", "r", "g", "b"}
    move = choice.answers["g"]
    assert isinstance(move, Play) and move.suit is Suit.GREEN and move in moves
    assert "Name a suit" in choice.prompt


def test_a_swap_card_asks_whom_to_swap_with() -> None:
    state, _, _ = _table("moderno")
    suit = state.named_suit if state.named_suit is not None else state.top.suit
    state, seat, view, moves = _with_face("moderno", Card(Rank.SWAP, suit))
    choice = interpret("1", state, seat, view, moves, NAMES)
    assert isinstance(choice, Choice)
    others = {str(s + 1) for s in range(3) if s != seat}
    assert set(choice.answers) == others
    for answer in others:
        assert choice.answers[answer].target == int(answer) - 1
    assert all(NAMES[int(a) - 1] in choice.prompt for a in others)


def test_a_card_that_does_not_match_is_refused_by_name() -> None:
    state, _, _ = _table("dernier")
    suit = next(s for s in Suit if s not in (state.top.suit, state.named_suit))
    rank = next(r for r in (Rank.N4, Rank.N5) if r is not state.top.rank)
    state, seat, view, moves = _with_face("dernier", Card(rank, suit))
    label = f"{rank.value}{'♦♥♣♠'[suit]}"
    with pytest.raises(Refused, match=f"{label} cannot be played now"):
        interpret("1", state, seat, view, moves, NAMES)


def test_a_number_while_a_suit_is_to_be_named_is_refused() -> None:
    rules = get_variant("dernier")
    # A seeded deal whose first card turned up is a Jolly: the dealer names the suit.
    dealer = Dealer(rules, 0, stack=[Card(Rank.JACK, Suit.RED)])
    state = new_match(rules, 2)
    while state.phase is not Phase.NAME_SUIT:
        req = chance_needed(state)
        assert req is not None, "the first card turned up names no suit"
        state, _ = apply(state, dealer.chance_move(state, req))
    seat = to_act(state)
    view = dict(dealer.view(state, seat))
    moves = legal_moves(state, seat, view)
    with pytest.raises(Refused, match="name the suit first"):
        interpret("1", state, seat, view, moves, NAMES)
    move = interpret("b", state, seat, view, moves, NAMES)
    assert move in moves and move.suit is Suit.BLUE


async def test_a_refused_move_is_told_and_the_prompt_comes_back(tmp_path) -> None:
    """A scripted human at seat 1 whose first move the host refuses: a short message, then
    the prompt again; the next line is read from it."""
    import io

    from dernier_p2p.cli.human import HumanAgent, LineReader
    from tests.net.helpers import play
    from tests.net.test_refused import RefusesOnce

    out: list[str] = []
    table_box: list = []

    def echo(text: str = "", nl: bool = True) -> None:
        out.append(text + ("\n" if nl else ""))

    def state():
        peer = table_box[0].peers.get(1) if table_box else None
        return None if peer is None or peer.me is None else peer.me.session.state

    # Each line that is not legal when read is refused by the prompt and the next one is read.
    script = "y\nk\n7\nd\np\nq\n"
    human = HumanAgent(["Host", "Ann"], [], LineReader(io.StringIO(script)), state,
                       echo=echo, colour=False)

    RefusesOnce.refused_once = False
    table_box.clear()
    table = await play(tmp_path, 2, host_cls=RefusesOnce, agents={1: human}, limit=30,
                       on_start=table_box.append)
    text = "".join(out)
    assert RefusesOnce.refused_once, text
    assert "Your move was refused (ILLEGAL_MOVE): refused for the test" in text
    after = text.split("Your move was refused", 1)[1]
    assert "q = leave > " in after  # the prompt came back
    assert type(table.errors.get(1)).__name__ == "QuitGame"  # "q" was read from it


def _agent(script: str, state):
    import io

    from dernier_p2p.cli.human import HumanAgent, LineReader

    out: list[str] = []

    def echo(text: str = "", nl: bool = True) -> None:
        out.append(text + ("\n" if nl else ""))

    agent = HumanAgent(NAMES, [], LineReader(io.StringIO(script)), lambda: state, echo=echo,
                       colour=False)
    return agent, out


async def test_a_wrong_suit_letter_asks_again() -> None:
    state, seat, view, moves = _with_face("moderno", Card(Rank.WILD, None))
    agent, out = _agent("1\nx\ng\n", state)
    move = await agent(state, seat, view)
    assert isinstance(move, Play) and move.suit is Suit.GREEN and move in moves
    text = "".join(out)
    assert "no such suit: type one of b, g, r, y" in text
    assert text.count("Name a suit") == 2


async def test_help_shows_the_variants_rules_and_leaving_is_confirmed() -> None:
    from dernier_p2p.cli.human import leave_warning

    state, seat, view = _table("moderno")
    agent, out = _agent("?\nq\nn\nd\n", state)
    move = await agent(state, seat, view)
    assert isinstance(move, Draw)  # "n" kept the seat; "d" was then taken
    text = "".join(out)
    assert "Moderno (112 cards)" in text and "fewest penalty points win" in text
    assert leave_warning(state) in text and "You resign and rank last" in text
    assert "q leaves (you resign and rank last" in text and "at fault" not in text  # no fault


def test_the_question_to_leave_says_what_leaving_does_at_this_table() -> None:
    """Three seats in play: the others play on (at `dernier play`: the bots finish the match),
    but in `dernier`, whose seed ends the match on a leave as on a time-out; two in play, or no
    first dealer yet: the match ends."""
    from dernier_p2p.cli.human import leave_warning
    from dernier_p2p.rules import Leave

    state, _, _ = _table("standard")
    assert "You resign and rank last; the others play on without you." in leave_warning(state)
    bots = leave_warning(state, bots=True)
    assert "You resign and rank last; the bots finish the match without you." in bots
    two, _ = apply(state, Leave(to_act(state)))  # a seat out: two left in play
    fresh = new_match(get_variant("standard"), 4)  # no first dealer yet
    dernier, _, _ = _table("dernier")  # three in play, but a leave ends a dernier match
    for ends in (two, fresh, dernier):
        for text in (leave_warning(ends), leave_warning(ends, bots=True)):
            assert "You resign: the match ends here and you rank last." in text
            assert "play on" not in text and "finish" not in text
    for text in (leave_warning(state), bots, leave_warning(two)):
        assert text.startswith("Leave the table? ") and text.endswith(
            " y = leave, anything else = stay > ")


async def test_leaving_after_the_warning() -> None:
    from dernier_p2p.cli.human import QuitGame

    state, seat, view = _table("dernier")
    agent, _ = _agent("q\ny\n", state)
    with pytest.raises(QuitGame):
        await agent(state, seat, view)


async def test_a_refused_card_says_why_in_the_engines_words() -> None:
    state, seat, view = _table("dernier")
    suit = next(s for s in Suit if s not in (state.top.suit, state.named_suit))
    rank = next(r for r in (Rank.N4, Rank.N5) if r is not state.top.rank)
    view[state.hands[seat][0]] = Card(rank, suit)
    agent, out = _agent("1\nd\n", state)
    assert isinstance(await agent(state, seat, view), Draw)
    assert "cannot be played now: " in "".join(out)


async def test_the_turn_clock_warns_before_the_table_times_the_seat_out() -> None:
    import os

    import trio

    from dernier_p2p.cli.human import HumanAgent, LineReader

    state, seat, view = _table("dernier")
    out: list[str] = []
    r, w = os.pipe()
    stream = os.fdopen(r, encoding="utf-8")

    def echo(text: str = "", nl: bool = True) -> None:
        out.append(text + ("\n" if nl else ""))

    agent = HumanAgent(NAMES, [], LineReader(stream), lambda: state, echo=echo, colour=False)
    agent.turn_s = 10.3  # the warning comes 10 s before the end: after 0.3 s here
    got: list = []

    async def ask() -> None:
        got.append(await agent(state, seat, view))

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask)
            with trio.fail_after(30):
                while "seconds left to move" not in "".join(out):
                    await trio.sleep(0.05)
            text = "".join(out)
            assert text.rstrip().endswith("q = leave >")  # the prompt is shown again after it
            os.write(w, b"d\n")
    finally:
        os.close(w)
    assert isinstance(got[0], Draw)


def test_a_refusal_from_the_table_is_told_in_words() -> None:
    state, _, _ = _table("dernier")
    agent, out = _agent("", state)
    agent.refused("ILLEGAL_MOVE", "[must-match] Card(rank=<Rank.N4: '4'>, suit=0) matches nei")
    agent.refused("ILLEGAL_MOVE", "refused for the test")
    assert out == [
        "  Your move was refused (ILLEGAL_MOVE): it matches neither the suit nor the rank of the"
        " top card\n",
        "  Your move was refused (ILLEGAL_MOVE): refused for the test\n",
    ]


async def test_another_move_typed_at_the_suit_prompt_is_taken_instead() -> None:
    state, seat, view, moves = _with_face("moderno", Card(Rank.WILD, None))
    agent, out = _agent("1\nt\nd\n", state)
    assert isinstance(await agent(state, seat, view), Draw)
    assert "no such suit" in "".join(out)  # "t" asked again; "d" is a move of its own


@pytest.mark.parametrize(
    ("variant", "rank"),
    [("dernier", Rank.JOKER), ("originale", Rank.JACK), ("moderno", Rank.WILD4),
     ("standard", Rank.WILD)],
)
def test_the_suit_prompt_fits_eighty_columns(variant: str, rank: Rank) -> None:
    import click

    state, _, _ = _table(variant)
    top = state.named_suit if state.named_suit is not None else state.top.suit
    suit = top if rank is Rank.JACK else None  # originale's J may name a suit, or keep its own
    state, seat, view, moves = _with_face(variant, Card(rank, suit))
    choice = interpret("1", state, seat, view, moves, NAMES, colour=True)
    assert isinstance(choice, Choice)
    assert set(choice.answers) >= {"y", "r", "g", "b"}
    assert ("" in choice.answers) == (rank is Rank.JACK)
    plain = click.unstyle(choice.prompt)
    assert len(plain) <= 80, plain
    assert plain.startswith("Name a suit: y ") and plain.endswith(" > ")


async def test_hint_says_what_the_strong_bot_would_play_and_why() -> None:
    """`hint` at the prompt: the search bot's move for this seat in words, from the seat's own
    view; the prompt stays open and the next line is the move."""
    from dernier_p2p.cli.help import help_lines

    state, seat, view = _table("dernier")
    agent, out = _agent("hint\nd\n", state)
    assert isinstance(await agent(state, seat, view), Draw)
    text = "".join(out)
    assert "  Hint: " in text
    assert "play-outs to the end of the hand" in text or "Nothing else is worth weighing" in text
    assert text.count("q = leave > ") == 2  # the prompt came back after the hint
    assert any("hint says what the strong bot would play" in line
               for line in help_lines("dernier"))


async def test_hint_at_the_suit_question_keeps_the_question_open() -> None:
    """`hint` typed at the question a wild card asks (name a suit) gives the hint, and the
    question stays open; on the full-screen table (no table printed) the hint is one line,
    which the screen's log wraps at its own width."""
    state, seat, view, moves = _with_face("moderno", Card(Rank.WILD, None))
    agent, out = _agent("1\nhint\ng\n", state)
    agent.show_table = False
    move = await agent(state, seat, view)
    assert isinstance(move, Play) and move.suit is Suit.GREEN and move in moves
    text = "".join(out)
    assert "no such suit" not in text and text.count("Name a suit") == 2
    hints = [line for line in out if line.startswith("  Hint: ")]
    assert len(hints) == 1 and hints[0].count("\n") == 1, out
    assert len(hints[0]) > 80  # not cut at the terminal's width
