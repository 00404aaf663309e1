"""Mental poker (sections 8 to 16): key shares, shuffles, tokens and secrets."""

from __future__ import annotations

from interop.gen.forge import add, as_record, flip, new_env, with_body
from interop.gen.scenarios import Base

# which shuffle cases each match gets (each holds a whole shuffled deck)
SHUFFLES = {"dernier-2p": "all", "dernier-3p-timeout": "shuffle-out-of-turn",
            "originale-3p": "shuffle-bad-proof", "moderno-3p": "shuffle-bad-proof",
            "standard-3p": "shuffle-bad-proof"}


def build(bases: dict[str, Base]) -> None:
    names = [name for name, b in bases.items() if not b.sc.whole]
    for i, name in enumerate(names):
        other = bases[names[(i + 1) % len(names)]] if len(names) > 1 else None
        deck_cases(bases[name], name, other, SHUFFLES.get(name, "none"))


def deck_cases(b: Base, tag: str, other: Base | None, shuffles: str = "none") -> None:
    kr = b.body_type("key_reveal", seat=1)
    r = b.records[kr]
    s, body = r["env"]["seat"], r["env"]["body"]
    proof = body["proof"]

    def case(id_: str, sec: str, comment: str, flags: list[str], at: int, new_body: dict,
             seat: int) -> None:
        add(f"{tag}-{id_}", sec, comment, ["Deck", *flags], b, at, [with_body(b, at, new_body)],
            "DECK_FAULT", seat)

    case("key-reveal-bad-proof", "10", "a key share whose Schnorr proof fails",
         ["BadProof"], kr, {**body, "proof": {**proof, "s": flip(proof["s"])}}, s)
    kr2 = b.body_type("key_reveal", seat=0)
    other_share = b.records[kr2]["env"]["body"]["share"]
    case("key-reveal-other-share", "10", "a key share that is not the committed one",
         ["BadCommitment"], kr, {**body, "share": other_share}, s)
    case("key-reveal-not-point", "8", "a key share that is not a group element",
         ["BadElement"], kr, {**body, "share": b"\xff" * 32}, s)
    case("key-reveal-identity", "8", "a key share that is the neutral element",
         ["BadElement"], kr, {**body, "share": bytes([1]) + bytes(31)}, s)
    case("key-reveal-wrong-hand", "15", "a key reveal for another hand",
         ["Unexpected"], kr, {**body, "hand": body["hand"] + 1}, s)
    if other is not None:
        okr = other.body_type("key_reveal", seat=s)
        if okr is not None:
            ob = dict(other.records[okr]["env"]["body"])
            ob["hand"] = body["hand"]
            case("key-reveal-from-other-game", "10", "a key reveal replayed from another game",
                 ["Replay", "ReplayAcrossGames"], kr, ob, s)
    kc = b.body_type("key_commit")
    rkc = b.records[kc]
    case("key-commit-twice", "15", "a second key commitment from the same seat",
         ["Unexpected"], kr, {**rkc["env"]["body"]} if rkc["env"]["seat"] == s else
         {"type": "key_commit", "hand": body["hand"], "commit": bytes(32)}, s)

    if shuffles != "none":
        shuffle_cases(b, tag, None if shuffles == "all" else {shuffles})

    tk = b.find(lambda x: x["env"]["body"]["type"] == "tokens" and x["env"]["seat"] != x["h"],
                b.move("play") or 1)
    rt = b.records[tk]
    ts, tb = rt["env"]["seat"], rt["env"]["body"]
    t0 = tb["tokens"][0]
    rest = tb["tokens"][1:]
    case("token-bad-proof", "12", "a reveal token whose proof has a changed scalar",
         ["BadProof"], tk, {**tb, "tokens": [{**t0, "proof": {**t0["proof"],
                                                                "e": flip(t0["proof"]["e"])}},
                                             *rest]}, ts)
    case("token-wrong-value", "12", "a wrong token (another valid element) with its proof",
         ["BadProof", "WrongToken"], tk,
         {**tb, "tokens": [{**t0, "token": b.records[kr]["env"]["body"]["share"]}, *rest]}, ts)
    case("token-not-point", "8", "a token that is not a group element",
         ["BadElement"], tk, {**tb, "tokens": [{**t0, "token": b"\xfe" * 32}, *rest]}, ts)
    case("token-other-position", "12",
         "a token and proof moved to another position (a proof replayed)",
         ["Replay", "BadProof"], tk, {**tb, "tokens": [{**t0, "position": t0["position"] + 1},
                                                        *rest]}, ts)
    case("token-wrong-owner", "12", "a token claiming another owner",
         ["Unexpected"], tk, {**tb, "tokens": [{**t0, "owner": (t0["owner"] + 1) %
                                                len(b.identities)}, *rest]}, ts)
    case("token-unasked-position", "15", "a token for a position nobody asked to open",
         ["Unexpected"], tk, {**tb, "tokens": [{**t0, "position": 400}]}, ts)
    nxt = b.find(lambda x: x["env"]["seat"] == ts and x["env"]["body"]["type"] not in
                 ("host_change", "left", "timeout"), tk + 1)
    if nxt is not None:
        case("tokens-replayed", "15", "the same tokens sent again in a new envelope",
             ["Replay", "Unexpected"], nxt, tb, ts)
    se = b.body_type("secret", seat=1)
    if se is not None:
        rse = b.records[se]
        sb2 = rse["env"]["body"]
        case("secret-wrong", "10", "an end-of-hand secret that is not the share's",
             ["BadCommitment"], se, {**sb2, "secret": flip(sb2["secret"])}, rse["env"]["seat"])
        case("secret-early", "15", "a secret sent in the middle of the hand",
             ["Unexpected"], tk, {"type": "secret", "hand": tb["hand"],
                                  "secret": rse["env"]["body"]["secret"]}, ts)


