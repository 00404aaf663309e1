"""The ``group`` fuzz target: the deck's element decoder against libsodium's decision.

A case is a byte string near an encoding: a random element, an element plus a torsion point, an
edge case (non-canonical y, x = 0 with the sign bit, the identity, small-order points, values
near p), mutated by bit flips, byte changes and the generic byte mutations (which may change
its length). The run decodes it with ``group.decode`` (the compiled decoder when it runs, with
its cache), with the compiled decoder directly (its subgroup test by halving, and by ``l*P = O``)
and in a batch between two good elements, and compares each verdict with
``crypto_core_ed25519_is_valid_point``: any disagreement, or any
other exception than the decoder's refusal, is a crash.
"""

from __future__ import annotations

import random

from nacl import bindings as na

from dernier_p2p.deck import agreement, edwards
from dernier_p2p.deck import group as g
from dernier_p2p.fuzz.mutate import mutate_bytes


class DecoderMismatch(Exception):
    """The decoder and libsodium decide differently about one string."""


def make(rng: random.Random) -> bytes:
    """One case: a seed encoding, mutated (or not)."""
    pick = rng.random()
    if pick < 0.35:
        s = g.base_mul(rng.randrange(1, g.ORDER))
    elif pick < 0.55:
        p = agreement.ref_decompress(g.base_mul(rng.randrange(1, g.ORDER)))
        t = agreement.ref_decompress(rng.choice(agreement.torsion_points()))
        s = agreement.ref_compress(agreement.ref_add(p, t))
    else:
        s = rng.choice(agreement.edge_encodings())
    b = bytearray(s)
    how = rng.random()
    if how < 0.4:
        for _ in range(rng.randrange(1, 4)):
            b[rng.randrange(32)] ^= 1 << rng.randrange(8)
    elif how < 0.6:
        b[rng.choice((0, 1, 30, 31, rng.randrange(32)))] = rng.choice(
            (0x00, 0x01, 0x7F, 0x80, 0xEC, 0xED, 0xEE, 0xFF))
    elif how < 0.75:
        return mutate_bytes(bytes(b), rng)
    return bytes(b)


def run(data: bytes) -> None:
    """Decode ``data`` every way; raise :class:`DecoderMismatch` where a verdict differs."""
    theirs = len(data) == 32 and bool(na.crypto_core_ed25519_is_valid_point(data))
    try:
        mine = g.decode(data) == data
    except g.InvalidElement:
        mine = False
    if mine != theirs:
        raise DecoderMismatch(f"group.decode says {mine}, libsodium {theirs}: {data.hex()}")
    if edwards.AVAILABLE and len(data) == 32:
        direct = edwards._ext.decode(data)[0] == -1
        by_order = edwards._ext.decode(data, True)[0] == -1
        good = g.GENERATOR
        batch = edwards._ext.decode(good + data + good)[0]
        if (direct != theirs or by_order != theirs or (batch == -1) != theirs
                or batch not in (-1, 1)):
            raise DecoderMismatch(
                f"compiled decoder says {direct} (batch {batch}, by l*P {by_order}), "
                f"libsodium {theirs}: {data.hex()}")
    try:
        many = g.decode_many([g.GENERATOR, data]) == (g.GENERATOR, data)
    except g.InvalidElement:
        many = False
    if many != theirs:
        raise DecoderMismatch(f"group.decode_many says {many}, libsodium {theirs}: {data.hex()}")
