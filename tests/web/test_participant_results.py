"""What an author sees of their own results on the submission service (the real app over a
real SQLite store): each season and ladder a version plays in, with its rating, rank, pairs
and matches, on ``/me``, its version's page, the API and ``arena bots status``; a scrimmage's
matches; the records of their own matches to download, which ``arena replay`` reads; and
never anything of another author's version. The store is made once by the store's own writes
and one real match (the others are written with copies of its result and record).
"""

from __future__ import annotations

import io
import json
import re
import secrets
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from browser_helpers import browser_kit, serving
from fastapi.testclient import TestClient
from league_helpers import BOTS, arena, env
from test_record_storage import summary_written

from conftest import ROOT
from referee.match.matchfile import MatchSummary
from scheduler.execute import execute_match
from scheduler.ladder import LadderRun
from scheduler.league import open_season
from scheduler.registry.archives import size_text
from scheduler.registry.owners import add_author
from scheduler.registry.submissions import submit
from scheduler.season import load_season
from scheduler.service.config import ServiceConfig
from scheduler.service.intake import open_scrimmage
from scheduler.service.limits import Limits
from scheduler.stats.scores import match_tally, score_pair
from scheduler.store import open_store
from web.app import create_app

pytestmark = pytest.mark.xdist_group("test_participant_results")

ALICE, BOB = "alice-bot@1.0.0", "bob-bot@1.0.0"
#: bob's ladder rating, which nothing alice is shown may hold
BOB_MU = 27.123456
#: in bob's refused version's reason, which nothing alice is shown may hold
MARKER = "BOB-SECRET-" + secrets.token_hex(6)


