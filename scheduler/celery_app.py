"""The Celery app's settings, which the workers (``scheduler.tasks``) and every sender (a
season's, a ladder's, the submission service's dispatcher) share: a sender needs them and not
the tasks, which import what they run."""

from __future__ import annotations

from celery import Celery

from house import settings

DEFAULT_BROKER: str = settings.BROKER.default
QUEUE = "arena"
#: longer than the longest match: a message unacknowledged this long is delivered again
VISIBILITY_TIMEOUT_S = 6 * 3600


def make_app(broker: str | None = None) -> Celery:
    app = Celery("arena", broker=broker or settings.BROKER.value())
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
