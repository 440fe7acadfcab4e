"""``arena web``: the dashboard's pages and JSON API over a real store of a played season."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from collections import defaultdict

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from league_helpers import BOTS, arena, season_file, unique

from referee.match.matchfile import MatchSummary
from referee.rules import family_of, rules_for
from scheduler.reports import season_standings
from scheduler.stats.power import gaussian_ratings
from scheduler.stats.ratings import rating_history, rating_intervals
from scheduler.stats.scores import deal_scores, match_tally, pair_result
from scheduler.stats.standings import PRIOR, BotLine, Standings
from scheduler.store import TALLY_COLUMNS, Store, compress, decompress, results
from scheduler.store.rows import tally_columns
from scheduler.store.packing import unpack_text
from web.app import NoStore, create_app

GREEDY, RANDOM = BOTS / "greedy", BOTS / "random"
API = {"/api/seasons", "/api/seasons/{name}", "/api/seasons/{name}/progress", "/api/matches",
       "/api/matches/{match_id}", "/api/bots"}


# its module fixtures are built once: pytest-xdist (--dist loadgroup) keeps the file on one worker
pytestmark = pytest.mark.xdist_group("test_web")


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A store holding one finished 2-bot duplicate season: (db url, db path, season)."""
    folder = tmp_path_factory.mktemp("web")
    # its own store: the name and the secret fix the cards, on which greedy outscores random
    # (on fresh cards both pairs were now and then even, and the ratings equal)
    name = "web-pages"
    path = season_file(folder, name, [GREEDY, RANDOM], deal_sets=2, deals_per_set=1,
                       extra='secret = "web-pages-test-secret"\n')
    db_path = folder / "arena.db"
    db = f"sqlite:///{db_path}"
    arena("season", "run", str(path), "--db", db, "--no-check", "--no-progress", "--workers",
          "2", cwd=folder, check=True)
    return db, db_path, name


@pytest.fixture(scope="module")
def app(played):
    return create_app(played[0])


@pytest.fixture(scope="module")
def client(app):
    return TestClient(app)


def _ids(client, season):
    return [m["id"] for m in client.get("/api/matches", params={"season": season}).json()
            ["matches"]]


def test_season_standings_equal_the_cli(played, client):
    db, _, name = played
    cli = json.loads(arena("standings", name, "--db", db, "--json", check=True).stdout)
    got = client.get(f"/api/seasons/{name}")
    assert got.status_code == 200
    assert got.json() == cli
    store = Store(db)  # every result of a played season has its tally columns
    assert all(r.deal_count is not None for r in store.pages.standings_rows(name))
    want = straightforward_standings(store.seasons.get(name), store.pages.matches(name),
                                     samples=1000)
    assert {k: v for k, v in cli.items() if k != "versions"} == _as_json(want)
    page = client.get(f"/seasons/{name}")
    assert page.status_code == 200
    for b in cli["bots"]:
        assert f"{b['rating']:.1f}" in page.text
        assert f"[{b['low']:.1f}, {b['high']:.1f}]" in page.text
        assert f"{int(b['wins'])}-{int(b['draws'])}-{int(b['losses'])}" in page.text
        assert f"{b['pairs_won']}-{b['pairs_drawn']}-{b['pairs_lost']}" in page.text
    assert 'class="ci-bar"' in page.text and 'class="h2h"' in page.text
    a, b = (x["name"] for x in cli["bots"])
    sc, n = cli["head_to_head"][a][b]
    assert f'title="{a} against {b}">{sc:g}/{n}</td>' in page.text
    for v in cli["versions"].values():
        assert v["ref"] in page.text
    history = cli["history"]  # ratings over the season: the last point is all rated units
    assert [h["units"] for h in history] == sorted({h["units"] for h in history})
    assert len(history) >= 2 and history[-1]["units"] == cli["rated_units"]
    for b in cli["bots"]:
        assert history[-1]["ratings"][b["name"]] == pytest.approx(b["rating"], abs=0.1)
        line = page.text.split(f'data-bot="{b["name"]}"')[1].split("</polyline>")[0]
        assert line.split('points="')[1].split('"')[0].count(",") == len(history)
    assert f"/api/seasons/{name}/progress" in client.get("/static/progress.js").text \
        or "/progress" in client.get("/static/progress.js").text


