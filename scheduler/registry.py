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
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from referee.seats.manifest import Manifest, ManifestError, load_manifest

ARCHIVE_LIMIT = 64 << 20
"""The default limit of a version's uncompressed tar, in bytes."""
CACHE_MB = 2048
EXCLUDED = frozenset({"node_modules", "build", "__pycache__", ".git"})
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".zip")
_HASH = re.compile(r"[0-9a-f]{64}")
_LABEL = re.compile(r"[^\s@/\\]{1,100}")
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
def _safe_rel(name: str, label: Path) -> str | None:
    """An archive member's path, relative and inside; None for the archive's root."""
    n = name.replace("\\", "/")
    if n.startswith("/") or re.match(r"[A-Za-z]:", n):
        raise RegistryError(f"{label}: {name}: an absolute path in the archive")
    parts = [p for p in n.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise RegistryError(f"{label}: {name}: a path leaving the archive's folder ('..')")
    return "/".join(parts) or None


class _Unpacker:
    """Writes archive members under ``dest``, refusing what could leave it and counting bytes
    against ``limit``; ``members`` notes each one (what the cache verifies against)."""

    def __init__(self, dest: Path, limit: int, label: Path) -> None:
        self.dest, self.limit, self.label = dest, limit, label
        self.total = 0
        self.members: dict[str, dict] = {}
        dest.mkdir(parents=True, exist_ok=True)

    def _place(self, rel: str) -> Path:
        self.total += 512
        if self.total > self.limit:
            raise _over(self.label, rel, self.total, self.limit)
        where = self.dest
        for part in rel.split("/")[:-1]:
            where = where / part
            if where.is_symlink():
                raise RegistryError(f"{self.label}: {rel}: a path through a symlink")
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
            raise RegistryError(f"{self.label}: {rel}: both a folder and a file in the archive")
        h, size = hashlib.sha256(), 0
        with open(path, "wb") as out:
            while chunk := src.read(_CHUNK):
                size += len(chunk)
                self.total += len(chunk)
                if self.total > self.limit:
                    raise _over(self.label, rel, self.total, self.limit)
                h.update(chunk)
                out.write(chunk)
        os.chmod(path, 0o755 if executable else 0o644)
        self.members[rel] = {"type": "file", "size": size, "sha256": h.hexdigest(),
                             "executable": executable}

    def link(self, rel: str, target: str) -> None:
        inside = os.path.normpath(os.path.join(os.path.dirname(rel), target))
        if os.path.isabs(target) or inside == ".." or inside.startswith("../"):
            raise RegistryError(f"{self.label}: {rel}: a symlink pointing outside the archive's "
                                f"folder (-> {target})")
        path = self._place(rel)
        if path.is_dir():
            raise RegistryError(f"{self.label}: {rel}: both a folder and a link in the archive")
        os.symlink(target, path)
        self.members[rel] = {"type": "link", "target": target}

    def tar(self, tar: tarfile.TarFile) -> None:
        for m in tar:
            rel = _safe_rel(m.name, self.label)
            if rel is None or set(rel.split("/")) & EXCLUDED:
                continue
            if m.isdir():
                self.folder(rel)
            elif m.isreg():
                self.file(rel, tar.extractfile(m), bool(m.mode & stat.S_IXUSR))
            elif m.issym():
                self.link(rel, m.linkname)
            elif m.islnk():
                raise RegistryError(f"{self.label}: {m.name}: a hard link in the archive")
            else:
                raise RegistryError(f"{self.label}: {m.name}: a special file (device or fifo) "
                                    "in the archive")

    def zip(self, zf: zipfile.ZipFile) -> None:
        for info in zf.infolist():
            rel = _safe_rel(info.filename, self.label)
            if rel is None or set(rel.split("/")) & EXCLUDED:
                continue
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if info.is_dir() or kind == stat.S_IFDIR:
                self.folder(rel)
            elif kind == stat.S_IFLNK:
                if info.file_size > 4096:
                    raise RegistryError(f"{self.label}: {info.filename}: a symlink too long")
                self.link(rel, zf.read(info).decode("utf-8", "replace"))
            elif kind in (0, stat.S_IFREG):
                with zf.open(info) as src:
                    self.file(rel, src, bool(mode & stat.S_IXUSR))
            else:
                raise RegistryError(f"{self.label}: {info.filename}: a special file in the "
                                    "archive")


def unpack_archive(archive: Path, dest: Path, limit: int | None = None) -> Path:
    """Unpack a .tar, .tar.gz, .tgz or .zip into ``dest`` safely: no absolute paths, no
    ``..``, no links leaving it, no hard links or special files, at most ``limit`` bytes
    (counted while unpacking). Returns the bot's folder: ``dest``, or the archive's one
    top-level folder when the manifest is in it."""
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
            with tarfile.open(archive, "r:*") as tar:
                u.tar(tar)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, RuntimeError,
            NotImplementedError) as e:
        raise RegistryError(f"{archive}: not a readable archive ({e})") from None
    except OSError as e:
        raise RegistryError(f"{archive}: cannot be unpacked ({e})") from None
    if not (dest / "bot.toml").exists():
        top = [p for p in dest.iterdir()]
        if len(top) == 1 and top[0].is_dir() and not top[0].is_symlink() \
                and (top[0] / "bot.toml").is_file():
            return top[0]
    return dest


