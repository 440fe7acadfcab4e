"""The gRPC referee server: seat links, the Referee servicer, health checking and reflection.

The servicer is thin: it binds a stream to a seat by its token and moves messages between the
stream and that seat's link; the match runner (``referee.match.runner``) does the rest.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import deque
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from shengji_arena.v1 import referee_pb2 as pb
from shengji_arena.v1 import referee_pb2_grpc as pb_grpc

from referee.wire.protocol import PROTOCOL

MAX_MESSAGE_BYTES = 64 * 1024
INBOX_LIMIT = 32
"""Messages from a seat held unread at most. Beyond it the referee stops reading the seat's
stream until the runner takes one, so gRPC's flow control holds back a seat that floods instead
of the referee's memory filling up; the runner judges what it takes at the seat's turn."""
HELLO_TIMEOUT_S = 10.0
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Referee"].full_name
_DISCONNECT = object()
TIMED_OUT = object()
"""What ``Mailbox.get`` returns when its timeout passed first."""


class Mailbox:
    """A first-in first-out queue of messages with one reader at a time: what an
    ``asyncio.Queue`` does here, with less work per message (two go through one for every
    decision), and a timeout of its own instead of a timeout scope around the wait. A writer
    may wait for the reader to take an item (``wait_taken``), to bound the queue."""

    __slots__ = ("_items", "_waiter", "_taken")

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


@dataclass
class SeatLink:
    """One seat's connection, as the match runner sees it."""

    seat: int
    token: str
    inbox: Mailbox = field(default_factory=Mailbox)
    outbox: Mailbox | None = None
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    hello: pb.Hello | None = None
    connections: int = 0
    closed: bool = False

    def send(self, msg: pb.RefereeMessage) -> bool:
        """Queue a message for the seat's stream; False when the seat is not connected."""
        if self.outbox is None:
            return False
        self.outbox.put_nowait(msg)
        return True

    def close(self) -> None:
        """End the seat's stream (the match is over for it)."""
        self.closed = True
        if self.outbox is not None:
            self.outbox.put_nowait(None)

    def _attach(self, hello: pb.Hello) -> Mailbox:
        self.hello = hello
        self.connections += 1
        self.outbox = Mailbox()
        self.connected.set()
        return self.outbox

    def _detach(self, outbox: Mailbox) -> None:
        if self.outbox is outbox:
            self.outbox = None
            self.connected.clear()


REFUSALS_KEPT = 20
"""Refused streams described one by one; beyond these they are only counted."""


class SeatHub:
    """The four seats of a match and their tokens."""

    def __init__(self, tokens: list[str] | None = None) -> None:
        tokens = tokens or [secrets.token_urlsafe(24) for _ in range(4)]
        self.links = [SeatLink(i, t) for i, t in enumerate(tokens)]
        self._by_token = {link.token: link for link in self.links}
        self.refused: list[dict] = []  # streams refused: wrong or reused tokens
        self.refused_more = 0  # refusals past REFUSALS_KEPT
        self.on_attach = None  # called with the seat when a stream is bound to it

    def find(self, token: str) -> SeatLink | None:
        return self._by_token.get(token)

    def refuse(self, reason: str, bot: str) -> None:
        if len(self.refused) < REFUSALS_KEPT:
            self.refused.append({"reason": reason, "bot": bot[:100]})
        else:
            self.refused_more += 1


class RefereeServicer(pb_grpc.RefereeServicer):
    """Binds each Play stream to the seat whose token it presents."""

    def __init__(self, hub: SeatHub) -> None:
        self.hub = hub

    async def Play(self, request_iterator, context):  # noqa: N802 (gRPC method name)
        it = request_iterator.__aiter__()
        try:
            first = await asyncio.wait_for(it.__anext__(), HELLO_TIMEOUT_S)
        except (StopAsyncIteration, asyncio.TimeoutError):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                "the first message must be a Hello with the seat token")
        if not first.HasField("hello"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                "the first message must be a Hello with the seat token")
        spoken = first.hello.protocol
        if spoken and spoken != PROTOCOL:  # none given: taken as this referee's own
            self.hub.refuse(f"protocol {spoken[:40]!r}", first.hello.bot_name)
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"this referee speaks {PROTOCOL}, not {spoken[:40]!r}")
        link = self.hub.find(first.hello.token)
        if link is None:
            self.hub.refuse("unknown token", first.hello.bot_name)
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "unknown seat token")
        if link.closed:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the match is over")
        if link.connected.is_set():
            self.hub.refuse(f"token of seat {link.seat}, already connected",
                            first.hello.bot_name)
            await context.abort(grpc.StatusCode.ALREADY_EXISTS,
                                f"seat {link.seat} is already connected")
        outbox = link._attach(first.hello)
        if self.hub.on_attach is not None:  # the match is under way: a Welcome goes first
            self.hub.on_attach(link.seat)
        reader = asyncio.ensure_future(self._read(it, link, outbox))
        try:
            while True:
                msg = await outbox.get()
                if msg is None or msg is _DISCONNECT:
                    break
                yield msg
        finally:
            reader.cancel()
            link._detach(outbox)
            link.inbox.put_nowait(None)

    @staticmethod
    async def _read(it, link: SeatLink, outbox: Mailbox) -> None:
        inbox = link.inbox
        try:
            async for msg in it:
                inbox.put_nowait(msg)
                while inbox.qsize() >= INBOX_LIMIT:  # a flood: read on once the runner takes one
                    await inbox.wait_taken()
        except Exception:  # a broken stream (garbage, reset): the seat is disconnected
            pass
        outbox.put_nowait(_DISCONNECT)
        link.inbox.put_nowait(None)  # wakes a runner waiting for this seat's answer


def create_server(hub: SeatHub, addresses: list[str]) -> grpc.aio.Server:
    """A referee server listening on ``addresses`` ("unix:/path" or "host:port"), with health
    checking and server reflection registered."""
    server = grpc.aio.server(options=[
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", 4 * 1024 * 1024),
    ])
    pb_grpc.add_RefereeServicer_to_server(RefereeServicer(hub), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)
    server.health = health_servicer  # type: ignore[attr-defined]
    for address in addresses:
        server.add_insecure_port(address)
    return server


async def mark_serving(server) -> None:
    for name in ("", SERVICE_NAME):
        await server.health.set(name, health_pb2.HealthCheckResponse.SERVING)
