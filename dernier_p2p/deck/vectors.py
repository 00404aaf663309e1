"""Known-answer vectors for the deck: card encodings, one worked example of each building block,
and one full small hand, all from fixed seeds.

Another implementation checks itself byte for byte: every card element, and every message of
the hand as canonical msgpack (hex), given the same per-seat Drbg seeds and operations.
They ship with the specification in ``vectors/`` (PROTOCOL.md Appendix A); regenerate with
``python -m dernier_p2p.deck.vectors vectors``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from dernier_p2p.deck import group as g
from dernier_p2p.deck.audit import audit
from dernier_p2p.deck.cards import DECK_SIZES, card_elements
from dernier_p2p.deck.coin import CoinFlip, coin_commitment
from dernier_p2p.deck.drbg import Drbg
from dernier_p2p.deck.elgamal import encrypt
from dernier_p2p.deck.keys import KeySecret
from dernier_p2p.deck.table import DeckTable, apply_all, start_all
from dernier_p2p.deck.tokens import make_token
from dernier_p2p.deck.transfer import seal_transfer
from dernier_p2p.rules.cards import deck_cards
from dernier_p2p.wire.canonical import encode

HAND_GAME = b"dernier-p2p/kat/game-1"
HAND_NUMBER = 3
HAND_SEATS = 3
HAND_DECK = "dernier-54"


def seat_seed(seat: int) -> bytes:
    """The fixed Drbg seed of ``seat`` in the hand vector: 32 bytes of ``0x10 + seat``."""
    return bytes([0x10 + seat]) * 32


def hand_ops() -> list[dict]:
    """The operations of the vector hand, in order (the rules engine's decisions)."""
    ops: list[dict] = [{"op": "deal", "position": p, "to": p % HAND_SEATS} for p in range(6)]
    ops += [
        {"op": "open", "position": 6},
        {"op": "transfer", "position": 1, "to": 2},
        {"op": "peek", "position": 53, "to": 0},
        {"op": "open", "position": 0},
        {"op": "open", "position": 1},
        {"op": "reshuffle", "cards": "OPENED"},  # placeholder: the three opened cards
        {"op": "deal", "position": 54, "to": 1},
        {"op": "end"},
    ]
    return ops


def card_vectors() -> dict:
    """Every card element of every named deck, hex."""
    return {
        "label": "dernier-p2p/card",
        "construction": "hash_to_element(label, canonical([deck, size, index]))",
        "decks": {name: [m.hex() for m in card_elements(name)] for name in sorted(DECK_SIZES)},
    }


def primitive_vectors() -> dict:
    """One worked example of each building block, from a fixed Drbg, every value hex."""
    game, hand, seat = HAND_GAME, HAND_NUMBER, 1
    drbg = Drbg(bytes([0x42]) * 32)
    key = KeySecret.generate(game, hand, seat, drbg)
    reveal = key.reveal(drbg)
    other = KeySecret.generate(game, hand, 2, drbg)
    joint = g.add(key.share, other.share)
    r = drbg.scalar()
    ct = encrypt(joint, card_elements(HAND_DECK)[7], r)
    token = make_token(game, hand, seat, key.x, 11, ct, drbg)
    box, plaintext = seal_transfer(game, hand, seat, 2, other.xpub, token, drbg)
    values = [drbg.read(32) for _ in range(HAND_SEATS)]
    flip = CoinFlip(game, hand, "dealer", HAND_SEATS, 6)
    for i, v in enumerate(values):
        flip.add_commitment(i, coin_commitment(game, hand, "dealer", i, v))
    for i, v in enumerate(values):
        flip.add_reveal(i, v)
    return {
        "drbg_seed": (bytes([0x42]) * 32).hex(),
        "game": game.hex(),
        "hand": hand,
        "key": {
            "seat": seat,
            "x": g.encode_scalar(key.x).hex(),
            "nonce": key.nonce.hex(),
            "share": key.share.hex(),
            "transfer_private": key.transfer_private.hex(),
            "xpub": key.xpub.hex(),
            "commit": key.commitment().hex(),
            "proof": {k: v.hex() for k, v in reveal.proof.to_wire().items()},
        },
        "token": {
            "joint_key": joint.hex(),
            "card": 7,
            "r": g.encode_scalar(r).hex(),
            "ciphertext": [ct[0].hex(), ct[1].hex()],
            "position": 11,
            "token": token.value.hex(),
            "proof": {k: v.hex() for k, v in token.proof.to_wire().items()},
        },
        "transfer": {
            "giver": seat,
            "receiver": 2,
            "receiver_xpub": other.xpub.hex(),
            "plaintext": plaintext.hex(),
            "message": {k: (v.hex() if isinstance(v, bytes) else v)
                        for k, v in box.to_wire().items()},
        },
        "coin": {
            "step": "dealer",
            "m": 6,
            "values": [v.hex() for v in values],
            "commitments": [flip.commitments[i].hex() for i in range(HAND_SEATS)],
            "result": flip.result(),
        },
    }


def hand_vector() -> dict:
    """Play the vector hand and record it: seeds, ops, every message, the audited deal."""
    tables = [
        DeckTable(HAND_GAME, HAND_NUMBER, HAND_SEATS, HAND_DECK, s, Drbg(seat_seed(s)))
        for s in range(HAND_SEATS)
    ]
    obs = DeckTable(HAND_GAME, HAND_NUMBER, HAND_SEATS, HAND_DECK)
    everyone = tables + [obs]
    start_all(everyone)
    for op in hand_ops():
        if op.get("cards") == "OPENED":
            op = {"op": "reshuffle", "cards": list(obs.discards)}
        apply_all(everyone, op)
    report = audit(HAND_GAME, HAND_NUMBER, HAND_SEATS, HAND_DECK, obs.log)
    report.raise_first()
    return {
        "game": HAND_GAME.hex(),
        "hand": HAND_NUMBER,
        "seats": HAND_SEATS,
        "deck": HAND_DECK,
        "seeds": [seat_seed(s).hex() for s in range(HAND_SEATS)],
        "note": "log entries in relay order; each is canonical msgpack, hex; "
        "entries with key 'op' are operations, the others messages",
        "log": [encode(e).hex() for e in obs.log],
        "cards": report.cards,
        "opened": {str(p): c for p, c in sorted(report.opened.items())},
        "hands": {str(t.seat): {str(p): t.card(p) for p in t.hand_positions()} for t in tables},
    }


def face_pairs(deck: str) -> list[list]:
    """Every face of ``deck`` in index order as ``[rank, suit or None]`` (PROTOCOL.md 8.2)."""
    return [[c.rank.value, None if c.suit is None else int(c.suit)] for c in deck_cards(deck)]


def basics_vectors() -> dict:
    """The encoding of the neutral element, the face of every card index of every deck (the
    first 20 and a hash of the whole list), and the Drbg's blocks, ``below`` and
    ``permutation`` from seed ``0x42 * 32``."""
    decks = {}
    for name in sorted(DECK_SIZES):
        faces = face_pairs(name)
        decks[name] = {
            "size": len(faces),
            "first_20": faces[:20],
            "sha256_of_canonical_list": hashlib.sha256(encode(faces)).hexdigest(),
        }
    d = Drbg(bytes([0x42]) * 32)
    stream = d.read(2048)
    d = Drbg(bytes([0x42]) * 32)
    below = [[m, d.below(m)] for m in (1, 2, 3, 10, 255, 256, 1000, 2**40 + 1)]
    perm = d.permutation(10)
    scalar = d.scalar()
    return {
        "identity_element": g.IDENTITY.hex(),
        "decks": decks,
        "drbg": {
            "seed": (bytes([0x42]) * 32).hex(),
            "block0_first_32": stream[:32].hex(),
            "block1_first_32": stream[1024:1056].hex(),
            "then_below_m": below,
            "then_permutation_10": perm,
            "then_scalar": g.encode_scalar(scalar).hex(),
        },
    }


def write(directory: Path) -> None:
    """Write the vector files into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, obj in (
        ("basics.json", basics_vectors()),
        ("cards.json", card_vectors()),
        ("primitives.json", primitive_vectors()),
        ("hand.json", hand_vector()),
    ):
        (directory / name).write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    write(Path(sys.argv[1] if len(sys.argv) > 1 else "vectors"))
