"""The ``arena`` command line: one entry point for everything a user runs."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import secrets
import sys
import tempfile
import time
from pathlib import Path

from cli.common import (VARIANT_HELP, json_text, sandbox_or_refuse, unsandboxed_option,
                        variant_ids_or_exit, visible)
from scheduler.reports import bot_versions, sealed_reason, season_rows


def _load_json(path: str) -> object:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise SystemExit(f"arena: {path}: no such file")
    except json.JSONDecodeError as e:
        raise SystemExit(f"arena: {path}: not valid JSON: line {e.lineno} column {e.colno}: "
                         f"{e.msg}")


def cmd_rules_check(args) -> int:
    from referee.conformance import run_file
    passed = failed = 0
    for path in args.files:
        data = _load_json(path)
        if not isinstance(data, dict):
            print(f"FAIL {path}: expected a JSON object with 'variant' and 'cases'")
            failed += 1
            continue
        for result in run_file(data, os.path.basename(path)):
            print(result.line())
            if result.ok:
                passed += 1
            else:
                failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def cmd_rules_variants(args) -> int:
    from referee.rules import families
    print(f"{'variant':<16} {'family':<12} {'decks':>5} {'hand':>5} {'kitty':>5}")
    for family in families().values():
        for r in family.presets:
            print(f"{r.variant:<16} {family.name:<12} {r.decks:>5} {r.hand_size:>5} "
                  f"{r.kitty_size:>5}")
    return 0


def cmd_rules_mutate(args) -> int:
    import time
    from tools import mutation
    chosen = [m for m in mutation.MUTATIONS if not args.only or args.only in m.rule]
    if not chosen:
        raise SystemExit(f"arena: no mutation's rule contains {args.only!r}")
    print(f"command      arena rules mutate{' --only ' + repr(args.only) if args.only else ''}")
    print(f"machine      {platform.machine()}, python {platform.python_version()}")
    print(f"mutations    {len(chosen)}, each alone on a copy of the project: the rules vectors, "
          "then the fast rules tests if every vector still passes")
    start = time.perf_counter()
    try:
        results = mutation.run(chosen, progress=lambda line: print(line, flush=True))
    except mutation.NotGreen as e:
        raise SystemExit(f"arena: rules mutate: {e}")
    missed = [r for r in results if not r.caught_by or r.caught_by.startswith("STALE")]
    by_vectors = sum(1 for r in results if "vector case" in r.caught_by)
    print(f"caught       {len(results) - len(missed)} of {len(results)} ({by_vectors} by vectors, "
          f"{len(results) - len(missed) - by_vectors} only by tests) in "
          f"{time.perf_counter() - start:.0f} s")
    for r in missed:
        print(f"MISSED       {r.mutation.rule} ({r.mutation.path}): {r.caught_by or 'nothing failed'}")
    return 1 if missed else 0


def cmd_bench_engine(args) -> int:
    from tools.benchengine import bench_engine
    for i, variant in enumerate([args.variant] if args.variant else variant_ids_or_exit()):
        if i:
            print()
        bench_engine(variant, args.deals, args.repeat)
    return 0


def _existing_store(url: str, why: str):
    """The store at ``url``, for reading: a SQLite store that is not there is named (``why``
    says what was looked for), not created empty."""
    from scheduler.store import NoStore, StoreError, StoreVersionError, open_store
    try:
        return open_store(url, create=False)
    except NoStore as e:
        raise SystemExit(f"{why}; there is no store at {e.path} (a season run creates it; "
                         "name another with --db or $ARENA_DB)") from None
    except (StoreVersionError, StoreError) as e:
        raise SystemExit(f"arena: --db {e}") from None


def cmd_replay(args) -> int:
    """Exit 0: verified (or printed); 1: the replay differs from the record (or there is no
    store, as for every command reading one); 2: the record cannot be read; 3: a stored
    record still sealed."""
    from referee.match.matchfile import MatchFile
    try:
        if args.db or not os.path.exists(args.record):
            store = _existing_store(_db(args), f"arena replay: {args.record}: no such file")
            sealed = store.sealed_by(args.record)
            if sealed:
                print(f"arena replay: {args.record}: {sealed_reason(sealed)}", file=sys.stderr)
                return 3
            data = store.record(args.record)
            if data is None:
                print(f"arena replay: {args.record}: no such file, and no match record with "
                      f"that id in {store.url}", file=sys.stderr)
                return 2
            match = MatchFile.from_dict(data, args.record)
        else:
            match = MatchFile.load(args.record)
    except ValueError as e:
        print(f"arena replay: {visible(e)}", file=sys.stderr)
        return 2
    if args.verify:
        problems = match.verify()
        if problems:
            for p in problems:
                print(f"DIFFERS {visible(p, one_line=True)}")
            return 1
        games, deals = len(match.games), len(match.summary().deals)
        actions = sum(len(g.actions) for g in match.games)
        events = sum(len(g.events) for g in match.games)
        print(f"verified: {games} game(s), {deals} deal(s), {actions} actions, {events} "
              "events")
        print(f"result: {visible(match.outcome(), one_line=True)}")
        if match.faults:
            print(f"faults recorded: {len(match.faults)}")
        return 0
    if args.seat is None:
        events = [{k: v for k, v in e.items() if k != "visible_to"}
                  for g in match.games for e in g.events]
    else:
        events = match.seat_view(args.seat)
    for e in events:
        print(json_text(e))
    return 0


def cmd_soak(args) -> int:
    from referee.seats.manifest import ManifestError
    from tools.soak import DEFAULT_BOTS, soak
    try:
        return soak(args.variant or list(variant_ids_or_exit()), args.matches, args.deals,
                    args.bots or list(DEFAULT_BOTS), args.seed,
                    Path(args.keep) if args.keep else None)
    except (ManifestError, ValueError) as e:
        print(f"arena soak: {e}", file=sys.stderr)
        return 2


LOG_LINES = 12  # lines of a gone bot's log that `arena match` prints under its fault
LISTEN_CONNECT_MS = 600_000  # how long a seat started by hand is waited for, by default


def _listening_seats(values: list[str] | None) -> set[int]:
    """The seats of ``--seat N=listen`` options."""
    seats = set()
    for v in values or ():
        seat, _, how = v.partition("=")
        if how != "listen" or seat not in ("0", "1", "2", "3"):
            raise ValueError(f"--seat {v}: expected N=listen with N a seat 0-3")
        seats.add(int(seat))
    return seats



def cmd_match(args) -> int:
    from referee.seats.launch import check_startable
    from referee.seats.manifest import ManifestError, bot_argument
    from referee.match.local import new_match_id, run_match
    from referee.seats.sandbox import SandboxUnavailable
    from referee.match.matchfile import MatchFile
    from referee.match.spec import DEFAULT_TIME_CONTROL, MatchSpec, TimeControl
    from referee.rules.variants import rules_for
    try:
        listen = _listening_seats(args.seat)
    except ValueError as e:
        print(f"arena match: {e}", file=sys.stderr)
        return 2
    if len(args.bots) + len(listen) != 4:
        print(f"arena match: expected {4 - len(listen)} bots (one per seat"
              f"{', besides the listening seat(s) ' if listen else ''}"
              f"{', '.join(map(str, sorted(listen)))}), got {len(args.bots)}", file=sys.stderr)
        return 2
    try:
        rules = rules_for(args.variant)
        given = iter(args.bots)
        bots = [None if seat in listen else bot_argument(next(given)) for seat in range(4)]
        for b in bots:
            if b is not None:
                check_startable(b, sandboxed=not args.unsandboxed)
        if args.game and rules.after_ace == "wrap":
            raise ValueError(f"--game: {args.variant} wraps after A (option after_ace = wrap), "
                             "so a game never ends; use --deals N")
    except (ManifestError, ValueError) as e:
        print(f"arena match: {e}", file=sys.stderr)
        return 2
    match_id = args.match_id or new_match_id()
    seed = args.seed if args.seed is not None else secrets.token_hex(16)  # kept in the record
    connect_ms = args.connect_timeout_ms or (LISTEN_CONNECT_MS if listen else
                                             DEFAULT_TIME_CONTROL.connect_timeout_ms)
    spec = MatchSpec(match_id=match_id, variant=args.variant, seed=seed,
                     max_deals=None if args.game else args.deals,
                     time_control=TimeControl(per_decision_ms=args.per_decision_ms,
                                              bank_ms=args.bank_ms,
                                              max_strikes=args.max_strikes,
                                              max_reconnects=args.max_reconnects,
                                              connect_timeout_ms=connect_ms),
                     seat_names=[f"seat {i}, started by hand" if b is None else b.label
                                 for i, b in enumerate(bots)])
    out = Path(args.out) if args.out else Path("records") / f"match-{match_id}.json"
    tokens = [secrets.token_urlsafe(24) for _ in range(4)]

    def listening(address: str) -> None:
        for seat in sorted(listen):
            print(f"seat {seat} waits {connect_ms // 1000} s for the bot you start (over TCP, "
                  "unsandboxed: it runs as you start it); in its environment:\n"
                  f"  export ARENA_REFEREE={address} ARENA_TOKEN={tokens[seat]} "
                  f"ARENA_SEAT={seat} ARENA_MATCH_ID={match_id}", flush=True)
    t = time.perf_counter()
    try:
        _, record, _ = run_match(spec, bots, out.parent / f"logs-{match_id}",
                                 sandbox="none" if args.unsandboxed else None,
                                 tcp_port=args.port if listen else None, tokens=tokens,
                                 listening=listening)
    except SandboxUnavailable as e:
        print(f"arena match: {e}", file=sys.stderr)
        return 2
    except ManifestError as e:  # a bot that cannot be started
        print(f"arena match: {visible(e)}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, ensure_ascii=False)
    out.write_text(text)
    match = MatchFile.from_dict(json.loads(text), str(out))  # as it reads back
    result = match.result
    print(f"match {match_id}: {args.variant}, {len(result.deals)} deals in "
          f"{time.perf_counter() - t:.1f}s")
    for seat, name in enumerate(spec.seat_names):
        print(f"  seat {seat} (team {seat % 2}): {visible(name, one_line=True)}  strikes "
              f"{result.strikes[seat]}")
    for d in result.deals:
        print(f"  deal {d.deal}: attackers {d.attacker_total} points, levels after "
              f"{d.levels[0]} / {d.levels[1]}")
    if result.match_points:
        print(f"  match points {list(result.match_points)}  titles {list(result.titles)}")
    if result.forfeit:
        f = result.forfeit
        print(f"  forfeit: seat {f.seat} ({visible(f.reason, one_line=True)}); team {f.team} "
              "loses")
    for fault in match.faults:
        print(f"  fault: seat {fault.seat} {visible(fault.kind, one_line=True)}: "
              f"{visible(fault.reason, one_line=True)}")
        if fault.log_tail:  # a seat whose process ended: how its log ends
            lines = fault.log_tail.rstrip("\n").splitlines()[-LOG_LINES:]
            print("\n".join(f"    | {visible(line, one_line=True)}" for line in lines))
    by_hand = f" (seat(s) {', '.join(map(str, sorted(listen)))} started by hand: as you " \
        "started them)" if listen else ""
    print(f"  sandbox: {result.sandbox}{by_hand}")
    print(f"  winner team: {result.winner_team}; record {out} (arena replay {out} --verify)")
    return 0


def cmd_demo(args) -> int:
    """A small season of the four Python sample bots on this machine (SQLite, local
    processes), its standings, and a check that every match record replays."""
    from referee.match.matchfile import MatchFile
    root = Path(__file__).resolve().parent.parent
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    db_file = (out / "demo.db").resolve()
    for stale in out.glob("demo.db*"):  # a fresh season every time
        stale.unlink()
    db = f"sqlite:///{db_file}"
    # `arena season run`'s own arguments, parsed by its parser: its defaults for the rest
    run = ["season", "run", str(root / "seasons" / "demo.toml"), "--db", db,
           "--workers", str(args.workers), "--workdir", str(out / "checks")]
    code = cmd_season_run(build_parser().parse_args(
        run + (["--unsandboxed"] if args.unsandboxed else [])))
    if code != 0:
        return code
    store = _existing_store(db, "arena demo: no season demo")
    rows = store.matches("demo")
    bad = [row["id"] for row in rows
           if MatchFile.from_dict(store.record(row["id"]), row["id"]).verify()]
    print(f"\n{len(rows) - len(bad)} of {len(rows)} match records replay and verify; for "
          f"example:\n  arena replay {rows[0]['id']} --db {db} --verify\n"
          f"  arena replay {rows[0]['id']} --db {db} --seat 0\n"
          f"  arena standings demo --db {db} --json")
    return 1 if bad else 0


DEFAULT_DB = "sqlite:///arena.db"


def _db(args) -> str:
    """The store's URL: ``--db``, else ``$ARENA_DB``, else the default (``DEFAULT_DB``, as
    ``scheduler.store.store_url`` has it); a SQLite file's path is that SQLite store."""
    from scheduler.store import store_url
    return store_url(args.db)


