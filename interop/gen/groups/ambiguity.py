"""Ambiguity cases: each pins one point where a natural reading of PROTOCOL.md or RULES.md
differs from the normative one, with an expected verdict that the other reading gets wrong
(interop/README.md, "Ambiguity cases", lists them with the cases of other groups that do the
same)."""

from __future__ import annotations

import sys

from dernier_p2p.net import handshake as hs
from dernier_p2p.protocol.envelope import record_hash
from dernier_p2p.protocol.session import Session
from dernier_p2p.protocol.votes import quorum, sign_vote
from dernier_p2p.rules import to_act
from dernier_p2p.rules.cards import Rank
from dernier_p2p.wire.canonical import encode
from dernier_p2p.wire.hashing import digest
from dernier_p2p.wire.version import READABLE_VERSIONS
from interop.gen.forge import SPECS, Spec, add, as_record, new_env, resign_env, seal, with_body
from interop.gen.scenarios import Base, drive, first_base

FILE = ("ambiguity", "Ambiguity cases: the normative reading where another one is natural")


def build(bases: dict[str, Base]) -> None:
    first = first_base(bases)
    token_order_cases(first)
    option_cases(first)
    record0_order_cases(first)
    handshake_version_cases(first)
    if "dernier-3p-timeout" in bases:
        stall_cases(bases["dernier-3p-timeout"])
    if "moderno-3p" in bases:
        solo_swap_case(bases["moderno-3p"])
    if "dernier-3p-timeout" in bases:
        abandon_after_ack_case(bases["dernier-3p-timeout"])
    if "dernier-4p-hostskip" in bases:
        replaced_host_cases(bases["dernier-4p-hostskip"])
    if "moderno-2p-target" in bases:
        last_swap_target_case(bases["moderno-2p-target"])


def _follow(b: Base, k: int, first: dict, env: dict) -> dict:
    """``env`` sequenced as record ``k + 1``, after ``first`` took the place of record ``k``."""
    rec = {"env": env, "h": first["h"], "hsig": bytes(64), "i": k + 1,
           "prev": record_hash(first), "t": first["t"]}
    return seal(b, rec)


def token_order_cases(b: Base) -> None:
    """Point 8: the order and grouping of tokens are what honest seats do, not a check. A
    deal makes a seat owe several tokens at once; honest seats send one message per operation
    (one token each here), so two consecutive messages of one seat are merged."""
    k = None
    for x in range(1, len(b.records) - 1):
        r1, r2 = b.records[x], b.records[x + 1]
        if (r1["env"]["body"]["type"] == r2["env"]["body"]["type"] == "tokens"
                and r1["env"]["seat"] == r2["env"]["seat"] != r1["h"]):
            k = x
            break
    if k is None:
        print("  ambiguity: no two consecutive tokens messages of one seat", file=sys.stderr)
        return
    r = b.records[k]
    body, s = r["env"]["body"], r["env"]["seat"]
    toks = body["tokens"] + b.records[k + 1]["env"]["body"]["tokens"]
    add("ambiguity-tokens-descending", "15", "the tokens of two operations in one message, in "
        "descending position order (honest seats send one message per operation, ascending; "
        "receivers check neither)", ["Ambiguity", "Deck", "TokenOrder"], b, k,
        [with_body(b, k, {**body, "tokens": toks[::-1]})], None)
    add("ambiguity-tokens-grouped", "15", "the tokens of two operations in one message",
        ["Ambiguity", "Deck", "TokenOrder"], b, k,
        [with_body(b, k, {**body, "tokens": toks})], None)
    add("ambiguity-tokens-position-twice", "15", "one message with a position twice: refused "
        "whatever the order rule", ["Ambiguity", "Deck", "TokenOrder"], b, k,
        [with_body(b, k, {**body, "tokens": [toks[0], *toks]})], "DECK_FAULT", s)
    again = new_env(b, k + 1, s, {**body, "tokens": toks[:1]})
    add("ambiguity-tokens-sent-twice", "15", "a token sent again in a later message: it answers "
        "no open obligation", ["Ambiguity", "Deck", "TokenOrder"], b, k + 1,
        [as_record(b, k + 1, again)], "DECK_FAULT", s)


