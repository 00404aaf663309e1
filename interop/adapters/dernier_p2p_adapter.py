"""The interop adapter of the reference implementation, ``dernier_p2p``.

Run as ``python -m interop.adapters.dernier_p2p_adapter``: it reads cases from stdin and writes
verdicts to stdout, as length-prefixed msgpack maps (``interop/README.md``).

Records are judged by an observer :class:`~dernier_p2p.protocol.session.Session` (``seat=None``)
fed every record in order, exactly as a peer checks the records the host relays: the first
:class:`~dernier_p2p.protocol.errors.ProtocolError` is the verdict. Like a verifier it takes a
table of any version whose transcripts still verify (``READABLE_VERSIONS``: 2, 3 and 4), each read
with its own version's rules (PROTOCOL.md 20). Frames are judged against the
framing limits and the frame codec of :mod:`dernier_p2p.net.handshake`, each kind's field set
from :data:`dernier_p2p.protocol.frames.FRAME_FIELDS`.

Cases that share a prefix (the runner sends them in transcript order) reuse one observer: it is
fed the common prefix once and copied for each case's next record.
"""

from __future__ import annotations

import copy
import hashlib
import sys
from dataclasses import dataclass
from typing import Any

from dernier_p2p.net import handshake as hs
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.frames import FRAME_FIELDS, shapes
from dernier_p2p.protocol.session import Session
from dernier_p2p.wire.canonical import EncodingError, decode
from dernier_p2p.wire.version import READABLE_VERSIONS

FRAME_KINDS: dict[str, tuple[frozenset[str], ...]] = {kind: shapes(kind) for kind in FRAME_FIELDS}
"""Each frame kind of PROTOCOL.md 4.1 and the field sets it may have: the implementation's own
table (:mod:`dernier_p2p.protocol.frames`), so the two cannot drift."""


@dataclass(frozen=True)
class Verdict:
    """``result`` is ``valid`` or ``invalid``; for invalid, the error ``code``, the ``seat`` at
    fault (None if unknown) and the ``index`` of the record refused."""

    result: str
    code: str | None = None
    seat: int | None = None
    index: int | None = None
    detail: str = ""
    outcome: dict[str, Any] | None = None  # the match result, once the records end the match

    def answer(self, case_id: Any) -> dict[str, Any]:
        out = {
            "id": case_id,
            "result": self.result,
            "code": self.code,
            "seat": self.seat,
            "index": self.index,
            "detail": self.detail,
        }
        if self.outcome is not None:
            out["outcome"] = self.outcome
        return out


def outcome_of(session: Session | None) -> dict[str, Any] | None:
    """The ``outcome`` of the adapter contract: winner, standings, scores and match points
    once the match is over (None before); ``{"no_contest": true}`` for a match ended as no
    contest (7.5)."""
    if session is None or not session.finished:
        return None
    if session.no_contest:
        return {"no_contest": True}
    st = session.state
    return {
        "winner": st.winner,
        "standings": list(st.standings),
        "scores": list(st.scores),
        "match_points": list(st.match_points),
    }


def _valid(obs: Observer) -> Verdict:
    found = outcome_of(obs.session)
    return VALID if found is None else Verdict("valid", outcome=found)


VALID = Verdict("valid")


def _chain_id(prev: bytes, record: bytes) -> bytes:
    return hashlib.sha256(prev + hashlib.sha256(record).digest()).digest()


class Observer:
    """An observer session with the chained hashes of the record bytes it has been fed."""

    def __init__(self) -> None:
        self.session: Session | None = None
        self.ids: list[bytes] = []
        self.verdict: Verdict = VALID

    def copy(self) -> Observer:
        other = Observer()
        other.session = copy.deepcopy(self.session)
        other.ids = list(self.ids)
        other.verdict = self.verdict
        return other

    def feed(self, data: Any) -> Verdict:
        """Check and apply one record (bytes); the first refusal sticks."""
        if self.verdict.result != "valid":
            return self.verdict
        i = len(self.ids)
        host = None if self.session is None else self.session.host
        if not isinstance(data, bytes):
            self.verdict = Verdict("invalid", "MALFORMED", host, i, "a record is given as bytes")
            return self.verdict
        try:
            rec = decode(data)
        except EncodingError as exc:
            self.verdict = Verdict("invalid", exc.code, host, i, f"record encoding: {exc}")
            return self.verdict
        try:
            if self.session is None:
                self.session = Session(None, None, rec, versions=READABLE_VERSIONS)
            else:
                t = rec.get("t") if isinstance(rec, dict) else None
                self.session.receive(rec, t if isinstance(t, int) and t >= 0 else 0)
        except ProtocolError as exc:
            self.verdict = Verdict("invalid", exc.code, exc.seat, i, exc.detail)
            return self.verdict
        self.ids.append(_chain_id(self.ids[-1] if self.ids else b"", data))
        return VALID


