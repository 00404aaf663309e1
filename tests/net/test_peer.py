"""The peer over loopback TCP: resuming after a drop, host failover, acks of an idle peer."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net import handshake as hs
from dernier_p2p.net.agent import bot_agent
from dernier_p2p.net.driver import Routes
from dernier_p2p.net.framing import open_framed
from dernier_p2p.net.host import SEATED_KEY, Host
from dernier_p2p.net.peer import HostLost, Peer, PeerConfig
from dernier_p2p.net.reach import new_host_dialer
from dernier_p2p.net.timers import Timers
from dernier_p2p.net.watch import WatchConfig, Watcher
from dernier_p2p.protocol.envelope import record_hash
from dernier_p2p.protocol.liveness.host import HostWatch
from dernier_p2p.protocol.node.hosting import Hosting
from dernier_p2p.protocol.node.peer import PeerNode
from dernier_p2p.protocol.verify import check_records
from dernier_p2p.rules import Phase, to_act
from dernier_p2p.wire.transcript import read_transcript

from .helpers import KEYS, play, same_result, seed, transcripts, verify, wait_for


def mid_hand(table: Any, after: int) -> bool:
    host = table.host
    return (
        host.me is not None
        and host.me.session.state.phase is Phase.PLAY
        and len(host.sequencer.records) > after
    )


async def test_a_dropped_peer_resumes_within_grace(tmp_path: Path) -> None:
    drops = []

    async def drop_connection(table: Any) -> None:
        await wait_for(lambda: mid_hand(table, 30))
        peer = table.peers[1]
        drops.append(len(peer.me.records))
        await trio.aclose_forcefully(peer.stream)  # the socket dies under the peer

    table = await play(tmp_path, 2, watch=drop_connection)
    assert not table.errors
    assert table.peers[1].resumes == 1
    got = transcripts(tmp_path, range(2))
    assert got[0] == got[1]
    bodies = [r["env"]["body"]["type"] for r in got[0]]
    assert "left" not in bodies and "timeout" not in bodies
    assert len(got[0]) > drops[0]
    assert same_result(table.results[1], verify(got[0]))


async def test_a_host_killed_mid_hand_is_replaced_by_the_next_seat(tmp_path: Path) -> None:
    """...and a watcher follows the table across the host change, to the end."""
    killed = []
    watched: dict[str, Any] = {}

    async def kill_host(table: Any) -> None:
        watcher = Watcher(("127.0.0.1", table.host.port), WatchConfig(tmp_path / "w.bin"))

        async def follow() -> None:
            watched["result"] = await watcher.run()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(follow)
            await wait_for(lambda: mid_hand(table, 30))
            killed.append(len(table.host.records))
            table.scopes[0].cancel()

    table = await play(tmp_path, 3, watch=kill_host, listen=True)
    assert not table.errors
    assert 0 not in table.results  # the old host was cancelled
    assert table.peers[1].host is not None  # seat 1 hosted the end of the match
    got = transcripts(tmp_path, [1, 2])
    assert got[1] == got[2]
    bodies = [r["env"]["body"] for r in got[1]]
    change = [b["type"] for b in bodies].index("host_change")
    assert (bodies[change]["old"], bodies[change]["new"]) == (0, 1)
    assert [v["seat"] for v in bodies[change]["votes"]] == [1, 2]  # a quorum of depose votes
    # mid-hand: the killed host had sequenced more than 30 records with the hand in play (what
    # reached the seats may be fewer); the hand had moves and had not ended (no key of its
    # revealed) before the change
    hand = bodies[change - 1].get("hand")
    assert any(b["type"] == "move" and b["hand"] == hand for b in bodies[:change])
    assert not any(b["type"] == "secret" and b["hand"] == hand for b in bodies[:change])
    # the old host stays a seat after the change: the new host gives it its grace to resume,
    # and only then (it never came back) records it as left
    away = [(p.seat, p.state) for p in table.peers[1].host.me.presence]
    assert (0, "dropped") in away
    lefts = [b for b in bodies[change + 1 :] if b["type"] == "left"]
    assert [b["seat"] for b in lefts] == [0]  # the old host did not come back
    assert {r["h"] for r in got[1][change:]} == {1}
    assert {r["h"] for r in got[1][:change]} == {0}
    # what the others hold from the old host is its own history (it may have sequenced more
    # that never reached anyone before it died)
    old = transcripts(tmp_path, [0])[0]
    assert got[1][:change] == old[:change]
    assert killed[0] >= change
    audit = verify(got[1])
    assert audit.summary.match_points[0] == -1
    assert table.results[1] == table.results[2] and same_result(table.results[1], audit)
    assert read_transcript(tmp_path / "w.bin") == got[1]  # the watcher's, across the change
    assert watched["result"] == table.results[1]


class WithholdingHosting(Hosting):
    """Stops relaying to seat 1 once the match is mid-hand (seat 1 then lags behind seat 2)."""

    cut: int | None = None

    def relay_to(self, seat: int, rec: dict[str, Any]) -> dict[str, Any] | None:
        if self.cut is None and self.own is not None and rec["i"] > 30:
            if self.own.session.state.phase is Phase.PLAY:
                self.cut = rec["i"]
        if seat == 1 and self.cut is not None and rec["i"] >= self.cut:
            return None
        return rec


class Withholding(Host):
    hosting_cls = WithholdingHosting

    @property
    def cut(self) -> int | None:
        return self.hosting.cut  # type: ignore[attr-defined]


async def test_a_new_host_takes_the_records_it_lacks_from_the_others(tmp_path: Path) -> None:
    seen = {}

    async def kill_host_once_seat_2_is_ahead(table: Any) -> None:
        await wait_for(lambda: 2 in table.peers and table.peers[2].me is not None)
        await wait_for(lambda: table.host.cut is not None)
        await wait_for(lambda: len(table.peers[2].me.records) > table.host.cut)
        seen.update({s: len(table.peers[s].me.records) for s in (1, 2)})
        table.scopes[0].cancel()

    table = await play(
        tmp_path,
        3,
        host_cls=Withholding,
        watch=kill_host_once_seat_2_is_ahead,
        listen=True,
        timers=Timers(turn_ms=10_000, declare_ms=30, grace_ms=400),
    )
    assert seen[2] > seen[1]  # seat 1, the next host, lacked records seat 2 held
    assert not table.errors
    got = transcripts(tmp_path, [1, 2])
    assert got[1] == got[2]
    bodies = [r["env"]["body"]["type"] for r in got[1]]
    change = bodies.index("host_change")
    assert change >= seen[2]  # nothing seat 2 held was lost
    audit = verify(got[1])
    assert table.results[1] == table.results[2] and same_result(table.results[1], audit)


async def test_an_idle_peer_echoes_the_head_with_acks(tmp_path: Path) -> None:
    bot = HeuristicBot(1)

    async def slow(state: Any, seat: int, view: Any) -> Any:
        await trio.sleep(0.1)  # the peer sits idle between its moves
        return bot(state, seat, view)

    table = await play(tmp_path, 2, agents={1: slow}, peer_options={"ack_s": 0.03})
    assert not table.errors
    got = transcripts(tmp_path, [0, 1])
    assert got[0] == got[1]
    acks = [r for r in got[0] if r["env"]["body"]["type"] == "ack"]
    assert acks and all(r["env"]["seat"] == 1 for r in acks)
    # no ack storm: each ack follows news (a record of the other seat that is not an ack)
    # seen since the head its author echoed in its previous envelope
    index = {record_hash(r): r["i"] for r in got[0]}
    last_echo = -1
    for rec in got[0]:
        env = rec["env"]
        if env["seat"] != 1:
            continue
        head = index.get(env["head"], -1)
        if env["body"]["type"] == "ack":
            news = [
                r
                for r in got[0][last_echo + 1 : head + 1]
                if r["env"]["seat"] != 1 and r["env"]["body"]["type"] != "ack"
            ]
            assert news, rec["i"]
        last_echo = max(last_echo, head)
    assert verify(got[0]).ok



async def test_without_an_address_to_take_over_the_peer_reports_the_host_lost(
    tmp_path: Path,
) -> None:
    async def kill_host(table: Any) -> None:
        await wait_for(lambda: mid_hand(table, 30))
        table.scopes[0].cancel()

    table = await play(tmp_path, 3, watch=kill_host)  # the peers announced no listen address
    err = table.errors.get(1)
    assert isinstance(err, HostLost) and "no seat can host" in str(err)
    assert table.peers[1].host is None


async def test_at_two_seats_a_vanished_host_is_waited_for_then_lost(tmp_path: Path) -> None:
    """No majority can depose at two seats: the peer waits a second grace period, then ends
    for itself (its transcript incomplete, nobody ranked)."""
    async def kill_host(table: Any) -> None:
        await wait_for(lambda: mid_hand(table, 30))
        table.scopes[0].cancel()

    table = await play(tmp_path, 2, watch=kill_host, listen=True)
    err = table.errors.get(1)
    assert isinstance(err, HostLost) and "the host is gone" in str(err)
    assert table.peers[1].host is None and table.peers[1].votes_sent == []
    got = transcripts(tmp_path, [1])[1]
    assert "host_change" not in [r["env"]["body"]["type"] for r in got]
    assert check_records(got).code == "INCOMPLETE"


async def test_a_crashed_peer_restarts_from_its_transcript(tmp_path: Path) -> None:
    restarted: dict[str, Any] = {}

    async def crash_and_restart(table: Any) -> None:
        await wait_for(lambda: mid_hand(table, 30))
        table.scopes[1].cancel()  # the process dies: only its transcript file survives
        await wait_for(lambda: table.peers[1].me.writer is None, 5)
        restarted["at"] = len(read_transcript(tmp_path / "t1.bin"))
        peer = Peer(
            KEYS[1],
            ("127.0.0.1", table.host.port),
            bot_agent(HeuristicBot(1)),
            PeerConfig(name="p1", seed=seed(1), transcript=tmp_path / "t1.bin", restore=True),
        )
        restarted["peer"] = peer
        restarted["result"] = await peer.run()

    table = await play(
        tmp_path,
        2,
        watch=crash_and_restart,
        timers=Timers(turn_ms=5_000, declare_ms=30, grace_ms=5_000),
    )
    assert not table.errors
    peer = restarted["peer"]
    assert peer.seat == 1 and peer.resumes == 1
    got = transcripts(tmp_path, [0, 1])
    assert got[0] == got[1]
    assert len(got[0]) > restarted["at"] > 20
    bodies = [r["env"]["body"]["type"] for r in got[0]]
    assert "left" not in bodies and "timeout" not in bodies
    assert same_result(restarted["result"], verify(got[0]))


async def test_a_resume_replaces_a_stale_connection_at_once(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def resume_beside_the_old_connection(table: Any) -> None:
        await wait_for(lambda: mid_hand(table, 30))
        host = table.host
        old = host.conns[1]
        # seat 1 comes back on a new connection while the host still holds its old one (a
        # laptop that slept): the resume is taken at once, the old connection closed
        stream = await open_framed("127.0.0.1", host.port, hs.MAX_FRAME)
        seat, last = await hs.rejoin(stream, KEYS[1], len(table.peers[1].me.records) - 1)
        seen["seat"], seen["last"] = seat, last
        seen["replaced"] = host.conns[1] is not old and old.closing
        seen["grace"] = host.hosting.watch.drops.is_dropped(1)
        await trio.aclose_forcefully(stream)  # now this one drops; the real peer resumes

    table = await play(tmp_path, 3, watch=resume_beside_the_old_connection,
                       timers=Timers(turn_ms=5_000, declare_ms=30, grace_ms=5_000))
    assert not table.errors
    assert seen["seat"] == 1 and seen["replaced"] and not seen["grace"]
    assert table.peers[1].resumes >= 1
    got = transcripts(tmp_path, range(3))
    assert got[0] == got[1] == got[2]
    bodies = [r["env"]["body"]["type"] for r in got[0]]
    assert "left" not in bodies and "timeout" not in bodies
    assert same_result(table.results[2], verify(got[0]))
    # the others were told of seat 1's drop and return by status frames
    for me in (table.host.me, table.peers[2].me):
        told = [(p.seat, p.state) for p in me.presence]
        assert (1, "dropped") in told and (1, "back") in told
        drop = next(p for p in me.presence if p.state == "dropped")
        assert 0 < drop.grace_ms <= 5_000


async def test_a_hello_with_a_seated_key_is_told_to_resume(tmp_path: Path) -> None:
    refusal: dict[str, Any] = {}

    async def hello_again(table: Any) -> None:
        await wait_for(lambda: mid_hand(table, 10))
        stream = await open_framed("127.0.0.1", table.host.port, hs.MAX_FRAME)
        try:
            await hs.join(stream, KEYS[1], "again", None)
        except hs.RemoteError as exc:
            refusal["error"] = exc
        await trio.aclose_forcefully(stream)

    table = await play(tmp_path, 2, watch=hello_again)
    assert not table.errors
    err = refusal["error"]
    assert (err.code, err.detail) == ("UNKNOWN_KEY", SEATED_KEY)
    got = transcripts(tmp_path, range(2))
    assert got[0] == got[1]  # the seat itself played on undisturbed


async def test_a_killed_host_comes_back_as_a_seat_of_the_new_host(tmp_path: Path) -> None:
    back: dict[str, Any] = {}

    async def kill_host_then_restart_it(table: Any) -> None:
        await wait_for(lambda: mid_hand(table, 30))
        back["killed"] = len(table.host.records)
        table.scopes[0].cancel()  # the host's process dies: only its transcript survives
        await wait_for(lambda: table.host.me.writer is None, 5)
        peer = Peer(
            KEYS[0],
            ("127.0.0.1", 1),  # its own old address: unused, it resumes with the next host
            bot_agent(HeuristicBot(0)),
            PeerConfig(name="p0", seed=seed(0), transcript=tmp_path / "t0.bin", restore=True),
        )
        back["peer"] = peer
        back["result"] = await peer.run()

    table = await play(tmp_path, 3, watch=kill_host_then_restart_it, listen=True,
                       timers=Timers(turn_ms=30_000, declare_ms=30, grace_ms=3_000), limit=120)
    assert not table.errors
    peer = back["peer"]
    assert peer.seat == 0 and peer.resumes == 1 and peer.host is None
    got = transcripts(tmp_path, [0, 1, 2])
    assert got[0] == got[1] == got[2]  # the old host's new transcript is the new host's chain
    bodies = [r["env"]["body"] for r in got[1]]
    change = [b["type"] for b in bodies].index("host_change")
    assert (bodies[change]["old"], bodies[change]["new"]) == (0, 1)
    assert "left" not in [b["type"] for b in bodies]
    assert any(r["env"]["seat"] == 0 for r in got[1][change + 1 :])  # it played on as a seat
    audit = verify(got[1])
    assert back["result"] == table.results[1] == table.results[2]
    assert same_result(table.results[1], audit)
    assert (tmp_path / "t0.bin.crashed").exists()


async def test_a_listen_address_in_use_is_told_and_the_seat_plays_on(tmp_path: Path) -> None:
    busy = trio.socket.socket()
    await busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]

    class Busy(Peer):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.config.listen = ("127.0.0.1", port)
            self.config.listen_optional = True

    try:
        table = await play(tmp_path, 2, peer_cls={1: Busy})
    finally:
        busy.close()
    assert not table.errors
    peer = table.peers[1]
    assert peer.listeners is None
    assert peer.listen_problem is not None
    assert peer.listen_problem.startswith(f"cannot listen on 127.0.0.1:{port}: ")
    got = transcripts(tmp_path, range(2))
    assert got[0] == got[1]
    assert got[0][0]["env"]["body"]["players"][1]["listen"] is None  # not a candidate host


class Blind(Peer):
    """A seat that reaches no other seat over a link (its probes all fail)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.driver.probe_s = 0.0


