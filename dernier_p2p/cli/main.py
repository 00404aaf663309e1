"""The ``dernier`` command line: play, host, join, watch, relay, verify, replay, bench.

Exit codes: 0 success (for ``verify``: the transcript checks); 1 a failure at run time (a
refused or lost connection, a fault found by the protocol or by ``verify``); 2 wrong usage or a
file that cannot be read (a missing or corrupt transcript, an unusable key file); 130 when
interrupted.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import click

from dernier_p2p import __version__
from dernier_p2p.bots.levels import DEFAULT_LEVEL, LEVELS
from dernier_p2p.deck.group import PATH as GROUP_PATH
from dernier_p2p.net.address import host_port, is_loopback, is_public
from dernier_p2p.rules import BUILD, VARIANTS, MatchFormat, get_variant
from dernier_p2p.wire.version import describe

EXIT_FAULT = 1
EXIT_UNREADABLE = 2
_VERBOSE = [False]  # set by the -v option of the command group


@click.group()
@click.version_option(
    __version__, prog_name="dernier", message=describe(__version__, BUILD, GROUP_PATH)
)
@click.option("-v", "--verbose", is_flag=True, help="Log the network's notices to stderr.")
def main(verbose: bool) -> None:
    """Dernier: the Italian shedding card game, peer to peer."""
    import logging

    _VERBOSE[0] = verbose
    logger = logging.getLogger("dernier_p2p")
    logger.handlers.clear()
    if verbose:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    else:
        logger.addHandler(logging.NullHandler())
    logger.propagate = False


# --------------------------------------------------------------------------- shared options
def _match_options(
    variant: str, players: int, hands: int | None, target: int | None, leave: str | None = None
) -> dict:
    """The table's rule options; usage errors (exit 2) for impossible choices."""
    if hands is not None and target is not None:
        raise click.UsageError("choose either --hands or --target, not both")
    fmt = None
    if hands is not None:
        if hands < 1:
            raise click.BadParameter("must be at least 1", param_hint="--hands")
        fmt = MatchFormat("hands", hands)
    if target is not None:
        if target < 1:
            raise click.BadParameter("must be at least 1", param_hint="--target")
        fmt = MatchFormat("target", target)
    extra = {} if leave is None else {"leave": leave}
    try:
        rules = get_variant(variant, **({"match": fmt} if fmt else {}), **extra)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if not rules.min_players <= players <= rules.max_players:
        raise click.BadParameter(
            f"{variant} is for {rules.min_players} to {rules.max_players} players",
            param_hint="--players",
        )
    return ({} if fmt is None else {"match": [fmt.kind, fmt.value]}) | extra


def _check_name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not 1 <= len(value) <= 32 or not value.isprintable():
        raise click.BadParameter("a name is 1 to 32 printable characters")
    return value


def _transcript_path(path: Path | None, variant: str) -> Path:
    from dernier_p2p.cli.paths import new_transcript_path

    if path is None:
        try:
            return new_transcript_path(variant)
        except OSError as exc:
            raise click.UsageError(f"cannot create the transcripts folder: {exc}") from None
    if os.path.islink(path):  # a link (dangling or not) is never written through
        raise click.BadParameter(f"{path} is a symbolic link", param_hint="--transcript")
    if os.path.lexists(path) and (not path.is_file() or path.stat().st_size > 0):
        raise click.BadParameter(f"{path} already exists", param_hint="--transcript")
    if not path.parent.is_dir():
        raise click.BadParameter(f"no folder {path.parent}", param_hint="--transcript")
    return path


def _level(bot: bool, level: str | None) -> str:
    """The level of the bot that plays the user's seat; ``--level`` needs ``--bot``."""
    if level is not None and not bot:
        raise click.UsageError("--level says how the bot plays your seat: add --bot")
    return level or DEFAULT_LEVEL


def _colour(no_colour: bool) -> bool:
    return not no_colour and sys.stdout.isatty()


variant_option = click.option(
    "--variant", type=click.Choice(sorted(VARIANTS)), default="dernier", show_default=True,
    help="Rule set.",
)
players_option = click.option(
    "--players", type=int, default=4, show_default=True, help="Players at the table."
)
hands_option = click.option("--hands", type=int, default=None, help="Match of N hands.")
target_option = click.option("--target", type=int, default=None, help="Match to a target score.")
leave_option = click.option(
    "--leave", type=click.Choice(["end", "play_on"]), default=None,
    help="When a player leaves a table of three or more: end the match (the leaver ranks last) "
         "or play on without them. Default: the variant's (dernier: end; the others: play_on).",
)
transcript_option = click.option(
    "--transcript", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Where to write the transcript (default: a new file in the data folder).",
)
colour_option = click.option("--no-colour", "no_colour", is_flag=True, help="Plain text.")
key_option = click.option(
    "--key", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Identity key file (default: identity.pem in the data folder, created on first use).",
)
bot_option = click.option("--bot", is_flag=True, help="Let the bot play this seat.")
LEVEL_HELP = ("easy (any card that fits), normal (the heuristic bot: keeps wild cards, sheds "
              "costly ones) or strong (it plays the hand on many times before each move)")
level_option = click.option(
    "--level", type=click.Choice(LEVELS), default=None,
    help=f"With --bot: how the bot plays, {LEVEL_HELP}. Default: {DEFAULT_LEVEL}.",
)
SEED = click.IntRange(-(2**63), 2**64 - 1)
"""A table seed: any integer the canonical encoding carries (the seeds are hashed with it)."""
plain_option = click.option(
    "--plain", is_flag=True,
    help="The line interface (chosen by itself when input or output is not a terminal).",
)
offer_option = click.option(
    "--offer-seconds", type=click.FloatRange(0.5, 60), default=3.0, show_default=True,
    help="The table's out-of-turn window (jump in, declare, catch): every seat, on every "
         "machine, holds its turn move that long, or until every seat has passed. A joiner "
         "keeps the host's.",
)
# verdict codes where a damaged or edited file is likelier than a cheating seat
FILE_DAMAGE = ("BAD_SIGNATURE", "BAD_CHAIN", "MALFORMED")


