"""Hostile strategies: what a cheating process does around its (unmodified) node.

A strategy wraps a :class:`~.world.Proc`: it filters what the node sends
(:meth:`Strategy.outgoing`) and what reaches it (:meth:`Strategy.incoming`), may stop its
work or its bot, changes what its probes show (:meth:`Strategy.present`), and may act on its
own (:meth:`Strategy.tick`, or a timer started by :meth:`Strategy.start`). Honest processes
have none.

Host strategies (they act while the process hosts): ``forge`` (a record whose envelope is not
its author's, signed by the host, to seat ``target`` or to all), ``equivocate`` (another valid
record for one index to seat ``target``), ``censor`` (``target``'s envelopes, and passes of
them, are dropped), ``stall`` (nothing is sequenced), ``mute`` (nothing is sent to ``target``,
beats included).

Seat strategies: ``withhold`` (its moves are signed and never sent; probes are shown them),
``chat-withhold`` (the same, each move behind one chat line more than the host's pace takes),
``flood`` (votes, passes, repeated envelopes and link votes, many a second), ``leave`` (the
process vanishes the first time the table waits on it for a deck message or a move),
``resign`` (it resigns when it is to act), ``false-votes`` (``timeout`` and ``left`` votes
about ``target``, ``depose`` votes about the host to the host and to every candidate, and
``abandon`` votes, every second; several processes with it make a colluding minority).
"""

from __future__ import annotations

from typing import Any

from dernier_p2p.protocol.envelope import record_signature
from dernier_p2p.protocol.node import effects as fx
from dernier_p2p.protocol.node.pacing import CHAT_BURST
from dernier_p2p.protocol.votes import vote_frame

HOST_KINDS = ("forge", "equivocate", "censor", "stall", "mute")
SEAT_KINDS = ("withhold", "chat-withhold", "flood", "leave", "resign", "false-votes")


class Strategy:
    """Honest behaviour; subclasses change parts of it."""

    period_ms = 0

    def __init__(self, fault: Any) -> None:
        self.fault = fault
        self.target: int | None = fault.target

    def hosting(self, proc: Any) -> bool:
        return proc.node is not None and proc.node.hosting_now

    def start(self, proc: Any) -> None:
        if self.period_ms:
            self._loop(proc)

    def _loop(self, proc: Any) -> None:
        w = proc.world

        def again() -> None:
            if proc.strategy is not self:
                return
            if proc.alive and proc.node is not None and not proc.frozen:
                self.every(proc)
                proc.flush()
            w.at(w.now + self.period_ms, again)

        w.at(w.now + self.period_ms, again)

    def every(self, proc: Any) -> None:
        """Called every ``period_ms`` while the strategy is on."""

    def outgoing(self, proc: Any, conn: Any, frame: dict[str, Any]) -> list[dict[str, Any]]:
        return [frame]

    def incoming(self, proc: Any, seat: int | None, frame: dict[str, Any]) -> bool:
        return True

    def present(self, proc: Any) -> Any:
        return proc.node.present()

    def may_play(self, proc: Any) -> bool:
        return True

    def may_work(self, proc: Any) -> bool:
        return True

    def admit(self, proc: Any, pid: int) -> bool:
        return True

    def beat(self, proc: Any, conn: Any) -> bool:
        return True

    def tick(self, proc: Any) -> None:
        """Called after every ``advance`` of the node."""


# ---------------------------------------------------------------------- host strategies
class Forge(Strategy):
    """The next record to each seat (or to ``target``) carries an envelope its author did not
    sign; the host signs the record."""

    def __init__(self, fault: Any) -> None:
        super().__init__(fault)
        self.done: set[int] = set()

    def outgoing(self, proc: Any, conn: Any, frame: dict[str, Any]) -> list[dict[str, Any]]:
        if not self.hosting(proc) or conn == fx.UP or frame.get("k") != "rec":
            return [frame]
        if (self.target is not None and conn != self.target) or conn in self.done:
            return [frame]
        rec = frame["rec"]
        if rec["i"] == 0 or rec["h"] != proc.pid:
            return [frame]
        self.done.add(conn)
        env = dict(rec["env"])
        sig = bytearray(env["sig"])
        sig[0] ^= 1
        env["sig"] = bytes(sig)
        forged = dict(rec, env=env)
        forged["hsig"] = record_signature(proc.identity, forged)
        return [{"k": "rec", "rec": forged}]


