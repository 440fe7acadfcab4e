"""What several of the ``arena`` command's modules share: the variant choice, the sandbox
switch, the store and the broker a command names, times and sizes as printed, a group's
subcommands, and text from bots and authors made safe to print."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import unicodedata
from collections.abc import Sequence

from house import settings
from scheduler.errors import ArenaError

VARIANT_HELP = "the variant (default two-deck-fry; `arena rules variants` lists them)"

LOG_LINES = 12
"""Lines of a gone bot's log printed under its fault (``arena match``, ``arena matches
--faults``)."""


class CommandError(ArenaError, ValueError):
    """What the command refuses of what its user gave it (a flag, a URL) or of the machine it
    runs on (no sandbox): the message names the flag and what was expected."""


def sandbox_or_refuse(args) -> None:
    """With --unsandboxed, the referee processes started from here play the bots
    unsandboxed; without it, a machine where bwrap cannot run refuses to play
    (``CommandError``)."""
    from referee.seats.sandbox import UNSANDBOXED_ENV, require_sandbox, SandboxUnavailable
    if getattr(args, "unsandboxed", False):
        os.environ[UNSANDBOXED_ENV] = "1"
        print("note: --unsandboxed: the bots run with this user's rights and the whole host "
              "in reach", file=sys.stderr)
        return
    try:
        require_sandbox()
    except SandboxUnavailable as e:
        raise CommandError(str(e)) from None


def unsandboxed_option(parser) -> None:
    parser.add_argument("--unsandboxed", action="store_true",
                        help="play the bots without their sandboxes (with the referee's rights "
                             "and the whole host in reach; docs/security.md)")


class VariantChoices(Sequence[str]):
    """The variant ids as an option's ``choices``, read from the rules engine only when an
    option is given or help is shown: building a command's parser loads no engine."""

    def __getitem__(self, i):
        return variant_ids_or_exit()[i]

    def __len__(self) -> int:
        return len(variant_ids_or_exit())

    def __contains__(self, value: object) -> bool:
        return value in variant_ids_or_exit()


VARIANTS = VariantChoices()


def variant_ids_or_exit() -> tuple[str, ...]:
    from referee.rules import variant_ids
    try:
        return variant_ids()
    except ValueError as e:  # a family named in ARENA_FAMILIES that cannot be loaded
        raise SystemExit(f"arena: {e}") from None


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


DEFAULT_DB = "sqlite:///arena.db"
DB_HELP = f"the store's URL (default $ARENA_DB or {DEFAULT_DB})"


def db_url(args) -> str:
    """The store's URL: ``--db``, else ``$ARENA_DB``, else the default (``DEFAULT_DB``, as
    ``scheduler.store.store_url`` has it); a SQLite file's path is that SQLite store."""
    from scheduler.store import store_url
    return store_url(args.db)


def broker_url(args) -> str | None:
    """``--broker``, else ``$ARENA_BROKER``; None: no broker (the season is played here)."""
    return getattr(args, "broker", None) or settings.BROKER.text()


def existing_store(url: str, why: str):
    """The store at ``url``, for reading: a SQLite store that is not there is named (``why``
    says what was looked for), not created empty."""
    from scheduler.store import NoStore, StoreError, StoreVersionError, open_store
    try:
        return open_store(url, create=False)
    except NoStore as e:
        raise SystemExit(f"{why}; there is no store at {e.path} (a season run creates it; "
                         "name another with --db or $ARENA_DB)") from None
    except (StoreVersionError, StoreError) as e:
        raise SystemExit(f"arena: --db {e}") from None


def open_store(url: str):
    """The store at ``url``, or a ``CommandError`` that names the URL and what went wrong."""
    from scheduler import store
    try:
        return store.open_store(url)
    except (store.StoreVersionError, store.StoreError) as e:
        raise CommandError(f"--db {e}") from None


def local_time(t: float | None) -> str:
    """A stored time as this machine's date and minute; empty for none."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t)) if t else ""


def size_text(n: int) -> str:
    """A size in bytes, KiB, MiB or GiB (``scheduler.registry.archives.size_text``)."""
    from scheduler.registry.archives import size_text as shown
    return shown(n)


def subcommands(sub, group: str):
    """The subcommands of ``arena GROUP``, registered before, for another module to add one
    to; None when there is no such group."""
    parser = sub.choices.get(group)
    for action in parser._actions if parser is not None else ():
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None