def _broker(args) -> str | None:
    return getattr(args, "broker", None) or os.environ.get("ARENA_BROKER")


def open_store(url: str):
    """The store at ``url``, or a SeasonError that names the URL and what went wrong."""
    from scheduler import store
    from scheduler.season import SeasonError
    try:
        return store.open_store(url)
    except (store.StoreVersionError, store.StoreError) as e:
        raise SeasonError(f"--db {e}") from None


def check_broker(url: str) -> None:
    """Fail early, naming the URL, when the broker does not answer."""
    import redis

    from scheduler.season import SeasonError
    try:
        redis.Redis.from_url(url, socket_connect_timeout=5).ping()
    except (redis.RedisError, ValueError) as e:
        raise SeasonError(f"--broker {url}: the broker does not answer ({e}); start Redis or "
                          "check the URL") from None


def cmd_season_run(args) -> int:
    from scheduler import metrics
    from scheduler.league import open_season
    from scheduler.season import SeasonError, load_season
    broker = _broker(args)
    try:
        port = metrics.port_setting(args.metrics_port)
    except ValueError as e:
        print(f"arena season run: {e}", file=sys.stderr)
        return 2
    try:
        sandbox_or_refuse(args)
        season = load_season(args.file)
        store = open_store(_db(args))
        if broker:
            check_broker(broker)
        left = open_season(season, store, workdir=Path(args.workdir), check=not args.no_check)
    except SeasonError as e:
        print(f"arena season run: {e}", file=sys.stderr)
        print("nothing was enqueued", file=sys.stderr)
        return 2
    served = made = None
    if port:  # before the local pool starts: its processes count into this folder
        given = os.environ.get(metrics.DIR_ENV)
        folder = metrics.prepare(port)
        made = None if given else folder
        if made is not None:  # held while this run lives (``arena sweep`` takes it after)
            from scheduler.sweep import hold_metrics_folder
            hold_metrics_folder(made)
        try:
            served = metrics.serve(port, broker=broker, store_url=store.url,
                                   season=season.name)
        except OSError as e:
            print(f"arena season run: --metrics-port {port}: cannot serve /metrics: {e}",
                  file=sys.stderr)
            metrics.cleanup(made)
            return 2
        print(f"metrics on :{port}/metrics", file=sys.stderr)
    try:
        return _season_play(args, store, season, broker, left)
    finally:
        if served is not None:
            served.shutdown()
            metrics.cleanup(made)


