"""The host, sans-IO: admission, resumes, sequencing, relaying and gathering (PROTOCOL.md 4, 5.4,
7.6).

A :class:`Hosting` is told what its driver saw (a checked opening to admit, a connection
joined or closed, a frame from a seat, an envelope of its own seat) and returns effects
(:mod:`.effects`: frames to send, connections to close, records to persist). Envelopes wait in
an inbox and are sequenced one at a time by :meth:`Hosting.work`, which may be long (a shuffle
proof to check before relaying): the driver may run it in a worker thread, and asks
:meth:`Hosting.work_is_long` first. The host's liveness (drops, graces, votes, gathering) is
its :class:`~dernier_p2p.protocol.liveness.host.HostWatch`, whose actions this class carries
out.

Every record of another seat is applied by the host's own session *before* it is relayed
(``check_first``): a message every peer would refuse is retracted and answered with an error
frame instead of stopping the match. A ``move`` must also be legal in the state its head echo
names. A record whose body, once applied, proves a seat's fault is relayed as the evidence and
the match ends (:attr:`Hosting.stopped`). After a record that opens a declaration window, move
envelopes other than declarations and catches are held for ``declare_ms`` (or until every
other seat is ready). A ``pass`` frame's envelope is sequenced as its author's (5.4).

A host built with ``old`` (a seat taking over) gathers first: it accepts resumes (a seat may
hold records it lacks and forwards them), keeps the envelopes that come meanwhile, and once its
watch asks for the ``host_change`` sequences it, its own envelopes signed again after it, then
what came meanwhile.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from dernier_p2p.protocol.envelope import Author
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.frames import FRAME_FIELDS
from dernier_p2p.protocol.judge import ack_without_news
from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.liveness.budgets import Budgets
from dernier_p2p.protocol.liveness.host import HostWatch, status_frame
from dernier_p2p.protocol.node import effects as fx
from dernier_p2p.protocol.node.own import OwnSeat, long_work
from dernier_p2p.protocol.node.pacing import CHAT_BURST, CHAT_WINDOW_MS, ChatPace, Window
from dernier_p2p.protocol.node.resends import ResendBudget
from dernier_p2p.protocol.ready import check_ready_signature, ready_fields
from dernier_p2p.protocol.sequencer import Sequencer
from dernier_p2p.protocol.votes import Tally
from dernier_p2p.rules import to_act
from dernier_p2p.wire.identity import IdentityKey
from dernier_p2p.wire.version import PROTOCOL_VERSION

HOLD_FREE = frozenset({"declare", "catch"})
"""Move kinds never held by the declaration window."""
SEATED_KEY = "this key has a seat: resume"
"""The detail of the UNKNOWN_KEY refusal of a ``hello`` whose key has a seat in the running
match (the client should resume instead, PROTOCOL.md 4.4)."""
HOST_SEAT = 0
VOTE_BODIES = frozenset({"timeout", "left", "no_contest"})
"""Host bodies carrying votes, which may go stale between the tally and their turn."""


class Refusal(Exception):
    """An opening the host refuses: ``code`` and ``detail`` for the ``error`` frame."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code, self.detail = code, detail


@dataclass
class Player:
    name: str
    key: bytes
    listen: tuple[str, int] | None

    def body(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "key": self.key,
            "listen": None if self.listen is None else list(self.listen),
        }


SIDE_PER_COUNTER = 4
"""The most envelopes of one author at one counter the side file takes (21.1)."""
SIDE_AHEAD = 64
"""How far past its author's next counter an envelope the side file takes may be."""


@dataclass
class HostingConfig:
    """How to run a table (the pure part of a host's settings)."""

    players: int
    variant: str = "dernier"
    options: dict[str, Any] = field(default_factory=dict)
    timers: dict[str, int] = field(
        default_factory=lambda: {"turn_ms": 30_000, "declare_ms": 1_000, "grace_ms": 15_000})
    game: bytes = b"\x00" * 16
    seed: bytes = b"\x00" * 32
    max_errors: int = 5
    inbox_per_seat: int = 64
    check_first: bool = True
    constants: dict[str, int] = field(default_factory=dict)


@dataclass
class SeatConn:
    """A seat's connection as the host keeps it."""

    seat: int
    have: int = -1
    errors: int = 0
    waiting: int = 0  # its envelopes in the inbox
    forwarding: int = 0  # records it still forwards (a new host gathering)
    after: int = -1  # the last record index it forwarded (or was told the host holds)
    closing: bool = False


