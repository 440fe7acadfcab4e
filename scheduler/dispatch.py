"""The one way work is sent: lanes, senders, and the rule that sends a season's due matches.

Every kind of work goes to a lane of its own (a Celery queue), and a worker's slots are shared
between lanes so that no kind can starve another (docs/leagues.md, "Fair shares"):

- ``SEASONS``, ``LADDERS`` and ``SCRIMMAGES``: matches. A worker's ``--concurrency`` slots take
  from the three in turn: the broker's consumer rotates between queues that hold work, so a
  ladder that keeps its queue full leaves a slot to each season and scrimmage waiting after at
  most one match, and a lane with nothing waiting lends every slot to the others.
- ``INTAKE``: builds and checks of uploaded versions, and the opening of scrimmages (which
  builds what they play). A worker runs it on a lane of its own (``arena worker --intake N``,
  one by default), never on a match slot: a build that runs to its time limit delays no match,
  and a ladder holds back no build. Within the lane, authors take turns (``intake_order``),
  and one author's versions hold at most a share of its slots (``author_share``).

A ``Sender`` puts one task on a lane: ``BrokerSender`` through the broker, to the workers;
``LocalSender`` into process pools of this machine (``arena serve`` with no broker).
``dispatch`` is the one way any kind of work is put on a lane, and ``Resend`` the one rule
of when work sent is sent again: when its message is believed lost (sent ``after_s`` ago and
not started), and, for a match, once the lease of its worker ran out (the worker died).
``send_due`` sends a season's due matches (seasons, ladders and scrimmages alike: at most
``window`` queued or playing); ``repeat`` is the one loop of passes that a season's run, a
ladder and the service's dispatcher each keep going.
"""

from __future__ import annotations

import enum
import os
import sys
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Callable, Iterable, Protocol, Sequence

from house import settings
from scheduler.states import MatchStatus, VersionState, WorkerState
from scheduler.store.rows import IntakeItem
from scheduler.store.schema import DEFAULT_LEASE_S


#: a pending match sent this long ago and not started is sent again (its message was lost);
#: longer than a message waits behind others in a fair lane
RESEND_S = 600.0


@dataclass(frozen=True, slots=True)
class Resend:
    """When work sent is sent again, for every kind: a message sent ``after_s`` ago whose work
    has not started is believed lost; a match being played whose worker renewed no lease for
    ``lease_s`` is believed abandoned (its worker died)."""
    after_s: float = RESEND_S
    lease_s: float = DEFAULT_LEASE_S

    def due(self, sent_at: float | None, now: float | None = None) -> bool:
        """Whether work last sent at ``sent_at`` (None: never) is to be sent now."""
        return sent_at is None or sent_at < (time.time() if now is None else now) - self.after_s


class Lane(enum.Enum):
    """Where a kind of work waits for a worker (its Celery queue)."""
    SEASONS = "arena"
    """Matches of seasons (the queue's name is the one workers always read)."""
    LADDERS = "arena.ladder"
    """Matches of ladders."""
    SCRIMMAGES = "arena.scrimmage"
    """Matches of scrimmages."""
    INTAKE = "arena.intake"
    """Builds and checks of uploaded versions, and scrimmages' openings."""

    @property
    def queue(self) -> str:
        return self.value


#: the lanes a worker's match slots take from, in turn
MATCH_LANES = (Lane.SEASONS, Lane.LADDERS, Lane.SCRIMMAGES)


class Task(enum.Enum):
    """What a worker does with one id."""
    PLAY_MATCH = "arena.play_match"
    """Play and store one match."""
    CHECK_VERSION = "arena.check_version"
    """Build and smoke-check one uploaded version."""
    OPEN_SCRIMMAGE = "arena.open_scrimmage"
    """Open a scrimmage's season (builds what it plays)."""


class Sender(Protocol):
    """Puts one task on a lane; False (with ``error`` said) when it could not."""
    error: str | None

    def send(self, task: Task, arg, lane: Lane) -> bool: ...

    def intake_slots(self) -> int:
        """The intake lane's slots it knows of (the builds worth sending at once)."""


