"""The submission service's web side, shared by its JSON API (``web.service_api``) and the
authors' pages (``web.author_pages``): who is asking (a token in the ``Authorization`` header,
or a dashboard session), uploads, and the writes. What an author may see and how often they
may act are the domain's (``scheduler.service.visibility`` and ``limits``), used from here.

An author owns the bot names they first submitted; they see their versions' states, build
logs, archives and results (``web.results``), the records and seat logs of their versions'
matches, and the scrimmages they asked for or were asked to play in. Nobody sees another
author's. The organiser (role "organiser") sees and does everything. Everyone sees public
standings and replays, and no scrimmage season.
Every write and every refusal of a limit goes into the audit log.

An upload is unpacked, packed and checked in a process of its own (``unpack_elsewhere``), never
on the service's event loop: a few at once (``UploadSlots``), each bounded in time and memory.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler.errors import Refusal, Refused
from scheduler.registry.archives import RegistryError, size_text
from scheduler.registry.owners import token_author
from scheduler.registry.submissions import store_prepared
from scheduler.service.limits import DAY_S, Limits, when, within
# the domain's rules the routes call through this module
from scheduler.service.limits import within_registrations  # noqa: F401
from scheduler.service.visibility import (Viewer, hidden_seasons, own_seats,  # noqa: F401
                                          owned, seat_authors, seat_log)
from scheduler.states import AuthorStatus, VersionState
from web.refusals import status_of

SESSION_COOKIE = "arena_session"
SESSION_S = 12 * 3600


@dataclass(frozen=True)
class ServiceConfig:
    """``arena serve``'s settings."""
    limits: Limits = field(default_factory=Limits)
    self_registration: bool = False
    variant: str = "two-deck-fry"
    secure_cookies: bool = False        # behind TLS: the session cookie is Secure
    body_s: float = 20.0                # a request body pausing this long ends with 408
    body_rate: int = 32 << 10           # bytes a second a body keeps up after its first body_s


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# -- who is asking ----------------------------------------------------------------------
def bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


TOKEN_REFUSED = ("the token is not an active author's (revoked, rotated, disabled or "
                 "mistyped): ask the organiser")


def token_checked(request) -> Viewer | None:
    """The bearer token's author as the service's middleware (``web.app.BoundedBodies``)
    checked and counted it before the route: the route looks it up no second time."""
    return getattr(request.state, "token_viewer", None)


def viewer_of(store, authorization: str | None, cookie: str | None) -> Viewer | None:
    """The author of a bearer token, else of a live session cookie; None: nobody."""
    token = bearer(authorization)
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


def token_viewer(store, config: ServiceConfig, authorization: str, address: str) -> Viewer:
    """The author of the bearer token in ``authorization``, the token counted against the
    failed-token limit of ``address`` (``logins`` in ``login_window_s``, apart from failed
    logins): past it, every token from there is refused (429), the right one too, until it
    resets; another address is not refused."""
    lim = config.limits
    key = f"token:{address}"
    within(store, key, lim.logins, lim.login_window_s, "failed tokens from your address",
            actor=None, address=address)
    got = token_author(store, bearer(authorization) or "")
    if got is None:
        store.audit.add_limit_event(key, lim.login_window_s)
        store.audit.write("token-failed", address=address)
        raise Refused(Refusal.UNAUTHENTICATED, TOKEN_REFUSED)
    return Viewer(got.name, got.role, "token")


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


# -- uploads ------------------------------------------------------------------------------
def _suffix(data: bytes) -> str:
    if data[:2] == b"\x1f\x8b":
        return ".tar.gz"
    if data[:4] == b"PK\x03\x04":
        return ".zip"
    return ".tar"


class UploadSlots:
    """The uploads being read or unpacked at once: ``uploads_at_once`` on the service and one
    per author; past either, 429 before the body is read."""

    def __init__(self) -> None:
        self._authors: set[str] = set()
        self._lock = threading.Lock()

    def take(self, limits: Limits, author: str) -> None:
        with self._lock:
            if author in self._authors:
                raise Refused(Refusal.LIMITED,
                              "limit reached: one upload of yours at a time, and your "
                              "previous one is still being read or unpacked; send the next "
                              "once it is answered", 5.0)
            if len(self._authors) >= limits.uploads_at_once:
                raise Refused(Refusal.LIMITED,
                              f"limit reached: {limits.uploads_at_once} uploads are being "
                              "read or unpacked on the service at once; try again in a few "
                              "seconds", 5.0)
            self._authors.add(author)

    def give_back(self, author: str) -> None:
        with self._lock:
            self._authors.discard(author)


def within_refused_uploads(store, config: ServiceConfig, viewer: Viewer,
                           address: str | None = None) -> None:
    """Refuse (429) an author whose uploads were refused ``refused_uploads`` times in the last
    ``refused_window_s``."""
    lim = config.limits
    within(store, f"refused-upload:{viewer.name}", lim.refused_uploads, lim.refused_window_s,
            "refused uploads per author", actor=viewer.name, address=address)