def peer_options(command: Callable) -> Callable:
    """The options of a networked seat (host or join): key, transcript, bot and its level,
    colour."""
    for option in (plain_option, colour_option, level_option, bot_option, transcript_option,
                   key_option):
        command = option(command)
    return command


# --------------------------------------------------------------------------- running a table
def _fail(message: str, code: int = EXIT_FAULT) -> NoReturn:
    click.echo(message, err=True)
    sys.exit(code)


@contextlib.contextmanager
def _verbose_log_aside() -> Iterator[Path | None]:
    """With ``-v``, while the full-screen table holds the terminal, the log goes to a file
    (:func:`~dernier_p2p.cli.paths.verbose_log_path`), not over the table; its path, or None
    without ``-v`` (or when the file cannot be opened: the log then stays where it was)."""
    import logging

    from dernier_p2p.cli.paths import verbose_log_path

    handlers = [h for h in logging.getLogger("dernier_p2p").handlers
                if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)]
    if not _VERBOSE[0] or not handlers:
        yield None
        return
    try:
        path = verbose_log_path()
        stream = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
    except OSError:
        yield None
        return
    stream.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} ---\n")
    olds = [(h, h.setStream(stream)) for h in handlers]
    try:
        yield path
    finally:
        for handler, old in olds:
            handler.setStream(old)
        stream.close()


def _run(
    main_fn: Callable[[], Awaitable[Any]], where: str = "",
    interrupted: str = "Interrupted; you left the table.", screen: Any = None,
    header: str = "",
) -> Any:
    """Run a table under trio (behind the full-screen table when ``screen``, a ScreenLink, is
    given), turning every expected failure into a message and exit code."""
    import trio

    from dernier_p2p.cli.human import QuitGame
    from dernier_p2p.cli.native import native_stderr_aside
    from dernier_p2p.cli.render import echo_fitted
    from dernier_p2p.net.firewall import leaves as exception_leaves
    from dernier_p2p.net.framing import FrameError, PeerClosed
    from dernier_p2p.net.handshake import NetError, RemoteError
    from dernier_p2p.net.host import NoQuorum
    from dernier_p2p.net.peer import HostLost
    from dernier_p2p.protocol.errors import ProtocolError
    from dernier_p2p.wire.transcript import TranscriptError

    try:
        with native_stderr_aside():  # a C library's perror would land in the table
            if screen is None:
                return trio.run(main_fn)
            from dernier_p2p.tui.run import run_screen

            with _verbose_log_aside() as log_path:
                try:
                    return run_screen(main_fn, screen, header)
                finally:
                    for line in screen.log[-12:]:  # the last of the log stays on the terminal
                        echo_fitted(line)
                    if log_path is not None:
                        click.echo(f"The -v log of this table is in {log_path}.")
    except BaseException as group:  # noqa: B036 - every leaf is mapped below
        leaves = exception_leaves(group)
        kinds = (
            QuitGame, KeyboardInterrupt, ProtocolError, RemoteError, NetError, HostLost,
            NoQuorum, trio.TooSlowError, TranscriptError, PeerClosed, FrameError, OSError,
        )
        leaf = next((e for k in kinds for e in leaves if isinstance(e, k)), None)
        if isinstance(group, SystemExit):
            raise
        if leaf is None:
            if _VERBOSE[0]:
                raise
            first = leaves[0]
            _fail(f"Unexpected error: {type(first).__name__}: {first} (-v shows the details)")
        if isinstance(leaf, QuitGame):
            click.echo("\nYou left the table.")
            sys.exit(0)
        if isinstance(leaf, KeyboardInterrupt):
            _fail(f"\n{interrupted}", 130)
        if isinstance(leaf, ProtocolError):
            who = "unknown seat" if leaf.seat is None else f"seat {leaf.seat}"
            _fail(f"The match is stopped: {leaf.code} by {who}: {leaf.detail}")
        if isinstance(leaf, RemoteError):
            hint = ""
            if leaf.code == "DUPLICATE_KEY":
                hint = " (a second player on this machine needs its own --key FILE)"
            _fail(f"The host refused: {leaf.code}: {leaf.detail}{hint}")
        if isinstance(leaf, NetError):
            hint = ""
            if leaf.code == "UNREACHABLE":
                hint = ("\nCheck that the table is still open and the code is the latest. If the "
                        "host's router cannot open a port, the host can add --relay HOST:PORT "
                        "(anyone with a reachable machine can run `dernier relay`).")
            _fail(f"Connection failed{where}: {leaf.code}: {leaf.detail}{hint}")
        if isinstance(leaf, HostLost):
            _fail(f"The match ended here for this seat: {leaf}. Its transcript is incomplete "
                  "and ranks nobody.")
        if isinstance(leaf, NoQuorum):
            _fail(f"The host is gone and this seat was to host the table, but too few players "
                  f"reached it in time ({leaf}).")
        if isinstance(leaf, trio.TooSlowError):
            _fail(f"No answer{where} in time.")
        if isinstance(leaf, TranscriptError):
            _fail(f"Transcript: {leaf}")
        if isinstance(leaf, PeerClosed):
            _fail(f"Connection closed{where}: the other side hung up ({leaf}).")
        if isinstance(leaf, FrameError):
            _fail(f"Connection failed{where}: {leaf}")
        assert isinstance(leaf, OSError)
        if isinstance(leaf, BrokenPipeError) and leaf.filename is None:
            _fail("The output was closed; you left the table.")  # e.g. piped into head
        if leaf.filename is not None:  # a file, not the network
            _fail(f"Cannot use {leaf.filename}: {leaf.strerror or leaf}")
        verb = "Cannot listen" if where.startswith(" on ") else "Cannot connect"  # host, relay
        hint = ""
        if verb == "Cannot listen" and leaf.errno == errno.EADDRINUSE:
            hint = f": {PORT_HINT}"
        _fail(f"{verb}{where}: {leaf.strerror or leaf}{hint}")


