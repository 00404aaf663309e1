"""Judging every case with the reference adapter and writing the case files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from dernier_p2p.wire.canonical import encode
from dernier_p2p.wire.version import PROTOCOL_VERSION
from interop.adapters.dernier_p2p_adapter import Verifier, verify_frame, verify_opening
from interop.gen.forge import SPECS, Spec
from interop.gen.scenarios import Base

# case files decided by section (a spec whose group module names no file of its own)
GROUPS = [
    ("encoding", ("3",), "Canonical msgpack: every non-canonical or mistyped record is refused"),
    ("frames", ("4",), "Frames on a connection: length limits, the frame codec, the handshake"),
    ("chain", ("5",), "Envelopes, records and the hash chain"),
    ("bodies", ("6", "20"), "Message bodies: schemas, unknown types and fields, host-only bodies"),
    ("moves", ("7.4",), "Moves the rules refuse, cards not held"),
    ("flow", ("7", "14", "18", "21"), "The course of a match: table, accepts, coin, host"),
    ("deck", ("8", "10", "11", "12", "13", "15", "16"), "Mental poker: keys, shuffles, tokens"),
]

# case files named by group modules (their FILE): name -> description
FILES: dict[str, str] = {}


def group_of(spec: Spec) -> str:
    """The case file of ``spec``: the one its group module names, else by its section."""
    if spec.file is not None:
        return spec.file
    if spec.code is None and spec.frame is None and spec.k is None:
        return "valid"
    if spec.code is None and spec.frame is None and "Prefix" in spec.flags:
        return "valid"
    best = ("flow", 0)
    for name, prefixes, _ in GROUPS:
        for p in prefixes:
            if (spec.section == p or spec.section.startswith(p + ".")) and len(p) > best[1]:
                best = (name, len(p))
    return best[0]


def check_all(bases: dict[str, Base]) -> list[tuple[Spec, dict]]:
    """Judge every spec with the reference adapter; keep those judged as intended."""
    out = []
    verifier = Verifier()
    order = sorted(SPECS, key=lambda s: (s.base or "~", s.k if s.k is not None else 1 << 60))
    dropped = 0
    for spec in order:
        if spec.nonce is not None:
            v = verify_opening(spec.nonce, spec.frame)
        elif spec.frame is not None:
            v = verify_frame(spec.frame)
        else:
            b = bases[spec.base]
            if spec.k is None:
                v = verifier.records(b.raw, [])
            else:
                more = [x if isinstance(x, bytes) else encode(x) for x in spec.next]
                v = verifier.records(b.raw[: spec.k], more)
        want = "valid" if spec.code is None else "invalid"
        ok = v.result == want and (spec.code is None or v.code == spec.code)
        if ok and spec.code is not None and spec.seat != "any":
            ok = v.seat == spec.seat
        if not ok:
            dropped += 1
            print(f"  DROPPED {spec.id}: intended {spec.code} seat {spec.seat}, got {v.result} "
                  f"{v.code} seat {v.seat}: {v.detail}", file=sys.stderr)
            continue
        expected: dict[str, Any] = {"result": v.result}
        if v.result == "invalid":
            expected.update(code=v.code, seat=v.seat, index=v.index)
        elif v.outcome is not None:
            expected["outcome"] = v.outcome
        out.append((spec, expected))
    print(f"{len(out)} cases kept, {dropped} dropped", file=sys.stderr)
    return out


def case_json(spec: Spec, expected: dict) -> dict:
    if spec.nonce is not None:
        inp: dict[str, Any] = {"handshake": {"nonce": spec.nonce.hex(),
                                             "frame": spec.frame.hex()}}
    elif spec.frame is not None:
        inp = {"frame": spec.frame.hex()}
    elif spec.k is None:
        inp = {"transcript": spec.base}
    else:
        more = [x if isinstance(x, bytes) else encode(x) for x in spec.next]
        inp = {"transcript": spec.base, "prefix": spec.k, "next": [m.hex() for m in more]}
    return {"id": spec.id, "section": spec.section, "comment": spec.comment,
            "flags": spec.flags, "input": inp, "expected": expected}


def write_cases(kept: list[tuple[Spec, dict]], out: Path) -> None:
    groups: dict[str, list[dict]] = {}
    for spec, expected in kept:
        groups.setdefault(group_of(spec), []).append(case_json(spec, expected))
    about = {name: text for name, _, text in GROUPS}
    about.update(FILES)
    about["valid"] = "Recorded matches of every variant, 2 to 10 seats, and valid prefixes"
    for old in out.glob("*.json"):
        old.unlink()
    for name, tests in sorted(groups.items()):
        data = {"group": name, "description": about[name], "protocol_version": PROTOCOL_VERSION,
                "tests": sorted(tests, key=lambda t: t["id"])}
        (out / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")


