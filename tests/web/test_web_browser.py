"""The dashboard in a real browser (headless Chromium driven by Playwright): the demo season
played into a SQLite store, the app served by uvicorn, the standings page against
``arena standings --json``, and a match's replay walked with the keyboard in the full view and
as one seat, which must never be shown a card that seat was not shown; and a season page
following a season as it runs. Screenshots are kept in ``tests/artifacts`` (or
``ARENA_TEST_ARTIFACTS``).

Chromium is Debian's package and Playwright comes from PyPI; ``make test`` installs both.
"""

from __future__ import annotations

import contextlib
import itertools
import signal
import subprocess
import sys
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from browser_helpers import serving
from league_helpers import BOTS, arena, env, season_file, unique, wait_for

from conftest import DEMO_GROUP, ROOT
from referee.match.matchfile import MatchFile
from scheduler.store import Store

ARTIFACTS = Path(os.environ.get("ARENA_TEST_ARTIFACTS") or ROOT / "tests" / "artifacts")
CARD = re.compile(r"^(?:(?:10|[2-9JQKA])[SHDC]|LJ|BJ)$")
SUIT_GLYPH = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}


def _playwright():
    """Playwright's sync API and Debian's chromium, or a failure saying how to get them."""
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright (the Python package): `make test` "
                    "installs it (pip install -e '.[dev]')")
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("the browser tests need Debian's chromium: `make test` installs it "
                    "(tools/install-browser.sh, with apt-get)")
    return sync_playwright, expect, chromium


# its module fixtures are built once: pytest-xdist (--dist loadgroup) keeps the file on one worker
pytestmark = pytest.mark.xdist_group(DEMO_GROUP)  # with test_demo.py: the demo played once


@contextlib.contextmanager
def _served(db: str):
    """The real app over store ``db``, served by uvicorn on a free port: its base URL."""
    from web.app import create_app
    with serving(create_app(db)) as base:
        yield base


@pytest.fixture(scope="module")
def league(demo_season):
    """The demo season (``arena demo``: the four sample bots, duplicate round robin), played
    to its end into a SQLite store, served by the real app."""
    done, folder = demo_season
    assert done.returncode == 0, f"arena demo: exit {done.returncode}\n{done.stderr[-3000:]}"
    db = f"sqlite:///{folder}/demo.db"
    assert {m.status for m in Store(db).pages.matches("demo")} == {"done"}
    with _served(db) as base:
        yield {"name": "demo", "db": db, "base": base, "folder": folder}


@pytest.fixture(scope="module")
def browser():
    sync_playwright, _, chromium = _playwright()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, chromium_sandbox=False,
                              args=["--no-sandbox"])
        yield b
        b.close()


#: kept by every page the tests open: each Content-Security-Policy violation it meets
CSP_WATCH = """window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => window.cspViolations.push(
  e.violatedDirective + " " + (e.blockedURI || "inline") + " " + (e.sample || "")));"""


def _csp_violations(pg) -> list[str]:
    return pg.evaluate("window.cspViolations || []")


