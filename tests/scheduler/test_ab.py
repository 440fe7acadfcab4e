"""A/B tests of new versions (``scheduler.service.ab``): the sequential test's error rates in
simulation, the order it takes pairs in, and, end to end on ``arena serve`` with its own pools,
a new version that is stronger than its predecessor and one that is not, on pinned deals."""

from __future__ import annotations

import random
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from league_helpers import BOTS, arena, env, season_file, wait_for

from conftest import ROOT
from scheduler.league import open_season
from scheduler.season import load_season
from scheduler.service.ab import AbSettings, outcomes
from scheduler.states import ScrimmageKind
from scheduler.stats.ratings import score_from_elo
from scheduler.stats.scores import PairScore
from scheduler.store import open_store
from scheduler.store.plain_rows import ScrimmageRow

#: the module's fixture (a service playing its games) is made once, on one worker
pytestmark = pytest.mark.xdist_group("ab_tests")


# -- the test's error rates ----------------------------------------------------------------
def _pairs(rng: random.Random, elo: float, draws: float):
    """Pair outcomes of a side ``elo`` stronger, ``draws`` of them drawn, without end."""
    win = score_from_elo(elo) - draws / 2
    while True:
        u = rng.random()
        yield 0.5 if u < draws else 1.0 if u < draws + win else 0.0


@pytest.mark.parametrize("draws", [0.1, 0.4])
def test_a_new_versions_test_errs_at_about_its_rates_in_simulation(draws):
    """The test a new version plays (the service's bounds, its pair limit, ``Sprt.walk``),
    run 400 times on simulated pairs: with the new version exactly elo0 stronger it is called
    "stronger" in at most about alpha of the runs, exactly elo1 stronger "not stronger" in at
    most about beta (the pair limit stops about half of those runs undecided: 8 and 9 of 400
    wrong with 10% draws); well above the verdict is "stronger", below never. 400 runs at a
    true rate of 5%: 20 expected, sd 4.4; at most 34 (3 sd) keeps a correct test passing; a
    test that stops too early fails by far (seen: 134 and 120 false "stronger" of 400 with the
    upper bound a third of Wald's)."""
    config = AbSettings()
    test, limit = config.test(), config.max_pairs
    rng = random.Random(20261206)
    runs = 400

    def verdicts(elo: float) -> list[str]:
        return [test.walk(_pairs(rng, elo, draws), limit).verdict for _ in range(runs)]
    at_elo0, at_elo1 = verdicts(config.elo0), verdicts(config.elo1)
    assert at_elo0.count("stronger") <= runs * config.alpha + 3 * (
        runs * config.alpha * (1 - config.alpha)) ** 0.5, at_elo0.count("stronger")
    assert at_elo1.count("not stronger") <= runs * config.beta + 3 * (
        runs * config.beta * (1 - config.beta)) ** 0.5, at_elo1.count("not stronger")
    assert verdicts(3 * config.elo1).count("stronger") >= runs - 4
    assert verdicts(-config.elo1).count("stronger") <= 2
    # the pair limit: a run that cannot decide stops there, and says so
    assert all(v in ("stronger", "not stronger", "stopped at the pair limit")
               for v in at_elo0 + at_elo1)


def test_the_test_takes_pairs_in_the_order_of_their_deals(tmp_path):
    """Pairs are scored as their matches end, in any order; the test takes them by deal set,
    up to the first not scored yet (so that where it stops does not depend on which worker
    was faster), each from the tested version's side."""
    store = open_store(f"sqlite:///{tmp_path / 'a.db'}")
    manifest = BOTS / "random" / "bot.toml"
    season = season_file(tmp_path, "ab-7", [(manifest, "new"), (manifest, "old")],
                         deal_sets=5, deals_per_set=1)
    open_season(load_season(season), store, workdir=tmp_path, check=False, out=None)
    clusters = sorted({m.cluster for m in store.pages.matches("ab-7")},
                      key=lambda c: int(c.rsplit("#", 1)[1]))
    assert len(clusters) == 5
    # scored in the order 3, 0, 1 (2 not yet): bot_a is "new" in some, "old" in others
    for k, bot_a, score_a in ((3, "old", 0.0), (0, "new", 1.0), (1, "old", 0.5)):
        a, b = clusters[k].split("#", 1)[0].split("|")
        assert {a, b} == {"new", "old"}
        store.results.keep_pair_score(PairScore("ab-7", clusters[k], bot_a,
                                                "new" if bot_a == "old" else "old", score_a,
                                                0.0, (0.0,)))
    row = ScrimmageRow(7, "alice", "new", "old", "alice", 5, "two-deck-fry", "ab-7", "playing",
                       None, 0.0, 0.0, None, kind="new-version", elo0=0.0, elo1=50.0,
                       alpha=0.05, beta=0.05)
    assert outcomes(store, row) == [1.0, 0.5]  # deal sets 0 and 1; 3 waits for 2
    store.results.keep_pair_score(PairScore("ab-7", clusters[2], "new", "old", 0.0, 0.0,
                                            (0.0,)))
    assert outcomes(store, row) == [1.0, 0.5, 0.0, 1.0]  # set 3: "old" lost, "new" won


