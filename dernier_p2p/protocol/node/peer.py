"""One peer of a table, sans-IO: its seat, its liveness and, when it hosts, its host.

A :class:`PeerNode` is the whole of a peer but its sockets, threads, agent and files: the
driver (:mod:`dernier_p2p.net`, or the simulator) tells it what happened, always with the time
(a connection to its host welcomed or closed, a frame on any connection, a probe's answer, a
vote over a link, an envelope of its own player), calls :meth:`PeerNode.work` while
:meth:`PeerNode.has_work` (one record to apply, or one envelope to sequence, at a time; the
driver may run it in a worker thread when :meth:`PeerNode.work_is_long`), and
:meth:`PeerNode.advance` for the rules due, then carries out :meth:`PeerNode.take` (effects of
:mod:`.effects` and the liveness actions a driver performs: :class:`Dial`, :class:`Probe`,
:class:`Urge`, :class:`Note`, :class:`End`) and sleeps until :meth:`PeerNode.deadline`.

As a seat it applies the host's records in order, sends its envelopes in counter order (again
after a resume), forwards to a new host the records it lacks (4.4), rebuilds from a new host's
records when its chain diverged after a host change or it was the host before a crash, and
echoes the head with an ``ack`` when idle. Records that other seats lend it over links, or
show as the proof of a fault of the host (4.6), it checks as the host's when they are the next
record or a second record for an index it holds, signed by the seat that signs that index
(:meth:`PeerNode.from_link`); anything else from a link is ignored. A seat that stops on a
record of the host that proves a fault keeps that record in its transcript, shows the proof in
its ``present`` answers and lends it at once to the other seats (:attr:`PeerNode.proof`).
Its :class:`~..liveness.seat.SeatWatch` decides votes, probes, lends, failover and take-over;
on ``TakeOver`` the node starts a :class:`~.hosting.Hosting` in gathering mode, which is its
host from then on (or steps back).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from dernier_p2p.protocol import finality
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.frames import FRAME_FIELDS
from dernier_p2p.protocol.judge import would_sequence
from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.liveness.budgets import Budgets
from dernier_p2p.protocol.liveness.seat import HOSTED, SeatWatch
from dernier_p2p.protocol.liveness.table import rule
from dernier_p2p.protocol.node import effects as fx
from dernier_p2p.protocol.node.hosting import Hosting, HostingConfig
from dernier_p2p.protocol.node.own import OwnSeat, long_work
from dernier_p2p.protocol.ready import check_ready_frame
from dernier_p2p.protocol.session import Session
from dernier_p2p.protocol.votes import check_vote_frame, quorum, vote_ok
from dernier_p2p.rules.cards import deck_cards
from dernier_p2p.wire.identity import IdentityKey

ACK_MS = 2_000
"""An idle seat echoes the head with an ``ack`` this long after records came (5.3)."""
MAX_FROM_LINK = 1024
"""Records from one seat's links waiting in the queue at most (those past it are ignored: the
seat lends them again, or another does)."""
MAX_AHEAD = 4
"""The most records of the host lent ahead of this seat's last that a seat keeps per lender."""
MAX_GATHER_QUEUE = 64
"""Frames of the old host a candidate holds, unapplied, while it gathers (7.6): one more and
it closes that connection, as a candidate did at once before it kept it."""
PASSED_ON = (act.Dial, act.Probe, act.Urge, act.Lend, act.Note, act.End, act.LookForHost)


@dataclass(frozen=True)
class FromLink:
    """A record that came over a link from seat ``seat`` (lent, or shown as a proof, 4.6),
    queued with the host's records."""

    seat: int
    rec: dict[str, Any]


