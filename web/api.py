"""The dashboard's JSON API under ``/api``, and the reads the pages share with it."""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict
from enum import Enum
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

import scheduler.stats.standings  # noqa: F401 - loaded with the app, not on the first request
from scheduler.errors import Refusal, Refused
from scheduler.reports import (bot_versions, sealed_reason, season_rows, season_standings,
                               season_status)
from scheduler.states import MatchStatus
from scheduler.store import STATUSES
from scheduler.store import SeasonRow as StoredSeason
from web.refusals import STATUS

if TYPE_CHECKING:
    from referee.match.matchfile import MatchFile

MAX_LIMIT = 500
#: a ladder's pace is its matches played over the last hour (seconds)
HOUR_S = 3600.0
#: bytes of a faulting bot's log shown with its faults
LOG_TAIL = 4000

# members made from the store's statuses, which the checker cannot read
Status = Enum("Status", {s: s for s in STATUSES}, type=str)  # type: ignore[misc]


class SeasonRow(BaseModel):
    name: str
    variant: str | None
    format: str | None
    duplicate: bool | None
    bots: list[str]
    retired: int = 0
    matches: int
    pending: int
    running: int
    done: int
    failed: int
    cancelled: int
    created_at: float
    status: str
    cancelled_at: float | None = None
    cancelled_by: str | None = None


class Progress(BaseModel):
    season: str
    total: int
    done: int
    running: int
    pending: int
    failed: int
    cancelled: int
    status: str
    rate_per_min: float | None
    eta_s: float | None
    at: float
    ladder: bool = False
    per_hour: float | None = None


class MatchRow(BaseModel):
    id: str
    season: str
    ordinal: int
    pairing: str
    mirror: bool
    seats: list[str]
    status: str
    attempts: int
    net: list[int] | None = None
    score: list[float] | None = None
    faults: int | None = None
    forfeit_team: int | None = None
    duration_s: float | None = None
    error: str | None = None
    sealed: bool = False


class MatchPage(BaseModel):
    total: int
    limit: int
    offset: int
    matches: list[MatchRow]


class SealedBy(BaseModel):
    id: str
    status: str
    mirror: bool


class MatchDetail(BaseModel):
    match: MatchRow
    sealed: bool
    sealed_reason: str | None = None
    sealed_by: list[SealedBy] = []
    deals: list[dict[str, Any]] = []
    faults: list[dict[str, Any]] = []
    logs: dict[str, str] = {}
    timings: list[dict[str, Any]] = []
    versions: list[str] = []
    attempts: list[dict[str, Any]] = []


class BotVersion(BaseModel):
    name: str
    version: str
    content_hash: str
    author: str | None
    protocol: str
    language: str | None
    size: int
    files: int
    submitted_at: float
    seasons: list[str]
    ratings: dict[str, float | None] = {}


class Detail(BaseModel):
    detail: str


# -- reads shared by the pages and the API -----------------------------------------------

def season_or_404(store, name: str) -> StoredSeason:
    row = store.seasons.get(name)
    if row is None:
        raise Refused(Refusal.NOT_FOUND, f"no season {name!r}")
    return row


def viewer(request: Request):
    """Who asks, on the submission service (a bearer token, else a session cookie); None on
    the organiser's own dashboard (``arena dashboard``), which shows everything."""
    if getattr(request.app.state, "service", None) is None:
        return None
    from scheduler.service.sessions import viewer_of
    from web.service import SESSION_COOKIE, bearer, token_checked
    return token_checked(request) or viewer_of(request.app.state.store,
                                               bearer(request.headers.get("authorization")),
                                               request.cookies.get(SESSION_COOKIE))


def hidden(request: Request) -> set[str]:
    """The seasons the asker may not see: on the service, the scrimmages not theirs."""
    if getattr(request.app.state, "service", None) is None:
        return set()
    from scheduler.service.visibility import hidden_seasons
    return hidden_seasons(request.app.state.store, viewer(request))


def visible_season(request: Request, name: str) -> None:
    if name in hidden(request):
        raise Refused(Refusal.NOT_FOUND, f"no season {name!r}")


def visible_rows(request: Request) -> list[dict]:
    secret = hidden(request)
    return [r for r in season_rows(request.app.state.store) if r["name"] not in secret]


