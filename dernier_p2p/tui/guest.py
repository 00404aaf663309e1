"""Trio in guest mode inside a running asyncio loop (Textual's): :func:`start` begins a trio
run whose callbacks the asyncio loop executes, and returns a :class:`GuestRun` to wait for its
outcome or cancel it. Trio code and the screen share one thread, so the screen may read the
table's objects directly; the screen hands input to trio through the run's TrioToken."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import outcome
import trio


class Closed(Exception):
    """The run was cancelled from the asyncio side (the screen closed first)."""


class GuestRun:
    """A trio run hosted by the current asyncio loop."""

    def __init__(self) -> None:
        self.done: asyncio.Future[outcome.Outcome] = asyncio.get_running_loop().create_future()
        self.token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self.started = asyncio.Event()

    def cancel(self) -> None:
        """Cancel the trio run (from the asyncio side)."""
        if self.token is not None and self._scope is not None and not self.done.done():
            scope = self._scope
            try:
                self.token.run_sync_soon(scope.cancel)
            except trio.RunFinishedError:
                pass

    def call(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` inside trio soon (from the asyncio side); ignored once finished."""
        if self.token is None or self.done.done():
            return
        try:
            self.token.run_sync_soon(fn, *args)
        except trio.RunFinishedError:
            pass

    async def result(self) -> Any:
        """Wait for the run's end: its return value, or its exception raised here."""
        return (await asyncio.shield(self.done)).unwrap()


def start(
    main: Callable[[], Awaitable[Any]], on_done: Callable[[], None] = lambda: None
) -> GuestRun:
    """Start ``main`` under trio as a guest of the running asyncio loop; ``on_done`` is called
    (on the asyncio side) when it ends."""
    loop = asyncio.get_running_loop()
    run = GuestRun()

    async def wrapper() -> Any:
        run.token = trio.lowlevel.current_trio_token()
        with trio.CancelScope() as scope:
            run._scope = scope
            loop.call_soon(run.started.set)
            return await main()
        raise Closed  # cancelled from the screen

    def done(result: outcome.Outcome) -> None:
        if not run.done.done():
            run.done.set_result(result)
        on_done()

    trio.lowlevel.start_guest_run(
        wrapper,
        run_sync_soon_threadsafe=loop.call_soon_threadsafe,
        run_sync_soon_not_threadsafe=loop.call_soon,
        done_callback=done,
        host_uses_signal_set_wakeup_fd=True,
    )
    return run
