"""Bot versions submitted, resolved, listed and removed: a version is a bot's folder stored
under ``name@version`` as its canonical tar, which never changes (the same name@version with
other content is refused; the same content under another version shares the archive)."""

from __future__ import annotations

import dataclasses
import io
import os
import posixpath
import stat
import tarfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from referee.seats.manifest import (MANIFEST_SIZE_LIMIT, Manifest, ManifestError, manifest_of,
                                    oversized, pythonpath_entries, read_manifest)

from scheduler.registry.archives import RegistryError, opened, quote, stored_archive
from scheduler.registry.owners import (check_author, check_name, check_token, check_version,
                                       owner_label, resembled)
from scheduler.registry.packing import pack_folder
from scheduler.states import VersionState
from scheduler.store.rows import BotVersionRow, NewVersion


@dataclass(frozen=True)
class Submitted:
    """What ``submit`` answers: the ``version`` stored under name@version and whether it was
    there ``already`` (the same content submitted before: nothing was written)."""
    version: BotVersionRow
    already: bool


def _portable_pythonpath(path: Path, entries, folder: Path, source: Path) -> list[str]:
    """A manifest's ``pythonpath`` (``entries``, as written in ``path``) as any machine can
    place it, checked in the bot's own folder alone: ``@bot/...`` for a folder inside it. An
    entry that leaves the folder is refused alike whatever it names on this machine (there or
    not), and the refusal quotes only what the manifest wrote; a bot folder submitted from
    this machine (not an archive) may also name the Python SDK (``@sdk``) or the arena's
    folder (``@arena``, for the rules engine) where they are here."""
    from referee.seats.launch import ARENA_ROOT, SDK
    entries = pythonpath_entries(path, entries)  # a list of bounded strings (ManifestError)
    inside = folder.resolve()
    out = []
    for i, entry in enumerate(entries):
        rel = posixpath.normpath(entry)
        if not (posixpath.isabs(rel) or rel == ".." or rel.startswith("../")):
            p = (inside / rel).resolve()
            if p == inside or inside in p.parents:  # (not through a link out of it)
                if not os.path.isdir(p):  # (False for a name too long too)
                    raise RegistryError(f"{source}: bot.toml: field 'pythonpath'[{i}] = "
                                        f"{quote(entry)}: no such folder in the bot")
                out.append("/".join(("@bot", *p.relative_to(inside).parts)))
                continue
        elif folder == source:  # a folder of this machine: the SDK where it is here
            here = (inside / entry).resolve()
            if here in (SDK, ARENA_ROOT):
                out.append("@sdk" if here == SDK else "@arena")
                continue
        raise RegistryError(f"{source}: bot.toml: field 'pythonpath'[{i}] = {quote(entry)}: "
                            "outside the bot's folder; a bot version's pythonpath names only "
                            "folders inside its own (a Python bot has the Python SDK and the "
                            "rules engine without naming them)")
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
           folder: Path | None = None, state: str | None = None) -> Submitted:
    """Store the bot in folder or archive ``source`` (already unpacked in ``folder``, if
    given) as name@version (the manifest's unless given): its manifest checked, its folder
    packed, the archive and the row in one transaction. The same content under the same
    name@version is a no-op (``already``); other content is refused.

    A name belongs to the author of its first version (with no author: the organiser's). A
    new name that resembles an existing one once shown (``skeletons``) is refused, then one
    that is not a plain label; a version of a name by another author is refused. ``token``,
    where given, must be ``author``'s (``check_token``); ``author`` without a token is the
    organiser writing in their own store. With no author the organiser may add a version to
    any name. ``state``: the version's first state (the submission service's "queued": not
    played before a worker built and checked it)."""
    source = Path(source)
    if folder is None:
        with opened(source, limit) as unpacked:
            return submit(store, source, name=name, version=version, author=author,
                          token=token, limit=limit, folder=unpacked, state=state)
    if author is not None:
        check_author(author, source)
    if token is not None and (author is None or not check_token(store, author, token)):
        raise RegistryError(f"{source}: author {author!r}: the token is not theirs"
                            if author is not None else
                            f"{source}: a token was given without its author")
    return store_prepared(store, prepare(source, folder, limit), source, name=name,
                          version=version, author=author, state=state)


@dataclass(frozen=True)
class Prepared:
    """A bot's folder read as ``submit`` reads it, without the store: its manifest (its
    ``pythonpath`` portable), its canonical tar compressed (``packed``) and what the registry's
    row says of it. What an upload's own process hands back to the service."""
    manifest: Manifest
    content_hash: str
    size: int
    files: int
    packed: bytes
    language: str | None


