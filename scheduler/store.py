"""The results store (SQLAlchemy): SQLite by default, PostgreSQL by URL for many machines.

Tables: seasons, bots (name, version, content hash), matches (spec, status, attempts, lease),
results and records (the match record, zlib-compressed JSON). The match id is the key of
everything: a result is inserted once and the first commit wins, so a redelivered or retried
task cannot count a match twice.

A match moves ``pending`` -> ``running`` (a lease: owner and expiry, renewed while it plays) ->
``done`` (or ``failed`` after ``max_attempts`` attempts that produced no record). A running match
whose lease expired may be claimed again: that is how a season survives a killed worker.
"""

from __future__ import annotations

import json
import os
import socket
import time
import zlib
from typing import Any, Iterable

from sqlalchemy import (Boolean, Column, Float, ForeignKey, Integer, LargeBinary, MetaData,
                        String, Table, Text, UniqueConstraint, create_engine, event, func,
                        select, update)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

metadata = MetaData()

seasons = Table(
    "seasons", metadata,
    Column("name", String(100), primary_key=True),
    Column("config_json", Text, nullable=False),
    Column("config_hash", String(32), nullable=False),
    Column("file", Text),
    Column("created_at", Float, nullable=False),
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
    UniqueConstraint("season", "name"),
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
)

records = Table(
    "records", metadata,
    Column("match_id", String(120), ForeignKey("matches.id"), primary_key=True),
    Column("data", LargeBinary, nullable=False),
)

DEFAULT_LEASE_S = 120.0
MAX_ATTEMPTS = 3


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