def _screen(plain: bool) -> Any:
    """A ScreenLink for the full-screen table, or None for the line interface (``--plain``,
    a bot's seat, or input or output that is not a terminal)."""
    if plain or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    from dernier_p2p.tui.link import ScreenLink

    return ScreenLink()


LEFT = {
    "ended": "You left the table. Your resignation ended the match.",
    "bots": "You left the table. The bots finished the match without you.",
}
"""What the player reads after a match it left that went on to its end (see
``Seating.how_left``)."""


def _final(seat: Any, transcript: Path | None, seating: Any = None) -> None:
    """The match's result for the player (after how it left it, if it did)."""
    from dernier_p2p.cli.follow import names_of
    from dernier_p2p.cli.render import echo_fitted

    if seat is None:
        return
    left = None if seating is None else seating.how_left()
    if left is not None:
        echo_fitted(LEFT[left])
    result = seat.session.result
    names = names_of(seat)
    if result is not None and result.get("no_contest"):
        echo_fitted("No contest: the match ended without a loser (a seat was absent with no "
                   "majority to judge it); nobody is ranked.")
    elif result is not None:
        scores = ", ".join(f"{names[i]} {s}" for i, s in enumerate(result["scores"]))
        echo_fitted(f"Final scores: {scores}")
        if any(result["match_points"]):
            points = ", ".join(f"{names[i]} {p}" for i, p in enumerate(result["match_points"]))
            echo_fitted(f"Match points: {points}")
    if transcript is not None:
        echo_fitted(f"Transcript: {transcript}  (check it with: dernier verify {transcript})")


# --------------------------------------------------------------------------- play
@main.command()
@variant_option
@players_option
@hands_option
@target_option
@leave_option
@click.option("--seed", type=SEED, default=None, help="Seed for a reproducible table.")
@click.option("--auto", is_flag=True, help="All seats played by bots; no prompts.")
@click.option("--bots", "bots", type=click.Choice(LEVELS), default=DEFAULT_LEVEL,
              show_default=True, help=f"How the bots play: {LEVEL_HELP}.")
@click.option("--name", default="Player", show_default=True, callback=_check_name,
              help="Your name at the table.")
@transcript_option
@colour_option
@offer_option
@plain_option
def play(
    variant: str, players: int, hands: int | None, target: int | None, leave: str | None,
    seed: int | None, auto: bool, bots: str, name: str, transcript: Path | None,
    no_colour: bool, offer_seconds: float, plain: bool,
) -> None:
    """Sit at a table on this machine: you against bot peers (bots only with --auto).

    Every bot is a peer of its own speaking the protocol over loopback TCP; the deck is
    shuffled by all of them together. If you leave (q), you resign and rank last: the match
    ends there (two players, or dernier), or the bots finish it without you (--leave play_on);
    the result is shown."""
    from dernier_p2p.cli.render import echo_fitted
    from dernier_p2p.cli.table import Seating, play_local

    options = _match_options(variant, players, hands, target, leave)
    if seed is None:
        seed = int.from_bytes(os.urandom(4), "little")
    path = _transcript_path(transcript, variant)
    colour = _colour(no_colour)
    name = "Bot 0" if auto else name
    echo_fitted(f"{variant}: {players} players, seed {seed}, {bots} bots. Transcript: {path}")
    screen = _screen(plain or auto)
    seating = Seating(bot=auto, colour=colour, offer_s=offer_seconds, screen=screen,
                      level=bots)
    seat = _run(lambda: play_local(variant, players, options, seed, name, path, seating, bots),
                screen=screen, header=variant)
    _final(seat, path, seating)


# --------------------------------------------------------------------------- host / join
def _identity(key: Path | None) -> Any:
    from dernier_p2p.cli.paths import load_or_create_identity
    from dernier_p2p.cli.render import echo_fitted
    from dernier_p2p.wire.identity import KeyFileError

    try:
        identity, created = load_or_create_identity(key)
    except (KeyFileError, OSError) as exc:
        raise click.BadParameter(str(exc), param_hint="--key") from None
    if created:
        from dernier_p2p.cli.paths import default_key_path

        echo_fitted(f"Created your identity key: {key or default_key_path()}")
    return identity


def _local_address(ipv6: bool = False) -> str:
    """This machine's address on the LAN as best known (no packet is sent)."""
    import socket

    family, probe, fallback = (
        (socket.AF_INET6, "2001:db8::1", "::1") if ipv6 else
        (socket.AF_INET, "192.0.2.1", "127.0.0.1")
    )
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect((probe, 9))
            return str(s.getsockname()[0])
    except OSError:
        return fallback


@main.command()
@variant_option
@players_option
@hands_option
@target_option
@leave_option
@click.option("--port", type=click.IntRange(0, 65535), default=47630, show_default=True,
              help="TCP port to listen on (0: any free port).")
@click.option("--bind", default="0.0.0.0", show_default=True, help="Address to listen on.")
@click.option("--advertise", default=None,
              help="Address the others reach this machine at (default: found automatically).")
@click.option("--name", default="Host", show_default=True, callback=_check_name,
              help="Your name at the table.")
@click.option("--table-name", default=None, help="The table's name on the LAN.")
@click.option("--no-announce", is_flag=True, help="Do not announce the table on the LAN.")
@click.option("--turn-seconds", type=click.IntRange(1, 86_400), default=120, show_default=True,
              help="Time a seat may keep the table waiting before it is timed out.")
@offer_option
@click.option("--send-before-check", "send_first", is_flag=True,
              help="Send each record on to the players before checking it (less latency; a "
                   "bad message then ends the match, naming its author, instead of being "
                   "refused). Not related to --relay.")
