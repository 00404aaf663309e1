"""The handshake over loopback TCP: a seat for a good hello, a typed error for each bad one,
and the host keeps serving after every refusal."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio

from dernier_p2p.net import handshake as hs
from dernier_p2p.net.framing import FramedStream, open_framed
from dernier_p2p.net.host import Host, HostConfig, run_host
from dernier_p2p.wire.identity import IdentityKey

HOST = "127.0.0.1"
HOST_KEY = IdentityKey.generate(b"\x01" * 32)
KEYS = [IdentityKey.generate(bytes([i]) * 32) for i in range(2, 8)]
SMALL_ORDER_KEY = bytes(32)  # the neutral element's encoding is not a point of the subgroup


@asynccontextmanager
async def hosting(players: int = 4, **options: Any) -> AsyncIterator[Host]:
    async with trio.open_nursery() as nursery:
        config = HostConfig(players=players, game=b"G" * 16, seed=b"S" * 32, **options)
        host = await nursery.start(partial(run_host, HOST_KEY, config, None))
        yield host
        nursery.cancel_scope.cancel()


async def opening(port: int, make: Callable[[bytes], dict[str, Any]]) -> dict[str, Any]:
    """Connect, answer the challenge with ``make(nonce)``, return the host's answer."""
    stream = await open_framed(HOST, port, hs.MAX_FRAME)
    async with stream:
        nonce, _ = hs.check_challenge(await hs.receive_message(stream))
        await hs.send_message(stream, make(nonce))
        return await hs.receive_message(stream)


async def refused(port: int, make: Callable[[bytes], dict[str, Any]]) -> str:
    with pytest.raises(hs.RemoteError) as err:
        await opening(port, make)
    return err.value.code


async def good_join(port: int, key: IdentityKey, name: str = "ann") -> tuple[int, dict]:
    stream = await open_framed(HOST, port, hs.MAX_FRAME)
    seat, table = await hs.join(stream, key, name, ("127.0.0.1", 4000))
    await stream.aclose()
    return seat, table


async def test_a_good_hello_gets_a_seat_and_the_table_summary() -> None:
    with trio.fail_after(5):
        async with hosting(players=4, table_name="Friday") as host:
            stream = await open_framed(HOST, host.port, hs.MAX_FRAME)
            seat, table = await hs.join(stream, KEYS[0], "ann", ("127.0.0.1", 4000))
            assert seat == 1
            assert table == {"name": "Friday", "variant": "dernier", "players": 4, "taken": 1,
                             "key": host.identity.public_bytes()}
            assert host.players[1].name == "ann"
            assert host.players[1].key == KEYS[0].public_bytes()
            assert host.players[1].listen == ("127.0.0.1", 4000)
            seat2, table2 = await good_join(host.port, KEYS[1], "bob")
            assert seat2 == 2 and table2["taken"] == 2
            await stream.aclose()


def _hello(signer: IdentityKey, **changes: Any) -> Callable[[bytes], dict[str, Any]]:
    def make(nonce: bytes) -> dict[str, Any]:
        msg = hs.hello_message(signer, nonce, "ann", None)
        msg.update(changes)
        return msg

    return make


