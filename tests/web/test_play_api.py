"""A person's game against three bots, through the service's own routes (``web/play.py``) over
real HTTP: the game's event stream, the answers, the stored record that ``arena replay
--verify`` accepts, the limits, and that the person is shown exactly their seat's view. The
page itself is tests/web/test_play_browser.py's."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from browser_helpers import serving
from league_helpers import BOTS, env, wait_for

from conftest import ROOT
from referee.match.matchfile import MatchFile
from scheduler.registry.owners import add_author
from scheduler.registry.submissions import submit
from scheduler.service.config import ServiceConfig
from scheduler.service.human import HumanSettings
from scheduler.store import open_store
from web.app import create_app

#: the module's fixture (a service playing its games) is made once, on one worker
pytestmark = pytest.mark.xdist_group("play_api")


def _house(where: Path, sample: str, name: str) -> Path:
    import shutil
    folder = where / name
    shutil.copytree(BOTS / sample, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "with-requests.toml").unlink(missing_ok=True)
    toml = (folder / "bot.toml").read_text()
    (folder / "bot.toml").write_text(re.sub(r'(?m)^name = .*$', f'name = "{name}"', toml))
    return folder


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("play")
    db = f"sqlite:///{root / 'arena.db'}"
    store = open_store(db)
    tokens = {who: add_author(store, who) for who in ("alice", "bob")}
    for sample in ("random", "greedy"):
        submit(store, _house(root, sample, f"house-{sample}"))
    app = create_app(db, ServiceConfig(human=HumanSettings(games=2)))
    with serving(app) as base:
        yield {"base": base, "tokens": tokens, "store": store, "root": root, "app": app}
    app.state.games.close()


def _client(site, who: str) -> tuple[httpx.Client, str]:
    """A logged-in client of ``who`` and their session's CSRF token."""
    c = httpx.Client(base_url=site["base"], headers={"Origin": site["base"]}, timeout=30)
    assert c.post("/login", data={"token": site["tokens"][who]}).status_code == 303
    csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/me").text).group(1)
    return c, csrf


def _start(c: httpx.Client, csrf: str, seat: int = 0, **fields) -> httpx.Response:
    form = {"csrf": csrf, "variant": "two-deck-fry", "seat": str(seat),
            "bot_1": "house-random@1.0.0", "bot_2": "house-greedy@1.0.0",
            "bot_3": "house-random@1.0.0", **fields}
    return c.post("/play", data=form)


def _play_to_the_end(c: httpx.Client, csrf: str, game: int) -> list[dict]:
    """Follow the game's stream and answer each request with its hint's first action, as a
    person clicking a marked card would; every message the page would get."""
    seen: list[dict] = []
    with c.stream("GET", f"/play/{game}/stream", timeout=120) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith(
            "text/event-stream")
        for raw in r.iter_lines():
            if not raw.startswith("data: "):
                continue
            m = json.loads(raw[len("data: "):])
            seen.append(m)
            if m["type"] == "line" and m["line"]["type"] == "request":
                req = m["line"]
                got = c.post(f"/play/{game}/answer", headers={"X-CSRF-Token": csrf},
                             json={"request_id": req["request_id"],
                                   "action": req["hint"]["actions"][0]})
                assert got.status_code == 202, got.text
    return seen


