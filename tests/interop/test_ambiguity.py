"""The ambiguity cases against the other reading (interop/README.md "Ambiguity cases").

For each point a case pins, this project's observer is run with that point read the other way
(the smallest change to the observer that implements the natural, wrong reading) and must give
another verdict than the case expects: the case fails that reading. That the normative reading
gives the expected verdict is checked for every case by test_suite."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from dernier_p2p.deck import audit as audit_module
from dernier_p2p.deck import keys as keys_module
from dernier_p2p.deck import shuffle as shuffle_module
from dernier_p2p.deck import transfer as transfer_module
from dernier_p2p.deck.errors import BadElement
from dernier_p2p.deck.group import IDENTITY
from dernier_p2p.deck.table import DeckTable
from dernier_p2p.deck.transfer import BadTransfer
from dernier_p2p.net import handshake as hs
from dernier_p2p.protocol import bridge
from dernier_p2p.protocol import session as session_module
from dernier_p2p.protocol.chain import ChainChecker
from dernier_p2p.protocol.session import Session
from dernier_p2p.rules import (
    Cut,
    Dealt,
    Declare,
    Draw,
    Drew,
    HandScored,
    HandsRotated,
    HandsSwapped,
    IllegalMove,
    Phase,
    Play,
    Timeout,
    to_act,
)
from dernier_p2p.rules import apply as rules_apply
from dernier_p2p.rules.cards import Rank, deck_cards
from dernier_p2p.rules.scoring import standings
from dernier_p2p.wire.canonical import decode, encode
from dernier_p2p.wire.hashing import digest
from dernier_p2p.wire.version import PROTOCOL_VERSION, READABLE_VERSIONS
from interop.adapters.dernier_p2p_adapter import Verifier
from interop.cases import adapter_input, load_cases

CASES = {c.id: c for c in load_cases()}
NORMATIVE_STATEMENT = shuffle_module._statement
NORMATIVE_ON_TOKENS = DeckTable._on_tokens


def verdict(case_id: str) -> tuple[str, str | None, Any]:
    """The observer's verdict on the case's records (stopping at the first refusal): result,
    code and the match's outcome (None while the match is not over)."""
    inp = adapter_input(CASES[case_id])
    prefix = inp.get("records", inp.get("prefix"))
    more = [inp["next"]] if "next" in inp else []
    v = Verifier().records(list(prefix), more)
    return v.result, v.code, json.loads(json.dumps(v.outcome))


def expected(case_id: str) -> tuple[str, str | None, Any]:
    exp = CASES[case_id].expected
    return exp["result"], exp.get("code"), exp.get("outcome")


@contextmanager
def reading(monkeypatch: pytest.MonkeyPatch, patches: dict[str, Any]) -> Iterator[None]:
    """Patches named ``Session.method`` (the observer), ``DeckTable.method`` (its deck),
    ``ChainChecker.method`` (its chain), ``shuffle.name``, ``keys.name``, ``transfer.name`` or
    ``audit.name`` (deck modules) or ``name`` (a bridge or rules function the session module
    imported)."""
    owners = {"Session": Session, "shuffle": shuffle_module, "DeckTable": DeckTable,
              "ChainChecker": ChainChecker, "keys": keys_module, "transfer": transfer_module,
              "audit": audit_module}
    with monkeypatch.context() as m:
        for name, value in patches.items():
            owner, _, attr = name.rpartition(".")
            m.setattr(owners[owner] if owner else session_module, attr, value)
        yield


# ---------------------------------------------------------------- the other readings
def moves_held_by_any_token(self: Session) -> bool:
    """Point 1, the other reading: a queued move also waits while any token or box is owed
    (7.4 says only operations queued, awaited inputs and chance requests hold moves)."""
    return self.pub is not None and bool(self.pub.expect_tokens or self.pub.expect_boxes)


def statement_with_zero_identity(context, pk, deck_in, deck_out):
    """Point 2, the other reading: ``O`` hashed as 32 zero bytes (8.1 gives ``01 00..00``)."""
    zero = [tuple(bytes(32) if x == IDENTITY else x for x in ct) for ct in deck_in]
    return NORMATIVE_STATEMENT(context, pk, zero, deck_out)


def tokens_in_ascending_order(self: DeckTable, seat: int, msg: dict, verified: bool) -> list:
    """Point 8, the other reading: a ``tokens`` message must list its positions ascending
    (section 15 says receivers do not check the order)."""
    positions = [t["position"] for t in msg["tokens"]]
    if positions != sorted(positions):
        raise BadElement("tokens out of order", seat)
    return NORMATIVE_ON_TOKENS(self, seat, msg, verified)