class Verifier:
    """Judges record sequences, keeping the observer of the last sequence to reuse its prefix."""

    def __init__(self) -> None:
        self.trunk = Observer()

    def _trunk_for(self, prefix: list[Any]) -> Observer:
        ids, prev = [], b""
        for data in prefix:
            if not isinstance(data, bytes):
                break
            prev = _chain_id(prev, data)
            ids.append(prev)
        trunk = self.trunk
        fed = len(trunk.ids)
        if fed > len(prefix) or trunk.ids != ids[:fed] or trunk.verdict.result != "valid":
            trunk = self.trunk = Observer()
        for data in prefix[len(trunk.ids) :]:
            if trunk.feed(data).result != "valid":
                break
        return trunk

    def records(self, prefix: list[Any], more: list[Any]) -> Verdict:
        """The verdict on ``prefix + more``; the observer after ``prefix`` is kept."""
        trunk = self._trunk_for(prefix)
        if trunk.verdict.result != "valid":
            return trunk.verdict
        if not more:
            return _valid(trunk)
        obs = trunk.copy()
        for data in more:
            verdict = obs.feed(data)
            if verdict.result != "valid":
                return verdict
        return _valid(obs)


def _payload(data: Any) -> tuple[Verdict | None, dict[str, Any] | None]:
    """The framing checks and the frame codec: a refusal, or the decoded message."""
    if not isinstance(data, bytes) or len(data) < 4:
        return Verdict("invalid", "MALFORMED", None, None, "shorter than a length prefix"), None
    size = int.from_bytes(data[:4], "big")
    if size > hs.MAX_FRAME:
        return Verdict("invalid", "OVERSIZED", None, None, f"frame of {size} bytes"), None
    if len(data) - 4 != size:
        what = "truncated" if len(data) - 4 < size else "followed by stray bytes"
        return Verdict("invalid", "MALFORMED", None, None, f"frame {what}"), None
    try:
        return None, hs.unpack(data[4:])
    except hs.NetError as exc:
        return Verdict("invalid", exc.code, None, None, exc.detail), None


def verify_frame(data: Any) -> Verdict:
    """A frame as received on a connection: length prefix, payload, frame codec."""
    refused, message = _payload(data)
    if refused is not None:
        return refused
    assert message is not None
    kind = message["k"]
    if kind not in FRAME_KINDS:
        return Verdict("invalid", hs.UNEXPECTED, None, None, f"unknown frame kind {kind!r}")
    keys = set(message)
    if keys not in FRAME_KINDS[kind]:
        return Verdict("invalid", hs.MALFORMED, None, None, f"{kind} frame fields {sorted(keys)}")
    return VALID


def verify_opening(nonce: Any, data: Any) -> Verdict:
    """A peer's first frame, answering a challenge with ``nonce`` (PROTOCOL.md 4.2): framing,
    then kind, version, fields, key and signature."""
    refused, message = _payload(data)
    if refused is not None:
        return refused
    assert message is not None
    if not isinstance(nonce, bytes) or len(nonce) != hs.NONCE_SIZE:
        raise ValueError("a handshake case has a 32-byte nonce")
    try:
        hs.check_opening(message, nonce)
    except hs.NetError as exc:
        return Verdict("invalid", exc.code, None, None, exc.detail)
    return VALID


def judge(verifier: Verifier, case: dict[str, Any]) -> Verdict:
    """The verdict on one case's input."""
    inp = case.get("input")
    if not isinstance(inp, dict):
        raise ValueError("a case has an input map")
    if "handshake" in inp:
        shake = inp["handshake"]
        return verify_opening(shake.get("nonce"), shake.get("frame"))
    if "frame" in inp:
        return verify_frame(inp["frame"])
    if "records" in inp:
        return verifier.records(list(inp["records"]), [])
    if "prefix" in inp and "next" in inp:
        return verifier.records(list(inp["prefix"]), [inp["next"]])
    raise ValueError("unknown input form")


def serve(stdin: Any, stdout: Any) -> None:
    """Answer cases until stdin ends."""
    from interop.channel import read_message, write_message

    verifier = Verifier()
    while (case := read_message(stdin)) is not None:
        try:
            answer = judge(verifier, case).answer(case.get("id"))
        except Exception as exc:  # report, never die on a case
            answer = {"id": case.get("id"), "result": "error", "code": None, "detail": repr(exc)}
        write_message(stdout, answer)


def main() -> None:
    sys.setrecursionlimit(10_000)
    serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main()
