"""A cheating host, run as its own process by the attack tests. It hosts a table of bots whose
victim is the last seat, present and answering, and attacks it as ``ATTACK`` says:

* ``left`` / ``timeout``: at the victim's first envelope it signs, past its own sequencer's
  checks, a record taking the victim out with only its own vote, relays it and stops. Prints
  ``FORGED i``.
* ``censor``: from the victim's first move in play it silently holds its every envelope (never
  sequenced, no error) and lies about it: it tells the other seats the victim dropped
  (``status``) and casts its own ``left`` vote, and its timers cast its ``timeout`` votes as
  the wait goes on; what other seats pass on for the victim (``pass``) it holds too. Any
  quorum the other seats complete is sequenced by the ordinary host code,
  so an honest seat that voted against the present victim would make it lose. At two seats its
  timer ends the match as no contest (the host code's rule). Prints ``CENSOR i``, then
  ``DEPOSED`` and exits once every seat has left it.

    python -m tests.net.rogue_host ATTACK PLAYERS TRANSCRIPT
"""

from __future__ import annotations

import sys
from typing import Any

import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net.agent import bot_agent
from dernier_p2p.net.host import Host, HostConfig
from dernier_p2p.net.timers import Timers
from dernier_p2p.protocol.envelope import make_record, record_hash, sign_envelope
from dernier_p2p.protocol.node.effects import Persist
from dernier_p2p.protocol.node.hosting import Hosting
from dernier_p2p.rules import Phase
from dernier_p2p.wire.identity import IdentityKey

ATTACKS = ("left", "timeout", "censor")
TIMERS = Timers(turn_ms=3_000, declare_ms=30, grace_ms=2_000)


class RogueHosting(Hosting):
    attack = "left"
    fired = False

    @property
    def victim(self) -> int:
        return self.config.players - 1

    def _due(self, seat: int, env: Any) -> bool:
        """Whether the attack starts with this envelope: censorship at the victim's first move
        in play; a forgery at its first envelope (its accept: the forged record's check does
        not depend on the state of the match)."""
        body = env.get("body") if isinstance(env, dict) else None
        if seat != self.victim or self.own is None or not isinstance(body, dict):
            return False
        if self.attack != "censor":
            return True
        state = self.own.session.state
        return state is not None and state.phase is Phase.PLAY and body.get("type") == "move"

    def frame(self, seat: int, msg: dict[str, Any], now: int) -> None:
        env = msg.get("env") if msg.get("k") in ("env", "pass") else None
        author = env.get("seat") if isinstance(env, dict) else None
        if env is not None and not self.fired and self._due(author, env):
            self.fired = True
            if self.attack == "censor":
                self._censor(now)
            else:
                self._forge(now)
                return
        if env is not None and self.fired and (self.attack != "censor" or
                                               author == self.victim):
            return  # held: never sequenced, no error (after a forgery: nothing more)
        super().frame(seat, msg, now)

    def _censor(self, now: int) -> None:
        print(f"CENSOR {len(self.records)}", flush=True)
        grace = self.config.timers["grace_ms"]
        lie = {"k": "status", "seat": self.victim, "state": "dropped", "grace_ms": grace}
        for seat in self.conns:
            if seat != self.victim:
                self._send(seat, lie)
        assert self.own is not None and self.watch is not None
        if len(self.own.session.chain.at_table) > 2:
            self.watch.tally.add("left", self.victim, self.own.session.vote("left", self.victim))

    def closed(self, seat: int, now: int) -> None:
        super().closed(seat, now)
        if self.fired and not self.conns and not self.done:
            print("DEPOSED", flush=True)
            self.done = True

    def _forge(self, now: int) -> None:
        assert self.own is not None
        s = self.own.session
        body = {"type": self.attack, "seat": self.victim, "votes": [s.vote(self.attack,
                                                                           self.victim)]}
        env = sign_envelope(self.identity, self.game, self.seat, s.chain.next_counter(self.seat),
                            s.head, body)
        forged = make_record(self.identity, env, self.seat, len(self.records),
                             record_hash(self.records[-1]), self._t(now))
        self._relay(forged)
        self.out.append(Persist(forged))
        print(f"FORGED {forged['i']}", flush=True)
        self.done = True


class Rogue(Host):
    hosting_cls = RogueHosting


async def main(attack: str, players: int, transcript: str) -> None:
    RogueHosting.attack = attack
    # the table plays on when the rogue is voted out (leave play_on), as the tests expect
    config = HostConfig(players=players, options={"match": ["hands", 1], "leave": "play_on"},
                        timers=TIMERS,
                        name="rogue", transcript=transcript, linger_s=1.0, bind="127.0.0.1")
    host = Rogue(IdentityKey.generate(bytes([90]) * 32), config, bot_agent(HeuristicBot(0)))
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        print(f"PORT {host.port}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ATTACKS:
        sys.exit(f"usage: python -m tests.net.rogue_host {{{','.join(ATTACKS)}}} PLAYERS FILE")
    trio.run(main, sys.argv[1], int(sys.argv[2]), sys.argv[3])