def standings(request: Request, name: str) -> dict:
    """The season's standings as ``arena standings NAME --json`` prints them, less its sealed
    matches (``store.pages.sealed_in``): each is counted as not yet played, and, while there are
    some, ``matches_sealed`` says only how many; kept until a match of the season changes
    status."""
    return _standings_entry(request, name)[1]


def sealed_in(request: Request, name: str) -> dict[str, tuple[str, ...]]:
    """The season's sealed matches the served standings leave out (``standings``), by id:
    their seats."""
    return _standings_entry(request, name)[2]


def _standings_entry(request: Request, name: str) -> tuple:
    store = request.app.state.store
    visible_season(request, name)
    row = season_or_404(store, name)
    key = (name, tuple(sorted(store.seasons.counts(name).items())), store.results.count(name))
    cache = request.app.state.standings_cache
    if cache.get(name, (None,))[0] != key:
        rows = store.pages.standings_rows(name)
        sealed = {s.id: s.seats  # (after the rows: a match played between is in it)
                  for s in store.pages.sealed_in(name)}
        st = season_standings(row, rows, samples=1000, sealed=sealed)
        counted = st.to_dict() | ({"matches_sealed": len(sealed)} if sealed else {})
        cache[name] = (key, {**counted, "versions": bot_versions(store, name)}, sealed)
    return cache[name]


def progress(store, name: str) -> dict:
    """Counts by status, the rate of the last results and the time left at that rate. A
    ladder never ends: its matches played an hour (over the last hour, or since it opened)
    instead, and no time left."""
    row = season_or_404(store, name)
    c = store.seasons.counts(name)
    now = time.time()
    ladder = row.config.is_ladder
    status = season_status(c, store.cancels.cancelled(name), ladder)
    if ladder:
        assert row.created_at is not None  # set on every stored season
        window = min(HOUR_S, now - row.created_at)
        recent = store.pages.result_pace(name, since=now - window).recent
        return {"season": name, "ladder": True, "total": c.total, **c.to_dict(),
                "status": status, "rate_per_min": None, "eta_s": None, "at": now,
                "per_hour": round(recent / window * HOUR_S, 1) if window > 0 else None}
    pace = store.pages.result_pace(name, since=now - 120)
    rate = None
    if pace.recent >= 2 and now > pace.recent_first:
        rate = pace.recent / (now - pace.recent_first) * 60
    elif pace.count >= 2 and pace.last > pace.first:
        rate = (pace.count - 1) / (pace.last - pace.first) * 60
    left = c[MatchStatus.PENDING] + c[MatchStatus.RUNNING]
    eta = left / rate * 60 if rate and left else (0.0 if not left else None)
    return {"season": name, "ladder": False, "total": c.total, **c.to_dict(), "status": status,
            "rate_per_min": round(rate, 2) if rate else None,
            "eta_s": round(eta, 1) if eta is not None else None, "at": now}


#: a match line's numbers from its result
RESULT_FIELDS = ("net", "score", "faults", "forfeit_team", "duration_s")


def _match_row(r, sealed: bool = False) -> dict:
    """A match's line (a ``MatchResultRow``), its result's numbers once it has one (None
    before: a pending or running match; None while ``sealed``: its result tells of cards
    not yet played by its mirror)."""
    out = {"id": r.id, "season": r.season, "ordinal": r.ordinal, "pairing": r.pairing,
           "mirror": bool(r.mirror), "seats": list(r.seats), "status": r.status,
           "attempts": r.attempts, **dict.fromkeys(RESULT_FIELDS),
           "error": r.error.splitlines()[0][:300] if r.error else None, "sealed": sealed}
    if r.played and not sealed:
        s = r.summary
        out.update(net=list(s.net), score=list(s.score), faults=s.faults,
                   forfeit_team=s.forfeit_team, duration_s=r.duration_s)
    return out


def _seated(store, version: str, season: str | None) -> list[tuple[str, str]]:
    """(season, bot) of every bot pinned to ``version`` (``name@version``): in each season
    that pinned it, under the name the season gave it."""
    seasons = [season] if season else store.seasons.names()
    return [(s, bot) for s in seasons for bot, v in bot_versions(store, s).items()
            if v["ref"] == version]


