"""A ladder on two real Celery workers: four versions in the registry enter, a fifth becomes
ready mid-way and joins (placement against a spread of ratings, then a regular pair), a worker
is killed with SIGKILL mid-match; no match is lost or counted twice, the queue never holds more
than ``queue_ahead`` matches (watched the whole time), every scored pair is rated once, and the
ladder is cancelled cleanly."""

from __future__ import annotations

import contextlib
import re
import shutil
import threading
from pathlib import Path

import pytest
from browser_helpers import browser_kit, serving
from conftest import ROOT
from league_helpers import BOTS, REDIS_URL, Worker, arena, flush_redis, stop_all, wait_for

from scheduler.ladder import LadderRun, ladder_table
from scheduler.league import open_season
from scheduler.registry.submissions import submit
from scheduler.season import SeasonError, load_season
from scheduler.store import open_store

QUEUE_AHEAD = 4
ARTIFACTS = Path(__import__("os").environ.get("ARENA_TEST_ARTIFACTS") or ROOT / "tests" /
                 "artifacts")


def _version(where: Path, name: str) -> Path:
    folder = where / name
    shutil.copytree(BOTS / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (folder / "bot.toml").read_text()
    (folder / "bot.toml").write_text(re.sub(r'(?m)^name = .*$', f'name = "{name}"', toml))
    return folder


def _ladder_file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\nformat = "ladder"\nvariant = "two-deck-fry"\n'
                    f'deals_per_set = 1\nqueue_ahead = {QUEUE_AHEAD}\nplacement_pairs = 2\n'
                    'bots = "every ready version"\n')
    return path


def test_a_ladder_takes_a_new_version_survives_a_killed_worker_and_cancels_cleanly(tmp_path):
    import redis
    flush_redis()
    db = f"sqlite:///{tmp_path / 'ladder.db'}"
    store = open_store(db)
    for i in range(4):
        submit(store, _version(tmp_path, f"v{i}"))
    season = load_season(_ladder_file(tmp_path, "ladder-t"))
    assert open_season(season, store, workdir=tmp_path / "w") == 0
    workers = [Worker(db, tmp_path / f"w{i}.log", lease=3) for i in range(2)]
    runner = LadderRun(store, season, broker=REDIS_URL, lease_s=3, seed=7)
    stop, failures, seen = threading.Event(), [], []
    queue = redis.Redis.from_url(REDIS_URL)

    def watch() -> None:  # the bound, checked while the ladder runs
        while not stop.wait(0.05):
            in_play = store.ladder.in_play("ladder-t")
            queued = queue.llen("arena.ladder")  # the ladders' lane
            seen.append((in_play, queued))
            if in_play > QUEUE_AHEAD or queued > QUEUE_AHEAD:
                failures.append((in_play, queued))

    def keep_going() -> None:
        try:
            runner.run(poll_s=0.2, stop=stop, timeout_s=400)
        except Exception as e:  # the test fails on it below
            failures.append(repr(e))
    threads = [threading.Thread(target=watch), threading.Thread(target=keep_going)]
    try:
        for w in workers:
            w.wait_ready()
        for t in threads:
            t.start()

        def rated() -> int:
            return len({h.cluster for h in store.ladder.rating_history("ladder-t")})
        with _browser(db) as (page, base):  # chromium starts while the first pairs play
            wait_for(lambda: rated() >= 6, 200, "six rated pairs")
            assert {r["bot"] for r in ladder_table(store, "ladder-t")} == \
                {f"v{i}@1.0.0" for i in range(4)}
            _pages_while_it_runs(page, base, store)
        submit(store, _version(tmp_path, "v4"))  # ready: it joins

        # the kill once a match of the new version plays: the pairs queued before it are
        # played on both workers, not the one left
        def v4_in_play() -> bool:
            return any(m.status == "running" and "v4@1.0.0" in m.pairing
                       for m in store.pages.matches("ladder-t"))
        wait_for(v4_in_play, 60, "a match of the new version in play")
        workers[0].kill9()
        wait_for(lambda: next((r["pairs"] for r in ladder_table(store, "ladder-t")
                               if r["bot"] == "v4@1.0.0"), 0) >= 3, 240,
                 "the new version's two placement pairs and a regular one")
        assert arena("season", "cancel", "ladder-t", "--db", db).returncode == 0
        for t in threads[1:]:
            t.join(120)
        assert not threads[1].is_alive(), "the ladder did not end once cancelled"
    finally:
        stop.set()
        for t in threads:
            if t.is_alive():
                t.join(30)
        stop_all(workers)
    assert failures == [], failures[:5]
    assert seen and max(p for p, _ in seen) <= QUEUE_AHEAD
    c = store.seasons.counts("ladder-t")
    assert c["pending"] == c["running"] == c["failed"] == 0, c
    matches = store.pages.matches("ladder-t")
    done = [m for m in matches if m.status == "done"]
    assert len(done) == c["done"] and store.results.count("ladder-t") == c["done"]
    # each scored pair rated once, its two versions each once
    history = store.ladder.rating_history("ladder-t")
    pairs = store.results.pair_scores("ladder-t")
    assert sorted({h.cluster for h in history}) == sorted(p.cluster for p in pairs)
    assert len(history) == 2 * len(pairs)
    assert sorted(h.pair_index for h in history) == sorted(
        i for i in range(len(pairs)) for _ in (0, 1))
    # the new version: placed against two different versions first, in the order the ladder
    # planned its pairs (a placement match the killed worker held is written after a later
    # pair: the order written is not the order planned)
    planned: dict[str, int] = {}
    for m in matches:
        planned[m.cluster] = min(planned.get(m.cluster, m.ordinal), m.ordinal)
    v4 = [p for p in sorted(pairs, key=lambda p: planned[p.cluster])
          if "v4@1.0.0" in (p.bot_a, p.bot_b)]
    firsts = {p.bot_b if p.bot_a == "v4@1.0.0" else p.bot_a for p in v4[:2]}
    assert len(v4) >= 3 and len(firsts) == 2, [(p.bot_a, p.bot_b) for p in v4]
    # the killed worker's match was played again and counted once
    lost = [a for a in store.pages.attempt_log("ladder-t") if a.outcome == "lost"]
    assert all(store.pages.match(a.match_id).status in ("done", "cancelled") for a in lost)
    # a resumed run of a cancelled ladder is refused; the standings read it
    with pytest.raises(SeasonError, match="was cancelled"):
        open_season(load_season(_ladder_file(tmp_path, "ladder-t")), store,
                    workdir=tmp_path / "w")
    shown = arena("standings", "ladder-t", "--db", db, check=True).stdout
    assert "v4@1.0.0" in shown and "mu-3sigma" in shown and "Bradley-Terry" in shown


