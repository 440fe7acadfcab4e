"""The worker heartbeat's key on the broker (``scheduler.workers.Heartbeat``)."""

import os
import threading
import uuid

import redis

from scheduler.workers import Heartbeat, key

REDIS = os.environ.get("ARENA_TEST_REDIS", "redis://127.0.0.1:6379/12")


def test_a_stopped_heartbeat_leaves_no_key_even_with_a_beat_in_flight():
    """A beat that is writing while the worker stops must not bring the key back after the
    stop deleted it (a stopped worker listed as alive by ``arena workers``)."""
    node = f"beat-test-{uuid.uuid4().hex[:6]}@here"
    entered, release = threading.Event(), threading.Event()

    class HeldBeat(Heartbeat):
        def beat(self):
            entered.set()
            release.wait(10)  # the beat in flight, held until the stop has begun
            super().beat()

    beat = HeldBeat(REDIS, node, concurrency=1, metrics_port=None, every_s=0.05).start()
    assert entered.wait(10)
    stopper = threading.Thread(target=beat.stop)
    stopper.start()
    # a stop that does not wait for the beat is over well within this bound (its key deleted
    # before the beat writes); one that waits is still waiting, whatever the bound
    stopper.join(1.0)
    release.set()
    stopper.join(15)
    assert not stopper.is_alive()
    assert not redis.Redis.from_url(REDIS).exists(key(node))
