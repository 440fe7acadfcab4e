"""Soft shutdown: a worker told to stop (SIGTERM) hands its match back at once, uncharged and
not lost, or, given a grace, finishes it; the live list of workers follows them.

Real Celery worker processes (``arena worker``), Redis database 11, a SQLite store.
"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from league_helpers import (BOTS, Worker, arena, flush_redis, season_file, stop_all, unique,
                            wait_for)

from test_metrics import scrape

from scheduler.league import open_season
from scheduler.season import load_season
from scheduler.store import Store
from scheduler.workers import list_workers

REDIS = f"redis://{os.environ.get('ARENA_TEST_REDIS_SERVER', '127.0.0.1:6379')}/11"
PORTS = (9461, 9462)
# one Redis database for the file's tests, which flush it: never two of them at once
pytestmark = pytest.mark.xdist_group("test_soft_shutdown")


def _season(tmp_path, deals: int, matches: int = 1):
    name = unique("soft")
    path = season_file(tmp_path, name, [BOTS / "random", BOTS / "cheap"], deal_sets=matches,
                       deals_per_set=deals, duplicate=False)
    store = Store(f"sqlite:///{tmp_path}/s.db")
    open_season(load_season(path), store, workdir=tmp_path / "checks", check=False)
    return name, store


def _enqueue(store: Store, name: str) -> None:
    from scheduler.tasks import make_app
    app = make_app(REDIS)
    for mid in store.queue.due(name, 3600):
        app.send_task("arena.play_match", args=[mid], queue="arena")


def _workers_json() -> list[dict]:
    p = arena("workers", "--broker", REDIS, "--json", check=True)
    return json.loads(p.stdout)["workers"]


def _under_way(store: Store, name: str, after_s: float = 0.5):
    """A match running for ``after_s`` (its bots connected, deals being played)."""
    return next((m for m in store.pages.matches(name) if m.status == "running"
                 and time.time() - m.started_at > after_s), None)


def test_sigterm_hands_the_match_back_uncharged_and_another_worker_plays_it(tmp_path):
    """Two workers each playing a match; the first's main process is told to stop, as a
    container stop does: it ends at once, its match pending again with no attempt charged
    and its message back in the queue, which the other worker then plays (no reconciler)."""
    flush_redis(REDIS)
    name, store = _season(tmp_path, deals=6, matches=2)
    workers = [Worker(store.url, tmp_path / f"w{i}.log", broker=REDIS, lease=3,
                      extra_env={"ARENA_HEARTBEAT_S": "0.5",
                                 "ARENA_METRICS_PORT": str(PORTS[i])}) for i in range(2)]
    try:
        for w in workers:
            w.wait_ready()
        _enqueue(store, name)
        wait_for(lambda: all(m.status == "running" for m in store.pages.matches(name)), 30,
                 "both matches under way")
        # the live list names each worker and the match it plays
        listed = wait_for(lambda: [w for w in list_workers(REDIS) if w["matches"]]
                          if len([w for w in list_workers(REDIS) if w["matches"]]) == 2
                          else None, 10, "both workers' matches in their heartbeats")
        playing = {w["pid"]: w["matches"][0]["match"] for w in listed}
        assert sorted(playing.values()) == sorted(m.id for m in store.pages.matches(name))
        assert all(w["alive"] and w["state"] == "running" for w in listed)
        first, other = workers
        victim = store.pages.match(playing[first.proc.pid])
        before = scrape(PORTS[0])
        assert before["arena_matches_started_total"] == 1, before
        assert before["arena_matches_finished_total"] == 0, before
        assert victim.lease_owner.split(":")[1] != str(first.proc.pid)  # a pool process's
        told = time.time()
        os.kill(first.proc.pid, signal.SIGTERM)  # the main process only
        first.proc.wait(20)
        log = store.pages.attempt_log(name, victim.id)  # (the other worker may have it now)
        assert log[0].worker == victim.lease_owner and log[0].outcome == "interrupted"
        assert log[0].ended_at - told < 2.5, log  # at once, not after the match
        assert "not counted as an attempt" in log[0].reason
        # the stopped one is no longer listed as running (its key is deleted as it ends; an entry
        # left behind is at most one marked "stopping")
        def running():
            return [w["pid"] for w in _workers_json() if w["state"] == "running"]
        try:
            wait_for(lambda: running() == [other.proc.pid], 5,
                     f"only the other worker {other.proc.pid} running after {first.proc.pid} "
                     "stopped")
        except AssertionError as e:
            raise AssertionError(f"{e}; listed: {_workers_json()}") from None
        wait_for(lambda: store.seasons.counts(name)["done"] == 2, 60, "both matches played")
        # the other worker's /metrics: its counts in the store (both matches, no hand-back)
        got = scrape(PORTS[1])
        mine = [a for a in store.pages.attempt_log(name) if a.worker != victim.lease_owner]
        assert got["arena_matches_started_total"] == len(mine) == 2
        assert got["arena_matches_finished_total"] == 2 == store.results.count(name)
        assert got["arena_matches_handed_back_total"] == 0
        decisions = sum(len(store.results.record(m.id).extra["timings"])
                        for m in store.pages.matches(name))
        assert got["arena_decisions_total"] == decisions > 0
        assert got["arena_decision_duration_seconds_count"] == decisions
        assert got["arena_queue_depth"] == 0
    finally:
        stop_all(workers)
    m = store.pages.match(victim.id)
    assert m.attempts == 1 and store.results.count(name) == 2  # the stop not charged
    log = store.pages.attempt_log(name, victim.id)
    assert [a.outcome for a in log] == ["interrupted", "done"], log
    assert log[1].worker.split(":")[1] != log[0].worker.split(":")[1]


def test_with_a_grace_a_stopped_worker_group_finishes_its_match(tmp_path):
    """SIGTERM to the whole process group (a terminal's stop): with ARENA_STOP_GRACE_S the
    pool process finishes its match, which counts once; the next match is not started."""
    flush_redis(REDIS)
    name, store = _season(tmp_path, deals=2, matches=2)
    worker = Worker(store.url, tmp_path / "w.log", broker=REDIS, lease=3,
                    extra_env={"ARENA_STOP_GRACE_S": "60"})
    try:
        worker.wait_ready()
        _enqueue(store, name)
        victim = wait_for(lambda: _under_way(store, name, 0.2), 30, "a match under way")
        os.killpg(worker.proc.pid, signal.SIGTERM)
        worker.proc.wait(60)
    finally:
        worker.stop()
    m = store.pages.match(victim.id)
    assert m.status == "done" and m.attempts == 1, m
    assert [a.outcome for a in store.pages.attempt_log(name, victim.id)] == ["done"]
    other = next(x for x in store.pages.matches(name) if x.id != victim.id)
    assert other.status == "pending" and other.attempts == 0