def _folder(where: Path, name: str, version: str = "1.0.0") -> Path:
    folder = where / f"{name}-{version}"
    shutil.copytree(BOTS / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (folder / "bot.toml").read_text()
    toml = re.sub(r'(?m)^name = .*$', f'name = "{name}"', toml)
    toml = re.sub(r'(?m)^version = .*$', f'version = "{version}"', toml)
    (folder / "bot.toml").write_text(toml)
    return folder


class League:
    """A store with authors alice and bob and the organiser's house bot: a round robin of the
    three (one match played for real, the others written with its result and record), a ladder
    with its ratings (one of alice's pairs half played: its record sealed), a scrimmage of
    alice's against bob's, and a refused version of bob's; the app over it."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.db = f"sqlite:///{tmp / 'arena.db'}"
        self.store = store = open_store(self.db)
        self.tokens = {n: add_author(store, n) for n in ("alice", "bob")}
        self.tokens["org"] = add_author(store, "org", role="organiser")
        for who in ("alice", "bob"):
            submit(store, _folder(tmp, f"{who}-bot"), author=who, state="ready")
        submit(store, _folder(tmp, "house"))
        # the round robin: one real match, the others its copies
        self.season("rr", 'format = "round_robin"\nduplicate = true\ndeal_sets = 1\n'
                    + "".join(f'[[bots]]\nbot = "{b}"\n' for b in (ALICE, BOB, "house")))
        matches = store.pages.matches("rr")
        self.real = next(m.id for m in matches if set(m.seats) == {"alice-bot", "house"})
        assert execute_match(self.db, self.real) == "done"
        played = store.pages.match_and_result(self.real)
        self.summary = played.summary.to_dict()
        self.record = store.results.record(self.real)
        self.sealed_while_played = store.pages.sealed_by(self.real) != []
        for i, m in enumerate(matches):
            if m.id != self.real:
                self.finish(m.id, "rr", swap=i % 2 == 1)
        # the ladder: every ready version joins; its first pairs, one half played
        runner = LadderRun(store, self.season("ld", 'format = "ladder"\nqueue_ahead = 6\n'
                                              'placement_pairs = 2\n'
                                              'bots = "every ready version"\n'),
                           seed=1, out=io.StringIO())
        runner.admit()
        runner.fill()
        ladder = store.pages.matches("ld")
        mine = [m for m in ladder if ALICE in m.seats]
        assert mine, [m.seats for m in ladder]
        self.sealed = next(m.id for m in mine if not m.mirror)
        self.unplayed = next(m.id for m in mine if m.mirror and
                             m.cluster == store.pages.match(self.sealed).cluster)
        for m in ladder:
            if m.id != self.unplayed:
                self.finish(m.id, "ld")
        store.ladder.record_ratings("ld", "c0", 0, [(ALICE, 26.5, 2.0, 1), (BOB, BOB_MU, 3.3, 1)])
        store.ladder.record_ratings("ld", "c1", 1, [("house@1.0.0", 22.0, 1.0, 1)])
        self.bob_only = [m.id for s in ("rr", "ld") for m in store.pages.matches(s)
                         if not any(b.startswith("alice-bot") for b in m.seats)]
        assert self.bob_only and self.sealed and self.unplayed
        # a refused version of bob's, its reason and output end holding the marker
        bad = submit(store, _folder(tmp, "bob-bad"), author="bob", state="queued").version
        store.versions.set_state(bad.id, "refused", reason="the smoke match failed: "
                                 f"never_connected; its output ends:\n{MARKER}\n")
        self.app = create_app(self.db, ServiceConfig())

    def season(self, name: str, text: str):
        """Season ``name`` of one deal a set, its file's other lines ``text``, opened."""
        path = self.tmp / f"{name}.toml"
        path.write_text(f'name = "{name}"\nvariant = "two-deck-fry"\ndeals_per_set = 1\n{text}')
        season = load_season(path)
        open_season(season, self.store, workdir=self.tmp / "w", check=False, out=None)
        return season

    def finish(self, match_id: str, season: str, swap: bool = False) -> None:
        """Write a result for the match: the real match's, its teams swapped when ``swap``."""
        m = self.store.pages.match(match_id)
        summary = dict(self.summary, seats=list(m.seats))
        if swap:
            summary.update(net=summary["net"][::-1], score=summary["score"][::-1])
        match = replace(self.record, match_id=match_id, seats=tuple(m.seats))
        assert self.store.queue.claim(match_id, "test:1", lease_s=60) is not None
        tally = match_tally(MatchSummary.from_dict(summary), m.variant)
        assert self.store.results.finish(match_id, season, match, 1.0, "test:1", tally=tally)
        summary_written(self.store, match_id, summary)  # (teams swapped: not its record's)
        score_pair(self.store, match_id)

    def client(self, who: str | None = None) -> TestClient:
        """A client of the app: logged in as ``who`` (a session), or nobody."""
        c = TestClient(self.app)
        if who is not None:
            got = c.post("/login", data={"token": self.tokens[who]}, follow_redirects=False)
            assert got.status_code == 303, got.text
        return c

    def auth(self, who: str) -> dict:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def token_file(self, who: str) -> str:
        path = self.tmp / f"{who}.token"
        path.write_text(self.tokens[who])
        return str(path)


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    return League(tmp_path_factory.mktemp("results"))


@pytest.fixture(scope="module")
def server(league):
    with serving(league.app) as base:
        yield base


def _cli(league, server, who: str, *args: str, timeout: float = 60):
    return arena(*args, "--server", server, "--token-file", league.token_file(who),
                 timeout=timeout)


def _csrf(client) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', client.get("/me").text).group(1)


def _never_bobs(league, *texts: str) -> None:
    for text in texts:
        assert f"{BOB_MU:.2f}" not in text and MARKER not in text
        for mid in league.bob_only:
            assert mid not in text, mid


# -- alice's results -----------------------------------------------------------------------
def test_alice_sees_her_ratings_ranks_pairs_and_matches_and_nothing_of_bobs(league, server):
    store = league.store
    got = league.client().get("/api/v1/bots/alice-bot/1.0.0/results",
                              headers=league.auth("alice"))
    assert got.status_code == 200, got.text
    seasons = {r["season"]: r for r in got.json()["seasons"]}
    assert set(seasons) == {"rr", "ld"}
    # the round robin: her standings line, ranked among the three
    standings = league.client().get("/api/seasons/rr").json()["bots"]
    line = next(b for b in standings if b["name"] == "alice-bot")
    rr = seasons["rr"]
    assert (rr["rank"], rr["of"]) == (standings.index(line) + 1, 3)
    assert (rr["rating"], rr["low"], rr["high"]) == (line["rating"], line["low"], line["high"])
    assert rr["pairs"] == line["pairs_won"] + line["pairs_drawn"] + line["pairs_lost"] == 2
    assert rr["points"] == line["wins"] + line["draws"] / 2
    ids = [m["id"] for m in rr["matches"]["rows"]]
    mine = [m for m in store.pages.matches("rr") if "alice-bot" in m.seats]
    assert sorted(ids) == sorted(m.id for m in mine) and rr["matches"]["total"] == 4
    finished = [store.pages.match(i).finished_at for i in ids]
    assert finished == sorted(finished, reverse=True)  # newest first
    for m in rr["matches"]["rows"]:
        row = store.pages.match_and_result(m["id"])
        team = row.seats.index("alice-bot") % 2
        assert m["opponents"] == [row.seats[1 - team]]
        assert (m["score"], m["net"]) == (row.summary.score[team], row.summary.net[team])
        assert m["outcome"] == {1.0: "win", 0.5: "draw", 0.0: "loss"}[m["score"]]
        assert m["record_url"] == f"/api/v1/matches/{m['id']}/record"
    # the ladder: openskill mu and mu +- 2 sigma, ranked by mu - 3 sigma
    ld = seasons["ld"]
    assert (ld["rank"], ld["of"], ld["pairs"]) == (1, 3, 1)
    assert (ld["mu"], ld["low"], ld["high"]) == (26.5, 22.5, 30.5)
    rows = {m["id"]: m for m in ld["matches"]["rows"]}
    assert league.unplayed not in rows  # not played: not a result
    assert rows[league.sealed]["sealed"] and rows[league.sealed]["outcome"] is None
    assert rows[league.sealed]["record_url"] is None
    # one page at a time
    page = league.client().get("/api/v1/bots/alice-bot/1.0.0/results?season=rr&limit=3&offset=3",
                               headers=league.auth("alice")).json()
    assert [m["id"] for m in page["seasons"][0]["matches"]["rows"]] == ids[3:]
    # her pages: /me and the version's page
    alice = league.client("alice")
    me = alice.get("/me").text
    version = alice.get("/me/bots/alice-bot/1.0.0").text
    for text in (me, version):
        assert "26.50 [22.50, 30.50]" in text and "1 of 3" in text
        assert f"{rr['rank']} of 3" in text and f"{line['rating']:.1f}" in text
    for m in rr["matches"]["rows"]:
        assert f'href="/matches/{m["id"]}/replay"' in version
        assert f'href="/me/matches/{m["id"]}/record"' in version
    assert "sealed until its mirror is played" in version
    assert version.index(ids[0]) < version.index(ids[-1])
    # the command line
    status = _cli(league, server, "alice", "bots", "status", ALICE)
    assert status.returncode == 0, status.stdout + status.stderr
    assert "season ld (ladder): rank 1 of 3, openskill mu 26.50 [22.50, 30.50], 1 pairs" \
        in status.stdout
    assert f"season rr (round_robin): rank {rr['rank']} of 3, rating {line['rating']:.1f}" \
        in status.stdout
    for m in rr["matches"]["rows"]:
        assert f"match {m['id']} done  v {m['opponents'][0]}: {m['outcome']}" in status.stdout
        assert f"{server}/matches/{m['id']}/replay" in status.stdout
    # nothing of bob's: his version's results are his, and his matches and rating are not hers
    refused = league.client().get("/api/v1/bots/bob-bot/1.0.0/results",
                                  headers=league.auth("alice"))
    assert refused.status_code == 403
    _never_bobs(league, got.text, page and json.dumps(page), me, version, status.stdout,
                refused.text)
    assert alice.get("/me/bots/bob-bot/1.0.0").status_code == 403


def test_a_scrimmage_lists_its_matches_with_results_and_links(league, server):
    c = league.client()
    s = c.post("/api/v1/scrimmages", json={"bot": ALICE, "opponent": BOB, "pairs": 1},
               headers=league.auth("alice"))
    assert s.status_code == 202, s.text
    sid = s.json()["id"]
    assert open_scrimmage(league.store, sid) == "playing"
    season = league.store.scrimmages.get(sid).season
    ids = [m.id for m in league.store.pages.matches(season)]
    for mid in ids:
        league.finish(mid, season)
    got = c.get(f"/api/v1/scrimmages/{sid}", headers=league.auth("alice")).json()
    assert [m["id"] for m in got["results"]] == ids
    for m in got["results"]:
        assert m["opponents"] == [BOB] and m["outcome"] in ("win", "draw", "loss")
        assert m["replay_url"] == f"/matches/{m['id']}/replay"
    page = league.client("alice").get(f"/me/scrimmages/{sid}").text
    for m in got["results"]:
        assert f'href="/me/matches/{m["id"]}/record"' in page and m["outcome"] in page
    shown = _cli(league, server, "alice", "scrimmage", "show", str(sid))
    assert shown.returncode == 0, shown.stderr
    for m in got["results"]:
        assert f"match {m['id']} done  v {BOB}: {m['outcome']}" in shown.stdout
    as_json = json.loads(_cli(league, server, "alice", "scrimmage", "show", str(sid),
                              "--json").stdout)
    assert [m["id"] for m in as_json["results"]] == ids
    # the scrimmage's matches are not a season's result of the version
    results = c.get("/api/v1/bots/alice-bot/1.0.0/results", headers=league.auth("alice"))
    assert season not in {r["season"] for r in results.json()["seasons"]}


# -- records -------------------------------------------------------------------------------
def _replay(path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli", "replay", str(path), *args], cwd=ROOT,
                          env=env(), capture_output=True, text=True, timeout=120)


def test_an_author_downloads_their_own_records_and_no_other(league, server, tmp_path):
    assert league.sealed_while_played  # (its mirror and the other matches on its cards)
    c = league.client()
    got = c.get(f"/api/v1/matches/{league.real}/record", headers=league.auth("alice"))
    assert got.status_code == 200, got.text
    assert "attachment" in got.headers["content-disposition"]
    path = tmp_path / "real.json"
    path.write_bytes(got.content)
    verified = _replay(path, "--verify")
    assert verified.returncode == 0 and verified.stdout.startswith("verified:"), \
        verified.stdout + verified.stderr
    seat = league.store.pages.match(league.real).seats.index("alice-bot")
    seen = _replay(path, "--seat", str(seat))
    assert seen.returncode == 0 and seen.stdout.count("\n") > 10, seen.stderr
    assert json.loads(seen.stdout.splitlines()[0])
    # the house bot's seats' logs are not hers
    record = json.loads(got.content)
    assert set(record["bot_logs"]) == {str(s) for s in (seat, seat + 2)}
    assert set(league.record.extra["bot_logs"]) == {"0", "1", "2", "3"}
    # the same from her page's session
    page = league.client("alice").get(f"/me/matches/{league.real}/record")
    assert page.status_code == 200 and page.content == got.content
    # bob's match, an unplayed one and a missing one: the same 404; a sealed one: 403
    missing = c.get("/api/v1/matches/no-such-match/record", headers=league.auth("alice"))
    assert missing.status_code == 404
    for mid in (league.bob_only[0], league.unplayed):
        other = c.get(f"/api/v1/matches/{mid}/record", headers=league.auth("alice"))
        assert other.status_code == 404
        assert other.text.replace(mid, "X") == missing.text.replace("no-such-match", "X")
        assert dict(other.headers) .keys() == dict(missing.headers).keys()
    assert c.get(f"/api/v1/matches/{league.real}/record",
                 headers=league.auth("bob")).status_code == 404
    sealed = c.get(f"/api/v1/matches/{league.sealed}/record", headers=league.auth("alice"))
    assert sealed.status_code == 403 and "sealed" in sealed.json()["detail"]
    assert "games" not in sealed.text
    # every record of hers at once, the sealed one left for later
    out = tmp_path / "records"
    saved = _cli(league, server, "alice", "bots", "records", ALICE, "--out", str(out))
    assert saved.returncode == 0, saved.stdout + saved.stderr
    want = {f"{m.id}.json" for s in ("rr", "ld") for m in league.store.pages.matches(s)
            if m.status == "done" and m.id != league.sealed
            and any(b.startswith("alice-bot") for b in m.seats)}
    assert {p.name for p in out.iterdir()} == want and f"{league.real}.json" in want
    assert "1 sealed until their mirrors are played" in saved.stderr
    assert (out / f"{league.real}.json").read_bytes() == got.content
    _never_bobs(league, saved.stdout, saved.stderr)


# -- the defects ---------------------------------------------------------------------------
def test_a_scrimmage_against_a_version_not_ready_tells_nothing_of_it(league):
    """Another author's refused version, a queued one and a missing one are refused in the
    same words, through the API and the /me form; nothing of the reason nor of the bot's
    output reaches the asker."""
    store = league.store
    queued = submit(store, _folder(league.tmp / "q", "bob-queued"), author="bob",
                    state="queued").version
    try:
        c, alice = league.client(), league.client("alice")
        answers, said = [], set()
        for opponent in ("bob-bad@1.0.0", "bob-queued@1.0.0", "nobody@1.0.0"):
            got = c.post("/api/v1/scrimmages", json={"bot": ALICE, "opponent": opponent,
                                                     "pairs": 1}, headers=league.auth("alice"))
            assert got.status_code == 400, got.text
            said.add(got.json()["detail"].replace(opponent, "X"))
            answers.append(got)
        assert len(said) == 1 and "is not a ready version" in said.pop()
        form = alice.post("/me/scrimmages", data={"csrf": _csrf(alice), "bot": ALICE,
                                                  "opponent": "bob-bad@1.0.0", "pairs": "1"})
        assert form.status_code == 400 and "is not a ready version" in form.text
        # his refused version named as her own: not hers, whatever its state
        theirs = c.post("/api/v1/scrimmages", json={"bot": "bob-bad@1.0.0", "opponent": ALICE,
                                                    "pairs": 1}, headers=league.auth("alice"))
        assert theirs.status_code == 403
        answers += [form, theirs, alice.get("/me/bots/bob-bad/1.0.0")]
        for got in answers:
            whole = f"{got.status_code} {dict(got.headers)} {got.text}"
            assert MARKER not in whole and "never_connected" not in whole, whole
        assert league.store.scrimmages.of("alice", states=("queued",)) == []
    finally:
        store.versions.set_state(queued.id, "refused", reason="(out of the way)")


def test_a_refused_form_is_shown_on_me_with_its_fields(league):
    alice = league.client("alice")
    got = alice.post("/me/upload", data={"csrf": _csrf(alice)},
                     files={"archive": ("bot.tar.gz", b"\x00not an archive" * 10)})
    assert got.status_code == 400
    assert re.search(r'<p class="error" id="upload-error">[^<]*archive', got.text), got.text
    assert 'id="upload"' in got.text and 'id="versions"' in got.text  # the page, its forms
    # what her bot is built and played with (no broker: this machine's toolchains)
    from referee.seats import runtimes
    line = re.search(r'<p id="runtimes">[^<]*<code>([^<]*)</code>', got.text)
    assert line and line[1] == runtimes.summaries(), got.text
    assert f"go {runtimes.GO_VERSION}" in line[1] and "rust 1." in line[1], line[1]
    ask = alice.post("/me/scrimmages", data={"csrf": _csrf(alice), "bot": ALICE,
                                             "opponent": BOB, "pairs": "99"})
    assert ask.status_code == 400 and 'id="scrimmage-error"' in ask.text
    assert 'value="99"' in ask.text and f"<option selected>{BOB}</option>" in ask.text
    assert f"<option selected>{ALICE}</option>" in ask.text


def test_logged_out_pages_go_to_the_login_and_back(league):
    c = league.client()
    got = c.get("/me", follow_redirects=False)
    assert got.status_code == 303 and got.headers["location"] == "/login?next=%2Fme"
    deep = c.get("/me/bots/alice-bot/1.0.0?season=rr", follow_redirects=False)
    assert deep.headers["location"] == "/login?next=%2Fme%2Fbots%2Falice-bot%2F1.0.0%3Fseason%3Drr"
    page = c.get(deep.headers["location"])
    assert '<input type="hidden" name="next" value="/me/bots/alice-bot/1.0.0?season=rr">' \
        in page.text
    back = c.post("/login", data={"token": league.tokens["alice"], "next":
                                  "/me/bots/alice-bot/1.0.0?season=rr"}, follow_redirects=False)
    assert back.headers["location"] == "/me/bots/alice-bot/1.0.0?season=rr"
    for elsewhere in ("//evil.example/me", "https://evil.example/", "/\\evil.example",
                      "javascript:alert(1)", "/me\r\nSet-Cookie: x=1"):
        got = league.client().post("/login", data={"token": league.tokens["alice"],
                                                   "next": elsewhere}, follow_redirects=False)
        assert got.headers["location"] == "/me", elsewhere
    assert league.client().post("/me/upload", data={}).status_code == 401  # a write: refused


def test_a_version_page_follows_its_state_with_a_script_of_its_own(league):
    v = submit(league.store, _folder(league.tmp / "f", "alice-follow"), author="alice",
               state="queued").version
    alice = league.client("alice")
    page = alice.get("/me/bots/alice-follow/1.0.0").text
    assert 'data-follow="/me/bots/alice-follow/1.0.0/state"' in page and "reload" not in page
    assert re.findall(r"<script[^>]*>", page) == ['<script src="/static/version.js">']
    script = alice.get("/static/version.js").text
    assert "dataset.follow" in script and "setTimeout(poll, 3000)" in script
    assert alice.get("/me/bots/alice-follow/1.0.0/state").json()["state"] == "queued"
    league.store.versions.set_state(v.id, "ready")
    assert alice.get("/me/bots/alice-follow/1.0.0/state").json()["state"] == "ready"
    assert "<script" not in alice.get("/me/bots/alice-follow/1.0.0").text
    assert league.client().get("/me/bots/alice-follow/1.0.0/state",
                               follow_redirects=False).status_code == 401


def test_sizes_are_shown_for_people(league, server):
    assert [size_text(n) for n in (0, 812, 1536, 8 << 20, 64 << 20, 5 << 30)] == [
        "0 B", "812 B", "1.5 KiB", "8 MiB", "64 MiB", "5 GiB"]
    alice = league.client("alice")
    assert "at most 8 MiB, 64 MiB unpacked" in alice.get("/me").text
    row = league.store.registry.version("alice-bot", "1.0.0")
    page = alice.get("/me/bots/alice-bot/1.0.0").text
    assert f"{row.files} ({size_text(row.size)})" in page and " bytes" not in page
    status = _cli(league, server, "alice", "bots", "status", ALICE)
    assert f"{row.files} files, {size_text(row.size)}," in status.stdout
    small = create_app(league.db, ServiceConfig(limits=Limits(archive_bytes=20000)))
    too_big = TestClient(small).post("/api/v1/bots", content=b"x" * 40000,
                                     headers=league.auth("alice"))
    assert too_big.status_code == 413
    assert too_big.json()["detail"] == "the body is 39.1 KiB; the limit is 19.5 KiB"


# -- following an upload -------------------------------------------------------------------
def _archive(folder: Path) -> bytes:
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(folder, arcname=".")
    return buf.getvalue()


def test_wait_prints_each_state_and_what_it_waits_behind_and_times_out(league, server):
    import queue
    import threading
    store = league.store
    ahead = [submit(store, _folder(league.tmp / "a", f"bob-q{i}"), author="bob",
                    state="queued").version for i in range(2)]
    store.versions.set_state(ahead[0].id, "building")
    store.versions.mark_sent(ahead[1].id)  # in the broker already: it goes before alice's
    up = league.client().post("/api/v1/bots", content=_archive(_folder(league.tmp / "a",
                                                                       "alice-q")),
                              headers=league.auth("alice"))
    assert up.status_code == 202 and up.json()["ahead"] == {"queued": 1, "building": 1,
                                                            "checking": 0}
    mine = store.registry.version("alice-q", "1.0.0").id
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", "bots", "status", "alice-q@1.0.0", "--wait", "--timeout",
         "120", "--server", server, "--token-file", league.token_file("alice")],
        cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x.rstrip("\n")) for x in proc.stdout],
                     daemon=True).start()
    try:
        assert lines.get(timeout=60) == \
            "alice-q@1.0.0: queued: 2 versions ahead of it, 1 being built"
        for change, said in (((ahead[0].id, "ready"), "queued: 1 version ahead of it"),
                             ((ahead[1].id, "refused"), "queued: next for a worker"),
                             ((mine, "building"), "building"), ((mine, "checking"), "checking"),
                             ((mine, "ready"), "ready")):
            store.versions.set_state(*change)
            assert lines.get(timeout=30) == f"alice-q@1.0.0: {said}"
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    # --timeout: exit 3, saying so
    sub = _cli(league, server, "alice", "bots", "submit",
               str(_folder(league.tmp / "b", "alice-q", "2.0.0")), "--wait", "--timeout", "1")
    assert sub.returncode == 3, sub.stdout + sub.stderr
    assert "alice-q@2.0.0: queued: next for a worker" in sub.stdout.splitlines()
    assert "alice-q@2.0.0 is still queued after 1 s (--timeout)" in sub.stderr
    store.versions.set_state(store.registry.version("alice-q", "2.0.0").id, "refused", reason="-")
    assert "3 --timeout passed" in arena("bots", "submit", "--help").stdout