# -- versions -----------------------------------------------------------------------------
@dataclass(frozen=True)
class BotVersion:
    """A row of ``bot_versions``; ``already``: ``submit`` found this content stored under this
    name@version (nothing was written)."""
    id: int
    name: str
    version: str
    content_hash: str
    author: str | None
    protocol: str
    language: str | None
    size: int
    files: int
    manifest_json: str
    submitted_at: float
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
        return json.loads(self.manifest_json)

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


def _check_label(what: str, value: str, where: object) -> str:
    if not isinstance(value, str) or not _LABEL.fullmatch(value):
        raise RegistryError(f"{where}: {what} {value!r}: expected 1 to 100 characters without "
                            "spaces, '@' or '/'")
    return value


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
           author: str | None = None, limit: int | None = None) -> BotVersion:
    """Store the bot in folder or archive ``source`` as name@version (the manifest's unless
    given): its manifest checked, its folder packed, the archive and the row in one
    transaction. The same content under the same name@version is a no-op (``already``);
    other content is refused."""
    source = Path(source)
    with tempfile.TemporaryDirectory(prefix="arena-submit-") as tmp:
        if source.is_dir():
            folder = source
        elif source.is_file() and is_archive(source):
            folder = unpack_archive(source, Path(tmp) / "src", limit)
        elif not source.exists():
            raise RegistryError(f"{source}: no such folder or archive")
        else:
            raise RegistryError(f"{source}: not a folder or an archive "
                                f"({', '.join(ARCHIVE_SUFFIXES)})")
        try:
            manifest = load_manifest(folder)
        except (ManifestError, UnicodeDecodeError) as e:
            msg = str(e) if isinstance(e, ManifestError) else f"{folder}/bot.toml: not UTF-8"
            if folder != source:
                msg = f"{source}: " + msg.replace(f"{folder.resolve()}{os.sep}", "")
            raise RegistryError(msg) from None
        fields = tomllib.loads(manifest.path.read_text(encoding="utf-8"))
        fields.update(name=_check_label("name", name or manifest.name, source),
                      version=_check_label("version", version or manifest.version, source),
                      command=list(manifest.command), protocol=manifest.protocol)
        if getattr(manifest, "build", ()):
            fields["build"] = [list(step) for step in manifest.build]  # its normal form
        if manifest.pythonpath:
            fields["pythonpath"] = _portable_pythonpath(manifest, source)
        if author is not None and not (0 < len(author) <= 100):
            raise RegistryError(f"{source}: author {author!r}: expected 1 to 100 characters")
        packed = _pack_folder(folder, limit, source)
        language = _language(list(manifest.command), folder)
    row = {"name": fields["name"], "version": fields["version"],
           "content_hash": packed.content_hash, "author": author,
           "protocol": manifest.protocol, "language": language, "size": packed.size,
           "files": packed.files, "manifest_json": json.dumps(fields, sort_keys=True),
           "submitted_at": time.time()}
    stored, created = store.add_bot_version(row, zlib.compress(packed.data, 6))
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
    _check_label("author", name, "arena")
    token = secrets.token_urlsafe(32)
    if not store.add_author(name, _sha256(token.encode())):
        raise RegistryError(f"author {name!r} exists already")
    return token


def check_token(store, name: str, token: str) -> bool:
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
