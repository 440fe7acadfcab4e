"""The local cache of fetched versions (``ARENA_BOT_CACHE``, default
``~/.cache/shengji-arena/bots``; at most ``ARENA_BOT_CACHE_MB``, default 2048, least recently
used versions evicted first): ``<hash>/`` the unpacked folder, read-only; ``<hash>.tar`` the
canonical tar; ``<hash>.json`` the marker, written last, with the hash and each member's type,
size and sha256, against which every fetch verifies the cached copy; ``<hash>-built/`` the
version built (``scheduler.registry.versions``), whose mark (``BUILT_MARK``) holds its bytes.

A version's size in the budget is its fetched copy's and its built folder's; its last use is
its last fetch (every match fetches its versions) or build. A version is never evicted while a
match plays it (``using``), while it is fetched or while it is built (their locks)."""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import shutil
import stat
import tarfile
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from house import settings
from referee.seats.build import BUILT_MARK, cache_dir, failed_log_path, tree_bytes

from scheduler.registry.archives import (RegistryError, Unpacker, sha256_file,
                                         stored_archive)

CACHE_MB: int = settings.BOT_CACHE_MB.default
_HASH = re.compile(r"[0-9a-f]{64}")
BUILT = "-built"
"""A version's built folder in the cache: ``<hash>-built``."""
_FAILED_LOG = failed_log_path(Path(BUILT)).name
"""What the whole log of a version's failed build is named after its hash."""


def default_cache_dir() -> Path:
    """This machine's bot cache (``ARENA_BOT_CACHE``): the one ``arena match`` builds into."""
    return cache_dir()


def cache_budget() -> int:
    """The cache's size in bytes: ``ARENA_BOT_CACHE_MB`` (default 2048) MiB."""
    text = (settings.BOT_CACHE_MB.text() or "").strip() or str(CACHE_MB)
    try:
        mb = float(text)
    except ValueError:
        raise RegistryError(f"ARENA_BOT_CACHE_MB={text!r}: expected a number of MiB") from None
    return int(mb * (1 << 20))


@contextmanager
def _flock(path: Path, mode: int = fcntl.LOCK_EX, wait: bool = True) -> Iterator[bool]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, mode if wait else mode | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _rmtree(path: Path) -> None:
    """Remove ``path``, read-only folders too."""
    if not os.path.lexists(path):
        return
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        return
    for where, _, _ in os.walk(path):
        os.chmod(where, 0o755)
    shutil.rmtree(path)


def _paths(cache: Path, h: str) -> tuple[Path, Path, Path]:
    return cache / h, cache / f"{h}.tar", cache / f"{h}.json"


def _drop(cache: Path, h: str) -> None:
    folder, tar, marker = _paths(cache, h)
    for p in (marker, tar, folder, *cache.glob(f".tmp-{h}-*")):
        _rmtree(p)


