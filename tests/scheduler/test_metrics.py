"""``/metrics`` of ``arena season run`` scraped mid-season: its counters are the store's counts
(matches started and finished, decisions and faults from the stored records), and the season's
gauges are its matches by status. The worker's endpoint is checked in test_soft_shutdown.py."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request

from league_helpers import BOTS, env, season_file, unique, wait_for

from conftest import ROOT
from scheduler.store import Store

PORT = 9463 + int(os.environ.get("ARENA_TEST_RUN", "0"))  # (a run of its own: conftest)


def scrape(port: int) -> dict[str, float]:
    """The samples of ``/metrics`` on ``port``: {"name{labels}": value}."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def store_view(store: Store, name: str) -> dict:
    """What the counters must say, read from the store: results, attempts, decisions (the
    records' timings) and faults by kind."""
    done = [m for m in store.pages.matches(name) if m.status == "done"]
    decisions, faults = 0, {}
    for m in done:
        record = store.results.record(m.id)
        decisions += len(record.extra["timings"])
        for f in record.faults:
            faults[f.kind] = faults.get(f.kind, 0) + 1
    return {"done": len(done), "attempts": len(store.pages.attempt_log(name)),
            "decisions": decisions, "faults": faults, "counts": store.seasons.counts(name)}


def test_season_run_metrics_match_the_store_mid_season(tmp_path):
    name = unique("metrics")
    db = f"sqlite:///{tmp_path}/s.db"
    path = season_file(tmp_path, name, [BOTS / "random", BOTS / "cheap"], deal_sets=2,
                       deals_per_set=1)
    with open(tmp_path / "run.log", "wb") as log:
        run = subprocess.Popen([sys.executable, "-m", "cli", "season", "run", str(path), "--db",
                                db, "--workers", "1", "--no-check", "--no-progress",
                                "--metrics-port", str(PORT)], cwd=tmp_path, env=env(),
                               stdout=log, stderr=subprocess.STDOUT)
    store = None
    try:
        wait_for(lambda: "metrics on :" in (tmp_path / "run.log").read_text(), 60,
                 "the metrics endpoint")
        store = Store(db)

        def consistent():
            """A scrape taken while the store did not change, with matches still to play."""
            before = store_view(store, name)
            got = scrape(PORT)
            after = store_view(store, name)
            if before != after or not 1 <= before["done"] < 4:
                return None
            return got, before

        got, seen = wait_for(consistent, 90, "a scrape mid-season", poll=0.3)
    finally:
        run.wait(120)
    assert run.returncode == 0, (tmp_path / "run.log").read_text()
    assert got["arena_matches_finished_total"] == seen["done"]
    assert got["arena_matches_started_total"] == seen["attempts"]
    assert got["arena_decisions_total"] == seen["decisions"] > 0
    assert got["arena_decision_duration_seconds_count"] == seen["decisions"]
    assert got["arena_match_duration_seconds_count"] == seen["done"]
    assert {k: v for k, v in got.items() if k.startswith("arena_faults_total")} == {
        f'arena_faults_total{{kind="{k}"}}': n for k, n in seen["faults"].items()}
    for status, n in seen["counts"].items():
        assert got[f'arena_season_matches{{season="{name}",status="{status}"}}'] == n
    assert got["arena_matches_failed_total"] == 0
    # no per-bot label anywhere
    assert not any("bot" in k.partition("{")[2] for k in got), sorted(got)
    assert str(ROOT) not in "".join(got)


def test_a_bad_metrics_port_is_named_before_anything_starts(tmp_path, capsys, monkeypatch):
    from cli.main import main
    assert main(["season", "run", str(tmp_path / "none.toml"), "--metrics-port", "70000"]) == 2
    assert "--metrics-port='70000': expected a TCP port number" in capsys.readouterr().err
    monkeypatch.setenv("ARENA_METRICS_PORT", "http")
    assert main(["worker", "--db", f"sqlite:///{tmp_path}/x.db"]) == 2  # (nothing started)
    assert "ARENA_METRICS_PORT='http': expected a TCP port" in capsys.readouterr().err
