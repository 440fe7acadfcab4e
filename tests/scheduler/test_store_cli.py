"""The store's commands: ``arena seasons``, ``arena season cancel`` and ``arena logs``.

Real components: SQLite stores, ``arena season run`` in its own process with the sample bots
and a referee process per match, and a bot of the test's own that prints to its stderr (and
answers one decision with garbage, a bot fault). The distributed cancel is in test_league.py.
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
from pathlib import Path

import pytest
from alembic import command
from league_helpers import BOTS, arena, env, season_file, unique, wait_for
from sqlalchemy import create_engine, inspect
from test_record_storage import toy_match

from scheduler import migrations
from scheduler.execute import BOT_LOG_KEPT, execute_match
from scheduler.league import open_season
from scheduler.season import load_season
from scheduler.store import Store
from scheduler.store.queue import LeaseQueue
from scheduler.store.rows import StatusCounts

GREEDY = BOTS / "greedy"
RANDOM = BOTS / "random"

NOISY_BOT = '''"""noisy: the random sample bot, telling its stderr what it does; its first answer is
garbage (one strike)."""

import os
import random
import sys

from arena_bot import Bot, pb, run


class NoisyBot(Bot):
    name = "noisy"

    def __init__(self, seed):
        super().__init__()
        self.rng = random.Random(seed)
        self.wrong = True

    def choose(self, request):
        if self.wrong:
            self.wrong = False
            print("noisy: answering with an empty action", file=sys.stderr, flush=True)
            return pb.Action()
        return self.rng.choice(request.hint.actions)


if __name__ == "__main__":
    seat = os.environ.get("ARENA_SEAT", "")
    print(f"noisy bot on seat {seat} says hello", file=sys.stderr, flush=True)
    print("x" * FILLER, file=sys.stderr, flush=True)
    print(f"noisy bot on seat {seat} is ready", file=sys.stderr, flush=True)
    sys.exit(run(NoisyBot(os.environ.get("ARENA_MATCH_ID", "") + ":" + seat)))
'''
#: bytes the noisy bot prints after its hello: more than a record keeps of a seat's log
FILLER = BOT_LOG_KEPT + 8000


def noisy_bot(folder: Path) -> Path:
    """A copy of the random sample bot that prints to stderr (a hello line, filler, a ready
    line) and answers its first decision with an empty action."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(NOISY_BOT.replace("FILLER", str(FILLER)))
    (folder / "bot.toml").write_text('name = "noisy"\nversion = "1"\ncommand = ["python3", '
                                     '"bot.py"]\nprotocol = "grpc"\n')  # the SDK: always there
    return folder


def _run(path: Path, db: str, *more: str, check: bool = True):
    return arena("season", "run", str(path), "--db", db, "--no-check", "--no-progress",
                 "--workers", "2", *more, cwd=path.parent, check=check)


def _line(out: str, name: str) -> str:
    lines = [x for x in out.splitlines() if x.split(" ", 1)[0] == name]
    assert len(lines) == 1, out
    return lines[0]


