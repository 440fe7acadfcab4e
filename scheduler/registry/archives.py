"""The bot registry: immutable bot versions that any worker can fetch and run.

A version is a bot's folder stored under ``name@version`` as a canonical tar: entries sorted by
path, every time and owner zeroed, modes normalised (0o755 for folders and files the owner may
run, else 0o644), without ``node_modules``, ``build``, ``__pycache__`` and ``.git`` (rebuilt or
unused where the bot runs). Its content hash (the tar's sha256) names the bytes: a season pins
it (``bots.version_hash``), a worker fetches it. A version never changes: the same name@version
with other content is refused; the same content under another version shares the archive.

Archives are blobs in the store (``LargeBinary``: bytea on PostgreSQL, BLOB on SQLite), not
PostgreSQL large objects: a version's row and its archive are written in the same transaction
as everything else, the same code runs on both databases, and an archive is bounded by the size
limit (64 MiB uncompressed by default, ``ARENA_BOT_SIZE_LIMIT`` in bytes), well within a column.

A worker keeps fetched versions in a local cache (``ARENA_BOT_CACHE``, default
``~/.cache/shengji-arena/bots``; at most ``ARENA_BOT_CACHE_MB``, default 2048, least recently
used versions evicted first): ``<hash>/`` the unpacked folder, read-only; ``<hash>.tar`` the
canonical tar; ``<hash>.json`` the marker, written last, with the hash and each member's type,
size and sha256, against which every fetch verifies the cached copy. ``fetch`` returns the
unpacked folder and builds nothing: a version whose manifest says how to build it is built
from that folder into a place of its own.
"""

from __future__ import annotations

import dataclasses
import fcntl
import functools
import hashlib
import hmac
import io
import json
import os
import re
import secrets
import shutil
import stat
import tarfile
import tempfile
import time
import tomllib
import unicodedata
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from referee.seats.manifest import Manifest, ManifestError, load_manifest

from scheduler.store.rows import BotVersionRow

ARCHIVE_LIMIT = 64 << 20
"""The default limit of a version's uncompressed tar, in bytes."""
CACHE_MB = 2048
EXCLUDED = frozenset({"node_modules", "build", "__pycache__", ".git"})
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".zip")
_HASH = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1 << 16


class RegistryError(ValueError):
    """A bot version refused or not found; the message names the folder or archive, the path
    inside it and the reason."""


def size_limit() -> int:
    """The limit of a version's uncompressed tar: ``ARENA_BOT_SIZE_LIMIT`` bytes, else 64 MiB."""
    text = os.environ.get("ARENA_BOT_SIZE_LIMIT", "").strip()
    if not text:
        return ARCHIVE_LIMIT
    if not text.isdigit() or int(text) <= 0:
        raise RegistryError(f"ARENA_BOT_SIZE_LIMIT={text!r}: expected a number of bytes")
    return int(text)


def default_cache_dir() -> Path:
    return Path(os.environ.get("ARENA_BOT_CACHE")
                or Path.home() / ".cache" / "shengji-arena" / "bots")


def cache_budget() -> int:
    """The cache's size in bytes: ``ARENA_BOT_CACHE_MB`` (default 2048) MiB."""
    text = os.environ.get("ARENA_BOT_CACHE_MB", "").strip() or str(CACHE_MB)
    try:
        mb = float(text)
    except ValueError:
        raise RegistryError(f"ARENA_BOT_CACHE_MB={text!r}: expected a number of MiB") from None
    return int(mb * (1 << 20))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_file(path: Path) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def is_archive(path: Path) -> bool:
    return path.name.lower().endswith(ARCHIVE_SUFFIXES)


# -- packing ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Packed:
    """A bot folder as a canonical tar: its bytes, sha256, entries that are not folders and
    size in bytes."""
    data: bytes
    content_hash: str
    files: int
    size: int


def pack(folder: Path, limit: int | None = None) -> Packed:
    """``folder`` (or an archive: .tar, .tar.gz, .tgz, .zip) as a canonical tar of at most
    ``limit`` bytes (default ``size_limit()``)."""
    src = Path(folder)
    if src.is_file() and is_archive(src):
        with tempfile.TemporaryDirectory(prefix="arena-pack-") as tmp:
            return _pack_folder(unpack_archive(src, Path(tmp) / "src", limit), limit, src)
    if not src.is_dir():
        raise RegistryError(f"{src}: not a folder or an archive ({', '.join(ARCHIVE_SUFFIXES)})")
    return _pack_folder(src, limit, src)


