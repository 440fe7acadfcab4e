"""A gRPC seat's gate (门): the one way from a bot's sandbox to the referee's server.

A seat's socket (``/run/arena/seat.sock`` in its sandbox) is not the referee's gRPC server
itself but this small process, which passes bytes between the bot's connections and the seat's
own server on an inner socket no bot reaches. It runs in the seat's cgroup where there is one,
so the CPU a bot makes it spend is counted to that seat, and it bounds what reaches the
referee's one process, shared by all four seats:

- at most ``CONNECTIONS`` connections at once; further ones are not accepted but wait in the
  kernel's listen backlog, and once that is full the bot's own ``connect`` blocks or fails: a
  connection flood costs the referee nothing;
- at most ``NEW_PER_S`` new connections a second (a burst of ``NEW_BURST``);
- at most ``UP_BYTES_PER_S`` from the bot a second over all its connections (a burst of
  ``UP_BURST``): a flood of frames or header blocks waits in the bot's own buffers.

``gate.c`` is the same gate in C, which seats get where it is built (``make gate``;
``referee.seats.launch.gate_program``): the same bounds, a few microseconds a message instead of
this loop's tens, and no interpreter to start. This one is the fallback and the reference.

A bot's messages are a few hundred bytes and it connects once (again after a dropped stream),
so none of this slows a bot that plays. The referee keeps the gate's standard input open; the
gate ends when it closes (the seat's end, or the referee's death). Only the standard library:
it starts as ``python -I -S gate.py LISTEN_FD INNER_PATH [UP_BYTES_PER_S UP_BURST]``.
"""

from __future__ import annotations

import os
import select
import socket
import sys
import time

CONNECTIONS = 2
"""Connections at once: the bot's channel, and a new one while the old is still closing."""
NEW_PER_S, NEW_BURST = 5.0, 5.0
UP_BYTES_PER_S, UP_BURST = 64 * 1024, 256 * 1024
BUFFER = 64 * 1024
"""Bytes held for each direction of a connection; past them the gate stops reading that side."""
CLOSING_S = 1.0
"""How long a connection whose one side ended may take to pass on what is held for the other."""


class Bucket:
    """A token bucket: ``rate`` a second, at most ``burst`` saved up."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst, self.level, self.at = rate, burst, burst, time.monotonic()

    def now(self, now: float) -> float:
        self.level = min(self.burst, self.level + (now - self.at) * self.rate)
        self.at = now
        return self.level

    def until(self, need: float) -> float:
        """Seconds until ``need`` is saved up (from the last ``now``)."""
        return max(0.0, (need - self.level) / self.rate)


class Pair:
    """One bot connection and its inner connection to the seat's server."""

    def __init__(self, bot: socket.socket, inner: socket.socket) -> None:
        self.bot, self.inner = bot, inner
        self.up = bytearray()  # from the bot, for the server
        self.down = bytearray()  # from the server, for the bot
        self.closing_at: float | None = None

    def close(self) -> None:
        for s in (self.bot, self.inner):
            try:
                s.close()
            except OSError:
                pass


def serve(listener: socket.socket, inner_path: str, control: int,
          up_rate: float = UP_BYTES_PER_S, up_burst: float = UP_BURST) -> None:
    """Pass bytes between the bot's connections on ``listener`` and ``inner_path`` until
    ``control`` (the referee's end of a pipe) closes; at most ``up_rate`` bytes a second
    (``up_burst`` saved up) from the bot."""
    listener.setblocking(False)
    pairs: list[Pair] = []
    new, up = Bucket(NEW_PER_S, NEW_BURST), Bucket(up_rate, up_burst)
    up_step = min(4096.0, up_burst)  # read from the bot once this much may pass
    while True:
        now = time.monotonic()
        reads: list = [control]
        writes: list = []
        timeout: float | None = None
        if len(pairs) < CONNECTIONS:
            if new.now(now) >= 1:
                reads.append(listener)
            else:
                timeout = new.until(1)
        level = up.now(now)
        for p in pairs:
            if p.closing_at is None:
                if len(p.up) < BUFFER:
                    if level >= up_step:
                        reads.append(p.bot)
                    else:
                        wait = up.until(up_step)
                        timeout = wait if timeout is None else min(timeout, wait)
                if len(p.down) < BUFFER:
                    reads.append(p.inner)
            else:
                left = p.closing_at + CLOSING_S - now
                timeout = left if timeout is None else min(timeout, left)
            if p.up:
                writes.append(p.inner)
            if p.down:
                writes.append(p.bot)
        readable, writable, _ = select.select(reads, writes, [], timeout)
        if control in readable and not os.read(control, 1):
            break
        if listener in readable:
            _accept(listener, inner_path, pairs, new)
        now = time.monotonic()
        for p in list(pairs):
            try:
                allowed = int(min(BUFFER - len(p.up), up.now(now)))
                if p.bot in readable and allowed > 0:  # (another connection may have used it)
                    data = p.bot.recv(allowed)
                    if not data:
                        p.closing_at = now
                    up.level -= len(data)
                    p.up += data
                if p.inner in readable:
                    data = p.inner.recv(BUFFER - len(p.down))
                    if not data:
                        p.closing_at = now
                    p.down += data
                if p.inner in writable and p.up:
                    del p.up[:p.inner.send(p.up)]
                if p.bot in writable and p.down:
                    del p.down[:p.bot.send(p.down)]
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:  # reset, broken pipe: the connection is over
                p.closing_at, p.up, p.down = now - CLOSING_S, bytearray(), bytearray()
            if p.closing_at is not None and (
                    (not p.up and not p.down) or now - p.closing_at >= CLOSING_S):
                p.close()
                pairs.remove(p)
    for p in pairs:
        p.close()


def _accept(listener: socket.socket, inner_path: str, pairs: list[Pair], new: Bucket) -> None:
    try:
        bot, _ = listener.accept()
    except (BlockingIOError, InterruptedError, ConnectionAbortedError):
        return
    new.level -= 1
    inner = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        inner.connect(inner_path)
    except OSError:  # the seat's server is gone (the match is ending): the bot is told so
        inner.close()
        bot.close()
        return
    bot.setblocking(False)
    inner.setblocking(False)
    pairs.append(Pair(bot, inner))


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 4) or not all(a.isdigit() for a in argv[:1] + argv[2:]):
        print("usage: gate.py LISTEN_FD INNER_PATH [UP_BYTES_PER_S UP_BURST]", file=sys.stderr)
        return 2
    listener = socket.socket(fileno=int(argv[0]))
    rates = [float(a) for a in argv[2:]]
    try:
        serve(listener, argv[1], sys.stdin.fileno(), *rates)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
