"""``arena bench league``: what Celery dispatch costs per match against the local mode, and how
many deals an hour a league of external bots plays in each way of taking events; every figure
over several runs with the order of the modes alternated, all on the same kind of store.

1. Dispatch, on the same matches (two-deck-fry, greedy against random) in every mode:
   - direct: each match played by the match function's ``play`` alone (a referee process and
     four bots), one after another: no store, no pool;
   - local: the season in the local mode (a process pool of one);
   - celery: the same season through Redis and one ``arena worker`` process.
   Local and Celery use one store (PostgreSQL), so the difference between them is Celery's.
   Overhead per match is the wall time per match less the time of the match itself (measured
   inside the match function), so the spread of match times between runs does not hide it.
2. Throughput: a season of four external Python random bots in the local mode with a worker per
   cpu, once with the bots taking notices (today's default) and once with the bots taking their
   events with their requests (``Hello.event_delivery``: ``random/with-requests.toml``), the same
   matches and seeds; deals an hour and matches a minute per core of each, and their ratio.

``arena bench workers`` measures how the worker count scales.
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

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots" / "python"

DISPATCH = ("direct", "local", "celery")
DELIVERY = {"notices": SAMPLES / "random", "with-requests": SAMPLES / "random" / "with-requests.toml"}
"""The two ways of taking events, each as the random bot's manifest that asks for it."""


def season_file(folder: Path, name: str, sets: int, per: int, bots: list[tuple[str, Path]],
                variant: str = "two-deck-fry") -> Path:
    """A season file in ``folder`` of ``bots`` ((name, manifest) pairs)."""
    text = (f'name = "{name}"\nvariant = "{variant}"\ndeal_sets = {sets}\n'
            f'deals_per_set = {per}\nseed = "bench"\n')
    for bot_name, manifest in bots:
        text += f'[[bots]]\nmanifest = "{manifest}"\nname = "{bot_name}"\n'
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


def start_workers(n: int, db: str, broker: str, logdir: Path):
    import subprocess
    import sys
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(root / "protos")]))
    procs = []
    for i in range(n):
        log = logdir / f"worker{i}-{uuid.uuid4().hex[:4]}.log"
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


def _spread(values: list[float], fmt: str = "{:.2f}") -> str:
    """``median (min - max)`` of one figure over the runs."""
    return (f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))} - "
            f"{fmt.format(max(values))})")


def _order(modes: tuple[str, ...], run: int) -> tuple[str, ...]:
    """The modes in run ``run``'s order: forwards in even runs, backwards in odd ones."""
    return modes if run % 2 == 0 else tuple(reversed(modes))


