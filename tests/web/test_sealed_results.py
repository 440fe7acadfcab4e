"""A sealed match (played, its mirror not yet) shows nothing of its result anywhere the
dashboard and the submission service serve: not in a season's standings and counts (API and
page), nor in the ratings of the bots page, nor in a version's results (API and its page),
nor through the bot-fault filters of the match lists. Each is compared with the same store
before the match was played: the same numbers. Once its mirror is played, both count.

The real service app served by uvicorn over a real SQLite store: a duplicate round robin of
alice's and bob's versions on two deal sets; one match played for real by the sample random
bot, the others written by the store's own ``finish`` with its result and record.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import replace

import httpx
import pytest
from browser_helpers import serving
from league_helpers import BOTS
from test_record_storage import summary_written

from referee.match.matchfile import MatchSummary
from scheduler.execute import execute_match
from scheduler.league import open_season
from scheduler.registry.owners import add_author
from scheduler.registry.submissions import submit
from scheduler.season import load_season
from scheduler.stats.scores import match_tally, score_pair
from scheduler.store import open_store
from web.app import create_app
from scheduler.service.config import ServiceConfig

#: what a version's results say of its standing in a season, the numbers compared
STANDING = ("rank", "of", "rating", "low", "high", "pairs", "wins", "draws", "losses",
            "points", "net_levels")


class Season:
    """Season ``rr``: alice-bot against bob-bot, duplicate, two deal sets of one deal: pair
    ``done`` (both matches played) and pair ``open`` (its first match ``first`` and its mirror
    ``mirror``, on cards of their own)."""

    def __init__(self, tmp) -> None:
        self.db = f"sqlite:///{tmp / 'arena.db'}"
        self.store = store = open_store(self.db)
        self.tokens = {who: add_author(store, who) for who in ("alice", "bob")}
        for who in ("alice", "bob"):
            folder = tmp / f"{who}-bot"
            shutil.copytree(BOTS / "random", folder,
                            ignore=shutil.ignore_patterns("__pycache__"))
            submit(store, folder, name=f"{who}-bot", version="1.0.0", author=who,
                   state="ready")
        path = tmp / "rr.toml"
        path.write_text('name = "rr"\nvariant = "two-deck-fry"\nformat = "round_robin"\n'
                        'duplicate = true\ndeal_sets = 2\ndeals_per_set = 1\nseed = "rr"\n'
                        '[[bots]]\nbot = "alice-bot@1.0.0"\n[[bots]]\nbot = "bob-bot@1.0.0"\n')
        open_season(load_season(path), store, workdir=tmp / "w", check=False, out=None)
        pairs: dict[str, list] = {}
        for m in store.pages.matches("rr"):
            pairs.setdefault(m.cluster, []).append(m)
        (done, self.open_pair) = sorted(pairs.values(), key=lambda p: p[0].ordinal)
        assert len(done) == len(self.open_pair) == 2
        self.first = next(m.id for m in self.open_pair if not m.mirror)
        self.mirror = next(m.id for m in self.open_pair if m.mirror)
        real = done[0].id
        assert execute_match(self.db, real) == "done"
        played = store.pages.match_and_result(real)
        self.summary = played.summary.to_dict()
        self.record = store.results.record(real)
        self.finish(done[1].id)
        assert store.pages.sealed_by(done[0].id) == []  # (the other pair has cards of its own)
        self.app = create_app(self.db, ServiceConfig())

    def finish(self, match_id: str, **summary) -> None:
        """Write the real match's result for ``match_id``, its summary's fields ``summary``
        changed; alice's team wins it."""
        m = self.store.pages.match(match_id)
        alice = m.seats.index("alice-bot") % 2
        score = [1.0, 0.0] if alice == 0 else [0.0, 1.0]
        net = [3, -3] if alice == 0 else [-3, 3]
        match = replace(self.record, match_id=match_id, seats=tuple(m.seats))
        assert self.store.queue.claim(match_id, "test:1", lease_s=60) is not None
        played = dict(self.summary, seats=list(m.seats), score=score, net=net, **summary)
        tally = match_tally(MatchSummary.from_dict(played), m.variant)
        assert self.store.results.finish(match_id, "rr", match, 1.0, "test:1", tally=tally)
        summary_written(self.store, match_id, played)  # (made up: not its record's)
        score_pair(self.store, match_id)


def _login(base: str, token: str) -> httpx.Client:
    c = httpx.Client(base_url=base, timeout=30)
    got = c.post("/login", data={"token": token}, follow_redirects=False)
    assert got.status_code == 303, got.text
    return c


def _section(html: str, pattern: str) -> str:
    found = re.search(pattern, html, re.S)
    assert found, pattern
    return found.group(0)


