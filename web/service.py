"""The submission service's rules, shared by its JSON API (``web.service_api``) and the
authors' pages (``web.author_pages``): who is asking (a token in the ``Authorization`` header,
or a dashboard session), what they may see, the limits, and the writes.

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

from scheduler.registry.archives import RegistryError, size_text
from scheduler.registry.owners import check_author, check_version, token_author
from scheduler.registry.submissions import store_prepared

SESSION_COOKIE = "arena_session"
SESSION_S = 12 * 3600
DAY_S = 86400.0


@dataclass(frozen=True)
class Limits:
    """What one author may do; each refusal names the limit and when it resets."""
    archive_bytes: int = 8 << 20        # an upload, as sent
    unpacked_bytes: int = 64 << 20      # the archive unpacked
    versions_per_day: int = 20          # per author, in any 24 hours
    builds_in_flight: int = 2           # versions queued, building or checking, per author
    scrimmages_in_flight: int = 2       # per author
    scrimmage_pairs: int = 8            # duplicate pairs in one scrimmage
    logins: int = 10                    # failed logins per address in ``login_window_s``,
    login_window_s: float = 900.0       # and failed bearer tokens per address, apart
    body_bytes: int = 64 << 10          # a JSON or form body other than an upload
    refused_uploads: int = 10           # uploads refused per author in ``refused_window_s``
    refused_window_s: float = 3600.0
    uploads_at_once: int = 2            # uploads read or unpacked at once on the service
    upload_s: float = 60.0              # an upload's unpacking, packing and checking


@dataclass(frozen=True)
class ServiceConfig:
    """``arena serve``'s settings."""
    limits: Limits = field(default_factory=Limits)
    self_registration: bool = False
    variant: str = "two-deck-fry"
    secure_cookies: bool = False        # behind TLS: the session cookie is Secure
    body_s: float = 20.0                # a request body pausing this long ends with 408
    body_rate: int = 32 << 10           # bytes a second a body keeps up after its first body_s


@dataclass(frozen=True)
class Viewer:
    """Who is asking: an active author, by token (``token``) or dashboard session."""
    name: str
    role: str
    via: str
    csrf: str | None = None

    @property
    def organiser(self) -> bool:
        return self.role == "organiser"