def test_every_page_shows_its_data(played, client):
    _, _, name = played
    index = client.get("/")
    assert index.status_code == 200 and name in index.text and "4/4" in index.text
    assert "finished" in index.text
    seasons = client.get("/api/seasons").json()
    assert next(s for s in seasons if s["name"] == name)["done"] == 4
    ids = _ids(client, name)
    assert len(ids) == 4
    listing = client.get("/matches", params={"season": name, "status": "done"})
    assert listing.status_code == 200 and all(i in listing.text for i in ids)
    assert "4 match(es)" in listing.text
    none = client.get("/matches", params={"season": name, "status": "pending"})
    assert "0 match(es)" in none.text and ids[0] not in none.text
    by_bot = client.get("/api/matches", params={"bot": "greedy", "season": name}).json()
    assert by_bot["total"] == 4
    assert client.get("/api/matches", params={"bot": "nobody"}).json()["total"] == 0
    clean = client.get("/api/matches", params={"season": name, "fault": "false"}).json()
    assert clean["total"] == 4
    paged = client.get("/api/matches", params={"season": name, "limit": 1, "offset": 1}).json()
    assert paged["total"] == 4 and [m["id"] for m in paged["matches"]] == ids[1:2]
    detail = client.get(f"/api/matches/{ids[0]}").json()
    assert not detail["sealed"] and detail["deals"] and detail["timings"]
    assert detail["versions"] == ["greedy@1.0.0", "random@1.0.0"] * 2
    page = client.get(f"/matches/{ids[0]}")
    assert page.status_code == 200
    assert f"/matches/{ids[0]}/replay" in page.text and "Deals" in page.text
    assert "greedy@1.0.0" in page.text and "Decision timings" in page.text
    deal = detail["deals"][0]
    assert f'<td class="num">{deal["attacker_total"]}</td>' in page.text
    bots = client.get("/api/bots").json()
    assert {b["name"] for b in bots} >= {"greedy", "random"}
    assert all(name in b["seasons"] for b in bots if b["name"] in ("greedy", "random"))
    rated = {b["name"]: b["ratings"][name] for b in bots if name in b["seasons"]}
    standing = {b["name"]: round(b["rating"], 1)
                for b in client.get(f"/api/seasons/{name}").json()["bots"]}
    assert rated == standing and rated["greedy"] != rated["random"]
    bots_page = client.get("/bots")
    assert bots_page.status_code == 200 and "greedy" in bots_page.text and name in bots_page.text
    assert f'({standing["greedy"]:.1f})' in bots_page.text
    prog = client.get(f"/api/seasons/{name}/progress").json()
    assert (prog["done"], prog["total"], prog["status"]) == (4, 4, "finished")
    css = client.get("/static/arena.css")
    assert css.status_code == 200 and "text/css" in css.headers["content-type"]
    assert "//cdn" not in index.text and "https://" not in client.get(f"/seasons/{name}").text


def test_unknown_names_are_404(client):
    for url in ("/seasons/nope", "/matches/nope"):
        r = client.get(url)
        assert r.status_code == 404 and "text/html" in r.headers["content-type"]
        assert "nope" in r.text
    for url in ("/api/seasons/nope", "/api/seasons/nope/progress", "/api/matches/nope"):
        r = client.get(url)
        assert r.status_code == 404 and "nope" in r.json()["detail"]


@pytest.mark.parametrize("query,param", [("status=bogus", "status"), ("limit=-1", "limit"),
                                         ("limit=abc", "limit"), ("offset=-3", "offset"),
                                         ("limit=100000", "limit"), ("fault=maybe", "fault"),
                                         ("version=greedy", "version"),
                                         ("fault_kind=Time%20Out", "fault_kind")])
def test_malformed_queries_are_400_naming_the_parameter(client, query, param):
    r = client.get(f"/api/matches?{query}")
    assert r.status_code == 400, r.text
    assert param in r.json()["detail"]
    page = client.get(f"/matches?{query}")
    assert page.status_code == 400 and param in page.text


