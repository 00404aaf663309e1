"""Trio as a guest of an asyncio loop: its result, its exception, and a cancel from asyncio."""

import asyncio

import pytest
import trio

from dernier_p2p.tui import guest


def test_the_result_and_the_exception_come_back_to_asyncio() -> None:
    async def ok() -> int:
        await trio.sleep(0.01)
        return 7

    async def bad() -> None:
        await trio.sleep(0)
        raise ValueError("from trio")

    async def amain() -> None:
        ended: list[str] = []
        assert await guest.start(ok, on_done=lambda: ended.append("ok")).result() == 7
        with pytest.raises(ValueError, match="from trio"):
            await guest.start(bad).result()
        assert ended == ["ok"]

    asyncio.run(amain())


def test_a_cancel_from_asyncio_ends_the_run_as_closed() -> None:
    async def forever() -> None:
        await trio.sleep_forever()

    async def amain() -> None:
        run = guest.start(forever)
        await run.started.wait()
        run.cancel()
        with pytest.raises(guest.Closed):
            await asyncio.wait_for(run.result(), 10)

    asyncio.run(amain())
