"""Seat links (PROTOCOL.md 4.6): seat-to-seat connections, opened on demand, to ask whether a
seat is present (``probe`` / ``present``) and to carry ``vote`` frames to the next host.

The accepting seat sends ``challenge``; the connecting seat answers ``link`` with
``sig = sign("dernier-p2p/link", {"game", "nonce", "seat"})``, checked against that seat's key
in the table. Then ``probe {nonce}`` is answered by ``present {nonce, have, pending, proof,
lent, sig}`` with ``sig = sign("dernier-p2p/present", {"game", "have", "lent", "nonce",
"pending", "proof", "seat"})``: ``have`` the index of the answering seat's last record,
``pending`` its own envelopes sent to the host and not yet seen in a record (oldest first, at
most 64), ``proof`` nil or the record that proves the fault of the host it stopped on, ``lent``
nil or the first record it got over a link since its host last sent it one. A ``vote``
frame goes to the seat's ``on_vote``, a ``rec`` frame (a record lent, 4.6) to its ``on_rec``.
Every bad frame gets an ``error`` frame and the link closes; nothing a link carries changes the
match by itself. A seat's probes are answered at most once per :data:`PRESENT_EVERY_S` over all its
links (the next one waits its turn). :func:`lend` sends records over a link.

Links are bounded like a host's connections: connections that have not linked yet are capped
(:data:`LINK_LIMITS`, the oldest evicted, see :mod:`.admission`), each seat keeps at most
:data:`LINKS_PER_SEAT` links (a new one closes its oldest) and a link lives at most
:data:`LINK_S`. :func:`serve_links` runs each connection behind the fault firewall, so nothing
an outsider or a seat sends on a link ends the seat's match.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import trio

from dernier_p2p.net import firewall
from dernier_p2p.net import handshake as hs
from dernier_p2p.net.admission import Admission, Limits
from dernier_p2p.net.framing import FramedStream, FrameError, PeerClosed, open_framed
from dernier_p2p.protocol.envelope import check_record
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.frames import FRAME_FIELDS
from dernier_p2p.protocol.session import Session
from dernier_p2p.wire.canonical import EncodingError
from dernier_p2p.wire.identity import BadSignature, IdentityKey, verify
from dernier_p2p.wire.version import PROTOCOL_VERSION, version_mismatch

log = logging.getLogger("dernier_p2p.net.links")

LINK_LABEL = "dernier-p2p/link"
PRESENT_LABEL = "dernier-p2p/present"
PROBE_S = 5.0
"""How long a probe waits for ``present`` before the seat counts as unreachable (7.5)."""
PRESENT_EVERY_S = 1.0
"""A seat's probes are answered at most once per this interval, over all its links (each
``present`` costs a signature; an honest seat probes once per vote it weighs)."""
MAX_PENDING = 64
LINK_LIMITS = Limits(max_pending=32, per_address=8, handshake_s=10.0)
"""Connections not linked yet: at most 32, 8 from one address, 10 s to send ``link``."""
LINKS_PER_SEAT = 4
LINK_S = 30.0
"""How long a link lives (a probe or a vote takes one round trip)."""
ACCEPT_PAUSE_S = 0.1
"""How long accepting pauses after the system refused a connection (out of descriptors)."""
T = TypeVar("T")
BROKEN = (PeerClosed, trio.BrokenResourceError, trio.ClosedResourceError, OSError,
          FrameError, hs.NetError)


PRESENT_KEYS = FRAME_FIELDS["present"]


@dataclass(frozen=True)
class Present:
    """A checked ``present``: the seat's last record index, its unsequenced envelopes, its
    proof (a record, unchecked but for its structure, or None) and the first record it got over
    a link since its host last sent it one (or None)."""

    have: int
    pending: list[dict[str, Any]]
    proof: dict[str, Any] | None = None
    lent: int | None = None


def _present_signed(game: bytes, have: int, nonce: bytes, pending: list, proof: Any,
                    lent: int | None, seat: int) -> dict:
    return {"game": game, "have": have, "lent": lent, "nonce": nonce, "pending": pending,
            "proof": proof, "seat": seat}


RELAY_OPENINGS = frozenset({"relay-host", "relay-join", "relay-answer"})  # 4.7 step 7


class LinkServer:
    """Answers links to one seat: ``session``, ``pending()``, ``proof()`` and ``lent()`` give
    what ``present`` says (``on_present(seat)`` is told of each one sent); ``on_vote(seat,
    frame)`` takes ``vote`` frames, ``on_rec(seat, record)`` the records of ``rec`` frames."""

    def __init__(
        self,
        identity: IdentityKey,
        session: Session,
        pending: Callable[[], list[dict[str, Any]]],
        on_vote: Callable[[int, dict[str, Any]], None] | None = None,
        *,
        proof: Callable[[], dict[str, Any] | None] | None = None,
        on_rec: Callable[[int, Any], None] | None = None,
        on_present: Callable[[int], None] | None = None,
        lent: Callable[[], int | None] | None = None,
    ) -> None:
        self.identity, self.session, self.pending, self.on_vote = (
            identity, session, pending, on_vote)
        self.proof, self.on_rec, self.on_present = proof, on_rec, on_present
        self.lent = lent
        # where a relay opening answering the challenge goes (a seat relay, 4.7 step 7)
        self.relay: Callable[[FramedStream, dict[str, Any], str], Awaitable[None]] | None = None
        self.admission = Admission(LINK_LIMITS)
        self._linked: dict[int, list[trio.CancelScope]] = {}  # each seat's open links
        self._next_present: dict[int, float] = {}  # seat -> its next probe answered no sooner

    async def handle(self, stream: FramedStream,
                     opened: tuple[bytes, dict[str, Any]] | None = None) -> None:
        """Serve one link until it closes (within the caps of the module docstring).
        ``opened``: the challenge's nonce and the ``link`` frame, read already by a candidate
        gathering (its listener's admission, 4.6)."""
        s = self.session
        nonce = os.urandom(hs.NONCE_SIZE)
        # the seat's own key, as a host's challenge carries its own (4.2): a seat linking
        # through a relay takes a punched connection only with the key of the seat it links to
        # (its Dialer's check, 4.7 step 5), so without it every link there stayed relayed
        summary = {"name": "link", "variant": s.table_body["variant"], "players": s.n,
                   "taken": s.n, "key": self.identity.public_bytes()}
        address = firewall.source_of(firewall.peer_address(getattr(stream, "stream", None)))
        seat: int | None = None
        try:
            if opened is not None:
                seat = check_link(opened[1], opened[0], s)
            else:
                msg = None
                with self.admission.enter(address) as ticket:
                    with ticket.scope:  # evicted by newer connections, or past its deadline
                        await hs.send_message(stream, hs.challenge_message(nonce, summary))
                        msg = await hs.receive_message(stream)
                if msg is not None and msg.get("k") in RELAY_OPENINGS \
                        and self.relay is not None:
                    await self.relay(stream, msg, address)
                    return
                if msg is not None:
                    seat = check_link(msg, nonce, s)
            if seat is None:
                return
            scope = trio.CancelScope(deadline=trio.current_time() + LINK_S)
            mine = self._linked.setdefault(seat, [])
            while len(mine) >= LINKS_PER_SEAT:
                mine.pop(0).cancel()  # the seat's oldest link gives way
            mine.append(scope)
            try:
                with scope:
                    await self._serve(stream, seat)
            finally:
                mine.remove(scope)
        except hs.RemoteError:
            return
        except hs.NetError as exc:
            with trio.move_on_after(1):
                try:
                    await hs.send_message(stream, hs.error_message(exc.code, exc.detail))
                except BROKEN:
                    pass
        except BROKEN:
            return

    async def _serve(self, stream: FramedStream, seat: int) -> None:
        while True:
            msg = await hs.receive_message(stream)
            if msg["k"] == "probe":
                nonce = check_probe(msg)
                now = trio.current_time()
                turn = max(now, self._next_present.get(seat, now))
                self._next_present[seat] = turn + PRESENT_EVERY_S  # later probes queue behind
                await trio.sleep_until(turn)
                await hs.send_message(stream, self.present(nonce))
                if self.on_present is not None:
                    self.on_present(seat)
            elif msg["k"] == "vote" and self.on_vote is not None:
                self.on_vote(seat, msg)
            elif msg["k"] == "rec" and self.on_rec is not None:
                if set(msg) != FRAME_FIELDS["rec"]:
                    raise hs.NetError(hs.MALFORMED, "a rec frame is {rec}")
                self.on_rec(seat, msg["rec"])
            else:
                raise hs.NetError(hs.UNEXPECTED, f"unexpected frame {msg['k']!r} on a link")

    def present(self, nonce: bytes) -> dict[str, Any]:
        s = self.session
        have = s.count - 1
        pending = list(self.pending())[:MAX_PENDING]
        proof = None if self.proof is None else self.proof()
        lent = None if self.lent is None else self.lent()
        return present_message(self.identity, s.game, s.seat, nonce, have, pending, proof, lent)


def present_message(
    identity: IdentityKey, game: bytes, seat: int, nonce: bytes, have: int,
    pending: list[dict[str, Any]], proof: dict[str, Any] | None = None, lent: int | None = None,
) -> dict[str, Any]:
    """Seat ``seat``'s signed ``present`` answering the probe ``nonce`` (4.6)."""
    sig = identity.sign(
        PRESENT_LABEL, _present_signed(game, have, nonce, pending, proof, lent, seat))
    return {"k": "present", "nonce": nonce, "have": have, "pending": pending, "proof": proof,
            "lent": lent, "sig": sig}


async def serve_links(
    listeners: list[trio.SocketListener], server: LinkServer,
    *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Answer links on ``listeners`` until cancelled (the listeners stay open). Each connection
    runs behind the fault firewall; an accept the system refuses (no descriptor left) pauses
    accepting for :data:`ACCEPT_PAUSE_S`: neither ends the seat."""
    async with trio.open_nursery() as nursery:
        for listener in listeners:
            nursery.start_soon(_accept, listener, server, nursery)
        task_status.started()


async def _accept(listener: trio.SocketListener, server: LinkServer, nursery: trio.Nursery) -> None:
    while True:
        try:
            stream = await listener.accept()
        except OSError as exc:
            log.warning("link listener: accept failed: %s", exc)
            await trio.sleep(ACCEPT_PAUSE_S)
            continue
        nursery.start_soon(_serve_one, FramedStream(stream, hs.MAX_FRAME), server)


async def _serve_one(stream: FramedStream, server: LinkServer) -> None:
    try:
        await firewall.guard(partial(server.handle, stream), firewall.peer_address(stream.stream))
    finally:
        await trio.aclose_forcefully(stream)


def _nonce(v: Any) -> bool:
    return isinstance(v, bytes) and len(v) == hs.NONCE_SIZE


def probe_message(nonce: bytes) -> dict[str, Any]:
    """A ``probe``: is the linked seat present? (4.6)"""
    return {"k": "probe", "nonce": nonce}


def check_probe(msg: dict[str, Any]) -> bytes:
    """The nonce of a well-formed ``probe`` frame; NetError UNEXPECTED for another kind,
    MALFORMED for other fields or a nonce that is not 32 bytes."""
    if msg.get("k") != "probe":
        raise hs.NetError(hs.UNEXPECTED, f"expected probe, got {msg.get('k')!r}")
    if set(msg) != FRAME_FIELDS["probe"] or not _nonce(msg["nonce"]):
        raise hs.NetError(hs.MALFORMED, "a probe is {nonce} of 32 bytes")
    return msg["nonce"]


def link_message(identity: IdentityKey, game: bytes, seat: int, nonce: bytes) -> dict[str, Any]:
    sig = identity.sign(LINK_LABEL, {"game": game, "nonce": nonce, "seat": seat})
    return {"k": "link", "version": PROTOCOL_VERSION, "game": game, "seat": seat, "sig": sig}


def check_link(msg: dict[str, Any], nonce: bytes, session: Session) -> int:
    """The seat of a checked ``link`` frame; NetError otherwise."""
    if msg.get("k") != "link":
        raise hs.NetError(hs.UNEXPECTED, f"expected link, got {msg.get('k')!r}")
    if msg.get("version") != PROTOCOL_VERSION:
        refusal = version_mismatch("this seat's link", msg.get("version"))
        raise hs.NetError(hs.VERSION_MISMATCH, refusal)
    if set(msg) != FRAME_FIELDS["link"]:
        raise hs.NetError(hs.MALFORMED, "link fields are version, game, seat, sig")
    seat, game = msg["seat"], msg["game"]
    if game != session.game:
        raise hs.NetError("WRONG_GAME", "a link for another game")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < session.n:
        raise hs.NetError(hs.UNKNOWN_KEY, "a link from a seat not at this table")
    try:
        verify(session.keys[seat], LINK_LABEL, {"game": game, "nonce": nonce, "seat": seat},
               msg["sig"])
    except BadSignature:
        raise hs.NetError(hs.BAD_SIGNATURE, f"the link is not seat {seat}'s") from None
    return seat


async def open_link(
    address: tuple[str, int], identity: IdentityKey, session: Session,
    relay: tuple[str, int] | None = None, target: int | None = None,
    own: tuple[str, int] | None = None,
) -> FramedStream:
    """Connect to a seat's ``listen`` address and link as this session's seat. When seat
    ``target`` is named, its address is tried first, then (0.3 s apart, as a new host is
    reached, 4.7 step 4) the outside ``relay`` if one is known and the seat relays of the table
    (4.7 step 7), each under ``target``'s seat token, where a seat its router does not map
    stands by; a connection there is taken only with ``target``'s key in its challenge. Last,
    when ``target`` stands by at this seat's own seat relay, that relay, at ``own`` (the
    local address of this seat's listener), unpunched."""
    from dernier_p2p.net.seatrelay import relays_to  # (seatrelay imports this module)

    relays: list[tuple[str, int]] = []
    if target is not None:
        relays, own = relays_to(session, session.seat, target, own)
    if target is None or (relay is None and not relays and own is None):
        stream = await open_framed(address[0], address[1], hs.MAX_FRAME)
    else:
        from dernier_p2p.net.reach import new_host_dialer

        dialer = new_host_dialer(address, relay, session.game, session.keys[target], relays,
                                 own)
        stream = await dialer()
        won = dialer.routes[0]  # the route that made it (a punched one: the relay it met at)
        how = f"{dialer.used}" if dialer.used == won else f"{dialer.used}, at the {won}"
        if won in dialer.unpunched:
            how += ", this seat's own seat relay"
        log.info("seat %s: link to seat %d by the %s", session.seat, target, how)
    try:
        nonce, _ = hs.check_challenge(await hs.receive_message(stream))
        await hs.send_message(stream, link_message(identity, session.game, session.seat, nonce))
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    return stream


def address_of(session: Session, seat: int) -> tuple[str, int] | None:
    """The ``listen`` address the table lists for ``seat``, or None if it announced none."""
    listen = session.table_body["players"][seat]["listen"]
    return None if listen is None else (listen[0], listen[1])


async def _over_link(
    identity: IdentityKey, session: Session, target: int, timeout_s: float,
    talk: Callable[[FramedStream], Awaitable[T]], relay: tuple[str, int] | None = None,
    own: tuple[str, int] | None = None,
) -> T | None:
    """Link to seat ``target`` and run ``talk`` on the link, within ``timeout_s``; its result,
    or None when the seat has no address, cannot be reached, breaks the link or is too slow.
    The link is closed after. ``own``: this seat's own seat relay (see :func:`open_link`)."""
    address = address_of(session, target)
    if address is None:
        return None
    with trio.move_on_after(timeout_s):
        try:
            stream = await open_link(address, identity, session, relay, target, own)
        except BROKEN as exc:
            log.info("seat %s: link to seat %d: %s", session.seat, target, exc)
            return None
        try:
            return await talk(stream)
        except BROKEN as exc:
            log.info("seat %s: link to seat %d: %s", session.seat, target, exc)
            return None
        finally:
            await trio.aclose_forcefully(stream)
    return None


async def probe(
    identity: IdentityKey, session: Session, target: int, timeout_s: float = PROBE_S,
    relay: tuple[str, int] | None = None, own: tuple[str, int] | None = None,
) -> Present | None:
    """Ask ``target`` whether it is present; its checked ``present``, or None (no address, no
    answer within ``timeout_s``, or a bad answer)."""

    async def ask(stream: FramedStream) -> Present:
        nonce = os.urandom(hs.NONCE_SIZE)
        await hs.send_message(stream, probe_message(nonce))
        return check_present(await hs.receive_message(stream), nonce, session, target)

    return await _over_link(identity, session, target, timeout_s, ask, relay, own)


def check_present(msg: dict[str, Any], nonce: bytes, session: Session, target: int) -> Present:
    """A checked ``present`` from ``target`` answering ``nonce``; NetError otherwise. Its
    ``proof`` is nil or a record (5.2) by its structure; what it proves is the node's to
    judge (4.6)."""
    if msg.get("k") != "present":
        raise hs.NetError(hs.UNEXPECTED, f"expected present, got {msg.get('k')!r}")
    if set(msg) != PRESENT_KEYS:
        raise hs.NetError(hs.MALFORMED, "present fields are nonce, have, pending, proof, "
                                        "lent, sig")
    have, pending, proof, lent = msg["have"], msg["pending"], msg["proof"], msg["lent"]
    if msg["nonce"] != nonce or not isinstance(have, int) or isinstance(have, bool) \
            or have < -1 or not isinstance(pending, list) or len(pending) > MAX_PENDING:
        raise hs.NetError(hs.MALFORMED, "present fields")
    if lent is not None and (not isinstance(lent, int) or isinstance(lent, bool) or
                             not 0 <= lent <= have):
        raise hs.NetError(hs.MALFORMED, "a present's lent is nil or an index up to its have")
    if proof is not None:
        try:
            check_record(proof, target, session.n)
        except ProtocolError:
            raise hs.NetError(hs.MALFORMED, "a present's proof is a record or nil") from None
    try:
        verify(session.keys[target], PRESENT_LABEL,
               _present_signed(session.game, have, nonce, pending, proof, lent, target),
               msg["sig"])
    except BadSignature:
        raise hs.NetError(hs.BAD_SIGNATURE, f"the present is not seat {target}'s") from None
    except EncodingError:
        raise hs.NetError(hs.MALFORMED, "present fields") from None
    return Present(have, pending, proof, lent)


def unsequenced(session: Session, target: int, present: Present) -> dict[str, Any] | None:
    """The first pending envelope of ``target`` that passes this seat's checks as the next one
    to be sequenced (5.4), or None: evidence that the host holds it."""
    for env in present.pending:
        if not isinstance(env, dict) or env.get("seat") != target:
            continue
        try:
            session.chain.check_envelope(env, target)
        except ProtocolError:
            continue
        return env
    return None


async def lend(
    identity: IdentityKey, session: Session, to: int, records: list[dict[str, Any]],
    relay: tuple[str, int] | None = None, timeout_s: float = LINK_S,
    own: tuple[str, int] | None = None,
) -> bool:
    """Send ``records`` to seat ``to`` over a link, one ``rec`` frame each, in order (4.6:
    records lent, or a proof); whether they were all written within ``timeout_s``."""

    async def write(stream: FramedStream) -> bool:
        for rec in records:
            await hs.send_message(stream, {"k": "rec", "rec": rec})
        return True

    return await _over_link(identity, session, to, timeout_s, write, relay, own) is not None


async def send_vote(
    identity: IdentityKey, session: Session, to: int, frame: dict[str, Any],
    relay: tuple[str, int] | None = None, own: tuple[str, int] | None = None,
) -> bool:
    """Carry a ``vote`` frame to seat ``to`` over a link; whether it was written."""

    async def write(stream: FramedStream) -> bool:
        await hs.send_message(stream, frame)
        return True

    return await _over_link(identity, session, to, PROBE_S, write, relay, own) is not None
