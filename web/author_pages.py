"""The authors' pages: log in with a token (a session cookie: HttpOnly, SameSite=Strict, Secure
behind TLS), their versions with their results and build logs, an upload form, their matches'
seat logs and records, and scrimmages; every form carries the session's CSRF token.
The rules are the domain's (``scheduler/service/``), ``web.service`` reads the request,
``web.results`` says what an author sees of their results."""

from __future__ import annotations

import time
from urllib.parse import urlencode

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from scheduler.errors import Refusal, Refused
from scheduler.ladder import ladder_places
from scheduler.registry.archives import size_text
from scheduler.service import sessions, uploads
from scheduler.service.roles import version_roles
from scheduler.service.sessions import SESSION_S
from scheduler.service.terms import ahead_text
from scheduler.service.versions import build_log, my_versions, version_view
from scheduler.service.visibility import Viewer, seat_log as seat_log_of
from scheduler.states import VersionState
from web import results, scrimmages, service
from web.refusals import SeeOther, headers_of, status_of
from web.service import SESSION_COOKIE, page_viewer

router = APIRouter(include_in_schema=False)
#: the newest matches of each version in each season shown on /me (its page shows more)
ON_ME = 5


class LoginFirst(SeeOther):
    """A page asked for without a session: to ``/login``, which comes back to it."""

    def __init__(self, request: Request) -> None:
        here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        super().__init__(Refusal.UNAUTHENTICATED, "log in first (/login) with the token the "
                         "organiser gave you", "/login?" + urlencode({"next": local_path(here)}))


def local_path(path: object) -> str:
    """``path`` when it is a path of this site (``/me/bots/x/1``), else ``/me``: where a
    login goes next, never to another site (``//host``, ``/\\host``, ``https://``)."""
    if not isinstance(path, str) or not path.startswith("/") or len(path) > 500 or \
            path.startswith("//") or "\\" in path or any(c < " " or c == "\x7f" for c in path):
        return "/me"
    return path


def session_author(request: Request) -> Viewer:
    """The session's author, for a form's write (401 without one)."""
    who = page_viewer(request)
    if who is None:
        raise Refused(Refusal.UNAUTHENTICATED,
                      "log in first (/login) with the token the organiser gave you")
    return who


def session_reader(request: Request) -> Viewer:
    """The session's author, for a page (without one: to /login, and back after)."""
    who = page_viewer(request)
    if who is None:
        raise LoginFirst(request)
    return who


def render_page(request: Request, name: str, code: int = 200, headers=None,
            **context) -> HTMLResponse:
    from web.pages import when
    return request.app.state.templates.TemplateResponse(
        request, name, {"viewer": page_viewer(request), "when": when, "size": size_text,
                        **context}, status_code=code, headers=headers)


async def read_form(request: Request, limit: int) -> dict:
    """The form's fields (an upload's file as bytes), its body bounded by ``limit``."""
    # (the form parser reads the body kept here)
    request._body = await service.read_body(request, limit)
    form = await request.form(max_files=1, max_fields=8)
    out = {}
    for key, value in form.multi_items():
        out[key] = await value.read() if hasattr(value, "read") else value
    return out


def _address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str = Query("/me", max_length=500)):
    return render_page(request, "login.html", next=local_path(next))


def _same_origin(request: Request) -> None:
    """Login CSRF: a browser's form post from another site names that site in ``Origin`` (or
    at least ``Referer``): refused, so that no page elsewhere can log a visitor in as someone
    else. A post naming no origin at all is no browser's cross-site form."""
    from urllib.parse import urlsplit
    said = request.headers.get("origin") or request.headers.get("referer")
    if not said:
        return
    host = urlsplit("//" + request.headers.get("host", "")).hostname or ""
    if said == "null" or (urlsplit(said).hostname or "") != host:  # (a proxy may drop the port)
        raise Refused(Refusal.FORBIDDEN,
                      "login: a form from another site (its Origin is not this service)")


