"""Our proven shuffle and libTMCG's, side by side in one run.

libTMCG (https://www.nongnu.org/libtmcg/, C++ on GMP) is not a dependency: when its
``libTMCG-config`` is not on PATH, or no C++ compiler is, the script says so and exits 0
("skipped"). Otherwise it compiles ``benchmarks/tmcg/bench_tmcg.cc`` against the installed
library in a temporary directory and runs it for each deck size: two seats share a Barnett-Smart
VTMF key (libTMCG's default group, a 2048-bit field with a 256-bit subgroup), one shuffles a
masked deck with Groth's non-interactive proof, the other parses and checks it; then one
decryption share with its proof, made and checked.

Our side does the same in this process: a masked deck of the same size, ``shuffle`` with its
proof, and the check a seat does with a received proof (``ShuffleProof.from_wire``,
``verify_shuffle`` and the output deck's ``decode_ciphertexts``, the proof's elements new to
the process: ``bench_deck.check_costs``); then a token (our decryption share) made and checked.

Every step is timed ``--repeat`` times in CPU seconds of its own process; the script prints the
range of each side and the ratio ours / libTMCG of the best times, with the CPU model and the
load average before and after.

Run: ``python benchmarks/bench_tmcg.py [--repeat N] [--cards 52,54,108]``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_deck import GAME, HAND, check_costs, cpu

from dernier_p2p.deck import group as g
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.elgamal import encrypt
from dernier_p2p.deck.shuffle import generators, shuffle
from dernier_p2p.deck.tokens import make_token, verify_token

DRIVER = Path(__file__).resolve().parent / "tmcg" / "bench_tmcg.cc"
STEPS = ("shuffle", "verify", "token", "token_verify")
LABELS = {
    "shuffle": "shuffle + prove (s)",
    "verify": "check a shuffle (s)",
    "token": "decryption share + proof (ms)",
    "token_verify": "check a share (ms)",
}


def cpu_model() -> str:
    """The CPU's model name, family and model (from /proc/cpuinfo where there is one)."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        return "unknown"
    guest = ", virtual machine" if "hypervisor" in fields.get("flags", "").split() else ""
    return (f"{fields.get('model name', 'unknown')} (family {fields.get('cpu family', '?')}, "
            f"model {fields.get('model', '?')}{guest})")


