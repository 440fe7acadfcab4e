"""Bot faults and infrastructure faults apart (issue #13): a bot is charged only for what the
referee recorded it doing; an attempt that failed for the infrastructure's sake (a killed
worker, a stopped worker, a referee process that died, a store that was away at commit time, a
task delivered twice) charges nobody, is played again on the same cards and is counted once;
after the attempt limit the match is set aside, and the standings leave it out and say so.

Real processes throughout: Celery workers (``arena worker``) on Redis at 127.0.0.1:6379 (db 9),
the PostgreSQL server at 127.0.0.1:5432 (database ``test``), a referee process per attempt.
Every wait is on a state of the store or of a process, with a generous timeout.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from league_helpers import (BOTS, REDIS_URL, Worker, arena, flush_redis, season_file,
                            stop_all, unique, wait_for)
from sqlalchemy.exc import OperationalError
from test_record_storage import toy_match

from referee.match.matchfile import MatchFile
from scheduler.execute import execute_match
from scheduler.league import open_season, run_distributed, run_local
from scheduler.season import load_season
from scheduler.reports import season_standings
from scheduler.stats.standings import table
from scheduler.store import Store
from scheduler.store.result_rows import Results

GREEDY = BOTS / "greedy"
RANDOM = BOTS / "random"
ILLEGAL_BOT = """import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "request":
        print(json.dumps({"request_id": m["request_id"], "action": {
            "kind": "ACTION_KIND_PLAY", "cards": ["BJ", "BJ", "BJ", "BJ", "BJ"]}}), flush=True)
    elif m["type"] == "match_end":
        break
"""


# -- processes ------------------------------------------------------------------------------
def _is_referee(pid: int, match_id: str) -> bool:
    """Whether ``pid`` shows a referee's command line for ``match_id`` (exec'd, its arguments
    apart; forked from a prestarted referee, one line that names ``referee.serve``)."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b" referee.serve " in cmd.replace(b"\0", b" ") and f"arena-{match_id}-".encode() in cmd


def _parent(pid: int) -> int:
    try:  # the field after the command's closing parenthesis: state, then the parent's pid
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _referees(match_id: str) -> list[int]:
    """Pids of the referee processes playing ``match_id`` (their workdir names it). A referee's
    fork that is about to exec a bot's sandbox shows the referee's command line for a moment:
    a process whose parent is a referee is not one."""
    pids = [int(d) for d in os.listdir("/proc") if d.isdigit() and _is_referee(int(d), match_id)]
    return [p for p in pids if not _is_referee(_parent(p), match_id)]


def _has_children(pid: int) -> bool:
    """The process has a child, forked by any of its threads (the referee launches its seats
    from threads of their own)."""
    try:
        return any(Path(f"/proc/{pid}/task/{tid}/children").read_text().split()
                   for tid in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return False


def _started_its_bots(pid: int, match_id: str) -> bool:
    """The referee ``pid`` (one of ``_referees``) has started its bots, and is still that
    referee once that is seen."""
    return _has_children(pid) and _is_referee(pid, match_id)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class RefereeKiller(threading.Thread):
    """SIGKILLs the referee of ``match_id`` in the middle of its match (once its bots are
    started), ``times`` times: a referee process that crashed."""

    def __init__(self, match_id: str, times: float) -> None:
        super().__init__(daemon=True)
        self.match_id, self.times, self.killed = match_id, times, []
        self.stopped = threading.Event()

    def run(self) -> None:  # ``times`` may be infinite: every attempt of the match
        while len(self.killed) < self.times and not self.stopped.is_set():
            for pid in _referees(self.match_id):
                if pid not in self.killed and _started_its_bots(pid, self.match_id):
                    os.kill(pid, signal.SIGKILL)
                    self.killed.append(pid)
            time.sleep(0.02)  # (how often the killer looks for a referee)


# -- what every test asks of the store --------------------------------------------------------
def _counted_once(store: Store, name: str) -> None:
    counts = store.seasons.counts(name)
    assert counts.done == counts.total, counts
    assert store.results.count(name) == counts["done"]  # one result row per match, never two


def _same_cards_no_charge(store: Store, match_id: str) -> MatchFile:
    """The stored record of a match that was played again: the seeds the store planned for it
    (the same cards every attempt), no fault and no strike charged to any bot."""
    record = store.results.record(match_id)
    planned = [d["seed"] for d in json.loads(store.pages.match(match_id).spec_json)["deals"]]
    assert [g.seed for g in record.games] == planned
    assert record.faults == [] and record.result.strikes == (0, 0, 0, 0)
    assert record.result.forfeit is None
    return record


def _outcomes(store: Store, name: str, match_id: str) -> list[str]:
    return [a.outcome for a in store.pages.attempt_log(name, match_id)]


def _pg_season(tmp_path, pg, prefix: str, *, deals_per_set: int, deal_sets: int = 1):
    flush_redis()
    name = unique(prefix)
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=deal_sets,
                       deals_per_set=deals_per_set)
    store = Store(pg)
    open_season(load_season(path), store, workdir=tmp_path / "checks", check=False)
    return name, store


