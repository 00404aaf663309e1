"""The full-screen table driven headless (Textual's pilot) against real peers over loopback
TCP: what a person sees and can do in time."""

from __future__ import annotations

import re
import subprocess
import time
from collections import Counter
from pathlib import Path

from dernier_p2p.bots.hint import hint
from dernier_p2p.cli.follow import names_of
from dernier_p2p.cli.help import help_lines
from dernier_p2p.cli.human import THINKING
from dernier_p2p.cli.table import Seating, play_local
from dernier_p2p.protocol.verify import verify_file
from dernier_p2p.rules import Phase, Play
from dernier_p2p.tui.app import KEYS, NO_HINT, keys_line
from dernier_p2p.tui.link import ScreenLink
from tests.tui.helpers import (
    LIMIT,
    capture,
    in_turn,
    key_of,
    legal,
    my_hand,
    playable,
    run_screen_test,
    until,
)


def _local(tmp_path: Path, variant: str, options: dict, seed: int, offer_s: float = 3.0,
           players: int = 2):
    def main(link):
        seating = Seating(bot=False, colour=False, screen=link, offer_s=offer_s)
        return lambda: play_local(variant, players, options, seed, "Ann", tmp_path / "t",
                                  seating)

    return main


def test_a_jump_in_is_taken_within_its_window(tmp_path: Path) -> None:
    """Seed 3 deals Ann two Wild+4: she plays one, and jumps in with the other while the
    offer's countdown runs (the bot waits for her)."""

    async def scenario(pilot, link) -> None:
        await until(pilot, lambda: in_turn(link), "Ann's first turn")
        view = link.seat.session.view
        twins = [f for f, k in Counter(view[x] for x in my_hand(link)).items() if k > 1]
        assert [str(f) for f in twins] == ["WILD4"]
        first = next(x for x in my_hand(link) if view[x] == twins[0])
        await pilot.press(key_of(link, first))
        await until(pilot, lambda: "Name a suit" in link.prompt, "the suit prompt")
        await pilot.press("y")
        offer = await until(pilot, lambda: "jump in" in link.prompt and link.prompt,
                            "the jump-in offer")
        second = next(m.slot for m in legal(link) if isinstance(m, Play))
        keys = pilot.app.query_one("#offers")
        await until(pilot, lambda: keys.render().plain.strip(), "the offer's keys drawn")
        chip = keys.render().plain.splitlines()[0]
        assert keys.display and chip.startswith(f"[{key_of(link, second)}] jump in with Wild+4")
        assert "⏱" in chip  # the key's own countdown
        await pilot.press(key_of(link, second))
        await until(pilot, lambda: "Name a suit" in link.prompt, "the suit prompt again")
        await pilot.press("b")
        await until(pilot, lambda: "Ann jumps in" in "\n".join(link.log), "the jump-in")
        assert "Wild+4" in offer

    run_screen_test(_local(tmp_path, "moderno", {"match": ["hands", 1]}, 3), scenario)


