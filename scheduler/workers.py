"""Worker heartbeats in the broker's Redis, and the live list ``arena workers`` shows.

Each ``arena worker`` (its Celery main process) keeps a hash ``arena:worker:<node name>`` in
the broker's database: its host, pid, pool size, metrics port, state (``running``, then
``stopping`` once told to stop) and the time of its last heartbeat, rewritten every
``ARENA_HEARTBEAT_S`` seconds (default 5). Each pool process adds a field ``match:<pid>`` for
the match it plays and removes it when the match ends. The key expires after
``TTL_BEATS`` heartbeats (at least a minute) without one: a worker cut off from the broker shows as ``silent``
(its heartbeat older than three intervals) for a while, then disappears; a worker that stops
cleanly removes its key.

A key of our own rather than Celery's remote control (``inspect active``): it answers without
a broadcast round trip to every worker, it still says when a worker that no longer answers was
last heard of, and it needs nothing but the broker's Redis.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time

from house import settings
from scheduler.states import WorkerState

KEY_PREFIX = "arena:worker:"
HEARTBEAT_ENV = settings.HEARTBEAT_S.name
DEFAULT_HEARTBEAT_S: float = settings.HEARTBEAT_S.default
#: heartbeats a key outlives its last one by (and at least ``MIN_TTL_S`` seconds)
TTL_BEATS = 12
MIN_TTL_S = 60
#: heartbeats missed before a worker is called silent
SILENT_BEATS = 3

_clients: dict[tuple[int, str], object] = {}


def heartbeat_setting() -> float:
    raw = (settings.HEARTBEAT_S.text() or "").strip()
    try:
        value = float(raw) if raw else DEFAULT_HEARTBEAT_S
    except ValueError:
        raise ValueError(f"{HEARTBEAT_ENV}={raw!r}: expected seconds (a number)") from None
    if value <= 0:
        raise ValueError(f"{HEARTBEAT_ENV}={raw!r}: expected a positive number of seconds")
    return value


def _redis(url: str):
    """One client per process and URL (never one inherited across a fork)."""
    key = (os.getpid(), url)
    client = _clients.get(key)
    if client is None:
        import redis
        client = redis.Redis.from_url(url, socket_timeout=3, socket_connect_timeout=3,
                                      decode_responses=True)
        _clients[key] = client
    return client


JOIN_S = 5.0
"""How long a stopping worker waits for a beat in flight (one that hangs on the broker is
left behind)."""


def key(node: str) -> str:
    return KEY_PREFIX + node


class Heartbeat:
    """The main process's heartbeat thread for worker ``node`` on broker ``url``."""

    def __init__(self, url: str, node: str, *, concurrency: int, metrics_port: int | None,
                 every_s: float | None = None) -> None:
        self.url, self.node = url, node
        self.every_s = every_s or heartbeat_setting()
        self.fields = {"node": node, "host": socket.gethostname(), "pid": str(os.getpid()),
                       "concurrency": str(concurrency), "started_at": repr(time.time()),
                       "interval_s": repr(self.every_s), "state": WorkerState.RUNNING,
                       "metrics_port": str(metrics_port or ""), "runtimes": ""}
        self._stop = threading.Event()
        self._wake = threading.Event()  # a beat now: the runtimes are known, or the stop
        self._thread = threading.Thread(target=self._run, name="arena-heartbeat", daemon=True)

    def start(self) -> "Heartbeat":
        """The beats, and beside them the runtimes' probe, in a thread of its own: probing
        (a JVM or a compiler asked its version, seconds on a loaded machine) must never delay
        a beat, or the worker would look silent to ``arena workers`` and the dispatcher."""
        self._thread.start()
        threading.Thread(target=self._probe, name="arena-runtimes", daemon=True).start()
        return self

    def _probe(self) -> None:
        self.fields["runtimes"] = self.probe_runtimes()
        self._wake.set()

    def beat(self) -> None:
        """Write the heartbeat now; forget the matches of pool processes that are gone."""
        r = _redis(self.url)
        k = key(self.node)
        pipe = r.pipeline()
        pipe.hset(k, mapping={**self.fields, "heartbeat_at": repr(time.time())})
        pipe.expire(k, int(max(MIN_TTL_S, TTL_BEATS * self.every_s)) + 1)
        pipe.execute()
        for field in r.hkeys(k):
            pid = field.partition(":")[2]
            if field.startswith("match:") and pid.isdigit() and not process_alive(int(pid)):
                r.hdel(k, field)

    def stopping(self) -> None:
        self.fields["state"] = WorkerState.STOPPING
        self._safe(self.beat)

    def stop(self) -> None:
        """The worker ends: its key goes, after any beat in flight (which would write it
        again) has finished."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=JOIN_S)
        self._safe(lambda: _redis(self.url).delete(key(self.node)))

    def _run(self) -> None:
        while not self._stop.is_set():
            self._safe(self.beat)
            self._wake.wait(self.every_s)
            self._wake.clear()

    @staticmethod
    def probe_runtimes() -> str:
        """The bots' runtimes as this machine has them, for ``arena workers`` and ``/me``
        (probed once, beside the beats)."""
        from referee.seats.runtimes import summaries
        try:
            return summaries()
        except Exception as e:  # (a probe that fails says so, once)
            return f"unknown ({type(e).__name__}: {e})"

    @staticmethod
    def _safe(fn) -> None:
        try:
            fn()
        except Exception:  # the broker is away: the next beat tries again
            pass


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine is still there (whoever it belongs to)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def playing(url: str, node: str, match_id: str | None) -> None:
    """In a pool process: the match it plays now (None: none)."""
    field = f"match:{os.getpid()}"
    try:
        r = _redis(url)
        if match_id is None:
            r.hdel(key(node), field)
        elif r.exists(key(node)):  # never recreate the key of a worker that has ended
            r.hset(key(node), field, json.dumps({"match": match_id, "since": time.time()}))
    except Exception:  # the broker is away: the heartbeat list is a view, not the truth
        pass


def list_workers(url: str, now: float | None = None) -> list[dict]:
    """The workers with a key on broker ``url``, by node name: node, host, pid, concurrency,
    state, metrics_port, started_at, heartbeat_at, heartbeat_age_s, alive (heard of within
    ``SILENT_BEATS`` intervals), runtimes (``go 1.27.3, ...``) and matches ([{"match", "since",
    "pid"}])."""
    r = _redis(url)
    now = time.time() if now is None else now
    out = []
    for k in sorted(r.scan_iter(match=KEY_PREFIX + "*", count=500)):
        h = r.hgetall(k)
        if not h or "heartbeat_at" not in h:
            continue
        beat = float(h["heartbeat_at"])
        every = float(h.get("interval_s") or DEFAULT_HEARTBEAT_S)
        playing_now = []
        for field, value in h.items():
            if field.startswith("match:"):
                try:
                    m = json.loads(value)
                except ValueError:
                    continue
                playing_now.append({"match": m.get("match"), "since": m.get("since"),
                                    "pid": int(field.partition(":")[2])})
        out.append({"node": h.get("node", k[len(KEY_PREFIX):]), "host": h.get("host"),
                    "pid": int(h.get("pid") or 0), "concurrency": int(h.get("concurrency") or 0),
                    "state": h.get("state"), "metrics_port": int(h["metrics_port"])
                    if h.get("metrics_port") else None,
                    "started_at": float(h.get("started_at") or 0), "heartbeat_at": beat,
                    "heartbeat_age_s": round(max(0.0, now - beat), 3),
                    "alive": now - beat <= SILENT_BEATS * every,
                    "runtimes": h.get("runtimes", ""),
                    "matches": sorted(playing_now, key=lambda m: m["pid"])})
    return out
