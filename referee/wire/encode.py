"""The observation's wire form, encoded from pieces made once.

An observation goes with every request. Made field by field through the protobuf constructor it
cost more than all the rest of a request, so it is encoded here from pieces made once (the wire
form of each card text, field keys, small numbers) and parsed back by protobuf. Field numbers
come from the generated descriptors, never typed here. The message is the one the constructor
gives from the same ``Observation`` (``protocol.observation_message``;
tests/referee/test_link_fast_paths.py compares the two on every seat of every variant).
"""

from __future__ import annotations

from shengji_arena.v1 import referee_pb2 as pb

from referee.rules.cards import RANK_TEXT, SUITS, TEXT

_VARINT, _LENGTH = 0, 2  # protobuf wire types
_OBS = {f.name: f.number for f in pb.Observation.DESCRIPTOR.fields}
_SEAT_CARDS = {f.name: f.number for f in pb.SeatCards.DESCRIPTOR.fields}
_HINT_ACTIONS = pb.LegalHint.DESCRIPTOR.fields_by_name["actions"].number


def varint(n: int) -> bytes:
    """A non-negative number as a protobuf varint."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = tuple(varint(i) for i in range(128))


def _int32(n: int) -> bytes:
    """An int32 or bool value (protobuf writes a negative int32 as ten bytes)."""
    if 0 <= n < 128:
        return _SMALL[n]
    return varint(n if n >= 0 else n + (1 << 64))


def _key(field: int, wire: int) -> bytes:
    return varint((field << 3) | wire)


def _text(field: int, text: str) -> bytes:
    data = text.encode()
    return _key(field, _LENGTH) + varint(len(data)) + data


def _card_texts(field: int) -> tuple[bytes, ...]:
    """Every card's text as an entry of repeated string ``field``, by card."""
    return tuple(_text(field, TEXT[k]) for k in range(54))


def length_delimited(field: int, body: bytes) -> bytes:
    """One entry of a message or bytes ``field``."""
    return _key(field, _LENGTH) + varint(len(body)) + body


def hint_actions_entry(action_bytes: bytes) -> bytes:
    """An encoded ``Action`` as one entry of ``LegalHint.actions``."""
    return length_delimited(_HINT_ACTIONS, action_bytes)


_K = {name: _key(_OBS[name], _VARINT) for name in (
    "seat", "deal", "dealer", "first_receiver", "cards_dealt", "kitty_holder", "redeals",
    "trick_leader", "tricks_played", "attacker_points", "dry_pot")}
_HAND = _card_texts(_OBS["hand"])
_PUBLIC_KITTY = _card_texts(_OBS["public_kitty"])
_MY_KITTY = _card_texts(_OBS["my_kitty"])
_DRAWN = _card_texts(_OBS["drawn_kitty_card"])
_SEAT_CARDS_CARD = _card_texts(_SEAT_CARDS["cards"])
_SEAT_CARDS_SEAT = _key(_SEAT_CARDS["seat"], _VARINT)
_LEVELS = tuple(_text(_OBS["levels"], t) for t in RANK_TEXT)
_LEVEL = tuple(_text(_OBS["level"], t) for t in RANK_TEXT)
_TRUMP: dict[int | None, bytes] = {
    None: _text(_OBS["trump"], "none"), **{i: _text(_OBS["trump"], t) for i, t in enumerate(SUITS)}}
_TEXTS: dict = {}  # (field, text) -> entry: variants and phases


def _cached_text(field: int, text: str) -> bytes:
    entry = _TEXTS.get((field, text))
    if entry is None:
        entry = _TEXTS[(field, text)] = _text(field, text) if text else b""
    return entry


_PIECES: dict = {}  # packed numbers and seat-cards entries, by value (few distinct ones)
_PIECES_MAX = 20_000


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
    return length_delimited(field, b"".join(map(_int32, values)))


def _make_seat_cards(field: int, seat: int, cards) -> bytes:
    body = (_SEAT_CARDS_SEAT + _int32(seat) if seat else b"") + \
        b"".join(map(_SEAT_CARDS_CARD.__getitem__, cards))
    return length_delimited(field, body)


_F_VARIANT, _F_PHASE, _F_HAND_SIZES = _OBS["variant"], _OBS["phase"], _OBS["hand_sizes"]
_F_DECLARATIONS, _F_TRICK, _F_PENALTIES = _OBS["declarations"], _OBS["trick"], _OBS["penalties"]
_F_HARD_DUNS, _F_MATCH_POINTS = _OBS["hard_duns"], _OBS["match_points"]


def encode_observation(o, seat: int) -> bytes:
    """The wire form of observation ``o`` of ``seat``: zero values are left out, as protobuf
    does; a seat that is None is -1."""
    K = _K
    out = [K["seat"] + _int32(seat) if seat else b"", _cached_text(_F_VARIANT, o.variant),
           K["deal"] + _int32(o.deal) if o.deal else b"", _cached_text(_F_PHASE, o.phase)]
    out.extend(map(_LEVELS.__getitem__, o.levels))
    if o.dealer != 0:
        out.append(K["dealer"] + _int32(-1 if o.dealer is None else o.dealer))
    out.append(_LEVEL[o.level])
    if o.trump_fixed:
        out.append(_TRUMP[o.trump])
    out.extend(map(_HAND.__getitem__, o.hand))
    out.append(_piece((_F_HAND_SIZES, o.hand_sizes), _make_packed))
    if o.first_receiver != 0:
        out.append(K["first_receiver"] + _int32(-1 if o.first_receiver is None
                                                else o.first_receiver))
    if o.cards_dealt:
        out.append(K["cards_dealt"] + _int32(o.cards_dealt))
    for s, cards in o.declarations:
        out.append(_piece((_F_DECLARATIONS, s, cards), _make_seat_cards))
    out.extend(map(_PUBLIC_KITTY.__getitem__, o.public_kitty))
    if o.drawn_kitty_card is not None:
        out.append(_DRAWN[o.drawn_kitty_card])
    out.extend(map(_MY_KITTY.__getitem__, o.my_kitty))
    if o.kitty_holder != 0:
        out.append(K["kitty_holder"] + _int32(-1 if o.kitty_holder is None else o.kitty_holder))
    if o.redeals:
        out.append(K["redeals"] + _int32(o.redeals))
    if o.trick_leader != 0:
        out.append(K["trick_leader"] + _int32(-1 if o.trick_leader is None else o.trick_leader))
    for s, cards in o.trick:
        out.append(_piece((_F_TRICK, s, cards), _make_seat_cards))
    if o.tricks:
        out.append(K["tricks_played"] + _int32(len(o.tricks)))
    if o.attacker_points:
        out.append(K["attacker_points"] + _int32(o.attacker_points))
    out.append(_piece((_F_PENALTIES, o.penalties), _make_packed))
    out.append(_piece((_F_HARD_DUNS, o.hard_duns), _make_packed))
    if o.dry_pot:
        out.append(K["dry_pot"] + b"\x01")
    out.append(_piece((_F_MATCH_POINTS, o.match_points), _make_packed))
    return b"".join(out)
