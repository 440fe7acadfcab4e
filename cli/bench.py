"""``arena bench``: the benchmarks (commands, not tests) of the engine, the referee's link,
the sandbox, the registry, the league, the store and the dashboard; each is a module of
``tools/``."""

from __future__ import annotations

import sys
from pathlib import Path

from cli.common import VARIANTS, variant_ids_or_exit


def cmd_bench_engine(args) -> int:
    from tools.benchengine import bench_engine
    for i, variant in enumerate([args.variant] if args.variant else variant_ids_or_exit()):
        if i:
            print()
        bench_engine(variant, args.deals, args.repeat)
    return 0


def cmd_bench_compare(args) -> int:
    from tools.benchcompare import bench_compare
    return bench_compare(args.other, args.variant or list(variant_ids_or_exit()), args.rounds,
                         args.deals)


def cmd_bench_link(args) -> int:
    if args.against is not None:
        from tools.benchlinkagainst import bench_link_against
        return bench_link_against(args.against, args.variant, args.deals, args.matches,
                                  args.rounds, args.events)
    from tools.benchlink import bench_link
    return bench_link(args.variant, args.deals, matches_each=args.matches)


def cmd_bench_sandbox(args) -> int:
    from tools.benchsandbox import bench_sandbox
    return bench_sandbox(args.starts, args.deals)


def cmd_bench_registry(args) -> int:
    from tools.benchregistry import bench_registry
    return bench_registry(args.rounds)


def cmd_bench_league(args) -> int:
    from tools.benchleague import bench_league
    return bench_league(args.matches, args.deals_per_set, args.pg, args.broker, args.runs,
                        args.league_matches)


def cmd_bench_store(args) -> int:
    from tools.benchstore import bench_store
    if args.matches < 1 or args.deals_per_set < 1 or args.rounds < 1:
        print("arena bench store: --matches, --deals-per-set and --rounds >= 1", file=sys.stderr)
        return 2
    return bench_store(args.matches, args.deals_per_set, getattr(args, "from"), args.other,
                       args.rounds, args.unsandboxed)


def cmd_bench_web(args) -> int:
    from tools.benchweb import bench_web
    return bench_web(args.matches, args.repeat)


def cmd_bench_languages(args) -> int:
    from tools.benchlanguages import SAMPLES, bench_languages
    unknown = [name for name in args.language if name not in SAMPLES]
    if unknown:
        print(f"arena bench languages: unknown language {unknown[0]!r}: expected some of "
              f"{', '.join(SAMPLES)}", file=sys.stderr)
        return 2
    return bench_languages(args.language or None, args.deals, args.variant)


def cmd_bench_matchmaking(args) -> int:
    from tools.benchmatchmaking import bench_matchmaking
    if args.bots < 2 or args.runs < 1 or args.rounds < 1 or not 0 < args.share <= 1:
        print("arena bench matchmaking: --bots >= 2, --runs >= 1, --rounds >= 1 and 0 < "
              "--share <= 1", file=sys.stderr)
        return 2
    return bench_matchmaking(args.bots, args.gap, args.runs, args.rounds, args.share,
                             args.draw)


def cmd_bench_ladder_rest(args) -> int:
    from tools.benchladderrest import main
    return main(["--seconds", str(args.seconds)])


def cmd_bench_export(args) -> int:
    from tools.benchexport import bench_export
    if args.matches < 20 or args.deals < 1:
        print("arena bench export: --matches >= 20 and --deals >= 1", file=sys.stderr)
        return 2
    return bench_export(args.matches, args.variant, args.deals,
                        Path(args.keep) if args.keep else None)