# -- arena seasons ----------------------------------------------------------------------------
def test_seasons_lists_each_season_with_its_counts_and_state(tmp_path):
    db = f"sqlite:///{tmp_path}/s.db"
    p = arena("seasons", "--db", db, cwd=tmp_path)
    assert p.returncode == 1 and "arena seasons:" in p.stderr, p.stderr
    assert f"there is no store at {tmp_path}/s.db" in p.stderr
    assert list(tmp_path.iterdir()) == []  # a reading command creates no store
    store = Store(db)
    p = arena("seasons", "--db", db, cwd=tmp_path, check=True)
    assert p.stdout.strip() == f"no seasons in {db}"
    assert json.loads(arena("seasons", "--db", db, "--json", check=True).stdout) == []

    played, waiting, busy = unique("played"), unique("waiting"), unique("busy")
    _run(season_file(tmp_path, played, [GREEDY, RANDOM], deal_sets=1, deals_per_set=1), db)
    for name in (waiting, busy):
        path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=1, deals_per_set=1)
        open_season(load_season(path), store, workdir=tmp_path, check=False)
    assert store.queue.claim(f"{busy}-00000", "w:1", lease_s=600) is not None

    out = arena("seasons", "--db", db, check=True).stdout
    today = time.strftime("%Y-%m-%d")
    line = _line(out, played)
    assert "two-deck-fry" in line and "round_robin" in line and " 2/2 " in line, line
    assert today in line and line.endswith("finished"), line
    assert _line(out, waiting).endswith("not started")
    assert _line(out, busy).endswith("playing")
    rows = {r["name"]: r for r in json.loads(arena("seasons", "--db", db, "--json",
                                                   check=True).stdout)}
    assert [r["name"] for r in rows.values()] == [played, waiting, busy]  # oldest first
    assert rows[played]["bots"] == ["greedy", "random"]
    assert (rows[played]["done"], rows[played]["matches"]) == (2, 2)
    assert (rows[busy]["running"], rows[busy]["pending"], rows[busy]["status"]) == (1, 1,
                                                                                  "playing")

    arena("season", "cancel", waiting, "--db", db, check=True)
    p = arena("season", "cancel", busy, "--db", db, check=True)
    assert "1 pending matches will not be played, 1 running" in p.stdout, p.stdout
    out = arena("seasons", "--db", db, check=True).stdout
    assert _line(out, waiting).endswith("cancelled")
    assert _line(out, busy).endswith("cancelling (1 running left)")
    # the running match's attempt fails: cancelled too, never pending again
    assert store.queue.give_back(f"{busy}-00000", "w:1", "RuntimeError: referee crashed") == \
        "cancelled"
    rows = {r["name"]: r for r in json.loads(arena("seasons", "--db", db, "--json",
                                                   check=True).stdout)}
    assert (rows[busy]["cancelled"], rows[busy]["running"], rows[busy]["status"]) == (
        2, 0, "cancelled")
    assert rows[busy]["cancelled_by"].endswith("@" + socket.gethostname())
    assert rows[played]["status"] == "finished"


# -- the store's rules of a cancel ------------------------------------------------------------
def test_a_cancelled_season_plays_nothing_more_and_counts_what_finishes(tmp_path):
    name = unique("rules")
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=3, deals_per_set=1)
    store = Store(f"sqlite:///{tmp_path}/s.db")
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    m = [f"{name}-{i:05d}" for i in range(6)]  # m[0] and m[1]: a duplicate pair
    local = f"{socket.gethostname()}:1"   # a local run's process, gone (alive says so below)
    for mid, owner in ((m[0], "live:1"), (m[1], "gone:2"), (m[2], "live:3"), (m[3], "late:4"),
                       (m[4], local)):
        assert store.queue.claim(mid, owner, lease_s=600) is not None
    store.queue.renew(m[1], "gone:2", lease_s=-1)   # nobody holds it any more

    got = store.cancels.cancel(name, by="tester")
    assert (got.already, got.pending, got.abandoned, got.running, got.done) == (
        False, 1, 1, 4, 0)
    assert store.pages.match(m[5]).status == store.pages.match(m[1]).status == "cancelled"
    assert [a.outcome for a in store.pages.attempt_log(name, m[1])] == ["lost"]
    for mid in (m[5], m[1]):
        assert store.queue.claim(mid, "any:9", lease_s=600) is None  # never claimed again
    assert store.results.finish(m[0], name, toy_match(m[0], 1), 1.0, "live:1",
                                tally=None) is True
    assert store.pages.match(m[0]).status == "done" and store.results.count(name) == 1
    assert store.pages.sealed_by(m[0]) == []  # its mirror is cancelled: never played, seals nothing
    assert store.queue.give_back(m[2], "live:3", "RuntimeError: referee crashed") == "cancelled"
    store.queue.renew(m[3], "late:4", lease_s=-1)   # its worker is lost after the cancel
    assert store.queue.claim(m[3], "next:5", lease_s=600) is None
    assert store.pages.match(m[3]).status == "cancelled"
    assert store.pages.match(m[3]).attempts == 1
    assert store.queue.release_owned(name, lambda pid: False) == 1   # a local run's, interrupted
    assert store.pages.match(m[4]).status == "cancelled"
    assert store.seasons.counts(name) == StatusCounts(done=1, cancelled=5)
    assert not [a for a in store.pages.attempt_log(name) if a.outcome == "running"]
    again = store.cancels.cancel(name, by="someone else")
    assert again.already and again.by == "tester" and again.pending == 0
    assert store.cancels.cancel("no-such-season") is None


