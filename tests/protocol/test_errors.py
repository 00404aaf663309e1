import copy
import pickle
import re
from pathlib import Path

import pytest

from dernier_p2p.deck.errors import BadProof
from dernier_p2p.protocol import errors
from dernier_p2p.protocol.errors import CODES, ProtocolError, from_deck_error

CONTRACT_CODES = {
    "MALFORMED", "BAD_SIGNATURE", "BAD_CHAIN", "FORK", "DUPLICATE", "OUT_OF_ORDER",
    "UNKNOWN_MESSAGE", "ILLEGAL_MOVE", "NOT_HELD", "DECK_FAULT", "TIMEOUT", "VERSION",
    "TABLE_MISMATCH",
}


def test_fields_and_message():
    e = ProtocolError("FORK", 2, "head echo unknown")
    assert (e.code, e.seat, e.detail) == ("FORK", 2, "head echo unknown")
    assert str(e) == "FORK (seat 2): head echo unknown"
    assert "unknown seat" in str(ProtocolError("MALFORMED", None, "x"))


def test_copy_and_pickle_keep_fields():
    e = ProtocolError("DUPLICATE", 1, "counter 3 reused")
    for again in (pickle.loads(pickle.dumps(e)), copy.copy(e)):
        assert (again.code, again.seat, again.detail) == (e.code, e.seat, e.detail)


def test_empty_code_refused():
    with pytest.raises(ValueError):
        ProtocolError("", 0, "x")


def test_contract_codes_documented():
    assert CONTRACT_CODES <= set(CODES)
    assert all(isinstance(v, str) and v for v in CODES.values())
    assert all(re.fullmatch(r"[A-Z_]+", c) for c in CODES)


def test_every_code_raised_in_the_package_is_documented():
    root = Path(errors.__file__).parent
    used = set()
    for path in root.glob("*.py"):
        used |= set(re.findall(r'ProtocolError\(\s*"([A-Z_]+)"', path.read_text()))
    assert used, "no raise sites found"
    assert used <= set(CODES), used - set(CODES)


def test_from_deck_error_names_the_deck_seat():
    e = from_deck_error(BadProof("token proof fails", 3))
    assert (e.code, e.seat) == ("DECK_FAULT", 3)
    assert "BadProof" in e.detail and "token proof fails" in e.detail