class DeafToSeat3(Hosting):
    """A host that hears nothing of seat 3 from its first coin message on: neither its own
    envelopes nor those other seats pass on."""

    cut = False

    def frame(self, seat: int, msg: dict[str, Any], now: int) -> None:
        env = msg.get("env") if msg.get("k") in ("env", "pass") else None
        if isinstance(env, dict) and env.get("seat") == 3:
            body = env.get("body")
            self.cut = self.cut or (isinstance(body, dict) and body.get("type") == "coin_commit")
            if self.cut:
                return
        super().frame(seat, msg, now)


class Deaf(Host):
    hosting_cls = DeafToSeat3


class DeafLost(Deaf):
    """``Deaf``, keeping the HostLost its run ends with once it is deposed and no seat takes
    it back (the table plays on without it)."""

    lost: HostLost | None = None

    async def run(self, task_status: Any = trio.TASK_STATUS_IGNORED) -> Any:
        try:
            return await super().run(task_status=task_status)
        except HostLost as exc:
            self.lost = exc
            return None


async def test_a_split_vote_deposes_a_host_that_leaves_a_timeout_vote_unserved(
        tmp_path: Path) -> None:
    """Four seats; the host hears nothing of seat 3 from its coin on (its envelopes, and those
    passed on for it). Seat 2 (which cannot probe seat 3) votes ``timeout``; seat 1 probes
    seat 3, is shown the envelope and passes it on, so it holds evidence, as seat 3 does: both
    vote ``depose`` (``censored``). Neither vote alone makes a quorum, but seat 2's ``timeout``
    vote stands unserved for ``censor_ms + grace_ms``: the host is late with a verdict it would
    owe if a quorum had voted (``host-late``, 7.5), so seat 2 deposes it too, and the three
    take seat 1 over. The deaf host does not resume within ``grace_ms`` and is voted ``left``;
    the others finish the match, seat 3 never timed out, and the old host's run ends with
    HostLost once no seat answers as its host (it does not hang on)."""
    timers = Timers(turn_ms=1_000, declare_ms=30, grace_ms=500)
    table = await play(
        tmp_path, 4, host_cls=DeafLost, peer_cls={2: Blind}, listen=True,
        timers=timers, peer_options={"censor_ms": 1_000},
        host_options={"censor_ms": 1_000,  # (its failover runs out sooner: a shorter test)
                      "constants": {"silence_ms": 5_000, "probe_ms": 1_000}},
        limit=60,
    )
    assert not table.errors, table.errors
    assert isinstance(table.host, DeafLost) and table.host.lost is not None
    got = transcripts(tmp_path, [1, 2, 3])
    assert got[1] == got[2] == got[3]
    records = got[1]
    bodies = [r["env"]["body"] for r in records]
    changes = [b for b in bodies if b["type"] == "host_change"]
    assert len(changes) == 1 and {v["seat"] for v in changes[0]["votes"]} == {1, 2, 3}
    assert not any(b["type"] == "timeout" for b in bodies)  # seat 3 was never blamed
    assert not any(b["type"] == "no_contest" for b in bodies)
    for k in (1, 3):  # evidence: censored
        assert ("depose", 0) in table.peers[k].votes_sent
        assert ("timeout", 3) not in table.peers[k].votes_sent
    assert ("timeout", 3) in table.peers[2].votes_sent  # its vote unserved: host-late
    assert ("depose", 0) in table.peers[2].votes_sent
    audit = verify(records)
    assert audit.summary.winner is not None and audit.summary.winner != 0
    for k in (1, 2, 3):
        assert table.results[k]["standings"][-1] == 0


