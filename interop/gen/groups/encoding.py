"""Canonical msgpack (PROTOCOL.md section 3): every non-canonical or mistyped record."""

from __future__ import annotations

import struct

from dernier_p2p.wire.canonical import encode
from interop.gen.forge import add, map_bytes
from interop.gen.scenarios import Base, first_base


def build(bases: dict[str, Base]) -> None:
    first = first_base(bases)
    encoding_cases(first, first.name)


def encoding_cases(b: Base, tag: str) -> None:
    k = b.body_type("tokens")
    r = b.records[k]
    h = r["h"]
    order = sorted(r, key=lambda s: s.encode())
    canon = encode(r)
    assert map_bytes(r) == canon

    def ok(id_: str, comment: str, data: bytes, flags: list[str]) -> None:
        add(f"{tag}-enc-{id_}", "3.1", comment, ["Encoding", *flags], b, k, [data],
            "MALFORMED", h)

    ok("unsorted-keys", "record keys not in canonical order", map_bytes(r, order[::-1]),
       ["NonCanonical"])
    ok("int-not-shortest", "the index as a 4-byte integer",
       map_bytes(r, over={"i": b"\xce" + k.to_bytes(4, "big")}), ["NonCanonical"])
    ok("positive-as-int8", "the host seat as a signed 1-byte integer",
       map_bytes(r, over={"h": b"\xd0" + bytes([h])}), ["NonCanonical"])
    ok("str8-key", "a short key written as str8",
       map_bytes(r, order[:-1]) [0:0] + bytes([0x86]) + b"".join(
           (b"\xd9\x01t" if key == "t" else encode(key)) + encode(r[key]) for key in order),
       ["NonCanonical"])
    ok("bin16-prev", "prev written as bin16", map_bytes(r, over={"prev": b"\xc5\x00\x20" +
                                                                r["prev"]}), ["NonCanonical"])
    ok("map16-header", "the record map with a map16 header",
       map_bytes(r, header=b"\xde\x00\x06"), ["NonCanonical"])
    ok("duplicate-key", "the time key twice",
       map_bytes(r, order + ["t"], header=bytes([0x87])), ["NonCanonical"])
    ok("trailing-byte", "a byte after the record", canon + b"\x00", ["Trailing"])
    ok("truncated", "the record's last byte missing", canon[:-1], ["Truncated"])
    ok("float-time", "the time as a float",
       map_bytes(r, over={"t": b"\xcb" + struct.pack(">d", float(r["t"]))}),
       ["Float"])
    ok("ext-type", "the time as an extension type", map_bytes(r, over={"t": b"\xd4\x01\x00"}),
       ["Ext"])
    ok("bad-utf8", "a key that is not UTF-8",
       bytes([0x86]) + b"".join((b"\xa1\xff" if key == "t" else encode(key)) + encode(r[key])
                                for key in order), ["Utf8"])
    ok("bool-index", "the index as a boolean", map_bytes(r, over={"i": encode(True)}),
       ["TypeConfusion"])
    ok("str-host", "the host seat as a string", map_bytes(r, over={"h": encode("0")}),
       ["TypeConfusion"])
    ok("nil-time", "the time as nil", map_bytes(r, over={"t": encode(None)}), ["TypeConfusion"])
    ok("list-record", "a record written as a list", encode([r[key] for key in order]),
       ["TypeConfusion"])
    env = r["env"]
    body = env["body"]
    inner = map_bytes(body, sorted(body, key=lambda s: s.encode())[::-1])
    ok("body-unsorted", "the envelope body's keys not in canonical order",
       map_bytes(r, over={"env": map_bytes(env, over={"body": inner})}), ["NonCanonical"])
