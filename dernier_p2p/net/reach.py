"""Reaching a table by its invite code: try each route in order until one answers.

A :class:`Dialer` is what a :class:`~.peer.Peer` calls to open its connection to the host (the
first time and on every resume). It tries the code's routes in their order (direct, mapped,
relay; IPv6 addresses interleaved first, "happy eyeballs"), each for at most ``per_route_s``,
and remembers the one that worked so a resume tries it
first. Through a relay it asks to punch (PROTOCOL.md 4.7 step 5, version 4): a direct
connection to the host whose challenge passes the host check is taken over the relayed one;
a joiner that can be reached also offers its address there, and a connection its host opens
to it (connection reversal, 4.7 step 6) is taken the same way; a birthday punch
(:mod:`.birthday`, for a symmetric NAT on either side) runs besides until one is made.
When none answers it raises :class:`~.handshake.NetError` ``UNREACHABLE`` naming what each
route did, so the user sees why and not a hang.
"""

from __future__ import annotations

import logging
from functools import partial

import trio

from dernier_p2p.net import birthday, punch
from dernier_p2p.net import handshake as hs
from dernier_p2p.net.framing import FramedStream, FrameError, PeerClosed, open_framed
from dernier_p2p.net.invite import Invite, Route, fingerprint, show_fingerprint
from dernier_p2p.net.ipv6 import happy_order
from dernier_p2p.net.relay import join_through_relay, rendezvous, seat_token

log = logging.getLogger("dernier_p2p.net.reach")

UNREACHABLE = "UNREACHABLE"
WRONG_HOST = "WRONG_HOST"