class StallingHosting(Hosting):
    """A host that, from seat 1's first move in play, drops seat 1's envelopes and neither
    times it out nor ends the match (no vote of its own, no no contest)."""

    holding_seat_1 = False

    def frame(self, seat: int, msg: dict[str, Any], now: int) -> None:
        body = msg.get("env", {}).get("body") if isinstance(msg.get("env"), dict) else None
        if seat == 1 and isinstance(body, dict) and body.get("type") == "move" and \
                self.own is not None and self.own.session.state.phase is Phase.PLAY:
            self.holding_seat_1 = True
        if seat == 1 and self.holding_seat_1 and msg.get("k") == "env":
            return
        super().frame(seat, msg, now)


class QuietWatch(HostWatch):
    def _absent(self, kind: str, seat: int) -> None:
        pass

    def _abandon(self, now: int) -> None:
        pass


StallingHosting.watch_cls = QuietWatch


class Stall(Host):
    hosting_cls = StallingHosting

    @property
    def holding(self) -> bool:
        return self.hosting.holding_seat_1  # type: ignore[attr-defined]


async def test_at_two_seats_a_host_that_stalls_the_match_is_left_after_an_abandon_vote(
    tmp_path: Path,
) -> None:
    """Two seats; the host holds seat 1's move and does nothing more. Seat 1 cannot depose it
    (no majority): after ``stuck_ms`` without a record it votes ``abandon``, and ``grace_ms``
    later, with no end of the match, it ends for itself (HostLost): nobody is ranked, and its
    transcript holds no loss."""

    async def stop_the_host(table: Any) -> None:
        await wait_for(lambda: 1 in table.errors, 30)
        table.scopes[0].cancel()

    timers = Timers(turn_ms=1_000, declare_ms=30, grace_ms=500)
    table = await play(tmp_path, 2, host_cls=Stall, timers=timers, watch=stop_the_host,
                       peer_options={"censor_ms": 1_000,  # (stuck_ms 8 s, not 22 s)
                                     "constants": {"silence_ms": 5_000, "probe_ms": 1_000}},
                       limit=60)
    assert isinstance(table.errors[1], HostLost) and "stuck" in str(table.errors[1])
    assert table.host.holding and ("abandon", None) in table.peers[1].votes_sent
    records = transcripts(tmp_path, [1])[1]
    assert not {"timeout", "left", "no_contest"} & {r["env"]["body"]["type"] for r in records}
    assert check_records(records).code == "INCOMPLETE"


