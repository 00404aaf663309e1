"""Players that choose moves from their own view of the table.

A bot is a policy ``bot(state, seat, view) -> Move | None`` usable with
``dernier_p2p.rules.simulate.play_match``: ``view`` holds the faces of the seat's own hand slots
and the bot chooses among ``rules.legal_moves(state, seat, view)``. Asked out of turn, it returns
None when it wants no optional move (jump-in, late declaration, catch).

Three bots: :class:`RandomBot` (any legal move), :class:`HeuristicBot` (habits that play to
win) and :class:`SearchBot` (information-set search with the rules engine); the levels for
people (easy, normal, strong) are in :mod:`~dernier_p2p.bots.levels`, and :func:`hint` says in
words what the search bot would do in a person's seat.
"""

from dernier_p2p.bots.heuristic import HeuristicBot
from dernier_p2p.bots.hint import hint
from dernier_p2p.bots.random_bot import RandomBot
from dernier_p2p.bots.search import SearchBot
from dernier_p2p.bots.view import Policy, own_faces, seat_moves

__all__ = ["HeuristicBot", "Policy", "RandomBot", "SearchBot", "hint", "own_faces", "seat_moves"]
