"""The cases of interop/cases/versions.json (PROTOCOL.md 20): each rule version 4 changed is
shown by the same moves judged under versions 3 and 4, with another verdict; a version-3 table
that names option leave is refused; every recorded match's file header names its table's
version."""

from __future__ import annotations

import pytest

from dernier_p2p.protocol.envelope import genesis_hash
from dernier_p2p.wire.canonical import decode
from interop.cases import CASES_DIR, load_cases, transcript
from interop.channel import TRANSCRIPT_MAGIC
from interop.gen.groups.versions import CONTRASTS, as_version
from interop.gen.scenarios import SCENARIOS, record_match

CASES = {c.id: c for c in load_cases()}


def _records(name: str) -> list[dict]:
    return [decode(raw) for raw in transcript(CASES_DIR, name)]


def _moves(records: list[dict]) -> list[tuple]:
    """What a record says apart from the chain: author, counter, body (an accept's table hash
    and record 0's version aside), host and time."""
    out = []
    for rec in records:
        env = rec["env"]
        body = {k: v for k, v in env["body"].items() if k not in ("version", "table")}
        out.append((env["seat"], env["n"], body, rec["h"], rec["i"], rec["t"]))
    return out


@pytest.mark.parametrize(("point", "name", "version"),
                         [(p, n, v) for p, n, v, *_ in CONTRASTS],
                         ids=[f"{p}-{n}" for p, n, *_ in CONTRASTS])
def test_the_same_moves_get_another_verdict_under_the_other_version(
    point: int, name: str, version: int
) -> None:
    """Point ``point`` (interop/README.md): the match ``name`` signed again as a table of
    ``version`` holds the same moves, record for record (up to its cut), and its verdict (or
    outcome) is not the recorded match's."""
    mine, other = _records(name), _records(f"{name}-as-v{version}")
    assert mine[0]["env"]["body"]["version"] == 7 - version
    assert other[0]["env"]["body"]["version"] == version
    assert 30 <= len(other) <= len(mine)
    assert _moves(other) == _moves(mine[: len(other)])
    assert other[0]["prev"] == genesis_hash(mine[0]["env"]["game"])
    assert all(a["hsig"] != b["hsig"] for a, b in zip(mine, other, strict=False))
    recorded = CASES[f"{name}-match"].expected
    signed_again = CASES[f"{name}-as-v{version}-match"].expected
    assert recorded["result"] == "valid" and recorded != signed_again


def test_the_contrasts_are_reproduced_by_the_generator() -> None:
    """Signing a recorded match again as the other version gives the stored file byte for byte
    (up to the stored cut)."""
    sc = next(s for s in SCENARIOS if s.name == "standard-2p-first-reverse")
    base = record_match(sc)
    assert base is not None and base.raw == list(transcript(CASES_DIR, sc.name))
    other = as_version(base, 3, "standard-2p-first-reverse-as-v3")
    stored = list(transcript(CASES_DIR, other.name))
    assert other.raw[: len(stored)] == stored
    assert CASES[f"{other.name}-match"].expected == {
        "result": "invalid", "code": "ILLEGAL_MOVE", "seat": 1, "index": len(stored) - 1}


@pytest.mark.parametrize("version", [2, 3])
def test_an_older_table_naming_option_leave_is_refused(version: int) -> None:
    case = CASES[f"version-{version}-table-leave"]
    assert case.expected == {"result": "invalid", "code": "TABLE_MISMATCH", "seat": 0,
                             "index": 0}
    rec0 = decode(bytes.fromhex(case.input["next"][0]))
    body = rec0["env"]["body"]
    assert body["version"] == version and body["options"]["leave"] == "play_on"


def test_every_transcript_header_names_its_tables_version() -> None:
    """Matches of version 3 (most) and 4 (those of the rules version 4 changed): the file's
    header byte is record 0's version."""
    seen = set()
    for path in sorted((CASES_DIR / "transcripts").glob("*.dtr")):
        data = path.read_bytes()
        assert data.startswith(TRANSCRIPT_MAGIC)
        version = data[len(TRANSCRIPT_MAGIC)]
        assert decode(transcript(CASES_DIR, path.stem)[0])["env"]["body"]["version"] == version
        seen.add(version)
    assert seen == {3, 4}
