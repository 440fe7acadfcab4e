"""``arena soak``: many matches between sample bots of every language, each record verified.

A soak is a command, not a test: it plays as long as it is asked to and reports every fault a
bot was charged with and every record that does not replay. A sample bot should never be
charged, so any fault here is a bug in that bot or in the referee.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from referee.seats.manifest import bot_argument
from referee.match.local import run_match
from referee.match.matchfile import MatchFile
from referee.match.spec import MatchSpec

_SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"
DEFAULT_BOTS = tuple(str(_SAMPLES / b) for b in ("python/random", "node", "python/greedy", "cpp"))


def soak(variants: list[str], matches: int, deals: int, bots: list[str], seed: str,
         keep: Path | None = None, out=sys.stdout) -> int:
    """Play ``matches`` matches of ``deals`` deals per variant, rotating ``bots`` through the
    seats; 0 when no bot was charged with a fault and every record verified, else 1."""
    manifests = [bot_argument(b) for b in bots]
    problems: list[str] = []
    played = decisions = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="arena-soak-") as tmp:
        for variant in variants:
            for i in range(matches):
                shift = i % len(manifests)
                seats = [manifests[(seat + shift) % len(manifests)] for seat in range(4)]
                match_id = f"soak-{variant}-{i}"
                spec = MatchSpec(match_id=match_id, variant=variant, seed=f"{seed}:{i}",
                                 max_deals=deals, seat_names=[m.label for m in seats])
                _, record, runner = run_match(spec, list(seats), Path(tmp) / match_id)
                played += 1
                decisions += len(runner.timings)
                # the record as it would be read back
                match = MatchFile.from_dict(json.loads(json.dumps(record)), match_id)
                result = match.result
                assert result is not None  # a record read back states its result
                found = [f"{match_id}: seat {f.seat} ({seats[f.seat].label}) {f.kind}: "
                         f"{f.reason}" for f in match.faults]
                if result.forfeit and not found:
                    found.append(f"{match_id}: forfeit {result.forfeit}")
                found += [f"{match_id}: {p}" for p in match.verify()]
                if found and keep is not None:
                    keep.mkdir(parents=True, exist_ok=True)
                    (keep / f"{match_id}.json").write_text(json.dumps(record))
                problems += found
                status = "ok" if not found else f"{len(found)} problem(s)"
                print(f"[{played}/{len(variants) * matches}] {match_id}: "
                      f"{len(result.deals)} deals, {len(runner.timings)} decisions, "
                      f"{status}", file=out, flush=True)
    elapsed = time.perf_counter() - started
    print(f"soak: {played} matches, {decisions} decisions in {elapsed:.1f} s; "
          f"{len(problems)} problem(s)", file=out)
    for p in problems:
        print(f"  {p}", file=out)
    if problems and keep is not None:
        print(f"records of the matches with problems: {keep}", file=out)
    return 1 if problems else 0