def _season_play(args, store, season, broker, left) -> int:
    from scheduler.league import run_distributed, run_local
    from scheduler.standings import compute, table
    total = sum(store.counts(season.name).values())
    mode = f"distributed over {broker}" if broker else f"local, {args.workers} workers"
    print(f"season {season.name}: {season.variant}, {season.format}"
          f"{', duplicate' if season.duplicate else ''}, {len(season.bots)} bots, {total} "
          f"matches ({left} to play), store {store.url}, {mode}", file=sys.stderr)
    t = time.perf_counter()
    try:
        if broker:
            counts = run_distributed(store, season.name, broker, window=args.window,
                                     requeue_after_s=args.lease, progress=not args.no_progress)
        else:
            counts = run_local(store, season.name, workers=args.workers, lease_s=args.lease,
                               progress=not args.no_progress, max_attempts=args.attempts)
    except KeyboardInterrupt:
        c = store.counts(season.name)
        if broker:
            print(f"\ninterrupted: {c['done']} of {total} matches done; the "
                  f"{c['pending'] + c['running']} queued and running matches keep being played "
                  "by the workers (`arena season cancel "
                  f"{season.name}` stops them); run the same command again to keep reconciling "
                  "and see the standings", file=sys.stderr)
        else:
            print(f"\ninterrupted: {c['done']} of {total} matches done; run the same command "
                  "again to continue", file=sys.stderr)
        return 130
    cancelled = f", {counts['cancelled']} cancelled" if counts.get("cancelled") else ""
    print(f"played in {time.perf_counter() - t:.1f}s: {counts['done']} done, "
          f"{counts['failed']} failed{cancelled}", file=sys.stderr)
    st = compute(store.season(season.name), store.standings_rows(season.name))
    print(visible(table(st)))
    return 0 if counts["failed"] == 0 else 1


def cmd_worker(args) -> int:
    db = _db(args)
    from scheduler.season import SeasonError
    try:
        sandbox_or_refuse(args)
    except SeasonError as e:
        print(f"arena worker: {e}", file=sys.stderr)
        return 2
    if db.startswith("sqlite"):
        print("arena worker: note: a SQLite store serves workers on this machine only; use "
              "--db postgresql://... for many machines", file=sys.stderr)
    from scheduler import metrics
    from scheduler.execute import stop_grace_setting
    try:
        port = metrics.port_setting(args.metrics_port)
        grace = args.stop_grace if args.stop_grace is not None else stop_grace_setting()
    except ValueError as e:
        print(f"arena worker: {e}", file=sys.stderr)
        return 2
    if port:  # before any process imports prometheus_client: the multiprocess folder
        folder = metrics.prepare(port)
        if os.environ.get(metrics.MADE_ENV):  # ours: held by the worker it execs into
            from scheduler.sweep import hold_metrics_folder
            hold_metrics_folder(folder)
    env = dict(os.environ, ARENA_DB=db, ARENA_LEASE_S=str(args.lease),
               ARENA_STOP_GRACE_S=str(grace))
    env[metrics.PORT_ENV] = str(port or 0)  # served by the Celery main process (0: off)
    if args.attempts:
        env["ARENA_MAX_ATTEMPTS"] = str(args.attempts)
    env["ARENA_BROKER"] = _broker(args) or "redis://127.0.0.1:6379/0"
    root = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "protos")] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    cmd = [sys.executable, "-m", "celery", "-A", "scheduler.tasks", "worker", "-Q", "arena",
           "--pool", "prefork", "--concurrency", str(args.concurrency), "--loglevel",
           args.loglevel, "--without-gossip", "--without-mingle"]
    # Celery's events (Flower's view) only when asked: --events or ARENA_WORKER_EVENTS=1
    cmd += ["-E"] if args.events or os.environ.get("ARENA_WORKER_EVENTS") == "1" else \
        ["--without-heartbeat"]
    if args.hostname:
        cmd += ["--hostname", args.hostname]
    os.execvpe(cmd[0], cmd, env)
    return 0


def cmd_sweep(args) -> int:
    from scheduler.sweep import KINDS, sweep
    counts = sweep()
    print("removed what dead workers and referees left on this machine:")
    for kind, n in counts.items():
        print(f"  {KINDS[kind][1]}: {n}")
    if os.geteuid() != 0:
        print("arena sweep: note: not root: seat cgroups and seat-uid processes (a root "
              "worker's) were not looked at", file=sys.stderr)
    return 0


def _season_row(args):
    store = _existing_store(_db(args), f"arena: no season {args.season!r}")
    row = store.season(args.season)
    if row is None:
        known = ", ".join(store.season_names()) or "none"
        raise SystemExit(f"arena: no season {args.season!r} in {store.url} (seasons there: "
                         f"{known})")
    return store, row


def cmd_standings(args) -> int:
    from scheduler.standings import compute, table, to_csv
    store, row = _season_row(args)
    st = compute(row, store.standings_rows(args.season), samples=args.samples)
    versions = bot_versions(store, args.season)
    if args.json:
        print(json_text({**st.to_dict(), "versions": versions}, indent=1))
    elif args.csv:
        sys.stdout.write(visible(to_csv(st)))
    else:
        print(visible(table(st)))
        if versions:
            print("versions: " + ", ".join(f"{visible(n, one_line=True)} = "
                                           f"{visible(v['ref'], one_line=True)} ({v['hash'][:12]})"
                                           for n, v in versions.items()))
    return 0


def cmd_matches(args) -> int:
    store, _ = _season_row(args)
    rows = store.matches(args.season)
    if args.faults:
        return _print_faults(store, args.season, rows, args.status)
    if args.status:
        rows = [r for r in rows if r["status"] == args.status]
    print(f"{'match':<24} {'team 0':<14} {'team 1':<14} {'status':<8} {'tries':>5} "
          f"{'net':>5} {'secs':>6}  note")
    for r in rows:
        seats = [visible(s, one_line=True) for s in r.seats]
        net = secs = note = ""
        if r.played:
            s = r.summary
            net = f"{s.net[0]:+d}"
            secs = f"{r['duration_s']:.1f}"
            if s.forfeit_team is not None:
                note = f"team {s.forfeit_team} forfeited"
            elif s.faults:
                note = f"{s.faults} fault(s)"
        elif r.get("error"):
            note = visible(r["error"].splitlines()[0][:60], one_line=True)
        print(f"{r['id']:<24} {seats[0]:<14} {seats[1]:<14} {r['status']:<8} "
              f"{r['attempts']:>5} {net:>5} {secs:>6}  {note}")
    c = {}
    for r in rows:
        c[r["status"]] = c.get(r["status"], 0) + 1
    print(", ".join(f"{n} {k}" for k, n in sorted(c.items())) or "no matches")
    return 0


