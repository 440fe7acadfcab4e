"""Conversion between the rules engine and the wire protocol (``protos/shengji_arena/v1``).

Everything a seat is sent is built here from ``observe(state, seat)`` and the events that seat
may see; nothing else about the state crosses the wire.
"""

from __future__ import annotations

import json
import random

from shengji_arena.v1 import referee_pb2 as pb

from .randomplay import random_action
from .rules.actions import (Bury, BuryJokers, Declare, DecisionKind, HandOver, Pass, Play, Redeal,
                            Return, RevealDun, Transfer, Uprising)
from .rules.cards import RANK_TEXT, SUITS, TEXT, Card
from .rules.errors import InvalidActionError
from .rules.legal import legal_actions
from .rules.observe import observe
from .rules.state import State

PROTOCOL = "shengji-arena/1"
HINT_LIMIT = 100  # most actions listed in a hint; beyond it the hint is a sample

DECISION_TO_PB = {
    DecisionKind.DECLARE: pb.DECISION_KIND_DECLARE,
    DecisionKind.REDEAL: pb.DECISION_KIND_REDEAL,
    DecisionKind.BURY: pb.DECISION_KIND_BURY,
    DecisionKind.LEAD: pb.DECISION_KIND_LEAD,
    DecisionKind.FOLLOW: pb.DECISION_KIND_FOLLOW,
    DecisionKind.UPRISING: pb.DECISION_KIND_UPRISING,
    DecisionKind.HANDOVER: pb.DECISION_KIND_HANDOVER,
    DecisionKind.TRANSFER: pb.DECISION_KIND_TRANSFER,
    DecisionKind.RETURN: pb.DECISION_KIND_RETURN,
    DecisionKind.DUN_REVEAL: pb.DECISION_KIND_DUN_REVEAL,
    DecisionKind.JOKER_BURY: pb.DECISION_KIND_JOKER_BURY,
}

_KIND_OF_ACTION = {
    Pass: pb.ACTION_KIND_PASS, Declare: pb.ACTION_KIND_DECLARE, Redeal: pb.ACTION_KIND_REDEAL,
    Bury: pb.ACTION_KIND_BURY, Play: pb.ACTION_KIND_PLAY, Uprising: pb.ACTION_KIND_UPRISING,
    HandOver: pb.ACTION_KIND_HANDOVER, Transfer: pb.ACTION_KIND_TRANSFER,
    Return: pb.ACTION_KIND_RETURN, RevealDun: pb.ACTION_KIND_REVEAL_DUN,
    BuryJokers: pb.ACTION_KIND_BURY_JOKERS,
}


def _cards(cards) -> list[str]:
    return [TEXT[c] for c in cards]


def action_to_pb(action) -> pb.Action:
    out = pb.Action(kind=_KIND_OF_ACTION[type(action)])
    if isinstance(action, BuryJokers):
        out.cards.extend(_cards(action.jokers))
        out.take.extend(_cards(action.take))
    elif hasattr(action, "cards"):
        out.cards.extend(_cards(action.cards))
    if isinstance(action, Declare) and action.suit is not None:
        out.suit = SUITS[action.suit]
    return out


def _parse_cards(texts, field: str) -> tuple[int, ...]:
    out = []
    for i, t in enumerate(texts):
        try:
            out.append(Card.parse(t))
        except InvalidActionError as e:
            raise InvalidActionError(f"Action.{field}[{i}]: {e}") from None
    return tuple(out)


