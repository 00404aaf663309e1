"""A host's liveness: drops and graces, its own votes, the tally, gathering after a take-over.

:class:`HostWatch` is the host's part of the rules table of PROTOCOL.md 7.5 and 7.6, as a pure
state machine, in the manner of :class:`~.seat.SeatWatch`: the driver reports connections
(:meth:`seat_up`, :meth:`seat_down`, :meth:`heard`, :meth:`sent`), vote frames (:meth:`vote`)
and the records its session applied (:meth:`record`), then calls :meth:`advance` for the
actions due and sleeps until :meth:`deadline`. A host built to take over (``old`` given)
gathers: it asks to sequence its ``host_change`` once it holds a quorum of fresh ``depose``
votes whose voters have resumed and finished forwarding (and the others have resumed, or
``settle_ms`` has passed), and steps back if that has not happened ``try_ms`` after it took
over.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.liveness.budgets import Budgets
from dernier_p2p.protocol.liveness.table import rule
from dernier_p2p.protocol.liveness.waits import Drops, Waits
from dernier_p2p.protocol.messages import is_progress
from dernier_p2p.protocol.votes import Tally, check_vote_frame, quorum, vote_ok

Holding = Callable[[int], bool]
"""Whether the host holds an envelope of that seat it has not sequenced yet."""


def status_frame(seat: int, state: str, grace_ms: int) -> dict[str, Any]:
    """A ``status`` frame (4.1): ``seat`` is ``"dropped"`` (``grace_ms`` left) or ``"back"``."""
    return {"k": "status", "seat": seat, "state": state, "grace_ms": grace_ms}


class HostWatch:
    """The host's liveness (see the module docstring). ``session`` is the host seat's session
    (read, and asked to sign the host's own votes); ``holding`` says whether an envelope of a
    seat waits in the host; ``old`` makes it a new host gathering after a take-over."""

    def __init__(
        self,
        session: Any,
        budgets: Budgets,
        holding: Holding,
        cards: int,
        now: int,
        *,
        old: int | None = None,
        tally: Tally | None = None,
        records: list[dict[str, Any]] | None = None,
    ) -> None:
        self.s = session
        self.b = budgets
        self.holding = holding
        self.me: int = session.seat
        self.waits = Waits(budgets, cards)
        for rec in records or []:
            env = rec["env"]
            self.waits.count(env["body"], env["seat"], session.chain.index_of(env["head"]))
        self.waits.begin(session.waiting_on(), self._owed(), now)
        self.drops = Drops()
        self.tally = tally if tally is not None else Tally()
        self.up: dict[int, bool] = {}
        self.last_in: dict[int, int] = {}
        self.asked: set[tuple[str, int | None, int]] = set()
        self.voted: set[tuple[str, int | None, int]] = set()
        self.last_progress = now
        self.lost_since: int | None = None
        self.looked = False
        self.old = old
        self.took_over_at = now
        self.quorum_at: int | None = None
        self.forwarding: set[int] = set()
        self.stepped_back = False
        self.ended = False  # it ended the match for itself (stuck-end)
        self._out: list[act.Action] = []
        self._now = now

    @property
    def chain(self) -> Any:
        return self.s.chain

    @property
    def m(self) -> int:
        return len(self.chain.at_table)

    @property
    def gathering(self) -> bool:
        return self.old is not None

    def _owed(self) -> dict[int, list[str]]:
        owed: dict[int, list[str]] = {}
        for seat, what in self.s.pending:
            owed.setdefault(seat, []).append(what)
        return owed

    def _emit(self, action: act.Action) -> None:
        self._out.append(action)

    # ------------------------------------------------------------------ connections
    def seat_up(self, seat: int, now: int) -> None:
        """``seat`` connected (joined, or resumed)."""
        self._now = now
        self.up[seat] = True
        self.last_in[seat] = now
        if self.drops.back(seat):
            self._emit(act.Broadcast(rule("back"), status_frame(seat, "back", 0), seat, "back"))
            if self.waits.on_back(seat, now):  # its wait starts again (once per wait):
                self.tally.drop("timeout", seat)  # the timeout votes of the last one are spent
                self.voted = {k for k in self.voted if k[:2] != ("timeout", seat)}

    def seat_down(self, seat: int, now: int) -> None:
        """``seat``'s connection is gone (closed, broken, or never there after a take-over)."""
        self._now = now
        self.up[seat] = False
        self.forwarding.discard(seat)
        if seat == self.me or seat not in self.chain.at_table or self.s.concluded:
            return
        if self.drops.is_dropped(seat):
            return
        self.drops.dropped(seat, now)
        frame = status_frame(seat, "dropped", self.grace_left(seat, now))
        self._emit(act.Broadcast(rule("dropped"), frame, seat, "dropped"))

    def grace_left(self, seat: int, now: int) -> int:
        """The grace ``seat`` has left to come back (0 when not dropped)."""
        since = self.drops.since(seat)
        return 0 if since is None else max(0, since + self.b.grace_ms - now)

    def heard(self, seat: int, now: int) -> None:
        """A frame came on ``seat``'s connection at ``now`` (a later report never moves it back)."""
        self.last_in[seat] = max(self.last_in.get(seat, now), now)

    def forwarding_from(self, seat: int, busy: bool) -> None:
        """While gathering: ``seat`` is (or is no longer) forwarding records this host lacks."""
        if busy:
            self.forwarding.add(seat)
        else:
            self.forwarding.discard(seat)

    # ------------------------------------------------------------------ votes
    def vote(self, seat: int, frame: dict[str, Any]) -> ProtocolError | None:
        """A ``vote`` frame from ``seat``'s connection: tallied if it is that seat's own vote
        with a good signature; else the refusal to answer with. A vote the tally holds already
        (a seat sends its votes again, 7.5) is not checked again: it changes nothing."""
        try:
            kind, target, vote = check_vote_frame(frame, self.s.n)
        except ProtocolError as exc:
            return exc
        if vote["seat"] == seat and self.tally.holds(kind, target, vote):
            return None  # sent again (7.5): checked when it first came, counted once
        key = self.s.keys[seat]
        if vote["seat"] != seat or not vote_ok(vote, key, self.s.game, kind, target):
            return ProtocolError("BAD_SIGNATURE", seat, f"a {kind} vote that is not seat {seat}'s")
        self.tally.add(kind, target, vote)
        return None

    def _own_vote(self, kind: str, target: int | None) -> None:
        key = (kind, target, self.chain.vote_since(kind, target))
        if key in self.voted:
            return
        self.voted.add(key)
        self.tally.add(kind, target, self.s.vote(kind, target))

    # ------------------------------------------------------------------ records
    def record(self, rec: dict[str, Any], now: int) -> None:
        """The host's session applied ``rec`` (sequenced, or forwarded while gathering)."""
        self._now = now
        env = rec["env"]
        author, body = env["seat"], env["body"]
        head = self.chain.index_of(env["head"])
        self.waits.on_record(rec["i"], author, body, head, self.s.waiting_on(), self._owed(), now)
        if is_progress(body):
            self.last_progress = now
        self.drops.back(author)  # a record of the seat ends its drop (7.5, drops)
        for seat in self.drops.seats:
            if seat not in self.chain.at_table:
                self.drops.back(seat)
        for kind, target in self.tally.keys():
            if target is not None and target not in self.chain.at_table:
                self.tally.drop(kind, target)
        if body.get("type") == "host_change" and self.chain.host == self.me:
            self.old = None  # gathered: it hosts

    # ------------------------------------------------------------------ the rules
    def advance(self, now: int) -> list[act.Action]:
        """Apply every rule due at ``now``; the actions to carry out, in order."""
        self._now = now
        if not self.s.concluded and not self.stepped_back and not self.ended:
            self._connections(now)
            if self.gathering:
                self._gather(now)
            else:
                self._absence(now)
                self._lost(now)
                self._abandon(now)
                self._count()
        out, self._out = self._out, []
        return out

    def _connections(self, now: int) -> None:
        for seat, up in list(self.up.items()):
            if not up:
                continue
            if now - self.last_in[seat] >= self.b.silence_ms:  # set with ``up``
                self._emit(act.CloseSeat(rule("silent"), seat, "silent"))
                self.seat_down(seat, now)

    def _absence(self, now: int) -> None:
        for seat in self.waits.awaited:
            if seat == self.me or self.drops.is_dropped(seat) or self.holding(seat) or \
                    seat in self.s.end_owed:  # (the end's ack: a verdict now ranks nobody)
                continue
            if self.waits.late(seat, now):
                self._absent("timeout", seat)
        for seat in self.drops.seats:
            since = self.drops.since(seat)
            if since is not None and now - since >= self.b.grace_ms and seat != self.me:
                self._absent("left", seat)

    def _absent(self, kind: str, seat: int) -> None:
        if self.m <= 2:
            key = ("no_contest", seat, self.chain.next_index)
            if key not in self.asked:
                self.asked.add(key)
                body = {"type": "no_contest", "seat": seat, "votes": []}
                self._emit(act.Sequence(rule("no-contest-2"), body, "no_contest"))
            return
        self._own_vote(kind, seat)

    def _abandon(self, now: int) -> None:
        if now - self.last_progress < self.b.stuck_ms or not self.waits.all_late(now):
            return
        if not self.s.finished:
            self._own_vote("abandon", None)
            return
        # the end not final (7.11): no abandon (a no_contest would change nothing); the seats
        # end for themselves at once, the host once they are gone or grace_ms later
        alone = not any(self.up.get(s) for s in self.chain.at_table if s != self.me)
        if not self.ended and (alone or now - self.last_progress >=
                               self.b.stuck_ms + self.b.grace_ms):
            self.ended = True
            self._emit(act.End(rule("stuck-end"), "the match is over, but too few seats of "
                               "the table confirmed its end for the result to count"))

    def _count(self) -> None:
        ranked = False  # a timeout or left sequenced now: the abandon votes wait for it
        for kind, target in sorted(self.tally.keys(), key=lambda k: k[0] == "abandon"):
            if kind not in ("timeout", "left", "abandon") or (kind == "abandon" and ranked):
                continue
            if kind == "abandon" and self.s.finished:
                continue  # (after the end a no_contest changes nothing: stuck-end, 7.11)
            if target == self.me and kind != "timeout":
                continue  # a quorum timing out the host's own seat is sequenced too (7.5)
            if target is not None and target not in self.chain.at_table:
                continue  # it has gone meanwhile
            if kind == "timeout" and target is not None and self.drops.is_dropped(target):
                continue  # a dropped seat's grace decides, by left (7.5); a seat that resumed
                # may vote before it hears of the drop
            since = self.chain.vote_since(kind, target)
            votes = [v for v in self.tally.fresh(kind, target, since, self.chain.next_index)
                     if v["seat"] in self.chain.at_table and v["seat"] != target]
            need = quorum(self.m)
            if len(votes) < need or (kind, target, since) in self.asked:
                continue
            self.asked.add((kind, target, since))
            body = self.s.votes_body(kind, target, votes[:need])
            self._emit(act.Sequence(rule("tally"), body, body["type"]))
            ranked = ranked or kind != "abandon"

    def _lost(self, now: int) -> None:
        if self.m < 3:
            return
        connected = 1 + sum(1 for s in self.chain.at_table if s != self.me and self.up.get(s))
        if connected >= quorum(self.m):
            self.lost_since = None
            self.looked = False
            return
        if self.lost_since is None:
            self.lost_since = now
        if not self.looked and now - self.lost_since >= self.b.gone_ms \
                and self.chain.candidates():
            self.looked = True
            self._emit(act.LookForHost(rule("lost-table")))

    def _gather(self, now: int) -> None:
        old = self.old
        assert old is not None
        if now - self.took_over_at >= self.b.try_ms:
            self.stepped_back = True
            self._emit(act.StepBack(rule("step-back")))
            return
        need = quorum(self.m)
        since = self.chain.vote_since("depose", old)
        self._own_vote("depose", old)
        votes = self.tally.fresh("depose", old, since, self.chain.next_index)
        fresh = [v for v in votes if v["seat"] in self.chain.at_table and v["seat"] != old]
        if len(fresh) < need:
            self.quorum_at = None
            return
        if self.quorum_at is None:
            self.quorum_at = now
        usable = [v for v in fresh if v["seat"] == self.me or (
            self.up.get(v["seat"]) and v["seat"] not in self.forwarding)]
        if len(usable) < need or self.forwarding:
            return
        others = set(self.chain.at_table) - {self.me, old}
        everyone = all(self.up.get(s) for s in others)
        if not everyone and now - self.quorum_at < self.b.settle_ms:
            return
        usable.sort(key=lambda v: v["seat"] != self.me)
        body = self.s.votes_body("depose", old, usable[:need])
        key = ("depose", old, since)
        if key in self.asked:
            return
        self.asked.add(key)
        self._emit(act.Sequence(rule("gather"), body, "host_change"))

    def deadline(self) -> int | None:
        """When :meth:`advance` must be called next if nothing happens before (ms), or None."""
        now = self._now
        if self.s.concluded or self.stepped_back or self.ended:
            return None
        times: list[int | None] = []
        for seat, up in self.up.items():
            if up:
                times.append(self.last_in[seat] + self.b.silence_ms)
        if self.gathering:
            times.append(self.took_over_at + self.b.try_ms)
            if self.quorum_at is not None:
                times.append(self.quorum_at + self.b.settle_ms)
        else:
            for seat in self.waits.awaited:
                times.append(self.waits.ends(seat))
            for seat in self.drops.seats:
                since = self.drops.since(seat)
                if since is not None:
                    times.append(since + self.b.grace_ms)
            times.append(self.last_progress + self.b.stuck_ms)
            if self.s.finished:
                times.append(self.last_progress + self.b.stuck_ms + self.b.grace_ms)
            if self.lost_since is not None:
                times.append(self.lost_since + self.b.gone_ms)
        future = [t for t in times if t is not None and t > now]
        return min(future) if future else None
