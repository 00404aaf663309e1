"""The scripted host's sans-IO part: this project's host (:class:`~dernier_p2p.protocol.node.
hosting.Hosting`) noting every frame of the client under test as an event and carrying out the
scenario's host faults (see :mod:`interop.drive.model`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dernier_p2p.protocol.envelope import make_record, record_hash, sign_envelope
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.node import effects as fx
from dernier_p2p.protocol.node.hosting import Hosting
from dernier_p2p.protocol.ready import check_ready_frame
from dernier_p2p.protocol.votes import check_vote_frame, vote_ok
from dernier_p2p.rules import Phase
from interop.drive.model import Fault

if TYPE_CHECKING:
    from interop.drive.stage import Stage

HOST_FAULTS = frozenset({"withhold-votes", "no-ready", "hold", "censor", "mute", "drop",
                         "chat", "forge-chat", "corrupt", "refuse-move"})
SEQUENCING_FAULTS = frozenset({"chat", "forge-chat"})  # they make a record of the host's
TURN_MOVES = ("play", "draw", "pass")
TURNED_UP = (Phase.NAME_SUIT, Phase.PLAY)  # the first card is turned up (a J or Jolly there
# waits for the dealer to name the suit: an idle dealer never does, and the hand is still on)


def cue_holds(cue: str, state: Any, i: int, seat_of: Callable[[str], int | None]) -> bool:
    """Whether ``cue`` (:mod:`interop.drive.model`) holds after record ``i``, the scripted
    host's rules state then being ``state`` (None before the match)."""
    if cue == "start":
        return True
    if cue.startswith("record:"):
        return i >= int(cue[7:])
    if state is None:
        return False
    if cue == "play":
        return state.phase in TURNED_UP
    if cue.startswith("turn:"):
        return state.phase is Phase.PLAY and state.turn == seat_of(cue[5:])
    return False