def test_refusal_late_declaration_and_end_of_hand_reveal(tmp_path: Path) -> None:
    """Dernier with two-card hands: a card that does not fit is refused with its reason; at the
    end of a hand every hand is shown and the next hand waits for Enter; Ann plays down to one
    card without declaring and declares late, in time, with the offer's key."""
    seen = {"refused": False, "declared": False, "revealed": False}

    async def scenario(pilot, link) -> None:
        log = lambda: "\n".join(link.log)  # noqa: E731
        while not (seen["declared"] and seen["revealed"]):
            await until(pilot, lambda: link.prompt or link.pacer.hand_held or link.finished,
                        "a prompt or the end of a hand")
            assert not link.finished, "the match ended first:\n" + log()
            if link.pacer.hand_held:
                await until(pilot, lambda: "Press Enter for the next hand" in link.prompt,
                            "the key to go on")
                screen = pilot.app.screen_text()
                assert "Every hand, revealed" in screen
                shown = [line for line in screen.split("Every hand, revealed")[-1].splitlines()
                         if line.endswith(("point)", "points)"))]
                assert [line.split(":")[0] for line in shown] == ["  Ann", "  Bot 1"], screen
                plays = log().count(" plays ")
                await pilot.pause(0.5)
                assert log().count(" plays ") == plays  # nobody plays on before the key
                await pilot.press("enter")
                await until(pilot, lambda: not link.pacer.hand_held, "the next hand")
                seen["revealed"] = True
                continue
            prompt = link.prompt
            if "declare DERNIER" in prompt and "out of turn" in prompt:
                keys = pilot.app.query_one("#offers")
                # (the panel is drawn on the app's next refresh after the prompt is set)
                await until(pilot, lambda k=keys: k.display and
                            "[!]+Enter declare DERNIER! ⏱" in k.render().plain,
                            "the late declaration's keys")
                await pilot.press("!")
                await pilot.press("enter")
                await until(pilot, lambda: "Ann: DERNIER!" in log(), "the late declaration")
                await until(pilot, lambda k=keys: not k.display, "the offer's keys to go")
                seen["declared"] = True
                continue
            if not in_turn(link):
                await pilot.press("enter")  # let any other offer go
                await pilot.pause(0.1)
                continue
            if "Name a suit" in prompt:
                await pilot.press("y")
                continue
            cards = playable(link)
            stuck = [x for x in my_hand(link) if x not in cards]
            if not seen["refused"] and stuck and link.seat.session.state.drawn < 0:
                await pilot.press(key_of(link, stuck[0]))
                await until(pilot, lambda: "cannot be played now: " in log(), "the refusal")
                seen["refused"] = True
                continue
            if cards:
                await pilot.press(key_of(link, cards[0]))  # never with "!": declare late
            elif any(type(m).__name__ == "Pass" for m in legal(link)):
                await pilot.press("p")
            else:
                await pilot.press("d")
            await pilot.pause(0.1)

    options = {"match": ["hands", 6], "hand_size": 2}
    run_screen_test(_local(tmp_path, "dernier", options, 3), scenario)
    assert seen["refused"]


TURN_BACK = ("SKIP", "DRAW2", "WILD4", "REVERSE")  # at two seats, with reverse_skips_with_two
LATE_SEED = 1  # a deal where Ann soon gets the turn back with her second-last card


def test_in_turn_again_a_late_declaration_has_its_box_and_the_catch_waits_for_it(
    tmp_path: Path,
) -> None:
    """``standard``, two seats, two-card hands: Ann plays a card that gives her the turn back
    without "!". In turn again, the box shows the late declaration with its countdown above
    her turn's prompt; she lets it run, and the bot catches her only once it is over."""
    offer_s = 1.5

    async def scenario(pilot, link) -> None:
        log = lambda: "\n".join(link.log)  # noqa: E731
        while True:
            await until(pilot, lambda: link.prompt or link.pacer.hand_held or link.finished,
                        "a prompt or the end of a hand")
            assert not link.finished, "the match ended first:\n" + log()
            seat = link.seat
            if link.pacer.hand_held:
                await until(pilot, lambda: "Press Enter for the next hand" in link.prompt,
                            "the key to go on")
                await pilot.press("enter")
                await until(pilot, lambda: not link.pacer.hand_held, "the next hand")
                continue
            if not in_turn(link):
                await pilot.press("enter")  # let any offer go
                await pilot.pause(0.1)
                continue
            if seat.seat in seat.session.state.owes:  # in turn again, owing her declaration
                break
            if "Name a suit" in link.prompt:
                await pilot.press("y")
                continue
            plays = [m for m in legal(link) if isinstance(m, Play)]
            back = [m.slot for m in plays if m.card.rank.name in TURN_BACK]
            if len(my_hand(link)) == 2 and back:
                await pilot.press(key_of(link, back[0]))  # without "!": declare late
            elif plays:
                await pilot.press(key_of(link, plays[0].slot))
            elif any(type(m).__name__ == "Pass" for m in legal(link)):
                await pilot.press("p")
            else:
                await pilot.press("d")
            await pilot.pause(0.1)
        played = [r for r in seat.records
                  if r["env"]["seat"] == 0 and r["env"]["body"]["type"] == "move"][-1]
        keys = pilot.app.query_one("#offers")

        def box() -> bool:
            return keys.display and "[!]+Enter declare DERNIER! ⏱" in keys.render().plain

        def catch() -> dict | None:
            return next((r for r in seat.records[played["i"]:]
                         if r["env"]["body"].get("move") == "catch"), None)

        await until(pilot, lambda: box() or catch(), "the late declaration's box")
        assert box() and not catch(), "caught before the box was shown:\n" + log()
        assert "let it go" not in keys.render().plain
        assert "! = declare DERNIER/SOLO" in link.prompt  # the turn's own prompt, below it
        await until(pilot, catch, "the catch")
        assert catch()["t"] - played["t"] >= offer_s * 1000, (played, catch())
        await until(pilot, lambda: "Bot 1 catches Ann" in log(), "the catch told")

    options = {"match": ["hands", 12], "hand_size": 2, "reverse_skips_with_two": True}
    run_screen_test(_local(tmp_path, "standard", options, LATE_SEED, offer_s), scenario)


