"""One live scenario on loopback: a scripted host and scripted seats of this project (its
sans-IO host and seat nodes, real sockets and real cryptography), the client under test as a
process, the faults of the scenario injected on cue, and the events the client causes.

The scripted host is :class:`~dernier_p2p.net.host.Host` with :class:`DriveHosting`, which
notes every frame of the client and carries out the host's faults; the scripted seats are
:class:`~dernier_p2p.net.peer.Peer` with their link servers tapped (each probe they answer,
each vote and record that comes over their links is noted). What the events must show is
judged by :mod:`interop.drive.verdict`.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net import handshake as hs
from dernier_p2p.net import links
from dernier_p2p.net.agent import bot_agent
from dernier_p2p.net.framing import FramedStream, PeerClosed, open_framed, serve_framed
from dernier_p2p.net.host import Host, HostConfig
from dernier_p2p.net.invite import Invite, Route, fingerprint
from dernier_p2p.net.peer import Peer, PeerConfig
from dernier_p2p.net.timers import Timers
from dernier_p2p.protocol.envelope import make_record, record_hash, sign_envelope
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.node import effects as fx
from dernier_p2p.protocol.node.hosting import Hosting
from dernier_p2p.protocol.ready import check_ready_frame
from dernier_p2p.protocol.votes import check_vote_frame, vote_ok
from dernier_p2p.rules import Phase
from dernier_p2p.wire.identity import IdentityKey
from interop.drive.model import Fault, Scenario

HOST_FAULTS = frozenset({"withhold-votes", "no-ready", "hold", "censor", "mute", "drop",
                         "chat", "forge-chat", "corrupt", "refuse-move"})
STAGE_FAULTS = frozenset({"kill", "resign", "probe", "bad-link", "silent"})
JOIN_S = 30.0
"""How long the client may take to start and join the table."""
TURN_MOVES = ("play", "draw", "pass")


@dataclass
class Event:
    """Something the client did (or that happened to it), at ``t`` (monotonic seconds)."""

    t: float
    event: str
    where: str
    data: dict[str, Any]


@dataclass
class Events:
    """The events of one run, in order; appended from the trio thread and from the worker
    threads where long records are applied (a list append is atomic)."""

    items: list[Event] = field(default_factory=list)

    def add(self, event: str, where: str, /, **data: Any) -> None:
        self.items.append(Event(time.monotonic(), event, where, data))


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (for the client's ``listen`` address)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fill(command: str, values: dict[str, str]) -> str:
    """``command`` with each ``{name}`` of ``values`` replaced (shell-quoted)."""
    for name, value in values.items():
        command = command.replace("{" + name + "}", shlex.quote(value))
    return command


class DriveHosting(Hosting):
    """The scripted host's sans-IO part: this project's host, noting the client's frames and
    carrying out the scenario's host faults. ``stage`` is set on a subclass per run."""

    stage: Stage

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.active: dict[str, Fault] = {}
        self.refused_n: set[int] = set()
        self.relayed_at: dict[int, float] = {}

    # ------------------------------------------------------------------ the client's frames
    @property
    def client(self) -> int:
        return self.stage.client

    def frame(self, seat: int, msg: dict[str, Any], now: int) -> None:
        kind = msg.get("k")
        if seat == self.client:
            self.stage.note_frame(self, msg)
            if kind == "vote" and "withhold-votes" in self.active:
                return
            if kind == "env" and self._refuse(seat, msg, now):
                return
        if kind == "ready" and "no-ready" in self.active:
            return
        if kind in ("env", "pass") and self._dropped(seat, msg):
            return
        super().frame(seat, msg, now)

    def _dropped(self, seat: int, msg: dict[str, Any]) -> bool:
        env = msg.get("env")
        author = env.get("seat") if isinstance(env, dict) else None
        hold, censor = self.active.get("hold"), self.active.get("censor")
        if hold is not None and msg["k"] == "env" and seat == self.stage.seat_of(hold.role):
            return True
        return censor is not None and author == self.stage.seat_of(censor.role)

    def _refuse(self, seat: int, msg: dict[str, Any], now: int) -> bool:
        env = msg.get("env")
        body = env.get("body") if isinstance(env, dict) else None
        if "refuse-move" not in self.active or not isinstance(body, dict) \
                or body.get("type") != "move":
            return False
        del self.active["refuse-move"]
        self.refused_n.add(env.get("n"))
        self.stage.events.add("refused", "host", n=env.get("n"))
        self._fault(seat, "ILLEGAL_MOVE", "refused by the scripted host: sign a move again",
                    now)
        return True

    def joined(self, seat: int, have: int | None, now: int) -> bool:
        full = super().joined(seat, have, now)
        if seat == self.client:
            if have is None:
                listen = self.players[seat].listen is not None
                self.stage.events.add("hello", "host", listen=listen)
            else:
                self.stage.events.add("resume", "host", where="host", have=have,
                                      have_ok=-1 <= have <= self.made() - 1)
        return full

    def made(self) -> int:
        """How many records this host has made (some may still be applied to its seat)."""
        return len(self.records) if self.sequencer is None else len(self.sequencer.records)

    # ------------------------------------------------------------------ what it sends
    def own_ready(self, frame: dict[str, Any]) -> None:
        if "no-ready" not in self.active:
            super().own_ready(frame)

    def _relay(self, rec: dict[str, Any]) -> None:
        self.relayed_at[rec["i"]] = time.monotonic()
        super()._relay(rec)

    def relay_to(self, seat: int, rec: dict[str, Any]) -> dict[str, Any] | None:
        mute = self.active.get("mute")
        if mute is not None and seat == self.stage.seat_of(mute.role):
            return None
        if seat == self.client and "corrupt" in self.active:
            del self.active["corrupt"]
            sig = bytearray(rec["hsig"])
            sig[0] ^= 1
            return {**rec, "hsig": bytes(sig)}
        return rec

    def _after_record(self, rec: dict[str, Any], now: int) -> None:
        super()._after_record(rec, now)
        self.stage.cue(self, rec)

    # ------------------------------------------------------------------ faults
    def fire(self, fault: Fault, now: int) -> None:
        """Carry out a host fault (in the driver's pump)."""
        if self.own is None:
            return
        session = self.own.session
        if fault.what == "drop":
            self.out.append(fx.Close(self.client, "the scripted host drops the connection",
                                     now=True))
        elif fault.what == "chat":
            self.own_env(session.sign({"type": "chat", "text": fault.arg}))
        elif fault.what == "forge-chat":
            body = {"type": "chat", "text": fault.arg}
            env = sign_envelope(self.identity, self.game, self.seat,
                                session.chain.next_counter(self.seat), session.head, body)
            forged = make_record(self.identity, env, self.seat, len(self.records),
                                 record_hash(self.records[-1]), self._t(now))
            self._relay(forged)
            self.done = True  # it sequences nothing more
        else:
            self.active[fault.what] = fault


