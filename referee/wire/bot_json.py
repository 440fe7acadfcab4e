"""Reading the JSON a bot writes (a stdio answer line, a Botzone answer): whatever the bytes,
either a value or a ``BotJsonError`` saying what was expected.

The value is bounded: nested at most ``MAX_DEPTH`` deep (Python's own reader gives up on deep
input with a ``RecursionError``; that is a ``BotJsonError`` here too), and its numbers are finite
(``NaN``, ``Infinity`` and a float too large such as ``1e400`` are refused, not read as floats).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

MAX_DEPTH = 32
"""How deeply a bot's JSON may nest arrays and objects; an answer needs three levels."""
INT64_MAX = 2**63 - 1


class BotJsonError(ValueError):
    """JSON a bot wrote that is not read: the message says what was expected."""


def _no_constant(name: str):
    raise BotJsonError(f"{name} is not a JSON number: expected a finite number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BotJsonError(f"number {text[:24]!r} is out of range: expected a finite number")
    return value


def load_bot_json(data: bytes | str):
    """The JSON value ``data`` holds; raises ``BotJsonError`` (a ``ValueError``) for anything
    that is not JSON, nested deeper than ``MAX_DEPTH`` or holding a number that is not finite."""
    try:
        value = json.loads(data, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise BotJsonError(f"nested deeper than {MAX_DEPTH} arrays and objects") from None
    except BotJsonError:
        raise
    except ValueError as e:  # not JSON, not UTF-8, an integer of too many digits
        raise BotJsonError(str(e)[:200]) from None
    if _deeper_than(value, MAX_DEPTH):
        raise BotJsonError(f"nested deeper than {MAX_DEPTH} arrays and objects")
    return value


def _deeper_than(value, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects more than ``limit`` deep (walked without
    recursion, so any depth is measured)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list)))
    return False


def request_id_of(value) -> int:
    """A bot's ``request_id`` as an integer: a JSON integer, or a string of decimal digits (how
    the protobuf JSON mapping writes a 64-bit integer, and how the referee sends it); raises
    ``BotJsonError`` for anything else (a bool, a float, another string, a number outside 0 to
    2**63 - 1)."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        shown = json.dumps(value[:24] if isinstance(value, str) else value) \
            if isinstance(value, (bool, float, str)) else type(value).__name__
        raise BotJsonError(f"request_id {shown}: expected an integer (or a string of digits)")
    if not 0 <= value <= INT64_MAX:
        raise BotJsonError(f"request_id {str(value)[:24]}: expected an integer from 0 to "
                           f"{INT64_MAX}")
    return value
