"""The submission service's JSON API under ``/api/v1``: authors' uploads, their versions'
states and logs, scrimmages, and the organiser's side. Every write needs a token in the
``Authorization: Bearer`` header (never in a URL); the rules are the domain's
(``scheduler/service/``), ``web.service`` reads the request."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, Body, Header, Path, Query, Request
from fastapi.responses import PlainTextResponse, Response
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from scheduler.errors import Refusal, Refused
from scheduler.service import sessions, uploads
from scheduler.service.config import ServiceConfig
from scheduler.service.limits import within_registrations
from scheduler.service.terms import MAX_PAGE
from scheduler.service.versions import archive, build_log, my_versions, version_view
from scheduler.service.visibility import Viewer, owned, seat_log
from scheduler.states import SCRIMMAGE_OPEN, AuthorStatus, ScrimmageKind
from web import results, scrimmages, service

router = APIRouter(prefix="/api/v1", tags=["service"])
NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
VERSION = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$"
#: every refusal is JSON {"detail": why} (a plain-text route's too)
REFUSALS: dict[int | str, dict[str, Any]] = {
    c: {"description": "refused: why", "content": {"application/json": {"schema": {
        "type": "object", "required": ["detail"],
        "properties": {"detail": {"type": "string"}}}}}}
    for c in (400, 401, 403, 404, 413, 429)}


class AbTest(BaseModel):
    """Where an A/B test stands: is ``bot`` stronger than ``opponent``?"""
    id: int | None = None
    state: str | None = None
    verdict: str = Field(description="queued (not started), running, stronger, not "
                         "stronger, stopped at the pair limit; failed or cancelled when it "
                         "ended without one")
    text: str = Field(description="the verdict in a line, with the Elo edge and its interval")
    opponent: str | None = None
    kind: str | None = None
    elo0: float | None = None
    elo1: float | None = None
    alpha: float | None = None
    beta: float | None = None
    max_pairs: int | None = None
    pairs: int = 0
    wins: int | None = None
    draws: int | None = None
    losses: int | None = None
    llr: float | None = None
    lower: float | None = None
    upper: float | None = None
    elo: float | None = Field(None, description="the new version's edge in pair W/D/L Elo")
    elo_low: float | None = None
    elo_high: float | None = None


class VersionView(BaseModel):
    name: str
    version: str
    author: str | None
    content_hash: str
    language: str | None
    size: int
    files: int
    submitted_at: float
    state: str
    reason: str | None
    updated_at: float
    withdrawn: bool
    has_build_log: bool
    seasons: list[str]
    ahead: dict[str, int] | None = Field(None, description="while queued: the versions "
                                         "submitted before it not yet ready or refused, by "
                                         "state (queued, building, checking)")
    ab: list[AbTest] = Field([], description="its A/B tests, newest first: against its "
                             "predecessor (kind new-version) and those its author asked for")


class MatchLine(BaseModel):
    """A match as the author of one of its bots reads it; its team's result once it is played
    and its record no longer sealed."""
    id: str
    season: str
    status: str
    finished_at: float | None
    seats: list[str]
    team: int
    opponents: list[str]
    sealed: bool
    score: float | None = Field(description="1 a win, 0.5 a draw, 0 a loss")
    outcome: str | None = Field(description="win, draw or loss")
    net: int | None = Field(description="its team's net level gain")
    points: int | None = Field(description="points its team took attacking")
    forfeit: bool | None
    match_url: str
    replay_url: str | None
    record_url: str | None


class MatchLines(BaseModel):
    total: int
    limit: int
    offset: int
    counts: dict[str, int]
    sealed: int = Field(0, description="its played matches still sealed: their results are "
                        "in no count or standing until their mirrors are played")
    rows: list[MatchLine]


class SeasonResult(BaseModel):
    season: str
    format: str | None
    variant: str | None
    bots: list[str] = Field(description="the names the version plays under there")
    rank: int | None = Field(description="among the season's bots; null before it played")
    of: int
    rating: float | None = Field(description="a ladder's openskill mu, else Bradley-Terry")
    low: float | None
    high: float | None
    mu: float | None
    sigma: float | None
    pairs: int
    wins: float
    draws: float
    losses: float
    points: float = Field(description="matches won, and half the drawn")
    net_levels: int
    retired: bool
    matches: MatchLines


class LadderPlace(BaseModel):
    season: str
    status: str = Field(description="playing, in placement, waiting to join, or why a ready "
                        "version is not playing (retired by a newer version of its bot, over "
                        "its author's cap)")


class VersionResults(BaseModel):
    version: str
    seasons: list[SeasonResult]
    ladders: list[LadderPlace] = []


class ScrimmageAsk(BaseModel):
    bot: str = Field(max_length=200, description="your ready version, name@version")
    opponent: str = Field(max_length=200, description="a ready version, name@version")
    pairs: int = Field(1, ge=1, le=64, description="duplicate pairs to play (not with sprt)")
    sprt: bool = Field(False, description="an A/B test instead: pairs until a sequential "
                       "test decides whether bot is stronger than opponent (another of your "
                       "versions, or a house bot), within the service's pair limit")


class ScrimmageView(BaseModel):
    id: int
    author: str
    bot: str
    opponent: str
    opponent_author: str | None
    pairs: int
    variant: str
    state: str
    reason: str | None
    created_at: float
    updated_at: float
    season: str | None
    matches: dict[str, int]
    pairs_scored: int
    points: float | None
    mean_diff: float | None
    match_ids: list[str]
    results: list[MatchLine] = []
    kind: str = ScrimmageKind.SCRIMMAGE
    ab: AbTest | None = None


class Registration(BaseModel):
    name: str = Field(max_length=64, description="the author name asked for")


def _store(request: Request):
    return request.app.state.store


def _config(request: Request) -> ServiceConfig:
    return request.app.state.service


def _address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def author(request: Request, authorization: str | None = Header(None)) -> Viewer:
    """The author of the bearer token; API writes take no cookie (no cross-site writes)."""
    if service.bearer(authorization) is None:
        raise Refused(Refusal.UNAUTHENTICATED, "send your token as 'Authorization: Bearer TOKEN'")
    return service.required(service.token_checked(request)
                            or sessions.viewer_of(_store(request), service.bearer(authorization),
                                                  None))


def organiser(request: Request, authorization: str | None = Header(None)) -> Viewer:
    who = author(request, authorization)
    if not who.organiser:
        raise Refused(Refusal.FORBIDDEN, "the organiser's only")
    return who


@router.get("/me", responses=REFUSALS)
def me(request: Request, authorization: str | None = Header(None)) -> dict[str, Any]:
    """Who the token is, and the limits."""
    who = author(request, authorization)
    lim = _config(request).limits
    return {"name": who.name, "role": who.role, "limits": asdict(lim)}


@router.post("/bots", status_code=202, response_model=VersionView, responses=REFUSALS,
             openapi_extra={"requestBody": {"required": True, "content": {
                 "application/octet-stream": {"schema": {"type": "string",
                                                         "format": "binary"}}}}})
async def upload(request: Request, authorization: str | None = Header(None)):
    """Upload a bot's folder as an archive (.tar, .tar.gz or .zip; the body as it is): the
    version its ``bot.toml`` names, yours, queued for a worker's build and smoke match."""
    data = await service.read_body(request, _config(request).limits.archive_bytes)

    def take() -> dict:  # (on a worker thread: the unpacking never holds the event loop)
        return uploads.take_upload(_store(request), _config(request),
                                   author(request, authorization), data,
                                   address=_address(request), told=service.refused_upload)
    return await run_in_threadpool(take)