def count_refused_upload(store, config: ServiceConfig, viewer: Viewer, why: str,
                         address: str | None = None) -> None:
    """An upload refused for what it is (its size, its archive, its manifest, its cost):
    counted against ``refused_uploads``, and in the audit log."""
    store.audit.add_limit_event(f"refused-upload:{viewer.name}", config.limits.refused_window_s)
    store.audit.write("upload-refused", actor=viewer.name, detail=why[:500], address=address)


def take_upload(store, config: ServiceConfig, viewer: Viewer, data: bytes, *,
                address: str | None = None, filename: str = "upload") -> dict:
    """Store an uploaded archive as the viewer's version, ``queued`` for a worker's build and
    check; its view (``version_view``). It blocks while the archive is unpacked elsewhere
    (``unpack_elsewhere``): call it from a worker thread, never on the event loop. A refusal
    of the upload itself (400, 413; a failure, 500), not of a limit (429), counts against
    ``refused_uploads``."""
    lim = config.limits
    within_refused_uploads(store, config, viewer, address)
    try:
        if len(data) > lim.archive_bytes:
            raise Refused(Refusal.TOO_LARGE, f"the archive is {size_text(len(data))}; the limit is "
                          f"{size_text(lim.archive_bytes)}")
        if not data:
            raise Refused(Refusal.MALFORMED,
                          "the body is empty: send the archive (.tar, .tar.gz or .zip)")
        now = time.time()
        recent = store.versions.submitted_since(viewer.name, now - DAY_S)
        if len(recent) >= lim.versions_per_day:
            store.audit.write("limit", actor=viewer.name, detail="versions per day",
                              address=address)
            resets = recent[len(recent) - lim.versions_per_day] + DAY_S
            raise Refused(Refusal.LIMITED,
                          f"limit reached: {lim.versions_per_day} versions per author per "
                          f"24 hours; it resets at {when(resets)}", resets - now)
        if store.versions.in_flight(viewer.name) >= lim.builds_in_flight:
            store.audit.write("limit", actor=viewer.name, detail="builds in flight",
                              address=address)
            raise Refused(Refusal.LIMITED,
                          f"limit reached: {lim.builds_in_flight} of your versions are "
                          "queued or building; it resets when one of them is ready or "
                          "refused", 30.0)
        label = filename if _plain(filename) else "upload"
        prepared = unpack_elsewhere(lim, viewer.name, data, label)
        try:
            v = store_prepared(store, prepared, Path(label), author=viewer.name,
                               state=VersionState.QUEUED)
        except RegistryError as e:
            raise Refused(Refusal.MALFORMED, str(e)) from None
    except Refused as e:
        if e.kind is not Refusal.LIMITED:
            count_refused_upload(store, config, viewer, f"{status_of(e)} {e.detail}", address)
        raise
    store.audit.write("submit", actor=viewer.name, subject=v.ref,
                      detail=("already stored" if v.already else f"{v.content_hash[:12]}, "
                              f"{v.files} files, {size_text(v.size)}"), address=address)
    return version_view(store, viewer, v.name, v.version)


#: an upload's process: its address space at most (the unpacked files are on disk)
UPLOAD_MEMORY = 1 << 30
_forkserver = threading.Lock()
_uploads_context = None


def _context():
    """The multiprocessing context of the uploads' processes: forked from a fork server that
    holds this module already (quick to start; no copy of the service's threads or store)."""
    global _uploads_context
    with _forkserver:
        if _uploads_context is None:
            import multiprocessing
            ctx = multiprocessing.get_context("forkserver")
            # (not ``__main__``: a script without a main guard would run again in it)
            ctx.set_forkserver_preload([__name__, "scheduler.registry.submissions"])
            _uploads_context = ctx
        return _uploads_context