class Equivocate(Strategy):
    """Seat ``target`` gets another valid record for the next index (the same envelope at
    another time), then the real chain again."""

    def __init__(self, fault: Any) -> None:
        super().__init__(fault)
        self.done = False

    def outgoing(self, proc: Any, conn: Any, frame: dict[str, Any]) -> list[dict[str, Any]]:
        if self.done or not self.hosting(proc) or conn != self.target or \
                frame.get("k") != "rec":
            return [frame]
        rec = frame["rec"]
        if rec["i"] == 0 or rec["h"] != proc.pid:
            return [frame]
        self.done = True
        other = dict(rec, t=rec["t"] + 1)
        other["hsig"] = record_signature(proc.identity, other)
        return [{"k": "rec", "rec": other}]


class Censor(Strategy):
    """Seat ``target``'s envelopes never get sequenced: dropped as they come, passed or not."""

    def incoming(self, proc: Any, seat: int | None, frame: dict[str, Any]) -> bool:
        if not self.hosting(proc) or seat is None:
            return True
        k = frame.get("k")
        if k == "env" and seat == self.target:
            return False
        if k == "pass" and isinstance(frame.get("env"), dict) and \
                frame["env"].get("seat") == self.target:
            return False
        return True


class StallHost(Strategy):
    """Nothing is sequenced: envelopes, passes, votes and readies are dropped, the host's own
    work and seat stop; beats go on."""

    def incoming(self, proc: Any, seat: int | None, frame: dict[str, Any]) -> bool:
        return not (self.hosting(proc) and frame.get("k") in ("env", "pass", "vote", "ready"))

    def may_play(self, proc: Any) -> bool:
        return not self.hosting(proc)

    def may_work(self, proc: Any) -> bool:
        return not self.hosting(proc)


class Mute(Strategy):
    """Nothing reaches seat ``target`` from this host, beats included."""

    def outgoing(self, proc: Any, conn: Any, frame: dict[str, Any]) -> list[dict[str, Any]]:
        if self.hosting(proc) and conn == self.target:
            return []
        return [frame]

    def beat(self, proc: Any, conn: Any) -> bool:
        return not (self.hosting(proc) and conn.seat == self.target
                    and conn.host_proc == proc.pid)


# ---------------------------------------------------------------------- seat strategies
class Withhold(Strategy):
    """Its moves are signed and never sent to the host; a probe is shown them."""

    def outgoing(self, proc: Any, conn: Any, frame: dict[str, Any]) -> list[dict[str, Any]]:
        if conn == fx.UP and frame.get("k") == "env" and \
                frame["env"]["body"].get("type") == "move":
            return []
        return [frame]


class ChatWithhold(Withhold):
    """``withhold`` behind the host's chat pace: before each move it signs one chat line more
    than the pace takes (7.10), then the move; none is sent to the host, a probe is shown them
    all. Passed on together, the host refuses the last line and the move can never be
    sequenced: a seat that took the move for evidence would depose an honest host."""

    def __init__(self, fault: Any) -> None:
        super().__init__(fault)
        self.lined: tuple[int, int] | None = None  # (records, hand) it chatted before

    def may_play(self, proc: Any) -> bool:
        own = proc.node.own if proc.node is not None else None
        if own is None or self.hosting(proc) or own.seat is None:
            return True
        at = (len(own.records), own.session.state.hand_number)
        if at != self.lined:
            self.lined = at
            for k in range(CHAT_BURST + 1):
                own.sent(own.session.chat(f"line {k}"))
        return True

    def outgoing(self, proc: Any, conn: Any, frame: dict[str, Any]) -> list[dict[str, Any]]:
        if conn == fx.UP and frame.get("k") == "env" and \
                frame["env"]["body"].get("type") == "chat":
            return []
        return super().outgoing(proc, conn, frame)