@click.option("--relay-first", "send_first_old", is_flag=True, hidden=True)  # the old spelling
@click.option("--relay", "relay", default=None, metavar="HOST:PORT",
              help="A relay (`dernier relay`) through which players who cannot reach this "
                   "machine connect.")
@click.option("--no-map", is_flag=True,
              help="Do not ask the router to open the port (UPnP / NAT-PMP).")
@click.option("--map-lease-seconds", "map_lease", type=click.IntRange(2, 7 * 24 * 3600),
              default=3600, show_default=True,  # net.portmap's LEASE_S, MAX_LEASE_S
              help="The lease asked of the router for the port mapping; the host renews it at "
                   "half of it (a router may grant a shorter one).")
@click.option("--grace-seconds", type=click.IntRange(1, 86_400), default=60, show_default=True,
              help="Time a dropped player (or host) has to reconnect before counting as gone.")
@click.option("--watchers", type=click.IntRange(0, 64), default=16, show_default=True,
              help="How many may watch the table at once (`dernier watch`; 0: nobody).")
@click.option("--seed", type=SEED, default=None,
              help="Seed for a reproducible table (tests, demonstrations): the game id and "
                   "your shuffles follow from it, so anyone who knows it knows your shuffles.")
@peer_options
def host(
    variant: str, players: int, hands: int | None, target: int | None, leave: str | None,
    port: int, bind: str,
    advertise: str | None, name: str, table_name: str | None, no_announce: bool,
    turn_seconds: int, offer_seconds: float, send_first: bool, send_first_old: bool,
    relay: str | None, no_map: bool, map_lease: int,
    grace_seconds: int, watchers: int, seed: int | None, key: Path | None,
    transcript: Path | None, bot: bool, level: str | None, no_colour: bool, plain: bool,
) -> None:
    """Host a table for players on other machines (you play seat 0).

    Prints an invite code (`dernier join dn1-...`) holding every way to reach the table: this
    machine's global IPv6 address if it has one, its IPv4 address, a port opened on the
    router by UPnP or NAT-PMP, and the --relay; and says who can use it."""
    from dernier_p2p.cli.rejoin import exists_with_records, seat_seed
    from dernier_p2p.cli.render import echo_fitted
    from dernier_p2p.cli.table import Seating, host_table
    from dernier_p2p.net.discovery import BROADCAST, DEFAULT_PORT
    from dernier_p2p.net.host import HostConfig
    from dernier_p2p.net.timers import Timers

    options = _match_options(variant, players, hands, target, leave)
    level = _level(bot, level)
    relay_at = None if relay is None else _parse_address(relay, "--relay")
    identity = _identity(key)
    if exists_with_records(transcript):
        assert transcript is not None
        _come_back(identity, transcript, name, bot, no_colour, offer_seconds, relay_at, plain,
                   level, bind, map_port=not no_map, map_lease_s=map_lease)
        return
    _check_port_free(bind, port)
    path = _transcript_path(transcript, variant)
    ipv6, found = None, advertise is None
    if bind in ("0.0.0.0", ""):  # every interface: IPv6 too where this machine has a global one
        from dernier_p2p.net.ipv6 import global_ipv6

        ipv6 = global_ipv6()
    if advertise is None:
        if bind in ("0.0.0.0", ""):
            advertise = _local_address()
            if is_loopback(advertise) and ipv6 is not None:  # no IPv4 network: IPv6 only
                advertise = ipv6
        elif bind == "::":
            advertise = _local_address(ipv6=True)
        else:
            advertise = bind
    config = HostConfig(
        players=players, variant=variant, options=options,
        timers=Timers(turn_ms=turn_seconds * 1000, declare_ms=int(offer_seconds * 1000),
                      grace_ms=grace_seconds * 1000),
        name=name, table_name=(table_name or f"{name}'s table")[:32], bind=bind, port=port,
        advertise=advertise, transcript=path, envelopes=f"{path}.envelopes",
        announce_to=None if no_announce else (BROADCAST, DEFAULT_PORT),
        check_first=not (send_first or send_first_old), seed=seat_seed(identity),
        max_watchers=watchers, watchers_per_address=min(watchers, 4),
    )
    if found and ipv6 is not None and ":" not in advertise and not is_public(advertise):
        config.listen_host = ipv6  # for a host change: more players reach it than a LAN's
    if seed is not None:
        from dernier_p2p.cli.table import local_seed

        config.game, config.seed = local_seed(seed, "game", 0)[:16], local_seed(seed, "drbg", 0)
    echo_fitted(f"Transcript: {path}")
    if bot:
        click.echo(f"The {level} bot plays your seat.")
    screen = _screen(plain or bot)
    seating = Seating(bot=bot, colour=_colour(no_colour), offer_s=offer_seconds, screen=screen,
                      level=level)
    seat = _run(
        lambda: host_table(identity, config, seating, relay=relay_at, map_port=not no_map,
                           ipv6=ipv6, map_lease_s=map_lease, announce_mapping=found),
        f" on {host_port(bind, port)}", screen=screen, header=variant,
    )
    _final(seat, path, seating)


PORT_HINT = ("another program (or another `dernier host`) is listening there: choose another "
             "port with --port N, or --port 0 for any free one")


def _check_port_free(bind: str, port: int) -> None:
    """Fail with a hint, before any file is made or any line printed, when ``port`` cannot be
    listened on at ``bind`` (the host's listener binds it the same way moments later)."""
    import socket

    if port == 0:
        return
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as trio's listeners
            sock.bind((bind or "0.0.0.0", port))
            sock.listen(1)
    except OSError as exc:
        hint = f": {PORT_HINT}" if exc.errno == errno.EADDRINUSE else ""
        _fail(f"Cannot listen on {host_port(bind, port)}: {exc.strerror or exc}{hint}.")