def owing_no_token(self: Session) -> set[int]:
    """Point 13, the other reading: a token owed for an operation already applied does not
    make a time-out a stall (7.5 says it does): the time-out goes to the rules."""
    return {s for s, what in self.pending if what not in ("move", "declare (optional)")
            and "token" not in what}


def faces_in_runs(deck: str, index: int):
    """Point 3, the other reading: each colour's number cards as 1..9, 1..9 (8.2 gives
    1, 1, 2, 2, ..., 9, 9), or the other way round, whichever the normative list is not."""
    cards = deck_cards(deck)
    card = cards[index]
    block = [i for i, c in enumerate(cards) if c.suit == card.suit and c.rank.value.isdigit()
             and c.rank.value != "0"]
    if index not in block:
        return card
    faces = [cards[i] for i in block]
    pairs = sorted(faces, key=lambda c: int(c.rank.value))
    runs = pairs[0::2] + pairs[1::2]
    other = runs if faces == pairs else pairs
    return other[block.index(index)]


def reshuffle_top_first(source, opened):
    """Point 4, the other reading: the discards of a ``cards``-form reshuffle top first."""
    return bridge.reshuffle_op(list(source)[::-1], opened)


def redeal(events: list[Any], order: Callable[[list[Any]], list[Any]]) -> list[Any]:
    """``events`` with their Drew/Dealt events put in ``order`` (a function of the list of
    those events) and the same slots handed out again, in the new order, by the same counts."""
    draws = [e for e in events if isinstance(e, (Drew, Dealt))]
    slots = [s for e in draws for s in e.slots]
    new = order(draws)
    out, k = [], 0
    for e in new:
        got, k = tuple(slots[k : k + len(e.slots)]), k + len(e.slots)
        out.append(Drew(e.seat, got, e.reason) if isinstance(e, Drew) else Dealt(e.seat, got))
    it = iter(out)
    return [next(it) if isinstance(e, (Drew, Dealt)) else e for e in events]


def ops_reading(order: Callable[[list[Any]], list[Any]]):
    """The bridge, dealing the cards of each move in ``order``; the hands it reports are the
    normative ones (the rules state is left alone: only the deck follows the other reading)."""
    normative = bridge.ops_for_events

    def ops_for_events(hands, events, out=()):
        events = list(events)
        _, new_hands = normative(hands, events, out)
        ops, _ = normative(hands, redeal(events, order), out)
        return ops, new_hands

    return ops_for_events


def penalty_first(draws: list[Any]) -> list[Any]:
    """Point 6, the other reading: a forgotten declaration's penalty before the play's own
    draws (RULES.md "Order of draws" puts it after)."""
    pen = [d for d in draws if isinstance(d, Drew) and d.reason == "penalty-declaration"]
    return pen + [d for d in draws if d not in pen] if len(pen) < len(draws) else draws


def own_draw_first(draws: list[Any]) -> list[Any]:
    """Point 6 (windows), the other reading: the mover's own draw before the penalty of the
    window its move closes."""
    own = [d for d in draws if isinstance(d, Drew) and d.reason == "draw"]
    return own + [d for d in draws if d not in own] if own and own != draws[:1] else draws


def penalty_before_exchange(hands, events, out=()):
    """Point 6 (moderno), the other reading: a swap or rotate played as the second-last card
    without SOLO!: the two penalty cards are drawn before the exchange (so they change hands
    with the rest); RULES.md draws them after it."""
    events = list(events)
    _, new_hands = bridge.ops_for_events(hands, events, out)
    pen = [e for e in events if isinstance(e, Drew) and e.reason == "penalty-declaration"]
    rest = [e for e in events if e not in pen]
    at = [i for i, e in enumerate(rest) if isinstance(e, (HandsSwapped, HandsRotated))]
    if pen and at:
        events = rest[: at[0]] + pen + rest[at[0] :]
    ops, _ = bridge.ops_for_events(hands, events, out)
    return ops, new_hands


def first_rotate_names_only(variant: str, options: dict, version: int = PROTOCOL_VERSION):
    """Point 15, the other reading: a first card that is a rotate only names the colour (the
    option ``first_rotate_acts`` off; it is on by default)."""
    rules = bridge.rules_from_table(variant, options, version)
    return dataclasses.replace(rules, first_rotate_acts=False)


