"""A bot folder as a canonical tar: entries sorted by path, every time and owner zeroed, modes
normalised (0o755 for folders and files the owner may run, else 0o644), without the excluded
folders (``EXCLUDED``); its sha256 is the version's content hash. Standard library only, as
``archives``: the participant's client (``sdk/client``) carries both and packs as the registry
does."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path

from scheduler.registry.archives import (ARCHIVE_SUFFIXES, EXCLUDED, RegistryError, is_archive,
                                         over_limit, scratch, sha256, size_limit,
                                         unpack_archive)


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
        with scratch("arena-pack-") as tmp:
            return pack_folder(unpack_archive(src, tmp / "src", limit), limit, src)
    if not src.is_dir():
        raise RegistryError(f"{src}: not a folder or an archive ({', '.join(ARCHIVE_SUFFIXES)})")
    return pack_folder(src, limit, src)


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


def pack_folder(root: Path, limit: int | None, label: Path) -> Packed:
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
                    raise over_limit(label, rel, buf.tell() + st.st_size, limit)
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
                raise over_limit(label, rel, buf.tell(), limit)
    data = buf.getvalue()
    if len(data) > limit:
        raise over_limit(label, "(the whole folder)", len(data), limit)
    return Packed(data, sha256(data), files, len(data))