GAME = bytes(range(16))


def test_a_joiner_sees_the_table_and_the_turn_countdown(tmp_path: Path) -> None:
    """A joiner at a host's table (the host's seat played by a bot on another peer) sees the
    table between its turns, with the countdown of whoever is at turn; "/" opens a chat line
    whose keys (command keys too) are words, not moves, and Enter sends it: it shows in the
    joiner's log and in the host seat's log, and both seats' records hold it."""
    import trio

    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.cli.table import LOOPBACK, join_table
    from dernier_p2p.net.agent import bot_agent
    from dernier_p2p.net.host import Host, HostConfig
    from dernier_p2p.net.peer import PeerConfig
    from dernier_p2p.net.timers import Timers
    from dernier_p2p.wire.identity import IdentityKey

    host_link = ScreenLink()  # the host seat's log, as its screen would show it

    def main(link):
        async def table() -> None:
            config = HostConfig(
                players=2, variant="dernier", options={"match": ["hands", 1]},
                timers=Timers(turn_ms=20_000, declare_ms=1_000, grace_ms=15_000), name="Host",
                table_name="t", bind=LOOPBACK, port=0, transcript=tmp_path / "host.t",
                game=GAME, seed=b"s" * 32,  # a fixed deal: the host is at turn first
            )
            host = Host(IdentityKey.generate(b"h" * 32), config, bot_agent(HeuristicBot(1), 1.5))
            seating = Seating(bot=False, colour=False, screen=link)
            host_seating = Seating(bot=True, colour=False, screen=host_link)
            async with trio.open_nursery() as nursery:
                await nursery.start(host.run)
                nursery.start_soon(host_seating.follow, host)
                peer = PeerConfig(name="Joe", transcript=tmp_path / "joe.t", connect_s=60.0,
                                  seed=b"j" * 32)  # with the host's: the same coin every run
                await join_table(IdentityKey.generate(b"j" * 32), (LOOPBACK, host.port), peer,
                                 seating)

        return table

    def turn_line(app, name: str) -> str:
        lines = app.screen_text().splitlines()
        return next((x for x in lines if x.startswith("▶ ") and name in x), "")

    async def scenario(pilot, link) -> None:
        await until(pilot, lambda: "⏱" in turn_line(pilot.app, "Joe (you)") and in_turn(link),
                    "Joe's own turn")  # this deal: Joe first
        assert "Top card:" in pilot.app.screen_text()
        hand = my_hand(link)
        await pilot.press("/")
        await pilot.press(*"hi, 1 d q?")
        assert "Say: hi, 1 d q?" in pilot.app.screen_text()
        await pilot.press("backspace", "!", "enter")
        await until(pilot, lambda: "Say:" not in pilot.app.screen_text(),
                    "the chat prompt closed")  # (the screen redraws on its own time)
        said = "» Joe: hi, 1 d q!"
        await until(pilot, lambda: said in host_link.log, "the chat in the host seat's log")
        await until(pilot, lambda: said in pilot.app.screen_text(), "the chat on Joe's screen")
        assert my_hand(link) == hand and not link.finished  # no key was taken as a move
        for seat in (link.seat, host_link.seat):  # the records each transcript is written from
            chats = [r["env"] for r in seat.records if r["env"]["body"]["type"] == "chat"]
            assert [(e["seat"], e["body"]["text"]) for e in chats] == [(1, "hi, 1 d q!")]
        cards = playable(link)
        await pilot.press(key_of(link, cards[0]) if cards else "d")  # then the host's turn
        host_turn = await until(pilot, lambda: "⏱" in turn_line(pilot.app, "Host")
                                and turn_line(pilot.app, "Host"), "the host's turn with a clock")
        left = host_turn.split("⏱", 1)[1].strip()
        assert left.endswith(" s") or left.startswith("0:"), host_turn  # under 20 s

    run_screen_test(main, scenario)


