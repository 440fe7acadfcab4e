"""Seasons of registry versions: workers anywhere fetch the pinned bytes, and a bot's folder
edited or gone changes nothing in a season that pinned it."""

import shutil

from conftest import ROOT
from league_helpers import (REDIS_URL, Worker, arena, flush_redis, season_file, stop_all,
                            unique)
from test_league import _exactly_once, _standings

from scheduler.league import open_season, run_distributed, run_local
from scheduler.season import load_season
from scheduler.store import Store

PY = ROOT / "sample_bots" / "python"



def _own_copy(sample: str, into, name: str):
    """A sample bot copied into a folder of its own, under another name (what a bot author's
    own bot is: the SDK and the rules engine come with every Python bot)."""
    folder = into / name
    shutil.copytree(PY / sample, folder, ignore=shutil.ignore_patterns("__pycache__"))
    folder.chmod(0o755)
    toml = (folder / "bot.toml").read_text()
    toml = toml.replace(f'name = "{sample}"', f'name = "{name}"')
    (folder / "bot.toml").write_text(toml)
    return folder


def test_workers_that_never_saw_the_bot_folders_play_the_submitted_versions(tmp_path, pg,
                                                                            monkeypatch):
    """Both bots submitted, their folders deleted; the season names them by reference. Two
    Celery workers with their own working folders and caches play it on PostgreSQL, with the
    standings of the same season played locally on SQLite."""
    name = unique("pinned")
    local_db, remote_db = f"sqlite:///{tmp_path}/local.db", pg
    src = tmp_path / "src"
    src.mkdir()
    refs = {}
    for sample in ("random", "greedy"):
        folder = _own_copy(sample, src, f"{name}-{sample}")
        for db in (local_db, remote_db):
            p = arena("bots", "submit", str(folder), "--db", db, check=True)
            refs[sample] = p.stdout.split()[0]
    assert refs == {"random": f"{name}-random@1.0.0", "greedy": f"{name}-greedy@1.0.0"}
    shutil.rmtree(src)  # no machine has the folders now
    path = season_file(tmp_path, name, [], deal_sets=2, deals_per_set=1,
                       extra=f'secret = "{name}-research-secret"\n[[bots]]\n'
                             f'bot = "{refs["random"]}"\n[[bots]]\nbot = "{name}-greedy"\n')
    season = load_season(path)
    monkeypatch.setenv("ARENA_BOT_CACHE", str(tmp_path / "cache-local"))
    local = Store(local_db)
    open_season(season, local, workdir=tmp_path / "checks", check=False)
    assert run_local(local, name, workers=2, progress=False)["done"] == 4

    flush_redis()
    remote = Store(remote_db)
    open_season(season, remote, workdir=tmp_path / "checks", check=False)
    hashes = {b.version_hash for b in remote.seasons.bots(name)}
    assert len(hashes) == 2 and None not in hashes
    caches = [tmp_path / f"cache-w{i}" for i in range(2)]
    workers = []
    for i in range(2):
        (tmp_path / f"w{i}").mkdir()
        workers.append(Worker(pg, tmp_path / f"w{i}.log", cwd=tmp_path / f"w{i}",
                              extra_env={"ARENA_BOT_CACHE": str(caches[i])}))
    try:
        for w in workers:
            w.wait_ready()
        run_distributed(remote, name, REDIS_URL, progress=False, timeout_s=240)
    finally:
        stop_all(workers)
    _exactly_once(remote, name)
    assert _standings(remote, name) == _standings(local, name)
    for m in remote.pages.matches(name):  # the records name the cached versions, not a source path
        record = remote.results.record(m.id)
        assert record.result.forfeit is None and record.faults == [], m.id
    fetched = [{p.name for p in c.iterdir() if p.is_dir()} if c.exists() else set()
               for c in caches]
    assert hashes <= set().union(*fetched), fetched  # the workers fetched what they played