@pytest.fixture()
def page(browser):
    """A page that fails its test if it raised, or if the browser reported a violation of the
    dashboard's Content-Security-Policy (an event in the page, or its console error)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1280, "height": 960})
    context.add_init_script(CSP_WATCH)
    errors: list[str] = []
    pg = context.new_page()
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" and
          "Content Security Policy" in m.text else None)
    yield pg
    seen = [] if pg.is_closed() else _csp_violations(pg)
    context.close()
    assert not errors, f"the page raised: {errors}"
    assert not seen, f"Content-Security-Policy violations: {seen}"


def _seen_by(view: list[dict]) -> set[str]:
    """Every card a seat's events show it: its own hand, the kitty if it took it up, every
    card played, declared or turned face up."""
    seen: set[str] = set()
    for e in view:
        for key in ("card", "cards", "kitty", "attempted", "forced"):
            v = e.get(key)
            if isinstance(v, str):
                seen.add(v)
            elif isinstance(v, list):
                seen.update(v)
    return seen


def _strings(data) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for v in data.values() for s in _strings(v)]
    if isinstance(data, list):
        return [s for v in data for s in _strings(v)]
    return []


def _shown_cards(page) -> list[str]:
    return page.eval_on_selector_all("[data-card]", "els => els.map(e => e.dataset.card)")


def _cards_in(page, where: str) -> list[str]:
    return page.eval_on_selector_all(f"{where} [data-card]",
                                     "els => els.map(e => e.dataset.card)")


def _first_match(league) -> tuple[str, MatchFile]:
    store = Store(league["db"])
    match_id = sorted(m.id for m in store.pages.matches(league["name"]))[0]
    return match_id, store.results.record(match_id)


def test_the_season_page_shows_the_standings_of_the_command_line(page, league):
    _, expect, _ = _playwright()
    want = json.loads(arena("standings", league["name"], "--db", league["db"], "--json",
                            cwd=league["folder"], check=True).stdout)
    page.goto(f"{league['base']}/seasons/{league['name']}")
    table = page.locator("table.standings")
    expect(table).to_be_visible()
    rows = table.locator("tr")
    header = [t.strip() for t in rows.first.locator("th").all_inner_texts()]
    col = {k: header.index(k) for k in ("#", "bot", "rating", "W-D-L")}
    expect(rows).to_have_count(1 + len(want["bots"]))
    for i, bot in enumerate(want["bots"]):
        cells = [t.strip() for t in rows.nth(i + 1).locator("td").all_inner_texts()]
        assert cells[col["#"]] == str(i + 1)
        assert cells[col["bot"]].split()[0] == bot["name"], (cells, bot["name"])
        shown = cells[col["rating"]]
        decimals = len(shown.split(".")[1]) if "." in shown else 0
        assert shown == f"{bot['rating']:.{decimals}f}", (bot["name"], shown, bot["rating"])
        wdl = f"{bot['wins']:g}-{bot['draws']:g}-{bot['losses']:g}"
        assert cells[col["W-D-L"]] == wdl, (bot["name"], cells[col["W-D-L"]], wdl)
    page.screenshot(path=str(ARTIFACTS / "season.png"), full_page=True)


def test_the_main_pages_keep_to_their_content_security_policy(page, league):
    """Every page's styles, scripts and API calls are allowed by the policy it is sent with:
    the browser reports no violation, and what the policy governs still works (the standings'
    interval bars are placed by the nonce'd style element, the replay's script runs)."""
    _, expect, _ = _playwright()
    match_id, _ = _first_match(league)
    base, name = league["base"], league["name"]
    for url in ("/", f"/seasons/{name}", "/matches", f"/matches/{match_id}", "/bots",
                f"/matches/{match_id}/replay", "/seasons/nope"):
        response = page.goto(base + url)
        assert response.headers.get("x-content-type-options") == "nosniff", url
        policy = response.headers.get("content-security-policy", "")
        assert "default-src 'none'" in policy and "script-src 'self'" in policy, (url, policy)
        if url.endswith("/replay"):
            expect(page.locator("#replay")).to_have_attribute("data-ready", "true")
        if url == f"/seasons/{name}":
            bar = page.locator(".ci-bar").first
            width = bar.evaluate("e => getComputedStyle(e).width")
            track = bar.evaluate("e => getComputedStyle(e.parentElement).width")
            assert 0 < float(width.removesuffix("px")) < float(track.removesuffix("px"))
            cell = page.locator(".h2h td:not(.self)").first
            assert cell.evaluate("e => getComputedStyle(e).backgroundColor") not in (
                "rgba(0, 0, 0, 0)", "transparent")
        assert _csp_violations(page) == [], url


def test_a_replay_walks_the_whole_deal_and_as_seat_1_shows_only_what_it_saw(page, league):
    _, expect, _ = _playwright()
    match_id, match = _first_match(league)
    ended = [e for e in match.seat_view(0) if e["event"] == "DealEnded"][-1]  # (the last deal)
    page.goto(f"{league['base']}/matches/{match_id}")
    page.get_by_role("link", name="Replay").click()
    expect(page).to_have_url(re.compile(rf"/matches/{match_id}/replay$"))
    root = page.locator("#replay")
    expect(root).to_have_attribute("data-ready", "true")
    expect(root).to_have_attribute("data-view", "full")
    count = int(page.locator("#step-count").inner_text())
    assert count > 25  # the start, dealing, declarations, the kitty, 20-odd tricks, the result
    step_no = page.locator("#step-no")
    expect(step_no).to_have_text("1")

    page.keyboard.press("ArrowRight")
    expect(step_no).to_have_text("2")
    mid = hands = False
    for i in range(2, count):
        if root.get_attribute("data-kind") == "kitty":
            for seat in range(4):  # the full view shows every hand
                assert page.locator(f'.seat-box[data-seat="{seat}"] .hand [data-card]').count()
            hands = True
        page.keyboard.press("ArrowRight")
        expect(step_no).to_have_text(str(i + 1))
        if not mid and i + 1 >= count // 2 and root.get_attribute("data-kind") == "trick":
            expect(page.locator(".trick [data-card]").first).to_be_visible()
            page.screenshot(path=str(ARTIFACTS / "replay-mid-deal.png"), full_page=True)
            mid = True
    assert mid and hands, "no kitty step, or no trick in the second half of the deal"
    expect(root).to_have_attribute("data-last", "true")
    result = page.locator("#result")
    expect(result).to_be_visible()
    expect(result).to_contain_text(f"total {ended['attacker_total']}")
    expect(result).to_contain_text(f"team 0 at {ended['levels'][0]}, "
                                   f"team 1 at {ended['levels'][1]}")
    kitty = page.locator("#kitty [data-card]")
    assert sorted(_cards_in(page, "#kitty")) == sorted(ended["kitty"])
    for card in kitty.all():
        text = card.get_attribute("data-card")
        if text in ("LJ", "BJ"):
            expect(card).to_have_class(re.compile(r"\bjoker\b"))
            continue
        expect(card).to_contain_text(SUIT_GLYPH[text[-1]])
        expect(card).to_have_class(re.compile(r"\bred\b" if text[-1] in "HD" else r"\bblack\b"))
    page.keyboard.press("ArrowRight")
    expect(step_no).to_have_text(str(count))
    page.keyboard.press("Home")
    expect(step_no).to_have_text("1")
    page.keyboard.press("End")
    expect(step_no).to_have_text(str(count))
    page.keyboard.press("ArrowLeft")
    expect(step_no).to_have_text(str(count - 1))

    page.select_option("#replay-view", "1")
    expect(root).to_have_attribute("data-view", "seat 1")
    expect(root).to_have_attribute("data-ready", "true")
    expect(page).to_have_url(re.compile(r"\?seat=1$"))
    view = match.seat_view(1)
    sent = page.request.get(f"{league['base']}/api/matches/{match_id}/replay?seat=1").json()
    assert [e for s in sent["steps"] for e in s["events"]] == view, \
        "the steps sent as seat 1 are not the events seat 1 was shown"
    ends = list(itertools.accumulate(len(s["events"]) for s in sent["steps"]))
    seen_by_step = [_seen_by(view[:end]) for end in ends]
    for i, (step, seen) in enumerate(zip(sent["steps"], seen_by_step)):
        leaked = {s for s in _strings(step) if CARD.match(s)} - seen
        assert not leaked, f"step {i + 1} sent seat 1 cards it had not seen: {sorted(leaked)}"
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("Home")
    expect(step_no).to_have_text("1")
    expect(page.locator("#step-count")).to_have_text(str(len(sent["steps"])))
    others = page.locator('.seat-box:not([data-seat="1"]) .hand [data-card]')
    shown: set[str] = set()
    for i, seen in enumerate(seen_by_step):
        if i:
            page.keyboard.press("ArrowRight")
            expect(step_no).to_have_text(str(i + 1))
        cards = set(_shown_cards(page))
        assert cards <= seen, \
            f"step {i + 1} as seat 1 shows cards seat 1 had not seen: {sorted(cards - seen)}"
        expect(others).to_have_count(0)
        shown |= cards
        if i + 1 == len(seen_by_step) // 2:
            page.screenshot(path=str(ARTIFACTS / "replay-as-seat-1.png"), full_page=True)
    assert shown == seen_by_step[-1], \
        f"cards seat 1 saw but never shown: {sorted(seen_by_step[-1] - shown)}"
    expect(page.locator("#result")).to_be_visible()
    assert sorted(_cards_in(page, "#kitty")) == sorted(ended["kitty"])  # face up at the end


def test_the_progress_of_a_running_season_changes_on_its_page_without_a_reload(page, tmp_path):
    """A real season run (a process of its own) into a SQLite store; its season page, opened
    once, shows more matches done as they are played, by its own polling: the page is never
    loaded again (a mark left in the window survives)."""
    _, expect, _ = _playwright()
    name = unique("live")
    path = season_file(tmp_path, name, [BOTS / "greedy", BOTS / "random"], deal_sets=8,
                       deals_per_set=1)
    db_file = tmp_path / "live.db"
    db = f"sqlite:///{db_file}"
    log = open(tmp_path / "run.log", "wb")
    run = subprocess.Popen([sys.executable, "-m", "cli", "season", "run", str(path), "--db", db,
                            "--no-check", "--no-progress", "--workers", "1"], cwd=tmp_path,
                           env=env(), stdout=log, stderr=subprocess.STDOUT,
                           start_new_session=True)
    try:
        def started():
            assert run.poll() is None, (tmp_path / "run.log").read_text()[-3000:]
            if not db_file.exists():
                return None
            try:
                return Store(db).pages.matches(name) or None
            except Exception:  # (the store is being made)
                return None
        wait_for(started, 120, "the season's matches in the store")
        with _served(db) as base:
            page.goto(f"{base}/seasons/{name}")
            done = page.locator("#p-done")
            expect(page.locator("#p-total")).to_have_text("16")
            first = int(done.inner_text())
            assert first < 16
            page.evaluate("window.arenaMark = 1")
            # (a matcher, not wait_for_function: the page's policy allows no eval, which
            # Playwright's string predicates need; the count only grows)
            expect(done).not_to_have_text(str(first), timeout=60_000)
            assert page.evaluate("window.arenaMark") == 1, "the page was loaded again"
            later = int(done.inner_text())
            api = page.request.get(f"{base}/api/seasons/{name}/progress").json()
            assert first < later <= api["done"] <= 16
            assert api["done"] + api["running"] + api["pending"] + api["failed"] == 16
            page.screenshot(path=str(ARTIFACTS / "season-live.png"), full_page=True)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGTERM)
            run.wait(30)
        log.close()
