"""`dernier bench`: a quick figure from a real hand."""

from click.testing import CliRunner

from dernier_p2p.cli.main import main
from dernier_p2p.deck.group import PATH


def test_bench_prints_a_figure() -> None:
    result = CliRunner().invoke(main, ["bench", "--players", "2"])
    assert result.exit_code == 0, result.output
    assert "dernier, 2 seats, one hand: " in result.output
    assert " records in " in result.output
    assert f"group arithmetic: {PATH}\n" in result.output
