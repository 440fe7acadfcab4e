"""A version's statistics by role on the submission service (the real app over a real SQLite
store): a small duplicate round robin of three Python sample bots, each its author's, played
for real; every group's numbers counted here from the stored match records' events, apart
from the code under test, and compared with what ``GET /api/v1/bots/NAME/VERSION/roles``
answers; a sealed match left out until its mirror is played; another author refused; the
bound on the matches read; the section on the author's version page."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from statistics import mean

import pytest
from fastapi.testclient import TestClient
from league_helpers import BOTS

from referee.rules.cards import RANK_TEXT
from scheduler.execute import execute_match
from scheduler.ladder import LadderRun
from scheduler.league import open_season
from scheduler.registry.owners import add_author
from scheduler.registry.submissions import submit
from scheduler.season import load_season
from scheduler.service.config import ServiceConfig
from scheduler.service.roles import season_roles
from scheduler.store import open_store
from web.app import create_app

pytestmark = pytest.mark.xdist_group("test_version_roles")

#: each author's sample bot (its name in the season too)
AUTHORS = {"alice": "greedy", "bob": "random", "carol": "cheap"}
SEASON = "roles"
#: the public events that name the trump, and its kind by the letter they write
NAMING = {"Declared", "KittyOpened", "KittyCardDrawn", "TrumpSet"}
KIND = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs", "none": "no-trump"}


class Season:
    """Three authors' sample bots in a duplicate round robin of two deal sets of two deals
    (12 matches), every match played but the last, which keeps the other matches on its
    cards sealed; the service's app over the store."""

    def __init__(self, tmp: Path) -> None:
        self.db = f"sqlite:///{tmp / 'arena.db'}"
        self.store = store = open_store(self.db)
        self.tokens = {who: add_author(store, who) for who in AUTHORS}
        self.tokens["org"] = add_author(store, "org", role="organiser")
        for who, bot in AUTHORS.items():
            folder = tmp / bot
            shutil.copytree(BOTS / bot, folder, ignore=shutil.ignore_patterns("__pycache__"))
            submit(store, folder, author=who, state="ready")
        path = tmp / f"{SEASON}.toml"
        path.write_text(f'name = "{SEASON}"\nvariant = "two-deck-fry"\nformat = "round_robin"\n'
                        'duplicate = true\ndeal_sets = 2\ndeals_per_set = 2\n'
                        + "".join(f'[[bots]]\nbot = "{b}@1.0.0"\n' for b in AUTHORS.values()))
        open_season(load_season(path), store, workdir=tmp / "w", check=False, out=None)
        self.matches = [m.id for m in store.pages.matches(SEASON)]
        self.last = self.matches[-1]
        for mid in self.matches[:-1]:
            assert execute_match(self.db, mid) == "done", mid
        self.app = create_app(self.db, ServiceConfig())

    def play_the_last(self) -> None:
        assert execute_match(self.db, self.last) == "done"

    def roles(self, who: str, bot: str, season: str | None = SEASON):
        query = "" if season is None else f"?season={season}"
        headers = {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}
        return TestClient(self.app).get(f"/api/v1/bots/{bot}/1.0.0/roles{query}",
                                        headers=headers)

    def unsealed(self) -> list[str]:
        return [m for m in self.played() if not self.store.pages.sealed_by(m)]

    def played(self) -> list[str]:
        return [m.id for m in self.store.pages.matches(SEASON) if m.played]


@pytest.fixture(scope="module")
def season(tmp_path_factory):
    return Season(tmp_path_factory.mktemp("roles"))


# -- the groups, counted from the records' events --------------------------------------------
def _deals(record) -> list[dict]:
    """Each deal of a match record, from its games' events as stored: its dealer when it
    ended, its trump kind (as last named before its first lead), the attackers' total and
    each team's level gain."""
    out = []
    for game in record.games:
        for e in game.events:
            kind = e["event"]
            if kind == "DealStarted":
                deal = {"dealer": e["dealer"], "trump": None, "led": False,
                        "before": [RANK_TEXT.index(x) for x in e["levels"]]}
            elif kind == "DealerSet":
                deal["dealer"] = e["seat"]
            elif kind in NAMING and not deal["led"]:
                deal["trump"] = KIND[e["trump"]]
            elif kind == "Played":
                deal["led"] = True
            elif kind == "DealEnded":
                after = [RANK_TEXT.index(x) for x in e["levels"]]
                deal.update(total=e["attacker_total"],
                            gain=[a - b for a, b in zip(after, deal["before"])])
                out.append(deal)
    return out


