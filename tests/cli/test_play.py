"""`dernier play`: all-bot matches as a real process, and a human driven through the prompt."""

import subprocess
import sys

import pytest
from click.testing import CliRunner

from dernier_p2p.cli.main import main


@pytest.mark.parametrize("variant", ["dernier", "originale", "moderno", "standard"])
def test_auto_match_runs_to_the_end_in_a_real_process(variant: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dernier_p2p", "play", "--auto", "--variant", variant,
         "--players", "3", "--seed", "7", "--no-colour"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "wins the match" in proc.stdout
    assert "Final scores:" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_same_seed_gives_the_same_match() -> None:
    runner = CliRunner()
    args = ["play", "--auto", "--players", "4", "--seed", "11", "--no-colour"]
    first = runner.invoke(main, args)
    second = runner.invoke(main, args)
    assert first.exit_code == 0
    assert first.output == second.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--players", "1"], "2 to 8 players"),
        (["--players", "11", "--variant", "moderno"], "2 to 10 players"),
        (["--variant", "nope"], "Invalid value for '--variant'"),
        (["--hands", "2", "--target", "100"], "either --hands or --target"),
        (["--hands", "0"], "must be at least 1"),
    ],
)
def test_wrong_arguments_get_a_clear_error(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["play", "--auto", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_human_wrong_input_changes_nothing_then_leaves() -> None:
    # Garbage, an out-of-range card number and an unknown letter are refused; "q" leaves.
    result = CliRunner().invoke(
        main,
        ["play", "--players", "2", "--seed", "4", "--no-colour", "--name", "Ann"],
        input="xyz\n99\nz\nq\n",
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "type a card number or one of the letters shown" in out
    assert "Ann forfeits (left)." in out
    assert "Your hand:" in out


def test_human_end_of_input_leaves_cleanly() -> None:
    result = CliRunner().invoke(main, ["play", "--players", "2", "--seed", "4"], input="")
    assert result.exit_code == 0
    assert "Input ended" in result.output
