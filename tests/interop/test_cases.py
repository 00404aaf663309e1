"""The case files: format, coverage of the protocol, ties to PROTOCOL.md, vectors in it."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from dernier_p2p.protocol.frames import FRAME_FIELDS
from dernier_p2p.protocol.messages import BODY_FIELDS, MOVE_FIELDS
from dernier_p2p.rules import VARIANTS
from dernier_p2p.wire.canonical import decode, encode
from interop.cases import CASES_DIR, load_cases, transcript

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = (ROOT / "PROTOCOL.md").read_text()


def _records(name: str) -> list[dict]:
    return [decode(b) for b in transcript(CASES_DIR, name)]


def test_enough_cases_with_unique_ids_and_known_codes():
    cases = load_cases()
    assert len(cases) >= 150
    codes = set(re.findall(r"^\| `([A-Z_]+)` \|", PROTOCOL, re.M))
    codes |= {"OVERSIZED", "UNEXPECTED"}
    for c in cases:
        if c.expected["result"] == "invalid":
            assert c.expected["code"] in codes, c.id
    kinds = Counter(c.expected["result"] for c in cases)
    assert kinds["valid"] >= 20 and kinds["invalid"] >= 130


def test_every_case_names_an_existing_section():
    heads = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", PROTOCOL, re.M))
    for c in load_cases():
        assert c.section in heads, (c.id, c.section)
        assert c.comment and c.flags, c.id


def test_valid_matches_cover_every_variant_seat_count_type_and_kind():
    cases = load_cases()
    matches = [c for c in cases if c.expected["result"] == "valid" and
               set(c.input) == {"transcript"}]
    variants, players, types, kinds = set(), set(), set(), set()
    for c in matches:
        recs = _records(c.input["transcript"])
        table = recs[0]["env"]["body"]
        variants.add(table["variant"])
        players.add(len(table["players"]))
        for r in recs:
            body = r["env"]["body"]
            types.add(body["type"])
            if body["type"] == "move":
                kinds.add(body["move"])
    assert variants == set(VARIANTS)
    assert min(players) == 2 and max(players) == 10
    # complaints arise only against a bad box, so they are among the invalid cases; bots do not
    # chat, so a chat is in valid cases of its own
    assert set(BODY_FIELDS) - {"complaint", "chat"} <= types, set(BODY_FIELDS) - types
    chats = [c for c in cases if c.expected["result"] == "valid" and "Chat" in c.flags]
    assert len(chats) >= 2
    assert kinds == set(MOVE_FIELDS)


def test_complaints_among_invalid_cases():
    cases = [c for c in load_cases() if "Complaint" in c.flags]
    assert len(cases) >= 2
    for c in cases:
        nxt = [decode(bytes.fromhex(h)) for h in c.input["next"]]
        assert any(r["env"]["body"]["type"] == "complaint" for r in nxt)
        assert c.expected["code"] == "DECK_FAULT" and c.expected["index"] == (
            c.input["prefix"] + len(c.input["next"]) - 1
        )


def test_rule_events_covered():
    flags = {f for c in load_cases() for f in c.flags}
    for event in ("ChainGrew", "ChainCancelled", "JumpedIn", "HandsSwapped", "HandsRotated",
                  "Reshuffled", "Caught", "Drew:penalty-declaration", "Forfeited",
                  "Drew:penalty-timeout", "Drew:timeout-draw", "CutKept", "HandSizeChosen"):
        assert f"event:{event}" in flags, event


def test_invalid_kinds_covered():
    flags = {f for c in load_cases() if c.expected["result"] == "invalid" for f in c.flags}
    for probe in ("RecordSignature", "EnvelopeSignature", "BrokenChain", "BadProof", "Replay",
                  "IllegalMove", "CardNotHeld", "WrongToken", "Encoding", "Oversized",
                  "UnknownMessage", "UnknownField", "Fork", "Counter", "HostChange", "Version",
                  "Handshake", "Complaint", "LiveCheat"):
        assert probe in flags, probe


def test_every_frame_kind_has_its_cases_and_its_row_in_the_protocol():
    """Each kind of the implementation's frame table is a row of the table of PROTOCOL.md 4.1
    naming its fields, and has a valid frame, one with an extra field and one with a field
    missing (a beat has no field to miss)."""
    section = PROTOCOL.split("### 4.1 Frames", 1)[1].split("### 4.2", 1)[0]
    rows = dict(re.findall(r"^\| `([a-z]+)` \|[^|]*\|(.*)\|$", section, re.M))
    del rows["k"]  # the header
    assert set(rows) == set(FRAME_FIELDS)
    for kind, fields in FRAME_FIELDS.items():
        assert fields - {"k"} <= set(re.findall(r"`([a-z_]+)`", rows[kind])), kind
    cases = {c.id: c for c in load_cases() if c.id.startswith("frame-")}
    for kind in FRAME_FIELDS:
        assert cases[f"frame-{kind}-valid"].expected["result"] == "valid"
        assert cases[f"frame-{kind}-extra"].expected["code"] == "MALFORMED"
        missing = [c for i, c in cases.items() if i.startswith(f"frame-{kind}-no-")]
        assert len(missing) == (kind != "beat"), kind
        assert all(c.expected["code"] == "MALFORMED" for c in missing)


def test_transcripts_are_small_and_canonical():
    total = 0
    for path in sorted((CASES_DIR / "transcripts").glob("*.dtr")):
        total += path.stat().st_size
        for raw in transcript(CASES_DIR, path.stem):
            assert encode(decode(raw)) == raw
    # about 2.7 MB of it the whole matches (to the end by score), 0.5 MB the one-hand tie
    # matches and the two-penalty match (ambiguity points 17 and 18), 0.2 MB the host skip,
    # 0.24 MB the originale match whose second hand follows a seat out (points 19 and 20),
    # 0.2 MB the three short matches of the seed-rule points 26 to 28, 0.45 MB the version-4
    # match that plays on after a leave and those matches signed again as the other version
    assert total < 7_800_000


def test_protocol_appendix_quotes_the_vector_files():
    vectors = json.loads((ROOT / "vectors/envelope.json").read_text())
    prims = json.loads((ROOT / "vectors/primitives.json").read_text())
    flat = re.sub(r"\s+", "", PROTOCOL)
    for key in ("host_public_key", "author_public_key", "genesis_hash", "envelope_sig",
                "envelope_signed_message", "envelope_canonical", "envelope_hash",
                "record_signed_message", "record_hsig", "record_canonical", "record_hash"):
        assert vectors[key] in flat, key
    for key in ("x", "share", "xpub", "nonce", "commit"):
        assert prims["key"][key] in flat, key
    assert prims["key"]["proof"]["e"] in flat and prims["key"]["proof"]["s"] in flat
    basics = json.loads((ROOT / "vectors/basics.json").read_text())
    assert basics["identity_element"] in flat
    for deck in basics["decks"].values():
        assert deck["sha256_of_canonical_list"] in flat
    for key in ("block0_first_32", "block1_first_32", "then_scalar"):
        assert basics["drbg"][key] in flat, key
    example = encode({"b": 1, "a": [True, None, "x", b"\x01", -1, 300]}).hex()
    assert example in flat


def test_whole_matches_end_every_way_with_their_outcome():
    """Every variant has a whole match ending by number of hands and one by target, originale
    one by wins, moderno one by penalty limit; each case expects the match's outcome, and the
    last record is the one that ends the match (nothing after it)."""
    from interop.gen.scenarios import MATCH_ENDS

    cases = {c.id: c for c in load_cases()}
    kinds = {(v, k) for v, k, _ in MATCH_ENDS}
    for variant in VARIANTS:
        assert {(variant, "hands"), (variant, "target")} <= kinds, variant
    assert {("originale", "wins"), ("moderno", "penalty_limit")} <= kinds
    for variant, kind, value in MATCH_ENDS:
        name = f"{variant}-2p-{kind}"
        case = cases[f"{name}-match"]
        assert case.input == {"transcript": name}
        out = case.expected["outcome"]
        assert case.expected["result"] == "valid"
        assert sorted(out["standings"]) == [0, 1] and out["winner"] == out["standings"][0]
        assert len(out["scores"]) == len(out["match_points"]) == 2
        records = _records(name)
        assert records[0]["env"]["body"]["options"]["match"] == [kind, value]
        # a prefix of the match is not over: no outcome expected
        assert "outcome" not in cases[f"{name}-prefix-half"].expected
    # every other case expects no outcome unless its records end a match
    ends = [c for c in cases.values() if "outcome" in c.expected]
    assert all(c.expected["result"] == "valid" for c in ends)