def _entries(root: Path, label: Path) -> list[tuple[str, Path, os.stat_result]]:
    """Every entry under ``root`` but the excluded folders, by path."""
    out = []
    pending = [(root, "")]
    while pending:
        where, prefix = pending.pop()
        try:
            items = list(os.scandir(where))
        except OSError as e:
            raise RegistryError(f"{label}: {prefix or '.'}: cannot be read ({e.strerror})") \
                from None
        for item in items:
            rel = prefix + item.name
            is_dir = item.is_dir(follow_symlinks=False)
            if item.name == ".git" or (is_dir and item.name in EXCLUDED):
                continue
            out.append((rel, Path(item.path), item.stat(follow_symlinks=False)))
            if is_dir:
                pending.append((Path(item.path), rel + "/"))
    return sorted(out, key=lambda e: e[0])


def _over(label: Path, rel: str, size: int, limit: int) -> RegistryError:
    return RegistryError(f"{label}: {rel}: the archive grows past {size} bytes, over the limit "
                         f"of {limit} bytes (ARENA_BOT_SIZE_LIMIT)")


def _pack_folder(root: Path, limit: int | None, label: Path) -> Packed:
    limit = size_limit() if limit is None else limit
    real_root = os.path.realpath(root)
    buf = io.BytesIO()
    files = 0
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel, path, st in _entries(root, label):
            info = tarfile.TarInfo(rel)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            data = None
            if stat.S_ISDIR(st.st_mode):
                info.type, info.mode = tarfile.DIRTYPE, 0o755
            elif stat.S_ISLNK(st.st_mode):
                target = os.readlink(path)
                if os.path.isabs(target):
                    raise RegistryError(f"{label}: {rel}: a symlink to an absolute path "
                                        f"({target}); only links inside the folder are kept")
                real = os.path.realpath(path)
                if real != real_root and not real.startswith(real_root + os.sep):
                    raise RegistryError(f"{label}: {rel}: a symlink pointing outside the folder "
                                        f"(-> {target})")
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, target, 0o644
                files += 1
            elif stat.S_ISREG(st.st_mode):
                if buf.tell() + st.st_size > limit:
                    raise _over(label, rel, buf.tell() + st.st_size, limit)
                try:
                    data = path.read_bytes()
                except OSError as e:
                    raise RegistryError(f"{label}: {rel}: cannot be read ({e.strerror})") \
                        from None
                info.size = len(data)
                info.mode = 0o755 if st.st_mode & stat.S_IXUSR else 0o644
                files += 1
            else:
                raise RegistryError(f"{label}: {rel}: a special file (device, fifo or socket); "
                                    "only files, folders and links inside the folder are kept")
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
            if buf.tell() > limit:
                raise _over(label, rel, buf.tell(), limit)
    data = buf.getvalue()
    if len(data) > limit:
        raise _over(label, "(the whole folder)", len(data), limit)
    return Packed(data, _sha256(data), files, len(data))


# -- unpacking ----------------------------------------------------------------------------
HEADER_LIMIT = 4096
"""The largest GNU long name or long link, or pax header, of an archive member, in bytes."""
_ODD = frozenset({"Cc", "Cf", "Zl", "Zp"})  # controls, format (zero-width, bidi), separators


def _cut(name: str, limit: int = 200) -> str:
    """A member's name for a message: at most ``limit`` characters, then its length."""
    return name if len(name) <= limit else f"{name[:limit]}... ({len(name)} characters)"