def test_in_a_browser_alice_follows_her_results_and_replays_a_record(league, server, tmp_path):
    from playwright.sync_api import expect
    from test_service_browser import ARTIFACTS, _watched
    sync_playwright, chromium = browser_kit()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    queued = submit(league.store, _folder(tmp_path, "alice-next"), author="alice",
                    state="queued").version
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, chromium_sandbox=False,
                                    args=["--no-sandbox"])
        try:
            ctx = _watched(browser, errors, accept_downloads=True,
                           viewport={"width": 1280, "height": 960})
            page = ctx.new_page()
            page.goto(f"{server}/me/bots/alice-bot/1.0.0")  # logged out: the login, then back
            assert page.url.startswith(f"{server}/login?next="), page.url
            page.fill("#token", league.tokens["alice"])
            with page.expect_navigation():
                page.click("#login button[type=submit]")
            assert page.url == f"{server}/me/bots/alice-bot/1.0.0", page.url
            ladder = page.locator("section[data-season='ld']")
            assert "1 of 3" in ladder.locator(".rank").inner_text()
            assert "26.50 [22.50, 30.50]" in ladder.locator(".rating").inner_text()
            line = page.locator(f"tr[data-match='{league.real}']")
            assert line.locator(".outcome").inner_text() in ("win", "draw", "loss")
            page.screenshot(path=str(ARTIFACTS / "results-version.png"), full_page=True)
            with page.expect_download() as download:
                line.locator("a.record").click()
            saved = tmp_path / download.value.suggested_filename
            download.value.save_as(saved)
            assert saved.name == f"{league.real}.json"
            verified = _replay(saved, "--verify")
            assert verified.returncode == 0, verified.stdout + verified.stderr
            # a queued version's page follows it to ready by itself
            page.goto(f"{server}/me/bots/alice-next/1.0.0")
            expect(page.locator("#state")).to_have_text("queued")
            league.store.versions.set_state(queued.id, "ready")
            expect(page.locator("#state")).to_have_text("ready", timeout=20_000)
            expect(page.locator("#waiting")).to_have_count(0)  # the page, reloaded as ready
            errors.extend(page.evaluate("window.cspViolations || []"))
            ctx.close()
        finally:
            browser.close()
    assert errors == []


