"""A cheating host, run as its own process by the attack tests: it hosts a table of bots and,
mid-hand, announces ``left`` or ``timeout`` for seat 1 (present and answering) carrying only
its own vote, signed past its own sequencer's checks. It prints ``PORT n`` once listening and
``FORGED i`` once the record is relayed, then stops.

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
from dernier_p2p.rules import Phase
from dernier_p2p.wire.identity import IdentityKey


class Rogue(Host):
    attack = "left"
    fired = False

    async def _publish(self, rec: dict[str, Any], out: Any = None) -> None:
        await super()._publish(rec, out)
        me = self.me
        if self.fired or me is None or len(self.records) < 30:
            return
        if me.session.state.phase is not Phase.PLAY:
            return
        self.fired = True
        s = me.session
        body = {"type": self.attack, "seat": 1, "votes": [s.vote(self.attack, 1)]}
        env = sign_envelope(self.identity, self.game, self.seat, s.chain.next_counter(self.seat),
                            s.head, body)
        forged = make_record(self.identity, env, self.seat, len(self.records),
                             record_hash(self.records[-1]), self._record_time())
        self._relay(forged)
        me.writer.append(forged)
        print(f"FORGED {forged['i']}", flush=True)
        await trio.sleep(1.0)
        self.done.set()


async def main(attack: str, players: int, transcript: str) -> None:
    Rogue.attack = attack
    config = HostConfig(players=players, options={"match": ["hands", 1]},
                        timers=Timers(turn_ms=30_000, declare_ms=30, grace_ms=5_000),
                        name="rogue", transcript=transcript, linger_s=0.5)
    host = Rogue(IdentityKey.generate(bytes([90]) * 32), config, bot_agent(HeuristicBot(0)))
    async with trio.open_nursery() as nursery:
        await nursery.start(host.run)
        print(f"PORT {host.port}", flush=True)


if __name__ == "__main__":
    trio.run(main, sys.argv[1], int(sys.argv[2]), sys.argv[3])
