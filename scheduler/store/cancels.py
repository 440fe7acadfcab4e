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

from scheduler.store.schema import (CANCELLED, LOST, attempts, matches, season_cancels,
                                    seasons)


def is_cancelled(c, season: str) -> bool:
    return c.execute(select(season_cancels.c.season)
                     .where(season_cancels.c.season == season)).first() is not None


def cancel_abandoned(c, ids: list[str], why: str, now: float) -> None:
    """Running matches ``ids``, held by nobody: ``cancelled``, their attempts lost."""
    if not ids:
        return
    c.execute(update(matches).where(matches.c.id.in_(ids), matches.c.status == "running")
              .values(status="cancelled", lease_owner=None, lease_until=None,
                      finished_at=now, error=why))
    c.execute(update(attempts).where(attempts.c.match_id.in_(ids),
                                     attempts.c.outcome == "running")
              .values(outcome="lost", ended_at=now, reason=why))


def abandoned(c, season: str, now: float) -> list[str]:
    """The season's running matches whose lease has run out."""
    return list(c.execute(select(matches.c.id)
                          .where(matches.c.season == season,
                                 matches.c.status == "running",
                                 matches.c.lease_until < now)).scalars())


class Cancels:
    """Cancelling a season, and what is left of it."""

    engine: Engine

    def cancel_season(self, name: str, by: str | None = None) -> dict | None:
        """Cancel season ``name`` in one transaction: its pending matches, and running ones
        whose lease expired, become ``cancelled``; running ones with a live lease finish.
        Returns {"already", "cancelled_at", "by", "pending", "abandoned", "running", "done"}
        (what this call changed; "already": it was cancelled before), None for no season.
        Cancelling again cancels the running matches abandoned since."""
        now = time.time()
        try:
            return self._cancel(name, by, now)
        except IntegrityError:  # cancelled at the same moment by another: it already was
            return self._cancel(name, by, now)

    def _cancel(self, name: str, by: str | None, now: float) -> dict | None:
        with self.engine.begin() as c:
            if c.execute(select(seasons.c.name).where(seasons.c.name == name)).first() is None:
                return None
            prior = c.execute(select(season_cancels).where(season_cancels.c.season == name)
                              ).mappings().first()
            if prior is None:
                c.execute(season_cancels.insert().values(season=name, cancelled_at=now, by=by))
            pending = c.execute(update(matches)
                                .where(matches.c.season == name, matches.c.status == "pending")
                                .values(status="cancelled", finished_at=now,
                                        error=CANCELLED)).rowcount
            gone = abandoned(c, name, now)
            cancel_abandoned(c, gone, f"{CANCELLED} while its lease had run out (no live "
                             "worker held it)", now)
            left = dict(c.execute(select(matches.c.status, func.count())
                                  .where(matches.c.season == name)
                                  .group_by(matches.c.status)).all())
        return {"already": prior is not None,
                "cancelled_at": prior["cancelled_at"] if prior else now,
                "by": prior["by"] if prior else by, "pending": pending,
                "abandoned": len(gone), "running": left.get("running", 0),
                "done": left.get("done", 0)}

    def cancelled(self, season: str) -> dict | None:
        """{"cancelled_at", "by"} when season ``season`` was cancelled, else None."""
        with self.engine.connect() as c:
            row = c.execute(select(season_cancels.c.cancelled_at, season_cancels.c.by)
                            .where(season_cancels.c.season == season)).mappings().first()
        return dict(row) if row else None

    def settle_cancelled(self, season: str) -> int:
        """In a cancelled season, running matches whose lease expired (their worker is gone):
        ``cancelled``. Returns how many; 0 for a season not cancelled."""
        now = time.time()
        with self.engine.begin() as c:
            if not is_cancelled(c, season):
                return 0
            ids = abandoned(c, season, now)
            cancel_abandoned(c, ids, f"{LOST}; {CANCELLED}", now)
        return len(ids)
