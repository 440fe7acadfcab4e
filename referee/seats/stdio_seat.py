"""Seats played over a program's standard input and output (``protocol = "stdio"``): the referee
speaks JSON lines to a program that has no gRPC library.

Every message the referee sends the seat becomes one line on the program's standard input: a JSON
object with ``"type"`` (``welcome``, ``request``, ``notice``, ``rejection``, ``match_end``) and
that message's fields in the protobuf JSON mapping, with the field names of the ``.proto``. The
program answers each request with one line on its standard output,
``{"request_id": "17", "action": {...}}``, the action in the same mapping. A line that is not such
an answer is a garbage answer (so is JSON nested deeper than ``bot_json.MAX_DEPTH``, ``NaN``,
``Infinity`` or ``1e400``, and a ``request_id`` that is no integer: a bool, a float, a string
other than digits); an answer to an earlier request answers no open request (as a late answer
over gRPC); ``request_id`` left out means the open request. When the program's output
ends, the seat is closed: a program cannot come back.
"""

from __future__ import annotations

import asyncio
import json
import time

from google.protobuf import json_format
from shengji_arena.v1 import referee_pb2 as pb

from referee.seats.mailbox import Mailbox
from referee.seats.seat import (
    INBOX_LIMIT,
    TIMED_OUT,
    UNWATCHED,
    Closed,
    Reply,
    RequestWatch,
    Seat,
    Unreadable,
    answered_action,
)
from referee.wire.bot_json import load_bot_json, request_id_of

LINE_LIMIT = 64 * 1024
"""The longest answer line read (a gRPC bot's largest message has the same bound); a longer one
is a garbage answer, and the rest of it up to its newline is skipped."""
_QUOTED = 40  # characters of an unreadable line quoted in its fault
_REASON = 200  # characters of why a line is unreadable (it may quote the line)


def json_line(message: pb.RefereeMessage) -> bytes:
    """``message`` as the line a stdio program reads."""
    kind = message.WhichOneof("body")
    body = json_format.MessageToDict(getattr(message, kind), preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True)
    return (json.dumps({"type": kind, **body}, ensure_ascii=False) + "\n").encode()


def read_answer(line: bytes, request_id: int) -> pb.BotMessage | Unreadable:
    """The answer a program's ``line`` gives while request ``request_id`` is open; whatever the
    line holds, an ``Unreadable`` when it is no such answer (it never raises)."""
    try:
        data = load_bot_json(line)
        if not isinstance(data, dict) or "action" not in data:
            raise ValueError('expected a JSON object with "request_id" and "action"')
        action = data["action"]
        if not isinstance(action, dict):
            raise ValueError('"action": expected a JSON object')
        kind = action.get("kind")
        if isinstance(kind, (bool, float)):  # (the JSON mapping would read 5.7 as 5)
            raise ValueError(f'"action.kind" {json.dumps(kind)}: expected an ActionKind name '
                             "such as \"ACTION_KIND_PLAY\" or its number")
        msg = pb.BotMessage()
        msg.answer.request_id = request_id_of(data.get("request_id", request_id))
        json_format.ParseDict(action, msg.answer.action)
    except (ValueError, TypeError, AttributeError, OverflowError, RecursionError,
            json_format.ParseError) as e:
        return Unreadable(f"unreadable answer line {_quoted(line)}: {_cut(e)}")
    return msg


def _cut(error: Exception) -> str:
    """An error's message, bounded (it may quote the bot's own text)."""
    text = str(error)
    return text if len(text) <= _REASON else f"{text[:_REASON]}... ({len(text)} characters)"


def _overlong() -> Unreadable:
    return Unreadable(f"an answer line longer than {LINE_LIMIT} bytes")


def _quoted(line: bytes) -> str:
    text = line.decode("utf-8", "replace")
    if len(text) <= _QUOTED:
        return repr(text)
    return f"{text[:_QUOTED]!r}... ({len(line)} bytes)"


