"""The host over loopback TCP: full matches of bots, abuse, tampering, timers and leaving."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from dernier_p2p.net import handshake as hs
from dernier_p2p.net.host import Host
from dernier_p2p.net.peer import HostLost, Peer
from dernier_p2p.net.timers import Timers
from dernier_p2p.protocol.envelope import Author, make_record, record_hash, sign_envelope
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.node.hosting import SIDE_AHEAD, SIDE_PER_COUNTER, Hosting
from dernier_p2p.protocol.node.own import OwnSeat
from dernier_p2p.protocol.node.peer import PeerNode
from dernier_p2p.rules import Phase
from dernier_p2p.wire.transcript import read_transcript

from .helpers import FAST, GAME, play, same_result, transcripts, verify, wait_for


@pytest.mark.parametrize("players", [2, pytest.param(4, marks=pytest.mark.slow)])
async def test_a_match_of_bots_gives_identical_verified_transcripts(
    tmp_path: Path, players: int
) -> None:
    table = await play(tmp_path, players)
    assert not table.errors
    assert table.host.faults == []
    got = transcripts(tmp_path, range(players))
    assert all(got[s] == got[0] for s in got)
    assert got[0] == table.host.sequencer.records
    audit = verify(got[0])
    result = table.host.me.session.result
    assert result is not None and same_result(result, audit)
    assert all(table.results[s] == result for s in range(1, players))


def junk(peer: Peer) -> list[dict[str, Any]]:
    """One of each refused message, from seat ``peer`` at its next counter."""
    assert peer.me is not None and peer.seat is not None
    session = peer.me.session
    n = session._author.next_n
    head = session.head
    ack = {"type": "ack"}
    bad_sig = sign_envelope(peer.identity, GAME, peer.seat, n, head, ack)
    bad_sig["sig"] = bytes(64)
    return [
        {"k": "env", "env": {"body": 1}},  # malformed
        {"k": "env", "env": bad_sig},  # badly signed
        {"k": "env", "env": Author(peer.identity, GAME, peer.seat, n + 5).envelope(ack, head)},
        {"k": "env", "env": Author(peer.identity, GAME, peer.seat, n).envelope(
            {"type": "brag"}, head
        )},  # unknown type, right counter
        {"k": "env", "env": Author(peer.identity, GAME, peer.seat, n).envelope(
            {"type": "move", "hand": session.state.hand_number, "move": "play",
             "slot": 60000, "suit": None, "target": None, "declare": False}, head
        )},  # a play of a slot held neither now nor at its head: NOT_HELD
        {"k": "env", "env": Author(peer.identity, GAME, peer.seat, n).envelope(
            {"type": "move", "hand": session.state.hand_number, "move": "pass"}, head
        )},  # a move the rules refuse at its head
        {"k": "env", "env": Author(peer.identity, GAME, peer.seat, n).envelope(
            {"type": "coin_commit", "step": "dealer", "commit": bytes(32)}, head
        )},  # a coin message not due
        {"k": "bogus"},  # not a frame kind a peer may send
    ]


def after_record(seat: int, at: int, frames: Any) -> Any:
    """A watch task: once seat ``seat`` holds ``at`` records, write ``frames(peer)`` (maps or
    raw payloads) on its connection to the host, past its node."""

    async def watch(table: Any) -> None:
        await wait_for(lambda: seat in table.peers and table.peers[seat].me is not None
                       and len(table.peers[seat].me.records) >= at)
        peer = table.peers[seat]
        for frame in frames(peer):
            peer.driver.up.push(frame if isinstance(frame, bytes) else hs.pack(frame))

    return watch


async def test_refused_messages_get_error_frames_and_the_match_goes_on(tmp_path: Path) -> None:
    table = await play(tmp_path, 2, watch=after_record(1, 10, junk),
                       host_options={"max_errors": 11})
    assert not table.errors
    codes = [code for seat, code, _ in table.host.faults]
    assert {seat for seat, _, _ in table.host.faults} == {1}
    # envelopes are refused in order by the sequencing task; the bad frame kind at once
    assert sorted(codes) == sorted(
        [
            "MALFORMED",
            "BAD_SIGNATURE",
            "OUT_OF_ORDER",
            "UNKNOWN_MESSAGE",
            "NOT_HELD",
            "ILLEGAL_MOVE",
            "DECK_FAULT",
            "UNEXPECTED",
        ]
    )
    assert [c for c in codes if c != "UNEXPECTED"][-2:] == ["ILLEGAL_MOVE", "DECK_FAULT"]
    assert sorted(code for code, _ in table.peers[1].errors) == sorted(codes)
    got = transcripts(tmp_path, range(2))
    assert got[0] == got[1]
    assert verify(got[0]).ok


class NoComebackNode(PeerNode):
    """A seat that does not come back once its connection to the host is closed."""

    def closed(self, now: int) -> None:
        super().closed(now)
        self._end("no second chance in this test")


class NoComeback(Peer):
    node_cls = NoComebackNode


async def test_repeated_abuse_closes_only_that_connection(tmp_path: Path) -> None:
    flood = after_record(2, 10, lambda peer: [{"k": "env", "env": {"body": 1}}] * 8)
    table = await play(tmp_path, 3, peer_cls={2: NoComeback}, watch=flood)
    assert isinstance(table.errors.get(2), HostLost)
    assert [s for s, _, _ in table.host.faults] == [2] * 5  # closed at the fifth
    got = transcripts(tmp_path, range(2))
    assert got[0] == got[1]
    lefts = [r["env"]["body"] for r in got[0] if r["env"]["body"]["type"] == "left"]
    assert [b["seat"] for b in lefts] == [2]  # after the grace period
    assert sorted(v["seat"] for v in lefts[0]["votes"]) == [0, 1]  # the host's and seat 1's
    audit = verify(got[0])
    # three seats (leave play_on): the leaver goes out and ranks last, the other two play the
    # match out
    assert audit.ok and audit.summary.standings[-1] == 2
    assert audit.summary.match_points[2] == -1  # dernier: -1 match point to the leaver
    assert same_result(table.results[1], audit)


class TamperingHosting(Hosting):
    """Alters (or drops) record 12 on its way to seat 2 only; seat 1 gets the true one."""

    how = "alter"

    def relay_to(self, seat: int, rec: dict[str, Any]) -> dict[str, Any] | None:
        if seat != 2 or rec["i"] != 12:
            return rec
        if self.how == "drop":
            return None
        if self.how == "fork":  # a second, validly signed record 12 for seat 2 only
            return make_record(self.identity, rec["env"], rec["h"], rec["i"], rec["prev"],
                               rec["t"] + 1)
        forged = dict(rec)
        forged["t"] = rec["t"] + 1
        return forged


class DroppingHosting(TamperingHosting):
    how = "drop"


class ForkingHosting(TamperingHosting):
    how = "fork"


class Tampering(Host):
    hosting_cls = TamperingHosting


class Dropping(Host):
    hosting_cls = DroppingHosting


class Forking(Host):
    hosting_cls = ForkingHosting


@pytest.mark.parametrize(
    "host_cls,code,kept",
    [(Tampering, "BAD_SIGNATURE", 12), (Dropping, "BAD_CHAIN", 12), (Forking, "BAD_CHAIN", 14)],
)
async def test_a_tampering_relay_is_caught_and_named(
    tmp_path: Path, host_cls: type[Host], code: str, kept: int
) -> None:
    table = await play(tmp_path, 3, host_cls=host_cls)
    err = table.errors.get(2)
    assert isinstance(err, ProtocolError), err
    assert (err.code, err.seat) == (code, 0)  # the host is named
    # nothing after the bad record was kept; a forked record 12 is only caught by the next,
    # which the host signed after the other 12: that one is kept last, the proof (4.6, 19.1)
    assert len(transcripts(tmp_path, [2])[2]) == kept
    assert 1 not in table.errors


async def test_a_peer_killed_mid_hand_leaves_and_loses(tmp_path: Path) -> None:
    async def kill_when_playing(table: Any) -> None:
        host = table.host
        await wait_for(
            lambda: host.me is not None
            and host.me.session.state.phase is Phase.PLAY
            and len(host.sequencer.records) > 40
        )
        table.scopes[1].cancel()

    table = await play(tmp_path, 3, watch=kill_when_playing)
    assert 1 not in table.results
    got = transcripts(tmp_path, [0, 2])
    assert got[0] == got[2]
    lefts = [r["env"]["body"] for r in got[0] if r["env"]["body"]["type"] == "left"]
    assert [b["seat"] for b in lefts] == [1]
    assert sorted(v["seat"] for v in lefts[0]["votes"]) == [0, 2]  # the host's and seat 2's
    audit = verify(got[0])  # three seats (leave play_on): the others play on, leaver last
    assert audit.ok and audit.summary.standings[-1] == 1
    assert audit.summary.match_points[1] == -1  # dernier: -1 match point to the leaver
    # the others were told of the drop and its grace, and never of a return
    for me in (table.host.me, table.peers[2].me):
        told = [(p.seat, p.state) for p in me.presence]
        assert told == [(1, "dropped")]
        assert 0 < me.presence[0].grace_ms <= FAST.grace_ms


async def never(*_: Any) -> None:
    await trio.sleep_forever()


async def test_a_seat_that_does_not_move_times_out(tmp_path: Path) -> None:
    # turn_ms leaves time for the deck set-up (a seat owing a deck message times out too)
    table = await play(
        tmp_path, 3, agents={1: never}, timers=Timers(turn_ms=1500, declare_ms=30, grace_ms=400)
    )
    assert not table.errors
    got = transcripts(tmp_path, [0, 1, 2])
    assert got[0] == got[1] == got[2]
    timeouts = [r["env"]["body"] for r in got[0] if r["env"]["body"]["type"] == "timeout"]
    assert [b["seat"] for b in timeouts] == [1]
    assert sorted(v["seat"] for v in timeouts[0]["votes"]) == [0, 2]  # the host and seat 2
    assert verify(got[0]).summary.match_points[1] == -1  # dernier: forfeit


async def test_a_seat_that_does_not_move_at_two_seats_is_no_contest(tmp_path: Path) -> None:
    table = await play(
        tmp_path, 2, agents={1: never}, timers=Timers(turn_ms=1500, declare_ms=30, grace_ms=400)
    )
    assert not table.errors
    got = transcripts(tmp_path, [0, 1])
    assert got[0] == got[1]
    assert got[0][-1]["env"]["body"] == {"type": "no_contest", "seat": 1, "votes": []}
    audit = verify(got[0])
    assert audit.ok and audit.summary.no_contest and audit.summary.winner is None
    assert table.results[0] == table.results[1] == {"no_contest": True}


def no_declare(seat: int, dawdle_s: float = 0.0) -> Any:
    """A bot that never says DERNIER (so a declaration window opens when it is down to one);
    with ``dawdle_s``, it thinks that long before letting an out-of-turn chance go (so it says
    ``ready`` late, PROTOCOL.md 18.1)."""
    from dataclasses import replace

    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.net.agent import bot_agent
    from dernier_p2p.rules import Declare, Play, legal_moves

    bot = HeuristicBot(seat)

    def policy(state: Any, s: int, view: Any) -> Any:
        move = bot(state, s, view)
        if isinstance(move, Play) and move.declare:
            move = replace(move, declare=False)
        if isinstance(move, Declare):
            others = [m for m in legal_moves(state, s, view) if not isinstance(m, Declare)]
            if state.turn != s:
                return None
            return next((m for m in others if not getattr(m, "declare", False)), None)
        return move

    if not dawdle_s:
        return bot_agent(policy)

    async def agent(state: Any, s: int, view: Any) -> Any:
        move = policy(state, s, view)
        if move is None:
            await trio.sleep(dawdle_s)
        return move

    return agent


class ClockedHosting(Hosting):
    """Logs, per record, the host's clock (ms) and the open declaration windows after it."""

    def _after_record(self, rec: dict[str, Any], now: int) -> None:
        super()._after_record(rec, now)
        Clocked.log.append((now, rec["env"]["body"], self._owes, rec["env"]["seat"]))