class DriveHosting(Hosting):
    """The scripted host's sans-IO part: this project's host, noting the client's frames and
    carrying out the scenario's host faults. ``stage`` is set on a subclass per run."""

    stage: Stage  # set on a subclass per run

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.active: dict[str, Fault] = {}
        self.refused_n: set[int] = set()
        self.relayed_at: dict[int, float] = {}

    # ------------------------------------------------------------------ the client's frames
    @property
    def client(self) -> int:
        return self.stage.client

    def frame(self, seat: int, msg: dict[str, Any], now: int) -> None:
        kind = msg.get("k")
        if seat == self.client:
            self._note(msg)
            if kind == "vote" and "withhold-votes" in self.active:
                return
            if kind == "env" and self._refuse(seat, msg, now):
                return
        if kind == "ready" and "no-ready" in self.active:
            return
        if kind in ("env", "pass") and self._dropped(seat, msg):
            return
        super().frame(seat, msg, now)

    def _dropped(self, seat: int, msg: dict[str, Any]) -> bool:
        env = msg.get("env")
        author = env.get("seat") if isinstance(env, dict) else None
        hold, censor = self.active.get("hold"), self.active.get("censor")
        if hold is not None and msg["k"] == "env" and seat == self.stage.seat_of(hold.role):
            return True
        return censor is not None and author == self.stage.seat_of(censor.role)

    def _refuse(self, seat: int, msg: dict[str, Any], now: int) -> bool:
        env = msg.get("env")
        body = env.get("body") if isinstance(env, dict) else None
        if "refuse-move" not in self.active or not isinstance(body, dict) \
                or body.get("type") != "move":
            return False
        del self.active["refuse-move"]
        self.refused_n.add(env.get("n"))
        self.stage.events.add("refused", "host", n=env.get("n"))
        self._fault(seat, "ILLEGAL_MOVE", "refused by the scripted host: sign a move again",
                    now)
        return True

    def joined(self, seat: int, have: int | None, now: int) -> bool:
        full = super().joined(seat, have, now)
        if seat == self.client:
            if have is None:
                listen = self.players[seat].listen is not None
                self.stage.events.add("hello", "host", listen=listen)
            else:
                self.stage.events.add("resume", "host", where="host", have=have,
                                      have_ok=-1 <= have <= self.made() - 1)
        return full

    def made(self) -> int:
        """How many records this host has made (some may still be applied to its seat)."""
        return len(self.records) if self.sequencer is None else len(self.sequencer.records)

    # ------------------------------------------------------------------ what it sends
    def own_ready(self, frame: dict[str, Any]) -> None:
        if "no-ready" not in self.active:
            super().own_ready(frame)

    def _relay(self, rec: dict[str, Any]) -> None:
        self.relayed_at[rec["i"]] = time.monotonic()
        super()._relay(rec)

    def relay_to(self, seat: int, rec: dict[str, Any]) -> dict[str, Any] | None:
        mute = self.active.get("mute")
        if mute is not None and seat == self.stage.seat_of(mute.role):
            return None
        if seat == self.client and "corrupt" in self.active:
            del self.active["corrupt"]
            sig = bytearray(rec["hsig"])
            sig[0] ^= 1
            return {**rec, "hsig": bytes(sig)}
        return rec

    def _after_record(self, rec: dict[str, Any], now: int) -> None:
        super()._after_record(rec, now)
        self._cue(rec, now)

    def _cue(self, rec: dict[str, Any], now: int) -> None:
        """After each record of the scripted host: the faults whose cue now holds. A host
        fault that sequences nothing is carried out here, at its cue (through the stage's
        pump a fast hand could end first on a loaded machine); the rest go to the pump."""
        assert self.own is not None
        stage = self.stage
        state = self.own.session.state
        for k, fault in enumerate(stage.sc.faults):
            if k not in stage.fired and cue_holds(fault.cue, state, rec["i"], stage.seat_of):
                stage.fired.add(k)
                if fault.what in HOST_FAULTS and fault.what not in SEQUENCING_FAULTS:
                    self.fire(fault, now)
                else:
                    stage.pending.append(fault)

    def _note(self, msg: dict[str, Any]) -> None:
        """A frame of the client at the scripted host, as an event."""
        kind = str(msg.get("k"))
        own, events, client = self.own, self.stage.events, self.client
        if own is None:
            events.add(kind, "host")
            return
        s = own.session
        last = self.made() - 1
        try:
            if kind == "vote":
                vkind, target, vote = check_vote_frame(msg, s.n)
                since = s.chain.vote_since(vkind, target)
                events.add("vote", "host", kind=vkind, target=target,
                           sig_ok=vote["seat"] == client and vote_ok(
                               vote, s.keys[client], s.game, vkind, target),
                           fresh=since <= vote["after"] <= last, raw=msg)
            elif kind == "ready":
                seat, at = check_ready_frame(msg, s.keys, s.game)
                events.add("ready", "host", sig_ok=seat == client, at_ok=at <= last)
            elif kind == "done":  # judged once the host holds the match's end (_watch)
                events.add("done", "host", last=msg.get("last"), last_ok=None)
            elif kind == "error":
                events.add("error", "host", code=msg.get("code"), detail=msg.get("detail"))
            elif kind == "pass":
                env = msg.get("env")
                events.add("pass", "host",
                           author=env.get("seat") if isinstance(env, dict) else None)
            elif kind == "env":
                self._note_env(msg.get("env"))
            else:
                events.add(kind, "host")
        except ProtocolError as exc:
            events.add(kind, "host", malformed=exc.detail)

    def _note_env(self, env: Any) -> None:
        """An envelope of the client: its kind, counter and, for a turn move, whether it
        waited out the offer window after another seat's move (18.1)."""
        assert self.own is not None
        body = env.get("body") if isinstance(env, dict) else None
        if not isinstance(body, dict):
            self.stage.events.add("env", "host", malformed="not an envelope")
            return
        state = self.own.session.state
        turn = (body.get("type") == "move" and body.get("move") in TURN_MOVES
                and state is not None and state.phase is Phase.PLAY
                and state.turn == self.client)
        waited = None
        if turn:
            for rec in reversed(self.records):
                b = rec["env"]["body"]
                if b["type"] == "move":
                    if rec["env"]["seat"] != self.client and rec["i"] in self.relayed_at:
                        gap = time.monotonic() - self.relayed_at[rec["i"]]
                        waited = gap >= 0.8 * self.stage.sc.declare_ms / 1000
                    break
        self.stage.events.add("env", "host", type=body.get("type"), move=body.get("move"),
                              n=env.get("n"), again=env.get("n") in self.refused_n,
                              turn=turn, waited=waited)

    # ------------------------------------------------------------------ faults
    def fire(self, fault: Fault, now: int) -> None:
        """Carry out a host fault (in the driver's pump)."""
        if self.own is None:
            return
        session = self.own.session
        if fault.what == "drop":
            self.out.append(fx.Close(self.client, "the scripted host drops the connection",
                                     now=True))
        elif fault.what == "chat":
            self.own_env(session.sign({"type": "chat", "text": fault.arg}))
        elif fault.what == "forge-chat":
            body = {"type": "chat", "text": fault.arg}
            env = sign_envelope(self.identity, self.game, self.seat,
                                session.chain.next_counter(self.seat), session.head, body)
            forged = make_record(self.identity, env, self.seat, len(self.records),
                                 record_hash(self.records[-1]), self._t(now))
            self._relay(forged)
            self.done = True  # it sequences nothing more
        else:
            self.active[fault.what] = fault

