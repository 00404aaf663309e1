"""``ready`` frames: signed by their seat, checked field by field; a forged one is refused."""

from __future__ import annotations

import pytest

from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.ready import check_ready_frame, ready_frame
from dernier_p2p.wire.identity import IdentityKey

GAME = bytes(range(16))
KEYS = [IdentityKey.generate(bytes([s]) * 32) for s in range(3)]
PUBLIC = [k.public_bytes() for k in KEYS]


def test_a_seats_ready_frame_checks_and_names_its_seat_and_record() -> None:
    frame = ready_frame(KEYS[1], GAME, 1, 42)
    assert set(frame) == {"k", "seat", "at", "sig"} and frame["k"] == "ready"
    assert check_ready_frame(frame, PUBLIC, GAME) == (1, 42)


@pytest.mark.parametrize(
    "change, code",
    [
        ({"seat": 2}, "BAD_SIGNATURE"),  # the host relabels seat 1's frame as seat 2's
        ({"at": 43}, "BAD_SIGNATURE"),  # or moves it to a later record
        ({"seat": 3}, "MALFORMED"),
        ({"at": -1}, "MALFORMED"),
        ({"at": True}, "MALFORMED"),
        ({"sig": b"x" * 63}, "MALFORMED"),
        ({"extra": 1}, "MALFORMED"),
    ],
)
def test_a_changed_or_malformed_ready_frame_is_refused(change: dict, code: str) -> None:
    frame = {**ready_frame(KEYS[1], GAME, 1, 42), **change}
    with pytest.raises(ProtocolError) as err:
        check_ready_frame(frame, PUBLIC, GAME)
    assert err.value.code == code


def test_a_ready_frame_of_another_game_does_not_check() -> None:
    frame = ready_frame(KEYS[0], bytes(16), 0, 5)
    with pytest.raises(ProtocolError) as err:
        check_ready_frame(frame, PUBLIC, GAME)
    assert err.value.code == "BAD_SIGNATURE"
