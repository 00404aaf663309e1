"""Loading the conformance cases: the JSON case files and the transcripts they refer to.

A case file (``cases/*.json``) is ``{"group", "description", "tests": [case, ...]}``; a case is::

    {"id": str, "section": "PROTOCOL.md section", "comment": str, "flags": [str, ...],
     "input": one of
        {"transcript": name}                          every record of a transcript
        {"transcript": name, "prefix": k, "next": [hex, ...]}
                                                      its first k records, then these records
        {"records": [hex, ...]}                       these records
        {"frame": hex}                                bytes received on a connection
        {"handshake": {"nonce": hex, "frame": hex}}   a peer's answer to a challenge
     "expected": {"result": "valid"} or
                 {"result": "invalid", "code": str, "seat": int | None, "index": int}}

:func:`adapter_input` turns an input into what the adapter receives (bytes, no hex, no names).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from interop.channel import read_transcript_records

CASES_DIR = Path(__file__).resolve().parent / "cases"
RESULTS = ("valid", "invalid")


class CaseError(ValueError):
    """A case file that does not follow the format."""


@dataclass(frozen=True)
class Case:
    id: str
    section: str
    comment: str
    flags: tuple[str, ...]
    input: dict[str, Any]
    expected: dict[str, Any]
    group: str

    @property
    def order(self) -> tuple:
        """Cases sharing a transcript run together, shorter prefixes first."""
        inp = self.input
        if "transcript" in inp:
            return (0, inp["transcript"], inp.get("prefix", 1 << 62), self.id)
        return (1, "", 0, self.id)


@lru_cache(maxsize=64)
def transcript(cases_dir: Path, name: str) -> tuple[bytes, ...]:
    return tuple(read_transcript_records(cases_dir / "transcripts" / f"{name}.dtr"))


def _hexes(value: Any, what: str) -> list[bytes]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CaseError(f"{what} is a list of hex strings")
    return [bytes.fromhex(v) for v in value]


def adapter_input(case: Case, cases_dir: Path = CASES_DIR) -> dict[str, Any]:
    """The ``input`` map sent to the adapter for ``case``."""
    inp = case.input
    if "handshake" in inp:
        shake = inp["handshake"]
        return {"handshake": {"nonce": bytes.fromhex(shake["nonce"]),
                              "frame": bytes.fromhex(shake["frame"])}}
    if "frame" in inp:
        return {"frame": bytes.fromhex(inp["frame"])}
    if "records" in inp:
        return {"records": _hexes(inp["records"], "records")}
    if "transcript" in inp:
        records = list(transcript(cases_dir, inp["transcript"]))
        if "prefix" not in inp:
            return {"records": records}
        k = inp["prefix"]
        if not isinstance(k, int) or not 0 <= k <= len(records):
            raise CaseError(f"{case.id}: prefix {k!r} outside the transcript")
        more = _hexes(inp.get("next"), "next")
        if len(more) == 1:
            return {"prefix": records[:k], "next": more[0]}
        return {"records": records[:k] + more}
    raise CaseError(f"{case.id}: unknown input form {sorted(inp)}")


def _case(raw: Any, group: str) -> Case:
    if not isinstance(raw, dict):
        raise CaseError(f"{group}: a case is a map")
    try:
        case = Case(
            id=raw["id"],
            section=raw["section"],
            comment=raw["comment"],
            flags=tuple(raw["flags"]),
            input=raw["input"],
            expected=raw["expected"],
            group=group,
        )
    except KeyError as exc:
        raise CaseError(f"{group}: case without {exc}") from None
    if case.expected.get("result") not in RESULTS:
        raise CaseError(f"{case.id}: expected result must be one of {RESULTS}")
    if case.expected["result"] == "invalid" and not isinstance(case.expected.get("code"), str):
        raise CaseError(f"{case.id}: an invalid case names its error code")
    return case


def load_cases(cases_dir: Path = CASES_DIR) -> list[Case]:
    """Every case of every case file in ``cases_dir``, in run order; ids must be unique."""
    out: list[Case] = []
    for path in sorted(Path(cases_dir).glob("*.json")):
        data = json.loads(path.read_text())
        group = data.get("group", path.stem)
        out += [_case(raw, group) for raw in data.get("tests", [])]
    ids = [c.id for c in out]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise CaseError(f"duplicate case ids: {dup[:5]}")
    return sorted(out, key=lambda c: c.order)