class Clocked(Host):
    hosting_cls = ClockedHosting
    log: list[tuple[int, dict[str, Any], tuple[int, ...], int]]


async def test_the_next_turn_move_waits_for_the_declaration_window(tmp_path: Path) -> None:
    Clocked.log = []
    declare_ms = 150
    table = await play(
        tmp_path,
        2,
        host_cls=Clocked,
        agents={0: no_declare(0, 0.25), 1: no_declare(1, 0.25)},  # slow to pass (> declare_ms)
        timers=Timers(turn_ms=3000, declare_ms=declare_ms, grace_ms=400),
    )
    assert not table.errors
    log = Clocked.log
    checked = 0
    for k, (opened_at, _, owes, _) in enumerate(log):
        if not owes or (k and log[k - 1][2]):
            continue  # not the record that opened a window
        # the next seat move other than a declaration or catch came declare_ms later at least,
        # unless its author is the seat that owes (the only other seat may have passed)
        for now, body, _, author in log[k + 1 :]:
            if body["type"] == "move" and body["move"] not in ("declare", "catch"):
                if author not in owes:
                    assert now - opened_at >= declare_ms - 5, (opened_at, now, body)
                    checked += 1
                break
    assert checked >= 1


async def test_lobby_joins_and_every_record_are_told_in_order(tmp_path: Path) -> None:
    events: list[Any] = []
    followed: list[dict[str, Any]] = []
    peer_followed: list[dict[str, Any]] = []
    work: dict[int, list[tuple[str, int, int]]] = {0: [], 2: []}

    async def watch(table: Any) -> None:
        async def lobby() -> None:
            async for event in table.host.joins():  # from the first event, ends when full
                events.append(event)

        async def records() -> None:
            seat = await table.host.local_seat()
            seat.on_work = lambda *what: work[0].append(what)
            async for rec in seat.follow():
                followed.append(rec)

        async def peer_records() -> None:
            await wait_for(lambda: 2 in table.peers)
            seat = await table.peers[2].local_seat()
            seat.on_work = lambda *what: work[2].append(what)
            async for rec in seat.follow(5):
                peer_followed.append(rec)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(lobby)
            nursery.start_soon(records)
            nursery.start_soon(peer_records)

    table = await play(tmp_path, 3, watch=watch)
    assert not table.errors
    assert [(e.kind, e.seat, e.name, e.taken) for e in events] == [
        ("join", 1, "p1", 2),
        ("join", 2, "p2", 3),
    ]
    got = transcripts(tmp_path, range(3))
    assert followed == got[0]  # every record once, in order, to the last
    assert peer_followed == got[2][5:]
    # told before each long step of the first shuffle round: (what, seat, its place)
    assert work[0][:3] == [("shuffle", 0, 1), ("verify", 1, 2), ("verify", 2, 3)]
    assert work[2][:3] == [("verify", 0, 1), ("verify", 1, 2), ("shuffle", 2, 3)]