def test_a_watcher_sees_the_table_without_a_hand(tmp_path: Path) -> None:
    """`dernier watch` on screen: the table of two bots live, no hand and no prompt, the
    revealed hands in the log at the end; "/" cannot talk for a watcher; its transcript checks
    to the end of the match."""
    import trio

    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.cli.table import LOOPBACK, watch_table
    from dernier_p2p.net.agent import bot_agent
    from dernier_p2p.net.host import Host, HostConfig
    from dernier_p2p.net.peer import Peer, PeerConfig
    from dernier_p2p.net.watch import WatchConfig
    from dernier_p2p.protocol.verify import check_records
    from dernier_p2p.wire.identity import IdentityKey
    from dernier_p2p.wire.transcript import read_transcript

    go = {"on": False}  # the host plays once the screen is checked

    async def host_bot(state, seat, view):
        while not go["on"]:
            await trio.sleep(0.02)
        return HeuristicBot(0)(state, seat, view)

    def main(link):
        link.watching = True

        async def table() -> None:
            config = HostConfig(players=2, options={"match": ["hands", 1]}, bind=LOOPBACK,
                                port=0, transcript=tmp_path / "host.t", linger_s=0.3)
            host = Host(IdentityKey.generate(b"h" * 32), config, host_bot)
            async with trio.open_nursery() as nursery:
                await nursery.start(host.run)
                bea = Peer(IdentityKey.generate(b"b" * 32), (LOOPBACK, host.port),
                           bot_agent(HeuristicBot(1)), PeerConfig(name="Bea", linger_s=0.3))
                nursery.start_soon(bea.run)
                seating = Seating(bot=True, colour=False, screen=link)
                await watch_table((LOOPBACK, host.port),
                                  WatchConfig(transcript=tmp_path / "watch.t"), seating)

        return table

    async def scenario(pilot, link) -> None:
        await until(pilot, lambda: "Top card:" in pilot.app.screen_text(), "the table")
        screen = pilot.app.screen_text()
        assert "Watching: you have no seat" in screen and "(you)" not in screen
        note = pilot.app.query_one("#hand").render().plain
        assert len(note) <= 76, note  # one line of the 80-column screen
        await until(pilot, lambda: "q stop watching" in capture(pilot.app), "the watcher's keys")
        await pilot.press("/", "h", "i", "enter")
        await until(pilot, lambda: any("watcher has no seat" in x for x in link.log),
                    "the watcher told it cannot talk")
        go["on"] = True
        await until(pilot, lambda: any(x.startswith("Scores:") for x in link.log),
                    "the end of the match")
        assert "── Every hand, revealed ──" in link.log

    run_screen_test(main, scenario)
    verdict = check_records(read_transcript(tmp_path / "watch.t"))
    assert verdict.ok, verdict


def _seconds(line: str) -> float:
    """The countdown on a player's line ("12.3 s" or "1:59")."""
    left = line.split("⏱", 1)[1].strip()
    if left.endswith(" s"):
        return float(left[:-2])
    minutes, seconds = left.split(":")
    return 60 * int(minutes) + int(seconds)