def _by_hand(store, ids, bot: str) -> dict:
    """``bot``'s groups over the matches ``ids``: {(role, key): {"matches": set of ids,
    "nets": [...], "taken": [...], "conceded": [...]}}."""
    groups: dict = {}
    for mid in ids:
        record = store.results.record(mid)
        seats = list(record.seats)
        if bot not in seats:
            continue
        mine = {i for i, b in enumerate(seats) if b == bot}
        team = min(mine) % 2
        assert {i % 2 for i in mine} == {team}
        for d in _deals(record):
            net = d["gain"][team] - d["gain"][1 - team]
            defending = d["dealer"] % 2 == team
            keys = [("all", None), ("defenders" if defending else "attackers", None)]
            dealt, across = d["dealer"] in mine, (d["dealer"] + 2) % 4 in mine
            if defending and dealt != across:
                keys.append(("dealer", None) if dealt else ("dealer_partner", None))
            keys.append(("trump", d["trump"]))
            keys += [("partner", b) for b in sorted({seats[(i + 2) % 4] for i in mine})]
            keys += [("opponent", b) for b in sorted({seats[i] for i in range(4)
                                                       if i % 2 != team})]
            for k in keys:
                g = groups.setdefault(k, {"matches": set(), "nets": [], "taken": [],
                                          "conceded": []})
                g["matches"].add(mid)
                g["nets"].append(net)
                g["conceded" if defending else "taken"].append(d["total"])
    return groups


def _check(answered: dict, want: dict) -> None:
    """The route's groups of a bot (``bots[i]``) against those counted by hand."""
    got = {(g["role"], g["key"]): g for g in answered["groups"]}
    assert set(got) == set(want)
    for key, w in want.items():
        g = got[key]
        assert g["matches"] == len(w["matches"]), key
        assert g["deals"] == len(w["nets"]), key
        assert g["wins"] == sum(n > 0 for n in w["nets"]), key
        assert g["even"] == sum(n == 0 for n in w["nets"]), key
        assert g["net"]["mean"] == pytest.approx(mean(w["nets"])), key
        for part in ("taken", "conceded"):
            assert g[part]["n"] == len(w[part]), (key, part)
            if w[part]:
                assert g[part]["mean"] == pytest.approx(mean(w[part])), (key, part)
            else:
                assert g[part]["mean"] is None
    assert answered["deals"] == len(want[("all", None)]["nets"])
    assert answered["matches"] == len(want[("all", None)]["matches"])


def test_each_versions_groups_are_those_its_records_tell_and_sealed_ones_wait(season):
    store = season.store
    counted = season.unsealed()
    sealed = set(season.played()) - set(counted)
    assert counted and sealed  # (the last match keeps the others on its cards sealed)
    for who, bot in AUTHORS.items():
        got = season.roles(who, bot)
        assert got.status_code == 200, got.text
        (answered,) = got.json()["seasons"]
        mine = [m for m in season.played() if bot in store.pages.match(m).seats]
        assert (answered["season"], answered["variant"]) == (SEASON, "two-deck-fry")
        assert answered["played"] == answered["read"] == len(mine) and not answered["cut"]
        assert answered["sealed"] == len(sealed & set(mine)) > 0
        assert answered["over"] == f"over its {len(mine)} played matches, less " \
            f"{answered['sealed']} sealed until the matches on their cards are played"
        (roles,) = answered["bots"]
        assert roles["bot"] == bot and roles["skipped"] == 0
        want = _by_hand(store, counted, bot)
        _check(roles, want)
        every = want[("all", None)]
        assert len(every["matches"]) < len(mine)  # the sealed ones are not in
        # a partnership is two processes of one bot: its defence is the dealer's team's, never
        # told apart into the dealer and its partner
        groups = {(g["role"], g["key"]): g for g in roles["groups"]}
        assert groups[("partner", bot)]["deals"] == len(every["nets"])
        assert ("dealer", None) not in groups and ("dealer_partner", None) not in groups
    # once the last match is played, every match counts
    season.play_the_last()
    assert season.unsealed() == season.played() == season.matches
    for who, bot in AUTHORS.items():
        (answered,) = season.roles(who, bot).json()["seasons"]
        assert answered["sealed"] == 0 and answered["read"] == 8
        _check(answered["bots"][0], _by_hand(store, season.matches, bot))