def test_a_pinned_season_plays_its_version_whatever_the_folder_becomes(tmp_path):
    """Editing a submitted bot's folder changes nothing in its running season (a note says
    so); submitting it again as a new version gives a new season another bot."""
    name = unique("edited")
    db = f"sqlite:///{tmp_path}/s.db"
    mine = _own_copy("random", tmp_path, f"{name}-mine")
    path = season_file(tmp_path, name, [str(PY / "greedy"), str(mine)], deal_sets=2,
                       deals_per_set=1)
    store = Store(db)
    open_season(load_season(path), store, workdir=tmp_path / "checks", check=False)
    pinned = {b.name: b.version_hash for b in store.seasons.bots(name)}
    (mine / "bot.py").write_text((mine / "bot.py").read_text() + "\nraise SystemExit(9)\n")
    again = arena("season", "run", str(path), "--db", db, "--no-check", "--no-progress",
                  cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"is no longer {name}-mine@1.0.0 (files bot.py (changed)); the season plays " \
        f"{name}-mine@1.0.0, the version it pinned" in again.stderr, again.stderr
    _exactly_once(store, name)
    assert all(store.results.record(m.id).faults == [] for m in store.pages.matches(name))
    assert {b.name: b.version_hash for b in store.seasons.bots(name)} == pinned
    standings = arena("standings", name, "--db", db, check=True).stdout
    assert f"{name}-mine = {name}-mine@1.0.0 ({pinned[f'{name}-mine'][:12]})" in standings
    # the edited folder as a new version, which a new season picks as the latest
    (mine / "bot.py").write_text((mine / "bot.py").read_text().replace(
        "\nraise SystemExit(9)\n", "\n# tuned\n"))
    p = arena("bots", "submit", str(mine), "--version", "1.0.1", "--db", db, check=True)
    assert p.stdout.startswith(f"{name}-mine@1.0.1 ")
    later = season_file(tmp_path, f"{name}-2", [], deal_sets=1, deals_per_set=1,
                        extra=f'[[bots]]\nbot = "{name}-mine"\n[[bots]]\nmanifest = '
                              f'"{PY / "greedy"}"\n')
    arena("season", "run", str(later), "--db", db, "--no-check", "--no-progress",
          cwd=tmp_path, check=True)
    new = {b.name: b.version_hash for b in store.seasons.bots(f"{name}-2")}
    assert new[f"{name}-mine"] != pinned[f"{name}-mine"]
    assert new["greedy"] == pinned["greedy"]  # the same content: the same version


def test_bots_built_from_source_are_built_once_at_submission_and_played_so(tmp_path,
                                                                           monkeypatch):
    """The Node.js bot (npm ci from its vendored cache) and the C++ bot (make) are submitted,
    which builds each in the sandbox into this machine's cache; the season's worker here
    fetches each version (verified) and plays that build."""
    db = f"sqlite:///{tmp_path}/s.db"
    cache = tmp_path / "cache"
    monkeypatch.setenv("ARENA_BOT_CACHE", str(cache))  # (the arena processes' too)
    refs = []
    for folder in ("node", "cpp"):
        p = arena("bots", "submit", str(ROOT / "sample_bots" / folder), "--db", db,
                  timeout=600, check=True)
        refs.append(p.stdout.split()[0])
    assert refs == ["node-sample@1.0.0", "cpp-sample@1.0.0"]
    name = unique("built")
    path = season_file(tmp_path, name, [], deal_sets=1, deals_per_set=1,
                       extra="".join(f'[[bots]]\nbot = "{r}"\n' for r in refs))
    built_at_submission = {p: (p / ".arena-build.log").stat().st_mtime_ns
                           for p in cache.iterdir() if p.name.endswith("-built")}
    assert len(built_at_submission) == 2
    store = Store(db)
    open_season(load_season(path), store, workdir=tmp_path / "checks", check=False)
    assert run_local(store, name, workers=1, progress=False)["done"] == 2
    assert {p: (p / ".arena-build.log").stat().st_mtime_ns
            for p in built_at_submission} == built_at_submission  # not built again
    _exactly_once(store, name)
    for m in store.pages.matches(name):
        record = store.results.record(m.id)
        assert record.result.forfeit is None and record.faults == [], record.faults
        assert record.sandbox == "bubblewrap"
    built = sorted(p.name for p in cache.iterdir() if p.name.endswith("-built"))
    assert [b[:-len("-built")] for b in built] == sorted(b.version_hash
                                                        for b in store.seasons.bots(name))
    for b in built:  # each built once here, in the sandbox, its log kept
        assert (cache / b / ".arena-build.log").exists()
    assert (cache / built[0] / "build" / "arena_bot").exists() or \
        (cache / built[1] / "build" / "arena_bot").exists()


def test_a_version_whose_build_fails_or_runs_too_long_is_refused_and_nothing_stored(
        tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_BUILD_TIMEOUT_S", "2")  # (for the arena processes started here)
    monkeypatch.setenv("ARENA_BOT_CACHE", str(tmp_path / "cache"))
    db = f"sqlite:///{tmp_path}/s.db"
    for case, build, said in (
            ("fails", '["sh", "-c", "echo compiling; echo missing header >&2; exit 3"]',
             "exited with status 3"),
            ("slow", '["sleep", "30"]', "ran past 2 s")):
        folder = tmp_path / case
        folder.mkdir(mode=0o755)
        (folder / "bot.toml").write_text(f'name = "{case}"\nversion = "1"\n'
                                         f'command = ["./bot"]\nbuild = {build}\n')
        p = arena("bots", "submit", str(folder), "--db", db, timeout=120)
        assert p.returncode == 2, p.stdout
        line = p.stderr.strip().splitlines()[0]
        assert line.startswith(f"arena bots submit: {case}@1: build ") and said in line, \
            p.stderr
        if case == "fails":
            assert "missing header" in p.stderr  # the end of its log
    assert Store(db).registry.versions() == []


def test_bots_check_plays_a_bot_built_from_source_as_it_will_play(tmp_path):
    p = arena("bots", "check", str(ROOT / "sample_bots" / "node"), "--workdir",
              str(tmp_path), timeout=300)
    assert p.returncode == 0 and p.stdout.startswith("ok   node-sample@1.0.0"), \
        p.stdout + p.stderr


def test_a_season_folder_whose_version_is_taken_by_other_content_gets_a_version_of_its_own(
        tmp_path):
    db = f"sqlite:///{tmp_path}/s.db"
    mine = _own_copy("random", tmp_path, "mine")
    arena("bots", "submit", str(mine), "--db", db, check=True)
    (mine / "bot.py").write_text((mine / "bot.py").read_text() + "\n# edited, same version\n")
    name = unique("taken")
    path = season_file(tmp_path, name, [str(PY / "greedy"), str(mine)], deal_sets=1,
                       deals_per_set=1)
    p = arena("season", "run", str(path), "--db", db, "--no-check", "--no-progress",
              cwd=tmp_path, check=True)
    store = Store(db)
    pinned = next(b for b in store.seasons.bots(name) if b.name == "mine")
    suffix = pinned.version_hash[:12]
    assert f"this folder is submitted as mine@1.0.0+{suffix}" in p.stderr, p.stderr
    assert [v.version for v in store.registry.versions("mine")] == ["1.0.0", f"1.0.0+{suffix}"]
    assert f"mine = mine@1.0.0+{suffix} ({suffix})" in arena("standings", name, "--db", db,
                                                          check=True).stdout
    refused = arena("bots", "submit", str(mine), "--db", db, "--version", "1.0.0")
    assert refused.returncode == 2 and "a version never changes" in refused.stderr