def test_a_sealed_match_serves_no_record(played, tmp_path):
    _, db_path, name = played
    copy = tmp_path / "sealed.db"
    shutil.copy(db_path, copy)
    c = sqlite3.connect(copy)
    first, mirror = c.execute("SELECT a.id, b.id FROM matches a JOIN matches b ON "
                              "a.cluster = b.cluster AND a.id < b.id WHERE a.season = ? "
                              "ORDER BY a.ordinal LIMIT 1", (name,)).fetchone()
    c.execute("UPDATE matches SET status = 'pending' WHERE id = ?", (mirror,))
    c.commit()
    c.close()
    client = TestClient(create_app(f"sqlite:///{copy}"))
    r = client.get(f"/api/matches/{first}")
    assert r.status_code == 403
    got = r.json()
    assert got["sealed"] and mirror in got["sealed_reason"]
    assert [s["id"] for s in got["sealed_by"]] == [mirror] and got["sealed_by"][0]["mirror"]
    assert got["deals"] == [] and got["faults"] == [] and got["logs"] == {}
    assert got["timings"] == [] and got["match"]["net"] is None
    page = client.get(f"/matches/{first}")
    assert page.status_code == 403 and "Sealed" in page.text and mirror in page.text
    assert "Deals" not in page.text and "Decision timings" not in page.text
    other = next(i for i in _ids(client, name) if i not in (first, mirror))
    assert client.get(f"/api/matches/{other}").status_code == 200


def test_matches_filter_by_pinned_version_and_by_fault_kind(played, tmp_path):
    _, db_path, name = played
    copy = tmp_path / "faulted.db"
    shutil.copy(db_path, copy)
    c = sqlite3.connect(copy)
    ids = [r[0] for r in c.execute("SELECT id FROM matches WHERE season = ? ORDER BY ordinal",
                                   (name,))]
    for match_id, kind in ((ids[1], "timeout"), (ids[2], "illegal")):  # one fault each
        record = decompress(c.execute("SELECT data FROM records WHERE match_id = ?",
                                      (match_id,)).fetchone()[0])
        record["faults"] = [{"seat": 1, "kind": kind, "reason": "x", "strikes": 1}]
        c.execute("UPDATE records SET data = ? WHERE match_id = ?", (compress(record), match_id))
        summary = json.loads(unpack_text(c.execute(  # stored packed (scheduler.store.packing)
            "SELECT summary_json FROM results WHERE match_id = ?", (match_id,)).fetchone()[0]))
        c.execute("UPDATE results SET summary_json = ?, faults = 1 WHERE match_id = ?",
                  (json.dumps({**summary, "faults": 1}), match_id))
    c.commit()
    c.close()
    client = TestClient(create_app(f"sqlite:///{copy}"))

    def listed(**params):
        got = client.get("/api/matches", params={"season": name, **params})
        assert got.status_code == 200, got.text
        return [m["id"] for m in got.json()["matches"]]

    assert listed(version="greedy@1.0.0") == ids
    assert listed(version="random@1.0.0") == ids
    assert listed(version="greedy@9.9.9") == []
    assert listed(fault_kind="timeout") == [ids[1]]
    assert listed(fault_kind="illegal") == [ids[2]]
    assert listed(fault_kind="flood") == []
    assert listed(fault="true") == [ids[1], ids[2]]
    assert listed(fault="false") == [ids[0], ids[3]]
    c = sqlite3.connect(copy)  # results written before the tally columns: told by summaries
    c.execute(f"UPDATE results SET {', '.join(f'{k} = NULL' for k in TALLY_COLUMNS)} "
              "WHERE match_id IN (?, ?)", (ids[0], ids[1]))
    c.commit()
    c.close()
    assert listed(fault="true") == [ids[1], ids[2]]
    assert listed(fault="false") == [ids[0], ids[3]]
    assert listed(fault_kind="timeout") == [ids[1]]
    assert listed(fault="true", limit=1, offset=1) == [ids[2]]
    page = client.get("/matches", params={"season": name, "fault_kind": "timeout",
                                          "version": ""})
    assert page.status_code == 200 and ids[1] in page.text and ids[2] not in page.text
    assert "1 match(es)" in page.text


def test_no_store_is_not_created(tmp_path):
    missing = tmp_path / "none.db"
    with pytest.raises(NoStore, match=str(missing)):
        create_app(f"sqlite:///{missing}")
    assert not missing.exists()
    p = arena("web", "--db", f"sqlite:///{missing}")
    assert p.returncode != 0 and str(missing) in p.stderr
    assert not missing.exists()