def option_cases(b: Base) -> None:
    """Point 5: option wire names and values (PROTOCOL.md 17.2)."""
    body = b.records[0]["env"]["body"]
    opts = body["options"]

    def table(name: str, comment: str, options: dict, code: str | None) -> None:
        add(f"ambiguity-options-{name}", "17.2", comment, ["Ambiguity", "Options"], b, 0,
            [with_body(b, 0, {**body, "options": {**opts, **options}})], code,
            "any" if code is None else 0)

    table("ranks-as-strings", "rank options as their strings, pairs as arrays",
          {"skip_ranks": ["Q"], "reverse_ranks": ["K"], "chain_draws": [["A", 2], ["JOKER", 4]],
           "previous_draws": [["7", 1]], "declaration": "with_play", "jump_in": True}, None)
    table("rank-long-name", "a rank spelled by its long name (QUEEN, not Q)",
          {"skip_ranks": ["QUEEN"]}, "TABLE_MISMATCH")
    table("rank-bare-string", "a rank set given as a bare string, not an array",
          {"skip_ranks": "Q"}, "TABLE_MISMATCH")
    table("deck", "the deck as an option (the variant decides it)",
          {"deck": "moderno-112"}, "TABLE_MISMATCH")
    table("match-map", "match as a map, not [kind, value]",
          {"match": {"kind": "hands", "value": 1}}, "TABLE_MISMATCH")
    table("first-rotate-off", "a moderno option on a dernier table: accepted (it changes "
          "nothing without rotate cards)", {"first_rotate_acts": False}, None)


def record0_order_cases(b: Base) -> None:
    """Point 11: the order of record 0's checks."""
    r0 = b.records[0]
    body = r0["env"]["body"]
    players = body["players"]
    dup = [*players[:-1], {**players[-1], "key": players[0]["key"]}]
    add("ambiguity-record0-version-before-keys", "5.3",
        "a table of version 6 with a duplicate key: the version is checked first",
        ["Ambiguity", "Record0", "Version"], b, 0,
        [with_body(b, 0, {**body, "version": 6, "players": dup})], "VERSION", 0)
    add("ambiguity-record0-keys-before-variant", "5.3",
        "a duplicate key and an unknown variant: the schema (MALFORMED) before the rules",
        ["Ambiguity", "Record0", "IdentityKey"], b, 0,
        [with_body(b, 0, {**body, "variant": "tressette", "players": dup})], "MALFORMED", 0)
    add("ambiguity-record0-fields-before-version", "5.3",
        "a table of version 6 with an extra field: a body's fields before its version",
        ["Ambiguity", "Record0", "Version"], b, 0,
        [with_body(b, 0, {**body, "version": 6, "x": 1})], "MALFORMED", 0)


def handshake_version_cases(b: Base) -> None:
    """Point 12: a hello whose version is missing or not an integer is VERSION."""
    ident = b.identities[1]
    nonce = digest("dernier-p2p/interop-nonce", [b.name, "ambiguity"])
    hello = hs.hello_message(ident, nonce, "seat one", None)

    def case(id_: str, comment: str, msg: dict, code: str) -> None:
        payload = encode(msg)
        SPECS.append(Spec(f"ambiguity-{id_}", "4.2", comment, ["Ambiguity", "Handshake",
                                                               "Version"],
                          None, None, [], code, None, len(payload).to_bytes(4, "big") + payload,
                          nonce))

    case("hello-no-version", "a hello without version: VERSION, not MALFORMED",
         {k: v for k, v in hello.items() if k != "version"}, "VERSION")
    case("hello-version-string", "a hello whose version is the string \"4\"",
         {**hello, "version": "4"}, "VERSION")
    case("hello-small-order-key", "an unacceptable key (small order): BAD_SIGNATURE",
         {**hello, "key": bytes(32)}, "BAD_SIGNATURE")