def _come_back(
    identity: Any, transcript: Path, name: str, bot: bool, no_colour: bool, offer_s: float,
    relay: tuple[str, int] | None = None, plain: bool = False, level: str = DEFAULT_LEVEL,
    bind: str = "0.0.0.0", *, map_port: bool = True, map_lease_s: int = 3600,
) -> None:
    """``dernier host`` run again with the transcript of a match it hosted: the seat comes back
    as a player of the next host (PROTOCOL.md 7.6), found at its listen address or, given the
    table's ``relay`` (the host's ``--relay``), through the relay where it stands by. It
    listens again at ``bind`` (every interface for 0.0.0.0) on the port the table lists for
    it: the address listed may be its router's mapping, not one of this machine's, and that
    mapping is asked for again (``map_port``, for ``map_lease_s``; :func:`listed_routes`)."""
    from dernier_p2p.cli.internet import listed_routes
    from dernier_p2p.cli.rejoin import listed_address, seat_seed
    from dernier_p2p.cli.table import Seating, join_table
    from dernier_p2p.net.peer import PeerConfig

    click.echo(f"Restarting from {transcript}: you hosted this match; you come back as a "
               "player with the seat that hosts it now.")
    config = PeerConfig(name=name, transcript=transcript, restore=True, seed=seat_seed(identity),
                        connect_s=10.0, listen_optional=True, relay=relay,
                        listen_bind="" if bind in ("0.0.0.0", "::") else bind)
    screen = _screen(plain or bot)  # the same table as the match began with
    seating = Seating(bot=bot, colour=_colour(no_colour), offer_s=offer_s, screen=screen,
                      level=level)
    listed = listed_address(transcript, identity)

    async def play() -> Any:
        async with listed_routes(listed, seating.tell, map_port=map_port,
                                 map_lease_s=map_lease_s):
            return await join_table(identity, ("", 0), config, seating)

    seat = _run(play, " to the new host", screen=screen, header="dernier")
    _final(seat, transcript, seating)


def _parse_address(value: str, hint: str = "ADDRESS") -> tuple[str, int]:
    """``HOST:PORT``, an IPv6 host in brackets or bare (the port follows the last colon)."""
    where, sep, port = value.rpartition(":")
    host = where[1:-1] if where.startswith("[") and where.endswith("]") else where
    if not sep or not host or "[" in host or "]" in host or not port.isdigit():
        raise click.BadParameter(f"{value!r} is not HOST:PORT", param_hint=hint)
    if not 1 <= int(port) <= 65535:
        raise click.BadParameter(f"{value!r}: the port must be 1 to 65535", param_hint=hint)
    return host, int(port)


_BOX = {chr(c) for c in range(0x2500, 0x25A0)} | {"|"}
"""Box-drawing characters and block elements (and ``|``): a code copied out of a panel brings
its borders and the thumb of its scrollbar ("▂▂")."""


def pasted_target(text: str) -> str:
    """What a person pasted as the table to join, made whole: box-drawing characters, a
    scrollbar's blocks and line breaks (a code copied across a panel's wrap) removed, a
    leading ``dernier join`` (the whole printed line pasted) dropped, and the pieces of a code
    split by spaces joined; an address (``HOST:PORT``) is kept as it is. Empty when nothing
    is left."""
    words = "".join(" " if ch in _BOX else ch for ch in text).split()
    if len(words) >= 2 and [w.lower() for w in words[:2]] == ["dernier", "join"]:
        words = words[2:]
    elif words and words[0].lower() == "join":
        words = words[1:]
    if len(words) == 1 or (words and words[0].lower().startswith("dn")):
        return "".join(words)
    return " ".join(words)


def _ask_target() -> str:
    """Ask a person at a terminal for the host's invite code or address; the code may be
    pasted over several lines (copied out of a panel), an empty line ends it."""
    from dernier_p2p.net.invite import InviteError, decode

    click.echo("Paste the invite code (or HOST:PORT) the host gave you, then Enter "
               "(a code over several lines: an empty line ends it):")
    lines: list[str] = []
    while True:
        try:
            line = input()
        except (EOFError, KeyboardInterrupt):
            _fail("\nNo table given.", 130)
        lines.append(line)
        text = pasted_target(" ".join(lines))
        if not line.strip() and text:
            return text
        if ":" in text and not text.lower().startswith("dn"):
            return text
        try:
            decode(text)
        except InviteError:
            continue
        return text


def _discover(seconds: float, interactive: bool = False) -> tuple[str, int] | str:
    """A table heard on the LAN (HOST, PORT): a choice among those heard, or at a terminal
    when none is heard the code or address the person pastes (a str). Without a terminal one
    table heard is taken, a choice among several is read from standard input, and none, or no
    choice read, is a failure naming what to give instead."""
    import trio

    from dernier_p2p.net.discovery import listen

    click.echo(f"Listening for tables on the LAN for {seconds:g} s...")
    try:
        listing = trio.run(lambda: listen(seconds))
    except OSError as exc:
        _fail(f"Cannot listen for tables: {exc.strerror or exc}")
    except KeyboardInterrupt:
        _fail("\nInterrupted.", 130)
    tables = [t for t in listing.tables.values() if t.free > 0]
    if not tables:
        if interactive:
            click.echo("No open table heard on the LAN.")
            return _ask_target()
        _fail("No open table heard on the LAN; give the host's invite code or address: "
              "dernier join CODE, or dernier join HOST:PORT")
    for k, t in enumerate(tables, 1):
        click.echo(f"  {k}. {t.name} ({t.variant}, {t.free} seat(s) free) at {t.reach}:{t.port}")
    if len(tables) == 1 and not interactive:
        return tables[0].reach, tables[0].port
    try:  # without a terminal the choice may still come on standard input (a script's)
        choice = click.prompt("Join which table", type=click.IntRange(1, len(tables)), default=1)
    except click.Abort:
        _fail(f"\nNo choice among the {len(tables)} open tables heard on the LAN; name one: "
              "dernier join HOST:PORT")
    table = tables[choice - 1]
    return table.reach, table.port


