"""``arena export``: every decision of a season's stored matches as rows for research (JSON
lines or parquet; ``lab.export``, docs/lab.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from cli.common import db_url
from cli.text import visible

PROGRESS_EVERY = 200  # matches between two progress lines


def cmd_export(args) -> int:
    """Exit 0: exported; 1: some records did not replay (left out, named); 2: bad input (no
    such season or store, parquet without --out, ...)."""
    from lab.export import ExportError, check_season, export_season, open_sink
    from scheduler.store import StoreError, open_store
    every = args.progress_every
    try:
        if every < 1:
            raise ExportError(f"--progress-every {every}: expected 1 or more")
        store = open_store(db_url(args), create=False)
        check_season(store, args.season)
        sink = open_sink(args.format, Path(args.out) if args.out else None, sys.stdout,
                         args.full)
    except (ExportError, StoreError) as e:
        print(f"arena export: {visible(e)}", file=sys.stderr)
        return 2

    def progress(tally) -> None:
        if not args.no_progress and tally.matches % every == 0:
            print(f"arena export {args.season}: {tally.matches} matches, {tally.rows} rows, "
                  f"{tally.seconds:.1f} s", file=sys.stderr, flush=True)

    tally = export_season(store, args.season, sink, full=args.full, progress=progress)
    where = f" to {args.out}" if args.out else ""
    print(f"arena export {args.season}: {tally.rows} rows of {tally.matches} matches"
          f"{where} in {tally.seconds:.1f} s ({'full records' if args.full else 'seat view'})",
          file=sys.stderr)
    if tally.sealed:
        print(f"arena export: left out {tally.sealed} sealed match(es): their records stay "
              "sealed until the matches on their cards are played", file=sys.stderr)
    if tally.without_record:
        print(f"arena export: left out {tally.without_record} done match(es) without a "
              "stored record", file=sys.stderr)
    for match_id, why in tally.unreadable:
        print(f"arena export: left out {visible(match_id, one_line=True)}: its record does "
              f"not replay: {visible(why, one_line=True)}", file=sys.stderr)
    return 1 if tally.unreadable else 0


def register(sub) -> None:
    p = sub.add_parser("export", help="every decision of a season's matches as rows for "
                       "research (JSON lines or parquet)",
                       description="One row per decision a seat made in the season's played "
                       "matches: ids, the seat's observation and legal hint as a stdio bot "
                       "reads them, the events it was shown since its previous decision, its "
                       "action and time, and the deal's result for its team. Sealed matches "
                       "are left out. Row schema: docs/lab.md, 'Exporting a season'.")
    p.add_argument("season", help="the season's name")
    p.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl")
    view = p.add_mutually_exclusive_group()
    view.add_argument("--seat-view", dest="full", action="store_false",
                      help="only what each seat could see (the default)")
    view.add_argument("--full", dest="full", action="store_true",
                      help="full records: every hand and the kitty at each decision too")
    p.set_defaults(full=False)
    p.add_argument("--db", help="the store (default: $ARENA_DB or the local SQLite store)")
    p.add_argument("--out", metavar="FILE", help="the file written (needed for parquet; JSON "
                   "lines go to standard output without it)")
    p.add_argument("--progress-every", type=int, default=PROGRESS_EVERY, metavar="N",
                   help=f"a progress line on stderr every N matches (default {PROGRESS_EVERY})")
    p.add_argument("--no-progress", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_export)
