"""A person plays the bots in a real browser (Debian's Chromium driven by Playwright), on a real
``arena serve`` (no broker) over a fresh SQLite store: an author logs in, starts a
``two-deck-fry`` game at seat 0 against three house bots on ``/play``, and plays its one deal
on the table page by clicking only the cards the page marks and its action buttons: declaring
when a declaration is offered, burying the kitty when the deal gives it to them, leading and
following to the deal's result. On the way it looks at the last trick, tries a lead of two
suits (the referee refuses it, plays for the seat, and the page says so), and is reloaded once:
it rebuilds the table from the stream and answers the open request. Then the replay opens and
the record, downloaded, verifies with ``arena replay --verify``. The second test reads every
message the page received and finds no card the seat may not see. The deal is pinned
(``ARENA_HUMAN_SEED``) and the bots are three greedy ones (which draw nothing at random), so the
seat is offered a declaration, declares first, becomes the dealer and buries the kitty in every
run. Screenshots: ``tests/artifacts/play/`` (or ``ARENA_TEST_ARTIFACTS``): lead, follow and
deal-end.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from browser_helpers import browser_kit
from league_helpers import BOTS, env, wait_for
from test_service_browser import _log_in, _watched

from conftest import ROOT

#: the module's fixture (a service playing its games) is made once, on one worker
pytestmark = pytest.mark.xdist_group("play_browser")

ARTIFACTS = Path(os.environ.get("ARENA_TEST_ARTIFACTS") or ROOT / "tests" / "artifacts") / "play"
#: the deal of every game here: seat 0, declaring at its first offer, becomes the dealer (found by
#: playing seeds play-1, play-2, ... against three greedy bots)
PINNED = "play-3"
SEAT = 0
#: the reload of the table happens at this of the person's plays (a lead or a follow)
RELOAD_AT = 6
CARD = re.compile(r"(10|[2-9JQKA])[SHDC]|[BL]J")


@dataclass
class Played:
    """One game played through the page to the end of its deal."""
    base: str
    game: int
    page: object
    context: object
    log: list[dict]
    stats: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    reloaded_log: list[dict] = field(default_factory=list)
    drawn: list[str] = field(default_factory=list)  # every card on the table page at the end


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """``arena serve`` on a fresh store with one author and the house bot greedy, every
    person's game on the pinned deal: its URL, the author's token and the bot's ref."""
    from scheduler.registry.owners import add_author
    from scheduler.registry.submissions import submit
    from scheduler.store import open_store
    root = tmp_path_factory.mktemp("play-browser")
    db = f"sqlite:///{root / 'arena.db'}"
    store = open_store(db)
    token = add_author(store, "alice")
    refs = {name: submit(store, BOTS / name).version.ref for name in ("greedy",)}
    store.engine.dispose()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = root / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--db", db, "--port",
                                 str(port)], cwd=ROOT,
                                env={**env(), "ARENA_HUMAN_SEED": PINNED}, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        def answers() -> bool:
            assert proc.poll() is None, log.read_text()
            return "on http://" in log.read_text()
        wait_for(answers, 60, "arena serve")
        yield {"base": f"http://127.0.0.1:{port}", "token": token, "refs": refs, "log": log}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.fixture(scope="module")
def played(site):
    """A game at seat 0, started on /play and played to the end of its deal, in which the
    seat declares, buries the kitty, leads (and tries a lead of two suits once) and follows
    after a trick was won (and looks back at it)."""
    sync_playwright, chromium = browser_kit()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base = site["base"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, chromium_sandbox=False,
                                    args=["--no-sandbox"])
        errors: list[str] = []
        ctx = _watched(browser, errors, viewport={"width": 1280, "height": 900})
        page = _log_in(ctx, base, site["token"])
        game = Played(base, _start(page, base, site["refs"]), page, ctx, [], errors=errors)
        _play_the_deal(game, site)
        print(f"game {game.game}: the person's decisions {dict(game.stats)}")
        page.wait_for_selector('#table[data-state="over"]')
        game.log = page.evaluate("window.playLog")
        game.drawn = page.evaluate(
            "Array.from(document.querySelectorAll('[data-card]'), (c) => c.dataset.card)")
        yield game
        ctx.close()
        browser.close()


