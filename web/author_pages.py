"""The authors' pages: log in with a token (a session cookie: HttpOnly, SameSite=Strict, Secure
behind TLS), their versions and build logs, an upload form, their matches' seat logs, and
scrimmages; every form carries the session's CSRF token. ``web.service`` holds the rules."""

from __future__ import annotations

from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse

from web import scrimmages, service
from web.service import SESSION_COOKIE, SESSION_S, Refused, Viewer, page_viewer

router = APIRouter(include_in_schema=False)


def _author(request: Request) -> Viewer:
    who = page_viewer(request)
    if who is None:
        raise Refused(401, "log in first (/login) with the token the organiser gave you")
    return who


def _render(request: Request, name: str, code: int = 200, **context) -> HTMLResponse:
    from web.pages import when
    return request.app.state.templates.TemplateResponse(
        request, name, {"viewer": page_viewer(request), "when": when, **context},
        status_code=code)


async def _form(request: Request, limit: int) -> dict:
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
def login_page(request: Request):
    return _render(request, "login.html")


@router.post("/login")
async def login(request: Request):
    store, config = request.app.state.store, request.app.state.service
    form = await _form(request, config.limits.body_bytes)
    token = form.get("token")
    if not isinstance(token, str) or not token.strip():
        raise Refused(400, "token: expected the token the organiser gave you")
    cookie, _ = service.login(store, config, token, _address(request))
    out = RedirectResponse("/me", status_code=303)
    out.set_cookie(SESSION_COOKIE, cookie, max_age=int(SESSION_S), httponly=True,
                   samesite="strict", secure=config.secure_cookies, path="/")
    return out


@router.post("/logout")
async def logout(request: Request):
    who = _author(request)
    form = await _form(request, request.app.state.service.limits.body_bytes)
    service.check_csrf(who, form.get("csrf"))
    request.app.state.store.end_session(service.digest(request.cookies[SESSION_COOKIE]))
    request.app.state.store.audit("logout", actor=who.name, address=_address(request))
    out = RedirectResponse("/", status_code=303)
    out.delete_cookie(SESSION_COOKIE, path="/")
    return out


@router.get("/me", response_class=HTMLResponse)
def me(request: Request):
    who = _author(request)
    store = request.app.state.store
    mine = service.my_versions(store, who)
    ready_mine = [v for v in mine if v["state"] == "ready" and not v["withdrawn"]
                  and (v["author"] == who.name or who.organiser)]
    rows = store.bot_versions()
    states = store.version_states([r.id for r in rows])
    opponents = [f"{r.name}@{r.version}" for r in rows
                 if (st := states.get(r.id)) is None
                 or (st["state"] == "ready" and st["withdrawn_at"] is None)]
    return _render(request, "me.html", versions=mine, ready=ready_mine, opponents=opponents,
                   scrims=scrimmages.listing(store, who),
                   limits=request.app.state.service.limits)


@router.post("/me/upload")
async def upload(request: Request):
    who = _author(request)
    config = request.app.state.service
    form = await _form(request, config.limits.archive_bytes + (64 << 10))
    service.check_csrf(who, form.get("csrf"))
    data = form.get("archive")
    if not isinstance(data, bytes):
        raise Refused(400, "archive: expected a file (.tar, .tar.gz or .zip)")
    v = service.take_upload(request.app.state.store, config, who, data,
                            address=_address(request))
    return RedirectResponse(f"/me/bots/{v['name']}/{v['version']}", status_code=303)


@router.get("/me/bots/{name}/{version}", response_class=HTMLResponse)
def version_page(request: Request, name: str = Path(max_length=64),
                 version: str = Path(max_length=64)):
    from web.api import match_list
    who = _author(request)
    store = request.app.state.store
    v = service.version_view(store, who, name, version)
    played = match_list(store, version=f"{name}@{version}", limit=100) if v["seasons"] else \
        {"matches": [], "total": 0}
    return _render(request, "version.html", v=v, played=played,
                   log=service.build_log(store, who, name, version))


@router.get("/me/matches/{match_id}/logs/{seat}", response_class=PlainTextResponse)
def seat_log(request: Request, match_id: str = Path(max_length=120),
             seat: int = Path(ge=0, le=3)):
    """A seat's log as plain text (never rendered as markup)."""
    who = _author(request)
    return PlainTextResponse(service.seat_log(request.app.state.store, who, match_id, seat))


@router.post("/me/scrimmages")
async def scrimmage_ask(request: Request):
    who = _author(request)
    config = request.app.state.service
    form = await _form(request, config.limits.body_bytes)
    service.check_csrf(who, form.get("csrf"))
    pairs = form.get("pairs", "")
    if not isinstance(pairs, str) or not pairs.isdigit() or len(pairs) > 3:
        raise Refused(400, "pairs: expected a whole number")
    got = scrimmages.request(request.app.state.store, config, who, str(form.get("bot", "")),
                             str(form.get("opponent", "")), int(pairs),
                             address=_address(request))
    return RedirectResponse(f"/me/scrimmages/{got['id']}", status_code=303)


@router.get("/me/scrimmages/{sid}", response_class=HTMLResponse)
def scrimmage_page(request: Request, sid: int = Path(ge=1, le=2**31)):
    who = _author(request)
    return _render(request, "scrimmage.html",
                   s=scrimmages.view(request.app.state.store, who, sid))


@router.post("/me/scrimmages/{sid}/cancel")
async def scrimmage_cancel(request: Request, sid: int = Path(ge=1, le=2**31)):
    who = _author(request)
    form = await _form(request, request.app.state.service.limits.body_bytes)
    service.check_csrf(who, form.get("csrf"))
    scrimmages.cancel(request.app.state.store, who, sid, address=_address(request))
    return RedirectResponse(f"/me/scrimmages/{sid}", status_code=303)
