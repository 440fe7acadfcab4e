"""What a hostile author's builds may take of a worker: a build's disk bounded (the kernel
refuses its writes past ``ARENA_BUILD_DISK_MB``; a build past it is refused and leaves nothing),
built folders counted in the bot cache's budget and the least recently used evicted (never one
a match plays), and one author's versions at most a share of the intake lane's slots. Real
sandboxed builds, a real store and the service's own dispatcher."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from league_helpers import BOTS

from referee.match.spec import SeatBot
from referee.seats.build import (BUILT_MARK, BuildFailed, build_bot, build_once, discard,
                                 failed_log_path)
from referee.seats.launch import LOG_LIMIT
from referee.seats.manifest import load_manifest
from referee.seats.sandbox import MB, sandbox_problem

needs_sandbox = pytest.mark.skipif(sandbox_problem() is not None,
                                   reason=f"no sandbox here: {sandbox_problem()}")


def _bot(folder: Path, build: list[str], name: str = "filler", version: str = "0.1",
         files: dict[str, str] | None = None) -> Path:
    """A bot folder whose manifest's build is ``build``."""
    folder.mkdir(parents=True)
    for rel, text in (files or {}).items():
        (folder / rel).write_text(text)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "{version}"\ncommand = ["true"]\n'
        f'build = {json.dumps(build)}\n')
    return folder


def _disk_bytes(folder: Path) -> int:
    """The disk ``folder`` (or a file) takes: its allocated blocks, links not followed."""
    if not folder.is_dir():
        return os.lstat(folder).st_blocks * 512
    total = 0
    for root, dirs, files in os.walk(folder):
        for name in [None, *dirs, *files]:
            total += os.lstat(root if name is None else os.path.join(root, name)).st_blocks * 512
    return total


def _processes_naming(text: str) -> list[int]:
    """The processes whose command line names ``text`` (the build's disk helper names its
    folder)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if text.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


# -- a build's disk ----------------------------------------------------------------------
FILL = ("i=0; while [ $i -lt 300 ]; do head -c 1048576 /dev/zero > out/f$i; i=$((i+1)); "
        "done; ls out | wc -l > count")


@needs_sandbox
def test_a_build_past_its_disk_limit_is_refused_and_leaves_nothing(tmp_path, monkeypatch):
    """300 files of 1 MiB against a 64 MiB limit: the kernel refuses the writes past it, the
    build is refused with the reason, and its folders are gone, the worker's disk as before."""
    monkeypatch.setenv("ARENA_BUILD_DISK_MB", "64")
    source = _bot(tmp_path / "src", ["sh", "-c", "mkdir out && " + FILL])
    manifest = load_manifest(source)
    cache = tmp_path / "cache"
    cache.mkdir()
    into = cache / "filler-built"
    before = _disk_bytes(cache)
    with pytest.raises(BuildFailed) as e:
        build_once(manifest, source, into)
    assert "wrote more than 64 MiB (its disk limit)" in str(e.value)
    assert "No space left on device" in e.value.log  # refused as it wrote, not counted after
    assert not into.exists() and not (cache / ".filler-built.tmp").exists()
    log = failed_log_path(into)  # only its (bounded) log is kept
    assert sorted(p.name for p in cache.iterdir()) == sorted([log.name, ".filler-built.lock"])
    assert log.stat().st_size <= LOG_LIMIT + 4096
    assert _disk_bytes(cache) - _disk_bytes(log) <= before + 4096
    assert not _processes_naming(str(cache)), "the build's disk outlived its build"

    # within the limit, the same build keeps what it wrote (copied to disk once it passed)
    fits = _bot(tmp_path / "fits", ["sh", "-c", "mkdir out && " + FILL.replace("300", "20")],
                name="fits")
    done = build_bot(load_manifest(fits), fits, tmp_path / "fits-built")
    assert (done.folder / "count").read_text().strip() == "20"
    assert 20 * MB <= done.bytes <= 21 * MB
    assert _disk_bytes(done.folder) >= 20 * MB  # on disk now, not in the build's memory
    discard(done.folder)


@needs_sandbox
def test_a_sparse_file_counts_at_its_size_and_a_bad_limit_is_named(tmp_path, monkeypatch):
    """A sparse file takes no room on the build's tmpfs but would take its whole size once
    copied out: it counts at its size, and the build is refused."""
    monkeypatch.setenv("ARENA_BUILD_DISK_MB", "64")
    source = _bot(tmp_path / "src", ["sh", "-c", "mkdir out && truncate -s 200M out/holes"],
                  name="holes")
    with pytest.raises(BuildFailed) as e:
        build_bot(load_manifest(source), source, tmp_path / "holes-built")
    assert "wrote more than 64 MiB (its disk limit): its files come to 200 MiB" in str(e.value)
    assert not (tmp_path / "holes-built").exists()
    monkeypatch.setenv("ARENA_BUILD_DISK_MB", "lots")
    with pytest.raises(ValueError, match=r"ARENA_BUILD_DISK_MB='lots': expected a whole "
                                         r"number of MiB"):
        build_bot(load_manifest(source), source, tmp_path / "holes-built")


