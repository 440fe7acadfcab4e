"""Seats played over gRPC streams: the links the referee's servicer binds each ``Play`` stream
to (by the seat's token), and ``GrpcSeat``, the ``Seat`` the runner talks to over a link.

The servicer (``referee.server.servicer``) moves messages between a stream and its link: what a
bot sends goes into the link's inbox, what the runner sends goes out through its outbox. A bot
may drop its stream and open a new one with its token; every new stream during the match starts
with the seat's Welcome, and an open request is sent again on it.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shengji_arena.v1 import referee_pb2 as pb

from referee.seats.mailbox import LoopLag, Mailbox, excused, loop_lag
from referee.seats.seat import (TIMED_OUT, UNWATCHED, Closed, NotConnected, Reply,
                                RequestWatch, Seat, answered_action)

REFUSALS_KEPT = 20
"""Refused streams described one by one; beyond these they are only counted."""


@dataclass
class SeatLink:
    """One seat's connection: the stream bound to it now (if any), and its inbox."""

    seat: int
    token: str
    inbox: Mailbox = field(default_factory=Mailbox)
    outbox: Mailbox | None = None
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    hello: pb.Hello | None = None
    connections: int = 0
    closed: bool = False
    on_attach: Callable[[], None] | None = None
    """Called when a stream is bound to the seat, after the stream's outbox is in place."""
    refusals: list[str] = field(default_factory=list)
    """Why streams that came for this seat were refused (its token with another protocol
    version, another token on its own socket), the first ``REFUSALS_KEPT``."""
    unplayable: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the seat's own token came with a protocol version this referee does not
    speak: its bot cannot play, and the seat stops waiting for it."""
    opened_at: float | None = None
    """When the seat's socket first had a stream opened (``time.monotonic()``): the bot
    started, imported what it needs and connected (the match's start-up, ``Startup``)."""
    hello_at: float | None = None
    """When the seat's first stream was bound by its Hello (``time.monotonic()``)."""

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

    def attach(self, hello: pb.Hello) -> Mailbox:
        """Bind a new stream that presented this seat's token; its outbox."""
        self.hello = hello
        if self.hello_at is None:
            self.hello_at = time.monotonic()
        self.connections += 1
        self.outbox = Mailbox()
        self.connected.set()
        if self.on_attach is not None:
            self.on_attach()
        return self.outbox

    def detach(self, outbox: Mailbox) -> None:
        """The stream with ``outbox`` ended (a newer one may have taken its place)."""
        if self.outbox is outbox:
            self.outbox = None
            self.connected.clear()


class GrpcSeat(Seat):
    """A seat whose bot plays over a gRPC stream (``protocol = "grpc"``)."""

    sent_by_loop = True  # (the stream's handler writes what its outbox holds)

    def __init__(self, link: SeatLink) -> None:
        self.link = link
        self._welcome: pb.RefereeMessage | None = None  # a new stream starts with it
        link.on_attach = self._attached

    def _attached(self) -> None:
        # each stream's Hello says how that stream gets its events (checked by the servicer)
        assert self.link.hello is not None  # (``attach`` sets it first)
        self.events_with_requests = (self.link.hello.event_delivery
                                     == pb.EVENT_DELIVERY_WITH_REQUESTS)
        if self._welcome is not None:  # the match is under way: welcomed again
            self.link.send(self._welcome)

    async def connect(self, timeout: float) -> None:
        link = self.link
        waits = [asyncio.ensure_future(link.connected.wait()),
                 asyncio.ensure_future(link.unplayable.wait())]
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
        if link.connected.is_set():
            return
        waited = f"did not connect within {round(timeout * 1000)} ms"
        if link.refusals:
            more = f" (and {len(link.refusals) - 1} more)" if len(link.refusals) > 1 else ""
            raise NotConnected(f"{'was refused' if link.unplayable.is_set() else waited}: "
                               f"{link.refusals[-1]}{more}")
        raise NotConnected(waited)

    @property
    def rejoins(self) -> int:
        return max(0, self.link.connections - 1)

    def notify(self, message: pb.RefereeMessage) -> None:
        if message.HasField("welcome"):
            self._welcome = message
        self.link.send(message)

    def close(self) -> None:
        self._welcome = None
        self.link.close()

    def request(self, message: pb.RefereeMessage, deadline: float,
                watch: RequestWatch = UNWATCHED):
        self.link.send(message)
        lag = loop_lag()  # the deadline moves on by the loop's stalls while the request is open
        return self._reply(message, deadline, watch, lag, lag.lost())

    async def _reply(self, message: pb.RefereeMessage, deadline: float, watch: RequestWatch,
                     lag: LoopLag, lost: float) -> Reply:
        link = self.link
        rid = message.request.request_id
        stream = link.connections  # the stream the request went out on
        while True:
            if not link.connected.is_set():
                window = watch.reconnect_window_ms
                try:
                    await asyncio.wait_for(link.connected.wait(), window / 1000)
                except TimeoutError:
                    return Closed(f"stayed disconnected longer than {window} ms")
            if link.connections != stream:  # a new stream since: it has not seen the request
                stream = link.connections
                watch.rejoined()
                link.send(message)
                continue
            left = deadline + excused(lost, lag) - time.monotonic()
            if left <= 0:
                return TIMED_OUT
            got = await link.inbox.get(left)  # no extra task, unlike wait_for
            if got is TIMED_OUT or got is None:  # None: the stream dropped (or an old one ended)
                continue
            if not got.HasField("answer") or got.answer.request_id < rid:
                watch.stray()  # a Hello again, or a late answer
                continue
            return answered_action(got.answer, rid)  # read here, once


class SeatHub(Sequence):
    """The four gRPC seats of a match, found by their tokens; also the record of the streams
    refused (a wrong token, a seat already connected, another protocol version)."""

    def __init__(self, tokens: list[str] | None = None) -> None:
        tokens = tokens or [secrets.token_urlsafe(24) for _ in range(4)]
        self.links = [SeatLink(i, t) for i, t in enumerate(tokens)]
        self.seats = [GrpcSeat(link) for link in self.links]
        self._by_token = {link.token: link for link in self.links}
        self.refused: list[dict] = []  # streams refused: wrong or reused tokens
        self.refused_more = 0  # refusals past REFUSALS_KEPT

    def __getitem__(self, seat):
        return self.seats[seat]

    def __len__(self) -> int:
        return len(self.seats)

    def find(self, token: str) -> SeatLink | None:
        return self._by_token.get(token)

    def refuse(self, reason: str, bot: str, link: SeatLink | None = None,
               unplayable: bool = False) -> None:
        """Note a refused stream; ``link``, the seat it came for (its token, or its own
        socket), learns why; ``unplayable``: the seat's bot cannot play at all (its seat
        stops waiting for it)."""
        if len(self.refused) < REFUSALS_KEPT:
            self.refused.append({"reason": reason, "bot": bot[:100]})
        else:
            self.refused_more += 1
        if link is not None:
            if len(link.refusals) < REFUSALS_KEPT:
                link.refusals.append(reason)
            if unplayable:
                link.unplayable.set()
