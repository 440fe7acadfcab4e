"""Operating a league on many machines: ``arena workers`` (the live list of a broker's workers),
``arena runtimes`` (the bots' runtimes as this machine has them), ``arena settings`` (every
``ARENA_*`` setting: its type, default and help) and ``arena bench workers`` (a season's
throughput with 1, 2 and 4 worker processes)."""

from __future__ import annotations

import json
import sys
import time

from house import settings
from cli.common import subcommands
from cli.text import visible


def cmd_workers(args) -> int:
    import redis

    from scheduler.workers import list_workers
    broker = args.broker or settings.BROKER.value()
    try:
        workers = list_workers(broker)
    except (redis.RedisError, ValueError) as e:
        print(f"arena workers: --broker {_without_password(broker)}: the broker does not "
              f"answer ({e})", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"broker": _without_password(broker), "workers": workers}, indent=2))
        return 0
    if not workers:
        print(f"no worker has a heartbeat on {_without_password(broker)}")
        return 0
    now = time.time()
    print(f"{'worker':<28} {'host':<16} {'pid':>7} {'pool':>4}  {'state':<9} "
          f"{'heartbeat':>10}  matches")
    for w in workers:
        state = w["state"] if w["alive"] else "silent"
        playing = ", ".join(f"{visible(m['match'], one_line=True)} "
                            f"({now - (m['since'] or now):.0f} s)" for m in w["matches"]) or "-"
        node, host = visible(w["node"], one_line=True), visible(w["host"], one_line=True)
        print(f"{node:<28} {host:<16} {w['pid']:>7} {w['concurrency']:>4}  "
              f"{state:<9} {w['heartbeat_age_s']:>8.1f} s  {playing}")
        if w.get("runtimes"):
            print(f"  runtimes: {visible(w['runtimes'], one_line=True)}")
    return 0


def _without_password(url: str) -> str:
    """``url`` with any password replaced by ``***`` (safe to print)."""
    from urllib.parse import urlsplit, urlunsplit
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return urlunsplit(parts._replace(netloc=user + host))


def cmd_settings(args) -> int:
    """``arena settings``: the settings table (``house.settings``), the operator's first."""
    rows = sorted(settings.TABLE.values(), key=lambda s: (list(settings.Scope).index(s.scope),
                                                          s.name))
    if args.json:
        print(json.dumps([{"name": s.name, "type": s.type.__name__, "default": s.default
                           if s.default is None or isinstance(s.default, (int, float, str))
                           else str(s.default), "scope": s.scope.value, "help": s.help}
                          for s in rows], indent=2))
        return 0
    width = max(len(s.name) for s in rows)
    print(f"{'name':<{width}}  {'type':<5}  {'set by':<9}  {'default':<26}  help")
    for s in rows:
        print(f"{s.name:<{width}}  {s.type.__name__:<5}  {s.scope.value:<9}  "
              f"{s.shown_default:<26}  {s.help}")
    return 0


def cmd_runtimes(args) -> int:
    """``arena runtimes``: each runtime a bot may name (``referee.seats.runtimes``) as this
    machine has it: its version, whether the arena can build and run bots of it, and how to
    install what is missing or too old; status 1 if any is."""
    from referee.seats.runtimes import RUNTIMES, version_text
    rows = [{"runtime": r.name, "title": r.title, "state": r.state(),
             "version": version_text(r.version()) if r.version_program else "-",
             "minimum": version_text(r.minimum) if r.minimum else "",
             "install": "" if r.state() == "ok" else r.how_to_install()}
            for r in RUNTIMES.values()]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"{'runtime':<8} {'version':<14} {'state':<8} what")
        for row in rows:
            least = f" (at least {row['minimum']})" if row["minimum"] else ""
            print(f"{row['runtime']:<8} {row['version']:<14} {row['state']:<8} "
                  f"{row['title']}{least}")
            if row["install"]:
                print(f"{'':<32}{row['install']}")
    return 0 if all(row["state"] == "ok" for row in rows) else 1


def cmd_bench_workers(args) -> int:
    from tools.benchworkers import main
    return main(args)


def register(sub) -> None:
    w = sub.add_parser("workers", help="the workers of a broker: their current matches and "
                       "last heartbeats")
    w.add_argument("--broker", help="the Redis URL (default $ARENA_BROKER or "
                   f"{settings.BROKER.default})")
    w.add_argument("--json", action="store_true")
    w.set_defaults(func=cmd_workers)

    s = sub.add_parser("settings", help="every ARENA_* environment setting: its type, default, "
                       "who sets it and what it does")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_settings)

    r = sub.add_parser("runtimes", help="the runtimes bots may use as this machine has them: "
                       "versions, and how to install what is missing or too old")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_runtimes)

    bench_sub = subcommands(sub, "bench")
    if bench_sub is None:
        return
    b = bench_sub.add_parser("workers", help="a season's matches per hour with 1, 2 and 4 "
                             "Celery worker processes here, and the scaling efficiency")
    b.add_argument("--db", help="a PostgreSQL URL (default $ARENA_TEST_PG or the local "
                   "server's database test)")
    b.add_argument("--broker", help="a Redis URL (default redis://127.0.0.1:6379/11)")
    b.add_argument("--processes", default="1,2,4", help="worker process counts (default 1,2,4)")
    b.add_argument("--matches", type=int, default=16, help="matches per run (default 16)")
    b.add_argument("--deals", type=int, default=2, help="deals per match (default 2)")
    b.set_defaults(func=cmd_bench_workers)
