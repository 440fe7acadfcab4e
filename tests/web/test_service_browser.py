"""The submission service in a real browser (headless Chromium driven by Playwright), over
real components: a SQLite store, a Celery worker process on Redis, ``create_app`` with a
``ServiceConfig`` served by uvicorn and the service's ``Dispatcher``. An author logs in with
their token, uploads a bot's archive and follows its version until a worker has built and
checked it; a season played with it gives a match whose seat log only its author reads;
then a scrimmage is asked for and followed to its points. Screenshots are kept in
``tests/artifacts`` (or ``ARENA_TEST_ARTIFACTS``) as ``service-*.png``.
"""

from __future__ import annotations

import os
import re
import shutil
import tarfile
import time
import tomllib
from pathlib import Path

from browser_helpers import browser_kit, serving
from league_helpers import BOTS, REDIS_URL, Worker, arena, flush_redis, unique

from conftest import ROOT

ARTIFACTS = Path(os.environ.get("ARENA_TEST_ARTIFACTS") or ROOT / "tests" / "artifacts")
HELLO = "alice-bot says hello"
#: kept by every page the test opens: each Content-Security-Policy violation it meets
CSP_WATCH = """window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => window.cspViolations.push(
  e.violatedDirective + " " + (e.blockedURI || "inline") + " " + (e.sample || "")));"""


def _reload_until(page, selector: str, done, timeout: float, what: str) -> str:
    """Reload ``page`` until the text of ``selector`` satisfies ``done``; that text."""
    deadline = time.monotonic() + timeout
    text = ""
    while True:
        loc = page.locator(selector)
        text = loc.inner_text().strip() if loc.count() else ""
        if done(text):
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}; "
                                 f"{selector} reads {text!r} on {page.url}")
        page.wait_for_timeout(500)  # (the poll of a wait: the reload below decides)
        page.reload()


def _alice_archive(folder: Path) -> Path:
    """The random sample bot renamed alice-bot, saying hello on stderr at start: .tar.gz."""
    bot = folder / "alice-bot"
    shutil.copytree(BOTS / "random", bot, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    toml = bot / "bot.toml"
    text = toml.read_text(encoding="utf-8")
    assert 'name = "random"' in text
    toml.write_text(text.replace('name = "random"', 'name = "alice-bot"', 1), encoding="utf-8")
    src = bot / "bot.py"
    code = src.read_text(encoding="utf-8")
    anchor = 'if __name__ == "__main__":\n'
    assert anchor in code
    code = code.replace(anchor, anchor + f'    print("{HELLO}", file=sys.stderr, flush=True)\n',
                        1)
    code = code.replace('name = "random"', 'name = "alice-bot"', 1)
    src.write_text(code, encoding="utf-8")
    archive = folder / "alice-bot.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for path in sorted(bot.rglob("*")):
            tar.add(path, arcname=str(path.relative_to(bot)), recursive=False)
    return archive


def _watched(browser, errors: list[str], **options):
    """A browser context whose pages add to ``errors`` what they raise and every violation
    of the Content-Security-Policy they meet."""
    context = browser.new_context(**options)
    context.add_init_script(CSP_WATCH)

    def watch(pg) -> None:
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" and
              "Content Security Policy" in m.text else None)
    context.on("page", watch)
    return context


def _shot(page, name: str, errors: list[str]) -> None:
    """A screenshot ``service-NAME.png``, and the page's CSP violations into ``errors``."""
    errors.extend(page.evaluate("window.cspViolations || []"))
    page.screenshot(path=str(ARTIFACTS / f"service-{name}.png"), full_page=True)


def _log_in(context, base: str, token: str):
    page = context.new_page()
    page.goto(f"{base}/login")
    page.fill("#token", token)
    with page.expect_navigation():
        page.click("#login button[type=submit]")
    assert page.url == f"{base}/me", page.url
    return page


