"""``create_app``: the dashboard over one results store, read only."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import anyio
from anyio import to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import cookie_parser

from scheduler.errors import Refusal, Refused
from scheduler.store import NoStore, open_store  # noqa: F401  (NoStore: raised by create_app)
from web.refusals import STATUS, headers_of, status_of

HERE = Path(__file__).resolve().parent


#: What every response may load and run: the dashboard's own scripts, styles and API, plus
#: the one style element of a page that carries the response's nonce (its computed widths and
#: colours); no inline script, no inline style attribute, no frames, no other origin.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'nonce-{nonce}'; "
       "img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; "
       "frame-ancestors 'none'")


class SecurityHeaders:
    """ASGI middleware: every response says ``X-Content-Type-Options: nosniff`` and carries
    the Content-Security-Policy ``CSP`` with a fresh nonce, which the page's templates read as
    ``request.state.csp_nonce``."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})["csp_nonce"] = nonce
        policy = CSP.format(nonce=nonce).encode()

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() not in (b"x-content-type-options",
                                                b"content-security-policy")]
                headers += [(b"x-content-type-options", b"nosniff"),
                            (b"content-security-policy", policy)]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


#: the paths of an upload (POST): a token's (the API) and a session's (the form)
UPLOADS = {"/api/v1/bots": "token", "/me/upload": "session"}


class _Gone(Exception):
    """The client went away while its body was read: nothing to answer."""


