"""The worker heartbeat's key on the broker (``scheduler.workers.Heartbeat``)."""

import os
import threading
import time
import uuid

import redis

from referee.seats import runtimes
from scheduler.workers import Heartbeat, key, list_workers

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


def test_the_runtimes_are_probed_beside_the_beats_which_they_never_hold_up():
    """A worker's heartbeat says the bots' runtimes as its machine has them (``arena workers``,
    ``/me``), probed beside the beats: a probe held (a JVM slow to say its version on a loaded
    machine) leaves the worker beating, listed alive, meanwhile; once known, a beat says them."""
    node = f"beat-test-{uuid.uuid4().hex[:6]}@here"
    probing, release = threading.Event(), threading.Event()

    class SlowProbe(Heartbeat):
        @staticmethod
        def probe_runtimes():
            probing.set()
            release.wait(20)
            return Heartbeat.probe_runtimes()

    def listed():
        return next((w for w in list_workers(REDIS) if w["node"] == node), None)

    def later(what, predicate):
        deadline = time.monotonic() + 20
        while not predicate(seen := listed()):
            assert time.monotonic() < deadline, (what, seen)
            time.sleep(0.02)  # (the poll of the listing)
        return seen

    beat = SlowProbe(REDIS, node, concurrency=1, metrics_port=None, every_s=0.05).start()
    try:
        assert probing.wait(10)
        first = later("a beat", lambda w: w is not None)
        assert first["runtimes"] == "" and first["alive"], first
        # two beats more while the probe is still held: it holds none of them up
        again = later("a later beat", lambda w: w["heartbeat_at"] > first["heartbeat_at"])
        later("a beat after that", lambda w: w["heartbeat_at"] > again["heartbeat_at"])
        assert not release.is_set() and listed()["runtimes"] == ""
        release.set()
        seen = later("the runtimes", lambda w: w["runtimes"] != "")
        assert seen["runtimes"] == runtimes.summaries(), seen
        assert f"go {runtimes.GO_VERSION}" in seen["runtimes"], seen
    finally:
        release.set()
        beat.stop()