def test_author_uploads_plays_and_scrimmages(tmp_path):
    from scheduler.service.intake import Dispatcher
    from scheduler.registry.owners import add_author
    from scheduler.registry.submissions import submit
    from scheduler.store import open_store
    from web.app import create_app
    from scheduler.service.config import ServiceConfig

    sync_playwright, chromium = browser_kit()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    db = f"sqlite:///{tmp_path}/service.db"
    store = open_store(db)
    alice, bob = add_author(store, "alice"), add_author(store, "bob")
    house = submit(store, BOTS / "random").version  # the organiser's: ready as stored
    random_ref = f"{house.name}@{house.version}"
    with open(BOTS / "random" / "bot.toml", "rb") as f:
        assert random_ref == f"random@{tomllib.load(f)['version']}"
    archive = _alice_archive(tmp_path)

    flush_redis()
    worker = Worker(db, tmp_path / "w.log", concurrency=1, intake=1)
    dispatcher = None
    try:
        worker.wait_ready()
        app = create_app(db, service=ServiceConfig())
        dispatcher = Dispatcher(app.state.store, REDIS_URL, every_s=0.5).start()
        with serving(app) as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, chromium_sandbox=False,
                                        args=["--no-sandbox"])
            errors: list[str] = []
            ctx = _watched(browser, errors, viewport={"width": 1280, "height": 960})
            page = _log_in(ctx, base, alice)

            # upload on /me; the redirect lands on the version's page, followed till ready
            page.set_input_files("#archive", str(archive))
            with page.expect_navigation():
                page.click("#upload button[type=submit]")
            assert page.url == f"{base}/me/bots/alice-bot/1.0.0", page.url
            state = _reload_until(page, "#state",
                                  lambda t: t in ("ready", "refused"), 120,
                                  "alice-bot@1.0.0 to be built and checked")
            assert state == "ready", page.inner_text("main")
            _shot(page, "version-ready", errors)
            page.goto(f"{base}/me")
            assert "ready" in page.inner_text("#versions")

            # a season naming the bot by name: its matches on the version page
            name = unique("svc")
            season = tmp_path / f"{name}.toml"
            season.write_text("\n".join([
                f'name = "{name}"', 'variant = "two-deck-fry"', 'format = "round_robin"',
                "duplicate = true", "deal_sets = 1", "deals_per_set = 1", f'seed = "{name}"',
                "[[bots]]", 'bot = "alice-bot"', "[[bots]]", 'bot = "random"', ""]),
                encoding="utf-8")
            arena("season", "run", str(season), "--db", db, "--broker", REDIS_URL,
                  "--no-progress", timeout=300, check=True)
            page.goto(f"{base}/me/bots/alice-bot/1.0.0")
            links = page.locator("#matches a[href^='/matches/']")
            assert links.count() >= 1, page.inner_text("main")
            match_url = base + links.first.get_attribute("href")
            with page.expect_navigation():
                links.first.click()
            assert page.url == match_url
            own = page.locator("ul#own-logs a")
            assert own.count() >= 1, page.inner_text("main")
            log_href = own.first.get_attribute("href")
            assert re.fullmatch(r"/me/matches/[^/]+/logs/[0-3]", log_href), log_href
            _shot(page, "match", errors)
            with page.expect_navigation():
                own.first.click()
            assert HELLO in page.inner_text("body")

            # bob: no seat of his in the match, so no links, and alice's log refused
            bob_ctx = _watched(browser, errors)
            bob_page = _log_in(bob_ctx, base, bob)
            bob_page.goto(match_url)
            assert bob_page.locator("h1").inner_text().startswith("Match ")
            assert bob_page.locator("#own-logs").count() == 0
            got = bob_page.goto(base + log_href)
            assert got.status == 403, got.status
            assert HELLO not in bob_page.inner_text("body")
            bob_ctx.close()

            # a scrimmage asked for on /me, followed to its points
            page.goto(f"{base}/me")
            page.select_option("#bot", "alice-bot@1.0.0")
            page.select_option("#opponent", random_ref)
            page.fill("#pairs", "1")
            with page.expect_navigation():
                page.click("#scrimmage button[type=submit]")
            assert re.fullmatch(rf"{re.escape(base)}/me/scrimmages/\d+", page.url), page.url
            state = _reload_until(page, "#scrimmage-state",
                                  lambda t: t in ("done", "failed", "cancelled"), 180,
                                  "the scrimmage to be played")
            assert state == "done", page.inner_text("main")
            points = page.inner_text("#points")
            assert re.match(r"^\d+(\.\d+)? of 1\b", points.strip()), points
            _shot(page, "scrimmage", errors)
            ctx.close()
            browser.close()
            assert not errors, f"a page raised or broke the CSP: {errors}"
    finally:
        if dispatcher is not None:
            dispatcher.stop()
        worker.stop()
