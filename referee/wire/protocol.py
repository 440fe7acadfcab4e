"""Conversion between the rules engine and the wire protocol (``protos/shengji_arena/v1``).

Everything a seat is sent is built here from ``observe(state, seat)`` and the events that seat
may see; nothing else about the state crosses the wire. The observation's fast encoding is in
``encode``, the legal-action hints in ``hints``.
"""

from __future__ import annotations

import json

from shengji_arena.v1 import referee_pb2 as pb

from referee.rules.actions import (Bury, BuryJokers, Declare, DecisionKind, HandOver, Pass, Play, Redeal,
                            Return, RevealDun, Transfer, Uprising)
from referee.rules.cards import RANK_TEXT, SUITS, TEXT, Card
from referee.rules.errors import InvalidActionError
from referee.rules.observe import observe
from referee.rules.state import State
from referee.wire.encode import encode_observation, hint_actions_entry

PROTOCOL = "shengji-arena/1"

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


def _quoted(text: str, most: int = 12) -> str:
    """``text`` as an error message quotes it: a bot's long text is cut, with its length."""
    if len(text) <= most:
        return repr(text)
    return f"{text[:most]!r}... ({len(text)} characters)"


MAX_ACTION_CARDS = 6 * 54
"""The most cards one field of an action may name: twice the largest deck played here (three
decks); a bot's longer list is malformed, not read card by card."""


def _parse_cards(texts, field: str) -> tuple[int, ...]:
    if len(texts) > MAX_ACTION_CARDS:
        raise InvalidActionError(f"Action.{field}: {len(texts)} cards: expected at most "
                                 f"{MAX_ACTION_CARDS}")
    out = []
    for i, t in enumerate(texts):
        if len(t) > 8:  # no card is written with more than three characters
            raise InvalidActionError(f"Action.{field}[{i}]: malformed card {_quoted(t)}: expected "
                                     "a card such as 10H, QS or BJ")
        try:
            out.append(Card.parse(t))
        except InvalidActionError as e:
            raise InvalidActionError(f"Action.{field}[{i}]: {e}") from None
    return tuple(out)


def action_from_pb(msg: pb.Action):
    """The engine action an ``Action`` message stands for; raises ``InvalidActionError`` naming
    the field that cannot be read."""
    # actions are values: the same message (the same bytes) always reads as the same action
    key = msg.SerializeToString()
    action = _ACTION_CACHE.get(key)
    if action is None:
        action = _read_action(msg)
        if len(key) <= _ACTION_KEY_MAX:  # a padded message is read, never kept
            if len(_ACTION_CACHE) >= CACHE_MAX:
                _ACTION_CACHE.clear()
            _ACTION_CACHE[key] = action
    return action


def _read_action(msg: pb.Action):
    kind = msg.kind
    cards = _parse_cards(msg.cards, "cards")
    if kind == pb.ACTION_KIND_PASS:
        return Pass()
    if kind == pb.ACTION_KIND_DECLARE:
        suit = None
        if msg.suit:
            if msg.suit.upper() not in SUITS:
                raise InvalidActionError(f"Action.suit {_quoted(msg.suit)}: expected S, H, D or C")
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
    """The wire form of an event. Events are values (equal events have equal wire forms), so
    recent ones are kept: a match repeats most of them (every card dealt, most plays)."""
    try:
        message = _EVENT_CACHE.get(event)
    except TypeError:  # a field that is a list: not kept
        return _event_message(event.to_dict())
    if message is None:
        message = _event_message(event.to_dict())
        if len(_EVENT_CACHE) >= CACHE_MAX:
            _EVENT_CACHE.clear()
        _EVENT_CACHE[event] = message
    return message


def _event_message(d: dict) -> pb.Event:
    cards = d.get("cards") or ([d["card"]] if d.get("card") else [])
    seat = d.get("seat")
    return pb.Event(kind=d["event"], seat=seat if isinstance(seat, int) else -1,
                    cards=[c for c in cards if isinstance(c, str)],
                    json=json.dumps(d, ensure_ascii=False, separators=(",", ":")))


def _seat(x) -> int:
    return -1 if x is None else x


def observation_to_pb(state: State, seat: int) -> pb.Observation:
    """``observe(state, seat)`` as an ``Observation`` message."""
    return pb.Observation.FromString(observation_bytes(state, seat))


def observation_bytes(state: State, seat: int) -> bytes:
    """``observe(state, seat)`` as an encoded ``Observation`` (``encode.encode_observation``)."""
    return encode_observation(observe(state, seat), seat)


def observation_message(o, seat: int) -> pb.Observation:
    """Observation ``o`` of ``seat`` through the protobuf constructor (what
    ``observation_bytes`` encodes faster, and is tested against)."""
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



CACHE_MAX = 20_000  # entries per conversion cache (a few MB at most); a full cache starts again
_ACTION_KEY_MAX = 256  # bytes: a real action is far shorter (a message may be up to 64 KiB)
_HINT_ENTRY_CACHE: dict = {}
_EVENT_CACHE: dict = {}
_ACTION_CACHE: dict = {}


def hint_entry(action) -> bytes:
    """``action`` encoded as one ``LegalHint.actions`` entry (actions are values: cached)."""
    entry = _HINT_ENTRY_CACHE.get(action)
    if entry is None:
        entry = hint_actions_entry(action_to_pb(action).SerializeToString())
        if len(_HINT_ENTRY_CACHE) >= CACHE_MAX:
            _HINT_ENTRY_CACHE.clear()
        _HINT_ENTRY_CACHE[action] = entry
    return entry


def clear_caches() -> None:
    """Forget every kept conversion (actions read, events and hint entries made)."""
    for cache in (_HINT_ENTRY_CACHE, _EVENT_CACHE, _ACTION_CACHE):
        cache.clear()


def cache_sizes() -> dict[str, int]:
    """How many conversions are kept, by cache (for tests and the referee's own numbers)."""
    return {"hint_entries": len(_HINT_ENTRY_CACHE), "events": len(_EVENT_CACHE),
            "actions": len(_ACTION_CACHE)}