def _safe_rel(name: str, label: Path) -> str | None:
    """An archive member's path, relative and inside, of printable characters; None for the
    archive's root."""
    if any(unicodedata.category(c) in _ODD for c in name):
        raise RegistryError(f"{label}: {_quote(name)}: a name with control, invisible or "
                            "bidi characters in the archive; only printable names are kept")
    n = name.replace("\\", "/")
    if n.startswith("/") or re.match(r"[A-Za-z]:", n):
        raise RegistryError(f"{label}: {_cut(name)}: an absolute path in the archive")
    parts = [p for p in n.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise RegistryError(f"{label}: {_cut(name)}: a path leaving the archive's folder ('..')")
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
        return super()._proc_member(tar)


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


class _Unpacker:
    """Writes archive members under ``dest``, refusing what could leave it and counting every
    member (512 bytes and its size, the skipped ones too) against ``limit``; ``members`` notes
    each one written (what the cache verifies against)."""

    def __init__(self, dest: Path, limit: int, label: Path) -> None:
        self.dest, self.limit, self.label = dest, limit, label
        self.total = 0
        self.current = ""  # the last member read, for messages
        self.members: dict[str, dict] = {}
        dest.mkdir(parents=True, exist_ok=True)
        self.real_dest = os.path.realpath(dest)

    def over(self, size: int) -> RegistryError:
        return _over(self.label, self.current or "(its start)", size, self.limit)

    def skip(self, name: str, size: int) -> None:
        """A member left out (an excluded folder's): counted all the same, before tarfile
        reads past its data."""
        self.total += 512 + max(size, 0)
        if self.total > self.limit:
            raise _over(self.label, _cut(name), self.total, self.limit)

    def _place(self, rel: str) -> Path:
        self.total += 512
        if self.total > self.limit:
            raise _over(self.label, _cut(rel), self.total, self.limit)
        where = self.dest
        for part in rel.split("/")[:-1]:
            where = where / part
            if where.is_symlink():
                raise RegistryError(f"{self.label}: {_cut(rel)}: a path through a symlink")
            where.mkdir(exist_ok=True)
        path = self.dest / rel
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            path.unlink()
        return path

    def folder(self, rel: str) -> None:
        path = self._place(rel)
        if not path.is_dir():
            path.mkdir()
        self.members[rel] = {"type": "dir"}

    def file(self, rel: str, src: io.BufferedIOBase, executable: bool) -> None:
        path = self._place(rel)
        if path.is_dir():
            raise RegistryError(f"{self.label}: {_cut(rel)}: both a folder and a file in the "
                                "archive")
        h, size = hashlib.sha256(), 0
        with open(path, "wb") as out:
            while chunk := src.read(_CHUNK):
                size += len(chunk)
                self.total += len(chunk)
                if self.total > self.limit:
                    raise _over(self.label, _cut(rel), self.total, self.limit)
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
            raise RegistryError(f"{self.label}: {_cut(rel)}: a symlink to {_quote(target)}: "
                                "too long, or with control, invisible or bidi characters")
        if not self._inside(rel, target):
            raise RegistryError(f"{self.label}: {_cut(rel)}: a symlink pointing outside the "
                                f"archive's folder (-> {_cut(target)})")
        path = self._place(rel)
        if path.is_dir():
            raise RegistryError(f"{self.label}: {_cut(rel)}: both a folder and a link in the "
                                "archive")
        os.symlink(target, path)
        self.members[rel] = {"type": "link", "target": target}

    def links_stay_inside(self) -> None:
        """Every link placed, checked again once all are: a link placed later may have moved
        where an earlier one resolves (``a -> b/../x``, then ``b -> .``)."""
        for rel, m in self.members.items():
            if m["type"] == "link" and not self._inside(rel, m["target"]):
                raise RegistryError(f"{self.label}: {_cut(rel)}: a symlink pointing outside "
                                    f"the archive's folder (-> {_cut(m['target'])})")

    def tar(self, tar: tarfile.TarFile) -> None:
        while (m := tar.next()) is not None:
            tar.members.clear()  # read as a stream: nothing kept per member
            rel = _safe_rel(m.name, self.label)
            self.current = _cut(m.name)
            if rel is None or set(rel.split("/")) & EXCLUDED:
                self.skip(m.name, m.size if m.isreg() else 0)
                continue
            if m.isdir():
                self.folder(rel)
            elif m.isreg() and not m.issparse():
                self.file(rel, tar.extractfile(m), bool(m.mode & stat.S_IXUSR))
            elif m.issym():
                self.link(rel, m.linkname)
            elif m.islnk():
                raise RegistryError(f"{self.label}: {_cut(m.name)}: a hard link in the archive")
            else:
                raise RegistryError(f"{self.label}: {_cut(m.name)}: a special file (device, "
                                    "fifo or sparse file) in the archive")
        self.links_stay_inside()

    def zip(self, zf: zipfile.ZipFile) -> None:
        for info in zf.infolist():
            rel = _safe_rel(info.filename, self.label)
            self.current = _cut(info.filename)
            if rel is None or set(rel.split("/")) & EXCLUDED:
                self.skip(info.filename, info.file_size)
                continue
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if info.is_dir() or kind == stat.S_IFDIR:
                self.folder(rel)
            elif kind == stat.S_IFLNK:
                if info.file_size > HEADER_LIMIT:
                    raise RegistryError(f"{self.label}: {_cut(info.filename)}: a symlink too "
                                        "long")
                self.link(rel, zf.read(info).decode("utf-8", "replace"))
            elif kind in (0, stat.S_IFREG):
                with zf.open(info) as src:
                    self.file(rel, src, bool(mode & stat.S_IXUSR))
            else:
                raise RegistryError(f"{self.label}: {_cut(info.filename)}: a special file in "
                                    "the archive")
        self.links_stay_inside()


def unpack_archive(archive: Path, dest: Path, limit: int | None = None) -> Path:
    """Unpack a .tar, .tar.gz, .tgz or .zip into ``dest`` safely: no absolute paths, no
    ``..``, no names with control, invisible or bidi characters, no links leaving it (by
    their text and by the real path they resolve to), no hard links or special files, and at
    most ``limit`` bytes: every member counts, skipped ones too, and a tar is read as one
    stream through a reader that returns at most ``limit`` decompressed bytes, its long-name
    and pax headers at most ``HEADER_LIMIT`` each. Returns the bot's folder: ``dest``, or the
    archive's one top-level folder when the manifest is in it."""
    archive, dest = Path(archive), Path(dest)
    limit = size_limit() if limit is None else limit
    if not is_archive(archive):
        raise RegistryError(f"{archive}: not an archive ({', '.join(ARCHIVE_SUFFIXES)})")
    u = _Unpacker(dest, limit, archive)
    try:
        if archive.name.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                u.zip(zf)
        else:
            with open(archive, "rb") as f, _decompressed(f) as raw, \
                    tarfile.open(fileobj=_Capped(raw, limit, u.over), mode="r|",
                                 tarinfo=_BoundedTarInfo) as tar:
                u.tar(tar)
    except _LongHeader as e:
        where = f"after {u.current}" if u.current else "at its start"
        raise RegistryError(f"{archive}: {where}: {e}; names are at most {HEADER_LIMIT} "
                            "bytes") from None
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, RuntimeError,
            NotImplementedError) as e:
        raise RegistryError(f"{archive}: not a readable archive ({_quote(e)})") from None
    except OSError as e:
        raise RegistryError(f"{archive}: cannot be unpacked ({_quote(e)})") from None
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
    with tempfile.TemporaryDirectory(prefix="arena-submit-") as tmp:
        yield unpack_archive(source, Path(tmp) / "src", limit)


