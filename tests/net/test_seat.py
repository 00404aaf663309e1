"""The local seat's presence notices (``status`` frames, PROTOCOL.md 4.4)."""

from __future__ import annotations

from dernier_p2p.net.seat import MAX_PRESENCE, LocalSeat
from dernier_p2p.protocol.local import LocalTable
from dernier_p2p.protocol.node.own import OwnSeat


async def test_a_host_sending_status_frames_without_end_fills_no_memory() -> None:
    """Drops and returns are kept in order, up to MAX_PRESENCE notices; a host that keeps
    sending them has the rest ignored (the seat's memory and screen stay bounded)."""
    t = LocalTable("dernier", [bytes([90 + k]) * 32 for k in range(3)])
    me = LocalSeat(OwnSeat(t.identities[1], 1, t.records[0], bytes(32)), None)
    me.note_status(2, "dropped", 500)
    me.note_status(2, "back", 0)
    assert [(p.seat, p.state) for p in me.presence] == [(2, "dropped"), (2, "back")]
    assert me.away() == {}
    for k in range(MAX_PRESENCE + 1000):
        me.note_status(2, ("dropped", "back")[k % 2], 500)
    assert len(me.presence) == MAX_PRESENCE
    me.close()