def test_a_faulting_bots_log_tail_is_its_authors_alone(league):
    """A fault's ``log_tail`` (the end of the bot's own output) reaches the bot's author and
    the organiser, never another author nor an anonymous visitor, as its seat log does."""
    from scheduler.store import compress
    store = league.store
    match_id = next(m for m in league.bob_only if store.pages.match(m).season == "rr")
    seat = list(store.pages.match(match_id).seats).index("bob-bot")
    marker = f"bob-tail-{secrets.token_hex(6)}"
    record = dict(store.results.record(match_id).to_dict(), faults=[
        {"seat": seat, "kind": "timeout", "reason": "no answer", "strikes": 1,
         "log_tail": f"Traceback ...\n{marker}\n"}])
    with store.engine.begin() as c:
        c.exec_driver_sql("UPDATE records SET data = ? WHERE match_id = ?",
                          (compress(record), match_id))
    for who in (None, "alice"):
        for path in (f"/api/matches/{match_id}", f"/matches/{match_id}"):
            got = league.client(who).get(path)
            assert got.status_code == 200, (who, path, got.status_code)
            assert marker not in got.text, (who, path)
    assert league.client("alice").get(f"/api/matches/{match_id}").json()["faults"][0][
        "kind"] == "timeout"  # the fault itself stays public
    for who in ("bob", "org"):
        assert marker in league.client(who).get(f"/api/matches/{match_id}").text, who


