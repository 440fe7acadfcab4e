"""Seasons in the store: a season, its secret, its bots and its matches' plan, written in one
transaction when it opens; counted by status; removed whole."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sqlalchemy import func, select, update
from sqlalchemy.engine import Engine

from scheduler.states import MatchStatus
from scheduler.store.plain_rows import SeasonSecret, StatusCounts
from scheduler.store.rows import BotRow, NewBot, PlannedMatch, SeasonRow, encoded
from scheduler.store.schema import (attempts, bots, matches, pair_scores, records,
                                    results, season_cancels, season_secrets, seasons)

if TYPE_CHECKING:
    from scheduler.season_config import SeasonConfig


class Seasons:
    """A season's rows: the season, its secret and its bots (``store.seasons``)."""

    __slots__ = ("engine",)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get(self, name: str) -> SeasonRow | None:
        with self.engine.connect() as c:
            row = c.execute(select(seasons).where(seasons.c.name == name)).mappings().first()
        return SeasonRow(**row) if row else None

    def names(self) -> list[str]:
        with self.engine.connect() as c:
            return list(c.execute(select(seasons.c.name).order_by(seasons.c.created_at))
                        .scalars())

    def create(self, name: str, config: SeasonConfig, config_hash: str, file: str,
               bot_rows: list[NewBot], plans: list[PlannedMatch], secret: str | None = None,
               secret_given: bool = False) -> None:
        """The season (its configuration kept as ``config.to_json()``), its secret, its bots
        and every match (``plan_rows``), in one transaction."""
        now = time.time()
        with self.engine.begin() as c:
            c.execute(seasons.insert().values(name=name, config_json=encoded(config.to_json()),
                                              config_hash=config_hash, file=file,
                                              created_at=now))
            if secret is not None:
                c.execute(season_secrets.insert().values(season=name, secret=secret,
                                                         given=secret_given))
            if bot_rows:
                c.execute(bots.insert(), [dict(b.columns(), season=name) for b in bot_rows])
            if plans:
                c.execute(matches.insert(), [dict(p.columns(), season=name,
                                                  status=MatchStatus.PENDING, attempts=0)
                                             for p in plans])

    def secret(self, name: str) -> SeasonSecret | None:
        """The secret of season ``name``; None for a season stored before secrets."""
        with self.engine.connect() as c:
            row = c.execute(select(season_secrets.c.secret, season_secrets.c.given)
                            .where(season_secrets.c.season == name)).first()
        return SeasonSecret(row.secret, bool(row.given)) if row else None

    def bots(self, season: str) -> list[BotRow]:
        with self.engine.connect() as c:
            return [BotRow(**r) for r in c.execute(select(bots).where(bots.c.season == season)
                                                   .order_by(bots.c.id)).mappings()]

    def mark_checked(self, season: str, name: str, content_hash: str) -> None:
        with self.engine.begin() as c:
            c.execute(update(bots).where(bots.c.season == season, bots.c.name == name)
                      .values(checked_hash=content_hash))

    def counts(self, season: str) -> StatusCounts:
        """The season's matches by status."""
        with self.engine.connect() as c:
            rows = c.execute(select(matches.c.status, func.count())
                             .where(matches.c.season == season)
                             .group_by(matches.c.status)).all()
        return StatusCounts.of(rows)

    def delete(self, name: str) -> None:
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


def plan_rows(season_obj, plans: Iterable) -> list[PlannedMatch]:
    """The matches to store of a season's plans."""
    return [PlannedMatch(p.match_id, p.ordinal, p.pairing, p.cluster, p.mirror, tuple(p.seats),
                         season_obj.match_spec(p).to_dict()) for p in plans]
