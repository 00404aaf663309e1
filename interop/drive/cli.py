"""``python -m interop.drive``: run the live scenarios against a client command.

    python -m interop.drive                        # this project's client (dernier join)
    python -m interop.drive --client "CMD"         # another client
    python -m interop.drive --list                 # the scenarios and what each checks
    python -m interop.drive --only timeout         # the scenarios whose name holds "timeout"

``CMD`` is a shell command; the driver fills its placeholders (shell-quoted) for each
scenario: ``{addr}`` (HOST:PORT of the table), ``{host}``, ``{port}``, ``{code}`` (an invite
code for the table: its host's fingerprint and a direct route), ``{listen}`` (HOST:PORT the
client should listen at for links and to host, free when the scenario starts),
``{listen_port}``, ``{dir}`` (a fresh folder for the client's key and transcript, its working
directory) and ``{name}``. Each scenario prints PASS or FAIL with its PROTOCOL.md section,
and a failure names the behaviour that was missing. The exit status is 1 if any failed.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

import trio

from interop.drive.events import Event
from interop.drive.model import Scenario
from interop.drive.scenarios import SCENARIOS, by_name
from interop.drive.stage import Stage
from interop.drive.verdict import Verdict, early_end, judge, met

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CLIENT = (
    f"{sys.executable} -m dernier_p2p join {{addr}} --bot --plain --name {{name}} "
    "--listen {listen} --key {dir}/key.pem --transcript {dir}/client.dtr"
)


async def run_one(sc: Scenario, command: str, timeout: float | None,
                  keep: Path | None = None) -> tuple[Verdict, str, list[str]]:
    """Run one scenario; its verdict, the client's output and the events, as lines."""
    with tempfile.TemporaryDirectory(prefix=f"drive-{sc.name}-", dir=keep) as tmp:
        # this project's client runs the code of this checkout, as the scripted table does
        path = (str(ROOT),) if command == DEFAULT_CLIENT else ()
        stage = Stage(sc, command, Path(tmp), path)
        start = time.monotonic()
        limit = sc.deadline if timeout is None else timeout
        ended = ""
        settled: list[float] = []

        def done() -> bool:
            nonlocal ended
            events = stage.events.items
            ended = early_end(sc, events)
            if ended:
                return True
            if len(met(sc, events, stage.seat_of)) < len(sc.expect):
                return False
            if not settled:
                settled.append(time.monotonic())
            return time.monotonic() - settled[0] >= sc.settle

        try:
            await stage.play(done, start + limit)
        finally:
            stage.stop_client()
        seconds = time.monotonic() - start
        if not ended and len(met(sc, stage.events.items, stage.seat_of)) < len(sc.expect):
            ended = f"not within {limit:.0f} s"
        lines = [f"{e.t - start:6.2f} {e.event} at {e.where} "
                 + " ".join(f"{k}={v!r}" for k, v in e.data.items() if k != "raw")
                 for e in stage.events.items if _telling(e, stage.client)]
        verdict = judge(sc, stage.events.items, stage.seat_of, seconds, ended)
        return verdict, stage.client_text(), lines


def _telling(ev: Event, client: int) -> bool:
    """Whether an event is worth a line in a failure's account (not every record of the
    other seats)."""
    if ev.event == "env":
        return ev.data.get("type") in ("move", "chat", "resign")
    return ev.event != "record" or ev.data.get("author") == client or ev.data.get("type") in (
        "host_change", "left", "timeout", "resign", "no_contest")


async def run_all(scenarios: list[Scenario], command: str, timeout: float | None, jobs: int,
                  out: TextIO, verbose: bool = False) -> int:
    """Run the scenarios, ``jobs`` at a time; print each result; return the failures."""
    slots = trio.Semaphore(max(1, jobs))
    failures = 0

    async def one(sc: Scenario) -> None:
        nonlocal failures
        try:
            verdict, text, lines = await run_one(sc, command, timeout)
        except Exception as exc:  # the driver's own fault: a failure, not a crash
            verdict, text, lines = Verdict(False, f"the driver failed: {type(exc).__name__}: "
                                                  f"{exc}"), "", []
        finally:
            slots.release()
        if verdict.passed:
            print(f"PASS  {sc.name:22} {sc.section:28} {verdict.seconds:5.1f} s", file=out)
        else:
            failures += 1
            print(f"FAIL  {sc.name:22} {sc.section:28} {verdict.seconds:5.1f} s\n"
                  f"      {verdict.missing}", file=out)
            if verbose:
                tail = "\n".join(text.splitlines()[-15:])
                print("      client output (last lines):\n" + tail, file=out)
                print("      events:\n" + "\n".join(lines[-60:]), file=out)
        out.flush()

    async with trio.open_nursery() as nursery:
        for sc in scenarios:  # started in their order, ``jobs`` at a time
            await slots.acquire()
            nursery.start_soon(one, sc)
    return failures


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> int:
    parser = argparse.ArgumentParser(prog="python -m interop.drive", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--client", default=DEFAULT_CLIENT,
                        help="the client's command line (default: this project's dernier join)")
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run the scenarios whose name holds NAME (repeatable)")
    parser.add_argument("--timeout", type=float, default=None, metavar="S",
                        help="seconds each scenario may take (default: its own deadline)")
    parser.add_argument("--jobs", type=int, default=4, metavar="N",
                        help="scenarios run at once (default 4)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="on a failure, print the client's last lines of output")
    args = parser.parse_args(argv)
    scenarios = list(SCENARIOS)
    if args.only:
        scenarios = [s for s in SCENARIOS if any(s in by_name(n) for n in args.only)]
        if not scenarios:
            print(f"no scenario matches {', '.join(args.only)} (see --list)", file=out)
            return 2
    if args.list:
        for sc in scenarios:
            print(f"{sc.name:22} {sc.section:28} {sc.checks}", file=out)
        return 0
    if args.timeout is not None and args.timeout <= 0:
        print("--timeout must be positive", file=out)
        return 2
    logging.getLogger("dernier_p2p").setLevel(logging.CRITICAL)  # the scripted table's notes
    start = time.monotonic()
    failures = trio.run(run_all, scenarios, args.client, args.timeout, args.jobs, out,
                        args.verbose)
    took = time.monotonic() - start
    print(f"{len(scenarios) - failures} of {len(scenarios)} scenarios passed in {took:.0f} s",
          file=out)
    return 1 if failures else 0