class Stage:
    """One run of a scenario against the client command ``command``, in ``workdir``."""

    def __init__(self, scenario: Scenario, command: str, workdir: Path) -> None:
        self.sc = scenario
        self.command = command
        self.workdir = workdir
        self.events = Events()
        self.roles = scenario.seats
        self.client = self.roles.index("client")
        self.keys = {role: IdentityKey.generate(os.urandom(32))
                     for role in self.roles if role != "client"}
        self.pending: list[Fault] = []
        self.fired: set[int] = set()
        self.host: Host | None = None
        self.peers: dict[str, Peer] = {}
        self.scopes: dict[str, trio.CancelScope] = {}
        self.dead: set[str] = set()
        self.proc: subprocess.Popen[bytes] | None = None
        self.output = workdir / "client.out"
        self.client_listen = ("127.0.0.1", 0)
        self._seen: set[bytes] = set()
        self._after_change = False
        self._after_chat = False
        self._resumed_at: set[str] = set()

    # ------------------------------------------------------------------ helpers
    def seat_of(self, role: str | None) -> int | None:
        return None if role is None or role not in self.roles else self.roles.index(role)

    def cue(self, hosting: DriveHosting, rec: dict[str, Any]) -> None:
        """After each record of the scripted host: the faults whose cue now holds."""
        assert hosting.own is not None
        state = hosting.own.session.state
        playing = state is not None and state.phase is Phase.PLAY
        for k, fault in enumerate(self.sc.faults):
            if k in self.fired:
                continue
            cue = fault.cue
            if cue == "start" or (cue == "play" and playing) or (
                    cue.startswith("turn:") and playing and state is not None
                    and state.turn == self.seat_of(cue[5:])) or (
                    cue.startswith("record:") and rec["i"] >= int(cue[7:])):
                self.fired.add(k)
                self.pending.append(fault)

    def note_frame(self, hosting: DriveHosting, msg: dict[str, Any]) -> None:
        """A frame of the client at the scripted host, as an event."""
        kind = str(msg.get("k"))
        own = hosting.own
        if own is None:
            self.events.add(kind, "host")
            return
        s = own.session
        last = hosting.made() - 1
        try:
            if kind == "vote":
                vkind, target, vote = check_vote_frame(msg, s.n)
                since = s.chain.vote_since(vkind, target)
                self.events.add("vote", "host", kind=vkind, target=target,
                                sig_ok=vote["seat"] == self.client and vote_ok(
                                    vote, s.keys[self.client], s.game, vkind, target),
                                fresh=since <= vote["after"] <= last, raw=msg)
            elif kind == "ready":
                seat, at = check_ready_frame(msg, s.keys, s.game)
                self.events.add("ready", "host", sig_ok=seat == self.client, at_ok=at <= last)
            elif kind == "done":  # judged once the host holds the match's end (_watch)
                self.events.add("done", "host", last=msg.get("last"), last_ok=None)
            elif kind == "error":
                self.events.add("error", "host", code=msg.get("code"), detail=msg.get("detail"))
            elif kind == "pass":
                env = msg.get("env")
                self.events.add("pass", "host",
                                author=env.get("seat") if isinstance(env, dict) else None)
            elif kind == "env":
                self._note_env(hosting, msg.get("env"))
            else:
                self.events.add(kind, "host")
        except ProtocolError as exc:
            self.events.add(kind, "host", malformed=exc.detail)

    def _note_env(self, hosting: DriveHosting, env: Any) -> None:
        assert hosting.own is not None
        body = env.get("body") if isinstance(env, dict) else None
        if not isinstance(body, dict):
            self.events.add("env", "host", malformed="not an envelope")
            return
        state = hosting.own.session.state
        turn = (body.get("type") == "move" and body.get("move") in TURN_MOVES
                and state is not None and state.phase is Phase.PLAY
                and state.turn == self.client)
        waited = None
        if turn:
            for rec in reversed(hosting.records):
                b = rec["env"]["body"]
                if b["type"] == "move":
                    if rec["env"]["seat"] != self.client and rec["i"] in hosting.relayed_at:
                        gap = time.monotonic() - hosting.relayed_at[rec["i"]]
                        waited = gap >= 0.8 * self.sc.declare_ms / 1000
                    break
        self.events.add("env", "host", type=body.get("type"), move=body.get("move"),
                        n=env.get("n"), again=env.get("n") in hosting.refused_n, turn=turn,
                        waited=waited)

    # ------------------------------------------------------------------ the table
    def _hosting_cls(self) -> type[DriveHosting]:
        return type("ScenarioHosting", (DriveHosting,), {"stage": self})

    def _tap_errors(self, host: Host) -> None:
        """Note the client's ``error`` frames, which the host's reader takes before its
        sans-IO part sees them."""
        driver = host.driver
        read = driver._read_seat
        events, client = self.events, self.client

        async def read_seat(conn: Any, seat: int) -> None:
            if seat == client:
                receive = conn.stream.receive

                async def tapped() -> bytes:
                    payload = await receive()
                    try:
                        msg = hs.unpack(payload)
                    except hs.NetError:
                        return payload
                    if msg.get("k") == "error":
                        events.add("error", "host", code=msg.get("code"),
                                   detail=msg.get("detail"))
                    return payload

                conn.stream.receive = tapped
            await read(conn, seat)

        driver._read_seat = read_seat  # type: ignore[method-assign]

    def _host(self) -> Host:
        sc = self.sc
        config = HostConfig(
            players=len(self.roles), variant=sc.variant, options={"match": ["hands", sc.hands]},
            timers=Timers(turn_ms=sc.turn_ms, declare_ms=sc.declare_ms, grace_ms=sc.grace_ms),
            name="Host", table_name=f"drive {sc.name}", bind="127.0.0.1", linger_s=0.5)
        agent = bot_agent(HeuristicBot(0)) if sc.host == "bot" else None
        host_cls = type("ScenarioHost", (Host,), {"hosting_cls": self._hosting_cls()})
        host = host_cls(self.keys["host"], config, agent)
        self._tap_errors(host)
        return host

    def _peer(self, role: str, port: int) -> Peer:
        seat = self.sc.others.get(role)
        agent_kind = "bot" if seat is None else seat.agent
        listen = seat is None or seat.listen
        agent = None if agent_kind == "idle" else bot_agent(HeuristicBot(self.seat_of(role) or 0))
        peer = Peer(self.keys[role], ("127.0.0.1", port), agent,
                    PeerConfig(name=role.capitalize(),
                               listen=("127.0.0.1", 0) if listen else None, linger_s=0.5))
        self._tap(role, peer, deaf=agent_kind == "deaf")
        return peer

    def _tap(self, role: str, peer: Peer, deaf: bool) -> None:
        """Note what the client does over this seat's links (a deaf seat drops votes)."""
        driver = peer.driver
        made = driver.serve_links_on
        tapped: set[int] = set()
        events = self.events
        client = self.client

        def serve() -> links.LinkServer | None:
            server = made()
            if server is None or id(server) in tapped:
                return server
            tapped.add(id(server))
            on_vote, on_rec, on_present = server.on_vote, server.on_rec, server.on_present
            session = server.session

            def vote(seat: int, msg: dict[str, Any]) -> None:
                if seat == client:
                    try:
                        kind, target, v = check_vote_frame(msg, session.n)
                        ok = v["seat"] == client and vote_ok(v, session.keys[client],
                                                             session.game, kind, target)
                        events.add("urge", role, kind=kind, target=target, sig_ok=ok)
                    except ProtocolError as exc:
                        events.add("urge", role, malformed=exc.detail)
                if not deaf and on_vote is not None:
                    on_vote(seat, msg)

            def rec(seat: int, record: Any) -> None:
                if seat == client:
                    events.add("lend", role, i=record.get("i") if isinstance(record, dict)
                               else None)
                if on_rec is not None:
                    on_rec(seat, record)

            def present(seat: int) -> None:
                if seat == client:
                    events.add("probed", role)
                if on_present is not None:
                    on_present(seat)

            server.on_vote, server.on_rec, server.on_present = vote, rec, present
            return server

        driver.serve_links_on = serve  # type: ignore[method-assign]

    async def _guarded(self, role: str, run: Callable[[], Any],
                       task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        scope = trio.CancelScope()
        self.scopes[role] = scope
        task_status.started()
        with scope:
            try:
                await run()
            except Exception as exc:  # a scripted seat's end is no verdict on the client
                self.events.add("scripted-end", role, why=f"{type(exc).__name__}: {exc}")

    def _client_values(self, port: int, listen_port: int) -> dict[str, str]:
        code = Invite(fingerprint(self.keys["host"].public_bytes()),
                      (Route("direct", "127.0.0.1", port),)).encode()
        return {"addr": f"127.0.0.1:{port}", "host": "127.0.0.1", "port": str(port),
                "code": code, "listen": f"127.0.0.1:{listen_port}",
                "listen_port": str(listen_port), "dir": str(self.workdir), "name": "Client"}

    def _spawn(self, port: int) -> None:
        listen_port = free_port()
        self.client_listen = ("127.0.0.1", listen_port)
        command = fill(self.command, self._client_values(port, listen_port))
        env = dict(os.environ, PYTHONUNBUFFERED="1",
                   XDG_DATA_HOME=str(self.workdir / "data"))
        with open(self.output, "wb") as sink:
            self.proc = subprocess.Popen(
                ["/bin/sh", "-c", command], stdin=subprocess.DEVNULL, stdout=sink,
                stderr=subprocess.STDOUT, cwd=self.workdir, env=env, start_new_session=True)

    def stop_client(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def client_text(self) -> str:
        try:
            return self.output.read_text(errors="replace")
        except OSError:
            return ""

    async def _seat_table(self, nursery: trio.Nursery) -> None:
        """The scripted host, then the seats in seat order (the client in its place)."""
        host = self.host = self._host()
        await nursery.start(self._guarded, "host", host.run)
        while host.port == 0:
            await trio.sleep(0.01)
        for seat, role in enumerate(self.roles):
            if role == "host":
                continue
            if role == "client":
                self._spawn(host.port)
            else:
                peer = self.peers[role] = self._peer(role, host.port)
                await nursery.start(self._guarded, role, peer.run)
            with trio.move_on_after(JOIN_S):
                while len(host.hosting.players) <= seat:
                    await trio.sleep(0.02)
            if len(host.hosting.players) <= seat:
                who = "the client" if role == "client" else f"scripted seat {role}"
                self.events.add("join-failed", role, who=who)
                return

    async def _raw(self, nursery: trio.Nursery) -> None:
        """A bare listener whose challenge speaks another protocol version."""
        key = self.keys["host"].public_bytes()

        async def handle(stream: FramedStream) -> None:
            table = {"name": "drive", "variant": "dernier", "players": 2, "taken": 1,
                     "key": key}
            await hs.send_message(stream, {"k": "challenge", "version": self.sc.version,
                                           "nonce": os.urandom(32), "table": table})
            kind = "refused"
            with trio.move_on_after(10):
                try:
                    msg = hs.unpack(await stream.receive())
                    if msg.get("k") != "error":
                        kind = str(msg.get("k"))
                    elif msg.get("code") != "VERSION":
                        kind = f"error {msg.get('code')}"
                except (PeerClosed, trio.BrokenResourceError, hs.NetError):
                    pass
            self.events.add("opening", "host", kind=kind)

        listeners = await nursery.start(partial(serve_framed, handle, 0, max_frame=hs.MAX_FRAME,
                                                 host="127.0.0.1"))
        self._spawn(listeners[0].socket.getsockname()[1])

    # ------------------------------------------------------------------ stage faults
    async def _carry_out(self, fault: Fault) -> None:
        host = self.host
        if fault.what in HOST_FAULTS:
            if host is not None:
                host.driver.post(lambda node, now, f=fault: node.host.fire(f, now)
                                 if isinstance(node.host, DriveHosting) else None)
        elif fault.what == "kill":
            role = fault.role or "host"
            self.dead.add(role)
            self.scopes[role].cancel()
            self.events.add("killed", role)
        elif fault.what == "resign":
            peer = self.peers[fault.role or ""]
            if peer.me is not None:
                await peer.me.resign(peer.driver.send_own)
        elif fault.what == "silent" and host is not None:
            conn = host.driver.seat_conns.get(self.client)
            if conn is not None:
                conn.beat_s = None
                conn.push = lambda payload: None  # type: ignore[method-assign]
        elif fault.what == "probe":
            async with trio.open_nursery() as nursery:
                for _ in range(int(fault.arg or 1)):
                    nursery.start_soon(self._probe)
        elif fault.what == "bad-link":
            await self._bad_link()

    async def _probe(self) -> None:
        """The host's seat probes the client over a link of its own."""
        assert self.host is not None and self.host.me is not None
        session = self.host.me.session
        data: dict[str, Any] = {"ok": False, "why": "", "have_ok": False}
        with trio.move_on_after(links.PROBE_S) as scope:
            try:
                stream = await links.open_link(self.client_listen, self.keys["host"], session)
                try:
                    nonce = os.urandom(32)
                    await hs.send_message(stream, links.probe_message(nonce))
                    present = links.check_present(await hs.receive_message(stream), nonce,
                                                  session, self.client)
                    data = {"ok": True, "why": "", "have": present.have,
                            "have_ok": -1 <= present.have <= session.count - 1}
                finally:
                    await trio.aclose_forcefully(stream)
            except (*links.BROKEN, ProtocolError) as exc:
                data["why"] = f"{type(exc).__name__}: {exc}"
        if scope.cancelled_caught:
            data["why"] = f"no present within {links.PROBE_S:.0f} s"
        self.events.add("present", "host", **data)

    async def _bad_link(self) -> None:
        assert self.host is not None and self.host.me is not None
        session = self.host.me.session
        data: dict[str, Any] = {"refused": False, "code": None}
        with trio.move_on_after(links.PROBE_S):
            try:
                stream = await open_framed(*self.client_listen, hs.MAX_FRAME)
            except OSError as exc:
                self.events.add("link", "host", refused=False, code=f"no listener: {exc}")
                return
            try:
                await hs.receive_message(stream)  # the challenge
                bad = links.link_message(self.keys["host"], session.game, 0, os.urandom(32))
                await hs.send_message(stream, bad)
                await hs.send_message(stream, links.probe_message(os.urandom(32)))
                reply = await hs.receive_message(stream)
                data["code"] = f"answered {reply.get('k')}"
            except hs.RemoteError as exc:
                data = {"refused": exc.code == "BAD_SIGNATURE", "code": exc.code}
            except links.BROKEN:
                data = {"refused": True, "code": "closed"}
            finally:
                await trio.aclose_forcefully(stream)
        self.events.add("link", "host", **data)

    # ------------------------------------------------------------------ watching
    def _witness(self) -> list[dict[str, Any]]:
        """The records of the match as a living scripted party holds them."""
        if "host" not in self.dead and self.host is not None and self.host.me is not None:
            return self.host.me.records
        for role, peer in self.peers.items():
            if role not in self.dead and peer.me is not None:
                return peer.me.records
        return []

    def _watch(self) -> None:
        for rec in list(self._witness()):
            h = record_hash(rec)
            if h in self._seen:
                continue
            self._seen.add(h)
            env, body = rec["env"], rec["env"]["body"]
            self.events.add("record", "table", i=rec["i"], author=env["seat"],
                            type=body.get("type"), move=body.get("move"),
                            hand=body.get("hand"), after_change=self._after_change,
                            after_chat=self._after_chat)
            if body.get("type") == "host_change":
                self._after_change = True
            if body.get("type") == "chat" and env["seat"] != self.client:
                self._after_chat = True
        for role, peer in self.peers.items():
            node = peer.driver.node
            hosting = None if node is None else node.host
            if role not in self._resumed_at and hosting is not None \
                    and self.client in hosting.conns:
                self._resumed_at.add(role)
                self.events.add("resume", role, where=role)
        host = self.host
        if host is not None and host.me is not None and host.me.finished:
            for ev in self.events.items:
                if ev.event == "done" and ev.data["last_ok"] is None:
                    ev.data["last_ok"] = ev.data["last"] == len(host.me.records) - 1
        if self.proc is not None and self.proc.poll() is not None and not any(
                e.event == "exit" for e in self.events.items):
            code = self.proc.returncode
            self.events.add("exit", "client", code=code, nonzero=code != 0,
                            traceback="Traceback (most recent call last)" in self.client_text())

    async def play(self, done: Callable[[], bool], deadline: float) -> None:
        """Run the table until ``done()`` or ``deadline`` (monotonic seconds)."""
        async with trio.open_nursery() as nursery:
            if self.sc.host == "raw":
                await self._raw(nursery)
            else:
                nursery.start_soon(self._seat_table, nursery)
            while time.monotonic() < deadline:
                while self.pending:
                    nursery.start_soon(self._carry_out, self.pending.pop(0))
                self._watch()
                if done():
                    break
                await trio.sleep(0.05)
            nursery.cancel_scope.cancel()
