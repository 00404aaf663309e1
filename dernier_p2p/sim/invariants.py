"""What must hold in every simulated match (docs/LIVENESS.md, "The simulator" states them).

*Honest* processes are those without a :class:`~.faults.Hostile` fault; the others are
*cheaters*. A fault *touches* the processes it disturbs (:meth:`~.faults.Fault.touches`: an
end of a stalled, cut or reset link, a killed or frozen process, the side of a partition
whose honest seats make no majority of the table,
:meth:`~.faults.Partition.touches_among`). A seat is *within its budgets* while its CPU speed is at
least :data:`BUDGET_SPEED` (the budgets of PROTOCOL.md 18.2 cover work twenty times slower than
the cost model's reference machine; half of that margin is kept for the work the budgets do
not count).

A seat is *connected to a majority* at time ``T`` when it is honest, within its budgets, and
``T`` lies outside every window ``[f.at, f.end + settle_ms]`` of a fault ``f`` touching it
(``settle_ms = stuck_ms + grace_ms + turn_ms``: the longest a verdict may take to follow a
fault), and, if a cheater hosts at some point, it gives a listen address (PROTOCOL.md 22: a
seat nobody can probe is judged on what the host relays). It is *protected* when that holds
for the whole match.

Safety (each one a count in the report):

* ``crash``: an exception other than a protocol fault escaped a node (or the simulator);
* ``blamed-honest``: an honest node stopped on a fault naming an honest seat;
* ``verify``: an honest transcript does not verify as ok, INCOMPLETE or a fault naming a
  cheater (:func:`~dernier_p2p.protocol.verify.check_records`);
* ``one-chain``: two honest transcripts differ at an index where neither is a ``host_change``
  replacing the other's signer, nor are both ``host_change`` records replacing the same host,
  nor is either signed by a cheating host (PROTOCOL.md 4.4: a host change that reached no
  quorum is superseded), or two honest seats finished the match with different results;
  except where the two histories split (the first of their two records at the first index
  where they differ was persisted) within ``[f.at, f.end + settle_ms]`` of a partition ``f``
  that the cheaters can complete to a quorum on both sides
  (:meth:`~.faults.Partition.forks_among`): two quorums of ``q(n)`` share at least
  ``2 * q(n) - n`` seats (one at an odd ``n``, two at an even one), honest seats vote only on
  their side, so enough cheaters make a quorum on each, and each side sees what it would see if
  the other had crashed, where the seats present must go on (PROTOCOL.md 22);
* ``verdict``: a ``timeout``, ``left`` or ``host_change`` (as ``old``) naming an honest seat
  was first persisted at a time the seat was connected to a majority, and before it ended the
  match for itself (``stuck``, ``two-seats``: whether it ended rightly is for the liveness
  invariants to say; so is a two-seat ``no_contest``, which ranks nobody);
* ``ranked-below-cheater``: a protected seat ranked below a cheater after a verdict naming it,
  sequenced no later than the record that ended the match (a later one ranks nobody).

Liveness, for a *majority-connected* match (at least ``q(n)`` protected seats, ``n >= 3``, one
of them the first host or a seat with a listen address; at two seats, both protected): after
the faults settle (:func:`~.faults.settled`), no ``progress_gap_ms`` passes without a new record
at a protected seat, until every protected seat has finished the match ranked, or stopped on a
fault proven against a cheater:

* ``no-end``: such a gap came (the match did not end within the bound; a result whose end
  record never became final, 7.11, is no end);
* ``no-contest``: a protected seat's match ended as no contest, or ended for it incomplete
  (``stuck``, ``two-seats``).
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.liveness.budgets import UNIT_MS, Budgets
from dernier_p2p.protocol.node import effects as fx
from dernier_p2p.protocol.verify import INCOMPLETE, check_records
from dernier_p2p.protocol.votes import quorum
from dernier_p2p.sim.faults import INF, Fault, Hostile, Partition, SlowCpu, settled
from dernier_p2p.sim.hostile import HOST_KINDS

SAFETY = ("crash", "blamed-honest", "verify", "one-chain", "verdict", "ranked-below-cheater")
LIVENESS = ("no-end", "no-contest")
EXPOSING = ("forge", "equivocate", "mute")
"""Host strategies against one seat that only links defend (PROTOCOL.md 4.6: the target shows
its proof, or is lent what the host kept from it): a target that gives no address is not
counted as connected to a majority."""
BUDGET_SPEED = 0.1
"""The slowest CPU (times the reference) counted within the budgets (see the docstring)."""


def budget_speed(unit_ms: float) -> float:
    """Half the slowest speed the budgets cover, for a cost model of ``unit_ms`` a unit."""
    return 2 * unit_ms / UNIT_MS


@dataclass
class Violation:
    invariant: str
    detail: str
    at: int = 0  # world ms

    @property
    def safety(self) -> bool:
        return self.invariant in SAFETY


class Judge:
    """The invariants of one match: the schedule's windows, the per-step checks (it observes
    every effect of every process) and the checks at the end."""

    def __init__(self, setup: Any, faults: list[Fault], unit_ms: float = 0.1,
                 exposing: tuple[str, ...] | None = None) -> None:
        self.setup = setup
        self.faults = faults
        self.n = setup.players
        self.budgets = Budgets.of_table(setup.timers, **setup.constants)
        b = self.budgets
        self.settle_ms = b.stuck_ms + b.grace_ms + b.turn_ms
        self.progress_gap_ms = 2 * b.stuck_ms + 30_000
        self.cheaters = frozenset(f.pid for f in faults if isinstance(f, Hostile))
        self.honest = frozenset(range(self.n)) - self.cheaters
        self.hostile_host = any(isinstance(f, Hostile) and f.kind in HOST_KINDS
                                for f in faults)
        self.min_speed = budget_speed(unit_ms)
        self.windows: dict[int, list[tuple[int, int]]] = {p: [] for p in range(self.n)}
        for f in faults:
            if isinstance(f, Partition):
                continue  # (composed below)
            self._touch(f.touches(self.n), f.at, f.end)
        self._partitions([f for f in faults if isinstance(f, Partition)])
        for f in faults:  # a target no link reaches: only the host speaks for it
            if isinstance(f, Hostile) and f.kind in (EXPOSING if exposing is None else exposing) \
                    and f.target is not None and not setup.listen(f.target):
                self.windows[f.target].append((f.at, INF))
        for f in faults:
            if isinstance(f, SlowCpu) and setup.speed(f.pid) * f.speed < self.min_speed:
                end = INF if f.end >= INF else f.end + self.settle_ms
                self.windows[f.pid].append((f.at, end))
        self.forks: list[tuple[int, int]] = [  # a history may split in these (22)
            (f.at, INF if f.end >= INF else f.end + self.settle_ms) for f in faults
            if isinstance(f, Partition) and f.forks_among(self.n, self.cheaters)]
        self.protected = frozenset(p for p in self.honest if self._always_connected(p))
        self.settled = settled(faults)
        self.live = self._majority_connected()
        self.violations: list[Violation] = []
        self.first_seen: dict[bytes, int] = {}  # record's host signature -> first persist
        self.progress_at = 0
        self.ended: dict[int, int] = {}  # seat -> when it ended the match for itself
        self.world: Any = None

    # ------------------------------------------------------------------ definitions
    def _touch(self, touched: Iterable[int], at: int, end: int) -> None:
        """Seats ``touched`` by a fault from ``at`` to ``end``: not connected to a majority
        until ``settle_ms`` after it healed."""
        touched = set(touched)
        if touched:  # a seat nobody can probe is judged on what the host relays (22):
            touched |= {p for p in range(self.n) if not self.setup.listen(p)}
        for pid in sorted(touched):
            self.windows[pid].append((at, INF if end >= INF else end + self.settle_ms))

    def _partitions(self, parts: list[Partition]) -> None:
        """Partitions at once cut the table into the groups no partition in force separates;
        between two changes of the partitions in force, a group whose honest seats make no
        majority is touched (:meth:`~.faults.Partition.touches_among` for one partition; two
        that overlap can leave every side short, as seed 900217 showed: the host's side of one
        lost a seat to the other)."""
        times = sorted({f.at for f in parts} | {f.end for f in parts if f.end < INF})
        for k, start in enumerate(times):
            stop = times[k + 1] if k + 1 < len(times) else INF
            active = [f for f in parts if f.at <= start < f.end]
            if not active:
                continue
            sides: dict[tuple[bool, ...], set[int]] = {}
            for p in range(self.n):
                sides.setdefault(tuple(p in f.group for f in active), set()).add(p)
            self._touch((p for side in sides.values() if len(side - self.cheaters) < quorum(self.n)
                         for p in side), start, stop)

    def _base_ok(self, pid: int) -> bool:
        if pid not in self.honest or self.setup.speed(pid) < self.min_speed:
            return False
        return not (self.hostile_host and not self.setup.listen(pid))

    def _always_connected(self, pid: int) -> bool:
        return self._base_ok(pid) and not self.windows[pid]

    def connected(self, pid: int, t: int) -> bool:
        """Whether seat ``pid`` was connected to a majority at world time ``t``."""
        return self._base_ok(pid) and not any(a <= t <= b for a, b in self.windows[pid])

    def _majority_connected(self) -> bool:
        s = self.protected
        if self.n == 2:
            return len(s) == 2
        if len(s) < quorum(self.n):
            return False
        return 0 in s or any(self.setup.listen(p) for p in s)

    def note(self, invariant: str, detail: str) -> None:
        at = 0 if self.world is None else self.world.now
        self.violations.append(Violation(invariant, detail, at))

    # ------------------------------------------------------------------ per step
    def effect(self, proc: Any, e: Any) -> None:
        """Every effect of every process, as the world carries it out."""
        if isinstance(e, fx.Persist):
            key = e.record.get("hsig")
            if key not in self.first_seen:
                self.first_seen[key] = self.world.now
            if proc.pid in self.protected:
                self.progress_at = max(self.progress_at, self.world.now)
        elif isinstance(e, fx.Stopped) and proc.pid in self.honest:
            seat = getattr(e.fault, "seat", None)
            if seat is not None and seat in self.honest:
                self.note("blamed-honest", f"seat {proc.pid} stopped on {e.fault}")
        elif isinstance(e, act.End):
            self.ended.setdefault(proc.pid, self.world.now)
            if proc.pid in self.protected and self.live:
                self.note("no-contest", f"seat {proc.pid} ended the match: {e.why}")

    def crashed(self, exc: BaseException) -> None:
        tb = traceback.extract_tb(exc.__traceback__)
        where = "; ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in tb[-3:])
        self.note("crash", f"{type(exc).__name__}: {exc} ({where})")

    # ------------------------------------------------------------------ the run
    def done(self, procs: dict[int, Any]) -> bool:
        """Whether the run may stop: every honest process alive is over (finished, ended,
        stopped), or the table made no progress for too long after the faults settled."""
        over = all(self.over(p) for pid, p in procs.items() if pid in self.honest and p.alive)
        if over:
            return True
        now = self.world.now
        return now > self.settled and now - max(self.progress_at, self.settled) > \
            self.progress_gap_ms

    @staticmethod
    def over(proc: Any) -> bool:
        node = proc.node
        if node is None:
            return proc.ended is not None
        return node.finished or node.stopped is not None or node.ended is not None or \
            proc.ended is not None or proc.stopped is not None or (
                node.host is not None and node.host.done and not node.host.stepped_back)

    # ------------------------------------------------------------------ at the end
    def finish(self, procs: dict[int, Any]) -> None:
        transcripts = {pid: p.disk for pid, p in procs.items() if pid in self.honest and p.disk}
        self._one_chain(procs, transcripts)
        self._verify(transcripts)
        self._verdicts(transcripts)
        self._liveness(procs)

    def _one_chain(self, procs: dict[int, Any], transcripts: dict[int, list[Any]]) -> None:
        pids = sorted(transcripts)
        for k, a in enumerate(pids):
            for b in pids[k + 1:]:
                why = self._diverge(transcripts[a], transcripts[b])
                if why is not None:
                    self.note("one-chain", f"seats {a} and {b}: {why}")
        results: dict[int, str] = {}
        for pid in pids:
            node = procs[pid].node
            if node is not None and node.finished and node.own is not None:
                results[pid] = repr(sorted((node.own.session.result or {}).items()))
        apart = sorted({p for a in results for b in results if a < b and results[a] != results[b]
                        and not self._forked(transcripts[a], transcripts[b]) for p in (a, b)})
        if apart:
            self.note("one-chain", f"seats finished with different results: {apart}")

    def _diverge(self, a: list[Any], b: list[Any]) -> str | None:
        i = _split(a, b)
        if i is None:
            return None
        ra, rb = a[i], b[i]
        if ra["h"] in self.cheaters or rb["h"] in self.cheaters or self._forked(a, b):
            return None
        if _replaces(ra, rb) or _replaces(rb, ra) or _rivals(ra, rb):
            return None
        return f"records {i} differ (signed by seats {ra['h']} and {rb['h']})"

    def _forked(self, a: list[Any], b: list[Any]) -> bool:
        """Whether histories ``a`` and ``b`` split where the design allows it: the first of
        their two records at the first index where they differ was persisted within a
        partition whose two sides the cheaters can each complete to a quorum (and the time it
        takes to settle). There both sides may go on (PROTOCOL.md 22): each sees what it would
        see if the other side had crashed, where a majority present must go on."""
        i = _split(a, b)
        if i is None or not self.forks:
            return False
        seen = [self.first_seen[r["hsig"]] for r in (a[i], b[i]) if r["hsig"] in self.first_seen]
        return bool(seen) and any(at <= min(seen) <= end for at, end in self.forks)

    def _verify(self, transcripts: dict[int, list[Any]]) -> None:
        chains = sorted(transcripts.items(), key=lambda kv: -len(kv[1]))
        checked: list[list[Any]] = []
        for pid, recs in chains:
            if any(len(c) >= len(recs) and c[len(recs) - 1]["hsig"] == recs[-1]["hsig"]
                   for c in checked):
                continue  # a prefix of a chain checked already
            checked.append(recs)
            v = check_records(recs)
            if v.ok or v.code == INCOMPLETE or (v.seat is not None and v.seat in self.cheaters):
                continue
            self.note("verify", f"seat {pid}'s transcript: {v.code} seat {v.seat} at record "
                                f"{v.index}: {v.detail[:160]}")

    def _verdicts(self, transcripts: dict[int, list[Any]]) -> None:
        seen: set[bytes] = set()
        against: dict[int, int] = {}
        for pid in sorted(transcripts):
            for rec in transcripts[pid]:
                key = rec["hsig"]
                if key in seen:
                    continue
                seen.add(key)
                for seat, what in _verdict(rec):
                    if seat not in self.honest:
                        continue
                    t = self.first_seen.get(key, 0)
                    against[seat] = against.get(seat, 0) + 1
                    if self.connected(seat, t) and self.ended.get(seat, INF) > t:
                        self.note("verdict", f"record {rec['i']} ({what}) names seat {seat}, "
                                             f"connected to a majority at {t} ms")
        if not against or not self.cheaters:
            return
        for pid in sorted(transcripts):
            proc = self.world.procs[pid]
            standings = _standings(proc)
            if not standings:
                continue
            # only a verdict before the record that ended the match can have ranked a seat
            # (one after it, while the end is not yet final, changes no standing: 7.11)
            ranked = ranking_verdicts(transcripts[pid], proc.node.own.end_at)
            for h in sorted(self.protected & set(ranked)):
                for c in sorted(self.cheaters):
                    if standings.index(h) > standings.index(c):
                        self.note("ranked-below-cheater", f"seat {h} below cheater {c} after "
                                                          f"{ranked[h]} verdict(s)")
            break

    def _liveness(self, procs: dict[int, Any]) -> None:
        if not self.live or any(v.invariant == "no-contest" for v in self.violations):
            return
        late = []
        for pid in sorted(self.protected):
            node = procs[pid].node
            if node is None or node.own is None:
                late.append(pid)
                continue
            session = node.own.session
            if session.finished:
                if session.no_contest:
                    self.note("no-contest", f"seat {pid}'s match ended as no contest")
                    return
                if not session.unfinal:
                    continue  # (a result never final is no end: 7.11)
            fault = node.stopped or node.own.stopped
            if fault is not None and getattr(fault, "seat", None) in self.cheaters:
                continue
            late.append(pid)
        if late:
            self.note("no-end", f"seats {late} did not finish (last record at "
                                f"{self.progress_at} ms, faults settled at {self.settled} ms)")


def _split(a: list[Any], b: list[Any]) -> int | None:
    """The first index at which transcripts ``a`` and ``b`` hold different records, if any."""
    for i in range(min(len(a), len(b))):
        if a[i]["hsig"] != b[i]["hsig"]:
            return i
    return None


def _replaces(new: dict[str, Any], old: dict[str, Any]) -> bool:
    body = new["env"]["body"]
    return body.get("type") == "host_change" and body.get("old") == old["h"]


def _rivals(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two host changes replacing the same host (the first reached no quorum: a partition cut
    its voters off before it came, and they deposed again; PROTOCOL.md 4.4)."""
    ba, bb = a["env"]["body"], b["env"]["body"]
    return ba.get("type") == bb.get("type") == "host_change" and ba.get("old") == bb.get("old")


def _verdict(rec: dict[str, Any]) -> Iterable[tuple[int, str]]:
    body = rec["env"]["body"]
    kind = body.get("type")
    if kind in ("timeout", "left") and isinstance(body.get("seat"), int):
        yield body["seat"], kind
    elif kind == "host_change":
        yield body["old"], kind


def ranking_verdicts(records: Iterable[dict[str, Any]], end: int | None) -> dict[int, int]:
    """Per seat, the verdicts naming it that can have ranked it: those in records up to
    ``end``, the record that ended the match (all of them while it has not ended)."""
    out: dict[int, int] = {}
    for rec in records:
        if end is None or rec["i"] <= end:
            for seat, _ in _verdict(rec):
                out[seat] = out.get(seat, 0) + 1
    return out


def _standings(proc: Any) -> tuple[int, ...]:
    node = proc.node
    if node is None or node.own is None or not node.own.session.finished:
        return ()
    result = node.own.session.result or {}
    return tuple(result.get("standings", ()))
