"""The full-screen table driven headless (Textual's pilot) against real peers over loopback
TCP: what a person sees and can do in time."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from dernier_p2p.cli.table import Seating, play_local
from dernier_p2p.rules import Play
from dernier_p2p.tui.link import ScreenLink
from tests.tui.helpers import (
    capture,
    in_turn,
    key_of,
    legal,
    my_hand,
    playable,
    run_screen_test,
    until,
)


def _local(tmp_path: Path, variant: str, options: dict, seed: int, offer_s: float = 3.0):
    def main(link):
        seating = Seating(bot=False, colour=False, screen=link, offer_s=offer_s)
        return lambda: play_local(variant, 2, options, seed, "Ann", tmp_path / "t", seating)

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
        screen = pilot.app.screen_text()
        assert "⏱" in screen.split("jump in", 1)[1]  # the offer's own countdown
        second = next(m.slot for m in legal(link) if isinstance(m, Play))
        await pilot.press(key_of(link, second))
        await until(pilot, lambda: "Name a suit" in link.prompt, "the suit prompt again")
        await pilot.press("b")
        await until(pilot, lambda: "Ann jumps in" in "\n".join(link.log), "the jump-in")
        assert "Wild+4" in offer

    run_screen_test(_local(tmp_path, "moderno", {"match": ["hands", 1]}, 3), scenario)


def test_refusal_late_declaration_and_end_of_hand_reveal(tmp_path: Path) -> None:
    """Dernier with two-card hands: a card that does not fit is refused with its reason; at the
    end of a hand every hand is shown and the next hand waits for Enter; Ann plays down to one
    card without declaring and declares late, in time."""
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
                assert "⏱" in pilot.app.screen_text()
                await pilot.press("!")
                await pilot.press("enter")
                await until(pilot, lambda: "Ann: DERNIER!" in log(), "the late declaration")
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
        host_turn = await until(pilot, lambda: "⏱" in turn_line(pilot.app, "Host")
                                and turn_line(pilot.app, "Host"), "the host's turn with a clock")
        left = host_turn.split("⏱", 1)[1].strip()
        assert left.endswith(" s") or left.startswith("0:"), host_turn  # under 20 s
        await until(pilot, lambda: "⏱" in turn_line(pilot.app, "Joe (you)"), "Joe's own turn")
        assert "Top card:" in pilot.app.screen_text()
        hand = my_hand(link)
        await pilot.press("/")
        await pilot.press(*"hi, 1 d q?")
        assert "Say: hi, 1 d q?" in pilot.app.screen_text()
        await pilot.press("backspace", "!", "enter")
        assert "Say:" not in pilot.app.screen_text()
        said = "» Joe: hi, 1 d q!"
        await until(pilot, lambda: said in host_link.log, "the chat in the host seat's log")
        await until(pilot, lambda: said in pilot.app.screen_text(), "the chat on Joe's screen")
        assert my_hand(link) == hand and not link.finished  # no key was taken as a move
        for seat in (link.seat, host_link.seat):  # the records each transcript is written from
            chats = [r["env"] for r in seat.records if r["env"]["body"]["type"] == "chat"]
            assert [(e["seat"], e["body"]["text"]) for e in chats] == [(1, "hi, 1 d q!")]

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
