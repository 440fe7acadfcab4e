"""The lease queue: who plays which match, and what happens to an attempt that ends without a
result.

A match moves ``pending`` -> ``running`` (a lease: owner and expiry, renewed while it plays) ->
``done`` (or ``failed`` after ``max_attempts`` attempts that produced no record). A running match
whose lease expired may be claimed again: that is how a season survives a killed worker. An
attempt that ended for the infrastructure's sake (the referee process failed, its worker was
lost, the store did not take the result) charges no bot: the match is played again on the same
cards, and after ``max_attempts`` it is set aside as ``failed`` with the reason. Every claim is
a row of ``attempts``.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

from sqlalchemy import exists, func, select, update
from sqlalchemy.engine import Engine

from scheduler.states import MATCH_OPEN, AttemptOutcome, MatchStatus
from scheduler.store.cancels import cancel_abandoned, is_cancelled
from scheduler.store.rows import MatchRow
from scheduler.store.schema import (CANCELLED, DEFAULT_LEASE_S, LOST, MAX_ATTEMPTS, attempts,
                                    matches, season_cancels)


def end_attempt(c, match_id: str, owner: str, outcome: str, reason: str | None, now: float,
                *, if_open: bool = False) -> None:
    """Close ``owner``'s latest attempt at ``match_id`` (with ``if_open``, only if nothing
    closed it before: a taker's ``lost`` is never rewritten by the loser)."""
    latest = (select(func.max(attempts.c.id))
              .where(attempts.c.match_id == match_id, attempts.c.worker == owner)
              .scalar_subquery())
    q = update(attempts).where(attempts.c.id == latest)
    if if_open:
        q = q.where(attempts.c.outcome == AttemptOutcome.RUNNING)
    c.execute(q.values(outcome=outcome, ended_at=now, reason=reason))


def held(match_id: str, owner: str):
    """The condition of a write that only the lease's holder may make: checked by the write
    itself, so a taker that claimed the match since it was read is never undone."""
    return ((matches.c.id == match_id) & (matches.c.status == MatchStatus.RUNNING)
            & (matches.c.lease_owner == owner))


