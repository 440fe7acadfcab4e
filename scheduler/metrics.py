"""Prometheus metrics of the processes that play matches: ``arena worker`` and ``season run``.

Off unless ``ARENA_METRICS_PORT`` (``--metrics-port``) is set. The match runner counts what the
referee's record already holds (its per-decision ``timings``, its ``faults``) once a result is
written; nothing is measured inside the rules engine.

The matches are played in other processes than the one that serves ``/metrics`` (the Celery
prefork pool's children, the local mode's process pool), so the metrics use
``prometheus_client``'s multiprocess mode: every process writes its samples to memory-mapped
files in ``PROMETHEUS_MULTIPROC_DIR`` and the serving process sums them on each scrape. The
serving process makes that folder (a fresh one, or the one given, emptied) before any process
that counts is started, and sets the variable for them. A pool child's counts outlive it (a
child is replaced after ``worker_max_tasks_per_child`` matches), so the counters only grow.

Gauges that describe the whole league (the broker's queue, the season's matches by status)
are read at scrape time by the serving process itself, from the broker and the store.

Names follow Prometheus' conventions (``_total`` counters, ``_seconds`` histograms); the only
labels are bounded: a fault's ``kind``, a match's ``status``, the season's name.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from house import settings

if TYPE_CHECKING:
    from redis import Redis

PORT_ENV = settings.METRICS_PORT.name
DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"
MADE_ENV = settings.METRICS_DIR_MADE.name

MATCH_BUCKETS = (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600)
DECISION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30)


def port_setting(given: int | None = None) -> int | None:
    """The metrics port: ``given`` (a flag), else ``ARENA_METRICS_PORT``; None when off (unset,
    empty or 0). A value that is not a port raises ValueError naming it."""
    if given is not None:
        raw = str(given)
        where = "--metrics-port"
    else:
        raw = (settings.METRICS_PORT.text() or "").strip()
        where = PORT_ENV
    if not raw:
        return None
    if not raw.isdigit() or not 0 <= int(raw) <= 65535:
        raise ValueError(f"{where}={raw!r}: expected a TCP port number (1-65535), or 0 for off")
    return int(raw) or None


def enabled() -> bool:
    """Whether this process counts: the serving process prepared the multiprocess folder."""
    return bool((settings.METRICS_PORT.text() or "").strip() not in ("", "0")
                and os.environ.get(DIR_ENV))


def prepare(port: int) -> Path:
    """Before ``prometheus_client`` is imported (it picks its mode at import; Celery's own
    imports load it) and before any child is started: the multiprocess folder
    (``PROMETHEUS_MULTIPROC_DIR`` emptied of an earlier run's files, or a fresh one) and the
    variables the children inherit. ``arena worker`` calls it before it starts Celery."""
    given = os.environ.get(DIR_ENV)
    if given:
        folder = Path(given)
        folder.mkdir(parents=True, exist_ok=True)
        for f in folder.glob("*.db"):
            f.unlink()
    else:
        folder = Path(tempfile.mkdtemp(prefix="arena-metrics-"))
        os.environ[MADE_ENV] = str(folder)  # ours: removed when the serving process ends
    os.environ[DIR_ENV] = str(folder)
    os.environ[PORT_ENV] = str(port)
    return folder


class _Metrics:
    """The counters and histograms a playing process writes (created once per process)."""

    def __init__(self) -> None:
        from prometheus_client import Counter, Histogram
        self.started = Counter("arena_matches_started", "Match attempts started (claimed "
                               "from the store) by this process and its children")
        self.finished = Counter("arena_matches_finished", "Matches played whose result this "
                                "process wrote to the store (each match counted once)")
        self.duplicate = Counter("arena_matches_duplicate", "Matches played whose result "
                                 "another attempt had written first (not counted again)")
        self.failed = Counter("arena_matches_failed", "Match attempts that ended without a "
                              "record (the infrastructure's fault, charged to no bot)")
        self.handed_back = Counter("arena_matches_handed_back", "Matches handed back "
                                   "uncharged because their worker was told to stop")
        self.decisions = Counter("arena_decisions", "Decisions the bots made in the "
                                 "matches this process wrote")
        self.faults = Counter("arena_faults", "Faults in the matches this process wrote, by "
                              "kind", ["kind"])
        self.match_s = Histogram("arena_match_duration_seconds", "Wall time of a match "
                                 "written, from its claim to its record", buckets=MATCH_BUCKETS)
        self.decision_s = Histogram("arena_decision_duration_seconds", "A bot's time to "
                                    "answer one decision, as the referee timed it",
                                    buckets=DECISION_BUCKETS)


_METRICS: _Metrics | None = None


def _m() -> _Metrics | None:
    global _METRICS
    if _METRICS is None and enabled():
        _METRICS = _Metrics()
    return _METRICS


def match_started() -> None:
    if (m := _m()) is not None:
        m.started.inc()


def match_written(timings, fault_kinds, duration_s: float, counted: bool) -> None:
    """A played match, from its record: ``timings`` ([seat, ms] per decision, as the referee
    keeps them) and its faults' kinds; ``counted``: this process wrote its result (else another
    attempt's was written first)."""
    m = _m()
    if m is None:
        return
    if not counted:
        m.duplicate.inc()
        return
    m.finished.inc()
    m.match_s.observe(duration_s)
    timings = timings or []
    m.decisions.inc(len(timings))
    for _seat, ms in timings:
        m.decision_s.observe(ms / 1000)
    for kind in fault_kinds:
        m.faults.labels(kind=str(kind)).inc()


def match_failed() -> None:
    if (m := _m()) is not None:
        m.failed.inc()


def match_handed_back() -> None:
    if (m := _m()) is not None:
        m.handed_back.inc()


def process_dead(pid: int) -> None:
    """A counting child is gone (its counters stay)."""
    if enabled():
        from prometheus_client import multiprocess
        multiprocess.mark_process_dead(pid)


class _LeagueCollector:
    """Gauges read at scrape time: the broker queue's length, the season's matches by status."""

    def __init__(self, broker: str | None, store_url: str | None, season: str | None,
                 queue: str) -> None:
        self.broker, self.store_url, self.season, self.queue = broker, store_url, season, queue
        self._redis: Redis | None = None

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily
        if self.broker:
            depth = GaugeMetricFamily("arena_queue_depth", "Match messages waiting in the "
                                      "broker's queue")
            try:
                if self._redis is None:
                    import redis
                    self._redis = redis.Redis.from_url(self.broker, socket_timeout=2,
                                                       socket_connect_timeout=2)
                depth.add_metric([], float(self._redis.llen(self.queue)))
                yield depth
            except Exception:  # the broker is away: no sample rather than a wrong one
                pass
        if self.store_url and self.season:
            g = GaugeMetricFamily("arena_season_matches", "The season's matches in the store, "
                                  "by status", labels=["season", "status"])
            try:
                from scheduler.store import open_store
                for status, n in open_store(self.store_url).seasons.counts(self.season).items():
                    g.add_metric([self.season, status], float(n))
                yield g
            except Exception:
                pass


def serve(port: int, *, broker: str | None = None, store_url: str | None = None,
          season: str | None = None, queue: str = "arena", addr: str = "0.0.0.0"):
    """Serve ``/metrics`` on ``port`` from a thread of this process (after ``prepare``):
    the children's multiprocess samples, this process's own and the league gauges. Returns
    the HTTP server (``shutdown()`` stops it)."""
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client import multiprocess
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    registry.register(_LeagueCollector(broker, store_url, season, queue))
    server, _thread = start_http_server(port, addr=addr, registry=registry)
    return server


def cleanup(folder: Path | str | None) -> None:
    """Remove a multiprocess folder this process made."""
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