def prepare(source: Path, folder: Path, limit: int | None = None) -> Prepared:
    """The bot of ``source``, unpacked in ``folder``: its manifest read and checked (from a
    plain file of at most ``MANIFEST_SIZE_LIMIT`` bytes), its folder packed within ``limit``;
    ``RegistryError`` names ``source`` and what is wrong."""
    top = folder / "bot.toml"
    try:
        st = os.lstat(top)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise RegistryError(f"{source}: bot.toml: not a plain file (a link or a folder); the "
                            "manifest is read only from a file of the bot's own folder")
    if st is not None and st.st_size > MANIFEST_SIZE_LIMIT:  # before anything more is read
        raise RegistryError(oversized(f"{source}: bot.toml", st.st_size))
    packed = pack_folder(folder, limit, source)  # every link checked before reading more
    try:
        path, fields = read_manifest(folder)
        pythonpath = _portable_pythonpath(path, fields.get("pythonpath", []), folder, source)
        manifest = manifest_of(path, fields)
    except ManifestError as e:
        msg = str(e)
        if folder != source:
            msg = f"{source}: " + msg.replace(f"{folder.resolve()}{os.sep}", "") \
                .replace(f"{folder}{os.sep}", "")
        raise RegistryError(msg) from None
    return Prepared(dataclasses.replace(manifest, pythonpath=tuple(map(Path, pythonpath))),
                    content_hash=packed.content_hash, size=packed.size, files=packed.files,
                    packed=zlib.compress(packed.data, 6),
                    language=_language(list(manifest.command), folder))


def store_prepared(store, p: Prepared, source: Path, *, name: str | None = None,
                   version: str | None = None, author: str | None = None,
                   state: str | None = None) -> Submitted:
    """The ``prepare``d bot stored as name@version (the manifest's unless given), as
    ``submit`` says; ``source`` is how messages name it."""
    from scheduler.store import NameHeld
    owners = {o.name: o.owner for o in store.registry.names()}
    m = dataclasses.replace(p.manifest, name=check_name(name or p.manifest.name, source, owners),
                            version=check_version(version or p.manifest.version, source))
    row = NewVersion(m.name, m.version, p.content_hash, author, m.protocol, p.language, p.size,
                     p.files, m.to_fields(placed=False), time.time())
    try:
        stored, created = store.registry.add(row, p.packed,
                                             resembles=lambda names: resembled(
                                                 row.name, names), state=state)
    except NameHeld as e:
        if e.name == row.name:
            raise RegistryError(f"{source}: the bot {e.name!r} belongs to {owner_label(e.owner)}: "
                                f"only they add versions of it; choose another name") from None
        raise RegistryError(f"{source}: name {row.name!r} resembles the bot {e.name!r} "
                            f"(held by {owner_label(e.owner)}) once shown: choose another "
                            "name") from None
    if stored.content_hash != p.content_hash:
        raise RegistryError(f"{source}: {stored.ref} is already in the registry with other "
                            f"content (stored {stored.content_hash[:12]}, this "
                            f"{p.content_hash[:12]}): a version never changes; bump the "
                            "version")
    return Submitted(stored, already=not created)


def resolve(store, ref: str, *, playable: bool = False) -> BotVersionRow:
    """``name@version``, or ``name``: its latest submitted version. ``playable``: as a season
    names it: ``name`` is the latest version that is ready (one the submission service took in
    is ready once a worker built and checked it) and not withdrawn, and ``name@version`` that
    is not is refused with its state."""
    name, sep, version = ref.partition("@")
    rows = store.registry.versions(name)
    states = ({s.version_id: s for s in store.versions.states([r.id for r in rows])}
              if playable and rows else {})

    def unplayable(row) -> str | None:
        st = states.get(row.id)
        if st is None:
            return None
        if st.withdrawn_at is not None:
            return "withdrawn by the organiser"
        if st.state != VersionState.READY:
            return st.state + (f" ({st.reason})" if st.reason else "")
        return None
    if sep:
        row = next((r for r in rows if r.version == version), None)
        if row is not None:
            why = unplayable(row) if playable else None
            if why is not None:
                raise RegistryError(f"{ref}: not ready to play: {why}")
            return row
        if rows:
            raise RegistryError(f"{ref}: no such version of {name}; its versions: "
                                f"{', '.join(r.version for r in rows)}")
    elif rows:
        ready = [r for r in rows if not playable or unplayable(r) is None]
        if ready:
            return ready[-1]
        raise RegistryError(f"{ref}: no version of {name} is ready to play: "
                            + "; ".join(f"{r.version} {unplayable(r)}" for r in rows[-3:]))
    names = sorted({r.name for r in store.registry.versions()})
    raise RegistryError(f"{ref}: no such bot in the registry; "
                        + (f"its bots: {', '.join(names)}" if names else
                           "it is empty (arena bots submit DIR)"))


def listing(store, version: BotVersionRow) -> list[dict]:
    """The version's entries: {"path", "type" (file, dir, link), "size", "mode", "target"}."""
    data = stored_archive(store, version.content_hash)
    out = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for m in tar:
            out.append({"path": m.name, "size": m.size, "mode": m.mode,
                        "type": "dir" if m.isdir() else "link" if m.issym() else "file",
                        "target": m.linkname or None})
    return out


def remove(store, ref: str) -> BotVersionRow:
    """Delete name@version, refused while a season pins its content; its archive goes with
    it unless another version shares it."""
    if not ref.partition("@")[2]:
        raise RegistryError(f"{ref}: name the version to remove (name@version)")
    v = resolve(store, ref)
    got = store.registry.remove(v.name, v.version)
    if got.seasons:
        raise RegistryError(f"{v.ref}: pinned by season{'s' if len(got.seasons) > 1 else ''}"
                            f" {', '.join(got.seasons)}; a version stays while a season "
                            "pins it")
    if not got.removed:
        raise RegistryError(f"{v.ref}: removed by another at the same moment")
    return v