def _verified(cache: Path, h: str) -> bool:
    """The cached copy of ``h`` is whole: its marker, its tar's hash, and every unpacked
    entry as the marker says (nothing more)."""
    folder, tar, marker = _paths(cache, h)
    try:
        info = json.loads(marker.read_text(encoding="utf-8"))
        members = info["members"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if info.get("content_hash") != h or sha256_file(tar) != h:
        return False
    found: set[str] = set()
    for where, dirs, names in os.walk(folder):
        base = Path(where).relative_to(folder)
        found.update(str(base / n) for n in dirs + names)
    if found != set(members):
        return False
    for rel, m in members.items():
        p = folder / rel
        try:
            st = os.lstat(p)
        except OSError:
            return False
        if m["type"] == "dir":
            ok = stat.S_ISDIR(st.st_mode)
        elif m["type"] == "link":
            ok = stat.S_ISLNK(st.st_mode) and os.readlink(p) == m["target"]
        else:
            ok = stat.S_ISREG(st.st_mode) and st.st_size == m["size"] \
                and sha256_file(p) == m["sha256"]
        if not ok:
            return False
    return True


def _fill(store, cache: Path, h: str) -> None:
    """Unpack ``h`` from the store into the cache: in a temporary folder, made read-only,
    then renamed into place; the marker last."""
    data = stored_archive(store, h)
    folder, tar_path, marker = _paths(cache, h)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{h}-", dir=cache))
    try:
        u = Unpacker(tmp / "d", len(data), Path(f"{h}.tar"))
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            u.tar(tar)
        (tmp / "t").write_bytes(data)
        size = len(data)
        for rel, m in u.members.items():
            p = tmp / "d" / rel
            if m["type"] == "file":
                os.chmod(p, 0o555 if m["executable"] else 0o444)
                size += m["size"]
        for rel in sorted((r for r, m in u.members.items() if m["type"] == "dir"),
                          reverse=True):
            os.chmod(tmp / "d" / rel, 0o555)
        os.chmod(tmp / "d", 0o555)
        os.rename(tmp / "d", folder)
        os.rename(tmp / "t", tar_path)
        (tmp / "m").write_text(json.dumps({"content_hash": h, "bytes": size,
                                           "members": u.members}), encoding="utf-8")
        os.rename(tmp / "m", marker)
    finally:
        _rmtree(tmp)


def built_path(cache: Path, h: str) -> Path:
    """Where version ``h`` is built in ``cache``."""
    return cache / f"{h}{BUILT}"


def _built_entry(folder: Path) -> tuple[int, int] | None:
    """A built folder's last build time and bytes (from its mark; a folder built before marks
    held their bytes is counted); None while it is not whole."""
    mark = folder / BUILT_MARK
    try:
        at = mark.stat().st_mtime_ns
        text = mark.read_text(encoding="utf-8").strip()
        return at, int(text) if text.isdigit() else tree_bytes(folder)
    except OSError:
        return None


def _entries(cache: Path) -> dict[str, tuple[int, int]]:
    """Every version the cache holds: its last use and its bytes, fetched and built (or the
    whole log of its failed build)."""
    entries: dict[str, tuple[int, int]] = {}
    for marker in cache.glob("*.json"):
        if not _HASH.fullmatch(marker.stem):
            continue
        try:
            entries[marker.stem] = (marker.stat().st_mtime_ns, int(json.loads(
                marker.read_text(encoding="utf-8"))["bytes"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    for folder in cache.glob(f"*{BUILT}"):
        h = folder.name[:-len(BUILT)]
        if not _HASH.fullmatch(h) or (found := _built_entry(folder)) is None:
            continue
        at, size = entries.get(h, (0, 0))
        entries[h] = (max(at, found[0]), size + found[1])
    for log in cache.glob(f"*{_FAILED_LOG}"):
        h = log.name[:-len(_FAILED_LOG)]
        try:
            st = log.stat()
        except OSError:
            continue
        if _HASH.fullmatch(h):
            at, size = entries.get(h, (0, 0))
            entries[h] = (max(at, st.st_mtime_ns), size + st.st_size)
    return entries


def _drop_version(cache: Path, h: str) -> None:
    """Remove version ``h`` from the cache: fetched, built, and its failed build's log."""
    _drop(cache, h)
    built = built_path(cache, h)
    for p in (built, cache / f".{built.name}.tmp", failed_log_path(built)):
        _rmtree(p)


def _evict(cache: Path, keep: str | None, budget: int) -> list[str]:
    """Drop the least recently used versions but ``keep`` until the cache fits ``budget``;
    one being fetched, built or used elsewhere (its lock held) stays."""
    entries = _entries(cache)
    total = sum(size for _, size in entries.values())
    dropped = []
    for (_, size), h in sorted((e, h) for h, e in entries.items()):
        if total <= budget:
            break
        if h == keep:
            continue
        with _flock(cache / f"{h}.lock", wait=False) as free, \
                _flock(cache / f"{h}.use", wait=False) as idle, \
                _flock(cache / f".{h}{BUILT}.lock", wait=False) as unbuilt:
            if free and idle and unbuilt:
                _drop_version(cache, h)
                total -= size
                dropped.append(h)
    return dropped


def evict(keep: str | None = None, cache_dir: Path | None = None) -> list[str]:
    """Bring the cache within its budget (``cache_budget()``), least recently used versions
    first, never ``keep`` nor one in use; the versions dropped. After a build, whose folder the
    budget now counts."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if not cache.is_dir():
        return []
    return _evict(cache, keep, cache_budget())


def fetch(store, content_hash: str, cache_dir: Path | None = None) -> Path:
    """The folder of version ``content_hash`` in the local cache, read-only: unpacked from
    the store once (verified against the hash), verified again on every fetch (a corrupted
    copy is removed and fetched anew). Safe for several processes at once."""
    if not isinstance(content_hash, str) or not _HASH.fullmatch(content_hash):
        raise RegistryError(f"{content_hash!r}: not a bot version's content hash (64 hex "
                            "digits)")
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    folder, _, marker = _paths(cache, content_hash)
    with _flock(cache / f"{content_hash}.lock"):
        if not _verified(cache, content_hash):
            _drop(cache, content_hash)
            _fill(store, cache, content_hash)
        now = time.time_ns()  # finer than a file's own times: the order of use is kept
        os.utime(marker, ns=(now, now))
        _evict(cache, content_hash, cache_budget())
    return folder


@contextmanager
def using(content_hash: str, cache_dir: Path | None = None) -> Iterator[None]:
    """While a bot plays from its fetched folder: eviction leaves that version alone."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    with _flock(cache / f"{content_hash}.use", fcntl.LOCK_SH):
        yield
