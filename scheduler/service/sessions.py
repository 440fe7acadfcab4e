"""Who is asking the submission service: an author's bearer token, or a session a login
opened with it (kept in the store by the digest of its cookie, never the cookie itself).
Failed tokens and logins count against their address's limit (``limits.within``); both, and
each login, go into the audit log. The web edge reads the token from its header and the
cookie from the request (``web.service``)."""

from __future__ import annotations

import hashlib
import secrets
import time

from scheduler.errors import Refusal, Refused
from scheduler.registry.owners import token_author
from scheduler.service.config import ServiceConfig
from scheduler.service.limits import within
from scheduler.service.visibility import Viewer
from scheduler.states import AuthorStatus

#: how long a session lasts after its login
SESSION_S = 12 * 3600
TOKEN_REFUSED = ("the token is not an active author's (revoked, rotated, disabled or "
                 "mistyped): ask the organiser")


def digest(text: str) -> str:
    """How a session's cookie is kept in the store."""
    return hashlib.sha256(text.encode()).hexdigest()


def viewer_of(store, token: str | None, cookie: str | None) -> Viewer | None:
    """The author of a bearer token, else of a live session cookie; None: nobody."""
    if token is not None:
        got = token_author(store, token)
        if got is None:
            raise Refused(Refusal.UNAUTHENTICATED, TOKEN_REFUSED)
        return Viewer(got.name, got.role, "token")
    return session_viewer(store, cookie)


def session_viewer(store, cookie: str | None) -> Viewer | None:
    """The author of a live session cookie; None: nobody."""
    if cookie and len(cookie) <= 200:
        s = store.sessions.get(digest(cookie))
        if s is not None and s.status == AuthorStatus.ACTIVE:
            return Viewer(s.author, s.role, "session", s.csrf)
    return None


def token_viewer(store, config: ServiceConfig, token: str, address: str) -> Viewer:
    """The author of the bearer ``token``, the token counted against the failed-token limit
    of ``address`` (``logins`` in ``login_window_s``, apart from failed logins): past it,
    every token from there is refused (429), the right one too, until it resets; another
    address is not refused."""
    lim = config.limits
    key = f"token:{address}"
    within(store, key, lim.logins, lim.login_window_s, "failed tokens from your address",
           actor=None, address=address)
    got = token_author(store, token)
    if got is None:
        store.audit.add_limit_event(key, lim.login_window_s)
        store.audit.write("token-failed", address=address)
        raise Refused(Refusal.UNAUTHENTICATED, TOKEN_REFUSED)
    return Viewer(got.name, got.role, "token")


def login(store, config: ServiceConfig, token: str, address: str) -> tuple[str, Viewer]:
    """A session for the author of ``token`` (the cookie's value, and who), counted against
    the login limit of ``address``."""
    lim = config.limits
    key = f"login:{address}"
    within(store, key, lim.logins, lim.login_window_s, "failed logins from your address",
           actor=None, address=address)
    got = token_author(store, token.strip())
    if got is None:
        store.audit.add_limit_event(key, lim.login_window_s)
        store.audit.write("login-failed", address=address)
        raise Refused(Refusal.UNAUTHENTICATED, "that token is not an active author's")
    cookie = secrets.token_urlsafe(32)
    csrf = secrets.token_urlsafe(24)
    store.sessions.add(digest(cookie), got.name, csrf, time.time() + SESSION_S)
    store.audit.write("login", actor=got.name, address=address)
    return cookie, Viewer(got.name, got.role, "session", csrf)
