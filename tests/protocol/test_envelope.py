import json
import os
from pathlib import Path

import pytest

from dernier_p2p.protocol.envelope import (
    ENVELOPE_LABEL,
    RECORD_LABEL,
    Author,
    check_envelope,
    check_record,
    envelope_hash,
    envelope_signature,
    genesis_hash,
    make_record,
    record_hash,
    record_signature,
    sign_envelope,
    verify_envelope,
    verify_record,
)
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.wire.canonical import decode, encode
from dernier_p2p.wire.hashing import digest
from tests.protocol import GAME, identities

VECTOR = Path(__file__).parents[2] / "vectors" / "envelope.json"

IDS = identities(3)
KEYS = [k.public_bytes() for k in IDS]
HEAD = bytes([0x5A]) * 32
BODY = {"type": "accept", "table": bytes([0xAA]) * 32}


def env(seat=1, n=4, head=HEAD, body=None):
    return sign_envelope(IDS[seat], GAME, seat, n, head, dict(BODY if body is None else body))


def rec(e=None, h=0, i=7, prev=HEAD, t=123456):
    return make_record(IDS[h], env() if e is None else e, h, i, prev, t)


def raises(code, seat, fn, *args):
    with pytest.raises(ProtocolError) as info:
        fn(*args)
    assert (info.value.code, info.value.seat) == (code, seat), info.value
    return info.value


# ---------------------------------------------------------------------- envelopes
def test_envelope_round_trip_through_canonical_bytes():
    e = env()
    assert set(e) == {"body", "game", "head", "n", "seat", "sig"}
    again = decode(encode(e))
    assert again == e
    check_envelope(again, 1, 3)
    verify_envelope(again, KEYS[1], 1)


def test_envelope_signature_covers_the_documented_message():
    e = env()
    from dernier_p2p.wire.identity import verify

    part = {k: e[k] for k in ("body", "game", "head", "n", "seat")}
    verify(KEYS[1], ENVELOPE_LABEL, part, e["sig"])


@pytest.mark.parametrize(
    "field,value",
    [
        ("body", {"type": "accept", "table": bytes([0xAB]) * 32}),
        ("body", {"type": "ack"}),
        ("game", bytes(16)),
        ("head", bytes(32)),
        ("n", 5),
        ("seat", 2),
    ],
)
def test_every_envelope_field_is_signed(field, value):
    e = env()
    e[field] = value
    check_envelope(e, 1, 3)
    raises("BAD_SIGNATURE", 0, verify_envelope, e, KEYS[1], 0)


@pytest.mark.parametrize("pos", [0, 31, 32, 63])
def test_flipped_signature_bit_fails(pos):
    e = env()
    sig = bytearray(e["sig"])
    sig[pos] ^= 1
    e["sig"] = bytes(sig)
    raises("BAD_SIGNATURE", 1, verify_envelope, e, KEYS[1], 1)


def test_signature_of_another_seat_fails():
    raises("BAD_SIGNATURE", 2, verify_envelope, env(), KEYS[2], 2)


def _ident(x):
    return x if isinstance(x, str) else ""


def _bad_envelopes():
    good = env()
    out = [("not a map", [1, 2])]
    for k in sorted(good):
        e = dict(good)
        del e[k]
        out.append((f"missing {k}", e))
    out.append(("extra key", {**good, "x": 1}))
    bad_values = {
        "body": [None, {"table": b""}, {"type": 5}, "accept"],
        "game": [bytes(15), bytes(17), "0" * 16, None],
        "head": [bytes(31), bytes(33), None, bytearray(32)],
        "n": [-1, 2**63, True, 1.0, None, "1"],
        "seat": [-1, 3, 10, False, None, 1.0],
        "sig": [bytes(63), bytes(65), None, "x" * 64],
    }
    for k, values in bad_values.items():
        for v in values:
            out.append((f"{k}={v!r}", {**good, k: v}))
    return out