def _reconciler(store: Store, name: str) -> threading.Thread:
    runner = threading.Thread(target=run_distributed, args=(store, name, REDIS_URL),
                              kwargs={"resend_after_s": 3, "lease_s": 3, "progress": False,
                                      "timeout_s": 120, "poll_s": 0.2})
    runner.start()
    return runner


def _in_play(store: Store, name: str):
    """A match of the season under way: its referee started its bots."""
    for m in store.pages.matches(name):
        if m.status == "running" and any(_started_its_bots(p, m.id)
                                            for p in _referees(m.id)):
            return m
    return None


# -- 1. a worker's pool process killed mid-match ---------------------------------------------
def test_a_worker_process_killed_mid_match_is_played_again_on_the_same_cards(tmp_path, pg):
    name, store = _pg_season(tmp_path, pg, "child", deals_per_set=16)
    worker = Worker(pg, tmp_path / "w.log", lease=3)
    try:
        worker.wait_ready()
        runner = _reconciler(store, name)
        victim = wait_for(lambda: _in_play(store, name), 60, "a match under way")
        child = int(victim.lease_owner.rpartition(":")[2])
        assert child != worker.proc.pid  # the pool process, not the worker's main process
        os.kill(child, signal.SIGKILL)
        runner.join(120)
        assert not runner.is_alive()
        assert worker.proc.poll() is None  # the worker lives on with a fresh pool process
    finally:
        worker.stop()
    _counted_once(store, name)
    again = store.pages.match(victim.id)
    assert again.attempts == 2 and again.error is None
    log = store.pages.attempt_log(name, victim.id)
    assert [a.outcome for a in log] == ["lost", "done"], log
    # taken over by the redelivered task (the owner is gone) or when its lease ran out
    assert log[0].worker == victim.lease_owner and log[0].reason.startswith("lost: ")
    assert _same_cards_no_charge(store, victim.id).extra["attempt"] == 2
    # the other match was not touched
    other = next(m for m in store.pages.matches(name) if m.id != victim.id)
    assert other.attempts == 1


# -- 2. a worker told to stop (SIGTERM) -------------------------------------------------------
@pytest.mark.parametrize("whom", ["main", "group"])
def test_a_stopped_worker_finishes_its_match_or_it_is_played_again(tmp_path, pg, whom):
    """``main``: SIGTERM to the worker's main process (systemd ``KillMode=mixed``, a container
    stop); ``group``: SIGTERM to every process of the worker. Either way a warm shutdown that
    hands the match in hand back at once (``ARENA_STOP_GRACE_S`` 0), uncharged: it is played
    again elsewhere (tests/scheduler/test_soft_shutdown.py: with a grace, it finishes)."""
    name, store = _pg_season(tmp_path, pg, f"term-{whom}", deals_per_set=16)
    first = Worker(pg, tmp_path / "first.log", lease=3)
    second = None
    try:
        first.wait_ready()
        runner = _reconciler(store, name)
        victim = wait_for(lambda: _in_play(store, name), 60, "a match under way")
        if whom == "main":
            os.kill(first.proc.pid, signal.SIGTERM)
        else:
            os.killpg(first.proc.pid, signal.SIGTERM)
        assert first.proc.wait(60) == 0  # a warm shutdown either way
        back = store.pages.match(victim.id)  # handed back, not charged
        assert back.status == "pending" and back.attempts == 0, back
        second = Worker(pg, tmp_path / "second.log", lease=3)
        second.wait_ready()
        runner.join(120)
        assert not runner.is_alive()
    finally:
        first.stop()
        if second:
            second.stop()
    _counted_once(store, name)
    outcomes = _outcomes(store, name, victim.id)
    assert outcomes == ["interrupted", "done"], outcomes
    _same_cards_no_charge(store, victim.id)


