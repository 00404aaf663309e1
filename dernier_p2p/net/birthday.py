"""The birthday punch: a direct TCP connection through a symmetric NAT (PROTOCOL.md 4.7 step 5).

A symmetric router gives every connection of its home a new random outside port, so the
plain punch (:mod:`.punch`) never meets a router that lets in only what its home asked for:
the symmetric side's packets leave from a port nobody knows. Here both port sets are made
large enough to meet by chance. There are two parts, and only the right half meets:

* *opens*: connections to the other side's ``at``, each from its own fresh local port: behind
  a symmetric router, each gets a random outside port and an entry that lets ``at`` back in;
* *guesses*: connections from the punch port (the one the relay saw) to guessed ports of the
  other side's address: behind an endpoint-independent router, each leaves from ``at``'s port,
  where the other side's opens go, and lets in exactly the guessed port.

A guess equal to an open's outside port is a TCP simultaneous open. Version 5 tells each side
its own outside port (``self``) and both local punch ports (``port``), so both sides know whose
port was *kept* and whose *changed*; where exactly one changed, it plays only the opens and the
other side only the guesses, each at the whole pace (:func:`role`); otherwise both play both
parts, as in version 4. What to do (which part, how many, which ports, when, whether one may
start) is decided by pure functions of their inputs (:func:`role`, :func:`plan`,
:func:`counts`, :class:`Allowance`, :class:`Pace`), the randomness and the times given;
:func:`birthday` only runs a plan on sockets.

A process (a host answering several joiners) runs up to :data:`MAX_RUNNING` at once. They share
what one alone has: the pace (:class:`Pace`: at most :data:`PER_TICK` steps a tick in each of
two lanes for the process, handed round robin to the punches with steps due; a punch playing
both parts has its opens in one lane and its guesses in the other, one playing one part its
steps in both in turn), the sockets the open-files limit leaves (a later one gets what the
running ones left, :meth:`Allowance.fit`) and the connections a minute (:class:`Allowance`).
"""

from __future__ import annotations

import ipaddress
import logging
import random
import socket
import time
from bisect import bisect_right
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
# Split (one side changed its port, the other kept it): the side that changed is symmetric (no
# plain punch can meet) or a cone that does not keep ports (the plain punch meets within a
# round trip, and the guesses cannot disturb it), so the guesses are not held back for it:
# they start once the opens lead by two ticks (32 of them).
SPLIT_GUESS_START_S = 0.07
BOTH, OPENS_ONLY, GUESSES_ONLY = "both", "opens", "guesses"  # the roles (see role())
PER_TICK = 8  # opens a tick, and guesses a tick: at most 16 new connections each TICK_S
WINDOW_S = 1.75  # from the rendezvous to its end (every socket closed, the relay kept)
TICK_S = 0.01  # the pacing's granularity
MAX_RUNNING = 3  # birthday punches a process runs at once (sharing the pace and the sockets)
MAX_PER_MINUTE = 4 * (OPENS + GUESSES)  # connections a process's birthday punches make a minute

Take = Callable[[FramedStream], Awaitable[bool]]


@dataclass(frozen=True)
class Step:
    """One connection of a plan: ``at_s`` seconds after the start, an ``open`` (to the other
    side's ``at``, from a fresh port) or a ``guess`` (to ``port`` of its address, from the
    punch port). ``lane``: the lane of the pace it takes (0 or 1; -1: by its kind, opens 0
    and guesses 1, as a punch playing both parts has them)."""

    at_s: float
    kind: str
    port: int
    lane: int = -1


def _valid_port(port: object) -> int:
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise ValueError(f"a port is an int 1..65535, not {port!r}")
    return port


def role(own: tuple[int, int] | None, other: tuple[int, int] | None) -> str:
    """Which part of a birthday punch a side plays (PROTOCOL.md 4.7 step 5, version 5), from
    ``own`` and ``other``: each side's (local punch port, outside port as the relay saw it),
    None where unknown. A port is *kept* where the two are equal, else *changed*. Exactly one
    changed: the side that changed plays :data:`OPENS_ONLY`, the side that kept
    :data:`GUESSES_ONLY`; otherwise (both kept, both changed, either unknown) :data:`BOTH`.
    Both sides reach the same split from the same facts. :class:`ValueError` for a port that
    is not an int 1..65535."""
    kept = []
    for pair in (own, other):
        if pair is None:
            return BOTH
        local, outside = pair
        kept.append(_valid_port(local) == _valid_port(outside))
    if kept == [False, True]:
        return OPENS_ONLY
    if kept == [True, False]:
        return GUESSES_ONLY
    return BOTH


