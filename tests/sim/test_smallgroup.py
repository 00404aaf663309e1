"""The simulator's insecure small group: the deck works unchanged inside it, faults are still
found, and the real group is back after it."""

from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path

import pytest

import dernier_p2p
from dernier_p2p.bots import HeuristicBot
from dernier_p2p.deck import group as g
from dernier_p2p.deck.cards import card_elements
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.errors import BadProof
from dernier_p2p.deck.shuffle import generators, shuffle, verify_shuffle
from dernier_p2p.protocol.envelope import sign_envelope
from dernier_p2p.protocol.errors import ProtocolError
from dernier_p2p.protocol.local import LocalTable, run_local_match
from dernier_p2p.protocol.verify import check_records
from dernier_p2p.sim import smallgroup as sg
from dernier_p2p.sim.smallgroup import insecure_small_group

ONE_HAND = {"match": ["hands", 1]}
REAL_ORDER = g.ORDER
REAL_GENERATOR = g.GENERATOR


def seeds(n: int) -> list[bytes]:
    return [bytes([k + 1]) * 32 for k in range(n)]


def small_valued(element: bytes) -> bool:
    return len(element) == 32 and int.from_bytes(element, "little") < sg.P


def test_the_modulus_is_a_safe_prime_and_the_generator_generates() -> None:
    def prime(n: int) -> bool:  # Miller-Rabin with the bases that decide every n < 3.3e24
        d, s = n - 1, 0
        while d % 2 == 0:
            d, s = d // 2, s + 1
        for a in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
            x = pow(a, d, n)
            if x in (1, n - 1):
                continue
            for _ in range(s - 1):
                x = x * x % n
                if x == n - 1:
                    break
            else:
                return False
        return True

    assert sg.P == 2 * sg.ORDER + 1 and prime(sg.P) and prime(sg.ORDER)
    assert sg.P < 2**64 and sg.ORDER.bit_length() == 63
    with insecure_small_group():
        assert g.ORDER == sg.ORDER and g.GENERATOR == sg.GENERATOR
        assert g.mul(g.ORDER - 1, g.GENERATOR) == g.neg(g.GENERATOR)
        assert g.base_mul(g.ORDER) == g.IDENTITY
        a, b = 12345678901234567890, 98765432109876543210
        assert g.add(g.base_mul(a), g.base_mul(b)) == g.base_mul(a + b)
        assert g.mul(b, g.base_mul(a)) == g.base_mul(a * b)
        assert g.sub(g.base_mul(a), g.base_mul(a)) == g.IDENTITY
        assert g.add(g.base_mul(a), g.neg(g.base_mul(a))) == g.IDENTITY
        assert g.mul(0, g.GENERATOR) == g.mul(5, g.IDENTITY) == g.IDENTITY
        assert g.multi_mul([a, b], [g.GENERATOR, g.GENERATOR]) == g.base_mul(a + b)
        assert g.sum_elements([]) == g.IDENTITY
        assert g.sum_elements([g.base_mul(a), g.base_mul(b)]) == g.base_mul(a + b)


def test_decode_refuses_what_the_real_one_refuses() -> None:
    with insecure_small_group():
        p = g.base_mul(7)
        assert g.decode(p) == p and g.decode(bytearray(p)) == p
        non_residue = next(v for v in range(2, 100) if pow(v, sg.ORDER, sg.P) != 1)
        for bad in (
            g.IDENTITY,  # the identity never travels
            bytes(32),  # zero is no element
            sg.P.to_bytes(32, "little"),  # out of range
            (int.from_bytes(p, "little") + sg.P).to_bytes(32, "little"),  # non-canonical
            b"\xff" * 32,
            non_residue.to_bytes(32, "little"),  # outside the prime-order subgroup
            p[:31],
            p + b"\x00",
            b"",
            "not bytes",
        ):
            with pytest.raises(g.InvalidElement):
                g.decode(bad)  # type: ignore[arg-type]
        with pytest.raises(g.InvalidElement):
            g.mul(3, sg.P.to_bytes(32, "little"))
        assert g.decode_scalar(g.encode_scalar(5)) == 5
        assert g.encode_scalar(-1) == (g.ORDER - 1).to_bytes(32, "little")
        for bad_scalar in (g.ORDER.to_bytes(32, "little"), b"\x01", b"\x00" * 33):
            with pytest.raises(g.InvalidScalar):
                g.decode_scalar(bad_scalar)


def test_hash_to_element_is_a_deterministic_separated_square() -> None:
    with insecure_small_group():
        a = g.hash_to_element(b"label", b"x")
        assert a == g.hash_to_element(b"label", b"x") and g.decode(a) == a
        assert a != g.hash_to_element(b"label", b"y")
        assert a != g.hash_to_element(b"labe", b"lx")
        with pytest.raises(ValueError):
            g.hash_to_element(b"x" * 256, b"")
        # every deck's cards are distinct elements of the small group
        for name in ("dernier-54", "standard-108", "moderno-112"):
            elements = card_elements(name)
            assert len(set(elements)) == len(elements)
            assert all(small_valued(m) and g.decode(m) == m for m in elements)


