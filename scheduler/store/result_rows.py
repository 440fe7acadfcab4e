"""Results: a played match's result, summary, tally columns and record, written once; and the
score of a duplicate pair once both its matches are done.

The match id is the key of everything: a result is inserted once and the first commit wins, so
a redelivered or retried task cannot count a match twice.
"""

from __future__ import annotations

import time

from sqlalchemy import func, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from scheduler.states import AttemptOutcome, MatchStatus
from scheduler.stats.scores import deal_scores, match_tally, pair_result
from scheduler.store.queue import end_attempt
from scheduler.store.rows import (MatchResultRow, MatchRow, PairScoreRow, encoded,
                                  tally_columns)
from scheduler.store.schema import (COUNTED_FIRST, TALLY_COLUMNS, attempts, compress,
                                    decompress, matches, pair_scores, records, results)

#: the result's columns a ``MatchResultRow`` carries beside its match's
RESULT_COLUMNS = (results.c.result_json, results.c.summary_json, results.c.duration_s,
                  results.c.worker, *(results.c[k] for k in TALLY_COLUMNS))


def with_results(*, played_only: bool = False):
    """The select of ``MatchResultRow``s: every match with its result's columns (None before
    one is written), or with ``played_only`` the matches that have a result."""
    joined = (matches.join(results, results.c.match_id == matches.c.id) if played_only else
              matches.outerjoin(results, results.c.match_id == matches.c.id))
    return select(matches, *RESULT_COLUMNS).select_from(joined)


class Results:
    """Writing a played match, scoring its pair, reading its record (``store.results``)."""

    __slots__ = ("engine",)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def finish(self, match_id: str, season: str, result: dict, summary: dict, record: dict,
               duration_s: float, owner: str, note: str | None = None, *,
               tally: dict | None = None) -> bool:
        """Write the result and record once; False when the match was already counted by
        another attempt. ``tally``: the result's tally columns (``rows.tally_columns`` of the
        summary's ``scheduler.stats.scores.match_tally``) as the player counted them; without it
        they are counted here from ``summary``. Idempotent: a write that committed but was not
        acknowledged (the store went away in the commit) is found on the next call and reported
        as written."""
        now = time.time()
        try:
            with self.engine.begin() as c:
                columns = tally if tally is not None else self._tally(c, match_id, summary)
                c.execute(results.insert().values(
                    match_id=match_id, season=season, result_json=encoded(result),
                    summary_json=encoded(summary), duration_s=duration_s, worker=owner,
                    written_at=now, **columns))
                c.execute(records.insert().values(match_id=match_id, data=compress(record)))
                c.execute(update(matches).where(matches.c.id == match_id)
                          .values(status=MatchStatus.DONE, finished_at=now, lease_owner=None,
                                  lease_until=None, error=None))
                end_attempt(c, match_id, owner, AttemptOutcome.DONE, note, now)
                # a lapsed holder's result can land while a taker still plays: the taker's
                # attempt is over too (its own hand-back or give-back finds the match done and
                # is no longer its to close; it stayed ``running`` for ever)
                c.execute(update(attempts)
                          .where(attempts.c.match_id == match_id, attempts.c.worker != owner,
                                 attempts.c.outcome == AttemptOutcome.RUNNING)
                          .values(outcome=AttemptOutcome.COUNTED, ended_at=now,
                                  reason=COUNTED_FIRST))
        except IntegrityError:
            with self.engine.begin() as c:
                writer = c.execute(select(results.c.worker)
                                   .where(results.c.match_id == match_id)).scalar()
                if writer == owner:  # our own earlier commit
                    return True
                end_attempt(c, match_id, owner, AttemptOutcome.COUNTED, COUNTED_FIRST, now)
            return False
        try:  # after the commit: the pair's other match may have committed at the same time
            self.score_pair(match_id)
        except IntegrityError:  # that match's writer scored the pair first
            pass
        except Exception:  # noqa: BLE001  the result is written; its pair's finer score is
            pass           # best effort and never fails the match
        return True

    @staticmethod
    def _tally(c, match_id: str, summary: dict) -> dict:
        """The tally columns of ``summary`` under the match's variant; all null if the summary
        cannot say."""
        from referee.match.matchfile import MatchSummary
        row = c.execute(select(matches).where(matches.c.id == match_id)).mappings().first()
        try:
            return tally_columns(match_tally(MatchSummary.from_dict(summary),
                                             MatchRow(**row).variant))
        except Exception:  # a summary or spec this code cannot read: counted from the summary
            return dict.fromkeys(TALLY_COLUMNS)

    def score_pair(self, match_id: str) -> PairScoreRow | None:
        """Write the ``pair_scores`` row of ``match_id``'s duplicate pair once both of its
        matches are done (the row, else None; a pair already scored is left as it is)."""
        with self.engine.begin() as c:
            row = c.execute(select(matches.c.season, matches.c.cluster)
                            .where(matches.c.id == match_id)).first()
            if row is None:
                return None
            done = [MatchResultRow(**r) for r in c.execute(
                with_results(played_only=True)
                .where(matches.c.season == row.season, matches.c.cluster == row.cluster)
                .order_by(matches.c.ordinal)).mappings()]
            if len(done) != 2:
                return None  # not a duplicate pair, or not both played
            if c.execute(select(pair_scores.c.cluster).where(
                    pair_scores.c.season == row.season,
                    pair_scores.c.cluster == row.cluster)).first() is not None:
                return None
            teams = [d.seats[:2] for d in done]
            summaries = [d.summary for d in done]
            # a result written before these scores (a migrated store): from its summary
            scores = [d.deal_scores if d.deal_scores is not None else
                      deal_scores(d.summary, d.variant) for d in done]
            got = pair_result(teams[0][0], teams, summaries, scores)
            out = PairScoreRow(season=row.season, cluster=row.cluster, bot_a=got["a"],
                               bot_b=got["b"], deals=len(got["diffs"]), score_a=got["score"],
                               diff_a=got["diff"], deal_diffs_json=encoded(got["diffs"]),
                               written_at=time.time())
            c.execute(pair_scores.insert().values(**out))
        return out

    def pair_scores(self, season: str, *, since: float | None = None) -> list[PairScoreRow]:
        """The season's scored duplicate pairs, by cluster (``since``: only those written
        then or later)."""
        q = select(pair_scores).where(pair_scores.c.season == season)
        if since is not None:
            q = q.where(pair_scores.c.written_at >= since)
        with self.engine.connect() as c:
            return [PairScoreRow(**r) for r in c.execute(
                q.order_by(pair_scores.c.cluster)).mappings()]

    def record(self, match_id: str) -> dict | None:
        """The match's record (``MatchFile.to_dict()``), None before it is written."""
        with self.engine.connect() as c:
            data = c.execute(select(records.c.data).where(records.c.match_id == match_id)
                             ).scalar()
        return decompress(data) if data is not None else None

    def count(self, season: str) -> int:
        with self.engine.connect() as c:
            return c.execute(select(func.count()).select_from(results)
                             .where(results.c.season == season)).scalar_one()
