"""Bot versions where they play: a manifest's ``pythonpath`` in portable form, a folder submitted
once its build passes, and a pinned version materialised on this machine (fetched from the
store into the local cache, verified, built there once if its manifest says how).

A bot's ``pythonpath`` crosses machines in portable form: ``@bot/...`` (inside the bot's own
folder), ``@sdk`` (the Python SDK) or ``@arena`` (the arena's folder, for the rules engine),
each resolved again where the bot runs.
"""

from __future__ import annotations

import dataclasses
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from referee.match.spec import SeatBot
from referee.seats.launch import ARENA_ROOT, SDK
from referee.seats.manifest import Manifest

from scheduler.errors import ArenaError
from scheduler.registry.archives import RegistryError, opened
from scheduler.registry.cache import built_path, default_cache_dir, evict, fetch, using
from scheduler.registry.packing import pack
from scheduler.registry import submissions
from scheduler.store import Store

BOT = Path("@bot")
PORTABLE_ROOTS = {Path("@sdk"): SDK, Path("@arena"): ARENA_ROOT}


class NotPortable(RegistryError):
    """A ``pythonpath`` entry that cannot cross machines; the message says where it is."""


def portable(manifest: Manifest, where: str) -> Manifest:
    """``manifest`` with its ``pythonpath`` in portable form; an entry outside the bot's own
    folder, the SDK and the arena's folder cannot cross machines (``NotPortable``)."""
    paths = []
    for i, p in enumerate(manifest.pythonpath):
        if p.is_relative_to(manifest.folder):
            paths.append(BOT / p.relative_to(manifest.folder))
        elif p in PORTABLE_ROOTS.values():
            paths.append(next(k for k, v in PORTABLE_ROOTS.items() if v == p))
        elif p.parts[:1] == ("@bot",) or p in PORTABLE_ROOTS:
            paths.append(p)  # portable already
        else:
            raise NotPortable(f"{where}: field 'pythonpath'[{i}] = {str(p)!r}: outside the "
                              "bot's folder; a bot version may name only its own folders, the "
                              f"Python SDK ({SDK}) and the arena's folder ({ARENA_ROOT})")
    return dataclasses.replace(manifest, pythonpath=tuple(paths))


def located(manifest: Manifest, folder: Path) -> Manifest:
    """A portable ``manifest`` placed in ``folder`` on this machine."""
    paths = []
    for p in manifest.pythonpath:
        if p.parts[:1] == ("@bot",):
            paths.append(folder.joinpath(*p.parts[1:]))
        else:
            paths.append(PORTABLE_ROOTS.get(p, p))
    return dataclasses.replace(manifest, folder=folder, path=folder / "bot.toml",
                               pythonpath=tuple(paths))


def pin_portable(version, where: str = "bot") -> Manifest:
    """A registry version's manifest as match specs carry it (portable)."""
    return portable(version.manifest(), where)


class BuildError(ArenaError, ValueError):
    """A bot version whose build failed; the message names it, the command and the log's end;
    ``log``: the build's whole log (bounded)."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.log = log


def submit(store: Store, source: Path, *, name: str | None = None,
           version: str | None = None, author: str | None = None, token: str | None = None,
           out=None) -> submissions.Submitted:
    """Submit a bot folder or archive (unpacked once): its build (if its manifest has one)
    must pass in the sandbox first (the built folder is kept in this machine's cache, where
    its matches here find it); then the version is stored (``submissions.submit``, which checks
    its name, owner and ``token``), as it answers: the version, and whether it was stored
    already."""
    from referee.seats.manifest import load_manifest
    with opened(Path(source)) as folder:
        def stored():
            return submissions.submit(store, source, name=name, version=version, author=author,
                                      token=token, folder=folder)
        if not (folder / "bot.toml").is_file() or (folder / "bot.toml").is_symlink():
            return stored()  # (which says what is wrong)
        try:
            manifest = load_manifest(folder)
        except ValueError:  # the registry names a manifest error in its own words
            return stored()
        if getattr(manifest, "build", None):  # built where this machine's matches find it
            packed = pack(folder)
            cache = default_cache_dir()
            _built(manifest, folder, built_path(cache, packed.content_hash))
            evict(packed.content_hash, cache)
        return stored()


def materialise(store: Store, bot: SeatBot, cache: Path | None = None) -> SeatBot:
    """``bot`` as this machine plays it: a pinned version fetched from the store into the
    local cache (verified), built there once per version if its manifest says how (the cache
    then evicted to its budget, which counts the built folder); a bot with no pinned version
    as it is. Only for the fetch and the build is the version marked in use: a match holds it
    with ``playing``."""
    if bot.version_hash is None:
        return bot
    cache = cache or default_cache_dir()
    with using(bot.version_hash, cache):  # (no other process evicts it under the build)
        folder = fetch(store, bot.version_hash, cache)
        manifest = bot.manifest
        if getattr(manifest, "build", None):
            folder = _built(manifest, folder, built_path(cache, bot.version_hash))
            evict(bot.version_hash, cache)
    return dataclasses.replace(bot, manifest=located(manifest, folder))


@contextmanager
def playing(store: Store, bots: Iterable[SeatBot] | None,
            cache: Path | None = None) -> Iterator[list[SeatBot]]:
    """``bots`` materialised (``materialise``) and marked in use in the cache while the block
    runs (a match plays them): no eviction removes their folders under their seats."""
    cache = cache or default_cache_dir()
    bots = list(bots or ())
    with ExitStack() as held:
        for h in dict.fromkeys(b.version_hash for b in bots if b.version_hash is not None):
            held.enter_context(using(h, cache))
        yield [materialise(store, b, cache) for b in bots]


def _built(manifest: Manifest, source: Path, into: Path) -> Path:
    """The version built from ``source`` in ``into``, once per machine (``build_once``: a
    lock per version, so the worker processes of one machine build it once between them)."""
    from referee.seats import build
    try:
        return build.build_once(manifest, source, into)
    except build.BuildFailed as e:
        raise BuildError(str(e), e.log) from None


