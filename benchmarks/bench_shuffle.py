"""Time the proven shuffle against the cost of its group operations.

Run: ``python benchmarks/bench_shuffle.py [repeats]``. For each deck size it prints the best time
of shuffle+prove, of verify_shuffle, and of ShuffleProof.from_wire + verify_shuffle (what a peer
does with a received proof), each also as a ratio to its "floor": the group operations it performs
(``shuffle_op_count``) times the per-operation cost measured in the same run. libTMCG's shuffle,
side by side with ours in one run: ``benchmarks/bench_tmcg.py``.
"""

from __future__ import annotations

import sys
import time
import timeit

from dernier_p2p.deck import group as g
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.elgamal import encrypt
from dernier_p2p.deck.shuffle import (
    ShuffleProof,
    generators,
    shuffle,
    shuffle_op_count,
    verify_shuffle,
)
from dernier_p2p.wire import canonical

CTX = {"game": b"\x01" * 16, "hand": 1, "step": "shuffle", "seat": 0}


def op_costs(number: int = 2000, repeat: int = 5) -> dict[str, float]:
    """Seconds per group operation, best of ``repeat`` runs of ``number`` calls."""
    p = g.base_mul(0x5EED)
    k = g.ORDER - 0xC0FFEE

    def best(fn) -> float:
        return min(timeit.repeat(fn, number=number, repeat=repeat)) / number

    return {
        "mul": best(lambda: g.mul(k, p)),
        "base_mul": best(lambda: g.base_mul(k)),
        "add": best(lambda: g.add(p, p)),
        "decode": best(lambda: g.decode(p)),
    }


def best_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench_size(n: int, costs: dict[str, float], repeat: int, first: bool = False) -> None:
    """Print the rows for one deck size (``first``: the unmasked deck, every c1 the identity)."""
    d = Drbg(n.to_bytes(32, "little"))
    pk = g.base_mul(d.scalar())
    cards = [g.hash_to_element(b"bench/card", bytes([k])) for k in range(n)]
    deck = [(g.IDENTITY, m) if first else encrypt(pk, m, d.scalar()) for m in cards]
    generators(n)  # computed once per deck size and cached, as in a game
    out, proof = shuffle(pk, deck, Drbg(b"\x02" * 32), CTX)
    wire = canonical.encode(proof.to_wire())
    ops = shuffle_op_count(n)
    floor = {
        step: ops[f"{step}_base_mul"] * costs["base_mul"]
        + ops[f"{step}_mul"] * costs["mul"]
        + ops[f"{step}_add"] * costs["add"]
        for step in ("shuffle", "verify")
    }

    def receive() -> None:
        verify_shuffle(pk, deck, out, ShuffleProof.from_wire(canonical.decode(wire), n), CTX)

    t_prove = best_time(lambda: shuffle(pk, deck, Drbg(b"\x02" * 32), CTX), repeat)
    t_verify = best_time(lambda: verify_shuffle(pk, deck, out, proof, CTX), repeat)
    t_receive = best_time(receive, repeat)
    floor_receive = floor["verify"] + (3 * n + 5) * costs["decode"]
    label = f"{n}{'*' if first else ''}"
    rows = [
        ("shuffle+prove", t_prove, floor["shuffle"]),
        ("verify", t_verify, floor["verify"]),
        ("decode+verify", t_receive, floor_receive),
    ]
    for name, t, fl in rows:
        print(f"{label:>4} {name:<16} {t:>8.4f} {fl:>8.4f} {t / fl:>7.3f}")
    if not first:
        print(f"{label:>4} proof size {len(wire)} bytes; ops {ops}")


def main(repeat: int = 5) -> None:
    costs = op_costs()
    print("per-op cost (us): " + ", ".join(f"{k} {v * 1e6:.1f}" for k, v in costs.items()))
    print(f"{'n':>4} {'step':<16} {'seconds':>8} {'floor s':>8} {'/floor':>7}")
    for n in (52, 54, 108):
        bench_size(n, costs, repeat)
    print("52* = the first shuffle of a hand (input c1 all the identity); floor counts those ops")
    print("libTMCG side by side in one run: benchmarks/bench_tmcg.py")
    bench_size(52, costs, repeat, first=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