async def test_the_host_and_the_next_host_lost_together_the_seat_after_them_hosts(
    tmp_path: Path,
) -> None:
    """Seats 0 (the host) and 1 (the next host) die at once at five seats: the others try seat
    1 for a grace, then seat 2 (the next candidate) hosts with the depose votes of seats 2, 3
    and 4, the two lost seats are voted out, and the three finish the match."""

    killed = []

    async def kill_host_and_next(table: Any) -> None:
        await wait_for(lambda: mid_hand(table, 40))
        killed.append(len(table.host.records))
        table.scopes[0].cancel()
        table.scopes[1].cancel()

    table = await play(tmp_path, 5, watch=kill_host_and_next, listen=True,
                       timers=Timers(turn_ms=30_000, declare_ms=30, grace_ms=1_000), limit=180)
    assert not table.errors
    assert table.peers[2].host is not None and table.peers[1].host is None
    got = transcripts(tmp_path, [2, 3, 4])
    assert got[2] == got[3] == got[4]
    bodies = [r["env"]["body"] for r in got[2]]
    change = [b["type"] for b in bodies].index("host_change")
    assert (bodies[change]["old"], bodies[change]["new"]) == (0, 2)
    assert [v["seat"] for v in bodies[change]["votes"]] == [2, 3, 4]  # its own vote first
    first_play = next(i for i, b in enumerate(bodies) if b.get("move") == "play")
    assert first_play < change <= killed[0]  # mid-hand
    # the old hosts stay seats after the change: the new host gives them their grace to
    # resume, and only then (they never came back) records them as left
    away = [(p.seat, p.state) for p in table.peers[2].host.me.presence]
    assert (0, "dropped") in away and (1, "dropped") in away
    lefts = [b["seat"] for b in bodies[change + 1 :] if b["type"] == "left"]
    assert sorted(lefts) == [0, 1]
    assert {r["h"] for r in got[2][change:]} == {2}
    assert {r["h"] for r in got[2][:change]} == {0}
    # what the others hold from the old host is its own history (it may have sequenced more
    # that never reached anyone before it died)
    assert got[2][:change] == transcripts(tmp_path, [0])[0][:change]
    audit = verify(got[2])
    assert table.results[2] == table.results[3] == table.results[4]
    assert same_result(table.results[2], audit)


