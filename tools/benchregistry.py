"""``arena bench registry``: what a worker pays to start a submitted bot version, cold (fetch
from the store, verify, unpack, build) against warm (the verified cache), in the same run.

For each sample bot (Python, Node.js built with ``npm ci`` from its vendored cache, C++ built
with ``make``), submitted once to a fresh SQLite store: ``rounds`` cold starts, each into an
empty cache, alternating with warm starts on the cache the previous cold start filled; a start
is ``scheduler.registry.versions.materialise`` up to the folder the referee launches the bot
from.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

from tools.benchengine import machine

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ("python/random", "node", "cpp")


def bench_registry(rounds: int = 3) -> int:
    from referee.match.spec import SeatBot
    from scheduler.store import Store
    from scheduler.registry.versions import materialise, pin_portable, submit
    print(f"arena bench registry --rounds {rounds}\nmachine: {machine()}")
    with tempfile.TemporaryDirectory(prefix="arena-bench-registry-") as folder:
        tmp = Path(folder)
        store = Store(f"sqlite:///{tmp}/bench.db")
        print(f"{'bot':<22} {'archive':>9} {'cold ms (median)':>17} {'warm ms (median)':>17} "
              f"{'cold / warm':>12}")
        for sample in SAMPLES:
            version = submit(store, ROOT / "sample_bots" / sample).version
            bot = SeatBot(version.name, pin_portable(version), version_hash=version.content_hash)
            cold, warm = [], []
            for r in range(rounds):
                cache = tmp / f"cache-{version.name}-{r}"
                t = time.perf_counter()
                materialise(store, bot, cache)
                cold.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                materialise(store, bot, cache)
                warm.append((time.perf_counter() - t) * 1000)
                shutil.rmtree(cache, ignore_errors=True)
            c, w = statistics.median(cold), statistics.median(warm)
            print(f"{version.ref:<22} {version.size / 1024:>7.0f} K {c:>17.1f} {w:>17.1f} "
                  f"{c / w:>11.1f}x")
    return 0