# -- names --------------------------------------------------------------------------------
NAME_RULE = "1 to 64 ASCII letters, digits, '.', '_' or '-', beginning with a letter or a digit"
VERSION_RULE = ("1 to 64 ASCII letters, digits, '.', '_', '-' or '+', beginning with a letter or "
                "a digit")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")
_ESCAPE = re.compile(r"(?:\x1b\[|\x9b)([0-9;:<=>?]*)[ -/]*[@-~]"     # CSI (colours, SGR)
                     r"|(?:\x1b[]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*"
                     r"(?:\x07|\x1b\\|\x9c)?"                           # OSC, DCS and kin
                     r"|\x1b[ -/]*[0-~]")                              # two-character escapes
_RLO, _ENDS_OVERRIDE = "\u202e", "\u202c\u2069"


def _quote(text: object, limit: int = 200) -> str:
    """Untrusted text for a message: escaped as Python writes it (no control, format or bidi
    character acts on the reader's terminal), cut at ``limit`` characters with its length."""
    text = str(text)
    if len(text) <= limit:
        return ascii(text)
    return f"{ascii(text[:limit])}... ({len(text)} characters)"


def _visible(text: str) -> tuple[str, ...]:
    """What a terminal shows of ``text``: escape sequences dropped and the text an SGR 8
    ("conceal") hides until SGR 28 or 0, control and format characters (Cc, Cf: zero-width,
    bidi) dropped. Where a right-to-left override is present, also the text as it is shown
    (each overridden run reversed) and the whole of it reversed."""
    runs: list[tuple[bool, list[str]]] = [(False, [])]
    hidden, i = False, 0
    while i < len(text):
        m = _ESCAPE.match(text, i)
        if m:
            if m.group(1) is not None and m.group(0).endswith("m"):
                for code in re.split("[;:]", m.group(1)):
                    if code == "8":
                        hidden = True
                    elif code in ("28", "0", "00", ""):
                        hidden = False
            i = m.end()
            continue
        ch, i = text[i], i + 1
        if ch == _RLO or ch in _ENDS_OVERRIDE:
            runs.append((ch == _RLO, []))
        elif not hidden and unicodedata.category(ch) not in ("Cc", "Cf"):
            runs[-1][1].append(ch)
    plain = "".join("".join(chars) for _, chars in runs)
    if _RLO not in text:
        return (plain,)
    shown = "".join("".join(reversed(chars)) if rtl else "".join(chars) for rtl, chars in runs)
    return tuple(dict.fromkeys((plain, shown, plain[::-1])))


