"""What a bot author does first, for Java, Python (greedy, search), Rust and Go: copy a sample to a folder of
their own outside the repository, change its name and nothing else, then `arena match` it (built
from source on the way) and, meanwhile, `arena bots submit` it, and enter the submitted
versions in a registry season that two Celery workers play, building each version from its
archive in caches of their own."""

import shutil
import subprocess
import sys

from conftest import ROOT
from league_helpers import (REDIS_URL, Worker, arena, env, flush_redis, season_file, stop_all,
                            unique)
from test_league import _exactly_once

from referee.match.matchfile import MatchFile
from referee.seats.manifest import BUILD_OUTPUT
from scheduler.league import open_season, run_distributed
from scheduler.season import load_season
from scheduler.store import Store

SAMPLES = {"java": "java", "python": "python/greedy", "rust": "rust", "go": "go",
           "search": "python/search"}


def _own_copy(language: str, into, name: str):
    """The sample copied as an author would (without what a build made) under ``name``."""
    folder = into / name
    shutil.copytree(ROOT / "sample_bots" / SAMPLES[language], folder,
                    ignore=shutil.ignore_patterns(*BUILD_OUTPUT))
    toml = folder / "bot.toml"
    lines = toml.read_text().splitlines()
    renamed = [f'name = "{name}"' if line.startswith("name = ") else line for line in lines]
    assert renamed != lines
    toml.write_text("\n".join(renamed) + "\n")
    folder.chmod(0o755)
    return folder


def test_copied_samples_play_submit_and_play_a_registry_season_on_two_workers(
        tmp_path, pg, monkeypatch):
    monkeypatch.setenv("ARENA_BOT_CACHE", str(tmp_path / "cache-author"))
    db = pg
    caches = [tmp_path / f"cache-w{i}" for i in range(2)]
    workers = []  # started first: they get ready while the author plays and submits
    flush_redis()
    for i in range(2):
        (tmp_path / f"w{i}").mkdir()
        workers.append(Worker(db, tmp_path / f"w{i}.log", cwd=tmp_path / f"w{i}",
                              extra_env={"ARENA_BOT_CACHE": str(caches[i])}))
    try:
        _author_and_season(tmp_path, db, workers, caches)
    finally:
        stop_all(workers)


def _author_and_season(tmp_path, db, workers, caches):
    tag = unique("copied")
    home = tmp_path / "author"  # outside the repository
    home.mkdir()
    bots = {lang: _own_copy(lang, home, f"{tag}-{lang}") for lang in SAMPLES}

    # arena match: four copies at one table, each built on the way (Go's: tests/test_match_cli);
    # its own process, which builds from a copy of each folder (the folders only read): the
    # author submits meanwhile rather than after it (its builds take seconds)
    record = home / "m.json"
    played = subprocess.Popen(
        [sys.executable, "-m", "cli", "match",
         *(str(bots[lang]) for lang in ("java", "python", "rust", "search")),
         "--variant", "two-deck-80", "--deals", "1", "--out", str(record)],
        cwd=home, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # arena bots submit: each stored under its own name, read back
        refs = {}
        for lang, folder in bots.items():
            p = arena("bots", "submit", str(folder), "--db", db, cwd=home)
            assert p.returncode == 0, p.stdout + p.stderr
            refs[lang] = p.stdout.split()[0]
            assert refs[lang] == f"{tag}-{lang}@1.0.0"
        shown = arena("bots", "show", refs["rust"], "--db", db, cwd=home)
        assert shown.returncode == 0 and f"{tag}-rust" in shown.stdout, shown.stderr
        out, err = played.communicate(timeout=300)
    finally:
        if played.poll() is None:
            played.kill()
            played.wait()
    assert played.returncode == 0, out + err
    match = MatchFile.load(record)
    assert match.faults == [] and match.result.strikes == (0, 0, 0, 0), out
    assert match.verify() == []
    assert {t.seat for t in match.decision_times()} == {0, 1, 2, 3}

    # a registry season of the Java, Python and Rust versions on two Celery workers
    shutil.rmtree(home)  # no worker ever saw the folders
    name = unique("copied-season")
    extra = "".join(f'[[bots]]\nbot = "{refs[lang]}"\n' for lang in ("java", "python", "rust"))
    path = season_file(tmp_path, name, [], variant="two-deck-80", deal_sets=1,
                       deals_per_set=1, extra=f'secret = "{name}-secret"\n' + extra)
    store = Store(db)
    open_season(load_season(path), store, workdir=tmp_path / "checks", check=False)
    for w in workers:
        w.wait_ready()
    run_distributed(store, name, REDIS_URL, progress=False, timeout_s=300)
    _exactly_once(store, name)
    rows = store.pages.matches(name)
    assert len(rows) == 6  # three pairings, each deal set twice
    for m in rows:
        record = store.results.record(m.id)
        assert record.faults == [] and record.result.forfeit is None, m.id
        assert record.verify() == []
    built = [p.name for c in caches if c.exists() for p in c.iterdir() if p.name.endswith("-built")]
    assert built, "no worker built a version from its archive"
