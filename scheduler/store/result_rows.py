"""Results: a played match's result, summary, tally columns and record, written once; and the
score of a duplicate pair once both its matches are done, as its scorer hands it in.

The match id is the key of everything: a result is inserted once and the first commit wins, so
a redelivered or retried task cannot count a match twice.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from sqlalchemy import func, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from scheduler.states import AttemptOutcome, MatchStatus
from scheduler.store.queue import end_attempt
from scheduler.store.rows import (MatchResultRow, PairScoreRow, encoded, played_columns,
                                  tally_columns)
from scheduler.store.schema import (COUNTED_FIRST, TALLY_COLUMNS, attempts, compress,
                                    decompress, matches, pair_scores, records, results)

if TYPE_CHECKING:  # (types only: the store computes no score, plays no match)
    from referee.match.matchfile import MatchFile
    from scheduler.stats.scores import MatchTally, PairScore

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
    """Writing a played match and its pair's score, reading its record (``store.results``)."""

    __slots__ = ("engine",)

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def finish(self, match_id: str, season: str, match: MatchFile, duration_s: float,
               owner: str, note: str | None = None, *, tally: MatchTally | None) -> bool:
        """Write the played ``match`` once: its result, summary and record (a ``MatchFile``
        with its result; ``scheduler.store.rows`` encodes them); False when the match was
        already counted by another attempt. ``tally``: what the standings count of it, as the
        player counted it from the summary (``scheduler.stats.scores.match_tally``; None: the
        summary cannot say, its columns stay null). The store scores nothing: the pair's score
        is the caller's, after the write (``scheduler.stats.scores.score_pair``). Idempotent:
        a write that committed but was not acknowledged (the store went away in the commit)
        is found on the next call and reported as written."""
        now = time.time()
        columns, data = played_columns(match), compress(match.to_dict())
        try:
            with self.engine.begin() as c:
                c.execute(results.insert().values(
                    match_id=match_id, season=season, duration_s=duration_s, worker=owner,
                    written_at=now, **columns, **tally_columns(tally)))
                c.execute(records.insert().values(match_id=match_id, data=data))
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
        return True

    def pair_to_score(self, match_id: str) -> tuple[MatchResultRow, MatchResultRow] | None:
        """The two played matches of ``match_id``'s duplicate pair, by ordinal, while the pair
        has no score; None otherwise (not a duplicate pair, not both played, or scored)."""
        with self.engine.connect() as c:
            row = c.execute(select(matches.c.season, matches.c.cluster)
                            .where(matches.c.id == match_id)).first()
            if row is None or c.execute(select(pair_scores.c.cluster).where(
                    pair_scores.c.season == row.season,
                    pair_scores.c.cluster == row.cluster)).first() is not None:
                return None
            done = [MatchResultRow(**r) for r in c.execute(
                with_results(played_only=True)
                .where(matches.c.season == row.season, matches.c.cluster == row.cluster)
                .order_by(matches.c.ordinal)).mappings()]
        return (done[0], done[1]) if len(done) == 2 else None

    def keep_pair_score(self, pair: PairScore) -> PairScoreRow | None:
        """Write a duplicate pair's score once (``scheduler.stats.scores.score_pair``): its
        row, else None (the writer of the pair's other match scored it first)."""
        out = PairScoreRow(season=pair.season, cluster=pair.cluster, bot_a=pair.bot_a,
                           bot_b=pair.bot_b, deals=len(pair.deal_diffs), score_a=pair.score_a,
                           diff_a=pair.diff_a, deal_diffs_json=encoded(list(pair.deal_diffs)),
                           written_at=time.time())
        try:
            with self.engine.begin() as c:
                c.execute(pair_scores.insert().values(**out.columns()))
        except IntegrityError:
            return None
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

    def record(self, match_id: str) -> MatchFile | None:
        """The match's record, None before it is written; a stored record that does not read
        back raises the match file's ``RecordError`` naming the match."""
        with self.engine.connect() as c:
            data = c.execute(select(records.c.data).where(records.c.match_id == match_id)
                             ).scalar()
        if data is None:
            return None
        from referee.match.matchfile import MatchFile
        return MatchFile.from_dict(decompress(data), match_id)

    def count(self, season: str) -> int:
        with self.engine.connect() as c:
            return c.execute(select(func.count()).select_from(results)
                             .where(results.c.season == season)).scalar_one()