def exchange_before_declaration(variant: str, options: dict, version: int = PROTOCOL_VERSION):
    """Point 16, the other reading: a swap or rotate played as the second-last card is judged
    on the hand the exchange leaves (no penalty when it leaves several cards; the option
    ``declare_before_exchange`` off; seed 003 and the default charge it)."""
    rules = bridge.rules_from_table(variant, options, version)
    return dataclasses.replace(rules, declare_before_exchange=False)


def hand_size_before_cut(state: Any, move: Any):
    """Point 10, the other reading: the dealer chooses the hand size before the cut, so a
    ``Cut`` that comes first is refused as out of phase."""
    if isinstance(move, Cut):
        raise IllegalMove("wrong-phase", "the hand size is chosen before the cut")
    return rules_apply(state, move)


def later_window_first(draws: list[Any]) -> list[Any]:
    """Point 17, the other reading: of two declaration penalties of one move, the window that
    opened last (the skip's player) draws first."""
    pen = [d for d in draws if isinstance(d, Drew) and d.reason == "penalty-declaration"]
    if len({d.seat for d in pen}) < 2:
        return draws
    return [pen[1], pen[0], *[d for d in draws if d not in pen[:2]]]


def deal_from_seat_zero(draws: list[Any]) -> list[Any]:
    """Point 7, the other reading: the deal goes round from seat 0 (not from the dealer's next
    seat): seat 0 is dealt the first card of the pile."""
    dealt = [d for d in draws if isinstance(d, Dealt)]
    if len(dealt) < 2:
        return draws
    size = len(dealt[0].slots)
    if any(len(d.slots) != size for d in dealt):
        return draws  # a cut kept: see cutter_skipped_first
    by_seat = sorted(dealt, key=lambda d: d.seat)
    return by_seat + [d for d in draws if d not in dealt]


def round_robin(order: list[int], size: int, skip: int | None, first_round: bool):
    """The seat of each dealt card, round by round over ``order`` (``skip`` left out of the
    first or the last round)."""
    seats = []
    for rnd in range(size):
        for seat in order:
            if seat == skip and rnd == (0 if first_round else size - 1):
                continue
            seats.append(seat)
    return seats


def cutter_skipped_first(hands, events, out=()):
    """Point 10, the other reading: the cutter who kept a card is left out of the first round
    of the deal (RULES.md: the last)."""
    normative = bridge.ops_for_events
    events = list(events)
    _, new_hands = normative(hands, events, out)
    dealt = [e for e in events if isinstance(e, Dealt)]
    size = max((len(d.slots) for d in dealt), default=0)
    kept = [d.seat for d in dealt if len(d.slots) < size]  # the cutter kept a card
    if not kept:
        return normative(hands, events, out)
    order = [d.seat for d in dealt]
    pile = sorted(s for d in dealt for s in d.slots)
    normal = round_robin(order, size, kept[0], False)
    other = round_robin(order, size, kept[0], True)
    assert [s for _, s in sorted((p, normal[i]) for i, p in enumerate(pile))] == normal
    got = {seat: tuple(p for p, s in zip(pile, other, strict=True) if s == seat)
           for seat in order}
    ev = [Dealt(e.seat, got[e.seat]) if isinstance(e, Dealt) else e for e in events]
    ops, _ = normative(hands, ev, out)
    return ops, new_hands


def engine_drawing_after_a_draw(original):
    """Point 9, the other reading: a time-out draws one card even after a draw this turn."""

    def _engine(self: Session, move: Any) -> None:
        before = self.state
        original(self, move)
        if (isinstance(move, Timeout) and before.rules.timeout == "draw_pass"
                and to_act(before) == move.seat and before.drawn >= 0
                and not before.pending_draw and self.state.pile):
            self._ops.append({"op": "deal", "position": self.state.pile[0], "to": move.seat})

    return _engine


# the readings of the deck layer's numbering after a seat goes out (points 19 and 20) need the
# table seat of each deck-layer number: the observer's running hand records it here
NUMBERING: dict[str, tuple[int, ...]] = {"parts": ()}
NORMATIVE_NEW_HAND = Session._new_hand
NORMATIVE_TRANSFER_KEY = keys_module.transfer_private_key
NORMATIVE_CHECK_TOKEN = transfer_module.check_transfer_token
NORMATIVE_APPLY_RECORD = ChainChecker._apply
NORMATIVE_VOTE_SINCE = ChainChecker.vote_since


def remembering_numbering(self: Session, count: int, first: int) -> None:
    NORMATIVE_NEW_HAND(self, count, first)
    NUMBERING["parts"] = self._parts


