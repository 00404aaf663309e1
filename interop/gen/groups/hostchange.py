"""A host change, a seat leaving, time-outs, and the votes they carry (sections 6.2, 7.5,
7.6)."""

from __future__ import annotations

import sys

from dernier_p2p.protocol.envelope import record_hash
from dernier_p2p.protocol.votes import quorum, sign_vote
from interop.gen.forge import add, as_record, flip, new_env, seal, with_body
from interop.gen.scenarios import Base


def build(bases: dict[str, Base]) -> None:
    for b in bases.values():
        if b.sc.whole:
            continue
        left_cases(b)
        timeout_cases(b)
        vote_cases(b)
    if "dernier-3p-hostchange" in bases:
        host_change_cases(bases["dernier-3p-hostchange"])
    if "dernier-3p-timeout" in bases:
        abandon_cases(bases["dernier-3p-timeout"])
        host_timeout_cases(bases["dernier-3p-timeout"])
    if "dernier-4p-hostskip" in bases:
        host_skip_cases(bases["dernier-4p-hostskip"])


def abandon_cases(b: Base) -> None:
    """``no_contest`` by ``abandon`` votes (7.5) in place of the first time-out: valid with a
    quorum of votes stating the table stuck at the record before; too few, a vote kept from an
    earlier record, or a seat named are refused."""
    k = b.body_type("timeout")
    if k is None:
        return
    h = b.records[k]["h"]
    n = len(b.identities)

    def vote(seat: int, after: int = k - 1) -> dict:
        return sign_vote(b.identities[seat], b.game, "abandon", None, seat, after)

    voters = [h, *[s for s in range(n) if s != h]][: quorum(n)]
    votes = [vote(s) for s in voters]

    def case(id_: str, comment: str, flags: list[str], body: dict, code: str | None) -> None:
        add(f"abandon-{id_}", "7.5", comment, ["Vote", "NoContest", *flags], b, k,
            [as_record(b, k, new_env(b, k, h, body))], code, "any" if code is None else h)

    case("no-contest", "no contest with the abandon votes of a quorum, each stating the table "
         "stuck at the record before: valid", ["Valid"],
         {"type": "no_contest", "seat": None, "votes": votes}, None)
    case("one-vote-short", "no contest with one abandon vote fewer than a quorum",
         ["NoQuorum"], {"type": "no_contest", "seat": None, "votes": votes[:-1]}, "NO_QUORUM")
    case("vote-kept-for-later", "no contest with an abandon vote cast at an earlier record",
         ["StaleVote"], {"type": "no_contest", "seat": None,
                         "votes": [*votes[:-1], vote(voters[-1], k - 2)]}, "STALE_VOTE")
    case("names-a-seat", "no contest by abandon votes that names a seat", ["Malformed"],
         {"type": "no_contest", "seat": voters[-1], "votes": votes}, "MALFORMED")


def host_timeout_cases(b: Base) -> None:
    """A ``timeout`` of the host's own seat (7.5) in place of the first time-out: valid with
    the votes of a quorum of the other seats, each stating the last record the host authored;
    with one vote fewer, NO_QUORUM."""
    k = b.body_type("timeout")
    if k is None:
        return
    h = b.records[k]["h"]
    since = max((i for i in range(k) if b.records[i]["env"]["seat"] == h
                 and b.records[i]["env"]["body"]["type"] not in ("chat", "ack")), default=-1)
    others = [s for s in range(len(b.identities)) if s != h]
    votes = [sign_vote(b.identities[s], b.game, "timeout", h, s, since)
             for s in others][: quorum(len(b.identities))]

    def case(id_: str, comment: str, flags: list[str], vs: list[dict], code: str | None) -> None:
        body = {"type": "timeout", "seat": h, "votes": vs}
        add(f"host-timeout-{id_}", "7.5", comment, ["Vote", "Timeout", *flags], b, k,
            [as_record(b, k, new_env(b, k, h, body))], code, "any" if code is None else h)

    case("own-seat", "the host times out its own seat with the timeout votes of a quorum of "
         "the other seats: valid", ["Valid"], votes, None)
    case("own-seat-one-vote-short", "the host times out its own seat with one vote fewer "
         "than a quorum", ["NoQuorum"], votes[:-1], "NO_QUORUM")