@router.get("/bots", response_model=list[VersionView], responses=REFUSALS)
def versions(request: Request, authorization: str | None = Header(None)):
    """Your versions, newest first (the organiser: every version)."""
    return my_versions(_store(request), author(request, authorization))


@router.get("/bots/{name}/{version}", response_model=VersionView, responses=REFUSALS)
def version(request: Request, name: str = Path(pattern=NAME),
            version: str = Path(pattern=VERSION), authorization: str | None = Header(None)):
    """A version's state (queued, building, checking, ready, refused) and why."""
    return version_view(_store(request), author(request, authorization), name, version)


@router.get("/bots/{name}/{version}/results", response_model=VersionResults,
            responses=REFUSALS)
def version_results(request: Request, name: str = Path(pattern=NAME),
                    version: str = Path(pattern=VERSION),
                    season: str | None = Query(None, max_length=200),
                    limit: int = Query(results.PAGE, ge=1, le=MAX_PAGE),
                    offset: int = Query(0, ge=0, le=10**9),
                    authorization: str | None = Header(None)):
    """Your version's rating, rank and pairs in each season it plays in, and its matches
    there, newest first (``limit`` of them from ``offset``; ``season``: that season only)."""
    return results.version_results(request, author(request, authorization), name, version,
                                   season=season, limit=limit, offset=offset)