class LeaseQueue:
    """Claiming, renewing and giving back matches; what to enqueue (``store.queue``)."""

    __slots__ = ("engine",)
    #: whether a season is cancelled, looked up on the class (so that it can be replaced)
    _is_cancelled = staticmethod(is_cancelled)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def claim(self, match_id: str, owner: str, lease_s: float = DEFAULT_LEASE_S, *,
              max_attempts: int = MAX_ATTEMPTS, take_from: str | None = None) -> MatchRow | None:
        """Take the match if it is pending or its lease expired (or it is leased to
        ``take_from``, a worker known to be gone); returns its row, else None. Taking over a
        lost attempt past ``max_attempts`` sets the match aside as ``failed`` instead. A match
        of a cancelled season is never taken: a lost one of them becomes ``cancelled``."""
        now = time.time()
        lost = (matches.c.status == MatchStatus.RUNNING) & (matches.c.lease_until < now)
        if take_from is not None:
            lost = lost | ((matches.c.status == MatchStatus.RUNNING)
                           & (matches.c.lease_owner == take_from))
        live = ~exists().where(season_cancels.c.season == matches.c.season)
        why = f"lost: its worker process {take_from} is gone" if take_from else LOST
        with self.engine.begin() as c:
            got = c.execute(
                update(matches)
                .where(matches.c.id == match_id, (matches.c.status == MatchStatus.PENDING) | lost,
                       live)
                .values(status=MatchStatus.RUNNING, attempts=matches.c.attempts + 1,
                        lease_owner=owner, lease_until=now + lease_s, started_at=now))
            if got.rowcount != 1:
                season = c.execute(select(matches.c.season).where(matches.c.id == match_id,
                                                                  lost)).scalar()
                if season is not None and self._is_cancelled(c, season):
                    cancel_abandoned(c, [match_id], f"{why}; {CANCELLED}", now)
                return None
            row = MatchRow(**c.execute(select(matches).where(matches.c.id == match_id))
                           .mappings().one())
            took_over = c.execute(update(attempts)
                                  .where(attempts.c.match_id == match_id,
                                         attempts.c.outcome == AttemptOutcome.RUNNING)
                                  .values(outcome=AttemptOutcome.LOST, ended_at=now,
                                          reason=why)).rowcount
            if took_over and row.attempts > max_attempts:  # lost once too often
                c.execute(update(matches).where(matches.c.id == match_id)
                          .values(status=MatchStatus.FAILED, attempts=row.attempts - 1,
                                  lease_owner=None, lease_until=None,
                                  error=f"set aside after {max_attempts} attempts; the last "
                                        f"one {why}"))
                return None
            c.execute(attempts.insert().values(match_id=match_id, season=row.season,
                                               attempt=row.attempts, worker=owner,
                                               started_at=now, outcome=AttemptOutcome.RUNNING))
        return row

    def renew(self, match_id: str, owner: str, lease_s: float = DEFAULT_LEASE_S) -> bool:
        with self.engine.begin() as c:
            got = c.execute(update(matches)
                            .where(matches.c.id == match_id, matches.c.lease_owner == owner,
                                   matches.c.status == MatchStatus.RUNNING)
                            .values(lease_until=time.time() + lease_s))
        return got.rowcount == 1

    def give_back(self, match_id: str, owner: str, error: str,
                  max_attempts: int = MAX_ATTEMPTS) -> str:
        """A failed attempt (no record; charged to no bot): pending again, or ``failed`` (set
        aside) after ``max_attempts``, or ``cancelled`` in a cancelled season. Returns the
        match's status. A match no longer ``owner``'s (its lease ran out and another took it,
        or another attempt finished it) is left as it is."""
        now = time.time()
        with self.engine.begin() as c:
            row = c.execute(select(matches.c.attempts, matches.c.season)
                            .where(matches.c.id == match_id)).first()
            if row is None:
                return "missing"
            if self._is_cancelled(c, row.season):
                status, error_text = MatchStatus.CANCELLED, f"{CANCELLED}; its last attempt: "
                values = dict(finished_at=now)
            else:
                status = MatchStatus.FAILED if row.attempts >= max_attempts else MatchStatus.PENDING
                error_text = (f"set aside after {row.attempts} attempts; the last: "
                              if status == MatchStatus.FAILED else "")
                values = {}
            got = c.execute(update(matches).where(held(match_id, owner))
                            .values(status=status, lease_owner=None, lease_until=None,
                                    error=error_text + error[-4000:], **values)).rowcount
            if got != 1:  # not ours any more
                end_attempt(c, match_id, owner, AttemptOutcome.RETRY, error[-4000:], now,
                            if_open=True)
                return c.execute(select(matches.c.status)
                                 .where(matches.c.id == match_id)).scalar() or "missing"
            outcome = {MatchStatus.FAILED: AttemptOutcome.FAILED,
                       MatchStatus.CANCELLED: AttemptOutcome.CANCELLED}.get(
                status, AttemptOutcome.RETRY)
            end_attempt(c, match_id, owner, outcome, error[-4000:], now)
        return status

    def hand_back(self, match_id: str, owner: str, reason: str) -> str:
        """``owner``'s running match back to pending, uncharged (its attempt ``interrupted``,
        not counted), marked enqueued now (its message goes back to the queue with it); or
        ``cancelled`` in a cancelled season. Returns the match's status. A match no longer
        ``owner``'s (its lease ran out and another took it: that attempt stays ``lost`` and
        charged) is left as it is."""
        now = time.time()
        with self.engine.begin() as c:
            season = c.execute(select(matches.c.season)
                               .where(matches.c.id == match_id)).scalar()
            if season is None:
                return "missing"
            status = MatchStatus.CANCELLED if self._is_cancelled(c, season) else MatchStatus.PENDING
            got = c.execute(update(matches).where(held(match_id, owner))
                            .values(status=status, lease_owner=None, lease_until=None,
                                    attempts=matches.c.attempts - 1, enqueued_at=now,
                                    finished_at=now if status == MatchStatus.CANCELLED else None)
                            ).rowcount
            if got != 1:
                return c.execute(select(matches.c.status)
                                 .where(matches.c.id == match_id)).scalar() or "missing"
            end_attempt(c, match_id, owner, AttemptOutcome.INTERRUPTED,
                        f"{reason}; not counted as an attempt", now)
        return status

    def release_owned(self, season: str, alive: Callable[[int], bool]) -> int:
        """Running matches of this host whose owner process is gone: pending again
        (``cancelled`` in a cancelled season)."""
        host = socket.gethostname()
        freed = 0
        with self.engine.begin() as c:
            status = MatchStatus.CANCELLED if self._is_cancelled(c, season) else MatchStatus.PENDING
            rows = c.execute(select(matches.c.id, matches.c.lease_owner)
                             .where(matches.c.season == season,
                                    matches.c.status == MatchStatus.RUNNING)).all()
            for mid, owner in rows:
                h, _, pid = (owner or "").rpartition(":")
                if h == host and pid.isdigit() and not alive(int(pid)):
                    got = c.execute(update(matches).where(held(mid, owner))
                                    .values(status=status, lease_owner=None,
                                            lease_until=None,
                                            attempts=matches.c.attempts - 1)).rowcount
                    if got != 1:  # taken meanwhile: that attempt stays the taker's ``lost``
                        continue
                    end_attempt(c, mid, owner, AttemptOutcome.INTERRUPTED,
                                "its local run was stopped; not counted as an attempt",
                                time.time())
                    freed += 1
        return freed

    def due(self, season: str, resend_after_s: float, limit: int | None = None, *,
            lost_after_s: float | None = None) -> list[str]:
        """Matches to (re-)send: pending and not enqueued within ``resend_after_s``, or
        running with an expired lease and not enqueued within ``lost_after_s`` (default
        ``resend_after_s``). Marks them enqueued now."""
        now = time.time()
        lost_after_s = resend_after_s if lost_after_s is None else lost_after_s
        with self.engine.begin() as c:
            q = (select(matches.c.id)
                 .where(matches.c.season == season,
                        ((matches.c.status == MatchStatus.PENDING)
                         & (matches.c.enqueued_at.is_(None)
                            | (matches.c.enqueued_at < now - resend_after_s)))
                        | ((matches.c.status == MatchStatus.RUNNING) & (matches.c.lease_until < now)
                           & (matches.c.enqueued_at < now - lost_after_s)))
                 .order_by(matches.c.ordinal))
            if limit is not None:
                q = q.limit(limit)
            ids = list(c.execute(q).scalars())
            if ids:
                c.execute(update(matches).where(matches.c.id.in_(ids)).values(enqueued_at=now))
        return ids

    def unmark(self, ids: list[str]) -> None:
        """Forget that ``ids`` were enqueued (their messages never reached the broker)."""
        if ids:
            with self.engine.begin() as c:
                c.execute(update(matches).where(matches.c.id.in_(ids)).values(enqueued_at=None))

    def queued(self, season: str, resend_after_s: float) -> int:
        """Pending matches enqueued within ``resend_after_s`` (believed to be in the queue)."""
        since = time.time() - resend_after_s
        with self.engine.connect() as c:
            return c.execute(select(func.count()).select_from(matches)
                             .where(matches.c.season == season,
                                    matches.c.status == MatchStatus.PENDING,
                                    matches.c.enqueued_at >= since)).scalar_one()

    def pending_ids(self, season: str) -> list[str]:
        with self.engine.connect() as c:
            return list(c.execute(select(matches.c.id)
                                  .where(matches.c.season == season,
                                         matches.c.status.in_(MATCH_OPEN))
                                  .order_by(matches.c.ordinal)).scalars())

    def retry_failed(self, season: str) -> int:
        """Failed matches back to pending with fresh attempts (a new run tries them again)."""
        with self.engine.begin() as c:
            got = c.execute(update(matches).where(matches.c.season == season,
                                                  matches.c.status == MatchStatus.FAILED)
                            .values(status=MatchStatus.PENDING, attempts=0, enqueued_at=None))
        return got.rowcount
