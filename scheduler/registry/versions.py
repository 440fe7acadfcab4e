"""A season's bots as registry versions: pinned when the season opens, materialised where a
match is played.

A season names each bot by a registry reference (``bot = "name@version"``, or ``"name"`` for
the latest version) or by folder, as before (``manifest = "path"``: the folder is submitted on
the spot, which is a no-op when that content is in the registry already). Either way the season
pins the exact version (its content hash, ``bots.version_hash``), and every match spec names
it, so that a worker anywhere fetches those bytes from the store (``registry.fetch``), builds
them once if the manifest says how (``build``), and plays them; it never needs the organiser's
paths. A season stored before the registry has no pinned versions and plays its folders.

A bot's ``pythonpath`` crosses machines in portable form: ``@bot/...`` (inside the bot's own
folder), ``@sdk`` (the Python SDK) or ``@arena`` (the arena's folder, for the rules engine),
each resolved again where the bot runs.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import shutil
from pathlib import Path

from referee.match.spec import SeatBot
from referee.seats.launch import ARENA_ROOT, SDK
from referee.seats.manifest import Manifest

from scheduler.season import Season, SeasonBot, SeasonError
from scheduler.store import BotRow, Store

BOT = Path("@bot")
PORTABLE_ROOTS = {Path("@sdk"): SDK, Path("@arena"): ARENA_ROOT}


def cache_dir() -> Path:
    """Where this machine keeps fetched and built bot versions (``ARENA_BOT_CACHE``)."""
    return Path(os.environ.get("ARENA_BOT_CACHE")
                or Path.home() / ".cache" / "shengji-arena" / "bots")


def portable(manifest: Manifest, where: str) -> Manifest:
    """``manifest`` with its ``pythonpath`` in portable form; an entry outside the bot's own
    folder, the SDK and the arena's folder cannot cross machines (SeasonError)."""
    paths = []
    for i, p in enumerate(manifest.pythonpath):
        if p.is_relative_to(manifest.folder):
            paths.append(BOT / p.relative_to(manifest.folder))
        elif p in PORTABLE_ROOTS.values():
            paths.append(next(k for k, v in PORTABLE_ROOTS.items() if v == p))
        elif p.parts[:1] == ("@bot",) or p in PORTABLE_ROOTS:
            paths.append(p)  # portable already
        else:
            raise SeasonError(f"{where}: field 'pythonpath'[{i}] = {str(p)!r}: outside the "
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


def pin(season: Season, store: Store, out=None) -> Season:
    """``season`` with every bot pinned to a registry version: a resumed season keeps the
    versions it pinned (a bot's folder edited since changes nothing: a note says so);
    otherwise a reference is resolved and a folder submitted (and built, which refuses a
    version whose build fails). The manifests are then the versions as this machine
    materialises them (what ``bots check`` plays). A season stored before the registry plays
    its folders as before."""
    from scheduler import registry
    existing = store.season(season.name) is not None
    rows = {b["name"]: b for b in store.bots(season.name)} if existing else {}
    bots = []
    for i, bot in enumerate(season.bots):
        where = f"{season.path}: field bots[{i}]"
        version_hash = rows[bot.name].get("version_hash") if bot.name in rows else None
        if existing and version_hash is None:  # stored before the registry
            bots.append(bot)
            continue
        try:
            if version_hash is None:
                version = (registry.resolve(store, bot.ref) if bot.ref is not None else
                           _submit_folder(store, bot.manifest, where, out))
                if bot.ref is None:  # the folder's own manifest, as read here
                    version = dataclasses.replace(version, manifest_json=json.dumps(
                        {**version.fields(), "pythonpath": [
                            str(p) for p in portable(bot.manifest, where).pythonpath]}))
            else:
                version = _pinned_version(store, rows[bot.name], where)
                if bot.ref is not None and "@" in bot.ref and bot.ref != version.ref:
                    raise SeasonError(f"{where}.bot: the season pinned {version.ref}, not "
                                      f"{bot.ref}; give the season a new name to play another "
                                      "version")
                if bot.manifest is not None:
                    _note_edits(bot, version, rows[bot.name], where, out)
            manifest = pin_portable(version, where)
        except (registry.RegistryError, BuildError) as e:
            raise SeasonError(f"{where}: {e}") from None
        seat = SeatBot(bot.name, manifest, version_hash=version.content_hash)
        local = materialise(store, seat).manifest
        bots.append(dataclasses.replace(bot, manifest=local, version_hash=version.content_hash,
                                        portable=manifest))
    return dataclasses.replace(season, bots=tuple(bots))


def _submit_folder(store: Store, manifest: Manifest, where: str, out):
    """A season's bot folder submitted as it is: under its manifest's version, or, where that
    version holds other content already (the folder was edited, or another bot has its name),
    under ``version+HASH`` (the first 12 digits of its content hash), with a note."""
    from scheduler import registry
    packed = registry.pack(manifest.folder)
    taken = store.bot_version(manifest.name, manifest.version)
    version = None
    if taken is not None and taken["content_hash"] != packed.content_hash:
        version = f"{manifest.version}+{packed.content_hash[:12]}"
        if out is not None:
            print(f"note: {where}: {manifest.name}@{manifest.version} is in the registry with "
                  f"other content; this folder is submitted as {manifest.name}@{version}",
                  file=out)
    return submit(store, manifest.folder, version=version, out=out)


def pin_portable(version, where: str = "bot") -> Manifest:
    """A registry version's manifest as match specs carry it (portable)."""
    return portable(version.manifest(), where)


def _pinned_version(store: Store, row: BotRow, where: str):
    """The registry version a stored season bot is pinned to."""
    from scheduler import registry
    got = store.bot_version(row.manifest_fields.get("manifest_name", row.name), row.version)
    if got is None or got.content_hash != row.version_hash:
        got = next((r for r in store.bot_versions()
                    if r.content_hash == row.version_hash), None)
    if got is None:
        raise SeasonError(f"{where}: the version the season pinned ({row.version_hash[:12]}"
                          ") is no longer in the registry")
    return registry.BotVersion.of(got)


def _note_edits(bot: SeasonBot, version, row: BotRow, where: str, out) -> None:
    """Say so when a folder bot's folder is no longer the version its season pinned, and
    which of its files changed."""
    from referee.seats.manifest import changed_files
    from scheduler import registry
    try:
        now = registry.pack(bot.manifest.folder).content_hash
    except (registry.RegistryError, OSError):
        return
    if now == version.content_hash or out is None:
        return
    before = row.manifest_fields.get("files")
    files = f" (files {changed_files(before, bot.manifest.file_hashes())})" if before else ""
    print(f"note: {where}: {bot.manifest.folder} is no longer {version.ref}{files}; the season "
          f"plays {version.ref}, the version it pinned; submit the folder as a new version for "
          "a new season", file=out)


class BuildError(ValueError):
    """A bot version whose build failed; the message names it, the command and the log's end."""


def submit(store: Store, source: Path, *, name: str | None = None,
           version: str | None = None, author: str | None = None, token: str | None = None,
           out=None):
    """Submit a bot folder or archive (unpacked once): its build (if its manifest has one)
    must pass in the sandbox first (the built folder is kept in this machine's cache, where
    its matches here find it); then the version is stored (``registry.submit``, which checks
    its name, owner and ``token``). Returns the version."""
    from scheduler import registry
    from referee.seats.manifest import load_manifest
    with registry.opened(Path(source)) as folder:
        def stored():
            return registry.submit(store, source, name=name, version=version, author=author,
                                   token=token, folder=folder)
        if not (folder / "bot.toml").is_file() or (folder / "bot.toml").is_symlink():
            return stored()  # (which says what is wrong)
        try:
            manifest = load_manifest(folder)
        except ValueError:  # the registry names a manifest error in its own words
            return stored()
        if getattr(manifest, "build", None):  # built where this machine's matches find it
            packed = registry.pack(folder)
            _built(manifest, folder, cache_dir() / f"{packed.content_hash}-built")
        return stored()


def _build(manifest: Manifest, source: Path, into: Path) -> Path:
    from referee.seats import build
    try:
        result = build.build_bot(manifest, source, into)
    except build.BuildFailed as e:
        raise BuildError(str(e)) from None
    return getattr(result, "folder", into)


def materialise(store: Store, bot: SeatBot, cache: Path | None = None) -> SeatBot:
    """``bot`` as this machine plays it: a pinned version fetched from the store into the
    local cache (verified), built there once per version if its manifest says how; a bot with
    no pinned version as it is."""
    if bot.version_hash is None:
        return bot
    from scheduler import registry
    cache = cache or cache_dir()
    folder = registry.fetch(store, bot.version_hash, cache)
    manifest = bot.manifest
    if getattr(manifest, "build", None):
        folder = _built(manifest, folder, cache / f"{bot.version_hash}-built")
    return dataclasses.replace(bot, manifest=located(manifest, folder))


def _built(manifest: Manifest, source: Path, into: Path) -> Path:
    """The version built from ``source`` in ``into``, once per machine (a lock per version:
    the worker processes of one machine build it once between them)."""
    into.parent.mkdir(parents=True, exist_ok=True)
    with open(into.parent / f".{into.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = into / ".arena-built"
        if done.exists():
            return into
        shutil.rmtree(into, ignore_errors=True)
        tmp = into.parent / f".{into.name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        _build(manifest, source, tmp)
        os.rename(tmp, into)
        os.chmod(into, 0o755)
        done.touch()
        os.chmod(into, 0o555)
        return into


def pinned_seat_bot(bot: SeasonBot) -> SeatBot:
    """The bot as the season's match specs name it: its pinned version, portable."""
    if bot.version_hash is None:
        return SeatBot.of(bot.name, bot.manifest)
    return SeatBot(bot.name, bot.portable or bot.manifest, version_hash=bot.version_hash)
