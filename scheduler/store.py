"""The results store (SQLAlchemy): SQLite by default, PostgreSQL by URL for many machines.

Tables: seasons, bots (name, version, content hash), matches (spec, status, attempts, lease),
results, records (the match record, zlib-compressed JSON) and attempts (one row per claim of a
match: who played it, how it ended and why: ``arena matches SEASON --faults``); a result keeps
each deal's continuous score and the numbers the standings count (its tally columns, so a
large season's standings read no summary) beside the match's, and ``pair_scores`` a duplicate
pair's W/D/L and paired difference once both its matches are done (``scheduler/power.py``).
The match id is the key of everything: a result is inserted once and the first commit wins, so a
redelivered or retried task cannot count a match twice.

A match moves ``pending`` -> ``running`` (a lease: owner and expiry, renewed while it plays) ->
``done`` (or ``failed`` after ``max_attempts`` attempts that produced no record). A running match
whose lease expired may be claimed again: that is how a season survives a killed worker. An
attempt that ended for the infrastructure's sake (the referee process failed, its worker was
lost, the store did not take the result) charges no bot: the match is played again on the same
cards, and after ``max_attempts`` it is set aside as ``failed`` with the reason.

A cancelled season (``season_cancels``) plays nothing more: its pending matches, and running
ones nobody holds (an expired lease), become ``cancelled``; a running match with a live lease
finishes and is counted, or becomes ``cancelled`` if its attempt fails or is lost. No match of a
cancelled season is claimed again.

The bot registry's tables (bot_versions, bot_archives, authors) are described in
``scheduler/registry.py``.

``metadata`` is the models; opening a store migrates it to them (``scheduler/migrations``: a
model changed is a new revision there), and a store newer than this code is refused
(``StoreVersionError``).
"""

from __future__ import annotations

import json
import os
import socket
import time
import zlib
from typing import Any, Iterable

from sqlalchemy import (Boolean, Column, Float, ForeignKey, Integer, LargeBinary, MetaData,
                        String, Table, Text, UniqueConstraint, case, create_engine, event,
                        exists, func, or_, select, text, update)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from scheduler import migrations
from scheduler.migrations import StoreVersionError  # noqa: F401  (raised by Store())
from scheduler.scores import TALLY_COLUMNS, match_tally

metadata = MetaData()

seasons = Table(
    "seasons", metadata,
    Column("name", String(100), primary_key=True),
    Column("config_json", Text, nullable=False),
    Column("config_hash", String(32), nullable=False),
    Column("file", Text),
    Column("created_at", Float, nullable=False),
)

# The key of each season's deal seeds, read by the scheduler only, never served. A table of its
# own (not a column of seasons): a store made before it gains it when migrated (0001_baseline),
# and a season row handed around (standings) never carries the secret. A season stored before it
# has no row here: its deals followed from its name.
season_secrets = Table(
    "season_secrets", metadata,
    Column("season", String(100), ForeignKey("seasons.name"), primary_key=True),
    Column("secret", String(200), nullable=False),
    Column("given", Boolean, nullable=False),  # set in the season file, on purpose
)

# A table of its own (not a column of seasons): a store made before it gains it when migrated
# (0001_baseline).
season_cancels = Table(
    "season_cancels", metadata,
    Column("season", String(100), ForeignKey("seasons.name"), primary_key=True),
    Column("cancelled_at", Float, nullable=False),
    Column("by", String(200)),
)

bots = Table(
    "bots", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("season", String(100), ForeignKey("seasons.name"), nullable=False),
    Column("name", String(100), nullable=False),
    Column("version", String(100), nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("manifest_json", Text, nullable=False),
    Column("checked_hash", String(64)),   # the content hash that last passed `bots check`
    Column("version_hash", String(64)),   # the pinned registry version; null before the registry
    UniqueConstraint("season", "name"),
)

# The bot registry (scheduler/registry.py): immutable versions, each a canonical tar of the
# bot's folder. An archive is kept once per content hash, shared by the versions that have it.
bot_versions = Table(
    "bot_versions", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(100), nullable=False),
    Column("version", String(100), nullable=False),
    Column("content_hash", String(64), nullable=False, index=True),  # sha256 of the tar
    Column("author", String(100)),
    Column("protocol", String(16), nullable=False),
    Column("language", String(40)),
    Column("size", Integer, nullable=False),     # bytes of the uncompressed tar
    Column("files", Integer, nullable=False),
    Column("manifest_json", Text, nullable=False),
    Column("submitted_at", Float, nullable=False),
    UniqueConstraint("name", "version", name="uq_bot_versions_name_version"),
)

bot_archives = Table(
    "bot_archives", metadata,
    Column("content_hash", String(64), primary_key=True),
    Column("data", LargeBinary, nullable=False),  # the canonical tar, zlib-compressed
)

authors = Table(
    "authors", metadata,
    Column("name", String(100), primary_key=True),
    Column("token_hash", String(64), nullable=False),  # sha256 hex of the author's token
    Column("created_at", Float, nullable=False),
)

