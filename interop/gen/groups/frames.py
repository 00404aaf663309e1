"""Frames on a connection and the handshake (sections 4.1, 4.2): every frame kind of
:data:`~dernier_p2p.protocol.frames.FRAME_FIELDS`, well formed, with a field too many and with
one missing."""

from __future__ import annotations

from dernier_p2p.net import handshake as hs
from dernier_p2p.net import links
from dernier_p2p.protocol.frames import FRAME_FIELDS
from dernier_p2p.protocol.ready import ready_frame
from dernier_p2p.protocol.votes import sign_vote, vote_frame
from dernier_p2p.wire.canonical import encode
from dernier_p2p.wire.hashing import digest
from interop.gen.forge import SPECS, Spec, flip, frame_case, map_bytes
from interop.gen.scenarios import Base, first_base


def build(bases: dict[str, Base]) -> None:
    first = first_base(bases)
    frame_cases(first)
    handshake_cases(first)


def frame_cases(b: Base) -> None:
    def fr(payload: bytes) -> bytes:
        return len(payload).to_bytes(4, "big") + payload

    env = b.records[5]["env"]
    ident = b.identities[1]
    nonce = bytes(range(32))
    good = {
        "env": {"k": "env", "env": env},
        "rec": {"k": "rec", "rec": b.records[5]},
        "error": {"k": "error", "code": "BAD_CHAIN", "detail": "record 5"},
        "hello": hs.hello_message(ident, nonce, "seat one", None),
        "resume": hs.resume_message(ident, nonce, 41),
        "challenge": hs.challenge_message(nonce, {"name": "t", "variant": "dernier",
                                                  "players": 3, "taken": 1,
                                                  "key": b.identities[0].public_bytes()}),
        "welcome": {"k": "welcome", "seat": 2},
        "welcome-resume": {"k": "welcome", "seat": 2, "last": 57},
        "watch": hs.watch_message(41),
        "watching": {"k": "watching", "last": 57},
        "vote": vote_frame("timeout", 0, sign_vote(ident, b.game, "timeout", 0, 1, 40)),
        "status": hs.status_message(0, "dropped", 30_000),
        "done": {"k": "done", "last": 57},
        "ready": ready_frame(ident, b.game, 1, 40),
        "pass": {"k": "pass", "env": b.records[3]["env"]},  # seat 0's, passed on by seat 1
        "beat": {"k": "beat"},
        "link": links.link_message(ident, b.game, 1, nonce),
        "probe": links.probe_message(nonce),
        "present": links.present_message(ident, b.game, 1, nonce, 11, []),
    }
    said = {"present": "a well-formed present frame: proof nil, lent nil (4.6)",
            "challenge": "a well-formed challenge frame as a host sends it: its table summary "
            "carries the host's identity key (4.2)",
            "welcome-resume": "a well-formed welcome frame answering a resume (with last)"}
    for name, msg in good.items():
        frame_case(f"frame-{name}-valid", said.get(name, f"a well-formed {name} frame"),
                   ["Frame", "Valid"], fr(encode(msg)), None)
    proof, pending = b.records[12], b.records[8]["env"]  # a record; an envelope of seat 1
    frame_case("frame-present-proof-valid", "a present showing a proof (a record signed by the "
               "host) and the first record it took over a link (4.6)", ["Frame", "Valid", "Link"],
               fr(encode(links.present_message(ident, b.game, 1, nonce, 11, [pending], proof, 9))),
               None)
    link_challenge = hs.challenge_message(nonce, {"name": "link", "variant": "dernier",
                                                  "players": 3, "taken": 3})
    frame_case("frame-challenge-link-valid", "a seat link's challenge whose table summary has "
               "no key, as a version-4 acceptor sent it (4.6): still valid (the summary is not "
               "judged but for key); a link through a relay to such a seat is not punched",
               ["Frame", "Valid", "Link"], fr(encode(link_challenge)), None)
    keyed = hs.challenge_message(nonce, {"name": "link", "variant": "dernier", "players": 3,
                                         "taken": 3, "key": ident.public_bytes()})
    frame_case("frame-challenge-link-key-valid", "a challenge as a seat link's acceptor sends "
               "it (4.6, version 5): its table summary carries the seat's own key, which a seat "
               "linking through a relay checks on a punched connection (4.7 step 5)",
               ["Frame", "Valid", "Link"], fr(encode(keyed)), None)
    frame_case("frame-rec-link-valid", "a rec frame lending a record over a seat link (4.6)",
               ["Frame", "Valid", "Link"], fr(encode({"k": "rec", "rec": b.records[6]})), None)
    for kind, fields in FRAME_FIELDS.items():
        msg = good[kind]
        assert set(msg) == fields, kind
        if kind != "env":  # frame-env-extra below
            frame_case(f"frame-{kind}-extra", f"a {kind} frame with an extra field",
                       ["Frame", "UnknownField"], fr(encode({**msg, "x": 1})), "MALFORMED")
        if kind in DROPPED:
            gone = DROPPED[kind]
            frame_case(f"frame-{kind}-no-{gone.replace('_', '-')}",
                       f"a {kind} frame without its {gone} field", ["Frame", "Malformed"],
                       fr(encode({k: v for k, v in msg.items() if k != gone})), "MALFORMED")
    payload = encode(good["env"])
    frame_case("frame-oversized", "a frame announcing 1 MiB + 1 bytes (refused on the length)",
               ["Frame", "Oversized"], (hs.MAX_FRAME + 1).to_bytes(4, "big") + payload, "OVERSIZED")
    frame_case("frame-length-max", "a frame announcing 2^32-1 bytes",
               ["Frame", "Oversized"], b"\xff\xff\xff\xff" + payload, "OVERSIZED")
    frame_case("frame-truncated", "a frame shorter than its length",
               ["Frame", "Truncated"], fr(payload)[:-3], "MALFORMED")
    frame_case("frame-stray-bytes", "bytes after the frame's end",
               ["Frame", "Trailing"], fr(payload) + b"\x00", "MALFORMED")
    frame_case("frame-short-prefix", "three bytes, no whole length prefix",
               ["Frame", "Truncated"], b"\x00\x00\x01", "MALFORMED")
    frame_case("frame-empty", "a frame of length 0", ["Frame", "Malformed"], fr(b""),
               "MALFORMED")
    frame_case("frame-not-canonical", "a frame whose map keys are out of order",
               ["Frame", "Encoding", "NonCanonical"],
               fr(map_bytes(good["env"], ["k", "env"])), "MALFORMED")
    frame_case("frame-not-map", "a frame holding a list", ["Frame", "Malformed"],
               fr(encode(["env", env])), "MALFORMED")
    frame_case("frame-kind-int", "a frame whose kind is an integer", ["Frame", "Malformed"],
               fr(encode({"k": 1, "env": env})), "MALFORMED")
    frame_case("frame-unknown-kind", "a frame of a kind the protocol lacks",
               ["Frame", "UnknownMessage"], fr(encode({"k": "gossip", "x": 1})), "UNEXPECTED")
    frame_case("frame-env-extra", "an env frame with an extra key", ["Frame", "UnknownField"],
               fr(encode({"k": "env", "env": env, "pad": b"x"})), "MALFORMED")
    frame_case("frame-garbage", "bytes that are not msgpack", ["Frame", "Encoding"],
               fr(b"\xc1\xc1\xc1"), "MALFORMED")


