"""The relay's admission control over loopback TCP: caps per source address and in all on
openings, registrations, waiting joiners and pairs (the oldest idle one evicted, never the
newcomer), the opening deadline and size, a slow reader, the open-files limit.

Other source addresses are 127.0.0.2, 127.0.0.3 (Linux answers for all of 127/8)."""

from __future__ import annotations

import math
import os

import pytest
import trio

from dernier_p2p.net import handshake as hs
from dernier_p2p.net import relay
from dernier_p2p.net.admission import Admission, Limits
from dernier_p2p.net.framing import FramedStream
from dernier_p2p.net.relay import RELAY_BUSY, Relay, serve_relay
from dernier_p2p.wire.canonical import encode

from .helpers import wait_for

LOOP = "127.0.0.1"
FLOOD = "127.0.0.2"
OTHER = "127.0.0.3"
ENDED = (hs.NetError, *relay.DROPPED)


async def _dial(port: int, source: str = LOOP) -> FramedStream:
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_STREAM)
    await sock.bind((source, 0))
    await sock.connect((LOOP, port))
    return FramedStream(trio.SocketStream(sock), hs.MAX_FRAME)


def _opening(kind: str, token: bytes, call: int | None = None) -> dict[str, object]:
    msg: dict[str, object] = {"k": kind, "version": hs.VERSION, "token": token}
    if call is not None:
        msg["id"] = call
    return msg


def _padded(size: int) -> bytes:
    """A relay-host opening with an extra field, ``size`` bytes encoded."""
    msg = {**_opening("relay-host", b"padded01"), "pad": b""}
    msg["pad"] = b"p" * (size - len(encode(msg)))  # (a bin of 0..255 bytes: 2 bytes' header)
    out = encode(msg)
    assert len(out) == size
    return out


async def _register(port: int, token: bytes, source: str = LOOP) -> FramedStream:
    control = await _dial(port, source)
    await hs.send_message(control, _opening("relay-host", token))
    assert (await hs.receive_message(control))["k"] == "relay-ready"
    return control


async def _ended(stream: FramedStream, within: float = 3.0) -> str:
    """How ``stream`` ended within ``within`` s: "closed" or the error code the relay sent
    ("open" if it is still open then; relay frames such as pings are skipped)."""
    with trio.move_on_after(within):
        try:
            while True:
                await hs.receive_message(stream)
        except hs.RemoteError as exc:
            return exc.code
        except ENDED:
            return "closed"
    return "open"


async def _answering(port: int, token: bytes, control: FramedStream,
                     answers: trio.MemorySendChannel[FramedStream]) -> None:
    """The host's side of a registration: answer every call, hand over the new connection."""
    while True:
        msg = await hs.receive_message(control)
        call = relay.call_id(msg)
        if call is not None:
            stream = await _dial(port)
            await hs.send_message(stream, _opening("relay-answer", token, call))
            await answers.send(stream)


async def _join(port: int, token: bytes, source: str) -> FramedStream:
    stream = await _dial(port, source)
    await hs.send_message(stream, _opening("relay-join", token))
    return stream


async def _start(nursery: trio.Nursery, the_relay: Relay) -> int:
    listeners = await nursery.start(serve_relay, the_relay, 0, LOOP)
    return int(listeners[0].socket.getsockname()[1])


async def _answered_table(nursery: trio.Nursery, the_relay: Relay
                          ) -> tuple[int, trio.MemoryReceiveChannel[FramedStream]]:
    """A relay serving in ``nursery`` with table ``table001`` registered and every call
    answered: its port, and the host's side of each pair as it forms."""
    port = await _start(nursery, the_relay)
    control = await _register(port, b"table001")
    send, answers = trio.open_memory_channel[FramedStream](8)
    nursery.start_soon(_answering, port, b"table001", control, send)
    return port, answers


# ------------------------------------------------------------------------------ openings
async def test_an_address_at_its_cap_of_openings_loses_its_oldest_and_others_get_in() -> None:
    the_relay = Relay(pending=Limits(max_pending=3, per_address=2, handshake_s=10))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await _start(nursery, the_relay)
            first = await _dial(port, FLOOD)
            await wait_for(lambda: the_relay.pending.pending == 1)
            second = await _dial(port, FLOOD)  # at the cap of its address: both held
            await wait_for(lambda: the_relay.pending.pending == 2)
            assert await _ended(first, 0.2) == "open"
            third = await _dial(port, FLOOD)  # over it: the oldest goes, not the newcomer
            assert await _ended(first) == "closed"
            await wait_for(lambda: the_relay.pending.pending == 2)
            # in all (3): a newcomer from another address evicts from the address holding most
            other = await _dial(port, OTHER)
            await wait_for(lambda: the_relay.pending.pending == 3)
            honest = await _register(port, b"honest01")  # a 4th: FLOOD's oldest goes
            assert await _ended(second) == "closed"
            assert b"honest01" in the_relay.tables
            for held in (third, other):  # the newer ones can still open
                await hs.send_message(held, _opening("relay-host", os.urandom(8)))
                assert (await hs.receive_message(held))["k"] == "relay-ready"
            assert the_relay.pending.evictions == 2
            for stream in (first, second, third, other, honest):
                await stream.aclose()
            nursery.cancel_scope.cancel()