def stall_cases(b: Base) -> None:
    """Point 13: a timeout of a seat that owes a token for an operation already applied, and
    is not the seat to act, is a stall, the same as left: the match (dernier) ends there, so a
    later move nobody owes changes nothing. As a rules Timeout it would be ignored (the seat is
    not to act) and that move refused (ILLEGAL_MOVE)."""
    n = len(b.identities)
    obs = Session(None, None, b.records[0], versions=READABLE_VERSIONS)
    k = None
    for x in range(1, len(b.records)):
        r = b.records[x]
        s = r["env"]["seat"]
        if (r["env"]["body"]["type"] == "tokens" and s != r["h"] and obs.quiescent
                and to_act(obs.state) not in (None, s)):
            k = x
            break
        obs.receive(r)
    if k is None:
        print("  ambiguity: no token owed by a seat not to act", file=sys.stderr)
        return
    r = b.records[k]
    s, h = r["env"]["seat"], r["h"]
    t = next(x for x in range(n) if x not in (s, h))
    after = obs.chain.vote_since("timeout", s)
    votes = [sign_vote(b.identities[v], b.game, "timeout", s, v, after) for v in (h, t)]
    stall = as_record(b, k, new_env(b, k, h, {"type": "timeout", "seat": s, "votes": votes}))
    declare = new_env(b, k, t, {"type": "move", "hand": r["env"]["body"]["hand"],
                                "move": "declare"})
    add("ambiguity-stall-token-owed", "7.5",
        "a timeout of a seat owing a draw's token is a stall (Leave): the match ends, and a "
        "later move nobody owes changes nothing", ["Ambiguity", "Timeout", "Stall"], b, k,
        [stall, _follow(b, k, stall, declare)], None)


def solo_swap_case(b: Base) -> None:
    """Point 16: a swap played as the second-last card without SOLO! costs two cards (seed 003)
    even though the exchange brings several back. The match is replayed with the first swap
    that was declared sent undeclared; the records that follow carry the tokens of the
    penalty's two cards, which a reading without the penalty refuses as not due."""
    seen: dict = {}

    def tamper(table):
        def hook(env: dict) -> dict:
            body = env["body"]
            if (seen or body.get("type") != "move" or body.get("move") != "play"
                    or body.get("target") is None or body.get("declare") is not True):
                return env
            seen.update(k=len(table.records), seat=env["seat"])
            return resign_env(table, {**env, "body": {**body, "declare": False}})

        return hook

    try:
        run = drive(b.sc, b.trial, tamper=tamper)
    except Exception as exc:  # a bot's move refused after the change: no case
        print(f"  ambiguity: the undeclared swap replay failed: {exc!r}", file=sys.stderr)
        return
    if not seen:
        print("  ambiguity: no declared swap to replay undeclared", file=sys.stderr)
        return
    k = seen["k"]
    recs = run.table.records
    assert [encode(x) for x in recs[:k]] == b.raw[:k], "the replay left the recorded match"
    nxt = [recs[k]]
    for r in recs[k + 1 : k + 40]:
        nxt.append(r)
        if r["env"]["body"]["type"] == "move":
            break
    add("ambiguity-solo-swap-second-last", "17", "moderno: a swap played as the second-last "
        "card without SOLO!: the player draws two (the tokens of those cards follow), although "
        "the exchange leaves several cards", ["Ambiguity", "Rules", "Declaration"], b, k, nxt,
        None)


def abandon_after_ack_case(b: Base) -> None:
    """Point 5: an ``ack`` between an ``abandon`` vote's ``after`` and the ``no_contest`` leaves
    the vote fresh (an ack is presence, not progress: 7.5); only a record other than a chat or
    an ack makes it stale. In place of the first time-out: an ack of a seat, then the host's
    ``no_contest`` with the abandon votes of a quorum stating the table stuck at the record
    before the ack."""
    k = b.body_type("timeout")
    if k is None:
        print("  ambiguity: no time-out to put an abandon in place of", file=sys.stderr)
        return
    h = b.records[k]["h"]
    n = len(b.identities)
    voters = [h, *[s for s in range(n) if s != h]][: quorum(n)]
    acker = voters[-1]
    ack = as_record(b, k, new_env(b, k, acker, {"type": "ack"}))
    votes = [sign_vote(b.identities[s], b.game, "abandon", None, s, k - 1) for s in voters]
    body = {"type": "no_contest", "seat": None, "votes": votes}
    add("ambiguity-abandon-after-ack", "7.5",
        "an ack, then no contest with the abandon votes of a quorum stating the table stuck at "
        "the record before the ack: an ack does not make an abandon vote stale",
        ["Ambiguity", "Vote", "NoContest"], b, k,
        [ack, _follow(b, k, ack, new_env(b, k, h, body))], None)