@pytest.mark.parametrize("name,value", _bad_envelopes(), ids=_ident)
def test_malformed_envelopes(name, value):
    raises("MALFORMED", 2, check_envelope, value, 2, 3)


def test_seat_range_without_player_count_is_ten_seats():
    e = env()
    e["seat"] = 9
    check_envelope(e, 0)
    e["seat"] = 10
    raises("MALFORMED", 0, check_envelope, e, 0)


def test_sign_envelope_refuses_bad_arguments():
    with pytest.raises(ValueError):
        sign_envelope(IDS[0], bytes(15), 0, 0, HEAD, BODY)
    with pytest.raises(ValueError):
        sign_envelope(IDS[0], GAME, 0, -1, HEAD, BODY)
    with pytest.raises(ValueError):
        sign_envelope(IDS[0], GAME, 0, 0, HEAD, {"no": "type"})


def test_author_numbers_its_envelopes():
    a = Author(IDS[2], GAME, 2)
    es = [a.envelope({"type": "ack"}, HEAD) for _ in range(3)]
    assert [e["n"] for e in es] == [0, 1, 2]
    for e in es:
        verify_envelope(e, KEYS[2], 2)
    assert Author(IDS[2], GAME, 2, next_n=5).envelope({"type": "ack"}, HEAD)["n"] == 5
    with pytest.raises(ValueError):
        Author(IDS[2], b"short", 2)


def test_envelope_hash_depends_on_every_byte():
    e = env()
    h = envelope_hash(e)
    assert len(h) == 32 and h == digest("dernier-p2p/envelope-hash", e)
    assert envelope_hash({**e, "n": 5}) != h
    assert envelope_hash({**e, "sig": bytes(64)}) != h


# ---------------------------------------------------------------------- genesis and records
def test_genesis_hash():
    assert genesis_hash(GAME) == digest("dernier-p2p/genesis", GAME)
    assert genesis_hash(GAME) != genesis_hash(bytes(16))
    for bad in (bytes(15), bytes(17), "x" * 16, None):
        with pytest.raises(ValueError):
            genesis_hash(bad)


def test_record_round_trip():
    r = rec()
    assert set(r) == {"env", "h", "hsig", "i", "prev", "t"}
    again = decode(encode(r))
    assert again == r
    check_record(again, 0, 3)
    verify_record(again, KEYS[0], 0)
    assert record_hash(again) == record_hash(r) == digest("dernier-p2p/record-hash", r)


def test_record_signature_covers_the_documented_message():
    from dernier_p2p.wire.identity import verify

    r = rec()
    part = {"env_hash": envelope_hash(r["env"]), "h": 0, "i": 7, "prev": HEAD, "t": 123456}
    verify(KEYS[0], RECORD_LABEL, part, r["hsig"])


@pytest.mark.parametrize(
    "field,value",
    [
        ("env", None),  # replaced below by another envelope
        ("h", 1),
        ("i", 8),
        ("prev", bytes(32)),
        ("t", 123457),
    ],
)
def test_every_record_field_is_signed(field, value):
    r = rec()
    r[field] = env(n=5) if field == "env" else value
    check_record(r, 0, 3)
    raises("BAD_SIGNATURE", 0, verify_record, r, KEYS[0], 0)


def test_record_with_tampered_envelope_body_fails():
    r = rec()
    r["env"] = {**r["env"], "body": {"type": "ack"}}
    raises("BAD_SIGNATURE", 0, verify_record, r, KEYS[0], 0)


def test_flipped_host_signature_bit_fails():
    r = rec()
    sig = bytearray(r["hsig"])
    sig[10] ^= 0x80
    r["hsig"] = bytes(sig)
    raises("BAD_SIGNATURE", 0, verify_record, r, KEYS[0], 0)