# -- 3. a referee process that crashes ---------------------------------------------------------
FORKING_REFEREE = """import os, subprocess, sys, time
if os.fork() == 0:  # a fork that has not exec'd yet: the referee's command line, a child
    subprocess.Popen(["sleep", "60"])
    print(os.getpid(), flush=True)
    time.sleep(60)  # (a stand-in's life: the test ends it)
time.sleep(60)  # (a stand-in's life: the test ends it)
"""


def test_the_referee_finder_takes_a_referees_fork_for_no_referee(tmp_path):
    """Forced: a process with a referee's command line forks, and the fork (still showing that
    command line, as it does between fork and exec) starts a child of its own, the sandbox
    it is about to become. The finder names the referee alone and sees it has started its
    bots; the fork is never taken for a second referee (the killer once killed both:
    ``[2, 3] == [1, 3]``)."""
    import subprocess
    import sys
    match_id = unique("finder")
    spec = tmp_path / f"arena-{match_id}-x" / "spec.json"
    proc = subprocess.Popen([sys.executable, "-c", FORKING_REFEREE, "referee.serve", str(spec)],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        fork = int(proc.stdout.readline())  # once the fork's child is started
        assert _is_referee(fork, match_id) and _has_children(fork)
        assert _referees(match_id) == [proc.pid]
        assert _started_its_bots(proc.pid, match_id)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_a_crashed_referee_is_retried_then_set_aside_and_the_standings_say_so(tmp_path):
    name = unique("crash")
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=2, deals_per_set=4)
    db = f"sqlite:///{tmp_path}/s.db"
    store = Store(db)
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    once, always = f"{name}-00000", f"{name}-00002"   # pair 0's first match; pair 1's first
    killers = [RefereeKiller(once, 1), RefereeKiller(always, float("inf"))]
    for k in killers:
        k.start()
    try:
        counts = run_local(store, name, workers=2, progress=False)
    finally:
        for k in killers:
            k.stopped.set()
    log = store.pages.attempt_log(name)
    assert [len(k.killed) for k in killers] == [1, 3], (counts, log)
    assert counts.to_dict() == {"pending": 0, "running": 0, "done": 3, "failed": 1,
                                "cancelled": 0}, log
    assert store.results.count(name) == 3

    # killed once: played again on the same cards, nobody charged
    assert store.pages.match(once).attempts == 2
    assert _outcomes(store, name, once) == ["retry", "done"]
    assert "status -9 (killed by SIGKILL)" in store.pages.attempt_log(name, once)[0].reason
    _same_cards_no_charge(store, once)

    # killed every time: set aside after 3 attempts with the reason, no result, no record
    failed = store.pages.match(always)
    assert failed.status == "failed" and failed.attempts == 3
    assert failed.error.startswith("set aside after 3 attempts")
    assert "the referee exited with status -9" in failed.error
    assert _outcomes(store, name, always) == ["retry", "retry", "failed"]
    assert store.results.record(always) is None

    # the standings leave it out (and its half-played pair) and say how many are set aside
    st = season_standings(store.seasons.get(name), store.pages.matches(name), samples=50)
    assert (st.matches_done, st.matches_failed, st.matches_total, st.units) == (3, 1, 4, 1)
    assert st.to_dict()["matches_failed"] == 1
    assert "1 set aside" in table(st).splitlines()[0]
    assert sum(b.strikes for b in st.lines) == 0
    shown = arena("standings", name, "--db", db, "--samples", "50", check=True).stdout
    assert "1 set aside" in shown

    # 6. every attempt is visible, apart from bot faults
    out = arena("matches", name, "--db", db, "--faults", check=True).stdout
    lines = out.splitlines()
    assert f"{always}  failed, 3 attempt(s): set aside" in out
    assert sum(f"attempt {i} retry" in x for i in (1, 2) for x in lines) == 3  # 2 + 1 retries
    assert any("attempt 3 failed" in x and "status -9" in x for x in lines)
    assert "  bot fault " not in out
    assert lines[-1] == ("0 match(es) with bot faults, 2 with infrastructure failures (not "
                         "charged to any bot), 1 set aside")

    # a new run tries a set-aside match afresh
    p = arena("season", "run", str(path), "--db", db, "--no-check", "--no-progress",
              "--workers", "1", cwd=tmp_path, check=True)
    assert "1 failed match(es) will be tried again" in p.stderr
    _counted_once(store, name)
    assert _outcomes(store, name, always) == ["retry", "retry", "failed", "done"]


