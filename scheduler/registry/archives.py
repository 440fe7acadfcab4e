"""Bot archives read within bounds: a .tar, .tar.gz, .tgz or .zip unpacked without leaving its
folder or growing past the size limit, and a version's canonical tar read back from the store,
verified against its content hash (the tar's sha256). Standard library only (the
participant's client carries it)."""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import stat
import tarfile
import tempfile
import unicodedata
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

from house import settings
from house.build_output import BUILD_OUTPUT
from scheduler.errors import ArenaError

ARCHIVE_LIMIT: int = settings.BOT_SIZE_LIMIT.default
"""The default limit of a version's uncompressed tar, in bytes."""
EXCLUDED = BUILD_OUTPUT
"""Folders a version's archive leaves out: what a build or a tool makes, and ``.git``
(``house.build_output.BUILD_OUTPUT``, which a bot's content hash leaves out too)."""
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".zip")
CHUNK = 1 << 16


class RegistryError(ArenaError, ValueError):
    """A bot version refused or not found; the message names the folder or archive, the path
    inside it and the reason."""


def size_limit() -> int:
    """The limit of a version's uncompressed tar: ``ARENA_BOT_SIZE_LIMIT`` bytes, else 64 MiB."""
    text = (settings.BOT_SIZE_LIMIT.text() or "").strip()
    if not text:
        return ARCHIVE_LIMIT
    if not text.isdigit() or int(text) <= 0:
        raise RegistryError(f"ARENA_BOT_SIZE_LIMIT={text!r}: expected a number of bytes")
    return int(text)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(CHUNK):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def is_archive(path: Path) -> bool:
    return path.name.lower().endswith(ARCHIVE_SUFFIXES)


def over_limit(label: Path, rel: str, size: int, limit: int) -> RegistryError:
    return RegistryError(f"{label}: {rel}: the archive grows past {size_text(size)}, over the "
                         f"limit of {size_text(limit)} (ARENA_BOT_SIZE_LIMIT)")


def size_text(n: float) -> str:
    """A size as people read it, in bytes, KiB, MiB or GiB (``8 MiB``, ``1.5 KiB``, ``812 B``):
    every size the pages and the command line show."""
    units = ("B", "KiB", "MiB", "GiB")
    step = 0
    while abs(n) >= 1024 and step < len(units) - 1:
        n, step = n / 1024, step + 1
    return f"{n} B" if step == 0 else f"{n:.1f}".rstrip("0").rstrip(".") + f" {units[step]}"


def quote(text: object, limit: int = 200) -> str:
    """Untrusted text for a message: escaped as Python writes it (no control, format or bidi
    character acts on the reader's terminal), cut at ``limit`` characters with its length."""
    text = str(text)
    if len(text) <= limit:
        return ascii(text)
    return f"{ascii(text[:limit])}... ({len(text)} characters)"


# -- unpacking ----------------------------------------------------------------------------
HEADER_LIMIT = 4096
"""The largest GNU long name or long link, or pax header, of an archive member, in bytes."""
ENTRY_LIMIT = 20_000
"""The most entries (files, folders and links, skipped ones too) an archive may hold: counted
as they are read, the archive is refused at the first one past it."""
DEPTH_LIMIT = 32
"""The most folders a path in an archive may go through (``a/b/c.py``: 2)."""
PATH_LIMIT = 1024
"""The longest path in an archive, in characters."""
_ODD = frozenset({"Cc", "Cf", "Zl", "Zp"})  # controls, format (zero-width, bidi), separators


def cut(name: str, limit: int = 200) -> str:
    """A member's name for a message: at most ``limit`` characters, then its length."""
    return name if len(name) <= limit else f"{name[:limit]}... ({len(name)} characters)"


