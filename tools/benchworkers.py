"""``arena bench workers``: a season's matches per hour with 1, 2 and 4 worker processes.

The same season (same match ids, seeds and bots, so the seeded bots play the same moves) is
played through Redis by N ``arena worker`` processes of one pool process each, on a PostgreSQL
store, for each N. The clock runs from the first match enqueued to the last one stored (worker
start-up excluded: the workers are ready before the season is opened). Matches per hour is the
season's size over that wall time; the scaling efficiency of N workers is their rate over N
times the rate of one (1.0: linear). The load average before each run is printed, since other
work on the machine takes its cores.
"""

from __future__ import annotations

import os
import platform
import sys
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from house import settings
from tools.benchleague import SAMPLES, season_file, stop_workers, start_workers


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def bench_workers(counts: list[int], matches: int, deals: int, pg_url: str,
                  broker: str) -> int:
    import redis

    from scheduler.league import open_season, run_distributed
    from scheduler.season import load_season
    from scheduler.store import Store
    name = f"benchw-{uuid.uuid4().hex[:6]}"
    rates: dict[int, float] = {}
    walls: dict[int, float] = {}
    inner: dict[int, float] = {}
    loads: dict[int, str] = {}
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as folder:
        tmp = Path(folder)
        season = load_season(season_file(tmp, name, max(1, matches // 2), deals,
                                         [("greedy", SAMPLES / "greedy"),
                                          ("random", SAMPLES / "random")]))
        n = len(season.plan())
        remote = Store(pg_url)
        for count in counts:
            redis.Redis.from_url(broker).flushdb()
            remote.seasons.delete(name)
            procs = start_workers(count, pg_url, broker, tmp)
            try:
                loads[count] = _load()
                open_season(season, remote, workdir=tmp, check=False)
                t = time.perf_counter()
                counts_ = run_distributed(remote, name, broker, poll_s=0.05, progress=False)
                walls[count] = time.perf_counter() - t
            finally:
                stop_workers(procs)
            if counts_["done"] != n:
                raise RuntimeError(f"{count} workers: {counts_} of {n} matches")
            rates[count] = n / walls[count] * 3600
            inner[count] = statistics.mean(m.duration_s or 0.0 for m in remote.pages.matches(name))
        remote.seasons.delete(name)
    from tools.benchengine import cpu_model
    shown = ",".join(map(str, counts))
    print(f"command      arena bench workers --processes {shown} --matches {matches} "
          f"--deals {deals}")
    print(f"machine      {platform.machine()} {cpu_model()}, {os.cpu_count()} cpus, python "
          f"{platform.python_version()}; Redis {broker}, PostgreSQL {pg_url}")
    print(f"season       {n} duplicate two-deck-fry matches of {deals} deal(s), greedy against "
          "random (four bot processes and a referee process each); one pool process per worker")
    base = rates[counts[0]] / counts[0]
    for count in counts:
        eff = rates[count] / (count * base)
        print(f"{count} worker(s)  wall {walls[count]:7.2f} s  {rates[count]:8.0f} matches/h  "
              f"efficiency {eff:.2f}  (a match itself: mean {inner[count]:.2f} s; load before "
              f"{loads[count]})")
    print(f"baseline     {counts[0]} worker(s): {rates[counts[0]]:.0f} matches/h; ratios "
          + ", ".join(f"x{c}: {rates[c] / rates[counts[0]]:.2f}" for c in counts[1:]))
    return 0


def main(args) -> int:
    counts = []
    for part in str(args.processes).split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            print(f"arena bench workers: --processes {args.processes!r}: expected worker "
                  "counts such as 1,2,4", file=sys.stderr)
            return 2
        counts.append(int(part))
    pg = args.db or settings.TEST_PG.value()
    broker = args.broker or "redis://127.0.0.1:6379/11"
    return bench_workers(counts, args.matches, args.deals, pg, broker)