CASES: list[tuple[str, Callable[[bytes], dict[str, Any]], str]] = [
    ("version", _hello(KEYS[0], version=1), hs.VERSION_MISMATCH),
    ("version 2", _hello(KEYS[0], version=2), hs.VERSION_MISMATCH),
    ("version 3", _hello(KEYS[0], version=3), hs.VERSION_MISMATCH),
    ("version 6", _hello(KEYS[0], version=6), hs.VERSION_MISMATCH),
    ("version 4", _hello(KEYS[0], version=4), hs.VERSION_MISMATCH),
    ("resume of version 2", lambda n: {**hs.resume_message(KEYS[0], n, -1), "version": 2},
     hs.VERSION_MISMATCH),
    ("stale nonce", lambda n: hs.hello_message(KEYS[0], bytes(32), "ann", None), hs.BAD_SIGNATURE),
    ("other signer", _hello(KEYS[0], key=KEYS[1].public_bytes()), hs.BAD_SIGNATURE),
    ("name changed", _hello(KEYS[0], name="eve"), hs.BAD_SIGNATURE),
    ("small-order key", _hello(KEYS[0], key=SMALL_ORDER_KEY), hs.BAD_SIGNATURE),
    ("empty name", _hello(KEYS[0], name=""), hs.MALFORMED),
    ("unprintable name", _hello(KEYS[0], name="a\nb"), hs.MALFORMED),
    ("long name", _hello(KEYS[0], name="x" * 33), hs.MALFORMED),
    ("bad listen", _hello(KEYS[0], listen=["h", 0]), hs.MALFORMED),
    # signed: admitted, such a listen host would make record 0 invalid and end the match
    ("listen host with an escape", lambda n: hs.hello_message(KEYS[0], n, "ann",
                                                              ("\x1b]0;x\x07", 4000)),
     hs.MALFORMED),
    ("listen host with a format character", lambda n: hs.hello_message(KEYS[0], n, "ann",
                                                                       ("a\u202eb", 4000)),
     hs.MALFORMED),
    ("extra field", _hello(KEYS[0], extra=1), hs.MALFORMED),
    ("not a hello", lambda n: {"k": "env", "env": {}}, hs.UNEXPECTED),
    (
        "resume of an unknown key",
        lambda n: hs.resume_message(KEYS[0], n, -1),
        hs.UNKNOWN_KEY,
    ),
]