@functools.cache
def _prototypes() -> dict[str, str]:
    """Unicode TR39's confusables as a map from a character to its prototype, from the data
    ``confusable_homoglyphs`` ships (each character's homoglyphs): a character listed with one
    homoglyph maps to it; of two that list only each other, the one that is not a single
    character (a prototype may be several) or else the lower code point is the prototype."""
    from confusable_homoglyphs.confusables import confusables_data
    graph = {k.replace("\u200e", ""): [h["c"].replace("\u200e", "") for h in v]
             for k, v in confusables_data.items()}
    out: dict[str, str] = {}
    for char, glyphs in graph.items():
        if len(char) != 1 or len(glyphs) != 1:
            continue
        target = glyphs[0]
        back = graph.get(target, [])
        if back == [char] and len(target) == 1 and target > char:
            continue  # a pair of two single characters: the lower one is the prototype
        out[char] = target
    for _ in range(3):  # a prototype whose characters map on: to the end of the chain
        out = {k: "".join(out.get(c, c) for c in v) for k, v in out.items()}
    return out


@functools.lru_cache(maxsize=4096)
def skeletons(name: str) -> frozenset[str]:
    """The forms ``name`` is compared by: its visible text (``_visible``), NFKC, case-folded,
    then its confusable skeleton (Unicode TR39: NFD, each character by its prototype, NFD),
    case-folded again (so that ``0`` and ``O``, ``1``, ``I`` and ``l`` are one)."""
    protos = _prototypes()
    out = set()
    for form in _visible(name):
        text = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", form).casefold())
        text = unicodedata.normalize("NFD", "".join(protos.get(c, c) for c in text))
        out.add(text.casefold())
    return frozenset(out)


def resembled(name: str, existing) -> str | None:
    """The first of the ``existing`` names (other than ``name`` itself) that ``name`` could
    be taken for, or None."""
    mine = skeletons(name)
    for other in existing:
        if other != name and mine & skeletons(other):
            return other
    return None


def check_name(name: object, where: object, existing=()) -> str:
    """A bot's name: first refused if it resembles one of the ``existing`` names (the
    registry's, with their owners), then if it is not a plain label (``NAME_RULE``)."""
    if not isinstance(name, str):
        raise RegistryError(f"{where}: name {_quote(name)}: expected a string of {NAME_RULE}")
    if name not in existing:
        like = resembled(name, existing)
        if like is not None:
            raise RegistryError(f"{where}: name {_quote(name)} resembles the bot {like!r} "
                                f"(held by {_owner(existing[like])}) once shown: choose "
                                "another name")
    if not _NAME.fullmatch(name):
        raise RegistryError(f"{where}: name {_quote(name)}: expected {NAME_RULE}")
    return name