def _seen(base: str, s: Season) -> dict:
    """Everything served of the season's results: the standings (API, the season page's
    standings and head-to-head tables and its summary line), the ratings of the bots page
    and its API, alice's version's results (API, and the standing on its page)."""
    anyone = httpx.Client(base_url=base, timeout=30)
    alice = _login(base, s.tokens["alice"])
    standings = anyone.get("/api/seasons/rr").json()
    page = anyone.get("/seasons/rr").text
    results = alice.get("/api/v1/bots/alice-bot/1.0.0/results",
                        headers={"Authorization": f"Bearer {s.tokens['alice']}"}).json()
    [rr] = results["seasons"]
    version_page = alice.get("/me/bots/alice-bot/1.0.0").text
    standing = _section(version_page, r'<table class="standing">.*?</table>')
    return {
        "standings": {k: v for k, v in standings.items() if k != "matches_sealed"},
        "sealed": standings.get("matches_sealed", 0),
        "sealed_line": re.search(r'<span id="sealed-count">(.*?)</span>', page),
        "page": [re.sub(r';\s*<span id="sealed-count">.*?</span>', "",
                        _section(page, r"<h1>.*?</p>")),
                 _section(page, r'<table class="standings">.*?</table>'),
                 _section(page, r'<table class="h2h">.*?</table>')],
        "bots_page": _section(anyone.get("/bots").text, r"<table.*?</table>"),
        "ratings": {v["name"]: v["ratings"] for v in anyone.get("/api/bots").json()},
        "results": {k: rr[k] for k in STANDING},
        "version_page": [re.search(f'class="{k}">(.*?)</td>', standing, re.S).group(1)
                         for k in ("rank", "rating", "pairs")]
        + [re.search(r'class="tally">([^;]*);', standing).group(1)],
        "version_tally": re.search(r'class="tally">(.*?)</td>', standing, re.S).group(1),
        "lines": {m["id"]: m for m in rr["matches"]["rows"]},
        "version_sealed": rr["matches"]["sealed"],
    }


@pytest.fixture(scope="module")
def season(tmp_path_factory):
    return Season(tmp_path_factory.mktemp("sealed"))


def test_a_sealed_match_counts_nowhere_until_its_mirror_is_played(season):
    s = season
    with serving(s.app) as base:
        before = _seen(base, s)
        assert before["standings"]["matches_done"] == 2  # the other pair
        s.finish(s.first)
        assert s.store.pages.sealed_by(s.first)  # its mirror unplayed
        sealed = _seen(base, s)
        for k in ("standings", "page", "bots_page", "ratings", "results", "version_page"):
            assert sealed[k] == before[k], k
        assert before["sealed"] == 0 and sealed["sealed"] == 1  # how many, and only that
        assert before["version_sealed"] == 0 and sealed["version_sealed"] == 1
        assert sealed["sealed_line"].group(1).startswith("1 played but sealed")
        assert "1 sealed until the matches on their cards are played" in sealed["version_tally"]
        line = sealed["lines"][s.first]
        assert line["sealed"] and line["outcome"] is None and line["net"] is None

        s.finish(s.mirror)
        after = _seen(base, s)
    assert after["sealed"] == 0 and "sealed" not in after["version_tally"]
    assert before["sealed_line"] is None and after["sealed_line"] is None
    assert after["standings"]["matches_done"] == before["standings"]["matches_done"] + 2
    assert after["results"]["wins"] == before["results"]["wins"] + 2
    assert after["results"]["pairs"] == before["results"]["pairs"] + 1
    for k in ("page", "ratings", "version_page"):
        assert after[k] != before[k], k
    assert after["lines"][s.first]["outcome"] == "win"


def test_the_fault_filters_pass_no_sealed_match(tmp_path):
    """A sealed match with bot faults is in neither the fault=true nor the fault=false list
    (nor a fault_kind one): which list holds it would tell its result. Once its mirror is
    played, it is with the faulty ones."""
    s = Season(tmp_path)
    s.finish(s.first, faults=2)
    with serving(s.app) as base:
        c = httpx.Client(base_url=base, timeout=30)

        def listed(query: str) -> set[str]:
            got = c.get(f"/api/matches?season=rr&limit=500&{query}")
            assert got.status_code == 200, got.text
            return {m["id"] for m in got.json()["matches"]}

        assert s.first in listed("")  # listed, without its result
        assert s.first not in listed("fault=true") | listed("fault=false")
        assert s.first not in listed("fault_kind=timeout")
        assert s.first not in _section(c.get("/matches?season=rr&fault=true").text,
                                       r'<table.*?</table>')
        s.finish(s.mirror)
        assert s.first in listed("fault=true") and s.first not in listed("fault=false")


def test_a_season_made_again_under_its_name_is_sealed_by_its_own_cards(tmp_path):
    """The store reads each match's deal seeds once (its seed book): a season deleted and made
    again under its name, its match ids the same and its cards new, is sealed by its new cards,
    not by what the book read of the old season."""
    import json

    from sqlalchemy import update

    from scheduler.store.schema import matches, seasons
    s = Season(tmp_path)
    s.finish(s.first)
    assert {m.id for m in s.store.pages.sealed_in("rr")} == {s.first}  # its mirror: its cards
    # made again: the same ids, the mirror dealt other cards than the first match (and the
    # pair no longer one cluster), the season's creation time new
    mirror = s.store.pages.match(s.mirror)
    spec = json.loads(mirror.spec_json)
    for d in spec.get("deals") or []:
        d["seed"] = d["seed"] + "-again"
    spec["seed"] = str(spec.get("seed")) + "-again"
    with s.store.engine.begin() as c:
        c.execute(update(matches).where(matches.c.id == s.mirror).values(
            spec_json=json.dumps(spec), cluster=mirror.cluster + "-again"))
        c.execute(update(seasons).where(seasons.c.name == "rr").values(
            created_at=seasons.c.created_at + 1))
    assert s.store.pages.sealed_in("rr") == []
    assert s.store.pages.sealed_by(s.first) == []  # (the store's uncached answer agrees)