async def test_a_seat_freed_in_the_lobby_is_told() -> None:
    from functools import partial

    from dernier_p2p.net.framing import open_framed
    from dernier_p2p.net.host import HostConfig, run_host

    from .helpers import KEYS

    events: list[Any] = []
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            host = await nursery.start(partial(run_host, KEYS[0], HostConfig(players=3), None))

            async def lobby() -> None:
                async for event in host.joins():
                    events.append(event)

            nursery.start_soon(lobby)
            stream = await open_framed("127.0.0.1", host.port, hs.MAX_FRAME)
            await hs.join(stream, KEYS[5], "early")
            await stream.aclose()
            await wait_for(lambda: len(events) == 2)
            nursery.cancel_scope.cancel()
    assert [(e.kind, e.seat, e.name, e.taken) for e in events] == [
        ("join", 1, "early", 2),
        ("leave", 1, "early", 1),
    ]


async def test_shuffles_applied_in_worker_threads_give_the_same_verified_match(
    tmp_path: Path,
) -> None:
    table = await play(
        tmp_path, 3, host_options={"offload": True}, peer_options={"offload": True}
    )
    assert not table.errors
    # per round, the host: the key reveal before its shuffle, then seats 1 and 2's shuffles;
    # seat 1: seat 0's shuffle (checked, then its own computed), then seat 2's
    assert table.host.me.offloaded >= 3 and table.peers[1].me.offloaded >= 2
    assert not table.host.me.busy
    got = transcripts(tmp_path, range(3))
    assert got[0] == got[1] == got[2]
    audit = verify(got[0])
    assert all(same_result(table.results[s], audit) for s in range(1, 3))


