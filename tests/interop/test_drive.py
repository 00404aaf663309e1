"""The live conformance check of a client's behaviour (``python -m interop.drive``): every
scenario passes against this project's ``dernier join``; a client that never votes fails,
the missing vote named; the scenario definitions stay consistent with PROTOCOL.md and the
README; the verdict rules."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from interop.drive.cli import main
from interop.drive.events import Event
from interop.drive.hosting import HOST_FAULTS
from interop.drive.model import Expect, Forbid, Scenario
from interop.drive.scenarios import SCENARIOS, by_name
from interop.drive.stage import STAGE_FAULTS, fill
from interop.drive.verdict import judge

ROOT = Path(__file__).resolve().parents[2]
NONVOTING = f"{sys.executable} -m tests.interop.nonvoting_seat {{addr}} {{listen}}"
CUES = re.compile(r"^(start|play|turn:\w+|record:\d+)$")


def _drive(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # the clients import this checkout too
    return subprocess.run([sys.executable, "-m", "interop.drive", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, env=env)


# ---------------------------------------------------------------------------- live runs
@pytest.mark.slow
def test_every_scenario_passes_against_dernier_join() -> None:
    # (two scenarios at a time, to keep the suite's load down; both faults once seen at four
    # were the driver's: a `play` cue that waited for a suit an idle dealer never names, and an
    # error frame noted before envelopes read ahead of it)
    run = _drive("--jobs", "2", "-v", timeout=600)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    for sc in SCENARIOS:
        assert re.search(rf"^PASS  {re.escape(sc.name)} ", out, re.M), out
    assert f"{len(SCENARIOS)} of {len(SCENARIOS)} scenarios passed" in out


@pytest.mark.slow
def test_a_client_that_never_votes_fails_and_the_missing_vote_is_named() -> None:
    run = _drive("--client", NONVOTING, "--only", "join", "--only", "timeout",
                 "--timeout", "20", timeout=120)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert re.search(r"^PASS  join ", out, re.M), out  # it joins and plays: only votes lack
    assert re.search(r"^FAIL  timeout +7\.5\.5 timeout, 18 ", out, re.M), out
    assert "expected a timeout vote about the seat whose time ran out" in out, out
    assert "1 of 2 scenarios passed" in out


# ---------------------------------------------------------------------------- the data
def _sections() -> set[str]:
    text = (ROOT / "PROTOCOL.md").read_text()
    return set(re.findall(r"^#{2,4} (\d+(?:\.\d+)*)\.? ", text, re.M))


def test_there_are_at_least_twenty_scenarios_each_naming_a_section_that_exists() -> None:
    assert len(SCENARIOS) >= 20
    assert len({sc.name for sc in SCENARIOS}) == len(SCENARIOS)
    sections = _sections()
    for sc in SCENARIOS:
        cited = re.findall(r"\d+(?:\.\d+)*", sc.section)
        assert cited, sc.name
        assert all(c in sections for c in cited), (sc.name, cited)


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda s: s.name)
def test_a_scenario_uses_only_known_faults_cues_and_roles(sc: Scenario) -> None:
    assert sc.seats[0] == "host" and sc.seats.count("client") == 1
    assert set(sc.others) <= set(sc.seats)
    for fault in sc.faults:
        assert fault.what in HOST_FAULTS | STAGE_FAULTS, fault
        assert CUES.match(fault.cue), fault
        assert fault.role is None or fault.role in sc.seats, fault
        if fault.cue.startswith("turn:"):
            assert fault.cue[5:] in sc.seats, fault
    for rule in (*sc.expect, *sc.forbid):
        assert rule.missing, (sc.name, rule)
        for value in rule.match.values():
            if isinstance(value, str) and value.startswith("@"):
                assert value[1:] in sc.seats, (sc.name, rule)
    assert sc.expect, sc.name


def test_the_readme_lists_every_scenario() -> None:
    text = (ROOT / "interop" / "README.md").read_text()
    for sc in SCENARIOS:
        assert f"`{sc.name}`" in text, sc.name


def test_list_prints_every_scenario_with_its_section() -> None:
    out = io.StringIO()
    assert main(["--list"], out) == 0
    lines = out.getvalue().splitlines()
    assert len(lines) == len(SCENARIOS)
    for sc, line in zip(SCENARIOS, lines, strict=True):
        assert line.split()[0] == sc.name and sc.section in line


def test_an_unknown_scenario_or_timeout_is_a_clear_refusal() -> None:
    out = io.StringIO()
    assert main(["--only", "no-such-scenario"], out) == 2
    assert "no scenario matches no-such-scenario" in out.getvalue()
    out = io.StringIO()
    assert main(["--only", "join", "--timeout", "0"], out) == 2
    assert "--timeout must be positive" in out.getvalue()


def test_only_takes_an_exact_name_before_a_part_of_one() -> None:
    assert [s.name for s in by_name("timeout")] == ["timeout"]
    assert {s.name for s in by_name("probe")} == {"probe"}
    assert {s.name for s in by_name("time")} >= {"timeout", "probe-then-timeout",
                                                  "host-seat-timeout"}


def test_placeholders_are_filled_shell_quoted() -> None:
    command = fill("client {addr} --dir {dir} {unknown}", {"addr": "127.0.0.1:5",
                                                          "dir": "/tmp/a b"})
    assert command == "client 127.0.0.1:5 --dir '/tmp/a b' {unknown}"


# ---------------------------------------------------------------------------- verdicts
def _ev(t: float, event: str, **data: object) -> Event:
    return Event(t, event, "host", dict(data))


SC = Scenario(
    "x", "7.5", "a vote, then the same vote again",
    seats=("host", "a", "client"),
    expect=(Expect("vote", {"kind": "timeout", "target": "@a"}, "a timeout vote"),
            Expect("vote", {"same": True}, "the same vote again", gap=1.5)),
    forbid=(Forbid("vote", {"kind": "timeout", "target": 0}, "a vote about the host",
                   until=0),),
)


def _seat(role: str) -> int | None:
    return SC.seats.index(role) if role in SC.seats else None


def test_expectations_are_met_in_order_with_their_gap_and_the_same_frame() -> None:
    first = _ev(1.0, "vote", kind="timeout", target=1, raw={"k": "vote", "n": 1})
    early = _ev(1.5, "vote", kind="timeout", target=1, raw={"k": "vote", "n": 1})
    other = _ev(3.0, "vote", kind="timeout", target=1, raw={"k": "vote", "n": 2})
    again = _ev(3.2, "vote", kind="timeout", target=1, raw={"k": "vote", "n": 1})
    assert judge(SC, [first, early, other, again], _seat, 4.0).passed
    verdict = judge(SC, [first, early, other], _seat, 4.0, "not within 4 s")
    assert not verdict.passed
    assert verdict.missing == "expected the same vote again; not within 4 s"


def test_a_forbidden_event_fails_only_inside_its_window() -> None:
    about_host = _ev(0.5, "vote", kind="timeout", target=0, raw={})
    first = _ev(1.0, "vote", kind="timeout", target=1, raw={"n": 1})
    again = _ev(3.0, "vote", kind="timeout", target=1, raw={"n": 1})
    verdict = judge(SC, [about_host, first, again], _seat, 4.0)
    assert not verdict.passed and verdict.missing == "it must not: a vote about the host"
    later = _ev(3.5, "vote", kind="timeout", target=0, raw={})
    assert judge(SC, [first, again, later], _seat, 4.0).passed


# ---------------------------------------------------------------------------- cues, taps
def test_the_play_cue_holds_once_the_first_card_is_up_even_a_jack_awaiting_its_suit() -> None:
    """A J or Jolly turned up waits for the dealer to name the suit: with an idle host as the
    dealer that never happens, and a fault cued on ``play`` must still fire."""
    from dernier_p2p.rules import NameSuit, Phase, Suit, get_variant
    from dernier_p2p.rules.simulate import Table
    from interop.drive.hosting import cue_holds

    table = Table(get_variant("dernier"), ["2Y 3Y 4Y 5Y 6Y", "5B 8B AB 7B QB"], first="JR")
    assert table.state.phase is Phase.NAME_SUIT
    seat_of = {"host": 0, "client": 1}.get
    assert cue_holds("play", table.state, 12, seat_of)
    assert not cue_holds("turn:client", table.state, 12, seat_of)
    assert not cue_holds("play", None, 12, seat_of) and cue_holds("start", None, 0, seat_of)
    assert cue_holds("record:12", None, 12, seat_of) and not cue_holds("record:13", None, 12,
                                                                       seat_of)
    table.move(NameSuit(0, Suit.BLUE))
    assert cue_holds("play", table.state, 13, seat_of)
    assert cue_holds("turn:client", table.state, 13, seat_of)


async def test_an_error_frame_is_noted_after_the_envelopes_read_before_it(tmp_path: Path) -> None:
    """The host's reader takes ``error`` frames itself and hands the others to its pump: an
    envelope read before the error but handled after it must still come first among the
    events (else a client that stops at once is blamed for an envelope after its refusal)."""
    import trio
    import trio.testing

    from dernier_p2p.net import handshake as hs
    from dernier_p2p.net.driver import ConnIO
    from dernier_p2p.net.framing import FramedStream, PeerClosed
    from interop.drive.stage import Stage

    stage = Stage(next(sc for sc in SCENARIOS if sc.name == "chat-over-limit"), "true",
                  tmp_path)
    host = stage._host()
    driver = host.driver
    ours, theirs = trio.testing.memory_stream_pair()
    conn = ConnIO(stage.client, FramedStream(theirs, hs.MAX_FRAME))
    driver.seat_conns[stage.client] = conn
    client = FramedStream(ours, hs.MAX_FRAME)
    await client.send(hs.pack({"k": "env", "env": {"seat": 1}}))
    await client.send(hs.pack({"k": "error", "code": "MALFORMED", "detail": "a record"}))
    await trio.aclose_forcefully(client)
    with trio.move_on_after(5), contextlib.suppress(PeerClosed):
        await driver._read_seat(conn, stage.client)  # reads both, then the end
    assert [e.event for e in stage.events.items] == []  # the pump has run nothing yet
    async with trio.open_nursery() as nursery:
        nursery.start_soon(driver.pump)
        with trio.fail_after(5):
            while len(stage.events.items) < 2:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert [e.event for e in stage.events.items][:2] == ["env", "error"]