@contextlib.contextmanager
def _browser(db: str):
    """The app served and a page of chromium open: (the page, the app's base URL)."""
    from web.app import create_app
    sync_playwright, chromium = browser_kit()
    with serving(create_app(db)) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium)
        try:
            yield browser.new_page(), base
        finally:
            browser.close()


def _pages_while_it_runs(page, base: str, store) -> None:
    """The ladder's pages in a real browser while it runs: its table against the store's, the
    live counts moving without a reload, a version's rating history."""
    from playwright.sync_api import expect
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{base}/seasons/ladder-t")
    rows = page.locator("#ladder-table tr")
    assert rows.count() == 1 + len(store.ladder.entries("ladder-t"))
    shown = [rows.nth(i).locator("td").nth(1).inner_text() for i in range(1, rows.count())]
    assert sorted(shown) == sorted(f"v{i}@1.0.0" for i in range(4))
    done = int(page.locator("#p-done").inner_text())
    # progress.js polls the counts: they move with no reload
    expect(page.locator("#p-done")).not_to_have_text(str(done), timeout=60_000)
    assert int(page.locator("#p-done").inner_text()) > done
    page.screenshot(path=str(ARTIFACTS / "ladder-season.png"), full_page=True)
    page.locator("#ladder-table a").first.click()
    history = page.locator("#version-history tr")
    assert history.count() >= 2, page.content()[:500]
    bot = page.locator("h1").inner_text().split(" on ladder")[0]
    want = [h for h in store.ladder.rating_history("ladder-t") if h.bot == bot]
    assert 0 < history.count() - 1 <= len(want)  # (read after the page: more, maybe)
    page.screenshot(path=str(ARTIFACTS / "ladder-version.png"), full_page=True)