DEEP_FRAMES = [b"\x91" * 600 + b"\xc0", b"\x82\xa1k\xa3env\xa3env" + b"\xdd\xff\xff\xff\xff"]
"""The reviewed 600-deep frame and a huge-container frame."""


async def test_a_seat_sending_deep_or_huge_frames_is_refused_and_the_match_goes_on(
    tmp_path: Path,
) -> None:
    table = await play(tmp_path, 2, watch=after_record(1, 10, lambda peer: DEEP_FRAMES))
    assert not table.errors
    assert [(seat, code) for seat, code, _ in table.host.faults] == [
        (1, "OVERSIZED"), (1, "OVERSIZED")
    ]
    got = transcripts(tmp_path, range(2))
    assert got[0] == got[1] and verify(got[0]).ok


class BuggyHosting(Hosting):
    """A host whose check of seat 1's third envelope hits a bug (an exception that is no
    protocol error), as hostile bytes might."""

    seen = 0

    def vet(self, seat: int, env: Any) -> None:
        if seat == 1:
            BuggyHosting.seen += 1
            if BuggyHosting.seen == 3:
                raise IndexError("a bug reached by a hostile envelope")
        super().vet(seat, env)


class BuggyHost(Host):
    hosting_cls = BuggyHosting


async def test_an_internal_fault_on_a_seats_envelope_is_its_fault_not_the_hosts_end(
    tmp_path: Path,
) -> None:
    table = await play(tmp_path, 2, host_cls=BuggyHost)
    assert table.host.faults[0][:2] == (1, "MALFORMED")
    assert {seat for seat, _, _ in table.host.faults} == {1}
    assert table.host.me.session.result is not None  # the host finished its match
    got = transcripts(tmp_path, range(2))
    assert verify(got[0]).ok


