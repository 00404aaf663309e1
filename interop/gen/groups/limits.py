"""Hostile input: values over the decoding limits (PROTOCOL.md 3.1) in records, frames and
openings, and a committed, proven small-order transfer key (section 10)."""

from __future__ import annotations

from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.keys import key_commitment
from dernier_p2p.deck.proofs import make_context, prove_schnorr
from dernier_p2p.net import handshake as hs
from dernier_p2p.protocol.envelope import record_hash
from dernier_p2p.wire.canonical import MAX_ARRAY, MAX_BIN, MAX_DEPTH, MAX_MAP, MAX_STR, encode
from dernier_p2p.wire.hashing import digest
from interop.gen.forge import SPECS, Spec, add, frame_case, map_bytes, resign_env, seal
from interop.gen.scenarios import Base, drive, first_base


def build(bases: dict[str, Base]) -> None:
    first = first_base(bases)
    record_cases(first)
    frame_cases(first)
    small_order_key_case(first)


def _arrays(depth: int) -> bytes:
    """``depth`` one-element arrays around nil (``depth`` levels of containers)."""
    return b"\x91" * depth + b"\xc0"


def record_cases(b: Base) -> None:
    k = b.body_type("tokens")
    r = b.records[k]
    h = r["h"]

    def case(id_: str, comment: str, env: bytes, code: str, flags: list[str]) -> None:
        add(f"{b.name}-limit-{id_}", "3.1", comment, ["Encoding", "Limits", *flags], b, k,
            [map_bytes(r, over={"env": env})], code, h)

    # the record map is at depth 1, so its envelope value starts at depth 2
    case("depth-16", f"the envelope replaced by {MAX_DEPTH - 1} nested arrays: within the "
         "depth limit, refused as a wrong envelope", _arrays(MAX_DEPTH - 1), "MALFORMED",
         ["Depth"])
    case("depth-17", f"the envelope replaced by {MAX_DEPTH} nested arrays: one container past "
         "the depth limit", _arrays(MAX_DEPTH), "OVERSIZED", ["Depth"])
    case("depth-600", "the envelope nested 600 deep (about 600 bytes)", _arrays(600),
         "OVERSIZED", ["Depth"])
    case("array-header-max", "an array header announcing 2^32-1 items, nothing after it",
         b"\xdd\xff\xff\xff\xff", "OVERSIZED", ["HugeContainer"])
    case("map-header-max", "a map header announcing 2^32-1 entries, nothing after it",
         b"\xdf\xff\xff\xff\xff", "OVERSIZED", ["HugeContainer"])
    case("array-1025", f"an array of {MAX_ARRAY + 1} items", encode([0] * (MAX_ARRAY + 1)),
         "OVERSIZED", ["HugeContainer"])
    case("map-257", f"a map of {MAX_MAP + 1} entries",
         encode({f"k{i:03}": 0 for i in range(MAX_MAP + 1)}), "OVERSIZED", ["HugeContainer"])
    case("str-4097", f"a str of {MAX_STR + 1} bytes", encode("s" * (MAX_STR + 1)),
         "OVERSIZED", ["HugeString"])
    case("bin-65537", f"a bin of {MAX_BIN + 1} bytes", encode(b"\x00" * (MAX_BIN + 1)),
         "OVERSIZED", ["HugeString"])
    case("items-65601", "64 arrays of 1024 integers: more than 65536 values in all",
         encode([[0] * MAX_ARRAY for _ in range(64)]), "OVERSIZED", ["HugeContainer"])


def frame_cases(b: Base) -> None:
    def fr(payload: bytes) -> bytes:
        return len(payload).to_bytes(4, "big") + payload

    env_map = {"k": "env", "env": None}
    frame_case("frame-depth-600", "an env frame whose envelope is nested 600 deep",
               ["Frame", "Limits", "Depth"],
               fr(map_bytes(env_map, over={"env": _arrays(600)})), "OVERSIZED")
    frame_case("frame-bare-depth-600", "a frame that is 600 nested arrays (the reviewed crash)",
               ["Frame", "Limits", "Depth"], fr(_arrays(600)), "OVERSIZED")
    frame_case("frame-array-header-max", "an env frame whose envelope announces 2^32-1 items",
               ["Frame", "Limits", "HugeContainer"],
               fr(map_bytes(env_map, over={"env": b"\xdd\xff\xff\xff\xff"})), "OVERSIZED")
    frame_case("frame-error-detail-4097", f"an error frame whose detail is {MAX_STR + 1} bytes",
               ["Frame", "Limits", "HugeString"],
               fr(encode({"k": "error", "code": "MALFORMED", "detail": "d" * (MAX_STR + 1)})),
               "OVERSIZED")
    ident = b.identities[1]
    nonce = digest("dernier-p2p/interop-nonce", b.name)
    hello = hs.hello_message(ident, nonce, "seat one", None)
    payload = map_bytes(hello, over={"name": encode("n" * 5000)})
    SPECS.append(Spec("handshake-hello-name-5000", "4.2",
                      "a hello whose name is 5000 bytes: over the str limit before any field "
                      "check", ["Handshake", "Limits", "HugeString"], None, None, [], "OVERSIZED",
                      None, fr(payload), nonce))


def small_order_key_case(b: Base) -> None:
    """Seat 1 commits to and proves an all-zero (small-order) transfer key: refused at its
    reveal as DECK_FAULT naming seat 1, before anyone boxes a card to it."""
    kc = b.body_type("key_commit", seat=1)
    kr = b.body_type("key_reveal", seat=1)
    run = drive(b.sc, b.trial, stop=lambda table, rnd: True)  # the deal is done by round 0
    secret = run.table.sessions[1].mine.secret
    assert secret is not None and secret.hand == b.records[kr]["env"]["body"]["hand"]
    zero = bytes(32)
    ctx = make_context(b.game, secret.hand, "key", 1)
    proof = prove_schnorr(secret.x, secret.share, ctx, Drbg(b"interop-small-order" * 2),
                          bind=zero)
    bodies = {
        kc: {**b.records[kc]["env"]["body"],
             "commit": key_commitment(b.game, secret.hand, 1, secret.share, zero, secret.nonce)},
        kr: {**b.records[kr]["env"]["body"], "xpub": zero, "proof": proof.to_wire()},
    }
    add(f"{b.name}-key-reveal-small-order-xpub", "10",
        "a transfer key of small order (all zero), committed to and proven: refused at its "
        "reveal", ["Deck", "BadElement", "SmallOrder"], b, kc, _rechain(b, kc, kr, bodies),
        "DECK_FAULT", 1)


def _rechain(b: Base, start: int, end: int, bodies: dict[int, dict]) -> list[dict]:
    """Records ``start .. end`` with ``bodies`` replaced, every envelope and record signed
    again, and each ``prev`` and head echo pointing at the new records."""
    new_hash = {record_hash(b.records[j]): record_hash(b.records[j]) for j in range(start)}
    out: list[dict] = []
    prev = record_hash(b.records[start - 1])
    for j in range(start, end + 1):
        rec = b.records[j]
        env = {**rec["env"], "body": bodies.get(j, rec["env"]["body"])}
        env["head"] = new_hash.get(env["head"], env["head"])
        new = seal(b, {**rec, "env": resign_env(b, env), "prev": prev})
        new_hash[record_hash(rec)] = prev = record_hash(new)
        out.append(new)
    return out
