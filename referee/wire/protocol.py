"""Conversion between the rules engine and the wire protocol (``protos/shengji_arena/v1``).

Everything a seat is sent is built here from ``observe(state, seat)`` and the events that seat
may see; nothing else about the state crosses the wire.
"""

from __future__ import annotations

import json
import random
from itertools import islice

from shengji_arena.v1 import referee_pb2 as pb

from referee.play.random_play import random_action
from referee.rules.actions import (Bury, BuryJokers, Declare, DecisionKind, HandOver, Pass, Play, Redeal,
                            Return, RevealDun, Transfer, Uprising)
from referee.rules.cards import RANK_TEXT, SUITS, TEXT, Card
from referee.rules.errors import InvalidActionError
from referee.rules.families import family_of
from referee.rules.legal import legal_actions
from referee.rules.observe import observe
from referee.rules.state import State

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


def _quoted(text: str, most: int = 12) -> str:
    """``text`` as an error message quotes it: a bot's long text is cut, with its length."""
    if len(text) <= most:
        return repr(text)
    return f"{text[:most]!r}... ({len(text)} characters)"


def _parse_cards(texts, field: str) -> tuple[int, ...]:
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
            if len(_ACTION_CACHE) >= _CACHE_MAX:
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
        if len(_EVENT_CACHE) >= _CACHE_MAX:
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
    """``observe(state, seat)`` as an encoded ``Observation`` (see ``_encode_observation``)."""
    return _encode_observation(observe(state, seat), seat)


# -- encoding the observation ----------------------------------------------------------------
# An observation goes with every request. Made field by field through the protobuf constructor
# it cost more than all the rest of a request, so it is encoded here from pieces made once (the
# wire form of each card text, field keys, small numbers) and parsed back by protobuf. The
# message is the one the constructor gives from the same ``Observation``
# (tests/test_link_fast_paths.py compares the two on every seat of every variant).

def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = tuple(_varint(i) for i in range(128))


def _int32(n: int) -> bytes:
    """An int32 or bool value (protobuf writes a negative int32 as ten bytes)."""
    if 0 <= n < 128:
        return _SMALL[n]
    return _varint(n if n >= 0 else n + (1 << 64))


def _key(field: int, wire: int) -> bytes:
    return _varint((field << 3) | wire)


def _text(field: int, text: str) -> bytes:
    data = text.encode()
    return _key(field, 2) + _varint(len(data)) + data


def _card_texts(field: int) -> tuple[bytes, ...]:
    """Every card's text as an entry of repeated string ``field``, by card."""
    return tuple(_text(field, TEXT[k]) for k in range(54))


_K = {f: _key(f, 0) for f in (1, 3, 6, 11, 12, 17, 18, 19, 21, 22, 25)}  # varint fields
_HAND, _PUBLIC_KITTY, _MY_KITTY = _card_texts(9), _card_texts(14), _card_texts(16)
_SEAT_CARDS_CARD = _card_texts(2)  # SeatCards.cards
_SEAT_CARDS_SEAT = _key(1, 0)
_LEVELS = tuple(_text(5, t) for t in RANK_TEXT)
_LEVEL = tuple(_text(7, t) for t in RANK_TEXT)
_TRUMP = {None: _text(8, "none"), **{i: _text(8, t) for i, t in enumerate(SUITS)}}
_DRAWN = tuple(_text(15, TEXT[k]) for k in range(54))
_TEXTS: dict = {}  # (field, text) -> entry: variants and phases


def _cached_text(field: int, text: str) -> bytes:
    entry = _TEXTS.get((field, text))
    if entry is None:
        entry = _TEXTS[(field, text)] = _text(field, text) if text else b""
    return entry


_PIECES: dict = {}  # packed numbers and seat-cards entries, by value (few distinct ones)


def _piece(key: tuple, make) -> bytes:
    try:
        entry = _PIECES.get(key)
    except TypeError:  # a list, not a tuple: made each time
        return make(*key)
    if entry is None:
        entry = make(*key)
        if len(_PIECES) >= _PIECES_MAX:
            _PIECES.clear()
        _PIECES[key] = entry
    return entry


def _make_packed(field: int, values) -> bytes:
    if not values:
        return b""
    body = b"".join(map(_int32, values))
    return _key(field, 2) + _varint(len(body)) + body


def _make_seat_cards(field: int, seat: int, cards) -> bytes:
    body = (_SEAT_CARDS_SEAT + _int32(seat) if seat else b"") + \
        b"".join(map(_SEAT_CARDS_CARD.__getitem__, cards))
    return _key(field, 2) + _varint(len(body)) + body


_PIECES_MAX = 20_000