async def test_a_slow_reader_is_dropped_not_buffered_without_end() -> None:
    from dernier_p2p.net.driver import ConnIO
    from dernier_p2p.net.framing import FramedStream

    ours, theirs = trio.testing.memory_stream_pair()
    conn = ConnIO(1, FramedStream(ours, 1 << 20), max_queued=1000)
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:

            async def run() -> None:
                with conn.scope:
                    await conn.sender()

            nursery.start_soon(run)
            for _ in range(50):  # nobody reads ``theirs``
                conn.push(b"x" * 100)
                await trio.sleep(0)
    assert conn.closing and conn.queued > 1000


@asynccontextmanager
async def _ann_and_bob_at_a_table_of_three() -> AsyncIterator[tuple[list[Any], Any, Any]]:
    """A host of three seats on loopback with Ann (seat 1) and Bob (seat 2) joined: their
    streams, the host, and Ann's session from record 0 (which Ann's stream has delivered)."""
    from functools import partial

    from dernier_p2p.net.framing import open_framed
    from dernier_p2p.net.host import HostConfig, run_host
    from dernier_p2p.protocol.session import Session

    from .helpers import KEYS

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            host = await nursery.start(partial(run_host, KEYS[0], HostConfig(players=3), None))
            streams = []
            for key, name in ((KEYS[5], "ann"), (KEYS[6], "bob")):
                streams.append(await open_framed("127.0.0.1", host.port, hs.MAX_FRAME))
                await hs.join(streams[-1], key, name)
            first = await hs.receive_message(streams[0])
            assert first["k"] == "rec" and first["rec"]["i"] == 0
            try:
                yield streams, host, Session(KEYS[5], 1, first["rec"], bytes(32))
            finally:
                for stream in streams:
                    await stream.aclose()
                nursery.cancel_scope.cancel()


async def test_a_ready_is_relayed_once_per_window() -> None:
    """A seat repeating its ``ready``, or naming a record the host has not made, has nothing
    relayed: the other seat gets the seat's one ready, then its accept (in the order sent)."""
    from dernier_p2p.protocol.ready import ready_frame

    from .helpers import KEYS

    async with _ann_and_bob_at_a_table_of_three() as (streams, _, ann):
        frame = ready_frame(KEYS[5], ann.game, 1, 0)
        for msg in (frame, frame, ready_frame(KEYS[5], ann.game, 1, 7)):
            await hs.send_message(streams[0], msg)
        await hs.send_message(streams[0], {"k": "env", "env": ann.start()[0]})
        seen = []
        while True:
            msg = await hs.receive_message(streams[1])
            if msg["k"] == "rec" and msg["rec"]["env"]["seat"] == 1:
                break
            seen.append(msg["k"])
        assert seen.count("ready") == 1