async def test_an_opening_has_a_deadline_and_a_size_limit() -> None:
    the_relay = Relay(pending=Limits(max_pending=8, per_address=8, handshake_s=0.5))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await _start(nursery, the_relay)
            silent = await _dial(port)
            prompt = await _dial(port)
            await trio.sleep(0.1)  # within the deadline: served
            await hs.send_message(prompt, _opening("relay-host", b"prompt01"))
            assert (await hs.receive_message(prompt))["k"] == "relay-ready"
            t0 = trio.current_time()
            assert await _ended(silent) == "closed"  # past it: closed
            assert trio.current_time() - t0 < 2
            fits = await _dial(port)  # an opening of MAX_OPENING bytes is read (and refused
            await fits.send(_padded(relay.MAX_OPENING))  # for its extra field)
            assert await _ended(fits) == hs.MALFORMED
            big = await _dial(port)  # one byte more is not read
            await big.send(_padded(relay.MAX_OPENING + 1))
            assert await _ended(big) == "closed"
            for stream in (silent, prompt, big, fits):
                await stream.aclose()
            nursery.cancel_scope.cancel()


# ------------------------------------------------------------------------------ registrations
async def test_an_idle_registration_flood_never_locks_out_an_honest_host() -> None:
    the_relay = Relay(tables=Limits(max_pending=4, per_address=2, handshake_s=math.inf))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await _start(nursery, the_relay)
            honest = await _register(port, b"honest01")
            flood = [await _register(port, os.urandom(8), FLOOD) for _ in range(2)]
            assert len(the_relay.tables) == 3  # under both caps: all held
            flood.append(await _register(port, os.urandom(8), FLOOD))  # over its address's cap
            assert await _ended(flood[0]) == "closed"
            assert await _ended(flood[1], 0.1) == "open"
            more = [await _register(port, os.urandom(8), OTHER) for _ in range(6)]
            assert await _ended(honest, 0.1) == "open"  # a 5th in all evicts from the busiest
            assert b"honest01" in the_relay.tables
            assert len(the_relay.tables) == 4
            assert the_relay.registrations.evictions == 10 - 4
            for stream in (honest, *flood, *more):
                await stream.aclose()
            nursery.cancel_scope.cancel()


async def test_a_flood_of_a_full_relay_of_registrations_from_one_address_holds_only_its_cap(
) -> None:
    the_relay = Relay()  # the reference figures
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            port = await _start(nursery, the_relay)
            honest = await _register(port, b"honest01")
            flood = [await _register(port, os.urandom(8), FLOOD) for _ in range(relay.MAX_TABLES)]
            late = await _register(port, b"honest02")  # RELAY_BUSY before these caps
            assert len(the_relay.tables) == 2 + relay.TABLES_PER_ADDRESS
            assert await _ended(honest, 0.1) == "open"
            for stream in (honest, late, *flood):
                await stream.aclose()
            nursery.cancel_scope.cancel()


async def test_a_registration_in_use_outlives_an_idle_one_of_its_address() -> None:
    the_relay = Relay(tables=Limits(max_pending=8, per_address=2, handshake_s=math.inf))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await _start(nursery, the_relay)
            used = await _register(port, b"inuse001", FLOOD)  # the oldest, but a pair uses it
            idle = await _register(port, b"idle0001", FLOOD)
            send, answers = trio.open_memory_channel[FramedStream](8)
            nursery.start_soon(_answering, port, b"inuse001", used, send)
            joiner = await _join(port, b"inuse001", OTHER)
            assert (await hs.receive_message(joiner))["k"] == "relay-paired"
            await _register(port, b"newer001", FLOOD)
            assert await _ended(idle) == "closed"
            assert set(the_relay.tables) == {b"inuse001", b"newer001"}
            nursery.cancel_scope.cancel()


