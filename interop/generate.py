"""Generate the conformance cases from real matches played in memory (deterministic).

``python -m interop.generate [--only NAME]`` plays every scenario of
:data:`interop.gen.scenarios.SCENARIOS` and writes each match as a transcript under
``cases/transcripts/``. Every case group of :data:`interop.gen.groups.GROUPS` then derives its
cases from those matches: one record changed (signed again by its author and by the host where
needed, so that only the intended fault is present), or a cheat injected into a replay of the
same match, or a whole match signed again as one of another protocol version. Every case's
expected verdict is the reference implementation's (the adapter's
observer), and for an invalid case the generator checks that the code and the seat at fault are
the intended ones: a case whose verdict is not the intended one is an error, not a case.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from interop.channel import write_transcript_records
from interop.gen.forge import SPECS
from interop.gen.groups import GROUPS
from interop.gen.output import FILES, check_all, write_cases
from interop.gen.scenarios import SCENARIOS, Base, record_match

OUT = Path(__file__).resolve().parent / "cases"


def build_groups(bases: dict[str, Base]) -> None:
    """Run every registered case group over the recorded matches (cases go to ``SPECS``)."""
    for module in GROUPS:
        start = len(SPECS)
        module.build(bases)
        own = getattr(module, "FILE", None)
        if own is not None:
            FILES[own[0]] = own[1]
            for spec in SPECS[start:]:
                spec.file = own[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m interop.generate")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--only", default=None, help="comma-separated scenario names")
    args = parser.parse_args(argv)
    out = Path(args.out)
    (out / "transcripts").mkdir(parents=True, exist_ok=True)
    only = None if args.only is None else set(args.only.split(","))
    bases: dict[str, Base] = {}
    for sc in SCENARIOS:
        if only is not None and sc.name not in only:
            continue
        b = record_match(sc)
        if b is None:
            print(f"{sc.name}: no match recorded", file=sys.stderr)
            continue
        bases[sc.name] = b
        size = sum(len(x) for x in b.raw)
        print(f"{sc.name}: trial {b.trial}, {len(b.records)} records, {size} bytes, events "
              f"{sorted(sc.want & b.events)}", file=sys.stderr)
        write_transcript_records(out / "transcripts" / f"{sc.name}.dtr", b.raw, sc.version)
    recorded = set(bases)
    build_groups(bases)
    for name, b in bases.items():  # matches a group made (signed again as another version)
        if name not in recorded:
            write_transcript_records(out / "transcripts" / f"{name}.dtr", b.raw, b.sc.version)
    kept = check_all(bases)
    write_cases(kept, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