async def test_a_repeated_ready_is_dropped_before_its_signature_is_checked() -> None:
    """After a seat's ready is relayed, its repeats (here with a broken signature) are dropped
    unchecked: no error frame comes back and, past five of them, the connection is not closed
    as it would be after five refused frames; a first ready with a bad signature is still
    refused with BAD_SIGNATURE."""
    from dernier_p2p.protocol.ready import ready_frame

    from .helpers import KEYS

    async with _ann_and_bob_at_a_table_of_three() as (streams, host, ann):
        bob_ready = ready_frame(KEYS[6], ann.game, 2, 0)
        await hs.send_message(streams[1], {**bob_ready, "sig": bytes(64)})  # a first one
        with pytest.raises(hs.RemoteError) as refused:
            while True:
                await hs.receive_message(streams[1])
        assert refused.value.code == "BAD_SIGNATURE"
        frame = ready_frame(KEYS[5], ann.game, 1, 0)
        broken = {**frame, "sig": bytes(64)}
        for msg in (frame, *[broken] * 6):
            await hs.send_message(streams[0], msg)
        await hs.send_message(streams[0], {"k": "env", "env": ann.start()[0]})
        seen = []
        while True:  # (an error frame would raise RemoteError here)
            msg = await hs.receive_message(streams[0])
            if msg["k"] == "rec" and msg["rec"]["env"]["seat"] == 1:
                break  # its accept is sequenced: the connection is still served
            seen.append(msg["k"])
        assert "error" not in seen
        assert host.faults == [(2, "BAD_SIGNATURE", "a ready frame that is not seat 2's")]


async def test_a_new_host_holds_at_most_an_inbox_of_a_seats_envelopes_while_gathering() -> None:
    """While a new host gathers (here: waiting for depose votes that never come), a seat's
    envelopes wait in its inbox, at most ``inbox_per_seat`` of them: its reader stops there
    rather than hold whatever the seat sends; the host then ends with NoQuorum."""
    from dernier_p2p.net.framing import open_framed
    from dernier_p2p.net.host import HostConfig, NoQuorum
    from dernier_p2p.protocol.local import LocalTable
    from dernier_p2p.protocol.node.own import OwnSeat

    t = LocalTable("dernier", [bytes([70 + k]) * 32 for k in range(3)])
    rec0 = t.records[0]
    me = OwnSeat(t.identities[1], 1, rec0, bytes(32))
    config = HostConfig(players=3, timers=Timers(grace_ms=3_000), inbox_per_seat=8)
    host = Host(t.identities[1], config, None, takeover=me)
    with trio.fail_after(20):
        with pytest.raises(ExceptionGroup) as info:
            async with trio.open_nursery() as nursery:
                await nursery.start(host.run)
                stream = await open_framed("127.0.0.1", host.port, hs.MAX_FRAME)
                assert await hs.rejoin(stream, t.identities[2], 0) == (2, 0)
                for _ in range(40):  # small frames: the socket's buffers take them all
                    await hs.send_message(stream, {"k": "env", "env": {"n": 1}})
                await wait_for(lambda: len(host.hosting.early) >= 8)
                await trio.sleep(0.5)
                assert host.hosting.gathering and len(host.hosting.early) == 8
        assert info.group_contains(NoQuorum, depth=None)


