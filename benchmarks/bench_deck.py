"""Deck benchmark: CPU cost of the mental-poker operations and of a whole hand set-up.

For n in {2, 4, 6, 10} seats and decks of 54 and 108 cards it prints: key setup, one shuffle
with its proof, verifying one shuffle proof, dealing a card (one seat's token with proof, and
checking one), opening a card; the CPU seconds per seat of a whole hand set-up (all n proven
shuffles, each verified by every other seat, plus dealing the hands); and the ratio of that time
to the group operations it needs times their cost measured in the same run (the overhead above
the cryptographic floor). Group operations are counted in a separate, untimed pass.

With the compiled group arithmetic it prints what the compiled decoder's full check of one
element costs, with its subgroup test by halving and by ``l*P = O``. It also prints, in units of
one variable-base multiplication through PyNaCl measured in the same
run (``mul``), the cost of checking a shuffle (``ShuffleProof.from_wire`` and ``verify_shuffle``
of a proof whose elements this process has not seen: the checked-element cache holds only the
input deck, as at a real table; then with the output deck's decoding too) and of making one.
Its first line names the group arithmetic that runs (``DERNIER_PURE_GROUP=1``: PyNaCl alone).
Every seat's table keeps its own cache of checked elements and fixed-base tables, as a seat in
its own process does.

Run: ``python benchmarks/bench_deck.py [--quick] [--repeat N]``. CPU time is
``time.process_time``.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable

from dernier_p2p.deck import edwards
from dernier_p2p.deck import group as g
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.elgamal import decode_ciphertexts
from dernier_p2p.deck.keys import KeySecret, KeySetup
from dernier_p2p.deck.shuffle import ShuffleProof, generators, shuffle, verify_shuffle
from dernier_p2p.deck.table import DeckTable, apply_all, start_all
from dernier_p2p.deck.tokens import make_token, verify_token

DECKS = {54: "dernier-54", 108: "originale-108"}
SEATS = (2, 4, 6, 10)
COUNTED = ("mul", "base_mul", "add", "sub", "decode", "hash_to_element", "decode_scalar")

GAME, HAND = b"bench-game", 1


def cpu(fn: Callable[[], object], repeat: int = 1) -> float:
    """CPU seconds per call of ``fn`` (best of ``repeat`` runs)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


class counting:
    """Count calls to the group primitives while the block runs (wrappers, no timing)."""

    def __enter__(self) -> Counter:
        self.counts: Counter = Counter()
        self.saved = {name: getattr(g, name) for name in COUNTED}
        for name, fn in self.saved.items():
            setattr(g, name, self._wrap(name, fn))
        return self.counts

    def _wrap(self, name: str, fn: Callable) -> Callable:
        counts = self.counts

        def wrapped(*args: object) -> object:
            counts[name] += 1
            return fn(*args)

        return wrapped

    def __exit__(self, *exc: object) -> None:
        for name, fn in self.saved.items():
            setattr(g, name, fn)


def op_costs(reps: int = 2000) -> dict[str, float]:
    """CPU seconds per group primitive, measured now."""
    d = Drbg(b"costs" * 8)
    ks = [d.scalar() for _ in range(reps)]
    ps = [g.base_mul(k) for k in ks]
    enc = [g.encode_scalar(k) for k in ks]
    costs = {}

    def per(fn: Callable[[int], object]) -> float:
        t = time.process_time()
        for i in range(reps):
            fn(i)
        return (time.process_time() - t) / reps

    costs["mul"] = per(lambda i: g.mul(ks[i], ps[i - 1]))
    costs["base_mul"] = per(lambda i: g.base_mul(ks[i]))
    costs["add"] = per(lambda i: g.add(ps[i], ps[i - 1]))
    costs["sub"] = per(lambda i: g.sub(ps[i], ps[i - 1]))
    costs["decode"] = per(lambda i: g.decode(ps[i]))
    costs["hash_to_element"] = per(lambda i: g.hash_to_element(b"bench", enc[i]))
    costs["decode_scalar"] = per(lambda i: g.decode_scalar(enc[i]))
    return costs


def own_cache(t: DeckTable) -> DeckTable:
    """Give the table its own cache of checked elements and fixed-base tables, as a seat in its
    own process has."""
    mine: dict[str, dict] = {"_cache": {}, "_tables": {}, "_uses": {}}
    for name in ("start", "apply", "receive"):
        fn = getattr(t, name)

        def wrapped(*args: object, fn: Callable = fn) -> object:
            saved = {k: getattr(edwards, k) for k in mine}
            for k, v in mine.items():
                setattr(edwards, k, v)
            try:
                return fn(*args)
            finally:
                for k, v in saved.items():
                    setattr(edwards, k, v)

        setattr(t, name, wrapped)
    return t


