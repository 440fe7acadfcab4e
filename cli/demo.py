"""``arena demo``: a small season of the sample bots on this machine, its standings, and a
check that every match record replays."""

from __future__ import annotations

import os
from pathlib import Path

from cli.common import existing_store, unsandboxed_option
from cli.season import SeasonRun, run_season

ROOT = Path(__file__).resolve().parent.parent


def cmd_demo(args) -> int:
    """A small season of the four Python sample bots on this machine (SQLite, local
    processes), its standings, and a check that every match record replays."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    db_file = (out / "demo.db").resolve()
    for stale in out.glob("demo.db*"):  # a fresh season every time
        stale.unlink()
    db = f"sqlite:///{db_file}"
    code = run_season(SeasonRun(str(ROOT / "seasons" / "demo.toml"), db=db,
                                workers=args.workers, workdir=str(out / "checks"),
                                unsandboxed=args.unsandboxed))
    if code != 0:
        return code
    store = existing_store(db, "arena demo: no season demo")
    rows = store.pages.matches("demo")
    bad = [row.id for row in rows if (m := store.results.record(row.id)) is None or m.verify()]
    print(f"\n{len(rows) - len(bad)} of {len(rows)} match records replay and verify; for "
          f"example:\n  arena replay {rows[0].id} --db {db} --verify\n"
          f"  arena replay {rows[0].id} --db {db} --seat 0\n"
          f"  arena standings demo --db {db} --json")
    return 1 if bad else 0


def register(sub) -> None:
    demo = sub.add_parser("demo", help="a small season of the sample bots, with standings")
    demo.add_argument("--workers", type=int, default=max(1, os.cpu_count() or 1))
    demo.add_argument("--out", default="records")
    unsandboxed_option(demo)
    demo.set_defaults(func=cmd_demo)
