import copy
import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dernier_p2p.deck.table import MESSAGE_FIELDS
from dernier_p2p.deck.transfer import MAX_BOX
from dernier_p2p.protocol.errors import CODES, ProtocolError
from dernier_p2p.protocol.messages import (
    BODY_FIELDS,
    MAX_CHAT,
    MAX_CHAT_BYTES,
    MOVE_FIELDS,
    body_to_move,
    clean_chat,
    deck_body,
    deck_message,
    is_progress,
    move_to_body,
    validate_body,
)
from dernier_p2p.rules.cards import Card, Rank, Suit
from dernier_p2p.rules.engine import legal_moves
from dernier_p2p.rules.moves import (
    CHANCE_TYPES,
    Catch,
    ChooseHandSize,
    Cut,
    Declare,
    Draw,
    Leave,
    NameSuit,
    Pass,
    Play,
    Timeout,
)
from dernier_p2p.rules.simulate import play_match
from dernier_p2p.rules.variants import VARIANTS
from dernier_p2p.wire.canonical import decode, encode
from tests.protocol import identities, table_body

HAND_VECTOR = Path(__file__).parents[2] / "vectors" / "hand.json"
N = 3
B32 = bytes(range(32))
VOTE = {"seat": 0, "after": 5, "sig": bytes(64)}
FACE = Card(Rank.N7, Suit.RED)


def deck_vector_bodies() -> list[tuple[int, dict]]:
    """(author, body) for every message of the deck's recorded 3-seat hand."""
    vec = json.loads(HAND_VECTOR.read_text())
    out = []
    for entry in vec["log"]:
        msg = decode(bytes.fromhex(entry))
        if "type" in msg:
            out.append((msg["seat"], deck_body(msg, vec["hand"])))
    return out


def examples() -> list[tuple[int, dict]]:
    """One or more valid (author, body) pairs of every body type and move kind."""
    keys = [k.public_bytes() for k in identities(N)]
    moves = [
        {"move": "play", "slot": 4, "suit": None, "target": None, "declare": False},
        {"move": "play", "slot": 0, "suit": 3, "target": 2, "declare": True},
        {"move": "draw"},
        {"move": "pass"},
        {"move": "declare"},
        {"move": "catch", "target": 0},
        {"move": "name_suit", "suit": 0},
        {"move": "hand_size", "size": 7},
        {"move": "hand_size", "size": 1},
        {"move": "cut", "keep": True},
    ]
    bodies = [
        (0, table_body(keys)),
        (0, {**table_body(keys), "timers": {"turn_ms": 0, "declare_ms": 0, "grace_ms": 0}}),
        (0, {"type": "timeout", "seat": 2, "votes": [VOTE]}),
        (0, {"type": "left", "seat": 1, "votes": [VOTE, {**VOTE, "seat": 2, "after": -1}]}),
        (0, {"type": "no_contest", "seat": 1, "votes": []}),
        (0, {"type": "no_contest", "seat": None, "votes": [VOTE]}),
        (1, {"type": "host_change", "old": 0, "new": 1, "votes": [VOTE]}),
        (2, {"type": "accept", "table": B32}),
        (1, {"type": "ack"}),
        (2, {"type": "resign"}),
        (1, {"type": "chat", "text": "Bea says: hello, table! ♥"}),
        (1, {"type": "coin_commit", "step": "dealer", "commit": B32}),
        (2, {"type": "coin_reveal", "step": "dealer", "value": B32}),
        (1, {"type": "complaint", "hand": 0, "ref": 3, "plaintext": None}),
        (2, {"type": "complaint", "hand": 5, "ref": 0, "plaintext": bytes(80)}),
        # the bounds: a step of 1 and of 64 characters, a plaintext of MAX_BOX bytes
        (1, {"type": "coin_commit", "step": "d", "commit": B32}),
        (2, {"type": "coin_reveal", "step": "x" * 64, "value": B32}),
        (2, {"type": "complaint", "hand": 5, "ref": 0, "plaintext": bytes(MAX_BOX)}),
        # boxes of 16 and of MAX_BOX bytes, for position 0
        (1, {"type": "transfer", "hand": 0, "position": 0, "to": 2, "epk": B32, "box": bytes(16),
             "commit": B32}),
        (2, {"type": "peek", "hand": 0, "position": 0, "to": 0, "epk": B32,
             "box": bytes(MAX_BOX), "commit": B32}),
        *[(1, {"type": "move", "hand": 2, **m}) for m in moves],
    ]
    return bodies + deck_vector_bodies()


