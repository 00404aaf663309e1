"""The punch fields of version 5 (PROTOCOL.md 4.7 step 5): a punching ``relay-join`` and a
punching host's ``relay-answer`` name their local punch ports (``port``), the relay copies the
joiner's into ``relay-call`` and tells each side its own address and port as it saw them
(``self``: the joiner in ``relay-paired``, the host in ``relay-seen`` before any forwarded
frame). Each field is checked where it arrives, and the birthday punch's role follows."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
import trio

from dernier_p2p.net import birthday as bd
from dernier_p2p.net import handshake as hs
from dernier_p2p.net import relay
from dernier_p2p.net.framing import FramedStream, open_framed, serve_framed
from dernier_p2p.net.punch import check_port, open_reusable
from dernier_p2p.net.relay import Relay, rendezvous, serve_relay
from dernier_p2p.wire.canonical import encode

LOOP = "127.0.0.1"
TOKEN = b"p" * 8
JOIN = {"k": "relay-join", "version": hs.VERSION, "token": TOKEN}
ANSWER = {"k": "relay-answer", "version": hs.VERSION, "token": TOKEN, "id": 7}


async def _registered(nursery: trio.Nursery) -> tuple[int, FramedStream]:
    """A relay on loopback with a host registered under TOKEN: its port and the host's
    registration."""
    port = (await nursery.start(serve_relay, Relay(), 0, LOOP))[0].socket.getsockname()[1]
    control = await open_framed(LOOP, port, hs.MAX_FRAME)
    await control.send(encode({"k": "relay-host", "version": hs.VERSION, "token": TOKEN}))
    assert (await hs.receive_message(control))["k"] == "relay-ready"
    return port, control
BAD_PORTS = [0, 65536, -1, True, False, "40000", 40000.5, None, [40000]]


def _malformed(msg: dict[str, Any]) -> str:
    with pytest.raises(hs.NetError) as err:
        relay.check_open(msg)
    assert err.value.code == hs.MALFORMED, err.value
    return err.value.detail


def test_a_port_is_an_int_of_1_to_65535() -> None:
    assert check_port(1) == 1 and check_port(65535) == 65535
    for bad in BAD_PORTS:
        with pytest.raises(ValueError):
            check_port(bad)


def test_a_punching_join_names_its_port_and_only_a_punching_join_does() -> None:
    assert relay.check_open(dict(JOIN, punch=True, port=40000)) == ("relay-join", TOKEN)
    assert "port" in _malformed(dict(JOIN, punch=True))  # missing (a version-4 punching join)
    assert "port" in _malformed(dict(JOIN, port=40000))  # on a join that does not punch
    for bad in BAD_PORTS:
        assert "port" in _malformed(dict(JOIN, punch=True, port=bad))
    _malformed(dict(JOIN, punch=True, port=40000, self=[LOOP, 40000]))  # extra: the relay's
    _malformed({"k": "relay-host", "version": hs.VERSION, "token": TOKEN, "port": 40000})


def test_an_answer_may_name_its_port_checked_as_the_joiners() -> None:
    assert relay.check_open(ANSWER) == ("relay-answer", TOKEN)
    assert relay.check_open(dict(ANSWER, port=40000)) == ("relay-answer", TOKEN)
    for bad in BAD_PORTS:
        assert "port" in _malformed(dict(ANSWER, port=bad))
    _malformed(dict(ANSWER, port=40000, punch=True))


def test_relay_seen_is_k_or_k_and_self() -> None:
    assert relay.read_seen({"k": "relay-seen"}) is None
    assert relay.read_seen({"k": "relay-seen", "self": ["198.51.100.4", 5000]}) == (
        "198.51.100.4", 5000)
    for bad in (["nowhere", 5000], ["198.51.100.4", 0], ["198.51.100.4", True], None,
                "198.51.100.4:5000", ["0.0.0.0", 5000]):
        with pytest.raises(hs.NetError) as err:
            relay.read_seen({"k": "relay-seen", "self": bad})
        assert err.value.code == hs.MALFORMED and "`self`" in err.value.detail
    for bad_msg in ({"k": "relay-seen", "self": ["198.51.100.4", 5000], "port": 5000},
                    {"k": "relay-seen", "at": ["198.51.100.4", 5000]}):
        with pytest.raises(hs.NetError) as err:
            relay.read_seen(bad_msg)
        assert err.value.code == hs.MALFORMED
    with pytest.raises(hs.NetError) as err:
        relay.read_seen({"k": "challenge"})  # a host must not take a frame as its own address
    assert err.value.code == hs.UNEXPECTED


AT, SELF = ["198.51.100.4", 5000], ["203.0.113.9", 61000]


def test_relay_paired_to_a_punching_join_has_at_and_self_together_and_port_with_them() -> None:
    assert relay.read_paired({"k": "relay-paired"}, True) == (None, None, None)
    assert relay.read_paired({"k": "relay-paired", "at": AT, "self": SELF}, True) == (
        tuple(AT), tuple(SELF), None)
    assert relay.read_paired({"k": "relay-paired", "at": AT, "self": SELF, "port": 4000},
                             True) == (tuple(AT), tuple(SELF), 4000)
    malformed = [{"at": AT}, {"self": SELF}, {"port": 4000}, {"at": AT, "port": 4000},
                 {"self": SELF, "port": 4000}, {"at": AT, "self": SELF, "x": 1},
                 {"at": AT, "self": ["nowhere", 1]}, {"at": ["nowhere", 1], "self": SELF}]
    malformed += [{"at": AT, "self": SELF, "port": bad} for bad in BAD_PORTS]
    for fields in malformed:
        with pytest.raises(hs.NetError) as err:
            relay.read_paired({"k": "relay-paired", **fields}, True)
        assert err.value.code == hs.MALFORMED, fields
    with pytest.raises(hs.NetError) as err:
        relay.read_paired({"k": "relay-paired", "at": AT, "self": ["nowhere", 1]}, True)
    assert "`self`" in err.value.detail


def test_relay_paired_to_a_join_without_punch_is_k_alone() -> None:
    assert relay.read_paired({"k": "relay-paired"}, False) == (None, None, None)
    for fields in ({"at": AT}, {"self": SELF}, {"port": 4000}, {"at": AT, "self": SELF}):
        with pytest.raises(hs.NetError) as err:
            relay.read_paired({"k": "relay-paired", **fields}, False)
        assert err.value.code == hs.MALFORMED
    with pytest.raises(hs.NetError) as err:
        relay.read_paired({"k": "relay-ready"}, True)
    assert err.value.code == hs.UNEXPECTED


async def test_the_relay_tells_each_side_its_own_address_and_copies_the_ports() -> None:
    """Over loopback: the host's call carries the joiner's `at` and `port`; the host answers
    from a reusable port naming it; `relay-seen` tells the host its own address and port
    first, `relay-paired` the joiner its own, the host's and the host's port; then the host's
    challenge is the joiner's first forwarded frame. No port changes on loopback (both
    kept): the role is both parts."""
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            port, control = await _registered(nursery)
            joined: list[Any] = []

            async def join() -> None:
                got = await rendezvous((LOOP, port), TOKEN)
                joined.append(got)
                joined.append(await hs.receive_message(got[0]))  # the first forwarded frame

            nursery.start_soon(join)
            call = await hs.receive_message(control)
            call_id, at = relay.read_call(call)  # type: ignore[misc]
            joiner_port = relay.read_port(call)
            assert at is not None and joiner_port == at[1]  # the joiner's port, kept
            answer, _family, host_port = await open_reusable(LOOP, port, hs.MAX_FRAME)
            await hs.send_message(answer, {**ANSWER, "id": call_id, "port": host_port})
            seen = await hs.receive_message(answer)
            assert seen == {"k": "relay-seen", "self": [LOOP, host_port]}
            await hs.send_message(answer, {"k": "challenge", "x": 1})  # (only forwarded)
            while len(joined) < 2:
                await trio.sleep(0.01)
            _stream, host_at, _, local, part = joined[0]
            assert host_at == (LOOP, host_port) and local == at[1]
            assert part == bd.BOTH  # both kept
            assert joined[1] == {"k": "challenge", "x": 1}
            nursery.cancel_scope.cancel()


async def test_an_answer_naming_a_port_for_a_call_without_at_is_refused() -> None:
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            port, control = await _registered(nursery)
            nursery.start_soon(relay.join_through_relay, (LOOP, port), TOKEN)  # no punch
            call = await hs.receive_message(control)
            assert set(call) == {"k", "id"}
            answer = await open_framed(LOOP, port, hs.MAX_FRAME)
            await hs.send_message(answer, {**ANSWER, "id": call["id"], "port": 40000})
            with pytest.raises(hs.RemoteError) as err:
                await hs.receive_message(answer)
            assert err.value.code == hs.MALFORMED
            nursery.cancel_scope.cancel()


@pytest.mark.parametrize("self_port, host_kept, want", [
    (1, True, bd.OPENS_ONLY),  # this joiner's port changed, the host's kept
    (None, False, bd.GUESSES_ONLY),  # this joiner's kept (self = its own port), the host's not
    (1, False, bd.BOTH),  # both changed
    (None, True, bd.BOTH),  # both kept
])
async def test_the_joiner_plays_the_part_the_fields_give(self_port: int | None, host_kept: bool,
                                                         want: str) -> None:
    """A relay that says the joiner's outside port is 1 (changed) or its own local port (kept),
    and gives the host's `at` port 5000 and its `port` 5000 (kept) or 6000 (changed)."""
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            ports: list[int] = []

            async def handle(stream: FramedStream) -> None:
                opening = await hs.receive_message(stream)
                ports.append(opening["port"])
                own = opening["port"] if self_port is None else self_port
                await hs.send_message(stream, {
                    "k": "relay-paired", "at": ["198.51.100.4", 5000],
                    "self": ["203.0.113.9", own], "port": 5000 if host_kept else 6000})
                await trio.sleep_forever()

            listeners = await nursery.start(partial(serve_framed, handle, 0, host=LOOP,
                                                    max_frame=hs.MAX_FRAME))
            fake = listeners[0].socket.getsockname()[1]
            stream, at, _family, local, part = await rendezvous((LOOP, fake), TOKEN)
            assert ports == [local] and at == ("198.51.100.4", 5000)
            assert part == want
            await stream.aclose()
            nursery.cancel_scope.cancel()