class Flood(Strategy):
    """Many frames a second: its own votes of every kind, passes of sequenced envelopes,
    repeats of its own envelopes (now and then), and depose votes to every candidate."""

    period_ms = 100

    def __init__(self, fault: Any) -> None:
        super().__init__(fault)
        self.k = 0

    def every(self, proc: Any) -> None:
        node = proc.node
        if node.own is None or node.hosting_now:
            return
        s = node.own.session
        w = proc.world
        self.k += 1
        others = [x for x in range(s.n) if x != s.seat]
        victim = others[self.k % len(others)]
        frames = [
            vote_frame("timeout", victim, s.vote("timeout", victim)),
            vote_frame("left", victim, s.vote("left", victim)),
            vote_frame("abandon", None, s.vote("abandon", None)),
        ]
        if s.host != s.seat:
            frames.append(vote_frame("depose", s.host, s.vote("depose", s.host)))
        records = node.own.records
        if len(records) > 1:
            rec = records[1 + self.k % (len(records) - 1)]
            if rec["env"]["seat"] != s.seat:
                frames.append({"k": "pass", "env": rec["env"]})
            elif self.k % 25 == 0:
                frames.append({"k": "env", "env": rec["env"]})  # a repeat: refused
        for frame in frames:
            w.send(proc, fx.UP, frame)
        if s.host != s.seat and self.k % 5 == 0:
            depose = vote_frame("depose", s.host, s.vote("depose", s.host))
            for c in s.chain.candidates():
                if c != s.seat:
                    w.urge(proc, c, depose)


class Leave(Strategy):
    """The process vanishes (for good) the first time the table waits on it."""

    def tick(self, proc: Any) -> None:
        node = proc.node
        if node is None or node.own is None or node.hosting_now:
            return
        s = node.own.session
        if s.seat in s.waiting_on():
            from dernier_p2p.sim.world import kill

            w = proc.world
            w.at(w.now, lambda: kill(w, proc.pid))


class Resign(Strategy):
    """It resigns the first time it is to act."""

    def __init__(self, fault: Any) -> None:
        super().__init__(fault)
        self.done = False

    def may_play(self, proc: Any) -> bool:
        return self.done

    def tick(self, proc: Any) -> None:
        node = proc.node
        if self.done or node is None or node.own is None or node.finished:
            return
        if node.own.may_act():
            self.done = True
            node.send_own(node.own.session.resign(), proc.now())


class FalseVotes(Strategy):
    """Votes against ``target`` and the host, every second, to the host and the candidates."""

    period_ms = 1_000

    def every(self, proc: Any) -> None:
        node = proc.node
        if node.own is None or node.hosting_now:
            return
        s = node.own.session
        w = proc.world
        frames = [vote_frame("abandon", None, s.vote("abandon", None))]
        if self.target is not None and self.target != s.seat:
            frames += [vote_frame("timeout", self.target, s.vote("timeout", self.target)),
                       vote_frame("left", self.target, s.vote("left", self.target))]
        if s.host != s.seat:
            depose = vote_frame("depose", s.host, s.vote("depose", s.host))
            frames.append(depose)
            for c in s.chain.candidates():
                if c != s.seat:
                    w.urge(proc, c, depose)
        for frame in frames:
            w.send(proc, fx.UP, frame)


STRATEGIES: dict[str, type[Strategy]] = {
    "forge": Forge, "equivocate": Equivocate, "censor": Censor, "stall": StallHost,
    "mute": Mute, "withhold": Withhold, "chat-withhold": ChatWithhold, "flood": Flood,
    "leave": Leave, "resign": Resign, "false-votes": FalseVotes,
}


def strategy(fault: Any) -> Strategy:
    return STRATEGIES[fault.kind](fault)
