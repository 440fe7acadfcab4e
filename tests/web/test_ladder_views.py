"""How the dashboard and ``arena seasons`` show an open ladder (and unplayed matches): its
versions in play, its pace instead of an end, each version's rating from its join. The store's
rows are written directly: no match is played."""

from __future__ import annotations

import json
import re
import time

import pytest
from fastapi.testclient import TestClient
from league_helpers import arena
from sqlalchemy import update
from test_record_storage import summary_written, toy_match

from referee.match.matchfile import MatchSummary
from scheduler.league import open_season
from scheduler.season import load_season
from scheduler.stats.scores import match_tally, score_pair
from scheduler.store import open_store, results, seasons
from scheduler.store.rows import PlannedMatch
from web.app import create_app

LADDER = "ladder-v"
ACTIVE = [f"v{i}@1.0.0" for i in range(5)]
RETIRED = ["old0@1.0.0", "old1@1.0.0"]
SUMMARY = {"deals": [], "net": [1, -1], "score": [1.0, 0.0]}


def _plan(i: int, a: str, b: str) -> PlannedMatch:
    """A ladder match of ``a`` and ``b`` (team 0: ``a``), as the ladder adds them; on cards
    of its own (its seed), so that no unplayed match here keeps a played one sealed."""
    return PlannedMatch(f"{LADDER}-{i:05d}", i, f"{a}|{b}", f"{a}|{b}#{i // 2}", bool(i % 2),
                        (a, b, a, b), {"variant": "two-deck-fry", "seed": f"{LADDER}-{i}"})


@pytest.fixture
def ladder(tmp_path):
    """A ladder with five versions in play and two retired; seven matches: five done, one
    running, one pending. Returns (db url, store)."""
    db = f"sqlite:///{tmp_path / 'ladder.db'}"
    store = open_store(db)
    path = tmp_path / f"{LADDER}.toml"
    path.write_text(f'name = "{LADDER}"\nformat = "ladder"\nvariant = "two-deck-fry"\n'
                    'deals_per_set = 1\nbots = "every ready version"\n')
    open_season(load_season(path), store, workdir=tmp_path / "w", check=False)
    store.ladder.add_entries(LADDER, RETIRED + ACTIVE)
    for bot in RETIRED:
        store.ladder.retire(LADDER, bot)
    store.ladder.add_matches(LADDER, [_plan(i, ACTIVE[i % 5], ACTIVE[(i + 1) % 5])
                                      for i in range(7)])
    ids = [f"{LADDER}-{i:05d}" for i in range(7)]
    for mid in ids[:6]:
        assert store.queue.claim(mid, "w:1", lease_s=600) is not None
    tally = match_tally(MatchSummary.from_dict(SUMMARY), "two-deck-fry")
    for mid in ids[:5]:
        assert store.results.finish(mid, LADDER, toy_match(mid), 1.5, "w:1", tally=tally)
        summary_written(store, mid, SUMMARY)  # (made up: a win of no deal)
        score_pair(store, mid)
    return db, store


def _backdate(store, opened_ago: float, written_ago: list[float]) -> None:
    """The ladder opened ``opened_ago`` seconds ago; its results written ``written_ago``."""
    now = time.time()
    with store.engine.begin() as c:
        c.execute(update(seasons).where(seasons.c.name == LADDER)
                  .values(created_at=now - opened_ago))
        ids = [r[0] for r in c.execute(results.select().with_only_columns(results.c.match_id)
                                       .where(results.c.season == LADDER)
                                       .order_by(results.c.match_id))]
        assert len(ids) == len(written_ago)
        for mid, ago in zip(ids, written_ago):
            c.execute(update(results).where(results.c.match_id == mid)
                      .values(written_at=now - ago))