def host_change_cases(b: Base) -> None:
    hc = b.body_type("host_change")
    if hc is None:
        print("  no host change recorded", file=sys.stderr)
        return
    r = b.records[hc]
    new, old = r["h"], r["env"]["body"]["old"]
    after = hc + 1
    ra = b.records[after]
    add("hostchange-old-host-signs", "7.6", "after the host change the old host signs a record",
        ["HostChange", "HostKey"], b, after, [seal(b, {**ra, "h": old}, signer=old)],
        "BAD_CHAIN", old)
    env0 = new_env(b, after, old, {"type": "ack"})
    rec0 = {"env": env0, "h": new, "hsig": bytes(64), "i": after,
            "prev": record_hash(b.records[hc]), "t": b.records[hc]["t"]}
    add("hostchange-old-host-stays-a-seat", "7.6",
        "after the host change the old host writes as an ordinary seat (it resumed with the new "
        "host): valid", ["HostChange", "Valid"], b, after, [seal(b, rec0)], None)
    n = len(b.identities)
    wrong = (new + 1) % n
    env = new_env(b, hc, wrong, {**r["env"]["body"], "new": wrong})
    add("hostchange-out-of-turn", "7.6",
        "a seat whose table entry gives no listen address takes over (it cannot host)",
        ["HostChange"], b, hc, [seal(b, {**r, "env": env, "h": wrong}, signer=wrong)],
        "BAD_CHAIN", wrong)
    lf = b.body_type("left")
    if lf is not None and lf + 1 <= len(b.records):
        gone = b.records[lf]["env"]["body"]["seat"]
        env2 = new_env(b, lf + 1, gone, {"type": "ack"})
        rec = {"env": env2, "h": new, "hsig": bytes(64), "i": lf + 1,
               "prev": record_hash(b.records[lf]), "t": b.records[lf]["t"]}
        if lf + 1 == len(b.records):
            add("hostchange-left-seat-writes", "7.5", "a seat that has left sends an envelope",
                ["WrongSeat", "Left"], b, lf + 1, [seal(b, rec)], "WRONG_SEAT", new)


def host_skip_cases(b: Base) -> None:
    """At four seats, seat 1 without a listen address: a host change naming it, and one by
    seat 3, a later candidate than seat 2, with a quorum (the next hosts were gone)."""
    hc = b.body_type("host_change")
    if hc is None:
        print("  no host change recorded", file=sys.stderr)
        return
    r = b.records[hc]
    body, old = r["env"]["body"], r["env"]["body"]["old"]
    after = body["votes"][0]["after"]

    def change(new: int, voters: list[int]) -> dict:
        votes = [sign_vote(b.identities[v], b.game, "depose", old, v, after) for v in voters]
        env = new_env(b, hc, new, {**body, "new": new, "votes": votes})
        return seal(b, {**r, "env": env, "h": new}, signer=new)

    add("hostchange-to-a-seat-without-listen", "7.6",
        "seat 1 gave no listen address in the table and takes over (with a quorum of votes)",
        ["HostChange"], b, hc, [change(1, [1, 2, 3])], "BAD_CHAIN", 1)
    add("hostchange-later-candidate", "7.6",
        "seat 3 takes over although seat 2 is the next host (seat 2 did not host): valid with "
        "the depose votes of a quorum", ["HostChange", "Valid"], b, hc, [change(3, [3, 1, 2])],
        None)
    add("hostchange-later-candidate-no-quorum", "7.6",
        "seat 3 takes over with the votes of seats 3 and 1 only (three needed at four seats)",
        ["HostChange", "Vote", "NoQuorum"], b, hc, [change(3, [3, 1])], "NO_QUORUM", 3)


def timeout_cases(b: Base) -> None:
    tk = b.body_type("timeout")
    if tk is None:
        return
    r = b.records[tk]
    n = len(b.identities)
    add(f"{b.name}-timeout-seat-outside", "6.2", "a timeout of a seat the table does not have",
        ["Malformed", "Timeout"], b, tk, [with_body(b, tk, {**r["env"]["body"], "seat": n})],
        "MALFORMED", r["h"])
    add(f"{b.name}-timeout-extra-field", "6.2", "a timeout with a field it does not have",
        ["UnknownField", "Timeout"], b, tk,
        [with_body(b, tk, {**r["env"]["body"], "ms": 30000})], "MALFORMED", r["h"])


