"""``arena bench web``: the dashboard's slowest reads over a season of 10,000 matches.

A fresh SQLite store gets a duplicate round robin of ten bots (the Python sample bots under
ten names, pinned as registry versions), opened through the league's own code, and a result
for every match inserted straight into the store's tables: each summary has the shape of a
real two-deck match's (two deals), with dealers, attackers, points and level gains drawn at
random and a per-bot strength so the ratings spread, and the tally columns ``store.results.finish``
writes beside each summary (``scheduler.stats.scores.match_tally``). Then the API standings, the
season page, the seasons list, the bots page, the matches list (first page, filtered by bot and
status, and by bot faults), a match page and the progress are requested ``repeat`` times each
through the app in process; the first request of the API standings computes the standings
(1000 bootstrap samples), later ones reuse them until a match's status changes; last, the
season page and the bots page once each with the standings cleared.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path

from tools.benchengine import machine

ROOT = Path(__file__).resolve().parent.parent
BOTS = ("greedy", "random", "cheap")
LEVELS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]


def _season_file(folder: Path, name: str, bots: int, deal_sets: int, variant: str,
                 duplicate: bool) -> Path:
    lines = [f'name = "{name}"', f'variant = "{variant}"', 'format = "round_robin"',
             f"duplicate = {str(duplicate).lower()}", f"deal_sets = {deal_sets}",
             "deals_per_set = 2", f'seed = "{name}"']
    for i in range(bots):
        lines += ["[[bots]]", f'manifest = "{ROOT / "sample_bots" / "python" / BOTS[i % 3]}"',
                  f'name = "bot{i:02d}"']
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _summary(seats: list[str], strength: dict[str, float], rng: random.Random,
             match_points: bool = False) -> dict:
    """A two-deal summary in the shape a real match stores (``match_points``: with the seats'
    match points, as in three-deck)."""
    level = [0, 0]
    deals = []
    attackers = 1
    for d in range(2):
        edge = strength[seats[attackers]] - strength[seats[1 - attackers]]
        total = max(0, min(200, int(rng.gauss(80 + 30 * edge, 35)) // 5 * 5))
        gain = [0, 0]
        if total >= 80:
            gain[attackers] = (total - 80) // 40 + (total >= 80)
        else:
            gain[1 - attackers] = 1 if total > 0 else 3 if total == 0 else 2
        before = [LEVELS[level[0]], LEVELS[level[1]]]
        level = [min(12, level[0] + gain[0]), min(12, level[1] + gain[1])]
        deals.append({"dealer": (d + rng.randrange(4)) % 4, "attackers": attackers,
                      "attacker_total": total, "before": before,
                      "after": [LEVELS[level[0]], LEVELS[level[1]]], "gain": gain})
        attackers = 0 if gain[0] and attackers == 1 or not gain[1] and attackers == 0 else 1
    net0 = level[0] - level[1]
    s0 = 1.0 if net0 > 0 else 0.0 if net0 < 0 else 0.5
    strikes = [int(rng.random() < 0.02) for _ in range(4)]
    return {"seats": seats, "deals": deals, "net": [net0, -net0], "score": [s0, 1 - s0],
            "forfeit_team": None, "strikes": strikes, "faults": sum(strikes),
            "match_points": [rng.randrange(0, 9) for _ in range(4)] if match_points else None}


def build(folder: Path, matches: int = 10000, bots: int = 10, *, variant: str = "two-deck-fry",
          duplicate: bool = True, name: str = "bench-web") -> tuple[str, str]:
    """A store at ``folder`` with a finished round robin of about ``matches`` matches (its
    URL and the season's name); each result has the tally columns ``store.results.finish``
    writes."""
    import io

    from sqlalchemy import update

    from referee.match.matchfile import MatchSummary
    from scheduler.league import open_season
    from scheduler.stats.scores import match_tally
    from scheduler.season import load_season
    from scheduler.store import Store
    from scheduler.store import matches as matches_t
    from scheduler.store import results as results_t
    from scheduler.store.rows import encoded, tally_columns
    pairings = bots * (bots - 1) // 2
    deal_sets = max(1, round(matches / (2 * pairings)))
    url = f"sqlite:///{folder / 'bench.db'}"
    store = Store(url)
    open_season(load_season(_season_file(folder, name, bots, deal_sets, variant, duplicate)),
                store, workdir=folder, check=False, out=io.StringIO())
    rng = random.Random(1)
    strength = {f"bot{i:02d}": rng.gauss(0, 0.5) for i in range(bots)}
    now = time.time()
    rows, ids = [], []
    for r in store.pages.matches(name):
        seats = list(r.seats)
        s = _summary(seats, strength, rng, match_points=variant == "three-deck")
        levels = s["deals"][-1]["after"]
        result = {"match_id": r.id, "variant": variant,
                  "deals": [{"game": 0, "deal": i, "attacker_total": d["attacker_total"],
                             "levels": d["after"]} for i, d in enumerate(s["deals"])],
                  "strikes": s["strikes"], "forfeit": None, "winner_team": None,
                  "levels": levels, "sandbox": "bubblewrap"}
        rows.append({"match_id": r.id, "season": name, "result_json": encoded(result),
                     "summary_json": encoded(s), "duration_s": rng.uniform(0.5, 3.0),
                     "worker": "bench", "written_at": now,
                     **tally_columns(match_tally(MatchSummary.from_dict(s), variant))})
        ids.append(r.id)
    with store.engine.begin() as c:
        c.execute(results_t.insert(), rows)
        c.execute(update(matches_t).where(matches_t.c.season == name)
                  .values(status="done", attempts=1, finished_at=now))
    return url, name


def _time(client, url: str, repeat: int) -> tuple[float, float, float]:
    ms = []
    for _ in range(repeat):
        t = time.perf_counter()
        r = client.get(url)
        ms.append((time.perf_counter() - t) * 1000)
        if r.status_code != 200:
            raise SystemExit(f"arena bench web: {url}: HTTP {r.status_code}: {r.text[:300]}")
    return ms[0], statistics.median(ms), max(ms)


def bench_web(matches: int = 10000, repeat: int = 5) -> int:
    from fastapi.testclient import TestClient

    from web.app import create_app
    print(f"arena bench web --matches {matches} --repeat {repeat}\nmachine: {machine()}")
    with tempfile.TemporaryDirectory(prefix="arena-bench-web-") as tmp:
        t = time.perf_counter()
        url, name = build(Path(tmp), matches)
        app = create_app(url)
        client = TestClient(app)
        total = client.get(f"/api/seasons/{name}/progress").json()["total"]
        print(f"store: {total} matches of season {name} (10 bots, duplicate, 2 deals each), "
              f"built in {time.perf_counter() - t:.1f} s")
        middle = client.get("/api/matches", params={"season": name, "offset": total // 2,
                                                     "limit": 1}).json()["matches"][0]["id"]
        print(f"{'request':<52} {'first ms':>9} {'median ms':>10} {'max ms':>8}")
        for label, path in (
                ("API standings (first: computed)", f"/api/seasons/{name}"),
                ("season page (standings reused)", f"/seasons/{name}"),
                ("seasons list", "/"),
                ("bots page (standings reused)", "/bots"),
                ("matches list, first page (100)", "/matches"),
                ("matches list, season + bot + status filtered",
                 f"/matches?season={name}&bot=bot03&status=done"),
                ("matches list, bot-fault filter", f"/matches?season={name}&fault=true"),
                ("API matches, first page (50)", "/api/matches"),
                ("match page", f"/matches/{middle}"),
                ("season progress", f"/api/seasons/{name}/progress")):
            first, med, worst = _time(client, path, repeat)
            print(f"{label:<52} {first:>9.1f} {med:>10.1f} {worst:>8.1f}")
        for label, path in (("season page, standings computed (cache cleared)",
                             f"/seasons/{name}"),
                            ("bots page, standings computed (cache cleared)", "/bots")):
            app.state.standings_cache.clear()
            first, med, worst = _time(client, path, 1)
            print(f"{label:<52} {first:>9.1f} {med:>10.1f} {worst:>8.1f}")
    return 0
