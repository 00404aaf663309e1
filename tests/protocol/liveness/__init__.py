"""Shared set-ups of the liveness tests: real tables in memory, forked for each test.

A :class:`Bed` is a copy of a cached :class:`LocalTable` (its host's sequencer and one real
:class:`Session` per seat): ``Bed.opened`` holds record 0 alone, every seat's ``accept`` queued
(cheap: no shuffle yet); ``Bed.dealt`` is a three-seat match dealt, seat 1 to move (a
time-out makes the seat draw and pass). A test
sequences envelopes one by one (:meth:`Bed.put`), every session applying each record, and feeds
the records to the machine under test at times it chooses. Time is an integer; nothing sleeps.
"""

from __future__ import annotations

import ast
import copy
import functools
import re
from pathlib import Path
from typing import Any

from dernier_p2p.protocol.judge import would_sequence
from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.liveness.budgets import Budgets
from dernier_p2p.protocol.liveness.host import HostWatch
from dernier_p2p.protocol.liveness.seat import SeatWatch
from dernier_p2p.protocol.local import LocalTable, identity_for
from dernier_p2p.protocol.session import Session
from dernier_p2p.protocol.votes import VOTE_KINDS, vote_ok
from dernier_p2p.wire.hashing import digest

PROTOCOL = Path(__file__).resolve().parents[3] / "PROTOCOL.md"


@functools.cache
def units_table() -> dict[str, str]:
    """PROTOCOL.md 18.2's table of work: each row's label and its units, as written."""
    lines = PROTOCOL.read_text(encoding="utf-8").splitlines()
    start = lines.index("| work | units |")
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        label, units = (cell.strip() for cell in line.strip().strip("|").split("|"))
        rows[label] = units
    return rows


def units(label: str, **values: int) -> int:
    """The units of a row of PROTOCOL.md 18.2's table (``a * X + b`` or ``a``), for ``X``."""
    text = units_table()[label].replace("`", "")
    found = re.match(r"\s*(\d+)(?:\s*\*\s*([A-Za-z])\s*\+\s*(\d+))?", text)
    assert found, f"units not understood: {text!r}"
    a, name, b = found.groups()
    return int(a) if name is None else int(a) * values[name] + int(b)


@functools.cache
def stuck_formula() -> str:
    """PROTOCOL.md 18's ``stuck_ms = ...`` expression, as written (names and ``max``)."""
    text = PROTOCOL.read_text(encoding="utf-8")
    section = text[text.index("\n## 18. Timing\n"):text.index("\n### 18.1 ")]
    found = re.findall(r"`stuck_ms = ([^`]+)`", " ".join(section.split()))
    assert len(found) == 1, f"PROTOCOL.md 18 gives stuck_ms {len(found)} times"
    return found[0]


def stuck_of(**values: int) -> int:
    """PROTOCOL.md 18's ``stuck_ms`` for these values of its names (``turn_ms``,
    ``SILENCE_MS`` ...): sums, products, ``max``, integers and names only."""

    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            return values[node.id]
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
            a, b = value(node.left), value(node.right)
            return a + b if isinstance(node.op, ast.Add) else a * b
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "max" and node.args and not node.keywords:
            return max(value(arg) for arg in node.args)
        raise AssertionError(f"not understood in stuck_ms: {ast.dump(node)}")

    tree = ast.parse(stuck_formula(), mode="eval")
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - {"max"}
    assert used == set(values), f"stuck_ms names {sorted(used)}, given {sorted(values)}"
    return value(tree)


PLAIN = units("checking any other record")  # a table, an accept, a move, a chat, an ack ...
ANSWER = units("answering: anything else (an accept, a coin message, a key commitment, a "
               "secret, a move)")

CARDS = 54  # dernier-54
BIG = 10**9  # a duration no test reaches

TURN, GRACE = 30_000, 5_000
CENSOR, PROBE = 10_000, 5_000  # the protocol's censor_ms and PROBE_MS
GONE = 3_000  # min(3 000, GRACE)
TRY = 2 * GONE
URGE, PROBE_EVERY, SETTLE = 900, 700, 1_200
BEAT = 1_500  # how late after a delivery a frame from the host makes it evidence
REVOTE = 2_300  # a vote whose rule holds and no record used goes again this long after
SILENCE = 200_000  # beyond most tests (a test that outlasts it hears the host: ``heard``)
STUCK = stuck_of(turn_ms=TURN, censor_ms=CENSOR, SILENCE_MS=SILENCE, PROBE_MS=PROBE,
                 grace_ms=GRACE)
