"""The gRPC referee server: the Referee servicer; health checking and reflection on the
organiser-facing server only, never on a seat's own socket.

The servicer is thin: it binds a stream to a seat by its token and moves messages between the
stream and that seat's link (``referee.seats.grpc_seat``); the match runner
(``referee.match.runner``) does the rest.
"""

from __future__ import annotations

import asyncio
import time

import grpc
from shengji_arena.v1 import referee_pb2 as pb
from shengji_arena.v1 import referee_pb2_grpc as pb_grpc

from referee.seats.grpc_seat import SeatHub, SeatLink
from referee.seats.mailbox import Mailbox
from referee.seats.seat import INBOX_LIMIT
from referee.wire.protocol import PROTOCOL

MAX_MESSAGE_BYTES = 64 * 1024
HELLO_TIMEOUT_S = 10.0
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Referee"].full_name
EVENT_DELIVERIES = frozenset(pb.EventDelivery.values())
"""The ``Hello.event_delivery`` values this referee serves; a Hello with another is refused."""
_KNOWN_DELIVERIES = ", ".join(f"{pb.EventDelivery.Name(v)} ({v})"
                              for v in sorted(EVENT_DELIVERIES))
_DISCONNECT = object()


class RefereeServicer(pb_grpc.RefereeServicer):
    """Binds each Play stream to the seat whose token it presents; with ``seat``, the server
    listens on that seat's own socket and takes that seat's token only."""

    def __init__(self, hub: SeatHub, seat: int | None = None) -> None:
        self.hub = hub
        self.seat = seat

    async def Play(self, request_iterator, context):  # noqa: N802 (gRPC method name)
        if self.seat is not None and self.hub.links[self.seat].opened_at is None:
            self.hub.links[self.seat].opened_at = time.monotonic()  # (the match's start-up)
        it = request_iterator.__aiter__()
        try:
            first = await asyncio.wait_for(it.__anext__(), HELLO_TIMEOUT_S)
        except (StopAsyncIteration, asyncio.TimeoutError):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                "the first message must be a Hello with the seat token")
        if not first.HasField("hello"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                "the first message must be a Hello with the seat token")
        hello = first.hello
        link = self.hub.find(hello.token)
        own = None if self.seat is None else self.hub.links[self.seat]  # this socket's seat
        spoken = hello.protocol
        if spoken and spoken != PROTOCOL:  # none given: taken as this referee's own
            self.hub.refuse(f"its Hello speaks protocol {spoken[:40]!r}, this referee "
                            f"{PROTOCOL}", hello.bot_name, own or link,
                            unplayable=link is not None and link is (own or link))
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"this referee speaks {PROTOCOL}, not {spoken[:40]!r}")
        delivery = hello.event_delivery  # an enum value the referee does not know stays a number
        if delivery not in EVENT_DELIVERIES:
            self.hub.refuse(f"its Hello asks for event_delivery {delivery}, which is none of "
                            f"{_KNOWN_DELIVERIES}", hello.bot_name, own or link,
                            unplayable=link is not None and link is (own or link))
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"event_delivery {delivery} is none of {_KNOWN_DELIVERIES}")
        if link is None:
            self.hub.refuse("its Hello has an unknown seat token", hello.bot_name, own)
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "unknown seat token")
            return  # (abort raises)
        if own is not None and link is not own:  # another seat's token on this seat's socket
            self.hub.refuse(f"its Hello has the token of seat {link.seat} on seat "
                            f"{self.seat}'s socket", hello.bot_name, own)
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "unknown seat token")
        if link.closed:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the match is over")
        if link.connected.is_set():
            self.hub.refuse(f"token of seat {link.seat}, already connected", hello.bot_name)
            await context.abort(grpc.StatusCode.ALREADY_EXISTS,
                                f"seat {link.seat} is already connected")
        outbox = link.attach(hello)  # during the match, a Welcome is queued first
        reader = asyncio.ensure_future(self._read(it, link, outbox))
        try:
            while True:
                msg = await outbox.get()
                if msg is None or msg is _DISCONNECT:
                    break
                yield msg
        finally:
            reader.cancel()
            link.detach(outbox)
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


SEAT_STREAMS = 2
"""Streams a seat's socket serves at once, over all its connections: the bot's Play stream and
one more (a new stream of a bot that reconnects while the referee has not yet seen its old one
end). Past these, a new stream is refused at once (RESOURCE_EXHAUSTED), before any handler
runs."""
SEAT_METADATA_BYTES = 8 * 1024
"""The largest header block a seat's socket takes (a Hello's metadata is a few hundred bytes)."""
SEAT_OPTIONS = [
    # per connection; not 1: a bot's channels to one socket may share a connection (gRPC
    # pools them), and a new stream must not wait behind the bot's Play stream
    ("grpc.max_concurrent_streams", SEAT_STREAMS),
    ("grpc.max_metadata_size", SEAT_METADATA_BYTES),
    ("grpc.absolute_max_metadata_size", SEAT_METADATA_BYTES),
    # pings: a bot's client pings at most every 10 s without data; more often is a strike,
    # and two strikes close its connection (GOAWAY)
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.max_ping_strikes", 2),
    ("grpc.keepalive_permit_without_calls", 0),
    # a connection without a stream is dropped after 2 s
    ("grpc.max_connection_idle_ms", 2_000),
]
"""The HTTP/2 limits of a seat's own socket (``create_server(seat=...)``); see
docs/security.md."""


def create_server(hub: SeatHub, addresses: list[str], seat: int | None = None
                  ) -> grpc.aio.Server:
    """A referee server listening on ``addresses`` ("unix:/path" or "host:port"). With
    ``seat``, it is that launched seat's own socket: it takes only that seat's token, serves
    only the Referee service under ``SEAT_OPTIONS`` and at most ``SEAT_STREAMS`` streams;
    without, it is the organiser-facing server, with health checking and server reflection."""
    options = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
               ("grpc.max_send_message_length", 4 * 1024 * 1024)]
    if seat is not None:
        server = grpc.aio.server(options=options + SEAT_OPTIONS,
                                 maximum_concurrent_rpcs=SEAT_STREAMS)
    else:
        server = grpc.aio.server(options=options)
    pb_grpc.add_RefereeServicer_to_server(RefereeServicer(hub, seat), server)
    server.health = None
    if seat is None:  # imported here: a match's referee serves only seats' sockets
        from grpc_health.v1 import health, health_pb2_grpc
        from grpc_reflection.v1alpha import reflection
        health_servicer = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        names = (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME)
        reflection.enable_server_reflection(names, server)
        server.health = health_servicer
    for address in addresses:
        server.add_insecure_port(address)
    return server


async def mark_serving(server) -> None:
    """Mark an organiser-facing server SERVING (a seat's socket has no health service)."""
    if server.health is None:
        return
    from grpc_health.v1 import health_pb2
    for name in ("", SERVICE_NAME):
        await server.health.set(name, health_pb2.HealthCheckResponse.SERVING)