def table_seat(c: int) -> int:
    """The table seat of the running hand's deck-layer number ``c``."""
    parts = NUMBERING["parts"]
    return parts[c] if c < len(parts) else c


def transfer_key_of_table_seat(game: bytes, hand: int, seat: int, x: int) -> bytes:
    """Point 19, the other reading: ``d_i`` (section 10) derives from the table seat, not from
    the deck layer's number of the seat (7.9)."""
    return NORMATIVE_TRANSFER_KEY(game, hand, table_seat(seat), x)


def commitment_of_table_seats(game: bytes, hand: int, giver: int, receiver: int,
                              position: int, plaintext: bytes) -> bytes:
    """Point 20, the other reading: a box's commitment binds the giver and the receiver as table
    seats (the context keeps the deck layer's number, as 8.1 says of every context)."""
    ctx = transfer_module._ctx(game, hand, giver)
    return digest(transfer_module.COMMIT_LABEL,
                  [ctx, position, table_seat(giver), table_seat(receiver), plaintext])


def aad_of_table_seats(game: bytes, hand: int, t: transfer_module.Transfer) -> bytes:
    """Point 20, the other reading: a box's associated data names table seats."""
    return encode([transfer_module.AAD_LABEL, transfer_module._ctx(game, hand, t.giver),
                   t.position, table_seat(t.giver), table_seat(t.receiver), t.commit])


def owner_as_table_seat(game, hand, t, token, owner, share, ct) -> None:
    """Point 20, the other reading: the ``owner`` inside a box's plaintext is a table seat, as
    the ``owner`` of a token on the wire is (15), and is renumbered like it."""
    if token.owner != table_seat(owner):
        raise BadTransfer("transfer carries the token of the wrong seat", t.giver)
    NORMATIVE_CHECK_TOKEN(game, hand, t, dataclasses.replace(token, owner=owner), owner, share,
                          ct)


NUMBERED_BY_TABLE_SEAT = {"Session._new_hand": remembering_numbering}