async def test_a_seat_restarted_after_the_match_ended_reads_the_result_from_its_transcript(
    tmp_path: Path,
) -> None:
    """Killed after the last record (before it exited), a seat started again with the same
    command finds the match over in its transcript: the result, with no host to reach (the
    host, told ``done`` by everyone, is gone); so does the old host."""
    table = await play(tmp_path, 2)
    assert not table.errors
    assert table.host.confirmed == {1: len(table.host.records) - 1}  # seat 1 said done
    for seat in (0, 1):
        before = (tmp_path / f"t{seat}.bin").read_bytes()
        peer = Peer(KEYS[seat], ("127.0.0.1", 1), bot_agent(HeuristicBot(seat)),
                    PeerConfig(name=f"p{seat}", seed=seed(seat),
                               transcript=tmp_path / f"t{seat}.bin", restore=True))
        with trio.fail_after(30):
            assert await peer.run() == table.results[1]
        assert peer.resumes == 0 and (tmp_path / f"t{seat}.bin").read_bytes() == before


class IgnoresItsOwnTimeoutWatch(HostWatch):
    """A rogue host: it never sequences the ``timeout`` votes of the others about its own seat
    (an honest host must, PROTOCOL.md 7.5)."""

    def _count(self) -> None:
        self.tally.drop("timeout", self.me)
        super()._count()