EXAMPLES = examples()


def err(body, author=1, n=N, **kw) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        validate_body(body, author, n, **kw)
    assert info.value.seat == author
    return info.value


def test_examples_cover_every_type_and_move_kind():
    assert {b["type"] for _, b in EXAMPLES} == set(BODY_FIELDS)
    assert {b["move"] for _, b in EXAMPLES if b["type"] == "move"} == set(MOVE_FIELDS)


@pytest.mark.parametrize("author,body", EXAMPLES, ids=[b["type"] for _, b in EXAMPLES])
def test_valid_bodies_pass(author, body):
    assert validate_body(body, author, N, host_seat=0) is body
    assert validate_body(decode(encode(body)), author, N) == body


def test_deck_fields_follow_the_deck_table():
    for kind, fields in MESSAGE_FIELDS.items():
        assert BODY_FIELDS[kind] == fields | {"hand"}


def test_deck_message_round_trip():
    vec = json.loads(HAND_VECTOR.read_text())
    for entry in vec["log"]:
        msg = decode(bytes.fromhex(entry))
        if "type" in msg:
            body = deck_body(msg, 3)  # the message without its seat, with the hand number
            assert body == {**{k: v for k, v in msg.items() if k != "seat"}, "hand": 3}
            assert deck_message(body, msg["seat"]) == msg
    with pytest.raises(ValueError):
        deck_message({"type": "move"}, 0)
    with pytest.raises(ValueError):
        deck_body({"type": "ack", "seat": 0}, 0)


def test_deck_body_carries_no_seat():
    _, body = next(x for x in EXAMPLES if x[1]["type"] == "tokens")
    assert err({**body, "seat": 1}).code == "MALFORMED"


@pytest.mark.parametrize("author,body", EXAMPLES, ids=[b["type"] for _, b in EXAMPLES])
def test_missing_extra_and_mistyped_fields(author, body):
    for key in body:
        less = {k: v for k, v in body.items() if k != key}
        assert err(less, author).code == "MALFORMED", key
        assert err({**body, key: 1.5}, author).code in ("MALFORMED", "UNKNOWN_MESSAGE"), key
    assert err({**body, "extra": 0}, author).code == "MALFORMED"


def test_not_a_map_and_untyped():
    for body in (None, [], "ack", {"table": B32}, {"type": 3}, {"type": None}):
        assert err(body).code == "MALFORMED"


def test_unknown_type_and_move_kind():
    assert err({"type": "emote", "text": "hi"}).code == "UNKNOWN_MESSAGE"
    assert err({"type": "move", "hand": 0, "move": "fold"}).code == "UNKNOWN_MESSAGE"
    assert err({"type": "move", "hand": 0, "move": 3}).code == "UNKNOWN_MESSAGE"


def test_chat_text_limits_and_characters():
    ok = {"type": "chat", "text": "x" * MAX_CHAT}
    assert validate_body(ok, 1, N) is ok
    one = {"type": "chat", "text": "x"}  # 1 character is the least
    assert validate_body(one, 1, N) is one
    assert validate_body({"type": "chat", "text": "é" * MAX_CHAT}, 1, N)  # 400 bytes
    too_long = err({"type": "chat", "text": "x" * (MAX_CHAT + 1)})
    assert too_long.code == "MALFORMED" and "characters" in too_long.detail
    too_big = err({"type": "chat", "text": "€" * 134})  # 134 characters, 402 bytes
    assert too_big.code == "MALFORMED" and "bytes" in too_big.detail
    for text in ("", "red \x1b[31mtext", "two\nlines", "tab\there", "bell\x07",
                 "\u202eright to left", "nul\x00", "\x9bcsi", "\ud800"):
        assert err({"type": "chat", "text": text}).code == "MALFORMED", repr(text)
    assert err({"type": "chat", "text": b"bytes"}).code == "MALFORMED"