@main.command()
@click.argument("address", nargs=-1)
@click.option("--name", default="Player", show_default=True, callback=_check_name,
              help="Your name at the table.")
@click.option("--listen", "listen_on", default=None, metavar="HOST[:PORT]",
              help="Address of this machine the others can reach, to host the table if the "
                   "host goes away (default: this machine's address and the table's port; "
                   "forward that port on a router).")
@click.option("--no-listen", is_flag=True,
              help="Never host this table, even if the host goes away.")
@click.option("--no-map", is_flag=True,
              help="With an invite code: do not ask the router to open the --listen port "
                   "(UPnP / NAT-PMP).")
@click.option("--map-lease-seconds", "map_lease", type=click.IntRange(2, 7 * 24 * 3600),
              default=3600, show_default=True,  # net.portmap's LEASE_S, MAX_LEASE_S
              help="The lease asked of the router for the --listen port's mapping; it is "
                   "renewed at half of it (a router may grant a shorter one).")
@click.option("--wait", type=click.FloatRange(0.5, 30), default=2.0, show_default=True,
              help="Seconds to listen for tables when no ADDRESS is given.")
@click.option("--censor-ms", type=click.IntRange(100, 600_000), default=None, hidden=True,
              help="For tests only: censor_ms (PROTOCOL.md 7.5) instead of 10000.")
@offer_option
@peer_options
def join(
    address: tuple[str, ...], name: str, listen_on: str | None, no_listen: bool, no_map: bool,
    map_lease: int, wait: float, censor_ms: int | None, offer_seconds: float, key: Path | None,
    transcript: Path | None, bot: bool, level: str | None, no_colour: bool, plain: bool,
) -> None:
    """Join a table by its invite code (dn1-...), at ADDRESS (HOST:PORT), or pick one heard on
    the LAN.

    With a code, this seat offers to host if the host goes away: its --listen port is opened on
    the router (UPnP / NAT-PMP) and that address announced, else it stands by at the code's
    relay."""
    from dernier_p2p.cli.rejoin import (
        bind_for,
        exists_with_records,
        latest_open_match,
        listed_address,
        parse_listen,
        seat_seed,
    )
    from dernier_p2p.cli.render import echo_fitted
    from dernier_p2p.cli.table import Seating, join_table
    from dernier_p2p.net.peer import PeerConfig

    level = _level(bot, level)
    target = pasted_target(" ".join(address))
    dialer = _invite_dialer(target) if target else None
    where = _parse_address(target) if target and dialer is None else None

    identity = _identity(key)
    restore = exists_with_records(transcript)
    path = transcript if restore and transcript is not None else _transcript_path(transcript,
                                                                                  "table")
    if where is None and dialer is None and not restore:
        found = _discover(wait, interactive=not bot and sys.stdin.isatty())
        if isinstance(found, str):
            dialer = _invite_dialer(found)
            where = None if dialer is not None else _parse_address(found)
        else:
            where = found
    table_port = where[1] if where is not None else 47630
    listen = None
    ipv6 = None  # this machine's global IPv6 address, announced where no mapping is made
    if listen_on is None and not no_listen and dialer is not None:
        from dernier_p2p.net.ipv6 import global_ipv6

        ipv6 = global_ipv6()
    if listen_on is not None and not no_listen:
        try:
            listen = parse_listen(listen_on, table_port)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--listen") from None
    elif not no_listen:  # a candidate host by default, at the table's port where it can be
        here = "127.0.0.1" if where is not None and is_loopback(where[0]) else _local_address()
        if is_loopback(here) and where is None and ipv6 is not None:  # no IPv4 network
            here = ipv6
        same_machine = where is not None and (is_loopback(where[0]) or where[0] == here)
        listen = (here, 0 if same_machine else table_port)  # beside the host: any free port
    config = PeerConfig(
        name=name, transcript=path, listen=listen, listen_optional=True,
        listen_bind=None if listen is None else bind_for(listen[0]),
        connect_s=10.0 if dialer is None else 10.0 + 5.0 * len(dialer.routes),
        dial=dialer, check_host=None if dialer is None else dialer.check_host,
        seed=seat_seed(identity), restore=restore,
        relay=None if dialer is None else dialer.relay_address(),
    )
    if censor_ms is not None:
        config.censor_ms = censor_ms
    if restore:
        echo_fitted(f"Resuming your seat from {path}.")
    if where is None:
        where = ("", 0)
    if dialer is not None:
        from dernier_p2p.net.invite import show_fingerprint

        fp = show_fingerprint(dialer.invite.fingerprint)
        echo_fitted(f"Invite for the host with key fingerprint {fp}; trying "
                   + ", then ".join(str(r) for r in dialer.routes) + f". Transcript: {path}")
        where, place = ("", 0), " to the table"
    else:
        assert where is not None
        place = f" to {host_port(*where)}"
        echo_fitted(f"Joining {host_port(*where)}. Transcript: {path}")
    if bot:
        click.echo(f"The {level} bot plays your seat.")
    screen = _screen(plain or bot)
    seating = Seating(bot=bot, colour=_colour(no_colour), offer_s=offer_seconds, screen=screen,
                      level=level)

    async def play() -> Any:
        from dernier_p2p.cli.internet import listed_routes, seat_routes

        if dialer is None:  # a LAN table, or a seat back: the address it had is given again
            listed = listed_address(path, identity) if restore else None
            async with listed_routes(listed, seating.tell, map_port=not no_map,
                                     map_lease_s=map_lease):
                return await join_table(identity, where, config, seating,
                                        lambda: latest_open_match(identity))
        async with seat_routes(config, seating.tell, map_port=not no_map, ipv6=ipv6,
                               map_lease_s=map_lease):
            return await join_table(identity, where, config, seating,
                                    lambda: latest_open_match(identity))

    seat = _run(play, place, screen=screen, header="dernier")
    if seat is None:
        _fail("The table never started.")
    _final(seat, Path(config.transcript) if config.transcript is not None else path, seating)