@router.post("/login")
async def login(request: Request):
    store, config = request.app.state.store, request.app.state.service
    _same_origin(request)
    form = await read_form(request, config.limits.body_bytes)
    token = form.get("token")
    if not isinstance(token, str) or not token.strip():
        raise Refused(Refusal.MALFORMED, "token: expected the token the organiser gave you")
    cookie, _ = sessions.login(store, config, token, _address(request))
    out = RedirectResponse(local_path(form.get("next", "/me")), status_code=303)
    out.set_cookie(SESSION_COOKIE, cookie, max_age=int(SESSION_S), httponly=True,
                   samesite="strict", secure=config.secure_cookies, path="/")
    return out


@router.post("/logout")
async def logout(request: Request):
    who = session_author(request)
    form = await read_form(request, request.app.state.service.limits.body_bytes)
    service.check_csrf(who, form.get("csrf"))
    request.app.state.store.sessions.end(sessions.digest(request.cookies[SESSION_COOKIE]))
    request.app.state.store.audit.write("logout", actor=who.name, address=_address(request))
    out = RedirectResponse("/", status_code=303)
    out.delete_cookie(SESSION_COOKIE, path="/")
    return out


@router.get("/me", response_class=HTMLResponse)
def me(request: Request):
    return _me_page(request, session_reader(request))


RUNTIMES_EVERY_S = 60.0
"""How long ``/me`` keeps the runtimes line it read (the workers' heartbeats change rarely)."""
_runtimes_read: dict[str | None, tuple[float, list[str]]] = {}


def runtimes_lines(request: Request) -> list[str]:
    """What a participant's bot is built and played with: each distinct runtimes line of the
    workers' heartbeats (``arena serve --broker``), or this machine's own (it builds and plays
    them itself)."""
    broker = getattr(request.app.state, "broker", None)
    now = time.monotonic()
    got = _runtimes_read.get(broker)
    if got is None or now - got[0] > RUNTIMES_EVERY_S:
        if broker:
            from scheduler.workers import list_workers
            try:
                lines = sorted({w["runtimes"] for w in list_workers(broker) if w["runtimes"]})
            except Exception:  # the broker is away: the line is left out, the page is not
                lines = []
        else:
            from referee.seats.runtimes import summaries
            lines = [summaries()]
        _runtimes_read[broker] = got = (now, lines)
    return got[1]


def _me_page(request: Request, who: Viewer, code: int = 200, headers=None,
             **context) -> HTMLResponse:
    """``/me``; with a form's refusal (``upload_error``, ``scrimmage_error`` and the fields
    ``form`` kept) and its status."""
    store = request.app.state.store
    mine = my_versions(store, who)
    ready_mine = [v for v in mine if v["state"] == VersionState.READY and not v["withdrawn"]
                  and (v["author"] == who.name or who.organiser)]
    rows = store.registry.versions()
    states = {s.version_id: s for s in store.versions.states([r.id for r in rows])}
    opponents = [f"{r.name}@{r.version}" for r in rows
                 if (st := states.get(r.id)) is None
                 or (st.state == VersionState.READY and st.withdrawn_at is None)]
    played = [(v, results.version_results(request, who, v["name"], v["version"], limit=ON_ME))
              for v in mine if v["seasons"]]
    ladders = ladder_places(store, [f"{v['name']}@{v['version']}" for v in ready_mine])
    return render_page(request, "me.html", code, headers, versions=mine, ready=ready_mine,
                   ladders=ladders,
                   played=[(v, r) for v, r in played if r["seasons"]],
                   opponents=opponents, scrims=scrimmages.listing(store, who),
                   limits=request.app.state.service.limits, runtimes=runtimes_lines(request),
                   **{"form": {}, "upload_error": None, "scrimmage_error": None, **context})


@router.post("/me/upload")
async def upload(request: Request):
    """The upload form: its session was checked before its body was read (``BoundedBodies``),
    its CSRF token once read; the archive is unpacked on a worker thread's process, never on
    the event loop."""
    config = request.app.state.service
    who = await run_in_threadpool(session_author, request)
    form = await read_form(request, config.limits.archive_bytes + (64 << 10))
    service.check_csrf(who, form.get("csrf"))
    data = form.get("archive")
    try:
        if not isinstance(data, bytes):
            raise Refused(Refusal.MALFORMED, "archive: expected a file (.tar, .tar.gz or .zip)")
        v = await run_in_threadpool(uploads.take_upload, request.app.state.store, config, who,
                                    data, address=_address(request),
                                    told=service.refused_upload)
    except Refused as e:  # shown on /me, above its form
        return await run_in_threadpool(_me_page, request, who, status_of(e), headers_of(e),
                                       upload_error=e.detail)
    return RedirectResponse(f"/me/bots/{v['name']}/{v['version']}", status_code=303)