def tables(n: int, deck: str) -> list[DeckTable]:
    return [own_cache(DeckTable(GAME, HAND, n, deck, s, Drbg(bytes([s + 1]) * 32)))
            for s in range(n)]


def check_costs(pk: bytes, pile: list, out: list, wire: dict, ctx: dict, repeat: int
                ) -> tuple[float, float]:
    """CPU seconds (best of ``repeat``) to check a shuffle whose elements are new to this
    process (the input deck already checked): the proof alone, and with the output deck."""
    size = len(pile)
    out_wire = [list(ct) for ct in out]
    best_proof = best_all = float("inf")
    for _ in range(repeat):
        for with_deck in (False, True):
            edwards.clear_cache()  # what a process has checked before: the deck, key, generators
            h, hs, neg_h_sum = generators(size)
            known = [x for ct in pile for x in ct if x != g.IDENTITY]
            g.decode_many([*known, pk, g.GENERATOR, h, *hs, neg_h_sum])
            t = time.process_time()
            deck_out = decode_ciphertexts(out_wire, 0) if with_deck else out
            verify_shuffle(pk, pile, deck_out, ShuffleProof.from_wire(wire, size), ctx, 0)
            took = time.process_time() - t
            if with_deck:
                best_all = min(best_all, took)
            else:
                best_proof = min(best_proof, took)
    return best_proof, best_all


def element_check_costs(count: int = 1000, repeat: int = 3) -> tuple[float, float]:
    """CPU seconds per element (best of ``repeat``) of the compiled decoder's full check of
    ``count`` elements in one batch: with its subgroup test by halving, and by ``l*P = O``."""
    assert edwards._ext is not None
    d = Drbg(b"elements" * 4)
    blob = b"".join(g.base_mul(d.scalar()) for _ in range(count))
    ext = edwards._ext
    halving = cpu(lambda: ext.decode(blob), repeat) / count
    by_order = cpu(lambda: ext.decode(blob, True), repeat) / count
    return halving, by_order