#: how a worker's intake lane is named (``arena worker``: its Celery node NAME-intake@HOST)
INTAKE_NODE = "-intake@"


class BrokerSender:
    """Tasks through the broker to the workers (``arena worker``)."""

    def __init__(self, broker: str) -> None:
        from scheduler.celery_app import make_app
        self.broker, self.app = broker, make_app(broker)
        self.error: str | None = None
        self._slots: tuple[float, int] = (0.0, 0)

    def intake_slots(self) -> int:
        """The intake slots of the live workers, from their heartbeats (looked up at most
        every ten seconds); 0 when none is heard of."""
        import time
        at, n = self._slots
        if time.monotonic() - at > 10:
            from scheduler.workers import list_workers
            try:
                n = sum(w["concurrency"] for w in list_workers(self.broker)
                        if INTAKE_NODE in w["node"] and w["alive"]
                        and w["state"] == WorkerState.RUNNING)
            except Exception:  # the broker is down: the send says so
                n = 0
            self._slots = (time.monotonic(), n)
        return n

    def send(self, task: Task, arg, lane: Lane) -> bool:
        from kombu.exceptions import OperationalError
        try:
            self.app.send_task(task.value, args=[arg], queue=lane.queue, retry=False)
        except OperationalError as e:  # the broker is down or restarting: sent again later
            self.error = f"broker unreachable ({e})"
            return False
        self.error = None
        return True


def die_with_parent(parent: int) -> None:
    """In a child process: SIGTERM when its parent ends (Linux's PR_SET_PDEATHSIG), however
    it ends, a kill included; at once if it already has."""
    import ctypes
    import os
    import signal
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(0)


def play_here(store_url: str, task: str, arg, lease_s: float,
              max_attempts: int | None = None) -> str:
    """A match sent to this machine, played in a pool process as a worker plays it
    (``execute.execute_match``, tried at most ``max_attempts`` times; None:
    ``ARENA_MAX_ATTEMPTS`` or 3): the task of a ``LocalSender`` with match slots alone (a
    season's local run); ``scheduler.service.intake.run_here`` runs every kind."""
    if task != Task.PLAY_MATCH.value:
        raise ValueError(f"{task} {arg}: only matches are played here")
    from scheduler.execute import execute_match
    return execute_match(store_url, arg, lease_s=lease_s, max_attempts=max_attempts)


