"""``create_app``: the dashboard over one results store, read only."""

from __future__ import annotations

import secrets
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from scheduler.store import NoStore, open_store  # noqa: F401  (NoStore: raised by create_app)

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


class BoundedBodies:
    """ASGI middleware of the submission service: a request's body is read here, at most
    ``limit(path)`` bytes (an upload's: the archive limit and a form's fields; any other: the
    service's body limit), and refused with 413 past it, before any parser holds it all; the
    app then reads the body kept here."""

    def __init__(self, app, limit) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        limit = self.limit(scope["path"])
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                body = (b'{"detail":"the body is over the limit of %d bytes"}' % limit)
                await send({"type": "http.response.start", "status": 413, "headers": [
                    (b"content-type", b"application/json"), (b"connection", b"close"),
                    (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        whole = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        given = False

        async def replay():
            nonlocal given
            if not given:
                given = True
                return whole
            return await receive()

        await self.app(scope, replay, send)


class Dashboard(FastAPI):
    """The app with ``SecurityHeaders`` outermost: its headers are on every response, the
    500 of an unexpected error included; on the submission service, ``BoundedBodies`` inside
    it."""

    def build_middleware_stack(self):
        inner = super().build_middleware_stack()
        service = getattr(self.state, "service", None)
        if service is not None:
            lim = service.limits
            uploads = lim.archive_bytes + (64 << 10)
            inner = BoundedBodies(inner, lambda path: uploads if path in (
                "/api/v1/bots", "/me/upload") else lim.body_bytes)
        return SecurityHeaders(inner)


def _is_api(request: Request) -> bool:
    return request.url.path == "/api" or request.url.path.startswith("/api/")


def create_app(db_url: str, service=None) -> FastAPI:
    """The dashboard's pages and its JSON API (under /api) over the store at ``db_url``, which
    must be there (``NoStore``: the dashboard never creates one). With ``service`` (a
    ``web.service.ServiceConfig``: ``arena serve``), also the submission service: its API
    under /api/v1 and the authors' pages; then scrimmages and seat logs are shown to their
    authors only."""
    from web import api, pages
    from web.service import Refused
    app = Dashboard(title="Shengji Arena", summary="Seasons, standings, matches and bots of "
                    "a results store" + (", and the submission service of its authors"
                                         if service is not None else ", read only"),
                    docs_url=None, redoc_url=None)
    app.state.store = open_store(db_url, create=False)
    app.state.service = service
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
            return JSONResponse({"detail": detail}, status_code=400)
        return pages.error_page(request, 400, detail)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        if _is_api(request) or request.url.path.startswith("/static/"):
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code,
                                headers=getattr(exc, "headers", None))
        return pages.error_page(request, exc.status_code, str(exc.detail))

    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused):
        if _is_api(request):
            return JSONResponse({"detail": exc.detail}, status_code=exc.status,
                                headers=exc.headers())
        page = pages.error_page(request, exc.status, exc.detail)
        page.headers.update(exc.headers())
        return page

    app.include_router(api.router)
    if service is not None:
        from web import author_pages, service_api
        app.include_router(service_api.router)
        app.include_router(author_pages.router)
    app.include_router(pages.router)
    try:
        from web import replay
        app.include_router(replay.router)
    except ImportError:
        pass
    app.openapi = lambda: _openapi(app)
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