class Hosting:
    """A running table (see the module docstring). ``watch_cls`` is its liveness machine (a
    test or a simulated strategy may subclass it)."""

    watch_cls: type[HostWatch] = HostWatch

    def __init__(
        self,
        identity: IdentityKey,
        config: HostingConfig,
        now: int,
        *,
        own: OwnSeat | None = None,
        old: int | None = None,
        tally: Tally | None = None,
        wall_offset: int = 0,
    ) -> None:
        if not 2 <= config.players <= 10:
            raise ValueError("a table has 2 to 10 players")
        self.identity = identity
        self.config = config
        self.wall_offset = wall_offset
        self.players: dict[int, Player] = {}
        self.conns: dict[int, SeatConn] = {}
        self.watchers: dict[int, int] = {}  # watcher id -> its next record index
        self.own = own
        self.full = own is not None
        self.done = False
        self.stopped: ProtocolError | None = None
        self.faults: list[tuple[int, str, str]] = []
        self.left: set[int] = set()
        self.inbox: deque[tuple[str, int, Any, bool]] = deque()
        self.held: deque[tuple[int, Any]] = deque()
        self.early: list[tuple[int, Any]] = []
        self.confirmed: dict[int, int] = {}
        self._ready_at: dict[int, int] = {}
        self.chat_paces: dict[int, ChatPace] = {}
        self.resends: dict[int | str, ResendBudget] = {}  # seat or watcher address (4.9)
        self._kept: dict[tuple[int, int], int] = {}  # (author, n) -> envelopes in the side file
        self.window = Window(config.timers["declare_ms"])
        self._window_at = -1
        self._own_said = -1
        self._owes: tuple[int, ...] = ()
        self.out: list[Any] = []
        self.asked: list[act.Action] = []  # what the watch asked of the node, not yet taken
        self.watch: HostWatch | None = None
        self.sequencer: Sequencer | None = None
        self.old = old
        self.stepped_back = False
        self._now = now
        self.budgets = Budgets.of_table(config.timers, **config.constants)
        if own is None:
            self.seat = HOST_SEAT
            self.game = config.game
            self.sequencer = Sequencer(identity, self.game, HOST_SEAT)
        else:
            session = own.session
            self.seat = own.seat
            self.game = session.game
            for seat, p in enumerate(session.table_body["players"]):
                listen = None if p["listen"] is None else (p["listen"][0], p["listen"][1])
                self.players[seat] = Player(p["name"], p["key"], listen)
            self.left = set(range(config.players)) - set(session.chain.at_table)
            if old is None:  # a host rebuilt from its records (not gathering)
                self.sequencer = Sequencer(identity, self.game, self.seat, records=own.records)
            self._watch(now, tally)

    def _watch(self, now: int, tally: Tally | None = None) -> None:
        assert self.own is not None
        from dernier_p2p.rules.cards import deck_cards

        cards = len(deck_cards(self.own.session.rules.deck))
        self.watch = self.watch_cls(self.own.session, self.budgets, self.holding, cards, now,
                                    old=self.old, tally=tally, records=self.own.records)
        for seat in self.players:
            if seat != self.seat and seat not in self.left and self.full:
                self.watch.up.setdefault(seat, False)

    # ------------------------------------------------------------------ queries
    @property
    def records(self) -> list[dict[str, Any]]:
        return [] if self.own is None else self.own.records

    @property
    def gathering(self) -> bool:
        return self.old is not None

    def take(self) -> list[Any]:
        """The effects produced since the last call, in order."""
        out, self.out = self.out, []
        return out

    def summary(self, table_name: str) -> dict[str, Any]:
        """The table summary of a ``challenge`` (4.2)."""
        return {
            "name": table_name,
            "variant": self.config.variant,
            "players": self.config.players,
            "taken": len(self.players),
            "key": self.identity.public_bytes(),
        }

    def holding(self, seat: int) -> bool:
        """Whether an envelope of ``seat`` waits here (inbox, held or gathered)."""
        return any(s == seat and kind == "env" for kind, s, _, _ in self.inbox) or any(
            s == seat for s, _ in self.held) or any(s == seat for s, _ in self.early)

    def may_read(self, seat: int) -> bool:
        """Whether ``seat``'s connection may be read (backpressure, 4.9)."""
        conn = self.conns.get(seat)
        return conn is None or conn.waiting < self.config.inbox_per_seat

    def all_done(self) -> bool:
        """Whether every other seat at the table has said ``done`` for the last record."""
        assert self.own is not None
        last = len(self.records) - 1
        seats = set(self.own.session.chain.at_table) - {self.seat}
        return all(self.confirmed.get(s, -2) >= last for s in seats)

    def away(self, now: int) -> list[tuple[int, int]]:
        """The seats dropped now, with their grace left."""
        if self.watch is None:
            return []
        return [(s, self.watch.grace_left(s, now)) for s in self.watch.drops.seats]

    # ------------------------------------------------------------------ lobby and resumes
    def admit(self, kind: str, key: bytes, name: str = "", listen: Any = None,
              have: int = -1, now: int | None = None) -> tuple[int, int | None]:
        """The seat for a checked opening (``kind`` "hello" or "resume") and, for a resume,
        the index it holds; :class:`Refusal` otherwise (4.2, 4.4; a resume past the seat's
        budget of records sent again, 4.9, when ``now`` is given)."""
        if kind == "resume":
            for seat, p in self.players.items():
                if p.key == key and self.full and seat != self.seat:
                    if seat in self.left:
                        raise Refusal("UNKNOWN_KEY", f"seat {seat} has left the table")
                    if have >= len(self.records) and not self.gathering:
                        raise Refusal("UNEXPECTED", "resume beyond this host's last record: "
                                      "resume with have -1")
                    if now is not None:
                        self.resend_check(seat, have, now)
                    return seat, have
            raise Refusal("UNKNOWN_KEY", "no seat of this game has that key")
        if any(p.key == key for p in self.players.values()):
            if self.full:
                raise Refusal("UNKNOWN_KEY", SEATED_KEY)
            raise Refusal("DUPLICATE_KEY", "that identity key already has a seat")
        if self.full or len(self.players) >= self.config.players:
            raise Refusal("TABLE_FULL", f"all {self.config.players} seats are taken")
        seat = min(s for s in range(self.config.players) if s not in self.players)
        self.players[seat] = Player(name, key, listen)
        return seat, None

    def resend_check(self, who: int | str, have: int, now: int) -> None:
        """Take the records after ``have`` from the budget of ``who`` (a seat, or a watcher's
        source address) or refuse the opening: **UNEXPECTED** "resumed too often" (4.9)."""
        cost = len(self.records) - 1 - have
        budget = self.resends.setdefault(who, ResendBudget())
        if not budget.take(cost, len(self.records), now):
            raise Refusal("UNEXPECTED", f"resumed too often: {cost} records to send again, "
                          f"try in {budget.wait_s(cost, len(self.records)):.0f} s")

    def set_own_player(self, name: str, key: bytes, listen: tuple[str, int] | None) -> None:
        """The host's own seat (seat 0) in the lobby."""
        self.players[HOST_SEAT] = Player(name, key, listen)

    def joined(self, seat: int, have: int | None, now: int) -> bool:
        """Seat ``seat`` connected (after :meth:`admit`): its welcome and, for a resume, the
        records after ``have`` and who is away. Returns whether the table is now full (the
        driver then starts the match)."""
        self._now = now
        self.conns.pop(seat, None)  # a connection it replaces: the driver has closed it
        conn = SeatConn(seat, -1 if have is None else have)
        self.conns[seat] = conn
        welcome: dict[str, Any] = {"k": "welcome", "seat": seat}
        last = len(self.records) - 1
        if have is not None:
            welcome["last"] = last
        self._send(seat, welcome)
        if have is None:
            if len(self.players) == self.config.players:
                self.full = True
            return self.full
        for rec in self.records[have + 1 :]:
            self._send(seat, {"k": "rec", "rec": rec})
        if self.watch is not None:
            for other, grace in self.away(now):
                if other != seat:
                    self._send(seat, status_frame(other, "dropped", grace))
        if have > last:
            conn.forwarding = have - last
            conn.after = last
            if self.watch is not None:
                self.watch.forwarding_from(seat, True)
        self.out.append(fx.Log("info", f"seat {seat} resumed after record {have}"))
        if self.watch is not None:
            self.watch.seat_up(seat, now)
            self._liveness(now)
        return False

    def closed(self, seat: int, now: int) -> None:
        """Seat ``seat``'s connection is gone."""
        conn = self.conns.pop(seat, None)
        if conn is None:
            return
        if not self.full:
            self.players.pop(seat, None)  # a lobby seat is simply freed
            return
        self._now = now
        if self.watch is not None and seat not in self.left:
            if not (self.done and self.confirmed.get(seat, -2) >= len(self.records) - 1):
                self.watch.seat_down(seat, now)
                self._liveness(now)

    def watcher(self, number: int, have: int, now: int) -> None:
        """Watcher ``number`` (4.10) opened with ``have``: ``watching``, the records after it
        and who is away (the driver checked the caps and ``have``)."""
        self.watchers[number] = have + 1
        self._send(-number, {"k": "watching", "last": len(self.records) - 1})
        for rec in self.records[have + 1 :]:
            self._to_watcher(number, rec)
        for other, grace in self.away(now):
            self._send(-number, status_frame(other, "dropped", grace))
        if self.done:
            self.out.append(fx.Close(-number, "the match is over"))

    def watcher_gone(self, number: int) -> None:
        self.watchers.pop(number, None)

    # ------------------------------------------------------------------ the match
    def start_match(self, now: int, seed: bytes) -> None:
        """The table is full: sequence record 0 (the host's own seat's table) and start."""
        cfg = self.config
        body = {
            "type": "table",
            "version": PROTOCOL_VERSION,
            "variant": cfg.variant,
            "options": dict(cfg.options),
            "players": [self.players[s].body() for s in range(cfg.players)],
            "timers": dict(cfg.timers),
        }
        assert self.sequencer is not None
        env = OwnSeat.table_envelope(self.identity, self.game, HOST_SEAT, body)
        self._now = now
        rec = self.sequencer.submit(env, HOST_SEAT, self._t(now))
        self.own = OwnSeat(self.identity, HOST_SEAT, rec, seed)
        self.full = True
        self.out.append(fx.Persist(rec))
        self._relay(rec)
        self._watch(now)
        assert self.watch is not None
        for seat in self.players:
            if seat == self.seat:
                continue
            if seat in self.conns:
                self.watch.seat_up(seat, now)
            else:
                self.watch.seat_down(seat, now)
        for env in self.own.start():
            self.own_env(env)

    def own_env(self, env: dict[str, Any]) -> None:
        """An envelope of the host's own seat: sequenced past the declaration hold (while
        gathering, kept: it is signed again after the ``host_change``)."""
        if self.gathering:
            assert self.own is not None
            self.own.sent(env)
            return
        self.inbox.append(("env", self.seat, env, True))

    def own_ready(self, frame: dict[str, Any]) -> None:
        """The host's own seat is ready (18.1): its frame to every connection."""
        self._own_said = max(self._own_said, frame["at"])
        for seat in self.conns:
            self._send(seat, frame)

    def frame(self, seat: int, msg: dict[str, Any], now: int) -> None:
        """A frame from seat ``seat``'s connection (decoded, its kind a string)."""
        self._now = now
        conn = self.conns.get(seat)
        if conn is None or conn.closing:
            return
        if self.watch is not None:
            self.watch.heard(seat, now)
        kind = msg["k"]
        if conn.forwarding > 0:
            self._forwarded(conn, msg)
            return
        if kind == "error":
            code, detail = str(msg.get("code"))[:64], str(msg.get("detail"))[:200]
            shown = "".join(c if c.isprintable() else "?" for c in f"{code}: {detail}")
            self.out.append(fx.Log("warning", f"seat {seat} reports {shown}"))
        elif kind == "beat":
            if set(msg) != FRAME_FIELDS["beat"]:
                self._fault(seat, "MALFORMED", "a beat has no field", now)
        elif kind == "vote" and self.full and self.watch is not None:
            refusal = self.watch.vote(seat, msg)
            if refusal is not None:
                self._fault(seat, refusal.code, refusal.detail, now)
            self._liveness(now)
        elif kind == "ready" and self.own is not None:
            self._on_ready(seat, msg, now)
        elif kind == "done":
            last = msg.get("last")
            if set(msg) != FRAME_FIELDS["done"] or not isinstance(last, int) \
                    or isinstance(last, bool):
                self._fault(seat, "MALFORMED", "a done frame is {k, last}", now)
            else:
                self.confirmed[seat] = last
        elif kind == "pass" and self.own is not None:
            self._on_pass(seat, msg, now)
        elif kind != "env":
            self._fault(seat, "UNEXPECTED", f"unexpected frame {kind!r}", now)
        elif set(msg) != FRAME_FIELDS["env"]:
            self._fault(seat, "MALFORMED", "an env frame is {k, env}", now)
        elif not self.gathering and self.own is None:
            self._fault(seat, "UNEXPECTED", "the match has not started", now)
        else:
            conn.waiting += 1
            self._keep(seat, msg["env"])
            if self.gathering:
                self.early.append((seat, msg["env"]))
            else:
                self.inbox.append(("env", seat, msg["env"], False))

    def _on_pass(self, seat: int, msg: dict[str, Any], now: int) -> None:
        """A ``pass`` frame: another seat's envelope, sequenced as its author's (5.4)."""
        assert self.own is not None
        env = msg.get("env")
        if set(msg) != FRAME_FIELDS["pass"] or not isinstance(env, dict):
            self._fault(seat, "MALFORMED", "a pass frame is {k, env}", now)
            return
        author, n = env.get("seat"), env.get("n")
        if not isinstance(author, int) or isinstance(author, bool) or not isinstance(n, int):
            self._count_error(seat, "MALFORMED", "a passed envelope without seat and counter",
                              now)
            return
        chain = self.own.session.chain
        if author == seat or not 0 <= author < self.own.session.n:
            self._count_error(seat, "WRONG_SEAT", "a passed envelope of the passer itself",
                              now)
            return
        if author == self.seat:  # its own: it holds them, and a new host signs again those
            return  # the old host never sequenced (7.6); an old copy may no longer be legal
        first = chain.next_counter(author)
        if n < first or self._queued(author, n):
            return  # held already, or sequenced: nothing to do
        waiting = self._counters(author)  # (after its author's envelopes waiting here,
        lead = n - first  # passed on in order before it)
        if lead > len(waiting) or any(k not in waiting for k in range(first, n)):
            lead = 0
        try:
            chain.check_envelope(env, author, lead)
        except ProtocolError as exc:
            self._count_error(seat, exc.code, f"passed envelope: {exc.detail}", now)
            return
        self._keep(author, env)
        self.out.append(fx.Log("info", f"seat {seat} passes on envelope {n} of seat {author}"))
        if self.gathering:
            self.early.append((author, env))
        else:
            self.inbox.append(("env", author, env, False))

    def _keep(self, author: int, env: Any) -> None:
        """Write ``env`` to the envelope side file (21.1) within its budget: an envelope of
        ``author`` signed by it for this game, at a counter from its next one to
        ``SIDE_AHEAD`` past it, at most ``SIDE_PER_COUNTER`` different ones per counter. What
        fails those proves nothing of its author, and a seat cannot fill the host's disk by
        sending the same counter again and again."""
        if self.own is None:
            return
        chain = self.own.session.chain
        if not chain.signed_by(env, author):
            return
        first = chain.next_counter(author)
        n = env["n"]
        if not first <= n < first + SIDE_AHEAD:
            return
        for key in [k for k in self._kept if k[0] == author and k[1] < first]:
            del self._kept[key]
        count = self._kept.get((author, n), 0)
        if count >= SIDE_PER_COUNTER:
            return
        self._kept[(author, n)] = count + 1
        self.out.append(fx.Keep(env))

    def _counters(self, author: int) -> set[int]:
        """The counters of ``author``'s envelopes waiting here (inbox, held or gathered)."""
        items = [e for kind, s, e, _ in self.inbox if kind == "env" and s == author]
        items += [e for s, e in self.held if s == author]
        items += [e for s, e in self.early if s == author]
        return {e["n"] for e in items if isinstance(e, dict) and isinstance(e.get("n"), int)}

    def _queued(self, author: int, n: int) -> bool:
        def same(s: int, env: Any) -> bool:
            return s == author and isinstance(env, dict) and env.get("n") == n

        return any(same(s, e) for kind, s, e, _ in self.inbox if kind == "env") or any(
            same(s, e) for s, e in self.held) or any(same(s, e) for s, e in self.early)

    def _on_ready(self, seat: int, msg: dict[str, Any], now: int) -> None:
        """A ``ready`` frame (18.1): checked, kept for the host's own seat and relayed to every
        other connection, once per window (a repeat is dropped before its signature is
        checked)."""
        assert self.own is not None
        session = self.own.session
        try:
            author, at = ready_fields(msg, session.n)
            if author != seat:
                raise ProtocolError("WRONG_SEAT", seat,
                                    f"a ready frame of seat {author} from seat {seat}")
            if not self._ready_at.get(seat, -1) < at < len(self.records):
                return
            check_ready_signature(msg, session.keys, session.game)
        except ProtocolError as exc:
            self._fault(seat, exc.code, exc.detail, now)
            return
        self._ready_at[seat] = at
        self.out.append(fx.Ready(seat, at))
        for other in self.conns:
            if other != seat:
                self._send(other, msg)

    def _forwarded(self, conn: SeatConn, msg: dict[str, Any]) -> None:
        """While gathering: a record the resuming seat holds and this new host lacks."""
        rec = msg.get("rec") if msg["k"] == "rec" else None
        if not self.gathering:
            self._stop_forwarding(conn, "UNEXPECTED", "records forwarded after the host change")
            return
        if not isinstance(rec, dict) or not isinstance(rec.get("i"), int):
            self._stop_forwarding(conn, "UNEXPECTED", "expected a forwarded record")
            return
        if rec["i"] <= conn.after:  # (a seat claiming more records than it holds could
            # forward the same one until the gathering gave up, and no host change came)
            self._stop_forwarding(conn, "UNEXPECTED", "forwarded records out of order")
            return
        conn.after = rec["i"]
        conn.forwarding -= 1
        self.inbox.append(("fwd", conn.seat, rec, True))

    def _stop_forwarding(self, conn: SeatConn, code: str, detail: str) -> None:
        conn.forwarding = 0
        if self.watch is not None:
            self.watch.forwarding_from(conn.seat, False)
        self._fault(conn.seat, code, detail, 0)

    # ------------------------------------------------------------------ work
    def has_work(self) -> bool:
        """Whether :meth:`work` has something to do now."""
        if self.done or self.own is None:
            return False
        if self.gathering:
            return any(kind == "fwd" for kind, *_ in self.inbox)
        return bool(self.inbox)

    def work_is_long(self) -> bool:
        """Whether the next :meth:`work` may take long (a shuffle to check or to compute)."""
        if self.own is None:
            return False
        for kind, _, item, _ in self.inbox:
            if self.gathering and kind != "fwd":
                continue
            if kind == "fwd":
                return bool(long_work(self.own.session, item))
            body = item.get("body") if isinstance(item, dict) else None
            return isinstance(body, dict) and body.get("type") in ("shuffle", "key_reveal")
        return False

    def work(self, now: int) -> None:
        """Sequence (or, gathering, apply a forwarded record) the next item of the inbox."""
        self._now = now
        if not self.has_work():
            return
        if self.gathering:
            for k, item in enumerate(self.inbox):
                if item[0] == "fwd":
                    del self.inbox[k]
                    self._apply_forwarded(item[1], item[2], now)
                    conn = self.conns.get(item[1])
                    more = any(i[0] == "fwd" and i[1] == item[1] for i in self.inbox)
                    if self.watch is not None and not more and (
                            conn is None or conn.forwarding == 0):
                        self.watch.forwarding_from(item[1], False)
                    return
            return
        kind, seat, env, unheld = self.inbox.popleft()
        if not unheld and self._must_hold(seat, env, now):
            self.held.append((seat, env))
            return
        conn = self.conns.get(seat) if seat != self.seat else None
        if conn is not None and conn.waiting > 0:
            conn.waiting -= 1
        self._sequence_guarded(seat, env, now)

    def _apply_forwarded(self, seat: int, rec: dict[str, Any], now: int) -> None:
        assert self.own is not None
        if rec["i"] < len(self.records):
            return  # another seat forwarded it first
        try:
            out = self.own.apply(rec, now)
        except ProtocolError as exc:
            self._fault(seat, exc.code, f"forwarded record {rec['i']}: {exc.detail}", now)
            return
        self.out.append(fx.Persist(rec))
        for env in out:
            self.own.sent(env)  # signed again after the host change
        for other in self.conns.values():
            if other.have < rec["i"]:  # not to a seat that holds it (one forwarding too)
                self._send(other.seat, {"k": "rec", "rec": rec})
        for number in list(self.watchers):
            self._to_watcher(number, rec)
        if self.watch is not None:
            self.watch.record(rec, now)

    def _must_hold(self, seat: int, env: Any, now: int) -> bool:
        if any(s == seat for s, _ in self.held):
            return True  # keep one author's envelopes in order
        if not self.window.is_open(now):
            return False
        body = env.get("body") if isinstance(env, dict) else None
        return (isinstance(body, dict) and body.get("type") == "move"
                and body.get("move") not in HOLD_FREE)

    def _everyone_ready(self) -> bool:
        """Every seat but the one to act has said ``ready`` for the record that opened the
        declaration window (18.1): the window closes early."""
        assert self.own is not None
        state = self.own.session.state
        if state is None:
            return False
        turn = to_act(state)
        for seat in self.own.others_at_table() + [self.seat]:
            said = self._own_said if seat == self.seat else self._ready_at.get(seat, -1)
            if seat != turn and said < self._window_at:
                return False
        return True

    def release(self, now: int) -> None:
        """Close the declaration window once every seat but the one to act is ready, and let
        held envelopes go once it is closed."""
        self._now = now
        if self.window.until is not None and self.own is not None and self._everyone_ready():
            self.window.close()
        released = []
        while self.held and not self.window.is_open(now):
            seat, env = self.held.popleft()
            released.append(("env", seat, env, True))
        self.inbox.extendleft(reversed(released))  # first, in the order they were held

    def _sequence_guarded(self, seat: int, env: Any, now: int) -> None:
        """:meth:`_sequence` behind the firewall: an unexpected exception while checking
        another seat's envelope is that seat's fault (MALFORMED), never the host's end."""
        before = None if self.sequencer is None else len(self.sequencer.records)
        try:
            self._sequence(seat, env, now)
        except Exception as exc:
            if seat == self.seat or isinstance(exc, ProtocolError):
                raise
            self.out.append(fx.Log("error", f"internal fault on seat {seat}'s envelope: "
                                   f"{type(exc).__name__}: {exc}"))
            if self.sequencer is not None and len(self.sequencer.records) != before:
                self._retract()
            self._fault(seat, "MALFORMED",
                        f"envelope could not be handled: {type(exc).__name__}", now)

    def _t(self, now: int) -> int:
        return max(0, now + self.wall_offset)

    def vet(self, seat: int, env: Any) -> None:
        """Checks of the rules the sequencer does not make, before sequencing; raises
        ProtocolError naming ``seat``. A ``move`` must be legal in the state its head echo
        names; a play's face is not known yet, so some face must make it legal."""
        assert self.own is not None and self.sequencer is not None
        chain = self.sequencer.chain
        if chain is None:
            return
        env = chain.check_envelope(env, seat)
        body = env["body"]
        session = self.own.session
        head_i = session.chain.index_of(env["head"])
        if body["type"] != "move" or head_i is None or session.finished:
            return
        if body["move"] == "play" and not session.held_at(head_i, seat, body["slot"]):
            raise ProtocolError("NOT_HELD", seat, f"seat {seat} held no slot {body['slot']}")
        if not session.legal_at(head_i, seat, body):
            raise ProtocolError("ILLEGAL_MOVE", seat, "not a legal move at the head it echoes")

    def _sequence(self, seat: int, env: Any, now: int) -> None:
        if self.done:
            return
        assert self.sequencer is not None and self.own is not None
        try:
            if seat != self.seat:
                self.vet(seat, env)
                if self._chat_too_soon(seat, env, now):
                    why = f"chat too often: at most {CHAT_BURST} lines in " \
                          f"{CHAT_WINDOW_MS // 1000} s"
                    self._fault(seat, "UNEXPECTED", why, now)
                    return
                if self._ack_without_news(seat, env):
                    self._fault(seat, "UNEXPECTED", "ack with nothing new: no record of "
                                "another seat since the head it last echoed", now)
                    return
            rec = self.sequencer.submit(env, seat, self._t(now))
        except ProtocolError as exc:
            body = env.get("body") if isinstance(env, dict) else None
            if seat != self.seat or not isinstance(body, dict) or \
                    body.get("type") not in VOTE_BODIES:
                self._fault(seat, exc.code, exc.detail, now)
                return
            # its own vote record, stale by now (a record of its target came between the
            # tally and this turn): an ack takes its counter, so the next ones still follow
            self.out.append(fx.Log("warning", f"own {body['type']} dropped: {exc.detail}"))
            filler = Author(self.identity, self.game, self.seat, env["n"]).envelope(
                {"type": "ack"}, self.own.session.head)
            rec = self.sequencer.submit(filler, seat, self._t(now))
        if seat == self.seat or not self.config.check_first:
            self._publish(rec, None, now)
            return
        try:
            out = self.own.apply(rec, now, keep_evidence=False)
        except ProtocolError as exc:
            if self.own.session.fault is None:  # refused, nothing changed: the match goes on
                self._retract()
                self._fault(seat, exc.code, exc.detail, now)
                return
            if not self.own.keep(rec, exc):
                raise
            self.out.append(fx.Persist(rec))
            self._relay(rec)
            self._stop(exc)
            return
        self._publish(rec, out, now)

    def _ack_without_news(self, seat: int, env: dict[str, Any]) -> bool:
        """An ``ack`` of ``seat`` echoing nothing new (4.9, :func:`~.judge.ack_without_news`):
        an ack shows which history its author holds; its pace is the table's progress, not
        the author's wish (an honest client acks only after such news)."""
        assert self.own is not None
        return ack_without_news(self.own.session.chain, env)

    def _chat_too_soon(self, seat: int, env: Any, now: int) -> bool:
        body = env.get("body") if isinstance(env, dict) else None
        if not isinstance(body, dict) or body.get("type") != "chat":
            return False
        pace = self.chat_paces.setdefault(seat, ChatPace())
        if pace.delay(now) > 0:
            return True
        pace.note(now)
        return False

    def _publish(self, rec: dict[str, Any], out: list[dict[str, Any]] | None, now: int) -> None:
        """Relay a record, apply it to the host's session (unless ``out``, its envelopes, says
        it is applied already) and run the timers."""
        assert self.own is not None
        self._relay(rec)
        if out is None:
            try:
                out = self.own.apply(rec, now)
            except ProtocolError as exc:
                if exc.evidence != rec["i"] or self.own.evidence is not rec:
                    raise
                self.out.append(fx.Persist(rec))
                self._stop(exc)
                return
        self.out.append(fx.Persist(rec))
        for env in out:
            self.own_env(env)
        body = rec["env"]["body"]
        gone = {"left": body.get("seat"), "resign": rec["env"]["seat"]}.get(body["type"])
        if gone is not None:
            self.left.add(gone)
        if self.watch is not None:
            self.watch.record(rec, now)
        self._after_record(rec, now)

    def _relay(self, rec: dict[str, Any]) -> None:
        frame = {"k": "rec", "rec": rec}
        for seat in self.conns:
            out = self.relay_to(seat, rec)
            if out is rec:
                self._send(seat, frame)
            elif out is not None:
                self._send(seat, {"k": "rec", "rec": out})
        for number in list(self.watchers):
            self._to_watcher(number, rec, frame)

    def relay_to(self, seat: int, rec: dict[str, Any]) -> dict[str, Any] | None:
        """The record as sent to ``seat``, None to send nothing (a test subclass tampers
        here)."""
        return rec

    def _to_watcher(self, number: int, rec: dict[str, Any],
                    frame: dict[str, Any] | None = None) -> None:
        if rec["i"] < self.watchers.get(number, 2**63):
            return
        self.watchers[number] = rec["i"] + 1
        self._send(-number, frame if frame is not None else {"k": "rec", "rec": rec})

    def _after_record(self, rec: dict[str, Any], now: int) -> None:
        assert self.own is not None
        session = self.own.session
        if self.own.final:
            self.done = True
            return
        if self.own.finished:
            return  # the seats' acks of the end are still sequenced (7.11)
        owes = tuple(session.state.owes) if session.state is not None else ()
        if owes and any(s not in self._owes for s in owes):
            self.window.open(now)
            self._window_at = rec["i"]
        elif not owes:
            self.window.close()
        self._owes = owes

    def _stop(self, exc: ProtocolError) -> None:
        """End the match on a fault whose evidence (record ``exc.evidence``) is relayed."""
        self.out.append(fx.Log("error", f"the match stops at record {exc.evidence}: {exc}"))
        self.stopped = exc
        self.done = True
        self.out.append(fx.Stopped(exc))

    def _retract(self) -> None:
        """Forget the last record (refused by the host's session, never relayed)."""
        assert self.sequencer is not None
        records = self.sequencer.records[:-1]
        self.sequencer = Sequencer(self.identity, self.game, self.seat, records=records)

    def host_body(self, body: dict[str, Any]) -> None:
        """Sequence a host-authored body (timeout, left, no_contest)."""
        assert self.own is not None
        self.own_env(self.own.session.announce(body))

    # ------------------------------------------------------------------ faults
    def _fault(self, seat: int, code: str, detail: str, now: int, close: bool = False) -> None:
        """Tell ``seat`` its message was refused; close its connection after max_errors."""
        if seat == self.seat:
            self.faults.append((seat, code, detail))
            self.out.append(fx.Log("error", f"own envelope refused: {code}: {detail}"))
            if self.own is not None:
                for env in self.own.refused(code, detail):
                    self.own_env(env)
                for told in self.own.told:
                    self.out.append(fx.Refused(*told))
                self.own.told.clear()
            return
        conn = self.conns.get(seat)
        if conn is None or conn.closing:
            return
        self.faults.append((seat, code, detail))
        self._send(seat, {"k": "error", "code": code[:64], "detail": detail[:1000]})
        self._count_error(seat, code, detail, now, told=True)
        if close and not conn.closing:
            conn.closing = True
            self.out.append(fx.Close(seat, f"{code}: {detail}"))

    def _count_error(self, seat: int, code: str, detail: str, now: int,
                     told: bool = False) -> None:
        conn = self.conns.get(seat)
        if conn is None or conn.closing:
            return
        conn.errors += 1
        if not told:
            self.faults.append((seat, code, detail))
        self.out.append(fx.Log("warning", f"seat {seat} refused ({conn.errors}): "
                               f"{code}: {detail}"))
        if conn.errors >= self.config.max_errors:
            conn.closing = True
            self.out.append(fx.Close(seat, f"{conn.errors} refused messages"))

    def _send(self, conn: int, frame: dict[str, Any]) -> None:
        self.out.append(fx.Send(conn, frame))

    # ------------------------------------------------------------------ liveness
    def advance(self, now: int) -> list[act.Action]:
        """Run the host's liveness at ``now`` and carry out what it asks; the actions this
        class does not carry out itself (a step back, a look for another host, notes), with
        those its rules asked for while it took a frame or a connection (:meth:`take_asked`)."""
        self._now = now
        self._liveness(now)
        return self.take_asked()

    def take_asked(self) -> list[act.Action]:
        """The actions the host's rules asked of the node and this class does not carry out
        itself, in order, since the last call: the rules also run when a frame, a resume or a
        close comes (a vote may complete a quorum), and a step back asked then is the node's
        to carry out as much as one asked at a deadline."""
        out, self.asked = self.asked, []
        return out

    def _liveness(self, now: int) -> None:
        if self.watch is None:
            return
        rest = self.asked
        for a in self.watch.advance(now):
            if isinstance(a, act.ToSeat):
                self._send(a.seat, a.frame)
            elif isinstance(a, act.Broadcast):
                for seat in self.conns:
                    if seat != a.skip:
                        self._send(seat, a.frame)
                for number in self.watchers:
                    self._send(-number, a.frame)
                if a.kind in ("dropped", "back") and a.skip is not None:
                    self.out.append(fx.Status(a.skip, a.kind, a.frame["grace_ms"]))
            elif isinstance(a, act.CloseSeat):
                conn = self.conns.get(a.seat)
                if conn is not None:
                    conn.closing = True
                self.out.append(fx.Close(a.seat, a.why, now=True))
            elif isinstance(a, act.Sequence):
                if a.kind == "host_change":
                    self._changed(a.body, now)
                else:
                    self.out.append(fx.Log("warning", f"a quorum votes {a.kind} "
                                           f"about seat {a.body.get('seat')}"))
                    self.host_body(a.body)
            elif isinstance(a, act.StepBack):
                self._step_back()
                rest.append(a)
            else:
                rest.append(a)

    def _changed(self, body: dict[str, Any], now: int) -> None:
        """The watch holds a quorum: sequence the ``host_change`` and what came meanwhile."""
        assert self.own is not None and self.old is not None
        assert not any(kind == "fwd" for kind, *_ in self.inbox)
        old = self.old
        self.sequencer = Sequencer(self.identity, self.game, self.seat, records=self.records)
        self.out.append(fx.Log("warning", f"seat {self.seat} takes over from host {old} at "
                               f"record {len(self.records)}"))
        if self.own.replaying is not None:  # restarted from its transcript: what it owed then
            for env in self.own.finish_restore():
                self.own.sent(env)
        self.old = None
        for env in self.own.take_over(old, body["votes"]):  # host_change first
            self.own_env(env)
        held = {(r["env"]["seat"], r["env"]["n"]): r["env"] for r in self.records[1:]}
        for seat, env in self.early:
            if isinstance(env, dict) and held.get((seat, env.get("n"))) == env:
                # sent again on resuming, before the record another seat forwarded here
                # reached it (PROTOCOL.md 4.4): nothing to refuse
                conn = self.conns.get(seat)
                if conn is not None and conn.waiting > 0:
                    conn.waiting -= 1
                continue
            self.inbox.append(("env", seat, env, False))
        self.early = []
        assert self.watch is not None
        others = set(self.own.session.chain.at_table) - {self.seat}
        for seat in sorted(others - set(self.conns)):
            self.watch.seat_down(seat, now)  # the old host too: it may come back (7.6)

    def _step_back(self) -> None:
        """No quorum came: stop hosting; nothing was sequenced."""
        self.stepped_back = True
        self.done = True
        for seat in list(self.conns):
            self.out.append(fx.Close(seat, "this seat does not host after all", now=True))
        for number in list(self.watchers):
            self.out.append(fx.Close(-number, "this seat does not host after all", now=True))
        self.conns.clear()
        self.watchers.clear()

    def deadline(self) -> int | None:
        times = []
        if self.watch is not None:
            times.append(self.watch.deadline())
        if self.held and self.window.until is not None:
            times.append(self.window.until)
        found = [t for t in times if t is not None]
        return min(found) if found else None