class LocalSender:
    """Tasks into process pools of this machine, one pool per kind of slot: ``match_slots``
    processes for the match lanes (taken in the order sent, each lane bounded by its
    ``window``) and ``intake_slots`` for the intake (0: none, its tasks not sent); each task is
    ``run(store_url, task name, id, lease_s, max_attempts)`` in a pool process
    (``scheduler.service.intake.run_here``: what a worker would do). A task already waiting
    or running here is not sent twice; ``wait`` waits for those in play to end, ``failure``
    is the last error one of them raised. ``close`` ends the pools."""

    def __init__(self, store_url: str, run, *, match_slots: int = 1, intake_slots: int = 1,
                 lease_s: float = DEFAULT_LEASE_S, max_attempts: int | None = None,
                 out=sys.stderr) -> None:
        import multiprocessing
        ctx = multiprocessing.get_context("spawn")
        self.store_url, self.run, self.lease_s, self.out = store_url, run, lease_s, out
        self.max_attempts = max_attempts
        self.error: str | None = None
        self.failure: Exception | None = None
        parent = os.getpid()

        def pool(slots: int) -> ProcessPoolExecutor:  # its processes end however this one does
            return ProcessPoolExecutor(max_workers=slots, mp_context=ctx,
                                       initializer=die_with_parent, initargs=(parent,))
        self.pools = {kind: pool(slots) for kind, slots in
                      (("match", match_slots), ("intake", intake_slots)) if slots > 0}
        self._intake_slots = intake_slots
        self._in_play: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._ended = threading.Condition(self._lock)
        self._ends = self._seen = 0  # tasks ended here, and those ``wait`` returned after

    def send(self, task: Task, arg, lane: Lane) -> bool:
        key = (task.value, str(arg))
        kind = "intake" if lane is Lane.INTAKE else "match"
        if kind not in self.pools:
            self.error = f"no {kind} slot here"
            return False
        with self._lock:
            if key in self._in_play:
                return True
            self._in_play.add(key)
        try:
            future = self.pools[kind].submit(self.run, self.store_url, task.value, arg,
                                             self.lease_s, self.max_attempts)
        except RuntimeError as e:  # the pool is shut down or broken (a process of it died)
            with self._lock:
                self._in_play.discard(key)
            self.error = f"the {kind} pool here cannot take work ({e})"
            return False
        self.error = None
        future.add_done_callback(lambda f: self._done(key, f))
        return True

    def _done(self, key: tuple[str, str], future: Future) -> None:
        error = None if future.cancelled() else future.exception()
        with self._ended:
            self._in_play.discard(key)
            self._ends += 1
            if isinstance(error, Exception):
                self.failure = error
            self._ended.notify_all()
        if error is not None and not isinstance(error, KeyboardInterrupt):  # (Ctrl-C: told)
            print(f"arena: {key[0]} {key[1]} failed here: {error!r}; it is "
                  "sent again later", file=self.out, flush=True)

    def intake_slots(self) -> int:
        return self._intake_slots

    def busy(self) -> int:
        with self._lock:
            return len(self._in_play)

    def wait(self, timeout: float | None = None, *, every: bool = False) -> None:
        """Until a task in play here ends (at once if one ended since the last wait), or with
        ``every`` until none is in play; at most ``timeout`` seconds (None: no limit)."""
        with self._ended:
            self._ended.wait_for(lambda: not self._in_play if every
                                 else self._ends > self._seen, timeout)
            self._seen = self._ends

    def close(self) -> None:
        """End the pools and their processes now: a match in play here is played again once
        its lease runs out, a version being built is sent again (as a killed worker's). Idle
        processes end of themselves; none outlives this call."""
        idle = not self.busy()
        for pool in self.pools.values():
            processes = list((getattr(pool, "_processes", None) or {}).values())
            reaper = getattr(pool, "_executor_manager_thread", None)
            pool.shutdown(wait=False, cancel_futures=True)
            for p in processes:
                if not idle:
                    p.terminate()
            # the pool's own thread reaps its processes: the one waiter (a second one racing
            # it could find a process already reaped and take it for alive)
            if reaper is not None:
                reaper.join(10)
            for p in processes:
                if p.exitcode is None:  # not reaped within 10 s: ended here
                    p.terminate()
                    p.join(10)


def dispatch(sender: Sender, task: Task, lane: Lane, due: Sequence, *,
             sent: Callable[[object], object] | None = None,
             unsent: Callable[[list], object] | None = None) -> int | None:
    """Put ``task`` on ``lane`` for each id of ``due``, in order: the one way work of any kind
    is sent. ``sent(id)`` is told of each one sent; when the sender fails, ``unsent`` gets the
    ids not sent (the rest are sent on a later pass, by the same ``Resend`` rule). Returns how
    many were sent, None when the sender failed (its ``error`` says why)."""
    for i, arg in enumerate(due):
        if not sender.send(task, arg, lane):
            if unsent is not None:
                unsent(list(due[i:]))
            return None
        if sent is not None:
            sent(arg)
    return len(due)


def send_due(store, season: str, sender: Sender, lane: Lane, *, window: int,
             resend: Resend = Resend(), in_play: int | None = None) -> int | None:
    """Send ``season``'s due matches on ``lane``, keeping at most ``window`` queued or
    playing: pending ones never sent (or, by ``resend``, whose message was lost), and running
    ones whose lease ran out (their worker died). ``in_play``: the matches the sender holds,
    when it knows them (a ``LocalSender``): the window counts those, not the store's queued
    and running ones. Returns how many were sent, None when the sender failed (the rest are
    sent on a later call)."""
    if in_play is None:
        c = store.seasons.counts(season)
        in_play = c[MatchStatus.RUNNING] + store.queue.queued(season, resend.after_s)
    room = max(0, window - in_play)
    due = store.queue.due(season, resend.after_s, limit=room, lost_after_s=resend.lease_s)
    return dispatch(sender, Task.PLAY_MATCH, lane, due, unsent=store.queue.unmark)