def test_the_attempt_limit_is_configurable(tmp_path):
    name = unique("limit")
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=1, deals_per_set=2,
                       duplicate=False)
    db = f"sqlite:///{tmp_path}/s.db"
    store = Store(db)
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    killer = RefereeKiller(f"{name}-00000", 5)
    killer.start()
    try:
        p = arena("season", "run", str(path), "--db", db, "--no-check", "--no-progress",
                  "--workers", "1", "--attempts", "2", cwd=tmp_path)
    finally:
        killer.stopped.set()
    assert p.returncode == 1, p.stderr  # a season with a set-aside match does not exit 0
    assert len(killer.killed) == 2 and "0 done, 1 failed" in p.stderr
    assert store.pages.match(f"{name}-00000").error.startswith("set aside after 2 attempts")


# -- 4. the store away at commit time ---------------------------------------------------------
def _down(*_a, **_k):
    raise OperationalError("INSERT INTO results ...", {},
                           ConnectionError("server closed the connection unexpectedly"))


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_store_away_at_commit_takes_the_result_once_when_it_is_back(tmp_path, pg,
                                                                      monkeypatch, when):
    """``before``: the write failed and nothing was committed; ``after``: the commit went
    through but its answer was lost. Either way the worker writes again, and the match is
    counted once, on its first attempt (it is not played again)."""
    name, store = _pg_season(tmp_path, pg, f"commit-{when}", deals_per_set=1)
    real = Results.finish
    calls = []

    def flaky(self, *a, **k):
        calls.append(k.get("note"))
        if len(calls) == 1:
            if when == "after":
                real(self, *a, **k)
            _down()
        return real(self, *a, **k)

    monkeypatch.setattr(Results, "finish", flaky)
    mid = f"{name}-00000"
    assert execute_match(pg, mid, owner="w:1") == "done"
    assert len(calls) == 2 and "result write retried: OperationalError" in calls[1]
    assert store.results.count(name) == 1
    m = store.pages.match(mid)
    assert m.status == "done" and m.attempts == 1
    log = store.pages.attempt_log(name, mid)
    assert [a.outcome for a in log] == ["done"]
    if when == "before":  # the note went in with the result
        assert "server closed the connection" in log[0].reason


def test_a_store_away_for_good_at_commit_is_an_attempt_charged_to_nobody(tmp_path, pg,
                                                                         monkeypatch):
    name, store = _pg_season(tmp_path, pg, "commit-down", deals_per_set=1)
    mid = f"{name}-00000"
    with monkeypatch.context() as mp:
        mp.setattr(Results, "finish", _down)
        assert execute_match(pg, mid, owner="w:1", store_retry_s=1.0) == "retry"
    assert store.results.count(name) == 0 and store.pages.match(mid).status == "pending"
    log = store.pages.attempt_log(name, mid)
    assert log[0].outcome == "retry" and "StoreUnavailable" in log[0].reason
    assert execute_match(pg, mid, owner="w:2") == "done"  # the store is back: played again
    assert store.results.count(name) == 1 and store.pages.match(mid).attempts == 2
    assert _same_cards_no_charge(store, mid).extra["attempt"] == 2


