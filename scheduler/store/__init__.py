"""The results store (SQLAlchemy): SQLite by default, PostgreSQL by URL for many machines.

``open_store(url)`` opens it, the one way the command line, the workers and the dashboard do.
A ``Store`` is composed by job: each job is an attribute, a small class of its own module whose
methods are each one short transaction and hand out frozen rows (``store.queue.claim(...)``):

- ``store.seasons`` (``season_rows``): a season, its secret, its bots and its matches' plan;
  counts; removal;
- ``store.cancels`` (``cancels``): cancelling a season;
- ``store.queue`` (``queue``): the lease queue (claim, renew, give back, hand back, what to
  enqueue);
- ``store.results`` (``result_rows``): a played match written once, its duplicate pair's
  score kept as its scorer hands it in (``scheduler.stats.scores.score_pair``), its record;
- ``store.registry`` (``registry_rows``): the bot registry's versions and archives;
- ``store.authors`` (``author_rows``), ``store.versions`` (``version_rows``: the states of the
  versions the service took in), ``store.sessions`` (``session_rows``), ``store.scrimmages``
  (``scrimmage_rows``), ``store.audit`` (``audit_rows``: the audit log and rate-limit events):
  the submission service's rows;
- ``store.ladder`` (``ladder_rows``): a ladder's entries, added matches and rating history;
- ``store.humans`` (``human_rows``): people's games in the browser, their records;
- ``store.pages`` (``pages``): the reads of the dashboard and the command line's listings.

Beside them: ``schema`` (the tables, the constants, the engines; ``metadata``: the models) and
``rows`` (the typed rows; every JSON column is encoded and decoded there only).

Opening a store migrates it to ``metadata`` (``scheduler/migrations``: a model changed is a new
revision there), and a store newer than this code is refused (``StoreVersionError``).
"""

from __future__ import annotations

import os

from house import settings
from scheduler import migrations
from scheduler.errors import ArenaError
from scheduler.migrations import StoreVersionError
from scheduler.store.audit_rows import Audit
from scheduler.store.author_rows import Authors
from scheduler.store.cancels import Cancels
from scheduler.store.pages import Pages
from scheduler.store.queue import LeaseQueue
from scheduler.store.registry_rows import REGISTRY_LOCK, NameHeld, Registry
from scheduler.store.result_rows import Results
from scheduler.store.rows import (AttemptRow, BotRow, BotVersionRow, FaultRow, MatchPage,
                                  MatchResultRow, MatchRow, PairScoreRow, ResultPace,
                                  SeasonOverview, SeasonRow, StandingsRow)
from scheduler.store.schema import (CANCELLED, COUNTED_FIRST, DEFAULT_LEASE_S, ENGINES,
                                    JSON_COLUMNS, LOST, MAX_ATTEMPTS, READY, SCRIMMAGE_STATES,
                                    STATUSES, TALLY_COLUMNS, VERSION_STATES, attempts, authors,
                                    bot_archives, bot_versions, bots, compress, decompress,
                                    engine_for, matches, metadata, pair_scores, records, results,
                                    season_cancels, season_secrets, seasons, worker_name)
from scheduler.store.human_rows import Humans
from scheduler.store.ladder_rows import Ladder
from scheduler.store.scrimmage_rows import Scrimmages
from scheduler.store.season_rows import Seasons, plan_rows
from scheduler.store.session_rows import Sessions
from scheduler.store.version_rows import Versions

__all__ = [
    "AttemptRow", "BotRow", "BotVersionRow", "CANCELLED", "COUNTED_FIRST", "DEFAULT_LEASE_S",
    "DEFAULT_URL", "FaultRow", "JSON_COLUMNS", "LOST", "MAX_ATTEMPTS", "MatchPage",
    "MatchResultRow", "MatchRow", "NameHeld", "NoStore", "PairScoreRow", "REGISTRY_LOCK",
    "ResultPace", "STATUSES", "SeasonOverview", "SeasonRow", "StandingsRow", "Store",
    "StoreError", "StoreVersionError", "SCRIMMAGE_STATES", "VERSION_STATES", "TALLY_COLUMNS",
    "URL_ENV", "attempts", "authors",
    "bot_archives", "bot_versions", "bots", "compress", "decompress", "engine_for", "matches",
    "metadata", "open_store", "pair_scores", "plan_rows", "records", "results",
    "season_cancels", "season_secrets", "seasons", "shown_url", "store_url", "worker_name"]

