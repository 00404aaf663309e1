"""Bot levels for people, and bots named by a short spec (benchmarks, the command line).

``easy`` is the random bot (any card that fits), ``normal`` the heuristic bot, ``strong`` the
search bot at its default budget. A spec is a level, a bot's name (``random``,
``heuristic``, ``search``) or a search with its budget: ``search@200`` (worlds per decision)
or ``search@0.25s`` (seconds per decision); ``search-tree`` is the search by ISMCTS (see
:mod:`~dernier_p2p.bots.search`), ``search-close`` the search that gives close calls more
worlds (its ``close`` option), ``search-blind`` the search that reads nothing of the cards
others play (its ``plays`` and ``model`` options off, as it was before they were added).
"""

from __future__ import annotations

from dernier_p2p.bots.heuristic import HeuristicBot
from dernier_p2p.bots.random_bot import RandomBot
from dernier_p2p.bots.search import CLOSE, SearchBot
from dernier_p2p.bots.view import Policy

LEVELS = ("easy", "normal", "strong")
LEVEL_BOTS = {"easy": "random", "normal": "heuristic", "strong": "search"}
DEFAULT_LEVEL = "normal"


def make_bot(spec: str, seed: int) -> Policy:
    """The bot named by ``spec`` (see the module docstring), seeded with ``seed``; a
    ValueError names what is wrong with a bad spec."""
    name, at, budget = LEVEL_BOTS.get(spec, spec).partition("@")
    if name == "random" and not at:
        return RandomBot(seed)
    if name == "heuristic" and not at:
        return HeuristicBot(seed)
    if name in ("search", "search-tree", "search-close", "search-blind"):
        method = "tree" if name == "search-tree" else "flat"
        extra: dict = {"close": CLOSE} if name == "search-close" else {}
        if name == "search-blind":
            extra.update(plays=False, model=False)
        if not at:
            return SearchBot(seed, method=method, **extra)
        try:
            if budget.endswith("s"):
                return SearchBot(seed, seconds=float(budget[:-1]), method=method, **extra)
            return SearchBot(seed, iterations=int(budget), method=method, **extra)
        except ValueError:
            pass
    raise ValueError(
        f"unknown bot {spec!r}: use {', '.join(LEVELS)}, random, heuristic, search, "
        "search@WORLDS or search@SECONDSs"
    )
