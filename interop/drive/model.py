"""The vocabulary of the live scenarios: a table, the faults injected on cue, and what the
client under test must (``Expect``) or must not (``Forbid``) do.

A scenario is data: the seats of the table by role (``"host"`` is seat 0, ``"client"`` the
client under test, any other name a scripted seat), the table's timers, the faults and when
they fire, and the events expected of the client in order. :mod:`interop.drive.stage` runs it.

Roles in a match value: a string ``"@ROLE"`` stands for that role's seat number.

Cues (when a fault fires), judged on the scripted host's own state after each record:

* ``start``: record 0 (the match starts);
* ``play``: the first record after which the first card is turned up (in play, or a J or
  Jolly there waiting for the dealer to name the suit);
* ``turn:ROLE``: the first record after which ROLE is to act in play;
* ``record:N``: the first record whose index is at least N.

Faults of the scripted host (``Fault.what``):

* ``withhold-votes``: it takes no ``vote`` frame of the client (it never tallies them);
* ``no-ready``: it sends no ``ready`` frame of its own seat and relays none of the others';
* ``hold`` (role): it drops the envelopes that ROLE sends on its own connection (those passed
  on by others are sequenced);
* ``censor`` (role): it drops every envelope ROLE wrote, also those others pass on;
* ``mute`` (role): it sends ROLE no record from the cue on;
* ``drop`` (client): it closes the client's connection once;
* ``chat`` (arg: text): the host's seat says ``text`` (a valid chat record);
* ``forge-chat`` (arg: text): it relays a chat record of its own seat that it did not check
  (a text past the limits of 7.10), signed as the host;
* ``corrupt``: the next record it sends the client has a changed record signature;
* ``refuse-move``: it refuses the client's next move with an ``error`` frame, unsequenced.

Faults the stage carries out (a scripted seat or the driver itself):

* ``kill`` (role, or the host): its process ends (connections and listener closed);
* ``resign`` (role): that seat resigns (6.3);
* ``probe`` (arg: number of links): the host's seat probes the client over that many links
  at once (4.6);
* ``bad-link``: a connection to the client's ``listen`` address answers its challenge with a
  ``link`` whose signature is wrong;
* ``silent``: the host's connection to the client sends nothing more (no beat either).

Scripted seat kinds (``Seat.agent``): ``bot`` plays, ``idle`` never moves (its deck work, its
accepts and its acks go on: it is present and slow), ``deaf`` plays but drops every ``vote``
that comes over its links (a candidate that never gathers a quorum).

Events (``Expect.event``), with the fields a match may test:

* ``hello`` {listen}: the client's opening (the host's handshake checked its signature);
* ``resume`` {where, have, have_ok}: a resume at the scripted host (``have_ok``: not past its
  last record), or {where} at a scripted seat that hosts now (the client is connected to it);
* ``env`` {type, move, n, again, turn, waited}: an envelope of the client on its connection
  (``again``: at a counter the host refused before; ``turn``: a turn move while the client is
  to act; ``waited``: it came ``0.8 * declare_ms`` or more after the last move of another seat,
  None when that does not apply);
* ``record`` {author, type, move, hand, after_change}: a record of the client's match as a
  scripted seat holds it (``after_change``: a ``host_change`` comes before it);
* ``vote`` {kind, target, sig_ok, fresh}: a ``vote`` frame of the client to its host;
* ``urge`` {kind, target, sig_ok} at ROLE: a ``depose`` vote of the client over a link;
* ``lend`` {i} at ROLE: a record the client lent over a link;
* ``probed`` at ROLE: ROLE answered a probe of the client;
* ``pass`` {author}: a ``pass`` frame of the client;
* ``ready`` {sig_ok, at_ok}, ``done`` {last, last_ok}, ``beat``, ``error`` {code}: its frames
  (``last_ok``: ``last`` is the host's last record, judged once the host's match is over);
* ``refused``: the host refused the client's move (``refuse-move``);
* ``present`` {ok, why, have_ok}: the client's answer to a probe (``probe``);
* ``link`` {refused, code}: what the client did with a bad ``link`` (``bad-link``);
* ``opening`` {kind}: the first frame of the client after a challenge of another version;
* ``exit`` {code, nonzero, traceback}: the client process ended;
* ``killed`` at ROLE: the stage killed that party (``kill``), for the timing of what follows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Seat:
    """A scripted seat: how it plays and whether it gives a ``listen`` address."""

    agent: str = "bot"
    listen: bool = True


@dataclass(frozen=True)
class Fault:
    """A fault injected when ``cue`` first holds; ``role``: the seat it is about (or does
    it); ``arg``: its parameter."""

    what: str
    cue: str = "start"
    role: str | None = None
    arg: Any = None


@dataclass(frozen=True)
class Expect:
    """An event the client must cause, after the previous expectation's (by at least
    ``gap`` seconds); ``match``: the fields it must have (``"same": True``: the same frame
    as the previous expectation's). ``missing`` says the behaviour in words."""

    event: str
    match: dict[str, Any] = field(default_factory=dict)
    missing: str = ""
    where: str | None = None
    gap: float = 0.0


@dataclass(frozen=True)
class Forbid:
    """An event the client must not cause between expectations ``since`` (None: the start)
    and ``until`` (None: the end of the scenario)."""

    event: str
    match: dict[str, Any] = field(default_factory=dict)
    missing: str = ""
    where: str | None = None
    since: int | None = None
    until: int | None = None


@dataclass(frozen=True)
class Scenario:
    """One live scenario (see the module docstring). ``seats``: role per seat number;
    ``host``: ``"bot"``, ``"idle"`` or ``"raw"`` (a bare listener whose challenge speaks
    protocol version ``version``, no match); ``settle``: seconds to watch after the last
    expectation for forbidden events; ``deadline``: seconds the whole scenario may take."""

    name: str
    section: str
    checks: str
    seats: tuple[str, ...] = ("host", "client")
    others: dict[str, Seat] = field(default_factory=dict)
    host: str = "bot"
    variant: str = "dernier"
    hands: int = 1
    turn_ms: int = 4_000
    declare_ms: int = 200
    grace_ms: int = 2_000
    faults: tuple[Fault, ...] = ()
    expect: tuple[Expect, ...] = ()
    forbid: tuple[Forbid, ...] = ()
    settle: float = 0.0
    deadline: float = 60.0
    version: int = 4  # (a raw host) the version before this protocol's