def test_clean_chat_strips_what_the_schema_refuses():
    assert clean_chat("  hi\x1b[31m red\tthere\n") == "hi[31m red there"
    assert clean_chat("\x00\x07\n") == ""
    assert len(clean_chat("x" * 500)) == MAX_CHAT
    assert clean_chat("€" * 200) == "€" * 133  # 399 bytes: a 134th would make 402
    assert len(("é" * 200).encode()) == MAX_CHAT_BYTES
    assert clean_chat("é" * 200) == "é" * 200  # exactly MAX_CHAT_BYTES is kept whole
    assert clean_chat("x" * 199 + " y") == "x" * 199  # no blank left at the cut
    for text in ("\u202eabc", "a\u2028b", "ok"):
        validate_body({"type": "chat", "text": clean_chat(text)}, 1, N)


def test_talk_and_head_echoes_are_no_progress():
    """7.5, 18: a ``chat`` or an ``ack`` moves nothing on; every other body does."""
    idle = {b["type"] for _, b in EXAMPLES if is_progress(b) is False}
    moving = {b["type"] for _, b in EXAMPLES if is_progress(b) is True}
    assert idle == {"chat", "ack"} and moving == set(BODY_FIELDS) - idle


def test_version():
    table = copy.deepcopy(EXAMPLES[0][1])
    for old_or_new in (1, 2, 3, 4, 6):
        table["version"] = old_or_new
        refusal = err(table, 0)
        assert refusal.code == "VERSION" and f"version {old_or_new}" in str(refusal)
    table["version"] = True
    assert err(table, 0).code == "MALFORMED"


def test_host_only_bodies():
    for body in ({"type": "timeout", "seat": 2, "votes": [VOTE]},
                 {"type": "left", "seat": 1, "votes": [VOTE]},
                 {"type": "no_contest", "seat": None, "votes": []}, EXAMPLES[0][1]):
        validate_body(body, 1, N)  # without a host seat the author is not checked
        assert err(body, 1, host_seat=0).code == "WRONG_SEAT"
        validate_body(body, 0, N, host_seat=0)


def test_host_change_is_authored_by_the_new_host():
    v = [VOTE]
    assert err({"type": "host_change", "old": 0, "new": 1, "votes": v}, 2).code == "WRONG_SEAT"
    assert err({"type": "host_change", "old": 1, "new": 1, "votes": v}, 1).code == "MALFORMED"
    assert err({"type": "host_change", "old": 0, "new": 3, "votes": v}, 1).code == "MALFORMED"
    assert err({"type": "host_change", "old": 0, "new": 1}, 1).code == "MALFORMED"


@pytest.mark.parametrize(
    "votes",
    [
        [],  # a timeout needs at least one vote
        [VOTE] * 11,
        [{**VOTE, "seat": 3}],
        [{**VOTE, "after": -2}],
        [{**VOTE, "after": True}],
        [{**VOTE, "sig": bytes(63)}],
        [{"seat": 0, "after": 1}],
        [{**VOTE, "extra": 1}],
        "votes",
    ],
)
def test_bad_votes_are_malformed(votes):
    assert err({"type": "timeout", "seat": 1, "votes": votes}, 0).code == "MALFORMED"