# ------------------------------------------------------------------------------ joiners and pairs
async def test_an_address_at_its_cap_of_waiting_joiners_loses_its_oldest() -> None:
    the_relay = Relay(joining=Limits(max_pending=8, per_address=2, handshake_s=relay.CALL_S))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await _start(nursery, the_relay)
            control = await _register(port, b"deafhost")  # reads its calls, answers none
            nursery.start_soon(_ended, control, 30)
            first = await _join(port, b"deafhost", FLOOD)
            second = await _join(port, b"deafhost", FLOOD)
            await wait_for(lambda: the_relay.joining.pending == 2)
            assert await _ended(first, 0.2) == "open"  # at the cap: both wait
            third = await _join(port, b"deafhost", FLOOD)
            assert await _ended(first) == RELAY_BUSY
            honest = await _join(port, b"deafhost", OTHER)
            await wait_for(lambda: the_relay.joining.pending == 3)
            assert await _ended(second, 0.1) == "open"
            assert the_relay.joining.evictions == 1
            assert b"deafhost" in the_relay.tables  # the evicted joiner cut no relay-call
            for stream in (first, second, third, honest):
                await stream.aclose()
            nursery.cancel_scope.cancel()


async def test_an_address_at_its_cap_of_pairs_loses_its_oldest_pair() -> None:
    the_relay = Relay(pairs=Limits(max_pending=8, per_address=1, handshake_s=math.inf))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port, answers = await _answered_table(nursery, the_relay)
            pairs = []
            for source in (OTHER, FLOOD, FLOOD):
                joiner = await _join(port, b"table001", source)
                assert (await hs.receive_message(joiner))["k"] == "relay-paired"
                pairs.append((joiner, await answers.receive()))
            assert await _ended(pairs[1][0]) == "closed"  # FLOOD's older pair
            await wait_for(lambda: the_relay.pairs.pending == 2)
            for joiner, host_side in (pairs[0], pairs[2]):  # the others still forward
                await joiner.send(b"hello")
                assert await host_side.receive() == b"hello"
            nursery.cancel_scope.cancel()


async def test_a_reader_that_does_not_read_ends_its_pair_after_the_send_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(relay, "SEND_S", 0.5)
    the_relay = Relay()
    with trio.fail_after(15):
        async with trio.open_nursery() as nursery:
            port, answers = await _answered_table(nursery, the_relay)
            joiner = await _join(port, b"table001", LOOP)
            assert (await hs.receive_message(joiner))["k"] == "relay-paired"
            host_side = await answers.receive()  # never read: the relay's send blocks
            await joiner.send(b"x" * 1000)  # a reader in time keeps its pair
            assert await host_side.receive() == b"x" * 1000

            async def stuff() -> None:
                with trio.move_on_after(10):
                    try:
                        while True:
                            await joiner.send(b"y" * (hs.MAX_FRAME - 16))
                    except ENDED:
                        pass

            nursery.start_soon(stuff)
            await wait_for(lambda: the_relay.pairs.pending == 0, timeout=10)
            assert the_relay.stats.frames >= 2
            nursery.cancel_scope.cancel()


# ------------------------------------------------------------------------------ files
async def test_serving_a_relay_raises_the_open_files_limit() -> None:
    resource = pytest.importorskip("resource")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if want <= 256:
        pytest.skip("the hard limit leaves nothing to raise")
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    try:
        async with trio.open_nursery() as nursery:
            await _start(nursery, Relay())
            assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == want
            nursery.cancel_scope.cancel()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 256), hard))


def test_admission_evicts_the_oldest_idle_slot_before_a_busy_one() -> None:
    async def run() -> None:
        gate = Admission(Limits(max_pending=8, per_address=2, handshake_s=math.inf))
        busy, idle = gate.enter(FLOOD), gate.enter(FLOOD)
        busy.busy = 1
        newer = gate.enter(FLOOD)
        assert idle.evicted and not busy.evicted
        newer.busy = 1
        gate.enter(FLOOD)  # every slot busy: the oldest goes
        assert busy.evicted and not newer.evicted

    trio.run(run)


# ------------------------------------------------------------------------------ many addresses
def _many(count: int, networks: int = 10) -> list[str]:
    """``count`` distinct loopback addresses over ``networks`` /24 networks (127.1.N.x)."""
    return [f"127.1.{k % networks}.{k // networks + 1}" for k in range(count)]


async def _flood_registrations(port: int, sources: list[str]) -> list[FramedStream]:
    return [await _register(port, os.urandom(8), source) for source in sources]


