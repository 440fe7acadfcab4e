"""Dashboard sessions: an author signed in, by the hash of the session's id."""

from __future__ import annotations

import time

from sqlalchemy import delete, select
from sqlalchemy.engine import Engine

from scheduler.store.plain_rows import SessionRow
from scheduler.store.schema import authors, sessions


class Sessions:
    """Live dashboard sessions (``store.sessions``)."""

    __slots__ = ("engine",)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(self, id_hash: str, author: str, csrf: str, expires_at: float) -> None:
        with self.engine.begin() as c:
            c.execute(delete(sessions).where(sessions.c.expires_at < time.time()))
            c.execute(sessions.insert().values(id_hash=id_hash, author=author, csrf=csrf,
                                               created_at=time.time(), expires_at=expires_at))

    def get(self, id_hash: str) -> SessionRow | None:
        """A live session and its author's role and status."""
        with self.engine.connect() as c:
            got = c.execute(select(sessions.c.author, sessions.c.csrf, sessions.c.expires_at,
                                   authors.c.role, authors.c.status)
                            .select_from(sessions.join(authors,
                                                       authors.c.name == sessions.c.author))
                            .where(sessions.c.id_hash == id_hash,
                                   sessions.c.expires_at > time.time())).mappings().first()
        return SessionRow(**got) if got else None

    def end(self, id_hash: str) -> None:
        with self.engine.begin() as c:
            c.execute(delete(sessions).where(sessions.c.id_hash == id_hash))
