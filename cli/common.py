"""What several of the ``arena`` command's modules share: the variant choice, the sandbox
switch, the store and the broker a command names, sizes as printed and a group's subcommands
(text made safe to print, and times: ``cli.text``)."""

from __future__ import annotations

import argparse
import os
import sys
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
