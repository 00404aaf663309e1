"""Running tables from the command line: a local table against bots, a hosted table, a join.

Every seat is a real peer speaking the protocol over TCP. :func:`play_local` hosts a table on
the loopback interface (the user's seat is the host, seat 0) and seats one bot peer per other
seat, each a :class:`~dernier_p2p.net.peer.Peer` task in this process with its own identity,
session and deck secrets. :func:`host_table` and :func:`join_table` serve the ``host`` and
``join`` commands, :func:`watch_table` the ``watch`` command (an observer without a seat). The
user's seat is played by a :class:`~.human.HumanAgent` or, with ``bot``,
by a bot of the seating's ``level`` (:mod:`dernier_p2p.bots.levels`); a
:class:`~.follow.Narrator` narrates the match.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import trio

from dernier_p2p.bots.levels import DEFAULT_LEVEL, make_bot
from dernier_p2p.cli.follow import Narrator, names_of
from dernier_p2p.cli.human import HumanAgent, LineReader, QuitGame, fit_terminal
from dernier_p2p.cli.pacing import DEFAULT_OFFER_S, Pacer, paced_bot
from dernier_p2p.cli.render import echo_fitted
from dernier_p2p.net.address import host_port
from dernier_p2p.net.agent import Agent, bot_agent
from dernier_p2p.net.handshake import UNKNOWN_KEY, RemoteError
from dernier_p2p.net.host import SEATED_KEY, Host, HostConfig
from dernier_p2p.net.peer import Peer, PeerConfig
from dernier_p2p.net.portmap import LEASE_S
from dernier_p2p.net.seat import LocalSeat
from dernier_p2p.net.timers import Timers
from dernier_p2p.net.watch import WatchConfig, Watcher
from dernier_p2p.rules import events as ev
from dernier_p2p.wire.hashing import digest
from dernier_p2p.wire.identity import IdentityKey

LOOPBACK = "127.0.0.1"
AUTO_TIMERS = Timers(turn_ms=30_000, declare_ms=50, grace_ms=5_000)
HUMAN_TIMERS = Timers(turn_ms=3_600_000, declare_ms=1_500, grace_ms=15_000)
BOT_PACE = 0.4  # seconds a bot waits before each move when a human plays along
RESIGN_WAIT_S = 10.0  # how long a seat that leaves waits for its resignation to go through


@dataclass
class Seating:
    """How the user's seat is played and shown, and what leaving does (:meth:`ask_leave`).

    ``bots``: the other seats are bots in this process (``dernier play``): when the person
    leaves, the seat resigns and the bots finish the match without pauses (:meth:`how_left`
    then says how it ended); without it the seat resigns and, unless that ended the match, the
    run ends with :class:`QuitGame` (the others play on in their own processes)."""

    bot: bool
    colour: bool
    level: str = DEFAULT_LEVEL  # how the bot plays the user's seat (with ``bot``)
    echo: Callable[..., None] = echo_fitted
    bot_seed: int = 0
    lines: LineReader | None = None
    log: list[str] = field(default_factory=list)
    narrator: Narrator | None = None
    seat: LocalSeat | None = None  # the user's seat, once the match has started
    offer_s: float = DEFAULT_OFFER_S
    pacer: Pacer | None = None  # a human's pacing of the table (None when a bot plays)
    human: HumanAgent | None = None
    screen: Any = None  # a tui.link.ScreenLink when the full-screen table shows the seat
    agent_echo: Callable[..., None] | None = None
    bots: bool = False
    leaving: bool = field(default=False, init=False)  # the person asked to leave

    def __post_init__(self) -> None:
        self._leave = trio.Event()
        self._gate: trio.CancelScope | None = None
        if self.screen is not None:
            self.echo, self.agent_echo = self.screen.narrate, self.screen.agent_echo
            self.lines, self.colour = self.screen.lines, False
            self.log = self.screen.log
            self.screen.ask_leave = self.ask_leave
        if self.lines is None and not self.bot:
            self.lines = LineReader()
        if self.pacer is None and not self.bot:
            assert self.lines is not None
            self.pacer = Pacer(self.offer_s, hand_key=self.lines.interactive)
        if self.narrator is None:
            self.narrator = Narrator(self.echo, self.log, self.colour, pacer=self.pacer)
        if self.screen is not None:
            self.screen.pacer = self.pacer
        self.among_bots(self.bots)

    def tell(self, text: str = "") -> None:
        """A line that may come at any moment of the match, not from it (the router, the
        relay): the full-screen table puts it in its log like the others; the line interface
        ends the line of a prompt open meanwhile first and prints the prompt again after it."""
        narrator = self.narrator
        prompt = "" if narrator is None or narrator.open_prompt is None else (
            narrator.open_prompt())
        if prompt:
            self.echo("")
        self.echo(text)
        if prompt:
            self.echo(prompt, nl=False)

    def among_bots(self, bots: bool = True) -> None:
        """Say whether the other seats are bots in this process (see ``bots``)."""
        self.bots = bots
        if self.screen is not None:
            self.screen.bots = bots

    async def follow(self, source: SeatSource) -> None:
        """Narrate the user's seat (``source``: the Host or Peer running it) to the end; a
        human presses a key after each hand."""
        assert self.narrator is not None
        self.seat = await source.local_seat()
        if self.screen is not None:
            self.screen.token = trio.lowlevel.current_trio_token()
            self.screen.seat = self.seat
        if self.human is not None:
            self.human.say = self.seat.say
        if self.pacer is not None:
            seat = self.seat

            def human_at() -> tuple[int, int] | None:
                state = seat.session.state
                return None if seat.busy or state is None else (state.hand_number, state.clock)

            self.pacer.human_at = human_at
            pace = seat.pace  # the table's window: every seat on every machine keeps it
            pace.wants_key = self.pacer.hand_key
            self.pacer.offer_s = pace.window_s
            self.pacer.on_release = lambda: pace.key_pressed(pace.window_at)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.narrator.countdown, self.seat)
            nursery.start_soon(self._leave_when_asked, self.seat)
            if self.pacer is not None and self.pacer.hand_key and self.human is not None:
                nursery.start_soon(self._hand_gate, self.human)
            await self.narrator.follow(self.seat)
            nursery.cancel_scope.cancel()

    async def _hand_gate(self, human: HumanAgent) -> None:
        """The human's key after each hand; ``q`` there leaves as anywhere else."""
        with trio.CancelScope() as self._gate:
            try:
                await human.hand_gate()
            except QuitGame:
                self.ask_leave()

    def ask_leave(self) -> None:
        """The person leaves (``q`` confirmed, the end of input, the screen's leave): no prompt
        opens again and the seat resigns (:meth:`LocalSeat.leave`); with ``bots`` they stop
        waiting for the person at once. Callable from any task of the table's run."""
        if self.leaving:
            return
        self.leaving = True
        if self.screen is not None:
            self.screen.left = True
        if self.human is not None:
            self.human.gone = True
        if self._gate is not None:
            self._gate.cancel()
        if self.bots and self.pacer is not None:
            self.pacer.leave()
        if self.seat is not None:
            self.seat.leave()
        self._leave.set()

    async def _leave_when_asked(self, seat: LocalSeat) -> None:
        """Once the person asked to leave and the seat has resigned: if the match goes on, say
        that the bots finish it (``bots``) or end the run with :class:`QuitGame`; so too if no
        resignation went through."""
        await self._leave.wait()
        seat.leave()
        with trio.move_on_after(RESIGN_WAIT_S):
            await seat.done_acting.wait()  # resigned, or the match was over first
        resigned = seat.resigned.is_set()
        over = seat.session.finished  # over by the rules, its end final now or soon (7.11)
        if seat.stopped is not None or (over and not resigned):
            return  # a fault, or the match was over first: the run ends as it does
        if not resigned or (not self.bots and not over):
            raise QuitGame  # the others play on, in their own processes
        if over:
            return  # the resignation ended the match: its result is shown once final
        self.echo("You have left the table and rank last. The bots finish the match without "
                  "you, without pauses; the result follows (Ctrl-C stops here, leaving the "
                  "transcript unfinished).")

    def how_left(self) -> str | None:
        """After the match: "ended" when this seat's leaving ended it (``dernier``, two
        players in play, or no first dealer yet), "bots" when the others played on without it,
        None when the seat did not leave."""
        seat = self.seat
        if not self.leaving or seat is None:
            return None
        for event in seat.session.events:
            if isinstance(event, ev.Forfeited) and event.seat == seat.seat:
                return "ended"
            if isinstance(event, ev.SeatOut) and event.seat == seat.seat:
                return "bots"
        return None


