"""The ``dernier`` command line."""

from __future__ import annotations

import sys

import click

from dernier_p2p import __version__
from dernier_p2p.rules import VARIANTS, MatchFormat, get_variant


@click.group()
@click.version_option(__version__, prog_name="dernier")
def main() -> None:
    """Dernier: the Italian shedding card game, peer to peer."""


def _match_format(hands: int | None, target: int | None) -> MatchFormat | None:
    if hands is not None and target is not None:
        raise click.UsageError("choose either --hands or --target, not both")
    if hands is not None:
        if hands < 1:
            raise click.BadParameter("must be at least 1", param_hint="--hands")
        return MatchFormat("hands", hands)
    if target is not None:
        if target < 1:
            raise click.BadParameter("must be at least 1", param_hint="--target")
        return MatchFormat("target", target)
    return None


@main.command()
@click.option(
    "--variant",
    type=click.Choice(sorted(VARIANTS)),
    default="dernier",
    show_default=True,
    help="Rule set.",
)
@click.option("--players", type=int, default=4, show_default=True, help="Players at the table.")
@click.option("--hands", type=int, default=None, help="Match of a fixed number of hands.")
@click.option("--target", type=int, default=None, help="Match to a target score.")
@click.option("--seed", type=int, default=None, help="Seed for a reproducible game.")
@click.option("--auto", is_flag=True, help="All seats played by bots; no prompts.")
@click.option("--name", default="Player", show_default=True, help="Your name at the table.")
@click.option("--no-colour", "no_colour", is_flag=True, help="Plain text, no ANSI colours.")
def play(
    variant: str,
    players: int,
    hands: int | None,
    target: int | None,
    seed: int | None,
    auto: bool,
    name: str,
    no_colour: bool,
) -> None:
    """Sit at a table on this machine: you against bots (or bots only with --auto)."""
    from dernier_p2p.cli.human import HumanPlayer, QuitGame
    from dernier_p2p.cli.local import bot_policies, run_match

    fmt = _match_format(hands, target)
    try:
        rules = get_variant(variant, **({"match": fmt} if fmt else {}))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if not rules.min_players <= players <= rules.max_players:
        raise click.BadParameter(
            f"{variant} is for {rules.min_players} to {rules.max_players} players",
            param_hint="--players",
        )
    if seed is None:
        seed = int.from_bytes(__import__("os").urandom(4), "little")
    colour = not no_colour and sys.stdout.isatty()
    names = [f"Bot {s}" for s in range(players)]
    if not auto:
        names[0] = name
    log: list[str] = []
    human = None if auto else HumanPlayer(names, log, colour=colour)
    click.echo(f"{rules.name}: {players} players, seed {seed}.")
    try:
        outcome = run_match(
            rules, players, bot_policies(players, seed, human), names, seed, click.echo, log,
            colour,
        )
    except QuitGame:
        click.echo("\nInput ended; you leave the table.")
        sys.exit(0)
    state = outcome.state
    if outcome.left:
        click.echo("You left the table.")
    click.echo("Final scores: " + ", ".join(f"{names[i]} {state.scores[i]}" for i in
                                            range(players)))
