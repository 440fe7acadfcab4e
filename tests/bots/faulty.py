"""Misbehaving bots for the fault tests: python3 faulty.py MODE."""

import os
import random
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "sample_bots", "python"))

from arena_bot import Bot, run  # noqa: E402
from shengji_arena.v1 import referee_pb2 as pb  # noqa: E402


class Silent(Bot):
    def choose(self, request):
        time.sleep(3600)


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


def flood():
    """Answers each request correctly, but first sends 25 answers to requests long gone."""
    import grpc
    import queue
    from shengji_arena.v1 import referee_pb2_grpc as pb_grpc
    q = queue.Queue()
    q.put(pb.BotMessage(hello=pb.Hello(token=os.environ["ARENA_TOKEN"], bot_name="flood")))

    def gen():
        while True:
            m = q.get()
            if m is None:
                return
            yield m
    with grpc.insecure_channel(os.environ["ARENA_REFEREE"]) as ch:
        try:
            for msg in pb_grpc.RefereeStub(ch).Play(gen()):
                if msg.HasField("request"):
                    for _ in range(25):
                        q.put(pb.BotMessage(answer=pb.Answer(request_id=0)))
                    q.put(pb.BotMessage(answer=pb.Answer(request_id=msg.request.request_id,
                                                         action=msg.request.hint.actions[0])))
                if msg.HasField("match_end"):
                    break
        except grpc.RpcError:
            pass
        q.put(None)


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
    """Presents another seat's token (given in ARENA_STOLEN_TOKEN) instead of its own."""
    time.sleep(1.0)  # let the rightful seat connect first
    os.environ["ARENA_TOKEN"] = os.environ["ARENA_STOLEN_TOKEN"]
    return run(Bot())


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "never":
        sys.exit(0)
    if mode == "flood":
        sys.exit(flood())
    if mode == "garbage":
        sys.exit(garbage_bytes())
    if mode == "steal":
        sys.exit(steal())
    sys.exit(run({"silent": Silent, "illegal": Illegal, "crash": Crash}[mode]()))