# -- end to end ------------------------------------------------------------------------------
#: the key of every A/B test's deals here: with it the bots (the random one draws from its
#: match id and seat, the greedy one draws nothing) play the same matches every run, so each
#: test decides after the same pairs
PINNED = "a-b-tests-of-the-test-suite-0001"


def _version(where: Path, sample: str, name: str, version: str) -> Path:
    folder = where / f"{name}-{version}"
    shutil.copytree(BOTS / sample, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "with-requests.toml").unlink(missing_ok=True)
    toml = (folder / "bot.toml").read_text()
    toml = re.sub(r'(?m)^name = .*$', f'name = "{name}"', toml)
    toml = re.sub(r'(?m)^version = .*$', f'version = "{version}"', toml)
    (folder / "bot.toml").write_text(toml)
    return folder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """``arena serve`` (no broker: its own pools, two match slots) on a new store; alice
    uploads mybot 1.0.0 (the random sample) then 1.1.0 (the greedy one), and revbot the other
    way round; both A/B tests are played to their verdicts."""
    root = tmp_path_factory.mktemp("ab")
    db = f"sqlite:///{root / 'arena.db'}"
    token = root / "alice.token"
    got = arena("authors", "add", "alice", "--db", db, check=True)
    token.write_text(got.stdout.strip().splitlines()[0])
    token.chmod(0o600)
    port = _free_port()
    server = f"http://127.0.0.1:{port}"
    log = root / "serve.log"
    serve = subprocess.Popen(
        [sys.executable, "-m", "cli", "serve", "--db", db, "--port", str(port), "--slots", "2",
             "--limit", "builds_in_flight=4"],
        cwd=ROOT, env={**env(), "ARENA_AB_SECRET": PINNED, "ARENA_AB_WINDOW": "2"},
        stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(lambda: "on http://" in log.read_text(), 60, "the service")
        for name, samples in (("mybot", ("random", "greedy")), ("revbot", ("greedy", "random"))):
            for version, sample in zip(("1.0.0", "1.1.0"), samples):
                got = arena("bots", "submit", str(_version(root, sample, name, version)),
                            "--server", server, "--token-file", str(token))
                assert got.returncode == 0, got.stdout + got.stderr
        store = open_store(db)

        def over() -> bool:
            tests = [t for t in store.scrimmages.of() if t.kind == "new-version"]
            return len(tests) == 2 and all(t.state not in ("queued", "playing") for t in tests)
        wait_for(over, 300, f"both A/B tests' verdicts (the service's log: {log})", poll=1)
        yield server, token, db, log
    finally:
        import os
        import signal
        os.killpg(serve.pid, signal.SIGTERM)
        serve.wait(30)


def _status(service, ref: str) -> str:
    server, token, _, _ = service
    got = arena("bots", "status", ref, "--server", server, "--token-file", str(token))
    assert got.returncode == 0, got.stdout + got.stderr
    return got.stdout


def _page(service, name: str, version: str) -> str:
    from scheduler.service.config import ServiceConfig
    from web.app import create_app
    _, token, db, _ = service
    with TestClient(create_app(db, service=ServiceConfig())) as c:
        assert c.post("/login", data={"token": token.read_text().strip()},
                      follow_redirects=False).status_code == 303
        page = c.get(f"/me/bots/{name}/{version}" if name else "/me")
        assert page.status_code == 200
        return page.text


def test_greedy_after_random_is_stronger_with_an_elo_interval_above_zero(service):
    """mybot@1.1.0 (greedy) against mybot@1.0.0 (random): "stronger", its Elo interval above
    zero, on its version page and in ``arena bots status``; on the pinned deals the test
    stops after the same 8 pairs every run (no pair W/D/L is lost by greedy there)."""
    store = open_store(service[2])
    t = store.scrimmages.tests_of("mybot@1.1.0")[0]
    assert (t.kind, t.opponent, t.state, t.verdict) == ("new-version", "mybot@1.0.0", "done",
                                                        "stronger"), t
    assert (t.wins, t.draws, t.losses) == (8, 0, 0), t
    out = _status(service, "mybot@1.1.0")
    line = next(x for x in out.splitlines() if "A/B test" in x)
    assert "v its predecessor mybot@1.0.0: stronger:" in line, out
    low, high = map(float, re.search(r"Elo \[([-+]\d+), ([-+]\d+)\]", line).groups())
    assert 0 < low < high, line
    assert "8 pairs (W-D-L 8-0-0)" in line, line
    page = _page(service, "mybot", "1.1.0")
    row = re.search(r'<tr class="ab" data-verdict="([^"]+)">(.*?)</tr>', page, re.S)
    assert row and row.group(1) == "stronger", page
    assert f"[+{low:.0f}, +{high:.0f}]" in row.group(2), row.group(2)
    # its season's remaining pairs were not played: the test stopped where it decided
    counts = store.seasons.counts(t.season)
    assert counts["done"] <= 2 * 8 + 2 and counts["cancelled"] > 0, counts
    # the first version has no predecessor, hence no test
    assert store.scrimmages.tests_of("mybot@1.0.0") == []


def test_random_after_greedy_is_not_stronger(service):
    """revbot@1.1.0 (random) against revbot@1.0.0 (greedy): "not stronger", its Elo interval
    below zero; on the pinned deals after the same 8 pairs every run."""
    store = open_store(service[2])
    t = store.scrimmages.tests_of("revbot@1.1.0")[0]
    assert (t.opponent, t.state, t.verdict) == ("revbot@1.0.0", "done", "not stronger"), t
    assert (t.wins, t.draws, t.losses) == (0, 0, 8), t
    out = _status(service, "revbot@1.1.0")
    line = next(x for x in out.splitlines() if "A/B test" in x)
    assert "v its predecessor revbot@1.0.0: not stronger:" in line, out
    low, high = map(float, re.search(r"Elo \[([-+]\d+), ([-+]\d+)\]", line).groups())
    assert low < high < 0, line
    page = _page(service, "revbot", "1.1.0")
    assert re.search(r'<tr class="ab" data-verdict="not stronger">', page), page
    # on /me too, beside the version
    me = _page(service, "", "")
    cell = re.search(r'revbot@1\.0\.0</a>: (not stronger: [^<;]*)', me)
    assert cell and "8 pairs (W-D-L 0-0-8)" in cell.group(1), me


def test_an_author_asks_for_an_ab_test_against_an_own_version_but_not_anothers(service):
    """An author may ask for an A/B test of two of their own versions (like a scrimmage), with
    the service's bounds; another author's version is refused with the reason."""
    from scheduler.registry.submissions import submit
    server, token, db, _ = service
    store = open_store(db)
    arena("authors", "add", "bob", "--db", db, check=True)
    submit(store, _version(Path(db[len("sqlite:///"):]).parent, "random", "bobbot", "1.0.0"),
           author="bob", state="ready")
    refused = arena("scrimmage", "request", "mybot@1.0.0", "bobbot@1.0.0", "--sprt",
                    "--server", server, "--token-file", str(token))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "an A/B test is against another of your own versions or a house bot" in \
        refused.stderr, refused.stderr
    got = arena("scrimmage", "request", "mybot@1.0.0", "revbot@1.0.0", "--sprt",
                "--server", server, "--token-file", str(token))
    assert got.returncode == 0, got.stdout + got.stderr
    assert "mybot@1.0.0 v revbot@1.0.0, an A/B test" in got.stdout, got.stdout
    asked = [t for t in store.scrimmages.of() if t.kind == ScrimmageKind.AB]
    assert len(asked) == 1, asked
    assert (asked[0].elo0, asked[0].elo1, asked[0].pairs) == (
        AbSettings().elo0, AbSettings().elo1, AbSettings().max_pairs), asked[0]