def shuffle_cases(b: Base, tag: str, which: set[str] | None) -> None:
    """Faulty shuffles (each case holds a whole shuffled deck, so only a few bases get them);
    ``which``: the case ids to make (None: all)."""

    def case(id_: str, sec: str, comment: str, flags: list[str], at: int, new_body: dict,
             seat: int) -> None:
        if which is None or id_ in which:
            add(f"{tag}-{id_}", sec, comment, ["Deck", *flags], b, at,
                [with_body(b, at, new_body)], "DECK_FAULT", seat)

    sh = b.body_type("shuffle")
    rs = b.records[sh]
    ss, sb = rs["env"]["seat"], rs["env"]["body"]
    pr = sb["proof"]
    case("shuffle-bad-proof", "11.2", "a shuffle whose proof has one scalar changed",
         ["BadProof"], sh, {**sb, "proof": {**pr, "s": [flip(pr["s"][0]), *pr["s"][1:]]}}, ss)
    deck = sb["deck"]
    case("shuffle-cards-swapped", "11.2", "two output cards swapped after proving",
         ["BadProof"], sh, {**sb, "deck": [deck[1], deck[0], *deck[2:]]}, ss)
    case("shuffle-identity", "11.2", "a shuffled card whose c1 is the neutral element",
         ["BadElement"], sh, {**sb, "deck": [[bytes([1]) + bytes(31), deck[0][1]], *deck[1:]]},
         ss)
    case("shuffle-short-deck", "11.2", "a shuffle that drops a card",
         ["BadProof"], sh, {**sb, "deck": deck[:-1],
                            "proof": {x: (v[:-1] if x in ("c", "c_hat", "s_hat", "s_prime",
                                                          "t_hat") else v)
                                      for x, v in pr.items()}}, ss)
    case("shuffle-wrong-epoch", "11", "a shuffle for epoch 1 in epoch 0",
         ["Unexpected"], sh, {**sb, "epoch": 1}, ss)
    sh2 = b.body_type("shuffle", sh + 1)
    if sh2 is not None:
        rs2 = b.records[sh2]
        s2 = rs2["env"]["seat"]
        case("shuffle-replayed-from-other-seat", "11.2",
             "a seat submits the previous seat's shuffle and proof as its own",
             ["Replay", "BadProof"], sh2, {**sb}, s2)
        sh3 = b.body_type("shuffle", sh2 + 1)
        if sh3 is not None and (which is None or "shuffle-out-of-turn" in which):
            s3 = b.records[sh3]["env"]["seat"]
            env3 = new_env(b, sh2, s3, b.records[sh3]["env"]["body"])
            add(f"{tag}-shuffle-out-of-turn", "11", "a seat shuffles before its turn",
                ["Deck", "Unexpected"], b, sh2, [as_record(b, sh2, env3)], "DECK_FAULT", s3)
