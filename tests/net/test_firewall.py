"""The fault firewall: an unexpected exception ends one connection, logged with its address."""

from __future__ import annotations

import pytest
import trio

from dernier_p2p.net import firewall
from dernier_p2p.net.framing import PeerClosed


async def test_guard_reports_unexpected_errors_and_swallows_quiet_ends(caplog) -> None:
    before = firewall.Faults.count

    async def bug() -> None:
        raise KeyError("k")

    async def closed() -> None:
        raise PeerClosed("bye")

    async def nested() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bug)

    await firewall.guard(bug, "10.0.0.1:5")
    await firewall.guard(closed, "10.0.0.1:6")
    await firewall.guard(nested, "10.0.0.1:7")
    assert firewall.Faults.count == before + 2
    messages = [r.getMessage() for r in caplog.records if "internal fault" in r.getMessage()]
    assert any("10.0.0.1:5" in m and "KeyError" in m for m in messages)
    assert any("10.0.0.1:7" in m for m in messages)


async def test_guard_lets_cancellation_through() -> None:
    async def sleeper() -> None:
        await trio.sleep(10)

    with trio.move_on_after(0.01) as scope:
        await firewall.guard(sleeper, "x")
    assert scope.cancelled_caught


async def test_peer_address_of_a_socket_stream() -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    client = await trio.open_tcp_stream("127.0.0.1", port)
    assert firewall.peer_address(client) == f"127.0.0.1:{port}"
    assert firewall.peer_address(object()) == "?"
    await client.aclose()
    for listener in listeners:
        await listener.aclose()


def test_guard_does_not_swallow_base_exceptions() -> None:
    async def stop() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        trio.run(firewall.guard, stop, "x")