def load() -> str:
    """The 1-, 5- and 15-minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def build_driver(workdir: Path) -> tuple[Path | None, str]:
    """Compile the driver against the installed libTMCG: (its path, "") or (None, why not)."""
    config = shutil.which("libTMCG-config")
    if config is None:
        return None, "libTMCG is not installed (no libTMCG-config on PATH)"
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        return None, "no C++ compiler (c++, g++ or $CXX)"
    cflags = shlex.split(subprocess.run([config, "--cflags"], capture_output=True,
                                        text=True).stdout)
    libs = shlex.split(subprocess.run([config, "--libs"], capture_output=True,
                                      text=True).stdout)
    rpath = [f"-Wl,-rpath,{flag[2:]}" for flag in libs if flag.startswith("-L")]
    exe = workdir / "bench_tmcg"
    cmd = [cxx, "-O2", "-std=c++11", "-o", str(exe), str(DRIVER), *cflags, *libs, *rpath,
           "-lgcrypt", "-lgpg-error", "-lgmp"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        return None, f"the driver did not compile against libTMCG:\n{done.stderr.strip()}"
    return exe, ""


def run_driver(exe: Path, cards: int, repeat: int, group_file: Path
               ) -> tuple[str, dict[str, list[float]]]:
    """libTMCG's version and its figures for one deck size (seconds; also the group's size and
    the wire size)."""
    done = subprocess.run([str(exe), str(cards), str(repeat), str(group_file)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"libTMCG's driver failed ({cards} cards): {done.stderr.strip()}")
    out: dict[str, list[float]] = {}
    version = "?"
    for line in done.stdout.splitlines():
        key, *values = line.split()
        if key == "version":
            version = " ".join(values)
        else:
            out[key] = [float(v) for v in values]
    return version, out


def ours(cards: int, repeat: int) -> dict[str, list[float]]:
    """Our figures for one deck size (CPU seconds per repeat)."""
    d = Drbg(cards.to_bytes(32, "little"))
    xs = [d.scalar() for _ in range(2)]
    pk = g.base_mul(sum(xs) % g.ORDER)
    faces = [g.hash_to_element(b"bench/card", cards.to_bytes(2, "little") + bytes([k]))
             for k in range(cards)]
    deck = [encrypt(pk, m, d.scalar()) for m in faces]  # masked, as after a first shuffle
    ctx = {"game": GAME, "hand": HAND, "step": "shuffle", "seat": 0}
    generators(cards)  # made once per deck size and kept, as at a table
    out, proof = shuffle(pk, deck, d, ctx)
    wire = proof.to_wire()
    res: dict[str, list[float]] = {k: [] for k in STEPS}
    for _ in range(repeat):
        res["shuffle"].append(cpu(lambda: shuffle(pk, deck, d, ctx)))
        _, checked = check_costs(pk, deck, out, wire, ctx, 1)
        res["verify"].append(checked)
    shares = 20
    for r in range(repeat):
        ct = deck[r % cards]
        x = d.scalar()  # a fresh key share: its element is new to the checker
        share = g.base_mul(x)
        t = time.process_time()
        toks = [make_token(GAME, HAND, 0, x, i, ct, d) for i in range(shares)]
        res["token"].append((time.process_time() - t) / shares)
        t = time.process_time()
        for i, tok in enumerate(toks):
            verify_token(GAME, HAND, share, ct, tok, i)
        res["token_verify"].append((time.process_time() - t) / shares)
    return res


def span(xs: list[float], scale: float) -> str:
    lo, hi = min(xs) * scale, max(xs) * scale
    digits = 4 if hi < 1 else 3
    return f"{lo:.{digits}f}-{hi:.{digits}f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="timings of each step (default 5)")
    ap.add_argument("--cards", default="52,54,108", help="deck sizes (default 52,54,108)")
    args = ap.parse_args()
    try:
        sizes = [int(c) for c in args.cards.split(",")]
    except ValueError:
        ap.error(f"--cards takes sizes separated by commas, not {args.cards!r}")
    if args.repeat < 1 or any(not 2 <= c <= 255 for c in sizes):
        ap.error("--repeat must be at least 1 and each size between 2 and 255")
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; load average {load()}")
    print(f"our group arithmetic: {g.PATH}")
    with tempfile.TemporaryDirectory(prefix="bench_tmcg") as tmp:
        exe, why = build_driver(Path(tmp))
        if exe is None:
            print(f"{why}: skipped")
            return 0
        group_file = Path(tmp) / "group.txt"
        theirs: dict[int, dict[str, list[float]]] = {}
        for c in sizes:
            version, theirs[c] = run_driver(exe, c, args.repeat, group_file)
    first = theirs[sizes[0]]
    print(f"libTMCG {version}: {int(first['field_bits'][0])}-bit field, "
          f"{int(first['subgroup_bits'][0])}-bit subgroup; Groth's non-interactive proof")
    print(f"CPU time, {args.repeat} timings each (range); ratio = ours / libTMCG, best of each")
    print(f"{'cards':>5} {'step':<30} {'ours':>17} {'libTMCG':>17} {'ratio':>6}")
    for c in sizes:
        mine = ours(c, args.repeat)
        for step in STEPS:
            scale = 1e3 if step.startswith("token") else 1.0
            ratio = min(mine[step]) / min(theirs[c][step])
            print(f"{c:>5} {LABELS[step]:<30} {span(mine[step], scale):>17} "
                  f"{span(theirs[c][step], scale):>17} {ratio:>6.3f}")
        print(f"{c:>5} libTMCG's shuffled deck and proof on the wire: "
              f"{int(theirs[c]['wire_bytes'][0])} bytes")
    print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
