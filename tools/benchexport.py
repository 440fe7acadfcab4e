"""``arena bench export``: ``arena export``'s rows a second and peak memory over a large season,
and over a season a tenth of its size, to show the memory does not grow with the season.

A fresh SQLite store gets two duplicate seasons of two bots (``N/10`` and ``N`` matches of
``--deals`` deals each), opened through the league's own code and played without bot
processes: each match's deals from its spec's seeds in process, four random players
(``referee.play.selfplay``), a record as the referee makes one (the games, the result, a made-up
decision time for each decision) written by ``store.results.finish`` as a played match is.
Each season is then exported by ``arena export`` in a process of its own, in JSON lines and
in parquet, timed on the wall clock, with the child's peak resident memory (``MEASURED``).
"""

from __future__ import annotations

import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import referee.rules
from tools.benchengine import engine, machine

ROOT = Path(__file__).resolve().parent.parent
BOTS = ("greedy", "random")


def _season_file(folder: Path, name: str, matches: int, variant: str, deals: int) -> Path:
    """A duplicate round robin of two bots: ``matches`` matches (two a deal set)."""
    lines = [f'name = "{name}"', f'variant = "{variant}"', 'format = "round_robin"',
             "duplicate = true", f"deal_sets = {max(1, matches // 2)}",
             f"deals_per_set = {deals}", f'seed = "{name}"']
    for bot in BOTS:
        lines += ["[[bots]]", f'manifest = "{ROOT / "sample_bots" / "python" / bot}"']
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def played(spec, rng: random.Random):
    """The record of ``spec`` (a deal list) played in process by four random players, as
    the referee records a match: its games, each decision's time, the result."""
    from referee.match.matchfile import MatchFile
    from referee.match.results import DealResult, MatchResult, per_seat, per_team
    from referee.play.selfplay import play
    from referee.rules.events import DealEnded, Event
    from referee.rules.variants import rules_for
    rules = rules_for(spec.variant, spec.options)
    games, deals, timings = [], [], []
    for i, deal in enumerate(spec.deals):
        _, record, _ = play(rules, deal.seed, max_deals=1, levels=list(deal.levels),
                            dealer=deal.dealer, record=True)
        record.options = dict(spec.options)
        games.append(record)
        timings += [[seat, round(rng.lognormvariate(0.0, 1.0), 3)]
                    for seat, _ in record.actions if seat is not None]
        deals += [DealResult.of(i, e) for e in map(Event.from_dict, record.events)
                  if isinstance(e, DealEnded)]
    last = games[-1].result
    result = MatchResult(spec.match_id, rules.variant, winner_team=last.get("winner_team"),
                         strikes=(0, 0, 0, 0), forfeit=None, deals=tuple(deals),
                         levels=per_team(last["levels"]),
                         match_points=per_seat(last["match_points"])
                         if "match_points" in last else None,
                         titles=per_seat(last["titles"]) if "titles" in last else None,
                         sandbox="none")
    return MatchFile(spec.match_id, rules.variant, spec.options, rules.to_dict(),
                     per_seat(spec.seat_names), spec.time_control, games, [], result,
                     sandbox="none", engine=referee.rules.ENGINE,
                     extra={"refused_streams": [], "refused_streams_more": 0,
                            "timings": timings})


def generate(store, folder: Path, name: str, matches: int, variant: str, deals: int) -> int:
    """Season ``name`` of ``matches`` matches, every one played and stored; its rows (the
    decisions made)."""
    import io

    from referee.match.spec import MatchSpec
    from scheduler.league import open_season
    from scheduler.season import load_season
    from scheduler.stats.scores import match_tally
    open_season(load_season(_season_file(folder, name, matches, variant, deals)), store,
                workdir=folder, check=False, out=io.StringIO())
    rng = random.Random(name)
    decisions = 0
    for row in store.pages.matches(name):
        t = time.perf_counter()
        match = played(MatchSpec.from_dict(row.spec, row.id), rng)
        decisions += len(match.extra["timings"])
        store.results.finish(row.id, name, match, time.perf_counter() - t, "bench",
                             tally=match_tally(match.summary(), variant))
    return decisions


