"""Watchers over loopback TCP: one follows a bot table to its end and keeps the same verified
transcript; the host admits watchers within its caps, and a watcher that sends anything is
closed without disturbing the match. On the same table a seat's chat line refused by the host
is dropped and the seat's next line and moves go through (its counters mended)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net import handshake as hs
from dernier_p2p.net.framing import PeerClosed, open_framed
from dernier_p2p.net.host import Host
from dernier_p2p.net.timers import Timers
from dernier_p2p.net.watch import WatchConfig, Watcher
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.wire.transcript import read_transcript

from .helpers import play, same_result, transcripts, verify, wait_for


class RefusesAChat(Host):
    """Refuses the first chat envelope (as a host with a policy on chat might)."""

    refused = False

    def vet(self, seat: int, env: Any) -> None:
        body = env.get("body") if isinstance(env, dict) else None
        if not self.refused and isinstance(body, dict) and body.get("type") == "chat":
            self.refused = True
            raise ProtocolError("MALFORMED", seat, "no chat yet (a test's policy)")
        super().vet(seat, env)


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
            seat = table.peers[1].me
            seat.say("refused, once")  # the host refuses it: the seat's counters are mended
            seat.say("hello, watchers")
            await wait_for(lambda: any(r["env"]["body"]["type"] == "chat" for r in seat.records))
            checked.set()

    table = await play(tmp_path, 2, agents={0: host_agent}, watch=watchers, host_cls=RefusesAChat,
                       timers=Timers(turn_ms=30_000, declare_ms=30, grace_ms=400),
                       host_options={"max_watchers": 2, "watchers_per_address": 2})
    assert not table.errors  # no seat was disturbed
    faults = table.host.faults  # the refused chat (and the next one's old counter), no other
    assert faults[0][:2] == (1, "MALFORMED") and {f[:2] for f in faults[1:]} <= {
        (1, "OUT_OF_ORDER")}
    assert outcome["rogue"] == "UNEXPECTED"
    got = transcripts(tmp_path, range(2))
    seen = list(read_transcript(tmp_path / "w.bin"))
    assert seen == got[0] == got[1]
    chats = [(r["env"]["seat"], r["env"]["body"]["text"]) for r in seen
             if r["env"]["body"]["type"] == "chat"]
    assert chats == [(1, "hello, watchers")]
    audit = verify(seen)
    assert same_result(outcome["result"], audit) and same_result(table.results[0], audit)