def test_a_shuffle_proof_verifies_and_a_tampered_one_does_not() -> None:
    ctx = {"game": b"\x01" * 16, "hand": 1, "step": "shuffle", "seat": 0}
    with insecure_small_group():
        d = Drbg(b"\x07" * 32)
        pk = g.base_mul(d.scalar())
        deck = [(g.IDENTITY, m) for m in card_elements("dernier-54")]
        out, proof = shuffle(pk, deck, d, ctx)
        assert all(small_valued(c1) and small_valued(c2) for c1, c2 in out)
        verify_shuffle(pk, deck, out, proof, ctx)
        bad = list(proof.s_prime)
        bad[3] = (bad[3] + 1) % g.ORDER
        with pytest.raises(BadProof):
            verify_shuffle(pk, deck, out, dataclasses.replace(proof, s_prime=tuple(bad)), ctx)
        swapped = [out[1], out[0], *out[2:]]
        with pytest.raises(BadProof):
            verify_shuffle(pk, deck, swapped, proof, ctx)


def test_a_whole_match_plays_and_its_records_check_inside_the_context() -> None:
    with insecure_small_group():
        result = run_local_match("dernier", 3, seeds(3), [HeuristicBot(k) for k in range(3)],
                                 options=ONE_HAND)
        assert result.sessions[0].finished
        verdict = check_records(result.records)
        assert verdict.ok, verdict
        assert verdict.summary.hands == 1
    shuffles = [r["env"]["body"] for r in result.records if r["env"]["body"]["type"] == "shuffle"]
    assert len(shuffles) == 3
    assert all(small_valued(c) for body in shuffles for ct in body["deck"] for c in ct)
    # the same records do not check with the real group: its elements are no real elements
    verdict = check_records(result.records)
    assert not verdict.ok and verdict.code == "DECK_FAULT"


def test_a_tampered_shuffle_proof_is_refused_inside_the_context() -> None:
    with insecure_small_group():
        table = LocalTable("dernier", seeds(3), ONE_HAND)
        forged: list[int] = []

        def cheat(env: dict) -> dict:
            if env["seat"] == 1 and env["body"]["type"] == "shuffle" and not forged:
                body = copy.deepcopy(env["body"])
                s = body["proof"]["s_prime"]
                s[0] = g.encode_scalar(g.decode_scalar(s[0]) + 1)
                forged.append(1)
                return sign_envelope(table.identities[1], table.game, 1, env["n"], env["head"],
                                     body)
            return env

        table.tamper = cheat
        with pytest.raises(ProtocolError) as caught:
            table.deliver()
        assert forged
        assert (caught.value.code, caught.value.seat) == ("DECK_FAULT", 1)
        assert "BadProof" in caught.value.detail
        verdict = check_records(table.records)
        assert (verdict.code, verdict.seat, verdict.index) == (
            "DECK_FAULT", 1, len(table.records) - 1)


def test_the_simulator_plays_a_match_inside_the_context() -> None:
    from dernier_p2p.sim.costs import Costs
    from dernier_p2p.sim.table import Setup, Table
    from dernier_p2p.sim.world import World

    with insecure_small_group():
        world = World(5, Costs(), log=lambda *_: None)
        table = Table(world, Setup(players=3), 5)
        world.table = table
        table.open()

        def done() -> bool:
            return all(p.node is not None and p.node.finished for p in world.procs.values())

        world.run(600_000, stop=done)
        assert done()
        results = [p.node.own.session.result for p in world.procs.values()]
        assert results[0] is not None and all(r == results[0] for r in results)
        assert check_records(world.procs[1].disk).ok


def test_the_real_group_is_back_after_the_context_however_it_ends() -> None:
    real = {name: getattr(g, name) for name in sg._SWAPPED}
    real_cards = card_elements("dernier-54")
    real_h = generators(54)
    with insecure_small_group():
        small_element = g.base_mul(12345)
        small_cards = card_elements("dernier-54")
        assert small_cards != real_cards and generators(54) != real_h
        with insecure_small_group():  # nested blocks keep the small group
            assert sg.active() and g.ORDER == sg.ORDER
        assert sg.active() and g.ORDER == sg.ORDER
    assert not sg.active()
    assert g.ORDER == REAL_ORDER and g.GENERATOR == REAL_GENERATOR
    real_element = g.base_mul(12345)
    assert g.decode(real_element) == real_element
    with pytest.raises(g.InvalidElement):
        g.decode(small_element)
    assert card_elements("dernier-54") == real_cards and generators(54) == real_h
    assert Drbg(b"\x01" * 32).scalar() >= 2**64  # scalars are drawn mod the real order again

    with pytest.raises(RuntimeError), insecure_small_group():
        raise RuntimeError("a failing block")
    assert not sg.active() and g.ORDER == REAL_ORDER
    assert g.decode(real_element) == real_element
    assert all(getattr(g, name) is value for name, value in real.items())


def test_only_the_simulator_imports_the_small_group() -> None:
    root = Path(dernier_p2p.__file__).parent
    pattern = re.compile(
        r"^\s*(from\s+\S*smallgroup\s+import|import\s+\S*smallgroup|from\s+\S+\s+import\s.*"
        r"\bsmallgroup\b)|import_module\(.*smallgroup", re.MULTILINE)
    users = sorted(
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    )
    assert all(user.startswith("sim/") for user in users), users
    assert "insecure" in sg.__name__ + sg.insecure_small_group.__name__
    assert "simulation only" in (sg.__doc__ or "").lower()
