"""Drive an implementation's adapter through every case and report the results.

The adapter is a command started as a subprocess; the runner writes each case to its stdin and
reads the verdict from its stdout (:mod:`interop.channel`). A case *passes* when the verdict's
``result`` equals the expected one and, for an invalid case, its ``code`` equals the expected
code (and its ``seat``, when the adapter names one and the case does too), and, when the
adapter answers the match's ``outcome`` (winner, standings, scores, match points), it equals
the expected one (none for a match not over). ``unimplemented`` answers are counted apart
(and make the exit status 1 unless ``--allow-unimplemented``); anything else *fails*. An
answer must come whole within ``--timeout``; an adapter's text is printed with its control
characters escaped.
"""

from __future__ import annotations

import json
import select
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop.cases import CASES_DIR, Case, adapter_input, load_cases
from interop.channel import ChannelError, pack, read_message

DEFAULT_ADAPTER = f"{shlex.quote(sys.executable)} -m interop.adapters.dernier_p2p_adapter"


@dataclass
class Outcome:
    case: Case
    status: str  # passed | failed | unimplemented
    got: dict[str, Any] = field(default_factory=dict)
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.case.id,
            "group": self.case.group,
            "section": self.case.section,
            "flags": list(self.case.flags),
            "status": self.status,
            "expected": self.case.expected,
            "got": {k: v for k, v in self.got.items() if k != "id"},
            "why": self.why,
        }


def judge(case: Case, answer: dict[str, Any]) -> Outcome:
    """Compare an adapter's answer with the expected verdict."""
    result = answer.get("result")
    want = case.expected
    if result == "unimplemented":
        return Outcome(case, "unimplemented", answer)
    if result != want["result"]:
        return Outcome(case, "failed", answer, f"result {result!r}, expected {want['result']!r}")
    if result == "invalid":
        if answer.get("code") != want["code"]:
            why = f"code {answer.get('code')!r}, expected {want['code']!r}"
            return Outcome(case, "failed", answer, why)
        if "seat" in answer and "seat" in want and answer["seat"] != want["seat"]:
            why = f"seat at fault {answer['seat']!r}, expected {want['seat']!r}"
            return Outcome(case, "failed", answer, why)
    if "outcome" in answer and answer["outcome"] != want.get("outcome"):
        why = f"match outcome {answer['outcome']!r}, expected {want.get('outcome')!r}"
        return Outcome(case, "failed", answer, why)
    return Outcome(case, "passed", answer)


def shown(value: Any, limit: int = 300) -> str:
    """An adapter's text for the terminal: control characters escaped (an adapter is not
    trusted to leave the screen alone), at most ``limit`` characters."""
    text = value if isinstance(value, str) else repr(value)
    out = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                  for c in text)
    return out if len(out) <= limit else out[: limit - 3] + "..."


class _Deadline:
    """Reads of the adapter's stdout, each waiting at most until one deadline for the whole
    answer: an adapter that sends half a message and falls silent fails the case in time."""

    def __init__(self, stream: Any, timeout_s: float) -> None:
        self.stream = stream
        self.timeout_s = timeout_s
        self.end = time.monotonic() + timeout_s

    def read(self, size: int) -> bytes:
        left = self.end - time.monotonic()
        ready, _, _ = select.select([self.stream], [], [], max(0.0, left))
        if not ready:
            raise ChannelError(f"no whole answer within {self.timeout_s} s")
        return self.stream.read(size)


class Adapter:
    """The adapter subprocess."""

    def __init__(self, command: str, timeout_s: float, cwd: str | None = None) -> None:
        self.command = command
        self.timeout_s = timeout_s
        self.proc = subprocess.Popen(
            shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd,
            bufsize=0,  # unbuffered: each read returns what has come, select sees the rest
        )

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(pack(message))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ChannelError(f"adapter stdin closed: {exc}") from None
        answer = read_message(_Deadline(self.proc.stdout, self.timeout_s))
        if answer is None:
            raise ChannelError(f"adapter exited (status {self.proc.poll()})")
        if answer.get("id") != message["id"]:
            raise ChannelError(f"answer for {answer.get('id')!r}, expected {message['id']!r}")
        return answer

    def close(self, kill: bool = False) -> None:
        """End the adapter: its stdin closed, then a wait of up to 5 s (none when ``kill``:
        a broken adapter is not waited for)."""
        if kill:
            self.proc.kill()
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def run(
    command: str = DEFAULT_ADAPTER,
    cases_dir: Path = CASES_DIR,
    select_ids: str | None = None,
    timeout_s: float = 120.0,
    cwd: str | None = None,
    log: Any = None,
) -> list[Outcome]:
    """Run every case (whose id contains ``select_ids``, if given) through the adapter."""
    cases = [c for c in load_cases(cases_dir) if select_ids is None or select_ids in c.id]
    outcomes: list[Outcome] = []
    adapter: Adapter | None = Adapter(command, timeout_s, cwd)
    for case in cases:
        if adapter is None:
            outcomes.append(Outcome(case, "failed", {}, "adapter not running"))
            continue
        try:
            answer = adapter.ask({"id": case.id, "input": adapter_input(case, cases_dir)})
        except ChannelError as exc:
            outcomes.append(Outcome(case, "failed", {}, f"adapter: {exc}"))
            adapter.close(kill=True)
            adapter = None
            continue
        out = judge(case, answer)
        outcomes.append(out)
        if log is not None and out.status != "passed":
            why = out.why or answer.get("detail")
            print(f"{out.status.upper():13} {case.id}: {shown(why)}", file=log)
    if adapter is not None:
        adapter.close()
    return outcomes


def report(outcomes: list[Outcome], command: str, seconds: float) -> dict[str, Any]:
    """The JSON report."""
    counts = {s: sum(o.status == s for o in outcomes) for s in ("passed", "failed",
                                                                  "unimplemented")}
    return {
        "adapter": command,
        "cases": len(outcomes),
        **counts,
        "seconds": round(seconds, 2),
        "results": [o.to_json() for o in outcomes],
    }


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m interop", description="Run the dernier-p2p conformance cases."
    )
    parser.add_argument("--adapter", default=DEFAULT_ADAPTER, help="adapter command line")
    parser.add_argument("--cases", default=str(CASES_DIR), help="directory of case files")
    parser.add_argument("--report", default=None, help="write the JSON report to this file")
    parser.add_argument("--only", default=None, help="run the cases whose id contains this")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    parser.add_argument(
        "--allow-unimplemented", action="store_true",
        help="exit 0 when no case failed, even if some were unimplemented (a partial client)",
    )
    args = parser.parse_args(argv)
    start = time.monotonic()
    outcomes = run(args.adapter, Path(args.cases), args.only, args.timeout, log=sys.stdout)
    rep = report(outcomes, args.adapter, time.monotonic() - start)
    if args.report:
        Path(args.report).write_text(json.dumps(rep, indent=1) + "\n")
    print(
        f"{rep['cases']} cases: {rep['passed']} passed, {rep['failed']} failed, "
        f"{rep['unimplemented']} unimplemented ({rep['seconds']} s)"
    )
    bad = rep["failed"] + (0 if args.allow_unimplemented else rep["unimplemented"])
    return 1 if bad or not outcomes else 0


if __name__ == "__main__":
    raise SystemExit(main())