@pytest.mark.parametrize("make,code", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_each_bad_hello_gets_its_typed_error_and_the_host_keeps_serving(
    make: Callable[[bytes], dict[str, Any]], code: str
) -> None:
    with trio.fail_after(5):
        async with hosting() as host:
            assert await refused(host.port, make) == code
            assert host.players.keys() == {0}  # nothing was given away
            assert (await good_join(host.port, KEYS[0]))[0] == 1


async def test_a_version_3_hello_is_refused_naming_both_versions() -> None:
    """A live table runs version 5 alone (PROTOCOL.md 20; a version-3 peer would read three
    rules otherwise, a version-4 one does not know the punch fields): the refusal says which
    version it met, which it speaks and what to do, in one line."""
    want = ("this player speaks protocol version 3; this client speaks 5: every player at a table "
            "needs a release that speaks the same version: compare `dernier --version` on both "
            "machines and install the same release")
    with pytest.raises(hs.NetError) as info:
        hs.check_opening(_hello(KEYS[0], version=3)(bytes(32)), bytes(32))
    assert (info.value.code, info.value.detail) == (hs.VERSION_MISMATCH, want)
    with pytest.raises(hs.NetError) as info:
        hs.check_opening(_hello(KEYS[0], version=2)(bytes(32)), bytes(32))
    assert info.value.detail == want.replace("version 3", "version 2")
    with pytest.raises(hs.NetError) as info:
        hs.check_opening(_hello(KEYS[0], version=4)(bytes(32)), bytes(32))
    assert info.value.detail == want.replace("version 3", "version 4")
    with trio.fail_after(5):
        async with hosting() as host:
            with pytest.raises(hs.RemoteError) as remote:
                await opening(host.port, _hello(KEYS[0], version=3))
            assert (remote.value.code, remote.value.detail) == (hs.VERSION_MISMATCH, want)
            # the host's player is told too, once per address (a flood cannot fill its screen)
            with pytest.raises(hs.RemoteError):
                await opening(host.port, _hello(KEYS[0], version=3))
            told = [e for e in host.lobby if e.kind == "version"]
            assert len(told) == 1 and told[0].seat == -1
            assert told[0].name.startswith("a player at 127.0.0.1:")
            assert told[0].name.endswith(f"could not join: {want}")


def test_a_version_3_challenge_is_refused_naming_both_versions() -> None:
    challenge = {**hs.challenge_message(bytes(32), {"name": "t"}), "version": 3}
    with pytest.raises(hs.NetError) as info:
        hs.check_challenge(challenge)
    assert (info.value.code, info.value.detail) == (
        hs.VERSION_MISMATCH,
        "this table speaks protocol version 3; this client speaks 5: every player at a table "
        "needs a release that speaks the same version: compare `dernier --version` on both "
        "machines and install the same release")
    with pytest.raises(hs.NetError) as info:
        hs.check_challenge({**challenge, "version": 4})
    assert "this table speaks protocol version 4; this client speaks 5" in info.value.detail
    assert hs.check_challenge({**challenge, "version": 5})[0] == bytes(32)


async def test_duplicate_key_and_full_table() -> None:
    with trio.fail_after(5):
        async with hosting(players=3) as host:
            first = await open_framed(HOST, host.port, hs.MAX_FRAME)
            assert (await hs.join(first, KEYS[0], "ann"))[0] == 1
            code = await refused(host.port, lambda n: hs.hello_message(KEYS[0], n, "ann2", None))
            assert code == hs.DUPLICATE_KEY
            second = await open_framed(HOST, host.port, hs.MAX_FRAME)
            assert (await hs.join(second, KEYS[1], "bob"))[0] == 2
            # the table is full: the match starts with record 0 on every connection
            for stream in (first, second):
                msg = await hs.receive_message(stream)
                assert msg["k"] == "rec" and msg["rec"]["i"] == 0
            code = await refused(host.port, lambda n: hs.hello_message(KEYS[2], n, "cy", None))
            assert code == hs.TABLE_FULL
            await first.aclose()
            await second.aclose()


async def test_a_lobby_seat_is_freed_when_its_connection_closes() -> None:
    with trio.fail_after(5):
        async with hosting(players=3) as host:
            assert (await good_join(host.port, KEYS[0]))[0] == 1
            with trio.fail_after(2):
                while 1 in host.players:
                    await trio.sleep(0.01)
            assert (await good_join(host.port, KEYS[1]))[0] == 1


async def test_garbage_and_oversized_frames_are_refused_and_the_host_keeps_serving() -> None:
    with trio.fail_after(5):
        async with hosting() as host:
            stream = await open_framed(HOST, host.port, hs.MAX_FRAME)
            await hs.receive_message(stream)
            await stream.send(b"\xc1 not msgpack")
            with pytest.raises(hs.RemoteError) as err:
                await hs.receive_message(stream)
            assert err.value.code == hs.MALFORMED
            await stream.aclose()

            raw = await trio.open_tcp_stream(HOST, host.port)
            framed = FramedStream(raw, hs.MAX_FRAME)
            await hs.receive_message(framed)
            await raw.send_all((hs.MAX_FRAME + 1).to_bytes(4, "big"))  # the body never comes
            with pytest.raises(hs.RemoteError) as err:
                await hs.receive_message(framed)
            assert err.value.code == hs.OVERSIZED
            await framed.aclose()
            assert (await good_join(host.port, KEYS[0]))[0] == 1


async def test_a_silent_connection_times_out() -> None:
    with trio.fail_after(5):
        async with hosting(handshake_s=0.2) as host:
            stream = await open_framed(HOST, host.port, hs.MAX_FRAME)
            await hs.receive_message(stream)
            with pytest.raises(hs.RemoteError) as err:
                await hs.receive_message(stream)
            assert err.value.code == "TIMEOUT"
            await stream.aclose()
            assert (await good_join(host.port, KEYS[0]))[0] == 1


def test_check_opening_accepts_exactly_what_was_signed() -> None:
    nonce = b"n" * 32
    hello = hs.check_opening(hs.hello_message(KEYS[0], nonce, "ann", ("h", 9)), nonce)
    assert hello == hs.Hello("ann", KEYS[0].public_bytes(), ("h", 9))
    resume = hs.check_opening(hs.resume_message(KEYS[0], nonce, 7), nonce)
    assert resume == hs.Resume(KEYS[0].public_bytes(), 7)
    for msg in (
        hs.resume_message(KEYS[0], b"m" * 32, 7),
        {**hs.resume_message(KEYS[0], nonce, 7), "have": 8},
    ):
        with pytest.raises(hs.NetError) as err:
            hs.check_opening(msg, nonce)
        assert err.value.code == hs.BAD_SIGNATURE
    with pytest.raises(hs.NetError) as err:
        hs.check_opening({**hs.resume_message(KEYS[0], nonce, 7), "have": -2}, nonce)
    assert err.value.code == hs.MALFORMED


def test_unpack_refuses_what_is_not_a_kind_map() -> None:
    for payload in (b"\xc1", hs.pack([1]), hs.pack({"k": 3}), hs.pack({"x": "y"})):  # type: ignore[arg-type]
        with pytest.raises(hs.NetError) as err:
            hs.unpack(payload)
        assert err.value.code == hs.MALFORMED


async def test_a_deeply_nested_frame_is_refused_and_the_host_serves_on() -> None:
    """The reviewed attack: ~600 bytes of msgpack nested 600 deep, before any hello."""
    with trio.fail_after(10):
        async with hosting() as host:
            for payload in (b"\x91" * 600 + b"\xc0", b"\x81\xa1k" * 300 + b"\xc0",
                            b"\xdd\xff\xff\xff\xff"):
                raw = await trio.open_tcp_stream(HOST, host.port)
                framed = FramedStream(raw, hs.MAX_FRAME)
                await hs.receive_message(framed)
                await framed.send(payload)
                with pytest.raises(hs.RemoteError) as err:
                    await hs.receive_message(framed)
                assert err.value.code == hs.OVERSIZED
                await framed.aclose()
            assert (await good_join(host.port, KEYS[0]))[0] == 1


async def test_an_idle_flood_evicts_its_oldest_and_a_player_still_joins() -> None:
    with trio.fail_after(20):
        async with hosting(max_pending=8, per_address=4) as host:
            idle = [await trio.open_tcp_stream(HOST, host.port) for _ in range(30)]
            await trio.sleep(0.1)
            assert host.admission.pending <= 4
            assert host.admission.evictions >= 26
            assert (await good_join(host.port, KEYS[0]))[0] == 1
            closed = 0
            for stream in idle:  # the evicted ones were closed by the host
                with trio.move_on_after(0.5):
                    data = b"x"
                    while data:
                        data = await stream.receive_some(1 << 16)
                    closed += 1
                await stream.aclose()
            assert closed >= 26


async def test_an_opening_above_4096_bytes_is_refused_before_its_body_is_read() -> None:
    with trio.fail_after(10):
        async with hosting() as host:
            raw = await trio.open_tcp_stream(HOST, host.port)
            framed = FramedStream(raw, hs.MAX_FRAME)
            await hs.receive_message(framed)
            await raw.send_all((hs.MAX_OPENING + 1).to_bytes(4, "big"))  # no body follows
            with pytest.raises(hs.RemoteError) as err:
                await hs.receive_message(framed)
            assert err.value.code == hs.OVERSIZED
            await framed.aclose()
            seat, _ = await good_join(host.port, KEYS[0])  # a real hello is far below it
            assert seat == 1


async def test_an_error_frames_words_reach_no_screen_unprintable() -> None:
    """The code and detail of a received ``error`` frame keep no control or format character
    (a terminal escape is shown as ``?``) and are cut to the frame's limits."""
    import trio.testing

    a, b = trio.testing.memory_stream_pair()
    sender, receiver = FramedStream(a, hs.MAX_FRAME), FramedStream(b, hs.MAX_FRAME)
    detail = "\x1b]0;owned\x07 left\u202e " + "x" * 2 * hs.MAX_DETAIL
    await hs.send_message(sender, {"k": "error", "code": "BAD\x1b[2J", "detail": detail})
    with pytest.raises(hs.RemoteError) as info:
        await hs.receive_message(receiver)
    assert info.value.code == "BAD?[2J"
    assert info.value.detail.startswith("?]0;owned? left? xx")
    assert len(info.value.detail) == hs.MAX_DETAIL and info.value.detail.isprintable()


@pytest.mark.parametrize("msg,ok", [
    ({"k": "status", "seat": 2, "state": "dropped", "grace_ms": 0}, True),
    ({"k": "status", "seat": 0, "state": "back", "grace_ms": 2**31 - 1}, True),
    ({"k": "status", "seat": 3, "state": "back", "grace_ms": 0}, False),  # past the table
    ({"k": "status", "seat": -1, "state": "back", "grace_ms": 0}, False),
    ({"k": "status", "seat": True, "state": "back", "grace_ms": 0}, False),
    ({"k": "status", "seat": 0, "state": "gone", "grace_ms": 0}, False),
    ({"k": "status", "seat": 0, "state": "back", "grace_ms": 2**31}, False),
    ({"k": "status", "seat": 0, "state": "back", "grace_ms": -1}, False),
    ({"k": "status", "seat": 0, "state": "back"}, False),
    ({"k": "status", "seat": 0, "state": "back", "grace_ms": 0, "x": 1}, False),
])
def test_a_status_frame_is_checked_at_its_bounds(msg: dict[str, Any], ok: bool) -> None:
    want = (msg["seat"], msg["state"], msg["grace_ms"]) if ok else None
    assert hs.check_status(msg, 3) == want


def test_done_and_error_frames_are_checked() -> None:
    assert hs.check_done({"k": "done", "last": -1}) == -1
    for bad in ({"k": "done", "last": False}, {"k": "done", "last": "3"}, {"k": "done"},
                {"k": "done", "last": 3, "x": 0}):
        with pytest.raises(hs.NetError) as err:
            hs.check_done(bad)
        assert err.value.code == hs.MALFORMED
    got = hs.remote_error({"k": "error", "code": "FULL", "detail": "x" * 10_000})
    assert got.code == "FULL" and got.detail == "x" * hs.MAX_DETAIL
    with pytest.raises(hs.NetError):
        hs.remote_error({"k": "error", "code": b"FULL", "detail": ""})


def test_the_hosts_handshake_frames_have_exactly_their_fields() -> None:
    """(4.1) A challenge, a welcome (answering a hello, or a resume: with ``last``) and an
    error frame carry exactly their fields; one more or one missing is MALFORMED, checked by
    the joining peer (a version above its own is VERSION first, as the test above shows)."""
    challenge = hs.challenge_message(bytes(32), {"name": "t"})
    assert hs.check_challenge(challenge)[0] == bytes(32)
    for bad in ({**challenge, "x": 1}, {k: v for k, v in challenge.items() if k != "table"}):
        with pytest.raises(hs.NetError) as info:
            hs.check_challenge(bad)
        assert info.value.code == hs.MALFORMED
    assert hs.check_welcome({"k": "welcome", "seat": 2}) == 2
    assert hs.check_welcome({"k": "welcome", "seat": 2, "last": 9}, resumed=True) == 2
    for bad, resumed in (({"k": "welcome", "seat": 2, "last": 9}, False),
                         ({"k": "welcome", "seat": 2}, True),
                         ({"k": "welcome", "seat": 2, "x": 0}, False)):
        with pytest.raises(hs.NetError) as info:
            hs.check_welcome(bad, resumed=resumed)
        assert info.value.code == hs.MALFORMED
    error = {"k": "error", "code": "TABLE_FULL", "detail": "no room"}
    assert hs.remote_error(error).code == "TABLE_FULL"
    for bad in ({**error, "x": 1}, {"k": "error", "code": "TABLE_FULL"}):
        with pytest.raises(hs.NetError) as info:
            hs.remote_error(bad)
        assert info.value.code == hs.MALFORMED