@pytest.mark.parametrize(
    "body",
    [
        {"type": "timeout", "seat": 3, "votes": [VOTE]},
        {"type": "timeout", "seat": -1, "votes": [VOTE]},
        {"type": "left", "seat": True, "votes": [VOTE]},
        {"type": "no_contest", "seat": 3, "votes": []},
        {"type": "accept", "table": bytes(31)},
        {"type": "coin_commit", "step": "", "commit": B32},
        {"type": "coin_commit", "step": "x" * 65, "commit": B32},
        {"type": "coin_reveal", "step": "dealer\n", "value": B32},
        {"type": "coin_reveal", "step": "dealer", "value": bytes(33)},
        {"type": "key_commit", "hand": -1, "commit": B32},
        {"type": "key_commit", "hand": 0, "commit": "x"},
        {"type": "secret", "hand": 0, "secret": bytes(31)},
        {"type": "complaint", "hand": 0, "ref": -1, "plaintext": None},
        {"type": "complaint", "hand": 0, "ref": 0, "plaintext": bytes(MAX_BOX + 1)},
        {"type": "transfer", "hand": 0, "position": 1, "to": 3, "epk": B32, "box": bytes(48),
         "commit": B32},
        {"type": "peek", "hand": 0, "position": 1, "to": 0, "epk": B32, "box": bytes(15),
         "commit": B32},
        {"type": "peek", "hand": 0, "position": 1, "to": 0, "epk": B32,
         "box": bytes(MAX_BOX + 1), "commit": B32},
        {"type": "peek", "hand": 0, "position": 2**16, "to": 0, "epk": B32, "box": bytes(48),
         "commit": B32},
        {"type": "tokens", "hand": 0, "tokens": []},
        {"type": "tokens", "hand": 0,
         "tokens": [{"position": 0, "owner": 5, "token": B32, "proof": {"e": B32, "s": B32}}]},
        {"type": "tokens", "hand": 0,
         "tokens": [{"position": 0, "owner": 1, "token": B32, "proof": {"e": B32}}]},
        {"type": "move", "hand": 0, "move": "play", "slot": 0, "suit": 4, "target": None,
         "declare": False},
        {"type": "move", "hand": 0, "move": "play", "slot": 0, "suit": None, "target": 3,
         "declare": False},
        {"type": "move", "hand": 0, "move": "play", "slot": 0, "suit": None, "target": None,
         "declare": 1},
        {"type": "move", "hand": 0, "move": "play", "slot": -1, "suit": None, "target": None,
         "declare": False},
        {"type": "move", "hand": 0, "move": "draw", "slot": 0},
        {"type": "move", "hand": 0, "move": "name_suit", "suit": None},
        {"type": "move", "hand": 0, "move": "hand_size", "size": 0},
        {"type": "move", "hand": 0, "move": "cut", "keep": None},
        {"type": "move", "hand": 0, "move": "catch", "target": None},
        {"type": "move", "move": "draw"},
    ],
    ids=lambda b: f"{b['type']}-{b.get('move', '')}",
)
def test_out_of_range_fields(body):
    assert err(body).code == "MALFORMED"


def _table(**changes):
    t = copy.deepcopy(EXAMPLES[0][1])
    for path, value in changes.items():
        *where, last = path.split("__")
        target = t
        for k in where:
            target = target[int(k)] if k.isdigit() else target[k]
        target[int(last) if last.isdigit() else last] = value
    return t


@pytest.mark.parametrize(
    "changes",
    [
        {"players": []},
        {"players__0__key": bytes(32)},  # the neutral element: a small-order key
        {"players__1__key": bytes(31)},
        {"players__0__name": ""},
        {"players__0__name": "\x1b[31mred"},
        {"players__1__listen": ["host", 0]},
        {"players__1__listen": ["host"]},
        {"players__1__listen": [None, 80]},
        {"players__1__listen": "host:80"},
        {"timers__turn_ms": -1},
        {"timers__turn_ms": 2**31},
        {"timers": {"turn_ms": 1}},
        {"options": {1: 2}},
        {"options": []},
        {"variant": ""},
    ],
)
def test_malformed_tables(changes):
    assert err(_table(**changes), 0).code == "MALFORMED"


def test_table_has_one_player_per_seat_and_distinct_keys():
    assert err(EXAMPLES[0][1], 0, n=4).code == "MALFORMED"
    t = _table()
    t["players"][2]["key"] = t["players"][0]["key"]
    assert err(t, 0).code == "MALFORMED"


def test_shuffle_proof_lengths_follow_the_deck():
    _, body = next(x for x in EXAMPLES if x[1]["type"] == "shuffle")
    for key in ("c", "c_hat", "s", "s_hat", "s_prime", "t", "t_hat"):
        b = copy.deepcopy(body)
        b["proof"][key] = b["proof"][key][:-1]
        assert err(b, 1).code == "MALFORMED", key
    b = copy.deepcopy(body)
    b["deck"] = b["deck"][:-1]
    assert err(b, 1).code == "MALFORMED"
    for ct in ([B32], [B32, B32, B32]):  # a ciphertext is a pair
        b = copy.deepcopy(body)
        b["deck"][0] = ct
        assert err(b, 1).code == "MALFORMED"



