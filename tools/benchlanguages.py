"""``arena bench languages``: each sample language's decision time, for the language table of
``docs/languages.md``.

Each sample (Python ``greedy``, Java, Go, Rust, C++, Node.js) is copied without build output,
built from source in the build sandbox into a fresh bot cache (the build timed), and plays one
sandboxed match of ``--deals`` deals on seats 0 and 2 against the Python ``random`` sample on
seats 1 and 3 (the baseline, measured in the same match). The figures are the referee's own
charge of each decision (``MatchFile.decision_times``): median and 95th percentile of the
sample's two seats pooled, and the same of the baseline's.
"""

from __future__ import annotations

import math
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = {"python": "python/greedy", "java": "java", "go": "go", "rust": "rust", "cpp": "cpp",
           "node": "node", "go-grpc": "go-grpc", "cpp-stdio": "cpp-stdio",
           "node-stdio": "node-stdio"}
"""Each language's sample folder under ``sample_bots/``."""


def _pooled(seats: set[int], record: dict) -> tuple[float, float]:
    """Median and p95 (nearest rank, as ``MatchFile.decision_times``) over ``seats``' decisions."""
    from referee.match.matchfile import nearest_rank
    ms = sorted(ms for seat, ms in record["timings"] if seat in seats)
    if not ms:
        return math.nan, math.nan
    return nearest_rank(ms, 0.5), nearest_rank(ms, 0.95)


def bench_languages(languages: list[str] | None = None, deals: int = 2,
                    variant: str = "two-deck-80", out=sys.stdout) -> int:
    """Build and play each language's sample; print a table. 1 if a sample faulted."""
    from referee.match.local import run_match
    from referee.match.matchfile import MatchFile
    from referee.match.spec import MatchSpec
    from referee.seats.build import built
    from referee.seats.manifest import BUILD_OUTPUT, load_manifest

    chosen = languages or list(SAMPLES)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    print(f"command      arena bench languages {' '.join(languages or [])}"
          f"{' ' if languages else ''}--deals {deals} --variant {variant}", file=out)
    print(f"machine      {cpu}, {os.cpu_count()} cpus, {platform.system()} "
          f"{platform.release()}, python {platform.python_version()}", file=out)
    print("measured     the referee's charge per decision (request out to answer read), the "
          "sample on seats 0 and 2 against the Python random sample on 1 and 3 in the same "
          "sandboxed match", file=out)
    print(f"{'language':10} {'build s':>8} {'decisions':>9} {'median ms':>10} {'p95 ms':>8} "
          f"{'random median':>14} {'random p95':>11} {'median / random':>16}", file=out)
    random = load_manifest(ROOT / "sample_bots" / "python" / "random")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="arena-bench-languages-") as tmp:
        work = Path(tmp)
        for language in chosen:
            source = work / "source" / language
            shutil.copytree(ROOT / "sample_bots" / SAMPLES[language], source,
                            ignore=shutil.ignore_patterns(*BUILD_OUTPUT))
            manifest = load_manifest(source)
            t = time.perf_counter()
            bot = built(manifest, work / "cache")
            build_s = time.perf_counter() - t if manifest.build else 0.0
            spec = MatchSpec(match_id=f"bench-{language}", variant=variant, seed=f"bench-{language}",
                             max_deals=deals, seat_names=[language, "random"] * 2)
            _, record, _ = run_match(spec, [bot, random, bot, random], work / f"match-{language}")
            problems = MatchFile.from_dict(record, spec.match_id).verify()
            if record["faults"] or problems:
                failed = 1
                first = record["faults"][0]["reason"] if record["faults"] else problems[0]
                print(f"{language:10} {len(record['faults'])} fault(s), {len(problems)} "
                      f"problem(s): {ascii(first[:200])}", file=out)
                continue
            med, p95 = _pooled({0, 2}, record)
            rmed, rp95 = _pooled({1, 3}, record)
            n = sum(1 for seat, _ in record["timings"] if seat in (0, 2))
            print(f"{language:10} {build_s:8.1f} {n:9d} {med:10.2f} {p95:8.2f} {rmed:14.2f} "
                  f"{rp95:11.2f} {med / rmed:16.2f}", file=out)
    return failed


if __name__ == "__main__":
    sys.exit(bench_languages(sys.argv[1:] or None))
