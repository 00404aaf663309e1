"""Watchers over loopback TCP: one follows a bot table to its end and keeps the same verified
transcript; the host admits watchers within its caps, and a watcher that sends anything is
closed without disturbing the match. On the same table a seat floods chat lines: the host takes
five in ten seconds and refuses the sixth, which the seat drops, its counters mended so that its
moves go on."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net import handshake as hs
from dernier_p2p.net.framing import PeerClosed, open_framed, serve_framed
from dernier_p2p.net.invite import Invite, Route, fingerprint
from dernier_p2p.net.reach import Dialer
from dernier_p2p.net.timers import Timers
from dernier_p2p.net.watch import WatchConfig, Watcher
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.transcript import read_transcript

from .helpers import play, same_result, transcripts, verify, wait_for

ROOT = Path(__file__).resolve().parents[2]


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


class _StallingProxy:
    """A loopback TCP relay to ``port``; its first connection goes silent on :meth:`stall`
    (both ways, the sockets left open: a link that died without a word)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.listen_port = 0
        self.connections = 0
        self.stalled = trio.Event()

    async def serve(self, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.listen_port = listeners[0].socket.getsockname()[1]
        task_status.started()
        await trio.serve_listeners(self._handle, listeners)

    async def _handle(self, client: trio.SocketStream) -> None:
        self.connections += 1
        first = self.connections == 1
        try:
            server = await trio.open_tcp_stream("127.0.0.1", self.port)
        except OSError:  # the host is gone
            await client.aclose()
            return

        async def pump(src: trio.SocketStream, dst: trio.SocketStream) -> None:
            while True:
                data = await src.receive_some(65536)
                if first and self.stalled.is_set():
                    await trio.sleep_forever()  # nothing more either way, nothing closed
                if not data:
                    await dst.send_eof()
                    return
                await dst.send_all(data)

        async with client, server, trio.open_nursery() as nursery:
            nursery.start_soon(pump, client, server)
            nursery.start_soon(pump, server, client)


async def test_a_watcher_whose_connection_goes_silent_watches_again(tmp_path: Path) -> None:
    go = trio.Event()
    outcome: dict[str, Any] = {}

    async def host_agent(state: Any, seat: int, view: Any) -> Any:
        await go.wait()  # the host plays only once the watcher is back (the match goes on)
        return HeuristicBot(0)(state, seat, view)

    async def watch(table: Any) -> None:
        proxy = _StallingProxy(table.host.port)
        async with trio.open_nursery() as nursery:
            await nursery.start(proxy.serve)
            watcher = Watcher(("127.0.0.1", proxy.listen_port),
                              WatchConfig(transcript=tmp_path / "w.bin", silence_s=1.0))

            async def follow() -> None:
                outcome["result"] = await watcher.run()
                nursery.cancel_scope.cancel()

            nursery.start_soon(follow)
            seat = await watcher.local_seat()
            proxy.stalled.set()
            outcome["held"] = len(seat.records)
            await wait_for(lambda: proxy.connections == 2)  # only silence can bring this
            go.set()

    table = await play(tmp_path, 2, agents={0: host_agent}, watch=watch,
                       timers=Timers(turn_ms=30_000, declare_ms=30, grace_ms=400))
    assert not table.errors
    seen = list(read_transcript(tmp_path / "w.bin"))
    assert seen == transcripts(tmp_path, range(2))[0]
    assert len(seen) > outcome["held"] and outcome["result"] is not None
    assert same_result(outcome["result"], verify(seen))


async def test_a_watcher_refuses_a_match_whose_record_0_is_not_the_coded_hosts(
        tmp_path: Path) -> None:
    """A relay, a router or anyone in the middle answers a watcher's dial with the key the code
    names in its (unsigned) challenge, then replays a stranger's match: record 0 is signed by
    another host. The watcher checks record 0's host key against the code (as a joiner
    does) and refuses it (WRONG_HOST) before writing anything."""
    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.protocol.local import run_local_match

    stranger = run_local_match(  # a match of this version (the recorded ones are older)
        "dernier", 2, [bytes([0x60 + k]) * 32 for k in range(2)],
        [HeuristicBot(0), HeuristicBot(1)], options={"match": ["hands", 1]}).records
    coded = IdentityKey.generate(b"\x07" * 32).public_bytes()
    assert stranger[0]["env"]["body"]["players"][0]["key"] != coded

    async def replay(stream: Any) -> None:
        await hs.send_message(stream, hs.challenge_message(
            b"\x01" * hs.NONCE_SIZE,
            {"name": "t", "variant": "dernier", "players": 2, "taken": 2, "key": coded}))
        await hs.receive_message(stream)  # the watch
        await hs.send_message(stream, {"k": "watching", "last": len(stranger) - 1})
        for rec in stranger:
            await hs.send_message(stream, {"k": "rec", "rec": rec})
        await trio.sleep(5)

    invite = Invite(fingerprint(coded), (Route("direct", "127.0.0.1", 1),))
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(serve_framed, replay, 0, host="127.0.0.1",
                                                max_frame=hs.MAX_FRAME))
        port = listeners[0].socket.getsockname()[1]
        dialer = Dialer(Invite(invite.fingerprint, (Route("direct", "127.0.0.1", port),)))
        out = tmp_path / "watch.bin"
        watcher = Watcher(("127.0.0.1", port), WatchConfig(
            transcript=out, dial=dialer, check_host=dialer.check_host, offload=False))
        with pytest.raises(hs.NetError) as info:
            await watcher.run()
        nursery.cancel_scope.cancel()
    assert info.value.code == "WRONG_HOST"
    assert not out.exists() or out.stat().st_size == 0
