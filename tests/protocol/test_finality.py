"""Finality of records (PROTOCOL.md 7.11): holders, the quorum, and which history a seat keeps."""

from __future__ import annotations

from typing import Any

from dernier_p2p.protocol.envelope import genesis_hash, record_hash
from dernier_p2p.protocol.finality import goes_over, holders, is_final, split

GAME = b"g" * 16


def chain(steps: list[tuple[int, int, int | None]], base: list[dict[str, Any]] | None = None,
          tag: bytes = b"a") -> list[dict[str, Any]]:
    """Records from ``(host, author, echo)`` steps: ``echo`` is the index whose hash the
    author's head names (None: the genesis hash)."""
    recs = list(base or [])
    for host, author, echo in steps:
        i = len(recs)
        head = genesis_hash(GAME) if echo is None else record_hash(recs[echo])
        prev = genesis_hash(GAME) if i == 0 else record_hash(recs[-1])
        env = {"body": {"type": "ack"}, "game": GAME, "head": head, "n": i, "seat": author,
               "sig": b"s" * 64}
        recs.append({"env": env, "h": host, "hsig": tag + bytes([i]) * 63, "i": i,
                     "prev": prev, "t": i})
    return recs


def test_the_signer_and_the_host_of_every_later_record_hold_a_record() -> None:
    recs = chain([(0, 0, None), (0, 1, 0), (0, 2, 0), (3, 3, 2)])
    assert holders(recs, 2) == {0, 3}  # seat 2's envelope at 2 echoes 0: not record 2


def test_an_envelope_echoing_the_record_or_a_later_one_shows_its_author_holding_it() -> None:
    recs = chain([(0, 0, None), (0, 1, 0), (0, 2, 1), (0, 3, 2), (0, 4, 1)])
    assert holders(recs, 1) == {0, 2, 3, 4}
    assert holders(recs, 2) == {0, 3}  # 4 echoes record 1, not 2; 2's own envelope echoes 1
    assert holders(recs, 9) == set()


def test_a_record_is_final_at_a_quorum_of_the_table() -> None:
    recs = chain([(0, 0, None), (0, 1, 0), (0, 2, 1), (0, 3, 1)])
    assert holders(recs, 1) == {0, 2, 3}
    assert is_final(recs, 1, 5)  # q(5) = 3
    assert not is_final(recs, 1, 6)  # q(6) = 4
    assert not is_final(recs, 3, 5)  # only its signer holds the last record
    assert is_final(recs, 3, 2)  # at two seats no quorum deposes: final at once
    assert not is_final(recs, 4, 2)


def test_two_histories_split_where_their_records_differ() -> None:
    base = chain([(0, 0, None), (0, 1, 0)])
    a = chain([(0, 2, 1)], base, b"a")
    b = chain([(1, 1, 1)], base, b"b")
    assert split(a, b) == 2
    assert split(a, a[:2]) is None


def test_a_seat_goes_over_only_from_a_history_not_final_to_one_that_is() -> None:
    base = chain([(0, 0, None), (0, 1, 0), (0, 2, 1)])
    # the old host's history after the split, followed by seats 2, 3 and 4
    old = chain([(0, 2, 2), (0, 3, 3), (0, 4, 3)], base, b"o")
    # a new host's history, only itself holding it
    new = chain([(1, 1, 2)], base, b"n")
    assert goes_over(new, old, 5)
    assert not goes_over(old, new, 5)
    # never from a final record, even to another final one
    assert not goes_over(old, old[:3] + chain([(1, 1, 2), (1, 2, 3), (1, 3, 3)], base, b"x")[3:], 5)
    assert not goes_over(old, old, 5)  # no split


def test_records_from_another_peer_that_are_junk_show_nothing_and_raise_nothing() -> None:
    """Rebuild records come from a host before they are checked (7.11): junk shows no
    holder, and an unhashable head echo is no crash."""
    recs = chain([(0, 0, None), (0, 1, 0), (0, 2, 1)])
    listy = dict(recs[2], env=dict(recs[2]["env"], head=[1, 2]))
    assert holders(recs[:2] + [listy], 1) == {0}
    assert holders(recs[:2] + [["not", "a", "record"]], 1) == {0}
    assert holders([None, 7, "x"], 0) == set()
    assert holders(recs[:2] + [dict(recs[2], env={"seat": 2, "head": {"a": 1}})], 1) == {0}
    assert not goes_over(recs, recs[:1] + [None, None], 3)


def test_record_0_has_holders_and_is_final_at_two_seats() -> None:
    recs = chain([(0, 0, None), (0, 1, 0), (1, 2, 1)])
    assert holders(recs, 0) == {0, 1, 2}  # the hosts of every record, the authors echoing
    assert is_final(recs, 0, 2) and is_final(recs, 2, 2)
    assert not is_final(recs, 3, 2) and not is_final(recs, -1, 2)


def test_at_three_seats_one_holder_is_not_final_and_two_are() -> None:
    recs = chain([(0, 0, None), (0, 1, 0), (0, 2, 1)])
    assert holders(recs, 2) == {0}
    assert not is_final(recs, 2, 3)  # q(3) = 2
    assert holders(recs, 1) == {0, 2} and is_final(recs, 1, 3)


def test_an_envelope_that_is_not_a_map_after_the_record_shows_nothing() -> None:
    recs = chain([(0, 0, None), (0, 1, 0), (0, 2, 1)])
    assert holders(recs[:2] + [dict(recs[2], env=5)], 1) == {0}


def test_histories_that_differ_at_record_0_are_other_tables_and_one_at_1_goes_over() -> None:
    mine = chain([(0, 0, None)], tag=b"m") + chain([(0, 1, 0)], chain([(0, 0, None)]))[1:]
    theirs = chain([(0, 0, None), (0, 1, 0), (0, 2, 1), (0, 3, 1)], tag=b"t")
    assert holders(theirs, 0) == {0, 1, 2, 3} and not is_final(mine, 0, 5)
    assert not goes_over(mine, theirs, 5)  # another record 0: another table, never followed
    base = chain([(0, 0, None)])
    own = chain([(1, 1, 0)], base, b"o")  # split at 1, only its host holds it
    other = chain([(0, 1, 0), (0, 2, 1), (0, 3, 1)], base, b"t")
    assert goes_over(own, other, 5)
