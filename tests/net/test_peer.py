"""The peer over loopback TCP: a dropped connection resumes within the grace period."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from dernier_p2p.rules import Phase

from .helpers import play, transcripts, verify, wait_for


def mid_hand(table: Any, after: int) -> bool:
    host = table.host
    return (
        host.me is not None
        and host.me.session.state.phase is Phase.PLAY
        and len(host.sequencer.records) > after
    )


async def test_a_dropped_peer_resumes_within_grace(tmp_path: Path) -> None:
    drops = []

    async def drop_connection(table: Any) -> None:
        await wait_for(lambda: mid_hand(table, 30))
        peer = table.peers[1]
        drops.append(len(peer.me.records))
        await trio.aclose_forcefully(peer.stream)  # the socket dies under the peer

    table = await play(tmp_path, 2, watch=drop_connection)
    assert not table.errors
    assert table.peers[1].resumes == 1
    got = transcripts(tmp_path, range(2))
    assert got[0] == got[1]
    bodies = [r["env"]["body"]["type"] for r in got[0]]
    assert "left" not in bodies and "timeout" not in bodies
    assert len(got[0]) > drops[0]
    observer = verify(got[0])
    assert observer.finished and observer.result == table.results[1]
