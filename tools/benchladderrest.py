"""The CPU a ladder costs with nothing new: a settled ladder resting against the same ladder
playing at full rate, each kept going for ``--seconds`` on this machine (local processes,
SQLite), its process and every child counted (``getrusage``).

    arena bench ladder-rest [--seconds 60]

The settled ladder is three versions with 100 drawn pairs per neighbouring pair already scored
(``Rest``: tied as far as the ladder can tell), and ``rest_pairs_per_hour = 0`` so that only
the resting loop is measured; at the default rate, 6 pairs an hour add the CPU of 12 matches
an hour. The full-rate ladder is the same three versions unplaced."""

from __future__ import annotations

import argparse
import json
import platform
import re
import resource
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _ladder(where: Path, settled: bool, seconds: float) -> tuple[float, int]:
    from scheduler.ladder import LadderRun
    from scheduler.league import open_season
    from scheduler.registry.submissions import submit
    from scheduler.season import load_season
    from scheduler.store import open_store
    from scheduler.store.schema import pair_scores
    store = open_store(f"sqlite:///{where / 'ladder.db'}")
    refs = []
    for i in range(3):
        folder = where / f"v{i}"
        shutil.copytree(ROOT / "sample_bots" / "python" / "random", folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
        toml = (folder / "bot.toml").read_text()
        (folder / "bot.toml").write_text(re.sub(r'(?m)^name = .*$', f'name = "v{i}"', toml))
        refs.append(submit(store, folder).version.ref)
    path = where / "ladder.toml"
    path.write_text('name = "rest"\nformat = "ladder"\nvariant = "two-deck-fry"\n'
                    'deals_per_set = 1\nqueue_ahead = 4\nplacement_pairs = 1\n'
                    'rest_pairs_per_hour = 0\nbots = "every ready version"\n')
    season = load_season(path)
    open_season(season, store, workdir=where / "w", check=False, out=None)
    if settled:
        runner = LadderRun(store, season, out=open("/dev/null", "w"))
        runner.admit()
        now = time.time()
        with store.engine.begin() as c:
            c.execute(pair_scores.insert(), [
                {"season": "rest", "cluster": f"seeded-{k:05d}", "bot_a": refs[k % 3],
                 "bot_b": refs[(k + 1) % 3], "deals": 1, "score_a": 0.5, "diff_a": 0.0,
                 "deal_diffs_json": "[0]", "written_at": now + k * 1e-6} for k in range(300)])
    runner = LadderRun(store, season, workers=1, out=open("/dev/null", "w"))
    stop = threading.Event()
    before = _cpu()
    thread = threading.Thread(target=runner.run, kwargs={"stop": stop})
    thread.start()
    time.sleep(seconds)  # (the measured span)
    stop.set()
    thread.join()
    return _cpu() - before, store.seasons.counts("rest")["done"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=60.0)
    args = p.parse_args(argv)
    out: dict[str, Any] = {"machine": f"{platform.node()} {platform.machine()}, "
                      f"{__import__('os').cpu_count()} CPUs",
           "command": "arena bench ladder-rest --seconds %g" % args.seconds}
    for label, settled in (("resting", True), ("full rate", False)):
        with tempfile.TemporaryDirectory(prefix="arena-rest-") as tmp:
            cpu, done = _ladder(Path(tmp), settled, args.seconds)
        out[label] = {"cpu_s": round(cpu, 2), "seconds": args.seconds,
                      "cores": round(cpu / args.seconds, 4), "matches_done": done}
    out["ratio"] = round(out["resting"]["cores"] / max(out["full rate"]["cores"], 1e-9), 4)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