def repeat(step: Callable[[], float | None], *, stop: threading.Event,
           timeout_s: float | None = None,
           timed_out: Callable[[], str] = lambda: "the work is not finished") -> bool:
    """Passes of ``step`` until it returns None (its work is over; False returned) or ``stop``
    is set (True returned); a pass returns the seconds to wait before the next. Past
    ``timeout_s`` seconds (None: no limit) raises ``TimeoutError`` saying ``timed_out()``."""
    started = time.monotonic()
    while (wait_s := step()) is not None:
        if timeout_s is not None and time.monotonic() - started > timeout_s:
            raise TimeoutError(timed_out())
        if stop.wait(wait_s):
            return True
    return False


#: the most versions of one author in the intake lane at once (``author_share``)
PER_AUTHOR_ENV = settings.INTAKE_PER_AUTHOR.name


def author_share(window: int) -> int:
    """How many versions of one author may be in the intake lane at once, of ``window``:
    ``ARENA_INTAKE_PER_AUTHOR`` if set, else half the window rounded up (one of one or two
    slots), so that another author's upload finds a slot free."""
    text = (settings.INTAKE_PER_AUTHOR.text() or "").strip()
    if not text:
        return max(1, -(-window // 2))
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{PER_AUTHOR_ENV}={text!r}: expected a whole number of versions, "
                         "1 or more")
    return int(text)


def intake_order(queue: Iterable[IntakeItem], window: int,
                 per_author: int | None = None) -> list[int]:
    """Which queued versions to send to the intake lane now, authors taking turns: at most
    ``window`` versions sent and not finished (``sent``: sent and still queued, or being built
    or checked) at once, and at most ``per_author`` (None: ``author_share(window)``) of one
    author; among those waiting, the author with the fewest in the lane goes first (then the
    oldest upload), so one author's slow builds hold back another's by at most one build and,
    of two slots or more, leave one free for another author. ``queue``: the store's intake
    queue, oldest first."""
    rows = list(queue)
    share = author_share(window) if per_author is None else per_author
    in_lane: dict[str | None, int] = {}
    for r in rows:
        if r.state != VersionState.QUEUED or r.sent:
            in_lane[r.author] = in_lane.get(r.author, 0) + 1
    room = window - sum(in_lane.values())
    waiting = [r for r in rows if r.state == VersionState.QUEUED and not r.sent]
    chosen: list[int] = []
    while room > 0:
        waiting = [r for r in waiting if in_lane.get(r.author, 0) < share]
        if not waiting:
            break
        pick = min(waiting, key=lambda r: (in_lane.get(r.author, 0), r.version_id))
        waiting.remove(pick)
        chosen.append(pick.version_id)
        in_lane[pick.author] = in_lane.get(pick.author, 0) + 1
        room -= 1
    return chosen


def ahead_in_intake(queue: Iterable[IntakeItem], version_id: int) -> dict[str, int]:
    """What queued version ``version_id`` waits behind at the intake, by state: those being
    built or checked, and the queued ones that go first (sent already, or before it in the
    authors' turns of ``intake_order``)."""
    rows = list(queue)
    ahead: dict[str, int] = {VersionState.QUEUED: 0, VersionState.BUILDING: 0,
                             VersionState.CHECKING: 0}
    for r in rows:
        if r.state in (VersionState.BUILDING, VersionState.CHECKING):
            ahead[r.state] += 1
        elif r.sent and r.version_id != version_id:
            ahead[VersionState.QUEUED] += 1
    every = len(rows) + sum(ahead.values())
    order = intake_order(rows, every, per_author=every)  # (the turns; the share only delays)
    if version_id in order:
        ahead[VersionState.QUEUED] += order.index(version_id)
    return ahead
