"""Bot levels and specs: easy, normal and strong are the random, heuristic and search bots."""

from __future__ import annotations

import pytest

from dernier_p2p.bots import HeuristicBot, RandomBot, SearchBot
from dernier_p2p.bots.levels import DEFAULT_LEVEL, LEVELS, make_bot


def test_each_level_is_its_bot() -> None:
    assert LEVELS == ("easy", "normal", "strong") and DEFAULT_LEVEL == "normal"
    assert isinstance(make_bot("easy", 1), RandomBot)
    assert isinstance(make_bot("normal", 1), HeuristicBot)
    strong = make_bot("strong", 1)
    assert isinstance(strong, SearchBot) and strong.slow


def test_specs_with_a_budget() -> None:
    bot = make_bot("search@120", 0)
    assert isinstance(bot, SearchBot) and bot.iterations == 120 and bot.seconds is None
    bot = make_bot("search@0.25s", 0)
    assert isinstance(bot, SearchBot) and bot.seconds == 0.25 and bot.iterations is None
    assert make_bot("search@50", 0).method == "flat"
    assert make_bot("search-tree@50", 0).method == "tree"
    assert make_bot("search-close@50", 0).close > 0 and make_bot("search@50", 0).close == 0
    assert make_bot("search@50", 0).tracker.plays and make_bot("search@50", 0).model
    blind = make_bot("search-blind@50", 0)
    assert not blind.tracker.plays and not blind.model


@pytest.mark.parametrize("spec", ["hard", "search@", "search@x", "search@-3", "random@5", ""])
def test_a_bad_spec_is_named(spec: str) -> None:
    with pytest.raises(ValueError, match="unknown bot"):
        make_bot(spec, 0)


def test_the_strong_level_is_the_search_at_its_default_budget() -> None:
    from dernier_p2p.bots.search import DEFAULT_ITERATIONS

    strong = make_bot("strong", 5)
    assert (strong.iterations, strong.seconds, strong.method) == (DEFAULT_ITERATIONS, None,
                                                                  "flat")
    assert make_bot("search", 5).iterations == DEFAULT_ITERATIONS


def test_the_command_line_offers_the_levels() -> None:
    """``dernier play --bots`` and ``dernier host|join --bot --level`` take exactly the
    levels; ``play`` defaults to the normal bots, ``--level`` to nothing (normal with
    ``--bot``)."""
    from dernier_p2p.cli.main import _level, main

    def option(command: str, name: str):
        return next(p for p in main.commands[command].params if p.name == name)

    bots = option("play", "bots")
    assert tuple(bots.type.choices) == LEVELS and bots.default == DEFAULT_LEVEL
    for command in ("host", "join"):
        level = option(command, "level")
        assert tuple(level.type.choices) == LEVELS and level.default is None
    assert _level(True, None) == DEFAULT_LEVEL and _level(True, "strong") == "strong"
