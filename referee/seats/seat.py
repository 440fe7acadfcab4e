"""The ``Seat`` interface: one seat of a match as the match runner talks to it, whatever carries
the messages (a gRPC stream, a program's pipes).

The runner keeps the clock and the fault policy; a seat only moves messages and says what
happened. ``request`` sends a decision request and gives the action the bot answered (read once,
by the seat, from whatever its protocol carries), ``TIMED_OUT`` at the deadline, ``Closed`` when
the bot is gone, or ``Unreadable`` for an answer that could not be read as an action for the
open request (a garbage answer).
While it waits, a seat reports to the runner through the request's ``RequestWatch``: each message
that answers no open request (the runner counts them for flood strikes) and each time the bot
came back on a new connection (the runner notes reconnections, and may end the match).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from shengji_arena.v1 import referee_pb2 as pb

from referee.rules.actions import Action
from referee.rules.errors import InvalidActionError
from referee.wire.protocol import action_from_pb

INBOX_LIMIT = 32
"""Messages from a seat held unread at most. Beyond it the referee stops reading the seat (a
gRPC stream's flow control, or a full pipe, holds the bot back) until the runner takes one, so a
bot that floods fills neither the referee's memory nor its time; the runner judges what it takes
at the seat's turn."""
REASON_MOST = 400
"""The longest reason a fault gives for an answer, in characters (longer: cut, with its length)."""


def cut(text: str, most: int = REASON_MOST) -> str:
    """An error's message as a fault quotes it: bounded, with its length when cut."""
    return text if len(text) <= most else f"{text[:most]}... ({len(text)} characters)"


class _TimedOut:
    __slots__ = ()

    def __repr__(self) -> str:
        return "TIMED_OUT"


TIMED_OUT = _TimedOut()
"""The reply when the deadline passed first (also what ``Mailbox.get`` gives at its timeout)."""


@dataclass(frozen=True)
class OverTime:
    """The reply when the bot's own time limit per turn (a Botzone seat's) passed before the
    match's deadline: a timeout; ``reason`` says which limit."""

    reason: str


class NotConnected(Exception):
    """Why a seat's bot is not there at the match's start ("did not connect within 15000 ms",
    "was refused: ..."); the text follows "seat N" in the fault."""


@dataclass(frozen=True, slots=True)
class Closed:
    """The reply when the bot is gone for good; ``reason`` follows "seat N" in the fault."""

    reason: str


@dataclass(frozen=True, slots=True)
class Unreadable:
    """The reply when the bot answered with something that cannot be read as an answer (a
    garbage answer); ``reason`` says what and quotes it, bounded."""

    reason: str


Reply = Action | _TimedOut | OverTime | Closed | Unreadable
"""What a request gives: the action the bot answered to it (for the runner to judge against the
rules), or why there is none."""


def answered_action(answer: pb.Answer, request_id: int) -> Action | Unreadable:
    """The action a protocol ``Answer`` gives while request ``request_id`` is open, read once
    under the protocol's bounds (``action_from_pb``: at most ``MAX_ACTION_CARDS`` cards a
    field, no card text longer than a card's); ``Unreadable`` for an answer to a later request,
    or an action that cannot be read (its reason bounded by ``REASON_MOST``)."""
    if answer.request_id != request_id:
        return Unreadable(f"answer to request {answer.request_id}, but the open request is "
                          f"{request_id}")
    try:
        return action_from_pb(answer.action)
    except InvalidActionError as e:
        return Unreadable(cut(str(e)))


@dataclass(slots=True)
class RequestWatch:
    """The runner's side of one open request: the policy a seat waits under and whom it tells.

    ``stray`` is called for each message that answers no open request (a late answer, a Hello
    again); ``rejoined`` when the bot is back on a new connection, before the request is sent
    again on it. Either may raise to end the wait: a flood strike or one reconnection too many
    can forfeit the match."""

    reconnect_window_ms: int
    """How long a seat whose connection dropped may take to come back before it is ``Closed``."""
    stray: Callable[[], None]
    rejoined: Callable[[], None]


def _ignore() -> None:
    pass


UNWATCHED = RequestWatch(0, _ignore, _ignore)
"""A watch that reports to no one and waits for no reconnection (for tools and tests)."""


class Seat(ABC):
    """One seat of a match: the bot behind it, as the match runner talks to it.

    A seat never blocks the runner: ``notify`` queues, ``request`` sends at once and waits only
    when awaited. Messages reach the bot in the order they were given."""

    events_with_requests = False
    """The bot asked for the events it may see only in its requests and at a deal's or the
    match's end, with no deal start or trick notices (``EVENT_DELIVERY_WITH_REQUESTS``)."""
    sent_by_loop = False
    """A request given to ``request`` is on its way only once the event loop has run (a gRPC
    stream's writer is a task of its own): the runner yields once before any other work."""

    @abstractmethod
    async def connect(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the bot to be there; raise ``NotConnected`` when
        it is not (at the timeout, or at once when its connection was refused)."""

    @abstractmethod
    def request(self, message: pb.RefereeMessage, deadline: float,
                watch: RequestWatch = UNWATCHED) -> Coroutine[Any, Any, Reply]:
        """Send the decision request ``message`` now, and return a coroutine that waits for the
        reply until ``deadline`` (a ``time.monotonic()`` time): ``await seat.request(m, d)``.
        A coroutine not awaited is closed by the caller (``.close()``)."""

    @abstractmethod
    def notify(self, message: pb.RefereeMessage) -> None:
        """Send a message that wants no answer (a Welcome, a notice, a rejection, the match's
        end); never blocks, and is dropped while the bot is not connected."""

    @abstractmethod
    def close(self) -> None:
        """The match is over for this seat: no more messages either way."""

    @property
    def rejoins(self) -> int:
        """How many times the bot came back on a new connection in this match."""
        return 0


class Unstarted(Seat):
    """A seat whose bot could not be started (its program is missing, its folder cannot be
    read): it never connects, and the fault says why."""

    def __init__(self, why: str) -> None:
        self.why = why

    async def connect(self, timeout: float) -> None:
        raise NotConnected(f"could not be started: {self.why}")

    def request(self, message: pb.RefereeMessage, deadline: float,
                watch: RequestWatch = UNWATCHED):
        async def closed() -> Reply:
            return Closed("was never started")
        return closed()

    def notify(self, message: pb.RefereeMessage) -> None:
        pass

    def close(self) -> None:
        pass