def replaced_host_cases(b: Base) -> None:
    """Point 4: a replaced host stays at the table as an ordinary seat (7.6): it votes and
    counts in the quorum's ``m``. Right after the host change (four seats, host 0 replaced by
    seat 2), a ``left`` of seat 3 with the votes of seats 2, 0 and 1 is valid (q(4) = 3); with
    the votes of seats 2 and 1 alone it lacks a quorum. A reading that takes the replaced host
    off the table refuses the first (a vote of a seat not at the table) and accepts the
    second (q(3) = 2)."""
    hc = b.body_type("host_change")
    if hc is None:
        print("  ambiguity: no host change recorded", file=sys.stderr)
        return
    r = b.records[hc]
    new, old = r["h"], r["env"]["body"]["old"]
    k = hc + 1
    n = len(b.identities)
    target = next(s for s in range(n - 1, -1, -1) if s not in (new, old))
    since = max((i for i in range(k) if b.records[i]["env"]["seat"] == target
                 and b.records[i]["env"]["body"]["type"] != "chat"), default=-1)

    def left(voters: list[int]) -> dict:
        votes = [sign_vote(b.identities[v], b.game, "left", target, v, since) for v in voters]
        return as_record(b, k, new_env(b, k, new, {"type": "left", "seat": target,
                                                   "votes": votes}))

    others = [s for s in range(n) if s not in (new, old, target)]
    add("ambiguity-replaced-host-votes", "7.5",
        f"right after the host change, a left of seat {target} with the votes of the new host, "
        f"the replaced host (seat {old}) and seat {others[0]}: the replaced host is at the "
        "table, votes and counts in m (a quorum of 3 at four seats)",
        ["Ambiguity", "Vote", "HostChange", "Valid"], b, k, [left([new, old, *others])], None)
    add("ambiguity-replaced-host-counts", "7.5",
        f"right after the host change, a left of seat {target} with the votes of the new host "
        f"and seat {others[0]} only: the replaced host still counts in m, so 3 votes are needed",
        ["Ambiguity", "Vote", "HostChange", "NoQuorum"], b, k, [left([new, *others])],
        "NO_QUORUM", new)


def last_swap_target_case(b: Base) -> None:
    """Point 7: a swap played as the last card ends the hand before any exchange, and its
    ``target`` may be nil or a seat in play (RULES.md ``moderno``). The recorded match plays
    one with no target (its ``-match`` case); here the match is replayed with that play naming
    the other seat, to the end of the match. A reading that requires a target refuses the
    recorded match; one that forbids it refuses this case."""
    seen: dict = {}

    def tamper(table):
        def hook(env: dict) -> dict:
            body = env["body"]
            if (seen or body.get("type") != "move" or body.get("move") != "play"
                    or body.get("target") is not None):
                return env
            seat = env["seat"]
            s = table.sessions[seat]
            face = s.view.get(body["slot"])
            if face is None or face.rank is not Rank.SWAP or len(s.state.hands[seat]) != 1:
                return env
            other = next(t for t in s.state.in_play if t != seat)
            seen.update(k=len(table.records), seat=seat)
            return resign_env(table, {**env, "body": {**body, "target": other}})

        return hook

    try:
        run = drive(b.sc, b.trial, tamper=tamper)
    except Exception as exc:  # a bot's move refused after the change: no case
        print(f"  ambiguity: the last-card swap replay failed: {exc!r}", file=sys.stderr)
        return
    if not seen:
        print("  ambiguity: no last-card swap without a target to replay", file=sys.stderr)
        return
    k = seen["k"]
    recs = run.table.records
    assert [encode(x) for x in recs[:k]] == b.raw[:k], "the replay left the recorded match"
    assert b.records[k]["env"]["body"]["target"] is None
    assert run.table.sessions[run.table.host_seat].finished
    add("ambiguity-last-swap-target", "17", "moderno: a swap played as the last card, naming "
        "the other seat: it ends the hand before any exchange, the target changes nothing; the "
        "recorded match (moderno-2p-target) plays the same card with no target",
        ["Ambiguity", "Rules", "Swap"], b, k, list(recs[k:]), None)