def bench_league(matches: int, deals_per_set: int, pg_url: str, broker: str, runs: int = 3,
                 league_matches: int | None = None) -> int:
    """Both parts of the module docstring, ``runs`` times each; prints every run and the median
    and range of each figure."""
    import redis

    from scheduler.store import Store
    from tools.benchengine import machine
    store = Store(pg_url)
    redis.Redis.from_url(broker).flushdb()
    workers = os.cpu_count() or 2
    league_matches = league_matches or matches
    print(f"command      arena bench league --matches {matches} --deals-per-set {deals_per_set} "
          f"--runs {runs}" + (f" --league-matches {league_matches}"
                              if league_matches != matches else ""))
    print(f"machine      {machine()}, python {platform.python_version()}; Redis {broker}, "
          f"store {pg_url} for the local mode and Celery alike")
    dispatch_runs: list[dict[str, tuple[float, float]]] = []
    throughput_runs: list[dict[str, float]] = []
    per_core_runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as folder:
        tmp = Path(folder)  # season files, records and bot logs: gone afterwards
        name = f"bench-{uuid.uuid4().hex[:6]}"
        season = load_season(season_file(tmp, name, max(1, matches // 2), deals_per_set,
                                         [("greedy", SAMPLES / "greedy"),
                                          ("random", SAMPLES / "random")]))
        plans = season.plan()
        n = len(plans)
        leagues = {}
        for mode, manifest in DELIVERY.items():
            league_name = f"{name}-{mode}"
            leagues[mode] = load_season(season_file(
                tmp, league_name, max(1, league_matches // 2), deals_per_set,
                [("random-a", manifest), ("random-b", manifest)]))
        print(f"dispatch     {n} duplicate two-deck-fry matches of {deals_per_set} deals, greedy "
              "against random (four bot processes and a referee process each); order of the "
              "modes alternated run by run")
        try:
            for run in range(runs):
                got: dict[str, tuple[float, float]] = {}
                for mode in _order(DISPATCH, run):
                    got[mode] = _dispatch(mode, season, plans, store, broker, tmp / f"r{run}")
                dispatch_runs.append(got)
                line = "; ".join(f"{m} {got[m][0]:.3f} s/match, outside it "
                                 f"{got[m][1] * 1000:.1f} ms" for m in DISPATCH)
                print(f"  run {run + 1}     {line}", flush=True)
            n_league = len(leagues["notices"].plan())
            print(f"throughput   {n_league} two-deck-fry matches of {deals_per_set} deals "
                  f"between four external Python random bots, local mode with {workers} "
                  "workers; order alternated run by run")
            for run in range(runs):
                got_t: dict[str, float] = {}
                got_c: dict[str, float] = {}
                for mode in _order(tuple(DELIVERY), run):
                    got_t[mode], got_c[mode] = _throughput(leagues[mode], store, tmp, workers)
                throughput_runs.append(got_t)
                per_core_runs.append(got_c)
                print(f"  run {run + 1}     " + "; ".join(
                    f"{m} {got_t[m]:,.0f} deals/h, {got_c[m]:.2f} matches/min/core"
                    for m in DELIVERY), flush=True)
        finally:
            store.seasons.delete(name)
            for s in leagues.values():
                store.seasons.delete(s.name)

    match_s = [r["direct"][0] for r in dispatch_runs]
    print("over the runs (median and range):")
    for mode in DISPATCH:
        print(f"  {mode:<10} {_spread([r[mode][0] for r in dispatch_runs], '{:.3f}')} s/match; "
              f"outside the match "
              f"{_spread([r[mode][1] * 1000 for r in dispatch_runs], '{:.1f}')} ms/match")
    extra = [100 * (r["celery"][1] - r["local"][1]) / m for r, m in zip(dispatch_runs, match_s)]
    against_direct = [100 * r["celery"][1] / m for r, m in zip(dispatch_runs, match_s)]
    print(f"overhead     Celery over the local mode, % of match time: {_spread(extra, '{:+.2f}')}"
          f" (goal <= 2%); Celery and the store against direct play: "
          f"{_spread(against_direct, '{:+.2f}')}%")
    for mode in DELIVERY:
        print(f"  {mode:<13} {_spread([r[mode] for r in throughput_runs], '{:,.0f}')} deals/h; "
              f"{_spread([r[mode] for r in per_core_runs])} matches/min/core "
              f"({deals_per_set}-deal matches, {workers} workers on {os.cpu_count()} cpus)")
    ratios = [r["with-requests"] / r["notices"] for r in throughput_runs]
    print(f"throughput   with-requests / notices deals per hour: {_spread(ratios)} "
          f"(goal >= 2x)")
    return 0


def _dispatch(mode, season, plans, store, broker, folder) -> tuple[float, float]:
    """(wall s per match, s per match outside the match itself) of one mode over the season."""
    from scheduler.execute import play
    from scheduler.league import open_season, run_distributed, run_local
    n = len(plans)
    if mode == "direct":
        t = time.perf_counter()
        times = []
        for p in plans:
            s = time.perf_counter()
            play(season.match_spec(p), folder / "direct" / p.match_id)
            times.append(time.perf_counter() - s)
        wall = time.perf_counter() - t
        return wall / n, wall / n - statistics.mean(times)
    store.seasons.delete(season.name)  # the same name again: the same match ids and seeds
    open_season(season, store, workdir=folder, check=False)
    if mode == "local":
        t = time.perf_counter()
        run_local(store, season.name, workers=1, progress=False)
        wall = time.perf_counter() - t
    else:
        folder.mkdir(parents=True, exist_ok=True)
        procs = start_workers(1, store.url, broker, folder)
        try:
            t = time.perf_counter()
            run_distributed(store, season.name, broker, poll_s=0.05, progress=False)
            wall = time.perf_counter() - t
        finally:
            stop_workers(procs)
    inner = statistics.mean(m.duration_s for m in store.pages.matches(season.name))
    return wall / n, wall / n - inner


def _throughput(season, store, folder, workers) -> tuple[float, float]:
    """Deals an hour, and matches a minute per core, of the season played whole in the local
    mode with ``workers``."""
    from scheduler.league import open_season, run_local
    store.seasons.delete(season.name)
    open_season(season, store, workdir=folder, check=False)
    t = time.perf_counter()
    counts = run_local(store, season.name, workers=workers, progress=False)
    wall = time.perf_counter() - t
    if counts.failed:
        raise RuntimeError(f"season {season.name}: {counts.failed} match(es) failed")
    matches = len(season.plan())
    deals = season.config.deals_per_set * matches  # every match plays a whole deal set
    return deals / wall * 3600, matches / wall * 60 / (os.cpu_count() or 1)