# -- the built cache -----------------------------------------------------------------------
@needs_sandbox
def test_the_cache_evicts_the_least_recently_used_built_version_never_one_in_play(
        tmp_path, monkeypatch):
    """Each version builds 3 MiB and the cache holds 7 MiB: the least recently used version's
    built folder goes (with its fetched copy), and a version a match plays stays."""
    from scheduler.registry.cache import built_path
    from scheduler.registry.submissions import submit
    from scheduler.registry.versions import materialise, pin_portable, playing
    from scheduler.store import open_store
    store = open_store(f"sqlite:///{tmp_path / 'arena.db'}")
    cache = tmp_path / "cache"
    bots = {}
    for v in ("1", "2", "3"):
        folder = _bot(tmp_path / f"blob-{v}", ["sh", "-c", "mkdir build && head -c 3145728 "
                                               "/dev/zero > build/blob"],
                      name="blob", version=v, files={"v.txt": v})
        version = submit(store, folder).version
        bots[v] = SeatBot("blob", pin_portable(version), version_hash=version.content_hash)

    def built(v: str) -> bool:
        return (built_path(cache, bots[v].version_hash) / BUILT_MARK).exists()

    monkeypatch.setenv("ARENA_BOT_CACHE_MB", "7")
    for v in ("1", "2", "1", "3"):  # 1 used again after 2: 2 is the least recent
        played = materialise(store, bots[v], cache)
        assert (played.manifest.folder / "build" / "blob").stat().st_size == 3 * MB
    assert built("1") and built("3") and not built("2")
    assert not (cache / bots["2"].version_hash).exists()  # its fetched copy went with it
    assert _disk_bytes(cache) <= 7 * MB

    with playing(store, [bots["1"]], cache) as (one,):  # a match plays 1
        materialise(store, bots["3"], cache)  # 1 is now the least recent
        materialise(store, bots["2"], cache)
        assert built("1") and built("2") and not built("3")
        assert (one.manifest.folder / "build" / "blob").is_file()
    materialise(store, bots["3"], cache)  # once played, 1 may go
    assert not built("1") and built("2") and built("3")


# -- the intake lane -----------------------------------------------------------------------
class _Recording:
    """A sender that records what it sends, for a worker with ``slots`` intake slots."""

    def __init__(self, slots: int) -> None:
        self.slots, self.sent, self.error = slots, [], None

    def send(self, task, arg, lane) -> bool:
        self.sent.append((task, arg, lane))
        return True

    def intake_slots(self) -> int:
        return self.slots


def _python_version(where: Path, name: str, version: str) -> Path:
    folder = where / f"{name}-{version}"
    shutil.copytree(BOTS / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = re.sub(r'(?m)^name = .*$', f'name = "{name}"', (folder / "bot.toml").read_text())
    (folder / "bot.toml").write_text(re.sub(r'(?m)^version = .*$', f'version = "{version}"',
                                            toml))
    return folder


def test_one_authors_uploads_hold_at_most_half_the_intake_slots(tmp_path, monkeypatch):
    """Two intake slots, alice's five uploads queued before bob's one: one slot for alice, and
    bob's upload is sent before her second; never on a match lane."""
    from scheduler.dispatch import Lane, Task
    from scheduler.service.intake import STALE_CLAIM_S, Dispatcher
    from scheduler.registry.owners import add_author
    from scheduler.registry.submissions import submit
    from scheduler.store import open_store
    store = open_store(f"sqlite:///{tmp_path / 'arena.db'}")
    for author in ("alice", "bob"):
        add_author(store, author)
    alice = [submit(store, _python_version(tmp_path, "alice-bot", f"1.0.{i}"), author="alice",
                    state="queued").version.id for i in range(5)]
    sender = _Recording(slots=2)
    dispatcher = Dispatcher(store, sender)

    def sent() -> list[int]:
        return [arg for _, arg, _ in sender.sent]
    dispatcher.step()
    assert sent() == [alice[0]]  # the other slot waits for another author
    bob = submit(store, _python_version(tmp_path, "bob-bot", "1.0.0"), author="bob",
                 state="queued").version.id
    dispatcher.step()
    assert sent() == [alice[0], bob]
    dispatcher.step()
    assert sent() == [alice[0], bob]  # alice's first still in the lane: her second waits
    assert store.versions.claim(alice[0], "w1", STALE_CLAIM_S)
    store.versions.set_state(alice[0], "ready", worker="w1")
    dispatcher.step()
    assert sent() == [alice[0], bob, alice[1]]
    assert {(task, lane) for task, _, lane in sender.sent} == {(Task.CHECK_VERSION,
                                                                Lane.INTAKE)}
    # four slots: two of hers at once; the organiser may set the share
    sender.slots = 4
    dispatcher.step()
    assert sent() == [alice[0], bob, alice[1], alice[2]]
    monkeypatch.setenv("ARENA_INTAKE_PER_AUTHOR", "3")
    dispatcher.step()
    assert sent() == [alice[0], bob, alice[1], alice[2], alice[3]]