def _encode_observation(o, seat: int) -> bytes:
    """The wire form of observation ``o`` of ``seat``: zero values are left out, as protobuf
    does; a seat that is None is -1."""
    K = _K
    out = [K[1] + _int32(seat) if seat else b"", _cached_text(2, o.variant),
           K[3] + _int32(o.deal) if o.deal else b"", _cached_text(4, o.phase)]
    out.extend(map(_LEVELS.__getitem__, o.levels))
    if o.dealer != 0:
        out.append(K[6] + _int32(-1 if o.dealer is None else o.dealer))
    out.append(_LEVEL[o.level])
    if o.trump_fixed:
        out.append(_TRUMP[o.trump])
    out.extend(map(_HAND.__getitem__, o.hand))
    out.append(_piece((10, o.hand_sizes), _make_packed))
    if o.first_receiver != 0:
        out.append(K[11] + _int32(-1 if o.first_receiver is None else o.first_receiver))
    if o.cards_dealt:
        out.append(K[12] + _int32(o.cards_dealt))
    for s, cards in o.declarations:
        out.append(_piece((13, s, cards), _make_seat_cards))
    out.extend(map(_PUBLIC_KITTY.__getitem__, o.public_kitty))
    if o.drawn_kitty_card is not None:
        out.append(_DRAWN[o.drawn_kitty_card])
    out.extend(map(_MY_KITTY.__getitem__, o.my_kitty))
    if o.kitty_holder != 0:
        out.append(K[17] + _int32(-1 if o.kitty_holder is None else o.kitty_holder))
    if o.redeals:
        out.append(K[18] + _int32(o.redeals))
    if o.trick_leader != 0:
        out.append(K[19] + _int32(-1 if o.trick_leader is None else o.trick_leader))
    for s, cards in o.trick:
        out.append(_piece((20, s, cards), _make_seat_cards))
    if o.tricks:
        out.append(K[21] + _int32(len(o.tricks)))
    if o.attacker_points:
        out.append(K[22] + _int32(o.attacker_points))
    out.append(_piece((23, o.penalties), _make_packed))
    out.append(_piece((24, o.hard_duns), _make_packed))
    if o.dry_pot:
        out.append(K[25] + b"\x01")
    out.append(_piece((26, o.match_points), _make_packed))
    return b"".join(out)


def _observation_fields(o, seat: int) -> pb.Observation:
    """The same message through the protobuf constructor (the reference the encoding is tested
    against)."""
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
    kind = state.decision
    family = family_of(state.rules)
    if kind in _PLAY_KINDS and family.plays is not None:
        hint = _play_hint(state, kind, family)
        if hint is not None:
            return hint
    listing = legal_actions(state)
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
        note = _FOLLOW_SAMPLE_NOTE
    # the listed actions from their cached encodings: what action_to_pb would give, parsed once
    hint = pb.LegalHint(complete=complete, note=note)
    hint.MergeFromString(b"".join(map(_hint_entry, actions)))
    return hint


_PLAY_KINDS = (DecisionKind.LEAD, DecisionKind.FOLLOW)
_FOLLOW_SAMPLE_NOTE = f"more than {HINT_LIMIT} legal follows: a sample is listed"


def _play_hint(state: State, kind, family) -> pb.LegalHint | None:
    """``legal_hint`` of a lead or follow, from the family's card tuples without making
    ``Play`` actions: the same actions, in the same order, as ``legal_actions``."""
    plays = family.plays(state, kind, state.turn)
    complete = kind != DecisionKind.LEAD or not family.throws  # throws are not listed
    entries = list(islice(plays, HINT_LIMIT + 1))
    if not entries:
        return None
    if len(entries) > HINT_LIMIT:
        del entries[HINT_LIMIT:]
        complete = False
    cache = _PLAY_ENTRY_CACHE
    for i, cards in enumerate(entries):
        entry = cache.get(cards)
        if entry is None:
            entry = _hint_entry(Play(cards))
            if len(cache) >= _CACHE_MAX:
                cache.clear()
            cache[cards] = entry
        entries[i] = entry
    if kind == DecisionKind.LEAD:
        note = _NOTES[kind]
    else:
        note = "" if complete else _FOLLOW_SAMPLE_NOTE
    hint = pb.LegalHint(complete=complete, note=note)
    hint.MergeFromString(b"".join(entries))
    return hint


_HINT_ACTIONS_TAG = bytes([(2 << 3) | 2])  # LegalHint.actions: field 2, length-delimited
_CACHE_MAX = 20_000  # entries per cache below (a few MB at most); a full cache starts again
_ACTION_KEY_MAX = 256  # bytes: a real action is far shorter (a message may be up to 64 KiB)
_HINT_ENTRY_CACHE: dict = {}
_PLAY_ENTRY_CACHE: dict = {}  # a play's cards as the engine lists them -> its entry
_EVENT_CACHE: dict = {}
_ACTION_CACHE: dict = {}


def _hint_entry(action) -> bytes:
    """``action`` encoded as one ``LegalHint.actions`` entry (actions are values: cached)."""
    entry = _HINT_ENTRY_CACHE.get(action)
    if entry is None:
        body = action_to_pb(action).SerializeToString()
        entry = _HINT_ACTIONS_TAG + _varint(len(body)) + body
        if len(_HINT_ENTRY_CACHE) >= _CACHE_MAX:
            _HINT_ENTRY_CACHE.clear()
        _HINT_ENTRY_CACHE[action] = entry
    return entry


def default_action(state: State, seed: str):
    """The legal action the referee plays for a seat that did not (deterministic per seed)."""
    return random_action(state, random.Random(seed))