def _safe_rel(name: str, label: Path) -> str | None:
    """An archive member's path, relative and inside, of printable characters; None for the
    archive's root."""
    if any(unicodedata.category(c) in _ODD for c in name):
        raise RegistryError(f"{label}: {quote(name)}: a name with control, invisible or "
                            "bidi characters in the archive; only printable names are kept")
    n = name.replace("\\", "/")
    if n.startswith("/") or re.match(r"[A-Za-z]:", n):
        raise RegistryError(f"{label}: {cut(name)}: an absolute path in the archive")
    parts = [p for p in n.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise RegistryError(f"{label}: {cut(name)}: a path leaving the archive's folder ('..')")
    return "/".join(parts) or None


class _LongHeader(Exception):
    """A long-name or pax header over ``HEADER_LIMIT``, refused before tarfile reads it."""


class _BoundedTarInfo(tarfile.TarInfo):
    """A member whose extended headers (GNU long name or link, pax) are at most
    ``HEADER_LIMIT`` bytes: a larger one is refused from its size, before it is read."""

    def _proc_member(self, tar):
        if self.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE,
                         tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE) and self.size > HEADER_LIMIT:
            kind = "pax" if self.type in (tarfile.XHDTYPE, tarfile.XGLTYPE,
                                          tarfile.SOLARIS_XHDTYPE) else "long-name"
            raise _LongHeader(f"a {kind} header of {self.size} bytes, over the limit of "
                              f"{HEADER_LIMIT} bytes")
        return super()._proc_member(tar)  # type: ignore[misc]  # tarfile's hook, unstubbed


class _Capped(io.RawIOBase):
    """The decompressed bytes of an archive, at most ``limit`` of them: a read past it raises
    ``over()`` (so a bomb is refused after ``limit`` bytes, whatever is skipped)."""

    def __init__(self, raw, limit: int, over) -> None:
        self.raw, self.limit, self.over, self.count = raw, limit, over, 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        want = self.limit + 1 - self.count if size is None or size < 0 else \
            min(size, self.limit + 1 - self.count)
        data = self.raw.read(max(want, 1))
        self.count += len(data)
        if self.count > self.limit:
            raise self.over(self.count)
        return data

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)


def _decompressed(f):
    """The archive file ``f`` read through its decompressor (by its magic bytes)."""
    import bz2
    import gzip
    import lzma
    head = f.read(6)
    f.seek(0)
    if head[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=f, mode="rb")
    if head[:3] == b"BZh":
        return bz2.BZ2File(f)
    if head == b"\xfd7zXZ\x00":
        return lzma.LZMAFile(f)
    return f


