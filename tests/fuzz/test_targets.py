"""A short budget of every in-process fuzz target: no crash, no hang, and every case runs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from dernier_p2p.fuzz import finality_target
from dernier_p2p.fuzz.runner import run
from dernier_p2p.fuzz.targets import EXPECTED, IN_PROCESS, Target, Targets
from dernier_p2p.protocol.finality import goes_over
from dernier_p2p.wire.canonical import encode


@pytest.fixture(scope="module")
def targets() -> Targets:
    t = Targets(checkpoints=3)
    t.warm()
    return t


@pytest.mark.parametrize("name", IN_PROCESS)
def test_a_short_budget_finds_no_crash(targets: Targets, name: str, tmp_path: Path) -> None:
    report = run(targets.get(name), cases=150, seconds=20, seed=1, out=tmp_path)
    assert report.crashes == 0 and report.hangs == 0, report.saved
    assert report.cases > 0 and report.peak_kib > 0
    if name not in ("transcript", "relay", "group", "finality"):  # a verdict, own refusals,
        # a comparison, pure functions that refuse nothing
        assert report.refused > report.cases // 2  # the mutations reach the checks


def test_the_deep_checks_are_reached(targets: Targets) -> None:
    """Re-signed mutated records get past the signatures to the session's own checks."""
    report = run(targets.get("records"), cases=300, seconds=30, seed=2)
    assert report.kinds.get("BAD_SIGNATURE", 0) < report.refused
    deep = set(report.kinds) - {"BAD_SIGNATURE", "MALFORMED", "OVERSIZED"}
    assert deep, report.kinds


def test_a_crash_is_counted_and_saved_with_its_reproducer(tmp_path: Path) -> None:
    def boom(data: bytes) -> None:
        if data == b"\x02":
            raise ZeroDivisionError("a bug")

    target = Target("toy", lambda rng: bytes([rng.randrange(4)]), boom)
    report = run(target, cases=200, seed=3, out=tmp_path)
    assert report.crashes > 0 and len(report.saved) == report.crashes
    repro = Path(report.saved[0])
    assert repro.read_bytes() == b"\x02"
    assert "ZeroDivisionError" in repro.with_suffix(".txt").read_text()
    assert "--seed 3 --only" in repro.with_suffix(".txt").read_text()


def test_a_hang_is_interrupted_and_counted(tmp_path: Path) -> None:
    def slow(data: bytes) -> None:
        while data == b"\x01":
            pass

    target = Target("toy", lambda rng: bytes([rng.randrange(8)]), slow)
    report = run(target, cases=20, seed=4, out=tmp_path, hang_s=0.2)
    assert report.hangs > 0 and report.crashes == 0


def test_every_table_frame_seed_passes_its_receivers_check(targets: Targets) -> None:
    """The seeds of the frames about a table (ready, vote, status, done, link, probe, present,
    relay openings) are what honest senders send: each passes the receiver's own check, and
    the same frame with one field too many is refused with a protocol error."""
    kinds = {f["k"] for f in targets.table_frames}
    assert {"ready", "vote", "status", "done", "link", "probe", "present", "relay-host",
            "relay-join", "relay-answer"} <= kinds
    for frame in targets.table_frames:
        targets.run_frame(encode(frame))
        with pytest.raises(EXPECTED):
            targets.run_frame(encode({**frame, "x": 1}))


def test_records_of_chat_votes_a_host_change_a_seat_out_and_a_resign_are_fuzzed(
    targets: Targets,
) -> None:
    m = targets.matches[1]
    fuzzed = {m.records[at]["env"]["body"]["type"] for k, at in targets.spots if k == 1}
    assert {"chat", "timeout", "host_change", "left", "resign"} <= fuzzed


def _relay_runs(cases: int) -> list:
    import random

    import trio
    import trio.testing

    from dernier_p2p.fuzz import relay_target

    runs = []
    for k in range(cases):
        one = relay_target._Run(relay_target.make(random.Random(f"1:{k}")))
        trio.run(one.main, clock=trio.testing.MockClock(autojump_threshold=0))
        runs.append(one.relay)
    return runs


def test_the_relay_target_pairs_tables_and_reaches_every_cap() -> None:
    """Besides the clean pair each case ends with, the scripts pair hosts and joiners, forward
    frames, and evict at the small caps (every admission gate)."""
    relays = _relay_runs(600)  # (trio's scheduler varies the interleaving from run to run:
    # measured over 600 cases, the joiners' cap was met 10 to 15 times, registrations' 52-54)
    assert sum(r.stats.pairs - 1 for r in relays) >= 5
    assert sum(r.stats.frames - 1 for r in relays) >= 5
    for gate in ("pending", "registrations", "joining"):
        assert sum(getattr(r, gate).evictions for r in relays) > 0, gate


def test_the_relay_target_finds_a_relay_that_keeps_a_gone_table(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    from dernier_p2p.fuzz import relay_target

    class Leaky(relay_target.rl.Relay):
        async def _host(self, stream, token, source):  # noqa: ANN001, ANN202
            try:
                await super()._host(stream, token, source)
            finally:
                self.tables.setdefault(token, None)  # kept after its host has gone

    monkeypatch.setattr(relay_target.rl, "Relay", Leaky)
    report = run(Targets().get("relay"), cases=60, seed=1, out=tmp_path)
    assert report.crashes > 0
    assert "still registered" in Path(report.saved[0]).with_suffix(".txt").read_text()


def test_the_finality_target_reaches_a_seat_going_over(targets: Targets) -> None:
    """Some cases split two histories where one shows the split record final and the other
    does not: :func:`~dernier_p2p.protocol.finality.goes_over` answers yes there."""
    rng = random.Random(5)
    over = 0
    for _ in range(150):
        own, other, m = targets.make_finality(rng)
        finality_target.run((own, other, m))
        if isinstance(m, int) and not isinstance(m, bool) and m >= 2:
            over += goes_over(own, other, m) or goes_over(other, own, m)
    assert over > 0
