"""Length-prefixed frames over a trio byte stream.

Byte format: each frame is a 4-byte unsigned big-endian length ``n`` followed by ``n`` payload
bytes, ``0 <= n <= max_frame``; nothing else is sent. A receiver that reads a length above its
``max_frame`` refuses the frame at once, without waiting for the body.

Received bytes that belong to an unfinished frame are kept by the :class:`FramedStream`, so a
:meth:`FramedStream.receive` cancelled part-way (a timeout) loses nothing: the next call carries
on with the same frame.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial

import trio

LENGTH_SIZE = 4
_CHUNK = 1 << 16


class FrameError(ValueError):
    """A frame longer than allowed, announced by the peer or handed to :meth:`send`."""


class PeerClosed(Exception):
    """The peer closed its side of the connection cleanly, at a frame boundary."""


class TruncatedFrame(PeerClosed):
    """The peer closed its side of the connection in the middle of a frame."""


class FramedStream(trio.abc.AsyncResource):
    """Send and receive whole frames of at most ``max_frame`` bytes over ``stream``.

    Sends from several tasks are serialised; receives must come from one task at a time. A
    cancelled :meth:`send` may leave part of a frame sent: close the connection then.
    After a :class:`FrameError` on receive the stream is out of step and every later
    :meth:`receive` raises it again; close the connection.
    """

    def __init__(self, stream: trio.abc.Stream, max_frame: int) -> None:
        if not 0 <= max_frame < 1 << (8 * LENGTH_SIZE):
            raise ValueError("max_frame must fit in the 4-byte length")
        self.stream = stream
        self.max_frame = max_frame
        self._buffer = bytearray()
        self._send_lock = trio.StrictFIFOLock()
        self._receiving = False
        self._error: FrameError | None = None

    async def send(self, payload: bytes) -> None:
        """Send one frame."""
        if len(payload) > self.max_frame:
            raise FrameError(f"frame of {len(payload)} bytes exceeds the maximum {self.max_frame}")
        async with self._send_lock:
            await self.stream.send_all(len(payload).to_bytes(LENGTH_SIZE, "big") + payload)

    async def _fill(self, size: int) -> bool:
        """Read until ``size`` bytes are buffered; False at end of stream."""
        while len(self._buffer) < size:
            chunk = await self.stream.receive_some(_CHUNK)
            if not chunk:
                return False
            self._buffer += chunk
        return True

    async def receive(self) -> bytes:
        """Receive one frame.

        Raise :class:`FrameError` if the peer announces a frame above ``max_frame``,
        :class:`PeerClosed` if it closed at a frame boundary and :class:`TruncatedFrame` if it
        closed inside one. Errors of the underlying stream (``trio.BrokenResourceError``) pass
        through.
        """
        if self._receiving:
            raise trio.BusyResourceError("another task is already receiving on this stream")
        if self._error is not None:
            raise self._error
        self._receiving = True
        try:
            if not await self._fill(LENGTH_SIZE):
                if self._buffer:
                    raise TruncatedFrame(f"peer closed after {len(self._buffer)} length bytes")
                raise PeerClosed("peer closed the connection")
            length = int.from_bytes(self._buffer[:LENGTH_SIZE], "big")
            if length > self.max_frame:
                self._error = FrameError(
                    f"peer announced a frame of {length} bytes; the maximum is {self.max_frame}"
                )
                raise self._error
            if not await self._fill(LENGTH_SIZE + length):
                got = len(self._buffer) - LENGTH_SIZE
                raise TruncatedFrame(f"peer closed after {got} of {length} frame bytes")
            payload = bytes(self._buffer[LENGTH_SIZE : LENGTH_SIZE + length])
            del self._buffer[: LENGTH_SIZE + length]
            return payload
        finally:
            self._receiving = False

    def unreceive(self, payload: bytes) -> None:
        """Put a frame received back in front: the next :meth:`receive` returns it again."""
        self._buffer[0:0] = len(payload).to_bytes(LENGTH_SIZE, "big") + payload

    async def aclose(self) -> None:
        """Close the underlying stream."""
        await self.stream.aclose()


async def open_framed(host: str, port: int, max_frame: int) -> FramedStream:
    """Connect over TCP to ``host``:``port`` and frame the connection."""
    return FramedStream(await trio.open_tcp_stream(host, port), max_frame)


FrameHandler = Callable[[FramedStream], Awaitable[None]]


async def serve_framed(
    handler: FrameHandler,
    port: int = 0,
    *,
    max_frame: int,
    host: str | None = None,
    listeners: list[trio.SocketListener] | None = None,
    task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Accept TCP connections on ``port`` (or on ``listeners`` opened beforehand, in which case
    ``port`` and ``host`` are ignored) forever, running ``handler`` on each, framed.

    The connection is closed when the handler returns. Every handler runs behind the fault
    firewall (:func:`dernier_p2p.net.firewall.guard`): whatever it raises ends only its own
    connection (an unexpected exception is logged with the peer's address); the listener keeps
    serving. Use with ``nursery.start`` to get the listeners (and so the port chosen for
    ``port=0``).
    """
    from dernier_p2p.net import firewall  # imports this module

    async def run(stream: trio.SocketStream) -> None:
        framed = FramedStream(stream, max_frame)
        try:
            await firewall.guard(partial(handler, framed), firewall.peer_address(stream))
        finally:
            await trio.aclose_forcefully(framed)

    if listeners is not None:
        await trio.serve_listeners(run, listeners, task_status=task_status)
    else:
        await trio.serve_tcp(run, port, host=host, task_status=task_status)
