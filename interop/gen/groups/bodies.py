"""Body schemas (sections 6, 20): unknown types and fields, bad values, host-only bodies."""

from __future__ import annotations

from typing import Any

from interop.gen.forge import add, with_body
from interop.gen.scenarios import Base, first_base


def build(bases: dict[str, Base]) -> None:
    first = first_base(bases)
    body_cases(first, first.name)


def body_cases(b: Base, tag: str) -> None:
    n = len(b.identities)
    k = b.move("draw") or b.move("play")
    r = b.records[k]
    body, h, a = r["env"]["body"], r["h"], r["env"]["seat"]
    hand = body["hand"]

    def case(id_: str, sec: str, comment: str, flags: list[str], at: int, new_body: dict,
             code: str, seat: Any = "any") -> None:
        add(f"{tag}-{id_}", sec, comment, flags, b, at, [with_body(b, at, new_body)], code,
            h if seat == "any" else seat)

    case("unknown-body-type", "20", "a body type this version does not define",
         ["UnknownMessage"], k, {"type": "emote", "text": "hi"}, "UNKNOWN_MESSAGE")
    case("unknown-move-kind", "20", "a move kind this version does not define",
         ["UnknownMessage"], k, {"type": "move", "hand": hand, "move": "shout"},
         "UNKNOWN_MESSAGE")
    case("move-extra-field", "20", "a draw with a field it does not have",
         ["UnknownField", "Malformed"], k, {"type": "move", "hand": hand, "move": "draw",
                                             "note": "x"}, "MALFORMED")
    case("move-missing-hand", "6.5", "a move without its hand",
         ["Malformed"], k, {"type": "move", "move": "draw"}, "MALFORMED")
    case("body-type-int", "6", "a body whose type is an integer",
         ["Malformed"], k, {"type": 5}, "MALFORMED")
    base_play = {"type": "move", "hand": hand, "move": "play", "slot": 0, "suit": None,
                 "target": None, "declare": False}
    case("play-suit-4", "6.5", "a play naming suit 4", ["Malformed"], k,
         {**base_play, "suit": 4}, "MALFORMED")
    case("play-declare-int", "6.5", "a play whose declare is 1, not true", ["Malformed"], k,
         {**base_play, "declare": 1}, "MALFORMED")
    case("play-slot-negative", "6.5", "a play of slot -1", ["Malformed"], k,
         {**base_play, "slot": -1}, "MALFORMED")
    case("play-target-outside", "6.5", "a swap target that is no seat", ["Malformed"], k,
         {**base_play, "target": n}, "MALFORMED")
    case("catch-target-outside", "6.5", "a catch of no seat", ["Malformed"], k,
         {"type": "move", "hand": hand, "move": "catch", "target": n + 3}, "MALFORMED")
    case("hand-size-zero", "6.5", "a hand size of 0", ["Malformed"], k,
         {"type": "move", "hand": hand, "move": "hand_size", "size": 0}, "MALFORMED")
    case("cut-keep-string", "6.5", "a cut whose keep is a string", ["Malformed"], k,
         {"type": "move", "hand": hand, "move": "cut", "keep": "yes"}, "MALFORMED")
    case("name-suit-nil", "6.5", "naming no suit", ["Malformed"], k,
         {"type": "move", "hand": hand, "move": "name_suit", "suit": None}, "MALFORMED")
    case("ack-with-field", "6.3", "an ack with a field", ["Malformed"], k,
         {"type": "ack", "x": 1}, "MALFORMED")
    case("chat-201-chars", "6.3", "a chat of 201 characters (at most 200)", ["Malformed", "Chat"],
         k, {"type": "chat", "text": "x" * 201}, "MALFORMED")
    case("chat-402-bytes", "6.3", "a chat of 134 characters but 402 bytes (at most 400)",
         ["Malformed", "Chat"], k, {"type": "chat", "text": "\u20ac" * 134}, "MALFORMED")
    case("chat-escape", "6.3", "a chat holding an ESC control sequence (clears a terminal)",
         ["Malformed", "Chat"], k, {"type": "chat", "text": "hi \x1b[2J"}, "MALFORMED")
    case("chat-newline", "6.3", "a chat of two lines", ["Malformed", "Chat"], k,
         {"type": "chat", "text": "one\ntwo"}, "MALFORMED")
    case("chat-empty", "6.3", "an empty chat", ["Malformed", "Chat"], k,
         {"type": "chat", "text": ""}, "MALFORMED")
    case("accept-31-bytes", "6.3", "an accept naming a 31-byte hash", ["Malformed"], k,
         {"type": "accept", "table": bytes(31)}, "MALFORMED")
    case("coin-step-empty", "6.3", "a coin commitment with an empty step", ["Malformed"], k,
         {"type": "coin_commit", "step": "", "commit": bytes(32)}, "MALFORMED")
    case("key-commit-hand-negative", "6.4", "a key commitment for hand -1", ["Malformed"], k,
         {"type": "key_commit", "hand": -1, "commit": bytes(32)}, "MALFORMED")
    case("tokens-empty", "6.4", "a tokens message with no token", ["Malformed"], k,
         {"type": "tokens", "hand": hand, "tokens": []}, "MALFORMED")
    case("transfer-box-short", "6.4", "a transfer box of 15 bytes", ["Malformed"], k,
         {"type": "transfer", "hand": hand, "position": 0, "to": 0, "epk": bytes(32),
          "box": bytes(15), "commit": bytes(32)}, "MALFORMED")
    case("complaint-text-str", "6.4", "a complaint whose plaintext is a string", ["Malformed"],
         k, {"type": "complaint", "hand": hand, "ref": 0, "plaintext": "x"}, "MALFORMED")
    case("secret-33-bytes", "6.4", "a secret of 33 bytes", ["Malformed"], k,
         {"type": "secret", "hand": hand, "secret": bytes(33)}, "MALFORMED")
    case("shuffle-empty-deck", "6.4", "a shuffle of no card", ["Malformed"], k,
         {"type": "shuffle", "hand": hand, "epoch": 0, "deck": [], "proof": {}}, "MALFORMED")
    vote = {"seat": a, "after": k - 1, "sig": bytes(64)}  # well formed (never checked here)
    case("host-change-same-seat", "6.2", "a host change from a seat to itself", ["Malformed"],
         k, {"type": "host_change", "old": a, "new": a, "votes": [vote]}, "MALFORMED")
    case("host-change-no-votes", "6.2", "a host change without its votes field", ["Malformed"],
         k, {"type": "host_change", "old": h, "new": a}, "MALFORMED")
    if a == h:
        other_seat = (a + 1) % n
        case("timeout-empty-votes", "6.2", "a timeout with an empty vote list", ["Malformed"],
             k, {"type": "timeout", "seat": other_seat, "votes": []}, "MALFORMED")
        case("vote-sig-short", "6.2", "a vote whose signature is 63 bytes", ["Malformed"], k,
             {"type": "left", "seat": other_seat, "votes": [{**vote, "sig": bytes(63)}]},
             "MALFORMED")
    if a != h and n > 2:
        other = next(x for x in range(n) if x not in (a, h))
        case("host-change-by-other", "6.2", "a host change authored by a seat it does not name",
             ["WrongSeat"], k, {"type": "host_change", "old": h, "new": other, "votes": [vote]},
             "WRONG_SEAT")
    if a != h:
        case("timeout-from-non-host", "6.2", "a seat other than the host sends a timeout",
             ["WrongSeat", "HostOnly"], k, {"type": "timeout", "seat": a, "votes": [vote]},
             "WRONG_SEAT")
        case("left-from-non-host", "6.2", "a seat other than the host sends left",
             ["WrongSeat", "HostOnly"], k, {"type": "left", "seat": a, "votes": [vote]},
             "WRONG_SEAT")
        case("no-contest-from-non-host", "6.2", "a seat other than the host ends the match",
             ["WrongSeat", "HostOnly"], k, {"type": "no_contest", "seat": None, "votes": []},
             "WRONG_SEAT")