class Unpacker:
    """Writes archive members under ``dest``, refusing what could leave it and counting every
    member (512 bytes and its size, the skipped ones too) against ``limit``, and against
    ``entries`` (``ENTRY_LIMIT``); a path goes through at most ``depth`` folders
    (``DEPTH_LIMIT``) and has at most ``length`` characters (``PATH_LIMIT``). ``members``
    notes each one written (what the cache verifies against). Each folder a path goes
    through is checked and made once (``made``): unpacking costs as much as the entries."""

    def __init__(self, dest: Path, limit: int, label: Path, *, entries: int = ENTRY_LIMIT,
                 depth: int = DEPTH_LIMIT, length: int = PATH_LIMIT) -> None:
        self.dest, self.limit, self.label = dest, limit, label
        self.entries, self.depth, self.length = entries, depth, length
        self.total = 0
        self.count = 0  # entries read
        self.current = ""  # the last member read, for messages
        self.members: dict[str, dict] = {}
        self.made: set[str] = set()  # folders under dest made (or found) and not links
        dest.mkdir(parents=True, exist_ok=True)
        self.real_dest = os.path.realpath(dest)

    def over(self, size: int) -> RegistryError:
        return over_limit(self.label, self.current or "(its start)", size, self.limit)

    def counted(self, name: str) -> None:
        """One more entry read: refused past ``entries``."""
        self.count += 1
        if self.count > self.entries:
            raise RegistryError(f"{self.label}: {cut(name)}: more than {self.entries} entries "
                                f"in the archive; the limit is {self.entries} (leave out what "
                                "a build makes)")

    def bounded(self, rel: str) -> None:
        """A path at most ``depth`` folders deep and ``length`` characters long."""
        folders = rel.count("/")
        if folders > self.depth:
            raise RegistryError(f"{self.label}: {cut(rel)}: a path {folders} folders deep; the "
                                f"limit is {self.depth}")
        if len(rel) > self.length:
            raise RegistryError(f"{self.label}: {cut(rel)}: a path of {len(rel)} characters; "
                                f"the limit is {self.length}")

    def skip(self, name: str, size: int) -> None:
        """A member left out (an excluded folder's): counted all the same, before tarfile
        reads past its data."""
        self.total += 512 + max(size, 0)
        if self.total > self.limit:
            raise over_limit(self.label, cut(name), self.total, self.limit)

    def _place(self, rel: str) -> tuple[Path, bool]:
        """Where ``rel`` goes, its folders made, and whether a folder is there already (a
        file or a link there is removed). Each folder is checked (not a link) and made once,
        the first time a path goes through it (``made``)."""
        self.total += 512
        if self.total > self.limit:
            raise over_limit(self.label, cut(rel), self.total, self.limit)
        missing, folder = [], rel.rpartition("/")[0]
        while folder and folder not in self.made:
            missing.append(folder)
            folder = folder.rpartition("/")[0]
        for folder in reversed(missing):
            where = self.dest / folder
            if where.is_symlink():
                raise RegistryError(f"{self.label}: {cut(rel)}: a path through a symlink")
            where.mkdir(exist_ok=True)
            self.made.add(folder)
        path = self.dest / rel
        if rel in self.made:
            return path, True
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return path, False
        if stat.S_ISDIR(st.st_mode):
            return path, True
        path.unlink()
        return path, False

    def folder(self, rel: str) -> None:
        path, is_dir = self._place(rel)
        if not is_dir:
            path.mkdir()
        self.made.add(rel)
        self.members[rel] = {"type": "dir"}

    def file(self, rel: str, src: IO[bytes], executable: bool) -> None:
        path, is_dir = self._place(rel)
        if is_dir:
            raise RegistryError(f"{self.label}: {cut(rel)}: both a folder and a file in the "
                                "archive")
        h, size = hashlib.sha256(), 0
        with open(path, "wb") as out:
            while chunk := src.read(CHUNK):
                size += len(chunk)
                self.total += len(chunk)
                if self.total > self.limit:
                    raise over_limit(self.label, cut(rel), self.total, self.limit)
                h.update(chunk)
                out.write(chunk)
        os.chmod(path, 0o755 if executable else 0o644)
        self.members[rel] = {"type": "file", "size": size, "sha256": h.hexdigest(),
                             "executable": executable}

    def _inside(self, rel: str, target: str) -> bool:
        """The link ``rel`` -> ``target`` stays in ``dest``: by its text, and by the real path
        it resolves to on disk now (through the links already placed)."""
        inside = os.path.normpath(os.path.join(os.path.dirname(rel), target))
        if os.path.isabs(target) or inside == ".." or inside.startswith("../"):
            return False
        real = os.path.realpath(os.path.join(self.dest, os.path.dirname(rel), target))
        return real == self.real_dest or real.startswith(self.real_dest + os.sep)

    def link(self, rel: str, target: str) -> None:
        if len(target) > HEADER_LIMIT or any(unicodedata.category(c) in _ODD for c in target):
            raise RegistryError(f"{self.label}: {cut(rel)}: a symlink to {quote(target)}: "
                                "too long, or with control, invisible or bidi characters")
        if not self._inside(rel, target):
            raise RegistryError(f"{self.label}: {cut(rel)}: a symlink pointing outside the "
                                f"archive's folder (-> {cut(target)})")
        path, is_dir = self._place(rel)
        if is_dir:
            raise RegistryError(f"{self.label}: {cut(rel)}: both a folder and a link in the "
                                "archive")
        os.symlink(target, path)
        self.members[rel] = {"type": "link", "target": target}

    def links_stay_inside(self) -> None:
        """Every link placed, checked again once all are: a link placed later may have moved
        where an earlier one resolves (``a -> b/../x``, then ``b -> .``)."""
        for rel, m in self.members.items():
            if m["type"] == "link" and not self._inside(rel, m["target"]):
                raise RegistryError(f"{self.label}: {cut(rel)}: a symlink pointing outside "
                                    f"the archive's folder (-> {cut(m['target'])})")

    def survey(self, tar: tarfile.TarFile) -> None:
        """Every member's header read, nothing written: the entries counted and each path
        checked (``bounded``), so an archive past a bound is refused before a file is made."""
        while (m := tar.next()) is not None:
            tar.members.clear()  # type: ignore[attr-defined]  # TarFile's list, unstubbed
            self.counted(m.name)
            rel = _safe_rel(m.name, self.label)
            self.current = cut(m.name)
            if rel is not None and not set(rel.split("/")) & EXCLUDED:
                self.bounded(rel)
        self.count, self.current = 0, ""

    def tar(self, tar: tarfile.TarFile) -> None:
        while (m := tar.next()) is not None:
            # read as a stream: nothing kept per member (the list is missing from the stubs)
            tar.members.clear()  # type: ignore[attr-defined]
            self.counted(m.name)
            rel = _safe_rel(m.name, self.label)
            self.current = cut(m.name)
            if rel is None or set(rel.split("/")) & EXCLUDED:
                self.skip(m.name, m.size if m.isreg() else 0)
                continue
            self.bounded(rel)
            if m.isdir():
                self.folder(rel)
            elif m.isreg() and not m.issparse():
                src = tar.extractfile(m)
                assert src is not None  # a regular member always has its bytes
                self.file(rel, src, bool(m.mode & stat.S_IXUSR))
            elif m.issym():
                self.link(rel, m.linkname)
            elif m.islnk():
                raise RegistryError(f"{self.label}: {cut(m.name)}: a hard link in the archive")
            else:
                raise RegistryError(f"{self.label}: {cut(m.name)}: a special file (device, "
                                    "fifo or sparse file) in the archive")
        self.links_stay_inside()

    def zip(self, zf: zipfile.ZipFile) -> None:
        infos = zf.infolist()  # the zip's directory, read whole: checked before writing
        if len(infos) > self.entries:
            raise RegistryError(f"{self.label}: {len(infos)} entries in the archive; the limit "
                                f"is {self.entries} (leave out what a build makes)")
        for info in infos:
            rel = _safe_rel(info.filename, self.label)
            if rel is not None and not set(rel.split("/")) & EXCLUDED:
                self.bounded(rel)
        for info in infos:
            self.counted(info.filename)
            rel = _safe_rel(info.filename, self.label)
            self.current = cut(info.filename)
            if rel is None or set(rel.split("/")) & EXCLUDED:
                self.skip(info.filename, info.file_size)
                continue
            self.bounded(rel)
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if info.is_dir() or kind == stat.S_IFDIR:
                self.folder(rel)
            elif kind == stat.S_IFLNK:
                if info.file_size > HEADER_LIMIT:
                    raise RegistryError(f"{self.label}: {cut(info.filename)}: a symlink too "
                                        "long")
                self.link(rel, zf.read(info).decode("utf-8", "replace"))
            elif kind in (0, stat.S_IFREG):
                with zf.open(info) as src:
                    self.file(rel, src, bool(mode & stat.S_IXUSR))
            else:
                raise RegistryError(f"{self.label}: {cut(info.filename)}: a special file in "
                                    "the archive")
        self.links_stay_inside()