def test_each_authors_newest_ready_versions_play_and_older_ones_retire(tmp_path):
    """``active_versions``: an author's newest ready versions enter; a newer one retires the
    oldest (its entry and history kept); queued, refused and withdrawn versions never enter."""
    from scheduler.ladder import roster
    from scheduler.registry.owners import add_author
    store = open_store(f"sqlite:///{tmp_path / 'l.db'}")
    for who in ("alice", "bob"):
        add_author(store, who)
    submit(store, _version(tmp_path, "house"))                      # the organiser's
    submit(store, _version(tmp_path, "alice-bot"), author="alice", state="ready")
    b1 = submit(store, _version(tmp_path / "b", "bob-bot"), author="bob", state="queued").version
    assert sorted(roster(store, 1).playing) == ["alice-bot@1.0.0", "house@1.0.0"]
    season = load_season(_ladder_file(tmp_path, "ladder-r"))
    open_season(season, store, workdir=tmp_path / "w")
    runner = LadderRun(store, season, seed=1)
    assert sorted(runner.admit()) == ["alice-bot@1.0.0", "house@1.0.0"]
    a2 = submit(store, _version(tmp_path / "c", "alice-bot"), version="2.0.0", author="alice",
                state="ready").version
    store.versions.set_state(b1.id, "refused", reason="its smoke match failed")
    assert runner.admit() == ["alice-bot@2.0.0"]
    entries = {e.bot: e for e in store.ladder.entries("ladder-r")}
    assert entries["alice-bot@1.0.0"].retired_at is not None
    assert entries["alice-bot@2.0.0"].retired_at is None
    assert entries["alice-bot@2.0.0"].author == "alice"
    assert not runner.model.entrants["alice-bot@1.0.0"].active
    assert "bob-bot@1.0.0" not in entries
    store.versions.withdraw(a2.id, "withdrawn by the organiser")
    runner.admit()
    entries = {e.bot: e for e in store.ladder.entries("ladder-r")}
    assert entries["alice-bot@2.0.0"].retired_at is not None
    assert {r["bot"] for r in ladder_table(store, "ladder-r")} == set(entries)


def test_a_ladder_pairs_records_are_sealed_until_both_matches_are_played(tmp_path):
    """The ladder adds each pair's two matches on the same secret cards; the first one's record
    is served only once its mirror is played, as in a season."""
    from fastapi.testclient import TestClient

    from scheduler.execute import execute_match
    from web.app import create_app
    db = f"sqlite:///{tmp_path / 'l.db'}"
    store = open_store(db)
    for name in ("p", "q"):
        submit(store, _version(tmp_path, name))
    season = load_season(_ladder_file(tmp_path, "ladder-s"))
    open_season(season, store, workdir=tmp_path / "w")
    runner = LadderRun(store, season, seed=3)
    runner.admit()
    assert runner.fill() == QUEUE_AHEAD // 2
    first, mirror = store.pages.matches("ladder-s")[:2]
    assert first.cluster == mirror.cluster and mirror.mirror and not first.mirror
    assert first.spec["deals"] == mirror.spec["deals"]
    # secret, per pair
    assert first.spec["deals"] != store.pages.matches("ladder-s")[2].spec["deals"]
    assert execute_match(db, first.id) == "done"
    client = TestClient(create_app(db))
    assert client.get(f"/api/matches/{first.id}").status_code == 403
    assert client.get(f"/api/matches/{first.id}/replay").status_code == 403
    assert execute_match(db, mirror.id) == "done"
    assert client.get(f"/api/matches/{first.id}").status_code == 200
    assert runner._rate_new() == 1  # the pair, rated once
    assert len(store.ladder.rating_history("ladder-s")) == 2
    assert runner._rate_new() == 0 and len(store.ladder.rating_history("ladder-s")) == 2


def test_a_ladder_plays_on_the_local_pool_until_cancelled(tmp_path):
    """No broker: each pass plays what is in play on this machine, then rates it."""
    db = f"sqlite:///{tmp_path / 'l.db'}"
    store = open_store(db)
    for name in ("p", "q", "r"):
        submit(store, _version(tmp_path, name))
    season = load_season(_ladder_file(tmp_path, "ladder-l"))
    open_season(season, store, workdir=tmp_path / "w")
    runner = LadderRun(store, season, workers=2, seed=5)
    assert runner.step()
    c = store.seasons.counts("ladder-l")
    assert c["done"] == QUEUE_AHEAD and c["pending"] == c["running"] == 0
    assert len(store.results.pair_scores("ladder-l")) == QUEUE_AHEAD // 2
    assert len(store.ladder.rating_history("ladder-l")) == QUEUE_AHEAD  # two versions a pair
    store.cancels.cancel("ladder-l", by="test")
    assert not runner.step()
    assert store.seasons.counts("ladder-l")["done"] == QUEUE_AHEAD
