"""Watchers over loopback TCP: one follows a bot table to its end and keeps the same verified
transcript; the host admits watchers within its caps, and a watcher that sends anything is
closed without disturbing the match. On the same table a seat floods chat lines: the host takes
five in ten seconds and refuses the sixth, which the seat drops, its counters mended so that its
moves go on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net import handshake as hs
from dernier_p2p.net.framing import PeerClosed, open_framed
from dernier_p2p.net.timers import Timers
from dernier_p2p.net.watch import WatchConfig, Watcher
from dernier_p2p.wire.transcript import read_transcript

from .helpers import play, same_result, transcripts, verify, wait_for


async def _open(port: int) -> Any:
    return await open_framed("127.0.0.1", port, hs.MAX_FRAME)


async def test_a_watcher_follows_the_match_and_the_host_keeps_watchers_in_their_place(
    tmp_path: Path,
) -> None:
    checked = trio.Event()
    outcome: dict[str, Any] = {}

    async def host_agent(state: Any, seat: int, view: Any) -> Any:
        await checked.wait()  # the host plays only once the watchers are tested
        return HeuristicBot(0)(state, seat, view)

    async def watchers(table: Any) -> None:
        port = table.host.port
        watcher = Watcher(("127.0.0.1", port), WatchConfig(transcript=tmp_path / "w.bin"))

        async def follow() -> None:
            outcome["result"] = await watcher.run()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(follow)
            await watcher.local_seat()
            rogue = await _open(port)  # a second watcher, which will try to send
            last, summary = await hs.watch(rogue)
            assert last >= 0 and summary["players"] == 2
            third = await _open(port)  # the cap (two watchers) is reached
            with pytest.raises(hs.RemoteError) as refused:
                await hs.watch(third)
            assert refused.value.code == "TABLE_FULL"
            await hs.send_message(rogue, {"k": "env", "env": {"body": {"type": "ack"}}})
            with trio.fail_after(10):
                while True:
                    try:
                        msg = await hs.receive_message(rogue)
                    except hs.RemoteError as exc:
                        outcome["rogue"] = exc.code
                        break
                    assert msg["k"] in ("rec", "status")
                with pytest.raises((PeerClosed, trio.BrokenResourceError)):
                    while True:
                        await hs.receive_message(rogue)
                while len(table.host.watchers) > 1:
                    await trio.sleep(0.01)
            beyond = await _open(port)  # room again; a watch beyond the last record is refused
            await hs.receive_message(beyond)
            await hs.send_message(beyond, hs.watch_message(10**6))
            with pytest.raises(hs.RemoteError) as bad:
                await hs.receive_message(beyond)
            assert bad.value.code == "MALFORMED"
            peer = table.peers[1]
            seat = peer.me
            while seat.busy:
                await seat.changed.wait()
            for k in range(6):  # a flood, past the client's own pace: the host takes five
                await peer.send(seat.session.chat(f"line {k}"))
            await wait_for(lambda: sum(r["env"]["body"]["type"] == "chat"
                                       for r in seat.records) == 5)
            checked.set()

    table = await play(tmp_path, 2, agents={0: host_agent}, watch=watchers,
                       timers=Timers(turn_ms=30_000, declare_ms=30, grace_ms=400),
                       host_options={"max_watchers": 2, "watchers_per_address": 2})
    assert not table.errors  # no seat was disturbed
    faults = [f[:2] for f in table.host.faults]  # line 5 (and what was sent after it)
    assert faults.count((1, "UNEXPECTED")) == 1 and set(faults) <= {
        (1, "UNEXPECTED"), (1, "OUT_OF_ORDER")}
    assert table.peers[1].resumes == 0  # its connection was never closed
    assert outcome["rogue"] == "UNEXPECTED"
    got = transcripts(tmp_path, range(2))
    seen = list(read_transcript(tmp_path / "w.bin"))
    assert seen == got[0] == got[1]
    chats = [(r["env"]["seat"], r["env"]["body"]["text"]) for r in seen
             if r["env"]["body"]["type"] == "chat"]
    assert chats == [(1, f"line {k}") for k in range(5)]
    audit = verify(seen)
    assert same_result(outcome["result"], audit) and same_result(table.results[0], audit)