def register(sub) -> None:
    variants = VARIANTS
    bench = sub.add_parser("bench", help="benchmarks (commands, not tests)")
    bsub = bench.add_subparsers(dest="bench_command", required=True)
    eng = bsub.add_parser("engine", help="random legal deals in process on one core")
    eng.add_argument("--variant", choices=variants, help="one variant (default: each in turn)")
    eng.add_argument("--deals", type=int, default=2000)
    eng.add_argument("--repeat", type=int, default=5, help="rounds; the median is reported")
    eng.set_defaults(func=cmd_bench_engine)

    cmp_ = bsub.add_parser("compare", help="this tree's engine against another checkout's: "
                           "arena bench engine of each, alternated, and instructions counted")
    cmp_.add_argument("other", help="the other checkout's folder (e.g. a git worktree)")
    cmp_.add_argument("--variant", nargs="+", choices=variants, default=None,
                      help="variants (default: each)")
    cmp_.add_argument("--rounds", type=int, default=3)
    cmp_.add_argument("--deals", type=int, default=2000)
    cmp_.set_defaults(func=cmd_bench_compare)

    link = bsub.add_parser("link", help="referee round trip against a bare grpcio echo")
    link.add_argument("--variant", default="two-deck-fry", choices=variants)
    link.add_argument("--deals", type=int, default=3)
    link.add_argument("--matches", type=int, default=3,
                      help="matches each way (the start-up's medians are over them)")
    link.add_argument("--against", type=Path, default=None, metavar="OTHER",
                      help="another checkout (a worktree of an older commit): both trees' "
                      "round trip and start-up side by side, rounds alternated")
    link.add_argument("--rounds", type=int, default=3, help="with --against: rounds")
    link.add_argument("--events", choices=("notices", "with-requests"), default="with-requests",
                      help="with --against: how the bots take their events")
    link.set_defaults(func=cmd_bench_link)

    sb = bsub.add_parser("sandbox", help="the sandbox's cost: per seat start and per "
                         "decision, sandboxed against unsandboxed")
    sb.add_argument("--starts", type=int, default=20, help="seat starts timed each way")
    sb.add_argument("--deals", type=int, default=3, help="deals of each match (three each way)")
    sb.set_defaults(func=cmd_bench_sandbox)

    br = bsub.add_parser("registry", help="a submitted bot version's start on a worker: cold "
                         "(fetch, verify, unpack, build) against warm (its cache)")
    br.add_argument("--rounds", type=int, default=3, help="cold and warm starts of each bot")
    br.set_defaults(func=cmd_bench_registry)

    lg = bsub.add_parser("league", help="Celery dispatch overhead per match against the local "
                         "mode, and deals an hour of external bots taking notices or their "
                         "events with their requests; modes alternated over --runs")
    lg.add_argument("--matches", type=int, default=8, help="matches of the dispatch part")
    lg.add_argument("--league-matches", type=int, default=None,
                    help="matches of the throughput part (default: --matches)")
    lg.add_argument("--deals-per-set", type=int, default=2)
    lg.add_argument("--runs", type=int, default=3, help="runs of each part (default 3)")
    lg.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test",
                    help="the store of the local mode and of Celery alike")
    lg.add_argument("--broker", default="redis://127.0.0.1:6379/8")
    lg.set_defaults(func=cmd_bench_league)

    bw = bsub.add_parser("web", help="the dashboard's season page, matches list and API "
                         "standings over a generated season of 10,000 matches")
    bw.add_argument("--matches", type=int, default=10000)
    bw.add_argument("--repeat", type=int, default=5, help="requests of each page timed")
    bw.set_defaults(func=cmd_bench_web)

    bs = bsub.add_parser("store", help="a played match's bytes per table and index as the "
                         "store wrote them before its packing and as it writes them now, on "
                         "the same matches, and the time to write and read a record each way")
    bs.add_argument("--matches", type=int, default=96, help="matches of the season played")
    bs.add_argument("--deals-per-set", type=int, default=2, help="deals a match")
    bs.add_argument("--from", metavar="URL", help="the played matches of this store instead")
    bs.add_argument("--other", metavar="DIR", help="a checkout of the code before (e.g. a git "
                    "worktree): store.results.finish and store.results.record timed there too")
    bs.add_argument("--rounds", type=int, default=3, help="of the finish and record timings")
    bs.add_argument("--unsandboxed", action="store_true", help="play without the sandbox")
    bs.set_defaults(func=cmd_bench_store)

    bm = bsub.add_parser("matchmaking", help="the ladder's matchmaking against a round robin "
                         "in simulation: pairs needed to rank N bots of known strengths")
    bm.add_argument("--bots", type=int, default=8)
    bm.add_argument("--gap", type=float, default=100.0, help="Elo between neighbours")
    bm.add_argument("--runs", type=int, default=100, help="simulated ladders per figure")
    bm.add_argument("--rounds", type=int, default=40, help="budget, in round robins' worth "
                    "of pairs")
    bm.add_argument("--share", type=float, default=0.9, help="of the runs that must rank right")
    bm.add_argument("--draw", type=float, default=0.2, help="chance of a drawn pair")
    bm.set_defaults(func=cmd_bench_matchmaking)
    br = bsub.add_parser("ladder-rest", help="the CPU of a settled, resting ladder against the "
                         "same ladder at full rate (local processes, SQLite)")
    br.add_argument("--seconds", type=float, default=60.0, help="each ladder's span")
    br.set_defaults(func=cmd_bench_ladder_rest)
    bl = bsub.add_parser("languages", help="each sample language built from source and its "
                         "decision time in a sandboxed match, against the Python random "
                         "sample's in the same match")
    bl.add_argument("language", nargs="*", help="python, java, go, rust, cpp or node "
                    "(default: every sample's)")
    bl.add_argument("--deals", type=int, default=2)
    bl.add_argument("--variant", choices=variants, default="two-deck-80")
    bl.set_defaults(func=cmd_bench_languages)
    be = bsub.add_parser("export", help="arena export's rows/s and peak memory over a season "
                         "of N matches played in process, and over one of N/10")
    be.add_argument("--matches", type=int, default=2000, help="matches of the large season")
    be.add_argument("--variant", choices=variants, default="two-deck-fry")
    be.add_argument("--deals", type=int, default=1, help="deals a match")
    be.add_argument("--keep", metavar="DIR", help="keep the store and the files made there")
    be.set_defaults(func=cmd_bench_export)
