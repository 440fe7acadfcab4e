"""The Celery app: one thin, idempotent task that takes a match id.

Delivery is at least once and the store deduplicates: late acks (a message is acknowledged only
after its match is stored), a prefetch of one (a worker never sits on matches it is not
playing), reject-on-worker-lost (a task whose worker process died goes back to the queue), a
broker visibility timeout longer than the longest match, JSON only. The task never imports
gRPC; the referee runs as its own process (see ``execute``).

Workers read ``ARENA_BROKER`` (default: ``house.settings.BROKER``), ``ARENA_DB`` (the store's URL;
required), ``ARENA_LEASE_S`` and ``ARENA_MAX_ATTEMPTS`` (attempts of a match the infrastructure
failed before it is set aside; 3). ``arena worker`` sets them from its flags.

Soft shutdown: told to stop (SIGTERM, Celery's warm shutdown), the main process creates the stop
file (``ARENA_STOP_FILE``) its pool processes watch; a pool process told to stop (the file, or a
SIGTERM of its own) hands the match in play back to the store uncharged after
``ARENA_STOP_GRACE_S`` seconds (0: at once; a match that ends sooner is stored as usual) and
its message back to the queue, where another worker takes it. The main process also keeps the
worker's heartbeat in the broker (``scheduler.workers``) and, with ``ARENA_METRICS_PORT``,
serves ``/metrics`` (``scheduler.metrics``). When it starts, before its pool, it removes what
killed workers and referees left on the machine (``scheduler.sweep``).
"""

from __future__ import annotations

import os
import signal
import sys

from celery.exceptions import Reject
from celery.signals import (task_postrun, task_prerun, worker_init, worker_process_init,
                            worker_process_shutdown, worker_shutdown, worker_shutting_down)

from house import settings
# (the app's settings, apart: the senders import them without the tasks)
from scheduler.celery_app import make_app
from scheduler.states import PlayOutcome


app = make_app()


_main: dict = {}  # the main process's heartbeat, stop file and metrics server


@worker_init.connect
def _main_starts(sender=None, **_kw) -> None:
    """In the main process, before the pool starts: the sweep of what killed workers and
    referees left on this machine (``scheduler.sweep``: one line says what, when anything),
    the stop file's place (the pool processes inherit it), the heartbeat, and ``/metrics``
    when a port is set."""
    from scheduler import metrics
    from scheduler.execute import STOP_FILE_ENV, stop_file_of
    from scheduler.sweep import summary, sweep
    from scheduler.workers import Heartbeat
    try:
        swept = sweep()
        if any(swept.values()):
            print(f"arena worker: swept what dead workers and referees left: "
                  f"{summary(swept)}", flush=True)
    except Exception as e:  # the worker still plays; the operator reads why
        print(f"arena worker: the sweep of dead workers' leftovers failed: {e}", flush=True)
    # made only when told to stop (a worker killed after that leaves it: the sweep's)
    stop = stop_file_of(os.getpid())
    stop.unlink(missing_ok=True)  # an earlier process's of the same pid
    os.environ[STOP_FILE_ENV] = str(stop)
    _main["stop"] = stop
    port = metrics.port_setting()
    broker = sender.app.conf.broker_url
    if port and not metrics.enabled():  # a Celery worker started without `arena worker`
        print(f"arena worker: ARENA_METRICS_PORT={port} but no {metrics.DIR_ENV}: no /metrics "
              "(start workers with `arena worker`, which sets it before any import)", flush=True)
    elif port:  # the pool processes, forked after this, count into the folder served here
        try:
            _main["metrics"] = metrics.serve(port, broker=broker)
            print(f"arena worker: metrics on :{port}/metrics", flush=True)
        except OSError as e:  # the worker still plays; the operator reads why
            print(f"arena worker: ARENA_METRICS_PORT={port}: cannot serve /metrics: {e}",
                  flush=True)
    _main["heartbeat"] = Heartbeat(broker, sender.hostname,
                                   concurrency=sender.concurrency or 1,
                                   metrics_port=port).start()