def _start_host(tmp_path: Path) -> tuple[subprocess.Popen, int]:
    """A bot hosting a two-seat table in its own process, with a 30 s out-of-turn window and
    a fixed deal (with the joiner's fixed seed: the bot is to act first in hand 2); its port
    once it listens."""
    from dernier_p2p.wire.identity import IdentityKey
    from tests.cli.helpers import spawn

    key = tmp_path / "host.pem"
    IdentityKey.generate(b"h" * 32).save(key)
    out = tmp_path / "host.out"
    proc = spawn(tmp_path, out, "host", "--bot", "--players", "2", "--hands", "2", "--port", "0",
                 "--bind", "127.0.0.1", "--no-announce", "--no-map", "--offer-seconds", "30",
                 "--turn-seconds", "120", "--seed", "6", "--key", str(key), "--transcript",
                 str(tmp_path / "host.t"))
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"on port (\d+)\.", out.read_text(errors="replace"))
        if found:
            return proc, int(found.group(1))
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("the host never listened:\n" + out.read_text(errors="replace"))


def test_a_joiner_and_a_bot_host_in_another_process_share_the_window_and_the_clock(
    tmp_path: Path,
) -> None:
    """Joe joins a table hosted by a bot in another process, whose out-of-turn window is 30 s.
    Joe's own clock counts down from the table's turn time and starts again after he draws;
    the bot moves as soon as Joe has nothing to do out of turn (far within the window), holds
    while Joe has an offer open, and after the first hand waits for Joe's key (showing its own
    clock on Joe's screen) before it plays."""
    import trio

    from dernier_p2p.cli.table import LOOPBACK, join_table
    from dernier_p2p.net.peer import PeerConfig
    from dernier_p2p.wire.identity import IdentityKey

    proc, port = _start_host(tmp_path)
    seen: Counter = Counter()

    def main(link):
        async def table() -> None:
            seating = Seating(bot=False, colour=False, screen=link)
            peer = PeerConfig(name="Joe", transcript=tmp_path / "joe.t", connect_s=60.0,
                              seed=b"j" * 32)
            await join_table(IdentityKey.generate(b"j" * 32), (LOOPBACK, port), peer, seating)
            await trio.sleep_forever()

        return table

    async def scenario(pilot, link) -> None:
        app = pilot.app
        log = lambda: "\n".join(link.log)  # noqa: E731

        def turn_line(name: str) -> str:
            lines = app.screen_text().splitlines()
            return next((x for x in lines if x.startswith("▶ ") and name in x), "")

        def host_moves() -> int:
            return sum(1 for r in link.seat.records
                       if r["env"]["seat"] == 0 and r["env"]["body"]["type"] == "move")

        await until(pilot, lambda: link.pacer is not None and link.seat is not None, "the seat")
        limit = LIMIT  # the first hand's shuffle first
        while not link.pacer.hand_held:
            await until(pilot, lambda: link.prompt or link.pacer.hand_held, "a prompt or the "
                        "hand's end (the bot would wait 30 s if Joe's ready did not reach it)",
                        limit)
            limit = 20.0
            state = link.seat.session.state
            if link.pacer.hand_held:
                break
            if not in_turn(link):  # an offer: keys with a countdown; the bot holds
                # the screen redraws every 0.1 s: the prompt can open between two redraws
                keys = await until(pilot, lambda: "⏱" in app.query_one("#offers").render().plain
                                   and app.query_one("#offers").render().plain,
                                   "the out-of-turn keys", 10.0)
                assert "⏱" in keys and ("jump in" in keys or "declare" in keys
                                        or "catch" in keys), keys
                if not seen["offer"]:
                    held = host_moves()
                    await pilot.pause(1.0)
                    assert host_moves() == held, "the bot moved while Joe's offer was open"
                await pilot.press("enter")
                seen["offer"] += 1
                await pilot.pause(0.1)
                continue
            line = await until(pilot, lambda: "⏱" in turn_line("Joe (you)")
                               and turn_line("Joe (you)"), "Joe's clock", 10.0)
            # the table's 120 s, counted from when it waits on Joe (not "0.0 s")
            assert "⏱" in line and _seconds(line) > 60, app.screen_text()
            kinds = {type(m).__name__ for m in legal(link)}
            if not seen["draw"] and "Draw" in kinds and state.pending_draw == 0:
                # let his clock run (an ack he sends meanwhile restarts it, as at the host)
                await until(pilot, lambda: _seconds(turn_line("Joe (you)")) <= 118,
                            "Joe's clock to run down", 20.0)
                before = _seconds(turn_line("Joe (you)"))
                await pilot.press("d")
                await until(pilot, lambda: link.seat.session.state.drawn >= 0 and link.prompt
                            and in_turn(link), "the prompt after the draw")
                after = _seconds(turn_line("Joe (you)"))
                assert after > before, (before, after)  # a fresh clock for the drawn card
                seen["draw"] += 1
                continue
            cards = playable(link)
            if "Name a suit" in link.prompt or "NameSuit" in kinds:
                await pilot.press("y")
            elif cards:
                await pilot.press(key_of(link, cards[0]))
            elif "Pass" in kinds:
                await pilot.press("p")
            else:
                await pilot.press("d")
            await pilot.pause(0.1)
        assert seen["draw"] and seen["offer"], seen  # this deal has both

        # the first hand is over: every hand shown; the bot's next hand waits for Joe's key
        assert "Every hand, revealed" in log()
        session = link.seat.session
        await until(pilot, lambda: session.state.hand_number == 2
                    and any(what == "move" for _, what in session.pending), "hand 2's first turn")
        assert (0, "move") in session.pending, app.screen_text()
        assert "⏱" in turn_line("Host"), app.screen_text()
        held = host_moves()
        await pilot.pause(1.5)
        assert host_moves() == held, "the bot played before Joe pressed the key"
        await pilot.press("enter")
        await until(pilot, lambda: host_moves() > held, "the bot's move after the key", 20.0)

    try:
        run_screen_test(main, scenario)
    finally:
        proc.kill()
        proc.wait()