class Dialer:
    """Open a framed connection to the table an :class:`~.invite.Invite` names.

    Routes are tried in the code's order with IPv6 first (:func:`.ipv6.happy_order`: the
    families interleaved, as RFC 8305 does), each started ``stagger_s`` after the one before it
    (at once if that one has failed), and the first connection made wins; the others are
    abandoned. So a host's IPv6 address is tried first, and its IPv4 address ``stagger_s``
    later, while the first may still answer. A
    direct route that silently swallows packets (a private address seen from the Internet) so
    costs ``stagger_s``, not ``per_route_s``; a route that answers within ``stagger_s`` is
    always preferred to the later ones.
    """

    def __init__(self, invite: Invite, per_route_s: float = 5.0, stagger_s: float = 0.3,
                 punch: bool = punch.CAN_PUNCH, birthday: bool = True) -> None:
        self.invite = invite
        self.per_route_s = per_route_s
        self.stagger_s = stagger_s
        self.punch = punch  # try a direct connection at each relay (4.7 step 5)
        self.birthday = birthday  # and a birthday punch where that makes none in time
        self.routes = happy_order(list(invite.routes))
        # how the last connection was opened: a route of the code, or a "punched" one
        self.used: Route | None = None
        # where this joiner can be called back (4.7 step 6), and its listeners there
        self.reach: tuple[str, int] | None = None
        self.listeners: list[trio.SocketListener] = []
        # routes to this seat's own seat relay (4.7 step 7): never punched (see add_own_relay)
        self.unpunched: set[Route] = set()
        # whose key the host must hold, in a refusal's words (new_host_dialer: a new host's)
        self.wanted = "the one in the invite code"

    def offer_reach(self, reach: tuple[str, int] | None,
                    listeners: list[trio.SocketListener] | None = None) -> None:
        """Offer ``reach`` at each relay, accepting the host's call back on ``listeners``
        while a connection is opened (None: offer nothing, as once seated: the listeners
        then answer links)."""
        self.reach = reach if listeners else None
        self.listeners = list(listeners or ()) if reach is not None else []

    async def __call__(self) -> FramedStream:
        routes = list(self.routes)
        failures: dict[int, str] = {}
        won: list[tuple[Route, FramedStream]] = []
        used: list[Route] = []

        async def attempt(k: int, route: Route, over: trio.Event) -> None:
            try:
                with trio.fail_after(self.per_route_s):
                    stream, how = await self._open(route)
            except trio.TooSlowError:
                failures[k] = f"{route}: no answer in {self.per_route_s:g} s"
            except hs.NetError as exc:  # a relay that refused: no such table (any more)
                failures[k] = f"{route}: {exc.code}: {exc.detail}"
            except (OSError, PeerClosed, FrameError, trio.BrokenResourceError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                failures[k] = f"{route}: {reason}"
            else:
                if won:  # another route won in the same instant
                    await trio.aclose_forcefully(stream)
                else:
                    won.append((route, stream))
                    used.append(how)
                    nursery.cancel_scope.cancel()
            finally:
                over.set()

        async with trio.open_nursery() as nursery:
            for k, route in enumerate(routes):
                over = trio.Event()
                nursery.start_soon(attempt, k, route, over)
                with trio.move_on_after(self.stagger_s):
                    await over.wait()
        if not won:
            raise hs.NetError(UNREACHABLE, "no route to the table answered (" +
                              "; ".join(failures[k] for k in sorted(failures)) + ")")
        route, stream = won[0]
        self.used = used[0]
        log.info("connected by the %s%s", self.used,
                 ", this seat's own seat relay" if route in self.unpunched else "")
        self.routes.remove(route)
        self.routes.insert(0, route)
        return stream

    async def _open(self, route: Route) -> tuple[FramedStream, Route]:
        """A connection by ``route`` and how it was made (the route, or a punched one)."""
        if route.kind not in ("relay", "seat"):
            return await open_framed(route.host, route.port, hs.MAX_FRAME), route
        assert route.token is not None
        seat = route.kind == "seat"  # a seat relay (4.7 step 7): its challenge comes first
        if not self.punch or route in self.unpunched:
            return await join_through_relay((route.host, route.port), route.token,
                                            seat), route
        reach = self.reach
        listeners = self.listeners
        relayed, at, family, port, part = await rendezvous((route.host, route.port),
                                                           route.token, reach, seat)
        if at is None:
            return relayed, route
        kept: list[tuple[FramedStream, Route]] = []

        async def take(stream: FramedStream, kind: str = "punched") -> bool:
            """A punched (or called back, or birthday punched) connection whose first frame
            is the challenge of the host expected."""
            try:
                frame = await stream.receive()
                _, table = hs.check_challenge(hs.unpack(frame))
                if not self.invite.matches(hs.summary_host_key(table)):
                    log.info("a punched connection's challenge is not the host's: refused")
                    return False
            except (hs.NetError, FrameError, PeerClosed, OSError, trio.BrokenResourceError,
                    trio.ClosedResourceError) as exc:
                log.info("a punched connection failed before its challenge: %s", exc)
                return False
            stream.unreceive(frame)
            how = Route("punched", at[0], at[1])
            if kind != "punched":  # its own port, not the one the relay saw
                try:
                    peer = stream.stream.socket.getpeername()  # type: ignore[attr-defined]
                except OSError:
                    return False  # reset since
                how = Route(kind, peer[0], peer[1])
            kept.append((stream, how))
            return True

        made = trio.Event()  # a direct connection made: the birthday punch ends

        async def punched() -> None:
            if await punch.punch(family, port, at, take, hs.MAX_FRAME, made=made):
                both.cancel_scope.cancel()

        async def called_back() -> None:
            if await punch.accept(listeners, partial(take, kind="reversed"),
                                  hs.MAX_FRAME, made=made) is not None:
                both.cancel_scope.cancel()

        async def birthday_punched() -> None:
            if await birthday.birthday(family, port, at, partial(take, kind="birthday"),
                                       hs.MAX_FRAME, direct=made, part=part):
                both.cancel_scope.cancel()

        try:
            async with trio.open_nursery() as both:
                both.start_soon(punched)
                if reach is not None and listeners:
                    both.start_soon(called_back)
                if self.birthday and birthday.may_birthday(at):
                    both.start_soon(birthday_punched)
        except BaseException:
            for stream, _ in kept:
                await trio.aclose_forcefully(stream)
            await trio.aclose_forcefully(relayed)
            raise
        if not kept:
            return relayed, route
        await trio.aclose_forcefully(relayed)
        for extra, _ in kept[1:]:  # punched and called back in the same instant
            await trio.aclose_forcefully(extra)
        return kept[0]

    def add_seat_relays(self, relays: list[tuple[str, int]], token: bytes) -> None:
        """Try the seat relays ``relays`` (4.7 step 7) under the host's seat ``token`` after
        the routes already known (once each: a second call adds only new ones)."""
        for host, port in relays:
            route = Route("seat", host, port, token)
            if route not in self.routes:
                self.routes.append(route)

    def add_own_relay(self, address: tuple[str, int] | None, token: bytes) -> None:
        """Try this seat's own seat relay (4.7 step 7), where the seat of ``token`` stands by,
        at ``address`` (its listener's local address, :func:`.seatrelay.local_address`) after
        every other route: its relay pairs the connection with that seat's registration as
        any other. Never punched: a punch toward itself is pointless, and the seat behind
        would be told this machine's local address (None: nothing added)."""
        if address is None:
            return
        route = Route("seat", address[0], address[1], token)
        if route not in self.routes:
            self.routes.append(route)
        self.unpunched.add(route)

    def relay_address(self) -> tuple[str, int] | None:
        """The code's first relay (where a new host may stand by, PROTOCOL.md 4.7), or None."""
        relay = next((r for r in self.invite.routes if r.kind == "relay"), None)
        return None if relay is None else (relay.host, relay.port)

    def check_host(self, key: bytes) -> None:
        """Refuse a host whose identity key is not the one the code names."""
        if not self.invite.matches(key):
            raise hs.NetError(
                WRONG_HOST,
                f"the host at {self.used} is not {self.wanted} (its key does not match "
                f"fingerprint {show_fingerprint(self.invite.fingerprint)})"
                + ("; ask the host for a fresh code" if self.wanted.endswith("code") else ""),
            )


def new_host_dialer(
    listen: tuple[str, int], relay: tuple[str, int] | None, game: bytes, key: bytes,
    seat_relays: list[tuple[str, int]] | None = None, own: tuple[str, int] | None = None,
) -> Dialer:
    """A Dialer for a new host after a host change (PROTOCOL.md 4.7 step 4): its announced
    ``listen`` address, then (if a ``relay`` is known) the relay under its seat token, then
    the table's other ``seat_relays``, then (``own``: the local address of this seat's
    listener, where the new host stands by) this seat's own seat relay, unpunched. Either
    way it refuses a host whose key is not ``key`` (WRONG_HOST): whoever listens at that
    address is not taken for the new host."""
    routes = [Route("direct", listen[0], listen[1])]
    if relay is not None:
        routes.append(Route("relay", relay[0], relay[1], seat_token(game, key)))
    dialer = Dialer(Invite(fingerprint(key), tuple(routes)))
    dialer.wanted = "the table's new host"
    dialer.add_seat_relays(seat_relays or [], seat_token(game, key))
    dialer.add_own_relay(own, seat_token(game, key))
    return dialer

