"""An upload, from its author's limits to a queued version: the uploads being read or
unpacked at once (``UploadSlots``), the refused uploads counted against their author
(``within_refused_uploads``, ``count_refused_upload``) and the upload taken (``take_upload``).
The archive is unpacked, packed and checked in a process of its own (``unpack_elsewhere``),
never on the service's event loop: bounded in time and memory, touching no store."""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scheduler.errors import Refusal, Refused
from scheduler.registry.archives import RegistryError, size_text
from scheduler.registry.submissions import store_prepared
from scheduler.service.config import ServiceConfig
from scheduler.service.limits import DAY_S, Limits, when, within
from scheduler.service.versions import version_view
from scheduler.service.visibility import Viewer
from scheduler.states import VersionState


def why_refused(refused: Refused) -> str:
    """A refused upload as the audit log tells it (its kind, and what its author was told)."""
    return f"{refused.kind.value} {refused.detail}"


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
                address: str | None = None, filename: str = "upload",
                told: Callable[[Refused], str] = why_refused) -> dict:
    """Store an uploaded archive as the viewer's version, ``queued`` for a worker's build and
    check; its view (``version_view``). It blocks while the archive is unpacked elsewhere
    (``unpack_elsewhere``): call it from a worker thread, never on the event loop. A refusal
    of the upload itself (malformed, too large; a failure), not of a limit, counts against
    ``refused_uploads``, audited as ``told`` tells it."""
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
            got = store_prepared(store, prepared, Path(label), author=viewer.name,
                                 state=VersionState.QUEUED)
        except RegistryError as e:
            raise Refused(Refusal.MALFORMED, str(e)) from None
    except Refused as e:
        if e.kind is not Refusal.LIMITED:
            count_refused_upload(store, config, viewer, told(e), address)
        raise
    v = got.version
    store.audit.write("submit", actor=viewer.name, subject=v.ref,
                      detail=("already stored" if got.already else f"{v.content_hash[:12]}, "
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