def unpack_archive(archive: Path, dest: Path, limit: int | None = None, *,
                   entries: int = ENTRY_LIMIT, depth: int = DEPTH_LIMIT,
                   length: int = PATH_LIMIT) -> Path:
    """Unpack a .tar, .tar.gz, .tgz or .zip into ``dest`` safely: no absolute paths, no
    ``..``, no names with control, invisible or bidi characters, no links leaving it (by
    their text and by the real path they resolve to), no hard links or special files, and at
    most ``limit`` bytes: every member counts, skipped ones too, and a tar is read as one
    stream through a reader that returns at most ``limit`` decompressed bytes, its long-name
    and pax headers at most ``HEADER_LIMIT`` each. At most ``entries`` members (refused at
    the first past it), each path at most ``depth`` folders deep and ``length``
    characters long: a tar's headers are all read first (``Unpacker.survey``), so one past
    these bounds is refused before anything is written. Returns the bot's folder: ``dest``,
    or the archive's one top-level folder when the manifest is in it."""
    archive, dest = Path(archive), Path(dest)
    limit = size_limit() if limit is None else limit
    if not is_archive(archive):
        raise RegistryError(f"{archive}: not an archive ({', '.join(ARCHIVE_SUFFIXES)})")
    u = Unpacker(dest, limit, archive, entries=entries, depth=depth, length=length)
    try:
        if archive.name.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                u.zip(zf)
        else:  # read twice as a stream: surveyed, then unpacked
            for read in (u.survey, u.tar):
                with open(archive, "rb") as f, _decompressed(f) as raw, \
                        tarfile.open(fileobj=_Capped(raw, limit, u.over), mode="r|",
                                     tarinfo=_BoundedTarInfo) as tar:
                    read(tar)
    except _LongHeader as e:
        where = f"after {u.current}" if u.current else "at its start"
        raise RegistryError(f"{archive}: {where}: {e}; names are at most {HEADER_LIMIT} "
                            "bytes") from None
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, RuntimeError,
            NotImplementedError) as e:
        raise RegistryError(f"{archive}: not a readable archive ({quote(e)})") from None
    except OSError as e:
        raise RegistryError(f"{archive}: cannot be unpacked ({quote(e)})") from None
    if not (dest / "bot.toml").exists():
        top = [p for p in dest.iterdir()]
        if len(top) == 1 and top[0].is_dir() and not top[0].is_symlink() \
                and (top[0] / "bot.toml").is_file():
            return top[0]
    return dest