class RoleMean(BaseModel):
    n: int = Field(description="the deals it is over")
    mean: float | None
    low: float | None = Field(description="95% interval (Student's t); null under 2 deals")
    high: float | None


class RoleGroupView(BaseModel):
    role: str = Field(description="all, attackers, defenders, dealer, dealer_partner, trump, "
                      "partner or opponent")
    key: str | None = Field(description="the trump kind (a suit's name or no-trump), the "
                            "partner's or the opponent's bot name; null for the others")
    matches: int
    deals: int
    wins: int = Field(description="deals its team gained more levels in than the other")
    even: int = Field(description="deals with equal gains")
    win_rate: float | None
    win_low: float | None = Field(description="Wilson 95% interval of the win rate")
    win_high: float | None
    net: RoleMean = Field(description="net levels per deal: its team's gain minus the other's")
    taken: RoleMean = Field(description="card points taken as attackers (attacker_total)")
    conceded: RoleMean = Field(description="card points conceded as defenders")


class BotRolesView(BaseModel):
    bot: str = Field(description="the name the version plays under there")
    matches: int
    deals: int
    skipped: int = Field(description="matches where it sat on both teams: not counted")
    groups: list[RoleGroupView]


class SeasonRolesView(BaseModel):
    season: str
    format: str | None
    variant: str | None
    played: int = Field(description="its matches there with a result")
    newest: int = Field(description="the most of its newest matches read")
    read: int
    sealed: int = Field(description="of those read, sealed until their mirrors are played: "
                        "not counted")
    cut: bool = Field(description="older matches left unread: the groups are over its "
                      "newest `read` matches")
    over: str = Field(description="what the groups are over, in words: \"over its newest "
                      "500 played matches\" when cut")
    bots: list[BotRolesView]


class VersionRoles(BaseModel):
    version: str
    newest: int
    seasons: list[SeasonRolesView]


@router.get("/bots/{name}/{version}/roles", response_model=VersionRoles, responses=REFUSALS)
def version_role_stats(request: Request, name: str = Path(pattern=NAME),
                       version: str = Path(pattern=VERSION),
                       season: str | None = Query(None, max_length=200),
                       authorization: str | None = Header(None)):
    """Your version's deals by role in each season it plays in (``season``: that season
    only): as attackers, as defenders, as the dealer and the dealer's partner, by trump kind,
    partner and opponent; win rate, net levels and card points with 95% intervals, over its
    newest played matches, the sealed ones left out."""
    from scheduler.service.roles import version_roles
    return version_roles(_store(request), author(request, authorization), name, version,
                         season=season)


@router.get("/bots/{name}/{version}/build-log", response_class=PlainTextResponse,
            responses=REFUSALS)
def version_build_log(request: Request, name: str = Path(pattern=NAME),
                      version: str = Path(pattern=VERSION),
                      authorization: str | None = Header(None)):
    """The build's log (its end, bounded), as the worker kept it."""
    return PlainTextResponse(build_log(_store(request), author(request, authorization),
                                       name, version))


@router.get("/bots/{name}/{version}/archive", responses=REFUSALS)
def version_archive(request: Request, name: str = Path(pattern=NAME),
                    version: str = Path(pattern=VERSION),
                    authorization: str | None = Header(None)):
    """The version's canonical tar, as stored."""
    data = archive(_store(request), author(request, authorization), name, version)
    return Response(data, media_type="application/x-tar", headers={
        "Content-Disposition": f'attachment; filename="{name}-{version}.tar"'})


@router.get("/matches/{match_id}/logs/{seat}", response_class=PlainTextResponse,
            responses=REFUSALS)
def match_seat_log(request: Request, match_id: str = Path(max_length=120),
                   seat: int = Path(ge=0, le=3), authorization: str | None = Header(None)):
    """The log a seat's bot wrote in a match: its author's only."""
    return PlainTextResponse(seat_log(_store(request), author(request, authorization),
                                      match_id, seat))


@router.get("/matches/{match_id}/record", responses={**REFUSALS, 200: {
    "description": "the match's record (what `arena replay FILE` reads)",
    "content": {"application/json": {"schema": {"type": "object"}}}}})
def match_record(request: Request, match_id: str = Path(max_length=120),
                 authorization: str | None = Header(None)):
    """The record of a match your version played, once it may be served (a duplicate pair's
    first record stays sealed until its mirror is played); the other seats' logs left out."""
    return results.download(_store(request), author(request, authorization), match_id)