def _bad_records():
    good = rec()
    out = [("not a map", "record")]
    for k in sorted(good):
        r = dict(good)
        del r[k]
        out.append((f"missing {k}", r))
    out.append(("extra key", {**good, "extra": None}))
    bad_values = {
        "h": [-1, 3, True, None],
        "i": [-1, 2**63, False, 1.5],
        "prev": [bytes(31), None, "p" * 32],
        "t": [-1, 2**63, None, True],
        "hsig": [bytes(0), bytes(65), None],
        "env": [None, {**good["env"], "n": -1}, {**good["env"], "seat": 7}],
    }
    for k, values in bad_values.items():
        for v in values:
            out.append((f"{k}={v!r}"[:40], {**good, k: v}))
    return out


@pytest.mark.parametrize("name,value", _bad_records(), ids=_ident)
def test_malformed_records_name_the_host(name, value):
    raises("MALFORMED", 0, check_record, value, 0, 3)


def test_make_record_refuses_bad_arguments():
    with pytest.raises(ValueError):
        make_record(IDS[0], env(), 0, -1, HEAD, 0)
    with pytest.raises(ValueError):
        make_record(IDS[0], env(), 0, 0, HEAD[:5], 0)
    with pytest.raises(ValueError):
        make_record(IDS[0], {"not": "an envelope"}, 0, 0, HEAD, 0)


def test_record_hash_depends_on_the_host_signature():
    r = rec()
    assert record_hash({**r, "hsig": bytes(64)}) != record_hash(r)


# ---------------------------------------------------------------------- known-answer vector
VECTOR_AUTHOR_SEED = bytes([0x02]) * 32
VECTOR_HOST_SEED = bytes([0x01]) * 32


def build_vector() -> dict:
    """The interop vector: fixed seeds, one envelope and the record that sequences it."""
    from dernier_p2p.wire.identity import IdentityKey

    author, host = IdentityKey.generate(VECTOR_AUTHOR_SEED), IdentityKey.generate(VECTOR_HOST_SEED)
    game = bytes(range(16))
    prev = bytes([0x5A]) * 32
    body = {"type": "accept", "table": bytes([0xAA]) * 32}
    e = sign_envelope(author, game, 1, 4, prev, body)
    r = make_record(host, e, 0, 1, prev, 1_700_000_000_123)
    env_part = {k: e[k] for k in ("body", "game", "head", "n", "seat")}
    rec_part = {"env_hash": envelope_hash(e), "h": 0, "i": 1, "prev": prev, "t": r["t"]}
    return {
        "note": (
            "Envelope of seat 1 (counter 4) echoing head `prev`, sequenced as record 1 by host "
            "seat 0. Byte strings are hex; *_signed_message is the exact Ed25519 message "
            "canonical([label, value]); *_canonical the canonical msgpack of the whole map."
        ),
        "author_seed": VECTOR_AUTHOR_SEED.hex(),
        "author_public_key": author.public_bytes().hex(),
        "host_seed": VECTOR_HOST_SEED.hex(),
        "host_public_key": host.public_bytes().hex(),
        "game": game.hex(),
        "genesis_hash": genesis_hash(game).hex(),
        "prev": prev.hex(),
        "time_ms": r["t"],
        "envelope_signed_message": encode([ENVELOPE_LABEL, env_part]).hex(),
        "envelope_sig": e["sig"].hex(),
        "envelope_canonical": encode(e).hex(),
        "envelope_hash": envelope_hash(e).hex(),
        "record_signed_message": encode([RECORD_LABEL, rec_part]).hex(),
        "record_hsig": r["hsig"].hex(),
        "record_canonical": encode(r).hex(),
        "record_hash": record_hash(r).hex(),
    }