class StdioSeat(Seat):
    """A seat whose bot is a program reading and writing JSON lines on pipes; made with
    ``await StdioSeat.open(process.stdin, process.stdout)``."""

    def __init__(self) -> None:
        self.inbox = Mailbox()  # lines, Unreadable for an overlong one, None at the output's end
        self._buffer = bytearray()
        self._skipping = False  # inside an overlong line: dropped up to its newline
        self._paused = False
        self._ended = False  # the program's output ended and the runner has seen it
        self._writable = True
        self._closed = False
        self._reader: asyncio.ReadTransport | None = None
        self._writer: asyncio.WriteTransport | None = None

    @classmethod
    async def open(cls, stdin, stdout) -> StdioSeat:
        """A seat over a started program's ``stdin`` and ``stdout`` pipes."""
        seat = cls()
        loop = asyncio.get_running_loop()
        seat._reader, _ = await loop.connect_read_pipe(lambda: _Output(seat), stdout)
        seat._writer, _ = await loop.connect_write_pipe(lambda: _Input(seat), stdin)
        return seat

    async def connect(self, timeout: float) -> None:
        pass  # there once started; a program that died is found closed at its request

    def notify(self, message: pb.RefereeMessage) -> None:
        self._write(message)

    def request(self, message: pb.RefereeMessage, deadline: float,
                watch: RequestWatch = UNWATCHED):
        self._write(message)
        return self._reply(message.request.request_id, deadline, watch)

    def close(self) -> None:
        """The program reads the end of its input after the last line; its output is no longer
        read."""
        self._closed = True
        if self._writer is not None:
            self._writer.close()  # once what is queued is written
        if self._reader is not None:
            self._reader.close()

    # -- the program's input ------------------------------------------------------------------
    def _write(self, message: pb.RefereeMessage) -> None:
        if self._writable and not self._closed:
            assert self._writer is not None  # set by ``open``
            self._writer.write(json_line(message))

    # -- the program's output -----------------------------------------------------------------
    async def _reply(self, rid: int, deadline: float, watch: RequestWatch) -> Reply:
        while True:
            if self._ended:
                return Closed("closed its standard output")
            left = deadline - time.monotonic()
            if left <= 0:
                return TIMED_OUT
            item = await self.inbox.get(left)
            if self._paused:
                self._split()
            if item is TIMED_OUT:
                continue
            if item is None:
                self._ended = True
                continue
            if isinstance(item, Unreadable):
                return item
            reply = read_answer(item, rid)
            if isinstance(reply, Unreadable):
                return reply
            if reply.answer.request_id < rid:
                watch.stray()  # a late answer
                continue
            return answered_action(reply.answer, rid)

    def _received(self, data: bytes) -> None:
        self._buffer += data
        self._split()

    def _split(self, limit: int | None = INBOX_LIMIT) -> None:
        """Move whole lines from the buffer into the inbox while it holds fewer than ``limit``;
        stop reading the pipe while it is full (the program then blocks on a full pipe)."""
        buf, inbox = self._buffer, self.inbox
        while limit is None or inbox.qsize() < limit:
            end = buf.find(b"\n")
            if end < 0:
                if len(buf) > LINE_LIMIT:  # no end in sight: skipped up to its newline
                    if not self._skipping:
                        inbox.put_nowait(_overlong())
                    self._skipping = True
                    buf.clear()
                break
            if self._skipping:
                self._skipping = False
            else:
                inbox.put_nowait(_overlong() if end > LINE_LIMIT else bytes(buf[:end]))
            del buf[:end + 1]
        if limit is None or self._reader is None or self._reader.is_closing():
            return
        full = inbox.qsize() >= limit
        if full != self._paused:
            self._paused = full
            if full:
                self._reader.pause_reading()
            else:
                self._reader.resume_reading()

    def _output_ended(self) -> None:
        self._split(limit=None)
        if self._buffer and not self._skipping:  # a last line with no newline
            self.inbox.put_nowait(bytes(self._buffer))
        self._buffer.clear()
        self.inbox.put_nowait(None)


class _Output(asyncio.Protocol):
    """The program's standard output, read into its seat."""

    def __init__(self, seat: StdioSeat) -> None:
        self.seat = seat

    def data_received(self, data: bytes) -> None:
        self.seat._received(data)

    def connection_lost(self, exc) -> None:
        self.seat._output_ended()


class _Input(asyncio.BaseProtocol):
    """The program's standard input: once it is closed, nothing more is written to it."""

    def __init__(self, seat: StdioSeat) -> None:
        self.seat = seat

    def connection_lost(self, exc) -> None:
        self.seat._writable = False