def test_length_bounds_start_at_one():
    """A variant name of one character and a shuffle of a one-card deck are well formed (the
    rules set-up and the shuffle proof judge them, not the schema); empty ones are not."""
    t = _table(variant="x")
    assert validate_body(t, 0, N) is t
    _, body = next(x for x in EXAMPLES if x[1]["type"] == "shuffle")
    one = copy.deepcopy(body)
    one["deck"] = one["deck"][:1]
    for key in ("c", "c_hat", "s_hat", "s_prime", "t_hat"):
        one["proof"][key] = one["proof"][key][:1]
    assert validate_body(one, 1, N) is one
    one["deck"] = []
    assert err(one, 1).code == "MALFORMED"

# ---------------------------------------------------------------------- fuzzing
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), st.binary(max_size=70),
    st.text(max_size=10),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)


def _paths(v, prefix=()):
    yield prefix
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _paths(x, (*prefix, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _paths(x, (*prefix, i))


def _mutate(body, data):
    body = copy.deepcopy(body)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(body) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = body
        for k in path[:-1]:
            parent = parent[k]
        action = data.draw(st.sampled_from(["replace", "delete", "add", "resize"]))
        key = path[-1]
        if action == "replace":
            parent[key] = data.draw(values)
        elif action == "delete":
            del parent[key]
        elif action == "add" and isinstance(parent, dict):
            parent[data.draw(st.text(max_size=6))] = data.draw(values)
        elif action == "add":
            parent.append(data.draw(values))
        elif isinstance(parent[key], bytes):
            parent[key] = parent[key][:-1] if data.draw(st.booleans()) else parent[key] + b"\0"
        elif isinstance(parent[key], int) and not isinstance(parent[key], bool):
            parent[key] = data.draw(st.sampled_from([-1, parent[key] + 1, 2**63, 2**16]))
    return body


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_mutations_raise_only_protocol_errors(data):
    author, body = data.draw(st.sampled_from(EXAMPLES))
    mutated = _mutate(body, data)
    try:
        out = validate_body(mutated, author, N, host_seat=0 if author == 0 else None)
    except ProtocolError as exc:
        assert exc.seat == author and exc.code in CODES
    else:
        assert out is mutated
        encode(out)


# ---------------------------------------------------------------------- move codec
def test_move_codec_by_hand():
    cases = [
        (Play(1, 5, FACE), FACE),
        (Play(1, 0, Card(Rank.WILD, None), Suit.BLUE, 2, True), Card(Rank.WILD, None)),
        (Draw(1), None),
        (Pass(1), None),
        (Declare(1), None),
        (Catch(1, 2), None),
        (NameSuit(1, Suit.GREEN), None),
        (ChooseHandSize(1, 5), None),
        (Cut(1, True, FACE), FACE),
        (Cut(1, False, None), None),
    ]
    for move, face in cases:
        body = move_to_body(move, 4)
        assert body["hand"] == 4
        validate_body(decode(encode(body)), 1, N)
        assert body_to_move(decode(encode(body)), 1, face) == move


def test_timeout_and_leave_bodies():
    assert move_to_body(Timeout(2), 0) == {"type": "timeout", "seat": 2, "votes": []}
    assert move_to_body(Leave(1), 0) == {"type": "left", "seat": 1, "votes": []}
    assert body_to_move({"type": "timeout", "seat": 2, "votes": [VOTE]}, 0) == Timeout(2)
    assert body_to_move({"type": "left", "seat": 1, "votes": [VOTE]}, 0) == Leave(1)


def test_codec_misuse_is_a_value_error():
    with pytest.raises(ValueError):
        body_to_move(move_to_body(Play(1, 5, FACE), 0), 1, None)
    with pytest.raises(ValueError):
        body_to_move({"type": "ack"}, 1)
    from dernier_p2p.rules.moves import ChooseDealer

    with pytest.raises(ValueError):
        move_to_body(ChooseDealer(0), 0)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_move_codec_round_trips_every_move_of_real_matches(variant):
    rules = VARIANTS[variant]
    rng = random.Random(variant)

    def policy(state, seat, view):
        return rng.choice(legal_moves(state, seat, view))

    _, moves = play_match(rules, 3, [policy] * 3, seed=variant, max_moves=400)
    seat_moves = [m for m in moves if not isinstance(m, CHANCE_TYPES)]
    assert len(seat_moves) > 50
    for m in seat_moves:
        body = decode(encode(move_to_body(m, 1)))
        validate_body(body, m.seat, 3)
        face = getattr(m, "card", None)
        assert body_to_move(body, m.seat, face) == m
