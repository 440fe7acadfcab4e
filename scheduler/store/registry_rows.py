"""What the bot registry keeps in the store (``scheduler/registry/`` says what it means):
versions, their archives (once per content hash) and authors."""

from __future__ import annotations

import time
import zlib

from sqlalchemy import select, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from scheduler.store.plain_rows import BotOwner, VersionRemoval
from scheduler.store.rows import BotVersionRow, NewVersion
from scheduler.store.schema import bot_archives, bot_versions, bots, version_states


class NameHeld(ValueError):
    """A bot version refused: its name (or the existing name it resembles), ``name``, belongs
    to ``owner`` (None: the organiser)."""

    def __init__(self, name: str, owner: str | None) -> None:
        super().__init__(f"the bot {name!r} belongs to {owner or 'the organiser'}")
        self.name, self.owner = name, owner


#: the PostgreSQL advisory lock held while a bot version is added (names and their owners)
REGISTRY_LOCK = zlib.crc32(b"shengji-arena bot names")


def registry_lock(c) -> None:
    """Hold the registry's lock until ``c``'s transaction ends: two versions of new names
    are added one after the other, each seeing the names the other added."""
    if c.dialect.name == "postgresql":
        c.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": REGISTRY_LOCK})
    elif c.dialect.name == "sqlite":
        c.exec_driver_sql("BEGIN IMMEDIATE")


def _names(c) -> dict[str, str | None]:
    owners: dict[str, str | None] = {}
    for name, author in c.execute(select(bot_versions.c.name, bot_versions.c.author)
                                  .order_by(bot_versions.c.submitted_at, bot_versions.c.id)):
        owners.setdefault(name, author)
    return owners


def _version(c, name: str, version: str) -> BotVersionRow | None:
    got = c.execute(select(bot_versions).where(bot_versions.c.name == name,
                                               bot_versions.c.version == version)
                    ).mappings().first()
    return BotVersionRow(**got) if got else None


def _pinning(c, content_hash: str) -> list[str]:
    return sorted(c.execute(select(bots.c.season).distinct()
                            .where(bots.c.version_hash == content_hash)).scalars())


class Registry:
    """Bot versions and their archives (``store.registry``; their authors: ``store.authors``,
    the service's states of them: ``store.versions``)."""

    __slots__ = ("engine",)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(self, row: NewVersion, data: bytes, *, resembles=None,
            state: str | None = None) -> tuple[BotVersionRow, bool]:
        """Store a bot version (``row``) and its archive
        (``data``, kept once per content hash) in one transaction, under the registry's lock:
        (the row, True); or (the row already stored as name@version, False), writing nothing,
        whatever its content. A name belongs to the author of its first version: another
        author's version of it raises ``NameHeld`` (one with no author, the organiser's, is
        let in); so does a new name for which ``resembles({name: owner})`` returns an existing
        name. ``state``: the version's first state (``version_states``; the submission service's
        "queued"), written in the same transaction: no season sees it before."""
        for _ in range(3):
            try:
                with self.engine.connect() as c:
                    registry_lock(c)
                    old = _version(c, row.name, row.version)
                    if old is not None:
                        c.rollback()
                        if row.author is not None and old.author != row.author:
                            raise NameHeld(row.name, old.author)
                        return old, False
                    owners = _names(c)
                    if row.name in owners:
                        owner = owners[row.name]
                        if row.author is not None and row.author != owner:
                            c.rollback()
                            raise NameHeld(row.name, owner)
                    elif resembles is not None and (like := resembles(owners)) is not None:
                        c.rollback()
                        raise NameHeld(like, owners[like])
                    if c.execute(select(bot_archives.c.content_hash)
                                 .where(bot_archives.c.content_hash == row.content_hash)
                                 ).first() is None:
                        c.execute(bot_archives.insert().values(
                            content_hash=row.content_hash, data=data))
                    c.execute(bot_versions.insert().values(**row.columns()))
                    got = _version(c, row.name, row.version)
                    assert got is not None  # (inserted just above, in this transaction)
                    if state is not None:
                        c.execute(version_states.insert().values(
                            version_id=got.id, state=state, updated_at=time.time()))
                    c.commit()
                    return got, True
            except IntegrityError:  # the same name@version or archive stored at this moment
                continue
        raise RuntimeError(f"{row.name}@{row.version}: the store kept refusing it")

    def names(self) -> list[BotOwner]:
        """Every bot name in the registry and its owner: the author of its first version
        (None: the organiser)."""
        with self.engine.connect() as c:
            return [BotOwner(name, owner) for name, owner in _names(c).items()]

    def version(self, name: str, version: str) -> BotVersionRow | None:
        with self.engine.connect() as c:
            return _version(c, name, version)

    def version_by_id(self, version_id: int) -> BotVersionRow | None:
        with self.engine.connect() as c:
            got = c.execute(select(bot_versions).where(bot_versions.c.id == version_id)
                            ).mappings().first()
        return BotVersionRow(**got) if got else None

    def versions(self, name: str | None = None) -> list[BotVersionRow]:
        """Every bot version (or ``name``'s), in the order submitted."""
        q = select(bot_versions)
        if name is not None:
            q = q.where(bot_versions.c.name == name)
        with self.engine.connect() as c:
            return [BotVersionRow(**r) for r in c.execute(
                q.order_by(bot_versions.c.submitted_at, bot_versions.c.id)).mappings()]

    def archive(self, content_hash: str) -> bytes | None:
        """The zlib-compressed canonical tar of ``content_hash``."""
        with self.engine.connect() as c:
            return c.execute(select(bot_archives.c.data)
                             .where(bot_archives.c.content_hash == content_hash)).scalar()

    def pinning_seasons(self, content_hash: str) -> list[str]:
        """The seasons with a bot pinned to ``content_hash``."""
        with self.engine.connect() as c:
            return _pinning(c, content_hash)

    def remove(self, name: str, version: str) -> VersionRemoval:
        """Delete name@version in one transaction unless a season pins its content hash."""
        with self.engine.begin() as c:
            row = _version(c, name, version)
            if row is None:
                return VersionRemoval(removed=False)
            pinning = _pinning(c, row.content_hash)
            if pinning:
                return VersionRemoval(removed=False, seasons=tuple(pinning))
            c.execute(version_states.delete().where(version_states.c.version_id == row.id))
            c.execute(bot_versions.delete().where(bot_versions.c.id == row.id))
            shared = c.execute(select(bot_versions.c.id).where(
                bot_versions.c.content_hash == row.content_hash)).first()
            if shared is None:
                c.execute(bot_archives.delete().where(
                    bot_archives.c.content_hash == row.content_hash))
        return VersionRemoval(removed=True, archive_removed=shared is None)
