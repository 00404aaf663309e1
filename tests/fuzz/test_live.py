"""Live mode against real `dernier host` and `dernier join` processes, a few seconds."""

from dernier_p2p.fuzz.live import run_live


def test_a_live_host_survives_fuzzed_connections_and_keeps_playing() -> None:
    report = run_live(cases=None, seconds=3, seed=5)
    assert report.crashes == 0 and report.hangs == 0, report.saved
    assert report.cases > 20
    counts = [n for name, n in report.kinds.items() if name.startswith("records@")]
    assert counts[-1] > counts[0]  # the match went on while it was fuzzed


def test_only_a_whole_watching_frame_counts_as_a_watcher_served() -> None:
    """A valid ``watch`` opening is accepted and served, not closed: the harness counts its
    ``watching`` frame as the answer, and nothing else that stays open."""
    from dernier_p2p.fuzz.live import _watching
    from dernier_p2p.net import handshake as hs

    def frame(msg: dict) -> bytes:
        payload = hs.pack(msg)
        return len(payload).to_bytes(4, "big") + payload

    watching = frame({"k": "watching", "last": 40})
    assert _watching(watching) and _watching(watching + b"\x00\x00")
    assert not _watching(watching[:-1]) and not _watching(b"")
    assert not _watching(frame(hs.error_message("MALFORMED", "x")))
    assert not _watching(b"\x00\x00\x00\x02\xc1\xc1")  # not msgpack
