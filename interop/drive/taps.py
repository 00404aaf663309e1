"""Taps on the scripted parties, and the driver's own links to the client: what the client
sends that the host's sans-IO part does not see (``error`` frames, taken by the reader), what
it does over the scripted seats' links (probes answered, ``depose`` votes, records lent), and
probes and a bad link opened to it."""

from __future__ import annotations

import os
from typing import Any

import trio

from dernier_p2p.net import handshake as hs
from dernier_p2p.net import links
from dernier_p2p.net.framing import open_framed
from dernier_p2p.net.host import Host
from dernier_p2p.net.peer import Peer
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.session import Session
from dernier_p2p.protocol.votes import check_vote_frame, vote_ok
from dernier_p2p.wire.identity import IdentityKey
from interop.drive.events import Events


def tap_errors(host: Host, events: Events, client: int) -> None:
    """Note the client's ``error`` frames, which the host's reader takes before its
    sans-IO part sees them: through the pump, in the order the frames were read."""
    driver = host.driver
    read = driver._read_seat

    async def read_seat(conn: Any, seat: int) -> None:
        if seat == client:
            receive = conn.stream.receive

            async def tapped() -> bytes:
                payload = await receive()
                try:
                    msg = hs.unpack(payload)
                except hs.NetError:
                    return payload
                if msg.get("k") == "error":  # noted in the pump, in turn with the frames
                    # read before it (an envelope read first but handled later is not "after")
                    code, detail = msg.get("code"), msg.get("detail")
                    driver.post(lambda node, now: events.add("error", "host", code=code,
                                                             detail=detail))
                return payload

            conn.stream.receive = tapped
        await read(conn, seat)

    driver._read_seat = read_seat  # type: ignore[method-assign]


def tap_links(role: str, peer: Peer, events: Events, client: int, deaf: bool) -> None:
    """Note what the client does over this seat's links (a deaf seat drops votes)."""
    driver = peer.driver
    made = driver.serve_links_on
    tapped: set[int] = set()

    def serve() -> links.LinkServer | None:
        server = made()
        if server is None or id(server) in tapped:
            return server
        tapped.add(id(server))
        on_vote, on_rec, on_present = server.on_vote, server.on_rec, server.on_present
        session = server.session

        def vote(seat: int, msg: dict[str, Any]) -> None:
            if seat == client:
                try:
                    kind, target, v = check_vote_frame(msg, session.n)
                    ok = v["seat"] == client and vote_ok(v, session.keys[client],
                                                         session.game, kind, target)
                    events.add("urge", role, kind=kind, target=target, sig_ok=ok)
                except ProtocolError as exc:
                    events.add("urge", role, malformed=exc.detail)
            if not deaf and on_vote is not None:
                on_vote(seat, msg)

        def rec(seat: int, record: Any) -> None:
            if seat == client:
                events.add("lend", role, i=record.get("i") if isinstance(record, dict)
                           else None)
            if on_rec is not None:
                on_rec(seat, record)

        def present(seat: int) -> None:
            if seat == client:
                events.add("probed", role)
            if on_present is not None:
                on_present(seat)

        server.on_vote, server.on_rec, server.on_present = vote, rec, present
        return server

    driver.serve_links_on = serve  # type: ignore[method-assign]


async def probe_client(identity: IdentityKey, session: Session, address: tuple[str, int],
                       client: int, events: Events) -> None:
    """Probe the client (seat ``client``, at ``address``) as ``session``'s seat over a link
    of its own; note its ``present`` (or what went wrong)."""
    data: dict[str, Any] = {"ok": False, "why": "", "have_ok": False}
    with trio.move_on_after(links.PROBE_S) as scope:
        try:
            stream = await links.open_link(address, identity, session)
            try:
                nonce = os.urandom(32)
                await hs.send_message(stream, links.probe_message(nonce))
                present = links.check_present(await hs.receive_message(stream), nonce,
                                              session, client)
                data = {"ok": True, "why": "", "have": present.have,
                        "have_ok": -1 <= present.have <= session.count - 1}
            finally:
                await trio.aclose_forcefully(stream)
        except (*links.BROKEN, ProtocolError) as exc:
            data["why"] = f"{type(exc).__name__}: {exc}"
    if scope.cancelled_caught:
        data["why"] = f"no present within {links.PROBE_S:.0f} s"
    events.add("present", "host", **data)


async def bad_link(identity: IdentityKey, session: Session, address: tuple[str, int],
                   events: Events) -> None:
    """Link to the client at ``address`` with a signature over another nonce (as
    ``session``'s seat), then probe; note whether it refused."""
    data: dict[str, Any] = {"refused": False, "code": None}
    with trio.move_on_after(links.PROBE_S):
        try:
            stream = await open_framed(*address, hs.MAX_FRAME)
        except OSError as exc:
            events.add("link", "host", refused=False, code=f"no listener: {exc}")
            return
        try:
            await hs.receive_message(stream)  # the challenge
            bad = links.link_message(identity, session.game, 0, os.urandom(32))
            await hs.send_message(stream, bad)
            await hs.send_message(stream, links.probe_message(os.urandom(32)))
            reply = await hs.receive_message(stream)
            data["code"] = f"answered {reply.get('k')}"
        except hs.RemoteError as exc:
            data = {"refused": exc.code == "BAD_SIGNATURE", "code": exc.code}
        except links.BROKEN:
            data = {"refused": True, "code": "closed"}
        finally:
            await trio.aclose_forcefully(stream)
    events.add("link", "host", **data)