class SeatSource(Protocol):
    """A Host or a Peer: what runs the user's seat."""

    async def local_seat(self) -> LocalSeat: ...


def local_seed(seed: int, what: str, seat: int) -> bytes:
    """A 32-byte value derived from the table seed (identities, Drbg seeds, game id)."""
    return digest("dernier-p2p/cli-local", [seed, what, seat])


class _Human:
    """The human agent of the user's seat, bound to it the first time it is asked."""

    waits_for_offers = False  # a person's turn move is not held for the others' window

    def __init__(self, seating: Seating, source: SeatSource) -> None:
        self.seating = seating
        self.source = source
        self.seat: LocalSeat | None = None
        assert seating.narrator is not None
        assert seating.lines is not None
        self.agent = HumanAgent(
            [], seating.log, seating.lines, self._state, echo=seating.agent_echo or seating.echo,
            colour=seating.colour, flush=seating.narrator.flush, pacer=seating.pacer,
        )
        self.agent.show_table = seating.screen is None
        self.agent.bots = seating.bots
        if seating.screen is None:  # narration cuts into an open prompt and prints it again
            seating.narrator.open_prompt = lambda: self.agent.open_prompt
            if seating.lines.interactive and sys.stdout.isatty():
                self.agent.fit = fit_terminal  # a person reads it: broken between phrases
        seating.human = self.agent

    def _state(self) -> Any:
        return None if self.seat is None else self.seat.session.state

    async def __call__(self, state: Any, seat: int, view: Any) -> Any:
        if self.seat is None:
            self.seat = await self.source.local_seat()
            self.agent.names = names_of(self.seat)
            timers = self.seat.session.table_body.get("timers") or {}
            if timers.get("turn_ms"):
                self.agent.turn_s = timers["turn_ms"] / 1000
        try:
            return await self.agent(state, seat, view)
        except QuitGame:  # the seat resigns (see Seating.ask_leave): no move
            self.seating.ask_leave()
            return None

    def refused(self, code: str, detail: str) -> None:
        self.agent.refused(code, detail)


