"""One live scenario on loopback: a scripted host and scripted seats of this project (its
host and seat code, real sockets and real cryptography), the client under test as a process,
the faults of the scenario injected on cue, and the events the client causes.

The scripted host is :class:`~dernier_p2p.net.host.Host` with
:class:`~interop.drive.hosting.DriveHosting`, which notes every frame of the client and carries
out the host's faults; the scripted seats are :class:`~dernier_p2p.net.peer.Peer` with their
link servers tapped (:mod:`interop.drive.taps`). What the events must show is judged by
:mod:`interop.drive.verdict`.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net import handshake as hs
from dernier_p2p.net.agent import bot_agent
from dernier_p2p.net.framing import FramedStream, PeerClosed, serve_framed
from dernier_p2p.net.host import Host, HostConfig
from dernier_p2p.net.invite import Invite, Route, fingerprint
from dernier_p2p.net.peer import Peer, PeerConfig
from dernier_p2p.net.timers import Timers
from dernier_p2p.protocol.envelope import record_hash
from dernier_p2p.wire.identity import IdentityKey
from interop.drive.events import Event, Events
from interop.drive.hosting import HOST_FAULTS, DriveHosting
from interop.drive.model import Fault, Scenario
from interop.drive.taps import bad_link, probe_client, tap_errors, tap_links

__all__ = ["HOST_FAULTS", "STAGE_FAULTS", "Event", "Stage", "fill"]

STAGE_FAULTS = frozenset({"kill", "resign", "probe", "bad-link", "silent"})
JOIN_S = 30.0
"""How long the client may take to start and join the table."""


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


class Stage:
    """One run of a scenario against the client command ``command``, in ``workdir`` (the
    client runs there: relative entries of ``PYTHONPATH`` are made absolute, and ``path`` goes
    first)."""

    def __init__(self, scenario: Scenario, command: str, workdir: Path,
                 path: tuple[str, ...] = ()) -> None:
        self.sc = scenario
        self.command = command
        self.path = path  # put before the client's PYTHONPATH (its entries made absolute)
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

    # ------------------------------------------------------------------ the table
    def _hosting_cls(self) -> type[DriveHosting]:
        return type("ScenarioHosting", (DriveHosting,), {"stage": self})


    def _host(self) -> Host:
        sc = self.sc
        config = HostConfig(
            players=len(self.roles), variant=sc.variant, options={"match": ["hands", sc.hands]},
            timers=Timers(turn_ms=sc.turn_ms, declare_ms=sc.declare_ms, grace_ms=sc.grace_ms),
            name="Host", table_name=f"drive {sc.name}", bind="127.0.0.1", linger_s=0.5)
        agent = bot_agent(HeuristicBot(0)) if sc.host == "bot" else None
        host_cls = type("ScenarioHost", (Host,), {"hosting_cls": self._hosting_cls()})
        host = host_cls(self.keys["host"], config, agent)
        tap_errors(host, self.events, self.client)
        return host

    def _peer(self, role: str, port: int) -> Peer:
        seat = self.sc.others.get(role)
        agent_kind = "bot" if seat is None else seat.agent
        listen = seat is None or seat.listen
        agent = None if agent_kind == "idle" else bot_agent(HeuristicBot(self.seat_of(role) or 0))
        peer = Peer(self.keys[role], ("127.0.0.1", port), agent,
                    PeerConfig(name=role.capitalize(),
                               listen=("127.0.0.1", 0) if listen else None, linger_s=0.5))
        tap_links(role, peer, self.events, self.client, deaf=agent_kind == "deaf")
        return peer


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
        path = [*self.path, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in path if p)
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
        elif fault.what == "bad-link" and host is not None and host.me is not None:
            await bad_link(self.keys["host"], host.me.session, self.client_listen, self.events)

    async def _probe(self) -> None:
        """The host's seat probes the client over a link of its own."""
        if self.host is not None and self.host.me is not None:
            await probe_client(self.keys["host"], self.host.me.session, self.client_listen,
                               self.client, self.events)

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

