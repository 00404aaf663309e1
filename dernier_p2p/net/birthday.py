"""The birthday punch: a direct TCP connection through a symmetric NAT (PROTOCOL.md 4.7 step 5).

A symmetric router gives every connection of its home a new random outside port, so the
plain punch (:mod:`.punch`) never meets a router that lets in only what its home asked for:
the symmetric side's packets leave from a port nobody knows. Here both port sets are made
large enough to meet by chance. Version 4 tells no side its own outside port (``at`` is the
other side's), so each side plays both parts at once, and only the right half meets:

* *opens*: connections to the other side's ``at``, each from its own fresh local port: behind
  a symmetric router, each gets a random outside port and an entry that lets ``at`` back in;
* *guesses*: connections from the punch port (the one the relay saw) to guessed ports of the
  other side's address: behind an endpoint-independent router, each leaves from ``at``'s port,
  where the other side's opens go, and lets in exactly the guessed port.

A guess equal to an open's outside port is a TCP simultaneous open. What to do (how many, which
ports, when, whether one may start) is decided by pure functions of their inputs
(:func:`plan`, :func:`counts`, :class:`Allowance`), the randomness given; :func:`birthday` only
runs a plan on sockets.
"""

from __future__ import annotations

import ipaddress
import logging
import random
import socket
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import trio

from dernier_p2p.net import punch
from dernier_p2p.net.admission import raise_nofile_limit
from dernier_p2p.net.framing import FramedStream

log = logging.getLogger("dernier_p2p.net.birthday")

PORT_LOW, PORT_HIGH = 1024, 65535  # what Linux `masquerade random` draws a source port from
SPAN = PORT_HIGH - PORT_LOW + 1  # 64,512 ports
OPENS = 512  # connections from fresh local ports to the other side's `at`
GUESSES = 512  # connections from the punch port to guessed ports of the other side's address
SEQUENTIAL = 16  # the first guesses: the ports after `at`'s (a NAT allocating in sequence)
# Linux `masquerade random` takes a 16-bit random number modulo SPAN: these come twice as often
FAVOURED = range(PORT_LOW, PORT_LOW + (1 << 16) - SPAN)
MIN_COUNT = 16  # fewer sockets to spare than this for either part: no birthday punch
RESERVE = 256  # open files left for everything else when the limit is low
# It starts at the rendezvous, besides the plain punch (:mod:`.punch`), and ends as soon as a
# direct connection is made. The opens (to the one port the relay saw) start almost at once;
# the guesses (many ports of the other side's address) only where no direct connection was
# made by GUESS_START_S: a plain punch between two cone NATs meets within a round trip.
OPEN_START_S = 0.05  # the first opens, after the rendezvous
GUESS_START_S = 0.15  # the first guesses, after the rendezvous, if nothing was made by then
PER_TICK = 8  # opens a tick, and guesses a tick: at most 16 new connections each TICK_S
WINDOW_S = 1.75  # from the rendezvous to its end (every socket closed, the relay kept)
TICK_S = 0.01  # the pacing's granularity
MAX_RUNNING = 1  # birthday punches a process runs at once
MAX_PER_MINUTE = 4 * (OPENS + GUESSES)  # connections a process's birthday punches make a minute

Take = Callable[[FramedStream], Awaitable[bool]]


@dataclass(frozen=True)
class Step:
    """One connection of a plan: ``at_s`` seconds after the start, an ``open`` (to the other
    side's ``at``, from a fresh port) or a ``guess`` (to ``port`` of its address, from the
    punch port)."""

    at_s: float
    kind: str
    port: int


def may_birthday(at: tuple[str, int]) -> bool:
    """Whether to birthday punch toward ``at``: an IPv4 address that can be across a NAT
    (not loopback, link-local, multicast, unspecified or a private RFC 1918 one: a relay
    that saw one is on the same network or machine, where no NAT stands between the two,
    and a seat's guesses would reach that network's or machine's own services)."""
    try:
        ip = ipaddress.ip_address(at[0])
    except ValueError:
        return False
    return isinstance(ip, ipaddress.IPv4Address) and not (
        ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_unspecified
        or any(ip in net for net in _LOCAL))


_LOCAL = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12",
                                                 "192.168.0.0/16", "255.255.255.255/32"))