@pytest.mark.parametrize("seen, served", [
    ({"k": "relay-seen", "self": [LOOP, 0]}, None),  # filled in: the answer's own port
    ({"k": "relay-seen"}, None),  # a relay that could not tell: both parts
    ({"k": "relay-seen", "self": ["nowhere", 1]}, "MALFORMED"),
    ({"k": "relay-seen", "self": [LOOP, 5], "x": 1}, "MALFORMED"),
    ({"k": "challenge"}, "UNEXPECTED"),
])
async def test_a_punching_host_reads_relay_seen_before_it_speaks(
        seen: dict[str, Any], served: str | None, caplog: pytest.LogCaptureFixture) -> None:
    """A host answering a punching call names its port and waits for `relay-seen`; only then
    does its handler speak (the challenge, here "hi"). A malformed one, or another frame,
    ends that answer: the connection is closed and the handler never runs."""
    from dernier_p2p.net.relay import host_through_relay

    answered: list[dict[str, Any]] = []
    heard: list[Any] = []

    async def fake(stream: FramedStream) -> None:
        opening = await hs.receive_message(stream)
        if opening["k"] == "relay-host":
            await hs.send_message(stream, {"k": "relay-ready"})
            await hs.send_message(stream, {"k": "relay-call", "id": 9, "at": [LOOP, 9],
                                           "port": 9})
            await trio.sleep_forever()
        answered.append(opening)
        told = dict(seen)
        if told.get("self") == [LOOP, 0]:
            told["self"] = [LOOP, opening["port"]]
        await hs.send_message(stream, told)
        try:
            heard.append(await hs.receive_message(stream))
        except Exception as exc:  # noqa: BLE001 (closed by the host)
            heard.append(type(exc).__name__)

    async def handler(stream: FramedStream) -> None:
        await hs.send_message(stream, {"k": "hi"})
        await trio.sleep_forever()

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(partial(serve_framed, fake, 0, host=LOOP,
                                                    max_frame=hs.MAX_FRAME))
            address = (LOOP, listeners[0].socket.getsockname()[1])
            await nursery.start(partial(host_through_relay, address, TOKEN, handler))
            while not heard:
                await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
    assert answered[0]["id"] == 9 and check_port(answered[0]["port"])
    if served is None:
        assert heard == [{"k": "hi"}]
    else:
        assert heard != [{"k": "hi"}] and "relay call 9 not answered" in caplog.text
