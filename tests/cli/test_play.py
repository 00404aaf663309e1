"""`dernier play`: bot tables over loopback TCP as real processes, each transcript accepted by
`dernier verify`; usage errors; a human seat driven through the prompt by a script, and what
leaving does (the bots finish the match, or the match ends)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from tests.cli.helpers import dernier

VARIANTS = ["dernier", "originale", "moderno", "standard"]


def _auto(tmp_path: Path, variant: str, players: int, timeout: float = 120,
          *extra: str) -> str:
    path = tmp_path / f"{variant}-{players}.transcript"
    proc = dernier(
        tmp_path, "play", "--auto", "--variant", variant, "--players", str(players),
        "--hands", "1", "--seed", "7", "--no-colour", "--transcript", str(path), *extra,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    assert "wins the match" in proc.stdout
    assert "Final scores:" in proc.stdout
    assert f"shuffle {players} of {players} verified" in proc.stdout  # shuffle progress
    assert f"Shuffling the deck: your shuffle, 1 of {players}…" in proc.stdout
    assert f"Verifying Bot 1's shuffle (seat 1, 2 of {players})…" in proc.stdout
    assert proc.stderr == ""
    check = dernier(tmp_path, "verify", str(path))
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.startswith("OK")
    assert f"{players} players" in check.stdout
    return proc.stdout


@pytest.mark.parametrize(
    "variant", [v if v == "dernier" else pytest.param(v, marks=pytest.mark.slow) for v in VARIANTS]
)
def test_auto_two_players_runs_to_the_end_and_verifies(tmp_path: Path, variant: str) -> None:
    _auto(tmp_path, variant, 2)


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_auto_four_players_runs_to_the_end_and_verifies(tmp_path: Path, variant: str) -> None:
    _auto(tmp_path, variant, 4)


@pytest.mark.slow
@pytest.mark.parametrize("variant, players", [("dernier", 8), ("originale", 10)])
def test_auto_full_table_runs_to_the_end_and_verifies(
    tmp_path: Path, variant: str, players: int
) -> None:
    # the largest tables over loopback TCP: the host and its bot peers, each a separate trio
    # task (dernier's 54 cards seat at most eight; the 108- and 112-card variants ten). One
    # ten-seat variant stands for the three: what differs between them is the rules, which the
    # simulator plays at up to ten seats in every variant (tests/sim), with real cryptography
    # in its sample, as tests/deck/test_table.py and the interop suite's moderno-10p match do
    _auto(tmp_path, variant, players, timeout=1200)


@pytest.mark.parametrize("level", ["easy", "strong"])
def test_bots_of_each_level_play_a_match_that_verifies(tmp_path: Path, level: str) -> None:
    """``--bots``: the level of every bot at the table (with ``--auto`` the user's seat too);
    the strong bot searches in a worker thread while its peer keeps the protocol going."""
    out = _auto(tmp_path, "dernier", 3, 240, "--bots", level)
    assert f"seed 7, {level} bots." in out


def test_default_transcript_goes_to_the_data_folder(tmp_path: Path) -> None:
    proc = dernier(tmp_path, "play", "--auto", "--players", "2", "--target", "1", "--seed", "2")
    assert proc.returncode == 0, proc.stderr
    files = list((tmp_path / "data" / "dernier" / "transcripts").glob("*.transcript"))
    assert len(files) == 1
    assert str(files[0]) in proc.stdout
    assert files[0].stat().st_mode & 0o077 == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--players", "1"], "2 to 8 players"),
        (["--players", "11", "--variant", "moderno"], "2 to 10 players"),
        (["--variant", "nope"], "Invalid value for '--variant'"),
        (["--hands", "2", "--target", "100"], "either --hands or --target"),
        (["--hands", "0"], "must be at least 1"),
        (["--seed", "x"], "is not a valid integer"),
        (["--name", ""], "1 to 32 printable characters"),
        (["--bots", "hard"], "Invalid value for '--bots'"),
        (["--leave", "stay"], "Invalid value for '--leave'"),
    ],
)
def test_wrong_arguments_get_a_usage_error(tmp_path: Path, args: list[str], message: str) -> None:
    proc = dernier(tmp_path, "play", "--auto", *args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_existing_transcript_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "t"
    path.write_bytes(b"keep me")
    proc = dernier(tmp_path, "play", "--auto", "--transcript", str(path))
    assert proc.returncode == 2
    assert "already exists" in proc.stderr
    assert path.read_bytes() == b"keep me"


SCRIPT = "\n".join(
    ["/hello table", "/", "/\x1b[2Jred\tline"]  # chat lines at the prompt: not moves
    + ["xyz", "99", "p", "z"]  # refused: garbage, no such card, no pass before drawing, no letter
    + [str(k) for k in range(1, 8)]  # try every card: the playable ones are played
    + ["d", "p", "1", "2", "3", "q"]
) + "\n"


def test_human_seat_driven_by_a_script(tmp_path: Path) -> None:
    path = tmp_path / "human.transcript"
    proc = dernier(
        tmp_path, "play", "--players", "2", "--seed", "4", "--no-colour", "--name", "Ann",
        "--transcript", str(path), stdin=SCRIPT, timeout=60,
    )
    out = proc.stdout
    assert proc.returncode == 0, out[-2000:] + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Your hand: 1:" in out
    assert "▶ Ann (you)" in out
    assert "type a card number or one of the letters shown" in out
    assert "pick a card from 1 to" in out
    assert "cannot be played now" in out or "you cannot pass now" in out
    moves = [line for line in out.splitlines() if line.startswith(("Ann plays", "Ann draws"))]
    assert len(moves) >= 2, out
    assert "You left the table." in out
    # the chat lines, in the log as every seat's: the escape sequence's ESC and the tab gone
    assert "» Ann: hello table" in out and "» Ann: [2Jred line" in out
    assert "Type / and your words" in out and "\x1b" not in out
    replayed = dernier(tmp_path, "replay", "--no-colour", str(path))
    assert "» Ann: hello table" in replayed.stdout and "» Ann: [2Jred line" in replayed.stdout
    # Leaving resigned: at two seats the match ends there, Ann last, and the record checks.
    check = dernier(tmp_path, "verify", str(path))
    assert check.returncode == 0, check.stdout
    assert "Winner: Bot 1" in check.stdout and "Ann -1" in check.stdout


def test_a_human_asks_for_a_hint_against_strong_bots(tmp_path: Path) -> None:
    """``hint`` at the prompt: the strong bot's move for the seat and why, in words; the
    prompt comes back and the game goes on against strong bots, who keep the table's pace."""
    path = tmp_path / "hint.transcript"
    script = "hint\n" + "\n".join(["d", "p", "1", "2", "3", "hint", "q"]) + "\n"
    proc = dernier(
        tmp_path, "play", "--players", "2", "--seed", "4", "--no-colour", "--name", "Ann",
        "--bots", "strong", "--plain", "--transcript", str(path), stdin=script, timeout=120,
    )
    out = proc.stdout
    assert proc.returncode == 0, out[-2000:] + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "seed 4, strong bots." in out
    assert out.count("  Hint: ") == 2, out
    assert "You left the table." in out


def test_end_of_input_leaves_cleanly(tmp_path: Path) -> None:
    proc = dernier(tmp_path, "play", "--players", "2", "--seed", "4", stdin="", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "You left the table." in proc.stdout
    assert "Traceback" not in proc.stderr


def _leave_at_first_prompt(
    tmp_path: Path, players: int, stdin: str, *more: str
) -> tuple[str, str]:
    """Ann leaves at her first prompt of a one-hand match; (what she read, verify's report)."""
    path = tmp_path / "left.transcript"
    proc = dernier(
        tmp_path, "play", "--players", str(players), "--hands", "1", "--seed", "5",
        "--no-colour", "--name", "Ann", "--transcript", str(path), *more, stdin=stdin,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    assert proc.stderr == ""
    check = dernier(tmp_path, "verify", str(path))
    assert check.returncode == 0, check.stdout  # complete and checked: not INCOMPLETE
    return proc.stdout, check.stdout


@pytest.mark.parametrize("stdin", ["q\ny\n", ""])  # "q" confirmed, or the end of input
def test_leaving_at_three_seats_lets_the_bots_finish_and_the_transcript_checks(
    tmp_path: Path, stdin: str
) -> None:
    """The bots of `dernier play` live in the person's process: after the person leaves a table
    that plays on (``--leave play_on``) they finish the match, the result is shown, and no
    seat of the process is said to be lost."""
    out, check = _leave_at_first_prompt(tmp_path, 3, stdin, "--leave", "play_on")
    if stdin:
        assert "You resign and rank last; the bots finish the match without you." in out
    assert "Ann has left the match and ranks last" in out
    after = out.split("Ann has left the match", 1)[1]
    assert "The bots finish the match without you, without pauses" in after
    assert "You left the table. The bots finished the match without you." in after
    assert "Final scores: Ann " in after and "Match points: Ann -1, Bot 1 1, Bot 2 1" in after
    assert "lost connection" not in out
    # the seat that left shuffles no more: the next deal is the two bots'
    assert "your shuffle" not in after and "shuffle 2 of 2 verified" in after
    assert "Verifying Bot 1's shuffle (seat 1, 1 of 2)" in after
    assert check.startswith("OK") and "Match points: Ann -1" in check


def test_leaving_a_dernier_table_of_three_ends_the_match_and_says_so(tmp_path: Path) -> None:
    """`dernier`'s own rule (seed 000/001): a player who leaves ends the match, at any number of
    seats, as a time-out does; the leaver ranks last, -1 match point, +1 to each other."""
    out, check = _leave_at_first_prompt(tmp_path, 3, "q\ny\n")
    assert "You resign: the match ends here and you rank last." in out
    assert "play on" not in out and "finish the match" not in out
    assert "Ann forfeits (left the table)." in out and "has left the match" not in out
    assert "You left the table. Your resignation ended the match." in out
    assert "Match points: Ann -1, Bot 1 1, Bot 2 1" in out
    assert check.startswith("OK") and "Match points: Ann -1" in check


def test_leaving_at_two_seats_ends_the_match_and_says_so(tmp_path: Path) -> None:
    out, check = _leave_at_first_prompt(tmp_path, 2, "q\ny\n")
    assert "You resign: the match ends here and you rank last." in out
    assert "play on" not in out and "finish the match" not in out
    assert "Ann forfeits (left the table)." in out and "Bot 1 wins the match!" in out
    assert "You left the table. Your resignation ended the match." in out
    assert "Match points: Ann -1, Bot 1 1" in out
    assert check.startswith("OK") and "Winner: Bot 1" in check


def test_join_addresses_put_ipv6_in_brackets() -> None:
    from dernier_p2p.cli.main import _parse_address
    from dernier_p2p.net.address import host_port

    assert host_port("::1", 47650) == "[::1]:47650"
    assert host_port("192.168.1.5", 47650) == "192.168.1.5:47650"
    assert _parse_address(host_port("::1", 47650)) == ("::1", 47650)
    assert _parse_address("::1:47650") == ("::1", 47650)
    for bad in ("[::1", "[::1:5", "::1]:5", "[]:5", "host", "host:x", ":5"):
        with pytest.raises(click.BadParameter, match="is not HOST:PORT"):
            _parse_address(bad)
    for bad in ("host:0", "host:65536"):
        with pytest.raises(click.BadParameter, match="the port must be 1 to 65535"):
            _parse_address(bad)


def test_a_transcript_path_that_is_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "victim"
    for link, make_target in (("dangling", False), ("existing", True)):
        if make_target:
            target.write_bytes(b"")
        path = tmp_path / link
        path.symlink_to(target)
        proc = dernier(tmp_path, "play", "--auto", "--transcript", str(path))
        assert proc.returncode == 2 and "symbolic link" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    assert target.read_bytes() == b""  # nothing written through either link


@pytest.mark.parametrize("command", ["play", "host"])
def test_a_seed_out_of_the_encodings_range_is_a_usage_error(tmp_path: Path, command: str) -> None:
    proc = dernier(tmp_path, command, "--seed", str(2**64), timeout=60)
    assert proc.returncode == 2
    assert "Invalid value for '--seed'" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("address", ["dn1-zz", "[::1", "dn1-"])
def test_watch_with_a_bad_code_or_address_is_a_usage_error(tmp_path: Path, address: str) -> None:
    proc = dernier(tmp_path, "watch", address, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "Invalid value for ADDRESS" in proc.stderr