def counts(nofile: int, opens: int = OPENS, guesses: int = GUESSES) -> tuple[int, int]:
    """How many opens and guesses (each at most as asked) fit an open-files limit ``nofile``
    (-1: none known), :data:`RESERVE` left for the rest; ``(0, 0)`` where fewer than
    :data:`MIN_COUNT` of each would fit."""
    if nofile < 0:
        return opens, guesses
    spare = max(0, (nofile - RESERVE) // 2)
    n, m = min(opens, spare), min(guesses, spare)
    return (n, m) if spare >= MIN_COUNT else (0, 0)


def guess_ports(seen: int, count: int, rng: random.Random) -> list[int]:
    """``count`` distinct ports of :data:`PORT_LOW`..:data:`PORT_HIGH` to guess, ``seen``
    (``at``'s port) excluded: first the :data:`SEQUENTIAL` ports after it (wrapping in the
    range: a NAT that allocates in sequence), then the ports of :data:`FAVOURED` in an order
    drawn by ``rng``, then ports drawn by ``rng`` from the whole range, without repetition.
    Against a NAT drawing uniformly any set of guesses is as good as another; Linux draws the
    ports of :data:`FAVOURED` twice as often as the others."""
    count = max(0, min(count, SPAN - 1))
    out: list[int] = []
    taken = {seen}

    def add(port: int) -> None:
        if port not in taken and len(out) < count:
            taken.add(port)
            out.append(port)

    for k in range(1, SEQUENTIAL + 1):
        add(PORT_LOW + (max(seen, PORT_LOW - 1) - PORT_LOW + k) % SPAN)
    favoured = list(FAVOURED)
    rng.shuffle(favoured)
    for port in favoured:
        add(port)
    while len(out) < count:
        add(rng.randint(PORT_LOW, PORT_HIGH))
    return out


def plan(seen: int, rng: random.Random, opens: int = OPENS, guesses: int = GUESSES) -> list[Step]:
    """The steps of a birthday punch toward an ``at`` whose port is ``seen``, in time order
    (seconds after the rendezvous): ``opens`` opens from :data:`OPEN_START_S` and ``guesses``
    guesses (see :func:`guess_ports`) from :data:`GUESS_START_S`, :data:`PER_TICK` of each a
    :data:`TICK_S` tick. Counts are capped at :data:`OPENS` and :data:`GUESSES`."""
    opens, guesses = max(0, min(opens, OPENS)), max(0, min(guesses, GUESSES))

    def tick(k: int, start: float) -> float:
        return round(round(start / TICK_S + k // PER_TICK) * TICK_S, 6)

    steps = [Step(tick(k, OPEN_START_S), "open", seen) for k in range(opens)]
    steps += [Step(tick(k, GUESS_START_S), "guess", port)
              for k, port in enumerate(guess_ports(seen, guesses, rng))]
    return sorted(steps, key=lambda s: (s.at_s, s.kind != "open"))


def success(opens: int, guesses: int, span: int = SPAN) -> float:
    """The chance that ``guesses`` distinct guessed ports meet at least one of ``opens``
    distinct ports drawn uniformly from ``span`` (a random symmetric NAT):
    1 - C(span - opens, guesses) / C(span, guesses)."""
    miss = 1.0
    for k in range(guesses):
        if span - k <= 0:
            return 1.0
        miss *= max(0.0, (span - opens - k) / (span - k))
    return 1.0 - miss


@dataclass
class Allowance:
    """Whether a process may start a birthday punch: at most :data:`MAX_RUNNING` at once, and
    its birthday punches make at most :data:`MAX_PER_MINUTE` connections in any 60 s (so that
    a relay naming addresses cannot make a seat send more SYNs than that): one starts only
    if what it may make still fits, and counts, once over, what it made (one ended early by
    a plain punch's connection, as most are, made few). Times are given (``now``, seconds)."""

    running: int = 0
    made: deque[tuple[float, int]] = field(default_factory=deque)  # (when ended, connections)
    reserved: int = 0  # what the running ones may still make

    def start(self, now: float, want: int = OPENS + GUESSES) -> bool:
        """Take a slot for at most ``want`` connections (True) or not (False: at a cap)."""
        while self.made and now - self.made[0][0] >= 60.0:
            self.made.popleft()
        used = sum(n for _, n in self.made) + self.reserved
        if self.running >= MAX_RUNNING or used + want > MAX_PER_MINUTE:
            return False
        self.running += 1
        self.reserved += want
        return True

    def end(self, now: float = 0.0, want: int = 0, made: int = 0) -> None:
        """Give back a slot taken by :meth:`start` for ``want``, which made ``made``."""
        if self.running:
            self.running -= 1
            self.reserved = max(0, self.reserved - want)
            self.made.append((now, min(made, want)))


ALLOWANCE = Allowance()  # this process's


async def birthday(family: int, port: int, remote: tuple[str, int], take: Take, max_frame: int,
                   rng: random.Random | None = None, allowance: Allowance = ALLOWANCE,
                   opens: int = OPENS, guesses: int = GUESSES, first: bool = True,
                   direct: trio.Event | None = None) -> bool:
    """Run a birthday punch toward ``remote`` (the other side's ``at``) from the punch port
    ``port``, started at the rendezvous: the :func:`plan`'s steps, handing each connection
    made to ``take`` (which returns whether it keeps it; one not kept is closed) until one
    is kept, when every other socket is closed at once; all are by :data:`WINDOW_S`. Whether
    one was kept. ``direct``: set once a direct connection is made otherwise (a plain punch,
    a call back): no step is started after it, and every socket is closed. ``first=False``
    (the host's side, which cannot tell which one its joiner keeps): every connection made
    (at most :data:`~.punch.MAX_OFFERS`) is handed on, and it runs until its caller cancels
    it (the joiner has chosen) or the window ends. Nothing is tried for IPv6 (no NAT to
    defeat), past the :class:`Allowance` (one refused because another runs is asked again
    once, at :data:`GUESS_START_S`), or without files to spare. ``opens`` and ``guesses``:
    fewer than :data:`OPENS` and :data:`GUESSES` (never more)."""
    if family != socket.AF_INET:
        return False
    called = trio.current_time()
    n, m = counts(raise_nofile_limit()[0], min(opens, OPENS), min(guesses, GUESSES))
    started = n + m > 0 and allowance.start(time.monotonic(), n + m)
    if not started and n + m > 0 and allowance.running:
        await trio.sleep(GUESS_START_S)  # another runs: most end within a round trip
        started = not (direct is not None and direct.is_set()) and allowance.start(
            time.monotonic(), n + m)
    if not started:
        log.info("birthday punch toward %s: not started (%s)", remote,
                 "no open files to spare" if n + m == 0 else "one already running, or the cap")
        return False
    steps = plan(remote[1], rng or random.SystemRandom(), n, m)
    taken = False
    made = [0, 0, 0]  # connections made, refused or failed, attempted
    try:
        with trio.move_on_at(called + WINDOW_S):
            async with trio.open_nursery() as nursery:

                async def offer(stream: trio.SocketStream) -> None:
                    nonlocal taken
                    framed = FramedStream(stream, max_frame)
                    kept = False
                    made[0] += 1
                    try:
                        if not (taken and first) and made[0] <= punch.MAX_OFFERS:
                            kept = await take(framed)
                    finally:
                        if kept and not (taken and first):
                            taken = True
                            if first:
                                nursery.cancel_scope.cancel()
                        elif not kept:
                            await trio.aclose_forcefully(framed)

                async def attempt(step: Step) -> None:
                    sock = None
                    try:
                        if step.kind == "open":
                            sock = trio.socket.socket(family, socket.SOCK_STREAM)
                            await sock.connect(remote)
                        else:
                            sock = punch.reusable(family, port)
                            await sock.bind(("0.0.0.0", port))
                            await sock.connect((remote[0], step.port))
                        peer = sock.getpeername()[:2]
                    except OSError:
                        made[1] += 1
                        if sock is not None:
                            sock.close()
                        return
                    except BaseException:
                        if sock is not None:
                            sock.close()
                        raise
                    log.info("birthday punch: a connection with %s (%s)", peer, step.kind)
                    nursery.start_soon(offer, trio.SocketStream(sock))

                start = trio.current_time()
                for step in steps:
                    await trio.sleep_until(start + step.at_s)
                    if direct is not None and direct.is_set():
                        nursery.cancel_scope.cancel()  # a plain punch (or a call back) made one
                        break
                    if not made[2]:  # (most end before: a plain punch made one)
                        log.info("birthday punch toward %s: %d opens, %d guesses", remote, n, m)
                    made[2] += 1
                    nursery.start_soon(attempt, step)
    finally:
        allowance.end(time.monotonic(), n + m, made[2])
    if made[2]:
        log.info("birthday punch toward %s: %s (%d tried: %d made, %d refused or failed)",
                 remote, "a connection taken" if taken else "no connection", made[2], made[0],
                 made[1])
    return taken