def _whole(app) -> bool:
    """No line of the panels shown wraps: each takes as many rows as it has lines."""
    for wid in ("#players", "#centre", "#hand", "#offers", "#offer"):
        widget = app.query_one(wid)
        if widget.display and widget.content_size.height != len(
                widget.render().plain.split("\n")):
            return False
    return True


def test_the_panels_fit_80_columns_without_breaking_a_line(tmp_path: Path) -> None:
    """At 80x24 each player is one line and the centre panel's lines are whole phrases: no
    line of any panel wraps; the hour that ``dernier play`` gives a turn shows no clock; no
    log line hides under the scrollbar."""

    async def scenario(pilot, link) -> None:
        await until(pilot, lambda: in_turn(link), "Ann's first turn")
        await until(pilot, lambda: _whole(pilot.app), "every panel without a wrapped line",
                    limit=5)  # the layout follows a redraw by a frame: asked until it holds
        assert "⏱" not in pilot.app.query_one("#players").render().plain
        long = "Bea has left the match and ranks last. Hand 1 does not count; the others play on."
        link.log.extend([long] * 3 + [f"line {i}" for i in range(20)] + [long] * 3)
        log = pilot.app.query_one("#log")
        await until(pilot, lambda: len(log.lines) > 30, "the lines in the log")
        shown = log.scrollable_content_region.width  # the scrollbar's columns excluded
        over = [(s.cell_length, s.text) for s in log.lines if s.cell_length > shown]
        assert not over, (shown, over)  # no text hidden under the scrollbar

    run_screen_test(_local(tmp_path, "dernier", {"match": ["hands", 1]}, 3), scenario,
                    size=(80, 24))


