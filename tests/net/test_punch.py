"""Hole punching (PROTOCOL.md 4.7 step 5) over loopback: the ``at`` fields are checked, a
relay's lies cost the joiner the punch and nothing else, and old-style frames stay refused."""

from __future__ import annotations

import os
from typing import Any

import pytest
import trio

from dernier_p2p.net import handshake as hs
from dernier_p2p.net import relay
from dernier_p2p.net.framing import FramedStream, open_framed, serve_framed
from dernier_p2p.net.invite import Invite, Route, fingerprint
from dernier_p2p.net.punch import check_at, punch
from dernier_p2p.net.reach import Dialer
from dernier_p2p.net.relay import Relay, rendezvous, serve_relay
from dernier_p2p.wire.canonical import encode

from .helpers import KEYS

LOOP = "127.0.0.1"
TOKEN = b"t" * 8


def test_an_at_is_an_ip_address_and_a_port_and_nothing_else() -> None:
    assert check_at(["203.0.113.7", 47630]) == ("203.0.113.7", 47630)
    assert check_at(("2001:db8::1", 1)) == ("2001:db8::1", 1)
    for bad in (None, [], ["203.0.113.7"], ["203.0.113.7", 0], ["203.0.113.7", 65536],
                ["203.0.113.7", True], ["203.0.113.7", "80"], ["example.org", 80],
                [b"\x7f\x00\x00\x01", 80], ["1" * 100, 80], ["203.0.113.7", 80, 1],
                ["0.0.0.0", 80], ["::", 80], ["224.0.0.1", 80], ["255.255.255.255", 80]):
        with pytest.raises(ValueError):
            check_at(bad)


def test_a_relay_call_with_a_bad_at_is_ignored_and_a_good_one_read() -> None:
    assert relay.read_call({"k": "relay-call", "id": 7}) == (7, None)
    good = {"k": "relay-call", "id": 7, "at": ["198.51.100.2", 4000], "port": 51000}
    assert relay.read_call(good) == (7, ("198.51.100.2", 4000))
    assert relay.read_port(good) == 51000
    assert relay.call_id(good) == 7
    assert relay.read_port({"k": "relay-call", "id": 7}) is None
    for bad in (dict(good, at=["nowhere", 4000]), dict(good, at=None), dict(good, x=1),
                {"k": "relay-call", "id": 7, "at": ["198.51.100.2", 4000]},  # no port (v4)
                {"k": "relay-call", "id": 7, "port": 51000},  # a port without at
                dict(good, port=0), dict(good, port=65536), dict(good, port=True),
                dict(good, port="51000"), dict(good, port=None)):
        assert relay.read_call(bad) is None and relay.read_port(bad) is None, bad


def test_a_relay_join_punch_field_is_true_or_absent() -> None:
    base = {"k": "relay-join", "version": hs.VERSION, "token": TOKEN}
    assert relay.check_open(dict(base, punch=True, port=4000)) == ("relay-join", TOKEN)
    for bad in (False, 1, "yes", None):
        with pytest.raises(hs.NetError) as err:
            relay.check_open(dict(base, punch=bad, port=4000))
        assert err.value.code == hs.MALFORMED
    with pytest.raises(hs.NetError):  # only a joiner asks to punch
        relay.check_open({"k": "relay-host", "version": hs.VERSION, "token": TOKEN,
                          "punch": True})


