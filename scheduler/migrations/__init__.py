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

import re
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import exc, text
from sqlalchemy.engine import Connection, Engine, make_url

from scheduler.errors import ArenaError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

HERE = Path(__file__).resolve().parent
BASELINE = "0001_baseline"
#: the PostgreSQL advisory lock held while a store is migrated
LOCK_KEY = zlib.crc32(b"shengji-arena store schema")


class StoreVersionError(ArenaError, RuntimeError):
    """The store's schema cannot be brought to this code's head."""


def config(connection: Connection | None = None) -> Config:
    """An Alembic configuration with no ini file; ``connection`` is the one to migrate."""
    from alembic.config import Config
    cfg = Config()
    cfg.set_main_option("script_location", str(HERE).replace("%", "%%"))
    cfg.attributes["connection"] = connection
    return cfg


def scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory
    return ScriptDirectory.from_config(config())


def head() -> str:
    """The newest revision this code knows."""
    newest = scripts().get_current_head()
    assert newest is not None  # (the store's revisions ship with this code)
    return newest


def revision(connection: Connection) -> str | None:
    """The store's revision; None for an empty store or one made before migrations."""
    from alembic.runtime.migration import MigrationContext
    return MigrationContext.configure(connection).get_current_revision()


_ASSIGNED = re.compile(r'^(down_revision|revision) = (None|"([^"]*)")$', re.M)


def quick_head() -> str | None:
    """``head()`` read from the revision files' own ``revision = ...`` and ``down_revision =
    ...`` lines, without loading Alembic (a quarter of a second for every process that opens a
    store); None unless they form one chain with one head."""
    revisions, downs = set(), set()
    for path in (HERE / "versions").glob("[0-9]*.py"):
        found = dict((m.group(1), m.group(3)) for m in _ASSIGNED.finditer(path.read_text()))
        if "revision" not in found or found["revision"] is None:
            return None
        revisions.add(found["revision"])
        downs.add(found.get("down_revision"))
    heads = revisions - downs
    return heads.pop() if len(heads) == 1 else None


def _stored_revision(conn: Connection) -> str | None:
    """The store's revision read with plain SQL; None if that cannot tell (no table, not one
    row): ``upgrade`` then asks Alembic."""
    try:
        rows = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalars().all()
    except exc.DBAPIError:
        conn.rollback()
        return None
    return rows[0] if len(rows) == 1 else None


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


def upgrade(engine: Engine, url: str) -> str | None:
    """Bring the store at ``url`` to head; returns the revision it was at (None: none)."""
    with engine.connect() as conn:
        quick = quick_head()
        if quick is not None and _stored_revision(conn) == quick:  # at head: Alembic unneeded
            conn.rollback()
            return quick
    from alembic import command
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