@router.get("/me/bots/{name}/{version}", response_class=HTMLResponse)
def version_page(request: Request, name: str = Path(max_length=64),
                 version: str = Path(max_length=64),
                 season: str | None = Query(None, max_length=200),
                 offset: int = Query(0, ge=0, le=10**9)):
    """A version: its state (followed by ``static/version.js`` while it is on its way), its
    results in each season, its build log."""
    who = session_reader(request)
    store = request.app.state.store
    v = version_view(store, who, name, version)
    got = results.version_results(request, who, name, version, season=season, offset=offset)
    return render_page(request, "version.html", v=v, res=got, waiting=ahead_text(v["ahead"]),
                   log=build_log(store, who, name, version),
                   roles={r["season"]: r for r in version_roles(
                       store, who, name, version, season=season)["seasons"]})


@router.get("/me/bots/{name}/{version}/state")
def version_state(request: Request, name: str = Path(max_length=64),
                  version: str = Path(max_length=64)):
    """A version's state as JSON, for its page to follow."""
    v = version_view(request.app.state.store, session_author(request), name, version)
    return JSONResponse({"state": v["state"], "withdrawn": v["withdrawn"],
                         "waiting": ahead_text(v["ahead"])})


@router.get("/me/matches/{match_id}/record")
def match_record(request: Request, match_id: str = Path(max_length=120)):
    """The record of a match one of the author's versions played, to save."""
    return results.download(request.app.state.store, session_reader(request), match_id)


@router.get("/me/matches/{match_id}/logs/{seat}", response_class=PlainTextResponse)
def seat_log(request: Request, match_id: str = Path(max_length=120),
             seat: int = Path(ge=0, le=3)):
    """A seat's log as plain text (never rendered as markup)."""
    who = session_reader(request)
    return PlainTextResponse(seat_log_of(request.app.state.store, who, match_id, seat))


@router.post("/me/scrimmages")
async def scrimmage_ask(request: Request):
    who = session_author(request)
    config = request.app.state.service
    form = await read_form(request, config.limits.body_bytes)
    service.check_csrf(who, form.get("csrf"))
    kept = {k: str(form.get(k, ""))[:200] for k in ("bot", "opponent", "pairs", "sprt")}
    try:
        pairs = kept["pairs"] or "1"
        if not pairs.isdigit() or len(pairs) > 3:
            raise Refused(Refusal.MALFORMED, "pairs: expected a whole number")
        got = scrimmages.request(request.app.state.store, config, who, kept["bot"],
                                 kept["opponent"], int(pairs), address=_address(request),
                                 sprt=kept["sprt"] == "1")
    except Refused as e:  # shown on /me, above its form, the fields as they were
        return _me_page(request, who, status_of(e), headers_of(e), scrimmage_error=e.detail,
                        form=kept)
    return RedirectResponse(f"/me/scrimmages/{got['id']}", status_code=303)


@router.get("/me/scrimmages/{sid}", response_class=HTMLResponse)
def scrimmage_page(request: Request, sid: int = Path(ge=1, le=2**31)):
    who = session_reader(request)
    return render_page(request, "scrimmage.html",
                   s=scrimmages.view(request.app.state.store, who, sid))


@router.post("/me/scrimmages/{sid}/cancel")
async def scrimmage_cancel(request: Request, sid: int = Path(ge=1, le=2**31)):
    who = session_author(request)
    form = await read_form(request, request.app.state.service.limits.body_bytes)
    service.check_csrf(who, form.get("csrf"))
    scrimmages.cancel(request.app.state.store, who, sid, address=_address(request))
    return RedirectResponse(f"/me/scrimmages/{sid}", status_code=303)