async def test_a_seat_forwarding_a_record_again_cannot_hold_up_the_host_change() -> None:
    """A seat that resumes with a new host claiming records it does not hold and forwards one
    the host holds (it could do so forever) is refused at once (UNEXPECTED); the gathering goes
    on, its depose vote counts and the host change is sequenced (before, the host waited for
    its records until the gathering gave up with NoQuorum)."""
    from dernier_p2p.net.framing import open_framed
    from dernier_p2p.net.host import HostConfig
    from dernier_p2p.protocol.local import LocalTable
    from dernier_p2p.protocol.node.own import OwnSeat
    from dernier_p2p.protocol.votes import vote_frame

    seeds = [bytes([80 + k]) * 32 for k in range(3)]
    t = LocalTable("dernier", seeds, listen=[("127.0.0.1", 1)] * 3)  # each may host
    rec0 = t.records[0]
    me = OwnSeat(t.identities[1], 1, rec0, bytes(32))
    host = Host(t.identities[1], HostConfig(players=3, timers=Timers(grace_ms=3_000)), None,
                takeover=me)
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            await nursery.start(host.run)
            stream = await open_framed("127.0.0.1", host.port, hs.MAX_FRAME)
            assert await hs.rejoin(stream, t.identities[2], 10**6) == (2, 0)
            await hs.send_message(stream, {"k": "rec", "rec": rec0})  # the host holds it
            with pytest.raises(hs.RemoteError) as info:
                await hs.receive_message(stream)
            assert info.value.code == hs.UNEXPECTED
            vote = t.sessions[2].vote("depose", 0)
            await hs.send_message(stream, vote_frame("depose", 0, vote))
            while True:
                msg = await hs.receive_message(stream)
                if msg["k"] == "rec":
                    break
            assert msg["rec"]["env"]["body"]["type"] == "host_change"
            await stream.aclose()
            nursery.cancel_scope.cancel()


async def test_a_candidate_gathering_answers_links_until_it_hosts() -> None:
    """A seat that took over and gathers (no quorum yet) answers a probe on its listener with
    its signed ``present``, so the seats that stayed with the old host do not take it for
    absent (PROTOCOL.md 4.6); once the host change is sequenced it refuses links."""
    import socket

    from dernier_p2p.net import links
    from dernier_p2p.net.framing import open_framed
    from dernier_p2p.net.host import HostConfig
    from dernier_p2p.protocol.local import LocalTable
    from dernier_p2p.protocol.node.own import OwnSeat
    from dernier_p2p.protocol.votes import vote_frame

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    seeds = [bytes([90 + k]) * 32 for k in range(3)]
    t = LocalTable("dernier", seeds, listen=[("127.0.0.1", port)] * 3)
    me = OwnSeat(t.identities[1], 1, t.records[0], bytes(32))
    config = HostConfig(players=3, timers=Timers(grace_ms=3_000), port=port)
    host = Host(t.identities[1], config, None, takeover=me)
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            await nursery.start(host.run)
            assert host.hosting.gathering
            found = await links.probe(t.identities[2], t.sessions[2], 1, 5.0)
            assert found is not None and found.have == 0 and found.pending == []
            stream = await open_framed("127.0.0.1", host.port, hs.MAX_FRAME)
            assert await hs.rejoin(stream, t.identities[2], 0) == (2, 0)
            vote = t.sessions[2].vote("depose", 0)
            await hs.send_message(stream, vote_frame("depose", 0, vote))
            await wait_for(lambda: not host.hosting.gathering)
            assert await links.probe(t.identities[2], t.sessions[2], 1, 2.0) is None
            await stream.aclose()
            nursery.cancel_scope.cancel()


class EagerAcks(OwnSeat):
    """A seat that echoes the head whenever it is idle, news or not."""

    def ack(self) -> dict[str, Any] | None:
        if self.finished or self.seat is None:
            return None
        return self.session.ack()


async def test_an_ack_with_nothing_new_is_refused_and_the_match_goes_on(tmp_path: Path) -> None:
    """(4.9) A seat acking every 20 ms whether or not anything came: the host refuses each ack
    that echoes nothing new since the head its author last echoed (UNEXPECTED), the seat drops
    it as it drops a refused chat line and signs its later envelopes again, and the match
    ends. The transcript holds no two acks of a seat without a record of another seat
    between: the table's progress, not the acker, sets the pace of its acks."""

    async def make_eager(table: Any) -> None:
        await wait_for(lambda: 1 in table.peers and table.peers[1].me is not None)
        own = table.peers[1].me.own
        own.__class__ = EagerAcks

    table = await play(tmp_path, 2, watch=make_eager, peer_options={"ack_s": 0.02},
                       host_options={"max_errors": 10_000})
    assert not table.errors
    refused = [d for seat, code, d in table.host.faults if code == "UNEXPECTED"]
    assert refused and all(seat == 1 for seat, _, _ in table.host.faults)
    assert all("ack with nothing new" in d for d in refused)
    got = transcripts(tmp_path, range(2))
    assert got[0] == got[1]
    index = {record_hash(r): r["i"] for r in got[0]}
    last_echo = -1
    for rec in got[0]:
        env = rec["env"]
        if env["seat"] != 1:
            continue
        head = index.get(env["head"], -1)
        if env["body"]["type"] == "ack":
            assert any(r["env"]["seat"] != 1 and r["env"]["body"]["type"] != "ack"
                       for r in got[0][last_echo + 1: head + 1]), rec["i"]
        last_echo = max(last_echo, head)
    assert verify(got[0]).ok and table.results[0] == table.results[1]
    # (each refused ack is dropped and the acker's later envelopes signed again, tested in
    # test_own.py: acking every 20 ms, on a loaded machine it may still miss its turns, its
    # own doing, and be timed out; nothing of it reaches the honest transcript but records)