@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_api_schema(app, mode):
    """Schemathesis' default checks over every API operation, with valid queries (positive)
    and malformed ones (negative)."""
    from hypothesis import given
    from schemathesis import GenerationMode
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    ops = [op for op in (r.ok() for r in schema.get_all_operations()) if op.path in API]
    assert len(ops) == len(API)
    if mode == "negative":  # only a query can be malformed: the others take a name or nothing
        ops = [op for op in ops if op.path == "/api/matches"]
    for op in ops:
        @given(case=op.as_strategy(generation_mode=GenerationMode(mode)))
        @settings(max_examples=10, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def check(case):
            case.call_and_validate()
        check()


def test_the_schema_covers_the_api(app):
    spec = app.openapi()
    assert set(spec["paths"]) >= API
    ops = [op for p in API for op in spec["paths"][p].values()]
    assert all("422" not in op["responses"] for op in ops)
    assert "400" in spec["paths"]["/api/matches"]["get"]["responses"]


# -- the standings' tally columns against the summaries they come from -----------------------
def straightforward_standings(season, match_rows: list, *, samples: int,
                              seed: int = 0) -> Standings:
    """The standings counted as they were before the tally columns, kept as the fast path's
    checked reference: every stored summary read and counted one match at a time."""
    config = json.loads(season.config_json)
    names = list(config["bots"])
    lines = {n: BotLine(n) for n in names}
    title = family_of(rules_for(config["variant"])).title
    if title is not None:
        for b in lines.values():
            b.match_points = 0
    clusters: dict[str, list[dict]] = defaultdict(list)
    done = deals_total = 0
    failed = sum(1 for row in match_rows if row.status == "failed")
    for row in match_rows:
        if row.summary_json is None:
            continue
        done += 1
        s = MatchSummary.from_dict(json.loads(row.summary_json))
        seats = json.loads(row.seats_json)
        team_bot = [seats[0], seats[1]]
        clusters[row.cluster].append({"teams": team_bot, "summary": s,
                                         "scores": deal_scores(s, config["variant"])})
        deals_total += len(s.deals)
        for t, name in enumerate(team_bot):
            b = lines[name]
            b.matches += 1
            sc = s.score[t]
            b.wins += sc == 1.0
            b.draws += sc == 0.5
            b.losses += sc == 0.0
            b.net_levels += s.net[t]
            b.forfeits += s.forfeit_team == t
            if s.strikes:
                b.strikes += s.strikes[t] + s.strikes[t + 2]
            for d in s.deals:
                b.deals += 1
                b.level_gain += d.gain[t]
                if d.attackers == t:
                    b.attack_deals += 1
                    b.attack_points += d.attacker_total
                elif d.attackers is not None:
                    b.defend_deals += 1
                    b.conceded_points += d.attacker_total
            if title is not None and s.match_points:
                mp = s.match_points
                b.match_points += mp[t] + mp[t + 2]
                for seat in (t, t + 2):
                    b.titles[title(mp[seat])] = b.titles.get(title(mp[seat]), 0) + 1
    units, paired = [], []
    h2h = {a: {b: [0.0, 0] for b in names if b != a} for a in names}
    for ms in clusters.values():
        if config["duplicate"]:
            if len(ms) < 2:
                continue
            a, b = ms[0]["teams"]
            got = pair_result(a, [m["teams"] for m in ms], [m["summary"] for m in ms],
                              [m["scores"] for m in ms])
            for bot, sc in ((a, got["score"]), (b, 1 - got["score"])):
                lines[bot].pairs_won += sc == 1.0
                lines[bot].pairs_drawn += sc == 0.5
                lines[bot].pairs_lost += sc == 0.0
            units.append([(a, b, got["score"])])
            paired.append((a, b, got["diff"]))
        else:
            for m in ms:
                a, b = m["teams"]
                units.append([(a, b, m["summary"].score[0])])
                paired.append((a, b, pair_result(a, [m["teams"]], [m["summary"]],
                                                 [m["scores"]])["diff"]))
        for a, b, sc in units[-1]:
            h2h[a][b][0] += sc
            h2h[a][b][1] += 1
            h2h[b][a][0] += 1 - sc
            h2h[b][a][1] += 1
    if units:
        for n, (r, lo, hi) in rating_intervals(units, names, samples=samples, seed=seed,
                                               prior=PRIOR).items():
            lines[n].rating, lines[n].low, lines[n].high = r, lo, hi
    fit = gaussian_ratings(paired, names, prior=PRIOR)
    for n, (r, lo, hi) in fit.ratings.items():
        lines[n].paired_rating, lines[n].paired_low, lines[n].paired_high = r, lo, hi
    return Standings(season=season.name, variant=config["variant"],
                     duplicate=config["duplicate"], matches_done=done,
                     matches_total=len(match_rows), deals=deals_total, units=len(units),
                     lines=sorted(lines.values(), key=lambda b: (-b.rating, -b.score, b.name)),
                     head_to_head=h2h, matches_failed=failed, paired_sigma=fit.sigma,
                     paired_units=fit.units, history=rating_history(units, names, prior=PRIOR))


def _as_json(st: Standings) -> dict:
    """The standings as ``arena standings --json`` prints them (less the versions)."""
    return json.loads(json.dumps(st.to_dict()))


def _vary(store: Store, name: str, variant: str) -> None:
    """Real shapes the generated season lacks: forfeits (a match ended after its first deal,
    its mirror played out; both matches of a pair forfeited), a match set aside (half a pair
    played), and results written before the tally columns (counted from their summaries); and
    in a duplicate season a cluster of three matches of one pairing, which the counting takes
    as it takes any number."""
    from sqlalchemy import update

    from scheduler.store import matches
    rows = [r for r in store.pages.matches(name)]
    rng = random.Random(7)
    with store.engine.begin() as c:
        for k, r in enumerate(rows):
            s = json.loads(r.summary_json)
            if k % 11 in (3, 4) or k % 29 == 0:  # a forfeit: the second deal never played
                team = rng.randrange(2)
                net0 = sum(d["gain"][0] - d["gain"][1] for d in s["deals"][:1])
                s.update(deals=s["deals"][:1], net=[net0, -net0], forfeit_team=team,
                         score=[0.0, 1.0] if team == 0 else [1.0, 0.0])
            tally = tally_columns(match_tally(MatchSummary.from_dict(s), variant))
            if k % 13 == 5:  # written before the tally columns (and the deal scores)
                tally = dict.fromkeys(TALLY_COLUMNS)
            c.execute(update(results).where(results.c.match_id == r.id)
                      .values(summary_json=json.dumps(s), **tally))
        if rows[1].mirror:
            third = next(r for r in rows if r.pairing == rows[0].pairing
                         and r.cluster != rows[0].cluster)
            c.execute(update(matches).where(matches.c.id == third.id)
                      .values(cluster=rows[0].cluster))
        set_aside = rows[len(rows) // 2].id
        c.execute(results.delete().where(results.c.match_id == set_aside))
        c.execute(update(matches).where(matches.c.id == set_aside)
                  .values(status="failed", error="set aside after 3 attempts"))


@pytest.mark.parametrize("variant, duplicate", [("two-deck-fry", True), ("three-deck", True),
                                                ("single-deck", False)])
def test_the_standings_from_tally_columns_equal_those_from_the_summaries(tmp_path, variant,
                                                                          duplicate):
    """The dashboard (and ``arena standings``) count a large season by its results' tally
    columns, in arrays; on a generated season with forfeits, a match set aside and results
    older than those columns, they give exactly the standings the summaries give when
    counted one match at a time."""
    from tools.benchweb import build
    url, name = build(tmp_path, matches=500, bots=6, variant=variant, duplicate=duplicate,
                      name=unique("tallies"))
    store = Store(url)
    _vary(store, name, variant)
    season = store.seasons.get(name)
    rows = store.pages.standings_rows(name)
    assert sum(r.summary_json is not None for r in rows) > 0  # some counted from summaries
    assert sum(r.deal_count is not None for r in rows) > len(rows) // 2
    want = _as_json(straightforward_standings(season, store.pages.matches(name), samples=1000))
    assert want["matches_failed"] == 1 and want["paired_model"]["units"] > 0
    assert sum(b["forfeits"] for b in want["bots"]) > 0
    if variant == "three-deck":
        assert all(b["titles"] for b in want["bots"])
    assert _as_json(season_standings(season, rows, samples=1000)) == want
    assert _as_json(season_standings(season, store.pages.matches(name), samples=1000)) == want
    served = TestClient(create_app(url)).get(f"/api/seasons/{name}").json()
    sealed = {s.id for s in store.pages.sealed_in(name)}  # (the set-aside match may be played
    # again: its cards)
    assert sealed and served.pop("matches_sealed") == len(sealed)
    assert {k: v for k, v in served.items() if k != "versions"} == _as_json(
        season_standings(season, rows, samples=1000, sealed=sealed))
