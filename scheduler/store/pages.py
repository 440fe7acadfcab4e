"""The reads the dashboard and the command line's listings make: seasons with their counts,
a season's matches (with their results, or only what the standings count), a page of matches
filtered, a match and what keeps its record sealed, the attempts, the pace of the results."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable

from sqlalchemy import and_, case, false, func, or_, select, true
from sqlalchemy.engine import Engine
from sqlalchemy.sql.expression import ColumnElement

from scheduler.states import MatchStatus
from scheduler.store.plain_rows import SealedResult, SealingMatch, SeasonCancel, StatusCounts
from scheduler.store.result_rows import with_results
from scheduler.store.rows import (AttemptRow, FaultRow, MatchPage, MatchResultRow, MatchRow,
                                  ResultPace, SeasonOverview, StandingsRow, deal_seeds,
                                  decoded, encoded)
from scheduler.store.schema import (TALLY_COLUMNS, attempts, matches, results, season_cancels,
                                    seasons)


def _seats_like(bot: str):
    """The matches in which a bot of that name sat (its name's ``%`` and ``_`` taken as they
    are, not as wildcards)."""
    return matches.c.seats_json.contains(encoded(bot), autoescape=True)


def _sealing(row: MatchRow, unfinished) -> list[SealingMatch]:
    """Of ``unfinished`` (the other matches of ``row``'s season not done nor cancelled), those
    on any of its cards (its mirror, the mirror first), as ``Pages.sealed_by`` says them."""
    mine = row.deal_seeds
    out = [SealingMatch(o.id, o.status, o.cluster == row.cluster)
           for o in unfinished if o.id != row.id and (o.cluster == row.cluster
                                                     or mine & o.deal_seeds)]
    return sorted(out, key=lambda o: not o.mirror)


class _Seals:
    """A season's unfinished matches by duplicate cluster and by the seeds of their cards:
    whether a match's record is sealed (``_sealing`` finds any) in a look-up a card, not a
    pass over them all."""

    def __init__(self, unfinished) -> None:
        """``unfinished``: (id, cluster, deal seeds) of each."""
        self.by_cluster: dict[str, set[str]] = {}
        self.by_seed: dict[str, set[str]] = {}
        for mid, cluster, seeds in unfinished:
            self.by_cluster.setdefault(cluster, set()).add(mid)
            for seed in seeds:
                self.by_seed.setdefault(seed, set()).add(mid)

    def __bool__(self) -> bool:
        return bool(self.by_cluster)

    def seal(self, mid: str, cluster: str, seeds) -> bool:
        """Whether another of the unfinished matches is match ``mid``'s mirror (of its
        ``cluster``) or deals its cards (``seeds``)."""
        def other(ids) -> bool:
            return bool(ids) and (len(ids) > 1 or mid not in ids)
        return other(self.by_cluster.get(cluster)) or any(
            other(self.by_seed.get(seed)) for seed in seeds)


class _SeedBook:
    """The deal seeds of a store's matches, each match's read from its spec once: a spec is
    written with its match and never changed while its season lives (a season deleted and made
    again under its name is another: its creation time is in the key). Past ``LIMIT``
    matches it starts afresh."""

    LIMIT = 200_000

    def __init__(self) -> None:
        self.books: dict[tuple[str, float], dict[str, frozenset[str]]] = {}
        self.size = 0
        self.lock = threading.Lock()

    def of(self, c, season: str, ids) -> dict[str, frozenset[str]]:
        """The deal seeds of the matches ``ids`` of ``season``, by id."""
        born = c.execute(select(seasons.c.created_at).where(seasons.c.name == season)
                         ).scalar()
        with self.lock:
            book = dict(self.books.get((season, born), {}))
        missing = [i for i in ids if i not in book]
        got = {}
        for i in range(0, len(missing), 500):
            for mid, spec in c.execute(select(matches.c.id, matches.c.spec_json).where(
                    matches.c.season == season, matches.c.id.in_(missing[i:i + 500]))):
                got[mid] = deal_seeds(decoded(spec))
        if got:
            with self.lock:
                if self.size + len(got) > self.LIMIT:
                    self.books.clear()
                    self.size = 0
                self.books.setdefault((season, born), {}).update(got)
                self.size += len(got)
            book.update(got)
        return book

    def seals(self, c, season: str) -> _Seals:
        """The season's unfinished matches, as ``_Seals``."""
        rows = c.execute(select(matches.c.id, matches.c.cluster).where(
            matches.c.season == season, matches.c.status.in_(UNFINISHED))).all()
        seeds = self.of(c, season, [r.id for r in rows]) if rows else {}
        return _Seals((r.id, r.cluster, seeds[r.id]) for r in rows)


