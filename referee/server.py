"""The gRPC referee server: seat links, the Referee servicer, health checking and reflection.

The servicer is thin: it binds a stream to a seat by its token and moves messages between the
stream and that seat's link; the match runner (``referee.match``) does the rest.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from shengji_arena.v1 import referee_pb2 as pb
from shengji_arena.v1 import referee_pb2_grpc as pb_grpc

MAX_MESSAGE_BYTES = 64 * 1024
HELLO_TIMEOUT_S = 10.0
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Referee"].full_name
_DISCONNECT = object()


@dataclass
class SeatLink:
    """One seat's connection, as the match runner sees it."""

    seat: int
    token: str
    inbox: asyncio.Queue = field(default_factory=asyncio.Queue)
    outbox: asyncio.Queue | None = None
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

    def _attach(self, hello: pb.Hello) -> asyncio.Queue:
        self.hello = hello
        self.connections += 1
        self.outbox = asyncio.Queue()
        self.connected.set()
        return self.outbox

    def _detach(self, outbox: asyncio.Queue) -> None:
        if self.outbox is outbox:
            self.outbox = None
            self.connected.clear()


class SeatHub:
    """The four seats of a match and their tokens."""

    def __init__(self, tokens: list[str] | None = None) -> None:
        tokens = tokens or [secrets.token_urlsafe(24) for _ in range(4)]
        self.links = [SeatLink(i, t) for i, t in enumerate(tokens)]
        self._by_token = {link.token: link for link in self.links}
        self.refused: list[dict] = []  # streams refused: wrong or reused tokens

    def find(self, token: str) -> SeatLink | None:
        return self._by_token.get(token)


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
        link = self.hub.find(first.hello.token)
        if link is None:
            self.hub.refused.append({"reason": "unknown token", "bot": first.hello.bot_name})
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "unknown seat token")
        if link.closed:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the match is over")
        if link.connected.is_set():
            self.hub.refused.append({"reason": f"token of seat {link.seat}, already connected",
                                     "bot": first.hello.bot_name})
            await context.abort(grpc.StatusCode.ALREADY_EXISTS,
                                f"seat {link.seat} is already connected")
        outbox = link._attach(first.hello)
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
    async def _read(it, link: SeatLink, outbox: asyncio.Queue) -> None:
        try:
            async for msg in it:
                link.inbox.put_nowait(msg)
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
