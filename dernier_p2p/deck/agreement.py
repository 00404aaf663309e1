"""Random cases on which the compiled group arithmetic (:mod:`dernier_p2p.deck.edwards`) and
libsodium (through PyNaCl) must agree, and a small independent reference in Python integers.

Kinds of case: decoding (random elements, elements plus a torsion point, mutated encodings,
random bytes, the edge cases of :func:`edge_encodings`), addition, scalar multiplication
(scalars of any size, reduced as ``group.mul`` reduces them), encoding, and multi-scalar
multiplication by Straus, by Pippenger and from fixed-base tables against libsodium's sum of
products.

``python -m dernier_p2p.deck.agreement --ops 1000000 [--seed K]`` runs that many cases and
prints how many of each kind agreed; exit status 1 on any disagreement (each one is printed).

``--subgroup`` runs instead the cases of the subgroup test alone: the compiled decoder's test by
halving, its test by ``l*P = O`` and ``crypto_core_ed25519_is_valid_point`` must decide alike on
random elements, random elements plus each of the seven torsion points other than the identity,
the torsion points alone, the identity and the non-canonical encodings (:data:`SUBGROUP_KINDS`).
:func:`ref_halvable3` is the test by halving in Python integers, its constants derived here.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from functools import lru_cache

from nacl import bindings as na

from dernier_p2p.deck import edwards
from dernier_p2p.deck import group as g

P = 2**255 - 19
D = -121665 * pow(121666, -1, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)
L = g.ORDER

Affine = tuple[int, int]


def ref_add(a: Affine, b: Affine) -> Affine:
    """The Edwards addition law for -x^2 + y^2 = 1 + d x^2 y^2 (RFC 8032, 5.1.4), affine."""
    (x1, y1), (x2, y2) = a, b
    t = D * x1 * x2 * y1 * y2 % P
    x3 = (x1 * y2 + x2 * y1) * pow(1 + t, -1, P) % P
    y3 = (y1 * y2 + x1 * x2) * pow(1 - t, -1, P) % P
    return x3, y3


def ref_mul(k: int, a: Affine) -> Affine:
    """k * a by double-and-add (k >= 0)."""
    acc: Affine = (0, 1)
    while k:
        if k & 1:
            acc = ref_add(acc, a)
        a = ref_add(a, a)
        k >>= 1
    return acc


def ref_decompress(s: bytes) -> Affine | None:
    """RFC 8032, 5.1.3 (None for a refused string: y >= p, no square root, x = 0 with the sign
    bit set)."""
    v = int.from_bytes(s, "little")
    sign, y = v >> 255, v & ((1 << 255) - 1)
    if y >= P:
        return None
    u, w = (y * y - 1) % P, (D * y * y + 1) % P
    x = u * pow(w, 3, P) * pow(u * pow(w, 7, P), (P - 5) // 8, P) % P
    if w * x * x % P != u:
        if w * x * x % P != (-u) % P:
            return None
        x = x * SQRT_M1 % P
    if x == 0 and sign:
        return None
    if x & 1 != sign:
        x = P - x
    return x, y


def ref_compress(a: Affine) -> bytes:
    """The encoding of an affine point."""
    x, y = a
    return (y | (x & 1) << 255).to_bytes(32, "little")


MONT_A = 486662
"""The Montgomery form of the curve: v^2 = u^3 + A u^2 + u, u = (1 + y)/(1 - y), v = C0 u / x."""


def ref_sqrt(a: int) -> int | None:
    """A square root of ``a`` mod p, or None when ``a`` is not a square."""
    a %= P
    r = pow(a, (P + 3) // 8, P)
    if r * r % P != a:
        r = r * SQRT_M1 % P
    return r if r * r % P == a else None


@lru_cache(maxsize=1)
def halving_constants() -> tuple[int, int, int, int]:
    """``(C0, XS, YS, LAMS)`` of the test by halving (dernier_p2p/deck/_edwards.c, ge_halvable3):
    ``C0^2 = -(A + 2)``; on the 2-isogenous curve ``Y^2 = X (X - (A + 2)) (X - (A - 2))``,
    ``S = (XS, YS)`` of order 4 with ``2S = (A + 2, 0)`` and LAMS the slope of its tangent."""
    a = MONT_A
    c0 = ref_sqrt(-(a + 2))
    xs = (a + 2 + ref_sqrt((a + 2) * 4)) % P  # X_S - e = +-sqrt((e - e') (e - e''))
    ys = ref_sqrt(xs * (xs - a - 2) * (xs - a + 2))
    assert c0 is not None and ys is not None
    lams = (3 * xs * xs - 4 * a * xs + a * a - 4) * pow(2 * ys, -1, P) % P
    return c0, xs, ys, lams


def tate4_of_kernel() -> int:
    """``t4(S, T') = f_S(T')^((p-1)/4)`` at ``T' = (0, 0)``, the kernel of the dual isogeny:
    1 is what makes the test by halving decide membership exactly."""
    _c0, xs, ys, lams = halving_constants()
    line = (-ys + lams * xs) % P  # the tangent at S, at (0, 0)
    return pow(line * line * pow(-(MONT_A + 2), 3, P) % P, (P - 1) // 4, P)


def ref_halvable3(a: Affine) -> bool:
    """The test by halving of ``_edwards.c`` in Python integers, for a point with x != 0: u a
    square (a preimage R on the isogenous curve exists: P in 2E), then the quartic residue
    symbol of ``f_S(R)`` is 1 (R in 4E' + {O, T'}: P in 8E)."""
    x, y = a
    c0, xs, ys, lams = halving_constants()
    s = ref_sqrt((1 + y) * pow(1 - y, -1, P))
    if s is None:
        return False
    n = (MONT_A * x + 2 * s * s * x + 2 * c0 * s) % P  # x * X_R
    line = (2 * s * n - ys * x - lams * (n - xs * x)) % P  # x * l_S(R)
    den = x * (n - (MONT_A + 2) * x) % P  # x^2 * (X_R - (A + 2))
    z = line * line * pow(den, 3, P) % P
    return z != 0 and pow(z, (P - 1) // 4, P) == 1


def ref_valid(s: bytes) -> bool:
    """The reference decision: decodes, not the identity, in the prime-order subgroup."""
    a = ref_decompress(s)
    return a is not None and a != (0, 1) and ref_mul(L, a) == (0, 1)


@lru_cache(maxsize=1)
def torsion_points() -> tuple[bytes, ...]:
    """The 8 points of the torsion subgroup E[8] (encodings; the first is the identity)."""
    y = 2
    while True:
        a = ref_decompress(y.to_bytes(32, "little"))
        if a is not None:
            t = ref_mul(L, a)
            if ref_mul(4, t) != (0, 1):  # of order 8
                break
        y += 1
    out, acc = [], (0, 1)
    for _ in range(8):
        out.append(ref_compress(acc))
        acc = ref_add(acc, t)
    return tuple(out)


@lru_cache(maxsize=1)
def edge_encodings() -> tuple[bytes, ...]:
    """Encodings that sit on the edges: every non-canonical y (p <= y < 2^255, both sign
    bits), x = 0 with the sign bit set, the identity, the torsion points (canonical and, where
    y + p < 2^255, non-canonical), values just below p, zero and all ones."""
    out = []
    for y in range(P, 2**255):
        for sign in (0, 1):
            out.append((y | sign << 255).to_bytes(32, "little"))
    for y in (1, P - 1):  # x = 0: the identity and the point of order 2
        out.append((y | 1 << 255).to_bytes(32, "little"))
    for t in torsion_points():
        out.append(t)
        v = int.from_bytes(t, "little")
        y, sign = v & ((1 << 255) - 1), v >> 255
        if y + P < 2**255:
            out.append((y + P | sign << 255).to_bytes(32, "little"))
    for y in range(P - 40, P):
        for sign in (0, 1):
            out.append((y | sign << 255).to_bytes(32, "little"))
    out += [bytes(32), b"\xff" * 32, b"\x01" + bytes(31), g.GENERATOR]
    return tuple(out)


def _ours_valid(s: bytes) -> bool:
    assert edwards._ext is not None
    return edwards._ext.decode(s)[0] == -1


def _random_element(rng: random.Random) -> bytes:
    return g.base_mul(rng.randrange(1, L))


def _sum_libsodium(scalars: list[int], points: list[bytes]) -> bytes:
    return g.multi_mul(scalars, points)


class Mismatch(AssertionError):
    """The compiled arithmetic and libsodium disagree."""


def _case(kind: str, rng: random.Random) -> None:  # noqa: C901 (one branch per kind)
    """Run one case of ``kind``; raise :class:`Mismatch` on a disagreement."""
    if kind == "decode-valid":
        s = _random_element(rng)
        mine, theirs = _ours_valid(s), na.crypto_core_ed25519_is_valid_point(s)
    elif kind == "decode-torsion":
        s = _random_element(rng)
        t = rng.choice(torsion_points())
        shifted = ref_compress(ref_add(ref_decompress(s), ref_decompress(t)))
        mine, theirs = _ours_valid(shifted), na.crypto_core_ed25519_is_valid_point(shifted)
        s = shifted
    elif kind == "decode-mutated":
        b = bytearray(rng.choice((_random_element(rng), rng.choice(edge_encodings()))))
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(32)
            if rng.random() < 0.7:
                b[at] ^= 1 << rng.randrange(8)
            else:
                b[at] = rng.choice((0x00, 0x7F, 0x80, 0xEC, 0xED, 0xEE, 0xFF, rng.randrange(256)))
        s = bytes(b)
        mine, theirs = _ours_valid(s), na.crypto_core_ed25519_is_valid_point(s)
    elif kind == "decode-random":
        s = rng.randbytes(32)
        mine, theirs = _ours_valid(s), na.crypto_core_ed25519_is_valid_point(s)
    elif kind == "decode-edge":
        s = rng.choice(edge_encodings())
        mine, theirs = _ours_valid(s), na.crypto_core_ed25519_is_valid_point(s)
    elif kind == "add":
        a, b = _random_element(rng), rng.choice((_random_element(rng), g.IDENTITY))
        if rng.random() < 0.05:
            b = a
        s = a + b
        mine, theirs = edwards.msm([1, 1], [a, b]), na.crypto_core_ed25519_add(a, b)
    elif kind == "scalar-mult":
        a = _random_element(rng)
        k = rng.choice((rng.getrandbits(256), rng.randrange(L), L + rng.randrange(64),
                        rng.randrange(64), L - 1 - rng.randrange(64), -rng.randrange(L)))
        s = a + (k % 2**256).to_bytes(32, "little")
        mine, theirs = edwards.msm([k], [a]), g.mul(k, a)
    elif kind == "encode":
        k = rng.randrange(L)
        s = k.to_bytes(32, "little")
        mine, theirs = edwards.msm([k], [g.GENERATOR]), g.base_mul(k)
    elif kind == "fixed-base":
        a = rng.choice((g.GENERATOR, _random_element(rng)))
        b = rng.choice((_random_element(rng), a))
        scalars = [rng.choice((rng.randrange(L), rng.getrandbits(256), L - 1, 1)),
                   rng.choice((rng.randrange(L), -rng.randrange(L), 0))]
        s = a + b
        mine, theirs = edwards.msm(scalars, [a, b], 3), _sum_libsodium(scalars, [a, b])
    else:  # msm-straus, msm-pippenger
        n = rng.choice((2, 3, 5, 8)) if rng.random() < 0.9 else rng.randrange(9, 260)
        points = [_random_element(rng) for _ in range(n)]
        if rng.random() < 0.3:
            points[rng.randrange(n)] = g.IDENTITY
        if rng.random() < 0.3:
            points[rng.randrange(n)] = points[0]
        scalars = [rng.choice((rng.randrange(L), rng.getrandbits(128), 0, 1, L - 1))
                   for _ in range(n)]
        algo = 1 if kind == "msm-straus" else 2
        s = b"".join(points)
        mine, theirs = edwards.msm(scalars, points, algo), _sum_libsodium(scalars, points)
    if mine != theirs:
        raise Mismatch(f"{kind}: input {s.hex()}: compiled {mine!r}, libsodium {theirs!r}")


KINDS = ("decode-valid", "decode-torsion", "decode-mutated", "decode-random", "decode-edge",
         "add", "scalar-mult", "encode", "msm-straus", "msm-pippenger", "fixed-base")
WEIGHTS = (20, 6, 20, 10, 10, 10, 10, 4, 5, 5, 4)


def agree(ops: int, seed: int = 0, on_mismatch: Callable[[str], None] | None = None) -> Counter:
    """Run ``ops`` random cases; return how many of each kind agreed (``"mismatch"``: how many
    did not; each is passed to ``on_mismatch``, or raised when it is None)."""
    if not edwards.AVAILABLE:
        raise RuntimeError(f"the compiled group arithmetic does not run: {edwards.PATH}")
    rng = random.Random(seed)
    counts: Counter = Counter()
    kinds = rng.choices(KINDS, WEIGHTS, k=ops)
    kinds[: len(KINDS)] = KINDS[:ops]  # every kind at least once
    for kind in kinds:
        try:
            _case(kind, rng)
        except Mismatch as exc:
            if on_mismatch is None:
                raise
            on_mismatch(str(exc))
            counts["mismatch"] += 1
            continue
        counts[kind] += 1
    return counts


SUBGROUP_KINDS = ("element", *(f"element+torsion{k}" for k in range(1, 8)), "torsion-alone",
                  "identity", "non-canonical")
SUBGROUP_WEIGHTS = (30, *(8,) * 7, 6, 2, 6)
IDENTITY_ENC = b"\x01" + bytes(31)


@lru_cache(maxsize=1)
def _torsion_affine() -> tuple[Affine, ...]:
    return tuple(ref_decompress(t) for t in torsion_points())  # type: ignore[misc]


@lru_cache(maxsize=1)
def non_canonical_encodings() -> tuple[bytes, ...]:
    """The edge encodings that libsodium refuses as non-canonical or as ``x = 0`` with the sign
    bit: ``y >= p``, and the sign bit on a point with x = 0."""
    out = []
    for s in edge_encodings():
        v = int.from_bytes(s, "little")
        y, sign = v & ((1 << 255) - 1), v >> 255
        if y >= P or (sign and y in (1, P - 1)):
            out.append(s)
    return tuple(out)


def _subgroup_case(kind: str, rng: random.Random) -> tuple[bytes, bool]:
    """One case of the subgroup test: its encoding and the common verdict; raise
    :class:`Mismatch` when halving, ``l*P`` and libsodium do not all agree."""
    assert edwards._ext is not None
    if kind == "element":
        s = _random_element(rng)
    elif kind.startswith("element+torsion"):
        t = _torsion_affine()[int(kind[-1])]
        s = ref_compress(ref_add(ref_decompress(_random_element(rng)), t))  # type: ignore[arg-type]
    elif kind == "torsion-alone":
        t = rng.choice(torsion_points())
        v = int.from_bytes(t, "little")
        y = v & ((1 << 255) - 1)
        if y + P < 2**255 and rng.random() < 0.5:  # the same point, y + p: not canonical
            t = (v + P).to_bytes(32, "little")
        s = t
    elif kind == "identity":
        s = rng.choice((IDENTITY_ENC, (1 | 1 << 255).to_bytes(32, "little"),
                        (1 + P).to_bytes(32, "little")))
    else:  # non-canonical
        s = rng.choice(non_canonical_encodings())
    halving = edwards._ext.decode(s)[0] == -1
    by_order = edwards._ext.decode(s, True)[0] == -1
    theirs = bool(na.crypto_core_ed25519_is_valid_point(s))
    if not halving == by_order == theirs:
        raise Mismatch(f"{kind}: {s.hex()}: halving {halving}, l*P {by_order}, "
                       f"libsodium {theirs}")
    return s, theirs


def subgroup_agree(ops: int, seed: int = 0, on_mismatch: Callable[[str], None] | None = None
                   ) -> tuple[Counter, Counter]:
    """Run ``ops`` cases of the subgroup test; return how many of each kind agreed and how many
    of those were accepted (``"mismatch"``: how many did not agree)."""
    if not edwards.AVAILABLE:
        raise RuntimeError(f"the compiled group arithmetic does not run: {edwards.PATH}")
    rng = random.Random(seed)
    counts: Counter = Counter()
    accepted: Counter = Counter()
    kinds = rng.choices(SUBGROUP_KINDS, SUBGROUP_WEIGHTS, k=ops)
    kinds[: len(SUBGROUP_KINDS)] = SUBGROUP_KINDS[:ops]
    for kind in kinds:
        try:
            _s, valid = _subgroup_case(kind, rng)
        except Mismatch as exc:
            if on_mismatch is None:
                raise
            on_mismatch(str(exc))
            counts["mismatch"] += 1
            continue
        counts[kind] += 1
        accepted[kind] += valid
    return counts, accepted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dernier_p2p.deck.agreement",
                                     description=__doc__)
    parser.add_argument("--ops", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--subgroup", action="store_true",
                        help="the subgroup test alone: halving, l*P and libsodium")
    args = parser.parse_args(argv)
    if not edwards.AVAILABLE:
        print(f"the compiled group arithmetic does not run: {edwards.PATH}", file=sys.stderr)
        return 2
    start = time.process_time()
    if args.subgroup:
        counts, accepted = subgroup_agree(args.ops, args.seed, on_mismatch=print)
        took = time.process_time() - start
        print(f"{args.ops} subgroup cases (seed {args.seed}) in {took:.0f} s CPU (kind: agreed, "
              "of which elements):",
              ", ".join(f"{k} {counts[k]} ({accepted[k]})" for k in SUBGROUP_KINDS),
              f"; mismatches {counts['mismatch']}")
        return 1 if counts["mismatch"] else 0
    counts = agree(args.ops, args.seed, on_mismatch=print)
    took = time.process_time() - start
    print(f"{args.ops} cases (seed {args.seed}) in {took:.0f} s CPU:",
          ", ".join(f"{k} {counts[k]}" for k in KINDS), f"; mismatches {counts['mismatch']}")
    return 1 if counts["mismatch"] else 0


if __name__ == "__main__":
    sys.exit(main())