@main.command()
@click.argument("address")
@transcript_option
@colour_option
@plain_option
def watch(address: str, transcript: Path | None, no_colour: bool, plain: bool) -> None:
    """Watch a live table without a seat, by its invite code (dn1-...) or at ADDRESS
    (HOST:PORT): every public card, the log and the scores; hands appear when revealed. The
    records seen are written to a transcript that `dernier verify` checks."""
    from dernier_p2p.cli.render import echo_fitted
    from dernier_p2p.cli.table import Seating, watch_table
    from dernier_p2p.net.watch import WatchConfig

    dialer = _invite_dialer(address)
    where = _parse_address(address) if dialer is None else ("", 0)
    path = _transcript_path(transcript, "watch")
    config = WatchConfig(
        transcript=path, dial=dialer, check_host=None if dialer is None else dialer.check_host,
        connect_s=10.0 if dialer is None else 10.0 + 5.0 * len(dialer.routes),
    )
    shown = "the table" if dialer is not None else host_port(*where)
    place = f" to {shown}"
    echo_fitted(f"Watching {shown} (no seat: nothing you type is sent). Transcript: {path}")
    screen = _screen(plain)
    if screen is not None:
        screen.watching = True
    seating = Seating(bot=True, colour=_colour(no_colour), screen=screen)
    seat = _run(lambda: watch_table(where, config, seating), place,
                interrupted="You stopped watching.", screen=screen, header="dernier")
    if seat is None:
        _fail("The table never started.")
    _final(seat, path)


def _invite_dialer(text: str) -> Any:
    """A Dialer for an invite code; None if ``text`` is not meant as one (an address)."""
    from dernier_p2p.net.invite import InviteError, decode
    from dernier_p2p.net.reach import Dialer

    if not text.strip().lower().startswith("dn") or ":" in text:
        return None
    try:
        return Dialer(decode(text))
    except InviteError as exc:
        detail = (f"that invite code does not work: {exc}. Copy and paste it whole (a code "
                  "over two lines: run `dernier join` alone and paste it at its prompt), or "
                  "ask the host to send it again.")
        raise click.BadParameter(detail, param_hint="ADDRESS") from None


# --------------------------------------------------------------------------- relay
@main.command()
@click.option("--port", type=click.IntRange(1, 65535), default=47640, show_default=True,
              help="TCP port to listen on.")
@click.option("--bind", default="0.0.0.0", show_default=True, help="Address to listen on.")
@click.option("--record", type=click.Path(path_type=Path), default=None,
              help="Write every forwarded frame to this new file, mode 0600 (to see what "
                   "passed through); an existing file or a symbolic link is refused.")
def relay(port: int, bind: str, record: Path | None) -> None:
    """Relay tables for hosts that players cannot reach: pairs a table's host with its
    joiners and forwards their frames (all signed, private parts encrypted end to end)."""
    import logging

    import trio

    from dernier_p2p.net.relay import Relay, open_record, serve_relay

    logger = logging.getLogger("dernier_p2p.net.relay")
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)

    sink = None
    if record is not None:
        try:
            sink = open_record(record)
        except FileExistsError:
            detail = f"{record} already exists (or is a symbolic link): the relay writes a new file"
            raise click.BadParameter(detail, param_hint="--record") from None
        except OSError as exc:
            raise click.BadParameter(f"cannot create {record}: {exc.strerror or exc}",
                                     param_hint="--record") from None

    async def serve() -> None:
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(serve_relay, Relay(sink), port, bind)
                click.echo(relay_banner(bind, port, _local_address(ipv6=":" in bind)))
        finally:
            if sink is not None:
                sink.close()

    _run(serve, f" on {bind}:{port}", interrupted="Relay stopped.")


def relay_banner(bind: str, port: int, local: str) -> str:
    """What ``dernier relay`` tells its operator: where it listens and the exact ``--relay``
    for hosts, at the bound address, or at ``local`` (this machine's address) when it listens
    on every address; a private or loopback address is said to be one."""
    import ipaddress

    at = local if bind in ("", "0.0.0.0", "::") else bind
    line = (f"Relay listening on {host_port(bind or '0.0.0.0', port)}. Hosts use: dernier host "
            f"--relay {host_port(at, port)}")
    try:
        ip = ipaddress.ip_address(at)
    except ValueError:
        return line
    if ip.is_loopback:
        return f"{line} (a loopback address: only players on this machine reach it)"
    if ip.is_private or ip.is_link_local:
        return (f"{line} ({at} is an address on this network: players elsewhere reach the relay "
                f"at this network's public address, with port {port} forwarded to this machine)")
    return line


# --------------------------------------------------------------------------- verify / replay
transcript_argument = click.argument("file", type=click.Path(path_type=Path))


def _summary_lines(summary: Any) -> list[str]:
    names = summary.names
    out = []
    if summary.variant is not None:
        who = ", ".join(f"{k}: {n}" for k, n in enumerate(names))
        out.append(f"Table: {summary.variant}, {summary.players} players ({who})")
    if summary.version is not None:
        out.append(f"Protocol version {summary.version}")
    out.append(f"Records: {summary.records}; hands scored: {summary.hands}")
    if summary.scores:
        out.append("Scores: " + ", ".join(f"{names[i]} {s}" for i, s in
                                          enumerate(summary.scores)))
    if any(summary.match_points):
        out.append("Match points: " + ", ".join(f"{names[i]} {p}" for i, p in
                                                enumerate(summary.match_points)))
    if summary.no_contest:
        out.append("Result: no contest (nobody ranked, no scores or match points changed)")
    elif summary.winner is not None:
        out.append(f"Winner: {names[summary.winner]}")
    if summary.end_holders is not None and summary.end_quorum:
        held = f"{summary.end_holders} seat{'s' if summary.end_holders != 1 else ''}"
        if summary.end_holders >= summary.end_quorum:
            out.append(f"Final: {held} shown holding the record that ended the match "
                       f"(a quorum is {summary.end_quorum})")
        else:
            out.append(f"Not final: only {held} shown holding the record that ended the "
                       f"match (a quorum is {summary.end_quorum}); another result may stand "
                       "at the table")
    return out