def describe(part: str) -> str:
    """The log's words for a role."""
    return {OPENS_ONLY: "opens only: this side's port changed, the other's was kept",
            GUESSES_ONLY: "guesses only: this side's port was kept, the other's changed",
            }.get(part, "both parts: which side is symmetric is not known")


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


def counts(nofile: int, opens: int = OPENS, guesses: int = GUESSES,
           held: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """How many opens and guesses (each at most as asked) fit an open-files limit ``nofile``
    (-1: none known), :data:`RESERVE` left for the rest, once the running punches' sockets
    (``held``: their opens and guesses) are counted; ``(0, 0)`` where fewer than
    :data:`MIN_COUNT` of each are left."""
    if nofile < 0:
        return opens, guesses
    spare = max(0, (nofile - RESERVE) // 2)
    left_n, left_m = spare - held[0], spare - held[1]
    n, m = max(0, min(opens, left_n)), max(0, min(guesses, left_m))
    return (n, m) if min(left_n, left_m) >= MIN_COUNT else (0, 0)


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


def plan(seen: int, rng: random.Random, opens: int = OPENS, guesses: int = GUESSES,
         part: str = BOTH) -> list[Step]:
    """The steps of a birthday punch toward an ``at`` whose port is ``seen``, in time order
    (seconds after the rendezvous). Playing both parts (``part`` :data:`BOTH`): ``opens``
    opens from :data:`OPEN_START_S` and ``guesses`` guesses (see :func:`guess_ports`) from
    :data:`GUESS_START_S`, :data:`PER_TICK` of each a :data:`TICK_S` tick, capped at
    :data:`OPENS` and :data:`GUESSES`. Playing one (:data:`OPENS_ONLY`: ``opens`` opens from
    :data:`OPEN_START_S`; :data:`GUESSES_ONLY`: ``guesses`` guesses from
    :data:`SPLIT_GUESS_START_S`; the other count is not used): twice :data:`PER_TICK` a tick,
    in the two lanes in turn, capped at :data:`OPENS` + :data:`GUESSES`."""

    def tick(k: int, start: float, per_tick: int = PER_TICK) -> float:
        return round(round(start / TICK_S + k // per_tick) * TICK_S, 6)

    if part in (OPENS_ONLY, GUESSES_ONLY):
        whole = OPENS + GUESSES
        if part == OPENS_ONLY:
            return [Step(tick(k, OPEN_START_S, 2 * PER_TICK), "open", seen, k % 2)
                    for k in range(max(0, min(opens, whole)))]
        return [Step(tick(k, SPLIT_GUESS_START_S, 2 * PER_TICK), "guess", port, k % 2)
                for k, port in enumerate(guess_ports(seen, max(0, min(guesses, whole)), rng))]
    opens, guesses = max(0, min(opens, OPENS)), max(0, min(guesses, GUESSES))
    steps = [Step(tick(k, OPEN_START_S), "open", seen) for k in range(opens)]
    steps += [Step(tick(k, GUESS_START_S), "guess", port)
              for k, port in enumerate(guess_ports(seen, guesses, rng))]
    return sorted(steps, key=lambda s: (s.at_s, s.kind != "open"))


def lane(step: Step) -> str:
    """The lane of the pace a step takes (:class:`Pace`): ``"open"`` (lane 0) or ``"guess"``
    (lane 1), by its ``lane``, else by its kind."""
    if step.lane >= 0:
        return "open" if step.lane == 0 else "guess"
    return step.kind


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
    a plain punch's connection, as most are, made few). It also holds the sockets (opens,
    guesses) of the running ones, so that a later one gets what they left (:meth:`fit`).
    Times are given (``now``, seconds)."""

    running: int = 0
    made: deque[tuple[float, int]] = field(default_factory=deque)  # (when ended, connections)
    reserved: int = 0  # what the running ones may still make
    held: tuple[int, int] = (0, 0)  # the opens and guesses the running ones hold sockets for

    def fit(self, nofile: int, opens: int = OPENS, guesses: int = GUESSES) -> tuple[int, int]:
        """The opens and guesses (at most as asked) a punch starting now may hold: what the
        open-files limit ``nofile`` leaves once the running ones' are counted (:func:`counts`);
        ``(0, 0)`` where fewer than :data:`MIN_COUNT` of either are left."""
        return counts(nofile, opens, guesses, self.held)

    def start(self, now: float, want: int = OPENS + GUESSES,
              files: tuple[int, int] = (0, 0)) -> bool:
        """Take a slot for at most ``want`` connections and ``files`` (opens, guesses)
        sockets (True) or not (False: at a cap)."""
        while self.made and now - self.made[0][0] >= 60.0:
            self.made.popleft()
        used = sum(n for _, n in self.made) + self.reserved
        if self.running >= MAX_RUNNING or used + want > MAX_PER_MINUTE:
            return False
        self.running += 1
        self.reserved += want
        self.held = (self.held[0] + files[0], self.held[1] + files[1])
        return True

    def end(self, now: float = 0.0, want: int = 0, made: int = 0,
            files: tuple[int, int] = (0, 0)) -> None:
        """Give back a slot taken by :meth:`start` for ``want`` and ``files``, which made
        ``made``."""
        if self.running:
            self.running -= 1
            self.reserved = max(0, self.reserved - want)
            self.held = (max(0, self.held[0] - files[0]), max(0, self.held[1] - files[1]))
            self.made.append((now, min(made, want)))


@dataclass
class Pace:
    """The process's pace, shared by its running birthday punches: in each :data:`TICK_S`
    tick of the clock (tick ``k``: from ``k * TICK_S``), at most :data:`PER_TICK` steps start
    in each of two lanes, in sum over the punches (lane ``"open"`` and lane ``"guess"``, see
    :func:`lane`: a punch playing both parts has its opens in the first and its guesses in the
    second, one playing a single part its steps in both in turn). A punch joins (:meth:`join`) with
    the times its steps are due (its :func:`plan`, from its start); the first to ask in a tick
    hands that tick's slots of each kind round robin (from a place that turns each tick) to
    the punches with steps due then, one at a time, so that two punches behind share it half
    and half; one due later in the tick, or asking for more, gets what is left. A lone punch
    keeps its plan's pace. Times are given (seconds, the caller's clock)."""

    per_tick: int = PER_TICK
    tick_s: float = TICK_S
    due: dict[int, dict[str, list[float]]] = field(default_factory=dict)  # when each step is
    given: dict[int, dict[str, int]] = field(default_factory=dict)  # steps given so far
    tick: int = -1  # the tick whose slots are handed
    slots: dict[str, dict[int, int]] = field(default_factory=dict)  # kind: {punch: slots}
    taken: dict[str, dict[int, int]] = field(default_factory=dict)  # kind: {punch: taken}
    joined: int = 0  # punches joined so far (each one's key)

    def join(self, start: float, steps: list[Step]) -> int:
        """Register a punch started at ``start`` with its plan's ``steps``: its key."""
        key = self.joined
        self.joined += 1
        self.due[key] = {kind: [start + s.at_s for s in steps if lane(s) == kind]
                         for kind in ("open", "guess")}
        self.given[key] = {"open": 0, "guess": 0}
        return key

    def leave(self, key: int) -> None:
        """Forget a punch that ended (its slots go to the others from the next tick)."""
        self.due.pop(key, None)
        self.given.pop(key, None)

    def _behind(self, key: int, kind: str, now: float) -> int:
        return bisect_right(self.due[key][kind], now) - self.given[key][kind]

    def take(self, key: int, now: float) -> tuple[int, int]:
        """How many of its next steps of each lane (``"open"``, ``"guess"``) the punch
        ``key`` may start ``now``."""
        tick = int(now // self.tick_s)
        if tick != self.tick:  # the first to ask in this tick hands its slots
            self.tick = tick
            self.taken = {"open": {}, "guess": {}}
            keys = sorted(self.due)
            for kind in ("open", "guess"):
                behind = {k: self._behind(k, kind, now) for k in keys}
                slots = dict.fromkeys(keys, 0)
                left = self.per_tick
                turn = tick % len(keys) if keys else 0
                order = keys[turn:] + keys[:turn]
                while left and any(behind[k] > slots[k] for k in order):
                    for k in order:
                        if left and behind[k] > slots[k]:
                            slots[k] += 1
                            left -= 1
                self.slots[kind] = slots
        if key not in self.due:
            return 0, 0
        out = []
        for kind in ("open", "guess"):
            slots, taken = self.slots[kind], self.taken[kind]
            mine = slots.get(key, 0) - taken.get(key, 0)
            spare = self.per_tick - sum(max(slots.get(k, 0), taken.get(k, 0))
                                        for k in set(slots) | set(taken))
            n = max(0, min(self._behind(key, kind, now), mine + max(0, spare)))
            taken[key] = taken.get(key, 0) + n
            self.given[key][kind] += n
            out.append(n)
        return out[0], out[1]

    def next_due(self, key: int) -> float | None:
        """When the punch ``key``'s next step not yet started is due (None: none left)."""
        if key not in self.due:
            return None
        times = [d[self.given[key][kind]] for kind, d in self.due[key].items()
                 if self.given[key][kind] < len(d)]
        return min(times) if times else None


ALLOWANCE = Allowance()  # this process's
PACE = Pace()  # this process's


async def birthday(family: int, port: int, remote: tuple[str, int], take: Take, max_frame: int,
                   rng: random.Random | None = None, allowance: Allowance = ALLOWANCE,
                   opens: int = OPENS, guesses: int = GUESSES, first: bool = True,
                   direct: trio.Event | None = None, pace: Pace = PACE,
                   part: str = BOTH) -> bool:
    """Run a birthday punch toward ``remote`` (the other side's ``at``) from the punch port
    ``port``, started at the rendezvous: the :func:`plan`'s steps, each when it is due and
    the process's ``pace`` gives it a slot, handing each connection made to ``take`` (which
    returns whether it keeps it; one not kept is closed) until one is kept, when every other
    socket is closed at once; all are by :data:`WINDOW_S`. Whether one was kept. ``direct``:
    set once a direct connection is made otherwise (a plain punch, a call back): no step is
    started after it, and every socket is closed. ``first=False`` (the host's side, which
    cannot tell which one its joiner keeps): every connection made (at most
    :data:`~.punch.MAX_OFFERS`) is handed on, and it runs until its caller cancels it (the
    joiner has chosen) or the window ends. Nothing is tried for IPv6 (no NAT to defeat),
    past the :class:`Allowance` (one refused while others run is asked again once, at
    :data:`GUESS_START_S`), or without files to spare once the running ones' are counted.
    ``opens`` and ``guesses``: fewer than :data:`OPENS` and :data:`GUESSES` (never more).
    ``part`` (:func:`role`): :data:`BOTH`, or one part alone (:data:`OPENS_ONLY`,
    :data:`GUESSES_ONLY`), which makes ``opens + guesses`` of its kind at twice the pace, the
    sockets of both lanes."""
    if family != socket.AF_INET:
        return False
    called = trio.current_time()
    nofile = raise_nofile_limit()[0]
    split = part in (OPENS_ONLY, GUESSES_ONLY)
    if split:  # one kind in the two lanes, half in each
        whole = min(max(0, opens) + max(0, guesses), OPENS + GUESSES)
        want = ((whole + 1) // 2, whole // 2)
    else:
        want = (min(opens, OPENS), min(guesses, GUESSES))
    n, m = allowance.fit(nofile, *want)
    started = n + m > 0 and allowance.start(time.monotonic(), n + m, (n, m))
    if not started and allowance.running and want[0] + want[1] > 0:
        await trio.sleep(GUESS_START_S)  # others run: most end within a round trip
        n, m = allowance.fit(nofile, *want)
        started = (not (direct is not None and direct.is_set()) and n + m > 0
                   and allowance.start(time.monotonic(), n + m, (n, m)))
    if not started:
        log.info("birthday punch toward %s: not started (%s)", remote,
                 "no open files to spare" if n + m == 0 and not allowance.running else
                 f"too few open files left by the {allowance.running} running"
                 if n + m == 0 else f"{allowance.running} running, or the cap a minute")
        return False
    files = (n, m)  # the sockets of each lane
    if part == OPENS_ONLY:
        n, m = n + m, 0
    elif part == GUESSES_ONLY:
        n, m = 0, n + m
    steps = plan(remote[1], rng or random.SystemRandom(), n, m, part if split else BOTH)
    taken = False
    made = [0, 0, 0]  # connections made, refused or failed, attempted
    key = pace.join(called, steps)
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

                left = {kind: deque(s for s in steps if lane(s) == kind)
                        for kind in ("open", "guess")}
                while True:
                    due = pace.next_due(key)
                    if due is None:
                        break
                    now = trio.current_time()
                    # its next step when due; the next tick where the pace left it behind
                    await trio.sleep_until(due if due > now
                                           else (now // pace.tick_s + 1) * pace.tick_s)
                    if direct is not None and direct.is_set():
                        nursery.cancel_scope.cancel()  # a plain punch (or a call back) made one
                        break
                    for kind, count in zip(("open", "guess"),
                                           pace.take(key, trio.current_time()), strict=True):
                        for _ in range(count):
                            if not made[2]:  # (most end before: a plain punch made one)
                                log.info("birthday punch toward %s: %d opens, %d guesses (%s)",
                                         remote, n, m, describe(part if split else BOTH))
                            made[2] += 1
                            nursery.start_soon(attempt, left[kind].popleft())
    finally:  # (also where its caller ended it: the host's side, once the joiner chose)
        pace.leave(key)
        allowance.end(time.monotonic(), n + m, made[2], files)
        if made[2]:
            log.info("birthday punch toward %s: %s (%d tried: %d made, %d refused or failed)",
                     remote, "a connection taken" if taken else "no connection", made[2],
                     made[0], made[1])
    return taken
