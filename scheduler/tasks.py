"""The Celery app: one thin, idempotent task that takes a match id.

Delivery is at least once and the store deduplicates: late acks (a message is acknowledged only
after its match is stored), a prefetch of one (a worker never sits on matches it is not
playing), reject-on-worker-lost (a task whose worker process died goes back to the queue), a
broker visibility timeout longer than the longest match, JSON only. The task never imports
gRPC; the referee runs as its own process (see ``execute``).

Workers read ``ARENA_BROKER`` (default redis://127.0.0.1:6379/0), ``ARENA_DB`` (the store's URL;
required), ``ARENA_LEASE_S`` and ``ARENA_MAX_ATTEMPTS`` (attempts of a match the infrastructure
failed before it is set aside; 3). ``arena worker`` sets them from its flags.
"""

from __future__ import annotations

import os
import sys

from celery import Celery
from celery.signals import worker_process_init

DEFAULT_BROKER = "redis://127.0.0.1:6379/0"
QUEUE = "arena"
#: longer than the longest match: a message unacknowledged this long is delivered again
VISIBILITY_TIMEOUT_S = 6 * 3600


def make_app(broker: str | None = None) -> Celery:
    app = Celery("arena", broker=broker or os.environ.get("ARENA_BROKER", DEFAULT_BROKER))
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        broker_transport_options={"visibility_timeout": VISIBILITY_TIMEOUT_S},
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        task_default_queue=QUEUE,
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        worker_max_tasks_per_child=200,
        # a match in play when the broker connection drops finishes and is stored; its message
        # cannot be acknowledged, and a redelivery finds the match done
        worker_cancel_long_running_tasks_on_connection_loss=False,
    )
    return app


app = make_app()


@worker_process_init.connect
def _warm_up(**_kw) -> None:
    """Each pool process loads the match function and connects to the store before its first
    task, so the first match does not pay for it."""
    db = os.environ.get("ARENA_DB")
    if db:
        from scheduler.execute import execute_match  # noqa: F401
        from scheduler.store import Store
        try:
            Store(db).counts("")
        except Exception as e:  # the task reports it properly; a worker should still start
            print(f"arena worker: the store at {db} does not answer yet: {e}", flush=True)


@app.task(name="arena.play_match")
def play_match(match_id: str) -> str:
    """Play and store match ``match_id`` unless it is done or leased elsewhere."""
    from scheduler.execute import execute_match
    if "grpc" in sys.modules:  # gRPC must never run inside a forked worker
        raise RuntimeError("grpc was imported in a Celery worker process")
    db = os.environ.get("ARENA_DB")
    if not db:
        raise RuntimeError("ARENA_DB is not set: start workers with arena worker --db URL")
    lease_s = float(os.environ.get("ARENA_LEASE_S", "120"))
    outcome = execute_match(db, match_id, lease_s=lease_s)
    print(f"match {match_id}: {outcome}", flush=True)
    return outcome