#: the engines by (process, URL), under their earlier name
_ENGINES = ENGINES

DEFAULT_URL: str = settings.DB.default
#: the environment variable naming the store
URL_ENV = settings.DB.name


class Store:
    """The store at ``url``, composed by job: each attribute but ``url`` and ``engine`` is one
    job's rows (a caller names the job it uses: ``store.queue.claim(...)``)."""

    __slots__ = ("url", "engine", "seasons", "cancels", "queue", "results", "registry",
                 "authors", "versions", "sessions", "scrimmages", "audit", "ladder", "pages",
                 "humans")

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = engine = engine_for(url)
        if engine not in READY:  # once per process: a worker opens a store per match
            _migrated(engine, url)
            READY.add(engine)
        self.seasons = Seasons(engine)
        self.cancels = Cancels(engine)
        self.queue = LeaseQueue(engine)
        self.results = Results(engine)
        self.registry = Registry(engine)
        self.authors = Authors(engine)
        self.versions = Versions(engine)
        self.sessions = Sessions(engine)
        self.scrimmages = Scrimmages(engine)
        self.audit = Audit(engine)
        self.ladder = Ladder(engine)
        self.pages = Pages(engine)
        self.humans = Humans(engine)


def _migrated(engine, url: str, attempts: int = 6) -> None:
    """``migrations.upgrade``, tried again when SQLite answers "database is locked" at once:
    it does so, without waiting out its busy timeout, where waiting could not help (a read
    snapshot that another connection's migration made stale, a journal mode being switched),
    and the transaction must be started again. Many workers opening one fresh store on a
    loaded machine met it (4 of 6 processes)."""
    import time

    from sqlalchemy.exc import OperationalError
    for attempt in range(attempts):
        try:
            migrations.upgrade(engine, url)
            return
        except (OperationalError, StoreVersionError) as e:
            if (not url.startswith("sqlite") or "database is locked" not in str(e)
                    or attempt == attempts - 1):
                raise
            time.sleep(0.1 * 2 ** attempt)  # (a backoff before the transaction again)


class StoreError(ArenaError, RuntimeError):
    """A store that cannot be opened; the message begins with its URL."""


class NoStore(StoreError):
    """A SQLite store that is not there, opened by a reader (which never creates one)."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path

    def __str__(self) -> str:
        return f"there is no store at {self.path} (a season run creates it)"


def store_url(given: str | None = None) -> str:
    """The store's URL: ``given``, else ``$ARENA_DB``, else ``DEFAULT_URL``; a SQLite file's
    path (``records/demo.db``: a file that is there, or a name ending in .db, .sqlite or
    .sqlite3) is that SQLite store."""
    url = given or settings.DB.text() or DEFAULT_URL
    if "://" not in url and (url.endswith((".db", ".sqlite", ".sqlite3")) or
                             os.path.isfile(url)):
        return f"sqlite:///{url}"
    return url


def shown_url(url: str) -> str:
    """A store's or broker's URL as a log may show it: its password replaced by ``***``."""
    return migrations.shown(url)


def open_store(url: str | None = None, *, create: bool = True) -> Store:
    """The store at ``url`` (``store_url``), migrated. ``create=False`` (a reader): a SQLite
    store that is not there (no such file, or one in memory) raises ``NoStore`` instead of
    being created. A store newer than this code raises ``StoreVersionError``; a URL that is
    not a database's, or a store that does not answer, ``StoreError``; each names the URL."""
    from sqlalchemy.exc import ArgumentError, SQLAlchemyError
    url = store_url(url)
    if not create and url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):]
        if not path or path == ":memory:" or not os.path.exists(path):
            raise NoStore(path or url)
    try:
        return Store(url)
    except ArgumentError as e:
        raise StoreError(f"{url}: not a database URL ({e}); expected e.g. sqlite:///arena.db "
                         "or postgresql://user@host:5432/db") from None
    except (SQLAlchemyError, ImportError) as e:
        reason = str(getattr(e, "orig", None) or e).strip().splitlines()[0]
        raise StoreError(f"{url}: cannot open the store: {reason}") from None