class BoundedBodies:
    """ASGI middleware of the submission service, before any route: who asks is settled from
    the headers alone, before any body is read, and a refusal is answered at once (with
    ``Connection: close`` when a body was announced, which is then never read):

    - a bearer token on the API (``/api``) is checked, and counted against the failed-token
      limit of the client's address (``sessions.token_viewer``: 401, then 429);
    - an upload (``UPLOADS``) needs its token (the API) or its session (the form; its CSRF
      token is inside the body, checked by the route once read), the author under the
      refused-uploads limit, and a free upload slot (``uploads.UploadSlots``: 429), held
      until it is answered;
    - a body is then read here, at most ``limit(path)`` bytes (an upload's: the archive limit
      and a form's fields; any other: the service's body limit), refused with 413 past it,
      and with 408 when it pauses ``body_s`` seconds or falls behind ``body_rate`` bytes a
      second after its first ``body_s`` (an upload's 413 and 408 count as refused uploads);
      the app reads the body kept here."""

    def __init__(self, app, dashboard) -> None:
        self.app, self.dashboard = app, dashboard

    def limit(self, path: str) -> int:
        lim = self.dashboard.state.service.limits
        return lim.archive_bytes + (64 << 10) if path in UPLOADS else lim.body_bytes

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from scheduler.service import sessions, uploads
        from web import service
        state = self.dashboard.state
        store, config = state.store, state.service
        path, method = scope["path"], scope["method"]
        headers = Headers(scope=scope)
        address = scope["client"][0] if scope.get("client") else "unknown"
        has_body = method not in ("GET", "HEAD", "OPTIONS")
        upload = UPLOADS.get(path) if method == "POST" else None
        holder = None  # the author whose upload slot this request holds
        try:
            try:
                viewer = None
                authorization = headers.get("authorization")
                if (_is_api_path(path) and authorization is not None
                        and service.bearer(authorization) is not None):
                    viewer = await to_thread.run_sync(sessions.token_viewer, store, config,
                                                      service.bearer(authorization) or "",
                                                      address)
                    scope.setdefault("state", {})["token_viewer"] = viewer  # (no second look-up)
                if upload == "session":
                    cookie = cookie_parser(headers.get("cookie", "")).get(
                        service.SESSION_COOKIE)
                    viewer = await to_thread.run_sync(sessions.session_viewer, store, cookie)
                    if viewer is None:
                        raise Refused(Refusal.UNAUTHENTICATED, "log in first (/login) with "
                                      "the token the organiser gave you")
                elif upload == "token" and viewer is None:
                    raise Refused(Refusal.UNAUTHENTICATED,
                                  "send your token as 'Authorization: Bearer TOKEN'")
                if upload:
                    assert viewer is not None  # an upload without one is refused above
                    await to_thread.run_sync(uploads.within_refused_uploads, store, config,
                                             viewer, address)
                    state.upload_slots.take(config.limits, viewer.name)
                    holder = viewer
                body = await self._body(scope, receive, headers) if has_body else None
            except _Gone:
                return
            except Refused as e:
                # an upload refused for its body counts (its slot was held)
                if holder is not None and e.kind in (Refusal.TOO_SLOW, Refusal.TOO_LARGE):
                    await to_thread.run_sync(uploads.count_refused_upload, store, config,
                                             holder, service.refused_upload(e), address)
                await self._refuse(scope, send, e, close=has_body)
                return
            if body is None:
                await self.app(scope, receive, send)
                return
            whole = {"type": "http.request", "body": body, "more_body": False}
            given = False

            async def replay():
                nonlocal given
                if not given:
                    given = True
                    return whole
                return await receive()

            await self.app(scope, replay, send)
        finally:
            if holder is not None:
                state.upload_slots.give_back(holder.name)

    async def _body(self, scope, receive, headers) -> bytes:
        """The request's body, within its limit (413) and in time (408)."""
        config = self.dashboard.state.service
        limit = self.limit(scope["path"])
        declared = headers.get("content-length")
        declared = int(declared) if declared is not None and declared.isdigit() else None
        if declared is not None and declared > limit:
            raise Refused(Refusal.TOO_LARGE, f"the body is over the limit of {limit} bytes")
        pause = config.body_s
        deadline = time.monotonic() + pause + (declared if declared is not None
                                               else limit) / config.body_rate
        chunks, size = [], 0
        while True:
            message = None
            with anyio.move_on_after(max(0.0, min(pause, deadline - time.monotonic()))):
                message = await receive()
            if message is None:
                raise Refused(Refusal.TOO_SLOW, f"the body did not arrive in time: it may "
                              f"pause at most {pause:g} s, and must keep up "
                              f"{config.body_rate} bytes a second after its first {pause:g} s")
            if message["type"] == "http.disconnect":
                raise _Gone()
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise Refused(Refusal.TOO_LARGE, f"the body is over the limit of {limit} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _refuse(self, scope, send, e, *, close: bool) -> None:
        """``e`` answered as the app's handler would (JSON on the API, else a page), without
        reading the body; with ``close``, the connection then closed."""
        headers = headers_of(e)
        if close:
            headers["Connection"] = "close"
        if _is_api_path(scope["path"]) or scope["path"].startswith("/static/"):
            response: Response = JSONResponse({"detail": e.detail},
                                              status_code=status_of(e), headers=headers)
        else:
            from web import pages
            response = await to_thread.run_sync(pages.error_page, Request(scope), status_of(e),
                                                e.detail)
            response.headers.update(headers)

        async def nothing():
            return {"type": "http.disconnect"}

        await response(scope, nothing, send)


class Dashboard(FastAPI):
    """The app with ``SecurityHeaders`` outermost: its headers are on every response, the
    500 of an unexpected error included; on the submission service, ``BoundedBodies`` inside
    it."""

    def build_middleware_stack(self):
        inner = super().build_middleware_stack()
        if getattr(self.state, "service", None) is not None:
            inner = BoundedBodies(inner, self)
        return SecurityHeaders(inner)


def _is_api_path(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


def _is_api(request: Request) -> bool:
    return _is_api_path(request.url.path)


def create_app(db_url: str, service=None) -> FastAPI:
    """The dashboard's pages and its JSON API (under /api) over the store at ``db_url``, which
    must be there (``NoStore``: the dashboard never creates one). With ``service`` (a
    ``scheduler.service.config.ServiceConfig``: ``arena serve``), also the submission
    service: its API under /api/v1 and the authors' pages; then scrimmages and seat logs are
    shown to their authors only."""
    from web import api, pages
    app = Dashboard(title="Shengji Arena", summary="Seasons, standings, matches and bots of "
                    "a results store" + (", and the submission service of its authors"
                                         if service is not None else ", read only"),
                    docs_url=None, redoc_url=None)
    app.state.store = open_store(db_url, create=False)
    app.state.service = service
    if service is not None:
        from scheduler.service.human import Games
        from scheduler.service.uploads import UploadSlots
        app.state.upload_slots = UploadSlots()
        app.state.human = service.human
        app.state.games = Games(app.state.store, app.state.store.url, service.human)
    app.state.templates = Jinja2Templates(directory=str(HERE / "templates"))
    app.state.standings_cache = {}
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.exception_handler(RequestValidationError)
    async def bad_query(request: Request, exc: RequestValidationError):
        problems = []
        for e in exc.errors():
            loc = [str(p) for p in e.get("loc", ()) if p not in ("query", "path", "body")]
            problems.append(f"{'.'.join(loc) or 'request'}: {e.get('msg', 'invalid')}")
        detail = "bad parameter " + "; ".join(problems)
        if _is_api(request):
            return JSONResponse({"detail": detail}, status_code=STATUS[Refusal.MALFORMED])
        return pages.error_page(request, STATUS[Refusal.MALFORMED], detail)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        if _is_api(request) or request.url.path.startswith("/static/"):
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code,
                                headers=getattr(exc, "headers", None))
        return pages.error_page(request, exc.status_code, str(exc.detail))

    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused):
        if _is_api(request):
            return JSONResponse({"detail": exc.detail}, status_code=status_of(exc),
                                headers=headers_of(exc))
        page = pages.error_page(request, status_of(exc), exc.detail)
        page.headers.update(headers_of(exc))
        return page

    app.include_router(api.router)
    if service is not None:
        from web import author_pages, play, service_api
        app.include_router(service_api.router)
        app.include_router(author_pages.router)
        app.include_router(play.router)
    app.include_router(pages.router)
    try:
        from web import replay
        app.include_router(replay.router)
    except ImportError:
        pass
    # FastAPI's documented way to replace the schema, a method the checker sees assigned
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _openapi(app: FastAPI) -> dict:
    """The schema, with a malformed query answered 400 {"detail": ...} (not FastAPI's 422)."""
    if app.openapi_schema is None:
        from fastapi.openapi.utils import get_openapi
        schema = get_openapi(title=app.title, version=app.version, summary=app.summary,
                             routes=app.routes)
        bad = {"description": "A malformed query: the parameter named and why",
               "content": {"application/json": {"schema": {"$ref":
                                                           "#/components/schemas/Detail"}}}}
        for path in schema.get("paths", {}).values():
            for op in path.values():
                responses = op.get("responses", {})
                if responses.pop("422", None) is not None:
                    responses["400"] = bad
        comps = schema.get("components", {}).get("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            comps.pop(name, None)
        comps.setdefault("Detail", {"type": "object", "required": ["detail"], "title": "Detail",
                                    "properties": {"detail": {"type": "string",
                                                              "title": "Detail"}}})
        app.openapi_schema = schema
    return app.openapi_schema