def _has_fault_kind(store, match_id: str, kind: str) -> bool:
    """Whether the match's stored record has a fault of ``kind`` (a record that cannot be
    read has none)."""
    from referee.match.matchfile import RecordError
    try:
        record = store.results.record(match_id)
    except RecordError:
        return False
    return record is not None and any(f.kind == kind for f in record.faults)


def match_list(store, *, season: str | None = None, bot: str | None = None,
               version: str | None = None, status: str | None = None,
               fault: bool | None = None, fault_kind: str | None = None, limit: int = 50,
               offset: int = 0, hidden_seasons=()) -> dict:
    """A page of matches, newest season first, in play order, filtered. ``fault``: only the
    matches with bot faults (or a forfeit); ``False``: only those without; ``fault_kind``:
    only those whose record has a fault of that kind (a sealed match passes none of these:
    its faults are its result's); ``version``: only those a bot pinned to that
    ``name@version`` played."""
    page = store.pages.match_page(
        season=season, status=status, bot=bot,
        seated=_seated(store, version, season) if version else None, fault=fault,
        record_has=None if fault_kind is None else (
            lambda match_id: _has_fault_kind(store, match_id, fault_kind)),
        limit=limit, offset=offset, hidden=hidden_seasons, sealed_out=True)
    sealed = store.pages.sealed_among([r for r in page.rows if r.played])
    return {"total": page.total, "limit": limit, "offset": offset,
            "matches": [_match_row(r, r.id in sealed) for r in page.rows]}


def _timings(match: MatchFile) -> list[dict]:
    by_seat: dict[int, list[float]] = {}
    for seat, ms in match.extra.get("timings") or []:
        by_seat.setdefault(seat, []).append(ms)
    seats = match.seats
    return [{"seat": s, "bot": seats[s] if s < len(seats) else None, "decisions": len(v),
             "median_ms": round(statistics.median(v), 3), "max_ms": round(max(v), 3),
             "total_ms": round(sum(v), 1)} for s, v in sorted(by_seat.items())]


def match_detail(store, match_id: str, *, hidden_seasons=(), log_seats=None) -> dict:
    """A match: its row and, once its record may be served, its deals, faults (with the
    faulting bots' log tails: of the seats ``log_seats`` only, where given), decision timings
    and bot versions. A sealed record serves none of that: only who it waits for."""
    r = store.pages.match_and_result(match_id)
    if r is None or r.season in hidden_seasons:
        raise Refused(Refusal.NOT_FOUND, f"no match {match_id!r}")
    row = _match_row(r)
    sealed = store.pages.sealed_by(match_id) if r.played else []
    if sealed:
        row.update(dict.fromkeys(RESULT_FIELDS))
        return {"match": row, "sealed": True, "sealed_reason": sealed_reason(sealed),
                "sealed_by": [asdict(s) for s in sealed]}
    out = {"match": row, "sealed": False,
           "attempts": [{k: getattr(a, k) for k in ("attempt", "worker", "started_at", "ended_at",
                                          "outcome", "reason")}
                        for a in store.pages.attempt_log(r.season, match_id)]}
    if r.played:
        out["deals"] = [d.to_dict() for d in r.summary.deals]
    match = store.results.record(match_id) if r.played else None  # unreadable: an error
    if match is not None:
        out["faults"] = [f.to_dict() if log_seats is None or f.seat in log_seats
                         else {**f.to_dict(), "log_tail": None}  # a bot's output: its author's
                         for f in match.faults]
        logs = match.extra.get("bot_logs") or {}
        out["logs"] = {str(s): logs[str(s)][-LOG_TAIL:]
                       for s in sorted({f.seat for f in match.faults}) if logs.get(str(s))
                       and (log_seats is None or s in log_seats)}
        out["timings"] = _timings(match)
        out["versions"] = list(match.bots or [])
    return out


def detail_for(request: Request, match_id: str) -> dict:
    """``match_detail`` as the asker may see it: on the service, no scrimmage not theirs and
    the log tails of their own bots' seats only."""
    store = request.app.state.store
    if getattr(request.app.state, "service", None) is None:
        return match_detail(store, match_id)
    from scheduler.service.visibility import own_seats
    who = viewer(request)
    secret = hidden(request)
    try:
        seats = own_seats(store, who, match_id)
    except Refused:
        seats = set()
    return match_detail(store, match_id, hidden_seasons=secret, log_seats=seats)


