"""The offline audit of a transcript: every record checked again by an observer session.

:func:`verify_file` reads a transcript (:func:`~dernier_p2p.wire.transcript.read_transcript`) and
feeds every record, in order, to a :class:`~dernier_p2p.protocol.session.Session` with no seat.
The observer checks what every player checked during the match: the chain (index, ``prev``,
time), the host's and every author's signature, the author counters and head echoes, every body
against its schema, every coin commitment and reveal, every deck message (key proofs, shuffle
proofs, reveal tokens, transfers), every move against the rules, and at the end of each hand
the secret reveals, the deck audit and a replay of the hand with every face known.

The result is a :class:`Verdict`: ``ok`` (the transcript checks and the match is over), or the
first fault with its code, the seat at fault, the detail and the index of the record where it
was found. A transcript that checks but stops before the match is over is ``INCOMPLETE``:
nobody is at fault for an unfinished transcript (PROTOCOL.md 22), so no seat is named, and
``waiting`` lists the seat(s) the table was waiting on. A file that cannot be read as a
transcript is ``UNREADABLE`` (no seat); a crash while writing its last record (a *torn tail*:
that record's prefix, then nothing or zeros) does not make it unreadable: the records before
the tail are checked and the verdict's ``torn`` describes the tail. The summary tells what the
transcript holds: the protocol version of its table, variant, players, hands played, scores and
winner, or that the match ended as no contest (nobody ranked).

A transcript of an older version (:data:`~dernier_p2p.wire.version.READABLE_VERSIONS`: versions 2
and 3, PROTOCOL.md 20) is checked exactly like one of this version, its rules read as its
version read them (the session takes the readings from record 0's version); the summary tells
which version it met.

An envelope side file (the envelopes a host received, PROTOCOL.md 21.1) adds the envelopes no
record carries: judged after the last record, one may prove a fault of its author even when the
host never relayed it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dernier_p2p.protocol import finality
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.session import Session
from dernier_p2p.protocol.votes import quorum
from dernier_p2p.rules import events as ev
from dernier_p2p.wire.transcript import TornTail, Transcript, TranscriptError, read_transcript
from dernier_p2p.wire.version import READABLE_VERSIONS

UNREADABLE = "UNREADABLE"
INCOMPLETE = "INCOMPLETE"
EMPTY = "EMPTY"
UNCHECKABLE = "UNCHECKABLE"

OnRecord = Callable[[int, dict, Session, list[Any]], None]
"""Called after each applied record: index, record, the observer, the new session events."""


@dataclass
class Summary:
    """What a transcript holds, as far as it was checked. ``version``: the protocol version of
    its table (record 0), once record 0 checks."""

    version: int | None = None
    variant: str | None = None
    names: list[str] = field(default_factory=list)
    records: int = 0
    hands: int = 0  # hands scored
    scores: tuple[int, ...] = ()
    match_points: tuple[int, ...] = ()
    winner: int | None = None
    standings: tuple[int, ...] = ()  # best first, once finished
    finished: bool = False
    no_contest: bool = False  # the match ended as no contest (7.5): nobody ranked
    end_holders: int | None = None  # seats shown holding the record that ended it (7.11)
    end_quorum: int | None = None  # the quorum that makes it final; 0: final at once

    @property
    def players(self) -> int:
        return len(self.names)


@dataclass
class Verdict:
    """The outcome of an audit. ``ok`` is True only for a complete, checked match; otherwise
    ``code`` says what failed, ``seat`` who is at fault (None if no seat can be named, and
    always for ``INCOMPLETE``: nobody is at fault for an unfinished transcript), ``index`` the
    record where it was found (None if not tied to one record). ``waiting``: for
    ``INCOMPLETE``, the seats the table waits on (empty otherwise)."""

    ok: bool
    code: str | None = None
    seat: int | None = None
    detail: str = ""
    index: int | None = None
    summary: Summary = field(default_factory=Summary)
    waiting: tuple[int, ...] = ()
    torn: TornTail | None = None
    """The transcript's torn tail (a crash cut off its last record): the records before it
    are the ones checked."""

    @property
    def readable(self) -> bool:
        return self.code != UNREADABLE


def _summarise(session: Session, summary: Summary) -> None:
    st = session.state
    summary.scores = tuple(st.scores)
    summary.match_points = tuple(st.match_points)
    summary.finished = bool(session.finished)
    summary.no_contest = session.no_contest
    ranked = session.finished and not session.no_contest
    summary.winner = st.winner if ranked else None
    summary.standings = tuple(st.standings) if ranked else ()
    summary.hands = sum(1 for e in session.events if isinstance(e, ev.HandScored))


def _table_summary(record: Any, summary: Summary) -> None:
    """Names and variant from record 0 as far as its shape allows (before it is checked)."""
    try:
        body = record["env"]["body"]
        summary.variant = str(body["variant"])
        summary.names = [str(p["name"]) for p in body["players"]]
    except (KeyError, TypeError, IndexError):
        pass


def check_records(
    records: Sequence[Any],
    on_record: OnRecord | None = None,
    envelopes: Sequence[Any] = (),
) -> Verdict:
    """Audit a list of records (record 0 first); see the module docstring. ``envelopes``: an
    envelope side file's entries, judged after the last record when every record checks
    (:func:`judge_envelopes`). Record 0 may be a table of any of :data:`READABLE_VERSIONS`."""
    summary = Summary(records=len(records))
    if not records:
        return Verdict(False, EMPTY, None, "the transcript holds no record", None, summary)
    _table_summary(records[0], summary)
    try:
        session = Session(None, None, records[0], versions=READABLE_VERSIONS)
    except ProtocolError as exc:
        return Verdict(False, exc.code, exc.seat, exc.detail, 0, summary)
    except Exception as exc:  # record 0 too broken for the session to describe
        detail = f"record 0 cannot be checked: {type(exc).__name__}: {exc}"
        return Verdict(False, UNCHECKABLE, None, detail, 0, summary)
    summary.version = session.table_body["version"]
    if on_record is not None:
        on_record(0, records[0], session, [])
    seen = len(session.events)
    end_at: int | None = None
    for i in range(1, len(records)):
        try:
            session.receive(records[i])
        except ProtocolError as exc:
            _summarise(session, summary)
            return Verdict(False, exc.code, exc.seat, exc.detail, i, summary)
        except Exception as exc:  # a record the checks did not foresee: still no traceback
            _summarise(session, summary)
            detail = f"record {i} cannot be checked: {type(exc).__name__}: {exc}"
            return Verdict(False, UNCHECKABLE, None, detail, i, summary)
        if on_record is not None:
            on_record(i, records[i], session, session.events[seen:])
        seen = len(session.events)
        if end_at is None and session.finished:
            end_at = i
    found = judge_envelopes(session, envelopes)
    _summarise(session, summary)
    if end_at is not None:
        m = len(session.chain.at_table)
        summary.end_holders = len(finality.holders(records, end_at))
        summary.end_quorum = 0 if session.no_contest or m <= 2 else quorum(m)
    if found is not None:
        return Verdict(False, found.code, found.seat, found.detail, None, summary)
    if not session.finished:
        waiting = tuple(session.waiting_on())
        who = ", ".join(f"seat {s}" for s in waiting) or "no seat"
        detail = f"the transcript ends before the match is over (the table waits on {who})"
        return Verdict(False, INCOMPLETE, None, detail, None, summary, waiting)
    return Verdict(True, summary=summary)


def judge_envelopes(session: Session, envelopes: Sequence[Any]) -> ProtocolError | None:
    """The first fault that an envelope of a side file proves after the last record (see
    :meth:`Session.judge_unsequenced`): envelopes already sequenced or that could not have been
    the next record are passed over. The detail says the envelope was never sequenced."""
    for k, env in enumerate(envelopes):
        exc = session.judge_unsequenced(env)  # a malformed entry proves nothing (None)
        if exc is not None:
            where = f"envelope {k} of the side file (seat {env['seat']}, counter {env['n']})"
            return ProtocolError(exc.code, exc.seat, f"{exc.detail} [{where}, never sequenced]")
    return None


def read_records(
    path: str | os.PathLike[str], what: str = "the transcript"
) -> Transcript | Verdict:
    """The records of the file at ``path`` (``what`` it is, for a refusal), up to a torn
    tail (the result's ``torn``), or an ``UNREADABLE`` verdict."""
    try:
        return read_transcript(path, allow_torn_tail=True)
    except TranscriptError as exc:
        return Verdict(False, UNREADABLE, None, f"{what} {path}: {exc}")
    except IsADirectoryError:
        return Verdict(False, UNREADABLE, None, f"{what} {path}: is a directory")
    except OSError as exc:
        return Verdict(False, UNREADABLE, None, f"{what} {path}: {exc.strerror or exc}")


def verify_file(
    path: str | os.PathLike[str],
    on_record: OnRecord | None = None,
    envelopes: str | os.PathLike[str] | None = None,
) -> Verdict:
    """Read and audit the transcript at ``path``, with the envelope side file ``envelopes``
    (PROTOCOL.md 21.1) if given."""
    records = read_records(path)
    if isinstance(records, Verdict):
        return records
    side: list[Any] = []
    if envelopes is not None:
        side_read = read_records(envelopes, "the envelope side file")
        if isinstance(side_read, Verdict):
            return side_read
        side = side_read
    verdict = check_records(records, on_record, side)
    verdict.torn = records.torn
    table = verdict.summary.version
    if records.version is not None and table is not None and table != records.version:
        return Verdict(False, UNREADABLE, None,
                       f"the transcript {path}: its header names protocol version "
                       f"{records.version} but its table (record 0) is of version {table}: it was "
                       "not written by a client of that table", summary=verdict.summary)
    return verdict