def _bot(policy: Any, pace: float, pacer: Pacer | None) -> Agent:
    """A bot peer's agent: paced by the human's pacer when a human plays."""
    return bot_agent(policy, pace) if pacer is None else paced_bot(policy, pacer, pace)


def _user_agent(seating: Seating, source: SeatSource) -> Agent:
    if seating.bot:
        return bot_agent(make_bot(seating.level, seating.bot_seed))
    return _Human(seating, source)


# The bots of a local table run in the host's own process: nothing between them can drop an
# envelope, so a host slow to check a shuffle (ten seats verifying in one process on a busy
# machine) is never taken for a censor.
LOCAL_CENSOR_MS = 24 * 3600 * 1000


async def play_local(
    variant: str,
    players: int,
    options: dict[str, Any],
    seed: int,
    name: str,
    transcript: Path,
    seating: Seating,
    bots: str = DEFAULT_LEVEL,
) -> LocalSeat | None:
    """Host a loopback table, seat ``players - 1`` bot peers of level ``bots``, play until the
    match is over; return the user's seat. When the user leaves, the seat resigns and the bots
    finish the match (see :class:`Seating`); a fault propagates."""
    seating.among_bots()
    timers = AUTO_TIMERS if seating.bot else HUMAN_TIMERS
    if not seating.bot:
        timers = Timers(timers.turn_ms, max(1, int(seating.offer_s * 1000)), timers.grace_ms)
    pace = 0.0 if seating.bot else BOT_PACE
    config = HostConfig(
        players=players,
        variant=variant,
        options=options,
        timers=timers,
        name=name,
        table_name=f"{name}'s table",
        bind=LOOPBACK,
        port=0,
        transcript=transcript,
        game=local_seed(seed, "game", 0)[:16],
        seed=local_seed(seed, "drbg", 0),
        linger_s=0.2,
    )
    seating.bot_seed = seed * 31
    host = Host(IdentityKey.generate(local_seed(seed, "identity", 0)), config, None)
    host.agent = _user_agent(seating, host)
    async with trio.open_nursery() as nursery, aclosing(host.joins()) as joins:
        await nursery.start(host.run)
        nursery.start_soon(seating.follow, host)
        for seat in range(1, players):
            peer = Peer(
                IdentityKey.generate(local_seed(seed, "identity", seat)),
                (LOOPBACK, host.port),
                _bot(make_bot(bots, seed * 31 + seat), pace, seating.pacer),
                PeerConfig(name=f"Bot {seat}", seed=local_seed(seed, "drbg", seat),
                           linger_s=0.2, censor_ms=LOCAL_CENSOR_MS),
            )
            nursery.start_soon(peer.run)
            with trio.fail_after(10):  # join in seat order: the same seats on every run
                while (await anext(joins)).seat != seat:
                    pass
    return seating.seat


