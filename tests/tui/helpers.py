"""Driving the full-screen table headless: Textual's pilot presses keys while the table's trio
run (real peers over loopback TCP) runs as a guest of the same asyncio loop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from dernier_p2p.rules import Play
from dernier_p2p.tui import guest
from dernier_p2p.tui.app import TableApp
from dernier_p2p.tui.link import ScreenLink
from dernier_p2p.tui.view import card_key

LIMIT = 90.0  # seconds any one wait may take on a busy machine


async def until(pilot: Any, test: Callable[[], Any], what: str, limit: float = LIMIT) -> Any:
    """Let the app run until ``test()`` is true (returns it); fail naming ``what``."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        value = test()
        if value:
            return value
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}; screen:\n{pilot.app.screen_text()}")


def legal(link: ScreenLink) -> list:
    seat = link.seat
    return [] if seat is None else seat.session.legal()


def my_hand(link: ScreenLink) -> list[int]:
    seat = link.seat
    return list(seat.session.state.hands[seat.seat])


def key_of(link: ScreenLink, slot: int) -> str:
    return card_key(my_hand(link).index(slot))


def in_turn(link: ScreenLink) -> bool:
    seat = link.seat
    return bool(link.prompt) and seat.session.state.turn == seat.seat and "out of turn" not in (
        link.prompt
    )


def playable(link: ScreenLink) -> list[int]:
    return [m.slot for m in legal(link) if isinstance(m, Play)]


def run_screen_test(
    main: Callable[[ScreenLink], Callable[[], Awaitable[Any]]],
    scenario: Callable[[Any, ScreenLink], Awaitable[None]],
    size: tuple[int, int] = (100, 40),
) -> None:
    """Run the table ``main(link)`` behind a headless TableApp and play ``scenario``."""

    async def amain() -> None:
        link = ScreenLink()
        app = TableApp(link, "table")
        async with app.run_test(size=size) as pilot:
            run = guest.start(main(link), on_done=lambda: setattr(link, "finished", True))
            try:
                await scenario(pilot, link)
            finally:
                run.cancel()
                try:
                    await asyncio.wait_for(run.result(), 30)
                except guest.Closed:
                    pass

    asyncio.run(amain())


def capture(app: Any) -> str:
    """The whole screen as plain text, borders included (for the README's capture)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.text.rstrip() for strip in strips)