@contextmanager
def opened(source: Path, limit: int | None = None) -> Iterator[Path]:
    """The bot's folder of ``source``: the folder itself, or the archive unpacked once
    (``unpack_archive``) into a temporary folder, removed afterwards."""
    source = Path(source)
    if source.is_dir():
        yield source
        return
    if not source.exists():
        raise RegistryError(f"{source}: no such folder or archive")
    if not (source.is_file() and is_archive(source)):
        raise RegistryError(f"{source}: not a folder or an archive "
                            f"({', '.join(ARCHIVE_SUFFIXES)})")
    with scratch("arena-submit-") as tmp:
        yield unpack_archive(source, tmp / "src", limit)


@contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A temporary folder, removed afterwards with all under it however deep
    (``remove_tree``), whatever happened in it."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield tmp
    finally:
        try:
            remove_tree(tmp)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)


def remove_tree(path: Path) -> None:
    """Remove the folder ``path`` and everything under it, never following a link, one
    folder at a time with one descriptor open: no recursion (``shutil.rmtree`` up to Python
    3.12, and so ``tempfile.TemporaryDirectory``, recurses once per folder level and fails
    past Python's recursion limit) and no path longer than a name."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return
    above: list[tuple[str, list[str]]] = []  # per level: the folder's name, its parent's rest
    try:
        rest = _clear(fd)
        while True:
            if rest:
                name = rest.pop()
                inner = os.open(name, flags, dir_fd=fd)
                os.close(fd)
                fd = inner
                above.append((name, rest))
                rest = _clear(fd)
            elif above:
                name, rest = above.pop()
                parent = os.open("..", flags, dir_fd=fd)
                os.close(fd)
                fd = parent
                os.rmdir(name, dir_fd=fd)
            else:
                break
    finally:
        os.close(fd)
    os.rmdir(path)


def _clear(fd: int) -> list[str]:
    """Unlink every entry of the open folder ``fd`` but its folders; their names."""
    folders = []
    with os.scandir(fd) as entries:
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                folders.append(e.name)
            else:
                os.unlink(e.name, dir_fd=fd)
    return folders


def stored_archive(store, content_hash: str) -> bytes:
    """The canonical tar of ``content_hash`` from the store, verified."""
    data = store.registry.archive(content_hash)
    if data is None:
        raise RegistryError(f"{content_hash}: no such bot version archive in the store")
    try:
        tar = zlib.decompress(data)
    except zlib.error as e:
        raise RegistryError(f"{content_hash}: the stored archive cannot be read ({e})") \
            from None
    if sha256(tar) != content_hash:
        raise RegistryError(f"{content_hash}: the stored archive's content hash is "
                            f"{sha256(tar)}: it is corrupt; submit the version again")
    return tar
