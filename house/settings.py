"""Every ``ARENA_*`` environment setting, once: its name, type, default and help.

Code asks this table, never ``os.environ``, for an ``ARENA_*`` name: ``BUILD_TIMEOUT_S.value()``
(typed, the default when unset or empty) or ``BUILD_TIMEOUT_S.text()`` (the environment's text,
None when unset), or ``setting("ARENA_BUILD_TIMEOUT_S")``. Each read looks at the environment
when it is made (a dict lookup), so a setting changed at run time is seen. Code that builds a
child process's environment writes the names it takes from here (``SEAT.name``).
``arena settings`` prints the table; docs/deploy.md lists the operator's settings, checked
against it.

The Python SDK (``sdk/python``) and the sample bots are standalone (copied out of this tree and
installed alone): they read the variables written for a bot (``Scope.BOT``) themselves, by name.

Standard library only, and nothing heavy: every bot and referee process imports it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any


class Scope(StrEnum):
    """Who sets a setting."""

    OPERATOR = "operator"
    """The operator of a deployment (documented in docs/deploy.md)."""
    AUTHOR = "author"
    """A bot's author, on the machine that runs ``arena bots``."""
    DEVELOPER = "developer"
    """Someone working on the arena itself: the engine, its tests and benchmarks."""
    INTERNAL = "internal"
    """The arena, for processes it starts (a worker for its pool, a season for its referees)."""
    BOT = "bot"
    """The referee, for a bot process it starts: read by the SDK and the bots, not here."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One ``ARENA_*`` variable: its type, its default (None: unset means off, or the reader
    works one out) and what it does."""

    name: str
    type: type
    default: Any
    help: str
    scope: Scope = Scope.OPERATOR

    def text(self) -> str | None:
        """The environment's text for this setting now; None when unset."""
        return os.environ.get(self.name)

    def value(self) -> Any:
        """The setting now, as its type: the default when unset or empty; a value that is not
        of the type raises ValueError naming the variable."""
        text = os.environ.get(self.name)
        if not text or not text.strip():
            return self.default
        if self.type is str:
            return text
        if self.type is bool:
            return text.strip() == "1"
        if self.type is Path:
            return Path(text)
        try:
            return self.type(text.strip())
        except ValueError:
            raise ValueError(f"{self.name}={text[:40]!r}: expected {self.type.__name__}") \
                from None

    @property
    def shown_default(self) -> str:
        """The default as ``arena settings`` prints it."""
        if self.default is None or self.default == "":
            return "-"
        if self.type is bool:
            return "1" if self.default else "0"
        return str(self.default)


TABLE: dict[str, Setting] = {}
"""Every setting by name."""


def _add(name: str, type_: type, default: object, help_: str,
         scope: Scope = Scope.OPERATOR) -> Setting:
    if name in TABLE or not name.startswith("ARENA_"):
        raise ValueError(f"setting {name!r}: declared twice, or not an ARENA_ name")
    TABLE[name] = Setting(name, type_, default, help_, scope)
    return TABLE[name]


def setting(name: str) -> Any:
    """The value of setting ``name`` now (``Setting.value``); an unknown name raises KeyError
    listing the known ones."""
    try:
        return TABLE[name].value()
    except KeyError:
        raise KeyError(f"no setting {name!r}; known: {', '.join(sorted(TABLE))}") from None


# -- the store, the broker and the workers ------------------------------------------------------
DB = _add("ARENA_DB", str, "sqlite:///arena.db",
          "the store's URL (--db); a workers' required setting")
BROKER = _add("ARENA_BROKER", str, "redis://127.0.0.1:6379/0",
              "the broker's URL (--broker); a season or the service without one plays here")
LEASE_S = _add("ARENA_LEASE_S", float, 120.0,
               "seconds a silent worker keeps its match (arena worker --lease)", Scope.INTERNAL)
MAX_ATTEMPTS = _add("ARENA_MAX_ATTEMPTS", int, 3,
                    "attempts of a match the infrastructure failed before it is set aside")
STOP_GRACE_S = _add("ARENA_STOP_GRACE_S", float, 0.0,
                    "seconds a match in play may still take after SIGTERM (0: hand it back)")
STOP_FILE = _add("ARENA_STOP_FILE", Path, None,
                 "the file whose existence tells a worker's pool to stop", Scope.INTERNAL)
HEARTBEAT_S = _add("ARENA_HEARTBEAT_S", float, 5.0,
                   "seconds between a worker's heartbeats in the broker", Scope.DEVELOPER)
WORKER_EVENTS = _add("ARENA_WORKER_EVENTS", bool, False,
                     "1: workers send Celery's task events and heartbeats (--events)")
METRICS_PORT = _add("ARENA_METRICS_PORT", int, None,
                    "a Prometheus /metrics endpoint on this port (--metrics-port; 0: off)")
METRICS_DIR_MADE = _add("ARENA_METRICS_DIR_MADE", Path, None,
                        "the metrics folder a worker made, removed when it ends",
                        Scope.INTERNAL)

# -- the submission service -----------------------------------------------------------------------
CHECK_VARIANT = _add("ARENA_CHECK_VARIANT", str, "two-deck-fry",
                     "the variant of scrimmages, and of a check when the store has no season")
SCRIMMAGE_DEALS = _add("ARENA_SCRIMMAGE_DEALS", int, 2, "deals in each match of a scrimmage")
INTAKE_PER_AUTHOR = _add("ARENA_INTAKE_PER_AUTHOR", int, None,
                         "versions of one author in the intake lane at once "
                         "(default: half the slots, rounded up)")
