"""The submission service's HTTP glue, shared by its JSON API (``web.service_api``), the
authors' pages (``web.author_pages``) and the middleware (``web.app.BoundedBodies``): the
token read from the ``Authorization`` header, the session cookie, a form's CSRF token and a
bounded request body. The domain is ``scheduler/service/``: who is asking (``sessions``), the
uploads (``uploads``), an author's versions (``versions``), who sees what (``visibility``),
how often one may act (``limits``) and the service's settings (``config``).

An author owns the bot names they first submitted; they see their versions' states, build
logs, archives and results (``web.results``), the records and seat logs of their versions'
matches, and the scrimmages they asked for or were asked to play in. Nobody sees another
author's. The organiser (role "organiser") sees and does everything. Everyone sees public
standings and replays, and no scrimmage season.
Every write and every refusal of a limit goes into the audit log.
"""

from __future__ import annotations

import secrets

from scheduler.errors import Refusal, Refused
from scheduler.registry.archives import size_text
from scheduler.service.sessions import viewer_of
from scheduler.service.visibility import Viewer
from web.refusals import status_of

SESSION_COOKIE = "arena_session"


def bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header; None: no bearer token."""
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def token_checked(request) -> Viewer | None:
    """The bearer token's author as the service's middleware (``web.app.BoundedBodies``)
    checked and counted it before the route: the route looks it up no second time."""
    return getattr(request.state, "token_viewer", None)


def page_viewer(request) -> Viewer | None:
    """The author of the request's session cookie (pages take no bearer token)."""
    if getattr(request.app.state, "service", None) is None:
        return None
    return viewer_of(request.app.state.store, None, request.cookies.get(SESSION_COOKIE))


def required(viewer: Viewer | None) -> Viewer:
    if viewer is None:
        raise Refused(Refusal.UNAUTHENTICATED,
                      "log in first: send your token as 'Authorization: Bearer TOKEN'")
    return viewer


def check_csrf(viewer: Viewer, given: str | None) -> None:
    """A form's write from a session carries the session's CSRF token."""
    if viewer.via == "session" and not (given and viewer.csrf
                                        and secrets.compare_digest(given, viewer.csrf)):
        raise Refused(Refusal.FORBIDDEN,
                      "the form's CSRF token is missing or stale: reload the page")


async def read_body(request, limit: int) -> bytes:
    """The request body, refused (413) past ``limit`` bytes without reading on."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise Refused(Refusal.TOO_LARGE, f"the body is {size_text(int(declared))}; the limit is "
                      f"{size_text(limit)}")
    got = bytearray()
    async for chunk in request.stream():
        got += chunk
        if len(got) > limit:
            raise Refused(Refusal.TOO_LARGE, f"the body is over the limit of {size_text(limit)}")
    return bytes(got)


def refused_upload(refused: Refused) -> str:
    """A refused upload as the audit log tells it: the status its author was answered with,
    and why (``scheduler.service.uploads.count_refused_upload``)."""
    return f"{status_of(refused)} {refused.detail}"