def test_the_log_keeps_five_rows_at_every_size_from_60x20_to_200x60(tmp_path: Path) -> None:
    """Four players, Ann's turn, the terminal resized from 60x20 to 200x60: the log always
    has five rows or more and its lines wrap at its width, no panel's line wraps, Ann's line
    is one row with her name."""

    def main(link):
        seating = Seating(bot=False, colour=False, screen=link)
        return lambda: play_local("dernier", 4, {"match": ["hands", 1]}, 3, "Ann",
                                  tmp_path / "t", seating)

    async def scenario(pilot, link) -> None:
        await until(pilot, lambda: in_turn(link), "Ann's first turn")
        app = pilot.app
        log = app.query_one("#log")
        link.log.append("Bea has left the match and ranks last. Hand 1 does not count; the "
                        "others play on with a new deal, and Bea's transcript names her.")
        for width in (200, 140, 100, 80, 70, 60):  # wider, then narrower and narrower
            for height in (20, 24, 30, 45, 60):
                await pilot.resize_terminal(width, height)
                size = (width, height)
                await until(pilot, lambda s=size: app.size == s and _whole(app) and all(
                    line.cell_length <= log.scrollable_content_region.width
                    for line in log.lines), f"whole panels and log lines at {width}x{height}",
                    limit=5)  # the log's lines wrapped anew at its width
                rows = log.scrollable_content_region.height
                assert rows >= 5, (width, height, rows, capture(app))
                players = app.query_one("#players").render().plain.splitlines()
                assert any(line.startswith("▶ Ann (you)") or "Ann (you)" in line
                           for line in players), players

    run_screen_test(main, scenario, size=(60, 20))


def test_ctrl_c_asks_to_leave_and_a_second_one_leaves(tmp_path: Path) -> None:
    """Ctrl-C at Ann's turn asks whether to leave, as "q" does, with the help open too;
    another key stays; Ctrl-C twice leaves the table: Ann resigns, which at two seats ends
    the match (the run ends, its transcript complete)."""

    async def scenario(pilot, link) -> None:
        await until(pilot, lambda: in_turn(link), "Ann's first turn")
        await pilot.press("question_mark")
        await until(pilot, lambda: len(pilot.app.screen_stack) > 1, "the help")
        await pilot.press("ctrl+c")
        await until(pilot, lambda: "y = leave" in link.prompt, "the question to leave")
        await pilot.press("space")  # any key closes the help
        await until(pilot, lambda: len(pilot.app.screen_stack) == 1, "the help closed")
        await pilot.press("n")
        await until(pilot, lambda: in_turn(link) and "y = leave" not in link.prompt,
                    "Ann's turn again")
        await pilot.press("ctrl+c")
        await until(pilot, lambda: "y = leave" in link.prompt, "the question again")
        assert "the match ends here" in link.prompt  # two seats: leaving ends the match
        await pilot.press("ctrl+c")
        await until(pilot, lambda: link.finished, "the end of the run")

    run_screen_test(_local(tmp_path, "dernier", {"match": ["hands", 1]}, 3), scenario)
    verdict = verify_file(tmp_path / "t")
    assert verdict.ok and verdict.summary.standings[-1] == 0, verdict  # Ann resigned: last


def test_leaving_with_no_prompt_open_resigns_and_the_bots_finish(tmp_path: Path) -> None:
    """Three seats at a table that plays on (option leave play_on): "q" while no prompt is
    open (the screen asks itself) tells what leaving does here; "y" resigns the seat, the bots
    finish the match at once, and the transcript is complete, Ann last."""

    def no_prompt() -> bool:
        seat = link_box[0].seat
        return (seat is not None and seat.session.state is not None
                and seat.session.state.phase is Phase.PLAY and not link_box[0].prompt)

    link_box: list = []

    async def scenario(pilot, link) -> None:
        link_box.append(link)
        await until(pilot, no_prompt, "a moment with no prompt open")
        await pilot.press("q")
        await until(pilot, lambda: "y = leave" in pilot.app.screen_text(), "the question")
        assert "the bots finish the match without you" in pilot.app.screen_text()
        await pilot.press("y")
        await until(pilot, lambda: link.left, "the seat leaving")
        await until(pilot, lambda: any("The bots finish the match" in x for x in link.log),
                    "the word that the bots finish")
        await until(pilot, lambda: link.finished, "the end of the match")

    run_screen_test(_local(tmp_path, "dernier", {"match": ["hands", 1], "leave": "play_on"}, 5,
                           players=3), scenario)
    verdict = verify_file(tmp_path / "t")
    assert verdict.ok and verdict.summary.finished, verdict
    assert verdict.summary.standings[-1] == 0, verdict
    assert not any("lost connection" in x for x in link_box[0].log), link_box[0].log