def _start(page, base: str, refs: dict[str, str]) -> int:
    """A two-deck-fry game of one deal at seat 0 against three greedy bots, asked for on
    /play: its id."""
    page.goto(f"{base}/play")
    assert page.locator("#variant").input_value() == "two-deck-fry"
    page.select_option("#seat", str(SEAT))
    for field_, bot in (("#bot_1", "greedy"), ("#bot_2", "greedy"), ("#bot_3", "greedy")):
        page.select_option(field_, refs[bot])
    if page.locator("#deals").count():
        assert page.locator("#deals").input_value() == "1"
    with page.expect_navigation():
        page.click("#play-start")
    found = re.fullmatch(rf"{re.escape(base)}/play/(\d+)", page.url)
    assert found, (page.url, page.inner_text("main"))
    return int(found.group(1))


def _hint_cards(req: dict) -> list[list[str]]:
    return [a["cards"] for a in req["hint"]["actions"]
            if a["kind"] in ("ACTION_KIND_PLAY", "ACTION_KIND_BURY")]


def _check_marks(page, req: dict) -> None:
    """The hand's clickable cards are exactly those of the hint's actions (when the hint lists
    them all), or every card (when it does not); nothing is selected yet."""
    hand = page.eval_on_selector_all(
        "#hand .card", "cs => cs.map(c => [c.dataset.card, !c.disabled, "
        "c.classList.contains('legal'), c.classList.contains('selected')])")
    assert sorted(t for t, *_ in hand) == sorted(req["observation"]["hand"])
    assert not any(sel for *_, sel in hand)
    if req["hint"]["complete"]:
        union = {c for cards in _hint_cards(req) for c in cards}
        assert [(t, on, legal) for t, on, legal, _ in hand] == \
            [(t, t in union, t in union) for t, *_ in hand], (union, hand)
    else:
        assert all(on for _, on, *_ in hand), hand


def _click_cards(page, cards: list[str], complete: bool) -> None:
    for t in cards:
        card = page.locator(f'#hand .card[data-card="{t}"]:not(.selected)').first
        assert card.is_enabled(), (t, cards)
        if complete:
            assert "legal" in card.get_attribute("class").split(), (t, cards)
        card.click()
        page.wait_for_selector(f'#hand .card.selected[data-card="{t}"]')


def _shot(page, name: str, game: Played) -> None:
    """A screenshot ``NAME.png``, and the page's CSP violations into ``game.errors``."""
    game.errors.extend(page.evaluate("window.cspViolations || []"))
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def _send(page) -> None:
    send = page.locator("#play-send")
    assert send.is_enabled(), page.inner_text("#controls")
    send.click()


def _look_back(page, game: Played) -> None:
    """The last trick on demand, as the last TrickWon says it went, and back."""
    game.stats["looked back"] += 1
    won = page.evaluate("""() => window.playLog.flatMap((m) => m.type === "line" ?
        m.line.events || [] : []).filter((e) => e.kind === "TrickWon").pop()""")
    number = json.loads(won["json"])["trick"]
    now = page.inner_text("#trick-note")
    page.click("#last-trick")
    assert page.inner_text("#trick-note").startswith(f"The last trick ({number}): ")
    assert page.locator("#trick.showing-last .cards.winner").count() == 1
    page.click("#last-trick")
    assert page.inner_text("#trick-note") == now