matches = Table(
    "matches", metadata,
    Column("id", String(120), primary_key=True),
    Column("season", String(100), ForeignKey("seasons.name"), nullable=False, index=True),
    Column("ordinal", Integer, nullable=False),
    Column("pairing", String(210), nullable=False),
    Column("cluster", String(240), nullable=False),
    Column("mirror", Boolean, nullable=False),
    Column("seats_json", Text, nullable=False),
    Column("spec_json", Text, nullable=False),
    Column("status", String(16), nullable=False, default="pending", index=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("lease_owner", String(200)),
    Column("lease_until", Float),
    Column("enqueued_at", Float),
    Column("started_at", Float),
    Column("finished_at", Float),
    Column("error", Text),
)

results = Table(
    "results", metadata,
    Column("match_id", String(120), ForeignKey("matches.id"), primary_key=True),
    Column("season", String(100), nullable=False, index=True),
    Column("result_json", Text, nullable=False),
    Column("summary_json", Text, nullable=False),
    Column("duration_s", Float, nullable=False),
    Column("worker", String(200)),
    Column("written_at", Float, nullable=False),
    # team 0's continuous outcome of each deal (``scheduler.power.deal_outcome``), a JSON list;
    # null in a result written before these scores (0003_scores)
    Column("deal_scores_json", Text),
    # what the standings count of the match (``scheduler.scores.match_tally``; _0: team 0,
    # seats 0 and 2; _1: team 1): read instead of the summary by a large season's standings;
    # null in a result written before them (0004_tallies), which is counted from its summary
    Column("deal_count", Integer),
    Column("score_0", Float),
    Column("score_1", Float),
    Column("net_0", Integer),
    Column("net_1", Integer),
    Column("forfeit_team", Integer),
    Column("strikes_0", Integer),
    Column("strikes_1", Integer),
    Column("faults", Integer),
    Column("gain_0", Integer),
    Column("gain_1", Integer),
    Column("attacks_0", Integer),
    Column("attack_points_0", Integer),
    Column("attacks_1", Integer),
    Column("attack_points_1", Integer),
    Column("match_points_json", Text),
)

# One row per duplicate pair once both its matches are done (``Store.score_pair``): the pair's
# W/D/L score for bot_a as the standings count it, and bot_a's paired difference per deal (the
# mean of its continuous outcome over the two plays of each deal), each deal's and their mean.
pair_scores = Table(
    "pair_scores", metadata,
    Column("season", String(100), ForeignKey("seasons.name"), primary_key=True),
    Column("cluster", String(240), primary_key=True),
    Column("bot_a", String(100), nullable=False),
    Column("bot_b", String(100), nullable=False),
    Column("deals", Integer, nullable=False),
    Column("score_a", Float, nullable=False),
    Column("diff_a", Float, nullable=False),
    Column("deal_diffs_json", Text, nullable=False),
    Column("written_at", Float, nullable=False),
)

records = Table(
    "records", metadata,
    Column("match_id", String(120), ForeignKey("matches.id"), primary_key=True),
    Column("data", LargeBinary, nullable=False),
)

#: one row per claim of a match; ``outcome``: running, done, counted (another attempt's result
#: was written first), retry / failed (the attempt produced no record; failed: the last one),
#: lost (its worker stopped renewing the lease or is gone), interrupted (a local run stopped),
#: cancelled (its season was cancelled while it was given back or abandoned)
attempts = Table(
    "attempts", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("match_id", String(120), ForeignKey("matches.id"), nullable=False, index=True),
    Column("season", String(100), nullable=False, index=True),
    Column("attempt", Integer, nullable=False),
    Column("worker", String(200)),
    Column("started_at", Float, nullable=False),
    Column("ended_at", Float),
    Column("outcome", String(16), nullable=False),
    Column("reason", Text),
)

DEFAULT_LEASE_S = 120.0
#: attempts of a match (each played on the same cards) before it is set aside as failed
MAX_ATTEMPTS = 3
LOST = ("lost: its worker stopped renewing the lease (killed, stopped or cut off from the "
        "store)")
CANCELLED = "its season was cancelled"
COUNTED_FIRST = "another attempt's result was written first"
#: a match's statuses: ``cancelled`` ones (of a cancelled season) are never played
STATUSES = ("pending", "running", "done", "failed", "cancelled")


def worker_name() -> str:
    """host:pid, the owner written into a lease."""
    return f"{socket.gethostname()}:{os.getpid()}"


def compress(record: dict) -> bytes:
    return zlib.compress(json.dumps(record, ensure_ascii=False).encode("utf-8"), 6)


def decompress(data: bytes) -> dict:
    return json.loads(zlib.decompress(data).decode("utf-8"))


_ENGINES: dict[tuple[int, str], Engine] = {}
_READY: set[Engine] = set()


def engine_for(url: str) -> Engine:
    """One engine per process and URL (created after a fork, never inherited)."""
    key = (os.getpid(), url)
    eng = _ENGINES.get(key)
    if eng is None:
        if url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url[len("postgresql://"):]
        kw: dict[str, Any] = {"future": True}
        if url.startswith("sqlite"):
            kw["connect_args"] = {"timeout": 60}
        else:
            kw["pool_pre_ping"] = True
        eng = create_engine(url, **kw)
        if url.startswith("sqlite"):
            event.listen(eng, "connect", _sqlite_pragmas)
        _ENGINES[key] = eng
    return eng


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=60000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


class NameHeld(ValueError):
    """A bot version refused: its name (or the existing name it resembles), ``name``, belongs
    to ``owner`` (None: the organiser)."""

    def __init__(self, name: str, owner: str | None) -> None:
        super().__init__(f"the bot {name!r} belongs to {owner or 'the organiser'}")
        self.name, self.owner = name, owner


#: the PostgreSQL advisory lock held while a bot version is added (names and their owners)
REGISTRY_LOCK = zlib.crc32(b"shengji-arena bot names")


def _registry_lock(c) -> None:
    """Hold the registry's lock until ``c``'s transaction ends: two versions of new names
    are added one after the other, each seeing the names the other added."""
    if c.dialect.name == "postgresql":
        c.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": REGISTRY_LOCK})
    elif c.dialect.name == "sqlite":
        c.exec_driver_sql("BEGIN IMMEDIATE")


class Store:
    """The season's store at ``url``; every method is one short transaction."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = engine_for(url)
        if self.engine not in _READY:  # once per process: a worker opens a store per match
            migrations.upgrade(self.engine, url)
            _READY.add(self.engine)

    # -- seasons and bots ---------------------------------------------------------------
    def season(self, name: str) -> dict | None:
        with self.engine.connect() as c:
            row = c.execute(select(seasons).where(seasons.c.name == name)).mappings().first()
        return dict(row) if row else None

    def season_names(self) -> list[str]:
        with self.engine.connect() as c:
            return list(c.execute(select(seasons.c.name).order_by(seasons.c.created_at))
                        .scalars())

    def create_season(self, name: str, config: dict, config_hash: str, file: str,
                      bot_rows: list[dict], plans: list[dict], secret: str | None = None,
                      secret_given: bool = False) -> None:
        """The season, its secret, its bots and every match, in one transaction."""
        now = time.time()
        with self.engine.begin() as c:
            c.execute(seasons.insert().values(name=name, config_json=json.dumps(config),
                                              config_hash=config_hash, file=file,
                                              created_at=now))
            if secret is not None:
                c.execute(season_secrets.insert().values(season=name, secret=secret,
                                                         given=secret_given))
            if bot_rows:
                c.execute(bots.insert(), [dict(b, season=name) for b in bot_rows])
            if plans:
                c.execute(matches.insert(), [dict(p, season=name, status="pending",
                                                  attempts=0) for p in plans])

    def season_secret(self, name: str) -> dict | None:
        """{"secret", "given"} of season ``name``; None for a season stored before secrets."""
        with self.engine.connect() as c:
            row = c.execute(select(season_secrets.c.secret, season_secrets.c.given)
                            .where(season_secrets.c.season == name)).mappings().first()
        return dict(row) if row else None

    def bots(self, season: str) -> list[dict]:
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(select(bots).where(bots.c.season == season)
                                               .order_by(bots.c.id)).mappings()]

    def mark_checked(self, season: str, name: str, content_hash: str) -> None:
        with self.engine.begin() as c:
            c.execute(update(bots).where(bots.c.season == season, bots.c.name == name)
                      .values(checked_hash=content_hash))

    # -- the bot registry ---------------------------------------------------------------
    def add_bot_version(self, row: dict, data: bytes, *, resembles=None) -> tuple[dict, bool]:
        """Store a bot version and its archive (``data``, kept once per content hash) in one
        transaction, under the registry's lock: (the row, True); or (the row already stored as
        name@version, False), writing nothing, whatever its content. A name belongs to the
        author of its first version: another author's version of it raises ``NameHeld`` (one
        with no author, the organiser's, is let in); so does a new name for which
        ``resembles({name: owner})`` returns an existing name."""
        for _ in range(3):
            try:
                with self.engine.connect() as c:
                    _registry_lock(c)
                    old = self._bot_version(c, row["name"], row["version"])
                    if old is not None:
                        c.rollback()
                        return old, False
                    owners = self._bot_names(c)
                    if row["name"] in owners:
                        owner = owners[row["name"]]
                        if row["author"] is not None and row["author"] != owner:
                            c.rollback()
                            raise NameHeld(row["name"], owner)
                    elif resembles is not None and (like := resembles(owners)) is not None:
                        c.rollback()
                        raise NameHeld(like, owners[like])
                    if c.execute(select(bot_archives.c.content_hash)
                                 .where(bot_archives.c.content_hash == row["content_hash"])
                                 ).first() is None:
                        c.execute(bot_archives.insert().values(
                            content_hash=row["content_hash"], data=data))
                    c.execute(bot_versions.insert().values(**row))
                    got = self._bot_version(c, row["name"], row["version"])
                    c.commit()
                    return got, True
            except IntegrityError:  # the same name@version or archive stored at this moment
                continue
        raise RuntimeError(f"{row['name']}@{row['version']}: the store kept refusing it")

    @staticmethod
    def _bot_names(c) -> dict[str, str | None]:
        owners: dict[str, str | None] = {}
        for name, author in c.execute(select(bot_versions.c.name, bot_versions.c.author)
                                      .order_by(bot_versions.c.submitted_at,
                                                bot_versions.c.id)):
            owners.setdefault(name, author)
        return owners

    def bot_names(self) -> dict[str, str | None]:
        """Every bot name in the registry and its owner: the author of its first version
        (None: the organiser)."""
        with self.engine.connect() as c:
            return self._bot_names(c)

    @staticmethod
    def _bot_version(c, name: str, version: str) -> dict | None:
        got = c.execute(select(bot_versions).where(bot_versions.c.name == name,
                                                   bot_versions.c.version == version)
                        ).mappings().first()
        return dict(got) if got else None

    def bot_version(self, name: str, version: str) -> dict | None:
        with self.engine.connect() as c:
            return self._bot_version(c, name, version)

    def bot_versions(self, name: str | None = None) -> list[dict]:
        """Every bot version (or ``name``'s), in the order submitted."""
        q = select(bot_versions)
        if name is not None:
            q = q.where(bot_versions.c.name == name)
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(q.order_by(bot_versions.c.submitted_at,
                                                          bot_versions.c.id)).mappings()]

    def bot_archive(self, content_hash: str) -> bytes | None:
        """The zlib-compressed canonical tar of ``content_hash``."""
        with self.engine.connect() as c:
            return c.execute(select(bot_archives.c.data)
                             .where(bot_archives.c.content_hash == content_hash)).scalar()

    @staticmethod
    def _pinning(c, content_hash: str) -> list[str]:
        return sorted(c.execute(select(bots.c.season).distinct()
                                .where(bots.c.version_hash == content_hash)).scalars())

    def pinning_seasons(self, content_hash: str) -> list[str]:
        """The seasons with a bot pinned to ``content_hash``."""
        with self.engine.connect() as c:
            return self._pinning(c, content_hash)

    def remove_bot_version(self, name: str, version: str) -> dict:
        """Delete name@version in one transaction unless a season pins its content hash:
        {"removed", "seasons" (those pinning it: nothing removed), "archive_removed" (no other
        version shared it)}."""
        with self.engine.begin() as c:
            row = self._bot_version(c, name, version)
            if row is None:
                return {"removed": False, "seasons": [], "archive_removed": False}
            seasons_ = self._pinning(c, row["content_hash"])
            if seasons_:
                return {"removed": False, "seasons": seasons_, "archive_removed": False}
            c.execute(bot_versions.delete().where(bot_versions.c.id == row["id"]))
            shared = c.execute(select(bot_versions.c.id).where(
                bot_versions.c.content_hash == row["content_hash"])).first()
            if shared is None:
                c.execute(bot_archives.delete().where(
                    bot_archives.c.content_hash == row["content_hash"]))
        return {"removed": True, "seasons": [], "archive_removed": shared is None}

    def add_author(self, name: str, token_hash: str) -> bool:
        """False when an author of that name exists (nothing changed)."""
        try:
            with self.engine.begin() as c:
                c.execute(authors.insert().values(name=name, token_hash=token_hash,
                                                  created_at=time.time()))
        except IntegrityError:
            return False
        return True

    def author_token_hash(self, name: str) -> str | None:
        with self.engine.connect() as c:
            return c.execute(select(authors.c.token_hash).where(authors.c.name == name)
                             ).scalar()

    # -- the life of a match ------------------------------------------------------------
    def claim(self, match_id: str, owner: str, lease_s: float = DEFAULT_LEASE_S, *,
              max_attempts: int = MAX_ATTEMPTS, take_from: str | None = None) -> dict | None:
        """Take the match if it is pending or its lease expired (or it is leased to
        ``take_from``, a worker known to be gone); returns its row, else None. Taking over a
        lost attempt past ``max_attempts`` sets the match aside as ``failed`` instead. A match
        of a cancelled season is never taken: a lost one of them becomes ``cancelled``."""
        now = time.time()
        lost = (matches.c.status == "running") & (matches.c.lease_until < now)
        if take_from is not None:
            lost = lost | ((matches.c.status == "running")
                           & (matches.c.lease_owner == take_from))
        live = ~exists().where(season_cancels.c.season == matches.c.season)
        with self.engine.begin() as c:
            got = c.execute(
                update(matches)
                .where(matches.c.id == match_id, (matches.c.status == "pending") | lost, live)
                .values(status="running", attempts=matches.c.attempts + 1, lease_owner=owner,
                        lease_until=now + lease_s, started_at=now))
            if got.rowcount != 1:
                held = c.execute(select(matches.c.season).where(matches.c.id == match_id,
                                                                lost)).scalar()
                if held is not None and self._is_cancelled(c, held):
                    why = (f"lost: its worker process {take_from} is gone" if take_from
                           else LOST)
                    self._cancel_abandoned(c, [match_id], f"{why}; {CANCELLED}", now)
                return None
            row = dict(c.execute(select(matches).where(matches.c.id == match_id))
                       .mappings().one())
            why = (f"lost: its worker process {take_from} is gone" if take_from else LOST)
            took_over = c.execute(update(attempts)
                                  .where(attempts.c.match_id == match_id,
                                         attempts.c.outcome == "running")
                                  .values(outcome="lost", ended_at=now, reason=why)).rowcount
            if took_over and row["attempts"] > max_attempts:  # lost once too often
                c.execute(update(matches).where(matches.c.id == match_id)
                          .values(status="failed", attempts=row["attempts"] - 1,
                                  lease_owner=None, lease_until=None,
                                  error=f"set aside after {max_attempts} attempts; the last "
                                        f"one {why}"))
                return None
            c.execute(attempts.insert().values(match_id=match_id, season=row["season"],
                                               attempt=row["attempts"], worker=owner,
                                               started_at=now, outcome="running"))
        return row

    # -- cancelling a season ------------------------------------------------------------
    @staticmethod
    def _is_cancelled(c, season: str) -> bool:
        return c.execute(select(season_cancels.c.season)
                         .where(season_cancels.c.season == season)).first() is not None

    @staticmethod
    def _cancel_abandoned(c, ids: list[str], why: str, now: float) -> None:
        """Running matches ``ids``, held by nobody: ``cancelled``, their attempts lost."""
        if not ids:
            return
        c.execute(update(matches).where(matches.c.id.in_(ids), matches.c.status == "running")
                  .values(status="cancelled", lease_owner=None, lease_until=None,
                          finished_at=now, error=why))
        c.execute(update(attempts).where(attempts.c.match_id.in_(ids),
                                         attempts.c.outcome == "running")
                  .values(outcome="lost", ended_at=now, reason=why))

    def _abandoned(self, c, season: str, now: float) -> list[str]:
        return list(c.execute(select(matches.c.id)
                              .where(matches.c.season == season,
                                     matches.c.status == "running",
                                     matches.c.lease_until < now)).scalars())

    def cancel_season(self, name: str, by: str | None = None) -> dict | None:
        """Cancel season ``name`` in one transaction: its pending matches, and running ones
        whose lease expired, become ``cancelled``; running ones with a live lease finish.
        Returns {"already", "cancelled_at", "by", "pending", "abandoned", "running", "done"}
        (what this call changed; "already": it was cancelled before), None for no season.
        Cancelling again cancels the running matches abandoned since."""
        now = time.time()
        try:
            return self._cancel(name, by, now)
        except IntegrityError:  # cancelled at the same moment by another: it already was
            return self._cancel(name, by, now)

    def _cancel(self, name: str, by: str | None, now: float) -> dict | None:
        with self.engine.begin() as c:
            if c.execute(select(seasons.c.name).where(seasons.c.name == name)).first() is None:
                return None
            prior = c.execute(select(season_cancels).where(season_cancels.c.season == name)
                              ).mappings().first()
            if prior is None:
                c.execute(season_cancels.insert().values(season=name, cancelled_at=now, by=by))
            pending = c.execute(update(matches)
                                .where(matches.c.season == name, matches.c.status == "pending")
                                .values(status="cancelled", finished_at=now,
                                        error=CANCELLED)).rowcount
            abandoned = self._abandoned(c, name, now)
            self._cancel_abandoned(c, abandoned, f"{CANCELLED} while its lease had run out "
                                   "(no live worker held it)", now)
            left = dict(c.execute(select(matches.c.status, func.count())
                                  .where(matches.c.season == name)
                                  .group_by(matches.c.status)).all())
        return {"already": prior is not None,
                "cancelled_at": prior["cancelled_at"] if prior else now,
                "by": prior["by"] if prior else by, "pending": pending,
                "abandoned": len(abandoned), "running": left.get("running", 0),
                "done": left.get("done", 0)}

    def cancelled(self, season: str) -> dict | None:
        """{"cancelled_at", "by"} when season ``season`` was cancelled, else None."""
        with self.engine.connect() as c:
            row = c.execute(select(season_cancels.c.cancelled_at, season_cancels.c.by)
                            .where(season_cancels.c.season == season)).mappings().first()
        return dict(row) if row else None

    def settle_cancelled(self, season: str) -> int:
        """In a cancelled season, running matches whose lease expired (their worker is gone):
        ``cancelled``. Returns how many; 0 for a season not cancelled."""
        now = time.time()
        with self.engine.begin() as c:
            if not self._is_cancelled(c, season):
                return 0
            ids = self._abandoned(c, season, now)
            self._cancel_abandoned(c, ids, f"{LOST}; {CANCELLED}", now)
        return len(ids)

    def renew(self, match_id: str, owner: str, lease_s: float = DEFAULT_LEASE_S) -> bool:
        with self.engine.begin() as c:
            got = c.execute(update(matches)
                            .where(matches.c.id == match_id, matches.c.lease_owner == owner,
                                   matches.c.status == "running")
                            .values(lease_until=time.time() + lease_s))
        return got.rowcount == 1

    def finish(self, match_id: str, season: str, result: dict, summary: dict, record: dict,
               duration_s: float, owner: str, note: str | None = None) -> bool:
        """Write the result and record once; False when the match was already counted by
        another attempt. Idempotent: a write that committed but was not acknowledged (the
        store went away in the commit) is found on the next call and reported as written."""
        now = time.time()
        try:
            with self.engine.begin() as c:
                c.execute(results.insert().values(
                    match_id=match_id, season=season, result_json=json.dumps(result),
                    summary_json=json.dumps(summary), duration_s=duration_s, worker=owner,
                    written_at=now, **self._tally(c, match_id, summary)))
                c.execute(records.insert().values(match_id=match_id, data=compress(record)))
                c.execute(update(matches).where(matches.c.id == match_id)
                          .values(status="done", finished_at=now, lease_owner=None,
                                  lease_until=None, error=None))
                self._end_attempt(c, match_id, owner, "done", note, now)
                # a lapsed holder's result can land while a taker still plays: the taker's
                # attempt is over too (its own hand-back or give-back finds the match done and
                # is no longer its to close; it stayed ``running`` for ever)
                c.execute(update(attempts)
                          .where(attempts.c.match_id == match_id, attempts.c.worker != owner,
                                 attempts.c.outcome == "running")
                          .values(outcome="counted", ended_at=now, reason=COUNTED_FIRST))
        except IntegrityError:
            with self.engine.begin() as c:
                writer = c.execute(select(results.c.worker)
                                   .where(results.c.match_id == match_id)).scalar()
                if writer == owner:  # our own earlier commit
                    return True
                self._end_attempt(c, match_id, owner, "counted", COUNTED_FIRST, now)
            return False
        try:  # after the commit: the pair's other match may have committed at the same time
            self.score_pair(match_id)
        except IntegrityError:  # that match's writer scored the pair first
            pass
        except Exception:  # noqa: BLE001  the result is written; its pair's finer score is
            pass           # best effort and never fails the match
        return True

    @staticmethod
    def _tally(c, match_id: str, summary: dict) -> dict:
        """The result's tally columns (``match_tally``: what the standings count, team 0's
        continuous outcome of each deal); all null if the summary cannot say."""
        from referee.match.matchfile import MatchSummary
        spec = c.execute(select(matches.c.spec_json).where(matches.c.id == match_id)).scalar()
        try:
            variant = json.loads(spec)["variant"]
            return match_tally(MatchSummary.from_dict(summary), variant)
        except Exception:  # a summary or spec this code cannot read: counted from the summary
            return dict.fromkeys(TALLY_COLUMNS)

    def score_pair(self, match_id: str) -> dict | None:
        """Write the ``pair_scores`` row of ``match_id``'s duplicate pair once both of its
        matches are done (the row, else None; a pair already scored is left as it is)."""
        from referee.match.matchfile import MatchSummary
        from scheduler.scores import deal_scores, pair_result
        with self.engine.begin() as c:
            row = c.execute(select(matches.c.season, matches.c.cluster)
                            .where(matches.c.id == match_id)).first()
            if row is None:
                return None
            done = c.execute(select(matches.c.seats_json, matches.c.spec_json,
                                    results.c.summary_json, results.c.deal_scores_json)
                             .select_from(matches.join(results,
                                                       results.c.match_id == matches.c.id))
                             .where(matches.c.season == row.season,
                                    matches.c.cluster == row.cluster)
                             .order_by(matches.c.ordinal)).all()
            if len(done) != 2:
                return None  # not a duplicate pair, or not both played
            if c.execute(select(pair_scores.c.cluster).where(
                    pair_scores.c.season == row.season,
                    pair_scores.c.cluster == row.cluster)).first() is not None:
                return None
            teams = [json.loads(d.seats_json)[:2] for d in done]
            summaries = [MatchSummary.from_dict(json.loads(d.summary_json)) for d in done]
            # a result written before these scores (a migrated store): from its summary
            scores = [json.loads(d.deal_scores_json) if d.deal_scores_json is not None else
                      deal_scores(sm, json.loads(d.spec_json)["variant"])
                      for d, sm in zip(done, summaries)]
            got = pair_result(teams[0][0], teams, summaries, scores)
            out = {"season": row.season, "cluster": row.cluster, "bot_a": got["a"],
                   "bot_b": got["b"], "deals": len(got["diffs"]), "score_a": got["score"],
                   "diff_a": got["diff"], "deal_diffs_json": json.dumps(got["diffs"]),
                   "written_at": time.time()}
            c.execute(pair_scores.insert().values(**out))
        return out

    def pair_scores(self, season: str) -> list[dict]:
        """The season's scored duplicate pairs (``pair_scores`` rows), by cluster."""
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(select(pair_scores)
                                               .where(pair_scores.c.season == season)
                                               .order_by(pair_scores.c.cluster)).mappings()]

    @staticmethod
    def _end_attempt(c, match_id: str, owner: str, outcome: str, reason: str | None,
                     now: float, *, if_open: bool = False) -> None:
        """Close ``owner``'s latest attempt at ``match_id`` (with ``if_open``, only if nothing
        closed it before: a taker's ``lost`` is never rewritten by the loser)."""
        latest = (select(func.max(attempts.c.id))
                  .where(attempts.c.match_id == match_id, attempts.c.worker == owner)
                  .scalar_subquery())
        q = update(attempts).where(attempts.c.id == latest)
        if if_open:
            q = q.where(attempts.c.outcome == "running")
        c.execute(q.values(outcome=outcome, ended_at=now, reason=reason))

    @staticmethod
    def _held(match_id: str, owner: str):
        """The condition of a write that only the lease's holder may make: checked by the
        write itself, so a taker that claimed the match since it was read is never undone."""
        return ((matches.c.id == match_id) & (matches.c.status == "running")
                & (matches.c.lease_owner == owner))

    def give_back(self, match_id: str, owner: str, error: str,
                  max_attempts: int = MAX_ATTEMPTS) -> str:
        """A failed attempt (no record; charged to no bot): pending again, or ``failed`` (set
        aside) after ``max_attempts``, or ``cancelled`` in a cancelled season. Returns the
        match's status. A match no longer ``owner``'s (its lease ran out and another took it,
        or another attempt finished it) is left as it is."""
        now = time.time()
        with self.engine.begin() as c:
            row = c.execute(select(matches.c.attempts, matches.c.season)
                            .where(matches.c.id == match_id)).first()
            if row is None:
                return "missing"
            if self._is_cancelled(c, row.season):
                status, error_text = "cancelled", f"{CANCELLED}; its last attempt: "
                values = dict(finished_at=now)
            else:
                status = "failed" if row.attempts >= max_attempts else "pending"
                error_text = (f"set aside after {row.attempts} attempts; the last: "
                              if status == "failed" else "")
                values = {}
            got = c.execute(update(matches).where(self._held(match_id, owner))
                            .values(status=status, lease_owner=None, lease_until=None,
                                    error=error_text + error[-4000:], **values)).rowcount
            if got != 1:  # not ours any more
                self._end_attempt(c, match_id, owner, "retry", error[-4000:], now,
                                  if_open=True)
                return c.execute(select(matches.c.status)
                                 .where(matches.c.id == match_id)).scalar()
            outcome = {"failed": "failed", "cancelled": "cancelled"}.get(status, "retry")
            self._end_attempt(c, match_id, owner, outcome, error[-4000:], now)
        return status

    def hand_back(self, match_id: str, owner: str, reason: str) -> str:
        """``owner``'s running match back to pending, uncharged (its attempt ``interrupted``,
        not counted), marked enqueued now (its message goes back to the queue with it); or
        ``cancelled`` in a cancelled season. Returns the match's status. A match no longer
        ``owner``'s (its lease ran out and another took it: that attempt stays ``lost`` and
        charged) is left as it is."""
        now = time.time()
        with self.engine.begin() as c:
            season = c.execute(select(matches.c.season)
                               .where(matches.c.id == match_id)).scalar()
            if season is None:
                return "missing"
            status = "cancelled" if self._is_cancelled(c, season) else "pending"
            got = c.execute(update(matches).where(self._held(match_id, owner))
                            .values(status=status, lease_owner=None, lease_until=None,
                                    attempts=matches.c.attempts - 1, enqueued_at=now,
                                    finished_at=now if status == "cancelled" else None)
                            ).rowcount
            if got != 1:
                return c.execute(select(matches.c.status)
                                 .where(matches.c.id == match_id)).scalar()
            self._end_attempt(c, match_id, owner, "interrupted",
                              f"{reason}; not counted as an attempt", now)
        return status

    def release_owned(self, season: str, alive: "callable") -> int:
        """Running matches of this host whose owner process is gone: pending again
        (``cancelled`` in a cancelled season)."""
        host = socket.gethostname()
        freed = 0
        with self.engine.begin() as c:
            status = "cancelled" if self._is_cancelled(c, season) else "pending"
            rows = c.execute(select(matches.c.id, matches.c.lease_owner)
                             .where(matches.c.season == season,
                                    matches.c.status == "running")).all()
            for mid, owner in rows:
                h, _, pid = (owner or "").rpartition(":")
                if h == host and pid.isdigit() and not alive(int(pid)):
                    got = c.execute(update(matches).where(self._held(mid, owner))
                                    .values(status=status, lease_owner=None,
                                            lease_until=None,
                                            attempts=matches.c.attempts - 1)).rowcount
                    if got != 1:  # taken meanwhile: that attempt stays the taker's ``lost``
                        continue
                    self._end_attempt(c, mid, owner, "interrupted", "its local run was "
                                      "stopped; not counted as an attempt", time.time())
                    freed += 1
        return freed

    def due(self, season: str, requeue_after_s: float, limit: int | None = None) -> list[str]:
        """Matches to (re-)enqueue: pending and not enqueued within ``requeue_after_s``, or
        running with an expired lease. Marks them enqueued now."""
        now = time.time()
        with self.engine.begin() as c:
            q = (select(matches.c.id)
                 .where(matches.c.season == season,
                        ((matches.c.status == "pending")
                         & (matches.c.enqueued_at.is_(None)
                            | (matches.c.enqueued_at < now - requeue_after_s)))
                        | ((matches.c.status == "running") & (matches.c.lease_until < now)
                           & (matches.c.enqueued_at < now - requeue_after_s)))
                 .order_by(matches.c.ordinal))
            if limit is not None:
                q = q.limit(limit)
            ids = list(c.execute(q).scalars())
            if ids:
                c.execute(update(matches).where(matches.c.id.in_(ids)).values(enqueued_at=now))
        return ids

    def delete_season(self, name: str) -> None:
        """Remove a season and everything of it (benchmarks and tests start afresh)."""
        with self.engine.begin() as c:
            ids = select(matches.c.id).where(matches.c.season == name)
            c.execute(records.delete().where(records.c.match_id.in_(ids)))
            c.execute(attempts.delete().where(attempts.c.season == name))
            c.execute(results.delete().where(results.c.season == name))
            c.execute(pair_scores.delete().where(pair_scores.c.season == name))
            c.execute(matches.delete().where(matches.c.season == name))
            c.execute(bots.delete().where(bots.c.season == name))
            c.execute(season_secrets.delete().where(season_secrets.c.season == name))
            c.execute(season_cancels.delete().where(season_cancels.c.season == name))
            c.execute(seasons.delete().where(seasons.c.name == name))

    def retry_failed(self, season: str) -> int:
        """Failed matches back to pending with fresh attempts (a new run tries them again)."""
        with self.engine.begin() as c:
            got = c.execute(update(matches).where(matches.c.season == season,
                                                  matches.c.status == "failed")
                            .values(status="pending", attempts=0, enqueued_at=None))
        return got.rowcount

    def unmark(self, ids: list[str]) -> None:
        """Forget that ``ids`` were enqueued (their messages never reached the broker)."""
        if ids:
            with self.engine.begin() as c:
                c.execute(update(matches).where(matches.c.id.in_(ids)).values(enqueued_at=None))

    # -- reading ------------------------------------------------------------------------
    def counts(self, season: str) -> dict[str, int]:
        with self.engine.connect() as c:
            rows = c.execute(select(matches.c.status, func.count())
                             .where(matches.c.season == season)
                             .group_by(matches.c.status)).all()
        out = dict.fromkeys(STATUSES, 0)
        out.update({s: n for s, n in rows})
        return out

    def overview(self) -> list[dict]:
        """Every season, oldest first: its row (no secret), its counts by status and its
        cancel ({"cancelled_at", "by"} or None)."""
        with self.engine.connect() as c:
            rows = [dict(r) for r in c.execute(select(seasons).order_by(seasons.c.created_at,
                                                                        seasons.c.name))
                    .mappings()]
            by_status = c.execute(select(matches.c.season, matches.c.status, func.count())
                                  .group_by(matches.c.season, matches.c.status)).all()
            cancels = {r.season: {"cancelled_at": r.cancelled_at, "by": r.by}
                       for r in c.execute(select(season_cancels))}
        counts: dict[str, dict[str, int]] = {}
        for season, status, n in by_status:
            counts.setdefault(season, dict.fromkeys(STATUSES, 0))[status] = n
        for r in rows:
            r["counts"] = counts.get(r["name"], dict.fromkeys(STATUSES, 0))
            r["cancel"] = cancels.get(r["name"])
        return rows

    def queued(self, season: str, requeue_after_s: float) -> int:
        """Pending matches enqueued within ``requeue_after_s`` (believed to be in the queue)."""
        since = time.time() - requeue_after_s
        with self.engine.connect() as c:
            return c.execute(select(func.count()).select_from(matches)
                             .where(matches.c.season == season, matches.c.status == "pending",
                                    matches.c.enqueued_at >= since)).scalar_one()

    def pending_ids(self, season: str) -> list[str]:
        with self.engine.connect() as c:
            return list(c.execute(select(matches.c.id)
                                  .where(matches.c.season == season,
                                         matches.c.status.in_(("pending", "running")))
                                  .order_by(matches.c.ordinal)).scalars())

    def matches(self, season: str) -> list[dict]:
        """Every match of the season in play order, with its result's columns (None before
        one is written)."""
        with self.engine.connect() as c:
            q = (select(matches, results.c.result_json, results.c.summary_json,
                        results.c.duration_s, results.c.worker,
                        *(results.c[k] for k in TALLY_COLUMNS))
                 .select_from(matches.outerjoin(results, results.c.match_id == matches.c.id))
                 .where(matches.c.season == season).order_by(matches.c.ordinal))
            return [dict(r) for r in c.execute(q).mappings()]

    def standings_rows(self, season: str) -> list[dict]:
        """What the standings read of every match of the season, in play order: id, cluster,
        status, seats_json and the result's tally columns; ``summary_json`` only for a result
        without them (written before them), else None; ``played``: whether it has a result."""
        untallied = or_(results.c.deal_count.is_(None), results.c.deal_scores_json.is_(None))
        q = (select(matches.c.id, matches.c.cluster, matches.c.status, matches.c.seats_json,
                    results.c.match_id.isnot(None).label("played"),
                    case((untallied, results.c.summary_json), else_=None).label("summary_json"),
                    *(results.c[k] for k in TALLY_COLUMNS))
             .select_from(matches.outerjoin(results, results.c.match_id == matches.c.id))
             .where(matches.c.season == season).order_by(matches.c.ordinal))
        with self.engine.connect() as c:
            got = c.execute(q)
            keys = list(got.keys())
            return [dict(zip(keys, r)) for r in got.all()]

    def match(self, match_id: str) -> dict | None:
        with self.engine.connect() as c:
            row = c.execute(select(matches).where(matches.c.id == match_id)).mappings().first()
        return dict(row) if row else None

    def sealed_by(self, match_id: str) -> list[dict]:
        """The matches whose play keeps ``match_id``'s record sealed: every other match of its
        season on any of its cards (its duplicate mirror; and, since every pairing meets the
        same deal sets, the other pairings' matches on them) that is not done yet, the mirror
        first; [] when the record may be served. Each is {"id", "status", "mirror"}. A
        cancelled match is never played, so it seals nothing."""
        with self.engine.connect() as c:
            row = c.execute(select(matches.c.season, matches.c.cluster, matches.c.spec_json)
                            .where(matches.c.id == match_id)).first()
            if row is None:
                return []
            others = c.execute(select(matches.c.id, matches.c.status, matches.c.cluster,
                                      matches.c.spec_json)
                               .where(matches.c.season == row.season,
                                      matches.c.id != match_id,
                                      matches.c.status.notin_(("done", "cancelled")))
                               .order_by(matches.c.ordinal)).all()
        mine = _deal_seeds(row.spec_json)
        out = [{"id": o.id, "status": o.status, "mirror": o.cluster == row.cluster}
               for o in others if o.cluster == row.cluster or mine & _deal_seeds(o.spec_json)]
        return sorted(out, key=lambda o: not o["mirror"])

    def record(self, match_id: str) -> dict | None:
        with self.engine.connect() as c:
            data = c.execute(select(records.c.data).where(records.c.match_id == match_id)
                             ).scalar()
        return decompress(data) if data is not None else None

    def attempt_log(self, season: str, match_id: str | None = None) -> list[dict]:
        """Every attempt at the season's matches (or one match's), in the order made."""
        q = select(attempts).where(attempts.c.season == season)
        if match_id is not None:
            q = q.where(attempts.c.match_id == match_id)
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(q.order_by(attempts.c.id)).mappings()]

    def result_count(self, season: str) -> int:
        with self.engine.connect() as c:
            return c.execute(select(func.count()).select_from(results)
                             .where(results.c.season == season)).scalar_one()


def _deal_seeds(spec_json: str) -> set[str]:
    spec = json.loads(spec_json)
    return {d["seed"] for d in spec.get("deals") or []} or {str(spec.get("seed"))}


def plan_rows(season_obj, plans: Iterable) -> list[dict]:
    """Rows of the matches table for a season's plans."""
    return [{"id": p.match_id, "ordinal": p.ordinal, "pairing": p.pairing,
             "cluster": p.cluster, "mirror": p.mirror, "seats_json": json.dumps(list(p.seats)),
             "spec_json": json.dumps(season_obj.match_spec(p).to_dict(), ensure_ascii=False)}
            for p in plans]