def test_the_hint_key_puts_the_strong_bots_move_in_the_log_at_a_move_of_yours(
        tmp_path: Path) -> None:
    """"h" before the table has asked anything says when to ask; at Ann's turn it puts the
    strong bot's move for her seat and why in the log, the words ``hint`` gives for her own
    view (its figures the search's), one line, and her prompt comes back; with the question
    to leave open, "h" gives no hint."""

    async def scenario(pilot, link) -> None:
        log = lambda: "\n".join(link.log)  # noqa: E731
        assert not link.prompt
        await pilot.press("h")
        await until(pilot, lambda: NO_HINT in log(), "the word that a hint waits for a move")
        await until(pilot, lambda: in_turn(link), "Ann's first turn")
        seat = link.seat
        state = seat.session.state
        expected = hint(state, seat.seat, dict(seat.session.view), names_of(seat))
        await pilot.press("h")
        line = await until(pilot, lambda: next((x for x in link.log if x.startswith("Hint: ")),
                                               None), "the hint")
        assert line == f"Hint: {expected}"
        assert THINKING in link.log[:link.log.index(line)]
        assert "play-outs to the end of the hand" in line or "Nothing else is worth" in line
        await until(pilot, lambda: in_turn(link), "Ann's prompt again")
        assert seat.session.state is state  # nobody moved meanwhile: it was Ann's decision
        await pilot.press("q")
        await until(pilot, lambda: "y = leave" in link.prompt, "the question to leave")
        shown = log().count(NO_HINT)
        await pilot.press("h")
        await until(pilot, lambda: log().count(NO_HINT) == shown + 1, "no hint at a question")
        assert log().count("Hint: ") == 1
        await pilot.press("n")
        await until(pilot, lambda: in_turn(link) and "y = leave" not in link.prompt,
                    "Ann's turn again")
        cards = playable(link)
        await pilot.press(key_of(link, cards[0]) if cards else "d")
        await until(pilot, lambda: seat.session.state is not state, "Ann's move")

    run_screen_test(_local(tmp_path, "dernier", {"match": ["hands", 1]}, 3), scenario,
                    size=(60, 20))


def test_the_hint_key_is_in_the_key_help_at_60_columns() -> None:
    """The key line at 60 columns (on its own row, or in the hand panel's border) and the ?
    help name the hint key."""
    assert "h hint" in keys_line(KEYS, 60 - 2)
    assert "h hint" in keys_line(KEYS, 60 - 8)
    assert any("h hint" in line for line in help_lines("dernier", screen=True))


def test_the_hint_key_at_an_out_of_turn_offer(tmp_path: Path) -> None:
    """Seed 3 deals Ann two Wild+4 in moderno: after she plays one, "h" at the jump-in offer
    weighs jumping in with the other against letting play go on, and the offer's keys come
    back while its window runs."""

    async def scenario(pilot, link) -> None:
        await until(pilot, lambda: in_turn(link), "Ann's first turn")
        view = link.seat.session.view
        first = next(x for x in my_hand(link) if str(view[x]) == "WILD4")
        await pilot.press(key_of(link, first))
        await until(pilot, lambda: "Name a suit" in link.prompt, "the suit prompt")
        await pilot.press("y")
        await until(pilot, lambda: "jump in" in link.prompt, "the jump-in offer")
        await pilot.press("h")
        line = await until(pilot, lambda: next((x for x in link.log if x.startswith("Hint: ")),
                                               None), "the hint")
        assert line.startswith(("Hint: Jump in with Wild+4", "Hint: Let play go on")), line
        keys = pilot.app.query_one("#offers")
        await until(pilot, lambda: "jump in" in link.prompt and keys.display and
                    "jump in with Wild+4" in keys.render().plain, "the offer's keys again")

    run_screen_test(_local(tmp_path, "moderno", {"match": ["hands", 1]}, 3, offer_s=60.0),
                    scenario)