def test_a_sealed_match_shows_no_result_in_the_lists(league):
    """While a pair's mirror is unplayed, the match list gives its first match's status and
    nothing of its result (net, score, faults, forfeit, duration), to anyone."""
    for who in (None, "bob", "org"):
        page = league.client(who).get("/api/matches?season=ld&limit=200").json()
        row = next(m for m in page["matches"] if m["id"] == league.sealed)
        assert row["sealed"] and row["status"] == "done", row
        assert all(row[k] is None for k in ("net", "score", "faults", "forfeit_team",
                                            "duration_s")), row
        html = league.client(who).get("/matches?season=ld").text
        assert "sealed until its mirror is played" in html
    played = [m for m in league.client().get("/api/matches?season=rr&limit=200").json()[
        "matches"]]
    assert played and all(m["net"] is not None and not m["sealed"] for m in played)


def test_no_other_site_can_log_a_visitor_in(league):
    """Login CSRF: a form posted from another site (its Origin, or else its Referer) is
    refused and sets no session; the service's own form, and a client naming no origin, log
    in."""
    token = league.tokens["bob"]
    for header in ({"Origin": "https://evil.example"}, {"Referer": "https://evil.example/x"},
                   {"Origin": "null"}):
        got = TestClient(league.app).post("/login", data={"token": token}, headers=header,
                                          follow_redirects=False)
        assert got.status_code == 403, (header, got.status_code)
        assert "session" not in got.headers.get("set-cookie", "").lower(), header
    for header in ({"Origin": "http://testserver"}, {"Referer": "http://testserver/login"},
                   {}):
        got = TestClient(league.app).post("/login", data={"token": token}, headers=header,
                                          follow_redirects=False)
        assert got.status_code == 303 and got.headers.get("set-cookie"), header
