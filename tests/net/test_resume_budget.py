"""(4.9) A seat resuming again and again with ``have`` -1 cannot make the host send its whole
transcript each time: the records sent again stay within the seat's budget (two whole
transcripts at once, one more a minute), and a resume with what it missed is still served.
Real host, real sockets on loopback; the flooder holds the seat's key."""

from __future__ import annotations

from pathlib import Path

import trio

from dernier_p2p.net import handshake as hs
from dernier_p2p.net.framing import open_framed
from dernier_p2p.net.timers import Timers
from dernier_p2p.protocol.node.resends import BURST, PER_MINUTE, SLACK
from dernier_p2p.wire.canonical import encode

from .helpers import KEYS, play, wait_for

FLOODS = 25


async def _resume(port: int, have: int) -> tuple[int, int, int] | str:
    """Resume seat 1 with ``have``: (last, records after ``have`` up to ``last`` received, their
    frames' bytes), or the refusal's detail."""
    stream = await open_framed("127.0.0.1", port, hs.MAX_FRAME)
    try:
        try:
            _, last = await hs.rejoin(stream, KEYS[1], have)
        except hs.RemoteError as exc:
            assert exc.code == hs.UNEXPECTED, exc
            return exc.detail
        got = size = 0
        with trio.move_on_after(10):
            while have + got < last:
                payload = await stream.receive()
                msg = hs.unpack(payload)
                if msg["k"] == "rec" and msg["rec"]["i"] <= last:
                    assert msg["rec"]["i"] == have + got + 1
                    got += 1
                    size += len(payload)
        return last, got, size
    finally:
        await trio.aclose_forcefully(stream)


async def test_a_seat_resuming_from_minus_one_again_and_again_is_sent_a_bounded_amount(
        tmp_path: Path) -> None:
    seen: dict[str, object] = {}

    async def flood(table: object) -> None:
        host, peers, scopes = table.host, table.peers, table.scopes  # type: ignore[attr-defined]
        await wait_for(lambda: 1 in peers and peers[1].me is not None
                       and len(peers[1].me.records) >= 40, timeout=40)
        scopes[1].cancel()  # the seat's own process stops; its key floods
        start = trio.current_time()
        served = refused = records = size = 0
        for _ in range(FLOODS):
            got = await _resume(host.port, -1)
            if isinstance(got, str):
                assert got.startswith("resumed too often"), got
                refused += 1
                continue
            served += 1
            records += got[1]
            size += got[2]
        seen["elapsed"] = trio.current_time() - start
        seen.update(served=served, refused=refused, records=records, size=size)
        # then the seat comes back with what it holds less a few records: still served
        with trio.fail_after(20):
            while True:
                last = len(host.hosting.records) - 1
                back = await _resume(host.port, last - 5)
                if not isinstance(back, str):
                    break
                await trio.sleep(0.5)
        seen["back"] = back
        seen["length"] = len(host.hosting.records)
        frames = [len(encode({"k": "rec", "rec": r})) for r in host.hosting.records]
        seen["bytes"], seen["largest"] = sum(frames), max(frames)
        watchers = 0
        for _ in range(10):  # watchers from one address, each from the start
            stream = await open_framed("127.0.0.1", host.port, hs.MAX_FRAME)
            try:
                await hs.watch(stream, -1)
                watchers += 1
            except hs.RemoteError as exc:
                assert exc.code == hs.UNEXPECTED and exc.detail.startswith("resumed too often")
            await trio.aclose_forcefully(stream)
        seen["watchers"] = watchers
        scopes[0].cancel()

    await play(tmp_path, 2, timers=Timers(turn_ms=20_000, declare_ms=30, grace_ms=60_000),
               options={"match": ["hands", 5]}, watch=flood, limit=120)
    length, elapsed = seen["length"], seen["elapsed"]
    allowed = BURST * length + SLACK + PER_MINUTE * (length + SLACK) * elapsed / 60
    assert seen["records"] <= allowed, seen
    assert seen["size"] <= (BURST + PER_MINUTE * elapsed / 60) * seen["bytes"] \
        + SLACK * seen["largest"], seen  # one whole transcript each time: FLOODS of them
    assert seen["served"] >= BURST and seen["refused"] >= FLOODS - 2 * BURST, seen
    last, got, _ = seen["back"]
    assert got == 5, seen  # the honest resume caught up to the host's last record
    assert seen["watchers"] <= BURST + 1, seen  # a watcher's address has the same budget