def check_version(version: object, where: object) -> str:
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise RegistryError(f"{where}: version {_quote(version)}: expected {VERSION_RULE}")
    return version


def check_author(author: object, where: object) -> str:
    if not isinstance(author, str) or not _NAME.fullmatch(author):
        raise RegistryError(f"{where}: author {_quote(author)}: expected {NAME_RULE}")
    return author


def _owner(author: str | None) -> str:
    return f"author {author!r}" if author is not None else "the organiser"


# -- versions -----------------------------------------------------------------------------
@dataclass(frozen=True)
class BotVersion(BotVersionRow):
    """A registry version (its ``bot_versions`` row); ``already``: ``submit`` found this
    content stored under this name@version (nothing was written)."""
    already: bool = field(default=False, compare=False)

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    @classmethod
    def of(cls, row: dict, already: bool = False) -> "BotVersion":
        return cls(**{f.name: row[f.name] for f in dataclasses.fields(cls)
                      if f.name != "already"}, already=already)

    def fields(self) -> dict:
        """The manifest's fields, as submitted (name and version as stored)."""
        return dict(self.manifest_fields)

    def manifest(self, folder: Path | None = None) -> Manifest:
        """The version's manifest placed in ``folder`` (where it was fetched), its
        ``pythonpath`` relative to it; without a folder, relative to ``@bot``. Entries that
        begin with ``@`` are kept as written."""
        from referee.seats.launch import ARENA_ROOT, SDK
        f = self.fields()
        where = Path(folder) if folder is not None else Path("@bot")
        roots = {"@sdk": SDK, "@arena": ARENA_ROOT}

        def placed(e: str) -> Path:
            if folder is None:
                return Path(e) if e.startswith("@") else where / e
            if e in roots:
                return roots[e]
            if e == "@bot" or e.startswith("@bot/"):
                return where.joinpath(*Path(e).parts[1:])
            return (where / e).resolve()
        paths = tuple(placed(e) for e in f.get("pythonpath", []))
        known = {x.name for x in dataclasses.fields(Manifest)}
        extra = {k: tuple(tuple(x) if isinstance(x, list) else x for x in v)
                 if isinstance(v, list) else v for k, v in f.items()
                 if k in known and k not in {"name", "version", "command", "protocol",
                                              "folder", "path", "pythonpath"}}
        return Manifest(self.name, self.version, tuple(f["command"]), self.protocol, where,
                        where / "bot.toml", paths, **extra)


def _portable_pythonpath(manifest: Manifest, where: object) -> list[str]:
    """The manifest's ``pythonpath`` as any machine can place it: ``@bot/...`` (inside the
    bot's folder), ``@sdk`` (the Python SDK) or ``@arena`` (the arena's folder, for the rules
    engine); anything else is refused, as the sandbox would refuse it."""
    from referee.seats.launch import ARENA_ROOT, SDK
    folder = manifest.folder.resolve()
    out = []
    for i, p in enumerate(manifest.pythonpath):
        p = p.resolve()
        if p == folder or folder in p.parents:
            out.append("/".join(("@bot", *p.relative_to(folder).parts)))
        elif p == SDK:
            out.append("@sdk")
        elif p == ARENA_ROOT:
            out.append("@arena")
        else:
            raise RegistryError(f"{where}: field 'pythonpath'[{i}] = {str(p)!r}: outside the "
                                "bot's folder; a bot version may name only its own folders, "
                                f"the Python SDK ({SDK}) and the arena's folder ({ARENA_ROOT})")
    return out


def _language(command: list[str], folder: Path) -> str | None:
    """The bot's language, guessed from its command and files."""
    prog = Path(command[0]).name.lower()
    for prefix, lang in (("python", "python"), ("pypy", "python"), ("node", "javascript"),
                         ("deno", "javascript"), ("bun", "javascript"), ("java", "java")):
        if prog.startswith(prefix):
            return lang
    names = {p.suffix for p in folder.iterdir() if p.is_file()}
    for suffixes, lang in (({".cc", ".cpp", ".cxx"}, "c++"), ({".rs"}, "rust"),
                           ({".go"}, "go"), ({".c"}, "c")):
        if names & suffixes:
            return lang
    return None


