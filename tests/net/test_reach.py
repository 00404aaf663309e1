"""Dialing an invite code's routes (PROTOCOL.md 4.8) against a hostile route."""

from __future__ import annotations

from functools import partial

import trio

from dernier_p2p.net import handshake as hs
from dernier_p2p.net.framing import FramedStream, serve_framed
from dernier_p2p.net.invite import Invite, Route
from dernier_p2p.net.reach import Dialer

LOOP = "127.0.0.1"


async def test_a_relay_route_answering_an_oversized_frame_fails_alone_and_the_next_route_wins(
) -> None:
    """A "relay" that answers a join with a frame longer than MAX_FRAME is that route's
    failure: the dialer goes on to the next route (before, the error ended the whole dial)."""

    async def oversized(stream: FramedStream) -> None:
        await stream.receive()
        await stream.stream.send_all((hs.MAX_FRAME + 1).to_bytes(4, "big"))
        await trio.sleep_forever()

    async def quiet(stream: FramedStream) -> None:
        await trio.sleep_forever()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            bad = await nursery.start(partial(serve_framed, oversized, 0, max_frame=hs.MAX_FRAME,
                                              host=LOOP))
            good = await nursery.start(partial(serve_framed, quiet, 0, max_frame=hs.MAX_FRAME,
                                               host=LOOP))
            routes = (Route("relay", LOOP, bad[0].socket.getsockname()[1], b"t" * 8),
                      Route("direct", LOOP, good[0].socket.getsockname()[1]))
            dialer = Dialer(Invite(bytes(10), routes), per_route_s=5, stagger_s=2)
            stream = await dialer()
            assert dialer.used == routes[1]
            await stream.aclose()
            nursery.cancel_scope.cancel()
