"""The UDP exchange NAT-PMP and PCP share (net/udpquery.py), against a scripted router on a
real loopback socket: an answer after the router dropped requests, a datagram that is not the
answer, a refusal, silence, and a port nobody listens on."""

from __future__ import annotations

import pytest
import trio

from dernier_p2p.net.udpquery import query


class Refused(Exception):
    """The router's final answer (the caller's ``final``)."""


class NotOurs(Exception):
    """A datagram that is not the answer (the caller's ``skip``)."""


def _read(data: bytes) -> int:
    if data == b"no":
        raise Refused("refused")
    if not data.startswith(b"ok"):
        raise NotOurs(data.decode())
    return int(data[2:])


SEEN: list[tuple[float, bytes]] = []
"""The requests the router got, with when."""


async def _router(
    answers: list[list[bytes]], task_status: trio.TaskStatus[tuple[str, int]]
) -> None:
    """Answer the k-th request with ``answers[k]`` (several datagrams, or none), silence after
    the last; every request goes on :data:`SEEN`."""
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM)
    with sock:
        await sock.bind(("127.0.0.1", 0))
        task_status.started(sock.getsockname())
        k = 0
        while True:
            data, peer = await sock.recvfrom(100)
            SEEN.append((trio.current_time(), data))
            for reply in answers[k] if k < len(answers) else []:
                await sock.sendto(reply, peer)
            k += 1


async def _ask(answers: list[list[bytes]], timeout_s: float = 10.0) -> int | Refused | None:
    """What :func:`query` gives against the router (a final answer raised: that error)."""
    SEEN.clear()
    async with trio.open_nursery() as nursery:
        where = await nursery.start(_router, answers)
        try:
            return await query(trio.socket.AF_INET, where, b"ask", _read, final=(Refused,),
                               skip=NotOurs, timeout_s=timeout_s)
        except Refused as exc:
            return exc
        finally:
            nursery.cancel_scope.cancel()


async def test_a_router_that_drops_requests_is_asked_again_with_a_doubling_wait() -> None:
    started = trio.current_time()
    assert await _ask([[], [], [b"ok7"]]) == 7
    assert [data for _, data in SEEN] == [b"ask"] * 3
    gaps = [b - a for (a, _), (b, _) in zip([(started, b""), *SEEN], SEEN, strict=False)][1:]
    assert gaps[0] >= 0.2 and gaps[1] >= 0.45, gaps  # 0.25 s, then 0.5 s (late, never early)


async def test_a_datagram_that_is_not_the_answer_is_dropped_and_the_wait_goes_on() -> None:
    assert await _ask([[b"junk", b"other", b"ok5"]]) == 5
    assert len(SEEN) == 1  # the answer came within the first wait: asked once


async def test_a_final_answer_ends_the_exchange_at_once() -> None:
    started = trio.current_time()
    assert isinstance(await _ask([[b"junk", b"no", b"ok5"]], timeout_s=30), Refused)
    assert len(SEEN) == 1 and trio.current_time() - started < 10


async def test_silence_gives_none_within_the_time_asked_again_meanwhile() -> None:
    started = trio.current_time()
    assert await _ask([], timeout_s=1.5) is None
    took = trio.current_time() - started
    assert 1.5 <= took < 8, took
    assert 2 <= len(SEEN) <= 3, SEEN  # at 0, 0.25 and 0.75 s; the next (1.75 s) is too late


async def test_a_port_nobody_listens_on_is_an_os_error_not_a_wait() -> None:
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM)
    with sock:
        await sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()
    started = trio.current_time()
    with pytest.raises(OSError):
        await query(trio.socket.AF_INET, closed, b"ask", _read, final=(Refused,), skip=NotOurs,
                    timeout_s=30)
    assert trio.current_time() - started < 10