async def test_the_side_file_keeps_a_seats_envelopes_within_its_budget(tmp_path: Path) -> None:
    """(21.1) The side file takes what could prove a fault of its author: envelopes it signed
    for this game, from its next counter on, at most SIDE_PER_COUNTER per counter. A seat
    sending one refused envelope 60 times, unsigned junk and envelopes far ahead does not fill
    the host's disk; the match goes on."""

    at: list[int] = []

    def flood(peer: Peer) -> list[dict[str, Any]]:
        assert peer.me is not None and peer.seat is not None
        session = peer.me.session
        n, head = session._author.next_n, session.head
        at.append(n)
        illegal = Author(peer.identity, GAME, peer.seat, n).envelope(
            {"type": "move", "hand": session.state.hand_number, "move": "pass"}, head)
        unsigned = dict(illegal, sig=bytes(64))
        ahead = Author(peer.identity, GAME, peer.seat, n + SIDE_AHEAD).envelope(
            {"type": "ack"}, head)
        return ([{"k": "env", "env": illegal}] * 60 + [{"k": "env", "env": unsigned}] * 20
                + [{"k": "env", "env": ahead}] * 20)

    side = tmp_path / "t0.envelopes"
    table = await play(tmp_path, 2, watch=after_record(1, 10, flood),
                       host_options={"max_errors": 10_000, "envelopes": side})
    assert not table.errors
    kept = list(read_transcript(side))
    assert kept and all(e["sig"] != bytes(64) for e in kept)
    per_counter: dict[tuple[int, int], int] = {}
    for e in kept:
        per_counter[(e["seat"], e["n"])] = per_counter.get((e["seat"], e["n"]), 0) + 1
    assert max(per_counter.values()) <= SIDE_PER_COUNTER
    assert per_counter[(1, at[0])] >= SIDE_PER_COUNTER  # the flood's copies, up to the budget
    assert (1, at[0] + SIDE_AHEAD) not in per_counter
    got = transcripts(tmp_path, range(2))
    assert got[0] == got[1] and verify(got[0]).ok


def _env_frame_of(size: int) -> bytes:
    """A frame payload of exactly ``size`` bytes (100 KiB or more): {"k": "env", "env": [two
    bins]}, no envelope, each bin within the decoding limits (3.1)."""
    head = b"\x82\xa1k\xa3env\xa3env\x92"
    a = 65535
    b = size - len(head) - 3 - a - 3
    assert 0 < b <= 65535
    return (head + b"\xc5" + a.to_bytes(2, "big") + b"\x00" * a
            + b"\xc5" + b.to_bytes(2, "big") + b"\x00" * b)


async def test_a_seat_frame_above_max_seat_frame_is_oversized_one_at_it_is_read(
        tmp_path: Path) -> None:
    """(4.1) A seat sends one envelope or record a frame: the host reads a frame of exactly
    MAX_SEAT_FRAME bytes (and refuses what it holds, MALFORMED) and refuses a longer one
    unread (OVERSIZED, the connection closed); the seat resumes and the match goes on."""
    table = await play(tmp_path, 2, watch=after_record(1, 10, lambda peer: [
        _env_frame_of(hs.MAX_SEAT_FRAME), _env_frame_of(hs.MAX_SEAT_FRAME + 1)]))
    assert not table.errors
    assert [(seat, code) for seat, code, _ in table.host.faults] == [
        (1, "MALFORMED"), (1, "OVERSIZED")]
    got = transcripts(tmp_path, range(2))
    assert got[0] == got[1] and verify(got[0]).ok
