"""A deliberately broken client for the live check: this project's seat, played by the bot,
that never votes (no ``vote`` frame to its host, no ``depose`` vote over a link). Everything
else (joining, playing, probes, resumes) is the reference seat's.

    python -m tests.interop.nonvoting_seat HOST:PORT LISTEN_HOST:LISTEN_PORT
"""

from __future__ import annotations

import os
import sys
from typing import Any

import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.net.agent import bot_agent
from dernier_p2p.net.peer import Peer, PeerConfig
from dernier_p2p.protocol.liveness import actions as act
from dernier_p2p.protocol.node import effects as fx
from dernier_p2p.protocol.node.peer import PeerNode
from dernier_p2p.wire.identity import IdentityKey


def _a_vote(item: Any) -> bool:
    return isinstance(item, act.Urge) or (
        isinstance(item, fx.Send) and item.frame.get("k") == "vote")


class NonVotingNode(PeerNode):
    """The reference seat node with every vote it would send dropped."""

    def take(self) -> list[Any]:
        return [item for item in super().take() if not _a_vote(item)]


class NonVotingPeer(Peer):
    node_cls = NonVotingNode


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


async def main(table: str, listen: str) -> None:
    peer = NonVotingPeer(IdentityKey.generate(os.urandom(32)), _address(table),
                         bot_agent(HeuristicBot(1)), PeerConfig("Mute", listen=_address(listen)))
    await peer.run()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m tests.interop.nonvoting_seat HOST:PORT LISTEN_HOST:PORT")
    trio.run(main, sys.argv[1], sys.argv[2])