def hand_setup(n: int, deck: str, size: int) -> list[DeckTable]:
    """Key setup, n proven shuffles each verified by every other seat, and the deal."""
    ts = tables(n, deck)
    start_all(ts)
    per_seat = min(7, (size - 1) // n)
    for r in range(per_seat):
        for s in range(n):
            apply_all(ts, {"op": "deal", "position": r * n + s, "to": s})
    return ts


def deal_and_open(ts: list[DeckTable], size: int, cards: int = 5) -> tuple[float, float]:
    """CPU seconds per seat to deal one more card, then to open one (averaged)."""
    n = len(ts)
    free = [p for p, s in enumerate(ts[0].slots) if s.holder is None and not s.opened]
    dealt = free[:cards]
    t = time.process_time()
    for i, p in enumerate(dealt):
        apply_all(ts, {"op": "deal", "position": p, "to": i % n})
    t_deal = (time.process_time() - t) / len(dealt) / n
    t = time.process_time()
    for p in dealt:
        apply_all(ts, {"op": "open", "position": p})
    t_open = (time.process_time() - t) / len(dealt) / n
    return t_deal, t_open


def key_setup_per_seat(n: int) -> float:
    """CPU seconds per seat: own share, commitment, reveal with proof, checking the others."""

    def run() -> None:
        secrets = [KeySecret.generate(GAME, HAND, s, Drbg(bytes([s]) * 32)) for s in range(n)]
        commits = [k.commitment() for k in secrets]
        reveals = [k.reveal(Drbg(b"r" * 32)) for k in secrets]
        for _ in range(n):  # every seat checks every reveal
            setup = KeySetup(GAME, HAND, n)
            for s in range(n):
                setup.add_commitment(s, commits[s])
            for r in reveals:
                setup.add_reveal(r)
            setup.joint_key()

    return cpu(run, 3) / n


def main() -> None:
    quick = "--quick" in sys.argv
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 3
    print(f"group arithmetic: {g.PATH}")
    costs = op_costs(500 if quick else 3000)
    print("group primitives (CPU microseconds):",
          ", ".join(f"{k} {v * 1e6:.1f}" for k, v in costs.items()))
    if edwards.AVAILABLE:
        halving, by_order = element_check_costs(repeat=repeat)
        print(f"compiled element check (CPU microseconds per element, 1000 in a batch): subgroup "
              f"by halving {halving * 1e6:.1f}, by l*P {by_order * 1e6:.1f}")
    print()
    ctx = {"game": GAME, "hand": HAND, "step": "shuffle", "seat": 0}
    d = Drbg(b"bench" * 8)
    xs = [d.scalar() for _ in range(4)]
    Y = g.base_mul(sum(xs))
    print("per operation (CPU); libTMCG side by side in one run: benchmarks/bench_tmcg.py")
    print(f"{'cards':>5} {'shuffle+prove s':>16} {'verify s':>9} {'token+proof ms':>15} "
          f"{'verify token ms':>16}")
    units: dict[int, tuple[float, float, float]] = {}
    for size, deck in DECKS.items():
        ts = tables(2, deck)
        start_all(ts)
        deck_in = ts[0].slots[:size]
        pile = [s.ct for s in deck_in]
        out, proof = shuffle(Y, pile, d, ctx)
        wire = proof.to_wire()
        t_shuffle = cpu(lambda pile=pile: shuffle(Y, pile, d, ctx), repeat)
        t_verify, t_check_all = check_costs(Y, pile, out, wire, ctx, repeat)
        units[size] = (t_check_all / costs["mul"], t_verify / costs["mul"],
                       t_shuffle / costs["mul"])
        ct = pile[0]
        reps = 200
        t_tok = cpu(lambda ct=ct, reps=reps: [make_token(GAME, HAND, 0, xs[0], 0, ct, d)
                                              for _ in range(reps)], 3) / reps
        t_vtok = float("inf")
        for _ in range(3):  # a fresh key share and fresh tokens (each element new to the checker)
            x = d.scalar()
            share = g.base_mul(x)
            toks = [make_token(GAME, HAND, 0, x, i, pile[i % size], d) for i in range(reps)]
            t = time.process_time()
            for i, tok in enumerate(toks):
                verify_token(GAME, HAND, share, pile[i % size], tok, i)
            t_vtok = min(t_vtok, (time.process_time() - t) / reps)
        print(f"{size:>5} {t_shuffle:>16.3f} {t_verify:>9.3f} {t_tok * 1e3:>15.3f} "
              f"{t_vtok * 1e3:>16.3f}")
    print()
    print(f"in units of one variable-base multiplication (mul, {costs['mul'] * 1e6:.1f} us):")
    for size, (u_all, u_proof, u_make) in units.items():
        print(f"  {size:>3} cards: check a shuffle {u_proof:.0f} (with the output deck's decoding"
              f" {u_all:.0f}), make one {u_make:.0f}")
    print("  goals, 54 cards: check <= 120, make <= 150")
    print()
    print("per seat, CPU seconds (the work of all n seats divided by n); deal a card: n-1 tokens"
          " made, each checked by the others; open: the holder's token, checked by the others;"
          " hand set-up: keys, n proven shuffles each verified by every other seat, the deal;"
          " floor: the group operations of the set-up times their measured cost")
    print(f"{'n':>3} {'cards':>5} {'key setup':>10} {'deal card':>10} {'open card':>10} "
          f"{'hand set-up':>12} {'floor':>8} {'overhead':>9}")
    seats = (2, 4) if quick else SEATS
    for n in seats:
        for size, deck in DECKS.items():
            t_keys = key_setup_per_seat(n)
            t = time.process_time()
            ts = hand_setup(n, deck, size)
            t_hand = (time.process_time() - t) / n
            t_deal, t_open = deal_and_open(ts, size)
            with counting() as counts:
                hand_setup(n, deck, size)
            floor = sum(counts[k] * costs[k] for k in COUNTED) / n
            print(f"{n:>3} {size:>5} {t_keys:>10.4f} {t_deal:>10.4f} {t_open:>10.4f} "
                  f"{t_hand:>12.3f} {floor:>8.3f} {t_hand / floor:>9.2f}")
    print()
    print("goals: 4 seats/54 cards hand set-up <= 0.5 s per seat; 10 seats/108 cards <= 0.4 s "
          "(compiled group arithmetic); overhead <= 1.3 (PyNaCl alone: the floor counts PyNaCl's "
          "operations, not the compiled batch checks)")


if __name__ == "__main__":
    main()
