"""What the host would say to an envelope now, judged without changing anything (PROTOCOL.md
4.6, 5.4, 7.5).

A seat that a probe shows another seat's unsequenced envelope must judge it exactly as the
host must before sequencing it, at its own chain, and pass it on only if it passes; only then
can the host's passing over it be evidence of censorship. :func:`would_sequence` makes those
checks: the chain's (structure, signature, counter, head echo, body schema), a move's legality
at the head it echoes (some face legal for a play of a slot held), and a deck, coin or accept
message against a copy of the deck and coin state (a proof that fails, a message not due).
"""

from __future__ import annotations

import copy
from typing import Any

from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.session import Session

HOST_BODIES = frozenset({"table", "timeout", "left", "no_contest", "host_change"})


def ack_without_news(chain: Any, env: dict[str, Any],
                     before: list[dict[str, Any]] | None = None) -> bool:
    """Whether ``env`` (checked) is an ``ack`` the host refuses as echoing nothing new (4.9):
    no record of another seat but an ack lies after the head echoed by its author's previous
    envelope (the last of ``before``, its author's envelopes sequenced just before it, or its
    last record) up to the head it echoes."""
    if env["body"]["type"] != "ack":
        return False
    head = chain.index_of(env["head"])
    if head is None:
        return False  # (refused as a head not held, by the chain's checks)
    author = env["seat"]
    prev = chain.echo_of(author)
    if before:
        last = chain.index_of(before[-1].get("head")) if isinstance(before[-1], dict) else None
        prev = -1 if last is None else last
    return not chain.news_for(author, prev, head)


def would_sequence(session: Session, envelope: Any, lead: int = 0,
                   before: list[dict[str, Any]] | None = None) -> ProtocolError | None:
    """The refusal the host owes ``envelope`` if it came now, as the next envelope of its
    author, to a host holding ``session``'s records; None if it would sequence it. ``lead``:
    judged after that many chats and acks of its author before it (sequenced first, they change
    nothing but the counter, PROTOCOL.md 4.6), ``before`` those envelopes if known (an ack's
    news is judged after the last of them, 4.9). Nothing of ``session`` changes."""
    if session.fault is not None:
        return session.fault
    if session.finished and not session.unfinal:
        return ProtocolError("UNEXPECTED", None, "the match is over")
    try:
        env = session.chain.check_envelope(envelope, None, lead)
    except ProtocolError as exc:
        return exc
    author, body = env["seat"], env["body"]
    if session.finished:  # over, its end not yet final: the host sequences the acks (7.11)
        if body["type"] != "ack":
            return ProtocolError("UNEXPECTED", author, "the match is over: only acks of its "
                                 "end are sequenced until it is final")
        if ack_without_news(session.chain, env, before):
            return ProtocolError("UNEXPECTED", author, "ack with nothing new")
        return None
    if body["type"] in HOST_BODIES:
        return ProtocolError("WRONG_SEAT", author, "a host body is the host's own")
    head_i = session.chain.index_of(env["head"])
    if body["type"] == "move":
        if head_i is None:
            return ProtocolError("FORK", author, "a head this seat does not hold")
        if body["move"] == "play" and not session.held_at(head_i, author, body["slot"]):
            return ProtocolError("NOT_HELD", author, f"seat {author} held no slot "
                                 f"{body['slot']}")
        if not session.legal_at(head_i, author, body):
            return ProtocolError("ILLEGAL_MOVE", author, "not legal at the head it echoes")
        return None
    if body["type"] == "ack" and ack_without_news(session.chain, env, before):
        return ProtocolError("UNEXPECTED", author, "ack with nothing new")
    if body["type"] in ("chat", "ack", "resign"):
        return None
    trial = copy.copy(session)  # the deck and the coin are checked on copies
    trial.coin = copy.deepcopy(session.coin)
    trial.pub = copy.deepcopy(session.pub)
    trial.accepted = set(session.accepted)
    trial.events = list(session.events)
    try:
        trial._check_body(author, body, head_i)
    except ProtocolError as exc:
        return exc
    except Exception as exc:  # a check the deck did not foresee: not sequenced either
        return ProtocolError("MALFORMED", author, f"{type(exc).__name__}: {exc}")
    return None