assert STUCK == max(TURN, CENSOR) + SILENCE + PROBE + 2 * GRACE  # 245 000
FIRST_TRY = TURN + CENSOR + TRY  # the first candidate after censored or host-late


def budgets(**constants: int) -> Budgets:
    """The budgets of the tests: every derived duration distinct from the others, silence out
    of the way of the tests that do not reach ``stuck_ms`` (which counts it)."""
    values: dict[str, Any] = dict(
        turn_ms=TURN, declare_ms=3_000, grace_ms=GRACE, beat_ms=BEAT, silence_ms=SILENCE,
        urge_ms=URGE, probe_every_ms=PROBE_EVERY, settle_ms=SETTLE, revote_ms=REVOTE,
    )
    values.update(constants)
    return Budgets(**values)


def seeds(n: int) -> list[bytes]:
    return [bytes([60 + k]) * 32 for k in range(n)]


def _where(listen: tuple[bool, ...]) -> list[tuple[str, int] | None]:
    return [("127.0.0.1", 7100 + k) if on else None for k, on in enumerate(listen)]


@functools.cache
def _opened(listen: tuple[bool, ...]) -> LocalTable:
    # a seat that leaves or stalls goes out and the others play on (7.9), which dernier's
    # own default (option leave "end") would turn into the end of the match
    return LocalTable("dernier", seeds(len(listen)), {"match": ["hands", 1], "leave": "play_on"},
                      listen=_where(listen))


@functools.cache
def _dealt(listen: tuple[bool, ...]) -> LocalTable:
    # a time-out ends no match, nor does a seat going out
    options = {"match": ["hands", 1], "timeout": "draw_pass", "leave": "play_on"}
    table = LocalTable("dernier", seeds(len(listen)), options, listen=_where(listen))
    table.deliver()
    return table


@functools.cache
def _over(listen: tuple[bool, ...]) -> LocalTable:
    # dernier's own leave "end": the last seat's resign ends the match at once (7.9)
    table = LocalTable("dernier", seeds(len(listen)), {"match": ["hands", 1]},
                       listen=_where(listen))
    table.deliver()
    last = len(listen) - 1
    table.queue.append(table.sessions[last].resign())
    while table.queue:
        rec = table.sequence(table.queue.popleft())
        for session in table.sessions:
            table.queue.extend(session.receive(rec, rec["t"]))
    return table


