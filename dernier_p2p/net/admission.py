"""Admission control: how many connections a host holds before they have said who they are.

A connection is *pending* from the moment it is accepted until its opening frame (``hello`` or
``resume``) has arrived. Pending connections are capped in total (``max_pending``) and per source
address (``per_address``). A new connection is never refused for capacity: when a cap is reached
the *oldest* pending connection (of the same address if that address is at its cap, else of
the address holding the most) is evicted, so an idle flood cannot shut the door on a seated
player's resume or a new player's hello: a peer that answers the challenge at once needs its
slot for one round trip, while a flooder must keep opening connections to keep others out. Each
pending connection also has a short deadline (``handshake_s``).

At the total cap the slot evicted is one of the *network* (IPv4 /24, IPv6 /64) holding the
most, so one owner's many addresses count together and cannot push out a newcomer from
elsewhere; a gate may also cap each network (``per_prefix``).

The relay (:mod:`.relay`) uses the same gate for what it holds after the opening too
(registrations, waiting joiners, pairs), with a deadline to match (none for a registration or a
pair) and :attr:`Ticket.busy` set on a slot in use, so eviction takes an idle one first.

The host also raises its file-descriptor limit to the hard limit (:func:`raise_nofile_limit`),
as a server should, so the accept loop does not starve while the caps hold.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
from collections import Counter, OrderedDict
from dataclasses import dataclass

import trio

log = logging.getLogger("dernier_p2p.net.admission")

MAX_PENDING = 128
PER_ADDRESS = 32
HANDSHAKE_S = 5.0


@functools.lru_cache(maxsize=4096)
def prefix_of(address: str) -> str:
    """The network an address most likely shares with its owner's others: its IPv4 /24 or its
    IPv6 /64 (an IPv4-mapped IPv6 address counts as IPv4); anything else is itself."""
    try:
        ip = ipaddress.ip_address(address.strip("[]").split("%")[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    bits = 24 if ip.version == 4 else 64
    return str(ipaddress.ip_network(f"{ip}/{bits}", strict=False))


@dataclass(frozen=True)
class Limits:
    """Caps on pending connections (in all, per address and, if ``per_prefix``, per /24 or
    /64 network: :func:`prefix_of`) and the handshake deadline."""

    max_pending: int = MAX_PENDING
    per_address: int = PER_ADDRESS
    handshake_s: float = HANDSHAKE_S
    per_prefix: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.per_address <= self.max_pending or self.handshake_s <= 0:
            raise ValueError("need 1 <= per_address <= max_pending and handshake_s > 0")
        if self.per_prefix is not None and not self.per_address <= self.per_prefix:
            raise ValueError("need per_address <= per_prefix")


class Ticket:
    """One pending connection's slot: ``scope`` is cancelled if it is evicted; call
    :meth:`release` once the opening has arrived (or the connection ends)."""

    def __init__(self, gate: Admission, address: str) -> None:
        self.gate = gate
        self.address = address
        self.prefix = prefix_of(address)
        self.scope = trio.CancelScope(deadline=trio.current_time() + gate.limits.handshake_s)
        self.evicted = False
        self.busy = 0  # while above 0, evicted only if every slot of its address is busy

    def release(self) -> None:
        self.gate._leave(self)

    def __enter__(self) -> Ticket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class Admission:
    """The pending connections of one listener (see the module docstring)."""

    def __init__(self, limits: Limits | None = None, name: str = "pending connections") -> None:
        self.limits = limits or Limits()
        self.name = name
        self._pending: OrderedDict[Ticket, None] = OrderedDict()
        self._by_address: Counter[str] = Counter()
        self._by_prefix: Counter[str] = Counter()
        self.evictions = 0

    @property
    def pending(self) -> int:
        return len(self._pending)

    def enter(self, address: str) -> Ticket:
        """A slot for a new connection from ``address``, evicting as the caps require."""
        prefix = prefix_of(address)
        per_prefix = self.limits.per_prefix
        if self._by_address[address] >= self.limits.per_address:
            self._evict(address)
        elif per_prefix is not None and self._by_prefix[prefix] >= per_prefix:
            self._evict(self._busiest(prefix))
        if len(self._pending) >= self.limits.max_pending:
            self._evict(self._busiest(self._by_prefix.most_common(1)[0][0]))
        ticket = Ticket(self, address)
        self._pending[ticket] = None
        self._by_address[address] += 1
        self._by_prefix[ticket.prefix] += 1
        return ticket

    def _busiest(self, prefix: str) -> str:
        """The address of network ``prefix`` holding the most slots (the network holding the
        most is the one to evict from: one owner's many addresses count together)."""
        return max((a for a in self._by_address if prefix_of(a) == prefix),
                   key=self._by_address.__getitem__)

    def _evict(self, address: str) -> None:
        """Evict the oldest idle slot of ``address`` (``busy`` 0), else its oldest."""
        mine = [ticket for ticket in self._pending if ticket.address == address]
        idle = [ticket for ticket in mine if not ticket.busy]
        if not mine:
            return
        ticket = (idle or mine)[0]
        ticket.evicted = True
        ticket.scope.cancel()
        self._leave(ticket)
        self.evictions += 1
        if self.evictions & (self.evictions - 1) == 0:  # 1, 2, 4, 8, ...: no log flood
            log.warning("%s at their cap: evicted the oldest from %s (%d evictions so far)",
                        self.name, address, self.evictions)

    def _leave(self, ticket: Ticket) -> None:
        if self._pending.pop(ticket, False) is None:
            self._by_address[ticket.address] -= 1
            if self._by_address[ticket.address] <= 0:
                del self._by_address[ticket.address]
            self._by_prefix[ticket.prefix] -= 1
            if self._by_prefix[ticket.prefix] <= 0:
                del self._by_prefix[ticket.prefix]


def raise_nofile_limit() -> tuple[int, int]:
    """Raise this process's soft limit of open files to its hard limit (capped at 65536);
    return the (soft, hard) limits in force. A no-op where ``resource`` is missing."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return (-1, -1)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-files limit to %d: %s", want, exc)
    return soft, hard