#: the statuses of a match not over yet: named (not "not done"), so that the status index
#: finds the few of them in a season of thousands
UNFINISHED = tuple(s for s in MatchStatus if s not in (MatchStatus.DONE, MatchStatus.CANCELLED))


def _unfinished(c, season: str) -> list[MatchRow]:
    return [MatchRow(**o) for o in c.execute(
        select(matches).where(matches.c.season == season,
                              matches.c.status.in_(UNFINISHED))
        .order_by(matches.c.ordinal)).mappings()]


def _standings_select():
    """The select of ``StandingsRow``s, its columns in the row's order."""
    untallied = or_(results.c.deal_count.is_(None), results.c.deal_scores_json.is_(None))
    columns = {"id": matches.c.id, "cluster": matches.c.cluster, "status": matches.c.status,
               "seats_json": matches.c.seats_json,
               "played": results.c.match_id.isnot(None).label("played"),
               "summary_json": case((untallied, results.c.summary_json),
                                    else_=None).label("summary_json"),
               **{k: results.c[k] for k in TALLY_COLUMNS}}
    return (select(*(columns[f.name] for f in dataclasses.fields(StandingsRow)))
            .select_from(matches.outerjoin(results, results.c.match_id == matches.c.id)))


class Pages:
    """Reading seasons, matches and attempts (``store.pages``)."""

    __slots__ = ("engine", "seed_book")

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        #: the deal seeds of this store's matches, read once each
        self.seed_book = _SeedBook()

    def overview(self) -> list[SeasonOverview]:
        """Every season, oldest first: its row (no secret), its counts by status and its
        cancel (None: not cancelled)."""
        with self.engine.connect() as c:
            rows = list(c.execute(select(seasons).order_by(seasons.c.created_at,
                                                           seasons.c.name)).mappings())
            by_status = c.execute(select(matches.c.season, matches.c.status, func.count())
                                  .group_by(matches.c.season, matches.c.status)).all()
            cancels = {r.season: SeasonCancel(r.cancelled_at, r.by)
                       for r in c.execute(select(season_cancels))}
        counts: dict[str, list] = {}
        for season, status, n in by_status:
            counts.setdefault(season, []).append((status, n))
        return [SeasonOverview(**r, counts=StatusCounts.of(counts.get(r["name"], ())),
                               cancel=cancels.get(r["name"])) for r in rows]

    def matches(self, season: str) -> list[MatchResultRow]:
        """Every match of the season in play order, with its result's columns (None before
        one is written)."""
        with self.engine.connect() as c:
            q = with_results().where(matches.c.season == season).order_by(matches.c.ordinal)
            return [MatchResultRow(**r) for r in c.execute(q).mappings()]

    def standings_rows(self, season: str) -> list[StandingsRow]:
        """What the standings read of every match of the season, in play order: its id,
        cluster, status, seats and result's tally columns; its summary only for a result
        without them (written before them); whether it has a result."""
        q = _standings_select().where(matches.c.season == season).order_by(matches.c.ordinal)
        with self.engine.connect() as c:
            return [StandingsRow(*r) for r in c.execute(q).all()]

    def match(self, match_id: str) -> MatchRow | None:
        with self.engine.connect() as c:
            row = c.execute(select(matches).where(matches.c.id == match_id)).mappings().first()
        return MatchRow(**row) if row else None

    def match_and_result(self, match_id: str) -> MatchResultRow | None:
        """The match with its result's columns (None before one is written)."""
        with self.engine.connect() as c:
            row = c.execute(with_results().where(matches.c.id == match_id)).mappings().first()
        return MatchResultRow(**row) if row else None

    def sealed_by(self, match_id: str) -> list[SealingMatch]:
        """The matches whose play keeps ``match_id``'s record sealed: every other match of its
        season on any of its cards (its duplicate mirror; and, since every pairing meets the
        same deal sets, the other pairings' matches on them) that is not done yet, the mirror
        first; [] when the record may be served. A
        cancelled match is never played, so it seals nothing."""
        with self.engine.connect() as c:
            got = c.execute(select(matches).where(matches.c.id == match_id)).mappings().first()
            if got is None:
                return []
            row = MatchRow(**got)
            return _sealing(row, _unfinished(c, row.season))

    def sealed_among(self, rows) -> set[str]:
        """The ids of ``rows`` (match rows, of any seasons) whose records are sealed
        (``sealed_by``): one read of each season's unfinished matches."""
        by_season: dict[str, list] = {}
        for r in rows:
            by_season.setdefault(r.season, []).append(r)
        out: set[str] = set()
        with self.engine.connect() as c:
            for season, mine in by_season.items():
                seals = self.seed_book.seals(c, season)
                if seals:
                    seeds = self.seed_book.of(c, season, [r.id for r in mine])
                    out.update(r.id for r in mine if seals.seal(r.id, r.cluster, seeds[r.id]))
        return out

    def sealed_in(self, season: str) -> list[SealedResult]:
        """The season's played matches (those with a result) whose records are sealed
        (``sealed_by``), with the bots in their seats. What the served standings leave out
        until the matches on their cards are over; one read of the season's unfinished
        matches and, only when there are some, one of its played ones."""
        with self.engine.connect() as c:
            seals = self.seed_book.seals(c, season)
            if not seals:
                return []
            played = c.execute(select(matches.c.id, matches.c.cluster, matches.c.seats_json)
                               .select_from(matches.join(results,
                                                         results.c.match_id == matches.c.id))
                               .where(matches.c.season == season)).all()
            seeds = self.seed_book.of(c, season, [r.id for r in played])
        return [SealedResult(r.id, tuple(decoded(r.seats_json))) for r in played
                if seals.seal(r.id, r.cluster, seeds[r.id])]

    def seated_page(self, season: str, bots, *, limit: int = 20, offset: int = 0) -> MatchPage:
        """A page of the season's matches in which one of ``bots`` sat that have a result,
        the newest result first; ``total``: how many have one."""
        where = and_(matches.c.season == season, or_(false(), *map(_seats_like, bots)))
        with self.engine.connect() as c:
            total = c.execute(select(func.count()).select_from(
                matches.join(results, results.c.match_id == matches.c.id)).where(where)
            ).scalar_one()
            page = (with_results(played_only=True).where(where)
                    .order_by(results.c.written_at.desc(), matches.c.ordinal.desc())
                    .limit(limit).offset(offset))
            rows = tuple(MatchResultRow(**r) for r in c.execute(page).mappings())
        return MatchPage(total, rows)

    def seated_counts(self, season: str, bots) -> StatusCounts:
        """The season's matches in which one of ``bots`` sat, by status."""
        with self.engine.connect() as c:
            got = c.execute(select(matches.c.status, func.count()).where(
                matches.c.season == season, or_(false(), *map(_seats_like, bots)))
                .group_by(matches.c.status)).all()
        return StatusCounts.of(got)

    def attempt_log(self, season: str, match_id: str | None = None) -> list[AttemptRow]:
        """Every attempt at the season's matches (or one match's), in the order made."""
        q = select(attempts).where(attempts.c.season == season)
        if match_id is not None:
            q = q.where(attempts.c.match_id == match_id)
        with self.engine.connect() as c:
            return [AttemptRow(**r) for r in c.execute(q.order_by(attempts.c.id)).mappings()]

    def result_pace(self, season: str, since: float) -> ResultPace:
        """How many of the season's results were written, the first and the last; how many
        since ``since``, and the first of those."""
        written = results.c.written_at
        with self.engine.connect() as c:
            n, first, last = c.execute(select(func.count(), func.min(written), func.max(written))
                                       .where(results.c.season == season)).one()
            recent, recent_first = c.execute(select(func.count(), func.min(written))
                                             .where(results.c.season == season,
                                                    written >= since)).one()
        return ResultPace(n, first, last, recent, recent_first)

    def match_page(self, *, season: str | None = None, status: str | None = None,
                   bot: str | None = None, seated: list[tuple[str, str]] | None = None,
                   fault: bool | None = None, record_has: Callable[[str], bool] | None = None,
                   limit: int = 50, offset: int = 0, hidden=(),
                   sealed_out: bool = False) -> MatchPage:
        """A page of matches, by season then in play order, filtered: ``bot``, a bot of that
        name sat in it; ``seated`` ([(season, bot)]), it is a match of such a season where
        such a bot sat (none when the list is empty); ``fault``, only the matches with bot
        faults (or a forfeit), ``False`` only those without; ``record_has``, only matches with
        bot faults for which ``record_has(match_id)`` is true (it reads their records);
        ``hidden``: seasons left out (scrimmages, to those not in them); ``sealed_out``: a
        played match whose record is sealed (``sealed_by``) passes neither fault filter, as
        its faults are its result's (it is listed without them)."""
        cond: list[ColumnElement[bool]] = []
        if hidden:
            cond.append(matches.c.season.notin_(tuple(hidden)))
        if season:
            cond.append(matches.c.season == season)
        if status:
            cond.append(matches.c.status == status)
        if bot:
            cond.append(_seats_like(bot))
        if seated is not None:
            either = [and_(matches.c.season == s, _seats_like(b)) for s, b in seated]
            cond.append(or_(*either) if either else false())
        where = and_(True, *cond)
        order = (matches.c.season, matches.c.ordinal)
        with self.engine.connect() as c:
            if fault is None and record_has is None:
                total = c.execute(select(func.count()).select_from(matches).where(where)
                                  ).scalar_one()
                page = with_results().where(where).order_by(*order).limit(limit).offset(offset)
            else:  # the ids that pass, then the rows of the page asked for
                ids = _fault_filtered(c, where, order, fault, record_has,
                                      self.seed_book if sealed_out else None)
                total = len(ids)
                page = with_results().where(matches.c.id.in_(ids[offset:offset + limit])
                                            ).order_by(*order)
            rows = tuple(MatchResultRow(**r) for r in c.execute(page).mappings())
        return MatchPage(total, rows)