def _reload(page, game: Played, rid: str) -> None:
    """The table reloaded: it rebuilds itself from the stream, the request still open. Its
    first stream ends halfway (a connection lost): the browser asks again from the last
    message it got (Last-Event-ID), and the page goes on from there."""
    game.reloaded_log = log = page.evaluate("window.playLog")
    half = log[:len(log) // 2]
    cut = "retry: 100\n\n" + "".join(f"id: {m['seq']}\ndata: {json.dumps(m)}\n\n"
                                       for m in half)
    asked: list = []
    page.on("request", lambda r: asked.append(r) if "/stream" in r.url else None)
    page.route("**/play/*/stream*", lambda route: route.fulfill(
        status=200, headers={"Content-Type": "text/event-stream"}, body=cut), times=1)
    page.reload()
    page.wait_for_selector(f'#table[data-turn="you"][data-request="{rid}"]')
    sent = [r.all_headers().get("last-event-id") for r in asked]
    assert sent == [None, str(half[-1]["seq"])], sent
    game.stats["reloaded"] += 1


def _try_a_mixed_lead(page, game: Played, rid: str) -> None:
    """A lead of two suits (which a lead's hint does not list, nor rule out: it lists no
    throws): the referee refuses it, plays for the seat, and the page says so."""
    game.stats["tried"] += 1
    groups = page.locator("#hand .hand-group")
    for g in (0, 1):
        groups.nth(g).locator(".card").first.click()
    assert page.locator("#hand .card.selected").count() == 2
    _send(page)
    shown = page.locator(".msg.rejection")
    shown.wait_for()
    text = shown.inner_text()
    line = page.evaluate("""(rid) => window.playLog.filter((m) => m.type === "line" &&
        m.line.type === "rejection" && m.line.request_id === rid).pop().line""", rid)
    assert line["reason"].startswith("illegal"), line
    assert line["reason"] in text and f"Strike {line['strikes']} of 3" in text, text
    assert " ".join(line["default_action"]["cards"]) in text, text
    assert page.inner_text("#info-strikes") == f"{line['strikes']} of 3"


def _open_request(page, answered: set[str]) -> str:
    """The id of the next request the page offers, or "end" once the deal's result is in."""
    got = page.wait_for_function(
        """(answered) => {
          const t = document.getElementById("table");
          if (t.dataset.dealOver === "true" || t.dataset.state === "failed") return "end";
          if (t.dataset.turn === "you" && !answered.includes(t.dataset.request))
            return t.dataset.request;
          return false;
        }""", arg=sorted(answered), timeout=150_000, polling=50)
    return got.json_value()


def _request(page, rid: str) -> dict:
    return page.evaluate("""(rid) => window.playLog.filter((m) => m.type === "line" &&
        m.line.type === "request" && m.line.request_id === rid).pop().line""", rid)


def _play_the_deal(game: Played, site) -> None:
    page, stats = game.page, game.stats
    answered: set[str] = set()
    started = time.monotonic()
    while True:
        rid = _open_request(page, answered)
        if rid == "end":
            break
        assert time.monotonic() - started < 240, "the deal takes too long"
        req = _request(page, rid)
        kind = req["kind"]
        stats[kind] += 1
        if kind in ("DECISION_KIND_LEAD", "DECISION_KIND_FOLLOW"):
            plays = stats["DECISION_KIND_LEAD"] + stats["DECISION_KIND_FOLLOW"]
            if plays == RELOAD_AT:
                _reload(page, game, rid)
            _check_marks(page, req)
            if kind == "DECISION_KIND_FOLLOW" and not stats["looked back"] and \
                    page.locator("#last-trick").is_enabled():
                _look_back(page, game)
            # the longest listed play (a pair or a tractor where there is one)
            chosen = max(_hint_cards(req), key=len)
            _click_cards(page, chosen, req["hint"]["complete"])
            if stats[kind] == 1:  # the first lead and the first follow
                _shot(page, "lead" if kind == "DECISION_KIND_LEAD" else "follow", game)
            if kind == "DECISION_KIND_LEAD" and not stats["tried"] and \
                    page.locator("#hand .hand-group").count() > 1:
                page.click("#play-clear")
                assert page.locator("#hand .card.selected").count() == 0
                _try_a_mixed_lead(page, game, rid)
            else:
                _send(page)
        elif kind == "DECISION_KIND_BURY":
            _check_marks(page, req)
            size = {len(a["cards"]) for a in req["hint"]["actions"]}
            assert len(size) == 1, req["hint"]
            n = size.pop()
            assert page.locator("#hint-note").inner_text() == req["hint"]["note"]
            for _ in range(n):  # the lowest cards of the last suits
                page.locator("#hand .card.selectable:not(.selected)").last.click()
            assert page.locator("#hand .card.selected").count() == n
            assert page.locator("#hand .card.selectable:not(.selected)").count() == 0
            _send(page)
        else:
            buttons = page.locator("#actions button")
            labels = buttons.all_inner_texts()
            assert len(labels) == len(req["hint"]["actions"]), (labels, req["hint"])
            declare = page.locator('#actions button[data-kind="ACTION_KIND_DECLARE"]')
            if declare.count():
                stats["declare offered"] += 1
                assert all(t.startswith("declare ") for t in declare.all_inner_texts())
            if declare.count() and not stats["declared"]:
                declare.first.click()
                stats["declared"] += 1
            else:
                page.click('#actions button[data-kind="ACTION_KIND_PASS"]')
                assert "pass" in labels
        answered.add(rid)
    state = page.get_attribute("#table", "data-state")
    assert state != "failed", page.inner_text("#game-end") + site["log"].read_text()[-3000:]


def test_a_person_plays_a_deal_against_three_bots(played, tmp_path):
    page, stats = played.page, played.stats
    tricks = [e for m in played.log if m["type"] == "line"
              for e in m["line"].get("events", []) if e["kind"] == "TrickWon"]
    assert stats["DECISION_KIND_LEAD"] + stats["DECISION_KIND_FOLLOW"] == len(tricks), stats
    assert page.inner_text("#info-strikes") == "1 of 3"
    assert page.locator("#hand .card").count() == 0
    assert stats["reloaded"] == 1, stats
    # the pinned deal offers the seat a declaration and, declared, the kitty
    assert stats["declare offered"] >= 1 and stats["declared"] == 1, stats
    assert stats["DECISION_KIND_BURY"] == 1, stats
    # the one refused attempt, and nothing else
    assert stats["tried"] == 1 and stats["looked back"] == 1, stats
    assert page.locator(".msg.rejection").count() == 1, page.inner_text("#messages")
    assert page.locator(".msg.timeout, .msg.error").count() == 0, page.inner_text("#messages")

    # the deal's result as the referee sent it
    ended = [json.loads(e["json"]) for m in played.log if m["type"] == "line"
             for e in m["line"].get("events", []) if e["kind"] == "DealEnded"]
    assert len(ended) == 1
    result = page.locator("#deal-result")
    assert result.is_visible()
    text = result.inner_text()
    assert f": {ended[0]['attacker_total']} in all." in text, text
    levels = ended[0]["levels"]
    assert f"team 0 at {levels[0]}" in text and f"team 1 at {levels[1]}" in text, text

    # the match's end, then the game's: the replay and the record
    page.wait_for_selector('#table[data-state="over"]')
    page.wait_for_selector("#replay-link:not([hidden])")
    assert "The match is over" in page.inner_text("#game-end")
    _shot(page, "deal-end", played)
    assert page.get_attribute("#replay-link", "href") == f"/play/{played.game}/replay"
    assert page.get_attribute("#record-link", "href") == f"/play/{played.game}/record"

    with page.expect_navigation():
        page.click("#replay-link")
    page.wait_for_selector('#replay[data-ready="true"]')
    assert int(page.inner_text("#step-count")) > 25
    assert page.locator("#replay-error").is_hidden()

    got = played.context.request.get(f"{played.base}/play/{played.game}/record")
    assert got.status == 200, got.text()
    record = tmp_path / "game.json"
    record.write_bytes(got.body())
    verify = subprocess.run([sys.executable, "-m", "cli", "replay", str(record), "--verify"],
                            cwd=ROOT, env=env(), capture_output=True, text=True, timeout=120)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    played.errors.extend(page.evaluate("window.cspViolations || []"))
    assert not played.errors, f"a page raised or broke the CSP: {played.errors}"


#: events whose cards every seat sees (the json's card fields too)
PUBLIC = {"Played", "Declared", "KittyCardDrawn", "KittyOpened", "KittyShown", "DealEnded",
          "ThrowFailed", "PreKittyAction", "TrickWon", "DealStarted", "DealerSet",
          "KittyTakenPublic", "BuriedPublic", "RedealDemanded", "Redealt", "GameEnded",
          "TrumpSet", "CardsPassedPublic", "MatchPoints"}


def _cards_in(value) -> list[str]:
    """Every card named anywhere in ``value``, the JSON objects written as text included."""
    if isinstance(value, str):
        if CARD.fullmatch(value):
            return [value]
        if value.startswith("{"):
            try:
                return _cards_in(json.loads(value))
            except ValueError:
                return []
        return []
    if isinstance(value, dict):
        return [c for v in value.values() for c in _cards_in(v)]
    if isinstance(value, list):
        return [c for v in value for c in _cards_in(v)]
    return []


def test_the_page_gets_nothing_the_seat_may_not_see(played):
    log = played.log
    # one message a sequence number, none lost or doubled: the reload took them all again
    assert [m["seq"] for m in log] == list(range(1, len(log) + 1))
    assert log[:len(played.reloaded_log)] == played.reloaded_log
    assert played.reloaded_log and len(log) > len(played.reloaded_log)

    holding: Counter = Counter()   # the seat's cards now, by the events it saw
    own: Counter = Counter()       # every card it was dealt or took up
    public: Counter = Counter()    # every card shown to all
    buried: list[str] = []
    given = requests = 0           # cards dealt to the seat or taken up in this deal
    for m in log:
        if m["type"] != "line":
            assert not _cards_in(m), m
            continue
        line = m["line"]
        for e in line.get("events", []):
            j = json.loads(e["json"])
            assert j["event"] == e["kind"]
            if e["kind"] == "DealStarted":  # (a redeal too: a new hand)
                holding, buried, given = Counter(), [], 0
            if e["kind"] in PUBLIC:
                public.update(_cards_in(j))
                if e["kind"] == "Played" and e["seat"] == SEAT:
                    holding.subtract(e["cards"])
            elif e["kind"] in ("CardDealt", "KittyTaken", "Buried", "Passed", "CardsPassed"):
                seen_by = j.get("private_to")
                assert seen_by == SEAT or (isinstance(seen_by, list) and SEAT in seen_by), e
                if e["kind"] in ("CardDealt", "KittyTaken"):
                    holding.update(e["cards"])
                    own.update(e["cards"])
                    given += len(e["cards"])
                elif e["kind"] == "Buried":
                    holding.subtract(e["cards"])
                    buried = list(e["cards"])
            else:
                raise AssertionError(f"an event the test does not know: {e}")
        holding = +holding
        if line["type"] == "request":
            requests += 1
            o = line["observation"]
            assert Counter(o["hand"]) == holding, (o["hand"], holding)
            assert Counter(o["my_kitty"]) == Counter(buried)
            for shown in o["declarations"] + o["trick"]:
                assert not Counter(shown["cards"]) - public, shown
            for a in line["hint"]["actions"]:
                assert not Counter(a["cards"]) - holding, a
        known = set(own) | set(public)
        leaked = set(_cards_in(line)) - known
        assert not leaked, (leaked, line)
    tricks = sum(e["kind"] == "TrickWon" for m in log if m["type"] == "line"
                 for e in m["line"].get("events", []))
    assert tricks and requests >= tricks  # a lead or follow in each trick, at least
    assert given in (25, 33)  # a hand, and the kitty when the seat took it up

    # and the table page holds no card beyond the stream's
    assert played.drawn and set(played.drawn) <= set(own) | set(public)