def unpack_elsewhere(limits: Limits, author: str, data: bytes, label: str):
    """The archive ``data`` unpacked, checked and packed (``submissions.prepare``) in a process
    of its own at a lower priority, which touches no store: killed past ``limits.upload_s``
    seconds (its CPU time is bounded too) or ``UPLOAD_MEMORY`` of address space, all it wrote
    removed. The ``Prepared`` bot, for ``store_prepared``; a refusal raises ``Refused``."""
    from scheduler.registry.archives import remove_tree
    ctx = _context()
    work = Path(tempfile.mkdtemp(prefix="arena-upload-"))
    try:
        path = work / f"upload{_suffix(data)}"
        path.write_bytes(data)
        reader, writer = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_unpack_here, daemon=True, name=f"upload of {author}",
                           args=(writer, limits, str(path), label))
        proc.start()
        writer.close()
        try:
            got: tuple[Any, ...] = (reader.recv() if reader.poll(limits.upload_s)
                                    else ("late",))
        except EOFError:  # it ended without a word: killed (its CPU time, its memory)
            got = ("died",)
        finally:
            if proc.is_alive():
                proc.kill()
            proc.join()
            reader.close()
    finally:
        remove_tree(work)
    if got[0] == "prepared":
        return got[1]
    if got[0] == "refused":
        raise Refused(Refusal.MALFORMED, got[1])
    if got[0] == "late":
        raise Refused(Refusal.MALFORMED,
                      f"the archive took more than {limits.upload_s:g} s to unpack and "
                      "check: refused (send fewer files and folders)")
    if got[0] == "died":
        raise Refused(Refusal.MALFORMED, "the archive could not be unpacked and checked within the "
                      "service's bounds of time and memory: refused")
    print(f"arena serve: an upload of {author} failed: {got[1]}", file=sys.stderr, flush=True)
    raise Refused(Refusal.FAILED, "the upload failed on the service; the organiser has the error")


def _unpack_here(writer, limits: Limits, path: str, label: str) -> None:
    """An upload's process (``unpack_elsewhere``): its scratch folders under the upload's own,
    which its parent removes; the outcome sent back on ``writer``."""
    import ctypes
    import resource
    import signal
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    os.nice(10)
    cpu = int(limits.upload_s) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (UPLOAD_MEMORY, UPLOAD_MEMORY))
    work = str(Path(path).parent)
    tempfile.tempdir = work
    from scheduler.registry.archives import opened
    from scheduler.registry.submissions import Prepared, prepare
    out: tuple[str, Prepared | str]
    try:
        with opened(Path(path), limits.unpacked_bytes) as folder:
            out = ("prepared", prepare(Path(path), folder, limits.unpacked_bytes))
    except RegistryError as e:
        out = ("refused", str(e).replace(path, label).replace(work, ""))
    except MemoryError:
        out = ("refused", f"the archive took more than {size_text(UPLOAD_MEMORY)} of memory "
               "to unpack and check")
    except RecursionError:
        out = ("refused", "the archive is nested too deep to unpack and check")
    except Exception as e:  # noqa: BLE001  (the service says so, and goes on)
        out = ("failed", f"{type(e).__name__}: {e}"[:500])
    writer.send(out)
    writer.close()


def _plain(name: str) -> bool:
    return 0 < len(name) <= 100 and all(c.isalnum() or c in "._-" for c in name)


# -- reads --------------------------------------------------------------------------------
def version_view(store, viewer: Viewer, name: str, version: str) -> dict:
    """A version's state as its author sees it."""
    row = owned(store, viewer, name, version)
    st = store.versions.state(row.id)
    return {"name": row.name, "version": row.version, "author": row.author,
            "content_hash": row.content_hash, "language": row.language, "size": row.size,
            "files": row.files, "submitted_at": row.submitted_at,
            "state": st.state if st else VersionState.READY,
            "reason": st.reason if st else None,
            "updated_at": st.updated_at if st else row.submitted_at,
            "withdrawn": bool(st and st.withdrawn_at),
            "has_build_log": bool(st and st.build_log),
            "seasons": store.registry.pinning_seasons(row.content_hash),
            "ahead": _ahead(store, row.id) if st and st.state == VersionState.QUEUED else None}


def _ahead(store, version_id: int) -> dict[str, int]:
    from scheduler.dispatch import RESEND_S, ahead_in_intake
    from scheduler.intake import STALE_CLAIM_S
    return ahead_in_intake(store.versions.intake_queue(RESEND_S, STALE_CLAIM_S), version_id)


def ahead_text(ahead: dict[str, int] | None) -> str:
    """What a queued version waits behind, in words ("2 versions ahead of it, 1 being
    built"); "" when it is not queued."""
    if ahead is None:
        return ""
    n = sum(ahead.values())
    if not n:
        return "next for a worker"
    doing = [f"{ahead[k]} being {what}" for k, what in (
        (VersionState.BUILDING, "built"), (VersionState.CHECKING, "checked")) if ahead[k]]
    return ", ".join([f"{n} version{'s' if n != 1 else ''} ahead of it", *doing])


def my_versions(store, viewer: Viewer) -> list[dict]:
    rows = [r for r in store.registry.versions() if viewer.organiser or r.author == viewer.name]
    return [version_view(store, viewer, r.name, r.version) for r in reversed(rows)]


def build_log(store, viewer: Viewer, name: str, version: str) -> str:
    row = owned(store, viewer, name, version)
    st = store.versions.state(row.id)
    return (st.build_log if st else None) or ""


def archive(store, viewer: Viewer, name: str, version: str) -> bytes:
    from scheduler.registry.archives import stored_archive
    row = owned(store, viewer, name, version)
    return stored_archive(store, row.content_hash)
