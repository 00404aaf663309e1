"""Seeded mutations of decoded values (structure-aware) and of byte strings."""

from __future__ import annotations

import random
from typing import Any

import msgpack

from dernier_p2p.wire.canonical import MAX_ARRAY, MAX_DEPTH, MAX_STR

EDGE_INTS = [0, 1, -1, 2, 7, 9, 10, 11, 255, 256, 65535, 2**31 - 1, 2**32, 2**53 + 1,
             2**63 - 1, -(2**63), 2**64 - 1]
BYTE_SIZES = [0, 1, 15, 16, 31, 32, 33, 63, 64, 65, 100]


def _paths(value: Any, limit: int = 400) -> list[tuple[Any, ...]]:
    """Paths (keys and indices from the top) of the nodes of ``value``, breadth first."""
    out: list[tuple[Any, ...]] = [()]
    queue: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while queue and len(out) < limit:
        path, node = queue.pop(0)
        children = (
            list(node.items()) if isinstance(node, dict)
            else list(enumerate(node)) if isinstance(node, list) else []
        )
        for key, child in children:
            out.append((*path, key))
            queue.append(((*path, key), child))
    return out


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def random_value(rng: random.Random, depth: int = 0) -> Any:
    """A random value of any protocol type (small)."""
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice(EDGE_INTS) * rng.choice((1, -1))
    if kind == 3:
        return rng.randbytes(rng.choice(BYTE_SIZES))
    if kind == 4:
        return rng.choice(["", "x", "move", "play", "env", "rec", "hello", "\x00", "é" * 40,
                           "a" * 33, "k" * 1000])
    if kind == 5:
        return rng.randrange(-5, 300)
    if kind == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 7:
        return {rng.choice(["type", "k", "seat", "n", "x", "body", "move", "hand"]):
                random_value(rng, depth + 1) for _ in range(rng.randrange(4))}
    return bytes(32)


def nested(depth: int, leaf: Any = None) -> Any:
    for _ in range(depth):
        leaf = [leaf]
    return leaf


def mutate_value(value: Any, rng: random.Random) -> Any:
    """A copy of ``value`` with one to three structure-aware changes (a value of n bytes grows
    to at most about n + 3 * 64 KiB: only small nodes are repeated)."""
    value = msgpack.unpackb(msgpack.packb(value, use_bin_type=True), raw=False,
                            strict_map_key=False)  # a deep copy
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        paths = _paths(value)
        path = rng.choice(paths)
        node = _get(value, path)
        new = _change(node, rng)
        if not path:
            value = new
        else:
            _get(value, path[:-1])[path[-1]] = new
    return value


def _small(node: Any) -> bool:
    """Whether ``node`` packs to at most 64 bytes."""
    try:
        return len(msgpack.packb(node, use_bin_type=True)) <= 64
    except (OverflowError, ValueError, TypeError):
        return False


def _change(node: Any, rng: random.Random) -> Any:
    op = rng.randrange(14)
    if op == 0:
        return random_value(rng)
    if op == 1 and isinstance(node, dict) and node:
        node = dict(node)
        del node[rng.choice(list(node))]
        return node
    if op == 2 and isinstance(node, dict):
        return {**node, rng.choice(["extra", "k", "type", "zz"]): random_value(rng)}
    if op == 3 and isinstance(node, list) and node:
        i = rng.randrange(len(node))
        return node[:i] + node[i + 1:] if rng.random() < 0.5 else node + [node[i]]
    if op == 4 and isinstance(node, bytes):
        if not node:
            return b"\x00"
        b = bytearray(node)
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        return bytes(b)
    if op == 5 and isinstance(node, bytes):
        return node[: rng.randrange(len(node) + 1)] if rng.random() < 0.5 else node + b"\x00"
    if op == 6 and isinstance(node, int) and not isinstance(node, bool):
        return min(max(node + rng.choice((-1, 1, -(2**63), 2**63, 100)), -(2**63)), 2**64 - 1)
    if op == 7:
        return rng.choice(EDGE_INTS)
    if op == 8:
        return nested(rng.choice((MAX_DEPTH - 2, MAX_DEPTH, MAX_DEPTH + 1, 40)), node)
    if op == 9 and _small(node):  # repeating a big subtree would blow the input up
        return [node] * rng.choice((MAX_ARRAY, MAX_ARRAY + 1, 64))
    if op == 10:
        return "s" * rng.choice((MAX_STR, MAX_STR + 1, 33))
    if op == 11 and isinstance(node, str):
        return node + rng.choice(["\x00", "\n", "é", "\u202e", " "])
    if op == 12 and isinstance(node, list | dict):
        return [] if isinstance(node, list) else {}
    return random_value(rng)


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """``data`` with one to four byte-level changes (flips, inserts, deletes, splices of
    msgpack headers that announce huge or deep containers)."""
    b = bytearray(data)
    for _ in range(rng.randrange(1, 5)):
        op = rng.randrange(7)
        at = rng.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(at, len(b) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            b[at:at] = rng.randbytes(rng.randrange(1, 8))
        elif op == 2 and b:
            del b[at: at + rng.randrange(1, 16)]
        elif op == 3 and b:
            b[min(at, len(b) - 1)] = rng.choice((0xC1, 0xC0, 0xDD, 0xDF, 0xDB, 0xC6, 0xD4,
                                                 0xCB, 0x90, 0x80, 0xFF))
        elif op == 4:
            b[at:at] = rng.choice((b"\xdd\xff\xff\xff\xff", b"\xdf\x7f\xff\xff\xff",
                                   b"\xc6\x7f\xff\xff\xff", b"\x91" * rng.randrange(10, 700)))
        elif op == 5:
            del b[at:]
        else:
            b += rng.randbytes(rng.randrange(1, 32))
    return bytes(b)