class Bed:
    """One test's table (see the module docstring)."""

    def __init__(self, table: LocalTable) -> None:
        self.t = table

    @classmethod
    def opened(cls, listen: tuple[bool, ...] = (True, True, True)) -> Bed:
        return cls(copy.deepcopy(_opened(tuple(listen))))

    @classmethod
    def dealt(cls, listen: tuple[bool, ...] = (True, True, True)) -> Bed:
        return cls(copy.deepcopy(_dealt(tuple(listen))))

    @classmethod
    def over(cls, listen: tuple[bool, ...] = (True, True, True, True)) -> Bed:
        """A table whose last seat resigned after the deal, which ended its ``dernier``
        match; every session holds the end (whether it is final is for the caller to set)."""
        return cls(copy.deepcopy(_over(tuple(listen))))

    @property
    def sessions(self) -> list[Session]:
        return self.t.sessions

    @property
    def records(self) -> list[dict]:
        return list(self.t.records)

    def put(self, env: dict) -> dict:
        """Sequence ``env`` now; every session applies the record (their replies queue)."""
        rec = self.t.sequence(env)
        for s in self.sessions:
            self.t.queue.extend(s.receive(rec, rec["t"]))
        return rec

    def take(self, seat: int, kind: str | None = None) -> dict:
        """The first queued envelope of ``seat`` (of body type ``kind``), out of the queue."""
        for env in list(self.t.queue):
            if env["seat"] == seat and (kind is None or env["body"]["type"] == kind):
                self.t.queue.remove(env)
                return env
        raise LookupError(f"nothing of seat {seat} queued")

    def accept(self, *seats: int) -> list[dict]:
        """Sequence the queued accepts of ``seats``, in that order."""
        return [self.put(self.take(s, "accept")) for s in seats]

    def flush(self) -> list[dict]:
        """Sequence every queued envelope (and the replies) in order."""
        out = []
        while self.t.queue:
            out.append(self.put(self.t.queue.popleft()))
        return out

    def move(self, seat: int, k: int = 0) -> dict:
        """Seat ``seat``'s envelope for its ``k``-th legal move (not sent)."""
        return self.sessions[seat].intend(self.sessions[seat].legal()[k])

    def absent(self, kind: str, seat: int, voters: list[int]) -> dict:
        """The host's ``timeout``/``left`` envelope for ``seat`` with the votes of ``voters``."""
        host = self.sessions[self.t.host_seat]
        votes = [self.sessions[v].vote(kind, seat) for v in voters]
        return host.announce(host.votes_body(kind, seat, votes))

    def fresh_session(self, seat: int, upto: int) -> Session:
        """A new session of ``seat`` holding records ``0 .. upto - 1`` (a restarted seat)."""
        recs = self.records
        s = Session(identity_for(self.t.seeds[seat]), seat, recs[0],
                    digest("dernier-p2p/local-seed", self.t.seeds[seat]))
        for rec in recs[1:upto]:
            s.receive(rec, rec["t"])
        return s

    def seat_watch(self, seat: int, now: int = 0, b: Budgets | None = None, *,
                   judge: Any = None, connected: bool = True) -> SeatWatch:
        session = self.sessions[seat]
        if judge is None:
            def judge(env: dict, lead: int = 0, before: Any = None) -> bool:
                return would_sequence(session, env, lead, before) is None
        return SeatWatch(session, b or budgets(), judge, CARDS, now, connected=connected,
                         records=self.records)

    def host_watch(self, now: int = 0, b: Budgets | None = None, *, holding: Any = None,
                   seat: int | None = None, old: int | None = None,
                   tally: Any = None) -> HostWatch:
        session = self.sessions[self.t.host_seat if seat is None else seat]
        return HostWatch(session, b or budgets(), holding or (lambda s: False), CARDS, now,
                         old=old, tally=tally, records=self.records)


def said(actions: list[act.Action]) -> list[tuple]:
    """Actions as comparable tuples: type, rule and what they are about (a vote's kind and
    target, a probe's seat, a dial's seat and ``have``, a note's kind and seat ...)."""
    out: list[tuple] = []
    for a in actions:
        name = type(a).__name__
        if isinstance(a, act.ToHost):
            about = a.frame.get("target") if a.kind in VOTE_KINDS else None
            out.append((name, a.rule, a.kind, about))
        elif isinstance(a, (act.Probe, act.Urge)):
            out.append((name, a.rule, a.seat))
        elif isinstance(a, act.Dial):
            out.append((name, a.rule, a.seat, a.have))
        elif isinstance(a, act.Note):
            out.append((name, a.rule, a.kind, a.seat, a.ms))
        elif isinstance(a, act.End):
            out.append((name, a.rule))
        elif isinstance(a, (act.ToSeat, act.CloseSeat)):
            out.append((name, a.rule, a.seat))
        elif isinstance(a, act.Broadcast):
            out.append((name, a.rule, a.kind, a.skip, a.frame.get("grace_ms")))
        elif isinstance(a, act.Sequence):
            out.append((name, a.rule, a.kind, a.body.get("seat", a.body.get("old"))))
        elif isinstance(a, act.TakeOver):
            out.append((name, a.rule, a.old))
        else:
            out.append((name, a.rule))
    return out


def vote_of(session: Session, frame: dict, kind: str, target: int | None, voter: int) -> dict:
    """The vote a ``vote`` frame carries, checked: its kind, target, voter and signature."""
    assert frame["k"] == "vote" and frame["kind"] == kind and frame["target"] == target
    vote = frame["vote"]
    assert vote["seat"] == voter
    assert vote_ok(vote, session.keys[voter], session.game, kind, target)
    return vote