def test_the_matches_page_lists_pending_and_running_matches(ladder):
    db, store = ladder
    client = TestClient(create_app(db))
    page = client.get("/matches", params={"season": LADDER})
    assert page.status_code == 200, page.text[-2000:]
    assert "7 match(es)" in page.text
    for mid, status in ((f"{LADDER}-00005", "running"), (f"{LADDER}-00006", "pending")):
        row = page.text.split(f'href="/matches/{mid}"')[1].split("</tr>")[0]
        assert f'<td class="status">{status}</td>' in row
    for status in ("running", "pending"):
        got = client.get("/api/matches", params={"season": LADDER, "status": status}).json()
        assert [m["duration_s"] for m in got["matches"]] == [None]
        assert client.get("/matches", params={"status": status}).status_code == 200


def test_a_ladder_counts_its_versions_in_play_everywhere(ladder):
    db, _ = ladder
    rows = json.loads(arena("seasons", "--db", db, "--json", check=True).stdout)
    assert sorted(rows[0]["bots"]) == sorted(ACTIVE) and rows[0]["retired"] == 2
    line = next(x for x in arena("seasons", "--db", db, check=True).stdout.splitlines()
                if x.startswith(LADDER))
    assert " 5 (2 retired) " in line, line
    home = TestClient(create_app(db)).get("/")
    row = home.text.split(f'href="/seasons/{LADDER}"')[1].split("</tr>")[0]
    assert "<td>5 (2 retired)</td>" in row, row
    assert "5 played" in row and "meter" not in row


def test_a_ladder_shows_its_pace_not_an_end(ladder):
    db, store = ladder
    client = TestClient(create_app(db))
    # opened two hours ago: two results before the last hour, three within it
    _backdate(store, 7200, [5400, 5000, 1200, 600, 60])
    got = client.get(f"/api/seasons/{LADDER}/progress").json()
    assert got["ladder"] and got["eta_s"] is None and got["done"] == 5
    assert got["per_hour"] == pytest.approx(3.0, abs=0.05)
    page = client.get(f"/seasons/{LADDER}").text
    box = page.split('id="progress"')[1].split("</section>")[0]
    assert re.search(r'<dt>played</dt><dd id="p-done">5</dd>', box), box
    assert '<dd id="p-per-hour">3.0</dd>' in box
    assert "ETA" not in box and "p-bar" not in box and "p-total" not in box
    assert "5 matches played" in page
    # opened half an hour ago: its pace since it opened
    _backdate(store, 1800, [1500, 1200, 900, 600, 60])
    got = client.get(f"/api/seasons/{LADDER}/progress").json()
    assert got["per_hour"] == pytest.approx(10.0, abs=0.05)


def _points(page: str, bot: str) -> list[tuple[float, float]]:
    line = page.split(f'data-bot="{bot}"')[1].split("</polyline>")[0]
    return [tuple(map(float, p.split(","))) for p in line.split('points="')[1].split('"')[0]
            .split()]


def test_a_version_is_plotted_from_its_join_only(ladder):
    """v0 and v1 play three pairs; v2 joins at the fourth and plays two."""
    db, store = ladder
    pairs = [("v0", "v1"), ("v0", "v1"), ("v1", "v0"), ("v2", "v0"), ("v1", "v2")]
    played = dict.fromkeys(ACTIVE, 0)
    for i, (a, b) in enumerate(pairs):
        a, b = f"{a}@1.0.0", f"{b}@1.0.0"
        played[a] += 1
        played[b] += 1
        store.ladder.record_ratings(LADDER, f"pair-{i}", i, [(a, 26.0 + i, 7.0, played[a]),
                                                             (b, 24.0 - i, 7.0, played[b])])
    page = TestClient(create_app(db)).get(f"/seasons/{LADDER}").text
    v0, v1, v2 = (_points(page, f"v{i}@1.0.0") for i in range(3))
    assert len(v0) == len(v1) == 5 and len(v2) == 2
    assert [x for x, _ in v2] == [x for x, _ in v0[3:]]  # from the fourth pair on
    assert 'data-bot="v3@1.0.0"' not in page  # never rated: no line
