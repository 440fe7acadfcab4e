"""How the store packs what it keeps of a played match: its record (``records.data``) and its
large JSON columns (``matches.spec_json``, ``results.result_json``, ``results.summary_json``).

A record is kept as one version byte and a raw deflate stream (level 9) made with a preset
dictionary (``packing_dictionary.V1``: what most records share, such as each variant's rule set,
the keys, the event shapes, the time control). What is deflated is the record's JSON with its
long lists turned into columns, so that the same cards written by the shuffle, the deals and
the plays line up for the deflater:

- each game's ``actions``: the seats in a string (``-`` for chance), the verbs, and the rest of
  each action's text (``4H``, ``2C LJ``) joined by ``|``;
- each game's ``events``: the key lists (one per shape, in order), which shape each event has,
  and per shape one column per key: words (``7C 3D ...``), card lists (``4H|2C LJ``), integers,
  booleans, or the JSON list of the values when no column reads them back exactly;
- the ``timings``: the seats in a string, the milliseconds in thousandths.

A value at one of those places that is not a list is left as it is, and a record with an object
there is kept in the old form (its JSON, zlib level 6, first byte 0x78), which still reads: so
does every record written before this packing. The packing is exact: a record reads back as its
JSON would (``json.loads(json.dumps(record))``), key for key and in order. The dictionary is
frozen; another one is another version byte, and every version stays readable.

A JSON column's text is deflated the same way, with the same dictionary, and kept as text (the
column stays ``Text`` on every database): ``~1`` and the deflated bytes in base 64, when that is
shorter (JSON never starts with ``~``). Text that is not packed reads as it is, so the rows
written before still read.
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from itertools import repeat
from typing import Any

from scheduler.store.packing_dictionary import V1

#: the first byte of a packed record: columns, deflated with ``V1``
RECORD_V1 = 1
#: what a packed JSON column's text starts with
TEXT_V1 = "~1"
#: the digits of an event's shape in ``order`` (a record with more shapes keeps its events)
SHAPES = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

_compressor = zlib.compressobj(9, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, zdict=V1)
_decompressor = zlib.decompressobj(-15, zdict=V1)


def _deflate(data: bytes) -> bytes:
    c = _compressor.copy()  # the dictionary is read once, not at every call
    return c.compress(data) + c.flush()


def _inflate(data: bytes) -> bytes:
    d = _decompressor.copy()
    out = d.decompress(data) + d.flush()
    if not d.eof:
        raise ValueError("a packed value that ends early")
    return out


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


# -- records ------------------------------------------------------------------------------
def pack_record(record: dict) -> bytes:
    """The stored bytes of ``record``: packed (``RECORD_V1``), else its JSON as before."""
    packed = packed_form(record) if type(record) is dict else None
    if packed is None:
        return zlib.compress(json.dumps(record, ensure_ascii=False).encode("utf-8"), 6)
    return bytes((RECORD_V1,)) + _deflate(_dumps(packed))


def unpack_record(data: bytes) -> dict:
    """The record of stored bytes, packed or as written before."""
    if data[:1] == bytes((RECORD_V1,)):
        return _rows(json.loads(_inflate(data[1:]).decode("utf-8")))
    return json.loads(zlib.decompress(data).decode("utf-8"))


def packed_form(record: dict) -> dict | None:
    """``record`` with its long lists as columns; None if a place that holds columns when
    packed holds an object already (the two could not be told apart)."""
    out = dict(record)
    try:
        if "timings" in out:
            out["timings"] = _packed(out["timings"], _timing_columns)
        if isinstance(out.get("games"), (list, tuple)):
            out["games"] = [_packed_game(g) if type(g) is dict else g for g in out["games"]]
    except _Ambiguous:
        return None
    return out


def _packed_game(game: dict) -> dict:
    game = dict(game)
    for name, pack in (("actions", _action_columns), ("events", _event_columns)):
        if name in game:
            game[name] = _packed(game[name], pack)
    return game


class _Ambiguous(Exception):
    """An object where a packed record holds columns."""


def _packed(value: Any, pack) -> Any:
    """``value`` as columns (``pack``), or as it is when ``pack`` cannot."""
    if isinstance(value, dict):
        raise _Ambiguous
    if isinstance(value, (list, tuple)) and value:
        got = pack(value)
        if got is not None:
            return got
    return value


def _rows(packed: dict) -> dict:
    """The record of its packed form (``packed_form`` read back)."""
    if isinstance(packed.get("timings"), dict):
        packed["timings"] = _timing_rows(packed["timings"])
    for game in packed.get("games") or ():
        if type(game) is dict:
            if isinstance(game.get("actions"), dict):
                game["actions"] = _action_rows(game["actions"])
            if isinstance(game.get("events"), dict):
                game["events"] = _event_rows(game["events"])
    return packed


# -- a column of values ---------------------------------------------------------------------
def _words(values: list) -> str | None:
    """``values`` joined by spaces if each is a non-empty string with no space nor ``|`` (so
    that the text splits back into them), else None."""
    if set(map(type, values)) != {str} or "" in values:
        return None
    text = " ".join(values)
    return text if "|" not in text and text.count(" ") == len(values) - 1 else None


def _column(values: list) -> str | list:
    """A column's values as tagged text that reads back exactly, else the list itself:
    ``w`` words, ``b`` booleans, ``i`` integers, ``l`` lists of words."""
    kinds = set(map(type, values))
    if kinds == {str}:
        text = _words(values)
        if text is not None:
            return "w" + text
    elif kinds == {bool}:
        return "b" + "".join(map(str, map(int, values)))
    elif kinds == {int}:
        return "i" + ",".join(map(str, values))
    elif kinds <= {list, tuple}:
        every = [x for v in values for x in v]
        if not every or _words(every) is not None:
            return "l" + "|".join(map(" ".join, values))
    return list(values)


def _values(column: str | list) -> list:
    if isinstance(column, list):
        return column
    kind, text = column[:1], column[1:]
    if kind == "w":
        return text.split(" ")
    if kind == "b":
        return [c == "1" for c in text]
    if kind == "i":
        return list(map(int, text.split(",")))
    if kind == "l":
        return [p.split(" ") if p else [] for p in text.split("|")]
    raise ValueError(f"a packed column of unknown kind {kind!r}")


_SEAT_TEXT: dict[int | None, str] = {None: "-", **{s: str(s) for s in range(10)}}
_SEAT_OF = {text: s for s, text in _SEAT_TEXT.items()}


def _seats(seats: tuple) -> str | None:
    """Seats (0-9, or None for chance) as a string of digits and ``-``; None if not all are."""
    if not set(map(type, seats)) <= {int, type(None)} or not set(seats) <= _SEAT_TEXT.keys():
        return None
    return "".join(map(_SEAT_TEXT.__getitem__, seats))


def _pairs(items: list) -> tuple[tuple, tuple] | None:
    """The two columns of a list of pairs (lists or tuples of two), else None."""
    if not set(map(type, items)) <= {list, tuple} or set(map(len, items)) != {2}:
        return None
    first, second = zip(*items)
    return first, second


# -- actions, events, timings -----------------------------------------------------------------
def _action_columns(actions: list) -> dict | None:
    pairs = _pairs(actions)
    seats = None if pairs is None else _seats(pairs[0])
    if pairs is None or seats is None or set(map(type, pairs[1])) != {str}:
        return None
    verbs, spaces, rests = zip(*(text.partition(" ") for text in pairs[1]))
    rest = "|".join(rests)
    if rest.count("|") != len(rests) - 1:
        return None
    return {"seats": seats, "verbs": " ".join(verbs), "rest": rest,
            "bare": [i for i, space in enumerate(spaces) if not space]}


def _action_rows(packed: dict) -> list:
    verbs = packed["verbs"].split(" ")
    texts = [f"{verb} {rest}" for verb, rest in zip(verbs, packed["rest"].split("|"),
                                                      strict=True)]
    for i in packed["bare"]:
        texts[i] = verbs[i]
    return list(map(list, zip(map(_SEAT_OF.__getitem__, packed["seats"]), texts, strict=True)))


def _event_columns(events: list) -> dict | None:
    if set(map(type, events)) != {dict}:
        return None
    shape_of = list(map(tuple, events))
    shapes: dict[tuple, list[dict]] = {keys: [] for keys in shape_of}  # in the order they come
    if len(shapes) > len(SHAPES) or set(map(type, (k for keys in shapes for k in keys))) - {str}:
        return None
    for group, e in zip(map(shapes.__getitem__, shape_of), events):
        group.append(e)
    digit = {keys: SHAPES[i] for i, keys in enumerate(shapes)}
    return {"keys": [list(keys) for keys in shapes],
            "order": "".join(map(digit.__getitem__, shape_of)),
            "columns": [[_column(list(c)) for c in zip(*map(dict.values, group))]
                        for group in shapes.values()]}


def _event_rows(packed: dict) -> list:
    groups = {SHAPES[i]: map(dict, map(zip, repeat(keys), zip(*map(_values, columns),
                                                              strict=True)))
              for i, (keys, columns) in enumerate(zip(packed["keys"], packed["columns"],
                                                      strict=True))}
    return list(map(next, map(groups.__getitem__, packed["order"])))


def _timing_columns(timings: list) -> dict | None:
    """The seats and the milliseconds in thousandths, if each is a float that its thousandths
    give back exactly (the same value, and no -0.0)."""
    pairs = _pairs(timings)
    seats = None if pairs is None else _seats(pairs[0])
    if pairs is None or seats is None or set(map(type, pairs[1])) != {float} or \
            not all(map(math.isfinite, pairs[1])):
        return None
    thousandths = [round(ms * 1000) for ms in pairs[1]]
    if [k / 1000 for k in thousandths] != list(pairs[1]) or \
            any(math.copysign(1.0, ms) < 0 for ms in pairs[1] if ms == 0):
        return None
    return {"seats": seats, "ms": ",".join(map(str, thousandths))}


def _timing_rows(packed: dict) -> list:
    return [[seat, int(k) / 1000] for seat, k in
            zip(map(_SEAT_OF.__getitem__, packed["seats"]), packed["ms"].split(","),
                strict=True)]


# -- JSON columns ---------------------------------------------------------------------------
def pack_text(text: str | None) -> str | None:
    """A JSON column's stored text: packed when that is shorter (or the text starts with ``~``,
    which only packed text may), else the text itself."""
    if text is None:
        return None
    packed = TEXT_V1 + base64.b64encode(_deflate(text.encode("utf-8"))).decode("ascii")
    return packed if len(packed) < len(text) or text.startswith("~") else text


def unpack_text(stored: str | None) -> str | None:
    """A JSON column's text of its stored text, packed or not."""
    if stored is None or not stored.startswith(TEXT_V1):
        return stored
    return _inflate(base64.b64decode(stored[len(TEXT_V1):], validate=True)).decode("utf-8")