class IgnoresItsOwnTimeoutHosting(Hosting):
    watch_cls = IgnoresItsOwnTimeoutWatch


class IgnoresItsOwnTimeout(Host):
    hosting_cls = IgnoresItsOwnTimeoutHosting


async def test_a_host_that_ignores_the_votes_timing_it_out_is_deposed_not_abandoned(
    tmp_path: Path,
) -> None:
    """Three seats; the host's own seat never plays once the hand is in play and the host does
    not sequence the others' ``timeout`` votes about its seat. ``grace_ms`` after they could
    be a quorum the seats depose it, the next seat hosts, the old host is recorded as left and
    the other two finish the match: no ``no_contest`` (else they would wait ``stuck_ms`` and
    their abandon votes, with the host's, would end the match as no contest, which a losing
    host could so force)."""
    bot = bot_agent(HeuristicBot(0))

    async def stalling(state: Any, seat: int, view: Any) -> Any:
        if state.phase is Phase.PLAY:
            await trio.sleep_forever()
        return await bot(state, seat, view)

    async def stop_the_old_host(table: Any) -> None:
        await wait_for(lambda: {1, 2} <= set(table.results) | set(table.errors), 50)
        table.scopes[0].cancel()

    timers = Timers(turn_ms=1_000, declare_ms=30, grace_ms=500)
    table = await play(tmp_path, 3, host_cls=IgnoresItsOwnTimeout, agents={0: stalling},
                       listen=True, timers=timers, watch=stop_the_old_host, limit=60)
    assert not table.errors, table.errors
    got = transcripts(tmp_path, [1, 2])
    assert got[1] == got[2]
    bodies = [r["env"]["body"] for r in got[1]]
    kinds = [b["type"] for b in bodies]
    assert "host_change" in kinds and "no_contest" not in kinds
    assert [b["seat"] for b in bodies if b["type"] == "left"] == [0]
    assert all(b.get("seat") != 0 for b in bodies if b["type"] == "timeout")
    audit = verify(got[1])
    assert not audit.summary.no_contest
    assert table.results[1] == table.results[2] and same_result(table.results[1], audit)


async def test_a_resume_to_a_new_hosts_address_refuses_an_impostor_listening_there(
    tmp_path: Path,
) -> None:
    """No relay known: the resume goes to the new host's plain address. Whoever answers there
    with another key than that seat's is refused at its challenge (the signed resume is never
    sent to it) and the resume tries again until its grace runs out, as for any failed resume
    (the failover then tries the next candidate)."""
    import os

    from dernier_p2p.net.framing import serve_framed

    table = await play(tmp_path, 2, listen=True)
    assert not table.errors
    peer = table.peers[1]
    assert peer.me is not None and peer.config.relay is None
    heard: list[str] = []
    connections = 0

    async def impostor(stream: Any) -> None:
        nonlocal connections
        connections += 1
        summary = dict(table.host.summary(), key=KEYS[7].public_bytes())
        await hs.send_message(stream, hs.challenge_message(os.urandom(32), summary))
        try:
            while True:
                heard.append((await hs.receive_message(stream))["k"])
        except Exception:
            pass

    failed: list[tuple[int, str]] = []
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(partial(
                serve_framed, impostor, 0, host="127.0.0.1", max_frame=hs.MAX_FRAME))
            where = ("127.0.0.1", listeners[0].socket.getsockname()[1])
            session = peer.me.session  # seat 0's key is expected there
            dialer = new_host_dialer(where, None, session.game, session.keys[0])
            peer.driver.routes = Routes(lambda seat: (dialer, dialer.check_host))
            peer.driver._tx, rx = trio.open_memory_channel(10)
            for _ in range(2):  # the node dials again after a failed resume
                await peer.driver._dial(0, len(peer.me.records) - 1)
                event = rx.receive_nowait()

                class Node:
                    def dial_failed(self, host: int, now: int, code: str = "",
                                    detail: str = "") -> None:
                        failed.append((host, code))

                event(Node(), 0)
            nursery.cancel_scope.cancel()
    assert connections == 2 and [c for _, c in failed] == ["WRONG_HOST"] * 2
    assert heard == []  # the impostor never got this seat's signed resume


