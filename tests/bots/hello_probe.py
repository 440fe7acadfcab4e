"""Bots whose Hello is refused, for the connect-fault tests: python3 hello_probe.py MODE.

``protocol``: the seat's own token with another protocol version, then it waits (alive) for an
hour; ``token``: a wrong token, then it waits for an hour; ``token-exit``: a wrong token, then
it says so on stderr and exits 4."""

import asyncio
import os
import sys

import grpc
from shengji_arena.v1 import referee_pb2 as pb
from shengji_arena.v1 import referee_pb2_grpc as pb_grpc


async def hello(token: str, protocol: str) -> grpc.aio.AioRpcError | None:
    async with grpc.aio.insecure_channel(os.environ["ARENA_REFEREE"]) as channel:
        call = pb_grpc.RefereeStub(channel).Play()
        await call.write(pb.BotMessage(hello=pb.Hello(token=token, bot_name="hello-probe",
                                                      protocol=protocol)))
        try:
            await call.read()
        except grpc.aio.AioRpcError as e:
            return e
    return None


def main(mode: str) -> int:
    token = os.environ["ARENA_TOKEN"] if mode == "protocol" else "not-my-token"
    refused = asyncio.run(hello(token, "shengji-arena/9" if mode == "protocol"
                                else "shengji-arena/1"))
    print(f"hello-probe: refused: {refused and refused.details()}", file=sys.stderr, flush=True)
    if mode == "token-exit":
        return 4
    # (it only connects and waits to be ended: the behaviour under test)
    asyncio.run(asyncio.sleep(3600))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