def bot_list(request: Request) -> list[dict]:
    """Every registry version with the seasons that pin it and its rating in each (the
    season's standings: under the name the season gave it; None before it has a result)."""
    store = request.app.state.store
    keep = ("name", "version", "content_hash", "author", "protocol", "language", "size",
            "files", "submitted_at")
    out = []
    secret = hidden(request)
    for v in store.registry.versions():
        seasons = [s for s in store.registry.pinning_seasons(v.content_hash) if s not in secret]
        ratings = {}
        for season in seasons:
            st = standings(request, season)
            pinned = [bot for bot, p in st["versions"].items() if p["hash"] == v.content_hash]
            ratings[season] = next((round(b["rating"], 1) for b in st["bots"]
                                    if b["name"] in pinned and b["matches"]), None)
        out.append({**{k: getattr(v, k) for k in keep}, "seasons": seasons, "ratings": ratings})
    return out


# -- the routes ------------------------------------------------------------------------

router = APIRouter(prefix="/api", tags=["api"])
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": Detail}}
BAD: dict[int | str, dict[str, Any]] = {400: {"model": Detail}}


@router.get("/seasons", response_model=list[SeasonRow])
def api_seasons(request: Request):
    """Every season: counts by status and its state."""
    return visible_rows(request)


@router.get("/seasons/{name}", responses=NOT_FOUND)
def api_standings(request: Request, name: str) -> dict[str, Any]:
    """The season's standings, as ``arena standings NAME --json``."""
    return standings(request, name)


@router.get("/seasons/{name}/progress", response_model=Progress, responses=NOT_FOUND)
def api_progress(request: Request, name: str):
    """Done, running, pending, failed; the rate of the last results and the time left (a
    ladder's: its matches played an hour, no time left)."""
    visible_season(request, name)
    return progress(request.app.state.store, name)


@router.get("/seasons/{name}/ladder", responses=NOT_FOUND)
def api_ladder(request: Request, name: str) -> dict[str, Any]:
    """A ladder's versions (openskill rating, interval, pairs, last played, joined, retired)
    and every version's rating after each pair; 404 for a season that is not a ladder."""
    return ladder(request, name)


def ladder(request: Request, name: str) -> dict[str, Any]:
    from scheduler.ladder import ladder_history, ladder_table
    visible_season(request, name)
    row = season_or_404(request.app.state.store, name)
    if not row.config.is_ladder:
        raise Refused(Refusal.NOT_FOUND, f"season {name!r} is not a ladder")
    store = request.app.state.store
    return {"season": name, "versions": ladder_table(store, name),
            "history": ladder_history(store, name)}


#: a registry version as ``name@version`` (``scheduler.registry.owners``' rules), in ASCII
#: classes only: the schema's and the server's regex engines read ``\s`` differently
VERSION = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}@[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$"
FAULT_KIND = r"^[a-z_]{1,32}$"


@router.get("/matches", response_model=MatchPage, responses=BAD)
def api_matches(request: Request, season: str | None = None, bot: str | None = None,
                version: str | None = Query(None, pattern=VERSION),
                status: Status | None = None, fault: bool | None = None,
                fault_kind: str | None = Query(None, pattern=FAULT_KIND),
                limit: int = Query(50, ge=1, le=MAX_LIMIT), offset: int = Query(0, ge=0, le=10**9)):
    """Matches, filtered by season, bot, bot version (``name@version``), status, bot faults
    and a fault's kind (timeout, illegal, garbage, ...); a page of ``limit``."""
    return match_list(request.app.state.store, season=season, bot=bot, version=version,
                      status=status.value if status else None, fault=fault,
                      fault_kind=fault_kind, limit=limit, offset=offset,
                      hidden_seasons=hidden(request))


@router.get("/matches/{match_id}", response_model=MatchDetail,
            responses={**NOT_FOUND, 403: {"model": MatchDetail}})
def api_match(request: Request, match_id: str):
    """A match's deals, faults, log tails, timings and versions; 403 while sealed."""
    got = detail_for(request, match_id)
    if got["sealed"]:
        return JSONResponse(MatchDetail(**got).model_dump(),
                            status_code=STATUS[Refusal.FORBIDDEN])
    return got


@router.get("/bots", response_model=list[BotVersion])
def api_bots(request: Request):
    """The registry's bot versions, oldest first, with the seasons that pin each and its
    rating in each."""
    return bot_list(request)