async def _announce_joins(host: Host, echo: Callable[..., None]) -> None:
    """Tell the host's user who sits down (and leaves the lobby) until the table is full."""
    async for event in host.joins():
        if event.kind == "join":
            echo(f"Seat {event.seat}: {event.name} sits down "
                 f"({event.taken} of {host.config.players}).")
        elif event.kind == "version":
            echo(event.name[:1].upper() + event.name[1:] + ".")
        else:
            echo(f"Seat {event.seat}: {event.name} leaves the lobby.")
    echo("The table is full; the match begins.")


async def host_table(
    identity: IdentityKey,
    config: HostConfig,
    seating: Seating,
    *,
    relay: tuple[str, int] | None = None,
    map_port: bool = False,
    ipv6: str | None = None,
    map_lease_s: int = LEASE_S,
    announce_mapping: bool = False,
) -> LocalSeat | None:
    """Host a table for peers on other machines; the user plays seat 0. The table is made
    reachable (router mapping, asked for ``map_lease_s``, and ``relay``; see :mod:`.internet`)
    and its invite code printed. ``ipv6``: this machine's global IPv6 address: the host then
    listens on IPv6 as well as IPv4 (one port) and offers that address first.
    ``announce_mapping``: a mapping's outside address is the host's ``listen`` in record 0
    (no --advertise was given)."""
    from dernier_p2p.cli.internet import open_routes
    from dernier_p2p.net.ipv6 import open_dual_listeners

    listeners = None
    if ipv6 is not None:
        listeners, problem = await open_dual_listeners(config.port)
        if problem is not None:
            seating.echo(f"No IPv6 route: {problem}.")
            ipv6 = None
    host = Host(identity, config, None, listeners=listeners)
    host.agent = _user_agent(seating, host)
    finished = trio.Event()  # the host has sent its last records and closed

    async def run_host(task_status: trio.TaskStatus[Host] = trio.TASK_STATUS_IGNORED) -> None:
        await host.run(task_status=task_status)
        finished.set()

    async with trio.open_nursery() as nursery:
        await nursery.start(run_host)
        where = config.advertise or config.bind
        address = host_port(where, host.port)
        seating.echo(
            f"Hosting a {config.variant} table for {config.players} on port {host.port}."
        )
        async with open_routes(host, seating.tell, advertise=where, relay=relay,
                               map_port=map_port, ipv6=ipv6, map_lease_s=map_lease_s,
                               announce_mapping=announce_mapping) as invite:
            # each command alone on its line, with nothing around it: a copy of it whole, or
            # of its pieces where the screen folds a long code, joins (``dernier join`` takes
            # the pieces); the full-screen table also copies it with a key
            join = f"dernier join {invite.encode()}"
            copy = ""
            if seating.screen is not None:
                from dernier_p2p.tui.link import COPY_KEY

                seating.screen.invite = join
                copy = f" ({COPY_KEY} copies it)"
            seating.echo(f"Others join with{copy}:")
            seating.echo(f"  {join}")
            if config.max_watchers:
                seating.echo("and watch with:")
                seating.echo(f"  dernier watch {invite.encode()}")
            seating.echo("On this network also:")
            seating.echo(f"  dernier join {address}")
            nursery.start_soon(_announce_joins, host, seating.echo)
            nursery.start_soon(seating.follow, host)
            await finished.wait()  # relayed connections and the mapping last until then
    return seating.seat


