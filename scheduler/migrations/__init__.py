"""The store's schema versions: Alembic revisions in ``versions/``, applied in-process.

``upgrade(engine, url)`` brings a store to head under a lock (an advisory lock on PostgreSQL,
``BEGIN IMMEDIATE`` on SQLite), in one transaction, so workers opening a fresh store at once do
not race:

- an empty database is built from nothing;
- a store made before migrations existed (its tables, no ``alembic_version``) is adopted by
  ``0001_baseline``: each baseline table it has must have the baseline's columns, and the ones
  it lacks (``season_secrets``, ``season_cancels``: stores older than them) are created; then
  the later revisions run;
- a store at a revision this code does not know (made by a newer release) is refused with a
  ``StoreVersionError`` naming the store, its revision and ours.
"""

from __future__ import annotations

import zlib
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine, make_url

HERE = Path(__file__).resolve().parent
BASELINE = "0001_baseline"
#: the PostgreSQL advisory lock held while a store is migrated
LOCK_KEY = zlib.crc32(b"shengji-arena store schema")


class StoreVersionError(RuntimeError):
    """The store's schema cannot be brought to this code's head."""


def config(connection: Connection | None = None) -> Config:
    """An Alembic configuration with no ini file; ``connection`` is the one to migrate."""
    cfg = Config()
    cfg.set_main_option("script_location", str(HERE).replace("%", "%%"))
    cfg.attributes["connection"] = connection
    return cfg


def scripts() -> ScriptDirectory:
    return ScriptDirectory.from_config(config())


def head() -> str:
    """The newest revision this code knows."""
    return scripts().get_current_head()


def revision(connection: Connection) -> str | None:
    """The store's revision; None for an empty store or one made before migrations."""
    return MigrationContext.configure(connection).get_current_revision()


def shown(url: str) -> str:
    """``url`` without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return url


def _lock(conn: Connection) -> None:
    """Hold the store's migration lock until ``conn``'s transaction ends."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": LOCK_KEY})
    elif conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def upgrade(engine: Engine, url: str) -> str:
    """Bring the store at ``url`` to head; returns the revision it was at (None: none)."""
    ours = head()
    with engine.connect() as conn:
        current = revision(conn)
        conn.rollback()
        if current == ours:  # the common case: no lock taken
            return current
        _lock(conn)
        current = revision(conn)
        if current == ours:
            conn.rollback()
            return current
        if current is not None and current not in {s.revision for s in
                                                   scripts().walk_revisions()}:
            conn.rollback()
            raise StoreVersionError(
                f"{shown(url)}: the store is at schema revision {current!r}, which this code "
                f"does not know (its newest is {ours!r}): it was made or migrated by a newer "
                "release; open it with that release")
        try:
            command.upgrade(config(conn), "head")
        except StoreVersionError as e:  # a store made before migrations that is not adopted
            conn.rollback()
            raise StoreVersionError(f"{shown(url)}: {e}") from None
        except Exception as e:
            conn.rollback()
            first = (str(getattr(e, "orig", None) or e).strip().splitlines() or [""])[0]
            raise StoreVersionError(
                f"{shown(url)}: the store cannot be migrated from revision "
                f"{current or 'none'} to {ours!r}: {type(e).__name__}: {first}") from e
        conn.commit()
    return current