def _print_faults(store, season: str, rows: list[dict], status: str | None) -> int:
    """``arena matches SEASON --faults``: bot faults (charged by the referee, per seat and kind)
    apart from the infrastructure's failed attempts (retried on the same cards, charged to
    nobody), match by match."""
    from collections import Counter
    log: dict[str, list[dict]] = {}
    for a in store.attempt_log(season):
        log.setdefault(a["match_id"], []).append(a)
    shown = {"bot": 0, "infra": 0, "failed": 0}
    for r in rows:
        if status and r["status"] != status:
            continue
        seats = [visible(s, one_line=True) for s in r.seats]
        faults = []
        if r.played and r.summary.faults:
            record = store.record(r["id"]) or {}
            kinds = Counter((f["seat"], f["kind"]) for f in record.get("faults", []))
            faults = [f"seat {seat} ({seats[seat]}) {visible(kind, one_line=True)} x{n}"
                      for (seat, kind), n in sorted(kinds.items())]
        trouble = [a for a in log.get(r["id"], []) if a["outcome"] not in ("done", "running")]
        notes = [a for a in log.get(r["id"], []) if a["outcome"] == "done" and a["reason"]]
        if not (faults or trouble or notes or r["status"] == "failed"):
            continue
        shown["bot"] += bool(faults)
        shown["infra"] += bool(trouble or notes)
        shown["failed"] += r["status"] == "failed"
        head = f"{r['id']}  {r['status']}, {r['attempts']} attempt(s)"
        if r["status"] == "failed":
            error = "".join((r["error"] or "").splitlines()[:1])[:200]
            head += f": set aside, counted for nobody: {visible(error, one_line=True)}"
        print(head)
        for f in faults:
            print(f"  bot fault       {f}")
        for a in trouble + notes:
            reason = visible(" ".join((a["reason"] or "").split())[:200], one_line=True)
            print(f"  infrastructure  attempt {a['attempt']} {a['outcome']} "
                  f"({visible(a['worker'], one_line=True)}): "
                  f"{reason}")
    print(f"{shown['bot']} match(es) with bot faults, {shown['infra']} with infrastructure "
          f"failures (not charged to any bot), {shown['failed']} set aside")
    return 0


def _local_time(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t)) if t else ""


def cmd_seasons(args) -> int:
    """``arena seasons``: every season in the store, one line each."""
    store = _existing_store(_db(args), "arena seasons: no seasons to list")
    rows = [{**r, "created": _local_time(r["created_at"])} for r in season_rows(store)]
    if args.json:
        print(json_text(rows, indent=1))
        return 0
    if not rows:
        print(f"no seasons in {store.url}")
        return 0
    rows = [{**r, "name": visible(r["name"], one_line=True)} for r in rows]
    width = max(6, *(len(r["name"]) for r in rows))
    print(f"{'season':<{width}} {'variant':<14} {'format':<18} {'bots':>4} {'done/total':>11} "
          f"{'running':>7} {'pending':>7} {'failed':>6} {'cancelled':>9}  {'created':<16}  "
          "status")
    for r in rows:
        fmt = r["format"] + (", dup" if r["duplicate"] else "")
        print(f"{r['name']:<{width}} {r['variant']:<14} {fmt:<18} {len(r['bots']):>4} "
              f"{str(r['done']) + '/' + str(r['matches']):>11} {r['running']:>7} "
              f"{r['pending']:>7} {r['failed']:>6} {r['cancelled']:>9}  {r['created']:<16}  "
              f"{r['status']}")
    return 0


def _who() -> str:
    """user@host, noted with a cancel."""
    import getpass
    import socket
    try:
        user = getpass.getuser()
    except Exception:  # no user name in this environment
        user = str(os.getuid())
    return f"{user}@{socket.gethostname()}"


def cmd_season_cancel(args) -> int:
    """``arena season cancel NAME``: no more of the season's matches are played. Exit 0:
    cancelled (or it already was); 2: no such season."""
    store = _existing_store(_db(args), f"arena season cancel: no season {args.season!r}")
    got = store.cancel_season(args.season, by=_who())
    if got is None:
        known = ", ".join(store.season_names()) or "none"
        print(f"arena season cancel: no season {args.season!r} in {store.url} (seasons there: "
              f"{known})", file=sys.stderr)
        return 2
    abandoned = (f" ({got['abandoned']} of them running with an expired lease, held by no "
                 "live worker)" if got["abandoned"] else "")
    if got["already"]:
        by = f" by {got['by']}" if got["by"] else ""
        print(f"season {args.season} was already cancelled at "
              f"{_local_time(got['cancelled_at'])}{by}; {got['running']} running, "
              f"{got['done']} done"
              + (f"; {got['abandoned']} abandoned running match(es) cancelled now"
                 if got["abandoned"] else ""))
        return 0
    print(f"season {args.season} cancelled: {got['pending'] + got['abandoned']} pending matches "
          f"will not be played{abandoned}, {got['running']} running (they finish; `arena "
          f"seasons` shows when), {got['done']} done stay counted")
    return 0


def cmd_logs(args) -> int:
    """``arena logs MATCH_ID --seat N``: the end of seat N's bot log kept in the match's
    record. Exit 0: printed; 2: no such match, no record yet or no log of that seat; 3: the
    record is still sealed."""
    store = _existing_store(_db(args), f"arena logs: {args.match_id}: no such match")
    m = store.match(args.match_id)
    if m is None:
        print(f"arena logs: {args.match_id}: no match with that id in {store.url}",
              file=sys.stderr)
        return 2
    record = store.record(args.match_id)
    if record is None:
        print(f"arena logs: {args.match_id}: no record yet: the match is {m['status']}"
              + (f" ({visible(m['error'].splitlines()[0][:200], one_line=True)})"
                 if m.get("error") else ""),
              file=sys.stderr)
        return 2
    sealed = store.sealed_by(args.match_id)
    if sealed:
        print(f"arena logs: {args.match_id}: {sealed_reason(sealed)}", file=sys.stderr)
        return 3
    seat = str(args.seat)
    logs = record.get("bot_logs") or {}
    seats = record.get("seats") or list(m.seats)
    bot = visible(seats[args.seat], one_line=True) if args.seat < len(seats) else "?"
    if seat not in logs:
        print(f"arena logs: {args.match_id}: no log of seat {args.seat} ({bot}) kept in its "
              "record (a record stored before every seat's log was kept has only the "
              "faulting seats')", file=sys.stderr)
        return 2
    from scheduler.execute import BOT_LOG_KEPT
    text = logs[seat]
    kept = len(text.encode("utf-8"))
    total = (record.get("bot_log_bytes") or {}).get(seat)
    if total is not None:  # a replaced undecodable byte reads back longer than it was
        kept = min(kept, total, BOT_LOG_KEPT)
    if total is None:
        size = f"{kept} bytes kept (the record does not say how long the log was)"
    elif total > kept:
        size = f"the last {kept} of {total} bytes kept ({total - kept} dropped)"
    else:
        size = f"all {total} bytes" if total else "its log is empty"
    print(f"match {args.match_id}, seat {args.seat} (team {args.seat % 2}): bot {bot}; {size}")
    if not args.raw:  # a bot's own bytes: its escapes shown, not obeyed
        text = visible(text)
    sys.stdout.write(text if not text or text.endswith("\n") else text + "\n")
    return 0


def cmd_bots_check(args) -> int:
    from referee.match.spec import DealSpec, TimeControl
    from referee.seats.manifest import ManifestError, load_manifest
    from referee.rules.variants import rules_for
    from scheduler.league import smoke_check
    from scheduler.season import SeasonBot
    try:
        sandbox_or_refuse(args)
        manifest = load_manifest(args.manifest)
        rules_for(args.variant)
    except (ManifestError, ValueError) as e:
        print(f"arena bots check: {e}", file=sys.stderr)
        return 2
    t = time.perf_counter()
    label = visible(manifest.label, one_line=True)
    with tempfile.TemporaryDirectory(prefix="arena-check-") as tmp:
        played = manifest
        if manifest.build:  # checked as it plays: built, in the sandbox
            from referee.seats.build import BuildFailed, build_bot, discard
            try:
                built = build_bot(manifest, manifest.folder, Path(tmp) / "built").folder
            except BuildFailed as e:
                print(f"FAIL {label} ({manifest.path}): {visible(e)}")
                return 1
            played = dataclasses.replace(manifest, folder=built, path=built / "bot.toml",
                                         pythonpath=tuple(
                                             built / p.relative_to(manifest.folder)
                                             if p.is_relative_to(manifest.folder) else p
                                             for p in manifest.pythonpath))
        why = smoke_check(SeasonBot(manifest.name, played), variant=args.variant,
                          options={},
                          time_control=TimeControl(per_decision_ms=args.per_decision_ms),
                          deal=DealSpec(args.seed if args.seed is not None else
                                        secrets.token_hex(16)),
                          workdir=Path(args.workdir) / f"check-{manifest.name}")
        if manifest.build:
            discard(played.folder)
    if why:
        print(f"FAIL {label} ({manifest.path}): {visible(why)}")
        return 1
    print(f"ok   {label} ({manifest.path}): one {args.variant} deal on seats 0 and 2 "
          f"against random, no faults, {time.perf_counter() - t:.1f}s")
    return 0


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB" if n < 1 << 20 else \
        f"{n / (1 << 20):.1f} MiB"