def told_to_resume(exc: BaseException) -> bool:
    """Whether ``exc`` (or a leaf of it) is the host's "this key has a seat: resume"."""
    if isinstance(exc, BaseExceptionGroup):
        return any(told_to_resume(e) for e in exc.exceptions)
    return (
        isinstance(exc, RemoteError) and exc.code == UNKNOWN_KEY and exc.detail == SEATED_KEY
    )


async def join_table(
    identity: IdentityKey,
    address: tuple[str, int],
    config: PeerConfig,
    seating: Seating,
    find_seat: Callable[[], Path | None] | None = None,
) -> LocalSeat | None:
    """Join the table at ``address`` (or through ``config.dial``, an invite code's routes) and
    play until the match is over. With ``config.restore`` the seat comes back from its
    transcript. When the host answers that this key already has a seat, ``find_seat`` names the
    transcript to come back from (``config`` is then changed to restore from it)."""
    seating.bot_seed = int.from_bytes(os.urandom(4), "little")
    try:
        return await _play_peer(identity, address, config, seating)
    except BaseException as exc:  # noqa: B036 - re-raised unless told to resume
        if config.restore or find_seat is None or not told_to_resume(exc):
            raise
        found = find_seat()
        if found is None:
            raise RemoteError(
                UNKNOWN_KEY, f"{SEATED_KEY} (no transcript of that match found here: run the "
                "same command with --transcript FILE of that match)"
            ) from None
    seating.echo(f"Your seat is still held: resuming from {found}.")
    config.transcript, config.restore = found, True
    return await _play_peer(identity, address, config, seating)


async def _play_peer(
    identity: IdentityKey, address: tuple[str, int], config: PeerConfig, seating: Seating
) -> LocalSeat | None:
    peer = Peer(identity, address, None, config)
    peer.agent = _user_agent(seating, peer)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(peer.run)
        nursery.start_soon(seating.follow, peer)

        async def seated() -> None:
            await peer.joined.wait()
            if config.restore:
                seating.echo(f"Back at seat {peer.seat}; catching up with the table.")
            else:
                seating.echo(seated_line(peer.seat, getattr(config.dial, "used", None)))
            seating.echo(listen_note(peer))

        nursery.start_soon(seated)
    return seating.seat


def seated_line(seat: int | None, used: Any = None) -> str:
    """What a joiner reads once seated: its seat and, joining by code, the route it got
    (``used``, a :class:`~dernier_p2p.net.invite.Route`), as a clause of its own: a route's
    words may hold a parenthesis ("(IPv6)"), never one inside another."""
    how = "" if used is None else f", connected {used.describe()}"
    return f"Seated at seat {seat}{how}; waiting for the table to fill."


def listen_note(peer: Peer) -> str:
    """For whom this seat can take over as host if the host goes away, or why it cannot (see
    :func:`.internet.takeover_note`)."""
    from dernier_p2p.cli.internet import takeover_note

    config = peer.config
    listen = None
    if peer.listeners:
        host, port = peer.listeners[0].socket.getsockname()[:2]
        listen = (config.listen[0] if config.listen is not None else str(host), port)
    relay = config.relay if config.relay_standby else None
    mapped = config.announce
    if mapped is not None and listen is not None and ":" in mapped[0]:  # its IPv6 address
        listen, mapped = mapped, None
    return takeover_note(listen, problem=peer.listen_problem, mapped=mapped, relay=relay)


async def watch_table(
    address: tuple[str, int], config: WatchConfig, seating: Seating
) -> LocalSeat | None:
    """Follow the table at ``address`` (or through ``config.dial``) as a watcher until the
    match is over; return the watched seat (an observer's, no seat number)."""
    watcher = Watcher(address, config)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watcher.run)
        nursery.start_soon(seating.follow, watcher)
    return seating.seat
