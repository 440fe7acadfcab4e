"""What a ladder keeps in the store (``scheduler/ladder.py`` says what it means): the versions
that joined it (and retired), the matches it adds as it runs, and each version's rating after
every pair."""

from __future__ import annotations

import time

from sqlalchemy import func, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from scheduler.states import MATCH_OPEN, MatchStatus
from scheduler.store.plain_rows import LadderEntryRow, RatingRow
from scheduler.store.rows import NewBot, PlannedMatch
from scheduler.store.schema import bots, ladder_entries, ladder_ratings, matches


class Ladder:
    """A ladder's entries, its added matches and its rating history (``store.ladder``)."""

    __slots__ = ("engine",)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def join(self, season: str, bot_rows: list[NewBot], authors: dict[str, str | None]
             ) -> None:
        """Versions join: their ``bots`` rows and their entries, in one transaction."""
        now = time.time()
        with self.engine.begin() as c:
            c.execute(bots.insert(), [dict(b.columns(), season=season) for b in bot_rows])
            c.execute(ladder_entries.insert(), [
                {"season": season, "bot": b.name, "author": authors.get(b.name),
                 "joined_at": now} for b in bot_rows])

    def add_entries(self, season: str, names: list[str]) -> None:
        """Entries of bots already in the season (those its file names), the organiser's."""
        now = time.time()
        with self.engine.begin() as c:
            c.execute(ladder_entries.insert(), [{"season": season, "bot": n, "author": None,
                                                 "joined_at": now} for n in names])

    def retire(self, season: str, bot: str) -> None:
        with self.engine.begin() as c:
            c.execute(update(ladder_entries).where(
                ladder_entries.c.season == season, ladder_entries.c.bot == bot,
                ladder_entries.c.retired_at.is_(None)).values(retired_at=time.time()))

    def rejoin(self, season: str, bot: str) -> None:
        """A retired entry plays again (its older version is the one to play once more)."""
        with self.engine.begin() as c:
            c.execute(update(ladder_entries).where(
                ladder_entries.c.season == season, ladder_entries.c.bot == bot)
                .values(retired_at=None))

    def entries(self, season: str) -> list[LadderEntryRow]:
        with self.engine.connect() as c:
            return [LadderEntryRow(**r) for r in c.execute(select(ladder_entries).where(
                ladder_entries.c.season == season).order_by(ladder_entries.c.joined_at,
                                                            ladder_entries.c.bot)).mappings()]

    def add_matches(self, season: str, plans: list[PlannedMatch]) -> None:
        """Matches (``plan_rows``) added to a running season, pending."""
        with self.engine.begin() as c:
            c.execute(matches.insert(), [dict(p.columns(), season=season,
                                              status=MatchStatus.PENDING, attempts=0)
                                         for p in plans])

    def next_ordinal(self, season: str) -> int:
        with self.engine.connect() as c:
            got = c.execute(select(func.max(matches.c.ordinal)).where(
                matches.c.season == season)).scalar()
        return 0 if got is None else got + 1

    def record_ratings(self, season: str, cluster: str, pair_index: int,
                       ratings: list[tuple[str, float, float, int]]) -> bool:
        """Each (bot, mu, sigma, pairs) after pair ``cluster``, once (False: already)."""
        now = time.time()
        try:
            with self.engine.begin() as c:
                c.execute(ladder_ratings.insert(), [
                    {"season": season, "cluster": cluster, "bot": bot, "pair_index": pair_index,
                     "mu": mu, "sigma": sigma, "pairs": pairs, "at": now}
                    for bot, mu, sigma, pairs in ratings])
        except IntegrityError:
            return False
        return True

    def rating_history(self, season: str) -> list[RatingRow]:
        """Every rating recorded, in the order the pairs were rated."""
        with self.engine.connect() as c:
            return [RatingRow(**r) for r in c.execute(select(ladder_ratings).where(
                ladder_ratings.c.season == season).order_by(ladder_ratings.c.pair_index,
                                                            ladder_ratings.c.bot)).mappings()]

    def in_play(self, season: str) -> int:
        """The ladder's matches not yet over (pending or running)."""
        with self.engine.connect() as c:
            return c.execute(select(func.count()).select_from(matches).where(
                matches.c.season == season, matches.c.status.in_(MATCH_OPEN))
            ).scalar_one()
