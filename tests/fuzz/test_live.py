"""Live mode against real `dernier host` and `dernier join` processes, a few seconds."""

from dernier_p2p.fuzz.live import run_live


def test_a_live_host_survives_fuzzed_connections_and_keeps_playing() -> None:
    report = run_live(cases=None, seconds=3, seed=5)
    assert report.crashes == 0 and report.hangs == 0, report.saved
    assert report.cases > 20
    counts = [n for name, n in report.kinds.items() if name.startswith("records@")]
    assert counts[-1] > counts[0]  # the match went on while it was fuzzed