def test_the_matches_read_are_bounded_to_the_newest(season):
    store = season.store
    got = season_roles(store, SEASON, ["greedy"], newest=3)
    assert (got.read, got.newest, got.cut, got.played) == (3, 3, True, 8)
    newest = [r.id for r in store.pages.seated_page(SEASON, ["greedy"], limit=3).rows]
    sealed = {m for m in newest if store.pages.sealed_by(m)}
    assert got.sealed == len(sealed)
    # (sealed ones among them while the last match is not played: another test plays it)
    assert got.to_dict()["over"] == "over its newest 3 played matches" + (
        f", less {len(sealed)} sealed until the matches on their cards are played"
        if sealed else "")
    assert season_roles(store, SEASON, ["greedy"]).over.startswith("over its 8 played matches")
    _check(got.bots[0].to_dict(), _by_hand(store, [m for m in newest if m not in sealed],
                                           "greedy"))


def test_only_the_versions_author_and_the_organiser_see_it(season):
    assert season.roles("bob", "greedy").status_code == 403
    assert season.roles("bob", "greedy").json()["detail"] == \
        TestClient(season.app).get("/api/v1/bots/greedy/1.0.0/results", headers={
            "Authorization": f"Bearer {season.tokens['bob']}"}).json()["detail"]
    assert season.roles("", "greedy").status_code == 401
    assert season.roles("alice", "greedy", "nosuch").status_code == 404
    org = season.roles("org", "greedy", None)
    assert org.status_code == 200 and org.json()["seasons"][0]["bots"][0]["bot"] == "greedy"
    # her version's page shows the section; bob's session does not get the page
    alice, bob = TestClient(season.app), TestClient(season.app)
    for who, c in (("alice", alice), ("bob", bob)):
        assert c.post("/login", data={"token": season.tokens[who]},
                      follow_redirects=False).status_code == 303
    page = alice.get("/me/bots/greedy/1.0.0")
    assert page.status_code == 200
    every = season.roles("alice", "greedy").json()["seasons"][0]["bots"][0]["groups"][0]
    assert '<div class="by-role" data-season="roles">' in page.text
    assert 'data-role="all"' in page.text and 'data-key="greedy"' in page.text
    assert f'<td>every deal</td><td class="num">{every["matches"]}</td><td class="num">' \
        f'{every["deals"]}</td><td class="num">{every["wins"]}</td>' in page.text
    assert bob.get("/me/bots/greedy/1.0.0").status_code == 403


def test_a_ladder_versions_page_shows_its_roles_to_the_organiser_and_its_author(season,
                                                                               tmp_path):
    store = season.store
    path = tmp_path / "ld.toml"
    path.write_text('name = "ld"\nvariant = "two-deck-fry"\ndeals_per_set = 2\n'
                    'format = "ladder"\nqueue_ahead = 2\nplacement_pairs = 1\n'
                    'bots = "every ready version"\n')
    ladder = load_season(path)
    open_season(ladder, store, workdir=tmp_path / "w", check=False, out=None)
    runner = LadderRun(store, ladder, seed=1, out=io.StringIO())
    runner.admit()
    runner.fill()
    pair = store.pages.matches("ld")[:2]
    assert pair[0].cluster == pair[1].cluster  # a duplicate pair: none sealed once both are over
    for m in pair:
        assert execute_match(season.db, m.id) == "done"
    bot = pair[0].seats[0]
    name = bot.partition("@")[0]
    author = next(who for who, b in AUTHORS.items() if b == name)
    other = next(who for who, b in AUTHORS.items() if f"{b}@1.0.0" not in pair[0].seats)
    want = _by_hand(store, [m.id for m in pair], bot)
    url = f"/seasons/ld/versions/{bot}"
    # the organiser's own dashboard shows everything
    page = TestClient(create_app(season.db)).get(url)
    assert page.status_code == 200 and '<div class="by-role" data-season="ld">' in page.text
    every = want[("all", None)]
    assert f'<td>every deal</td><td class="num">{len(every["matches"])}</td>' \
           f'<td class="num">{len(every["nets"])}</td>' in page.text
    # on the service: its author's session and the organiser's, not another's nor nobody's
    for who, shown in ((author, True), ("org", True), (other, False), (None, False)):
        c = TestClient(season.app)
        if who:
            assert c.post("/login", data={"token": season.tokens[who]},
                          follow_redirects=False).status_code == 303
        got = c.get(url)
        assert got.status_code == 200 and ('class="by-role"' in got.text) == shown, who
    # and through the API, as its version's other season
    (answered,) = season.roles(author, name, "ld").json()["seasons"]
    _check(answered["bots"][0], want)