def _fault_filtered(c, where, order, fault: bool | None,
                    record_has: Callable[[str], bool] | None,
                    sealed_out: _SeedBook | None = None) -> list[str]:
    """The ids, in order, of the matches ``where`` selects that pass the fault filters, told by
    their results' ``faults`` and ``forfeit_team`` columns (by the summary for a result
    written before them); ``record_has`` is asked of those with faults only. ``sealed_out``
    (the store's seed book): a played match whose record is sealed passes none (one read of
    the unfinished matches of each season met)."""
    told = results.c.faults.isnot(None)
    old = and_(results.c.faults.is_(None), results.c.summary_json.isnot(None))
    flagged = or_(results.c.faults > 0, results.c.forfeit_team.isnot(None))
    maybe = [or_(results.c.faults > 0, old) if record_has is not None else true()]
    if fault is True:
        maybe.append(or_(flagged, old))
    elif fault is False:
        maybe.append(or_(results.c.match_id.is_(None), and_(told, ~flagged), old))
    fault_columns = (matches.c.id, results.c.faults, results.c.forfeit_team,
                     case((old, results.c.summary_json), else_=None).label("summary_json"))
    q = (select(*fault_columns, results.c.match_id.isnot(None).label("played"),
                matches.c.season, matches.c.cluster)
         .select_from(matches.outerjoin(results, results.c.match_id == matches.c.id))
         .where(where, *maybe).order_by(*order))
    passed = []
    for r in c.execute(q).all():
        faults, forfeit = FaultRow(*r[:len(fault_columns)]).bot_faults
        if fault is not None and bool(faults or forfeit is not None) != fault:
            continue
        passed.append((r, faults))
    if sealed_out is not None:
        sealed = _sealed_of(c, [r for r, _ in passed if r.played], sealed_out)
        passed = [(r, faults) for r, faults in passed if r.id not in sealed]
    return [r.id for r, faults in passed
            if record_has is None or (faults and record_has(r.id))]


def _sealed_of(c, played, book: _SeedBook) -> set[str]:
    """The ids of the ``played`` rows (with ``id``, ``season`` and ``cluster``) whose records
    are sealed: one read of each season's unfinished matches, and the seeds read only of the
    seasons that have some."""
    out: set[str] = set()
    for season in {r.season for r in played}:
        seals = book.seals(c, season)
        if seals:
            mine = [r for r in played if r.season == season]
            seeds = book.of(c, season, [r.id for r in mine])
            out.update(r.id for r in mine if seals.seal(r.id, r.cluster, seeds[r.id]))
    return out
