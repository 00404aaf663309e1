"""The newcomer's first command, timed: README's play command on a fresh clone and a fresh
virtual environment, at an 80x24 terminal (tmux), until the table first asks the player for a
move.

    python benchmarks/bench_install.py [--runs 3] [--cache] [--compile]

Each run clones this repository's HEAD into a new folder, runs
``python3 -m venv .venv && . .venv/bin/activate && pip install . && dernier play`` in a new
tmux session and reads the screen every 0.2 s. It prints, per run, the seconds until pip's
first line (something to read), until ``pip install`` is done, and until the first prompt of
the table; then the range. Without ``--cache`` pip's cache is off (``PIP_NO_CACHE_DIR=1``):
every package comes from the index, as on a machine that never installed them. ``--compile``
sets ``DERNIER_COMPILE=1`` (the Cython build of the rules engine) for comparison. Needs git,
tmux and the network.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = "python3 -m venv .venv && . .venv/bin/activate && pip install . && dernier play"
PROMPTS = ("card number to play", "d = draw", "d = take", "q = leave")
DONE = "__INSTALLED__"


def _screen(session: str) -> str:
    out = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True,
                         text=True)
    return out.stdout


def one_run(k: int, cache: bool, compile_: bool, limit_s: float) -> tuple[float, float, float]:
    """(first output, install done, first prompt) in seconds from the command's start."""
    folder = Path(tempfile.mkdtemp(prefix="dernier-install-"))
    session = f"bench-install-{os.getpid()}-{k}"
    try:
        subprocess.run(["git", "clone", "-q", str(ROOT), str(folder / "dernier")], check=True)
        env = []
        if not cache:
            env.append("PIP_NO_CACHE_DIR=1")
        if compile_:
            env.append("DERNIER_COMPILE=1")
        # the play command with a marker once pip is done (it does not change what is run)
        line = COMMAND.replace(" && dernier play", f" && echo {DONE} && dernier play")
        shell = f"cd {folder / 'dernier'} && export {' '.join(env) or 'X=1'} && {line}"
        start = time.monotonic()
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24",
                        "bash", "-c", shell], check=True)
        first = installed = prompt = float("nan")
        while time.monotonic() - start < limit_s:
            text = _screen(session)
            now = time.monotonic() - start
            if first != first and text.strip():
                first = now
            if installed != installed and DONE in text:
                installed = now
            if any(p in text for p in PROMPTS):
                prompt = now
                break
            time.sleep(0.2)
        return first, installed, prompt
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cache", action="store_true", help="let pip use its cache")
    parser.add_argument("--compile", action="store_true", help="DERNIER_COMPILE=1")
    parser.add_argument("--limit", type=float, default=600.0, help="seconds per run at most")
    args = parser.parse_args()
    for tool in ("git", "tmux"):
        if shutil.which(tool) is None:
            print(f"{tool} is needed", file=sys.stderr)
            return 2
    prompts = []
    for k in range(args.runs):
        first, installed, prompt = one_run(k, args.cache, args.compile, args.limit)
        prompts.append(prompt)
        print(f"run {k + 1}: first output {first:.1f} s, installed {installed:.1f} s, "
              f"first prompt {prompt:.1f} s", flush=True)
    done = [p for p in prompts if p == p]
    if done:
        print(f"first prompt: {min(done):.1f} to {max(done):.1f} s over {len(done)} runs "
              f"({'cache' if args.cache else 'no cache'}, "
              f"{'compiled' if args.compile else 'pure Python'} engine)")
    return 0 if len(done) == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
