"""A cheating seat for the fault tests, run as its own process against a real host:

    python -m tests.net.cheat KIND HOST:PORT TRANSCRIPT

It joins the table, plays as the heuristic bot, and cheats once, as ``KIND`` says:

* ``illegal-play``: at its turn, plays a card that some face would make legal but its own face
  does not (signed directly, past the session's own check); its token then reveals the card;
* ``false-complaint``: complains about the first sound box (peek or transfer) it receives,
  giving the box's true plaintext;
* ``token-proof``: sends its first ``tokens`` message with one proof altered;
* ``shuffle-proof``: sends its shuffle with one proof scalar altered;
* ``bad-box``: sends its first box (peek or transfer) with the ciphertext altered, so that it
  does not open: the receiver's complaint stops the hand and the audit names this seat;
* ``withhold``: withhold and show (PROTOCOL.md 22): at its first turn in play it signs its move,
  never sends it to the host and shows it to every probe as unsequenced, hoping the others take
  it for the host's censorship; it also votes to depose the host and urges itself, as next
  host, over links. It listens (a candidate host) and plays honestly otherwise.

It prints ``seat N`` once seated and ``cheated: KIND`` when it has cheated; it exits 1 when the
match stops on a fault (its own), 0 if the match ended without the chance to cheat.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

import trio

from dernier_p2p.bots import HeuristicBot
from dernier_p2p.deck import group as g
from dernier_p2p.deck.transfer import Transfer, open_box
from dernier_p2p.net.peer import Peer, PeerConfig
from dernier_p2p.protocol.envelope import sign_envelope
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.messages import move_to_body
from dernier_p2p.protocol.node.peer import PeerNode
from dernier_p2p.rules import Card, IllegalMove, Move, Phase, Play, State, apply
from dernier_p2p.rules.cards import deck_cards
from dernier_p2p.wire.identity import IdentityKey

KINDS = ("illegal-play", "false-complaint", "token-proof", "shuffle-proof", "bad-box",
         "withhold")


def _bump(scalar: bytes) -> bytes:
    """Another valid scalar (the proof then fails, the encoding does not)."""
    return g.encode_scalar((g.decode_scalar(scalar) + 1) % g.ORDER)


def illegal_play(
    state: State, seat: int, view: Mapping[int, Card], faces: list[Card]
) -> Play | None:
    """A play of a held card whose own face is illegal now while another face would be legal."""
    for slot, face in sorted(view.items()):
        if slot not in state.hands[seat]:
            continue
        try:
            apply(state, Play(seat, slot, face))
            continue  # legal: no cheat
        except IllegalMove:
            pass
        for other in faces:
            try:
                apply(state, Play(seat, slot, other))
                return Play(seat, slot, face)
            except IllegalMove:
                continue
    return None


class CheatNode(PeerNode):
    """The node of a :class:`Cheat`: it alters its own deck messages, or complains falsely,
    once (``cheat`` is the peer, set per process)."""

    cheat: Any = None

    def _resign(self, env: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        return sign_envelope(
            self.identity, env["game"], env["seat"], env["n"], env["head"], body
        )

    def send_own(self, env: dict[str, Any], now: int) -> None:
        cheat = self.cheat
        body = env["body"]
        if not cheat.done and cheat.kind == "withhold" and body["type"] == "move" and \
                self.own is not None and self.own.session.state.phase is Phase.PLAY:
            self.own.sent(env)  # kept, and shown to probes as unsequenced: never sent
            self.own.in_flight = True
            cheat.withheld = env
            cheat.cheated()
            return
        if not cheat.done and cheat.kind == "token-proof" and body["type"] == "tokens":
            tokens = [dict(t) for t in body["tokens"]]
            proof = tokens[0]["proof"]
            tokens[0]["proof"] = {"e": proof["e"], "s": _bump(proof["s"])}
            env = self._resign(env, {**body, "tokens": tokens})
            cheat.cheated()
        elif not cheat.done and cheat.kind == "shuffle-proof" and body["type"] == "shuffle":
            proof = dict(body["proof"])
            proof["s"] = [_bump(proof["s"][0]), *proof["s"][1:]]
            env = self._resign(env, {**body, "proof": proof})
            cheat.cheated()
        elif not cheat.done and cheat.kind == "bad-box" and body["type"] in ("peek", "transfer"):
            box = body["box"]
            env = self._resign(env, {**body, "box": bytes([box[0] ^ 1]) + box[1:]})
            cheat.cheated()
        super().send_own(env, now)

    def advance(self, now: int) -> None:
        super().advance(now)
        cheat = self.cheat
        own, watch = self.own, self.watch
        if cheat.withheld is None or own is None or watch is None or \
                own.session.chain.host == own.seat:
            return
        host = own.session.chain.host
        if not cheat.urged and self.up:  # its own false vote, and to itself as next host
            cheat.urged = True
            self._to_host(watch._depose_frame(host), now)
            watch.link_vote(own.seat, watch._depose_frame(host)["vote"], now)

    def work(self, now: int) -> None:
        before = None if self.own is None else len(self.own.records)
        super().work(now)
        cheat = self.cheat
        if self.own is None or before == len(self.own.records) or cheat.done or \
                cheat.kind != "false-complaint":
            return
        body = self.own.records[-1]["env"]["body"]
        if body["type"] not in ("peek", "transfer") or body["to"] != self.own.seat:
            return
        session = self.own.session
        mine = session.mine
        if mine is None or mine.complaints or not mine.boxes:
            return
        ref = len(mine.boxes) - 1
        t: Transfer = mine.boxes[ref].transfer
        text = open_box(session.game, mine.hand, t, mine.secret.transfer_private)
        complaint = {"type": "complaint", "hand": mine.hand, "ref": ref, "plaintext": text}
        super().send_own(session._author.envelope(complaint, session.head), now)
        cheat.cheated()


class Cheat(Peer):
    """A peer that cheats once (see the module docstring)."""

    def __init__(self, kind: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind = kind
        self.done = False
        self.bot = HeuristicBot(1)
        self.withheld: dict[str, Any] | None = None
        self.urged = False
        self.node_cls = type("CheatNodeOf", (CheatNode,), {"cheat": self})

    def cheated(self) -> None:
        self.done = True
        withheld = "" if self.withheld is None else f" n={self.withheld['n']}"
        print(f"cheated: {self.kind}{withheld}", flush=True)

    async def play(self, state: State, seat: int, view: Mapping[int, Card]) -> Move | None:
        """The agent: the heuristic bot, but at the first chance an illegal play (its kind)."""
        assert self.me is not None
        session = self.me.session
        if self.kind == "illegal-play" and not self.done:
            faces = list(dict.fromkeys(deck_cards(session.rules.deck)))
            move = illegal_play(state, seat, view, faces)
            if move is not None:
                env = session._author.envelope(move_to_body(move, state.hand_number),
                                               session.head)
                self.me.own.in_flight = True
                await self.send(env)
                self.cheated()
                return None
        return self.bot(state, seat, view)


async def main(kind: str, address: str, transcript: str) -> int:
    host, port = address.rsplit(":", 1)
    identity = IdentityKey.generate(os.urandom(32))
    listen = ("127.0.0.1", 0) if kind == "withhold" else None  # a candidate host
    config = PeerConfig(name="cheat", transcript=transcript, linger_s=0.5, listen=listen)
    peer = Cheat(kind, identity, (host, int(port)), None, config)
    peer.agent = peer.play

    async def seated() -> None:
        await peer.joined.wait()
        print(f"seat {peer.seat}", flush=True)

    code = 0
    async with trio.open_nursery() as nursery:
        nursery.start_soon(seated)
        try:
            await peer.run()
            print("match over" if peer.done else "match over without the cheat", flush=True)
        except ProtocolError as exc:
            print(f"stopped: {exc.code} seat {exc.seat}: {exc.detail}", flush=True)
            code = 1
        nursery.cancel_scope.cancel()
    return code

if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in KINDS:
        sys.exit(f"usage: python -m tests.net.cheat {{{','.join(KINDS)}}} HOST:PORT TRANSCRIPT")
    sys.exit(trio.run(main, *sys.argv[1:]))
