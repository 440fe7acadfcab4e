"""``Mailbox``: the queue between a seat's transport and the match runner."""

from __future__ import annotations

import asyncio
from collections import deque

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