def left_cases(b: Base) -> None:
    lf = b.body_type("left")
    if lf is None or lf + 1 != len(b.records):
        return
    gone = b.records[lf]["env"]["body"]["seat"]
    h = b.records[lf]["h"]
    env = new_env(b, lf + 1, gone, {"type": "ack"})
    rec = {"env": env, "h": h, "hsig": bytes(64), "i": lf + 1,
           "prev": record_hash(b.records[lf]), "t": b.records[lf]["t"]}
    add(f"{b.name}-left-seat-writes", "7.5", "a seat that has left sends an envelope",
        ["WrongSeat", "Left"], b, lf + 1, [seal(b, rec)], "WRONG_SEAT", h)


def vote_cases(b: Base) -> None:
    """Votes of the first ``timeout``, ``left`` or ``host_change`` of ``b`` (7.5, 7.6): the same
    record with too few votes, a forged, misplaced, repeated, stale or early vote."""
    k = b.find(lambda r: r["env"]["body"]["type"] in ("timeout", "left", "host_change"))
    if k is None:
        return
    r = b.records[k]
    body, signer = r["env"]["body"], r["h"]
    kind = {"timeout": "timeout", "left": "left", "host_change": "depose"}[body["type"]]
    target = body["old"] if kind == "depose" else body["seat"]
    votes = body["votes"]
    after = votes[0]["after"]
    sec = "7.6" if kind == "depose" else "7.5"
    what = {"timeout": "time-out", "left": "leave", "depose": "host change"}[kind]
    tag = f"{b.name}-{kind}"

    def vote(seat: int, at: int = after, kind_: str = kind) -> dict:
        return sign_vote(b.identities[seat], b.game, kind_, target, seat, at)

    def bad(id_: str, comment: str, flags: list[str], vs: list[dict], code: str) -> None:
        add(f"{tag}-{id_}", sec, comment, ["Vote", *flags], b, k,
            [with_body(b, k, {**body, "votes": vs})], code, signer)

    bad("one-vote-short", f"a {what} with one vote fewer than a quorum", ["NoQuorum"],
        votes[:-1], "NO_QUORUM")
    forged = {**votes[-1], "sig": flip(votes[-1]["sig"], 5)}
    bad("forged-vote", f"a {what} whose last vote's signature is altered", ["BadSignature"],
        [*votes[:-1], forged], "BAD_SIGNATURE")
    other_kind = "left" if kind != "left" else "timeout"
    bad("vote-of-other-kind", f"a {what} carrying a vote signed for {other_kind}",
        ["BadSignature"], [*votes[:-1], vote(votes[-1]["seat"], kind_=other_kind)],
        "BAD_SIGNATURE")
    bad("vote-by-target", f"a {what} with a vote by the seat it is about", ["WrongSeat"],
        [*votes[:-1], vote(target)], "WRONG_SEAT")
    bad("same-voter-twice", f"a {what} with the same voter twice", ["WrongSeat"],
        [*votes[:-1], votes[0]], "WRONG_SEAT")
    bad("vote-from-the-future", f"a {what} with a vote after the record itself",
        ["StaleVote"], [*votes[:-1], vote(votes[-1]["seat"], k)], "STALE_VOTE")
    seen = max((i for i in range(k) if (b.records[i]["h"] if kind == "depose" else
                                       b.records[i]["env"]["seat"]) == target), default=-1)
    if seen > 0:
        bad("stale-vote", f"a {what} with a vote older than a record of its target",
            ["StaleVote"], [*votes[:-1], vote(votes[-1]["seat"], seen - 1)], "STALE_VOTE")
    if kind != "depose":
        add(f"{tag}-no-contest-at-{len(b.identities)}", sec,
            "no contest without votes at more than two seats", ["Vote", "NoQuorum"], b, k,
            [with_body(b, k, {"type": "no_contest", "seat": target, "votes": []})],
            "NO_QUORUM", signer)
