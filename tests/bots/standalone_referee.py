"""A referee server with no match, for protocol-level tests: python3 standalone_referee.py PORT.

It prints "ready" once it serves, and "attached N" each time a stream takes seat N."""

import asyncio
import sys

from referee.seats.grpc_seat import SeatHub
from referee.server.servicer import create_server, mark_serving


async def main(port: int) -> None:
    hub = SeatHub(["a" * 8, "b" * 8, "c" * 8, "d" * 8])
    for link in hub.links:  # a test waits for this line, not for a time
        link.on_attach = lambda seat=link.seat: print(f"attached {seat}", flush=True)
    server = create_server(hub, [f"127.0.0.1:{port}"])
    await server.start()
    await mark_serving(server)
    print("ready", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
