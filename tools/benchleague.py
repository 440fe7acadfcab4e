"""``arena bench league``: what Celery dispatch and the store cost per match, and two workers
against one, all on the same matches in the same run.

1. direct: each match played by the match function's ``play`` alone (a referee process and four
   bots), one after another: no store, no pool.
2. local: the season in the local mode (a process pool of one, SQLite).
3. celery x1: the same season through Redis and one ``arena worker`` process, PostgreSQL store.
4. celery x2: the same through two worker processes.

The matches are identical in every mode (same match ids, seeds and bots, so the seeded bots play
the same moves). Overhead per match is the wall time per match less the time of the match itself (measured
inside the match function), so the spread of match times between runs does not hide it; the
ratio of wall times against the local mode is printed beside it.
"""

from __future__ import annotations

import os
import platform
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from scheduler.season import load_season


def season_file(folder: Path, name: str, sets: int, per: int) -> Path:
    root = Path(__file__).resolve().parent.parent / "sample_bots" / "python"
    text = (f'name = "{name}"\nvariant = "two-deck-fry"\ndeal_sets = {sets}\n'
            f'deals_per_set = {per}\nseed = "bench"\n'
            f'[[bots]]\nmanifest = "{root / "greedy"}"\n[[bots]]\nmanifest = "{root / "random"}"\n')
    path = folder / "bench.toml"
    path.write_text(text)
    return path


def start_workers(n: int, db: str, broker: str, logdir: Path):
    import subprocess
    import sys
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(root / "protos")]))
    procs = []
    for i in range(n):
        log = logdir / f"worker{i}.log"
        procs.append((subprocess.Popen(
            [sys.executable, "-m", "cli", "worker", "--db", db, "--broker", broker,
             "--concurrency", "1", "--loglevel", "info",
             "--hostname", f"bench{i}-{uuid.uuid4().hex[:4]}@%h"],
            cwd=root, env=env, stdout=open(log, "wb"), stderr=subprocess.STDOUT,
            start_new_session=True), log))
    deadline = time.monotonic() + 60
    for p, log in procs:
        while "ready." not in log.read_text(errors="replace"):
            if time.monotonic() > deadline or p.poll() is not None:
                raise RuntimeError(f"worker did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)
    return [p for p, _ in procs]


def stop_workers(procs) -> None:
    import signal
    for p in procs:
        os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        p.wait(30)


def bench_league(matches: int, deals_per_set: int, pg_url: str, broker: str) -> int:
    from scheduler.execute import play
    from scheduler.league import open_season, run_distributed, run_local
    from scheduler.store import Store
    sets = max(1, matches // 2)
    name = f"bench-{uuid.uuid4().hex[:6]}"
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as folder:
        tmp = Path(folder)  # the season file, records and bot logs: gone afterwards
        season = load_season(season_file(tmp, name, sets, deals_per_set))
        plans = season.plan()
        n = len(plans)
        walls: dict[str, float] = {}
        per_match: dict[str, list[float]] = {}

        # 1. direct
        t = time.perf_counter()
        direct = []
        for p in plans:
            s = time.perf_counter()
            play(season.match_spec(p), tmp / "direct" / p.match_id)
            direct.append(time.perf_counter() - s)
        walls["direct"] = time.perf_counter() - t
        per_match["direct"] = direct

        # 2. local mode, one worker, SQLite
        local = Store(f"sqlite:///{tmp}/local.db")
        open_season(season, local, workdir=tmp, check=False)
        t = time.perf_counter()
        run_local(local, name, workers=1, progress=False)
        walls["local"] = time.perf_counter() - t
        per_match["local"] = [m["duration_s"] for m in local.matches(name)]

        # 3./4. Celery with one and two workers, PostgreSQL; the season (same name, so the same
        # match ids) is deleted before each run
        import redis
        redis.Redis.from_url(broker).flushdb()
        remote = Store(pg_url)
        for label, count in (("celery x1", 1), ("celery x2", 2)):
            remote.delete_season(name)
            open_season(season, remote, workdir=tmp, check=False)
            procs = start_workers(count, pg_url, broker, tmp)
            try:
                t = time.perf_counter()
                run_distributed(remote, name, broker, poll_s=0.05, progress=False)
                walls[label] = time.perf_counter() - t
            finally:
                stop_workers(procs)
            rows = sorted(remote.matches(name), key=lambda m: m["started_at"])
            per_match[label] = [m["duration_s"] for m in rows]
            if count == 1:  # where the time outside the match goes, from the store's timestamps
                gaps = [b["started_at"] - a["finished_at"] for a, b in zip(rows, rows[1:])]
                in_task = [m["finished_at"] - m["started_at"] - m["duration_s"] for m in rows]
                breakdown = (statistics.mean(gaps), statistics.mean(in_task))
        remote.delete_season(name)

    print(f"command      arena bench league --matches {matches} --deals-per-set {deals_per_set}")
    from tools.benchengine import cpu_model
    print(f"machine      {platform.machine()} {cpu_model()}, {os.cpu_count()} cpus, python "
          f"{platform.python_version()}; Redis {broker}, PostgreSQL {pg_url}")
    print(f"matches      {n} duplicate two-deck-fry matches of {deals_per_set} deals, greedy "
          f"against random (four bot processes and a referee process each)")
    outside = {}
    for label, wall in walls.items():
        inner = statistics.mean(per_match[label])
        outside[label] = wall / n - inner if label != "celery x2" else None
        extra = "" if outside[label] is None else (
            f"; outside it {outside[label] * 1000:.1f} ms/match")
        print(f"{label:<12} wall {wall:7.2f} s = {wall / n:.3f} s/match (the match itself: mean "
              f"{inner:.3f} s{extra})")
    match_s = statistics.mean(per_match["direct"])
    for label, what in (("local", "process pool + SQLite store"),
                        ("celery x1", "Celery dispatch + PostgreSQL store")):
        print(f"outside      {label}: {what}: {outside[label] * 1000:.1f} ms/match = "
              f"{100 * outside[label] / match_s:.2f}% of match time")
    extra = outside["celery x1"] - outside["local"]
    print(f"overhead     Celery over the local mode: {extra * 1000:+.1f} ms/match = "
          f"{100 * extra / match_s:+.2f}% of match time (goal <= 2%)")
    print(f"breakdown    celery x1: from one match stored to the next claimed "
          f"{breakdown[0] * 1000:.1f} ms (ack, next message, task start); claim and store "
          f"inside the task {breakdown[1] * 1000:.1f} ms")
    print(f"baseline     celery x1 wall / local wall = {walls['celery x1'] / walls['local']:.3f}; "
          f"local wall / direct wall = {walls['local'] / walls['direct']:.3f}")
    print(f"two workers  celery x2 / celery x1 wall = "
          f"{walls['celery x2'] / walls['celery x1']:.2f} (speed-up "
          f"{walls['celery x1'] / walls['celery x2']:.2f}x on {os.cpu_count()} cpus)")
    return 0
