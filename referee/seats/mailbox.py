"""``Mailbox``: the queue between a seat's transport and the match runner; ``LoopLag``: the time
the referee's event loop lost (it times every seat's decisions, and a seat is not charged for
the loop's stalls)."""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import Sequence

from referee.seats.seat import TIMED_OUT


class Mailbox:
    """A first-in first-out queue of messages with one reader at a time: what an
    ``asyncio.Queue`` does here, with less work per message (two go through one for every
    decision), and a timeout of its own instead of a timeout scope around the wait. A writer
    may wait for the reader to take an item (``wait_taken``), to bound the queue."""

    __slots__ = ("_items", "_taken", "_waiter")

    def __init__(self) -> None:
        self._items: deque = deque()
        self._waiter: asyncio.Future | None = None
        self._taken: asyncio.Future | None = None  # a writer waiting for an item to be taken

    def put_nowait(self, item) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items)

    def get_nowait(self):
        return self._take()  # IndexError when empty

    def _take(self):
        item = self._items.popleft()
        taken = self._taken
        if taken is not None:  # a writer waits for room
            self._taken = None
            if not taken.done():
                taken.set_result(None)
        return item

    async def wait_taken(self) -> None:
        """Wait until the reader takes an item."""
        self._taken = asyncio.get_running_loop().create_future()
        await self._taken

    async def get(self, timeout: float | None = None):
        """The next item, waiting for one; ``TIMED_OUT`` once ``timeout`` seconds passed."""
        if self._items:
            return self._take()
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()
        if self._items:
            return self._take()
        return TIMED_OUT


def _expire(waiter: asyncio.Future) -> None:
    if not waiter.done():
        waiter.set_result(None)


LAG_TICK_S = 0.005
"""How often the loop-lag monitor's timer is due."""
LAG_TOLERANCE_S = 0.010
"""Lateness of the monitor's timer that is ordinary scheduling (the process waiting for a core
on a loaded machine), not a stall; a stall is excused less this much, so that an answer that
arrived during it is never charged less than it took."""
SETTLE_TICKS = 2
"""How soon after a stall ends an answer is taken to have waited through it, in the monitor's
ticks: the loop takes a few steps to bring an answer that arrived meanwhile to the runner, each
of which a loaded machine delays (its process waiting for a core), so the bound is the loop's
progress, not a time (a bound of 3 ms charged a seat a whole 600 ms stall on a loaded machine):
idle, two ticks are 5-10 ms; the busier the loop catching up, the later its ticks run."""
EXCUSED_LAG_MAX_S = 2.0
"""The most loop stall one decision is excused: past it, a stall is charged like any other
time."""
STALLS_KEPT = 32
NO_STALLS: tuple[tuple[float, float], ...] = ()
"""What ``LoopLag.stalls_before`` answers when an answer waited through none (never changed)."""

_monitors: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class LoopLag:
    """Measures how late the running loop is: a timer due every ``LAG_TICK_S``; whatever it ran
    later than ``LAG_TOLERANCE_S`` (less that) is a stall, time the loop lost (nothing it serves could run).
    A seat's deadline moves on by the stalls while its request is open (``lost`` before and
    after), and a seat is not charged for the stalls its answer waited through
    (``stalls_before``)."""

    __slots__ = ("_loop", "_due", "_handle", "total", "stalls", "ticks")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.total = 0.0  # seconds lost, up to the last tick
        self.stalls: deque = deque(maxlen=STALLS_KEPT)  # (start, end, tick), loop time
        self.ticks = 0  # ticks run so far
        self._due = loop.time() + LAG_TICK_S
        self._handle = loop.call_at(self._due, self._tick)

    def _tick(self) -> None:
        now = self._loop.time()
        late = now - self._due
        self.ticks += 1
        if late > LAG_TOLERANCE_S:
            self.total += late - LAG_TOLERANCE_S
            self.stalls.append((self._due + LAG_TOLERANCE_S, now, self.ticks))
        self._due = now + LAG_TICK_S
        self._handle = self._loop.call_at(self._due, self._tick)

    def lost(self) -> float:
        """Seconds the loop has lost so far, a stall not yet over (its tick still to run)
        included."""
        late = self._loop.time() - self._due
        return self.total + (late - LAG_TOLERANCE_S if late > LAG_TOLERANCE_S else 0.0)

    def stalls_before(self, now: float) -> Sequence[tuple[float, float]]:
        """The stalls (start, end) an answer taken at ``now`` may have waited through: the one
        going on, or the last if it ended less than ``SETTLE_TICKS`` ticks before, and each
        before those that ended less than ``SETTLE_TICKS`` ticks before the next began (a loaded
        loop catching up on a long stall may stall again, briefly, before the answer is
        taken), newest first."""
        going_on = now - self._due > LAG_TOLERANCE_S
        if not going_on and (not self.stalls or self.ticks - self.stalls[-1][2] >= SETTLE_TICKS):
            return NO_STALLS  # (every decision asks: the common answer, at once)
        out = []
        tick = self.ticks  # the tick after which the newest stall taken so far began
        if going_on:
            out.append((self._due + LAG_TOLERANCE_S, now))
        for start, end, ended in reversed(self.stalls):
            if tick - ended >= SETTLE_TICKS:
                break
            out.append((start, end))
            tick = ended - 1
        return out

    def stop(self) -> None:
        self._handle.cancel()


def loop_lag() -> LoopLag:
    """The running loop's lag monitor, started on first use (one per loop)."""
    loop = asyncio.get_running_loop()
    monitor = _monitors.get(loop)
    if monitor is None:
        monitor = _monitors[loop] = LoopLag(loop)
    return monitor


def excused(since: float, monitor: LoopLag) -> float:
    """The loop's stalls since ``monitor.lost()`` was ``since`` that a deadline is moved on by,
    bounded by ``EXCUSED_LAG_MAX_S``."""
    return min(monitor.lost() - since, EXCUSED_LAG_MAX_S)


def waited_through(started: float, now: float, monitor: LoopLag) -> float:
    """Seconds of an answer taken at ``now`` (its request out at ``started``) that the loop
    lost: the stalls it waited through (``LoopLag.stalls_before``), from ``started`` at the
    earliest, bounded by ``EXCUSED_LAG_MAX_S``; 0 when it waited through none."""
    stalls = monitor.stalls_before(now)
    if not stalls:
        return 0.0
    lost = sum(max(0.0, end - max(start, started)) for start, end in stalls)
    return min(lost, EXCUSED_LAG_MAX_S)
