"""``arena season`` (run, cancel), ``arena seasons``, ``standings``, ``matches`` and ``logs``
(what a store holds of its seasons), and ``arena worker`` and ``arena sweep`` (the machines
that play a league's matches)."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING

from house import settings
from cli.common import (DB_HELP, LOG_LINES, CommandError, broker_url, db_url, existing_store,
                        open_store, sandbox_or_refuse, unsandboxed_option)
from cli.text import json_text, local_time, visible
from scheduler.reports import bot_versions, sealed_reason, season_rows
from scheduler.states import AttemptOutcome, MatchStatus

if TYPE_CHECKING:
    from scheduler.store.rows import AttemptRow, MatchResultRow


def check_broker(url: str) -> None:
    """Fail early, naming the URL, when the broker does not answer."""
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=5).ping()
    except (redis.RedisError, ValueError) as e:
        raise CommandError(f"--broker {url}: the broker does not answer ({e}); start Redis "
                           "or check the URL") from None


LEASE_S: float = settings.LEASE_S.default  # a silent worker keeps a match (--lease)
CHECK_WORKDIR = "records/checks"  # where bots check keeps logs, unless --workdir says otherwise


def _cpus() -> int:
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class SeasonRun:
    """A season file to play and how (``arena season run``'s options; the defaults are the
    command's)."""
    file: str
    db: str | None = None  # else $ARENA_DB, else the default store
    broker: str | None = None  # else $ARENA_BROKER, else played here
    workers: int = field(default_factory=_cpus)
    lease: float = LEASE_S
    window: int = 64
    workdir: str = CHECK_WORKDIR
    no_check: bool = False
    no_progress: bool = False
    attempts: int | None = None
    metrics_port: int | None = None  # else $ARENA_METRICS_PORT
    unsandboxed: bool = False

    @classmethod
    def of(cls, args) -> SeasonRun:
        """The run ``arena season run``'s parsed arguments ask for."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})


def cmd_season_run(args) -> int:
    return run_season(SeasonRun.of(args))


def run_season(run: SeasonRun) -> int:
    """Play a season file's matches (resumable) and print its standings. Exit 0: every match
    played; 1: some failed; 2: it could not start (nothing enqueued); 130: interrupted."""
    from scheduler import metrics
    from scheduler.league import open_season
    from scheduler.season import SeasonError, load_season
    broker = broker_url(run)
    try:
        port = metrics.port_setting(run.metrics_port)
    except ValueError as e:
        print(f"arena season run: {e}", file=sys.stderr)
        return 2
    try:
        sandbox_or_refuse(run)
        season = load_season(run.file)
        store = open_store(db_url(run))
        if broker:
            check_broker(broker)
        left = open_season(season, store, workdir=Path(run.workdir), check=not run.no_check)
    except (SeasonError, CommandError) as e:
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
        return _season_play(run, store, season, broker, left)
    finally:
        if served is not None:
            served.shutdown()
            metrics.cleanup(made)


def _ladder_play(run: SeasonRun, store, season, broker) -> int:
    """A ladder: kept going until cancelled (``arena season cancel``) or interrupted."""
    from scheduler.ladder import LadderRun, ladder_table
    mode = f"distributed over {broker}" if broker else f"local, {run.workers} workers"
    print(f"ladder {season.name}: {season.variant}, at most {season.config.ladder.queue_ahead} "
          f"matches in play, {mode}; runs until `arena season cancel {season.name}`",
          file=sys.stderr, flush=True)
    runner = LadderRun(store, season, broker=broker, workers=run.workers, lease_s=run.lease)
    try:
        counts = runner.run()
    except KeyboardInterrupt:
        print(f"\ninterrupted: the ladder's matches in play go on; run the same command again "
              f"to keep it going, or `arena season cancel {season.name}`", file=sys.stderr)
        return 130
    print(f"ladder {season.name} cancelled: {counts[MatchStatus.DONE]} matches done, "
          f"{counts[MatchStatus.FAILED]} failed, {counts[MatchStatus.CANCELLED]} cancelled",
          file=sys.stderr)
    print(ladder_text(ladder_table(store, season.name)))
    return 0


def _season_play(run: SeasonRun, store, season, broker, left) -> int:
    from scheduler.league import run_distributed, run_local
    if season.config.is_ladder:
        return _ladder_play(run, store, season, broker)
    from scheduler.reports import season_standings
    from scheduler.stats.standings import table
    total = store.seasons.counts(season.name).total
    mode = f"distributed over {broker}" if broker else f"local, {run.workers} workers"
    print(f"season {season.name}: {season.variant}, {season.format}"
          f"{', duplicate' if season.config.duplicate else ''}, {len(season.bots)} bots, {total} "
          f"matches ({left} to play), store {store.url}, {mode}", file=sys.stderr)
    t = time.perf_counter()
    try:
        if broker:
            counts = run_distributed(store, season.name, broker, window=run.window,
                                     lease_s=run.lease, progress=not run.no_progress)
        else:
            counts = run_local(store, season.name, workers=run.workers, lease_s=run.lease,
                               progress=not run.no_progress, max_attempts=run.attempts)
    except KeyboardInterrupt:
        c = store.seasons.counts(season.name)
        if broker:
            print(f"\ninterrupted: {c[MatchStatus.DONE]} of {total} matches done; the "
                  f"{c[MatchStatus.PENDING] + c[MatchStatus.RUNNING]} queued and running "
                  "matches keep being played by the workers (`arena season cancel "
                  f"{season.name}` stops them); run the same command again to keep reconciling "
                  "and see the standings", file=sys.stderr)
        else:
            print(f"\ninterrupted: {c[MatchStatus.DONE]} of {total} matches done; run the same "
                  "command again to continue", file=sys.stderr)
        return 130
    cancelled = (f", {counts[MatchStatus.CANCELLED]} cancelled"
                 if counts[MatchStatus.CANCELLED] else "")
    print(f"played in {time.perf_counter() - t:.1f}s: {counts[MatchStatus.DONE]} done, "
          f"{counts[MatchStatus.FAILED]} failed{cancelled}", file=sys.stderr)
    st = season_standings(store.seasons.get(season.name), store.pages.standings_rows(season.name))
    print(visible(table(st)))
    return 0 if counts[MatchStatus.FAILED] == 0 else 1


def cmd_worker(args) -> int:
    db = db_url(args)
    try:
        sandbox_or_refuse(args)
    except CommandError as e:
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
        if settings.METRICS_DIR_MADE.text():  # ours: held by the worker it execs into
            from scheduler.sweep import hold_metrics_folder
            hold_metrics_folder(folder)
    env = {**os.environ, settings.DB.name: db, settings.LEASE_S.name: str(args.lease),
           settings.STOP_GRACE_S.name: str(grace)}
    env[metrics.PORT_ENV] = str(port or 0)  # served by the Celery main process (0: off)
    if args.attempts:
        env[settings.MAX_ATTEMPTS.name] = str(args.attempts)
    env[settings.BROKER.name] = broker_url(args) or settings.BROKER.default
    root = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "protos")] + [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    from scheduler.dispatch import MATCH_LANES, Lane

    def celery(queues, concurrency: int, hostname: str | None) -> list[str]:
        cmd = [sys.executable, "-m", "celery", "-A", "scheduler.tasks", "worker", "-Q",
               ",".join(lane.queue for lane in queues), "--pool", "prefork", "--concurrency",
               str(concurrency), "--loglevel", args.loglevel, "--without-gossip",
               "--without-mingle"]
        # Celery's events (Flower's view) only when asked: --events or ARENA_WORKER_EVENTS=1
        cmd += ["-E"] if args.events or settings.WORKER_EVENTS.value() else \
            ["--without-heartbeat"]
        return cmd + (["--hostname", hostname] if hostname else [])
    if args.intake:  # the intake lane: a Celery worker of its own, ended with this one
        name, _, host = (args.hostname or "").partition("@")
        intake_env = dict(env, **{metrics.PORT_ENV: "0"})
        start_lane(celery([Lane.INTAKE], args.intake,
                          f"{name or 'celery'}-intake@{host or '%h'}"), intake_env)
    cmd = celery(MATCH_LANES, args.concurrency, args.hostname)
    os.execvpe(cmd[0], cmd, env)
    return 0


def start_lane(cmd: list[str], env: dict) -> None:
    """Start ``cmd`` (the intake lane's Celery worker) as a child that gets SIGTERM when this
    process ends: this process becomes the match lanes' worker by exec, and its end (a warm
    shutdown, a kill) ends the intake lane too."""
    import functools
    import subprocess

    from scheduler.dispatch import die_with_parent
    subprocess.Popen(cmd, env=env, preexec_fn=functools.partial(die_with_parent, os.getpid()),
                     close_fds=True)


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
    store = existing_store(db_url(args), f"arena: no season {args.season!r}")
    row = store.seasons.get(args.season)
    if row is None:
        known = ", ".join(store.seasons.names()) or "none"
        raise SystemExit(f"arena: no season {args.season!r} in {store.url} (seasons there: "
                         f"{known})")
    return store, row


def cmd_standings(args) -> int:
    from scheduler.reports import season_standings
    from scheduler.stats.standings import table, to_csv
    store, row = _season_row(args)
    st = season_standings(row, store.pages.standings_rows(args.season), samples=args.samples)
    versions = bot_versions(store, args.season)
    ladder = None
    if row.config.is_ladder:
        from scheduler.ladder import ladder_table
        ladder = ladder_table(store, args.season)
    if args.json:
        print(json_text({**st.to_dict(), "versions": versions,
                         **({"ladder": ladder} if ladder is not None else {})}, indent=1))
    elif args.csv:
        sys.stdout.write(visible(to_csv(st)))
    else:
        if ladder is not None:
            print(ladder_text(ladder))
            print("\nover every pair played (Bradley-Terry, as a season's standings):")
        print(visible(table(st)))
        if versions:
            print("versions: " + ", ".join(f"{visible(n, one_line=True)} = "
                                           f"{visible(v['ref'], one_line=True)} ({v['hash'][:12]})"
                                           for n, v in versions.items()))
    return 0


def ladder_text(rows: list[dict]) -> str:
    """A ladder's table, ranked by the conservative rating (openskill's mu - 3 sigma), beside
    the estimate and its 95% interval (mu +- 2 sigma), pairs, last played; retired last."""
    lines = [f"{'version':<32} {'mu-3sigma':>9} {'mu':>6} {'95% interval':>17} {'pairs':>5}  "
             f"{'last played':<16}  state"]
    for r in rows:
        lines.append(f"{visible(r['bot'], one_line=True):<32} {r['rating']:9.2f} "
                     f"{r['mu']:6.2f} [{r['low']:6.2f}, {r['high']:6.2f}] {r['pairs']:5d}  "
                     f"{local_time(r['last_played']) if r['last_played'] else '':<16}  "
                     f"{'retired' if r['retired_at'] else 'active'}")
    return "\n".join(lines)


def cmd_matches(args) -> int:
    store, _ = _season_row(args)
    rows = store.pages.matches(args.season)
    if args.faults:
        return _print_faults(store, args.season, rows, args.status)
    if args.status:
        rows = [r for r in rows if r.status == args.status]
    print(f"{'match':<24} {'team 0':<14} {'team 1':<14} {'status':<8} {'tries':>5} "
          f"{'net':>5} {'secs':>6}  note")
    for r in rows:
        seats = [visible(s, one_line=True) for s in r.seats]
        net = secs = note = ""
        if r.played:
            s = r.summary
            net = f"{s.net[0]:+d}"
            secs = f"{r.duration_s:.1f}"
            if s.forfeit_team is not None:
                note = f"team {s.forfeit_team} forfeited"
            elif s.faults:
                note = f"{s.faults} fault(s)"
        elif r.error:
            note = visible(r.error.splitlines()[0][:60], one_line=True)
        print(f"{r.id:<24} {seats[0]:<14} {seats[1]:<14} {r.status:<8} "
              f"{r.attempts:>5} {net:>5} {secs:>6}  {note}")
    c: dict[str, int] = {}
    for r in rows:
        c[r.status] = c.get(r.status, 0) + 1
    print(", ".join(f"{n} {k}" for k, n in sorted(c.items())) or "no matches")
    return 0


REASONS_SHOWN = 3
"""Distinct reasons shown per seat and kind of fault (the rest counted)."""


def _fault_lines(store, match_id: str, seats: list[str]) -> list[str]:
    """A match's bot faults, per seat and kind: how many, their reasons (the first
    ``REASONS_SHOWN`` distinct ones) and, for a seat whose process ended, how its log ends."""
    from referee.match.matchfile import RecordError
    try:
        record = store.results.record(match_id)
    except RecordError as e:
        return [f"  bot fault       (its record cannot be read: {visible(e, one_line=True)})"]
    faults = record.faults if record else []
    by_kind: dict[tuple[int, str], list] = {}
    for f in faults:
        by_kind.setdefault((f.seat, f.kind), []).append(f)
    lines = []
    for (seat, kind), group in sorted(by_kind.items()):
        lines.append(f"  bot fault       seat {seat} ({seats[seat]}) "
                     f"{visible(kind, one_line=True)} x{len(group)}")
        reasons = list(dict.fromkeys(f.reason for f in group))
        for reason in reasons[:REASONS_SHOWN]:
            lines.append(f"                    {visible(reason[:300], one_line=True)}")
        if len(reasons) > REASONS_SHOWN:
            lines.append(f"                    ... and {len(reasons) - REASONS_SHOWN} other "
                         "reason(s) (arena replay RECORD --verify, or the dashboard)")
        tail = next((f.log_tail for f in group if f.log_tail), None)
        if tail:
            for line in tail.rstrip("\n").splitlines()[-LOG_LINES:]:
                lines.append(f"                    | {visible(line, one_line=True)}")
    return lines


def _print_faults(store, season: str, rows: list[MatchResultRow], status: str | None) -> int:
    """``arena matches SEASON --faults``: bot faults (charged by the referee, per seat and kind)
    apart from the infrastructure's failed attempts (retried on the same cards, charged to
    nobody), match by match."""
    log: dict[str, list[AttemptRow]] = {}
    for a in store.pages.attempt_log(season):
        log.setdefault(a.match_id, []).append(a)
    shown = {"bot": 0, "infra": 0, MatchStatus.FAILED: 0}
    for r in rows:
        if status and r.status != status:
            continue
        seats = [visible(s, one_line=True) for s in r.seats]
        faults = []
        if r.played and r.summary.faults:
            faults = _fault_lines(store, r.id, seats)
        trouble = [a for a in log.get(r.id, [])
                   if a.outcome not in (AttemptOutcome.DONE, AttemptOutcome.RUNNING)]
        notes = [a for a in log.get(r.id, []) if a.outcome == AttemptOutcome.DONE and a.reason]
        if not (faults or trouble or notes or r.status == MatchStatus.FAILED):
            continue
        shown["bot"] += bool(faults)
        shown["infra"] += bool(trouble or notes)
        shown[MatchStatus.FAILED] += r.status == MatchStatus.FAILED
        head = f"{r.id}  {r.status}, {r.attempts} attempt(s)"
        if r.status == MatchStatus.FAILED:
            error = "".join((r.error or "").splitlines()[:1])[:200]
            head += f": set aside, counted for nobody: {visible(error, one_line=True)}"
        print(head)
        for f in faults:
            print(f)
        for a in trouble + notes:
            reason = visible(" ".join((a.reason or "").split())[:200], one_line=True)
            print(f"  infrastructure  attempt {a.attempt} {a.outcome} "
                  f"({visible(a.worker, one_line=True)}): "
                  f"{reason}")
    print(f"{shown['bot']} match(es) with bot faults, {shown['infra']} with infrastructure "
          f"failures (not charged to any bot), {shown[MatchStatus.FAILED]} set aside")
    return 0


def cmd_seasons(args) -> int:
    """``arena seasons``: every season in the store, one line each."""
    store = existing_store(db_url(args), "arena seasons: no seasons to list")
    rows = [{**r, "created": local_time(r["created_at"])} for r in season_rows(store)]
    if args.json:
        print(json_text(rows, indent=1))
        return 0
    if not rows:
        print(f"no seasons in {store.url}")
        return 0
    rows = [{**r, "name": visible(r["name"], one_line=True), "bots": str(len(r["bots"])) + (
        f" ({r['retired']} retired)" if r["retired"] else "")} for r in rows]
    width = max(6, *(len(r["name"]) for r in rows))
    bots = max(4, *(len(r["bots"]) for r in rows))
    print(f"{'season':<{width}} {'variant':<14} {'format':<18} {'bots':>{bots}} "
          f"{'done/total':>11} {MatchStatus.RUNNING:>7} {MatchStatus.PENDING:>7} "
          f"{MatchStatus.FAILED:>6} {MatchStatus.CANCELLED:>9}  "
          f"{'created':<16}  status")
    for r in rows:
        fmt = r["format"] + (", dup" if r["duplicate"] else "")
        print(f"{r['name']:<{width}} {r['variant']:<14} {fmt:<18} {r['bots']:>{bots}} "
              f"{str(r[MatchStatus.DONE]) + '/' + str(r['matches']):>11} "
              f"{r[MatchStatus.RUNNING]:>7} {r[MatchStatus.PENDING]:>7} "
              f"{r[MatchStatus.FAILED]:>6} {r[MatchStatus.CANCELLED]:>9}  {r['created']:<16}  "
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
    store = existing_store(db_url(args), f"arena season cancel: no season {args.season!r}")
    got = store.cancels.cancel(args.season, by=_who())
    if got is None:
        known = ", ".join(store.seasons.names()) or "none"
        print(f"arena season cancel: no season {args.season!r} in {store.url} (seasons there: "
              f"{known})", file=sys.stderr)
        return 2
    abandoned = (f" ({got.abandoned} of them running with an expired lease, held by no "
                 "live worker)" if got.abandoned else "")
    if got.already:
        by = f" by {got.by}" if got.by else ""
        print(f"season {args.season} was already cancelled at "
              f"{local_time(got.cancelled_at)}{by}; {got.running} running, "
              f"{got.done} done"
              + (f"; {got.abandoned} abandoned running match(es) cancelled now"
                 if got.abandoned else ""))
        return 0
    print(f"season {args.season} cancelled: {got.pending + got.abandoned} "
          f"pending matches will not be played{abandoned}, {got.running} running "
          f"(they finish; `arena seasons` shows when), {got.done} done stay "
          "counted")
    return 0


def cmd_logs(args) -> int:
    """``arena logs MATCH_ID --seat N``: the end of seat N's bot log kept in the match's
    record. Exit 0: printed; 2: no such match, no record yet (or one that cannot be read) or
    no log of that seat; 3: the record is still sealed."""
    store = existing_store(db_url(args), f"arena logs: {args.match_id}: no such match")
    m = store.pages.match(args.match_id)
    if m is None:
        print(f"arena logs: {args.match_id}: no match with that id in {store.url}",
              file=sys.stderr)
        return 2
    from referee.match.matchfile import RecordError
    try:
        record = store.results.record(args.match_id)
    except RecordError as e:
        print(f"arena logs: {visible(e, one_line=True)}", file=sys.stderr)
        return 2
    if record is None:
        print(f"arena logs: {args.match_id}: no record yet: the match is {m.status}"
              + (f" ({visible(m.error.splitlines()[0][:200], one_line=True)})"
                 if m.error else ""),
              file=sys.stderr)
        return 2
    sealed = store.pages.sealed_by(args.match_id)
    if sealed:
        print(f"arena logs: {args.match_id}: {sealed_reason(sealed)}", file=sys.stderr)
        return 3
    seat = str(args.seat)
    logs = record.extra.get("bot_logs") or {}
    seats = list(record.seats) if any(record.seats) else list(m.seats)
    bot = visible(seats[args.seat], one_line=True) if args.seat < len(seats) else "?"
    if seat not in logs:
        print(f"arena logs: {args.match_id}: no log of seat {args.seat} ({bot}) kept in its "
              "record (a record stored before every seat's log was kept has only the "
              "faulting seats')", file=sys.stderr)
        return 2
    from scheduler.execute import BOT_LOG_KEPT
    text = logs[seat]
    kept = len(text.encode("utf-8"))
    total = (record.extra.get("bot_log_bytes") or {}).get(seat)
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


def register(sub) -> None:
    season = sub.add_parser("season", help="league seasons")
    ssub = season.add_subparsers(dest="season_command", required=True)
    run = ssub.add_parser("run", help="play a season file's matches (resumable)")
    run.add_argument("file", help="the season file (TOML)")
    run.add_argument("--db", help=DB_HELP)
    run.add_argument("--broker", help="a Redis URL: play through Celery workers (arena worker) "
                     "instead of locally (default $ARENA_BROKER, else local)")
    run.add_argument("--workers", type=int, default=_cpus(),
                     help="local mode: matches played at once (default: the cpu count)")
    run.add_argument("--lease", type=float, default=LEASE_S, help="seconds a silent worker "
                     "keeps a match before it is played elsewhere (default 120)")
    run.add_argument("--window", type=int, default=SeasonRun.window, help="distributed: "
                     "matches in the queue at once (default 64)")
    run.add_argument("--workdir", default=CHECK_WORKDIR, help="where bots check keeps logs")
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
    cancel.add_argument("--db", help=DB_HELP)
    cancel.set_defaults(func=cmd_season_cancel)

    sl = sub.add_parser("seasons", help="every season in the store and its state")
    sl.add_argument("--db", help=DB_HELP)
    sl.add_argument("--json", action="store_true")
    sl.set_defaults(func=cmd_seasons)

    worker = sub.add_parser("worker", help="start a Celery worker that plays league matches")
    worker.add_argument("--db", help=DB_HELP)
    worker.add_argument("--broker", help="the Redis URL (default $ARENA_BROKER or "
                        f"{settings.BROKER.default})")
    worker.add_argument("--concurrency", type=int, default=_cpus(), help="match slots: "
                        "seasons', ladders' and scrimmages' matches, taken in turn (default: "
                        "the CPUs)")
    worker.add_argument("--intake", type=int, default=1, metavar="N", help="slots of the "
                        "intake lane (builds and checks of uploads, scrimmages' openings), "
                        "apart from the match slots (default 1; 0: none on this machine)")
    worker.add_argument("--lease", type=float, default=LEASE_S)
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
    ms.add_argument("--status", choices=list(MatchStatus))
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
    logs_p.add_argument("--db", help=DB_HELP)
    logs_p.add_argument("--raw", action="store_true", help="print the log as the bot wrote "
                        "it (by default its control and invisible characters are shown as "
                        "escapes, \\x1b or \\u202e, so that none acts on the terminal)")
    logs_p.set_defaults(func=cmd_logs)