@router.post("/scrimmages", status_code=202, response_model=ScrimmageView, responses=REFUSALS)
def scrimmage_ask(request: Request, ask: ScrimmageAsk,
                  authorization: str | None = Header(None)):
    """Ask for ``pairs`` duplicate pairs of your ready version against another, or (``sprt``)
    for an A/B test of it against another of your versions or a house bot."""
    return scrimmages.request(_store(request), _config(request),
                              author(request, authorization), ask.bot, ask.opponent,
                              ask.pairs, address=_address(request), sprt=ask.sprt)


@router.get("/scrimmages", response_model=list[ScrimmageView], responses=REFUSALS)
def scrimmage_list(request: Request, authorization: str | None = Header(None)):
    """The scrimmages you asked for or your bots were asked to play, newest first."""
    return scrimmages.listing(_store(request), author(request, authorization))


@router.get("/scrimmages/{sid}", response_model=ScrimmageView, responses=REFUSALS)
def scrimmage_one(request: Request, sid: int = Path(ge=1, le=2**31),
                  authorization: str | None = Header(None)):
    return scrimmages.view(_store(request), author(request, authorization), sid)


@router.post("/scrimmages/{sid}/cancel", response_model=ScrimmageView, responses=REFUSALS)
def scrimmage_cancel(request: Request, sid: int = Path(ge=1, le=2**31),
                     authorization: str | None = Header(None)):
    return scrimmages.cancel(_store(request), author(request, authorization), sid,
                             address=_address(request))


@router.post("/register", status_code=202, responses=REFUSALS)
def register(request: Request, reg: Registration = Body(...)) -> dict[str, str]:
    """Self-registration, when the organiser turned it on: a token that works once the
    organiser approves (``arena authors approve NAME``)."""
    from scheduler.registry.owners import add_author
    from scheduler.registry.archives import RegistryError
    config, store = _config(request), _store(request)
    if not config.self_registration:
        raise Refused(Refusal.FORBIDDEN, "self-registration is off: ask the organiser for a token")
    within_registrations(store, _address(request))
    try:
        token = add_author(store, reg.name, status=AuthorStatus.PENDING)
    except RegistryError as e:
        raise Refused(Refusal.MALFORMED, f"name: {e}") from None
    store.audit.write("register", actor=reg.name, address=_address(request))
    return {"name": reg.name, "token": token, "status": "pending: the organiser approves it"}


# -- the organiser's side -----------------------------------------------------------------
@router.get("/admin/authors", responses=REFUSALS)
def admin_authors(request: Request,
                  authorization: str | None = Header(None)) -> list[dict[str, Any]]:
    organiser(request, authorization)
    return [asdict(a) for a in _store(request).authors.all()]


@router.post("/admin/authors/{name}/disable", responses=REFUSALS)
def admin_disable(request: Request, name: str = Path(pattern=NAME),
                  authorization: str | None = Header(None)) -> dict[str, str]:
    """The author can no longer log in nor write; their versions stay."""
    who = organiser(request, authorization)
    if not _store(request).authors.change(name, status=AuthorStatus.DISABLED):
        raise Refused(Refusal.NOT_FOUND, f"no author {name!r}")
    _store(request).audit.write("disable", actor=who.name, subject=name,
                                address=_address(request))
    return {"name": name, "status": AuthorStatus.DISABLED}


@router.post("/admin/bots/{name}/{version}/withdraw", responses=REFUSALS)
def admin_withdraw(request: Request, name: str = Path(pattern=NAME),
                   version: str = Path(pattern=VERSION),
                   authorization: str | None = Header(None)) -> dict[str, str]:
    """Out of every future season (those that pinned it keep it)."""
    who = organiser(request, authorization)
    row = owned(_store(request), who, name, version)
    _store(request).versions.withdraw(row.id, f"withdrawn by {who.name}")
    _store(request).audit.write("withdraw", actor=who.name, subject=f"{name}@{version}",
                                address=_address(request))
    return {"version": f"{name}@{version}", "status": "withdrawn"}


@router.get("/admin/queue", responses=REFUSALS)
def admin_queue(request: Request,
                authorization: str | None = Header(None)) -> dict[str, Any]:
    """Versions waiting for a worker and scrimmages not over."""
    organiser(request, authorization)
    store = _store(request)
    return {"versions": [asdict(v) for v in store.versions.queue()],
            "scrimmages": [asdict(s) for s in store.scrimmages.of(states=SCRIMMAGE_OPEN)]}


@router.get("/admin/audit", responses=REFUSALS)
def admin_audit(request: Request, authorization: str | None = Header(None)
                ) -> list[dict[str, Any]]:
    organiser(request, authorization)
    return [asdict(e) for e in _store(request).audit.entries(200)]
