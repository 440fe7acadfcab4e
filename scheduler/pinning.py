"""A season's bots pinned to registry versions when the season opens.

A season names each bot by a registry reference (``bot = "name@version"``, or ``"name"`` for
the latest version) or by folder, as before (``manifest = "path"``: the folder is submitted on
the spot, which is a no-op when that content is in the registry already). Either way the season
pins the exact version (its content hash, ``bots.version_hash``), and every match spec names
it, so that a worker anywhere fetches those bytes from the store and plays them
(``scheduler.registry.versions.materialise``); it never needs the organiser's paths. A season
stored before the registry has no pinned versions and plays its folders.
"""

from __future__ import annotations

import dataclasses

from referee.match.spec import SeatBot
from referee.seats.manifest import Manifest

from scheduler.registry.archives import RegistryError
from scheduler.registry.packing import pack
from scheduler.registry.submissions import resolve
from scheduler.registry.versions import (BuildError, NotPortable, materialise, pin_portable,
                                         portable, submit)
from scheduler.season import Season, SeasonBot, SeasonError
from scheduler.store import BotRow, Store


def pin(season: Season, store: Store, out=None) -> Season:
    """``season`` with every bot pinned to a registry version: a resumed season keeps the
    versions it pinned (a bot's folder edited since changes nothing: a note says so);
    otherwise a reference is resolved and a folder submitted (and built, which refuses a
    version whose build fails). The manifests are then the versions as this machine
    materialises them (what ``bots check`` plays). A season stored before the registry plays
    its folders as before."""
    existing = store.seasons.get(season.name) is not None
    rows = {b.name: b for b in store.seasons.bots(season.name)} if existing else {}
    bots = []
    for i, bot in enumerate(season.bots):
        where = f"{season.path}: field bots[{i}]"
        version_hash = rows[bot.name].version_hash if bot.name in rows else None
        if existing and version_hash is None:  # stored before the registry
            bots.append(bot)
            continue
        try:
            if version_hash is None:
                version = (resolve(store, bot.ref, playable=True) if bot.ref is not None else
                           _submit_folder(store, bot.loaded, where, out))
            else:
                version = _pinned_version(store, rows[bot.name], where)
                if bot.ref is not None and "@" in bot.ref and bot.ref != version.ref:
                    raise SeasonError(f"{where}.bot: the season pinned {version.ref}, not "
                                      f"{bot.ref}; give the season a new name to play another "
                                      "version")
                if bot.manifest is not None:
                    _note_edits(bot, version, rows[bot.name], where, out)
            manifest = pin_portable(version, where)
            if version_hash is None and bot.ref is None:  # the folder's own, as read here
                manifest = dataclasses.replace(
                    manifest, pythonpath=portable(bot.loaded, where).pythonpath)
        except NotPortable as e:  # (it says where)
            raise SeasonError(str(e)) from None
        except (RegistryError, BuildError) as e:
            raise SeasonError(f"{where}: {e}") from None
        seat = SeatBot(bot.name, manifest, version_hash=version.content_hash)
        local = materialise(store, seat).manifest
        bots.append(dataclasses.replace(bot, manifest=local, version_hash=version.content_hash,
                                        portable=manifest))
    return dataclasses.replace(season, bots=tuple(bots))


def pin_joining(store: Store, refs, where: str) -> tuple[SeasonBot, ...]:
    """Registry versions joining a running season (a ladder's), each under its ref as its
    name: resolved (ready ones only), pinned and materialised here."""
    out = []
    for ref in refs:
        try:
            version = resolve(store, ref, playable=True)
            manifest = pin_portable(version, where)
            local = materialise(store, SeatBot(ref, manifest,
                                               version_hash=version.content_hash)).manifest
        except NotPortable as e:
            raise SeasonError(str(e)) from None
        except (RegistryError, BuildError) as e:
            raise SeasonError(f"{where}: {ref}: {e}") from None
        out.append(SeasonBot(ref, local, ref=ref, version_hash=version.content_hash,
                             portable=manifest))
    return tuple(out)


def _submit_folder(store: Store, manifest: Manifest, where: str, out):
    """A season's bot folder submitted as it is: under its manifest's version, or, where that
    version holds other content already (the folder was edited, or another bot has its name),
    under ``version+HASH`` (the first 12 digits of its content hash), with a note."""
    packed = pack(manifest.folder)
    taken = store.registry.version(manifest.name, manifest.version)
    version = None
    if taken is not None and taken.content_hash != packed.content_hash:
        version = f"{manifest.version}+{packed.content_hash[:12]}"
        if out is not None:
            print(f"note: {where}: {manifest.name}@{manifest.version} is in the registry with "
                  f"other content; this folder is submitted as {manifest.name}@{version}",
                  file=out)
    return submit(store, manifest.folder, version=version, out=out).version


def _pinned_version(store: Store, row: BotRow, where: str):
    """The registry version a stored season bot is pinned to."""
    assert row.version_hash is not None  # (only a bot stored with its version is pinned)
    got = store.registry.version(Manifest.name_in(row.manifest_fields) or row.name, row.version)
    if got is None or got.content_hash != row.version_hash:
        got = next((r for r in store.registry.versions()
                    if r.content_hash == row.version_hash), None)
    if got is None:
        raise SeasonError(f"{where}: the version the season pinned ({row.version_hash[:12]}"
                          ") is no longer in the registry")
    return got


def _note_edits(bot: SeasonBot, version, row: BotRow, where: str, out) -> None:
    """Say so when a folder bot's folder is no longer the version its season pinned, and
    which of its files changed."""
    from referee.seats.manifest import changed_files
    try:
        now = pack(bot.loaded.folder).content_hash
    except (RegistryError, OSError):
        return
    if now == version.content_hash or out is None:
        return
    before = row.manifest_fields.get("files")
    files = f" (files {changed_files(before, bot.loaded.file_hashes())})" if before else ""
    print(f"note: {where}: {bot.loaded.folder} is no longer {version.ref}{files}; the season "
          f"plays {version.ref}, the version it pinned; submit the folder as a new version for "
          "a new season", file=out)