DROPPED = {
    "challenge": "table", "hello": "sig", "resume": "have", "watch": "have", "watching": "last",
    "welcome": "seat", "env": "env", "rec": "rec", "error": "detail", "vote": "target",
    "status": "grace_ms", "done": "last", "ready": "sig", "pass": "env", "link": "sig",
    "probe": "nonce", "present": "lent",
}
"""The field each kind's missing-field case drops (a beat has none)."""


def handshake_cases(b: Base) -> None:
    """A peer's opening frame (hello, resume or watch) against the challenge's nonce."""
    ident, other = b.identities[1], b.identities[0]
    nonce = digest("dernier-p2p/interop-nonce", b.name)

    def fr(msg: dict) -> bytes:
        payload = encode(msg)
        return len(payload).to_bytes(4, "big") + payload

    def case(id_: str, comment: str, flags: list[str], msg: dict, code: str | None) -> None:
        SPECS.append(Spec(f"handshake-{id_}", "4.2", comment, ["Handshake", *flags], None, None,
                          [], code, None, fr(msg), nonce))

    hello = hs.hello_message(ident, nonce, "seat one", None)
    case("hello-valid", "a hello signed over the challenge's nonce", ["Valid"], hello, None)
    case("hello-listen-valid", "a hello with a listen address", ["Valid"],
         hs.hello_message(ident, nonce, "seat one", ("10.0.0.7", 47001)), None)
    resume = hs.resume_message(ident, nonce, 57)
    case("resume-valid", "a resume holding records up to 57", ["Valid"], resume, None)
    case("resume-none-valid", "a resume holding no record (have -1)", ["Valid"],
         hs.resume_message(ident, nonce, -1), None)
    case("hello-other-nonce", "a hello signed over another nonce (a replayed handshake)",
         ["Replay", "BadSignature"], hs.hello_message(ident, flip(nonce), "seat one", None),
         "BAD_SIGNATURE")
    case("hello-sig-flipped", "a hello whose signature has a bit flipped", ["BadSignature"],
         {**hello, "sig": flip(hello["sig"], 4)}, "BAD_SIGNATURE")
    case("hello-key-of-other", "a hello naming another seat's key", ["BadSignature"],
         {**hello, "key": other.public_bytes()}, "BAD_SIGNATURE")
    case("hello-small-order-key", "a hello whose key is the neutral element",
         ["BadSignature", "IdentityKey"], {**hello, "key": bytes([1]) + bytes(31)},
         "BAD_SIGNATURE")
    case("hello-version-1", "a hello of protocol version 1 (retired)", ["Version"],
         {**hello, "version": 1}, "VERSION")
    case("hello-version-2", "a hello of protocol version 2 (its transcripts still verify, but a "
         "live table runs version 5 alone)", ["Version"], {**hello, "version": 2}, "VERSION")
    case("hello-version-3", "a hello of protocol version 3 (its transcripts still verify, read "
         "with version 3's rules, but a live table runs version 5 alone)", ["Version"],
         {**hello, "version": 3}, "VERSION")
    case("hello-version-4", "a hello of protocol version 4 (its transcripts still verify, read "
         "as version 5's, but a live table runs version 5 alone: its relay frames differ)",
         ["Version"], {**hello, "version": 4}, "VERSION")
    case("hello-version-6", "a hello of protocol version 6", ["Version"],
         {**hello, "version": 6}, "VERSION")
    case("hello-version-6-extra", "version 6 with an extra field: the version is checked first",
         ["Version", "UnknownField"], {**hello, "version": 6, "x": 1}, "VERSION")
    case("resume-version-2", "a resume of protocol version 2 (a live table runs version 5 alone)",
         ["Version"], {**resume, "version": 2}, "VERSION")
    case("resume-version-3", "a resume of protocol version 3 (a live table runs version 5 alone)",
         ["Version"], {**resume, "version": 3}, "VERSION")
    case("resume-version-4", "a resume of protocol version 4 (a live table runs version 5 alone)",
         ["Version"], {**resume, "version": 4}, "VERSION")
    case("hello-extra-field", "a hello with an extra field", ["UnknownField", "Malformed"],
         {**hello, "x": 1}, "MALFORMED")
    case("hello-no-listen", "a hello without its listen field", ["Malformed"],
         {k: v for k, v in hello.items() if k != "listen"}, "MALFORMED")
    case("hello-name-33", "a name of 33 characters", ["Malformed"],
         hs.hello_message(ident, nonce, "x" * 33, None), "MALFORMED")
    case("hello-name-control", "a name with a control character", ["Malformed"],
         hs.hello_message(ident, nonce, "a\tb", None), "MALFORMED")
    case("hello-port-zero", "a listen port of 0", ["Malformed"],
         {**hello, "listen": ["10.0.0.7", 0]}, "MALFORMED")
    case("resume-have-minus-2", "a resume with have -2", ["Malformed"],
         hs.resume_message(ident, nonce, -2), "MALFORMED")
    case("resume-signed-by-other", "a resume naming one key, signed by another",
         ["BadSignature"], {**resume, "key": other.public_bytes()}, "BAD_SIGNATURE")
    watch = hs.watch_message(-1)
    case("watch-valid", "a watcher's opening, holding no record (4.10)", ["Valid", "Watch"],
         watch, None)
    case("watch-have-valid", "a watcher's opening holding records up to 57", ["Valid", "Watch"],
         hs.watch_message(57), None)
    case("watch-extra-field", "a watch with a key (a watcher signs nothing)",
         ["Watch", "UnknownField", "Malformed"], {**watch, "key": other.public_bytes()},
         "MALFORMED")
    case("watch-have-minus-2", "a watch with have -2", ["Watch", "Malformed"],
         hs.watch_message(-2), "MALFORMED")
    case("watch-have-true", "a watch whose have is true, not an integer", ["Watch", "Malformed"],
         {**watch, "have": True}, "MALFORMED")
    case("watch-version-2", "a watch of protocol version 2", ["Watch", "Version"],
         {**watch, "version": 2}, "VERSION")
    case("watch-version-3", "a watch of protocol version 3", ["Watch", "Version"],
         {**watch, "version": 3}, "VERSION")
    case("watch-version-4", "a watch of protocol version 4", ["Watch", "Version"],
         {**watch, "version": 4}, "VERSION")
    case("watch-version-6", "a watch of protocol version 6", ["Watch", "Version"],
         {**watch, "version": 6}, "VERSION")
    case("welcome-instead", "a welcome where a hello is due", ["Unexpected"],
         {"k": "welcome", "seat": 1}, "UNEXPECTED")
    case("env-instead", "an envelope before the handshake", ["Unexpected"],
         {"k": "env", "env": b.records[3]["env"]}, "UNEXPECTED")
