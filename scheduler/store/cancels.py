"""Cancelling a season.

A cancelled season (``season_cancels``) plays nothing more: its pending matches, and running
ones nobody holds (an expired lease), become ``cancelled``; a running match with a live lease
finishes and is counted, or becomes ``cancelled`` if its attempt fails or is lost. No match of a
cancelled season is claimed again.
"""

from __future__ import annotations

import time

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.engine import Engine

from scheduler.states import AttemptOutcome, MatchStatus
from scheduler.store.plain_rows import Cancelling, SeasonCancel
from scheduler.store.schema import (CANCELLED, LOST, attempts, matches, season_cancels,
                                    seasons)


def is_cancelled(c, season: str) -> bool:
    return c.execute(select(season_cancels.c.season)
                     .where(season_cancels.c.season == season)).first() is not None


def cancel_abandoned(c, ids: list[str], why: str, now: float) -> None:
    """Running matches ``ids``, held by nobody: ``cancelled``, their attempts lost."""
    if not ids:
        return
    c.execute(update(matches).where(matches.c.id.in_(ids), matches.c.status == MatchStatus.RUNNING)
              .values(status=MatchStatus.CANCELLED, lease_owner=None, lease_until=None,
                      finished_at=now, error=why))
    c.execute(update(attempts).where(attempts.c.match_id.in_(ids),
                                     attempts.c.outcome == AttemptOutcome.RUNNING)
              .values(outcome=AttemptOutcome.LOST, ended_at=now, reason=why))


def abandoned(c, season: str, now: float) -> list[str]:
    """The season's running matches whose lease has run out."""
    return list(c.execute(select(matches.c.id)
                          .where(matches.c.season == season,
                                 matches.c.status == MatchStatus.RUNNING,
                                 matches.c.lease_until < now)).scalars())


class Cancels:
    """Cancelling a season, and what is left of it (``store.cancels``)."""

    __slots__ = ("engine",)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def cancel(self, name: str, by: str | None = None) -> Cancelling | None:
        """Cancel season ``name`` in one transaction: its pending matches, and running ones
        whose lease expired, become ``cancelled``; running ones with a live lease finish.
        Returns what this call changed, None for no season.
        Cancelling again cancels the running matches abandoned since."""
        now = time.time()
        try:
            return self._cancel(name, by, now)
        except IntegrityError:  # cancelled at the same moment by another: it already was
            return self._cancel(name, by, now)

    def _cancel(self, name: str, by: str | None, now: float) -> Cancelling | None:
        with self.engine.begin() as c:
            if c.execute(select(seasons.c.name).where(seasons.c.name == name)).first() is None:
                return None
            prior = c.execute(select(season_cancels).where(season_cancels.c.season == name)
                              ).first()
            if prior is None:
                c.execute(season_cancels.insert().values(season=name, cancelled_at=now, by=by))
            pending = c.execute(update(matches)
                                .where(matches.c.season == name,
                                       matches.c.status == MatchStatus.PENDING)
                                .values(status=MatchStatus.CANCELLED, finished_at=now,
                                        error=CANCELLED)).rowcount
            gone = abandoned(c, name, now)
            cancel_abandoned(c, gone, f"{CANCELLED} while its lease had run out (no live "
                             "worker held it)", now)
            left: dict[str, int] = dict(c.execute(select(matches.c.status, func.count())
                                  .where(matches.c.season == name)
                                  .group_by(matches.c.status)).all())
        return Cancelling(already=prior is not None,
                          cancelled_at=prior.cancelled_at if prior else now,
                          by=prior.by if prior else by, pending=pending,
                          abandoned=len(gone), running=left.get(MatchStatus.RUNNING, 0),
                          done=left.get(MatchStatus.DONE, 0))

    def cancelled(self, season: str) -> SeasonCancel | None:
        """When season ``season`` was cancelled and by whom, else None."""
        with self.engine.connect() as c:
            row = c.execute(select(season_cancels.c.cancelled_at, season_cancels.c.by)
                            .where(season_cancels.c.season == season)).first()
        return SeasonCancel(row.cancelled_at, row.by) if row else None

    def settle(self, season: str) -> int:
        """In a cancelled season, running matches whose lease expired (their worker is gone):
        ``cancelled``. Returns how many; 0 for a season not cancelled."""
        now = time.time()
        with self.engine.begin() as c:
            if not is_cancelled(c, season):
                return 0
            ids = abandoned(c, season, now)
            cancel_abandoned(c, ids, f"{LOST}; {CANCELLED}", now)
        return len(ids)