def seats_out_score(state: Any, move: Any):
    """Point 21, the other reading: a seat out goes on scoring in later hands, as every seat but
    the winner does under ``dernier`` scoring (the points of the others' cards)."""
    new, events = rules_apply(state, move)
    scored = [e for e in events if isinstance(e, HandScored)]
    rules = state.rules
    if scored and state.out and rules.scoring == "dernier" and rules.others_score:
        deltas, winner = scored[0].deltas, state.hand_winner
        live = [s for s in range(state.players) if s not in state.out]
        total = (deltas[winner] - rules.out_bonus if winner is not None
                 else sum(deltas) // (len(live) - 1))
        scores = tuple(v + (total if s in state.out else 0) for s, v in enumerate(new.scores))
        new = new._replace(scores=scores)
    return new, events


def replaced_host_off_the_table(self: ChainChecker, rec: dict, h: bytes) -> bytes:
    """Point 22, the other reading: a replaced host is off the table (5.3 step 4 and 7.5 said
    so): its envelopes are refused, it does not vote and does not count in ``m``."""
    out = NORMATIVE_APPLY_RECORD(self, rec, h)
    body = rec["env"]["body"]
    if body["type"] == "host_change":
        self._at_table.discard(body["old"])
    return out


def abandon_stale_after_ack(self: ChainChecker, kind: str, target: int | None) -> int:
    """Point 23, the other reading: only chats may lie between an ``abandon`` vote's ``after``
    and its record (an ack makes the vote stale)."""
    if target is None:
        return max(self._last_by)
    return NORMATIVE_VOTE_SINCE(self, kind, target)


def _last_card_swap(state: Any, move: Any) -> bool:
    return (isinstance(move, Play) and move.card is not None and move.card.rank is Rank.SWAP
            and len(state.hands[move.seat]) == 1)


def last_swap_needs_target(state: Any, move: Any):
    """Point 25, the other reading: a swap always names the seat it swaps with, even played as
    the last card."""
    if _last_card_swap(state, move) and move.target is None:
        raise IllegalMove("must-choose-target", "a swap names a seat to swap hands with")
    return rules_apply(state, move)


def last_swap_names_no_target(state: Any, move: Any):
    """Point 25, the other reading: a swap played as the last card swaps nothing, so it names no
    seat (a target is refused)."""
    if _last_card_swap(state, move) and move.target is not None:
        raise IllegalMove("cannot-target", "a last card swaps with nobody")
    return rules_apply(state, move)


def leaving_plays_on(variant: str, options: dict, version: int = PROTOCOL_VERSION):
    """Point 26, the other reading: in ``dernier`` a seat that leaves a table of three or more
    goes out and the others play on (RULES.md once said the seeds were silent; seed 000/001 ends
    the match, option ``leave`` ``end`` by default)."""
    rules = bridge.rules_from_table(variant, options, version)
    return dataclasses.replace(rules, leave="play_on")


def own_draw_lapses(state: Any, move: Any):
    """Point 27, the other reading: a seat whose declaration window is open and that draws on
    its own extra turn at one card sees the obligation lapse (at two cards) instead of paying
    the 2 penalty cards first: as if it had declared just before its draw."""
    if (isinstance(move, Draw) and move.seat in state.owes
            and state.rules.declaration == "window" and len(state.hands[move.seat]) == 1):
        state, _ = rules_apply(state, Declare(move.seat))
    return rules_apply(state, move)


def first_reverse_lets_the_first_player_start(state: Any, move: Any):
    """Point 28, the other reading: in ``standard`` at two seats a first reverse changes
    nothing but the direction and the dealer's next seat starts (seed 004: the first action
    card applies, so the dealer starts)."""
    new, events = rules_apply(state, move)
    if (state.phase is Phase.FLIP and new.phase is Phase.PLAY and new.top is not None
            and new.top.rank is Rank.REVERSE and new.players - len(new.out) == 2
            and new.rules.first_card == "standard"):
        new = new._replace(turn=next(s for s in range(new.players)
                                     if s != new.dealer and s not in new.out))
    return new, events


# ---------------------------------------------------------------- the cases fail them
OTHER_READINGS = [
    # (point, case, the reading's patches)
    (1, "originale-3p-match", {"Session._moves_held": moves_held_by_any_token}),
    (2, "dernier-2p-prefix-half", {"shuffle._statement": statement_with_zero_identity}),
    (8, "ambiguity-tokens-descending", {"DeckTable._on_tokens": tokens_in_ascending_order}),
    (13, "ambiguity-stall-token-owed", {"Session._owing": owing_no_token}),
    (3, "moderno-3p-match", {"card_face": faces_in_runs}),
    (4, "standard-2p-reshuffle-match", {"reshuffle_op": reshuffle_top_first}),
    (6, "ambiguity-penalty-after-seven", {"ops_for_events": ops_reading(penalty_first)}),
    (7, "dernier-2p-target-match", {"ops_for_events": ops_reading(deal_from_seat_zero)}),
    (6, "ambiguity-solo-swap-second-last", {"ops_for_events": penalty_before_exchange}),
    (6, "ambiguity-penalty-before-draw", {"ops_for_events": ops_reading(own_draw_first)}),
    (10, "originale-2p-cancel-match", {"ops_for_events": cutter_skipped_first}),
    (10, "originale-3p-prefix-half", {"apply": hand_size_before_cut}),
    (15, "ambiguity-first-rotate", {"rules_from_table": first_rotate_names_only}),
    (16, "ambiguity-solo-swap-second-last", {"rules_from_table": exchange_before_declaration}),
    (17, "ambiguity-two-penalties-one-move",
     {"ops_for_events": ops_reading(later_window_first)}),
    *[(19, case, {**NUMBERED_BY_TABLE_SEAT, "keys.transfer_private_key":
                  transfer_key_of_table_seat,
                  "audit.transfer_private_key": transfer_key_of_table_seat})
      for case in ("dernier-4p-left-match", "standard-4p-resign-match",
                   "originale-3p-resign-match")],
    (20, "originale-3p-resign-match",
     {**NUMBERED_BY_TABLE_SEAT, "transfer.transfer_commitment": commitment_of_table_seats}),
    (20, "originale-3p-resign-match",
     {**NUMBERED_BY_TABLE_SEAT, "transfer._aad": aad_of_table_seats}),
    (20, "originale-3p-resign-match",
     {**NUMBERED_BY_TABLE_SEAT, "audit.check_transfer_token": owner_as_table_seat}),
    (21, "dernier-4p-left-match", {"apply": seats_out_score}),
    (21, "dernier-3p-hostchange-match", {"apply": seats_out_score}),
    (22, "ambiguity-replaced-host-votes", {"ChainChecker._apply": replaced_host_off_the_table}),
    (22, "ambiguity-replaced-host-counts", {"ChainChecker._apply": replaced_host_off_the_table}),
    (22, "hostchange-old-host-stays-a-seat",
     {"ChainChecker._apply": replaced_host_off_the_table}),
    (23, "ambiguity-abandon-after-ack", {"ChainChecker.vote_since": abandon_stale_after_ack}),
    (25, "moderno-2p-target-match", {"apply": last_swap_needs_target}),
    (25, "ambiguity-last-swap-target", {"apply": last_swap_names_no_target}),
    (26, "dernier-4p-left-ends-match", {"rules_from_table": leaving_plays_on}),
    (27, "dernier-2p-own-draw-match", {"apply": own_draw_lapses}),
    (28, "standard-2p-first-reverse-match", {"apply": first_reverse_lets_the_first_player_start}),
]


@pytest.mark.parametrize(("point", "case_id", "patches"), OTHER_READINGS,
                         ids=[f"{p}-{c}-{list(x)[-1].rsplit('.', 1)[-1]}"
                              for p, c, x in OTHER_READINGS])
def test_the_case_fails_the_other_reading(monkeypatch, point, case_id, patches):
    with reading(monkeypatch, patches):
        got = verdict(case_id)
    assert got != expected(case_id), f"point {point}: {case_id} does not tell the readings apart"
    assert got[1] != "TABLE_MISMATCH", f"point {point}: the reading's rules refuse the table"


def test_a_timeout_after_a_draw_fails_the_reading_that_draws_again(monkeypatch):
    """Point 9."""
    case_id = "ambiguity-timeout-after-draw"
    with reading(monkeypatch,
                 {"Session._engine": engine_drawing_after_a_draw(Session._engine)}):
        got = verdict(case_id)
    assert got != expected(case_id)


TIES = ["originale-3p-ties-last-draw-match", "originale-3p-ties-seat-match",
        "standard-3p-ties-last-draw-match", "standard-3p-ties-seat-match"]


@pytest.mark.parametrize("case_id", TIES)
def test_ties_past_the_documented_keys(case_id):
    """Point 18: the expected standings follow every key of RULES.md "Ties in every variant"
    (cards, then the earliest last draw, then the seat). The `-last-draw` cases differ from a
    reading that stops at the keys once documented only for dernier and moderno (points and
    hands won, then the seat); the `-seat` cases rank two losers tied on every other key (both
    never drew) by seat."""
    inp = adapter_input(CASES[case_id])
    obs = Session(None, None, decode(inp["records"][0]), versions=READABLE_VERSIONS)
    for raw in inp["records"][1:]:
        obs.receive(decode(raw))
    st = obs.state
    want = list(CASES[case_id].expected["outcome"]["standings"])
    sizes = [len(h) for h in st.hands]
    assert tuple(want) == standings(st.rules, st.scores, st.hands_won, sizes, st.last_draw)
    losers = want[1:]
    if case_id.endswith("-seat-match"):
        assert [st.last_draw[s] for s in losers] == [-1, -1]
        assert sizes[losers[0]] == sizes[losers[1]] and losers == sorted(losers)
    else:
        short = sorted(losers, key=lambda s: (-st.scores[s], -st.hands_won[s], s))
        assert short != losers


def test_a_host_challenge_names_its_key_for_a_peer_that_expects_it():
    """Point 24: the table summary of a host's challenge carries ``key`` (4.1, 4.2), which a
    joiner with an invite code (4.8), a watcher with one (4.10) or a seat resuming with a new
    host (7.6) compares before sending anything. The suite's valid challenge carries it; the
    other reading (a summary without ``key``, as a version-4 seat link's challenge was, 4.6) is
    refused by such a peer. A version-5 link challenge names the accepting seat's own key."""
    frame = bytes.fromhex(CASES["frame-challenge-valid"].input["frame"])
    message = decode(frame[4:])
    _, table = hs.check_challenge(message)
    assert len(hs.summary_host_key(table)) == 32
    other = {**message, "table": {k: v for k, v in table.items() if k != "key"}}
    _, table = hs.check_challenge(other)
    with pytest.raises(hs.NetError) as info:
        hs.summary_host_key(table)
    assert info.value.code == hs.MALFORMED
    link = decode(bytes.fromhex(CASES["frame-challenge-link-valid"].input["frame"])[4:])
    assert "key" not in hs.check_challenge(link)[1]
    keyed = decode(bytes.fromhex(CASES["frame-challenge-link-key-valid"].input["frame"])[4:])
    assert len(hs.summary_host_key(hs.check_challenge(keyed)[1])) == 32
