"""The live check judges transcript files through an adapter; frames judged by our adapter."""

from __future__ import annotations

import io

from interop.adapters.dernier_p2p_adapter import Verifier, verify_frame
from interop.cases import CASES_DIR, transcript
from interop.channel import read_transcript_records, write_transcript_records
from interop.live import check


def test_live_check_valid_and_tampered(tmp_path):
    records = list(transcript(CASES_DIR, "dernier-4p-left-ends"))  # a match of version 4
    good = tmp_path / "good.dtr"
    write_transcript_records(good, records, 4)
    bad = tmp_path / "bad.dtr"
    tampered = bytearray(records[9])
    tampered[-10] ^= 1  # a bit of the record signature
    write_transcript_records(bad, [*records[:9], bytes(tampered), *records[10:]], 4)
    junk = tmp_path / "junk.dtr"
    junk.write_bytes(b"not a transcript")
    out = io.StringIO()
    assert check([good], out=out) == 0
    assert "VALID" in out.getvalue()
    out = io.StringIO()
    assert check([good, bad, junk], out=out) == 2
    text = out.getvalue()
    assert "BAD_SIGNATURE seat 0 record 9" in text and "UNREADABLE" in text


def test_verifier_reuses_a_prefix_and_judges_alike():
    records = list(transcript(CASES_DIR, "dernier-4p-left-ends"))
    v = Verifier()
    assert v.records(records[:20], []).result == "valid"
    fed = v.trunk
    nxt = bytearray(records[20])
    nxt[5] ^= 1
    got = v.records(records[:20], [bytes(nxt)])
    assert v.trunk is fed  # the prefix was not fed again
    fresh = Verifier().records(records[:20] + [bytes(nxt)], [])
    assert (got.result, got.code, got.seat, got.index) == (
        fresh.result, fresh.code, fresh.seat, fresh.index) and got.result == "invalid"
    assert v.records(records, []).result == "valid"


def test_frame_verdicts():
    assert verify_frame(b"\x00\x00\x00\x01\x80").result == "invalid"  # an empty map: no kind
    ok = b"\x00\x00\x00\x0d" + bytes.fromhex("82a16ba7")  # truncated on purpose below
    assert verify_frame(ok).code == "MALFORMED"
    assert verify_frame((1 << 20).to_bytes(4, "big") + b"x").code == "MALFORMED"
    assert verify_frame(((1 << 20) + 1).to_bytes(4, "big")).code == "OVERSIZED"
    assert verify_frame(b"").code == "MALFORMED"


def test_a_transcript_as_a_client_writes_it_is_judged(tmp_path):
    """What ``dernier host --transcript`` writes (PROTOCOL.md 21: the header names version 5,
    a version-5 match) is what the live check reads; a version-1 file is refused naming the
    versions the cases hold."""
    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.protocol.local import run_local_match
    from dernier_p2p.wire.canonical import encode
    from dernier_p2p.wire.transcript import TranscriptWriter

    seeds = [bytes([0x50 + k]) * 32 for k in range(2)]
    result = run_local_match("dernier", 2, seeds, [HeuristicBot(0), HeuristicBot(1)],
                             options={"match": ["hands", 1]})
    assert result.records[0]["env"]["body"]["version"] == 5
    written = tmp_path / "host.dtr"
    with TranscriptWriter(written) as writer:
        for rec in result.records:
            writer.append(rec)
    assert read_transcript_records(written) == [encode(rec) for rec in result.records]
    old = tmp_path / "old.dtr"
    old.write_bytes(b"DERNIER-TRANSCRIPT\n\x01" + written.read_bytes()[20:])
    out = io.StringIO()
    assert check([written, old], out=out) == 1
    text = out.getvalue()
    assert f"VALID      {written}" in text
    assert "UNREADABLE" in text and "protocol version 1" in text
    assert "versions 3, 4 and 5" in text


def test_a_header_that_names_another_version_than_record_0_is_refused(tmp_path):
    """The header byte is not signed: a version-4 match under a version-5 header (or the
    reverse) is refused before the adapter judges its records, naming both versions, as
    ``dernier verify`` refuses it; record 0's own version is what the check reads."""
    from interop.channel import table_version

    records = list(transcript(CASES_DIR, "dernier-4p-left-ends"))  # a match of version 4
    assert table_version(records[0]) == 4 and table_version(records[1]) is None
    assert table_version(b"\xc1") is None  # not msgpack at all: the judge's business
    for header in (5, 3):
        wrong = tmp_path / f"h{header}.dtr"
        write_transcript_records(wrong, records, header)
        out = io.StringIO()
        assert check([wrong], out=out) == 1
        assert (f"UNREADABLE {wrong}: its header names protocol version {header} but its "
                "table (record 0) is of version 4") in out.getvalue(), out.getvalue()
    right = tmp_path / "h4.dtr"
    write_transcript_records(right, records, 4)
    out = io.StringIO()
    assert check([right], out=out) == 0, out.getvalue()