def test_a_store_made_before_cancels_gains_them(tmp_path):
    url = f"sqlite:///{tmp_path}/old.db"
    old = create_engine(url)
    with old.connect() as c:  # the schema before migrations, without season_cancels
        command.upgrade(migrations.config(c), migrations.BASELINE)
        c.exec_driver_sql("DROP TABLE alembic_version")
        c.exec_driver_sql("DROP TABLE season_cancels")
        c.commit()
    assert not inspect(old).has_table("season_cancels")
    old.dispose()
    name = unique("old")
    store = Store(url)
    open_season(load_season(season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=1)), store,
                workdir=tmp_path, check=False)
    assert inspect(store.engine).has_table("season_cancels")
    assert store.cancels.cancelled(name) is None and store.seasons.counts(name)["cancelled"] == 0
    p = arena("season", "cancel", name, "--db", url, check=True)
    assert "2 pending matches will not be played, 0 running" in p.stdout, p.stdout


# -- arena season cancel on a local run -------------------------------------------------------
def test_a_local_run_stops_once_its_season_is_cancelled(tmp_path):
    name = unique("stop")
    # 40 matches: far more than one worker plays while `arena season cancel` starts (a loaded
    # machine once played all of a 12-match season meanwhile); the rest are never played
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=20, deals_per_set=2)
    db = f"sqlite:///{tmp_path}/s.db"
    proc = subprocess.Popen([sys.executable, "-m", "cli", "season", "run", str(path), "--db", db,
                             "--workers", "1", "--no-check", "--no-progress"], cwd=tmp_path,
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        store = Store(db)
        wait_for(lambda: store.seasons.get(name) and store.seasons.counts(name)["done"] >= 1
                 and store.seasons.counts(name)["pending"] >= 1, 120,
                 "a match done and some pending")
        p = arena("season", "cancel", name, "--db", db, cwd=tmp_path, check=True)
        said = re.search(r"cancelled: (\d+) pending matches will not be played, (\d+) running "
                         r"\(they finish; `arena seasons` shows when\), (\d+) done stay counted",
                         p.stdout)
        assert said, p.stdout
        pending, running, done = map(int, said.groups())
        assert pending >= 1 and running <= 1   # one worker: at most one match in play
        out, err = proc.communicate(timeout=120)   # it stops: nothing is left to play
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err
    counts = store.seasons.counts(name)
    assert counts == StatusCounts(done=done + running, cancelled=pending), (counts, p.stdout)
    assert f"season {name} was cancelled: {pending} matches not played" in err, err
    assert store.results.count(name) == counts["done"]   # one result each
    for m in store.pages.matches(name):
        if m.status == "cancelled":
            assert m.result_json is None and store.results.record(m.id) is None
            assert store.pages.attempt_log(name, m.id) == []   # never claimed after the cancel

    again = _run(path, db, check=False)
    assert again.returncode == 2, again.stderr
    assert f"season {name!r} was cancelled at" in again.stderr
    assert "give the season a new name" in again.stderr and "nothing was enqueued" in again.stderr
    assert store.seasons.counts(name) == counts
    twice = arena("season", "cancel", name, "--db", db, check=True)
    assert f"season {name} was already cancelled at" in twice.stdout, twice.stdout
    unknown = arena("season", "cancel", "nosuch", "--db", db)
    assert unknown.returncode == 2 and "no season 'nosuch'" in unknown.stderr
    assert name in unknown.stderr  # the seasons there
    st = json.loads(arena("standings", name, "--db", db, "--json", check=True).stdout)
    assert (st["matches_done"], st["matches_total"]) == (counts["done"], 40)
    assert _line(arena("seasons", "--db", db, check=True).stdout, name).endswith("cancelled")


# -- arena logs -------------------------------------------------------------------------------
def test_logs_prints_the_end_of_each_seats_log(tmp_path):
    noisy = noisy_bot(tmp_path / "noisy")
    name = unique("logs")
    db = f"sqlite:///{tmp_path}/s.db"
    path = season_file(tmp_path, name, [str(noisy), GREEDY], deal_sets=1, deals_per_set=1)
    _run(path, db)
    mid = f"{name}-00000"   # noisy on seats 0 and 2
    store = Store(db)
    record = store.results.record(mid)
    logs = record.extra["bot_logs"]
    assert sorted(logs) == ["0", "1", "2", "3"]   # every seat's, not only faulting
    size = record.extra["bot_log_bytes"]["0"]
    assert size > FILLER and len(logs["0"].encode()) == BOT_LOG_KEPT

    p = arena("logs", mid, "--seat", "2", "--db", db, check=True)
    head, _, text = p.stdout.partition("\n")
    assert head == (f"match {mid}, seat 2 (team 0): bot noisy; the last {BOT_LOG_KEPT} of "
                    f"{size} bytes kept ({size - BOT_LOG_KEPT} dropped)"), head
    assert "noisy bot on seat 2 is ready" in text and "rejected: garbage" in text
    assert "says hello" not in text   # the start of the log was not kept
    p = arena("logs", mid, "--seat", "1", "--db", db, check=True)
    assert p.stdout.startswith(f"match {mid}, seat 1 (team 1): bot greedy; its log is empty")
    p = arena("logs", f"{name}-00001", "--seat", "1", "--db", db, check=True)  # the mirror
    assert "bot noisy" in p.stdout.splitlines()[0] and "seat 1 is ready" in p.stdout

    p = arena("logs", mid, "--seat", "4", "--db", db)
    assert p.returncode == 2 and "--seat: invalid choice: 4" in p.stderr, p.stderr
    p = arena("logs", f"{name}-00099", "--seat", "0", "--db", db)
    assert p.returncode == 2 and f"{name}-00099: no match with that id" in p.stderr, p.stderr
    p = arena("logs", mid, "--seat", "0", "--db", f"sqlite:///{tmp_path}/none.db")
    assert p.returncode == 1 and "there is no store at" in p.stderr, p.stderr


def test_logs_are_sealed_as_the_record_is(tmp_path):
    noisy = noisy_bot(tmp_path / "noisy")
    name = unique("sealed")
    db = f"sqlite:///{tmp_path}/s.db"
    path = season_file(tmp_path, name, [str(noisy), GREEDY], deal_sets=1, deals_per_set=1)
    store = Store(db)
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    mid, mirror = f"{name}-00000", f"{name}-00001"
    assert execute_match(db, mid) == "done"   # its mirror, on the same cards, is pending

    logs = arena("logs", mid, "--seat", "0", "--db", db)
    replay = arena("replay", mid, "--db", db)
    assert logs.returncode == replay.returncode == 3, (logs.stderr, replay.stderr)
    reason = replay.stderr.removeprefix(f"arena replay: {mid}: ")
    assert "sealed until its mirror match" in reason and mirror in reason
    assert logs.stderr == f"arena logs: {mid}: {reason}"
    assert logs.stdout == ""
    p = arena("logs", mirror, "--seat", "0", "--db", db)
    assert p.returncode == 2 and "no record yet: the match is pending" in p.stderr, p.stderr

    p = arena("season", "cancel", name, "--db", db, check=True)
    assert p.stdout.strip() == (f"season {name} cancelled: 1 pending matches will not be "
                                "played, 0 running (they finish; `arena seasons` shows when), "
                                "1 done stay counted")
    p = arena("logs", mid, "--seat", "0", "--db", db, check=True)   # nothing left to play
    assert "bot noisy" in p.stdout and "seat 0 is ready" in p.stdout
    arena("replay", mid, "--db", db, "--verify", check=True)
    p = arena("logs", mirror, "--seat", "0", "--db", db)
    assert p.returncode == 2 and "no record yet: the match is cancelled" in p.stderr, p.stderr


def _one_pair(tmp_path, request, backend: str, prefix: str):
    """A season of one duplicate pair on SQLite or PostgreSQL: (url, store, name, first id)."""
    db = f"sqlite:///{tmp_path}/s.db" if backend == "sqlite" else request.getfixturevalue("pg")
    store = Store(db)
    name = unique(prefix)
    path = season_file(tmp_path, name, [GREEDY, RANDOM], deal_sets=1, deals_per_set=1)
    open_season(load_season(path), store, workdir=tmp_path, check=False)
    return db, store, name, f"{name}-00000"


# -- a lease taken over while its holder gives the match back ---------------------------------
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
@pytest.mark.parametrize("how", ["hand_back", "give_back"])
def test_a_match_taken_over_while_its_holder_gives_it_back_stays_the_takers(
        tmp_path, request, monkeypatch, backend, how):
    """A worker's lease runs out (a loaded machine stalls its renewals) and, between the moment
    its hand-back (a stop) or give-back (a failed referee) reads the match and the moment it
    writes, another worker takes the match over. The taker's claim stands: its attempt runs,
    the loser's attempt stays ``lost`` and charged, and the match's attempt count agrees with
    its attempt rows (a stop once rewrote ``lost`` as ``interrupted`` and left the charge:
    ``attempts == len(rows) - 1`` failed as ``2 == 2 - 1`` in a season across hosts)."""
    db, store, name, mid = _one_pair(tmp_path, request, backend, "taken")
    assert store.queue.claim(mid, "slow:1", lease_s=-1) is not None  # its lease has run out
    taken = []
    real = LeaseQueue._is_cancelled

    def taker_claims_first(c, season):  # the last read before the giver's write
        if not taken:
            taken.append(Store(db).queue.claim(mid, "taker:2", lease_s=600))
        return real(c, season)

    monkeypatch.setattr(LeaseQueue, "_is_cancelled", staticmethod(taker_claims_first))
    if how == "hand_back":
        status = store.queue.hand_back(mid, "slow:1", "its worker was told to stop")
    else:
        status = store.queue.give_back(mid, "slow:1", "RuntimeError: referee crashed")
    assert taken and taken[0] is not None, "the taker could not claim the lapsed match"
    row = store.pages.match(mid)
    rows = store.pages.attempt_log(name, mid)
    assert (status, row.status, row.lease_owner) == ("running", "running", "taker:2")
    assert [(a.worker, a.outcome) for a in rows] == [("slow:1", "lost"),
                                                           ("taker:2", "running")], rows
    assert row.attempts == len([a for a in rows if a.outcome != "interrupted"]) == 2


# -- a lapsed holder's result lands while the taker still plays -------------------------------
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
@pytest.mark.parametrize("how", ["hand_back", "give_back", "finish"])
def test_a_lapsed_holders_result_ends_the_takers_attempt_too(tmp_path, request, backend, how):
    """A worker cut off from the store plays its match to the end; its lease runs out and
    another worker takes the match over. The link comes back and the first worker's result is
    written (the same cards: it counts). Whatever the taker then does (a stop hands it back, a
    crash gives it back, or it finishes), no attempt is left ``running``: the taker's is
    ``counted`` (a stopped taker's attempt stayed ``running`` for ever)."""
    store, name, mid = _one_pair(tmp_path, request, backend, "straggler")[1:]
    assert store.queue.claim(mid, "cut:1", lease_s=-1) is not None    # its lease has run out
    assert store.queue.claim(mid, "taker:2", lease_s=600) is not None
    assert store.results.finish(mid, name, toy_match(mid, 1), 1.0, "cut:1",
                                tally=None) is True
    if how == "hand_back":
        status = store.queue.hand_back(mid, "taker:2", "its worker was told to stop")
    elif how == "give_back":
        status = store.queue.give_back(mid, "taker:2", "RuntimeError: referee crashed")
    else:
        status = "done" if store.results.finish(mid, name, toy_match(mid, 2), 1.0,
                                                "taker:2", tally=None) is False else "written twice"
    rows = store.pages.attempt_log(name, mid)
    assert status == store.pages.match(mid).status == "done"
    assert [(a.worker, a.outcome) for a in rows] == [("cut:1", "done"),
                                                           ("taker:2", "counted")], rows
    assert all(a.ended_at is not None for a in rows), rows
    assert store.results.record(mid) == toy_match(mid, 1) and store.results.count(name) == 1
