"""Run a target for a budget of cases or seconds; count crashes and hangs; save reproducers.

Case ``k`` of seed ``s`` is made from ``random.Random(f"{s}:{k}")``, so ``--seed s --only k``
makes the same input again. A case running longer than ``hang_s`` is interrupted (SIGALRM) and
counted as a hang. Peak memory is the process's maximum resident set size.
"""

from __future__ import annotations

import random
import resource
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from dernier_p2p.fuzz.targets import EXPECTED, Target


class Hang(Exception):
    """A case ran past the time limit."""


@dataclass
class Report:
    target: str
    cases: int = 0
    seconds: float = 0.0
    crashes: int = 0
    hangs: int = 0
    refused: int = 0  # cases refused with a documented error
    peak_kib: int = 0
    slowest_s: float = 0.0
    saved: list[str] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.cases / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        return (f"{self.target}: {self.cases} cases in {self.seconds:.1f} s "
                f"({self.rate:.0f} cases/s), {self.crashes} crashes, {self.hangs} hangs, "
                f"{self.refused} refused with a protocol error, slowest case "
                f"{self.slowest_s * 1000:.1f} ms, peak memory {self.peak_kib / 1024:.0f} MiB")


def _alarm(signum: int, frame: object) -> None:
    raise Hang("case ran past its time limit")


def run(
    target: Target,
    *,
    cases: int | None = None,
    seconds: float | None = None,
    seed: int = 0,
    out: Path | None = None,
    hang_s: float = 10.0,
    only: int | None = None,
    progress: bool = False,
) -> Report:
    """Fuzz ``target`` until ``cases`` cases or ``seconds`` have run (whichever first)."""
    report = Report(target.name)
    use_alarm = hasattr(signal, "setitimer") and only is None
    old = signal.signal(signal.SIGALRM, _alarm) if use_alarm else None
    start = time.perf_counter()
    k = only if only is not None else 0
    try:
        while True:
            if only is not None and report.cases:
                break
            if cases is not None and report.cases >= cases:
                break
            if seconds is not None and time.perf_counter() - start >= seconds:
                break
            rng = random.Random(f"{seed}:{k}")
            data = target.make(rng)
            t0 = time.perf_counter()
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, hang_s)
            try:
                target.run(data)
            except EXPECTED as exc:
                report.refused += 1
                name = target.kind(exc) if target.kind else getattr(exc, "code",
                                                                      type(exc).__name__)
                report.kinds[name] = report.kinds.get(name, 0) + 1
            except Hang:
                report.hangs += 1
                _save(report, out, target, seed, k, data, "hang")
            except Exception as exc:  # a crash: anything that is not a protocol refusal
                report.crashes += 1
                _save(report, out, target, seed, k, data, traceback.format_exc())
                if only is not None:
                    raise
                del exc
            finally:
                if use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            report.slowest_s = max(report.slowest_s, time.perf_counter() - t0)
            report.cases += 1
            k += 1
            if progress and report.cases % 10_000 == 0:
                report.seconds = time.perf_counter() - start
                print(report.line(), file=sys.stderr, flush=True)
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, old)
        if target.close is not None:
            target.close()
    report.seconds = time.perf_counter() - start
    report.peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return report


def _save(report: Report, out: Path | None, target: Target, seed: int, k: int, data: object,
          why: str) -> None:
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{target.name}-seed{seed}-case{k}.bin"
    path.write_bytes(target.dump(data))
    again = f"python -m dernier_p2p.fuzz {target.name} --seed {seed} --only {k}"
    path.with_suffix(".txt").write_text(f"{again}\n{why}\n")
    report.saved.append(str(path))
