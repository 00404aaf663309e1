"""The UPnP path of portmap.py against a scripted router on loopback (miniupnpc, real sockets):
what a router says is checked before a mapping goes into an invite code, and a router that
never finishes an answer cannot hold ``dernier host``.

The router's device list comes from its minissdpd socket and names only 127.0.0.1, so nothing
here is sent beyond loopback."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator

import pytest
import trio

from dernier_p2p.fuzz.upnp_router import Router, Script, device_list, fault, honest
from dernier_p2p.net import portmap
from dernier_p2p.net.portmap import Mapping, MappingError

pytest.importorskip("miniupnpc")
PORT = 47630


@pytest.fixture
def router() -> Iterator[Router]:
    r = Router().start()
    try:
        yield r
    finally:
        r.stop()


def _play(router: Router, timeout_s: float = 1.0, **replies: bytes) -> Mapping | str:
    """Map PORT through ``router`` (its honest replies with ``replies`` instead): the mapping,
    or the refusal's text. Fails the test if the path does not end within 15 s."""
    stall = replies.pop("stall", b"").decode()
    router.set(Script(devices=device_list(router.url), replies={**honest(router.port),
                                                                **replies}, stall=stall))
    got: list[Mapping | str] = []

    def path() -> None:
        try:
            got.append(trio.run(portmap._upnp_add, PORT, timeout_s, 3600, router.minissdpd)[0])
        except MappingError as exc:
            got.append(str(exc))

    thread = threading.Thread(target=path, daemon=True)
    thread.start()
    thread.join(15)
    if thread.is_alive():
        router.set(Script())  # ends the silent answer, so the thread ends
        thread.join(5)
        pytest.fail("the UPnP path was still waiting for the router after 15 s")
    return got[0]


def test_an_honest_router_gives_a_mapping(router: Router) -> None:
    got = _play(router)
    assert got == Mapping("UPnP", "11.22.33.4", PORT, PORT, 3600)
    assert router.asked[-2:] == ["AddPortMapping", "GetSpecificPortMappingEntry"]


def test_a_router_that_never_finishes_its_mapping_answer_gives_no_mapping(
        router: Router) -> None:
    start = time.monotonic()
    got = _play(router, stall=b"AddPortMapping")
    assert got == "the UPnP router did not answer the mapping within 1 s"
    assert time.monotonic() - start < 10


def test_a_router_that_forwards_the_port_to_another_machine_gives_no_mapping(
        router: Router) -> None:
    got = _play(router, GetSpecificPortMappingEntry=honest(router.port, lanaddr="127.0.0.2")[
        "GetSpecificPortMappingEntry"])
    assert got == "the UPnP router forwards the port to '127.0.0.2', not to '127.0.0.1'"


@pytest.mark.parametrize("internal, lease, says", [
    (PORT + 1, 3600, "the router mapped port 47631, not 47630"),
    (PORT, -5, "the router gave a lease of"),
])
def test_a_mapping_read_back_wrong_gives_no_mapping(router: Router, internal: int, lease: int,
                                                    says: str) -> None:
    entry = honest(router.port, internal_port=internal, lease=lease)
    got = _play(router, GetSpecificPortMappingEntry=entry["GetSpecificPortMappingEntry"])
    assert isinstance(got, str) and got.startswith(says)


def test_a_router_that_forgot_the_mapping_gives_no_mapping(router: Router) -> None:
    got = _play(router, GetSpecificPortMappingEntry=fault(714, "NoSuchEntryInArray"))
    assert got == "the UPnP router did not keep the mapping"


def test_the_lease_the_router_keeps_is_the_one_renewed(router: Router) -> None:
    got = _play(router, GetSpecificPortMappingEntry=honest(router.port, lease=600)[
        "GetSpecificPortMappingEntry"])
    assert isinstance(got, Mapping) and got.lease_s == 600


def test_a_router_that_picks_the_outside_port_gives_that_port(router: Router) -> None:
    replies = honest(router.port, external_port=50000)
    got = _play(router, AddPortMapping=fault(718, "ConflictInMappingEntry"),
                AddAnyPortMapping=replies["AddAnyPortMapping"])
    assert got == Mapping("UPnP", "11.22.33.4", 50000, PORT, 3600)
    assert "AddAnyPortMapping" in router.asked


@pytest.mark.parametrize("reserved", ["0", "65536", "-1"])
def test_an_outside_port_no_seat_can_dial_gives_no_mapping(router: Router,
                                                           reserved: str) -> None:
    from dernier_p2p.fuzz.upnp_router import http, soap

    got = _play(router, AddPortMapping=fault(718, "ConflictInMappingEntry"),
                AddAnyPortMapping=http(soap("AddAnyPortMapping", {"NewReservedPort": reserved})))
    assert isinstance(got, str), got


def test_a_renewal_the_router_never_answers_gives_up_in_time(router: Router) -> None:
    mapping = _play(router)
    assert isinstance(mapping, Mapping)
    router.set(Script(devices=device_list(router.url), replies=honest(router.port),
                      stall="AddPortMapping"))
    upnp = portmap._upnp_find(1000, router.minissdpd)[0]
    start = time.monotonic()
    assert trio.run(portmap._renew_once, mapping, 3600, upnp, 0.5) is False
    assert time.monotonic() - start < 5
    router.set(Script(devices=device_list(router.url), replies=honest(router.port)))
    assert trio.run(portmap._renew_once, mapping, 3600, upnp, 2.0) is True


def test_the_host_is_told_once_when_renewals_stop_and_once_when_they_come_back(
        router: Router) -> None:
    """A router that stops taking renewals makes the code's mapped route untrue for newcomers:
    the host is told at the first failure and again at the first renewal taken after, not
    at every one (``told``; the CLI words it, :func:`~dernier_p2p.cli.internet.renewal_line`)."""
    mapping = _play(router)
    assert isinstance(mapping, Mapping)
    upnp = portmap._upnp_find(1000, router.minissdpd)[0]
    told: list[bool] = []
    scripts = [honest(router.port), None, None, honest(router.port), honest(router.port)]

    async def main() -> None:
        renewals = portmap.Renewals(told.append)
        for replies in scripts:
            router.set(Script(devices=device_list(router.url), replies=replies or {
                **honest(router.port), "AddPortMapping": fault(501, "ActionFailed")}))
            renewals(await portmap._renew_once(mapping, 3600, upnp, 2.0))

    trio.run(main)
    assert told == [False, True]


def test_after_a_renewal_not_taken_the_next_comes_within_a_minute() -> None:
    renewals = portmap.Renewals(None)
    assert renewals.wait_s(3600) == 1800  # half the lease while the router takes them
    renewals(False)
    assert renewals.wait_s(3600) == portmap.RETRY_S == 60  # not half an hour
    assert renewals.wait_s(40) == 20 and renewals.wait_s(1) == 1.0  # (never under a second)
    renewals(True)
    assert renewals.wait_s(3600) == 1800


def test_the_renewal_loop_tells_of_a_router_that_stopped_taking_them(router: Router) -> None:
    mapping = _play(router)
    assert isinstance(mapping, Mapping)
    upnp = portmap._upnp_find(1000, router.minissdpd)[0]
    router.set(Script(devices=device_list(router.url), replies={
        **honest(router.port), "AddPortMapping": fault(501, "ActionFailed")}))
    told: list[bool] = []

    async def main() -> None:
        short = dataclasses.replace(mapping, lease_s=2)  # renewed every second
        with trio.move_on_after(2.5):
            await portmap._renew(short, 3600, upnp, told.append)

    trio.run(main)
    assert told == [False]  # two failed renewals, one word
