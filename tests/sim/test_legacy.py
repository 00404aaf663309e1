"""sim/legacy.py: cases recorded before seats answered a run of deals at once replay with one
answer per operation; outside the block, sessions answer runs at once again."""

from __future__ import annotations

from dernier_p2p.protocol.local import identity_for
from dernier_p2p.protocol.node.own import OwnSeat
from dernier_p2p.protocol.session import Session
from dernier_p2p.sim.legacy import answers_each
from tests.protocol.liveness import Bed


def _sessions() -> tuple[Session, OwnSeat]:
    bed = Bed.opened()
    record0, seed = bed.records[0], bed.t.seeds[1]
    return Session(identity_for(seed), 1, record0, seed), OwnSeat(identity_for(seed), 1,
                                                                  record0, seed)


def test_sessions_made_inside_answer_each_operation_and_outside_runs_at_once() -> None:
    session, own = _sessions()
    assert session.batch_answers and own.session.batch_answers
    with answers_each():
        session, own = _sessions()
        assert not session.batch_answers and not own.session.batch_answers
    session, own = _sessions()
    assert session.batch_answers and own.session.batch_answers


def test_the_default_comes_back_after_an_error_inside() -> None:
    try:
        with answers_each():
            raise KeyError("inside")
    except KeyError:
        pass
    assert _sessions()[0].batch_answers
