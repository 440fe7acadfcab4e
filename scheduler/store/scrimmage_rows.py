"""Scrimmages: an author's bot against another over a few duplicate pairs, played as a small
season of its own."""

from __future__ import annotations

import time

from sqlalchemy import func, or_, select, update
from sqlalchemy.engine import Engine

from scheduler.states import AB_KINDS, SCRIMMAGE_OPEN, ScrimmageKind, ScrimmageState
from scheduler.store.plain_rows import ScrimmageRow
from scheduler.store.schema import scrimmages


class Scrimmages:
    """Scrimmages asked for and played (``store.scrimmages``)."""

    __slots__ = ("engine",)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(self, **values) -> int:
        now = time.time()
        with self.engine.begin() as c:
            key = c.execute(scrimmages.insert().values(
                **values, state=ScrimmageState.QUEUED, created_at=now, updated_at=now)
            ).inserted_primary_key
            assert key is not None  # (an insert of one row)
            return key[0]

    def get(self, scrimmage_id: int) -> ScrimmageRow | None:
        with self.engine.connect() as c:
            got = c.execute(select(scrimmages).where(scrimmages.c.id == scrimmage_id)
                            ).mappings().first()
        return ScrimmageRow(**got) if got else None

    def of(self, author: str | None = None, states=None) -> list[ScrimmageRow]:
        """Scrimmages ``author`` asked for or whose opponent is theirs (None: all), newest
        first; ``states``: only those."""
        q = select(scrimmages)
        if author is not None:
            q = q.where(or_(scrimmages.c.author == author,
                            scrimmages.c.opponent_author == author))
        if states is not None:
            q = q.where(scrimmages.c.state.in_(tuple(states)))
        with self.engine.connect() as c:
            return [ScrimmageRow(**r)
                    for r in c.execute(q.order_by(scrimmages.c.id.desc())).mappings()]

    def in_flight(self, author: str) -> int:
        """The scrimmages and A/B tests ``author`` asked for that are not over (those the
        arena asked for, a new version's, are not counted)."""
        with self.engine.connect() as c:
            return c.execute(select(func.count()).select_from(scrimmages).where(
                scrimmages.c.author == author, scrimmages.c.state.in_(SCRIMMAGE_OPEN),
                scrimmages.c.kind != ScrimmageKind.NEW_VERSION)).scalar_one()

    def tests_of(self, bot: str) -> list[ScrimmageRow]:
        """The A/B tests of version ``bot`` (name@version), newest first."""
        with self.engine.connect() as c:
            return [ScrimmageRow(**r) for r in c.execute(
                select(scrimmages).where(scrimmages.c.bot == bot,
                                         scrimmages.c.kind.in_(tuple(AB_KINDS)))
                .order_by(scrimmages.c.id.desc())).mappings()]

    def seasons(self) -> set[str]:
        """The seasons that play scrimmages (shown to their two authors only)."""
        with self.engine.connect() as c:
            return set(c.execute(select(scrimmages.c.season).where(
                scrimmages.c.season.is_not(None))).scalars())

    def change(self, scrimmage_id: int, *, expect=None, **values) -> bool:
        """Change a scrimmage; with ``expect`` (states), only from one of them."""
        q = update(scrimmages).where(scrimmages.c.id == scrimmage_id)
        if expect is not None:
            q = q.where(scrimmages.c.state.in_(tuple(expect)))
        with self.engine.begin() as c:
            return bool(c.execute(q.values(**values, updated_at=time.time())).rowcount)
