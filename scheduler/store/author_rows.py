"""The submission service's authors: their tokens' hashes, roles and status."""

from __future__ import annotations

import time

from sqlalchemy import delete, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from scheduler.states import AuthorStatus
from scheduler.store.plain_rows import AuthorRow
from scheduler.store.schema import authors, sessions

_AUTHOR = (authors.c.name, authors.c.role, authors.c.status, authors.c.created_at,
           authors.c.changed_at)


class Authors:
    """Authors, their roles and status (``store.authors``)."""

    __slots__ = ("engine",)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(self, name: str, token_hash: str, *, role: str = "author",
                   status: str = AuthorStatus.ACTIVE) -> bool:
        """False when an author of that name exists (nothing changed)."""
        try:
            with self.engine.begin() as c:
                c.execute(authors.insert().values(name=name, token_hash=token_hash,
                                                  created_at=time.time(), role=role,
                                                  status=status))
        except IntegrityError:
            return False
        return True

    def token_hash(self, name: str) -> str | None:
        """The hash of an active author's token (None: no such author, or not active)."""
        with self.engine.connect() as c:
            return c.execute(select(authors.c.token_hash).where(
                authors.c.name == name, authors.c.status == AuthorStatus.ACTIVE)).scalar()

    def get(self, name: str) -> AuthorRow | None:
        with self.engine.connect() as c:
            got = c.execute(select(*_AUTHOR).where(authors.c.name == name)).mappings().first()
        return AuthorRow(**got) if got else None

    def by_token_hash(self, token_hash: str) -> AuthorRow | None:
        """The author whose token hashes to ``token_hash``, whatever their status."""
        with self.engine.connect() as c:
            got = c.execute(select(*_AUTHOR).where(authors.c.token_hash == token_hash)
                            ).mappings().first()
        return AuthorRow(**got) if got else None

    def all(self) -> list[AuthorRow]:
        with self.engine.connect() as c:
            return [AuthorRow(**r) for r in c.execute(select(*_AUTHOR).order_by(
                authors.c.created_at, authors.c.name)).mappings()]

    def change(self, name: str, **values) -> bool:
        """Change an author's ``token_hash``, ``status`` or ``role``; their dashboard sessions
        end with it. False: no such author."""
        with self.engine.begin() as c:
            n = c.execute(update(authors).where(authors.c.name == name)
                          .values(**values, changed_at=time.time())).rowcount
            c.execute(delete(sessions).where(sessions.c.author == name))
        return bool(n)
