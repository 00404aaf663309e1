"""Card transfers: receiver verifies and can pass on and open; forgeries are attributed."""

import functools

import pytest

from dernier_p2p.deck import group as g
from dernier_p2p.deck.cards import card_element
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.elgamal import encrypt
from dernier_p2p.deck.errors import BadElement
from dernier_p2p.deck.keys import KeySecret
from dernier_p2p.deck.tokens import Token, decrypt_card, make_token, verify_token
from dernier_p2p.deck.transfer import (
    MAX_BOX,
    BadTransfer,
    Transfer,
    box_plaintext,
    judge_complaint,
    open_box,
    receive_transfer,
    seal_transfer,
)
from dernier_p2p.wire.canonical import encode

GAME, HAND, DECK, POS = b"game-xfer", 4, "moderno-112", 9


def table(n: int = 3):
    d = Drbg(b"t" * 32)
    ks = [KeySecret.generate(GAME, HAND, i, d) for i in range(n)]
    Y = g.sum_elements([k.share for k in ks])
    ct = encrypt(Y, card_element(DECK, 33), d.scalar())
    return d, ks, ct


def test_pass_on_twice_then_open() -> None:
    d, ks, ct = table()
    # the card at POS was dealt to seat 0: tokens of 1 and 2 are public
    public = [make_token(GAME, HAND, j, ks[j].x, POS, ct, d).value for j in (1, 2)]
    own = make_token(GAME, HAND, 0, ks[0].x, POS, ct, d)
    t01, _ = seal_transfer(GAME, HAND, 0, 1, ks[1].xpub, own, d)
    t01 = Transfer.from_wire(0, t01.to_wire())
    tok, _ = receive_transfer(GAME, HAND, t01, ks[1].transfer_private, 0, ks[0].share, ct)
    assert decrypt_card(DECK, ct, public + [tok.value]) == 33
    # seat 1 passes it on to seat 2 (swap of a swapped card)
    t12, _ = seal_transfer(GAME, HAND, 1, 2, ks[2].xpub, tok, d)
    tok2, _ = receive_transfer(GAME, HAND, t12, ks[2].transfer_private, 0, ks[0].share, ct)
    assert decrypt_card(DECK, ct, public + [tok2.value]) == 33
    # seat 2 opens by publishing the forwarded token with seat 0's proof
    opened = Token.from_wire(tok2.to_wire(), seat=2)
    verify_token(GAME, HAND, ks[0].share, ct, opened, POS)


def test_others_cannot_open_the_box() -> None:
    d, ks, ct = table()
    own = make_token(GAME, HAND, 0, ks[0].x, POS, ct, d)
    t, _ = seal_transfer(GAME, HAND, 0, 1, ks[1].xpub, own, d)
    with pytest.raises(BadTransfer) as err:
        open_box(GAME, HAND, t, ks[2].transfer_private)
    assert err.value.seat == 0


def test_forged_token_is_blamed_on_giver_and_complaint_judged() -> None:
    d, ks, ct = table()
    good = make_token(GAME, HAND, 0, ks[0].x, POS, ct, d)
    forged = Token(0, POS, g.add(good.value, g.GENERATOR), good.proof)
    t, plain = seal_transfer(GAME, HAND, 0, 1, ks[1].xpub, forged, d)
    with pytest.raises(BadTransfer) as err:
        receive_transfer(GAME, HAND, t, ks[1].transfer_private, 0, ks[0].share, ct)
    assert err.value.seat == 0
    assert judge_complaint(GAME, HAND, t, plain, 0, ks[0].share, ct) == 0
    # a false complaint about a sound transfer names the complainer
    t2, plain2 = seal_transfer(GAME, HAND, 0, 1, ks[1].xpub, good, d)
    assert judge_complaint(GAME, HAND, t2, plain2, 0, ks[0].share, ct) == 1
    # a made-up plaintext does not match the commitment: undecided until the box is opened
    assert judge_complaint(GAME, HAND, t2, plain2[:-1] + b"\x00", 0, ks[0].share, ct) is None


def test_altered_transfer_fails_for_the_receiver() -> None:
    d, ks, ct = table()
    own = make_token(GAME, HAND, 0, ks[0].x, POS, ct, d)
    t, _ = seal_transfer(GAME, HAND, 0, 1, ks[1].xpub, own, d)
    for altered in (
        Transfer(0, 1, POS, t.epk, t.box[:-1] + bytes([t.box[-1] ^ 1]), t.commit),
        Transfer(0, 1, POS + 1, t.epk, t.box, t.commit),
        Transfer(0, 1, POS, t.epk, t.box, bytes(32)),
        Transfer(2, 1, POS, t.epk, t.box, t.commit),
    ):
        with pytest.raises(BadTransfer) as err:
            receive_transfer(GAME, HAND, altered, ks[1].transfer_private, 0, ks[0].share, ct)
        assert err.value.seat == altered.giver