def submit(store, source: Path, *, name: str | None = None, version: str | None = None,
           author: str | None = None, token: str | None = None, limit: int | None = None,
           folder: Path | None = None) -> BotVersion:
    """Store the bot in folder or archive ``source`` (already unpacked in ``folder``, if
    given) as name@version (the manifest's unless given): its manifest checked, its folder
    packed, the archive and the row in one transaction. The same content under the same
    name@version is a no-op (``already``); other content is refused.

    A name belongs to the author of its first version (with no author: the organiser's). A
    new name that resembles an existing one once shown (``skeletons``) is refused, then one
    that is not a plain label; a version of a name by another author is refused. ``token``,
    where given, must be ``author``'s (``check_token``); ``author`` without a token is the
    organiser writing in their own store. With no author the organiser may add a version to
    any name."""
    from scheduler.store import NameHeld
    source = Path(source)
    if folder is None:
        with opened(source, limit) as unpacked:
            return submit(store, source, name=name, version=version, author=author,
                          token=token, limit=limit, folder=unpacked)
    if author is not None:
        check_author(author, source)
    if token is not None and (author is None or not check_token(store, author, token)):
        raise RegistryError(f"{source}: author {author!r}: the token is not theirs"
                            if author is not None else
                            f"{source}: a token was given without its author")
    top = folder / "bot.toml"
    try:
        st = os.lstat(top)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise RegistryError(f"{source}: bot.toml: not a plain file (a link or a folder); the "
                            "manifest is read only from a file of the bot's own folder")
    packed = _pack_folder(folder, limit, source)  # every link checked before reading more
    try:
        manifest = load_manifest(folder)
        fields = tomllib.loads(manifest.path.read_text(encoding="utf-8"))
    except (ManifestError, UnicodeDecodeError) as e:
        msg = str(e) if isinstance(e, ManifestError) else f"{folder}/bot.toml: not UTF-8"
        if folder != source:
            msg = f"{source}: " + msg.replace(f"{folder.resolve()}{os.sep}", "")
        raise RegistryError(msg) from None
    owners = store.bot_names()
    fields.update(name=check_name(name or manifest.name, source, owners),
                  version=check_version(version or manifest.version, source),
                  command=list(manifest.command), protocol=manifest.protocol)
    if getattr(manifest, "build", ()):
        fields["build"] = [list(step) for step in manifest.build]  # its normal form
    if manifest.pythonpath:
        fields["pythonpath"] = _portable_pythonpath(manifest, source)
    language = _language(list(manifest.command), folder)
    row = {"name": fields["name"], "version": fields["version"],
           "content_hash": packed.content_hash, "author": author,
           "protocol": manifest.protocol, "language": language, "size": packed.size,
           "files": packed.files, "manifest_json": json.dumps(fields, sort_keys=True),
           "submitted_at": time.time()}
    try:
        stored, created = store.add_bot_version(row, zlib.compress(packed.data, 6),
                                                resembles=lambda names: resembled(
                                                    row["name"], names))
    except NameHeld as e:
        if e.name == row["name"]:
            raise RegistryError(f"{source}: the bot {e.name!r} belongs to {_owner(e.owner)}: "
                                f"only they add versions of it; choose another name") from None
        raise RegistryError(f"{source}: name {row['name']!r} resembles the bot {e.name!r} "
                            f"(held by {_owner(e.owner)}) once shown: choose another "
                            "name") from None
    got = BotVersion.of(stored, already=not created)
    if got.content_hash != packed.content_hash:
        raise RegistryError(f"{source}: {got.ref} is already in the registry with other "
                            f"content (stored {got.content_hash[:12]}, this "
                            f"{packed.content_hash[:12]}): a version never changes; bump the "
                            "version")
    return got


def resolve(store, ref: str) -> BotVersion:
    """``name@version``, or ``name``: its latest submitted version."""
    name, sep, version = ref.partition("@")
    rows = store.bot_versions(name)
    if sep:
        row = next((r for r in rows if r["version"] == version), None)
        if row is not None:
            return BotVersion.of(row)
        if rows:
            raise RegistryError(f"{ref}: no such version of {name}; its versions: "
                                f"{', '.join(r['version'] for r in rows)}")
    elif rows:
        return BotVersion.of(rows[-1])
    names = sorted({r["name"] for r in store.bot_versions()})
    raise RegistryError(f"{ref}: no such bot in the registry; "
                        + (f"its bots: {', '.join(names)}" if names else
                           "it is empty (arena bots submit DIR)"))


