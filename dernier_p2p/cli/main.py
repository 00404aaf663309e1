"""The ``dernier`` command line."""

from __future__ import annotations

import click

from dernier_p2p import __version__


@click.group()
@click.version_option(__version__, prog_name="dernier")
def main() -> None:
    """Dernier: the Italian shedding card game, peer to peer."""