class Store:
    """The season's store at ``url``; every method is one short transaction."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = engine_for(url)
        if self.engine not in _READY:  # once per process: a worker opens a store per match
            metadata.create_all(self.engine)
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
                      bot_rows: list[dict], plans: list[dict]) -> None:
        """The season, its bots and every match, in one transaction."""
        now = time.time()
        with self.engine.begin() as c:
            c.execute(seasons.insert().values(name=name, config_json=json.dumps(config),
                                              config_hash=config_hash, file=file,
                                              created_at=now))
            if bot_rows:
                c.execute(bots.insert(), [dict(b, season=name) for b in bot_rows])
            if plans:
                c.execute(matches.insert(), [dict(p, season=name, status="pending",
                                                  attempts=0) for p in plans])

    def bots(self, season: str) -> list[dict]:
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(select(bots).where(bots.c.season == season)
                                               .order_by(bots.c.id)).mappings()]

    def mark_checked(self, season: str, name: str, content_hash: str) -> None:
        with self.engine.begin() as c:
            c.execute(update(bots).where(bots.c.season == season, bots.c.name == name)
                      .values(checked_hash=content_hash))

    # -- the life of a match ------------------------------------------------------------
    def claim(self, match_id: str, owner: str, lease_s: float = DEFAULT_LEASE_S) -> dict | None:
        """Take the match if it is pending or its lease expired; returns its row, else None."""
        now = time.time()
        with self.engine.begin() as c:
            got = c.execute(
                update(matches)
                .where(matches.c.id == match_id,
                       ((matches.c.status == "pending")
                        | ((matches.c.status == "running") & (matches.c.lease_until < now))))
                .values(status="running", attempts=matches.c.attempts + 1, lease_owner=owner,
                        lease_until=now + lease_s, started_at=now))
            if got.rowcount != 1:
                return None
            row = c.execute(select(matches).where(matches.c.id == match_id)).mappings().one()
        return dict(row)

    def renew(self, match_id: str, owner: str, lease_s: float = DEFAULT_LEASE_S) -> bool:
        with self.engine.begin() as c:
            got = c.execute(update(matches)
                            .where(matches.c.id == match_id, matches.c.lease_owner == owner,
                                   matches.c.status == "running")
                            .values(lease_until=time.time() + lease_s))
        return got.rowcount == 1

    def finish(self, match_id: str, season: str, result: dict, summary: dict, record: dict,
               duration_s: float, owner: str) -> bool:
        """Write the result and record once; False when the match was already counted."""
        now = time.time()
        try:
            with self.engine.begin() as c:
                c.execute(results.insert().values(
                    match_id=match_id, season=season, result_json=json.dumps(result),
                    summary_json=json.dumps(summary), duration_s=duration_s, worker=owner,
                    written_at=now))
                c.execute(records.insert().values(match_id=match_id, data=compress(record)))
                c.execute(update(matches).where(matches.c.id == match_id)
                          .values(status="done", finished_at=now, lease_owner=None,
                                  lease_until=None, error=None))
        except IntegrityError:
            return False
        return True

    def give_back(self, match_id: str, owner: str, error: str,
                  max_attempts: int = MAX_ATTEMPTS) -> str:
        """A failed attempt: pending again, or ``failed`` after ``max_attempts``."""
        with self.engine.begin() as c:
            row = c.execute(select(matches.c.attempts, matches.c.status)
                            .where(matches.c.id == match_id)).first()
            if row is None or row.status != "running":
                return row.status if row else "missing"
            status = "failed" if row.attempts >= max_attempts else "pending"
            c.execute(update(matches).where(matches.c.id == match_id,
                                            matches.c.lease_owner == owner)
                      .values(status=status, lease_owner=None, lease_until=None,
                              error=error[-4000:]))
        return status

    def release_owned(self, season: str, alive: "callable") -> int:
        """Running matches of this host whose owner process is gone: pending again."""
        host = socket.gethostname()
        freed = 0
        with self.engine.begin() as c:
            rows = c.execute(select(matches.c.id, matches.c.lease_owner)
                             .where(matches.c.season == season,
                                    matches.c.status == "running")).all()
            for mid, owner in rows:
                h, _, pid = (owner or "").rpartition(":")
                if h == host and pid.isdigit() and not alive(int(pid)):
                    c.execute(update(matches).where(matches.c.id == mid,
                                                    matches.c.lease_owner == owner)
                              .values(status="pending", lease_owner=None, lease_until=None,
                                      attempts=matches.c.attempts - 1))
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
            c.execute(results.delete().where(results.c.season == name))
            c.execute(matches.delete().where(matches.c.season == name))
            c.execute(bots.delete().where(bots.c.season == name))
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
        out = {"pending": 0, "running": 0, "done": 0, "failed": 0}
        out.update({s: n for s, n in rows})
        return out

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
        with self.engine.connect() as c:
            q = (select(matches, results.c.result_json, results.c.summary_json,
                        results.c.duration_s, results.c.worker)
                 .select_from(matches.outerjoin(results, results.c.match_id == matches.c.id))
                 .where(matches.c.season == season).order_by(matches.c.ordinal))
            return [dict(r) for r in c.execute(q).mappings()]

    def match(self, match_id: str) -> dict | None:
        with self.engine.connect() as c:
            row = c.execute(select(matches).where(matches.c.id == match_id)).mappings().first()
        return dict(row) if row else None

    def record(self, match_id: str) -> dict | None:
        with self.engine.connect() as c:
            data = c.execute(select(records.c.data).where(records.c.match_id == match_id)
                             ).scalar()
        return decompress(data) if data is not None else None

    def result_count(self, season: str) -> int:
        with self.engine.connect() as c:
            return c.execute(select(func.count()).select_from(results)
                             .where(results.c.season == season)).scalar_one()


def plan_rows(season_obj, plans: Iterable) -> list[dict]:
    """Rows of the matches table for a season's plans."""
    return [{"id": p.match_id, "ordinal": p.ordinal, "pairing": p.pairing,
             "cluster": p.cluster, "mirror": p.mirror, "seats_json": json.dumps(list(p.seats)),
             "spec_json": json.dumps(season_obj.match_spec(p).to_dict(), ensure_ascii=False)}
            for p in plans]