async def test_a_host_slow_on_its_own_turn_is_timed_out_like_any_seat(tmp_path: Path) -> None:
    """Three seats, variant ``standard`` (a time-out draws and passes). The host's own seat
    thinks longer than ``turn_ms`` once: the other two vote ``timeout`` about it and the host
    sequences that timeout with their votes; the match goes on with the same host (no
    deposition, no ``left``) and ends the same for every seat and for the audit."""
    bot = bot_agent(HeuristicBot(0))
    slow = []

    async def slow_once(state: Any, seat: int, view: Any) -> Any:
        if state.phase is Phase.PLAY and to_act(state) == seat and not slow:
            slow.append(state)
            await trio.sleep(2.5)  # past turn_ms + grace_ms: the seats' clocks run out
        return await bot(state, seat, view)

    timers = Timers(turn_ms=1_000, declare_ms=30, grace_ms=1_000)
    table = await play(tmp_path, 3, agents={0: slow_once}, listen=True, timers=timers,
                       host_options={"variant": "standard"}, limit=60)
    assert not table.errors, table.errors
    assert slow
    got = transcripts(tmp_path, [0, 1, 2])
    assert got[0] == got[1] == got[2]
    bodies = [r["env"]["body"] for r in got[0]]
    kinds = [b["type"] for b in bodies]
    assert not {"host_change", "left", "no_contest"} & set(kinds), kinds
    own = [b for b in bodies if b["type"] == "timeout" and b["seat"] == 0]
    assert own and all(sorted(v["seat"] for v in b["votes"]) == [1, 2] for b in own)
    assert {r["h"] for r in got[0]} == {0}
    audit = verify(got[0])
    assert audit.ok and not audit.summary.no_contest
    assert table.results[0] == table.results[1] == table.results[2]
    assert same_result(table.results[1], audit)


class CrashesOwingNode(PeerNode):
    """Seat 1: past record 30, the moment a record obliges it to a deck message, its process
    and the host's die together, the message unsent (its transcript holds the record)."""

    harness: Any = None  # the test's Table
    owed: list[dict[str, Any]] = []
    dead = False

    def send_own(self, env: dict[str, Any], now: int) -> None:
        deck = env["body"]["type"] not in ("move", "ack", "chat", "accept")
        if not self.dead and deck and self.own is not None and len(self.own.records) > 30 \
                and not type(self).owed:
            type(self).owed = [env["body"]]
            self.dead = True
            self.harness.scopes[0].cancel()
            self.harness.scopes[1].cancel()
        if self.dead:
            return
        super().send_own(env, now)

    def take(self) -> list[Any]:
        out = super().take()
        return [] if self.dead else out


class CrashesOwing(Peer):
    node_cls = CrashesOwingNode


async def test_a_restarted_next_host_that_takes_over_sends_the_deck_message_it_owed(
    tmp_path: Path,
) -> None:
    """Seat 1, the next host, and the host die together while seat 1 owes a deck message;
    seat 1 restarts from its transcript and takes over: it signs the owed message again after
    its host change (without it the match waits on the new host's own seat for good)."""
    back: dict[str, Any] = {}

    async def restart_seat_1(table: Any) -> None:
        CrashesOwingNode.harness = table
        CrashesOwingNode.owed = []
        await wait_for(lambda: CrashesOwingNode.owed != [])
        old = table.peers[1]
        await wait_for(lambda: old.me.writer is None, 5)
        listen = old.me.session.table_body["players"][1]["listen"]
        peer = Peer(
            KEYS[1],
            ("127.0.0.1", table.host.port),
            bot_agent(HeuristicBot(1)),
            PeerConfig(name="p1", seed=seed(1), transcript=tmp_path / "t1.bin", restore=True,
                       listen=(listen[0], listen[1])),
        )
        back["peer"] = peer
        back["result"] = await peer.run()

    table = await play(tmp_path, 3, peer_cls={1: CrashesOwing}, watch=restart_seat_1,
                       listen=True, timers=Timers(turn_ms=30_000, declare_ms=30, grace_ms=3_000),
                       limit=120)
    assert not table.errors
    peer = back["peer"]
    assert peer.host is not None  # the restarted seat took over
    got = transcripts(tmp_path, [1, 2])
    assert got[1] == got[2]
    bodies = [r["env"]["body"] for r in got[1]]
    change = [b["type"] for b in bodies].index("host_change")
    after = [r["env"]["body"] for r in got[1][change + 1 :] if r["env"]["seat"] == 1]
    assert all(body in after for body in CrashesOwingNode.owed)  # signed again after the change
    assert back["result"] == table.results[2] and same_result(back["result"], verify(got[1]))


class WithholdsInStepsHosting(Hosting):
    """Mid-hand, just after a move of seat 1 (the others act next, so the match goes on
    without it), stops relaying to seat 1, and three records later to seat 2 too: seats 1, 2
    and 3 then hold three different heads, seat 3's the newest."""

    cut: int | None = None

    def relay_to(self, seat: int, rec: dict[str, Any]) -> dict[str, Any] | None:
        if self.cut is None and self.own is not None and rec["i"] > 30 \
                and rec["env"]["seat"] == 1 and rec["env"]["body"]["type"] == "move":
            if self.own.session.state.phase is Phase.PLAY:
                self.cut = rec["i"] + 1
        if self.cut is not None and rec["i"] >= self.cut + (0 if seat == 1 else 3) \
                and seat in (1, 2):
            return None
        return rec


class WithholdsInSteps(Host):
    hosting_cls = WithholdsInStepsHosting

    @property
    def cut(self) -> int | None:
        return self.hosting.cut  # type: ignore[attr-defined]


