"""Running a table behind the full-screen view: Textual's asyncio loop hosts the table's trio
run (guest mode); the run's end closes the screen, closing the screen cancels the run."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from dernier_p2p.tui import guest
from dernier_p2p.tui.app import TableApp
from dernier_p2p.tui.link import ScreenLink


def run_screen(main: Callable[[], Awaitable[Any]], link: ScreenLink, header: str) -> Any:
    """Run ``main`` (a trio function) with the table on screen; its result or its exception."""

    async def amain() -> Any:
        app = TableApp(link, header)

        def done() -> None:
            link.finished = True

        run = guest.start(main, on_done=done)
        app.leave = run.cancel  # leaving with no seat to resign ends the run (exit 130)
        await app.run_async()
        if not run.done.done():
            run.cancel()
        try:
            return await run.result()
        except guest.Closed:
            raise KeyboardInterrupt from None  # the user closed the screen

    return asyncio.run(amain())