class Refused(Exception):
    """A request refused: its HTTP status and what to say (and ``retry_after`` seconds)."""

    def __init__(self, status: int, detail: str, retry_after: float | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.retry_after = status, detail, retry_after

    def headers(self) -> dict[str, str]:
        out = {}
        if self.retry_after is not None:
            out["Retry-After"] = str(max(1, int(self.retry_after + 0.999)))
        if self.status == 401:
            out["WWW-Authenticate"] = "Bearer"
        return out


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
            raise Refused(401, TOKEN_REFUSED)
        return Viewer(got["name"], got["role"], "token")
    return session_viewer(store, cookie)


def session_viewer(store, cookie: str | None) -> Viewer | None:
    """The author of a live session cookie; None: nobody."""
    if cookie and len(cookie) <= 200:
        s = store.session(digest(cookie))
        if s is not None and s["status"] == "active":
            return Viewer(s["author"], s["role"], "session", s["csrf"])
    return None


def token_viewer(store, config: ServiceConfig, authorization: str, address: str) -> Viewer:
    """The author of the bearer token in ``authorization``, the token counted against the
    failed-token limit of ``address`` (``logins`` in ``login_window_s``, apart from failed
    logins): past it, every token from there is refused (429), the right one too, until it
    resets; another address is not refused."""
    lim = config.limits
    key = f"token:{address}"
    _within(store, key, lim.logins, lim.login_window_s, "failed tokens from your address",
            actor=None, address=address)
    got = token_author(store, bearer(authorization) or "")
    if got is None:
        store.add_limit_event(key, lim.login_window_s)
        store.audit("token-failed", address=address)
        raise Refused(401, TOKEN_REFUSED)
    return Viewer(got["name"], got["role"], "token")


def page_viewer(request) -> Viewer | None:
    """The author of the request's session cookie (pages take no bearer token)."""
    if getattr(request.app.state, "service", None) is None:
        return None
    return viewer_of(request.app.state.store, None, request.cookies.get(SESSION_COOKIE))


def required(viewer: Viewer | None) -> Viewer:
    if viewer is None:
        raise Refused(401, "log in first: send your token as 'Authorization: Bearer TOKEN'")
    return viewer


def login(store, config: ServiceConfig, token: str, address: str) -> tuple[str, Viewer]:
    """A session for the author of ``token`` (the cookie's value, and who), counted against
    the login limit of ``address``."""
    lim = config.limits
    key = f"login:{address}"
    _within(store, key, lim.logins, lim.login_window_s, "failed logins from your address",
            actor=None, address=address)
    got = token_author(store, token.strip())
    if got is None:
        store.add_limit_event(key, lim.login_window_s)
        store.audit("login-failed", address=address)
        raise Refused(401, "that token is not an active author's")
    cookie = secrets.token_urlsafe(32)
    csrf = secrets.token_urlsafe(24)
    store.add_session(digest(cookie), got["name"], csrf, time.time() + SESSION_S)
    store.audit("login", actor=got["name"], address=address)
    return cookie, Viewer(got["name"], got["role"], "session", csrf)


def check_csrf(viewer: Viewer, given: str | None) -> None:
    """A form's write from a session carries the session's CSRF token."""
    if viewer.via == "session" and not (given and viewer.csrf
                                        and secrets.compare_digest(given, viewer.csrf)):
        raise Refused(403, "the form's CSRF token is missing or stale: reload the page")


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def _within(store, key: str, limit: int, window_s: float, what: str, *, actor: str | None,
            address: str | None = None) -> None:
    """Refuse (429) when ``limit`` events of ``key`` happened in the last ``window_s``."""
    since = time.time() - window_s
    events = store.limit_events(key, since)
    if len(events) >= limit:
        resets = events[len(events) - limit] + window_s
        store.audit("limit", actor=actor, subject=key, detail=what, address=address)
        raise Refused(429, f"limit reached: {limit} {what} per {window_s / 60:g} minutes; "
                      f"it resets at {_when(resets)}", resets - time.time())


def within_registrations(store, config: ServiceConfig, address: str) -> None:
    """Self-registrations: at most 5 a day from one address."""
    key = f"register:{address}"
    _within(store, key, 5, DAY_S, "registrations from your address", actor=None,
            address=address)
    store.add_limit_event(key, DAY_S)


async def read_body(request, limit: int) -> bytes:
    """The request body, refused (413) past ``limit`` bytes without reading on."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise Refused(413, f"the body is {size_text(int(declared))}; the limit is "
                      f"{size_text(limit)}")
    got = bytearray()
    async for chunk in request.stream():
        got += chunk
        if len(got) > limit:
            raise Refused(413, f"the body is over the limit of {size_text(limit)}")
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
                raise Refused(429, "limit reached: one upload of yours at a time, and your "
                              "previous one is still being read or unpacked; send the next "
                              "once it is answered", 5.0)
            if len(self._authors) >= limits.uploads_at_once:
                raise Refused(429, f"limit reached: {limits.uploads_at_once} uploads are being "
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
    _within(store, f"refused-upload:{viewer.name}", lim.refused_uploads, lim.refused_window_s,
            "refused uploads per author", actor=viewer.name, address=address)


def count_refused_upload(store, config: ServiceConfig, viewer: Viewer, why: str,
                         address: str | None = None) -> None:
    """An upload refused for what it is (its size, its archive, its manifest, its cost):
    counted against ``refused_uploads``, and in the audit log."""
    store.add_limit_event(f"refused-upload:{viewer.name}", config.limits.refused_window_s)
    store.audit("upload-refused", actor=viewer.name, detail=why[:500], address=address)


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
            raise Refused(413, f"the archive is {size_text(len(data))}; the limit is "
                          f"{size_text(lim.archive_bytes)}")
        if not data:
            raise Refused(400, "the body is empty: send the archive (.tar, .tar.gz or .zip)")
        now = time.time()
        recent = store.versions_submitted_since(viewer.name, now - DAY_S)
        if len(recent) >= lim.versions_per_day:
            store.audit("limit", actor=viewer.name, detail="versions per day", address=address)
            resets = recent[len(recent) - lim.versions_per_day] + DAY_S
            raise Refused(429, f"limit reached: {lim.versions_per_day} versions per author per "
                          f"24 hours; it resets at {_when(resets)}", resets - now)
        if store.versions_in_flight(viewer.name) >= lim.builds_in_flight:
            store.audit("limit", actor=viewer.name, detail="builds in flight", address=address)
            raise Refused(429, f"limit reached: {lim.builds_in_flight} of your versions are "
                          "queued or building; it resets when one of them is ready or "
                          "refused", 30.0)
        label = filename if _plain(filename) else "upload"
        prepared = unpack_elsewhere(lim, viewer.name, data, label)
        try:
            v = store_prepared(store, prepared, Path(label), author=viewer.name,
                               state="queued")
        except RegistryError as e:
            raise Refused(400, str(e)) from None
    except Refused as e:
        if e.status != 429:
            count_refused_upload(store, config, viewer, f"{e.status} {e.detail}", address)
        raise
    store.audit("submit", actor=viewer.name, subject=v.ref,
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
            got = reader.recv() if reader.poll(limits.upload_s) else ("late",)
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
        raise Refused(400, got[1])
    if got[0] == "late":
        raise Refused(400, f"the archive took more than {limits.upload_s:g} s to unpack and "
                      "check: refused (send fewer files and folders)")
    if got[0] == "died":
        raise Refused(400, "the archive could not be unpacked and checked within the "
                      "service's bounds of time and memory: refused")
    print(f"arena serve: an upload of {author} failed: {got[1]}", file=sys.stderr, flush=True)
    raise Refused(500, "the upload failed on the service; the organiser has the error")


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
    from scheduler.registry.submissions import prepare
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
def owned(store, viewer: Viewer, name: str, version: str):
    """name@version, when the viewer may see its private side (theirs, or the organiser)."""
    try:
        check_author(name, "bot")
        check_version(version, "bot")
    except RegistryError as e:
        raise Refused(400, str(e)) from None
    row = store.bot_version(name, version)
    if row is None:
        raise Refused(404, f"no version {name}@{version}")
    if not viewer.organiser and row.author != viewer.name:
        raise Refused(403, f"{name}@{version} is not yours: only its author sees its state, "
                      "build log, archive and logs")
    return row


def version_view(store, viewer: Viewer, name: str, version: str) -> dict:
    """A version's state as its author sees it."""
    row = owned(store, viewer, name, version)
    st = store.version_state(row.id)
    return {"name": row.name, "version": row.version, "author": row.author,
            "content_hash": row.content_hash, "language": row.language, "size": row.size,
            "files": row.files, "submitted_at": row.submitted_at,
            "state": st["state"] if st else "ready",
            "reason": st["reason"] if st else None,
            "updated_at": st["updated_at"] if st else row.submitted_at,
            "withdrawn": bool(st and st["withdrawn_at"]),
            "has_build_log": bool(st and st["build_log"]),
            "seasons": store.pinning_seasons(row.content_hash),
            "ahead": _ahead(store, row.id) if st and st["state"] == "queued" else None}


def _ahead(store, version_id: int) -> dict[str, int]:
    from scheduler.dispatch import RESEND_S, ahead_in_intake
    from scheduler.intake import STALE_CLAIM_S
    return ahead_in_intake(store.intake_queue(RESEND_S, STALE_CLAIM_S), version_id)


def ahead_text(ahead: dict[str, int] | None) -> str:
    """What a queued version waits behind, in words ("2 versions ahead of it, 1 being
    built"); "" when it is not queued."""
    if ahead is None:
        return ""
    n = sum(ahead.values())
    if not n:
        return "next for a worker"
    doing = [f"{ahead[k]} being {what}" for k, what in (("building", "built"),
                                                        ("checking", "checked")) if ahead[k]]
    return ", ".join([f"{n} version{'s' if n != 1 else ''} ahead of it", *doing])


def my_versions(store, viewer: Viewer) -> list[dict]:
    rows = [r for r in store.bot_versions() if viewer.organiser or r.author == viewer.name]
    return [version_view(store, viewer, r.name, r.version) for r in reversed(rows)]


def build_log(store, viewer: Viewer, name: str, version: str) -> str:
    row = owned(store, viewer, name, version)
    st = store.version_state(row.id)
    return (st or {}).get("build_log") or ""


def archive(store, viewer: Viewer, name: str, version: str) -> bytes:
    from scheduler.registry.archives import stored_archive
    row = owned(store, viewer, name, version)
    return stored_archive(store, row.content_hash)


def seat_authors(store, match_id: str) -> tuple[object, list[str | None]]:
    """A match and the author of each seat's version (None: the organiser's or unknown)."""
    from scheduler.reports import bot_versions
    m = store.match(match_id)
    if m is None:
        raise Refused(404, f"no match {match_id!r}")
    refs = bot_versions(store, m.season)
    out = []
    for bot in m.seats:
        ref = refs.get(bot, {}).get("ref", "")
        name, _, version = ref.partition("@")
        row = store.bot_version(name, version) if version else None
        out.append(row.author if row is not None else None)
    return m, out


def own_seats(store, viewer: Viewer | None, match_id: str) -> set[int]:
    """The seats of a match whose logs the viewer may read."""
    if viewer is None:
        return set()
    m, authors = seat_authors(store, match_id)
    return {i for i, a in enumerate(authors) if viewer.organiser or a == viewer.name}


def seat_log(store, viewer: Viewer, match_id: str, seat: int) -> str:
    """The log a seat's bot wrote in a match: its author's (or the organiser's) only, once
    the match's record may be served."""
    if seat not in range(4):
        raise Refused(400, f"seat {seat}: expected 0 to 3")
    if seat not in own_seats(store, viewer, match_id):
        raise Refused(403, f"seat {seat} of match {match_id} is not your bot's: only its "
                      "author sees its log")
    if store.sealed_by(match_id):
        raise Refused(403, "the match's record is sealed until its mirror is played")
    record = store.record(match_id)
    if record is None:
        raise Refused(404, f"match {match_id} has no record yet")
    return (record.get("bot_logs") or {}).get(str(seat), "")


def hidden_seasons(store, viewer: Viewer | None) -> set[str]:
    """The scrimmage seasons the viewer is not in (all of them, to the public)."""
    if viewer is not None and viewer.organiser:
        return set()
    mine = {s["season"] for s in store.scrimmages_of(viewer.name)} if viewer else set()
    return store.scrimmage_seasons() - mine