async def test_a_next_host_restarted_behind_two_seats_takes_over_with_their_votes(
    tmp_path: Path,
) -> None:
    """Four seats: the host and seat 1, the next host, die together while seat 1 lacks records
    that seats 2 and 3 hold (and seat 2 lacks some of seat 3's). Seat 1 restarts from its
    transcript a second later and, still waiting for the host, takes the depose votes the
    other two send it over links: it takes over at once instead of after its own grace, takes
    the records it lacks from both at once (each relayed only to the seat that lacks it) and
    sequences the host change with the votes of seats 1, 2 and 3; the three finish."""
    seen: dict[int, int] = {}
    back: dict[str, Any] = {}

    async def kill_host_and_next(table: Any) -> None:
        await wait_for(lambda: all(s in table.peers and table.peers[s].me is not None
                                   for s in (1, 2, 3)))
        await wait_for(lambda: table.host.cut is not None)
        await wait_for(lambda: len(table.peers[3].me.records) > table.host.cut + 5)
        seen.update({s: len(table.peers[s].me.records) for s in (1, 2, 3)})
        table.scopes[0].cancel()
        table.scopes[1].cancel()
        old = table.peers[1]
        await wait_for(lambda: old.me.writer is None, 5)
        await trio.sleep(1.0)
        listen = old.me.session.table_body["players"][1]["listen"]
        peer = Peer(KEYS[1], ("127.0.0.1", table.host.port), bot_agent(HeuristicBot(1)),
                    PeerConfig(name="p1", seed=seed(1), transcript=tmp_path / "t1.bin",
                               restore=True, listen=(listen[0], listen[1]), linger_s=0.5))
        back["peer"] = peer
        try:
            back["result"] = await peer.run()
        except Exception as exc:  # judged below
            back["error"] = exc

    table = await play(tmp_path, 4, host_cls=WithholdsInSteps, watch=kill_host_and_next,
                       listen=True, timers=Timers(turn_ms=30_000, declare_ms=30, grace_ms=2_000),
                       limit=120)
    assert seen[1] < seen[2] < seen[3]  # three heads, the next host's the oldest
    assert not table.errors and "error" not in back, (table.errors, back.get("error"))
    assert back["peer"].host is not None  # the restarted next host hosted the rest
    # seat 2 sent again, on resuming, its envelopes that seat 3 forwarded meanwhile: dropped,
    # not refused as reused counters (an error frame each, its connection closed at five)
    assert not [f for f in back["peer"].host.faults if f[1] == "DUPLICATE"]
    got = transcripts(tmp_path, [1, 2, 3])
    assert got[1] == got[2] == got[3]
    bodies = [r["env"]["body"] for r in got[1]]
    change = [b["type"] for b in bodies].index("host_change")
    assert (bodies[change]["old"], bodies[change]["new"]) == (0, 1)
    assert [v["seat"] for v in bodies[change]["votes"]] == [1, 2, 3]
    assert change >= seen[3]  # nothing seat 3 held was lost
    assert [b["seat"] for b in bodies[change + 1 :] if b["type"] == "left"] == [0]
    audit = verify(got[1])
    assert back["result"] == table.results[2] == table.results[3]
    assert same_result(back["result"], audit)


async def test_a_record_0_that_seats_another_key_at_the_joiners_seat_is_a_refusal() -> None:
    """A hostile host welcomes the joiner at seat 1, then sends a validly signed record 0 whose
    seat 1 is another key (the joiner's key elsewhere, or nowhere): the joiner stops with
    TABLE_MISMATCH naming the host, not an unexpected error."""
    import pytest

    from dernier_p2p.net.framing import serve_framed
    from dernier_p2p.protocol.errors import ProtocolError
    from dernier_p2p.protocol.local import LocalTable, identity_for

    for where in ("elsewhere", "nowhere"):
        t = LocalTable("dernier", [bytes([50 + k]) * 32 for k in range(3)])
        me = t.identities[2] if where == "elsewhere" else identity_for(bytes([59]) * 32)
        assert (me.public_bytes() in t.sessions[0].keys) is (where == "elsewhere")

        async def fake_host(stream: Any, t: LocalTable = t) -> None:
            nonce = bytes(hs.NONCE_SIZE)
            summary = {"name": "t", "variant": "dernier", "players": 3, "taken": 1}
            await hs.send_message(stream, hs.challenge_message(nonce, summary))
            await hs.receive_message(stream)  # the hello
            await hs.send_message(stream, {"k": "welcome", "seat": 1})
            await hs.send_message(stream, {"k": "rec", "rec": t.records[0]})
            with trio.move_on_after(5):
                await hs.receive_message(stream)

        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(partial(serve_framed, fake_host,
                                                    max_frame=hs.MAX_FRAME, host="127.0.0.1"))
            port = listeners[0].socket.getsockname()[1]
            peer = Peer(me, ("127.0.0.1", port), bot_agent(HeuristicBot(1)),
                        PeerConfig(name="joiner", seed=seed(7)))
            with trio.fail_after(20), pytest.raises(ProtocolError) as info:
                await peer.run()
            nursery.cancel_scope.cancel()
        assert (info.value.code, info.value.seat) == ("TABLE_MISMATCH", 0), where
