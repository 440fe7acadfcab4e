"""Text from bots and authors made safe to print, and times as printed. Standard library
only (the participant's client carries it)."""

from __future__ import annotations

import json
import re
import time
import unicodedata

# Characters a terminal may act on or that hide text: controls (C0, DEL, C1), invisible format
# characters (Cf: bidi overrides and isolates, zero-width spaces), lone surrogates and the
# Unicode line and paragraph separators.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_SUSPECT_LINES = re.compile(r"[^\x20-\x7e\n\t]")  # candidates; newline and tab kept
_SUSPECT_FIELD = re.compile(r"[^\x20-\x7e]")


def _shown(m: re.Match) -> str:
    c = m.group()
    return repr(c)[1:-1] if unicodedata.category(c) in _HIDDEN else c


def visible(text: object, *, one_line: bool = False) -> str:
    """``text`` safe to print on a terminal: every control character but newline and tab and
    every invisible format character written out as Python's repr writes it (``\\x1b``,
    ``\\r``, ``\\u202e``), so the reader sees what a bot or an author sent and the terminal
    acts on none of it. ``one_line`` (a name, a field): newline and tab too. Other characters
    (``é``, ``升级``) are kept as they are."""
    return (_SUSPECT_FIELD if one_line else _SUSPECT_LINES).sub(_shown, str(text))


def _json_escape(m: re.Match) -> str:
    c = m.group()
    if unicodedata.category(c) not in _HIDDEN:
        return c
    code = ord(c)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a surrogate pair, as JSON writes a character past the BMP
    return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"


def json_text(value: object, **dumps) -> str:
    """``json.dumps(value, ensure_ascii=False)`` with every character ``visible`` escapes
    written as a JSON ``\\u`` escape: the same data for a JSON reader, nothing a terminal acts
    on."""
    return _SUSPECT_LINES.sub(_json_escape, json.dumps(value, ensure_ascii=False, **dumps))


def local_time(t: float | None) -> str:
    """A stored time as this machine's date and minute; empty for none."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t)) if t else ""