MEASURED = ("import sys\nfrom cli.main import main\nstatus = main(sys.argv[1:])\n"
            "try:\n    with open('/proc/self/status') as f:\n"
            "        peak = next(x.split()[1] for x in f if x.startswith('VmHWM:'))\n"
            "except OSError:\n    peak = '-'\n"
            "print(f'peak RSS KiB {peak}', file=sys.stderr)\nsys.exit(status)")
"""``arena``'s own entry point, then the process's peak resident memory as it ends (VmHWM: its
own, from its exec on; ``ru_maxrss`` would count the benchmark's memory the child had at its
fork, before its exec; that is the figure where ``/proc`` is not there)."""


def _export(url: str, season: str, fmt: str, out: Path) -> tuple[float, int]:
    """``arena export`` of ``season`` in a child process: its wall seconds and peak RSS
    (KiB)."""
    command = [sys.executable, "-c", MEASURED, "export", season, "--db", url, "--format", fmt,
               "--out", str(out), "--no-progress"]
    t = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    said = child.communicate()[1]
    wall = time.perf_counter() - t
    if child.returncode:
        raise SystemExit(f"arena bench export: arena {' '.join(command[3:])}: exit "
                         f"{child.returncode}\n{said[-2000:]}")
    peak = said.rstrip().rsplit(" ", 1)[-1]
    return wall, int(peak) if peak.isdigit() else resource.getrusage(
        resource.RUSAGE_CHILDREN).ru_maxrss


def bench_export(matches: int = 2000, variant: str = "two-deck-fry", deals: int = 1,
                 keep: Path | None = None) -> int:
    small = max(2, matches // 10)
    print(f"arena bench export --matches {matches} --variant {variant} --deals {deals}")
    print(f"machine: {machine()}\nengine: {engine()}")
    with tempfile.TemporaryDirectory(prefix="arena-bench-export-") as tmp:
        folder = keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if (folder / "bench.db").exists():
            raise SystemExit(f"arena bench export: --keep {folder}: it holds a store already "
                             "(bench.db); name a new folder")
        from scheduler.store import Store
        url = f"sqlite:///{folder / 'bench.db'}"
        store = Store(url)
        seasons = {}
        t = time.perf_counter()
        for n in (small, matches):
            name = f"bench-export-{n}"
            seasons[name] = (n, generate(store, folder, name, n, variant, deals))
        made = time.perf_counter() - t
        size = (folder / "bench.db").stat().st_size / 2**20
        total = sum(n for n, _ in seasons.values())
        print(f"generated: {total} matches ({', '.join(seasons)}) of {deals} deal(s), "
              f"random players in process, in {made:.1f} s ({total / made:.0f} matches/s); "
              f"store {size:.0f} MiB")
        peaks: dict[str, list[int]] = {}
        print("command: arena export SEASON --db URL --format FORMAT --out FILE --no-progress")
        print(f"{'format':<8} {'matches':>8} {'rows':>10} {'wall s':>8} {'rows/s':>8} "
              f"{'peak RSS MiB':>12} {'file MiB':>9}")
        for fmt in ("jsonl", "parquet"):
            for name, (n, rows) in seasons.items():
                out = folder / f"{name}.{fmt}"
                wall, peak = _export(url, name, fmt, out)
                peaks.setdefault(fmt, []).append(peak)
                print(f"{fmt:<8} {n:>8} {rows:>10} {wall:>8.1f} {rows / wall:>8.0f} "
                      f"{peak / 1024:>12.1f} {out.stat().st_size / 2**20:>9.1f}")
                if keep is None:
                    out.unlink()
        for fmt, (low, high) in peaks.items():
            print(f"peak RSS, {matches} matches over {small}: {fmt} {high / low:.2f}")
    return 0