class PeerNode:
    """One peer (see the module docstring). Build it with :meth:`seated` (a seat with record 0
    or its records), or :meth:`hosting` (a host in its lobby). ``watch_cls`` and
    ``hosting_cls`` are the machines it builds (a test or a simulated strategy may subclass
    them)."""

    watch_cls: type[SeatWatch] = SeatWatch
    hosting_cls: type[Hosting] = Hosting

    def __init__(self, identity: IdentityKey, seed: bytes, now: int,
                 constants: dict[str, int] | None = None, wall_offset: int = 0) -> None:
        self.identity = identity
        self.seed = seed
        self.constants = dict(constants or {})
        self.wall_offset = wall_offset
        self.own: OwnSeat | None = None
        self.watch: SeatWatch | None = None
        self.host: Hosting | None = None
        self.out: list[Any] = []
        self.queue: deque[Any] = deque()  # records, error frames, records from links
        self.from_links: dict[int, tuple[int, int]] = {}  # seat -> (top index, queued)
        self.lent: int | None = None  # first record applied from a link since the host's last
        self.bad_lenders: set[int] = set()  # seats that lent a record not validly signed
        self.ahead: dict[int, list[dict[str, Any]]] = {}  # seat -> host records lent ahead
        self.up = False  # this seat's connection to a host is welcomed
        self.up_host: int | None = None
        self.caught_up = True  # the records up to the welcome's ``last`` are applied
        self.catch_to = -1
        self.check_fork = False  # the next record comes from a host of another chain
        self.rebuild: list[dict[str, Any]] | None = None  # records gathered to rebuild from
        self.rebuild_last = -1
        self.rebuild_suffix = ".replaced"
        self.acked_end = False  # this seat's ack of the record that ended the match (7.11)
        self.sent_up: set[int] = set()  # own counters the old host held at a take-over (7.6)
        self.stale_holders: dict[int, set[int]] = {}  # replaced host -> holders shown (7.11)
        self.stopped: ProtocolError | None = None
        self.proof: dict[str, Any] | None = None  # the record that proves the stop (4.6)
        self.shown_heads: set[int] = set()  # own records shown after a FORK refusal (4.6)
        self.linger_until: int | None = None  # links answered until then, once stopped
        self.stopped_at: int | None = None
        self.unshown: set[int] = set()  # seats a stopped seat's proof has not reached (4.6)
        self.ended: str | None = None
        self.said_done = False
        self.last_sent = now
        self._now = now

    # ------------------------------------------------------------------ building
    @classmethod
    def seated(
        cls, identity: IdentityKey, seed: bytes, records: list[dict[str, Any]], now: int,
        *, connected: bool, constants: dict[str, int] | None = None, wall_offset: int = 0,
        welcomed: int | None = None,
    ) -> PeerNode:
        """A seat from its records (record 0 alone for a joiner, ``welcomed`` the seat its
        host's ``welcome`` gave it, ``connected``; a transcript for a restart, every record
        checked again, not ``connected``: record 0 alone there owes the seat's accept again). A
        seat whose last record it signed itself as host (a host restarted after a crash) looks
        for the new host, to rebuild from its records. A record 0 that fails its checks (5.3)
        or does not seat this key (at ``welcomed``) is a ProtocolError naming its host."""
        node = cls(identity, seed, now, constants, wall_offset)
        if len(records) == 1:  # a joiner: its accept goes at :meth:`start`
            table = Session(None, None, records[0], seed)  # record 0's checks, as a watcher's
            me = identity.public_bytes()
            if me not in table.keys or welcomed not in (None, table.keys.index(me)):
                raise ProtocolError("TABLE_MISMATCH", table.host, "record 0 does not seat this "
                                    f"player's key at seat {welcomed}, where the host "
                                    "welcomed it")
            seat = OwnSeat(identity, table.keys.index(me), records[0], seed)
            if not connected:  # restarted from a transcript of record 0 alone: the accept it
                # signed before the crash may never have reached its host; it owes it again,
                # as any restored seat owes what its records do not carry
                seat.replaying = [env["body"] for env in seat.start()]
        else:
            seat = OwnSeat.from_records(identity, seed, records, stopped_ok=True)
        node.own = seat
        node._new_watch(now, connected)
        if seat.stopped is not None and seat.last_refused is not None:  # it stopped before
            node._stopped_on(seat.last_refused, seat.stopped, now, None, again=True)
            return node
        node.up = connected
        node.up_host = seat.session.host if connected else None
        if not connected and records[-1]["h"] == seat.seat and len(records) > 1:
            assert node.watch is not None
            node.rebuild_suffix = ".crashed"
            node.watch.look(now)
        return node

    @classmethod
    def hosting(cls, identity: IdentityKey, seed: bytes, config: HostingConfig, now: int,
                wall_offset: int = 0) -> PeerNode:
        """A host in its lobby (the table starts when :meth:`Hosting.joined` says it is full
        and the driver calls :meth:`start_match`)."""
        node = cls(identity, seed, now, config.constants, wall_offset)
        node.host = cls.hosting_cls(identity, config, now, wall_offset=wall_offset)
        return node

    def _budgets(self) -> Budgets:
        assert self.own is not None
        return Budgets.of_table(self.own.session.table_body["timers"], **self.constants)

    def _new_watch(self, now: int, connected: bool) -> None:
        assert self.own is not None
        session = self.own.session
        cards = len(deck_cards(session.rules.deck))
        self.watch = self.watch_cls(session, self._budgets(), self._judge, cards, now,
                                    connected=connected, records=self.own.records)

    def _judge(self, env: dict[str, Any], lead: int = 0,
               before: list[dict[str, Any]] | None = None) -> bool:
        assert self.own is not None
        return would_sequence(self.own.session, env, lead, before) is None

    def start_match(self, now: int) -> None:
        """The host's lobby is full: record 0 and the host's own first envelopes."""
        assert self.host is not None
        self.host.start_match(now, self.seed)
        self.own = self.host.own
        self._pull_host()

    def start(self, now: int) -> None:
        """A joiner's first envelopes (its accept), once record 0 is in."""
        assert self.own is not None
        for env in self.own.start():
            self.send_own(env, now)

    # ------------------------------------------------------------------ queries
    @property
    def seat(self) -> int | None:
        return None if self.own is None else self.own.seat

    @property
    def hosting_now(self) -> bool:
        return self.host is not None and not self.host.stepped_back

    @property
    def finished(self) -> bool:
        return self.own is not None and self.own.final

    def take(self) -> list[Any]:
        """The effects and actions produced since the last call, in order."""
        self._pull_host()
        out, self.out = self.out, []
        return out

    def _pull_host(self) -> None:
        if self.host is not None:
            self.out.extend(self.host.take())

    # ------------------------------------------------------------------ as a seat: the host
    def welcomed(self, host: int, seat: int, last: int, now: int,
                 have: int | None = None) -> None:
        """A resume with seat ``host`` as host was welcomed (seat ``seat``, its last record
        ``last``); a joiner's welcome comes before the node exists. ``have``: the last record
        the resume named (None: this seat's last now); a new host that lacks records is sent
        those up to it, which is what it expects (4.4): records taken since, from another
        host, are not."""
        self._now = now
        assert self.own is not None and self.watch is not None
        if seat != self.own.seat:
            self.out.append(fx.Close(fx.UP, f"resumed as seat {seat}", now=True))
            self.watch.dial_failed(host, now)
            return
        if self.hosting_now and not self.watch.rebuild_from:
            # a resume begun before this seat took over: it hosts now (a host that lost its
            # table, looking for the new host, takes its welcome: it rebuilds from it); the
            # connection it kept to the old host while gathering, if any, is replaced by it
            if self.up:
                self.up = False
                self._forget_host_records()
                self.watch.disconnected(now, "replaced by a resume")
            self.out.append(fx.Close(fx.UP, "this seat hosts", now=True))
            return
        self.up, self.up_host = True, host
        # records still queued came on the connection this welcome replaces (a later dial
        # that succeeds replaces it): what this host holds after this seat's ``have`` follows
        self._forget_host_records()
        if self.watch.rebuild_from:
            self.rebuild = []
            self.rebuild_last = last
            self.caught_up = False
            self.watch.connected(host, now)  # (a drop before the rebuild looks on, :meth:`closed`)
            return
        new_host = host != self.own.session.host
        mine = self.own.last
        replaced = self.own.session.chain.replaced_at(host, mine + 1) if new_host else None
        if replaced is not None and last < replaced:
            # the host this seat's chain replaced, answering a resume late (it was frozen or
            # cut off meanwhile): it has not seen the host change, and it is not the host (7.6)
            self.watch.dial_failed(host, now)
            self._leave_stale_host(host, now)
            return
        if last < mine:  # a new host lacks records: they go first (4.4)
            upto = mine if have is None else min(mine, have)
            for rec in self.own.records[last + 1 : upto + 1]:
                self._to_host({"k": "rec", "rec": rec}, now)
        self.catch_to = last
        self.caught_up = len(self.own.records) > last
        # (a new host: its first record this seat does not hold must follow this seat's own
        # last one, or the chains diverged at its host change, 4.4)
        self.check_fork = new_host
        self.watch.connected(host, now)
        if self.caught_up:
            self._caught_up(now)

    def dial_failed(self, host: int, now: int, code: str = "", detail: str = "") -> None:
        """A resume with ``host`` failed; ``code`` is the refusal's, if the host sent one."""
        self._now = now
        if self.watch is None or self.own is None:
            return
        if code == "UNKNOWN_KEY" and host == self.own.session.host:
            self._end("this seat is no longer at the table: " + detail)
            return
        if code == "UNEXPECTED" and host != self.own.session.host and \
                not self.watch.rebuild_from and "have -1" in detail:
            if self.own.session.chain.replaced_at(host, self.own.last + 1) is not None:
                # a host this seat's chain replaced, short of this seat's records: it has not
                # seen the host change (frozen, cut off, or still hosting its old chain), and
                # it is not the host (7.6); its records are no new host's to rebuild from (4.4)
                self.watch.dial_failed(host, now)
                return
            self._diverged(host, now)
            return
        self.watch.dial_failed(host, now)

    def closed(self, now: int) -> None:
        """The connection to the host is gone."""
        self._now = now
        self.up = False
        self._forget_host_records()  # what a new host sends again comes after the welcome
        if self.watch is None:
            return
        if self.rebuild is not None:  # lost before the rebuild: look on
            self.rebuild = None
            self.watch.look(now, first=self.up_host)
            return
        self.watch.disconnected(now, "connection lost")

    def from_host(self, msg: dict[str, Any], now: int) -> None:
        """A frame from the host (decoded, its kind a string). One that comes while this seat
        has no welcomed connection (it closed it, or was told it closed: frames read before
        that reach it after) is ignored: it is of no connection to a host, and a gap it would
        leave is no fault of the host (the next welcome sends again what follows its ``have``,
        4.4)."""
        self._now = now
        if not self.up:
            return
        if self.watch is not None:
            self.watch.heard(now)
        kind = msg["k"]
        if self.hosting_now and kind in ("rec", "status", "error") and \
                len(self.queue) >= MAX_GATHER_QUEUE:
            self._drop_old_host(now)  # (held unapplied while it gathers: a budget)
            return
        if kind == "rec" and set(msg) == FRAME_FIELDS["rec"]:
            if self.rebuild is not None:
                self.rebuild.append(msg["rec"])
                return
            self.queue.append(msg["rec"])
        elif kind == "status":  # after the records that came before it (a record of a
            if self.queue:  # seat sequenced before its drop does not end the drop)
                self.queue.append(msg)
            else:
                self._on_status(msg, now)
        elif kind == "ready" and self.own is not None:
            try:
                seat, at = check_ready_frame(msg, self.own.session.keys, self.own.session.game)
            except ProtocolError as exc:
                self.out.append(fx.Log("warning", f"ready frame ignored: {exc.detail}"))
                return
            self.out.append(fx.Ready(seat, at))
        elif kind == "beat":
            if set(msg) != FRAME_FIELDS["beat"]:  # it carries nothing: ignored, logged
                self.out.append(fx.Log("warning", "malformed beat frame from the host ignored"))
        elif kind == "error" and set(msg) != FRAME_FIELDS["error"]:
            self.out.append(fx.Log("warning", "malformed error frame from the host ignored"))
        elif kind == "error":  # after the records that came before it (4.3)
            if self.queue:
                self.queue.append(msg)
            else:
                self._on_error(msg, now)
        elif kind == "rec":  # a rec frame with other fields than {k, rec} (4.1)
            self.out.append(fx.Log("warning", "malformed rec frame from the host"))
            self._refuse(ProtocolError("MALFORMED", self.up_host, "a rec frame is {k, rec}"),
                         now)
        else:
            self.out.append(fx.Log("warning", f"unexpected frame {kind!r} from the host"))
            self._refuse(ProtocolError("UNEXPECTED", self.up_host,
                                       f"unexpected frame {kind!r} from the host"), now)

    def _on_status(self, msg: dict[str, Any], now: int) -> None:
        assert self.own is not None
        seat, state, grace = msg.get("seat"), msg.get("state"), msg.get("grace_ms")
        ok = (set(msg) == FRAME_FIELDS["status"] and isinstance(seat, int)
              and not isinstance(seat, bool) and 0 <= seat < self.own.session.n
              and state in ("dropped", "back") and isinstance(grace, int)
              and not isinstance(grace, bool) and 0 <= grace < 2**31)
        if not ok:
            self.out.append(fx.Log("warning", "malformed status frame from the host ignored"))
            return
        self.out.append(fx.Status(seat, state, grace))
        if self.watch is not None:
            self.watch.status(seat, state, now)

    def _on_error(self, msg: dict[str, Any], now: int) -> None:
        assert self.own is not None
        code, detail = msg.get("code"), msg.get("detail")
        if not isinstance(code, str) or not isinstance(detail, str):
            return
        code = "".join(c if c.isprintable() else "?" for c in code[:64])
        detail = "".join(c if c.isprintable() else "?" for c in detail[:1000])
        self.out.append(fx.Log("warning", f"host refused a message: {code}: {detail}"))
        if code == "FORK":
            self._show_heads()
        resend = self.own.refused(code, detail)
        for told in self.own.told:
            self.out.append(fx.Refused(*told))
        self.own.told.clear()
        for env in resend:
            self._send_env(env, now)

    # ------------------------------------------------------------------ own envelopes
    def send_own(self, env: dict[str, Any], now: int) -> None:
        """An envelope of this seat's own (a move, a chat, a deck message, an ack). A seat
        that stopped on a fault or ended sends nothing more (4.3): a move its player chose
        just before is dropped."""
        self._now = now
        assert self.own is not None
        if self.stopped is not None or self.ended is not None:
            return
        if self.hosting_now:
            assert self.host is not None
            self.host.own_env(env)
            return
        self.own.sent(env)
        if env["body"].get("type") == "move":
            self.own.in_flight = True
        if self.up and self.caught_up:
            self._send_env(env, now)

    def _send_env(self, env: dict[str, Any], now: int) -> None:
        if not self.up or self.stopped is not None or self.ended is not None:
            return
        self._to_host({"k": "env", "env": env}, now)
        if self.watch is not None:
            self.watch.sent_env(env, now)
        self.last_sent = now

    def _to_host(self, frame: dict[str, Any], now: int) -> None:
        self.out.append(fx.Send(fx.UP, frame))

    def ready(self, frame: dict[str, Any], now: int) -> None:
        """This seat's own ``ready`` frame (18.1)."""
        self._now = now
        if self.hosting_now:
            assert self.host is not None
            self.host.own_ready(frame)
        elif self.up:
            self._to_host(frame, now)

    # ------------------------------------------------------------------ links
    def probe_answer(self, seat: int, present: tuple[Any, ...] | None, now: int) -> None:
        """The answer of a probe of ``seat``: ``(have, pending, proof, lent)`` as its checked
        ``present`` says, or None (no answer). A proof is judged as a record from a link."""
        self._now = now
        if present is not None and len(present) > 2 and present[2] is not None:
            self.from_link(seat, present[2], now)
        if self.watch is not None:
            shown = None if present is None else (present[0], present[1])
            lent = present[3] if present is not None and len(present) > 3 else None
            self.watch.probe_answer(seat, shown, now, lent)

    def link_vote(self, seat: int, msg: dict[str, Any], now: int) -> None:
        """A ``vote`` frame over a link from ``seat``: kept if it is that seat's ``depose``
        vote about the current host (this seat may be a candidate)."""
        self._now = now
        if self.own is None or self.watch is None:
            return
        session = self.own.session
        try:
            kind, target, vote = check_vote_frame(msg, session.n)
        except ProtocolError:
            return
        if kind == "depose" and vote["seat"] == seat and target == session.host and vote_ok(
                vote, session.keys[seat], session.game, kind, target):
            self.watch.link_vote(seat, vote, now)

    def present(self) -> tuple[int, list[dict[str, Any]], dict[str, Any] | None, int | None]:
        """What a ``present`` answer says of this seat: its last record, its envelopes sent to
        the host and not yet in a record (oldest first), its proof (4.6) or None, and the first
        record it applied from a link since the last one its host sent it, or None.

        A seat with no proof of its own whose host refused a head it signed shows the record
        at the highest such head (4.6, "A head refused"): a prober that gives no address, which
        the head was never lent to, finds the fork there. The highest, as a host that forked
        this seat refuses every envelope after the fork, the latest too, while an early head it
        refused falsely would be a record every seat holds."""
        own = self.own
        assert own is not None
        pending = [own.unsequenced[n] for n in sorted(own.unsequenced)]
        proof = self.proof
        if proof is None and self.shown_heads:
            proof = own.records[max(self.shown_heads)]
        return own.last, pending, proof, self.lent

    def from_link(self, seat: int, rec: Any, now: int) -> None:
        """A record that came over a link from ``seat``: lent (a ``rec`` frame), or the proof
        of its ``present`` answer (4.6). Queued with the host's records if it may be the host's
        (:meth:`ChainChecker.from_link` decides when its turn comes); anything that cannot be
        (no record, not validly signed by the seat it names, a record held already, another
        ``prev`` than the one held at its index, not the next after what this seat holds and
        that seat lent before, past :data:`MAX_FROM_LINK` of that seat's waiting) is ignored: a
        link's sender is not the host. Its signature is checked last, after the cheap checks;
        a seat that lends one record whose signature fails is not heard again (an honest seat
        lends only records it checked), so no seat can make this one verify without end."""
        self._now = now
        own = self.own
        if own is None or self.stopped is not None or self.ended is not None or \
                own.final or self.hosting_now or self.rebuild is not None or \
                seat in self.bad_lenders or not isinstance(rec, dict):
            return
        i = rec.get("i")
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            return
        top, queued = self.from_links.get(seat, (-1, 0))
        if i <= own.last:
            held = own.records[i]
            if rec.get("hsig") == held["hsig"] or rec.get("prev") != held["prev"] or \
                    rec.get("h") != held["h"]:
                return
        elif i != max(top, own.last) + 1 or queued >= MAX_FROM_LINK:
            # (a seat's records come in order: a repeat, or a gap, waits for nothing; but a
            # record of the host ahead of this seat, a proof lent before this seat caught up
            # with its host, is kept and taken again once this seat reaches its index)
            if i > own.last + 1 and rec.get("h") == own.session.chain.host:
                self._keep_ahead(seat, rec)
            return
        else:
            top = i
        if not own.session.chain.signed(rec):
            self.bad_lenders.add(seat)
            return
        self.from_links[seat] = (top, queued + 1)
        self.queue.append(FromLink(seat, rec))

    def _keep_ahead(self, seat: int, rec: dict[str, Any]) -> None:
        """Keep a record of the host lent ahead of this seat's last (at most
        :data:`MAX_AHEAD` per lender, the first ones: a proof lent to every seat at once,
        4.6, reaches a seat that lags its host); :meth:`_retake_ahead` offers them again."""
        kept = self.ahead.setdefault(seat, [])
        if len(kept) < MAX_AHEAD and rec not in kept:
            kept.append(rec)

    def _retake_ahead(self, now: int) -> None:
        """Offer again the records kept ahead whose index this seat has now reached (the
        next one, or one it holds: a second record there is a fork)."""
        own = self.own
        if not self.ahead or own is None:
            return
        for seat in sorted(self.ahead):
            due = [r for r in self.ahead[seat] if r["i"] <= own.last + 1]
            if not due:
                continue
            self.ahead[seat] = [r for r in self.ahead[seat] if r["i"] > own.last + 1]
            if not self.ahead[seat]:
                del self.ahead[seat]
            for rec in sorted(due, key=lambda r: r["i"]):
                self.from_link(seat, rec, now)

    def probed(self, now: int, seat: int | None = None) -> None:
        """This stopped seat answered a probe of ``seat`` at ``now`` (its ``present`` held
        the proof): it goes on answering for ``stuck_ms`` after it, and no longer waits for
        that seat (4.6)."""
        if self.linger_until is not None and self.own is not None:
            self.linger_until = max(self.linger_until, now + self._budgets().stuck_ms)
            self.unshown.discard(seat)  # type: ignore[arg-type]

    def lend_failed(self, seat: int) -> None:
        """A lend of this stopped seat's proof did not reach ``seat``: it waits for that
        seat's probe as for one with no address (4.6), if it gives an address itself."""
        if self.proof is not None and self._linkable() and seat in self._others():
            self.unshown.add(seat)

    def _others(self) -> list[int]:
        """The other seats at the table but the host, in order."""
        own = self.own
        if own is None:
            return []
        chain = own.session.chain
        return [s for s in sorted(chain.at_table) if s not in (own.seat, chain.host)]

    def _linkable(self) -> bool:
        """Whether this seat gives an address, so that other seats can link to it (4.6)."""
        own = self.own
        return own is not None and own.session.table_body["players"][own.seat]["listen"] \
            is not None

    def lingering(self, now: int) -> bool:
        """Whether this seat, stopped with a proof, still answers links at ``now``: for
        ``stuck_ms`` after it stopped and after each probe it answered since, and while a seat
        its proof did not reach (it gives no address, or the lend failed) has not probed it,
        until ``2 * stuck_ms`` after it stopped (4.6)."""
        return self.linger_deadline(now) is not None

    def linger_deadline(self, now: int) -> int | None:
        """Until when this stopped seat answers links (a probe may move it on), None when it
        no longer does at ``now``."""
        if self.proof is None or self.linger_until is None:
            return None
        end = self.linger_until
        if self.unshown and self.stopped_at is not None:
            end = max(end, self.stopped_at + 2 * self._budgets().stuck_ms)
        return end if now < end else None

    # ------------------------------------------------------------------ as a host
    def host_frame(self, seat: int, msg: dict[str, Any], now: int) -> None:
        """A frame from seat ``seat``'s connection to this host."""
        self._now = now
        if self.host is not None:
            self.host.frame(seat, msg, now)

    # ------------------------------------------------------------------ work
    def _rebuild_ready(self) -> bool:
        """Whether every record of the new host up to its welcome's ``last`` is in, and they
        hold its ``host_change``: a candidate still gathering (7.6) welcomes with the records
        it holds, which may lack some of this seat's own (others forward them to it), and a
        seat that rebuilt from them would sign again, at counters of its own that those
        records take when they come, envelopes the chain then refuses for good. So a seat
        rebuilds from a chain the new host has made its own, which holds every record of
        the old host that the quorum gathered."""
        records = self.rebuild
        if records is None or self.rebuild_last < 0 or len(records) <= self.rebuild_last:
            return False
        for rec in reversed(records):
            env = rec.get("env") if isinstance(rec, dict) else None
            body = env.get("body") if isinstance(env, dict) else None
            if isinstance(body, dict) and body.get("type") == "host_change" and \
                    body.get("new") == self.up_host:
                return True
        # or its history is final after the split and this seat's is not (7.11): a new host
        # that lost its table to the old host come back, whose chain a quorum followed
        own = self.own
        if own is None:
            return False
        j = finality.split(own.records, records)
        return j is not None and finality.goes_over(own.records, records, own.m_at(j))

    def has_work(self) -> bool:
        if self._rebuild_ready():
            return True
        if self.hosting_now:
            assert self.host is not None
            return self.host.has_work()
        return bool(self.queue) and self.stopped is None and self.ended is None

    def work_is_long(self) -> bool:
        if self._rebuild_ready():
            return True
        if self.hosting_now:
            assert self.host is not None
            return self.host.work_is_long()
        return bool(self.queue) and self.own is not None and bool(
            long_work(self.own.session, queued_record(self.queue[0])))

    def work(self, now: int) -> None:
        """Do the next item of work (see the module docstring)."""
        self._now = now
        if self._rebuild_ready():
            self._rebuilt(now)
            return
        if self.hosting_now:
            assert self.host is not None
            self.host.work(now)
            self._after_host_work(now)
            return
        if not self.queue or self.own is None:
            return
        rec = self.queue.popleft()
        if isinstance(rec, FromLink):
            top, queued = self.from_links.pop(rec.seat, (-1, 1))
            if queued > 1:
                self.from_links[rec.seat] = (top, queued - 1)
            if self.own.session.chain.from_link(rec.rec):
                self._apply(rec.rec, now, from_host=False)
            if not self.up and self.own.replaying is not None and self.stopped is None and \
                    self.lent is not None and \
                    not any(isinstance(item, FromLink) for item in self.queue):
                # restarted, no host serves it, and what the links lent is in: what the
                # restart owed is signed now (pending, shown to probes; sent on a resume)
                for env in self.own.finish_restore():
                    self.own.sent(env)
            return
        if "k" in rec:  # an error or status frame that came after records
            if rec["k"] == "status":
                self._on_status(rec, now)
            else:
                self._on_error(rec, now)
            return
        i = rec.get("i")
        if isinstance(i, int) and not isinstance(i, bool) and 0 <= i <= self.own.last and \
                rec.get("hsig") == self.own.records[i].get("hsig"):
            if self.lent is not None and self.lent <= i:  # (the host sent it too)
                self.lent = i + 1 if i < self.own.last else None
            return  # held already: a resume from an older index raced the records before it
        if self.up_host != self.own.session.host and self.own.session.chain.stale(rec):
            # a record of a host this seat's chain replaced, not from this seat's host: from
            # that old host itself, which has not seen the host change (7.6); unless its
            # records show its history final where this seat's is not (7.11): go over to it
            if self._stale_shows_final(rec):
                assert self.up_host is not None
                self.out.append(fx.Log("warning", f"seat {self.up_host}'s history is final "
                                       "where this seat's host change is not: rebuilding "
                                       "from it"))
                self._diverged(self.up_host, now)
            elif rec.get("i", 0) >= self.catch_to:
                self._leave_stale_host(self.up_host, now)
            return
        if self.check_fork:
            self.check_fork = False
            if isinstance(rec, dict) and self._diverges(rec):
                assert self.up_host is not None
                self._diverged(self.up_host, now)
                return
        self._apply(rec, now, from_host=True)

    def _stale_shows_final(self, rec: dict[str, Any]) -> bool:
        """Count the seats that stale records of the replaced host connected now show holding
        its history after the split (7.11): the host, and the author of every envelope in them
        (its signature checked) whose head is a record this seat does not hold (an honest host
        sequences only envelopes whose head it holds, and below the split the two histories
        are one). True once they make ``q(m)`` and this seat's records from the host change
        on are not final."""
        own = self.own
        assert own is not None
        chain = own.session.chain
        j = chain.replaced_at(rec["h"], rec["i"]) if isinstance(rec.get("h"), int) else None
        if j is None or not chain.signed(rec):
            return False
        env = rec["env"]
        seats = self.stale_holders.setdefault(rec["h"], {rec["h"]})
        if chain.index_of(env.get("head")) is None and chain.signed_by(env, env.get("seat")):
            seats.add(env["seat"])
        m = own.m_at(j)
        return len(seats) >= quorum(m) and not finality.is_final(own.records, j, m)

    def _diverges(self, rec: dict[str, Any]) -> bool:
        """Whether ``rec``, the first record a new host sent after its welcome that this seat
        does not hold, shows that the host's chain and this seat's differ after its host change
        (4.4): it is for this seat's next index and does not follow its last record, or for an
        index this seat holds another record for, signed there by another seat than this host
        (records of the old host this seat took after it dialled the new one: the old host,
        frozen or cut off while a quorum deposed it, answered another dial late)."""
        assert self.own is not None
        i = rec.get("i")
        if not isinstance(i, int) or isinstance(i, bool):
            return False
        if i == self.own.last + 1:
            return rec.get("prev") != self.own.session.head
        return 0 < i <= self.own.last and \
            self.own.session.chain.signer_of(i) not in (None, self.up_host)

    def _apply(self, rec: Any, now: int, from_host: bool) -> None:
        """Check and apply the next record (from the host, or from a link as if the host had
        sent it); a refusal stops this seat."""
        assert self.own is not None
        host_before = self.own.session.host
        try:
            envs = self.own.apply(rec, now)
        except ProtocolError as exc:
            self._stopped_on(rec, exc, now, from_host)
            return
        self.out.append(fx.Persist(rec))
        if from_host:
            self.lent = None
        elif self.lent is None:
            self.lent = rec["i"]
        assert self.watch is not None
        self.watch.record(rec, now)
        if not from_host and self.up and self.watch.host_up and \
                self.own.session.host != host_before and self.up_host != self.own.session.host:
            # a host change lent over a link while this seat plays on with the host it
            # replaced (which may send it nothing more, 7.6): resume with the new host (a
            # record of the old history lent while it resumes with a new host changes no host)
            self._leave_stale_host(self.up_host, now)
        for env in envs:
            self.send_own(env, now)
        if not self.caught_up and self.own.last >= self.catch_to:
            self._caught_up(now)
        self._retake_ahead(now)
        if self.own.finished and not self.acked_end and self.own.seat is not None and \
                self.own.end_at is not None and self.own.seat not in self.own.end_holders:
            # the end is final once q(m) seats are shown holding it (7.11): say so at once
            self.acked_end = True
            self.send_own(self.own.session.ack(), now)
        if self.own.final and not self.said_done and self.up:
            self.said_done = True
            self._to_host({"k": "done", "last": self.own.last}, now)

    def _caught_up(self, now: int) -> None:
        """After a welcome, the records up to its ``last`` are applied: this seat's envelopes
        not yet sequenced go again, then what a restart owed."""
        assert self.own is not None
        self.caught_up = True
        for env in self.own.resend():
            self._send_env(env, now)
        if self.own.replaying is not None:
            for env in self.own.finish_restore():
                self.own.sent(env)
                self._send_env(env, now)

    def _stopped_on(self, rec: Any, exc: ProtocolError, now: int, from_host: bool | None,
                    again: bool = False) -> None:
        """This seat refuses ``rec`` (``exc``) and stops. A record that proves the fault is
        kept in the transcript: the evidence of a seat's fault (19.1), or a record signed by
        the seat ``exc`` names, as signer, at this seat's next index or a second one for an
        index it holds (``FORK``). A fault of the signer has a proof (4.6; the evidence of
        another seat's fault has none: the host relays it to every seat), the record of the
        two that disagree that the others are not expected to hold: the refused one, but for a
        record from the host that does not follow this seat's own (another ``prev`` at the
        next index, or a second record for a held index): then its own record there.
        ``again``: a seat restored from a transcript that ends on such a record (kept already;
        ``from_host`` None: where it came from is not known)."""
        own = self.own
        assert own is not None
        chain = own.session.chain
        kept = own.evidence is rec  # (a seat's fault: the host relays it to every seat)
        proof = None
        lent: list[dict[str, Any]] = []
        if isinstance(rec, dict) and exc.seat is not None and rec.get("h") == exc.seat and \
                chain.signed(rec):
            i = rec["i"]
            if i == own.last + 1:
                kept = True
                mine = own.records[-1] if from_host is not False else None
                proof = rec if rec["prev"] == chain.head else mine
                lent = [proof] if proof is not None else []
            elif i <= own.last and exc.code == "FORK":
                kept = True
                proof = own.records[i] if from_host else rec
                # both records of the fork: whichever one a seat holds, the other stops it
                # (the seat that lent ``rec`` holds it, and learns of the fork from ours)
                lent = [proof, rec if from_host else own.records[i]]
        if kept and not again:
            self.out.append(fx.Persist(rec))
        self._refuse(exc, now)
        if proof is None:
            return
        self.proof = proof
        if self._linkable():  # (a seat no link reaches would wait for nobody)
            players = self.own.session.table_body["players"] if self.own is not None else []
            self.unshown = {s for s in self._others() if players[s]["listen"] is None}
        self._lend_to_all(lent)

    def _lend_to_all(self, records: list[dict[str, Any]]) -> None:
        """Lend ``records`` at once to every other seat at the table that gives an address,
        but the host (4.6)."""
        own = self.own
        assert own is not None
        players = own.session.table_body["players"]
        for seat in self._others():
            if players[seat]["listen"] is not None:
                self.out.append(act.Lend(rule("lend"), seat, records[0]["i"] - 1, records))

    def _show_heads(self) -> None:
        """The host refused an own envelope as echoing a head it does not hold (``FORK``).
        An honest host holds every record it signed, so if the head an unsequenced own
        envelope echoes is a record that host signed, the host may have sent this seat another
        record than the others for that index: the seat shows it to the other seats (4.6), as
        a lent record. A seat holding another record the host signed at that index after the
        same record stops on ``FORK`` naming the host and lends both back; any other seat
        skips it or takes it as its next record. Once per record."""
        own = self.own
        if own is None or not self.up or self.stopped is not None:
            return
        chain = own.session.chain
        if self.up_host != chain.host:
            return  # (a new host holds another chain after its host change: 4.4)
        for n in sorted(own.unsequenced):
            i = chain.index_of(own.unsequenced[n]["head"])
            if i is None or i < 1 or i in self.shown_heads or chain.signer_of(i) != chain.host:
                continue
            self.shown_heads.add(i)
            self._lend_to_all([own.records[i]])

    def _refuse(self, exc: ProtocolError, now: int) -> None:
        """A record this seat refuses: the match stops for it (the host is told); it answers
        links ``stuck_ms`` more (it may have a proof to show, 4.6)."""
        self.stopped = exc
        self.stopped_at = now
        self.linger_until = now + self._budgets().stuck_ms
        self.out.append(fx.Stopped(exc))
        if self.up:
            self._to_host({"k": "error", "code": exc.code, "detail": exc.detail[:1000]}, now)

    def _leave_stale_host(self, host: int | None, now: int) -> None:
        """The connection to the host is to seat ``host``, a host this seat's chain replaced
        that has not seen the host change (PROTOCOL.md 7.6): its records are of no chain this
        seat holds and prove nothing against it. Close it; the seat resumes with its host."""
        assert self.watch is not None
        self.out.append(fx.Log("info", f"seat {host} hosts a chain without the host change "
                               "that replaced it: resuming with the host"))
        self.out.append(fx.Close(fx.UP, "a replaced host", now=True))
        self.up = False
        self._forget_host_records()
        self.watch.disconnected(now, "a replaced host")

    def _forget_host_records(self) -> None:
        """Drop the queued records and frames of the host connection (records from links
        stay: they are judged on their own)."""
        self.queue = deque(item for item in self.queue if isinstance(item, FromLink))

    def _diverged(self, host: int, now: int) -> None:
        """Seat ``host``, a new host, holds another chain after its host change than this
        seat's own: rebuild from its records (4.4)."""
        assert self.watch is not None
        self.out.append(fx.Log("warning", f"the records of seat {host} (the new host) differ "
                               "after its host change: rebuilding from them"))
        self.out.append(fx.Close(fx.UP, "rebuilding", now=True))
        self.up = False
        self.queue.clear()
        self.from_links.clear()
        self.watch.look(now, first=host)

    def _rebuilt(self, now: int) -> None:
        """Every record of the new host is in: rebuild this seat from them."""
        assert self.rebuild is not None and self.own is not None and self.up_host is not None
        records, self.rebuild = self.rebuild, None
        self.lent = None  # (every record now came from the new host)
        host = self.up_host
        try:
            seat = OwnSeat.from_records(self.identity, self.seed, records)
        except (ProtocolError, ValueError) as exc:
            self.out.append(fx.Log("warning", f"the records of seat {host} do not rebuild this "
                                   f"seat: {exc}"))
            self.out.append(fx.Close(fx.UP, "bad records", now=True))
            self.up = False
            assert self.watch is not None
            self.watch.disconnected(now)
            self.watch.dial_failed(host, now)
            return
        if self.host is not None:  # a host that lost its table: it is a seat from now on
            self.host._step_back()
            self._pull_host()
            self.host = None
            self.out.append(fx.Hosting(listening=False))
        self.own = seat
        self.acked_end = False
        self.out.append(fx.Restart(records, self.rebuild_suffix))
        self.out.append(fx.Rebuilt())
        self.rebuild_suffix = ".replaced"
        self._new_watch(now, connected=True)
        assert self.watch is not None
        self.watch.connected(host, now)
        self.up_host = host
        self.caught_up = True
        self._caught_up(now)

    # ------------------------------------------------------------------ liveness
    def advance(self, now: int) -> None:
        """Apply the rules due at ``now`` (the seat's, or the host's while it hosts)."""
        self._now = now
        if self.host is not None and not self.hosting_now:
            # its rules stepped back (or asked for more) while it took a frame, a resume or a
            # close: carry it out now, as at a deadline, so the seat goes on with its failover
            self._host_actions(self.host.take_asked(), now)
        if self.hosting_now:
            assert self.host is not None
            self.host.release(now)
            self._host_actions(self.host.advance(now), now)
            if self.watch is not None and self.watch.phase != HOSTED:
                self._seat_actions(self.watch.advance(now), now)
            return
        if self.watch is None or self.own is None or self.stopped is not None:
            return  # (a seat stopped on a fault votes, probes and acks no more)
        self._seat_actions(self.watch.advance(now), now)
        if self.up and self.caught_up and not self.queue and \
                now - self.last_sent >= self.constants.get("ack_ms", ACK_MS):
            env = self.own.ack()
            if env is not None:
                self.send_own(env, now)
            self.last_sent = now

    def _seat_actions(self, actions: list[act.Action], now: int) -> None:
        for a in actions:
            if isinstance(a, act.ToHost):
                if self.up:
                    self._to_host(a.frame, now)
            elif isinstance(a, act.CloseHost):
                self.out.append(fx.Close(fx.UP, a.why, now=True))
                self.up = False
                self._forget_host_records()
            elif isinstance(a, act.Lend):
                records = [] if self.stopped is not None or self.own is None else \
                    self.own.records[a.after + 1:]
                if records:
                    self.out.append(act.Lend(a.rule, a.seat, a.after, records))
            elif isinstance(a, act.TakeOver):
                self._take_over(a.old, now)
            elif isinstance(a, act.End):
                self._end(a.why, a)
            else:
                self.out.append(a)

    def _host_actions(self, actions: list[act.Action], now: int) -> None:
        for a in actions:
            if self.host is None:  # stepped back: what its rules asked after, as they asked
                self.out.append(a)
            else:
                self._host_action(a, now)

    def _host_action(self, a: act.Action, now: int) -> None:
        assert self.host is not None
        if isinstance(a, act.StepBack):
            self.out.append(fx.Hosting(listening=False))
            self._pull_host()
            self.host = None
            if self.watch is not None:
                self.watch.stepped_back(now, self.own.records if self.own is not None else None,
                                        connected=self.up)
            if self.up and self.caught_up:  # (its connection to the old host kept)
                self._send_gathered(now)
        elif isinstance(a, act.LookForHost):
            if self.watch is None or self.watch.phase == HOSTED:
                self._new_watch(now, connected=False)
                assert self.watch is not None
                self.rebuild_suffix = ".replaced"
            self.watch.look(now)
        elif isinstance(a, act.End):
            self._end(a.why, a)
        else:
            self.out.append(a)

    def _take_over(self, old: int, now: int) -> None:
        """This seat holds a quorum of ``depose`` votes: it hosts, gathering (7.6). Its
        connection to the old host, if it has one, stays open until its ``host_change`` is
        sequenced (:meth:`_after_host_work`): a candidate that gathers no quorum steps back to
        that host having lost nothing, rather than leaving it to be voted ``left`` (the votes
        it took over on may be of a minority that votes it out with the old host). What that
        host sends meanwhile waits in the queue, applied if it steps back."""
        assert self.own is not None and self.watch is not None
        session = self.own.session
        body = session.table_body
        config = HostingConfig(
            players=session.n, variant=body["variant"], options=body["options"],
            timers=dict(body["timers"]), game=session.game, seed=self.seed,
            constants=self.constants,
        )
        if self.up and self.up_host == session.host:
            self.sent_up = set(self.own.unsequenced)
            self.queue = deque(item for item in self.queue if not isinstance(item, FromLink))
        else:
            if self.up:  # (a candidate it resumed with: no host of its chain)
                self.out.append(fx.Close(fx.UP, "this seat hosts from now on", now=True))
                self.up = False
            self.queue.clear()
        self.from_links.clear()
        self.host = self.hosting_cls(self.identity, config, now, own=self.own, old=old,
                                     tally=self.watch.tally, wall_offset=self.wall_offset)
        self.out.append(fx.Hosting(listening=True))
        self.out.append(act.Note("take-over", "taking-over", self.own.seat))

    def _drop_old_host(self, now: int) -> None:
        """A candidate gathering closes the connection it kept to the old host, whose frames
        outgrew :data:`MAX_GATHER_QUEUE`; stepping back, it goes on with its failover."""
        self.out.append(fx.Log("warning", "the old host sent more than a gathering seat holds: "
                               "its connection is closed"))
        self.out.append(fx.Close(fx.UP, "this seat hosts from now on", now=True))
        self.up = False
        self._forget_host_records()
        self.sent_up = set()

    def _send_gathered(self, now: int) -> None:
        """Stepped back with its connection to the old host kept: the own envelopes signed
        while it gathered (kept by its host, never sent there) go to that host now, but those
        whose record that host sent meanwhile (a prober passed them on, 4.6)."""
        own = self.own
        assert own is not None
        queued = {item["env"].get("n") for item in self.queue if isinstance(item, dict) and
                  isinstance(item.get("env"), dict) and item["env"].get("seat") == own.seat}
        for n in sorted(own.unsequenced):
            if n not in self.sent_up and n not in queued:
                self._send_env(own.unsequenced[n], now)
        self.sent_up = set()

    def _after_host_work(self, now: int) -> None:
        assert self.host is not None and self.own is not None
        if self.watch is not None and self.watch.phase != HOSTED and \
                self.own.session.host == self.own.seat:
            if self.up:  # its host_change is sequenced: the old host's connection closes
                self.out.append(fx.Close(fx.UP, "this seat hosts from now on", now=True))
                self.up = False
                self._forget_host_records()
            self.watch.hosted()
            self.out.append(act.Note("gather", "hosting", self.own.seat))

    def _end(self, why: str, action: act.Action | None = None) -> None:
        if self.ended is not None:
            return
        self.ended = why
        self.out.append(action if action is not None else act.End("stuck", why))

    # ------------------------------------------------------------------ deadline
    def deadline(self) -> int | None:
        """When :meth:`advance` must be called next if nothing happens before, or None."""
        times = []
        if self.host is not None and self.host.asked:
            times.append(self._now)  # (asked while it took a frame: carried out at once)
        if self.hosting_now:
            assert self.host is not None
            times.append(self.host.deadline())
        elif self.stopped is not None:
            return None
        if self.watch is not None:
            times.append(self.watch.deadline())
        if self.up and self.caught_up and self.own is not None and self.own.unechoed and \
                not self.hosting_now:  # (a candidate gathering acks nothing to the old host)
            times.append(self.last_sent + self.constants.get("ack_ms", ACK_MS))
        found = [t for t in times if t is not None]
        return min(found) if found else None


def queued_record(item: Any) -> Any:
    """The record of an item of :attr:`PeerNode.queue` (an error frame, or a host's record,
    is itself)."""
    return item.rec if isinstance(item, FromLink) else item