def test_known_answer_vector():
    vector = build_vector()
    if os.environ.get("DERNIER_WRITE_VECTORS"):
        VECTOR.parent.mkdir(exist_ok=True)
        VECTOR.write_text(json.dumps(vector, indent=1, sort_keys=True) + "\n")
    stored = json.loads(VECTOR.read_text())
    assert stored == vector
    # The stored bytes stand on their own: decode, check and verify them.
    r = decode(bytes.fromhex(stored["record_canonical"]))
    check_record(r, 0, 2)
    verify_record(r, bytes.fromhex(stored["host_public_key"]), 0)
    verify_envelope(r["env"], bytes.fromhex(stored["author_public_key"]), 1)
    assert encode(r["env"]).hex() == stored["envelope_canonical"]
    assert record_hash(r).hex() == stored["record_hash"]
    assert genesis_hash(bytes.fromhex(stored["game"])).hex() == stored["genesis_hash"]


def test_known_answer_vector_independently():
    """The stored vector checked with PyNaCl and hashlib on the raw bytes alone."""
    import hashlib

    import msgpack
    from nacl.signing import VerifyKey

    v = json.loads(VECTOR.read_text())
    h = bytes.fromhex

    def labelled(label: str, canonical_hex: str) -> bytes:  # canonical([label, value])
        return b"\x92" + msgpack.packb(label) + h(canonical_hex)

    author = VerifyKey(h(v["author_public_key"]))
    author.verify(h(v["envelope_signed_message"]), h(v["envelope_sig"]))
    VerifyKey(h(v["host_public_key"])).verify(h(v["record_signed_message"]), h(v["record_hsig"]))
    env_hash = hashlib.sha512(labelled("dernier-p2p/envelope-hash", v["envelope_canonical"]))
    assert env_hash.digest()[:32].hex() == v["envelope_hash"]
    assert v["envelope_hash"] in v["record_signed_message"]
    rec_hash = hashlib.sha512(labelled("dernier-p2p/record-hash", v["record_canonical"]))
    assert rec_hash.digest()[:32].hex() == v["record_hash"]
    game = b"\xc4\x10" + h(v["game"])  # msgpack bin 8 of 16 bytes
    genesis = hashlib.sha512(b"\x92" + msgpack.packb("dernier-p2p/genesis") + game)
    assert genesis.digest()[:32].hex() == v["genesis_hash"]
    assert v["envelope_canonical"] in v["record_canonical"]


def test_unencodable_values_are_malformed_not_a_crash():
    e = env(body={"type": "table", "options": {"x": 1}})
    e["body"]["options"]["x"] = -(2**63) - 1
    raises("MALFORMED", 1, verify_envelope, e, KEYS[1], 1)
    r = rec(e=env())
    r["env"]["body"] = {"type": "ack", "x": 2**64}
    raises("MALFORMED", 0, verify_record, r, KEYS[0], 0)


@pytest.mark.parametrize("value", [0, 2**63 - 1])
def test_integer_fields_reach_max_int_exactly(value):
    """0 and 2**63-1 are in range for n, i and t (2**63 and -1 are not: the tables above)."""
    e = env(n=value)
    assert check_envelope(decode(encode(e)), 2, 3)["n"] == value
    verify_envelope(e, KEYS[1], 2)
    for field in ("i", "t"):
        r = rec(**{field: value})
        assert check_record(decode(encode(r)), 0, 3)[field] == value
        verify_record(r, KEYS[0], 0)
    for field in ("n",):
        raises("MALFORMED", 2, check_envelope, {**e, field: value + 2**63}, 2, 3)
    for field in ("i", "t"):
        raises("MALFORMED", 0, check_record, {**rec(), field: value + 2**63}, 0, 3)


def test_unchecked_signatures_match_the_checked_builders_and_sign_anything():
    e = env()
    assert envelope_signature(IDS[1], e) == e["sig"]
    r = rec(e)
    assert record_signature(IDS[0], r) == r["hsig"]
    # a malformed envelope (seat 9 of a 3-seat table) still gets a valid signature
    bad = {**e, "seat": 9}
    bad["sig"] = envelope_signature(IDS[1], bad)
    verify_envelope(bad, KEYS[1], 1)
    raises("MALFORMED", 1, check_envelope, bad, 1, 3)
