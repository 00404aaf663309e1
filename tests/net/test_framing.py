"""Framing over real loopback TCP: round trips, split and coalesced writes, refusals, EOF."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial

import pytest
import trio
import trio.testing

from dernier_p2p.net.framing import (
    FramedStream,
    FrameError,
    PeerClosed,
    TruncatedFrame,
    open_framed,
    serve_framed,
)

MAX = 100_000  # above the 64 KiB read size, so a maximal frame takes several reads
HOST = "127.0.0.1"
TIMEOUT = 5


def frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


@asynccontextmanager
async def serving(
    handler: Callable[[FramedStream], object], max_frame: int = MAX
) -> AsyncIterator[int]:
    """Run serve_framed on a free loopback port; yield the port."""
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            partial(serve_framed, handler, 0, host=HOST, max_frame=max_frame)  # type: ignore[arg-type]
        )
        yield listeners[0].socket.getsockname()[1]
        nursery.cancel_scope.cancel()


async def echo(fs: FramedStream) -> None:
    while True:
        await fs.send(await fs.receive())


async def recorder(results: list[object], done: trio.Event, fs: FramedStream) -> None:
    """Record every frame, then the exception that ended the connection."""
    try:
        while True:
            results.append(await fs.receive())
    except (FrameError, PeerClosed) as exc:
        results.append(exc)
        done.set()
        raise


async def test_round_trip_many_frames() -> None:
    rng = random.Random(1)
    payloads = [b"", b"x", bytes(range(256)), rng.randbytes(MAX), b"", rng.randbytes(MAX - 1)]
    payloads += [rng.randbytes(rng.choice([0, 1, 3, 4, 5, 200, 70_000])) for _ in range(200)]
    got: list[bytes] = []
    with trio.fail_after(TIMEOUT):
        async with serving(echo) as port:
            async with await open_framed(HOST, port, MAX) as client:

                async def send_all() -> None:
                    for p in payloads:
                        await client.send(p)

                async with trio.open_nursery() as nursery:
                    nursery.start_soon(send_all)
                    for _ in payloads:
                        got.append(await client.receive())
    assert got == payloads


async def test_send_refuses_oversized_frame() -> None:
    with trio.fail_after(TIMEOUT):
        async with serving(echo, max_frame=10) as port:
            async with await open_framed(HOST, port, 10) as client:
                with pytest.raises(FrameError):
                    await client.send(b"x" * 11)
                await client.send(b"y" * 10)  # nothing of the refused frame went out
                assert await client.receive() == b"y" * 10


class CountingStream(trio.abc.Stream):
    """A stream that counts its receive_some calls."""

    def __init__(self, inner: trio.abc.Stream) -> None:
        self.inner = inner
        self.reads = 0

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        self.reads += 1
        return await self.inner.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_frames_split_into_single_bytes() -> None:
    payloads = [b"hello", b"", b"world" * 3]
    data = b"".join(frame(p) for p in payloads)

    async def trickle(port: int) -> None:
        async with await trio.open_tcp_stream(HOST, port) as raw:
            for i in range(len(data)):
                await raw.send_all(data[i : i + 1])
                await trio.sleep(0.001)
            await raw.send_eof()
            await trio.sleep(TIMEOUT)

    with trio.fail_after(TIMEOUT):
        listeners = await trio.open_tcp_listeners(0, host=HOST)
        port = listeners[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trickle, port)
            counting = CountingStream(await listeners[0].accept())
            async with FramedStream(counting, MAX) as fs:
                assert [await fs.receive() for _ in payloads] == payloads
                with pytest.raises(PeerClosed) as err:
                    await fs.receive()
                assert type(err.value) is PeerClosed
            nursery.cancel_scope.cancel()
        await listeners[0].aclose()
    assert counting.reads >= len(data) // 2  # the frames really did arrive in pieces


async def test_coalesced_frames_are_separated() -> None:
    payloads = [b"a", b"", b"bc" * 1000, b"", b"d"]
    results: list[object] = []
    done = trio.Event()
    with trio.fail_after(TIMEOUT):
        async with serving(partial(recorder, results, done)) as port:
            async with await trio.open_tcp_stream(HOST, port) as raw:
                await raw.send_all(b"".join(frame(p) for p in payloads))
                await raw.send_eof()
                await done.wait()
    assert results[:-1] == payloads
    assert type(results[-1]) is PeerClosed


@pytest.mark.parametrize("propagate", [False, True])
async def test_oversized_length_refused_and_listener_keeps_serving(propagate: bool) -> None:
    refused: list[FrameError] = []

    async def handler(fs: FramedStream) -> None:
        first = await fs.receive()
        if first == b"echo":
            await echo(fs)
        try:
            await fs.receive()
        except FrameError as exc:
            refused.append(exc)
            with pytest.raises(FrameError):  # the stream stays refused
                await fs.receive()
            if propagate:
                raise

    with trio.fail_after(TIMEOUT):
        async with serving(handler, max_frame=1000) as port:
            async with await trio.open_tcp_stream(HOST, port) as bad:
                # A good frame, then only a length prefix: the body never comes, so the
                # receiver must refuse on the length alone or hang until the timeout.
                await bad.send_all(frame(b"first") + (1001).to_bytes(4, "big"))
                assert await bad.receive_some() == b""  # the server closed the connection
            assert len(refused) == 1 and "1001" in str(refused[0])
            async with await open_framed(HOST, port, 1000) as good:
                await good.send(b"echo")
                await good.send(b"x" * 1000)
                assert await good.receive() == b"x" * 1000


@pytest.mark.parametrize(
    "sent",
    [
        b"\x00",
        b"\x00\x00\x00",
        frame(b"0123456789")[:4],
        frame(b"0123456789")[:7],
        frame(b"0123456789")[:-1],
        frame(b"whole") + frame(b"0123456789")[:6],
    ],
)
async def test_eof_mid_frame(sent: bytes) -> None:
    results: list[object] = []
    done = trio.Event()
    with trio.fail_after(TIMEOUT):
        async with serving(partial(recorder, results, done)) as port:
            async with await trio.open_tcp_stream(HOST, port) as raw:
                await raw.send_all(sent)
            await done.wait()
    assert results[:-1] == ([b"whole"] if sent.startswith(frame(b"whole")) else [])
    assert isinstance(results[-1], TruncatedFrame)


async def test_clean_eof_at_frame_boundary() -> None:
    results: list[object] = []
    done = trio.Event()
    with trio.fail_after(TIMEOUT):
        async with serving(partial(recorder, results, done)) as port:
            async with await open_framed(HOST, port, MAX) as client:
                await client.send(b"one")
                await client.send(b"")
            await done.wait()
    assert results[:2] == [b"one", b""]
    assert type(results[2]) is PeerClosed


async def test_cancelled_receive_loses_nothing() -> None:
    half_read = trio.Event()
    got: list[bytes] = []

    async def handler(fs: FramedStream) -> None:
        with trio.move_on_after(0.05) as scope:
            await fs.receive()
        assert scope.cancelled_caught
        half_read.set()
        got.append(await fs.receive())
        got.append(await fs.receive())

    data = frame(b"0123456789") + frame(b"next")
    with trio.fail_after(TIMEOUT):
        async with serving(handler) as port:
            async with await trio.open_tcp_stream(HOST, port) as raw:
                await raw.send_all(data[:7])
                await half_read.wait()
                await raw.send_all(data[7:])
                assert await raw.receive_some() == b""
    assert got == [b"0123456789", b"next"]


async def test_concurrent_sends_stay_whole() -> None:
    results: list[object] = []
    done = trio.Event()
    sent = {bytes([task, seq]) * 20_000 for task in range(8) for seq in range(5)}

    async def sender(client: FramedStream, task: int) -> None:
        for seq in range(5):
            await client.send(bytes([task, seq]) * 20_000)

    with trio.fail_after(TIMEOUT):
        async with serving(partial(recorder, results, done)) as port:
            async with await open_framed(HOST, port, MAX) as client:
                async with trio.open_nursery() as nursery:
                    for task in range(8):
                        nursery.start_soon(sender, client, task)
            await done.wait()
    assert type(results[-1]) is PeerClosed
    assert len(results) - 1 == len(sent) and set(results[:-1]) == sent  # type: ignore[arg-type]


async def test_concurrent_receive_refused() -> None:
    async def idle(fs: FramedStream) -> None:
        await trio.sleep(TIMEOUT)

    with trio.fail_after(TIMEOUT):
        async with serving(idle) as port:
            async with await open_framed(HOST, port, MAX) as client:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(client.receive)
                    await trio.testing.wait_all_tasks_blocked()
                    with pytest.raises(trio.BusyResourceError):
                        await client.receive()
                    nursery.cancel_scope.cancel()


async def test_errors_inside_a_handler_nursery_end_only_that_connection() -> None:
    async def handler(fs: FramedStream) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(echo, fs)

    with trio.fail_after(TIMEOUT):
        async with serving(handler) as port:
            for _ in range(2):
                async with await open_framed(HOST, port, MAX) as client:
                    await client.send(b"ping")
                    assert await client.receive() == b"ping"


async def test_any_handler_error_ends_only_that_connection_and_is_logged(caplog) -> None:
    calls = []

    async def handler(fs: FramedStream) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("bug")
        await echo(fs)

    with trio.fail_after(TIMEOUT):
        async with serving(handler) as port:
            async with await open_framed(HOST, port, MAX) as client:
                with pytest.raises(PeerClosed):
                    await client.receive()  # the faulty handler's connection is closed
            async with await open_framed(HOST, port, MAX) as client:  # the server still serves
                await client.send(b"ping")
                assert await client.receive() == b"ping"
    faults = [r for r in caplog.records if "internal fault" in r.getMessage()]
    assert len(faults) == 1
    assert "RuntimeError: bug" in faults[0].getMessage()
    assert "127.0.0.1:" in faults[0].getMessage()


def test_max_frame_must_fit_the_length_field() -> None:
    a, _ = trio.testing.memory_stream_pair()
    FramedStream(a, 2**32 - 1)
    for bad in (-1, 2**32):
        with pytest.raises(ValueError):
            FramedStream(a, bad)


async def test_serve_framed_on_listeners_opened_beforehand() -> None:
    """Listeners opened first (a peer that announced its address) are served as they are; a
    bad frame on one connection ends only that connection."""
    with trio.fail_after(TIMEOUT):
        opened = await trio.open_tcp_listeners(0, host=HOST)
        port = opened[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            got = await nursery.start(
                partial(serve_framed, echo, max_frame=10, listeners=opened)  # type: ignore[arg-type]
            )
            assert got is opened
            async with await trio.open_tcp_stream(HOST, port) as raw:
                await raw.send_all((11).to_bytes(4, "big"))  # above max_frame: refused
                assert await raw.receive_some(10) == b""
            async with await open_framed(HOST, port, 10) as client:
                await client.send(b"hello")
                assert await client.receive() == b"hello"
            nursery.cancel_scope.cancel()
