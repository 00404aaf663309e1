"""Connection reversal at the relay (PROTOCOL.md 4.7 step 6) over loopback: a joiner that can
be reached offers ``reach``, the relay passes it on, the host calls it back there, and the
joiner takes that connection once its challenge carries the code's host key. The field is
checked at its boundary, and a joiner cannot point the host at another machine of a network."""

from __future__ import annotations

import os
from typing import Any

import pytest
import trio

from dernier_p2p.net import handshake as hs
from dernier_p2p.net import punch, relay
from dernier_p2p.net.framing import FramedStream
from dernier_p2p.net.invite import Invite, Route, fingerprint
from dernier_p2p.net.punch import may_call
from dernier_p2p.net.reach import Dialer
from dernier_p2p.net.relay import Relay, host_through_relay, serve_relay

from .helpers import KEYS

LOOP = "127.0.0.1"
TOKEN = b"r" * 8
JOIN = {"k": "relay-join", "version": hs.VERSION, "token": TOKEN}
PUNCH = {"punch": True, "port": 40000}


def test_a_relay_join_reach_is_an_address_and_a_port_with_punch_or_malformed() -> None:
    assert relay.check_open(dict(JOIN, **PUNCH, reach=["203.0.113.9", 47630])) == (
        "relay-join", TOKEN)
    assert relay.check_open(dict(JOIN, **PUNCH, reach=["2a11:2233::5", 1])) == (
        "relay-join", TOKEN)
    for bad in (None, [], ["203.0.113.9"], ["203.0.113.9", 0], ["203.0.113.9", 65536],
                ["203.0.113.9", True], ["example.org", 80], ["0.0.0.0", 80],
                ["224.0.0.1", 80], ["1" * 65, 80], ["203.0.113.9", 80, 1]):
        with pytest.raises(hs.NetError) as err:
            relay.check_open(dict(JOIN, **PUNCH, reach=bad))
        assert err.value.code == hs.MALFORMED and "reach" in err.value.detail
    with pytest.raises(hs.NetError) as err:  # a call back goes with a punch
        relay.check_open(dict(JOIN, reach=["203.0.113.9", 47630]))
    assert err.value.code == hs.MALFORMED and "punch" in err.value.detail
    with pytest.raises(hs.NetError):  # only a joiner offers one
        relay.check_open({"k": "relay-host", "version": hs.VERSION, "token": TOKEN,
                          "reach": ["203.0.113.9", 47630]})


def test_a_relay_call_with_a_bad_reach_is_ignored_and_a_good_one_read() -> None:
    good = {"k": "relay-call", "id": 7, "at": ["198.51.100.2", 4000], "port": 40000,
            "reach": ["198.51.100.2", 47630]}
    assert relay.read_call(good) == (7, ("198.51.100.2", 4000))
    assert relay.read_reach(good) == ("198.51.100.2", 47630)
    assert relay.read_reach({"k": "relay-call", "id": 7, "at": ["198.51.100.2", 4000],
                             "port": 40000}) is None
    for bad in (dict(good, reach=["nowhere", 1]), dict(good, reach=None),
                dict(good, reach=["198.51.100.2", 0]),
                {"k": "relay-call", "id": 7, "reach": ["198.51.100.2", 47630]}):  # no `at`
        assert relay.read_call(bad) is None and relay.read_reach(bad) is None


def test_a_host_calls_back_only_the_joiners_own_address_or_a_global_one() -> None:
    far = ("198.51.100.1", 47640)  # a relay elsewhere
    assert may_call(("203.0.113.9", 47630), ("203.0.113.9", 5000), far)  # the joiner's router
    assert may_call(("11.22.33.4", 47630), ("203.0.113.9", 5000), far)  # a global address
    assert may_call(("2a11:2233::5", 47630), ("203.0.113.9", 5000), far)
    assert not may_call(("192.168.1.1", 80), ("203.0.113.9", 5000), far)  # the host's LAN
    assert not may_call(("10.0.0.1", 22), ("203.0.113.9", 5000), far)
    assert not may_call(("fe80::1", 22), ("203.0.113.9", 5000), far)
    assert not may_call(("::ffff:10.0.0.1", 22), ("203.0.113.9", 5000), far)
    assert not may_call((LOOP, 22), (LOOP, 5000), far)  # loopback, from a relay elsewhere
    assert may_call((LOOP, 4000), (LOOP, 5000), (LOOP, 47640))
    assert not may_call(("127.0.0.2", 4000), (LOOP, 5000), (LOOP, 47640))


def _challenge(key: bytes) -> dict[str, Any]:
    return hs.challenge_message(os.urandom(hs.NONCE_SIZE), {"key": key})


async def _reversal(reach_host: str, monkeypatch: pytest.MonkeyPatch,
                    ) -> tuple[Dialer, list[tuple[str, int]], int, list[Any]]:
    """A host registered at a real relay on loopback, punching nothing (so only a call back
    can make a direct connection), and a joiner offering ``reach_host`` and a listener there:
    the dialer after its connection, the peer addresses of the host's connections, the calls
    the joiner's listener got, and the forwarded frames."""
    monkeypatch.setattr(punch, "MAX_PUNCHING", 0)
    host_key = KEYS[0].public_bytes()
    served: list[tuple[str, int]] = []
    relay_ = Relay()

    async def handler(stream: FramedStream) -> None:  # the host: a challenge on any connection
        served.append(stream.stream.socket.getpeername()[:2])  # type: ignore[attr-defined]
        await hs.send_message(stream, _challenge(host_key))
        await trio.sleep_forever()

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(serve_relay, relay_, 0, LOOP)
            address = (LOOP, listeners[0].socket.getsockname()[1])
            await nursery.start(host_through_relay, address, TOKEN, handler)
            sock = trio.socket.socket()
            await sock.bind((reach_host, 0))
            sock.listen(4)
            seat = trio.SocketListener(sock)
            port = sock.getsockname()[1]
            dialer = Dialer(Invite(fingerprint(host_key), (Route("relay", *address, TOKEN),)))
            dialer.offer_reach((reach_host, port), [seat])
            stream = await dialer()
            nonce, table = hs.check_challenge(await hs.receive_message(stream))
            assert table["key"] == host_key
            calls = [peer for peer in served if peer[1] == port]
            nursery.cancel_scope.cancel()
    return dialer, served, len(calls), relay_.stats.frames


async def test_a_reachable_joiner_is_called_back_by_its_host_and_takes_that_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dialer, served, calls, frames = await _reversal(LOOP, monkeypatch)
    assert calls == 1  # the host connected to the joiner's reach
    assert dialer.used is not None and dialer.used.kind == "reversed"
    assert "called this seat back" in dialer.used.describe()
    assert frames <= 1  # at most the host's challenge went through the relay


async def test_a_reach_at_another_machine_of_a_network_is_not_called(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """127.0.0.2 is neither the joiner's address as the relay saw it (127.0.0.1) nor global:
    the host does not connect there, and the joiner stays on the relayed pair."""
    dialer, served, calls, frames = await _reversal("127.0.0.2", monkeypatch)
    assert calls == 0
    assert dialer.used is not None and dialer.used.kind == "relay"
    assert frames >= 1