def listing(store, version: BotVersion) -> list[dict]:
    """The version's entries: {"path", "type" (file, dir, link), "size", "mode", "target"}."""
    data = _archive(store, version.content_hash)
    out = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for m in tar:
            out.append({"path": m.name, "size": m.size, "mode": m.mode,
                        "type": "dir" if m.isdir() else "link" if m.issym() else "file",
                        "target": m.linkname or None})
    return out


def remove(store, ref: str) -> BotVersion:
    """Delete name@version, refused while a season pins its content; its archive goes with
    it unless another version shares it."""
    if not ref.partition("@")[2]:
        raise RegistryError(f"{ref}: name the version to remove (name@version)")
    v = resolve(store, ref)
    got = store.remove_bot_version(v.name, v.version)
    if got["seasons"]:
        raise RegistryError(f"{v.ref}: pinned by season{'s' if len(got['seasons']) > 1 else ''}"
                            f" {', '.join(got['seasons'])}; a version stays while a season "
                            "pins it")
    if not got["removed"]:
        raise RegistryError(f"{v.ref}: removed by another at the same moment")
    return v


# -- authors ------------------------------------------------------------------------------
def add_author(store, name: str) -> str:
    """A new author and their token (shown once; only its sha256 is stored)."""
    check_author(name, "arena authors add")
    token = secrets.token_urlsafe(32)
    if not store.add_author(name, _sha256(token.encode())):
        raise RegistryError(f"author {name!r} exists already")
    return token


def check_token(store, name: str, token: str) -> bool:
    """``token`` is author ``name``'s (compared by its sha256, in constant time)."""
    stored = store.author_token_hash(name)
    return stored is not None and hmac.compare_digest(stored, _sha256(token.encode()))


# -- the local cache ----------------------------------------------------------------------
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


def _archive(store, content_hash: str) -> bytes:
    """The canonical tar of ``content_hash`` from the store, verified."""
    data = store.bot_archive(content_hash)
    if data is None:
        raise RegistryError(f"{content_hash}: no such bot version archive in the store")
    try:
        tar = zlib.decompress(data)
    except zlib.error as e:
        raise RegistryError(f"{content_hash}: the stored archive cannot be read ({e})") \
            from None
    if _sha256(tar) != content_hash:
        raise RegistryError(f"{content_hash}: the stored archive's content hash is "
                            f"{_sha256(tar)}: it is corrupt; submit the version again")
    return tar


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
    if info.get("content_hash") != h or _sha256_file(tar) != h:
        return False
    found = set()
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
                and _sha256_file(p) == m["sha256"]
        if not ok:
            return False
    return True


def _fill(store, cache: Path, h: str) -> None:
    """Unpack ``h`` from the store into the cache: in a temporary folder, made read-only,
    then renamed into place; the marker last."""
    data = _archive(store, h)
    folder, tar_path, marker = _paths(cache, h)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{h}-", dir=cache))
    try:
        u = _Unpacker(tmp / "d", len(data), Path(f"{h}.tar"))
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


def _evict(cache: Path, keep: str, budget: int) -> list[str]:
    """Drop the least recently used versions but ``keep`` until the cache fits ``budget``;
    one being fetched or used elsewhere (its lock held) stays."""
    entries = []
    for marker in cache.glob("*.json"):
        if not _HASH.fullmatch(marker.stem):
            continue
        try:
            entries.append((marker.stat().st_mtime_ns, marker.stem,
                            int(json.loads(marker.read_text(encoding="utf-8"))["bytes"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    total = sum(e[2] for e in entries)
    dropped = []
    for _, h, size in sorted(entries):
        if total <= budget:
            break
        if h == keep:
            continue
        with _flock(cache / f"{h}.lock", wait=False) as free, \
                _flock(cache / f"{h}.use", wait=False) as idle:
            if free and idle:
                _drop(cache, h)
                total -= size
                dropped.append(h)
    return dropped


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
