"""A seat's liveness: when it votes, probes, passes envelopes on, deposes and fails over.

:class:`SeatWatch` is one seat's part of the rules table of PROTOCOL.md 7.5 and 7.6, as a pure
state machine: the driver tells it what happened (:meth:`record`, :meth:`status`,
:meth:`connected`, :meth:`dial_failed`, :meth:`disconnected`, :meth:`heard`,
:meth:`sent_env`, :meth:`probe_answer`, :meth:`link_vote`, ...) with the time, then calls
:meth:`advance` for the actions due (:mod:`.actions`, each naming its rule) and sleeps until
:meth:`deadline` or the next event. It never reads a clock or touches a socket.

Phases: ``play`` (a seat of the chain's host: connected, or reconnecting to it); ``failover``
(it voted ``depose``: trying the candidates in rounds, the old host last); ``hosting`` (it took
over: the node runs a host; the seat machine waits for :meth:`stepped_back` or
:meth:`hosted`); ``looking`` (a host that lost its table, or restarted after a crash, or a seat
whose chain diverged: looking for the host to rebuild from, with ``have`` -1); ``ended``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.liveness.budgets import Budgets
from dernier_p2p.protocol.liveness.evidence import ChatTimes, Delivered, Judge, paced, passable
from dernier_p2p.protocol.liveness.table import rule
from dernier_p2p.protocol.liveness.waits import Drops, Waits
from dernier_p2p.protocol.messages import is_progress
from dernier_p2p.protocol.votes import Tally, quorum, vote_frame

PLAY, FAILOVER, HOSTING, LOOKING, ENDED, HOSTED = (
    "play", "failover", "hosting", "looking", "ended", "hosted")


@dataclass
class Answer:
    """The last probe answer from a seat: when, whether it answered, and whether it showed an
    envelope (passed on)."""

    at: int
    answered: bool
    shown: bool


class SeatWatch:
    """One seat's liveness (see the module docstring). ``session`` is the seat's session (read
    and asked to sign votes, never changed); ``judge`` says whether an envelope would pass the
    host's checks now; ``cards`` the deck size of the match."""

    def __init__(
        self,
        session: Any,
        budgets: Budgets,
        judge: Judge,
        cards: int,
        now: int,
        *,
        connected: bool = False,
        records: list[dict[str, Any]] | None = None,
    ) -> None:
        self.s = session
        self.b = budgets
        self.chats = ChatTimes()  # the host's chat pace, judged pessimistically (7.10)
        self.judge = paced(judge, self.chats)
        self.me: int = session.seat
        self.waits = Waits(budgets, cards)
        self.drops = Drops()
        self.delivered = Delivered()
        self.tally = Tally()  # depose votes other seats sent this seat over links
        self.urged: dict[int, int] = {}  # seat -> when its last depose vote came by link
        self.urging: set[int] = set()  # seats whose depose vote came since the last advance
        self._out: list[act.Action] = []
        self.phase = PLAY
        self.host_up = connected
        self.down_since: int | None = None if connected else now
        self.last_in = now
        self.dialing = False
        self.next_dial = now
        self.pause = min(50, budgets.retry_ms)
        self.last_progress = now
        self.voted: dict[tuple[str, int | None, int], tuple[int, dict[str, Any]]] = {}
        # (kind, target, after) -> when its vote last went to the host, and its frame
        self.first_sent: dict[tuple[str, int | None, int], int] = {}
        # the host the votes of ``first_sent`` went to
        self.votes_host: int | None = session.chain.host if connected else None
        self.conn_since = now  # when the present host connection was made
        # (kind, target, after) -> when its vote first went on this host connection
        self.grounds: set[tuple[str, int | None, int]] = set()
        # the timeout and left votes whose rule held at the last look (``_absence``)
        self.abandon_at: int | None = None
        self.probing: dict[int, int] = {}
        self.probed_at: dict[int, int] = {}
        self.answers: dict[int, Answer] = {}
        self.deposing: int | None = None  # the host this seat voted depose about
        self.round: list[int] = []
        self.k = 0
        self.target_since = now
        self.target_for = budgets.try_ms
        self.failover_since = now
        self.next_urge = now
        self.rebuild_from = False  # dials resume with have -1 (looking)
        self.ended: str | None = None
        self.depose_after: int | None = None  # the depose vote sent on this connection
        self.to_pass: list[dict[str, Any]] = []  # shown while the host was away
        self.why: str | None = None  # the rule that made this seat depose
        self.dialed: int | None = None  # the last of the others the failover dialed
        self.target_next = True  # the next attempt is at the candidate whose turn it is
        self.lent_to: dict[int, int] = {}  # seat fed records over a link -> the last it has
        self.urge_lent: dict[int, tuple[int, int]] = {}  # seat urging it -> (after, when) lent
        self.progress_away: int | None = None  # a progress record applied without the host
        self.fed_check: int | None = None  # since when its stuck failover probes its feeders
        self._now = now
        for rec in records or []:
            env = rec["env"]
            self.chats.record(rec)
            self.waits.count(env["body"], env["seat"], session.chain.index_of(env["head"]))
        self.waits.begin(self.s.waiting_on(), self._owed(), now)

    # ------------------------------------------------------------------ helpers
    @property
    def chain(self) -> Any:
        return self.s.chain

    @property
    def m(self) -> int:
        return len(self.chain.at_table)

    def _emit(self, action: act.Action) -> None:
        self._out.append(action)

    def _owed(self) -> dict[int, list[str]]:
        owed: dict[int, list[str]] = {}
        for seat, what in self.s.pending:
            owed.setdefault(seat, []).append(what)
        return owed

    def has_address(self, seat: int) -> bool:
        return self.s.table_body["players"][seat]["listen"] is not None

    def _vote(self, kind: str, target: int | None, why: str) -> bool:
        """Sign and send this seat's vote, once per ``after``, and the same frame again every
        ``revote_ms`` while its rule holds (the caller checks it) and no record has used it (a
        record of ``target``, or one carrying votes of this kind about it, moves the ``after``):
        a host that stalled may have dropped it. Whether it went now."""
        if not self.host_up:
            return False
        key = (kind, target, self.chain.vote_since(kind, target))
        if kind in ("timeout", "left"):
            self.grounds.add(key)
        sent = self.voted.get(key)
        if sent is not None and self._now - sent[0] < self.b.revote_ms:
            return False
        frame = sent[1] if sent is not None else vote_frame(kind, target,
                                                            self.s.vote(kind, target))
        self.voted[key] = (self._now, frame)
        self.first_sent.setdefault(key, self._now)
        self._emit(act.ToHost(rule(why), frame, kind))
        return True

    def _forget_unsent(self) -> None:
        """Keep the first sending time of the votes still kept (``voted``) only."""
        self.first_sent = {k: t for k, t in self.first_sent.items() if k in self.voted}
        self.grounds &= set(self.voted)

    def _unserved(self, now: int) -> bool:
        """``host-late`` for a verdict: a ``timeout`` or ``left`` vote of this seat first went to
        its host ``censor_ms + grace_ms`` ago (over any connection to that host: one that closes
        the seat's connection does not put the clock back), went again on the present one at
        least ``revote_ms`` ago, and still stands (its rule held at
        the last look, with the same ``after``): a host holding a quorum of such votes MUST
        sequence the record, so, if one did, every voter deposes it (a voter alone changes
        nothing: no quorum tries a candidate; ``grace_ms`` more covers the spread of the
        voters' limits).
        Its own seat's time-out keeps ``limit + grace_ms``."""
        host = self.chain.host
        if now - self.conn_since < self.b.revote_ms:
            return False  # sent again on this connection: the host gets that long to serve it
        return any(now - self.first_sent.get(k, now) >= self.b.censor_ms + self.b.grace_ms
                   for k in self.grounds if k[1] != host and k in self.voted)

    def _depose_frame(self, host: int) -> dict[str, Any]:
        return vote_frame("depose", host, self.s.vote("depose", host))

    def _depose_to_host(self, why: str) -> None:
        """This seat's depose vote on its host connection, once per ``after`` (a new host
        gathering takes votes fresh at its chain: the seat votes again as records come)."""
        host = self.deposing
        if host is None or not self.host_up:
            return
        after = self.chain.vote_since("depose", host)
        if after == self.depose_after:
            return
        self.depose_after = after
        self._emit(act.ToHost(rule(why), self._depose_frame(host), "depose"))

    # ------------------------------------------------------------------ events
    def record(self, rec: dict[str, Any], now: int) -> None:
        """The session has applied ``rec`` at ``now``."""
        self._now = now
        env = rec["env"]
        author, body = env["seat"], env["body"]
        self.chats.record(rec)
        head = self.chain.index_of(env["head"])
        self.waits.on_record(rec["i"], author, body, head, self.s.waiting_on(), self._owed(), now)
        self.delivered.on_record(author, head, self.chain.next_counter)
        if is_progress(body):
            self.last_progress = now
            self.abandon_at = None
            if not self.host_up:  # (lent over a link: the table goes on without this seat)
                self.progress_away = now
                self.fed_check = None
        self.drops.back(author)
        self.answers.pop(author, None)
        self.voted = {k: v for k, v in self.voted.items()  # a vote used, or one about a
                      if k[2] == self.chain.vote_since(k[0], k[1])}  # seat that showed itself
        self._forget_unsent()
        gone = [s for s in self.drops.seats if s not in self.chain.at_table]
        for seat in gone:
            self.drops.back(seat)
        out = set(range(self.s.n)) - set(self.chain.at_table)
        if out:
            self.delivered.forget(out)
        if body.get("type") == "host_change":
            self.tally = Tally()
            self.urged.clear()
            self.urge_lent.clear()
            if self.deposing is not None and self.chain.host != self.deposing:
                self.deposing = None
                if self.phase == FAILOVER:  # learnt over a link (lent): resume with it
                    self._new_host_over_link(now)
        if self.deposing is not None and self.chain.host == self.deposing:
            self._depose_to_host("failover")
        if body.get("type") == "host_change":
            self.lent_to.clear()  # (a new host serves every seat it welcomes)
        for seat, have in sorted(self.lent_to.items()):  # fed on: the host may not tell it
            if seat in self.chain.at_table:
                self._emit(act.Lend(rule("lend"), seat, have))
                self.lent_to[seat] = rec["i"]
        if self.s.concluded:
            self.lent_to.clear()

    def _new_host_over_link(self, now: int) -> None:
        """A ``host_change`` lent over a link ended this seat's failover: it dials the new host
        as after a lost connection (a connection to the old host, if it kept one, is closed)."""
        self.phase = PLAY
        if self.host_up:
            self._emit(act.CloseHost(rule("failover"), "a new host took over"))
            self.host_up = False
        self.down_since = self.next_dial = now
        self.dialing = False

    def status(self, seat: int, state: str, now: int) -> None:
        """The host reports ``seat`` ``"dropped"`` or ``"back"``."""
        self._now = now
        if seat == self.me or not 0 <= seat < self.s.n:
            return
        if state == "dropped":
            self.drops.dropped(seat, now)
        elif self.drops.back(seat):
            if self.waits.on_back(seat, now):  # its wait restarts: the host spends the timeout
                self.voted = {k: v for k, v in self.voted.items()  # votes
                              if k[:2] != ("timeout", seat)}
                self._forget_unsent()
            self.answers.pop(seat, None)

    def heard(self, now: int) -> None:
        """A frame came on the host connection."""
        self.last_in = max(self.last_in, now)

    def sent_env(self, env: dict[str, Any], now: int) -> None:
        """This seat's own envelope went to the host (or again after a resume)."""
        self.delivered.sent(env, self.chain.index_of(env["head"]), now)

    def connected(self, host: int, now: int) -> None:
        """A resume with ``host`` as the host succeeded (its welcome came)."""
        self._now = now
        self.host_up = True
        self.down_since = None
        self.dialing = False
        self.pause = min(50, self.b.retry_ms)
        self.last_in = now
        self.last_progress = now  # the stuck clock counts while connected
        self.delivered.resent(now)
        for env in self.delivered.passed(self.me):  # (the node sends its own again)
            self._emit(act.ToHost(rule("pass-on"), {"k": "pass", "env": env}, "pass"))
        waiting, self.to_pass = self.to_pass, []
        for seat in sorted({env["seat"] for env in waiting}):  # shown while the host was
            for env in passable(waiting, seat, self.judge):  # away: passed on if still due
                self._pass_on(env, now)
        self.depose_after = None
        self.voted.clear()  # votes sent before went to a host that may not hold them: again
        if host != self.votes_host:  # a new host: their clocks start again
            self._forget_unsent()
        self.votes_host = host  # (the same host: a closed connection does not put them back)
        self.conn_since = now
        if self.phase == FAILOVER:
            if host == self.deposing:
                self.deposing = None
                self._emit(act.Note(rule("reconnect"), "reconnected", host))
            else:
                self._emit(act.Note(rule("failover"), "new-host", host))
                self._depose_to_host("failover")
            self.phase = PLAY
        elif self.phase == LOOKING:
            self.phase = PLAY
            self.rebuild_from = False
            self._emit(act.Note(rule("lost-table"), "new-host", host))
        else:
            if host == self.deposing:
                # at a candidate still gathering, a resume with the host it deposed succeeded
                # late (the host was frozen meanwhile) and replaced that connection: it plays
                # with that host again, and judges it afresh (censored, host-late)
                self.deposing, self.why, self.round = None, None, []
            self._emit(act.Note(rule("reconnect"), "reconnected", host))

    def dial_failed(self, host: int, now: int) -> None:
        """A resume attempt with ``host`` failed (refused, no answer, another key)."""
        self._now = now
        self.dialing = False
        self.next_dial = now + self.pause
        self.pause = min(self.pause * 2, self.b.retry_ms)

    def disconnected(self, now: int, why: str = "") -> None:
        """The connection to the host broke (or was closed)."""
        self._now = now
        if not self.host_up:
            return
        self.host_up = False
        self.down_since = now
        self.next_dial = now
        self.dialing = False
        if self.phase == PLAY and self.deposing is not None and self.round:
            self.phase = FAILOVER  # the candidate it resumed with is gone: the next one
            self._next_target(now)
            return
        if self.phase == PLAY and not self.s.concluded:
            lasting = self.m <= 2 or not self.chain.candidates()
            wait = 2 * self.b.grace_ms if lasting else self.b.gone_ms
            self._emit(act.Note(rule("reconnect"), "host-lost", self.chain.host, wait, why))

    def probe_answer(
        self, seat: int, present: tuple[int, list[Any]] | None, now: int,
        lent: int | None = None,
    ) -> None:
        """The answer of a probe of ``seat``: its ``(have, pending)``, or None (no answer), and
        its ``lent`` (the first record it got over a link since the host last sent it one). A
        seat that did not get the record that began the wait on it from the host gets the
        records it lacks and a fresh budget (``lend``, once per wait)."""
        self._now = now
        self.probing.pop(seat, None)
        shown = False
        if present is not None:
            have = present[0]
            began = self.waits.began(seat)
            short = began is not None and (have < began or (lent is not None and
                                                            lent <= began))
            passed = passable(present[1], seat, self.judge,  # (a chat or an ack shows
                              seat in self.s.end_owed)
            shown = bool(passed)  # nothing; one before the envelope shown is passed on too)
            for env in passed:
                if not self.delivered.holds(env):  # (passed on before: its clock runs from
                    self._pass_on(env, now)  # then, or a probe every grace would restart it)
            self._lend(seat, have, short, lent, now)
        self.answers[seat] = Answer(now, present is not None, shown)

    def _lend(self, seat: int, have: int, short: bool, lent: int | None, now: int) -> None:
        """``seat`` shows ``have``; ``short``: it did not get the record that began the wait on
        it from the host (it has not, or only over a link): lend it the records after ``have``
        (none, if it holds them) and restart the wait with the catch-up budget (once per
        wait). A seat lent to is fed every record this seat applies after, until a probe shows
        that its host sent it a record again (``lent`` nil) or the host changes."""
        if seat in self.lent_to:
            if lent is None:
                del self.lent_to[seat]
            else:
                self.lent_to[seat] = have
        if seat in (self.me, self.chain.host) or not short:
            return
        if self.waits.on_lend(seat, now, have, took=lent is not None):
            self.lent_to[seat] = have
            self._emit(act.Lend(rule("lend"), seat, have))

    def _pass_on(self, env: dict[str, Any], now: int) -> None:
        """Hand a shown envelope to the host (once connected, if it is not now)."""
        if not self.host_up:
            if env not in self.to_pass:
                self.to_pass.append(env)
            return
        self.delivered.sent(env, self.chain.index_of(env["head"]), now)
        self._emit(act.ToHost(rule("pass-on"), {"k": "pass", "env": env}, "pass"))

    def link_vote(self, seat: int, vote: dict[str, Any], now: int) -> None:
        """A checked ``depose`` vote of ``seat`` about the current host, over a link. Its
        ``after`` is the last record of that host the voter holds: one before this seat's last
        shows that the host did not send it the rest (a host muting it, or one that has sent
        nothing since), so this seat lends it those records: it may be the end of the match,
        which nobody would tell it otherwise (once per ``after`` past the last one lent to it,
        and again after ``try_ms``, in case those records were lost). An awaited seat that urges
        while this seat plays on with the host is probed (:meth:`_probe_urging`)."""
        self._now = now
        host = self.chain.host
        self.tally.add("depose", host, vote)
        self.urged[seat] = now
        self.urging.add(seat)
        after = vote.get("after")
        if not isinstance(after, int) or isinstance(after, bool) or seat == host or \
                after >= self.chain.vote_since("depose", host):
            return
        last, at = self.urge_lent.get(seat, (-2, now - self.b.try_ms))
        if after > last or now - at >= self.b.try_ms:
            self.urge_lent[seat] = (after, now)
            self._emit(act.Lend(rule("lend"), seat, after))

    def stepped_back(self, now: int, records: list[dict[str, Any]] | None = None,
                     connected: bool = False) -> None:
        """This seat took over but gathered no quorum (``records``: its records, those
        forwarded while it gathered counted now by its clocks). ``connected``: it kept its
        connection to the host (7.6): it plays on with it, or, deposing it itself, goes on with
        its failover past itself, still playing through that connection; otherwise failover
        goes on past it."""
        self._now = now
        if records is not None and len(records) > self.waits.counted:
            for rec in records[self.waits.counted:]:
                env = rec["env"]
                self.waits.count(env["body"], env["seat"], self.chain.index_of(env["head"]))
            self.waits.begin(self.s.waiting_on(), self._owed(), now)
        self.urged.clear()  # the votes it took over on: only new urges count again
        if connected:
            self.host_up = True
            if self.deposing is None:  # it took over on the others' urges alone: it plays on
                self.phase = PLAY
                self._emit(act.Note(rule("step-back"), "step-back", self.me))
                return
        elif self.deposing is None:  # it took over on the others' urges alone: their failover
            self.deposing = self.chain.host  # is its own from now on
            self.round = [*self.chain.candidates(), self.chain.host]
            self.failover_since = now
        self.phase = FAILOVER
        self.host_up = connected
        if self.me in self.round:
            self.k = self.round.index(self.me)
        self._next_target(now)
        self._emit(act.Note(rule("step-back"), "step-back", self.me))

    def hosted(self) -> None:
        """This seat's ``host_change`` is sequenced: it hosts; the seat machine rests."""
        self.phase = HOSTED
        self.deposing = None

    def look(self, now: int, first: int | None = None) -> None:
        """Look for the host to rebuild from (a lost table, a restart as the old host, a chain
        that diverged): dial the candidates in rounds with ``have`` -1, ``first`` first."""
        self._now = now
        self.phase = LOOKING
        self.rebuild_from = True
        self.host_up = False
        others = [c for c in self.chain.candidates() if c != self.me]
        if first is not None:
            others = [first] + [c for c in others if c != first]
        self.round = others
        self.k = 0
        self.failover_since = now
        self._target(now, self.b.try_ms)
        self._emit(act.Note(rule("lost-table"), "looking", None, self.b.stuck_ms))

    # ------------------------------------------------------------------ failover
    def _start_failover(self, why: str, now: int) -> None:
        host = self.chain.host
        self.deposing = host
        self.phase = FAILOVER
        self.round = [c for c in self.chain.candidates()] + [host]
        self.k = 0
        self.dialed = None
        self.failover_since = now
        first = self.b.first_try_after_fault_ms if why in ("censored", "host-late") else \
            self.b.try_ms
        self._target(now, first)
        target = self.round[0]
        self._emit(act.Note(rule(why), "failover", target, first))

    def _target(self, now: int, for_ms: int) -> None:
        self.target_since = now
        self.target_for = for_ms
        self.next_urge = now
        self.next_dial = now
        self.dialing = False
        self.target_next = True
        self.pause = min(50, self.b.retry_ms)

    def _next_target(self, now: int) -> None:
        if not self.round:
            return
        self.k = (self.k + 1) % len(self.round)
        self._target(now, self.b.try_ms)
        target = self.round[self.k]
        if target != self.me:
            self._emit(act.Note(rule("failover"), "trying", target, self.b.try_ms))

    def _depose(self, why: str, now: int) -> None:
        """Vote ``depose`` and fail over; the host's connection, if up, is kept: this seat plays
        on through it until a new host welcomes it (7.6)."""
        host = self.chain.host
        if not self.chain.candidates():
            return  # nobody can host in its place: the table waits (abandon decides)
        self.deposing = host
        self.why = why
        self._depose_to_host(why)
        self._start_failover(why, now)

    def _may_take_over(self) -> bool:
        host = self.chain.host
        if self.me not in self.chain.candidates() or self.phase in (HOSTING, HOSTED, ENDED,
                                                                     LOOKING):
            return False
        recent = {s for s, t in self.urged.items() if self._now - t <= self.b.try_ms}
        voters = recent & (set(self.chain.at_table) - {self.me, host})
        own = 1 if self.deposing == host and self.phase == FAILOVER else 0
        return len(voters) + own >= quorum(self.m)

    # ------------------------------------------------------------------ the rules
    def advance(self, now: int) -> list[act.Action]:
        """Apply every rule due at ``now``; the actions to carry out, in order."""
        self._now = now
        if self.phase not in (HOSTING, HOSTED, ENDED) and not self.s.concluded:
            self._connection(now)
            if self.phase == PLAY:
                self._play(now)
            if self.phase in (FAILOVER, LOOKING):  # (also right after _play started one)
                self._failover(now)
            if self._may_take_over():
                self.phase = HOSTING
                self._emit(act.TakeOver(rule("take-over"), self.chain.host))
            self._probe_urging(now)
        self.urging.clear()
        out, self._out = self._out, []
        return out

    def _connection(self, now: int) -> None:
        if self.host_up:  # (beats are the network code's: they go while the node works)
            if now - self.last_in >= self.b.silence_ms:
                self._emit(act.CloseHost(rule("silent"), "silent"))
                self.disconnected(now, "no frame from the host")
            return
        if self.phase in (FAILOVER, LOOKING):
            return  # the failover dials
        if not self.dialing and now >= self.next_dial:
            self.dialing = True
            self._emit(act.Dial(rule("reconnect"), self.chain.host, self.s.count - 1))

    def _play(self, now: int) -> None:
        host = self.chain.host
        if not self.host_up:
            down = now - (self.down_since if self.down_since is not None else now)
            if self.m <= 2 or not self.chain.candidates():
                if down >= 2 * self.b.grace_ms:
                    why = ("the host is gone and, at two seats, no one can take its place"
                           if self.m <= 2 else "the host is gone and no seat can host")
                    self._end(rule("two-seats"), why)
                return
            if down >= self.b.gone_ms:
                self._depose("gone", now)
            return
        if self.m >= 3 and self.deposing != host:  # (already deposing it: at a candidate)
            if self.waits.late(host, now, self.b.grace_ms) and host != self.me:
                self._depose("host-late", now)
                return
            if self._evidence(now) is not None:
                self._depose("censored", now)
                return
        self._absence(now)
        if self.m >= 3 and self.deposing != host and self._unserved(now):
            self._depose("host-late", now)
            return
        self._stuck(now)

    def _evidence(self, now: int) -> dict[str, Any] | None:
        return self.delivered.evidence(now, self.b.censor_ms, self.m, self.s.waiting_on(),
                                       self.last_progress, self.judge, self.last_in,
                                       self.b.beat_ms)

    def _host_owes(self, now: int) -> bool:
        """Whether an envelope this seat delivered to its host (its own, or one it passed on)
        still runs its censor clock, or is evidence and this seat has not yet deposed the host
        for it ``try_ms`` ago, at ``m >= 3`` with a candidate: the host owes it, and
        ``censored`` deposes a host that passes over it, so the table is not stuck and this
        seat does not vote ``abandon`` to that host (7.5). Past that, a depose that gathers no
        quorum (a split vote) leaves the table to ``abandon``. A wait restarted by
        a return (its catch-up budget) can put a seat's limit, and the pass of what a probe
        there shows, so late that its ``censor_ms`` ends past ``stuck_ms``."""
        if self.m < 3 or not self.chain.candidates():
            return False
        if self._evidence(now) is not None:  # censored deposes: the candidates get try_ms
            return not (self.phase == FAILOVER and self.why == "censored") or \
                now - self.failover_since < self.b.try_ms or self._others_catch_up(now)
        return self.delivered.next_due(now, self.b.censor_ms, self.m, self.s.waiting_on(),
                                       self.last_progress) is not None

    def _others_catch_up(self, now: int) -> bool:
        """Whether the other seats may yet hold the evidence this seat deposes on: they probe
        an awaited seat whose envelope this seat passed on only at its limit, and what they
        pass on then is evidence ``censor_ms`` later (``grace_ms`` more for the spread of the
        limits). A depose needs their votes, so the table is not stuck before that (seed
        2104760: the seat that the awaited one urged deposed 27 s before the others could)."""
        for seat in self.waits.awaited:
            end = self.waits.ends(seat)
            if end is not None and self.delivered.pending_of(seat) and \
                    now < end + self.b.censor_ms + self.b.grace_ms:
                return True
        return False

    def _fault_stands(self, now: int) -> bool:
        """Whether the reason this seat deposes its host (still connected to it) holds."""
        host = self.chain.host
        if self.why == "host-late":
            return self.waits.late(host, now, self.b.grace_ms) or self._unserved(now)
        if self.why == "censored":
            return self._evidence(now) is not None
        return True

    def _absence(self, now: int) -> None:
        host = self.chain.host
        self.grounds = set()
        for seat in self.waits.awaited:
            if seat == self.me or not self.waits.late(seat, now):
                continue
            if seat == host:
                if self.m >= 3:
                    self._vote("timeout", seat, "timeout")
                continue
            if self.drops.is_dropped(seat) or self.delivered.pending_of(seat):
                continue
            if self.has_address(seat):
                end = self.waits.ends(seat)
                got = self.answers.get(seat)
                if got is None or end is None or got.at < end:
                    self._probe(seat, now)
                    continue
                if got.shown:
                    continue
            if seat in self.s.end_owed:
                continue  # the end's ack: probed and passed on, but no verdict ranks now
            self._vote("timeout", seat, "timeout")
        for seat in self.drops.seats:
            since = self.drops.since(seat)
            if seat == self.me or seat == host or since is None:
                continue
            base = since
            got = self.answers.get(seat)
            if got is not None and got.answered:
                base = max(base, got.at)
            if now - base < self.b.grace_ms:
                continue
            if self.has_address(seat):
                if got is None or got.at < base + self.b.grace_ms:
                    self._probe(seat, now)
                    continue
                if got.answered:
                    continue
            self._vote("left", seat, "left")

    def _probe_urging(self, now: int) -> None:
        """An awaited seat urges a host change while this seat plays on with the host and
        deposes nobody: the host may be keeping the table's records from it alone (a mute
        host, 7.5). Probed, it is lent what it lacks and what it shows is passed on (``lend``,
        ``pass-on``); it urges about every second, so its envelopes go on while it is fed."""
        if self.phase != PLAY or not self.host_up or self.deposing is not None:
            return
        for seat in sorted(self.urging):
            if seat not in (self.me, self.chain.host) and seat in self.chain.at_table and \
                    self.has_address(seat) and self.waits.began(seat) is not None:
                self._probe(seat, now)

    def _unprobed(self, seat: int) -> bool:
        """Whether awaited ``seat`` is one this seat probes at its limit (7.5) and no probe
        since its limit has shown it with nothing: the table may not be stuck on it yet."""
        if seat in (self.me, self.chain.host) or not self.has_address(seat) or \
                self.drops.is_dropped(seat) or self.delivered.pending_of(seat):
            return False
        end = self.waits.ends(seat)
        got = self.answers.get(seat)
        return end is None or got is None or got.at < end or got.shown

    def _probe(self, seat: int, now: int) -> None:
        if seat in self.probing or now - self.probed_at.get(seat, -10**12) < \
                self.b.probe_every_ms:
            return
        self.probing[seat] = now
        self.probed_at[seat] = now
        self._emit(act.Probe(rule("probe"), seat))

    def _stuck(self, now: int) -> None:
        if now - self.last_progress < self.b.stuck_ms or not self.waits.all_late(now):
            return  # (a seat still within its budget of work: the table is not stuck)
        if any(self._unprobed(seat) for seat in self.waits.awaited):
            return  # (its probe at the limit may pass its envelope on: a lend's restart)
        if self._host_owes(now):
            return  # (the host, not the table, holds the match up: censored deposes it)
        if self.phase == FAILOVER and now - self.failover_since < \
                self.b.first_try_after_fault_ms + self.b.try_ms:
            return  # (a second candidate has not had try_ms yet: the first may be gone)
        if self._verdict_coming(now):
            return  # (its timeout or left vote may yet be sequenced: that is progress)
        if self.s.finished:  # the end not final (7.11): a no_contest would change nothing
            self._end(rule("stuck-end"), "the match is over, but too few seats of the table "
                      "confirmed its end for the result to count")
            return
        if self._vote("abandon", None, "abandon") and self.abandon_at is None:
            self.abandon_at = now
        if self.abandon_at is not None and now - self.abandon_at >= self.b.grace_ms:
            self._end(rule("stuck"), "the table is stuck: no record since this seat's "
                      "abandon vote")

    def _verdict_coming(self, now: int) -> bool:
        """Whether a ``timeout`` or ``left`` vote of this seat whose rule holds now first went
        less than ``censor_ms + grace_ms`` ago: the verdict it asks for ends the wait (7.5), so
        the table is not yet stuck (the seats reach the limit of an awaited seat together and
        vote at once; a host holding both quorums would otherwise end a match it could rank),
        and a host that holds the vote unserved that long is deposed (``host-late``), not
        abandoned (seed 2104271: a stalling host was)."""
        return any(now - self.first_sent.get(k, now) < self.b.censor_ms + self.b.grace_ms
                   for k in self.grounds)

    def _failover(self, now: int) -> None:
        attached = self.host_up and self.phase == FAILOVER and \
            self.deposing == self.chain.host
        if attached and not self._fault_stands(now):  # the host behaves again: stay
            self.phase, self.deposing, self.why = PLAY, None, None
            self.round = []
            self._emit(act.Note(rule("failover"), "host-kept", self.chain.host))
            return
        if attached:
            self._absence(now)  # (it plays on with the host it deposes)
            self._stuck(now)
            if self.phase == ENDED:
                return
        if now - self._failover_base(attached) >= self.b.stuck_ms:
            if self._fed_and_answered(attached, now):
                return  # (fed by seats that still answer: the table may be waiting, 7.5)
            if self.phase == LOOKING:
                self._end(rule("stuck"), "no seat of the table answers as its host: the "
                          "others may have finished the match without this seat")
            else:
                self._end(rule("stuck"), "the host is gone and no seat took over as host")
            return
        if now - self.target_since >= self.target_for:
            self._next_target(now)
        if not self.round:
            return
        target = self.round[self.k]
        seat = self._next_dial(target) if not self.dialing and now >= self.next_dial else None
        if seat is not None:
            self.dialing = True
            have = -1 if self.rebuild_from else self.s.count - 1
            self._emit(act.Dial(rule("failover"), seat, have))
        if target == self.me:
            return  # the others try it now: their votes decide (take-over)
        if self.phase == FAILOVER and target != self.deposing and now >= self.next_urge:
            self.next_urge = now + self.b.urge_ms
            assert self.deposing is not None
            self._emit(act.Urge(rule("urge"), target, self._depose_frame(self.deposing)))

    def _fed_and_answered(self, attached: bool, now: int) -> bool:
        """Whether a seat in failover without its host connection, lent progress records (the
        table goes on, its host does not serve it: muted), waits on past ``stuck_ms``: while a
        seat of the table answers its probes, up to ``2 * stuck_ms`` after the last record lent.
        The table may be waiting on another seat whose return restarted its wait with the
        catch-up budget, which this seat, sent nothing by its host, does not see (seed 2201144:
        an honest muted seat ended as stuck 7 s before the table moved on, was voted ``left``
        and ranked below the cheating host). It probes every seat of the table with an
        address, every ``probe_every_ms``; the first answers get ``PROBE_MS``."""
        if attached or self.phase != FAILOVER or self.progress_away is None or \
                now - self.progress_away >= 2 * self.b.stuck_ms:
            return False
        if self.fed_check is None:
            self.fed_check = now
        for seat in sorted(self.chain.at_table):
            if seat not in (self.me, self.chain.host) and self.has_address(seat):
                self._probe(seat, now)
        if now - self.fed_check < self.b.probe_ms:
            return True  # (the first answers are due)
        recent = now - self.b.probe_ms - self.b.probe_every_ms
        return any(got.answered and got.at >= recent for seat, got in self.answers.items()
                   if seat != self.chain.host)

    def _failover_base(self, attached: bool) -> int:
        """Whence the failover's ``stuck_ms`` counts: its start, or the last progress record
        (while it keeps its host connection, or lent over a link without it)."""
        progress = self.last_progress if attached else (self.progress_away or 0)
        return max(self.failover_since, progress)

    def _dial_cycle(self, target: int) -> tuple[bool, list[int]]:
        """Whom the failover dials: whether the candidate whose turn it is, and every other
        seat of the round (one that does not host refuses at once), never itself, the old host
        only after a lost connection (while connected to it there is nothing to dial)."""
        skip = {self.me}
        if self.host_up and self.phase == FAILOVER and self.deposing is not None:
            skip.add(self.deposing)
        return target not in skip, [s for s in self.round if s != target and s not in skip]

    def _next_dial(self, target: int) -> int | None:
        """The seat of the next attempt: the candidate whose turn it is, first and again after
        each attempt at one of the others, which go in turn (in the order of the round, running
        on from turn to turn). An attempt at a seat out of reach lasts until the driver gives
        it up (its connect timeout, about as long as ``try_ms``): a candidate taking over on
        the urges of a quorum, after refusing the first attempt of its window, must not wait
        for a whole cycle through unreachable seats, or it steps back before the seats trying
        it resume."""
        dial_target, others = self._dial_cycle(target)
        if dial_target and (self.target_next or not others):
            self.target_next = False
            return target
        if not others:
            return None
        self.target_next = dial_target
        after = self.round.index(self.dialed) + 1 if self.dialed in self.round else 0
        order = self.round[after:] + self.round[:after]
        self.dialed = next(s for s in order if s in others)
        return self.dialed

    def _end(self, name: str, why: str) -> None:
        self.phase = ENDED
        self.ended = why
        self._emit(act.End(name, why))

    # ------------------------------------------------------------------ deadline
    def deadline(self) -> int | None:
        """When :meth:`advance` must be called next if nothing happens before (ms), or None."""
        now = self._now
        if self.phase in (HOSTING, HOSTED, ENDED) or self.s.concluded:
            return None
        times: list[int | None] = []
        if self.host_up:
            times.append(self.last_in + self.b.silence_ms)
        elif self.phase == PLAY and not self.dialing:
            times.append(self.next_dial)
        if self.phase == PLAY and not self.host_up and self.down_since is not None:
            times += [self.down_since + self.b.gone_ms, self.down_since + 2 * self.b.grace_ms]
        if self.host_up and self.phase in (PLAY, FAILOVER):  # (failing over, it plays on)
            for seat in self.waits.awaited:
                end = self.waits.ends(seat)
                times.append(end)
                if end is not None and self.delivered.pending_of(seat):
                    times.append(end + self.b.censor_ms + self.b.grace_ms)  # (abandon waits)
                if seat == self.chain.host:
                    times.append(self.waits.ends(seat, self.b.grace_ms))
            for seat in self.drops.seats:
                since = self.drops.since(seat)
                got = self.answers.get(seat)
                base = since if since is not None else now
                if got is not None and got.answered:
                    base = max(base, got.at)
                times.append(base + self.b.grace_ms)
            for at in self.probed_at.values():
                times.append(at + self.b.probe_every_ms)
            for at, _ in self.voted.values():  # (only votes no record has used are kept)
                times.append(at + self.b.revote_ms)
            for key in self.grounds:
                if key in self.first_sent:
                    times.append(max(self.first_sent[key] + self.b.censor_ms + self.b.grace_ms,
                                     self.conn_since + self.b.revote_ms))
                    if now - self.last_progress >= self.b.stuck_ms:  # (abandon waits it)
                        times.append(self.first_sent[key] + self.b.censor_ms + self.b.grace_ms)
            times.append(self.delivered.next_due(now, self.b.censor_ms, self.m,
                                                 self.s.waiting_on(), self.last_progress))
            times.append(self.last_progress + self.b.stuck_ms)
            if self.abandon_at is not None:
                times.append(self.abandon_at + self.b.grace_ms)
        if self.phase in (FAILOVER, LOOKING):
            attached = self.host_up and self.phase == FAILOVER and \
                self.deposing == self.chain.host
            times += [self._failover_base(attached) + self.b.stuck_ms,
                      self.target_since + self.target_for]
            if self.fed_check is not None and self.progress_away is not None:
                times += [at + self.b.probe_every_ms for at in self.probed_at.values()]
                times += [self.fed_check + self.b.probe_ms,
                          self.progress_away + 2 * self.b.stuck_ms]
            if not self.dialing:
                times.append(self.next_dial)
            if self.phase == FAILOVER and self.round and self.round[self.k] not in (
                    self.me, self.deposing):
                times.append(self.next_urge)
        future = [t for t in times if t is not None and t > now]
        return min(future) if future else None