async def test_idle_registrations_from_hundreds_of_addresses_never_push_out_a_host() -> None:
    """(4.7) An attacker with 600 addresses (ten /24 networks) registering idle tables: a host
    registered before the flood and one registered in the middle of it both stay registered
    and are joined; the relay holds at most its cap, evicting the attacker's networks."""
    the_relay = Relay()  # the reference figures
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await _start(nursery, the_relay)
            early = await _register(port, b"honest01")
            held = await _flood_registrations(port, _many(300))
            await wait_for(lambda: len(the_relay.tables) == relay.MAX_TABLES)
            late = await _register(port, b"honest02", OTHER)
            held += await _flood_registrations(port, _many(600)[300:])
            await wait_for(lambda: len(the_relay.tables) == relay.MAX_TABLES)
            assert the_relay.registrations.evictions == 600 + 2 - relay.MAX_TABLES
            for token, control in ((b"honest01", early), (b"honest02", late)):
                assert token in the_relay.tables
                send, answers = trio.open_memory_channel[FramedStream](1)
                nursery.start_soon(_answering, port, token, control, send)
                joiner = await _join(port, token, "127.0.0.9")
                assert (await hs.receive_message(joiner))["k"] == "relay-paired"
                host_side = await answers.receive()
                await joiner.send(b"hello")
                assert await host_side.receive() == b"hello"
            for stream in held:
                await trio.aclose_forcefully(stream)
            nursery.cancel_scope.cancel()


async def test_one_network_holds_only_its_share_of_registrations() -> None:
    """Addresses of one /24 together hold at most PER_PREFIX times an address's cap."""
    the_relay = Relay()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            port = await _start(nursery, the_relay)
            held = await _flood_registrations(port, _many(200, networks=1))
            await wait_for(lambda: len(the_relay.tables) ==
                           relay.PER_PREFIX * relay.TABLES_PER_ADDRESS)
            for stream in held:
                await trio.aclose_forcefully(stream)
            nursery.cancel_scope.cancel()


async def test_relayed_watchers_have_their_own_cap_per_address() -> None:
    """A pair whose joiner opens with ``watch`` (4.10) counts among the relayed watchers: an
    address at its cap loses its oldest watcher; its players' pairs are not counted there."""
    the_relay = Relay(watchers=Limits(max_pending=8, per_address=2, handshake_s=math.inf))
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            port, answers = await _answered_table(nursery, the_relay)
            pairs = []
            for opening in ("hello", "watch", "watch", "watch"):
                joiner = await _join(port, b"table001", FLOOD)
                assert (await hs.receive_message(joiner))["k"] == "relay-paired"
                host_side = await answers.receive()
                await hs.send_message(joiner, {"k": opening, "version": hs.VERSION, "have": -1})
                await host_side.receive()
                pairs.append((joiner, host_side))
            assert await _ended(pairs[1][0]) == "closed"  # the oldest watcher of FLOOD
            await wait_for(lambda: the_relay.watchers.pending == 2)
            for joiner, host_side in (pairs[0], pairs[2], pairs[3]):  # the others forward
                await joiner.send(b"more")
                assert await host_side.receive() == b"more"
            nursery.cancel_scope.cancel()


async def test_a_watchers_pair_closed_at_the_pairs_cap_gives_back_its_watcher_slot() -> None:
    """A watcher's pair evicted by the cap on pairs (not on watchers) frees its watcher slot
    too: else a stranger could fill the relay's watchers with pairs long gone."""
    the_relay = Relay(pairs=Limits(max_pending=8, per_address=1, handshake_s=math.inf))
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            port, answers = await _answered_table(nursery, the_relay)
            pairs = []
            for _ in range(2):
                joiner = await _join(port, b"table001", FLOOD)
                assert (await hs.receive_message(joiner))["k"] == "relay-paired"
                host_side = await answers.receive()
                await hs.send_message(joiner, {"k": "watch", "version": hs.VERSION, "have": -1})
                await host_side.receive()
                pairs.append((joiner, host_side))
            assert await _ended(pairs[0][0]) == "closed"  # FLOOD's older pair
            await wait_for(lambda: the_relay.watchers.pending == 1)
            for stream in pairs[1]:
                await trio.aclose_forcefully(stream)
            await wait_for(lambda: the_relay.watchers.pending == 0
                           and the_relay.pairs.pending == 0)
            nursery.cancel_scope.cancel()


def test_one_owners_addresses_count_together_at_the_total_cap() -> None:
    from dernier_p2p.net.admission import prefix_of

    assert prefix_of("203.0.113.7") == prefix_of("203.0.113.200") == "203.0.113.0/24"
    assert prefix_of("2001:db8::1") == prefix_of("2001:db8::ffff:1") == "2001:db8::/64"
    assert prefix_of("::ffff:203.0.113.7") == "203.0.113.0/24"
    assert prefix_of("not an address") == "not an address"
    gate = Admission(Limits(max_pending=4, per_address=4, handshake_s=math.inf))

    async def fill() -> None:
        honest = gate.enter("198.51.100.1")
        flood = [gate.enter(f"203.0.113.{k}") for k in range(1, 4)]
        gate.enter("203.0.113.200")  # at the total cap: one of the flood's network goes
        assert not honest.evicted and sum(t.evicted for t in flood) == 1

    trio.run(fill)