AB = _add("ARENA_AB", bool, True,
          "1: each new ready version plays an A/B test against its author's previous ready "
          "version of the bot (0: none)")
AB_ELO0 = _add("ARENA_AB_ELO0", float, 0.0, "an A/B test's H0: the new version is at most this "
               "many Elo stronger")
AB_ELO1 = _add("ARENA_AB_ELO1", float, 50.0, "an A/B test's H1: the new version is at least "
               "this many Elo stronger")
AB_ALPHA = _add("ARENA_AB_ALPHA", float, 0.05, "an A/B test's false 'stronger' rate")
AB_BETA = _add("ARENA_AB_BETA", float, 0.05, "an A/B test's false 'not stronger' rate")
AB_MAX_PAIRS = _add("ARENA_AB_MAX_PAIRS", int, 200,
                    "the duplicate pairs after which an undecided A/B test stops")
AB_WINDOW = _add("ARENA_AB_WINDOW", int, 1,
                 "the matches of every A/B test together in play at once (their share)")
AB_SECRET = _add("ARENA_AB_SECRET", str, None,
                 "the key of every A/B test's deals, read by the workers that open them: "
                 "fixed deals, for tests and reproducible research only", Scope.DEVELOPER)
HUMAN = _add("ARENA_HUMAN", bool, True,
             "1: authors play bots in the browser (/play) on arena serve (0: off)")
HUMAN_GAMES = _add("ARENA_HUMAN_GAMES", int, 4,
                   "people's games in play at once on the service (one per person)")
HUMAN_DECISION_MS = _add("ARENA_HUMAN_DECISION_MS", int, 120_000,
                         "a person's time for each decision in a game in the browser, in ms")
HUMAN_SEED = _add("ARENA_HUMAN_SEED", str, None,
                  "the seed of every person's game on the service: fixed deals, for tests only",
                  Scope.DEVELOPER)
CRASH_LIMIT = _add("ARENA_CRASH_LIMIT", int, 3,
                   "forfeits of a version's last ARENA_CRASH_WINDOW matches that suspend it "
                   "(0: never)")
CRASH_WINDOW = _add("ARENA_CRASH_WINDOW", int, 5, "the matches ARENA_CRASH_LIMIT counts over")
SERVER = _add("ARENA_SERVER", str, None, "the submission service's URL (--server)",
              Scope.AUTHOR)
AUTHOR_TOKEN = _add("ARENA_AUTHOR_TOKEN", str, None, "an author's token (or --token-file)",
                    Scope.AUTHOR)

# -- bots: their archives, builds and cache ------------------------------------------------------
BOT_SIZE_LIMIT = _add("ARENA_BOT_SIZE_LIMIT", int, 64 << 20,
                      "a bot's largest archive, in bytes (uncompressed)")
BOT_CACHE = _add("ARENA_BOT_CACHE", Path, None,
                 "where fetched bots are kept and built (default ~/.cache/shengji-arena/bots)")
BOT_CACHE_MB = _add("ARENA_BOT_CACHE_MB", float, 2048,
                    "the bot cache's size in MiB, least recently used evicted")
BUILD_TIMEOUT_S = _add("ARENA_BUILD_TIMEOUT_S", float, 600.0,
                       "a bot's build's wall-clock limit in seconds")
BUILD_DISK_MB = _add("ARENA_BUILD_DISK_MB", int, 512,
                     "a bot's build's disk limit in MiB, its own files included")

# -- the referee and the engine -------------------------------------------------------------------
REFEREE_MEMORY_MB = _add("ARENA_REFEREE_MEMORY_MB", int, 2048,
                         "a referee process's memory bound in MiB (at least 64)",
                         Scope.DEVELOPER)
REFEREE_PRESTART = _add("ARENA_REFEREE_PRESTART", bool, True,
                        "0: start each match's referee by exec, not forked from a referee "
                        "process started ahead (referee/prestarted.py)", Scope.DEVELOPER)
UNSANDBOXED = _add("ARENA_UNSANDBOXED", bool, False,
                   "1: a season's referees run its bots unsandboxed (--unsandboxed)",
                   Scope.INTERNAL)
ENGINE = _add("ARENA_ENGINE", str, "auto",
              "the rules engine: pure, compiled or auto (compiled when built and fresh)",
              Scope.DEVELOPER)
GATE = _add("ARENA_GATE", str, "auto",
            "a seat's gate: native (gate.c, make gate), python, or auto (native when built)",
            Scope.DEVELOPER)
FAMILIES = _add("ARENA_FAMILIES", str, "",
                "modules of more game families, comma-separated (each has a FAMILY value)",
                Scope.DEVELOPER)
TEST_PG = _add("ARENA_TEST_PG", str, "postgresql://postgres@127.0.0.1:5432/test",
               "the PostgreSQL server of the tests and benchmarks", Scope.DEVELOPER)

# -- written for a bot process ---------------------------------------------------------------------
SEAT = _add("ARENA_SEAT", int, None, "the bot's seat, 0-3", Scope.BOT)
MATCH_ID = _add("ARENA_MATCH_ID", str, None, "the match's id", Scope.BOT)
REFEREE = _add("ARENA_REFEREE", str, None,
               "a gRPC bot's referee: unix:///path/seatN.sock or host:port", Scope.BOT)
TOKEN = _add("ARENA_TOKEN", str, None, "a gRPC bot's seat token", Scope.BOT)
PROTO_DIR = _add("ARENA_PROTO_DIR", Path, None, "the folder of the protocol's files",
                 Scope.BOT)