@worker_shutting_down.connect
def _main_told_to_stop(**_kw) -> None:
    """Warm shutdown: the pool processes hand their matches back (see the module docstring)."""
    stop = _main.get("stop")
    if stop is not None:
        try:
            stop.touch()
        except OSError as e:  # (no temporary folder to write in): the matches run out
            print(f"arena worker: cannot tell the pool to stop ({e}); the matches in play "
                  "finish first", flush=True)
    if "heartbeat" in _main:
        _main["heartbeat"].stopping()


@worker_shutdown.connect
def _main_ends(**_kw) -> None:
    if "heartbeat" in _main:
        _main["heartbeat"].stop()
    if "metrics" in _main:
        from scheduler import metrics
        _main["metrics"].shutdown()
        metrics.cleanup(settings.METRICS_DIR_MADE.text())
    if "stop" in _main:
        _main["stop"].unlink(missing_ok=True)


@task_prerun.connect
def _playing(task=None, args=None, **_kw) -> None:
    """In a pool process, a match starts: its heartbeat field, and a SIGTERM of this process
    of its own (a whole process group told to stop) hands the match back as the main
    process's warm shutdown does. Between matches SIGTERM keeps the pool's own meaning."""
    from scheduler.workers import playing
    if task is not None and task.name == "arena.play_match" and args:
        _main["child_sigterm"] = signal.signal(signal.SIGTERM, _told_to_stop)
        playing(task.app.conf.broker_url, task.request.hostname, str(args[0]))


@task_postrun.connect
def _played(task=None, **_kw) -> None:
    from scheduler.workers import playing
    if task is not None and task.name == "arena.play_match":
        if "child_sigterm" in _main:
            signal.signal(signal.SIGTERM, _main.pop("child_sigterm"))
        playing(task.app.conf.broker_url, task.request.hostname, None)


@worker_process_shutdown.connect
def _child_ends(pid=None, **_kw) -> None:
    from scheduler import metrics
    if pid:
        metrics.process_dead(pid)


def _told_to_stop(_signum, _frame) -> None:
    from scheduler.execute import request_stop
    request_stop()


@worker_process_init.connect
def _warm_up(**_kw) -> None:
    """Each pool process loads the match function and connects to the store before its first
    task, so the first match does not pay for it."""
    db = settings.DB.text()
    if db:
        from scheduler.execute import execute_match  # noqa: F401
        from scheduler.store import open_store
        try:
            open_store(db).seasons.counts("")
        except Exception as e:  # the task reports it properly; a worker should still start
            print(f"arena worker: the store at {db} does not answer yet: {e}", flush=True)


@app.task(name="arena.play_match")
def play_match(match_id: str) -> str:
    """Play and store match ``match_id`` unless it is done or leased elsewhere."""
    from scheduler.execute import execute_match
    if "grpc" in sys.modules:  # gRPC must never run inside a forked worker
        raise RuntimeError("grpc was imported in a Celery worker process")
    db = settings.DB.text()
    if not db:
        raise RuntimeError("ARENA_DB is not set: start workers with arena worker --db URL")
    lease_s = settings.LEASE_S.value()
    outcome = execute_match(db, match_id, lease_s=lease_s)
    print(f"match {match_id}: {outcome}", flush=True)
    if outcome == PlayOutcome.HANDED_BACK:  # the message back to the queue: another worker plays it
        raise Reject(f"match {match_id} handed back: its worker is stopping", requeue=True)
    return outcome


@app.task(name="arena.check_version")
def check_version(version_id: int) -> str:
    """Build and smoke-check a version the submission service took in
    (``scheduler.service.intake``)."""
    from scheduler.service.intake import check_version as check
    from scheduler.store import open_store
    state = check(open_store(_db()), int(version_id))
    print(f"version {version_id}: {state}", flush=True)
    return state


@app.task(name="arena.open_scrimmage")
def open_scrimmage(scrimmage_id: int) -> str:
    """Open a scrimmage's season (``scheduler.service.intake``); its matches follow as
    play_match."""
    from scheduler.service.intake import open_scrimmage as open_
    from scheduler.store import open_store
    state = open_(open_store(_db()), int(scrimmage_id))
    print(f"scrimmage {scrimmage_id}: {state}", flush=True)
    return state


def _db() -> str:
    db = settings.DB.text()
    if not db:
        raise RuntimeError("ARENA_DB is not set: start workers with arena worker --db URL")
    return db