# -- 5. the same task delivered twice at once ---------------------------------------------------
def test_the_same_match_delivered_to_two_workers_at_once_is_played_once(tmp_path, pg):
    from scheduler.tasks import make_app
    name, store = _pg_season(tmp_path, pg, "twice", deals_per_set=4)
    mid = f"{name}-00000"
    workers = [Worker(pg, tmp_path / f"w{i}.log", lease=3) for i in range(2)]
    try:
        for w in workers:
            w.wait_ready()
        app = make_app(REDIS_URL)
        for _ in range(2):  # no reconciler: exactly these two messages
            app.send_task("arena.play_match", args=[mid], queue="arena")
        logs = [w.log_path for w in workers]
        said = wait_for(lambda: [x for x in (p.read_text() for p in logs) if f"match {mid}:"
                                 in x] if all(f"match {mid}:" in p.read_text() for p in logs)
                        else None, 60, "both workers to answer the message")
    finally:
        stop_all(workers)
    outcomes = sorted(x.split(f"match {mid}: ")[1].split()[0] for x in said)
    assert outcomes == ["busy", "done"], outcomes
    assert store.results.count(name) == 1 and store.pages.match(mid).attempts == 1
    assert _outcomes(store, name, mid) == ["done"]


def test_concurrent_claims_and_writes_of_one_match_make_one_result(tmp_path, pg):
    name, store = _pg_season(tmp_path, pg, "race", deals_per_set=1)
    mid = f"{name}-00000"
    barrier = threading.Barrier(8)
    got: list = [None] * 8

    def claim(i: int) -> None:
        s = Store(pg)
        barrier.wait()
        got[i] = s.queue.claim(mid, f"w:{i}", lease_s=60)

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    winners = [i for i, r in enumerate(got) if r is not None]
    assert len(winners) == 1 and store.pages.match(mid).attempts == 1
    writes = [store.results.finish(mid, name, toy_match(mid, i), 1.0, f"w:{i}",
                                   tally=None)
              for i in (winners[0], 99)]
    assert writes == [True, False] and store.results.count(name) == 1
    assert store.results.finish(mid, name, toy_match(mid, 0), 1.0, f"w:{winners[0]}",
                                tally=None)
    assert store.results.count(name) == 1  # the writer again: idempotent, still one


# -- 6. bot faults next to the infrastructure's -------------------------------------------------
def test_bot_faults_and_infrastructure_failures_are_listed_apart(tmp_path):
    bot = tmp_path / "illegal"  # a stdio bot of one file: it plays five big jokers every time
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "illegal"\nversion = "1"\nprotocol = "stdio"\n'
                                  'command = ["python3", "illegal.py"]\n')
    (bot / "illegal.py").write_text(ILLEGAL_BOT)
    name = unique("apart")
    path = season_file(tmp_path, name, [GREEDY, str(bot)], deal_sets=1, deals_per_set=1,
                       duplicate=False)
    db = f"sqlite:///{tmp_path}/s.db"
    store = Store(db)
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    mid = f"{name}-00000"
    killer = RefereeKiller(mid, 1)
    killer.start()
    try:
        run_local(store, name, workers=1, progress=False)
    finally:
        killer.stopped.set()
    assert len(killer.killed) == 1
    record = store.results.record(mid)
    seats = record.seats
    bad = {s for s in range(4) if seats[s] == "illegal"}
    # the bot is charged with what it did in the attempt that was counted, nothing more
    assert record.faults and {f.seat for f in record.faults} <= bad
    assert record.extra["attempt"] == 2
    out = arena("matches", name, "--db", db, "--faults", check=True).stdout
    assert f"{mid}  done, 2 attempt(s)" in out
    kinds = Counter((f.seat, f.kind) for f in record.faults)
    for (seat, kind), n in kinds.items():  # seat, kind and count of each
        assert f"  bot fault       seat {seat} (illegal) {kind} x{n}" in out, out
    for f in record.faults:  # and why: its reasons, under it
        assert f"\n                    {f.reason[:300]}\n" in out or \
            "other reason(s)" in out, (f.reason, out)
    assert f"\n                    {record.faults[0].reason[:300]}\n" in out, out
    assert "  infrastructure  attempt 1 retry" in out and "status -9" in out
    assert out.splitlines()[-1].startswith("1 match(es) with bot faults, 1 with "
                                           "infrastructure failures")