def cmd_bots_submit(args) -> int:
    """``arena bots submit``: store a bot folder or archive as an immutable version (its
    build, if it has one, must pass in the sandbox first)."""
    from scheduler.season import SeasonError
    from scheduler.versions import submit
    try:
        token = _author_token(args)
        store = open_store(_db(args))
        v = submit(store, Path(args.source), name=args.name, version=args.version,
                   author=args.author, token=token)
    except (ValueError, SeasonError) as e:  # RegistryError, or a store that cannot be opened
        print(f"arena bots submit: {e}", file=sys.stderr)
        return 2
    print(f"{visible(v.ref, one_line=True)} {v.content_hash}" +
          (" already submitted" if v.already else f" ({v.files} files, {_size(v.size)})"))
    return 0


def _author_token(args) -> str | None:
    """The author's token: ``--token-file``, else ``$ARENA_AUTHOR_TOKEN`` (never an argument,
    which ``ps`` shows); None: none given."""
    if args.token_file:
        try:
            with open(args.token_file, encoding="utf-8") as f:
                token = f.read(4096).strip()
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"--token-file {args.token_file}: cannot be read ({e})") from None
        if not token:
            raise ValueError(f"--token-file {args.token_file}: empty; expected the token "
                             "`arena authors add` printed")
        return token
    return os.environ.get("ARENA_AUTHOR_TOKEN", "").strip() or None


def cmd_authors_add(args) -> int:
    """``arena authors add NAME``: a new author; their token is printed once."""
    from scheduler.registry import add_author
    from scheduler.season import SeasonError
    try:
        token = add_author(open_store(_db(args)), args.name)
    except (ValueError, SeasonError) as e:
        print(f"arena authors add: {e}", file=sys.stderr)
        return 2
    print(token)
    print(f"the token of author {args.name} (shown once, only its hash is kept): they submit "
          "with ARENA_AUTHOR_TOKEN or --token-file", file=sys.stderr)
    return 0


def cmd_bots_list(args) -> int:
    """``arena bots list``: every bot version in the registry, oldest first."""
    from scheduler.registry import BotVersion
    store = _existing_store(_db(args), "arena bots list: no bot versions to list")
    rows = [BotVersion.of(r) for r in store.bot_versions()]
    if args.json:
        print(json_text([{k: v for k, v in dataclasses.asdict(r).items() if k != "already"}
                         for r in rows], indent=1))
        return 0
    if not rows:
        print(f"no bot versions in {store.url}")
        return 0
    shown = {r.id: (visible(r.name, one_line=True), visible(r.version, one_line=True),
                    visible(r.author or "", one_line=True)) for r in rows}
    nw = max(4, *(len(shown[r.id][0]) for r in rows))
    vw = max(7, *(len(shown[r.id][1]) for r in rows))
    print(f"{'name':<{nw}} {'version':<{vw}} {'hash':<12} {'protocol':<8} {'size':>10}  "
          f"{'submitted':<16}  author")
    for r in rows:
        name, version, author = shown[r.id]
        print(f"{name:<{nw}} {version:<{vw}} {r.content_hash[:12]} {r.protocol:<8} "
              f"{_size(r.size):>10}  {_local_time(r.submitted_at):<16}  {author}")
    return 0


def cmd_bots_show(args) -> int:
    """``arena bots show NAME[@VERSION]``: a version's fields and files."""
    from scheduler import registry
    store = _existing_store(_db(args), f"arena bots show: no bot {args.ref!r}")
    try:
        v = registry.resolve(store, args.ref)
        files = registry.listing(store, v)
    except registry.RegistryError as e:
        print(f"arena bots show: {e}", file=sys.stderr)
        return 2

    def field(text) -> str:  # the author's text, its escapes shown unless --raw
        return str(text) if args.raw else visible(text, one_line=True)
    for k in ("name", "version", "content_hash", "author", "protocol", "language", "size",
              "files"):
        print(f"{k + ':':<14}{field(getattr(v, k)) if getattr(v, k) is not None else ''}")
    print(f"{'submitted:':<14}{_local_time(v.submitted_at)}")
    manifest = (json.dumps(v.fields(), ensure_ascii=False, sort_keys=True) if args.raw else
                json_text(v.fields(), sort_keys=True))
    print(f"{'manifest:':<14}{manifest}")
    print("files:")
    for f in files:
        what = (f"-> {field(f['target'])}" if f["type"] == "link" else "" if f["type"] == "dir"
                else _size(f["size"]))
        print(f"  {f['mode']:04o} {field(f['path'])}{'/' if f['type'] == 'dir' else ''} {what}"
              .rstrip())
    return 0


def cmd_bots_remove(args) -> int:
    """``arena bots remove NAME@VERSION``: refused while a season pins it."""
    from scheduler import registry
    store = _existing_store(_db(args), f"arena bots remove: no bot {args.ref!r}")
    try:
        v = registry.remove(store, args.ref)
    except registry.RegistryError as e:
        print(f"arena bots remove: {e}", file=sys.stderr)
        return 2
    print(f"removed {visible(v.ref, one_line=True)} ({v.content_hash[:12]})")
    return 0