def test_token_of_the_wrong_owner_is_refused() -> None:
    d, ks, ct = table()
    tok2 = make_token(GAME, HAND, 2, ks[2].x, POS, ct, d)  # valid, but public already
    t, _ = seal_transfer(GAME, HAND, 0, 1, ks[1].xpub, tok2, d)
    with pytest.raises(BadTransfer) as err:
        receive_transfer(GAME, HAND, t, ks[1].transfer_private, 0, ks[0].share, ct)
    assert err.value.seat == 0


@functools.cache
def sound_wire() -> dict:
    """The wire form of a sound transfer of position POS from seat 0 to seat 1 (do not mutate)."""
    d, ks, ct = table()
    own = make_token(GAME, HAND, 0, ks[0].x, POS, ct, d)
    return seal_transfer(GAME, HAND, 0, 1, ks[1].xpub, own, d)[0].to_wire()


@pytest.mark.parametrize("change", [
    {"epk": b"x"}, {"box": b""}, {"box": bytes(15)}, {"box": bytes(MAX_BOX + 1)},
    {"to": None}, {"to": False}, {"commit": 5}, {"position": -1}, {"position": True},
], ids=repr)
def test_malformed_transfer_names_its_sender(change: dict) -> None:
    for sender in (0, 2):
        with pytest.raises(BadElement) as err:
            Transfer.from_wire(sender, {**sound_wire(), **change})
        assert err.value.seat == sender


def test_box_plaintext_seals_any_bytes_and_is_what_seal_transfer_makes() -> None:
    d, ks, ct = table()
    own = make_token(GAME, HAND, 0, ks[0].x, POS, ct, d)
    t, plain = seal_transfer(GAME, HAND, 0, 1, ks[1].xpub, own, Drbg(b"e" * 32))
    # seal_transfer draws the salt, then the ephemeral key, from its Drbg
    drbg = Drbg(b"e" * 32)
    drbg.read(32)
    assert box_plaintext(GAME, HAND, 0, 1, ks[1].xpub, POS, plain, drbg.read(32)) == t
    odd = box_plaintext(GAME, HAND, 0, 1, ks[1].xpub, POS, b"not a token", bytes([7]) * 32)
    assert open_box(GAME, HAND, odd, ks[1].transfer_private) == b"not a token"


def test_each_malformed_plaintext_in_a_genuine_box_names_the_giver() -> None:
    """Plaintexts the giver committed to and boxed, each malformed another way: the receiver
    and a judge of the complaint name the giver; a commitment that matches nothing names no
    one until the box decides (the receiver, who opened it, names the giver)."""
    d, ks, ct = table()
    own = make_token(GAME, HAND, 0, ks[0].x, POS, ct, d)
    good = {"owner": 0, "token": own.value, "proof": own.proof.to_wire(), "salt": b"s" * 32}
    bad_plaintexts = [
        b"\xcc\x01",  # not canonical msgpack
        encode([1, 2]),
        encode({**good, "extra": 1}),
        encode({k: v for k, v in good.items() if k != "salt"}),
        encode({**good, "salt": b"s" * 31}),
        encode({**good, "salt": None}),
        encode({**good, "owner": True}),
        encode({**good, "token": b"t"}),
    ]
    for plain in bad_plaintexts:
        t = box_plaintext(GAME, HAND, 0, 1, ks[1].xpub, POS, plain, d.read(32))
        with pytest.raises(BadTransfer) as err:
            receive_transfer(GAME, HAND, t, ks[1].transfer_private, 0, ks[0].share, ct)
        assert err.value.seat == 0, plain
        assert judge_complaint(GAME, HAND, t, plain, 0, ks[0].share, ct) == 0, plain
    t = box_plaintext(GAME, HAND, 0, 1, ks[1].xpub, POS, encode(good), d.read(32))
    assert judge_complaint(GAME, HAND, t, encode({**good, "salt": b"x" * 32}), 0,
                           ks[0].share, ct) is None
    forged = Transfer(0, 1, POS, t.epk, t.box, bytes(32))  # a commitment to something else
    with pytest.raises(BadTransfer) as err:
        receive_transfer(GAME, HAND, forged, ks[1].transfer_private, 0, ks[0].share, ct)
    assert err.value.seat == 0


def test_transfer_fields_at_their_bounds() -> None:
    wire = sound_wire()
    for ok in ({**wire, "position": 0}, {**wire, "to": 0}, {**wire, "box": bytes(16)},
               {**wire, "box": bytes(MAX_BOX)}):
        assert Transfer.from_wire(2, ok).to_wire() == ok
    with pytest.raises(BadElement) as err:  # sealing to an unusable key: the receiver's fault
        box_plaintext(GAME, HAND, 0, 3, bytes(32), POS, b"plain", b"e" * 32)
    assert err.value.seat == 3