def test_a_person_plays_a_deal_and_its_record_replays(site, tmp_path):
    c, csrf = _client(site, "alice")
    started = _start(c, csrf, seat=1)
    assert started.status_code == 303, started.text
    game = int(started.headers["location"].rsplit("/", 1)[1])
    assert c.get(f"/play/{game}").status_code == 200
    seen = _play_to_the_end(c, csrf, game)
    states = [m["state"] for m in seen if m["type"] == "game"]
    assert states == ["starting", "playing", "over"], states
    lines = [m["line"] for m in seen if m["type"] == "line"]
    kinds = [x["type"] for x in lines]
    assert kinds[0] == "welcome" and kinds[-1] == "match_end" and "request" in kinds
    assert "rejection" not in kinds  # every answer was a hint's action
    over = seen[-1]
    record = c.get(over["record_url"])
    assert record.status_code == 200
    path = tmp_path / "game.json"
    path.write_bytes(record.content)
    verified = subprocess.run([sys.executable, "-m", "cli", "replay", str(path), "--verify"],
                              cwd=ROOT, env=env(), capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    match = MatchFile.load(path)
    assert match.seats[1] == "human:alice" and match.seats[0] == "house-random@1.0.0"
    # the person was shown exactly their seat's view: the events of every line, in order, are
    # the record's events shown to seat 1, and nothing else
    shown = [json.loads(e["json"]) for x in lines for e in x.get("events", ())]
    assert shown == match.seat_view(1)
    assert c.get(over["replay_url"]).status_code == 200
    steps = c.get(f"/api/play/{game}/replay?seat=1").json()
    assert steps["seat"] == 1 and steps["steps"]
    # no standings count it: it is no season's match
    assert site["store"].pages.match(match.match_id) is None


def test_the_limits_and_who_may_see_a_game(site):
    c, csrf = _client(site, "alice")
    bob, bob_csrf = _client(site, "bob")
    first = _start(c, csrf)
    game = int(first.headers["location"].rsplit("/", 1)[1])
    again = _start(c, csrf)
    assert again.status_code == 429 and "one game at a time" in again.text
    assert bob.get(f"/play/{game}").status_code == 404  # another person's game
    assert bob.post(f"/play/{game}/answer", headers={"X-CSRF-Token": bob_csrf},
                    json={"request_id": "1", "action": {}}).status_code == 404
    assert c.post(f"/play/{game}/answer", json={"request_id": "1", "action": {}}
                  ).status_code == 403  # no CSRF token
    stale = c.post(f"/play/{game}/answer", headers={"X-CSRF-Token": csrf},
                   json={"request_id": "999999", "action": {"kind": "ACTION_KIND_PASS"}})
    assert stale.status_code == 409, stale.text
    wrong = _start(bob, bob_csrf, bot_2="nosuch@1.0.0")
    assert wrong.status_code == 400 and "bot_2" in wrong.text
    assert httpx.get(f"{site['base']}/play/{game}/stream").status_code == 401
    _play_to_the_end(c, csrf, game)
    again = _start(c, csrf)  # over: another may start (played out: the next test starts one)
    assert again.status_code == 303, again.text
    _play_to_the_end(c, csrf, int(again.headers["location"].rsplit("/", 1)[1]))


def test_an_author_plays_with_their_own_bot_and_reads_its_seat_log(site):
    """From a version's page: a game with it as partner (the form comes with it chosen);
    afterwards its seat log is its author's, and nobody else's."""
    from scheduler.registry.submissions import submit as stored
    store = site["store"]
    folder = _house(site["root"], "random", "alices")
    (folder / "bot.py").write_text((folder / "bot.py").read_text().replace(
        'if __name__ == "__main__":\n', 'if __name__ == "__main__":\n'
        "    print('alices bot says hello', file=sys.stderr, flush=True)\n", 1))
    ref = stored(store, folder, author="alice", state="ready").version.ref
    c, csrf = _client(site, "alice")
    page = c.get("/me/bots/alices/1.0.0").text
    link = re.search(r'href="(/play\?bot_2=[^"]+)"', page).group(1).replace("&amp;", "&")
    form = c.get(link).text
    assert re.search(r'<option[^>]*value="alices@1\.0\.0"[^>]*selected', form) or \
        re.search(r'<option[^>]*selected[^>]*value="alices@1\.0\.0"', form), form
    started = _start(c, csrf, seat=0, bot_2=ref)
    assert started.status_code == 303, started.text
    game = int(started.headers["location"].rsplit("/", 1)[1])
    _play_to_the_end(c, csrf, game)
    log = c.get(f"/play/{game}/logs/2")
    assert log.status_code == 200 and "alices bot says hello" in log.text, log.text
    bob, _ = _client(site, "bob")
    assert bob.get(f"/play/{game}/logs/2").status_code == 404
    assert c.get(f"/play/{game}/logs/1").status_code == 404  # a house bot's: not hers


def test_a_games_streams_are_bounded_and_a_game_over_long_ago_still_streams_its_end(site,
                                                                                   monkeypatch):
    """A few streams of one game at once (a page and its reloads), never hundreds polling the
    service; a game whose messages are no longer kept streams its final state from the
    store, with its record's and replay's links."""
    from scheduler.service import human
    c, csrf = _client(site, "bob")
    started = _start(c, csrf)
    assert started.status_code == 303, started.text
    game = int(started.headers["location"].rsplit("/", 1)[1])
    with contextlib.ExitStack() as open_streams:
        for _ in range(human.STREAMS):
            r = open_streams.enter_context(c.stream("GET", f"/play/{game}/stream"))
            assert r.status_code == 200
        refused = c.get(f"/play/{game}/stream")
        assert refused.status_code == 429 and "streams" in refused.text, refused.text
    games = site["app"].state.games
    # a closed stream is let go once the service sees its client gone (its next poll)
    wait_for(lambda: games.live[game].streams == 0, 10, "the streams let go")
    monkeypatch.setattr(human, "OVER_KEPT", 0)  # (read as each game ends)
    _play_to_the_end(c, csrf, game)
    wait_for(lambda: not games.kept(game), 10, "the game let go")
    again = [json.loads(x[len("data: "):]) for x in c.get(f"/play/{game}/stream",
                                                             params={"after": 40}).text
             .splitlines() if x.startswith("data: ")]
    assert [(m["type"], m["state"], m["record_url"]) for m in again] == [
        ("game", "over", f"/play/{game}/record")], again
