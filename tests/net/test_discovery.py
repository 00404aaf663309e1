"""LAN discovery over loopback UDP: announcements heard, junk skipped, malformed refused."""

from __future__ import annotations

from functools import partial

import pytest
import trio

from dernier_p2p.net.discovery import (
    BROADCAST,
    LOOPBACK_BROADCAST,
    MAGIC,
    MAX_DATAGRAM,
    Announcement,
    BadAnnouncement,
    Listing,
    announce,
    announce_target,
    listen,
)
from dernier_p2p.wire.canonical import encode

TABLE = Announcement("Friday", "dernier", 3, 40123)


def test_round_trip_keeps_fields_and_takes_the_address() -> None:
    got = Announcement.from_bytes(TABLE.to_bytes(), "127.0.0.1")
    assert (got.name, got.variant, got.free, got.port, got.address) == (
        "Friday",
        "dernier",
        3,
        40123,
        "127.0.0.1",
    )


def test_the_advertised_host_travels_and_is_where_to_connect() -> None:
    table = Announcement("Friday", "dernier", 3, 40123, host="192.0.2.7")
    got = Announcement.from_bytes(table.to_bytes(), "198.51.100.1")
    assert (got.host, got.address, got.reach) == ("192.0.2.7", "198.51.100.1", "192.0.2.7")
    # without a host field (as before it existed) the source address is used
    old = Announcement.from_bytes(_datagram(), "198.51.100.1")
    assert (old.host, old.reach) == ("", "198.51.100.1")
    assert b"host" not in TABLE.to_bytes()


def test_a_loopback_host_announces_on_loopback_only() -> None:
    for bind in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert announce_target(bind, BROADCAST) == LOOPBACK_BROADCAST
        assert announce_target(bind, "192.0.2.255") == LOOPBACK_BROADCAST
        assert announce_target(bind, "127.0.0.1") == "127.0.0.1"
    for bind in ("0.0.0.0", "", "192.0.2.7", "::"):
        assert announce_target(bind, BROADCAST) == BROADCAST


def _datagram(**changes: object) -> bytes:
    value: dict[str, object] = {
        "magic": MAGIC,
        "version": 5,
        "name": "t",
        "variant": "dernier",
        "free": 1,
        "port": 5000,
    }
    value.update(changes)
    return encode({k: v for k, v in value.items() if v is not ...})


@pytest.mark.parametrize(
    "data",
    [
        b"\xc1",  # not msgpack
        encode([1, 2]),
        _datagram(magic="other"),
        _datagram(version=1),
        _datagram(version=2),
        _datagram(version=3),
        _datagram(version=4),
        _datagram(version=6),
        _datagram(name=""),
        _datagram(name="x" * 33),
        _datagram(name="tab\x07"),
        _datagram(free=-1),
        _datagram(port=0),
        _datagram(port=70000),
        _datagram(port=True),
        _datagram(extra=1),
        _datagram(free=...),
        _datagram(host=""),
        _datagram(host="a b"),
        _datagram(host=7),
        _datagram(host="h" * 254),
        _datagram(host="tab\x07"),
        b"\x00" * (MAX_DATAGRAM + 1),
    ],
)
def test_malformed_datagrams_are_refused(data: bytes) -> None:
    with pytest.raises(BadAnnouncement):
        Announcement.from_bytes(data)


async def _hear(target: str, bind: str, junk_data: tuple[bytes, ...] = (b"junk",)) -> Listing:
    """Listen on ``bind``:<ephemeral> while an announcer sends to ``target`` and junk arrives."""
    box: list[Listing] = []
    free = [2]

    async def run_listener(task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        box.append(await listen(0.6, port=0, bind=bind, task_status=task_status))

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(run_listener)
            with trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM) as junk:
                for data in junk_data:
                    await junk.sendto(data, ("127.0.0.1", port))
            nursery.start_soon(
                partial(
                    announce,
                    lambda: Announcement("Friday", "dernier", free[0], 40123),
                    address=target,
                    port=port,
                    interval=0.1,
                )
            )
            await trio.sleep(0.25)
            free[0] = 1
            await trio.sleep(0.25)
            await trio.sleep(0.3)  # the listener stops on its own after 0.6 s
            nursery.cancel_scope.cancel()
    return box[0]


async def test_listener_hears_a_unicast_announcer_and_skips_junk() -> None:
    listing = await _hear("127.0.0.1", "127.0.0.1")
    assert listing.ignored == 1
    assert list(listing.tables) == [("127.0.0.1", 40123)]
    latest = listing.tables[("127.0.0.1", 40123)]
    assert latest.free == 1  # the latest announcement replaces the earlier ones
    assert latest.address == "127.0.0.1"


async def test_one_hostile_datagram_never_ends_discovery() -> None:
    """The reviewed datagram (~500 levels deep) and a huge container are ignored."""
    evil = (b"\x91" * 500 + b"\xc0", b"\xdd\xff\xff\xff\xff", b"\x81\xa1k" * 150 + b"\xc0")
    listing = await _hear("127.0.0.1", "127.0.0.1", evil)
    assert listing.ignored == 3
    assert list(listing.tables) == [("127.0.0.1", 40123)]


async def test_listener_hears_a_loopback_broadcast() -> None:
    listing = await _hear("127.255.255.255", "127.255.255.255")
    assert list(listing.tables) == [("127.0.0.1", 40123)]
    assert listing.tables[("127.0.0.1", 40123)].name == "Friday"


async def test_a_host_announces_its_table_and_free_seats() -> None:
    from dernier_p2p.net.host import HostConfig, run_host
    from dernier_p2p.wire.identity import IdentityKey

    box: list[Listing] = []

    async def run_listener(task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        box.append(await listen(0.5, port=0, bind="127.0.0.1", task_status=task_status))

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(run_listener)
            config = HostConfig(
                players=3, table_name="Friday", announce_to=("127.0.0.1", port), game=b"G" * 16
            )
            key = IdentityKey.generate(b"\x07" * 32)
            host = await nursery.start(partial(run_host, key, config, None))
            await trio.sleep(0.6)
            nursery.cancel_scope.cancel()
    heard = box[0].tables[("127.0.0.1", host.port)]
    assert (heard.name, heard.variant, heard.free) == ("Friday", "dernier", 2)


async def test_a_host_bound_to_loopback_broadcasts_on_loopback_with_its_address() -> None:
    """Told to broadcast on the LAN, a host bound to 127.0.0.1 sends to 127.255.255.255 (heard
    by a listener bound there, which a LAN broadcast never reaches) and names 127.0.0.1."""
    from dernier_p2p.net.host import HostConfig, run_host
    from dernier_p2p.wire.identity import IdentityKey

    box: list[Listing] = []

    async def run_listener(task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        box.append(await listen(0.5, port=0, bind=LOOPBACK_BROADCAST, task_status=task_status))

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(run_listener)
            config = HostConfig(players=2, table_name="Loop", bind="127.0.0.1",
                                announce_to=(BROADCAST, port), game=b"G" * 16)
            key = IdentityKey.generate(b"\x08" * 32)
            host = await nursery.start(partial(run_host, key, config, None))
            await trio.sleep(0.6)
            nursery.cancel_scope.cancel()
    heard = box[0].tables[("127.0.0.1", host.port)]
    assert (heard.name, heard.host, heard.reach) == ("Loop", "127.0.0.1", "127.0.0.1")
