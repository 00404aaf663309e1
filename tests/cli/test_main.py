"""The ``dernier`` command group: what ``--version`` says."""

from __future__ import annotations

from click.testing import CliRunner

from dernier_p2p import __version__
from dernier_p2p.cli.main import main
from dernier_p2p.rules import BUILD


def test_version_names_the_release_the_protocol_the_transcripts_read_and_the_engine() -> None:
    out = CliRunner().invoke(main, ["--version"])
    assert out.exit_code == 0
    assert out.output == (
        f"dernier {__version__}: protocol version 3 (verifies transcripts of versions 2 and 3); "
        f"rules engine {BUILD}\n"
    )
