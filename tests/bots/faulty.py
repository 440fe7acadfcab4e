"""Misbehaving bots for the fault tests: python3 faulty.py MODE."""

import os
import random
import socket
import sys
import time

from arena_bot import Bot, run
from shengji_arena.v1 import referee_pb2 as pb


class Silent(Bot):
    def choose(self, request):
        time.sleep(3600)  # (a bot that hangs: the behaviour under test)


class Illegal(Bot):
    def choose(self, request):
        return pb.Action(kind=pb.ACTION_KIND_PLAY, cards=["BJ", "BJ", "BJ", "BJ", "BJ"])


class Garbage(Bot):
    def choose(self, request):
        return pb.Action(kind=pb.ACTION_KIND_PLAY, cards=["1X"])


class Crash(Bot):
    def __init__(self):
        super().__init__()
        self.n = 0

    def choose(self, request):
        self.n += 1
        if self.n == 5:
            os._exit(3)
        return request.hint.actions[0]


def _play_stream(name: str, outgoing, on_request, next_message=None) -> None:
    """Play a seat through grpc's blocking API and a request iterator: the Hello, then each
    message ``next_message`` gives (by default the next in the queue ``outgoing``; None ends the
    stream), calling ``on_request`` with each request."""
    import grpc
    from shengji_arena.v1 import referee_pb2_grpc as pb_grpc
    next_message = next_message or outgoing.get

    def gen():
        yield pb.BotMessage(hello=pb.Hello(token=os.environ["ARENA_TOKEN"], bot_name=name))
        while (m := next_message()) is not None:
            yield m
    with grpc.insecure_channel(os.environ["ARENA_REFEREE"]) as ch:
        try:
            for msg in pb_grpc.RefereeStub(ch).Play(gen()):
                if msg.HasField("request"):
                    on_request(msg.request)
                if msg.HasField("match_end"):
                    break
        except grpc.RpcError:
            pass
        outgoing.put(None)


def _answer(request) -> pb.BotMessage:
    return pb.BotMessage(answer=pb.Answer(request_id=request.request_id,
                                          action=request.hint.actions[0]))


def flood():
    """Answers each request correctly, but first sends 25 answers to requests long gone."""
    import queue
    q = queue.Queue()

    def on_request(request):
        for _ in range(25):
            q.put(pb.BotMessage(answer=pb.Answer(request_id=0)))
        q.put(_answer(request))
    _play_stream("flood", q, on_request)


class Slow(Bot):
    """Plays legally, taking ``delay`` seconds over each decision (well inside its time)."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    def choose(self, request):
        time.sleep(self.delay)  # (a slow bot: its thinking time is the behaviour under test)
        return request.hint.actions[0]


def deluge():
    """Answers each request correctly, and from its first answer on streams large stray
    messages without pause: as many as the referee will read."""
    import queue
    import threading
    answers = queue.Queue()
    flooding = threading.Event()
    stray = pb.BotMessage(hello=pb.Hello(token="stray", bot_name="x" * 60000))

    def next_message():
        if flooding.is_set() and answers.empty():
            return stray
        return answers.get()

    def on_request(request):
        answers.put(_answer(request))
        flooding.set()
    _play_stream("deluge", answers, on_request, next_message)


def rejoining(drop_holding: set, drop_after: set) -> int:
    """Plays legally over grpc's asyncio API, dropping its stream and opening a new one with the
    same token: on its requests numbered in ``drop_holding`` before answering, and on those in
    ``drop_after`` just after answering. A new stream the referee has not yet let go of the old
    one for is refused (ALREADY_EXISTS) and tried again. Exits 5 if a later stream does not
    begin with a Welcome."""
    import asyncio

    import grpc
    from shengji_arena.v1 import referee_pb2_grpc as pb_grpc
    hello = pb.BotMessage(hello=pb.Hello(token=os.environ["ARENA_TOKEN"], bot_name="rejoin"))

    async def main() -> int:
        requests = streams = 0
        async with grpc.aio.insecure_channel(os.environ["ARENA_REFEREE"]) as ch:
            while True:
                call = pb_grpc.RefereeStub(ch).Play()
                try:
                    await call.write(hello)
                    first = await call.read()
                    if first is grpc.aio.EOF or first.HasField("match_end"):
                        return 0
                    streams += 1
                    if streams > 1 and not first.HasField("welcome"):
                        return 5
                    msg = first
                    while True:
                        if msg.HasField("match_end"):
                            return 0
                        if msg.HasField("request"):
                            requests += 1
                            if requests in drop_holding:
                                break
                            await call.write(_answer(msg.request))
                            if requests in drop_after:
                                await asyncio.sleep(0.02)  # the referee has the answer
                                break
                        msg = await call.read()
                        if msg is grpc.aio.EOF:
                            return 0
                    call.cancel()
                except grpc.aio.AioRpcError as e:
                    if e.code() != grpc.StatusCode.ALREADY_EXISTS:
                        return 1
                    # (a retry's pause: it connects again until its seat is free)
                    await asyncio.sleep(0.02)
    return asyncio.run(main())


def garbage_bytes():
    """Writes raw garbage to the referee's socket first, then plays garbage answers."""
    address = os.environ["ARENA_REFEREE"]
    if address.startswith("unix://"):
        s = socket.socket(socket.AF_UNIX)
        s.connect(address[len("unix://"):])
        s.sendall(bytes(random.Random(1).randrange(256) for _ in range(4096)))
        s.close()
    return run(Garbage())


def steal():
    """Presents another seat's token (given as ``steal:TOKEN``, or in ARENA_STOLEN_TOKEN for
    an unsandboxed bot) instead of its own."""
    time.sleep(1.0)  # let the rightful seat connect first
    stolen = sys.argv[1].partition(":")[2] or os.environ["ARENA_STOLEN_TOKEN"]
    os.environ["ARENA_TOKEN"] = stolen
    return run(Bot())


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "never":
        sys.exit(0)
    if mode == "flood":
        sys.exit(flood())
    if mode == "deluge":
        sys.exit(deluge())
    if mode == "rejoin":  # twice: holding its 3rd request, and after answering its 6th
        sys.exit(rejoining({3}, {6}))
    if mode == "flap":  # on every request, before answering
        sys.exit(rejoining(set(range(1, 10**6)), set()))
    if mode == "garbage":
        sys.exit(garbage_bytes())
    if mode.startswith("steal"):
        sys.exit(steal())
    if mode == "chatty":  # a megabyte of debugging output first, then legal play
        sys.stderr.write(("debug " * 20 + "\n") * 8000)
        sys.stderr.flush()
        sys.exit(run(Bot()))
    if mode.startswith("slow"):  # slow or slow:SECONDS (default 0.3)
        sys.exit(run(Slow(float(mode.partition(":")[2] or 0.3))))
    sys.exit(run({"silent": Silent, "illegal": Illegal, "crash": Crash}[mode]()))