@main.command()
@transcript_argument
@click.option("--envelopes", type=click.Path(path_type=Path), default=None,
              help="An envelope side file (a host's FILE.envelopes): envelopes received but "
                   "never sequenced are judged after the last record.")
def verify(file: Path, envelopes: Path | None) -> None:
    """Audit a transcript: chain, signatures, deck proofs, every move and every hand's reveal.

    Exit 0 when it checks, 1 when a fault is found (the seat at fault is named) or the
    transcript ends before the match is over (nobody is at fault), 2 when the file cannot be
    read as a transcript. Transcripts of protocol versions 2, 3 and 4 are checked too, with the
    rules their version had."""
    from dernier_p2p.protocol.verify import INCOMPLETE, UNREADABLE, verify_file

    try:
        verdict = verify_file(file, envelopes=envelopes)
    except Exception as exc:  # a file the checks did not foresee: a message, never a traceback
        _fail(f"Cannot read {file}: {type(exc).__name__}: {exc}", EXIT_UNREADABLE)
    if verdict.code == UNREADABLE:
        _fail(f"Cannot read {verdict.detail}", EXIT_UNREADABLE)
    names = verdict.summary.names
    _say_torn(verdict.torn)

    def label(seat: int) -> str:
        return names[seat] if seat < len(names) else "?"

    if verdict.ok:
        click.echo("OK: the transcript checks: every signature, shuffle, card and move.")
    elif verdict.code == INCOMPLETE:
        waits = ", ".join(f"seat {s} ({label(s)})" for s in verdict.waiting) or "no seat"
        click.echo(f"INCOMPLETE: the transcript ends before the match is over (the table waits "
                   f"on {waits}); nobody is at fault for an unfinished transcript")
    else:
        who = "no seat can be named"
        if verdict.seat is not None:
            name = label(verdict.seat)
            who = f"seat {verdict.seat} ({name}) is at fault"
            if verdict.code in FILE_DAMAGE:
                who = (f"the file was altered or damaged, or seat {verdict.seat} ({name}) "
                       "signed something false; the file is the likelier culprit")
        where = "" if verdict.index is None else f" at record {verdict.index}"
        click.echo(f"FAULT{where}: {verdict.code}: {who}")
        click.echo(f"  {verdict.detail}")
    for line in _summary_lines(verdict.summary):
        click.echo(line)
    sys.exit(0 if verdict.ok else EXIT_FAULT)


def _say_torn(torn: Any) -> None:
    """Say that the file ends inside a record (a crash while it was written), if it does."""
    if torn is None:
        return
    if torn.index is None:
        click.echo(f"The file ends inside its header ({torn.size} bytes): it was cut off by a "
                   "crash before its first record.")
        return
    click.echo(f"The file ends inside record {torn.index} (byte {torn.offset}, {torn.size} bytes "
               f"of it): it was cut off by a crash while that record was written; the "
               f"{torn.index} records before it are the ones checked.")


@main.command()
@transcript_argument
@colour_option
def replay(file: Path, no_colour: bool) -> None:
    """Replay a transcript move by move; every hand is shown once its cards are revealed."""
    from dernier_p2p.cli.narrate import replay_lines
    from dernier_p2p.protocol.replay import replay_file
    from dernier_p2p.protocol.verify import UNREADABLE

    try:
        rp = replay_file(file)
    except Exception as exc:  # a file the checks did not foresee: a message, never a traceback
        _fail(f"Cannot read {file}: {type(exc).__name__}: {exc}", EXIT_UNREADABLE)
    if rp.verdict.code == UNREADABLE:
        _fail(f"Cannot read {rp.verdict.detail}", EXIT_UNREADABLE)
    _say_torn(rp.verdict.torn)
    for line in replay_lines(rp, _colour(no_colour)):
        click.echo(line)
    if not rp.verdict.ok:
        v = rp.verdict
        who = "" if v.seat is None else f" (seat {v.seat})"
        where = "" if v.index is None else f" at record {v.index}"
        click.echo(f"Replay stops{where}: {v.code}{who}: {v.detail}")
        sys.exit(EXIT_FAULT)


# --------------------------------------------------------------------------- bench
@main.command()
@variant_option
@click.option("--players", type=click.IntRange(2, 10), default=2, show_default=True)
def bench(variant: str, players: int) -> None:
    """A quick figure: one hand of bots with the full protocol, in memory (every seat's
    session in this process). The scripts under benchmarks/ measure in detail."""
    import time

    from dernier_p2p.bots import HeuristicBot
    from dernier_p2p.protocol.local import run_local_match

    _match_options(variant, players, 1, None)
    seeds = [bytes([k + 1]) * 32 for k in range(players)]
    bots = [HeuristicBot(k) for k in range(players)]
    start = time.perf_counter()
    result = run_local_match(variant, players, seeds, bots, options={"match": ["hands", 1]})
    took = time.perf_counter() - start
    click.echo(
        f"{variant}, {players} seats, one hand: {len(result.records)} records in {took:.2f} s "
        f"(every seat's session, deck and bot in this one process)"
    )
    from dernier_p2p import rules

    click.echo(f"rules engine: {rules.BUILD}")
    click.echo(f"group arithmetic: {GROUP_PATH}")
