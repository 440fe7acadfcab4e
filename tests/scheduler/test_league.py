"""Leagues end to end: season files, the store, local and Celery modes, failures, standings.

Real components throughout: bot processes, a referee process per match, SQLite files, the
PostgreSQL server at 127.0.0.1:5432 (database ``test``), Redis at 127.0.0.1:6379 (database 9)
and Celery worker processes started with ``arena worker``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from league_helpers import (BOTS, REDIS_URL, Worker, arena, ctrl_c_default, env, flush_redis,
                            season_file, stop_all, unique, wait_for)
from test_record_storage import toy_match

from conftest import ROOT
from scheduler.league import open_season, run_distributed, run_local
from scheduler.season import SeasonError, load_season
from scheduler.reports import season_standings
from scheduler.store import Store
from scheduler.store.rows import StatusCounts

GREEDY = BOTS / "greedy"
RANDOM = BOTS / "random"


def _standings(store: Store, name: str) -> dict:
    d = season_standings(store.seasons.get(name), store.pages.matches(name), samples=200).to_dict()
    d.pop("season")
    return d


def _exactly_once(store: Store, name: str) -> None:
    counts = store.seasons.counts(name)
    total = counts.total
    assert counts["done"] == total, counts
    assert store.results.count(name) == total  # one result row per match, never two


# -- the distributed mode gives what the local mode gives -------------------------------------
def test_celery_workers_on_postgres_give_the_local_standings(tmp_path, pg):
    name = unique("same")
    path = season_file(tmp_path, name, [GREEDY, RANDOM, (GREEDY, "greedy-2")], deal_sets=1)
    season = load_season(path)
    local = Store(f"sqlite:///{tmp_path}/local.db")
    open_season(season, local, workdir=tmp_path / "checks", check=False)
    counts = run_local(local, name, workers=2, progress=False)
    assert counts["done"] == 6 and counts["failed"] == 0

    flush_redis()
    remote = Store(pg)
    open_season(season, remote, workdir=tmp_path / "checks", check=False)
    workers = [Worker(pg, tmp_path / f"w{i}.log", concurrency=1) for i in range(2)]
    try:
        for w in workers:
            w.wait_ready()
        run_distributed(remote, name, REDIS_URL, progress=False, timeout_s=240)
    finally:
        stop_all(workers)
    _exactly_once(remote, name)
    logs = "".join((tmp_path / f"w{i}.log").read_text() for i in range(2))
    assert "done" in logs and "grpc was imported" not in logs
    # both workers played (two processes on the queue)
    played_by = {r.worker for r in remote.pages.matches(name)}
    assert len(played_by) >= 2, played_by
    assert _standings(remote, name) == _standings(local, name)
    record = remote.results.record(f"{name}-00000")
    assert record.result.forfeit is None and record.faults == []


# -- failures --------------------------------------------------------------------------------
def _distributed_season(tmp_path, pg, prefix: str, deals_per_set: int, deal_sets: int = 3):
    """A fresh season on PostgreSQL, one worker with a 3 s lease, and the reconciler running
    in a thread; returns (name, store, worker, thread)."""
    flush_redis()
    name = unique(prefix)
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=deal_sets,
                       deals_per_set=deals_per_set)
    store = Store(pg)
    open_season(load_season(path), store, workdir=tmp_path / "checks", check=False)
    worker = Worker(pg, tmp_path / "first.log", lease=3)
    worker.wait_ready()
    runner = threading.Thread(target=run_distributed, args=(store, name, REDIS_URL),
                              kwargs={"resend_after_s": 3, "lease_s": 3, "progress": False,
                                      "timeout_s": 240})
    runner.start()
    return name, store, worker, runner


def test_a_worker_killed_mid_match_loses_nothing_and_counts_nothing_twice(tmp_path, pg):
    # one duplicate pair: the match killed and played again, and its mirror
    name, store, first, runner = _distributed_season(tmp_path, pg, "kill", 16, deal_sets=1)
    second = None
    try:
        # well inside a match: bots connected, deals under way
        wait_for(lambda: any(m.status == "running" and time.time() - m.started_at > 0.6
                             for m in store.pages.matches(name)), 60, "a match under way")
        first.kill9()
        orphaned = [m for m in store.pages.matches(name) if m.status == "running"]
        assert len(orphaned) == 1  # its lease now runs out with nobody to renew it
        victim = orphaned[0]
        second = Worker(pg, tmp_path / "second.log", lease=3)
        second.wait_ready()
        runner.join(240)
    finally:
        first.stop()
        if second:
            second.stop()
    assert not runner.is_alive()
    _exactly_once(store, name)
    again = store.pages.match(victim.id)
    assert again.attempts >= 2  # played again after the lease expired
    assert store.results.record(victim.id).result.forfeit is None


def test_a_flushed_redis_mid_season_loses_nothing(tmp_path, pg):
    # two duplicate pairs: one match done, the rest queued or in play when Redis is flushed
    name, store, worker, runner = _distributed_season(tmp_path, pg, "flush", 1, deal_sets=2)
    try:
        wait_for(lambda: store.seasons.counts(name)["done"] >= 1, 120, "the first match")
        flush_redis()  # every queued message is gone
        runner.join(240)
    finally:
        worker.stop()
    assert not runner.is_alive()
    _exactly_once(store, name)


def test_a_restarted_redis_mid_season_loses_nothing(tmp_path, pg):
    """A Redis of the test's own (the shared one stays up), stopped and started again while
    matches are queued and one is being played."""
    import shutil
    port = 6391 + int(os.environ.get("ARENA_TEST_RUN", "0"))  # (a run of its own: conftest)
    server = shutil.which("redis-server")
    assert server, "redis-server is needed (make test starts the shared one with it)"

    def start():
        return subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save",
                                 "", "--appendonly", "no"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.STDOUT)

    broker = f"redis://127.0.0.1:{port}/0"
    redis_proc = start()
    import redis as redis_lib
    wait_for(lambda: _pings(redis_lib, broker), 10, "the test's Redis")
    name = unique("restart")
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=2, deals_per_set=1)
    store = Store(pg)
    open_season(load_season(path), store, workdir=tmp_path / "checks", check=False)
    worker = Worker(pg, tmp_path / "w.log", lease=3, broker=broker)
    try:
        worker.wait_ready()
        runner = threading.Thread(target=run_distributed, args=(store, name, broker),
                                  kwargs={"resend_after_s": 3, "lease_s": 3, "progress": False,
                                          "timeout_s": 240})
        runner.start()
        wait_for(lambda: store.seasons.counts(name)["done"] >= 1, 120, "the first match")
        redis_proc.terminate()  # Redis goes away with every queued message
        redis_proc.wait(10)
        # Redis stays down 2 s: the outage itself, not a wait (the test asserts what follows it)
        time.sleep(2)
        redis_proc = start()
        runner.join(240)
        assert not runner.is_alive()
    finally:
        worker.stop()
        redis_proc.terminate()
        redis_proc.wait(10)
    _exactly_once(store, name)


def _pings(redis_lib, url) -> bool:
    try:
        return redis_lib.Redis.from_url(url).ping()
    except redis_lib.RedisError:
        return False


def test_an_interrupted_local_season_continues_where_it_stopped(tmp_path):
    name = unique("resume")
    matches = 4  # two duplicate pairs: one played, the rest left by the Ctrl-C
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=2, deals_per_set=1)
    db = f"sqlite:///{tmp_path}/season.db"
    proc = subprocess.Popen([sys.executable, "-m", "cli", "season", "run", str(path),
                             "--db", db, "--workers", "1", "--no-check", "--no-progress"],
                            cwd=tmp_path, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=ctrl_c_default)
    store = Store(db)
    wait_for(lambda: store.seasons.get(name) and store.seasons.counts(name)["done"] >= 1, 120,
             "the first match")
    os.killpg(proc.pid, signal.SIGSTOP)  # the run frozen (its referees play on, unheard)
    done = store.seasons.counts(name)["done"]
    assert done < matches, "the whole season was played before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C, delivered as the run goes on
    os.killpg(proc.pid, signal.SIGCONT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "run the same command again" in err
    before = {m.id: m for m in store.pages.matches(name) if m.status == "done"}
    # no match starts after Ctrl-C: at most the one being played (one worker) ends
    assert 1 <= done <= len(before) <= done + 1 < matches
    p = arena("season", "run", str(path), "--db", db, "--workers", "2", "--no-check",
              "--no-progress", cwd=tmp_path, check=True)
    assert f"({matches - len(before)} to play)" in p.stderr, p.stderr
    _exactly_once(store, name)
    after = {m.id: m for m in store.pages.matches(name)}
    for mid, m in before.items():  # finished matches were not played again
        assert after[mid].finished_at == m.finished_at and after[mid].attempts == 1
    assert "greedy" in p.stdout and "rating" in p.stdout


def test_the_store_counts_a_match_once_whoever_finishes_it(tmp_path):
    name = unique("once")
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=1, deals_per_set=1)
    store = Store(f"sqlite:///{tmp_path}/s.db")
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    mid = f"{name}-00000"
    assert store.queue.claim(mid, "a:1", lease_s=60) is not None
    assert store.queue.claim(mid, "b:2", lease_s=60) is None        # leased: nobody else
    assert store.queue.claim(mid, "b:2", lease_s=60) is None
    store.queue.renew(mid, "a:1", lease_s=-1)                         # a's lease runs out
    assert store.queue.claim(mid, "b:2", lease_s=60).attempts == 2  # b takes it over
    assert store.results.finish(mid, name, toy_match(mid, 1), 1.0, "b:2",
                                tally=None) is True
    assert store.results.finish(mid, name, toy_match(mid, 2), 1.0, "a:1",
                                tally=None) is False
    assert store.results.count(name) == 1
    assert store.results.record(mid) == toy_match(mid, 1)   # the first commit won
    assert store.queue.claim(mid, "c:3", lease_s=60) is None         # done: never again

    other = f"{name}-00001"   # a match whose referee keeps failing
    for attempt in range(1, 4):
        assert store.queue.claim(other, "a:1").attempts == attempt
        status = store.queue.give_back(other, "a:1", "RuntimeError: referee crashed")
        assert status == ("pending" if attempt < 3 else "failed")
    assert store.queue.claim(other, "a:1") is None and store.seasons.counts(name)["failed"] == 1
    open_season(load_season(path), store, workdir=tmp_path, check=False)  # a new run
    assert store.pages.match(other).status == "pending"
    assert store.pages.match(other).attempts == 0


# -- bad input --------------------------------------------------------------------------------
BAD = [
    ('varient = "two-deck-fry"', "varient", "unknown; expected one of"),
    ('format = "swiss"', "format", "round_robin, double_round_robin, gauntlet"),
    ("deal_sets = 0", "deal_sets", "an integer >= 1"),
    ("[options]\nthrow_pently = 10", "options", "unknown option 'throw_pently'"),
    ("[options]\nthrow_penalty = -5", "options", "expected an integer >= 0"),
    ("[time_control]\nper_decision = 100", "time_control.per_decision", "per_decision_ms"),
    ("[fault_policy]\nmax_reconnects = -1", "fault_policy.max_reconnects", "a count, 0 or more"),
    ("[fault_policy]\nmax_strikes = 0", "fault_policy.max_strikes", "a positive integer"),
]


@pytest.mark.parametrize("line,field,expected", BAD)
def test_a_bad_season_file_names_the_field_and_enqueues_nothing(tmp_path, line, field,
                                                                expected):
    name = unique("bad")
    path = season_file(tmp_path, name, [GREEDY, RANDOM], extra="")
    lines = path.read_text().splitlines()
    key = line.split(" =")[0]
    if any(x.startswith(key + " =") for x in lines):  # a wrong value for a field it has
        lines = [line if x.startswith(key + " =") else x for x in lines]
    else:  # a field or table it does not have, before the bots
        first = lines.index("[[bots]]")
        lines[first:first] = line.splitlines()
    path.write_text("\n".join(lines) + "\n")
    db = f"sqlite:///{tmp_path}/bad.db"
    p = arena("season", "run", str(path), "--db", db, "--no-progress", cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert str(path) in p.stderr and field in p.stderr and expected in p.stderr, p.stderr
    assert "nothing was enqueued" in p.stderr
    assert Store(db).seasons.names() == []


def test_an_unknown_variant_is_named(tmp_path):
    path = season_file(tmp_path, unique("bad"), [GREEDY, RANDOM], variant="four-deck")
    with pytest.raises(SeasonError) as e:
        load_season(path)
    assert "'variant'" in str(e.value) and "two-deck-80" in str(e.value)


def test_a_bot_without_a_command_is_named(tmp_path):
    bot = tmp_path / "nocommand"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "x"\nversion = "1"\n')
    path = season_file(tmp_path, unique("bad"), [GREEDY, str(bot)])
    with pytest.raises(SeasonError) as e:
        load_season(path)
    msg = str(e.value)
    assert str(path) in msg and "bots[1].manifest" in msg and "'command'" in msg


def test_a_bot_that_fails_bots_check_is_refused_before_anything_is_enqueued(tmp_path):
    bot = tmp_path / "crasher"
    bot.mkdir()
    (bot / "bot.toml").write_text(
        'name = "crasher"\nversion = "1"\n'
        'command = ["python3", "-c", "import sys; print(\'no luck\'); sys.exit(3)"]\n')
    name = unique("bad")
    # the default connect timeout: the crasher is judged when its process ends, and a short
    # one failed greedy's check too on a loaded machine (its sandboxed start took over 1.5 s)
    path = season_file(tmp_path, name, [GREEDY, str(bot)])
    db = f"sqlite:///{tmp_path}/bad.db"
    p = arena("season", "run", str(path), "--db", db, "--no-progress", cwd=tmp_path)
    assert p.returncode == 2
    assert "bots[1].manifest" in p.stderr and "fails bots check" in p.stderr, p.stderr
    assert "never_connected" in p.stderr and "nothing was enqueued" in p.stderr
    assert Store(db).seasons.names() == []
    single = arena("bots", "check", str(bot), cwd=tmp_path)
    assert single.returncode == 1 and single.stdout.startswith("FAIL crasher@1")
    good = arena("bots", "check", str(GREEDY), cwd=tmp_path)
    assert good.returncode == 0 and good.stdout.startswith("ok   greedy@1.0.0"), good.stdout


def test_a_changed_season_or_bot_is_not_resumed_into_old_results(tmp_path):
    name = unique("changed")
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=1)
    store = Store(f"sqlite:///{tmp_path}/s.db")
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    path.write_text(path.read_text().replace("deal_sets = 1", "deal_sets = 2"))
    with pytest.raises(SeasonError, match="different 'deal_sets'"):
        open_season(load_season(path), store, workdir=tmp_path, check=False)


def test_max_reconnects_reaches_the_referee_and_its_default_leaves_stored_seasons_valid(
        tmp_path):
    """``fault_policy.max_reconnects`` came after seasons were first stored: left at its default
    (or written out as it), a season's stored configuration is what it was without the field,
    so a season stored before still resumes; set otherwise, it is a different season. Every
    match is told the value either way."""
    name = unique("reconnects")
    seasons = []
    for folder, extra in (("plain", ""), ("stated", "[fault_policy]\nmax_reconnects = 10"),
                          ("other", "[fault_policy]\nmax_reconnects = 0")):
        (tmp_path / folder).mkdir()
        seasons.append(load_season(season_file(tmp_path / folder, name, [GREEDY, RANDOM],
                                               deal_sets=1, extra=extra)))
    assert "max_reconnects" not in seasons[0].config.to_json()["fault_policy"]
    assert seasons[0].config_hash() == seasons[1].config_hash() != seasons[2].config_hash()
    specs = [s.match_spec(s.plan()[0]).time_control.max_reconnects for s in seasons]
    assert specs == [10, 10, 0]  # 0: a seat may not come back at all
    store = Store(f"sqlite:///{tmp_path}/s.db")
    open_season(seasons[0], store, workdir=tmp_path, check=False)
    open_season(seasons[1], store, workdir=tmp_path, check=False)  # the same season
    with pytest.raises(SeasonError, match="different 'fault_policy'"):
        open_season(seasons[2], store, workdir=tmp_path, check=False)


# -- what the standings say -------------------------------------------------------------------
def test_greedy_ranks_above_random_with_separate_intervals(tmp_path):
    name = "strength"  # its own store: the name, and with its secret the cards, the same each run
    # greedy wins every pair against random on these cards, which separates the intervals by
    # about 100 Elo at 6 pairs (on fresh cards a pair greedy only draws, rare, joined them:
    # `arena lab greedy random --deals 18 --deals-per-set 3` wins 6 of 6 on most seeds)
    sets, per = 6, 3
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=sets, deals_per_set=per,
                       extra='secret = "strength-test-secret"\n')
    store = Store(f"sqlite:///{tmp_path}/s.db")
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    run_local(store, name, workers=2, progress=False)
    st = season_standings(store.seasons.get(name), store.pages.matches(name), samples=500)
    deals = st.deals
    print(f"greedy against random: {st.units} duplicate pairs, {deals} deals")
    assert deals == sets * per * 2
    top, bottom = st.lines
    assert top.name == "greedy" and bottom.name == "random"
    assert top.low > bottom.high, (top, bottom)


def test_three_deck_standings_carry_match_points_and_titles(tmp_path):
    name = unique("three")
    path = season_file(tmp_path, name, [GREEDY, RANDOM], variant="three-deck", deal_sets=1,
                       deals_per_set=1)
    store = Store(f"sqlite:///{tmp_path}/s.db")
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    run_local(store, name, workers=2, progress=False)
    st = season_standings(store.seasons.get(name), store.pages.matches(name), samples=50)
    records = [store.results.record(m.id) for m in store.pages.matches(name)]
    for line in st.lines:
        seats_points = 0
        for r in records:
            for g in r.games:
                mp = g.result["match_points"]
                seats_points += sum(mp[s] for s in range(4) if r.seats[s] == line.name)
        assert line.match_points == seats_points  # the records' points, summed per bot
        assert sum(line.titles.values()) == 2 * line.matches  # one title per seat per match
    p = arena("standings", name, "--db", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path,
              check=True)
    assert "match pts" in p.stdout and "title" in p.stdout


def test_sprt_decides_that_greedy_beats_random(tmp_path):
    # greedy wins nearly every pair against random: H1 at 150 Elo is true by far and decides
    # in about 5 pairs (at 50 Elo, about 10: twice the matches for the same check); the cards
    # of a key of its own (the same each run: on fresh ones a drawn pair now and then made it
    # twice as long)
    p = arena("sprt", str(GREEDY), str(RANDOM), "--score", "wdl", "--deals-per-set", "1",
              "--elo1", "150", "--max-pairs", "40", "--workdir", str(tmp_path), "--no-progress",
              "--seed", "sprt-b", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "greedy is stronger by at least 150.0 Elo (H1 accepted)" in p.stdout, p.stdout
    pairs = int(p.stdout.split("H1 accepted): ")[1].split(" pairs")[0])
    assert 3 <= pairs < 40  # it stopped as soon as the evidence sufficed


def test_every_format_plans_the_matches_it_promises(tmp_path):
    bots = [GREEDY, RANDOM, (GREEDY, "g2"), (RANDOM, "r2")]
    rr = load_season(season_file(tmp_path, "rr", bots, deal_sets=3))
    plans = rr.plan()
    assert len(plans) == 6 * 3 * 2  # pairings x deal sets x (match and its mirror)
    pairs: dict = {}
    for p in plans:
        pairs.setdefault(p.cluster, []).append(p)
    for two in pairs.values():  # a duplicate pair: same cards, partnerships swapped
        a, b = two
        assert a.deals == b.deals and a.seats[0] == b.seats[1] and a.seats[1] == b.seats[0]
        assert a.seats[0] == a.seats[2] and a.seats[1] == a.seats[3]  # partners: one bot
    # every pairing meets the same deal sets
    assert len({p.deals for p in plans}) == 3
    assert len({p.match_id for p in plans}) == len(plans)

    double = load_season(season_file(tmp_path, "drr", bots, deal_sets=1,
                                     fmt="double_round_robin"))
    assert len(double.plan()) == 6 * 2 * 2
    assert len({p.deals for p in double.plan()}) == 2  # fresh deals, leg 2

    plain = load_season(season_file(tmp_path, "plain", bots[:2], deal_sets=4, duplicate=False))
    seatings = [p.seats[0] for p in plain.plan()]
    assert len(seatings) == 4 and seatings.count("greedy") == 2  # seating alternates

    g = load_season(season_file(tmp_path, "g", bots, deal_sets=1, fmt="gauntlet",
                                extra='gauntlet = "greedy"'))
    assert sorted(p.pairing for p in g.plan()[::2]) == ["greedy|g2", "greedy|r2",
                                                        "greedy|random"]
    with pytest.raises(SeasonError, match="'gauntlet'"):
        load_season(season_file(tmp_path, "g2", bots, fmt="gauntlet", extra='gauntlet = "x"'))


@pytest.mark.parametrize("flags,expected", [
    (["--broker", "redis://127.0.0.1:6399/0"], "--broker redis://127.0.0.1:6399/0: the broker "
                                               "does not answer"),
    (["--db", "postgresql://nobody@127.0.0.1:5999/x"], "--db postgresql://nobody@127.0.0.1:5999"
                                                        "/x: cannot open the store"),
    (["--db", "not-a-url"], "--db not-a-url: not a database URL"),
])
def test_an_unreachable_broker_or_store_is_named_before_anything_is_written(tmp_path, flags,
                                                                           expected):
    path = season_file(tmp_path, unique("unreach"), [GREEDY, RANDOM])
    args = ["season", "run", str(path), "--no-check", "--no-progress"]
    if "--db" not in flags:
        args += ["--db", f"sqlite:///{tmp_path}/s.db"]
    p = arena(*args, *flags, cwd=tmp_path, timeout=60)
    assert p.returncode == 2 and expected in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and "nothing was enqueued" in p.stderr
    if "--broker" in flags:
        assert Store(f"sqlite:///{tmp_path}/s.db").seasons.names() == []


@pytest.mark.parametrize("variant", ["two-deck-80", "single-deck"])
def test_a_season_of_each_remaining_variant_is_summarised_deal_by_deal(tmp_path, variant):
    """(two-deck-fry and three-deck seasons run in the tests above)"""
    name = unique(variant)
    path = season_file(tmp_path, name, [GREEDY, RANDOM], variant=variant, deal_sets=1,
                       deals_per_set=2)
    store = Store(f"sqlite:///{tmp_path}/s.db")
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    assert run_local(store, name, workers=2, progress=False)["done"] == 2
    for m in store.pages.matches(name):
        s = json.loads(m.summary_json)
        record = store.results.record(m.id)
        assert len(s["deals"]) == 2 == len(record.result.deals)
        for d, r in zip(s["deals"], record.result.deals):
            assert d["attacker_total"] == r.attacker_total and d["after"] == list(r.levels)
            assert d["attackers"] in (0, 1)
        assert s["net"][0] == sum(d["gain"][0] - d["gain"][1] for d in s["deals"])
    st = season_standings(store.seasons.get(name), store.pages.matches(name), samples=50)
    assert st.deals == 4 and st.units == 1


def test_the_worker_side_never_loads_grpc():
    code = ("import sys; import scheduler.tasks, scheduler.execute, scheduler.store; "
            "print('grpc' in sys.modules)")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env(), capture_output=True,
                       text=True, timeout=60)
    assert p.stdout.strip() == "False", p.stderr


def test_a_match_longer_than_its_lease_keeps_it(tmp_path):
    from scheduler.execute import execute_match
    name = unique("lease")
    # 40 deals: several seconds of play, the first lease's renewal seen after about 1.25 s
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=1, deals_per_set=40)
    db = f"sqlite:///{tmp_path}/s.db"
    store = Store(db)
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    mid = f"{name}-00000"
    outcome: list = []
    lease = 1.0  # renewed every lease / 4 while the match is played
    player = threading.Thread(target=lambda: outcome.append(
        execute_match(db, mid, lease_s=lease, owner="player:1")))
    player.start()

    def past_its_first_lease() -> bool:  # renewed after its first term had run out
        m = store.pages.match(mid)
        return m.status in ("done", "failed") or (
            m.status == "running" and m.lease_until > m.started_at + 2 * lease)
    wait_for(past_its_first_lease, 60, "a renewal after the first lease's term")
    assert store.pages.match(mid).status == "running", "the match ended within its first lease"
    # without renewals it would be up
    assert store.queue.claim(mid, "thief:2", lease_s=lease) is None
    player.join(120)
    assert outcome == ["done"] and store.pages.match(mid).attempts == 1


def _row(mid, cluster, seats, net0, forfeit_team=None, strikes=(0, 0, 0, 0)):
    score = ([0.0, 1.0] if forfeit_team == 0 else [1.0, 0.0]) if forfeit_team is not None else (
        [1.0, 0.0] if net0 > 0 else [0.0, 1.0] if net0 < 0 else [0.5, 0.5])
    deal = {"dealer": 0, "attackers": 1, "attacker_total": 80, "before": ["2", "2"],
            "after": ["2", "2"], "gain": [max(net0, 0), max(-net0, 0)]}
    summary = {"deals": [deal], "net": [net0, -net0], "score": score,
               "forfeit_team": forfeit_team, "strikes": list(strikes), "match_points": None}
    return {"id": mid, "cluster": cluster, "seats_json": json.dumps(seats),
            "summary_json": json.dumps(summary), "status": "done"}


def test_standings_score_duplicate_pairs_by_net_levels_and_forfeits():
    season = {"name": "s", "config_json": json.dumps({"bots": ["a", "b"], "variant":
                                                      "two-deck-fry", "duplicate": True})}
    ab, ba = ["a", "b", "a", "b"], ["b", "a", "b", "a"]
    rows = [
        # pair 1: a +3 as team 0, b wins the mirror by 1: a wins the pair on net levels
        _row("m0", "p1", ab, 3), _row("m1", "p1", ba, 1),
        # pair 2: a wins the first match, but forfeits the mirror (3 strikes): b wins the pair
        _row("m2", "p2", ab, 2), _row("m3", "p2", ba, 0, forfeit_team=1, strikes=(0, 3, 0, 0)),
        # pair 3: equal nets: a draw
        _row("m4", "p3", ab, 2), _row("m5", "p3", ba, 2),
        # pair 4: only one match played so far: not rated yet
        _row("m6", "p4", ab, 5),
    ]
    st = season_standings(season, rows, samples=50)
    by = {b.name: b for b in st.lines}
    assert (by["a"].pairs_won, by["a"].pairs_drawn, by["a"].pairs_lost) == (1, 1, 1)
    assert (by["b"].pairs_won, by["b"].pairs_drawn, by["b"].pairs_lost) == (1, 1, 1)
    assert st.units == 3 and st.head_to_head["a"]["b"] == [1.5, 3]
    assert by["a"].forfeits == 1 and by["a"].strikes == 3
    assert (by["a"].wins, by["a"].draws, by["a"].losses) == (4, 0, 3)  # m0 m2 m4 m6
    assert by["a"].net_levels == 3 - 1 + 2 + 0 + 2 - 2 + 5
    assert by["a"].rating == pytest.approx(-by["b"].rating)


def test_reading_a_store_that_is_not_there_names_it_and_creates_nothing(tmp_path):
    for args in (("standings", "nosuch"), ("matches", "nosuch"), ("replay", "nosuch-00000")):
        out = arena(*args, cwd=tmp_path, check=False)
        assert out.returncode == 1 and "there is no store at arena.db" in out.stderr, out.stderr
    assert list(tmp_path.iterdir()) == []


# -- cancelling a distributed season ----------------------------------------------------------
def test_a_cancelled_distributed_season_finishes_what_is_running_and_plays_nothing_more(
        tmp_path, pg):
    import re

    from test_store_cli import noisy_bot
    flush_redis()
    name = unique("cancel")
    noisy = noisy_bot(tmp_path / "noisy")
    # 60 matches: far more than two workers play while `arena season cancel` starts (12 were
    # all played by then once, on a loaded machine); the cancel leaves the rest unplayed, so
    # more matches cost no time
    path = season_file(tmp_path, name, [str(noisy), GREEDY], deal_sets=30, deals_per_set=2)
    store = Store(pg)
    open_season(load_season(path), store, workdir=tmp_path / "checks", check=False)
    workers = [Worker(pg, tmp_path / f"w{i}.log", lease=3) for i in range(2)]
    ended: list = []
    runner = threading.Thread(target=lambda: ended.append(run_distributed(
        store, name, REDIS_URL, resend_after_s=3, lease_s=3, progress=False, timeout_s=240)))
    try:
        for w in workers:
            w.wait_ready()
        runner.start()
        wait_for(lambda: store.seasons.counts(name)["done"] >= 1
                 and store.seasons.counts(name)["pending"] >= 1,
                 120, "a match done and some pending")
        p = arena("season", "cancel", name, "--db", pg, check=True)
        said = re.search(r"cancelled: (\d+) pending matches will not be played, (\d+) running "
                         r"\(they finish; `arena seasons` shows when\), (\d+) done stay counted",
                         p.stdout)
        assert said, p.stdout
        pending, running, done = map(int, said.groups())
        assert pending >= 1 and running <= 2   # two workers of one process each
        runner.join(120)   # the reconciler stops once the running matches are over
        assert not runner.is_alive()
        cancelled = [m.id for m in store.pages.matches(name) if m.status == "cancelled"]
        # every queued message of a cancelled match is taken and dropped, none played
        wait_for(lambda: all(f"match {mid}: cancelled" in "".join(
            (tmp_path / f"w{i}.log").read_text(errors="replace") for i in range(2))
            for mid in cancelled), 60, "the workers to drop the cancelled matches' messages")
    finally:
        stop_all(workers)
    counts = store.seasons.counts(name)
    assert ended == [counts]
    assert counts == StatusCounts(done=done + running, cancelled=pending), (counts, p.stdout)
    assert store.results.count(name) == counts["done"]   # each done match counted once
    for m in store.pages.matches(name):
        attempts = store.pages.attempt_log(name, m.id)
        assert not [a for a in attempts if a.outcome == "running"], attempts
        if m.status == "cancelled":
            assert m.result_json is None and store.results.record(m.id) is None
            assert attempts == []   # pending when cancelled, never claimed after
        else:
            assert [a.outcome for a in attempts].count("done") == 1, attempts

    row = [r for r in json.loads(arena("seasons", "--db", pg, "--json", check=True).stdout)
           if r["name"] == name]
    assert len(row) == 1 and row[0]["status"] == "cancelled", row
    assert (row[0]["done"], row[0]["cancelled"]) == (counts["done"], pending)
    table = arena("seasons", "--db", pg, check=True).stdout
    assert [x for x in table.splitlines() if x.startswith(name + " ")][0].endswith("cancelled")

    first = next(m for m in store.pages.matches(name) if m.status == "done")
    seats = json.loads(first.seats_json)
    seat = seats.index("noisy")
    logs = arena("logs", first.id, "--seat", str(seat), "--db", pg, check=True)
    assert "bot noisy" in logs.stdout.splitlines()[0] and "dropped" in logs.stdout
    assert f"noisy bot on seat {seat} is ready" in logs.stdout
    faults = arena("matches", name, "--faults", "--db", pg, check=True).stdout
    for m in store.pages.matches(name):   # noisy's garbage answer: one fault per noisy seat
        if m.status == "done":
            noisy_seats = [s for s, b in enumerate(json.loads(m.seats_json)) if b == "noisy"]
            for s in noisy_seats:
                assert f"seat {s} (noisy) garbage x1" in faults, faults
    assert f"{counts['done']} match(es) with bot faults" in faults, faults


def test_ctrl_c_on_a_distributed_run_says_the_workers_keep_playing(tmp_path):
    flush_redis()
    name = unique("ctrlc")
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=1, deals_per_set=1)
    db = f"sqlite:///{tmp_path}/s.db"
    proc = subprocess.Popen([sys.executable, "-m", "cli", "season", "run", str(path), "--db", db,
                             "--broker", REDIS_URL, "--no-check", "--no-progress"],
                            cwd=tmp_path, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=ctrl_c_default)
    store = Store(db)
    try:   # no worker runs: the matches stay queued
        wait_for(lambda: store.seasons.get(name) and all(
            m.enqueued_at for m in store.pages.matches(name)), 60, "the matches enqueued")
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        flush_redis()
    assert proc.returncode == 130, err
    assert "the 2 queued and running matches keep being played by the workers" in err, err
    assert f"`arena season cancel {name}` stops them" in err


def test_a_ctrl_c_lands_between_the_reconcilers_steps_and_a_second_one_at_once():
    """The distributed reconciler takes a Ctrl-C at its next step, never inside a store write
    or a broker publish; a second Ctrl-C is not held back."""
    from scheduler.league import ctrl_c_between_steps
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with ctrl_c_between_steps() as interrupted:
            os.kill(os.getpid(), signal.SIGINT)  # handled before the next line runs
            assert interrupted.is_set()
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGINT)
                interrupted.wait(5)  # (the signal is handled before this wait returns)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)


def test_bots_check_runs_under_the_seasons_sandbox_limits(tmp_path):
    """A bot that needs 300 MiB passes the check under the default limits, and fails it (before
    anything is enqueued) in a season whose ``[sandbox]`` gives each seat 256 MiB."""
    import shutil
    bot = tmp_path / "hungry"
    shutil.copytree(ROOT / "sample_bots" / "stdio", bot)
    (bot / "bot.toml").write_text(
        'name = "hungry"\nversion = "1"\nprotocol = "stdio"\ncommand = ["python3", "-c", '
        '"kept = bytearray(300 << 20); import runpy; '
        'runpy.run_path(\'stdio_bot.py\', run_name=\'__main__\')"]\n')
    assert arena("bots", "check", str(bot), cwd=tmp_path).returncode == 0
    name = unique("tight")
    path = season_file(tmp_path, name, [GREEDY, str(bot)], deal_sets=1, deals_per_set=1,
                       extra="[sandbox]\nmemory_mb = 256\n")
    db = f"sqlite:///{tmp_path}/tight.db"
    p = arena("season", "run", str(path), "--db", db, "--no-progress", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "bots[1].manifest: bot 'hungry'" in p.stderr and "fails bots check" in p.stderr, \
        p.stderr
    assert "nothing was enqueued" in p.stderr