def action_from_pb(msg: pb.Action):
    """The engine action an ``Action`` message stands for; raises ``InvalidActionError`` naming
    the field that cannot be read."""
    kind = msg.kind
    cards = _parse_cards(msg.cards, "cards")
    if kind == pb.ACTION_KIND_PASS:
        return Pass()
    if kind == pb.ACTION_KIND_DECLARE:
        suit = None
        if msg.suit:
            if msg.suit.upper() not in SUITS:
                raise InvalidActionError(f"Action.suit {msg.suit!r}: expected S, H, D or C")
            suit = SUITS.index(msg.suit.upper())
        return Declare(cards, suit)
    simple = {pb.ACTION_KIND_REDEAL: Redeal, pb.ACTION_KIND_UPRISING: Uprising,
              pb.ACTION_KIND_HANDOVER: HandOver}
    if kind in simple:
        return simple[kind]()
    with_cards = {pb.ACTION_KIND_BURY: Bury, pb.ACTION_KIND_PLAY: Play,
                  pb.ACTION_KIND_TRANSFER: Transfer, pb.ACTION_KIND_RETURN: Return,
                  pb.ACTION_KIND_REVEAL_DUN: RevealDun}
    if kind in with_cards:
        return with_cards[kind](cards)
    if kind == pb.ACTION_KIND_BURY_JOKERS:
        return BuryJokers(cards, _parse_cards(msg.take, "take"))
    raise InvalidActionError(f"Action.kind {kind!r}: expected one of "
                             + ", ".join(pb.ActionKind.Name(k) for k in _KIND_OF_ACTION.values()))


def event_to_pb(event) -> pb.Event:
    d = event.to_dict()
    cards = d.get("cards") or ([d["card"]] if d.get("card") else [])
    seat = d.get("seat")
    return pb.Event(kind=d["event"], seat=seat if isinstance(seat, int) else -1,
                    cards=[c for c in cards if isinstance(c, str)],
                    json=json.dumps(d, ensure_ascii=False, separators=(",", ":")))


def _seat(x) -> int:
    return -1 if x is None else x


def observation_to_pb(state: State, seat: int) -> pb.Observation:
    o = observe(state, seat)
    return pb.Observation(
        seat=seat, variant=o.variant, deal=o.deal, phase=o.phase,
        levels=[RANK_TEXT[x] for x in o.levels], dealer=_seat(o.dealer), level=RANK_TEXT[o.level],
        trump=("none" if o.trump is None else SUITS[o.trump]) if o.trump_fixed else "",
        hand=_cards(o.hand), hand_sizes=list(o.hand_sizes),
        first_receiver=_seat(o.first_receiver), cards_dealt=o.cards_dealt,
        declarations=[pb.SeatCards(seat=s, cards=_cards(c)) for s, c in o.declarations],
        public_kitty=_cards(o.public_kitty),
        drawn_kitty_card="" if o.drawn_kitty_card is None else TEXT[o.drawn_kitty_card],
        my_kitty=_cards(o.my_kitty), kitty_holder=_seat(o.kitty_holder), redeals=o.redeals,
        trick_leader=_seat(o.trick_leader),
        trick=[pb.SeatCards(seat=s, cards=_cards(c)) for s, c in o.trick],
        tricks_played=len(o.tricks), attacker_points=o.attacker_points,
        penalties=list(o.penalties), hard_duns=list(o.hard_duns), dry_pot=o.dry_pot,
        match_points=list(o.match_points))


_NOTES = {
    DecisionKind.BURY: "bury any {n} cards of your hand that the variant allows (a sample is listed)",
    DecisionKind.LEAD: "throws (several units of one suit) are not listed but may be led",
}


def legal_hint(state: State, rng_seed: str) -> pb.LegalHint:
    """Legal actions for the seat to act: all of them where there are at most ``HINT_LIMIT``
    (and the listing is complete), else a sample that always includes one legal action."""
    listing = legal_actions(state)
    kind = state.decision
    actions = []
    complete = listing.complete
    if kind == DecisionKind.BURY:
        complete = False
    else:
        for a in listing:
            if len(actions) == HINT_LIMIT:
                complete = False
                break
            actions.append(a)
    if not actions or kind == DecisionKind.BURY:
        rng = random.Random(rng_seed)
        seen = set(actions)
        for _ in range(8):
            a = random_action(state, rng)
            if a not in seen:
                seen.add(a)
                actions.append(a)
    note = _NOTES.get(kind, "")
    if kind == DecisionKind.BURY:
        note = note.format(n=state.rules.kitty_size)
    if not complete and kind == DecisionKind.FOLLOW:
        note = f"more than {HINT_LIMIT} legal follows: a sample is listed"
    return pb.LegalHint(complete=complete, actions=[action_to_pb(a) for a in actions], note=note)


def default_action(state: State, seed: str):
    """The legal action the referee plays for a seat that did not (deterministic per seed)."""
    return random_action(state, random.Random(seed))