def cmd_web(args) -> int:
    """``arena web``: the read-only dashboard over the store, served by uvicorn."""
    import uvicorn

    from scheduler.store import StoreError, StoreVersionError
    from web.app import NoStore, create_app
    url = _db(args)
    try:
        app = create_app(url)
    except NoStore as e:
        raise SystemExit(f"arena web: {e}; name another with --db or $ARENA_DB") from None
    except (StoreVersionError, StoreError) as e:
        raise SystemExit(f"arena web: --db {e}") from None
    print(f"arena web: {url} on http://{args.host}:{args.port}/", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def cmd_sprt(args) -> int:
    from referee.seats.manifest import ManifestError
    from referee.rules.variants import rules_for
    from cli.study import load_side
    from scheduler import power
    from scheduler.ratings import Sprt
    from scheduler.season import SeasonError, new_secret
    try:
        rules_for(args.variant)
        test = Sprt(args.elo0, args.elo1, args.alpha, args.beta)
        paired = power.PairedSprt(args.d0, args.d1, args.alpha, args.beta)
        bot_a = load_side(args.a)
        bot_b = load_side(args.b, getattr(bot_a, "name", None))
        local = isinstance(bot_a, str) and isinstance(bot_b, str)
        if not local and (isinstance(bot_a, str) or isinstance(bot_b, str)):
            raise ValueError("A and B are both in-process policies or both bots (folders or "
                             "manifests)")
        if not local:
            sandbox_or_refuse(args)
        if args.deals_per_set < 1 or args.max_pairs < 1:
            raise ValueError("--deals-per-set and --max-pairs must be at least 1")
    except (ManifestError, ValueError, SeasonError) as e:
        print(f"arena sprt: {visible(e)}", file=sys.stderr)
        return 2
    name_a = bot_a if local else bot_a.name
    name_b = bot_b if local else bot_b.name
    # the names as printed: a manifest's name is the bot author's text (the raw names stay
    # the seats' names in the matches)
    shown_a, shown_b = visible(name_a, one_line=True), visible(name_b, one_line=True)
    hyp = (f"H0 diff <= {args.d0}, H1 diff >= {args.d1} levels per deal (paired differences)"
           if args.score == "diff" else f"H0 elo <= {args.elo0}, H1 elo >= {args.elo1} (pair "
           "W/D/L)")
    print(f"sprt {shown_a} vs {shown_b}: {args.variant}, duplicate pairs of "
          f"{args.deals_per_set} deals{' in process' if local else ''}; {hyp}, alpha "
          f"{args.alpha}, beta {args.beta}, at most {args.max_pairs} pairs", file=sys.stderr)
    t = time.perf_counter()
    if args.score == "wdl" and not local:  # the pair-W/L test as it always ran
        from scheduler.league import run_sprt
        from scheduler.season import SeasonBot
        got = run_sprt(SeasonBot(name_a, bot_a.manifest), SeasonBot(name_b, bot_b.manifest),
                       variant=args.variant, options={}, sprt=test,
                       deals_per_set=args.deals_per_set, max_pairs=args.max_pairs,
                       workers=args.workers, seed=args.seed,
                       workdir=Path(args.workdir).resolve(), progress=not args.no_progress)
        got["stops"] = {"wdl": (got["pairs"], got["decision"])}
    else:
        if local:
            source = power.in_process_sets(bot_a, bot_b, args.variant, args.deals_per_set,
                                           args.seed or new_secret(), args.max_pairs)
        else:
            def source(stop, secret=args.seed or new_secret()):
                power.referee_pairs(bot_a, bot_b, args.variant,
                                    args.max_pairs * args.deals_per_set, args.deals_per_set,
                                    secret, Path(args.workdir).resolve(),
                                    workers=args.workers, stop=stop, prefix="sprt")

        def show(n, st):
            if not args.no_progress:
                print(f"\r  {n} pairs, W-D-L {st['W']}-{st['D']}-{st['L']}", end="",
                      file=sys.stderr, flush=True)
        got = power.run_sequential(source, args.score, paired, test, args.max_pairs,
                                   args.deals_per_set, progress=show, both=args.compare)
        if not args.no_progress:
            print(file=sys.stderr)
    if args.score == "diff":
        verdict = {"H1": f"{shown_a} is stronger by at least {args.d1} levels per deal (H1 "
                         "accepted)",
                   "H0": f"{shown_a} is not stronger by {args.d1} levels per deal; at most "
                         f"{args.d0} (H0 accepted)",
                   None: "no decision within --max-pairs"}[got["decision"]]
        at = got["decided_at"]
        print(f"{verdict}: {at} pairs ({2 * at * args.deals_per_set} deals), mean paired "
              f"difference {got['mean_diff']:+.3f} levels per deal over {got['pairs']} pairs, "
              f"LLR {got['llr_diff']:.2f} in [{paired.lower:.2f}, {paired.upper:.2f}], "
              f"{time.perf_counter() - t:.0f}s")
        n, d = got["stops"]["wdl"]
        print(f"on the same pairs, pair W/D/L (H1 {args.elo1} Elo): " +
              (f"{d} after {n} pairs" if d else f"no decision after {n} pairs") +
              f" (W-D-L {got['W']}-{got['D']}-{got['L']} over {got['pairs']} pairs"
              f"{'' if args.compare else '; --compare plays on until it decides'})")
        return 0 if got["decision"] else 3
    verdict = {"H1": f"{shown_a} is stronger by at least {args.elo1} Elo (H1 accepted)",
               "H0": f"{shown_a} is not stronger by {args.elo1} Elo; at most {args.elo0} "
                     "(H0 accepted)",
               None: "no decision within --max-pairs"}[got["decision"]]
    llr = got.get("llr", got.get("llr_wdl"))
    print(f"{verdict}: {got['pairs']} pairs ({got['deals']} deals), W-D-L {got['W']}-"
          f"{got['D']}-{got['L']}, LLR {llr:.2f} in [{test.lower:.2f}, "
          f"{test.upper:.2f}], {time.perf_counter() - t:.0f}s")
    return 0 if got["decision"] else 3


def build_parser() -> argparse.ArgumentParser:
    from referee.match.spec import DEFAULT_TIME_CONTROL as TC
    _VARIANTS = variant_ids_or_exit()
    p = argparse.ArgumentParser(prog="arena", description="Shengji Arena")
    sub = p.add_subparsers(dest="command", required=True)

    rules = sub.add_parser("rules", help="the rules engine")
    rsub = rules.add_subparsers(dest="rules_command", required=True)
    check = rsub.add_parser("check", help="run rules conformance vector files")
    check.add_argument("files", nargs="+")
    check.set_defaults(func=cmd_rules_check)
    variants = rsub.add_parser("variants", help="list the built variant ids and their families")
    variants.set_defaults(func=cmd_rules_variants)
    mutate = rsub.add_parser("mutate", help="break each rule once (one-line mutations on a copy "
                             "of the project) and check that a vector or a test fails")
    mutate.add_argument("--only", default="", metavar="TEXT",
                        help="only the mutations whose rule name contains TEXT")
    mutate.set_defaults(func=cmd_rules_mutate)

    bench = sub.add_parser("bench", help="benchmarks (commands, not tests)")
    bsub = bench.add_subparsers(dest="bench_command", required=True)
    eng = bsub.add_parser("engine", help="random legal deals in process on one core")
    eng.add_argument("--variant", choices=_VARIANTS, help="one variant (default: each in turn)")
    eng.add_argument("--deals", type=int, default=2000)
    eng.add_argument("--repeat", type=int, default=5, help="rounds; the median is reported")
    eng.set_defaults(func=cmd_bench_engine)

    cmp_ = bsub.add_parser("compare", help="this tree's engine against another checkout's: "
                           "arena bench engine of each, alternated, and instructions counted")
    cmp_.add_argument("other", help="the other checkout's folder (e.g. a git worktree)")
    cmp_.add_argument("--variant", nargs="+", choices=_VARIANTS, default=None,
                      help="variants (default: each)")
    cmp_.add_argument("--rounds", type=int, default=3)
    cmp_.add_argument("--deals", type=int, default=2000)
    cmp_.set_defaults(func=lambda a: __import__("tools.benchcompare", fromlist=["x"])
                      .bench_compare(a.other, a.variant or list(_VARIANTS), a.rounds, a.deals))

    link = bsub.add_parser("link", help="referee round trip against a bare grpcio echo")
    link.add_argument("--variant", default="two-deck-fry", choices=_VARIANTS)
    link.add_argument("--deals", type=int, default=3)
    link.set_defaults(func=lambda a: __import__("tools.benchlink", fromlist=["x"]).bench_link(
        a.variant, a.deals))

    sb = bsub.add_parser("sandbox", help="the sandbox's cost: per seat start and per "
                         "decision, sandboxed against unsandboxed")
    sb.add_argument("--starts", type=int, default=20, help="seat starts timed each way")
    sb.add_argument("--deals", type=int, default=3, help="deals of each match (three each way)")
    sb.set_defaults(func=lambda a: __import__("tools.benchsandbox", fromlist=["x"])
                    .bench_sandbox(a.starts, a.deals))

    br = bsub.add_parser("registry", help="a submitted bot version's start on a worker: cold "
                         "(fetch, verify, unpack, build) against warm (its cache)")
    br.add_argument("--rounds", type=int, default=3, help="cold and warm starts of each bot")
    br.set_defaults(func=lambda a: __import__("tools.benchregistry", fromlist=["x"])
                    .bench_registry(a.rounds))

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
    lg.set_defaults(func=lambda a: __import__("tools.benchleague", fromlist=["x"])
                    .bench_league(a.matches, a.deals_per_set, a.pg, a.broker, a.runs,
                                  a.league_matches))

    bw_ = bsub.add_parser("web", help="the dashboard's season page, matches list and API "
                          "standings over a generated season of 10,000 matches")
    bw_.add_argument("--matches", type=int, default=10000)
    bw_.add_argument("--repeat", type=int, default=5, help="requests of each page timed")
    bw_.set_defaults(func=lambda a: __import__("tools.benchweb", fromlist=["x"])
                     .bench_web(a.matches, a.repeat))

    soak = sub.add_parser("soak", help="many matches between sample bots, every record "
                          "verified; any fault is a bug (a command, not a test)")
    soak.add_argument("--variant", action="append", choices=_VARIANTS,
                      help="a variant to play (repeat for more; default: all four)")
    soak.add_argument("--matches", type=int, default=10, help="matches per variant")
    soak.add_argument("--deals", type=int, default=4, help="deals per match")
    soak.add_argument("--seed", default="soak")
    soak.add_argument("--keep", help="a folder for the records of matches with problems")
    soak.add_argument("bots", nargs="*", help="bot manifests or folders, rotated through the "
                      "seats (default: Python random, Node.js, Python greedy, C++)")
    soak.set_defaults(func=cmd_soak)

    rep = sub.add_parser("replay", help="replay a match record without bots",
                         epilog="exit status: 0 verified (or printed); 1 the replay differs "
                         "from the record (a DIFFERS line each), or there is no store; 2 the "
                         "record cannot be read (not JSON, a wrong field: named on stderr; no "
                         "such match in the store); 3 a stored record still sealed")
    rep.add_argument("record", help="a record file, or a match id in the store (--db); a "
                     "stored record is sealed (exit 3) until every match on its cards is over")
    rep.add_argument("--db", help=f"the store (default $ARENA_DB or {DEFAULT_DB})")
    rep.add_argument("--verify", action="store_true", help="re-derive every event and the result")
    rep.add_argument("--seat", type=int, choices=range(4), help="print what this seat saw")
    rep.set_defaults(func=cmd_replay)

    match = sub.add_parser("match", help="play one match between four bots on this machine")
    match.add_argument("bots", nargs="+", help="4 bot manifests (bot.toml or its folder) or "
                       "commands, seats 0-3 (the seats not given to --seat N=listen)")
    match.add_argument("--seat", action="append", metavar="N=listen",
                       help="seat N is played by a bot you start yourself (in a debugger, say): "
                       "the referee listens on 127.0.0.1 and prints the address and the seat's "
                       "token; repeatable")
    match.add_argument("--port", type=int, default=0,
                       help="the TCP port a listening seat connects to (default: a free one)")
    match.add_argument("--connect-timeout-ms", type=int, default=0,
                       help="how long the referee waits for each bot to connect (default "
                       f"{TC.connect_timeout_ms}, or {LISTEN_CONNECT_MS} with a listening seat)")
    match.add_argument("--variant", default="two-deck-fry", choices=_VARIANTS,
                       help=VARIANT_HELP)
    match.add_argument("--deals", type=int, default=4, help="deals to play (default 4)")
    match.add_argument("--game", action="store_true", help="play a whole game to its end")
    match.add_argument("--seed", help="the match's seed, for reproducing a match (default: a "
                       "fresh random one, kept in the record)")
    match.add_argument("--match-id")
    match.add_argument("--out", help="where to write the match record")
    match.add_argument("--per-decision-ms", type=int, default=TC.per_decision_ms)
    match.add_argument("--bank-ms", type=int, default=TC.bank_ms)
    match.add_argument("--max-strikes", type=int, default=TC.max_strikes)
    match.add_argument("--max-reconnects", type=int, default=TC.max_reconnects,
                       help="new streams a seat may open in the match; one more forfeits")
    unsandboxed_option(match)
    match.set_defaults(func=cmd_match)

    season = sub.add_parser("season", help="league seasons")
    ssub = season.add_subparsers(dest="season_command", required=True)
    run = ssub.add_parser("run", help="play a season file's matches (resumable)")
    run.add_argument("file", help="the season file (TOML)")
    run.add_argument("--db", help=f"the store's URL (default $ARENA_DB or {DEFAULT_DB})")
    run.add_argument("--broker", help="a Redis URL: play through Celery workers (arena worker) "
                     "instead of locally (default $ARENA_BROKER, else local)")
    run.add_argument("--workers", type=int, default=max(1, os.cpu_count() or 1),
                     help="local mode: matches played at once (default: the cpu count)")
    run.add_argument("--lease", type=float, default=120.0, help="seconds a silent worker keeps "
                     "a match before it is played elsewhere (default 120)")
    run.add_argument("--window", type=int, default=64, help="distributed: matches in the "
                     "queue at once (default 64)")
    run.add_argument("--workdir", default="records/checks", help="where bots check keeps logs")
    run.add_argument("--no-check", action="store_true", help="admit bots without bots check")
    run.add_argument("--no-progress", action="store_true")
    run.add_argument("--attempts", type=int, help="local mode: attempts of a match the "
                     "infrastructure failed before it is set aside (default $ARENA_MAX_ATTEMPTS "
                     "or 3; distributed: the workers' --attempts)")
    run.add_argument("--metrics-port", type=int, help="serve Prometheus /metrics on this port "
                     "while the season runs (default $ARENA_METRICS_PORT; unset or 0: off)")
    unsandboxed_option(run)
    run.set_defaults(func=cmd_season_run)
    cancel = ssub.add_parser("cancel", help="stop a season: its pending matches are not "
                             "played; running ones finish and count",
                             epilog="exit status: 0 cancelled (or it already was); 2 no such "
                             "season")
    cancel.add_argument("season", help="the season's name")
    cancel.add_argument("--db", help=f"the store's URL (default $ARENA_DB or {DEFAULT_DB})")
    cancel.set_defaults(func=cmd_season_cancel)

    sl = sub.add_parser("seasons", help="every season in the store and its state")
    sl.add_argument("--db", help=f"the store's URL (default $ARENA_DB or {DEFAULT_DB})")
    sl.add_argument("--json", action="store_true")
    sl.set_defaults(func=cmd_seasons)

    worker = sub.add_parser("worker", help="start a Celery worker that plays league matches")
    worker.add_argument("--db", help=f"the store's URL (default $ARENA_DB or {DEFAULT_DB})")
    worker.add_argument("--broker", help="the Redis URL (default $ARENA_BROKER or "
                        "redis://127.0.0.1:6379/0)")
    worker.add_argument("--concurrency", type=int, default=max(1, os.cpu_count() or 1))
    worker.add_argument("--lease", type=float, default=120.0)
    worker.add_argument("--loglevel", default="warning")
    worker.add_argument("--hostname", help="the worker's Celery node name")
    worker.add_argument("--attempts", type=int, help="attempts of a match the infrastructure "
                        "failed before it is set aside (default $ARENA_MAX_ATTEMPTS or 3)")
    worker.add_argument("--metrics-port", type=int, help="serve Prometheus /metrics on this "
                        "port (default $ARENA_METRICS_PORT; unset or 0: off)")
    worker.add_argument("--stop-grace", type=float, help="seconds a match in play may still "
                        "take after SIGTERM before it is handed back uncharged (default "
                        "$ARENA_STOP_GRACE_S or 0: at once)")
    worker.add_argument("--events", action="store_true", help="send Celery task events and "
                        "heartbeats, for Flower (default $ARENA_WORKER_EVENTS=1, else off)")
    unsandboxed_option(worker)
    worker.set_defaults(func=cmd_worker)

    sw = sub.add_parser("sweep", help="remove what killed workers and referees left on this "
                        "machine (seat cgroups and processes, working, socket and metrics "
                        "folders, stop files); never a live one's")
    sw.set_defaults(func=cmd_sweep)

    stand = sub.add_parser("standings", help="a season's standings")
    stand.add_argument("season")
    stand.add_argument("--db")
    fmt = stand.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--csv", action="store_true")
    stand.add_argument("--samples", type=int, default=1000, help="bootstrap resamples")
    stand.set_defaults(func=cmd_standings)

    ms = sub.add_parser("matches", help="a season's matches and their state")
    ms.add_argument("season")
    ms.add_argument("--db")
    ms.add_argument("--status", choices=["pending", "running", "done", "failed", "cancelled"])
    ms.add_argument("--faults", action="store_true", help="bot faults (seat, kind, count) and "
                    "the infrastructure's failed attempts (attempt, reason), match by match")
    ms.set_defaults(func=cmd_matches)

    logs_p = sub.add_parser("logs", help="a seat's bot log kept in a stored match record "
                            "(its last 32 KiB)", epilog="exit status: 0 printed; 2 no such "
                            "match, no record yet or no log of the seat; 3 the record is "
                            "still sealed")
    logs_p.add_argument("match_id")
    logs_p.add_argument("--seat", type=int, choices=range(4), required=True,
                        help="the seat, 0-3")
    logs_p.add_argument("--db", help=f"the store's URL (default $ARENA_DB or {DEFAULT_DB})")
    logs_p.add_argument("--raw", action="store_true", help="print the log as the bot wrote "
                        "it (by default its control and invisible characters are shown as "
                        "escapes, \\x1b or \\u202e, so that none acts on the terminal)")
    logs_p.set_defaults(func=cmd_logs)

    bots = sub.add_parser("bots", help="bot manifests")
    bsub2 = bots.add_subparsers(dest="bots_command", required=True)
    bc = bsub2.add_parser("check", help="a short smoke match a bot must pass to join a season")
    bc.add_argument("manifest")
    bc.add_argument("--variant", default="two-deck-fry", choices=_VARIANTS,
                       help=VARIANT_HELP)
    bc.add_argument("--seed", help="the deal's seed (default: a fresh random one)")
    bc.add_argument("--per-decision-ms", type=int, default=TC.per_decision_ms)
    bc.add_argument("--workdir", default="records/checks")
    unsandboxed_option(bc)
    bc.set_defaults(func=cmd_bots_check)
    db_help = f"the store's URL (default $ARENA_DB or {DEFAULT_DB})"
    bs = bsub2.add_parser("submit", help="store a bot folder or archive (.tar, .tar.gz, .tgz, "
                          ".zip) in the registry as an immutable version",
                          allow_abbrev=False)  # no --token for --token-file: never a token
    bs.add_argument("source", metavar="DIR_OR_ARCHIVE")
    bs.add_argument("--name", help="the bot's name (default: the manifest's)")
    bs.add_argument("--version", help="the version (default: the manifest's)")
    bs.add_argument("--author", help="the author submitting: a name belongs to the author of "
                    "its first version, and only they add versions of it. Their token is read "
                    "from $ARENA_AUTHOR_TOKEN or --token-file and checked; --author without a "
                    "token is the organiser writing straight into their own store")
    bs.add_argument("--token-file", metavar="PATH", help="a file holding the author's token "
                    "(`arena authors add`); never give the token itself as an argument")
    bs.add_argument("--db", help=db_help)
    bs.set_defaults(func=cmd_bots_submit)
    authors = sub.add_parser("authors", help="the registry's authors")
    asub = authors.add_subparsers(dest="authors_command", required=True)
    aa = asub.add_parser("add", help="a new author; prints their token once")
    aa.add_argument("name")
    aa.add_argument("--db", help=db_help)
    aa.set_defaults(func=cmd_authors_add)
    bl = bsub2.add_parser("list", help="every bot version in the registry")
    bl.add_argument("--db", help=db_help)
    bl.add_argument("--json", action="store_true")
    bl.set_defaults(func=cmd_bots_list)
    bw = bsub2.add_parser("show", help="a bot version's fields and files")
    bw.add_argument("ref", metavar="NAME[@VERSION]", help="a version, or a name: its latest")
    bw.add_argument("--db", help=db_help)
    bw.add_argument("--raw", action="store_true", help="print the fields and file names as "
                    "stored (by default their control and invisible characters are escaped)")
    bw.set_defaults(func=cmd_bots_show)
    br = bsub2.add_parser("remove", help="delete a bot version no season pins")
    br.add_argument("ref", metavar="NAME@VERSION")
    br.add_argument("--db", help=db_help)
    br.set_defaults(func=cmd_bots_remove)

    sp = sub.add_parser("sprt", help="duplicate pairs of A against B until a sequential "
                        "probability ratio test decides")
    sp.add_argument("a", help="bot A's folder or manifest, or an in-process policy (random, "
                    "greedy, greedy-noisy[:EPS])")
    sp.add_argument("b", help="bot B, likewise")
    sp.add_argument("--score", choices=("diff", "wdl"), default="diff",
                    help="what each pair scores: diff, its paired difference per deal "
                    "(continuous; the default, see docs/statistics.md), or wdl, its "
                    "win/draw/loss by net levels (the earlier test)")
    sp.add_argument("--compare", action="store_true", help="--score diff: play on until "
                    "the pair-W/D/L test decides too, to see where each stops on the same pairs")
    sp.add_argument("--d0", type=float, default=0.0, help="--score diff, H0: A gains at most "
                    "this many levels per deal (default 0)")
    sp.add_argument("--d1", type=float, default=0.05, help="--score diff, H1: A gains at "
                    "least this many levels per deal (default 0.05)")
    sp.add_argument("--variant", default="two-deck-fry", choices=_VARIANTS,
                       help=VARIANT_HELP)
    sp.add_argument("--elo0", type=float, default=0.0, help="--score wdl, H0: A is at most "
                    "this much stronger (default 0)")
    sp.add_argument("--elo1", type=float, default=50.0, help="--score wdl, H1: A is at least "
                    "this much stronger (default 50)")
    sp.add_argument("--alpha", type=float, default=0.05, help="false H1 rate (default 0.05)")
    sp.add_argument("--beta", type=float, default=0.05, help="false H0 rate (default 0.05)")
    sp.add_argument("--deals-per-set", type=int, default=4)
    sp.add_argument("--max-pairs", type=int, default=200)
    sp.add_argument("--workers", type=int, default=max(2, os.cpu_count() or 2),
                    help="matches at once (two per pair)")
    sp.add_argument("--seed", help="the key of the deals' seeds, for reproducing a run "
                    "(default: a fresh random one: no bot can tell the cards)")
    sp.add_argument("--workdir", default="records/sprt")
    sp.add_argument("--no-progress", action="store_true")
    unsandboxed_option(sp)
    sp.set_defaults(func=cmd_sprt)

    web = sub.add_parser("web", help="a read-only dashboard over the store (pages and a JSON "
                         "API under /api)")
    web.add_argument("--db", help=f"the store's URL (default $ARENA_DB or {DEFAULT_DB})")
    web.add_argument("--host", default="127.0.0.1", help="the address to bind (default "
                     "127.0.0.1: this machine only)")
    web.add_argument("--port", type=int, default=8000)
    web.set_defaults(func=cmd_web)

    demo = sub.add_parser("demo", help="a small season of the sample bots, with standings")
    demo.add_argument("--workers", type=int, default=max(1, os.cpu_count() or 1))
    demo.add_argument("--out", default="records")
    unsandboxed_option(demo)
    demo.set_defaults(func=cmd_demo)

    # Commands kept in modules of their own: each module's register(sub, bench_sub) adds its
    # subcommands (one line per module here).
    from cli import lab; lab.register(sub, bsub)  # noqa: E702
    from cli import ops; ops.register(sub, bsub)  # noqa: E702
    from cli import study; study.register(sub, bsub)  # noqa: E702
    from cli import botzone; botzone.register(sub, bsub)  # noqa: E702
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader went away (`arena standings S | head`): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # (no second error as Python flushes at exit)
        return 0


if __name__ == "__main__":
    sys.exit(main())
