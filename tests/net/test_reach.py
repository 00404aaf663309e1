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


async def test_an_ipv6_route_is_started_first_and_wins_when_both_families_answer() -> None:
    """Happy eyeballs (RFC 8305): the code lists IPv4 first, yet the IPv6 route starts first
    and, answering within the stagger, is the one used."""

    async def quiet(stream: FramedStream) -> None:
        await trio.sleep_forever()

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            four = await nursery.start(partial(serve_framed, quiet, 0, max_frame=hs.MAX_FRAME,
                                               host=LOOP))
            six = await nursery.start(partial(serve_framed, quiet, 0, max_frame=hs.MAX_FRAME,
                                              host="::1"))
            routes = (Route("direct", LOOP, four[0].socket.getsockname()[1]),
                      Route("direct", "::1", six[0].socket.getsockname()[1]))
            dialer = Dialer(Invite(bytes(10), routes), per_route_s=5, stagger_s=2)
            stream = await dialer()
            assert dialer.used == routes[1]
            await stream.aclose()
            nursery.cancel_scope.cancel()


async def test_an_ipv6_route_that_swallows_connections_costs_the_stagger_not_the_timeout(
) -> None:
    """The IPv6 route never answers (a listener whose queue is full drops every new SYN): the
    IPv4 route, started a stagger later, wins long before the IPv6 attempt's time runs out."""
    import socket

    async def quiet(stream: FramedStream) -> None:
        await trio.sleep_forever()

    full = socket.socket(socket.AF_INET6)
    full.bind(("::1", 0))
    full.listen(0)
    filler = [socket.create_connection(full.getsockname()[:2], 5)]  # the queue is full
    try:
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                four = await nursery.start(partial(serve_framed, quiet, 0, host=LOOP,
                                                   max_frame=hs.MAX_FRAME))
                routes = (Route("direct", LOOP, four[0].socket.getsockname()[1]),
                          Route("direct", "::1", full.getsockname()[1]))
                dialer = Dialer(Invite(bytes(10), routes), per_route_s=8, stagger_s=0.3)
                started = trio.current_time()
                stream = await dialer()
                assert dialer.used == routes[0]
                assert trio.current_time() - started < 4  # not the IPv6 route's 8 s
                await stream.aclose()
                nursery.cancel_scope.cancel()
    finally:
        for sock in (*filler, full):
            sock.close()