async def _fake_relay(paired: dict[str, Any], then: list[dict[str, Any]],
                      task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """A relay that answers any opening with ``paired`` and then sends ``then``."""

    async def handle(stream: FramedStream) -> None:
        await hs.receive_message(stream)
        await hs.send_message(stream, paired)
        for msg in then:
            await hs.send_message(stream, msg)
        await trio.sleep_forever()

    await serve_framed(handle, 0, host=LOOP, max_frame=hs.MAX_FRAME, task_status=task_status)


def _challenge(key: bytes) -> dict[str, Any]:
    return hs.challenge_message(os.urandom(hs.NONCE_SIZE), {"key": key})


@pytest.mark.parametrize("paired", [
    {"k": "relay-paired", "at": ["not an address", 80]},
    {"k": "relay-paired", "at": [LOOP, 0]},
    {"k": "relay-paired", "at": [LOOP, 80], "more": 1},
    {"k": "relay-paired", "at": "x" * 200},
])
async def test_a_relay_paired_with_a_bad_at_is_malformed_and_the_next_route_wins(
    paired: dict[str, Any],
) -> None:
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            fake = (await nursery.start(_fake_relay, paired, []))[0].socket.getsockname()[1]
            with pytest.raises(hs.NetError) as err:
                await rendezvous((LOOP, fake), TOKEN)
            assert err.value.code == hs.MALFORMED
            good = (await nursery.start(_fake_relay, {"k": "relay-paired"},
                                        [_challenge(KEYS[0].public_bytes())]))
            invite = Invite(fingerprint(KEYS[0].public_bytes()), (
                Route("relay", LOOP, fake, TOKEN),
                Route("relay", LOOP, good[0].socket.getsockname()[1], TOKEN)))
            dialer = Dialer(invite, stagger_s=0.05)
            stream = await dialer()
            assert dialer.used == invite.routes[1]  # a relay without `at`: relayed, no punch
            assert hs.check_challenge(await hs.receive_message(stream))
            nursery.cancel_scope.cancel()


async def test_a_relay_pointing_the_punch_at_another_host_leaves_the_joiner_on_the_relay(
) -> None:
    host_key, other_key = KEYS[0].public_bytes(), KEYS[3].public_bytes()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:

            async def impostor(stream: FramedStream) -> None:  # answers whatever connects
                await hs.send_message(stream, _challenge(other_key))
                await trio.sleep_forever()

            listeners = await nursery.start(partial_serve(impostor))
            at = [LOOP, listeners[0].socket.getsockname()[1]]
            fake = await nursery.start(_fake_relay, {"k": "relay-paired", "at": at,
                                                     "self": [LOOP, 40000]},
                                       [_challenge(host_key)])
            invite = Invite(fingerprint(host_key),
                            (Route("relay", LOOP, fake[0].socket.getsockname()[1], TOKEN),))
            dialer = Dialer(invite)
            started = trio.current_time()
            stream = await dialer()
            assert dialer.used == invite.routes[0]  # the relayed pair, after the punch window
            assert trio.current_time() - started < 4.5
            nonce, table = hs.check_challenge(await hs.receive_message(stream))
            assert table["key"] == host_key
            nursery.cancel_scope.cancel()


def partial_serve(handler: Any) -> Any:
    async def serve(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        await serve_framed(handler, 0, host=LOOP, max_frame=hs.MAX_FRAME,
                           task_status=task_status)
    return serve


async def test_two_sides_punching_at_each_other_meet_in_one_connection() -> None:
    """Simultaneous open on loopback: each side connects from its own port to the other's."""
    from dernier_p2p.net.punch import reusable  # a free reusable port for each side

    ports = []
    for _ in range(2):
        sock = reusable(2, 0)
        await sock.bind((LOOP, 0))
        ports.append(sock.getsockname()[1])
        sock.close()
    got: list[list[bytes]] = [[], []]

    async def side(k: int) -> None:
        async def take(stream: FramedStream) -> bool:
            await stream.send(b"side %d" % k)
            got[k].append(await stream.receive())
            return True

        assert await punch(2, ports[k], (LOOP, ports[1 - k]), take, 1024)

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(side, 0)
            nursery.start_soon(side, 1)
    assert got == [[b"side 1"], [b"side 0"]]


async def test_an_old_style_join_still_pairs_and_a_punching_join_gets_both_addresses() -> None:
    relay_ = Relay()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            port = (await nursery.start(serve_relay, relay_, 0, LOOP))[0].socket.getsockname()[1]
            control = await open_framed(LOOP, port, hs.MAX_FRAME)
            await control.send(encode({"k": "relay-host", "version": hs.VERSION,
                                       "token": TOKEN}))
            assert (await hs.receive_message(control))["k"] == "relay-ready"
            joined: list[Any] = []

            async def join() -> None:
                joined.append(await rendezvous((LOOP, port), TOKEN))

            nursery.start_soon(join)
            call = await hs.receive_message(control)
            call_id, at = relay.read_call(call)  # type: ignore[misc]
            assert at is not None and at[0] == LOOP  # the joiner's port, as the relay saw it
            answer = await open_framed(LOOP, port, hs.MAX_FRAME)
            await answer.send(encode({"k": "relay-answer", "version": hs.VERSION,
                                      "token": TOKEN, "id": call_id}))
            while not joined:
                await trio.sleep(0.01)
            stream, host_at, _family, local, part = joined[0]
            assert part == "both"  # the host answered without a port: not known
            assert at[1] == local
            assert host_at == (LOOP, answer.stream.socket.getsockname()[1])
            nursery.cancel_scope.cancel()


def test_a_loopback_at_is_punched_to_only_from_a_relay_on_loopback() -> None:
    from dernier_p2p.net.punch import may_punch

    assert may_punch((LOOP, 4000), (LOOP, 47640))
    assert may_punch(("203.0.113.7", 4000), ("198.51.100.1", 47640))
    assert not may_punch((LOOP, 22), ("198.51.100.1", 47640))
    assert not may_punch(("::1", 22), ("relay.example.net", 47640))
